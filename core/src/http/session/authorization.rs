//! The session's side of OAuth: an [`Authorizer`] beside it, whose requests run as exchanges of
//! the session, whose token (and DPoP proof) goes on every request to the MCP server, and whose
//! verdicts decide what happens to a request the server refused with 401 or 403.

use std::borrow::Cow;
use std::time::Instant;

use super::*;
use crate::auth::{
    AuthError, AuthEvent, AuthRequest, Authorizer, BearerChallenge, Credentials, MAX_RESPONSE_BODY, Stamp,
    Verdict,
};

/// The response to one of the authorizer's requests, gathered for it.
#[derive(Debug)]
pub(super) struct AuthResponse {
    pub(super) headers: Vec<(String, Vec<u8>)>,
    pub(super) body: Vec<u8>,
}

impl HttpSession {
    /// Authorizes with OAuth when the server asks for it (a `401`, or a `403` with
    /// `insufficient_scope`): the session runs the authorizer's requests as its own exchanges,
    /// holds requests while a token is being obtained and sends each again once it is, and puts
    /// `Authorization: Bearer` (or `DPoP`, with a `DPoP` proof made for the request) on every
    /// request to the MCP server (and nowhere else). A server's `DPoP-Nonce` goes to the
    /// authorizer, and a request refused for want of one is sent again with it.
    ///
    /// The application acts on [`poll_auth_event`](Self::poll_auth_event): it sends the user to
    /// the authorization URL and hands the redirect back with
    /// [`handle_authorization_redirect`](Self::handle_authorization_redirect).
    #[must_use]
    pub fn with_authorizer(mut self, authorizer: Authorizer) -> Self {
        self.auth = Some(Box::new(authorizer));
        self
    }

    /// The authorizer, if the session has one.
    pub fn authorizer(&self) -> Option<&Authorizer> {
        self.auth.as_deref()
    }

    /// The next authorization event: send the user to a URL, persist new credentials, a token
    /// obtained, authorization failed.
    pub fn poll_auth_event(&mut self) -> Option<AuthEvent> {
        self.auth_events.pop_front()
    }

    /// The authorization server redirected the user's browser to the redirect URI: `url` is the
    /// whole URL. Checks it (`state`, `iss`, `error`) and asks for the token; on an error, what
    /// waited for the authorization fails with it.
    pub fn handle_authorization_redirect(&mut self, now: Instant, url: &str) -> Result<(), AuthError> {
        let Some(auth) = self.auth.as_mut() else {
            return Err(AuthError::InvalidRedirect("the session has no authorizer".into()));
        };
        let result = auth.handle_redirect(now, url);
        self.sync(now);
        result
    }

    /// The application gives up on the authorization in progress (its handler failed): what
    /// waited for it fails with [`AuthError::Abandoned`].
    pub fn abandon_authorization(&mut self, now: Instant, reason: &str) {
        if let Some(auth) = self.auth.as_mut() {
            auth.abandon(reason);
        }
        self.sync(now);
    }

    /// The credentials to keep between runs (see [`Authorizer::credentials`]).
    pub fn credentials(&self, now: Instant, now_unix: u64) -> Option<Credentials> {
        self.auth.as_ref().map(|a| a.credentials(now, now_unix))
    }

    /// Whether requests may go to the server now (no authorization under way; starts a
    /// refresh when the token is about to expire).
    pub(super) fn auth_ready(&mut self, now: Instant) -> bool {
        self.auth.as_mut().is_none_or(|a| a.ready(now))
    }

    /// Adds the `Authorization` header (and the `DPoP` proof) to a request to the MCP server
    /// sent now, when the authorizer holds a token; returns what identifies them.
    pub(super) fn authorize_exchange(
        &mut self,
        now: Instant,
        method: HttpMethod,
        url: &str,
        headers: &mut Vec<(Cow<'static, str>, String)>,
        refused: Option<Stamp>,
    ) -> Option<Stamp> {
        let authorization = self.auth.as_mut()?.authorization(now, method, url, refused)?;
        headers.retain(|(name, _)| {
            !name.eq_ignore_ascii_case("authorization") && !name.eq_ignore_ascii_case("dpop")
        });
        headers.push((Cow::Borrowed("Authorization"), authorization.header().to_owned()));
        if let Some(proof) = authorization.dpop() {
            headers.push((Cow::Borrowed("DPoP"), proof.to_owned()));
        }
        Some(authorization.stamp())
    }

    /// A response of the MCP server that is no challenge the authorizer took: a success counts
    /// for the token the request carried, and a new DPoP nonce is kept.
    pub(super) fn authorized_response(
        &mut self,
        status: u16,
        carried: Option<Stamp>,
        dpop_nonce: Option<&str>,
    ) {
        let Some(auth) = self.auth.as_mut() else { return };
        if let Some(nonce) = dpop_nonce {
            auth.handle_resource_nonce(nonce);
        }
        if let (true, Some(stamp)) = ((200..300).contains(&status), carried) {
            auth.accepted(stamp);
        }
    }

    /// Starts the authorizer's requests and hands its events on; when authorization failed,
    /// what waited for it fails.
    pub(super) fn drive_auth(&mut self, now: Instant) {
        let Some(auth) = self.auth.as_mut() else { return };
        let mut failed = None;
        while let Some(event) = auth.poll_event() {
            if let AuthEvent::Failed(error) = &event {
                failed = Some(error.clone());
            }
            self.auth_events.push_back(event);
        }
        let requests: Vec<AuthRequest> = std::iter::from_fn(|| auth.poll_request()).collect();
        for request in requests {
            let deadline = Some(deadline_after(now, self.config.connect_timeout));
            let headers = request.headers().map(|(n, v)| (Cow::Owned(n.to_owned()), v.to_owned())).collect();
            let role = Role::Auth;
            let AuthRequest { method, url, body, .. } = request;
            self.start_exchange(now, method, url, headers, body, role, deadline);
        }
        if let Some(error) = failed {
            self.fail_held(now, &error);
        }
    }

    /// Authorization failed: every request held fails with it; answers and notifications held
    /// are dropped.
    fn fail_held(&mut self, now: Instant, error: &AuthError) {
        for out in std::mem::take(&mut self.held) {
            match out.id().filter(|&id| self.awaits(id)) {
                Some(id) => self.fail(now, id, RequestError::Unauthorized(error.clone())),
                None if out.request.is_none() => {
                    tracing::warn!(%error, "a message to the server was dropped: authorization failed");
                }
                None => {}
            }
        }
    }

    /// The server refused exchange `stream` with `status` (401, 403): returns `true` when the
    /// authorizer took the matter (the exchange is over; its request waits or was failed).
    pub(super) fn on_challenge(
        &mut self,
        now: Instant,
        stream: StreamId,
        status: u16,
        www_authenticate: Option<&str>,
        dpop_nonce: Option<&str>,
    ) -> bool {
        let Some(s) = self.streams.get(&stream) else { return false };
        let takes = matches!(s.role, Role::Post { .. } | Role::Get { kind: GetKind::Standalone, .. });
        if !takes || !(status == 401 || status == 403) {
            return false;
        }
        let probe = matches!(&s.role, Role::Post { out, .. } if out.method() == Some("server/discover"));
        if status == 401 && probe {
            // A legacy server may refuse the `server/discover` probe with a bare 401 (a method
            // it does not know, behind a gateway): without a challenge, that is no reason to
            // authorize yet. `initialize` comes next, and a 401 to it is.
            let challenged = www_authenticate.is_some_and(|header| {
                BearerChallenge::parse(header).is_some()
                    || BearerChallenge::parse_scheme(header, "DPoP").is_some()
            });
            if self.conn.probe_401_falls_back(challenged) {
                return false;
            }
        }
        let verdict = match self.auth.as_mut() {
            Some(auth) => auth.challenge(now, status, www_authenticate, dpop_nonce, s.token),
            None if status == 401 => Verdict::Fail(AuthError::NotConfigured { status }),
            None => return false,
        };
        if verdict == Verdict::NotAuthorization {
            return false;
        }
        let Some(s) = self.streams.remove(&stream) else { return false };
        self.actions.push_back(HttpAction::Abort(stream));
        match s.role {
            Role::Post { mut out, .. } => match verdict {
                Verdict::Wait => {
                    out.refused = s.token;
                    self.hold_for_auth(now, out)
                }
                Verdict::Retry => {
                    out.refused = s.token;
                    self.resend(now, out)
                }
                Verdict::Fail(error) => match out.id().filter(|&id| self.awaits(id)) {
                    Some(id) => {
                        if let AuthError::InsufficientScope { scope, .. } = &error {
                            let until = deadline_after(now, SCOPE_REFUSAL_MEMORY);
                            self.scope_refusals.insert(operation(&out), (scope.clone(), until));
                        }
                        self.fail(now, id, RequestError::Unauthorized(error))
                    }
                    None => tracing::warn!(%error, "a message to the server was refused: unauthorized"),
                },
                Verdict::NotAuthorization => {}
            },
            Role::Get { .. } => {
                self.standalone = match verdict {
                    Verdict::Fail(_) => Standalone::Off,
                    _ => Standalone::Idle { refused: s.token },
                };
            }
            _ => {}
        }
        true
    }

    /// Holds a message until authorization is over. A request's deadline stops meanwhile: the
    /// user may take minutes in the browser, and the authorization has its own deadline.
    pub(super) fn hold_for_auth(&mut self, now: Instant, out: Outgoing) {
        if let Some(id) = out.id() {
            self.conn.handle_transport(now, TransportEvent::Held { id: RequestId::Number(id) });
        }
        self.held.push_back(out);
    }

    /// Sends a message again: one held (for authorization, a gate, a new session, the legacy
    /// endpoint), or one the server refused (401, 403) that is to go again now. A request's
    /// deadline starts again if authorization had stopped it; one no longer awaited is dropped.
    pub(super) fn resend(&mut self, now: Instant, out: Outgoing) {
        if out.id().is_some_and(|id| !self.awaits(id)) {
            return;
        }
        if let Some(id) = out.id() {
            self.conn.handle_transport(now, TransportEvent::Released { id: RequestId::Number(id) });
        }
        self.send(now, out);
    }

    /// The end of one of the authorizer's exchanges.
    pub(super) fn finish_auth(
        &mut self,
        now: Instant,
        status: Option<u16>,
        response: Option<&AuthResponse>,
        failure: Option<&str>,
    ) {
        let Some(auth) = self.auth.as_mut() else { return };
        match (status, failure) {
            (Some(status), None) => {
                let (headers, body) = response.map_or((&[][..], &[][..]), |r| (&r.headers[..], &r.body[..]));
                let headers = headers.iter().map(|(n, v)| (n.as_str(), v.as_slice()));
                auth.handle_response(now, status, headers, body)
            }
            (_, Some(why)) => auth.handle_failure(now, why),
            (None, None) => auth.handle_failure(now, "the exchange ended without a response"),
        }
    }

    /// Fails request `out` at once if its operation failed for want of scope within
    /// [`SCOPE_REFUSAL_MEMORY`]; returns whether it did.
    pub(super) fn refused_for_scope(&mut self, now: Instant, out: &Outgoing) -> bool {
        if self.scope_refusals.is_empty() {
            return false;
        }
        self.scope_refusals.retain(|_, (_, until)| *until > now);
        let operation = operation(out);
        let Some((scope, _)) = self.scope_refusals.get(&operation) else { return false };
        let Some(id) = out.id() else { return false };
        let error = AuthError::ScopeRefusedRecently { operation, scope: scope.clone() };
        tracing::debug!(%error, "not sent");
        self.fail(now, id, RequestError::Unauthorized(error));
        true
    }

    /// Forgets the operations that failed for want of scope (see [`SCOPE_REFUSAL_MEMORY`]):
    /// their next call is sent, and may step up again. For when the user was granted more
    /// (an administrator changed the policy) and the application knows it.
    pub fn forget_scope_refusals(&mut self) {
        self.scope_refusals.clear();
    }

    /// How much of an authorization response is kept.
    pub(super) fn auth_body_room(buf: &[u8]) -> usize {
        MAX_RESPONSE_BODY.saturating_sub(buf.len())
    }
}

/// What a request does, for remembering scope refusals per operation: its method, then the
/// tool or prompt name or resource URI from its params (parsed), if any.
fn operation(out: &Outgoing) -> String {
    let method = out.method().unwrap_or("");
    let named = out.request.as_ref().and_then(OutgoingRequest::name).map(str::to_owned).or_else(|| {
        let message: serde_json::Value = serde_json::from_slice(&out.body).ok()?;
        let params = message.get("params")?;
        params.get("name").or_else(|| params.get("uri"))?.as_str().map(str::to_owned)
    });
    match named {
        Some(name) => format!("{method} {name}"),
        None => method.to_owned(),
    }
}
