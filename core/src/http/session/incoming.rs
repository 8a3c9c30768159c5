//! What the session receives: messages on a stream, and what the end of an exchange means for
//! its request (answered, refused, lost, to be resumed with `Last-Event-ID`).

use std::time::Instant;

use super::*;

/// A message as it came whole: an HTTP body, or an event's data (UTF-8 already).
pub(super) enum Whole {
    Bytes(Vec<u8>),
    Text(String),
}

impl Whole {
    fn bytes(&self) -> &[u8] {
        match self {
            Whole::Bytes(bytes) => bytes,
            Whole::Text(text) => text.as_bytes(),
        }
    }

    fn into_bytes(self) -> Vec<u8> {
        match self {
            Whole::Bytes(bytes) => bytes,
            Whole::Text(text) => text.into_bytes(),
        }
    }
}

impl HttpSession {
    pub(super) fn on_sse_item(&mut self, now: Instant, s: &mut Stream, item: Result<SseEvent, SseError>) {
        match item {
            Err(SseError::EventTooLarge { len_at_least, .. }) => {
                self.conn.handle_transport(now, TransportEvent::Oversized { len: len_at_least })
            }
            Ok(event) => {
                if event.event == "endpoint" {
                    if matches!(s.role, Role::LegacyGet) {
                        self.on_endpoint(now, event.data.trim());
                    }
                    return;
                }
                if event.event != "message" || event.data.trim().is_empty() {
                    // Priming events (an id and `retry`, no data) and other event types.
                    return;
                }
                self.deliver(now, s, Whole::Text(event.data));
            }
        }
    }

    /// A JSON-RPC message arrived on stream `s`, whole: its buffer goes to the connection,
    /// where a large result stays in it (no copy). Returns the buffer unless a result kept it.
    pub(super) fn deliver(&mut self, now: Instant, s: &mut Stream, message: Whole) -> Option<Vec<u8>> {
        let init_id = self.initialize.as_ref().map(|(id, _)| *id);
        if matches!(s.role, Role::Reinitialize)
            && init_id.is_some_and(|id| is_response_to(message.bytes(), id))
        {
            self.on_reinitialize_result(now, message.bytes());
            return Some(message.into_bytes());
        }
        let back = match message {
            Whole::Bytes(body) => self.conn.feed_owned_message(now, body),
            Whole::Text(data) => self.conn.feed_owned_text(now, data).map(String::into_bytes),
        };
        let connect_timeout = self.config.connect_timeout;
        let awaits = |id: i64| self.conn.awaits(&RequestId::Number(id));
        match &mut s.role {
            Role::Post { out, answered, .. } if !*answered && out.id().is_some_and(|id| !awaits(id)) => {
                *answered = true;
                // Read the rest so the connection can be reused, but not forever.
                s.deadline = Some(deadline_after(now, connect_timeout));
            }
            Role::Get { kind, attempts, .. } => {
                // A message is progress: the reconnection counter starts again.
                *attempts = 0;
                if let GetKind::Resume(out) = kind {
                    if out.id().is_some_and(|id| !awaits(id)) {
                        s.deadline = Some(deadline_after(now, connect_timeout));
                    }
                }
            }
            _ => {}
        }
        back
    }

    /// An exchange is over (removed from the table already): act on how it ended.
    pub(super) fn finish_stream(&mut self, now: Instant, mut s: Stream, end: End) {
        // A complete JSON body is the message.
        if let (Body::Json(buf), End::Complete) = (&mut s.body, &end) {
            let buf = std::mem::take(buf);
            if !buf.is_empty() {
                // Kept for the error message, should it not have been the response: the body
                // itself when it comes back (a small one always does), else its start (a
                // large result keeps the body).
                let large = buf.len() > EXCERPT_LIMIT;
                let head = if large { buf[..EXCERPT_LIMIT].to_vec() } else { Vec::new() };
                let back = self.deliver(now, &mut s, Whole::Bytes(buf));
                s.body = Body::Json(back.unwrap_or(head));
            }
        }
        if let Some(decoder) = s.decoder.as_mut() {
            decoder.finish(&mut |_| {});
        }
        match s.role {
            Role::Post { out, answered, initialize } => {
                self.finish_post(now, s.status, s.body, s.decoder, out, answered, initialize, end)
            }
            Role::Get { kind, attempts, .. } => {
                // Set when the GET opened.
                let decoder =
                    s.decoder.unwrap_or_else(|| SseDecoder::new(self.conn.config().max_message_size));
                self.finish_get(now, s.status, s.body, kind, attempts, decoder, end)
            }
            Role::Reinitialize => {
                let unanswered = matches!(&self.phase, Phase::Reinitializing(reinit) if !reinit.answered);
                if unanswered && !self.conn.is_closed() {
                    let error = Box::new(failure_error(s.status, &s.body, &end));
                    let request = ConnectionRequest::Reinitialize;
                    self.conn.transport_closed(CloseReason::RequestFailed { request, error });
                }
            }
            Role::ReinitializedNotice => self.reinitialized(now),
            Role::LegacyGet => {
                let Mode::Legacy { refused_with, endpoint } = &self.mode else { return };
                if endpoint.is_none() && !matches!(s.body, Body::Sse) {
                    let error = Box::new(failure_error(s.status, &s.body, &end));
                    let request = ConnectionRequest::LegacyInitialize { refused_with: *refused_with };
                    self.conn.transport_closed(CloseReason::RequestFailed { request, error });
                } else {
                    let why = describe_failure(s.status, &s.body, &end);
                    self.conn.transport_error(format!("the HTTP+SSE event stream ended: {why}"));
                }
            }
            Role::Delete => {}
            Role::Auth => {
                let response = match &s.body {
                    Body::Auth(response) => Some(&**response),
                    _ => None,
                };
                let failure = match &end {
                    End::Failed(why) => Some(why.to_string()),
                    End::Complete => None,
                };
                self.finish_auth(now, s.status, response, failure.as_deref());
            }
        }
    }

    #[allow(clippy::too_many_arguments)]
    pub(super) fn finish_post(
        &mut self,
        now: Instant,
        status: Option<u16>,
        body: Body,
        decoder: Option<SseDecoder>,
        out: Outgoing,
        answered: bool,
        initialize: bool,
        end: End,
    ) {
        let pending = out.id().filter(|&id| self.awaits(id));
        let Some(status) = status else {
            // No response at all: the connection failed or the headers never came.
            let End::Failed(why) = end else { return };
            match pending {
                Some(id) => self.fail(now, id, RequestError::Transport(why)),
                None => tracing::warn!(error = %why, "a message to the server was lost"),
            }
            return;
        };
        if !(200..300).contains(&status) {
            let Body::Error(buf) = body else { return };
            let streamable = matches!(self.mode, Mode::Streamable);
            let fallback =
                initialize && streamable && self.config.legacy_fallback && self.session_id.is_none();
            if fallback && [400, 404, 405].contains(&status) {
                return self.start_legacy(now, status, out);
            }
            if streamable && self.session_id.is_some() && session_gone(status, &buf) {
                return self.session_expired(now, out, status);
            }
            let modern = streamable && self.modern();
            if modern
                && pending.is_some()
                && !out.refreshed
                && out.method() == Some("tools/call")
                && header_mismatch(&buf)
            {
                return self.refresh_tools(now, Refresh { call: out, refusal: buf, pages: 1 }, None);
            }
            return self.refuse(now, out, status, &buf);
        }
        let Some(id) = pending else { return };
        if answered || matches!(self.mode, Mode::Legacy { .. }) {
            // Answered here, or (HTTP+SSE) the response comes on the event stream.
            return;
        }
        match (body, decoder) {
            (Body::Sse, Some(decoder)) if decoder.last_event_id().is_some() => {
                // Resumable: ask for the rest of the stream after the server's delay.
                let attempts = 1;
                self.schedule(now, GetKind::Resume(out), attempts, decoder);
            }
            (Body::Unexpected(content_type), _) => {
                let content_type = content_type_of(&content_type);
                let error = TransportError::UnexpectedContentType { status, content_type };
                self.fail(now, id, RequestError::Transport(error))
            }
            (body, _) => {
                let why = match (end, &body) {
                    // A whole JSON body that was not the response (not JSON, not JSON-RPC, or
                    // another id): say so, rather than blame the stream.
                    (End::Complete, Body::Json(buf)) => {
                        TransportError::NotTheResponse { status, excerpt: excerpt(buf) }
                    }
                    (End::Complete, _) => TransportError::StreamEnded,
                    (End::Failed(why), _) => TransportError::StreamBroke(Box::new(why)),
                };
                // A 2026-07-28 request is sent again by the connection; any other fails.
                let error = RequestError::Transport(why);
                self.conn
                    .handle_transport(now, TransportEvent::ResponseLost { id: RequestId::Number(id), error });
            }
        }
    }

    #[allow(clippy::too_many_arguments)]
    pub(super) fn finish_get(
        &mut self,
        now: Instant,
        status: Option<u16>,
        body: Body,
        kind: GetKind,
        attempts: u32,
        decoder: SseDecoder,
        end: End,
    ) {
        if let GetKind::Resume(out) = &kind {
            if !out.id().is_some_and(|id| self.awaits(id)) {
                return;
            }
        }
        let permanent = match status {
            Some(s) if (200..300).contains(&s) => !matches!(body, Body::Sse),
            Some(s) => s != 408 && s != 429 && s < 500,
            // A redirect that was refused would be refused again.
            None => matches!(
                end,
                End::Failed(TransportError::RedirectRefused { .. } | TransportError::TooManyRedirects { .. })
            ),
        };
        if status.is_some_and(|s| s == 404 || s == 400) && self.session_id.is_some() {
            if let (GetKind::Resume(_), Body::Error(buf)) = (&kind, &body) {
                if session_gone(status.unwrap_or(0), buf) {
                    let GetKind::Resume(out) = kind else { unreachable!() };
                    return self.session_expired(now, out, status.unwrap_or(404));
                }
            }
        }
        let why = describe_failure(status, &body, &end);
        if permanent {
            match kind {
                GetKind::Standalone => {
                    if status == Some(405) {
                        tracing::debug!("the server offers no stream for server-initiated messages (405)");
                    } else {
                        tracing::warn!(%why, "no stream for server-initiated messages");
                    }
                    self.standalone = Standalone::Off;
                }
                GetKind::Resume(out) => {
                    let error = match (status, &body, end) {
                        (Some(status), Body::Error(buf), _) => {
                            RequestError::HttpStatus { status, body: excerpt(buf), error: None }
                        }
                        (Some(status), Body::Unexpected(content_type), _) => {
                            let content_type = content_type_of(content_type);
                            let inner = TransportError::UnexpectedContentType { status, content_type };
                            RequestError::Transport(TransportError::ResumeFailed(Box::new(inner)))
                        }
                        (_, _, End::Failed(inner)) => {
                            RequestError::Transport(TransportError::ResumeFailed(Box::new(inner)))
                        }
                        (_, _, End::Complete) => RequestError::Transport(TransportError::ResumeFailed(
                            Box::new(TransportError::StreamEnded),
                        )),
                    };
                    if let Some(id) = out.id() {
                        self.fail(now, id, error);
                    }
                }
            }
            return;
        }
        let attempts = attempts + 1;
        if attempts > self.config.max_reconnects {
            let what =
                TransportError::TooManyReconnects { attempts: self.config.max_reconnects + 1, last: why };
            match kind {
                GetKind::Standalone => {
                    tracing::warn!(%what, "giving up on the stream for server-initiated messages");
                    self.standalone = Standalone::Off;
                }
                GetKind::Resume(out) => {
                    if let Some(id) = out.id() {
                        self.fail(now, id, RequestError::Transport(what));
                    }
                }
            }
            return;
        }
        self.schedule(now, kind, attempts, decoder);
    }

    /// Schedules re-opening a stream: after the server's `retry` delay if it gave one, else
    /// after the configured backoff.
    pub(super) fn schedule(&mut self, now: Instant, kind: GetKind, attempts: u32, decoder: SseDecoder) {
        if matches!(self.phase, Phase::Closing) {
            return;
        }
        // The server's `retry` is honoured up to the configured ceiling: a server asking for
        // hours would otherwise hold a resumption (and its request) that long.
        let delay =
            decoder.retry().map(|retry| retry.min(self.config.max_reconnect_delay)).unwrap_or_else(|| {
                let factor = 2u32.saturating_pow(attempts.saturating_sub(1).min(16));
                self.config.reconnect_delay.saturating_mul(factor).min(self.config.max_reconnect_delay)
            });
        tracing::debug!(?delay, attempts, "event stream to be re-opened");
        if matches!(kind, GetKind::Standalone) {
            self.standalone = Standalone::Active;
        }
        self.reconnects.push(Reconnect { at: deadline_after(now, delay), kind, attempts, decoder });
    }
}
