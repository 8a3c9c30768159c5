//! What the session sends: the connection's transmits turned into `POST`s (held while the
//! session cannot take them, paced when they are one-way), the headers every request carries,
//! the event-stream `GET`s.

use std::borrow::Cow;
use std::time::Instant;

use super::*;

impl HttpSession {
    /// Picks up what the connection did since the last call: new transmits, requests that
    /// finished elsewhere (timed out, cancelled), the handshake's end, the connection's close.
    pub(super) fn sync(&mut self, now: Instant) {
        self.drive_auth(now);
        if self.conn.is_closed() {
            if !matches!(self.phase, Phase::Closing) {
                self.begin_close(now);
            }
            while self.conn.poll_transmit().is_some() {}
            return self.pump(now);
        }
        let modern = self.modern();
        // A send may close the connection (too many answers waiting): nothing more goes then.
        while !self.conn.is_closed() {
            let Some(transmit) = self.conn.poll_transmit() else { break };
            let (body, kind) = transmit.into_parts();
            let request = match kind {
                TransmitKind::Request(request) => request,
                // 2026-07-28 over HTTP: a request is cancelled by closing its stream (done
                // below, once the connection no longer awaits it), not by a notification.
                TransmitKind::Cancellation { .. } if modern => continue,
                // Only requests are posted on 2026-07-28 (the commands refuse notifications).
                other if modern => {
                    tracing::warn!(?other, "a message that 2026-07-28 over HTTP cannot carry was dropped");
                    continue;
                }
                _ => {
                    let out =
                        Outgoing { body, request: None, retried: false, refreshed: false, refused: None };
                    self.send(now, out);
                    continue;
                }
            };
            let initialize = request.method() == "initialize";
            if let (true, Some(id)) = (initialize, wire_number(&request.id())) {
                self.initialize = Some((id, body.clone()));
            }
            let call = request.call_id();
            if modern && request.method() == "tools/list" && !self.refreshes.contains_key(&call) {
                self.tool_lists.insert(call);
            }
            let out =
                Outgoing { body, request: Some(request), retried: false, refreshed: false, refused: None };
            if self.refused_for_scope(now, &out) {
                continue;
            }
            self.send(now, out);
        }
        if self.conn.is_closed() {
            return self.sync(now);
        }
        // Exchanges whose request finished without them (timeout, cancel) are no longer needed.
        let orphaned: Vec<StreamId> = self
            .streams
            .iter()
            .filter(|(_, s)| match &s.role {
                Role::Post { out, answered: false, .. } | Role::Get { kind: GetKind::Resume(out), .. } => {
                    out.id().is_some_and(|id| !self.awaits(id))
                }
                _ => false,
            })
            .map(|(&id, _)| id)
            .collect();
        for id in orphaned {
            self.streams.remove(&id);
            self.actions.push_back(HttpAction::Abort(id));
        }
        let conn = &self.conn;
        self.reconnects.retain(|r| match &r.kind {
            GetKind::Resume(out) => out.id().is_some_and(|id| conn.awaits(&RequestId::Number(id))),
            GetKind::Standalone => true,
        });
        if matches!(self.standalone, Standalone::Opening { stream, .. } if !self.streams.contains_key(&stream))
        {
            self.standalone = Standalone::Active;
        }
        self.release(now);
        // Answers and notifications paced behind the ones in flight, when nothing holds them.
        while !self.one_way.is_empty()
            && self.one_way_in_flight() < MAX_ONE_WAY_POSTS
            && self.hold_reason(now, false).is_none()
        {
            if let Some(out) = self.one_way.pop() {
                self.post(now, out);
            }
        }
        if matches!(self.standalone, Standalone::Idle { .. })
            && !modern
            && self.config.standalone_stream
            && matches!((&self.mode, &self.phase), (Mode::Streamable, Phase::Open))
            && self.conn.status() == Status::Ready
            && self.auth.as_ref().is_none_or(|a| !a.is_busy())
        {
            let decoder = SseDecoder::new(self.conn.config().max_message_size);
            self.open_get(now, GetKind::Standalone, 0, decoder);
        }
        self.drive_auth(now);
        self.pump(now);
    }

    /// Moves the connection's events into the session's queue, taking the answers to the
    /// session's own requests out and filtering the application's 2026-07-28 tool lists.
    pub(super) fn pump(&mut self, now: Instant) {
        self.pump_refused(now, None);
    }

    /// [`pump`](Self::pump), while `refused` is being refused with an HTTP error status.
    pub(super) fn pump_refused(&mut self, now: Instant, refused: Option<&Refused>) {
        while let Some(event) = self.conn.poll_event() {
            if let Some(event) = self.screen(event, Some(now), refused) {
                self.events.push_back(event);
            }
        }
    }

    /// Why a message (a request, or an answer or notification) cannot go out now, if it cannot.
    /// Asking may start a refresh of a token about to expire (then it waits for that).
    pub(super) fn hold_reason(&mut self, now: Instant, request: bool) -> Option<Hold> {
        if !self.auth_ready(now) {
            return Some(Hold::Authorization);
        }
        match (&self.mode, &self.phase) {
            (Mode::Streamable, Phase::Reinitializing(_) | Phase::Stale) => Some(Hold::Session),
            (Mode::Legacy { endpoint: None, .. }, _) => Some(Hold::Endpoint),
            _ if request && matches!(self.standalone, Standalone::Opening { .. }) => Some(Hold::Gate),
            _ => None,
        }
    }

    /// Sends a message: now, or once what holds it is over ([`release`](Self::release)). Every
    /// message goes this way: new ones, and those sent again.
    pub(super) fn send(&mut self, now: Instant, out: Outgoing) {
        match self.hold_reason(now, out.request.is_some()) {
            None => self.post(now, out),
            Some(Hold::Authorization) => self.hold_for_auth(now, out),
            Some(Hold::Session) => {
                if out.request.is_some() && matches!(self.phase, Phase::Stale) {
                    // The server forgot the session (see `session_expired`): a request starts
                    // a new one, and everything waits for it.
                    tracing::info!("re-initializing the session the server forgot");
                    self.start_reinit(now);
                }
                self.held.push_back(out);
            }
            Some(Hold::Endpoint | Hold::Gate) => self.held.push_back(out),
        }
    }

    /// The one way out of `held`: once nothing holds requests back, every message held goes
    /// again the way any message goes ([`resend`](Self::resend): a request whose deadline was
    /// suspended for authorization gets it back).
    pub(super) fn release(&mut self, now: Instant) {
        if self.held.is_empty() || self.hold_reason(now, true).is_some() {
            return;
        }
        for out in std::mem::take(&mut self.held) {
            self.resend(now, out);
        }
    }

    /// Starts an exchange: registers its stream and asks the driver to send the request. A
    /// request to the MCP server gets its credentials here, made for it alone (a DPoP proof
    /// binds the method and URL, and each try needs a fresh one).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn start_exchange(
        &mut self,
        now: Instant,
        method: HttpMethod,
        url: String,
        headers: Vec<(Cow<'static, str>, String)>,
        body: Vec<u8>,
        role: Role,
        deadline: Option<Instant>,
    ) -> StreamId {
        // What a redirect would send again (the authorizer's requests are its own business).
        let sent = (self.config.max_redirects > 0 && !matches!(role, Role::Auth)).then(|| {
            Box::new(Sent { method, url: url.clone(), headers: headers.clone(), hops: 0, foreign: false })
        });
        self.issue(now, url, headers, body, role, deadline, sent, method)
    }

    /// Registers an exchange and asks the driver to send it; `sent` is what a redirect would
    /// send again. A request to the MCP server's origin gets its credentials here.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn issue(
        &mut self,
        now: Instant,
        url: String,
        mut headers: Vec<(Cow<'static, str>, String)>,
        body: Vec<u8>,
        role: Role,
        deadline: Option<Instant>,
        sent: Option<Box<Sent>>,
        method: HttpMethod,
    ) -> StreamId {
        let foreign = sent.as_ref().is_some_and(|sent| sent.foreign);
        let refused = match &role {
            Role::Post { out, .. } => out.refused,
            Role::Get { refused, .. } => *refused,
            _ => None,
        };
        let token = if matches!(role, Role::Auth) || foreign {
            None
        } else {
            self.authorize_exchange(now, method, &url, &mut headers, refused)
        };
        let stream = self.new_stream(role, deadline, token);
        if let Some(s) = self.streams.get_mut(&stream) {
            s.sent = sent;
        }
        self.actions.push_back(HttpAction::Send(HttpRequest { stream, method, url, headers, body }));
        stream
    }

    /// The headers of a `POST` carrying JSON.
    pub(super) fn post_headers(&self) -> Vec<(Cow<'static, str>, String)> {
        let mut headers = self.base_headers(ACCEPT_POST);
        headers.push((Cow::Borrowed("Content-Type"), "application/json".to_owned()));
        headers
    }

    pub(super) fn new_stream(
        &mut self,
        role: Role,
        deadline: Option<Instant>,
        token: Option<Stamp>,
    ) -> StreamId {
        let id = StreamId(self.next_stream);
        self.next_stream += 1;
        let stream = Stream {
            role,
            status: None,
            body: Body::AwaitingHead,
            deadline,
            decoder: None,
            token,
            sent: None,
        };
        self.streams.insert(id, stream);
        id
    }

    /// The headers every request carries: the custom ones, then the session's.
    pub(super) fn base_headers(&self, accept: &'static str) -> Vec<(Cow<'static, str>, String)> {
        let mut headers = Vec::with_capacity(self.config.headers.len() + 4);
        headers.extend(self.config.headers.iter().map(|(n, v)| (Cow::Owned(n.clone()), v.clone())));
        if matches!(self.mode, Mode::Streamable) {
            headers.push((Cow::Borrowed("Accept"), accept.to_owned()));
            if let Some(id) = &self.session_id {
                headers.push((Cow::Borrowed("Mcp-Session-Id"), id.clone()));
            }
            if let Some(v) = self.conn.wire_version().filter(|&v| v >= ProtocolVersion::V2025_06_18) {
                headers.push((Cow::Borrowed("MCP-Protocol-Version"), v.as_str().to_owned()));
            }
        }
        headers
    }

    /// `POST`s carrying no request, in flight.
    pub(super) fn one_way_in_flight(&self) -> usize {
        let one_way = |s: &&Stream| matches!(&s.role, Role::Post { out, .. } if out.request.is_none());
        self.streams.values().filter(one_way).count()
    }

    /// Posts a message that nothing holds (see [`send`](Self::send)); answers and
    /// notifications past [`MAX_ONE_WAY_POSTS`] in flight wait their turn in `one_way`.
    pub(super) fn post(&mut self, now: Instant, out: Outgoing) {
        let initialize = out.method() == Some("initialize");
        if out.request.is_none() && self.one_way_in_flight() >= MAX_ONE_WAY_POSTS {
            // Sent by `sync` once one of those in flight is done.
            let limit = self.config.max_queued_answers;
            if let Err((_, unwritten)) = self.one_way.push(out, limit) {
                // The server finishes none of the POSTs and keeps asking: the connection
                // closes (and the session with it, at the next `sync`) rather than hold more.
                tracing::warn!(unwritten, limit, "the server takes none of the client's answers; closing");
                self.one_way.clear();
                let event = TransportEvent::ServerNotReading { unwritten, limit };
                self.conn.handle_transport(now, event);
            }
            return;
        }
        let url = match &self.mode {
            Mode::Streamable => self.config.url.clone(),
            Mode::Legacy { endpoint: Some(endpoint), .. } => endpoint.clone(),
            // Held until the endpoint came (see `hold_reason`).
            Mode::Legacy { endpoint: None, .. } => return self.held.push_back(out),
        };
        let mut headers = self.post_headers();
        let mut listens = false;
        if let (true, Some(request)) = (self.modern(), &out.request) {
            // 2026-07-28: the method, the name it acts on and annotated tool arguments in
            // headers, for routing; the connection said what they are.
            let method = request.method();
            if let Some(name) = request.name() {
                if method == "tools/call" {
                    if let Some(why) = self.tool_headers.rejection(name) {
                        let error =
                            RequestError::ToolRejected { tool: name.to_owned(), reason: why.to_owned() };
                        let event = TransportEvent::RequestFailed { id: request.id(), error };
                        return self.conn.handle_transport(now, event);
                    }
                    let params = self.tool_headers.headers(name, request.tool_arguments());
                    headers.extend(params.into_iter().map(|(n, v)| (Cow::Owned(n), v)));
                }
                headers.push((Cow::Borrowed("Mcp-Name"), header_value(name)));
            }
            headers.push((Cow::Borrowed("Mcp-Method"), header_value(method)));
            listens = method == "subscriptions/listen";
        }
        // A request's own deadline bounds the wait for its response; everything else gets the
        // connect timeout, and so does the head of a listen stream, which has no deadline.
        let deadline =
            (out.request.is_none() || listens).then(|| deadline_after(now, self.config.connect_timeout));
        let mut out = out;
        // A request may need re-sending (after a session expiry), and with an authorizer any
        // message may (refused with 401, it waits for the token), and so may any message
        // redirected with 307 or 308; the rest is moved.
        let keep = out.request.is_some() || self.auth.is_some() || self.config.max_redirects > 0;
        let body = if keep { out.body.clone() } else { std::mem::take(&mut out.body) };
        let role = Role::Post { out, answered: false, initialize };
        self.start_exchange(now, HttpMethod::Post, url, headers, body, role, deadline);
    }

    /// A request was refused with an error status: fail it with the status, and with the
    /// server's JSON-RPC error when the body is one.
    pub(super) fn refuse(&mut self, now: Instant, out: Outgoing, status: u16, buf: &[u8]) {
        let Some(id) = out.id().filter(|&id| self.awaits(id)) else {
            tracing::warn!(status, "the server refused a notification or an answer");
            return;
        };
        if let (true, Some(request)) = (is_response_to(buf, id), &out.request) {
            // The connection acts on the error as on any (a version switch on -32022, the
            // handshake's refusal); the event it makes for the application gets the status
            // (see `screen`), which the body alone would lose.
            let refused = Refused { call: request.call_id(), status, body: excerpt(buf) };
            self.conn.feed_message(now, buf);
            self.pump_refused(now, Some(&refused));
        }
        if self.awaits(id) {
            let error =
                RequestError::HttpStatus { status, body: excerpt(buf), error: unattributed_error(buf) };
            self.conn
                .handle_transport(now, TransportEvent::RequestFailed { id: RequestId::Number(id), error });
        }
    }

    pub(super) fn open_get(&mut self, now: Instant, kind: GetKind, attempts: u32, decoder: SseDecoder) {
        if matches!(self.phase, Phase::Closing) || !matches!(self.mode, Mode::Streamable) {
            return;
        }
        let mut refused = None;
        if matches!(kind, GetKind::Standalone) {
            if matches!(self.phase, Phase::Reinitializing(_)) {
                // Re-opened with the new session.
                self.standalone = Standalone::Idle { refused: None };
                return;
            }
            if let Standalone::Idle { refused: stamp } = self.standalone {
                refused = stamp;
            }
            self.standalone = Standalone::Active;
        }
        let mut headers = self.base_headers(ACCEPT_SSE);
        if let Some(last) = decoder.last_event_id() {
            headers.push((Cow::Borrowed("Last-Event-ID"), last.to_owned()));
        }
        let deadline =
            matches!(kind, GetKind::Standalone).then(|| deadline_after(now, self.config.connect_timeout));
        let url = self.config.url.clone();
        let fresh = matches!(kind, GetKind::Standalone) && attempts == 0;
        let role = Role::Get { kind, attempts, refused };
        let stream = self.start_exchange(now, HttpMethod::Get, url, headers, Vec::new(), role, deadline);
        if let Some(s) = self.streams.get_mut(&stream) {
            s.decoder = Some(decoder);
        }
        if fresh {
            let until = deadline_after(now, GATE_LIMIT.min(self.config.connect_timeout));
            self.standalone = Standalone::Opening { stream, until };
        }
        tracing::debug!(%stream, attempts, "opening an event stream");
    }
}

/// The JSON-RPC error in the body of an error status that names no request (`"id": null`: the
/// server could not read the request, or would not say): the exchange carried one request, so
/// it is that request's error. Decided on the parsed body.
fn unattributed_error(buf: &[u8]) -> Option<jsonrpc::ErrorObject> {
    let serde_json::Value::Object(message) = serde_json::from_slice(buf).ok()? else { return None };
    let unattributed = matches!(message.get("id"), None | Some(serde_json::Value::Null));
    if !unattributed || message.contains_key("method") || message.contains_key("result") {
        return None;
    }
    serde_json::from_value(message.get("error")?.clone()).ok()
}
