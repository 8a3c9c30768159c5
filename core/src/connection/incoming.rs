//! What arrives from the server, dispatched: frames into JSON-RPC messages; responses to the
//! pending table (and on to the handshake, input rounds or listen stream they belong to);
//! notifications (progress, cancellations, the listen stream's own) and server requests
//! (`ping` answered here, undeclared capabilities refused) into events.

use std::time::Instant;

use super::handshake::ProbeAnswer;
use super::meta::{decode_params, empty_object};
use super::pending::{CallId, PendingKind, WireId};
use super::{ClientConnection, ServerRequestState};
use crate::RequestId;
use crate::capability;
use crate::event::{CloseReason, Event, ProtocolViolation, RequestError, ServerNotification, ServerRequest};
use crate::framing::Frame;
use crate::json_scan::JsonText;
use crate::jsonrpc::{self, ErrorObject, Head, InvalidMessage, Message};
use crate::schema::{self, CancelledNotificationParams};

/// Messages up to this size are decoded as if lent: their results are copied out (see
/// `raw_result.rs`, which batches results up to the same size).
const OWNED_MIN: usize = 4 * 1024;

impl ClientConnection {
    /// A transport dropped a message of at least `len` bytes for its size, unread.
    pub(super) fn on_frame_oversized(&mut self, len: usize) {
        self.oversized(len, None);
    }

    /// Reports a message dropped for its size, the response to `id` if that could be read.
    fn oversized(&mut self, len: usize, id: Option<RequestId>) {
        self.stats.oversized_messages += 1;
        let limit = self.config.max_message_size;
        self.discarded(ProtocolViolation::Oversized { len, limit, id: id.map(ProtocolViolation::shown_id) });
    }

    /// Reports a message discarded as invalid.
    pub(super) fn invalid(&mut self, error: InvalidMessage) {
        self.discarded(ProtocolViolation::Invalid { error, excerpt: None });
    }

    /// Counts and reports a message that was discarded (or failed the request it answered).
    fn discarded(&mut self, violation: ProtocolViolation) {
        tracing::debug!(%violation, "invalid message discarded");
        self.stats.invalid_messages += 1;
        if matches!(violation, ProtocolViolation::Invalid { error: InvalidMessage::Json(_), .. }) {
            self.stats.parse_errors += 1;
        }
        self.events.push_back(Event::ProtocolViolation(violation));
    }

    pub(super) fn on_frame(&mut self, now: Instant, frame: Frame<'_>) {
        self.clock = self.clock.max(now);
        if self.is_closed() {
            return;
        }
        match frame {
            Frame::TooLong { head } => {
                // The request this answers fails now: the rest of it is not worth waiting for.
                if let Head::Response(Some(id)) = jsonrpc::scan_head(head) {
                    self.fail_answer(now, &id, self.too_large());
                }
            }
            Frame::Oversized { len, head, tail } => match jsonrpc::scan_head(head) {
                // Its request failed when it went past the limit.
                Head::Response(Some(id)) => self.oversized(len, Some(id)),
                Head::Response(None) => {
                    let id = jsonrpc::id_at_end(tail);
                    self.oversized(len, id.clone());
                    if let Some(id) = &id {
                        self.fail_answer(now, id, self.too_large());
                    }
                }
                Head::Other => self.oversized(len, None),
            },
            Frame::Message(bytes) => match std::str::from_utf8(bytes) {
                Ok(text) => self.on_message(now, text),
                Err(e) => {
                    self.last_received = now;
                    self.stats.messages_received += 1;
                    let error = InvalidMessage::Json(format!("not UTF-8: {e}"));
                    self.discarded(ProtocolViolation::invalid_in(error, bytes));
                }
            },
        }
    }

    /// A message that came whole in a buffer the transport gave away (a line read in several
    /// pieces, an HTTP body, an event's data): decoded as [`on_frame`](Self::on_frame) does,
    /// and a large result in it is handed out in that buffer rather than copied. Returns the
    /// buffer unless a result keeps it.
    pub(super) fn on_owned(&mut self, now: Instant, message: Vec<u8>) -> Option<Vec<u8>> {
        let text = match String::from_utf8(message) {
            Ok(text) => text,
            Err(e) => {
                let bytes = e.into_bytes();
                self.on_frame(now, Frame::Message(&bytes));
                return Some(bytes);
            }
        };
        self.on_owned_text(now, text).map(String::into_bytes)
    }

    /// [`on_owned`](Self::on_owned) for a message known to be UTF-8.
    pub(super) fn on_owned_text(&mut self, now: Instant, text: String) -> Option<String> {
        if text.len() <= OWNED_MIN || self.is_closed() {
            // Copying a small result out costs less than sharing the buffer would.
            self.on_frame(now, Frame::Message(text.as_bytes()));
            return Some(text);
        }
        // Shared with the large results in it (see `raw_result.rs`).
        let text = self.results.decoding(text);
        self.clock = self.clock.max(now);
        self.on_message(now, &text);
        drop(text);
        self.results.done()
    }

    /// One message, UTF-8 checked, decoded and dispatched.
    fn on_message(&mut self, now: Instant, text: &str) {
        self.last_received = now;
        tracing::trace!(message = text, "recv");
        jsonrpc::decode_text(text, &mut |message| {
            if self.is_closed() {
                return;
            }
            self.stats.messages_received += 1;
            match message {
                Ok(Message::Response { id, result }) => self.on_response(now, id, result),
                Ok(Message::InvalidResponse { id, why }) => {
                    let shown = ProtocolViolation::shown_id(id.clone());
                    self.discarded(ProtocolViolation::InvalidResponse { id: shown, detail: why });
                    self.fail_answer(now, &id, RequestError::InvalidResponse(why.to_owned()));
                }
                Ok(Message::Notification { method, params }) => self.on_notification(now, &method, params),
                Ok(Message::Request { id, method, params }) => self.on_request(id, &method, params),
                // An error without an id while the probe is the only request out: the
                // server could not read the probe, and says so now.
                Err(InvalidMessage::PeerError(error)) if self.probe_alone() => {
                    let answer = ProbeAnswer::Error(error.clone());
                    self.discarded(ProtocolViolation::invalid_in(
                        InvalidMessage::PeerError(error),
                        text.as_bytes(),
                    ));
                    // Answered: the probe leaves the table (its deadline with it).
                    self.take_probe();
                    self.on_probe_answer(now, answer);
                }
                Err(error) => self.discarded(ProtocolViolation::invalid_in(error, text.as_bytes())),
            }
        });
    }

    fn too_large(&self) -> RequestError {
        RequestError::MessageTooLarge { limit: self.config.max_message_size }
    }

    /// The answer to our request `id` arrived but cannot be used (`error` says why): the
    /// request fails now rather than at its deadline, since no better answer will come.
    fn fail_answer(&mut self, now: Instant, id: &RequestId, error: RequestError) {
        let RequestId::Number(wire) = id else { return };
        let Some((call, pending)) = WireId::of(*wire).and_then(|w| self.pending.take_by_wire(w)) else {
            return;
        };
        tracing::debug!(id = wire, %error, "unusable answer");
        match pending.kind {
            PendingKind::User | PendingKind::Transport => self.finish(call, pending, Err(error)),
            // Any answer shows the server alive.
            PendingKind::KeepAlive => self.keep_alive_ping = None,
            PendingKind::Initialize => self.shut(CloseReason::InvalidInitializeResult(error.to_string())),
            PendingKind::Discover => self.on_probe_answer(now, ProbeAnswer::Unusable(error)),
            PendingKind::Listen => self.on_listen_answer(now, call, Err(error)),
            PendingKind::TaskErrand => self.errand_failed(now, call, error),
        }
    }

    pub(super) fn on_response(
        &mut self,
        now: Instant,
        id: RequestId,
        result: Result<JsonText<'_>, ErrorObject>,
    ) {
        let wire = match id {
            RequestId::Number(n) => n,
            RequestId::String(_) => {
                // The client only issues numbers.
                self.stats.unknown_responses += 1;
                let id = ProtocolViolation::shown_id(id);
                self.events.push_back(Event::ProtocolViolation(ProtocolViolation::UnknownResponse { id }));
                return;
            }
        };
        let Some((id, pending)) = WireId::of(wire).and_then(|w| self.pending.take_by_wire(w)) else {
            tracing::debug!(id = wire, "response to no pending request ignored");
            let id = RequestId::Number(wire);
            let violation = if self.pending.issued(wire) {
                self.stats.late_responses += 1;
                ProtocolViolation::LateResponse { id }
            } else {
                self.stats.unknown_responses += 1;
                ProtocolViolation::UnknownResponse { id }
            };
            self.events.push_back(Event::ProtocolViolation(violation));
            return;
        };
        match pending.kind {
            PendingKind::User | PendingKind::Transport => {
                // A 2026-07-28 request may go on: more input wanted, another version to use.
                let Some(pending) = self.before_answer(now, id, pending, &result) else { return };
                let result = result.map(JsonText::get).map_err(RequestError::Server);
                self.finish(id, pending, result);
            }
            PendingKind::KeepAlive => self.keep_alive_ping = None,
            PendingKind::Initialize => self.on_initialize_result(result),
            PendingKind::Discover => self.on_discover_result(now, result),
            PendingKind::Listen => self.on_listen_answer(now, id, result.map_err(RequestError::Server)),
            PendingKind::TaskErrand => self.on_errand_answer(now, id, result.map_err(RequestError::Server)),
        }
    }

    pub(super) fn on_notification(&mut self, now: Instant, method: &str, params: Option<JsonText<'_>>) {
        use ServerNotification as N;
        if self.session().is_some_and(|s| s.version.is_modern())
            && !self.modern_notification(now, method, params)
        {
            return;
        }
        let notification = match method {
            "notifications/progress" => match decode_params(method, params) {
                Ok(p) => return self.on_progress(now, p),
                Err(e) => return self.invalid(e),
            },
            "notifications/cancelled" => match decode_params::<CancelledNotificationParams>(method, params) {
                Ok(p) => {
                    let open = p.request_id.as_ref().filter(|id| self.server_requests.contains_key(id));
                    match open.cloned() {
                        Some(id) => {
                            self.server_requests.insert(id.clone(), ServerRequestState::CancelledByServer);
                            self.events.push_back(Event::ServerRequestCancelled { id, reason: p.reason });
                            return;
                        }
                        None => N::Cancelled(p),
                    }
                }
                Err(e) => return self.invalid(e),
            },
            "notifications/message" => match decode_params(method, params) {
                Ok(p) => N::LoggingMessage(p),
                Err(e) => return self.invalid(e),
            },
            "notifications/resources/updated" => match decode_params(method, params) {
                Ok(p) => N::ResourceUpdated(p),
                Err(e) => return self.invalid(e),
            },
            "notifications/elicitation/complete" => match decode_params(method, params) {
                Ok(p) => N::ElicitationComplete(p),
                Err(e) => return self.invalid(e),
            },
            "notifications/tasks" | "notifications/tasks/status"
                if self.on_task_notification(now, params) =>
            {
                return;
            }
            "notifications/tools/list_changed" => N::ToolListChanged,
            "notifications/resources/list_changed" => N::ResourceListChanged,
            "notifications/prompts/list_changed" => N::PromptListChanged,
            _ => N::Other { method: method.to_owned(), params: params.map(JsonText::to_raw_value) },
        };
        self.events.push_back(Event::Notification(notification));
    }

    pub(super) fn on_progress(&mut self, now: Instant, params: schema::ProgressNotificationParams) {
        // The engine's progress token for a request is the request's own id.
        let id = match params.progress_token {
            crate::ProgressToken::Number(n) => Some(CallId(n)),
            crate::ProgressToken::String(_) => None,
        };
        match id.filter(|&id| self.pending.get(id).is_some_and(|p| p.kind == PendingKind::User)) {
            Some(id) => {
                self.pending.touch(id, now);
                self.events.push_back(Event::Progress { id: RequestId::Number(id.0), params });
            }
            None => self.events.push_back(Event::Notification(ServerNotification::Progress(params))),
        }
    }

    pub(super) fn on_request(&mut self, id: RequestId, method: &str, params: Option<JsonText<'_>>) {
        if self.id_in_use(&id) {
            return self.invalid(InvalidMessage::Envelope("the server reused the id of an open request"));
        }
        if method == "ping" {
            return self.queue_response(&id, Ok(empty_object()));
        }
        if self.on_hosted_request(&id, method, params) {
            return;
        }
        if !capability::client_declared(method, &self.config.capabilities) {
            self.queue_response(&id, Err(&ErrorObject::method_not_found(method)));
            if matches!(method, "roots/list" | "sampling/createMessage" | "elicitation/create") {
                // A request the application could have served, had it declared the capability.
                self.stats.server_requests_undeclared += 1;
                self.events.push_back(Event::UndeclaredServerRequest { id, method: method.to_owned() });
            }
            return;
        }
        match server_request(method, params) {
            Some(Ok(_)) if self.open_asks() >= self.config.max_open_server_requests => {
                self.refuse_over_budget(id, method)
            }
            Some(Ok(request)) => {
                self.server_requests.insert(id.clone(), ServerRequestState::Open);
                self.events.push_back(Event::Request { id, request });
            }
            Some(Err(error)) => {
                let detail = error.to_string();
                self.invalid(error);
                self.queue_response(&id, Err(&ErrorObject::invalid_params(detail)));
            }
            None => self.queue_response(&id, Err(&ErrorObject::method_not_found(method))),
        }
    }
}

impl ClientConnection {
    /// Refuses server request `id` at once: the server has as much open with the application
    /// as the budget holds (see
    /// [`ClientConfig::max_open_server_requests`](crate::ClientConfig::max_open_server_requests)
    /// and [`open_asks`](Self::open_asks)). Answered with `-32603` and `data.limit`, counted and
    /// reported.
    pub(super) fn refuse_over_budget(&mut self, id: RequestId, method: &str) {
        let limit = self.config.max_open_server_requests;
        let mut error = ErrorObject::internal(format_args!(
            "the client has {limit} requests of this server open already, its limit"
        ));
        error.data = Some(serde_json::json!({ "limit": limit }));
        self.queue_response(&id, Err(&error));
        self.stats.server_requests_refused += 1;
        self.events.push_back(Event::ServerRequestRefused { id, method: method.to_owned(), limit });
    }
}

/// Decodes a server→client request the client can serve (`None`: not one of them).
pub(super) fn server_request(
    method: &str,
    params: Option<JsonText<'_>>,
) -> Option<Result<ServerRequest, InvalidMessage>> {
    Some(match method {
        "roots/list" => Ok(ServerRequest::ListRoots),
        "sampling/createMessage" => {
            decode_params(method, params).map(|p| ServerRequest::CreateMessage(Box::new(p)))
        }
        "elicitation/create" => decode_params(method, params).map(|p| ServerRequest::Elicit(Box::new(p))),
        _ => return None,
    })
}
