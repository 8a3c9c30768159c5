//! [`AuthError`]: why authorization failed, typed so that a caller can tell a refusal by the
//! user from a misconfigured server from a network failure.

use std::time::Duration;

/// Why the client could not obtain (or use) a token.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum AuthError {
    /// The server asked for authorization, but the client has no [`AuthConfig`](super::AuthConfig).
    #[error("the server requires authorization (HTTP {status}) and no OAuth configuration was given")]
    NotConfigured {
        /// 401 or 403.
        status: u16,
    },
    /// Neither resource metadata nor authorization server metadata could be found.
    #[error("authorization discovery failed: {0}")]
    Discovery(String),
    /// The resource metadata names another resource than the server the client talks to
    /// (RFC 9728 §3.3): nothing is sent to its authorization server.
    #[error("the protected resource metadata is for {found:?}, not for {expected:?}")]
    ResourceMismatch {
        /// The MCP server URL.
        expected: String,
        /// The metadata's `resource`.
        found: String,
    },
    /// The protected resource metadata has no `resource`, which RFC 9728 §2 requires: nothing
    /// shows it is this server's, so nothing is sent to the authorization servers it names
    /// (RFC 9728 §3.3).
    #[error(
        "the protected resource metadata at {url:?} names no resource (RFC 9728 §2 requires one): not used"
    )]
    ResourceMissing {
        /// Where the metadata was found.
        url: String,
    },
    /// The authorization server metadata names another issuer than the one it was fetched for
    /// (RFC 8414 §3.3).
    #[error("the authorization server metadata is for issuer {found:?}, not {expected:?}")]
    IssuerMismatch {
        /// The issuer the metadata was fetched for.
        expected: String,
        /// The metadata's `issuer`.
        found: String,
    },
    /// The authorization server does not support PKCE with S256, which OAuth 2.1 and MCP
    /// require.
    #[error("the authorization server does not support PKCE S256")]
    PkceUnsupported,
    /// An endpoint would carry credentials in clear or to no web server at all: plain `http` to
    /// a host other than loopback, or another scheme (`javascript:`, `file:`, `data:`, …). The
    /// message names the scheme.
    #[error("refusing to send credentials to {0:?} {how}", how = insecure_scheme(.0))]
    InsecureEndpoint(String),
    /// The authorization server has no way for this client to be identified: no
    /// pre-registered client, no registration endpoint, no Client ID Metadata Document support.
    #[error("no client identity for this authorization server: {0}")]
    NoClientIdentity(String),
    /// Dynamic client registration was refused.
    #[error("client registration failed: {0}")]
    Registration(String),
    /// The authorization server sent the user back with an error (the user refused, …).
    #[error("authorization refused: {error}{}", suffix(.description))]
    AuthorizationDenied {
        /// The OAuth error code, e.g. `access_denied`.
        error: String,
        /// `error_description`.
        description: Option<String>,
    },
    /// The redirect is not the answer to the authorization request in progress (wrong or
    /// missing `state`, no code, no request in progress).
    #[error("unexpected authorization redirect: {0}")]
    InvalidRedirect(String),
    /// The redirect's `iss` is missing although the server promised it, or names another
    /// issuer (RFC 9207: a mix-up attack, or a misconfigured server).
    #[error("the authorization response's issuer is {found:?}, expected {expected:?}")]
    IssuerMixUp {
        /// The authorization server's issuer.
        expected: String,
        /// The `iss` parameter received.
        found: Option<String>,
    },
    /// The token endpoint (of the authorization server, or of the identity provider for a
    /// token exchange) refused the request.
    #[error("the token endpoint refused the {grant} request: {error}{}", suffix(.description))]
    TokenRefused {
        /// The `grant_type`: `authorization_code`, `refresh_token`, `client_credentials`,
        /// `urn:ietf:params:oauth:grant-type:jwt-bearer`,
        /// `urn:ietf:params:oauth:grant-type:token-exchange`.
        grant: &'static str,
        /// The OAuth error code (`invalid_grant`, …) or `HTTP <status>`.
        error: String,
        /// `error_description`.
        description: Option<String>,
    },
    /// A response from an authorization endpoint was not what the protocol says.
    #[error("invalid response from {endpoint}: {detail}")]
    InvalidResponse {
        /// Which document or endpoint.
        endpoint: &'static str,
        /// What was wrong.
        detail: String,
    },
    /// The server kept asking for more scope past the step-up limit
    /// ([`AuthConfig::max_step_ups`](super::AuthConfig::max_step_ups)).
    #[error("the server still requires more scope ({scope:?}) after {attempts} re-authorizations")]
    InsufficientScope {
        /// The scope of the last challenge.
        scope: Option<String>,
        /// Re-authorizations made.
        attempts: u32,
    },
    /// The same operation (method, and tool or prompt name or resource URI) failed with
    /// [`InsufficientScope`](Self::InsufficientScope) a moment ago: it fails at once, sending
    /// nothing, instead of sending the user through the consent screen again for scope the
    /// authorization server would not grant (MCP 2025-11-25: clients track scope upgrade
    /// attempts per resource and operation). Remembered per connection for 10 minutes
    /// (`mcp_sansio::http::SCOPE_REFUSAL_MEMORY`);
    /// `HttpSession::forget_scope_refusals` (mcp-smol: `Client::forget_scope_refusals`) forgets
    /// it sooner, when the user was granted more.
    #[error("{operation} was refused for want of scope ({scope:?}) a moment ago: not asked again yet")]
    ScopeRefusedRecently {
        /// The operation: the method, then the name or URI it acts on, if any.
        operation: String,
        /// The scope the server asked for then.
        scope: Option<String>,
    },
    /// The server refused a token the authorization server had just issued.
    #[error("the server refused a freshly issued token (HTTP {status})")]
    TokenRejected {
        /// 401 or 403.
        status: u16,
    },
    /// The user did not come back from the authorization page in time.
    #[error("no authorization redirect within {0:?}")]
    AuthorizationTimeout(Duration),
    /// The application gave up on the authorization (its handler failed).
    #[error("authorization abandoned: {0}")]
    Abandoned(String),
    /// A private key for signing JWTs could not be read (not PKCS#8 PEM, not P-256).
    #[error("invalid signing key: {0}")]
    InvalidKey(String),
    /// What the configuration or the server asks for is not supported: a signed JWT without
    /// the `jwt` feature, DPoP required but no algorithm in common with the server.
    #[error("unsupported: {0}")]
    Unsupported(String),
    /// A JWT (a client assertion, a DPoP proof) is needed and the authorizer does not know the
    /// time of day: the driver must call
    /// [`Authorizer::set_wall_clock`](super::Authorizer::set_wall_clock).
    #[error("a signed JWT needs the wall-clock time, and none was given (Authorizer::set_wall_clock)")]
    NoWallClock,
    /// A server refused the DPoP nonce it had just asked for (`use_dpop_nonce` again, with the
    /// same nonce or yet another): the request was sent again once with the nonce it gave, and
    /// is not sent again.
    #[error("{endpoint} refused the DPoP nonce it had asked for (use_dpop_nonce again): not asked again")]
    DpopNonceRejected {
        /// `the MCP server`, or the token endpoint that asked.
        endpoint: &'static str,
    },
    /// A request to an authorization endpoint failed (connection refused, reset, timeout).
    #[error("request to {endpoint} failed: {detail}")]
    Transport {
        /// Which document or endpoint.
        endpoint: &'static str,
        /// What happened.
        detail: String,
    },
}

impl AuthError {
    /// Whether trying again later may succeed: an authorization endpoint that could not be
    /// reached, a user who did not come back in time. A refusal or a misconfiguration would
    /// happen again: `false`.
    pub fn is_retriable(&self) -> bool {
        matches!(self, AuthError::Transport { .. } | AuthError::AuthorizationTimeout(_))
    }
}

/// Why a URL may not carry credentials, by its scheme: plain `http` (the host is not loopback),
/// or a scheme that is neither `https` nor `http`.
fn insecure_scheme(url: &str) -> String {
    let scheme = url.split_once(':').map(|(scheme, _)| scheme.trim()).filter(|s| {
        !s.is_empty() && s.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'-' | b'.'))
    });
    match scheme {
        Some(s) if s.eq_ignore_ascii_case("http") => "over plain http".to_owned(),
        Some(s) => format!("over {}: (only https, or http to loopback)", s.to_ascii_lowercase()),
        None => "without a scheme (only https, or http to loopback)".to_owned(),
    }
}

fn suffix(description: &Option<String>) -> String {
    description.as_ref().map(|d| format!(" ({d})")).unwrap_or_default()
}
