//! What the authorization server remembers: clients, authorization codes, access and refresh
//! tokens, and the counters that `/demo/oauth-stats` shows. Everything is in memory, behind one
//! mutex (see [`super::OAuth`]), and bounded: expired entries are swept before a new one is
//! stored, and a full table refuses new entries rather than growing.

use std::collections::hash_map::RandomState;
use std::collections::{BTreeMap, HashMap};
use std::hash::{BuildHasher, Hasher};
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use serde_json::{Value, json};

/// The scope every request to `/mcp` needs.
pub(crate) const TOOLS_SCOPE: &str = "mcp:tools";
/// The scope that calling `admin_echo` needs besides [`TOOLS_SCOPE`].
pub(crate) const ADMIN_SCOPE: &str = "mcp:admin";
/// The scopes the server knows, in the order they are listed and written.
pub(crate) const SCOPES: [&str; 2] = [TOOLS_SCOPE, ADMIN_SCOPE];
/// Accepted in a requested scope and ignored: refresh tokens come with every authorization
/// code grant anyway.
const OFFLINE_ACCESS: &str = "offline_access";

/// The most entries of each kind (dynamically registered clients, codes, access tokens, refresh
/// tokens) held at once.
pub(super) const MAX_ENTRIES: usize = 10_000;

/// A set of [`SCOPES`] (bit `i` is `SCOPES[i]`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Scopes(u8);

impl Scopes {
    /// `mcp:tools`: what a client gets when it asks for nothing in particular.
    pub(super) const TOOLS: Self = Self(1);
    /// `mcp:tools mcp:admin`.
    pub(super) const ADMIN: Self = Self(3);

    /// Parses a space-separated scope (RFC 6749 §3.3); `offline_access` is ignored, an unknown
    /// scope is `Err(it)`. Nothing requested (or only `offline_access`) gives `default`.
    pub(super) fn parse(text: Option<&str>, default: Self) -> Result<Self, String> {
        let mut bits = 0;
        for name in text.unwrap_or_default().split(' ').filter(|name| !name.is_empty()) {
            match SCOPES.iter().position(|known| *known == name) {
                Some(at) => bits |= 1 << at,
                None if name == OFFLINE_ACCESS => {}
                None => return Err(name.to_owned()),
            }
        }
        Ok(if bits == 0 { default } else { Self(bits) })
    }

    /// Whether every scope of `other` is in `self`.
    pub(super) fn contains(self, other: Self) -> bool {
        self.0 & other.0 == other.0
    }

    /// The space-separated names.
    pub(super) fn text(self) -> String {
        let names = SCOPES.iter().enumerate().filter(|(at, _)| self.0 & (1 << at) != 0);
        names.map(|(_, name)| *name).collect::<Vec<_>>().join(" ")
    }
}

/// How a client authenticates at the token endpoint.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum AuthMethod {
    /// A public client: `client_id` in the form, no secret.
    None,
    /// HTTP Basic with the form-urlencoded id and secret (RFC 6749 §2.3.1).
    SecretBasic,
    /// `client_id` and `client_secret` in the form.
    SecretPost,
}

impl AuthMethod {
    /// Every method, as advertised in `token_endpoint_auth_methods_supported`.
    pub(super) const ALL: [Self; 3] = [Self::None, Self::SecretBasic, Self::SecretPost];

    /// The registered name (`none`, `client_secret_basic`, `client_secret_post`).
    pub(super) fn name(self) -> &'static str {
        match self {
            Self::None => "none",
            Self::SecretBasic => "client_secret_basic",
            Self::SecretPost => "client_secret_post",
        }
    }

    pub(super) fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|method| method.name() == name)
    }
}

/// A registered client.
#[derive(Debug, Clone)]
pub(super) struct Client {
    /// `None` for a public client.
    pub(super) secret: Option<String>,
    /// The registered `token_endpoint_auth_method`; `None` for a pre-registered client, which
    /// may use either secret method.
    pub(super) method: Option<AuthMethod>,
    /// The registered redirect URIs; empty for a pre-registered client, which may use any
    /// loopback redirect URI.
    pub(super) redirect_uris: Vec<String>,
    /// The registered grant types; `None` for a pre-registered client (every grant).
    pub(super) grant_types: Option<Vec<String>>,
}

impl Client {
    /// Whether the client registered (or, pre-registered, may use) `grant`.
    pub(super) fn may_use(&self, grant: &str) -> bool {
        self.grant_types.as_ref().is_none_or(|grants| grants.iter().any(|known| known == grant))
    }
}

/// An authorization code.
#[derive(Debug)]
pub(super) struct Code {
    pub(super) client_id: String,
    /// The `redirect_uri` of the authorization request, if it had one.
    pub(super) redirect_uri: Option<String>,
    /// The redirect URI the code was sent to.
    pub(super) effective_redirect_uri: String,
    pub(super) challenge: String,
    pub(super) scopes: Scopes,
    pub(super) expires: Instant,
    /// The grant the code starts: tokens issued for it carry the same number, so that a reused
    /// code revokes them (RFC 6749 §4.1.2).
    pub(super) grant: u64,
    /// Redeemed (or a redemption was attempted): any further use fails and revokes the grant.
    pub(super) used: bool,
}

/// An access token.
#[derive(Debug)]
pub(super) struct AccessToken {
    pub(super) scopes: Scopes,
    /// `None`: never expires (a lifetime too long for `Instant`).
    pub(super) expires: Option<Instant>,
    /// The authorization code grant it belongs to (none for client credentials).
    pub(super) grant: Option<u64>,
}

impl AccessToken {
    pub(super) fn expired(&self, now: Instant) -> bool {
        self.expires.is_some_and(|expires| now >= expires)
    }
}

/// A refresh token (they do not expire; using one replaces it).
#[derive(Debug)]
pub(super) struct RefreshToken {
    pub(super) client_id: String,
    /// The scopes of the grant (a refresh may ask for fewer, never more).
    pub(super) scopes: Scopes,
    pub(super) grant: u64,
}

/// The counters shown by `/demo/oauth-stats`.
#[derive(Debug, Default)]
pub(super) struct Stats {
    pub(super) registrations: u64,
    pub(super) registration_errors: u64,
    /// Authorization codes issued.
    pub(super) authorizations: u64,
    /// Failed authorization requests, by error code.
    pub(super) authorization_errors: BTreeMap<&'static str, u64>,
    /// Token requests by `grant_type` (`other` for anything else, including none).
    pub(super) token_requests: BTreeMap<&'static str, u64>,
    /// Failed token requests, by error code.
    pub(super) token_errors: BTreeMap<&'static str, u64>,
    pub(super) access_tokens_issued: u64,
    pub(super) refresh_tokens_issued: u64,
    /// Requests to `/mcp` let through, refused with 401, refused with 403.
    pub(super) mcp_authorized: u64,
    pub(super) mcp_unauthorized: u64,
    pub(super) mcp_insufficient_scope: u64,
}

impl Stats {
    pub(super) fn to_json(&self) -> Value {
        json!({
            "registrations": self.registrations,
            "registration_errors": self.registration_errors,
            "authorizations": self.authorizations,
            "authorization_errors": self.authorization_errors,
            "token_requests": self.token_requests,
            "token_errors": self.token_errors,
            "access_tokens_issued": self.access_tokens_issued,
            "refresh_tokens_issued": self.refresh_tokens_issued,
            "mcp_requests": {
                "authorized": self.mcp_authorized,
                "unauthorized": self.mcp_unauthorized,
                "insufficient_scope": self.mcp_insufficient_scope,
            },
        })
    }
}

/// Adds one to `map[key]`.
pub(super) fn bump(map: &mut BTreeMap<&'static str, u64>, key: &'static str) {
    *map.entry(key).or_default() += 1;
}

/// Everything the authorization server remembers.
#[derive(Debug, Default)]
pub(super) struct Store {
    pub(super) clients: HashMap<String, Client>,
    /// How many of `clients` were registered dynamically.
    pub(super) registered: usize,
    pub(super) codes: HashMap<String, Code>,
    pub(super) access: HashMap<String, AccessToken>,
    pub(super) refresh: HashMap<String, RefreshToken>,
    pub(super) stats: Stats,
    grants: u64,
    minted: u64,
}

impl Store {
    /// An opaque, unguessable-enough string starting with `prefix`: a counter and the time,
    /// through two hashers of std's `RandomState`, whose keys are random per process. Not a
    /// cryptographic generator, which a demo server does not need (and it keeps the `rand`
    /// crate out).
    pub(super) fn mint(&mut self, prefix: &str) -> String {
        self.minted += 1;
        let nanos = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |elapsed| elapsed.as_nanos());
        let mut first = RandomState::new().build_hasher();
        first.write_u64(self.minted);
        first.write_u128(nanos);
        first.write_u32(std::process::id());
        let first = first.finish();
        let mut second = RandomState::new().build_hasher();
        second.write_u64(first);
        second.write_u64(self.minted);
        format!("{prefix}{:x}.{first:016x}{:016x}", self.minted, second.finish())
    }

    /// A new grant number.
    pub(super) fn new_grant(&mut self) -> u64 {
        self.grants += 1;
        self.grants
    }

    /// Drops expired codes and access tokens.
    pub(super) fn sweep(&mut self, now: Instant) {
        self.codes.retain(|_, code| now < code.expires);
        self.access.retain(|_, token| !token.expired(now));
    }

    /// Revokes every token of `grant` (its code was used twice).
    pub(super) fn revoke_grant(&mut self, grant: u64) {
        self.access.retain(|_, token| token.grant != Some(grant));
        self.refresh.retain(|_, token| token.grant != grant);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scopes_parse_and_print() {
        assert_eq!(Scopes::parse(None, Scopes::TOOLS), Ok(Scopes::TOOLS));
        assert_eq!(Scopes::parse(Some("offline_access"), Scopes::TOOLS), Ok(Scopes::TOOLS));
        assert_eq!(Scopes::parse(Some("mcp:admin  mcp:tools"), Scopes::TOOLS), Ok(Scopes::ADMIN));
        assert_eq!(
            Scopes::parse(Some("mcp:admin"), Scopes::TOOLS).map(Scopes::text).as_deref(),
            Ok("mcp:admin")
        );
        assert_eq!(Scopes::parse(Some("mcp:tools root"), Scopes::TOOLS), Err("root".to_owned()));
        assert_eq!(Scopes::ADMIN.text(), "mcp:tools mcp:admin");
        assert!(Scopes::ADMIN.contains(Scopes::TOOLS) && !Scopes::TOOLS.contains(Scopes::ADMIN));
    }

    #[test]
    fn minted_strings_differ() {
        let mut store = Store::default();
        let (first, second) = (store.mint("at."), store.mint("at."));
        assert_ne!(first, second);
        assert!(first.starts_with("at.1.") && second.starts_with("at.2."), "{first} {second}");
        assert!(first.bytes().all(|byte| byte.is_ascii_alphanumeric() || byte == b'.'));
    }
}
