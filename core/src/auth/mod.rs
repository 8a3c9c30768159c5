//! OAuth 2.1 for MCP servers that require it (the MCP authorization spec), as a sans-IO state
//! machine: [`Authorizer`].
//!
//! The authorizer turns a server's `401`/`403` into the HTTP requests authorization needs
//! (resource metadata, authorization server metadata, client registration, token requests),
//! reads their responses, asks the application to send the user to an authorization page, and
//! ends with a token. Like the rest of the engine it has no clock, no randomness and no I/O:
//! the caller passes `now`, a [`SecureRandom`], and executes the [`AuthRequest`]s.
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
//!   `client_secret_basic`, `client_secret_post`;
//! - refresh (one at a time, however many requests wait), and a new authorization when it
//!   fails;
//! - credentials only over `https` or to loopback; tokens never printed ([`Secret`]).

mod challenge;
mod config;
mod error;
mod exchange;
mod flow;
mod metadata;

use std::collections::VecDeque;
use std::fmt;
use std::time::{Duration, Instant};

use url::Url;

pub use challenge::BearerChallenge;
pub use config::{AuthConfig, ClientInfo, Credentials, Secret, SecureRandom, StoredTokens, TokenEndpointAuth};
pub use error::AuthError;
pub use exchange::{AuthRequest, Endpoint};
pub use metadata::{ResourceMetadata, ServerMetadata};

use config::Grant;

/// How long before its expiry an access token is refreshed rather than used.
const EXPIRY_MARGIN: Duration = Duration::from_secs(30);
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

/// A token the authorizer holds.
#[derive(Clone)]
struct Tokens {
    access: Secret,
    refresh: Option<Secret>,
    scope: Option<String>,
    expires_at: Option<Instant>,
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
    Resource { candidates: Vec<Url>, next: usize },
    /// Fetching server metadata for `issuer`.
    Server { issuer: String, candidates: Vec<Url>, next: usize },
    Register,
    /// Waiting for the user to come back from the authorization page.
    Redirect(Box<Pending>),
    /// A token request is in flight.
    Token(TokenGrant),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum TokenGrant {
    Code,
    Refresh,
    ClientCredentials,
}

impl TokenGrant {
    fn name(self) -> &'static str {
        match self {
            TokenGrant::Code => "authorization_code",
            TokenGrant::Refresh => "refresh_token",
            TokenGrant::ClientCredentials => "client_credentials",
        }
    }
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
    server: Url,
    resource_metadata: Discovered<ResourceMetadata>,
    /// The `resource_metadata` URL of the last challenge.
    metadata_hint: Option<String>,
    /// The authorization server and its metadata, once discovered.
    issuer: Option<String>,
    metadata: Option<ServerMetadata>,
    client: Option<ClientInfo>,
    tokens: Option<Tokens>,
    /// Bumped with every new access token: a request refused with an older one is just sent
    /// again with the new one.
    generation: u64,
    /// No request has succeeded with the current token yet.
    fresh: bool,
    /// The scope of the last challenge.
    challenge_scope: Option<String>,
    /// Scope added by step-ups.
    step_up_scope: Option<String>,
    step_ups: u32,
    /// Full authorizations since a request last succeeded.
    attempts: u32,
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
            .field("has_token", &self.tokens.is_some())
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
        let server = parsed.unwrap_or_else(|_| Url::parse("https://invalid.invalid/").expect("a valid URL"));
        let client = config.client.clone();
        Authorizer {
            broken,
            config,
            random,
            server,
            resource_metadata: Discovered::Unknown,
            metadata_hint: None,
            issuer: None,
            metadata: None,
            client,
            tokens: None,
            generation: 0,
            fresh: false,
            challenge_scope: None,
            step_up_scope: None,
            step_ups: 0,
            attempts: 0,
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

    /// Takes back credentials kept from an earlier run (see [`credentials`](Self::credentials)).
    /// `now_unix` is the wall-clock time in seconds since the Unix epoch (the engine has no
    /// clock), to read the tokens' expiry.
    pub fn restore(&mut self, now: Instant, now_unix: u64, credentials: Credentials) {
        if let Some(client) = credentials.client {
            if self.config.client.is_none() {
                self.client = Some(client);
            }
        }
        if let Some(stored) = credentials.tokens {
            let expires_at = stored.expires_at.map(|at| {
                crate::connection::deadline_after(now, Duration::from_secs(at.saturating_sub(now_unix)))
            });
            self.tokens = Some(Tokens {
                access: stored.access_token,
                refresh: stored.refresh_token,
                scope: stored.scope,
                expires_at,
            });
            self.generation += 1;
        }
    }

    /// What to keep for the next run: the client's registration (unless it was given in the
    /// configuration) and the tokens. `now_unix` as for [`restore`](Self::restore).
    pub fn credentials(&self, now: Instant, now_unix: u64) -> Credentials {
        let client = self.client.clone().filter(|_| self.config.client.is_none());
        let tokens = self.tokens.as_ref().map(|t| StoredTokens {
            access_token: t.access.clone(),
            token_type: "Bearer".to_owned(),
            refresh_token: t.refresh.clone(),
            scope: t.scope.clone(),
            expires_at: t.expires_at.map(|at| now_unix + at.saturating_duration_since(now).as_secs()),
        });
        Credentials { client, tokens }
    }

    /// Whether a flow is under way (requests should wait for it).
    pub fn is_busy(&self) -> bool {
        !matches!(self.step, Step::Idle)
    }

    /// The value of the `Authorization` header for a request to the MCP server, if the
    /// authorizer holds a token, and its generation (pass it back to
    /// [`challenge`](Self::challenge) if the request is refused).
    pub fn authorization(&self) -> Option<(String, u64)> {
        let tokens = self.tokens.as_ref()?;
        Some((format!("Bearer {}", tokens.access.expose()), self.generation))
    }

    /// Whether requests may be sent now. Starts a refresh when the token is about to expire
    /// (and returns `false`: wait for [`AuthEvent::Authorized`]).
    pub fn ready(&mut self, now: Instant) -> bool {
        if self.is_busy() {
            return false;
        }
        let expiring = self.tokens.as_ref().and_then(|t| t.expires_at).is_some_and(|at| {
            at <= crate::connection::deadline_after(now, EXPIRY_MARGIN)
        });
        if expiring {
            if self.tokens.as_ref().is_some_and(|t| t.refresh.is_some()) && self.metadata.is_some() {
                tracing::debug!("the access token expires: refreshing it");
                self.refresh(now);
                return false;
            }
            // Sent without a token, the request gets a 401 that starts a new authorization.
            self.tokens = None;
        }
        true
    }

    /// A request to the MCP server succeeded with the current token.
    pub fn accepted(&mut self) {
        self.fresh = false;
        self.attempts = 0;
        self.step_ups = 0;
    }

    /// The MCP server refused a request with `status` (401 or 403) and this `WWW-Authenticate`
    /// value; `generation` is what [`authorization`](Self::authorization) gave when the request
    /// was sent (`None` if it carried no token). Says what to do with the request, and starts
    /// what is needed (discovery, refresh, a new authorization, a step-up).
    pub fn challenge(
        &mut self,
        now: Instant,
        status: u16,
        www_authenticate: Option<&str>,
        generation: Option<u64>,
    ) -> Verdict {
        let challenge = www_authenticate.and_then(BearerChallenge::parse).unwrap_or_default();
        if status == 403 && challenge.error.as_deref() != Some("insufficient_scope") {
            return Verdict::NotAuthorization;
        }
        if let Some(error) = &self.broken {
            return Verdict::Fail(error.clone());
        }
        if status == 403 && challenge.error.as_deref() != Some("insufficient_scope") {
            return Verdict::NotAuthorization;
        }
        if generation.is_some_and(|g| g < self.generation) && self.tokens.is_some() {
            return Verdict::Retry;
        }
        if self.is_busy() {
            return Verdict::Wait;
        }
        if challenge.resource_metadata.is_some() {
            self.metadata_hint = challenge.resource_metadata.clone();
        }
        if challenge.scope.is_some() {
            self.challenge_scope = challenge.scope.clone();
        }
        if status == 403 {
            // Step-up: authorize again for the union of what was asked and what is needed.
            if self.step_ups >= self.config.max_step_ups {
                return Verdict::Fail(AuthError::InsufficientScope {
                    scope: challenge.scope,
                    attempts: self.step_ups,
                });
            }
            self.step_ups += 1;
            let previous = self.tokens.as_ref().and_then(|t| t.scope.clone()).or_else(|| self.requested_scope());
            self.step_up_scope = union(previous.as_deref(), challenge.scope.as_deref());
            tracing::debug!(attempt = self.step_ups, "insufficient scope: authorizing again for more");
            self.tokens = None;
            self.authorize(now);
            return Verdict::Wait;
        }
        let had_token = generation.is_some() && self.tokens.is_some();
        if had_token && !self.fresh && self.tokens.as_ref().is_some_and(|t| t.refresh.is_some()) {
            tracing::debug!("the server refused the access token: refreshing it");
            self.refresh(now);
            return Verdict::Wait;
        }
        if had_token && self.fresh && self.attempts >= 2 {
            return Verdict::Fail(AuthError::TokenRejected { status });
        }
        // Start over: the server may have moved to another authorization server.
        self.tokens = None;
        self.resource_metadata = Discovered::Unknown;
        self.metadata = None;
        self.issuer = None;
        self.authorize(now);
        Verdict::Wait
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

    /// The response to the request from [`poll_request`](Self::poll_request): its status, the
    /// headers, and the body (at most [`MAX_RESPONSE_BODY`] bytes of it).
    pub fn handle_response(&mut self, now: Instant, status: u16, body: &[u8]) {
        if self.in_flight.take().is_none() {
            return;
        }
        match std::mem::replace(&mut self.step, Step::Idle) {
            Step::Resource { candidates, next } => self.on_resource_metadata(now, candidates, next, status, body),
            Step::Server { issuer, candidates, next } => {
                self.on_server_metadata(now, issuer, candidates, next, status, body)
            }
            Step::Register => self.on_registration(now, status, body),
            Step::Token(grant) => self.on_token(now, grant, status, body),
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
