//! OAuth 2.1 for MCP servers that require it (the MCP authorization spec), as a sans-IO state
//! machine: [`Authorizer`].
//!
//! The authorizer turns a server's `401`/`403` into the HTTP requests authorization needs
//! (resource metadata, authorization server metadata, client registration, token requests),
//! reads their responses, asks the application to send the user to an authorization page, and
//! ends with a token. Like the rest of the engine it has no clock, no randomness and no I/O:
//! the caller passes `now`, a [`SecureRandom`], the wall-clock time where signed JWTs need it
//! ([`Authorizer::set_wall_clock`]), and executes the [`AuthRequest`]s.
//!
//! [`HttpSession`](crate::http::HttpSession) drives one for you (see
//! [`HttpSession::with_authorizer`](crate::http::HttpSession::with_authorizer)): requests that
//! hit a 401 wait for the token and are sent again once, requests made meanwhile wait, and the
//! `Authorization` header goes on every request to the MCP server and nowhere else.
//!
//! What it does:
//! - discovery: `WWW-Authenticate` (`resource_metadata`, `scope`, `error`), Protected Resource
//!   Metadata from the header's URL then the path-based and root well-known URIs, Authorization
//!   Server Metadata (RFC 8414 and OpenID Connect, path-inserted and appended), the 2025-03-26
//!   rules for servers without resource metadata (metadata at the server's origin, else
//!   `/authorize`, `/token`, `/register`); the resource metadata must name this server and the
//!   server metadata its issuer, or nothing is sent;
//! - client identity: pre-registered, a Client ID Metadata Document URL where the server takes
//!   one, else dynamic registration (RFC 7591);
//! - the authorization code grant with PKCE S256 (a server without S256 is refused), `state`
//!   and `iss` (RFC 9207) checked, the resource indicator (RFC 8707) on every request; scope
//!   from the challenge, else the resource metadata; `offline_access` when the server offers
//!   it; step-up on `403 insufficient_scope`, bounded;
//! - the client credentials grant; token endpoint authentication `none`,
//!   `client_secret_basic`, `client_secret_post`, `private_key_jwt` (RFC 7523 §2.2, ES256 with a
//!   [`SigningKey`]);
//! - the JWT bearer grant (RFC 7523) with an assertion the application has (workload identity
//!   federation, [`AuthConfig::jwt_bearer`]): one attempt, no retry and no other grant after a
//!   refusal;
//! - enterprise-managed authorization ([`AuthConfig::identity_assertion`]): the user's ID
//!   token exchanged at the identity provider for an ID-JAG (RFC 8693), then the JWT bearer
//!   grant with it;
//! - DPoP (RFC 9449, [`DpopPolicy`]): tokens bound to a key the client makes, a fresh proof on
//!   every token request and every request to the MCP server (`Authorization: DPoP`), the
//!   servers' nonces (`use_dpop_nonce`) taken and the request sent again with one;
//! - refresh (one at a time, however many requests wait), and a new authorization when it
//!   fails;
//! - credentials only over `https` or to loopback; tokens never printed ([`Secret`]).

mod challenge;
mod config;
mod error;
mod exchange;
mod flow;
mod jose;
mod metadata;
mod refusal;
#[cfg(all(test, feature = "jwt"))]
mod tests;

use std::collections::VecDeque;
use std::fmt;
use std::time::{Duration, Instant};

use url::Url;

pub use challenge::BearerChallenge;
pub use config::{
    AuthConfig, ClientInfo, Credentials, DpopPolicy, IdentityAssertion, Secret, SecureRandom, StoredTokens,
    TokenEndpointAuth,
};
pub use error::AuthError;
pub use exchange::{AuthRequest, Endpoint};
pub use jose::SigningKey;
pub use metadata::{ResourceMetadata, ServerMetadata};

use crate::http::HttpMethod;
use config::Grant;
use refusal::{Budget, Held, MAX_NONCE_RETRIES};

/// How long before its expiry an access token is refreshed rather than used.
const EXPIRY_MARGIN: Duration = Duration::from_secs(30);
/// What errors call the MCP server, beside the authorizer's [`Endpoint`]s.
const RESOURCE_SERVER: &str = "the MCP server";
/// The most of a response body the authorizer reads (metadata documents are small).
pub const MAX_RESPONSE_BODY: usize = 256 * 1024;

/// Something the application must know or do.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum AuthEvent {
    /// Send the user to `url` (open a browser). The authorization server redirects the browser
    /// to the redirect URI; hand that URL to
    /// [`Authorizer::handle_redirect`](Authorizer::handle_redirect).
    AuthorizationRequired {
        /// The authorization URL.
        url: String,
    },
    /// The client registration or the tokens changed: persist
    /// [`Authorizer::credentials`](Authorizer::credentials) if they are kept between runs.
    CredentialsChanged,
    /// A token was obtained: requests waiting for it can go.
    Authorized,
    /// Authorization failed: requests waiting for it fail with this.
    Failed(AuthError),
}

/// What to do with a request the server refused with 401 or 403.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Verdict {
    /// Hold it until [`AuthEvent::Authorized`] (or [`AuthEvent::Failed`]), then send it again.
    Wait,
    /// Send it again now: a newer token than the one it carried is ready.
    Retry,
    /// Fail it with this.
    Fail(AuthError),
    /// Not an authorization matter (a 403 that is no `insufficient_scope`): the status stands.
    NotAuthorization,
}

/// What identifies the credentials a request to the MCP server carried: give it back to
/// [`Authorizer::challenge`] or [`Authorizer::accepted`] with that request's response.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Stamp {
    /// The token's generation.
    generation: u32,
    /// How many DPoP nonces of the MCP server the authorizer had seen.
    nonce: u32,
    /// How often the request was sent again with a newer nonce than it had carried.
    nonce_retries: u8,
}

/// The credentials for one request to the MCP server (see [`Authorizer::authorization`]).
///
/// `Debug` shows neither the token nor the proof.
#[derive(Clone)]
pub struct Authorization {
    header: Secret,
    dpop: Option<Secret>,
    stamp: Stamp,
}

impl Authorization {
    /// The value of the `Authorization` header: `Bearer <token>` or `DPoP <token>`. Never log
    /// it.
    pub fn header(&self) -> &str {
        self.header.expose()
    }

    /// The value of the `DPoP` header (a proof for this one request), with a DPoP-bound token.
    pub fn dpop(&self) -> Option<&str> {
        self.dpop.as_ref().map(Secret::expose)
    }

    /// What to give back with the request's response.
    pub fn stamp(&self) -> Stamp {
        self.stamp
    }
}

impl fmt::Debug for Authorization {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Authorization")
            .field("dpop", &self.dpop.is_some())
            .field("stamp", &self.stamp)
            .finish_non_exhaustive()
    }
}

/// A token the authorizer holds.
#[derive(Clone)]
struct Tokens {
    access: Secret,
    refresh: Option<Secret>,
    scope: Option<String>,
    expires_at: Option<Instant>,
    /// Bound to the DPoP key (`token_type` `DPoP`): presented with a proof.
    dpop: bool,
}

/// DPoP's state: the key (made at the first proof) and the servers' nonces.
#[derive(Default)]
struct Dpop {
    key: Option<SigningKey>,
    /// The authorization server's last `DPoP-Nonce`.
    server_nonce: Option<String>,
    /// The MCP server's last `DPoP-Nonce`.
    resource_nonce: Option<String>,
    /// Bumped with every new nonce of the MCP server (see [`Stamp`]).
    epoch: u32,
}

/// Where discovery of the resource metadata stands.
#[derive(Debug, Clone)]
enum Discovered<T> {
    Unknown,
    /// Looked for and not found.
    Absent,
    Found(T),
}

/// What the authorizer is doing.
enum Step {
    Idle,
    /// Fetching resource metadata: `candidates[next]` is in flight.
    Resource {
        candidates: Vec<Url>,
        next: usize,
    },
    /// Fetching server metadata for `issuer`.
    Server {
        issuer: String,
        candidates: Vec<Url>,
        next: usize,
    },
    Register,
    /// Waiting for the user to come back from the authorization page.
    Redirect(Box<Pending>),
    /// A token request is in flight.
    Token(TokenCall),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum TokenGrant {
    Code,
    Refresh,
    ClientCredentials,
    /// RFC 7523 §2.1.
    JwtBearer,
    /// RFC 8693, at the identity provider.
    TokenExchange,
}

impl TokenGrant {
    /// The `grant_type`.
    fn name(self) -> &'static str {
        match self {
            TokenGrant::Code => "authorization_code",
            TokenGrant::Refresh => "refresh_token",
            TokenGrant::ClientCredentials => "client_credentials",
            TokenGrant::JwtBearer => "urn:ietf:params:oauth:grant-type:jwt-bearer",
            TokenGrant::TokenExchange => "urn:ietf:params:oauth:grant-type:token-exchange",
        }
    }
}

/// A token request, kept to be built again (a fresh client assertion and DPoP proof) when the
/// authorization server asks for a DPoP nonce.
struct TokenCall {
    grant: TokenGrant,
    /// The grant's parameters (client authentication is added when the request is built).
    params: Vec<(&'static str, String)>,
    /// Whether the request carried a DPoP proof, and with which nonce.
    proof: Option<Option<String>>,
    /// Requests sent again for a new nonce.
    nonce_retries: u8,
}

/// An authorization request the user has not come back from.
struct Pending {
    state: String,
    verifier: String,
    deadline: Instant,
    /// The code, once the redirect brought it.
    code: Option<String>,
}

/// OAuth 2.1 for one MCP server, as a state machine. See the [module docs](self).
///
/// The loop around it: execute every [`poll_request`](Self::poll_request) and hand the
/// response to [`handle_response`](Self::handle_response) (or a failure to
/// [`handle_failure`](Self::handle_failure)); act on every [`poll_event`](Self::poll_event);
/// call [`handle_timeout`](Self::handle_timeout) at [`poll_timeout`](Self::poll_timeout).
pub struct Authorizer {
    /// Why this configuration cannot work, reported at the first challenge.
    broken: Option<AuthError>,
    config: AuthConfig,
    random: Box<dyn SecureRandom>,
    /// An instant and the Unix time (seconds) at that instant, for signed JWTs.
    wall_clock: Option<(Instant, u64)>,
    dpop: Dpop,
    server: Url,
    resource_metadata: Discovered<ResourceMetadata>,
    /// The `resource_metadata` URL of the last challenge.
    metadata_hint: Option<String>,
    /// The authorization server and its metadata, once discovered.
    issuer: Option<String>,
    metadata: Option<ServerMetadata>,
    client: Option<ClientInfo>,
    /// The access token, and how the MCP server took it.
    held: Held,
    /// Bumped with every new access token: a request refused with an older one is just sent
    /// again with the new one.
    generation: u32,
    /// The scope of the last challenge.
    challenge_scope: Option<String>,
    /// Scope added by step-ups.
    step_up_scope: Option<String>,
    /// A refresh waits for discovery (tokens restored without the server's metadata).
    refresh_after_discovery: bool,
    /// The counts against the bounds on what servers can make the authorizer do.
    budget: Budget,
    step: Step,
    outbox: Option<AuthRequest>,
    in_flight: Option<Endpoint>,
    events: VecDeque<AuthEvent>,
}

impl fmt::Debug for Authorizer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Authorizer")
            .field("server", &self.server.as_str())
            .field("issuer", &self.issuer)
            .field("client_id", &self.client.as_ref().map(|c| c.client_id.as_str()))
            .field("has_token", &self.held.tokens().is_some())
            .field("busy", &self.is_busy())
            .finish()
    }
}

impl Authorizer {
    /// An authorizer for the MCP server at `server_url`.
    ///
    /// A configuration that cannot work is not refused here but when the server first asks for
    /// authorization, so that a server that needs none is reached all the same: a server URL
    /// in plain `http` to a host other than loopback fails with
    /// [`AuthError::InsecureEndpoint`] (a token must not travel in clear), an invalid server or
    /// redirect URL with [`AuthError::Discovery`]. [`check`](Self::check) tells at once.
    pub fn new(server_url: &str, config: AuthConfig, random: Box<dyn SecureRandom>) -> Self {
        let parsed = Url::parse(server_url);
        let mut broken = match &parsed {
            Err(e) => Some(AuthError::Discovery(format!("the server URL {server_url:?} is invalid: {e}"))),
            Ok(url) if !metadata::is_secure(url) => Some(AuthError::InsecureEndpoint(server_url.to_owned())),
            Ok(_) => None,
        };
        if let Some(Err(e)) = config.redirect_uri().map(Url::parse) {
            let uri = config.redirect_uri().unwrap_or_default();
            broken.get_or_insert(AuthError::Discovery(format!("the redirect URI {uri:?} is invalid: {e}")));
        }
        if let Some(client) = &config.client {
            if client.auth_method == Some(TokenEndpointAuth::PrivateKeyJwt) && client.private_key.is_none() {
                broken.get_or_insert(AuthError::InvalidKey(
                    "private_key_jwt without a private key (ClientInfo::private_key)".into(),
                ));
            }
        }
        if let Grant::IdentityAssertion(assertion) = &config.grant {
            match Url::parse(&assertion.token_endpoint) {
                Ok(url) if metadata::is_secure(&url) => {}
                Ok(_) => {
                    broken.get_or_insert(AuthError::InsecureEndpoint(assertion.token_endpoint.clone()));
                }
                Err(e) => {
                    broken.get_or_insert(AuthError::Discovery(format!(
                        "the identity provider's token endpoint {:?} is invalid: {e}",
                        assertion.token_endpoint
                    )));
                }
            }
        }
        // A constant, valid URL: cannot fail. (An invalid server URL is reported as `broken`.)
        #[allow(clippy::expect_used)]
        let server = parsed.unwrap_or_else(|_| Url::parse("https://invalid.invalid/").expect("a valid URL"));
        let client = config.client.clone();
        Authorizer {
            broken,
            config,
            random,
            wall_clock: None,
            dpop: Dpop::default(),
            server,
            resource_metadata: Discovered::Unknown,
            metadata_hint: None,
            issuer: None,
            metadata: None,
            client,
            held: Held::None,
            generation: 0,
            challenge_scope: None,
            step_up_scope: None,
            refresh_after_discovery: false,
            budget: Budget::default(),
            step: Step::Idle,
            outbox: None,
            in_flight: None,
            events: VecDeque::new(),
        }
    }

    /// Whether the configuration can work with this server (see [`new`](Self::new)).
    pub fn check(&self) -> Result<(), AuthError> {
        self.broken.clone().map_or(Ok(()), Err)
    }

    /// Tells the time of day: `now_unix` is the wall-clock time at `now`, in seconds since the
    /// Unix epoch (the engine has no clock). Signed JWTs (client assertions, DPoP proofs) take
    /// their `iat` and `exp` from it, counted on from `now` with later instants: call it once,
    /// when the authorizer is made (and again if the system clock was set since).
    pub fn set_wall_clock(&mut self, now: Instant, now_unix: u64) {
        self.wall_clock = Some((now, now_unix));
    }

    /// The Unix time at `now`, from the anchor [`set_wall_clock`](Self::set_wall_clock) gave.
    fn unix_time(&self, now: Instant) -> Result<u64, AuthError> {
        let (at, unix) = self.wall_clock.ok_or(AuthError::NoWallClock)?;
        Ok(match now.checked_duration_since(at) {
            Some(later) => unix.saturating_add(later.as_secs()),
            None => unix.saturating_sub(at.saturating_duration_since(now).as_secs()),
        })
    }

    /// Replaces the assertion of the JWT bearer grant ([`AuthConfig::jwt_bearer`]), e.g. a
    /// workload token the platform renewed. After a refusal of the old one, the next request
    /// that needs a token tries again with this one.
    pub fn set_assertion(&mut self, assertion: impl Into<String>) {
        if let Grant::JwtBearer { assertion: current } = &mut self.config.grant {
            *current = Secret::new(assertion);
            if matches!(self.broken, Some(AuthError::TokenRefused { .. })) {
                self.broken = None;
            }
        }
    }

    /// Takes back credentials kept from an earlier run (see [`credentials`](Self::credentials)).
    /// `now_unix` is the wall-clock time in seconds since the Unix epoch (the engine has no
    /// clock), to read the tokens' expiry; it also sets the wall clock if
    /// [`set_wall_clock`](Self::set_wall_clock) did not.
    pub fn restore(&mut self, now: Instant, now_unix: u64, credentials: Credentials) {
        if self.wall_clock.is_none() {
            self.set_wall_clock(now, now_unix);
        }
        if let Some(client) = credentials.client {
            if self.config.client.is_none() {
                self.client = Some(client);
            }
        }
        // A stored token that could not go in a header (a corrupt store) is no token.
        let usable = |t: &StoredTokens| {
            t.token_type.eq_ignore_ascii_case("bearer") && exchange::is_b64token(t.access_token.expose())
        };
        if let Some(stored) = credentials.tokens.filter(usable) {
            let expires_at = stored.expires_at.map(|at| {
                crate::deadline::deadline_after(now, Duration::from_secs(at.saturating_sub(now_unix)))
            });
            self.held = Held::Proven(Tokens {
                access: stored.access_token,
                refresh: stored.refresh_token,
                scope: stored.scope,
                expires_at,
                dpop: false,
            });
            self.generation = self.generation.saturating_add(1);
        }
    }

    /// What to keep for the next run: the client's registration (unless it was given in the
    /// configuration) and the tokens, unless they are bound to the DPoP key (which is not kept).
    /// `now_unix` as for [`restore`](Self::restore).
    pub fn credentials(&self, now: Instant, now_unix: u64) -> Credentials {
        let client = self.client.clone().filter(|_| self.config.client.is_none());
        let tokens = self.held.tokens().filter(|t| !t.dpop).map(|t| StoredTokens {
            access_token: t.access.clone(),
            token_type: "Bearer".to_owned(),
            refresh_token: t.refresh.clone(),
            scope: t.scope.clone(),
            expires_at: t
                .expires_at
                .map(|at| now_unix.saturating_add(at.saturating_duration_since(now).as_secs())),
        });
        Credentials { client, tokens }
    }

    /// Whether a flow is under way (requests should wait for it).
    pub fn is_busy(&self) -> bool {
        !matches!(self.step, Step::Idle)
    }

    /// The credentials for a request to the MCP server that is sent now, if the authorizer
    /// holds a token: the `Authorization` header and, with a DPoP-bound token, the `DPoP`
    /// header, a proof made for this request alone (`method`, `url`, a fresh `jti`, the
    /// server's nonce). Call it for every request, each retry included; give the
    /// [`Stamp`] back with the response ([`challenge`](Self::challenge),
    /// [`accepted`](Self::accepted)). `refused` is the stamp of the request's previous send when
    /// it goes again after the server refused it ([`Verdict::Wait`], [`Verdict::Retry`]): what
    /// the authorizer counts per request (the nonces it was sent again for) goes on from there.
    ///
    /// `None` for a `url` that is neither `https` nor loopback: a token never travels in clear,
    /// not even one [restored](Self::restore) for a server whose URL says `http`.
    pub fn authorization(
        &mut self,
        now: Instant,
        method: HttpMethod,
        url: &str,
        refused: Option<Stamp>,
    ) -> Option<Authorization> {
        let tokens = self.held.tokens()?;
        if !Url::parse(url).is_ok_and(|u| metadata::is_secure(&u)) {
            tracing::warn!(url, "no credentials for a request that would carry them in clear");
            return None;
        }
        let epoch = self.dpop.epoch;
        let nonce_retries = refused.map_or(0, |r| r.nonce_retries.saturating_add(u8::from(r.nonce < epoch)));
        let stamp = Stamp { generation: self.generation, nonce: epoch, nonce_retries };
        if !tokens.dpop {
            let header = Secret::new(format!("Bearer {}", tokens.access.expose()));
            return Some(Authorization { header, dpop: None, stamp });
        }
        let access = tokens.access.clone();
        let nonce = self.dpop.resource_nonce.clone();
        let proof = self.proof(now, method.as_str(), url, Some(access.expose()), nonce.as_deref());
        let proof = match proof {
            Ok(proof) => Some(Secret::new(proof)),
            Err(error) => {
                // Cannot happen: the token was obtained with a proof, so the key and the clock
                // exist. The server refuses the request without one, which says why.
                tracing::warn!(%error, "no DPoP proof for the request");
                None
            }
        };
        let header = Secret::new(format!("DPoP {}", access.expose()));
        Some(Authorization { header, dpop: proof, stamp })
    }

    /// Whether requests may be sent now. Starts a refresh when the token is about to expire
    /// (and returns `false`: wait for [`AuthEvent::Authorized`]).
    pub fn ready(&mut self, now: Instant) -> bool {
        if self.is_busy() {
            return false;
        }
        // A token not used yet is used once whatever its lifetime: one that lives less than
        // the margin would otherwise be refreshed for ever, no request ever going out.
        let expiring = match &self.held {
            Held::Proven(tokens) => {
                tokens.expires_at.is_some_and(|at| at <= crate::deadline::deadline_after(now, EXPIRY_MARGIN))
            }
            Held::None | Held::Fresh(_) => false,
        };
        if expiring {
            if self.held.tokens().is_some_and(|t| t.refresh.is_some()) {
                tracing::debug!("the access token expires: refreshing it");
                self.refresh_or_discover(now);
                return false;
            }
            // Sent without a token, the request gets a 401 that starts a new authorization.
            self.held = Held::None;
        }
        true
    }

    /// The MCP server sent a `DPoP-Nonce` header with a response that is no challenge (RFC
    /// 9449 §9: a new nonce for the next requests).
    pub fn handle_resource_nonce(&mut self, nonce: &str) {
        if self.dpop.resource_nonce.as_deref() != Some(nonce) && is_nonce(nonce) {
            self.dpop.resource_nonce = Some(nonce.to_owned());
            self.dpop.epoch = self.dpop.epoch.saturating_add(1);
        }
    }

    /// The next HTTP request to execute, if any. One is in flight at a time.
    pub fn poll_request(&mut self) -> Option<AuthRequest> {
        let request = self.outbox.take()?;
        self.in_flight = Some(request.endpoint);
        Some(request)
    }

    /// The next event for the application.
    pub fn poll_event(&mut self) -> Option<AuthEvent> {
        self.events.pop_front()
    }

    /// When [`handle_timeout`](Self::handle_timeout) is due: the end of the wait for the user.
    pub fn poll_timeout(&self) -> Option<Instant> {
        match &self.step {
            Step::Redirect(pending) if pending.code.is_none() => Some(pending.deadline),
            _ => None,
        }
    }

    /// Time passed: fails the authorization the user did not come back from in time.
    pub fn handle_timeout(&mut self, now: Instant) {
        if self.poll_timeout().is_some_and(|at| at <= now) {
            self.fail(AuthError::AuthorizationTimeout(self.config.authorization_timeout));
        }
    }

    /// The application gives up on the authorization the user was sent to (its handler
    /// failed, the user closed the window): what waits for it fails with
    /// [`AuthError::Abandoned`].
    pub fn abandon(&mut self, reason: impl Into<String>) {
        if matches!(self.step, Step::Redirect(_)) {
            self.fail(AuthError::Abandoned(reason.into()));
        }
    }

    /// The request from [`poll_request`](Self::poll_request) failed without a response.
    pub fn handle_failure(&mut self, now: Instant, detail: &str) {
        let Some(endpoint) = self.in_flight.take() else { return };
        match &mut self.step {
            // A metadata location that cannot be reached is one that does not answer: try the
            // next.
            Step::Resource { .. } | Step::Server { .. } => self.next_candidate(now),
            _ => self.fail(AuthError::Transport { endpoint: endpoint.as_str(), detail: detail.to_owned() }),
        }
    }

    /// The response to the request from [`poll_request`](Self::poll_request): its status, its
    /// headers (name, value; the authorizer reads `DPoP-Nonce`), and the body (at most
    /// [`MAX_RESPONSE_BODY`] bytes of it).
    pub fn handle_response<'h>(
        &mut self,
        now: Instant,
        status: u16,
        headers: impl IntoIterator<Item = (&'h str, &'h [u8])>,
        body: &[u8],
    ) {
        let Some(endpoint) = self.in_flight.take() else { return };
        if endpoint == Endpoint::Token {
            // RFC 9449 §8: the authorization server's nonce, for the next proofs.
            let nonce = headers
                .into_iter()
                .find(|(name, _)| name.eq_ignore_ascii_case("dpop-nonce"))
                .and_then(|(_, value)| std::str::from_utf8(value).ok())
                .map(str::trim)
                .filter(|n| is_nonce(n));
            if let Some(nonce) = nonce {
                self.dpop.server_nonce = Some(nonce.to_owned());
            }
        }
        match std::mem::replace(&mut self.step, Step::Idle) {
            Step::Resource { candidates, next } => {
                self.on_resource_metadata(now, candidates, next, status, body)
            }
            Step::Server { issuer, candidates, next } => {
                self.on_server_metadata(now, issuer, candidates, next, status, body)
            }
            Step::Register => self.on_registration(now, status, body),
            Step::Token(call) => self.on_token(now, call, status, body),
            step @ (Step::Idle | Step::Redirect(_)) => self.step = step,
        }
    }

    /// The authorization server redirected the user's browser to the redirect URI: `url` is
    /// that whole URL (with `code`, `state`, maybe `iss` or `error`). Checks it and asks for
    /// the token. An error here also fails what waits (the flow is over).
    pub fn handle_redirect(&mut self, now: Instant, url: &str) -> Result<(), AuthError> {
        let result = self.on_redirect(url);
        match &result {
            Ok(()) => self.exchange_code(now),
            Err(error) => {
                if matches!(self.step, Step::Redirect(_)) {
                    self.fail(error.clone());
                }
            }
        }
        result
    }
}

/// Whether a `DPoP-Nonce` value is one (RFC 9449 §8.1: `NQCHAR`s, at least one), so that it can
/// go into a proof.
fn is_nonce(nonce: &str) -> bool {
    !nonce.is_empty()
        && nonce.bytes().all(|b| b == b'!' || (0x23..=0x5b).contains(&b) || (0x5d..=0x7e).contains(&b))
}

/// The space-separated union of two scope strings, in order, without duplicates.
fn union(a: Option<&str>, b: Option<&str>) -> Option<String> {
    let mut scopes: Vec<&str> = Vec::new();
    for s in a.into_iter().chain(b).flat_map(str::split_whitespace) {
        if !scopes.contains(&s) {
            scopes.push(s);
        }
    }
    (!scopes.is_empty()).then(|| scopes.join(" "))
}
