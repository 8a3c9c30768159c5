//! The session's life beyond single exchanges: a server that forgot the session (re-initialize,
//! then re-send), the 2024-11-05 HTTP+SSE fallback and its `endpoint`, and the close with
//! `DELETE`.

use std::borrow::Cow;
use std::time::Instant;

use super::*;

impl HttpSession {
    /// The server forgot the session (it answered `out` with `status`): start a new one and
    /// re-send `out` once. A request that was re-sent already fails instead, and no new
    /// session is started now: the next request starts it. (A server that forgets every session
    /// at once would otherwise be re-initialized in a loop, one `initialize` after another.)
    pub(super) fn session_expired(&mut self, now: Instant, out: Outgoing, status: u16) {
        let pending = out.id().filter(|&id| self.awaits(id));
        if out.retried {
            if let Some(id) = pending {
                self.fail(now, id, RequestError::Transport(TransportError::SessionExpired { status }));
            }
            if matches!(self.phase, Phase::Open) {
                tracing::warn!("the server forgot the new session at once: the next request re-initializes");
                self.forget_session();
                self.phase = Phase::Stale;
            }
            return;
        }
        if !matches!(self.phase, Phase::Reinitializing(_)) {
            tracing::info!("the server forgot the session: re-initializing");
            self.start_reinit(now);
        }
        if let (Some(_), Phase::Reinitializing(reinit)) = (pending, &mut self.phase) {
            reinit.retry.push(Outgoing { retried: true, ..out });
        }
    }

    /// Drops what belonged to the session the server forgot: its id and its standalone stream
    /// (opened again with the next session).
    fn forget_session(&mut self) {
        self.session_id = None;
        let standalone: Vec<StreamId> = self
            .streams
            .iter()
            .filter(|(_, s)| matches!(s.role, Role::Get { kind: GetKind::Standalone, .. }))
            .map(|(&id, _)| id)
            .collect();
        for id in standalone {
            self.streams.remove(&id);
            self.actions.push_back(HttpAction::Abort(id));
        }
        self.reconnects.retain(|r| !matches!(r.kind, GetKind::Standalone));
        self.standalone = Standalone::Idle { refused: None };
    }

    /// Starts a new session: the original `initialize` again, without a session id.
    pub(super) fn start_reinit(&mut self, now: Instant) {
        let Some((_, body)) = self.initialize.clone() else { return };
        self.forget_session();
        self.phase = Phase::Reinitializing(Reinit::default());
        let mut headers = self.post_headers();
        headers.retain(|(name, _)| !name.eq_ignore_ascii_case("mcp-protocol-version"));
        let url = self.config.url.clone();
        // The whole exchange gets the handshake's time: a server that takes the request and
        // never answers must not hold every request of the session forever.
        let deadline = Some(deadline_after(now, self.conn.config().handshake_timeout));
        self.start_exchange(now, HttpMethod::Post, url, headers, body, Role::Reinitialize, deadline);
    }

    pub(super) fn on_reinitialize_result(&mut self, now: Instant, message: &[u8]) {
        let outcome = match jsonrpc::decode_single(message) {
            Ok(Message::Response { result: Ok(raw), .. }) => {
                match serde_json::from_str::<InitializeResult>(raw.get()) {
                    Ok(init)
                        if Some(init.protocol_version.as_str())
                            == self.conn.protocol_version().map(|v| v.as_str()) =>
                    {
                        Ok(())
                    }
                    Ok(init) => Err(RequestError::InvalidResponse(format!(
                        "the server now speaks protocol version {:?}",
                        init.protocol_version
                    ))),
                    Err(e) => Err(RequestError::InvalidResponse(format!("invalid initialize result: {e}"))),
                }
            }
            Ok(Message::Response { result: Err(error), .. }) => Err(RequestError::Server(error)),
            _ => Err(RequestError::InvalidResponse("not a response to initialize".to_owned())),
        };
        if let Err(error) = outcome {
            self.phase = Phase::Open;
            let request = ConnectionRequest::Reinitialize;
            return self
                .conn
                .transport_closed(CloseReason::RequestFailed { request, error: Box::new(error) });
        }
        tracing::debug!(session = self.session_id.is_some(), "re-initialized");
        if let Phase::Reinitializing(reinit) = &mut self.phase {
            reinit.answered = true;
        }
        let headers = self.post_headers();
        let url = self.config.url.clone();
        let deadline = Some(deadline_after(now, self.config.connect_timeout));
        let body = crate::jsonrpc::INITIALIZED.to_vec();
        self.start_exchange(now, HttpMethod::Post, url, headers, body, Role::ReinitializedNotice, deadline);
    }

    /// The new session is complete: the requests it lost go first, then what was held meanwhile
    /// (for the new session or for a token), all the way every held message goes.
    pub(super) fn reinitialized(&mut self, now: Instant) {
        let Phase::Reinitializing(reinit) = std::mem::replace(&mut self.phase, Phase::Open) else {
            return;
        };
        for out in reinit.retry.into_iter().rev() {
            self.held.push_front(out);
        }
        self.sync(now);
    }

    /// Streamable HTTP was refused: try the 2024-11-05 HTTP+SSE transport.
    pub(super) fn start_legacy(&mut self, now: Instant, status: u16, initialize: Outgoing) {
        tracing::info!(status, "initialize refused over Streamable HTTP; trying the HTTP+SSE transport");
        self.mode = Mode::Legacy { refused_with: status, endpoint: None };
        self.held.push_front(initialize);
        let mut headers = self.base_headers(ACCEPT_SSE);
        headers.push((Cow::Borrowed("Accept"), ACCEPT_SSE.to_owned()));
        let url = self.config.url.clone();
        let deadline = Some(deadline_after(now, self.config.connect_timeout));
        self.start_exchange(now, HttpMethod::Get, url, headers, Vec::new(), Role::LegacyGet, deadline);
    }

    pub(super) fn on_endpoint(&mut self, now: Instant, reference: &str) {
        let Mode::Legacy { endpoint, .. } = &mut self.mode else { return };
        if endpoint.is_some() {
            return;
        }
        let resolved = url::resolve(&self.config.url, reference);
        let same_origin = resolved
            .as_deref()
            .and_then(url::origin)
            .is_some_and(|o| Some(o) == url::origin(&self.config.url));
        match resolved {
            Some(resolved) if same_origin => {
                tracing::debug!(endpoint = %resolved, "HTTP+SSE endpoint received");
                *endpoint = Some(resolved);
                // What waited for the endpoint goes now (unless something else holds it).
                self.release(now);
            }
            _ => self.conn.transport_error(format!(
                "the HTTP+SSE endpoint {reference:?} is not on the server's origin; refused"
            )),
        }
    }

    /// The connection closed: abort everything and end the session with `DELETE`.
    pub(super) fn begin_close(&mut self, now: Instant) {
        self.phase = Phase::Closing;
        for (id, _) in std::mem::take(&mut self.streams) {
            self.actions.push_back(HttpAction::Abort(id));
        }
        self.reconnects.clear();
        self.held.clear();
        self.one_way.clear();
        if let (Mode::Streamable, Some(_)) = (&self.mode, &self.session_id) {
            let headers = self.base_headers(ACCEPT_POST);
            let url = self.config.url.clone();
            let deadline = Some(deadline_after(now, self.config.close_timeout));
            self.start_exchange(now, HttpMethod::Delete, url, headers, Vec::new(), Role::Delete, deadline);
        }
    }
}
