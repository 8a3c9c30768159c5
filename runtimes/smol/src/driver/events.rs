//! What the driver does with the engine's events: sorted under the lock into a [`Batch`],
//! delivered outside it (progress callbacks, notifications, responses), and the server's
//! requests answered by the [`ClientHandler`] as [`Answers`].

use std::task::{Context, Poll, Waker};
use std::time::Instant;

use mcp_sansio::schema::ProgressNotificationParams;
use mcp_sansio::{
    ErrorObject, Event, ProtocolViolation, RequestError, RequestId, ServerNotification, ServerRequest,
};
use serde::Serialize;
use serde_json::value::RawValue;

use super::BoxFuture;
use crate::handler::{ClientHandler, HandlerFuture};
use crate::notifications::ListKind;
use crate::shared::{ProgressFn, Shared, State};

/// One round's events, sorted by where they go. The buffers are reused every round, so the
/// hot path does not allocate.
#[derive(Default)]
pub(super) struct Batch {
    events: Vec<Event>,
    progress: Vec<(ProgressFn, ProgressNotificationParams)>,
    notifications: Vec<ServerNotification>,
    violations: Vec<ProtocolViolation>,
    responses: Vec<(RequestId, Result<mcp_sansio::RawResult, RequestError>)>,
    requests: Vec<(RequestId, ServerRequest)>,
}

impl Batch {
    /// Takes the engine's events (under the lock). What only needs the state happens now:
    /// readiness and the end wake their watchers, the era cache learns the outcome, a request
    /// the server cancelled stops being answered. `true` if there was any event.
    pub(super) fn take(&mut self, state: &mut State, answers: &mut Answers) -> bool {
        while let Some(event) = state.engine.poll_event() {
            self.events.push(event);
        }
        let any = !self.events.is_empty();
        for event in self.events.drain(..) {
            match event {
                Event::Ready { protocol_version } => {
                    tracing::debug!(%protocol_version, "connection ready");
                    if let Some(era) = state.era.as_mut() {
                        era.ready(protocol_version);
                    }
                    state.wake_watchers();
                }
                Event::Response { id, result } => self.responses.push((id, result)),
                Event::Progress { id, params } => {
                    if let Some(f) = state.calls.get(&id).and_then(|slot| slot.on_progress.clone()) {
                        self.progress.push((f, params));
                    }
                }
                Event::Notification(notification) => {
                    log_notification(&notification);
                    self.notifications.push(notification);
                }
                Event::Request { id, request } => self.requests.push((id, request)),
                Event::ServerRequestCancelled { id, reason } => {
                    tracing::debug!(%id, ?reason, "server cancelled its request");
                    answers.cancel(&id);
                }
                Event::ProtocolViolation(violation) => {
                    match &violation {
                        // A late answer is the server being slow, not broken.
                        ProtocolViolation::LateResponse { .. } => {
                            tracing::debug!(%violation, "protocol violation by the server")
                        }
                        _ => tracing::warn!(%violation, "protocol violation by the server"),
                    }
                    self.violations.push(violation);
                }
                Event::Closed(reason) => {
                    tracing::debug!(%reason, "connection closed");
                    if let Some(era) = state.era.as_mut() {
                        era.closed();
                    }
                    state.wake_watchers();
                }
                other => tracing::debug!(?other, "unhandled event"),
            }
        }
        any
    }

    /// Delivers the batch (outside the lock: callbacks and handlers may call the client) and
    /// hands the server's requests to the handler.
    pub(super) fn deliver(&mut self, shared: &Shared, now: Instant, answers: &mut Answers) {
        // Progress callbacks run before the responses of the same batch are delivered, so a
        // caller has seen all the progress that preceded its result.
        for (f, params) in self.progress.drain(..) {
            f(&params);
        }
        // Violations too: a hook learns why a call failed before the call does.
        for violation in self.violations.drain(..) {
            for hook in &shared.extras.violation_hooks {
                hook(&violation);
            }
        }
        // Notifications too: the cache learns of changes first, so that a handler or
        // subscriber reacting to a `list_changed` reads the new list.
        let extras = &shared.extras;
        for notification in self.notifications.drain(..) {
            if let Some(list) = ListKind::of(&notification) {
                extras.lists.changed(list, now);
            }
            for handler in &extras.handlers {
                handler.on_notification(&notification);
            }
            extras.broadcast.send(&notification);
        }
        if !self.responses.is_empty() {
            let mut wakers = Vec::with_capacity(self.responses.len());
            let mut state = shared.lock();
            for (id, result) in self.responses.drain(..) {
                if let Some(slot) = state.calls.get_mut(&id) {
                    slot.result = Some(result.map_err(Box::new));
                    wakers.extend(slot.waker.take());
                }
            }
            drop(state);
            wakers.into_iter().for_each(Waker::wake);
        }
        for (id, request) in self.requests.drain(..) {
            answers.start(id, request);
        }
    }
}

/// A handler's answer to a server request, serialized.
type Answer = BoxFuture<Result<Box<RawValue>, ErrorObject>>;

/// The server's requests being answered by the [`ClientHandler`], polled by whoever drives the
/// connection (the driver's task, or a call waiting for its response).
pub(super) struct Answers {
    handler: std::sync::Arc<dyn ClientHandler>,
    tasks: Vec<(RequestId, Answer)>,
}

impl Answers {
    pub(super) fn new(handler: std::sync::Arc<dyn ClientHandler>) -> Self {
        Self { handler, tasks: Vec::new() }
    }

    pub(super) fn len(&self) -> usize {
        self.tasks.len()
    }

    fn start(&mut self, id: RequestId, request: ServerRequest) {
        self.tasks.push((id, handler_future(self.handler.as_ref(), request)));
    }

    /// The server cancelled request `id`: its answer is dropped unfinished.
    fn cancel(&mut self, id: &RequestId) {
        self.tasks.retain(|(task_id, _)| task_id != id);
    }

    /// Drops every answer in progress (the connection is over).
    pub(super) fn clear(&mut self) {
        self.tasks.clear();
    }

    /// Polls the handler futures and gives the finished answers to the engine.
    pub(super) fn poll(&mut self, cx: &mut Context<'_>, shared: &Shared) -> bool {
        let mut progressed = false;
        let mut i = 0;
        while i < self.tasks.len() {
            if let Poll::Ready(outcome) = self.tasks[i].1.as_mut().poll(cx) {
                let (id, _) = self.tasks.swap_remove(i);
                let mut state = shared.lock();
                let sent = match outcome {
                    Ok(raw) => state.engine.respond(&id, Ok(&*raw)),
                    Err(error) => state.engine.respond::<RawValue>(&id, Err(error)),
                };
                if let Err(error) = sent {
                    tracing::debug!(%id, %error, "answer to a server request not sent");
                }
                progressed = true;
            } else {
                i += 1;
            }
        }
        progressed
    }
}

fn handler_future(handler: &dyn ClientHandler, request: ServerRequest) -> Answer {
    match request {
        ServerRequest::ListRoots => raw(handler.list_roots()),
        ServerRequest::CreateMessage(params) => raw(handler.create_message(*params)),
        ServerRequest::Elicit(params) => raw(handler.elicit(*params)),
        other => {
            let error = ErrorObject::method_not_found(other.method());
            Box::pin(async move { Err(error) })
        }
    }
}

fn raw<T: Serialize + Send + 'static>(future: HandlerFuture<T>) -> Answer {
    Box::pin(async move {
        let value = future.await?;
        serde_json::value::to_raw_value(&value).map_err(ErrorObject::internal)
    })
}

/// Server log messages also go to `tracing`, so they are visible without a subscriber.
fn log_notification(notification: &ServerNotification) {
    use mcp_sansio::schema::LoggingLevel as L;
    if let ServerNotification::LoggingMessage(message) = notification {
        let logger = message.logger.as_deref().unwrap_or("");
        let data = &message.data;
        match message.level {
            L::Debug => tracing::debug!(target: "mcp_smol::server_log", logger, %data),
            L::Info | L::Notice => tracing::info!(target: "mcp_smol::server_log", logger, %data),
            L::Warning => tracing::warn!(target: "mcp_smol::server_log", logger, %data),
            _ => tracing::error!(target: "mcp_smol::server_log", logger, %data),
        }
    }
}
