//! Dispatch: the user code of a connection, run on the driver's task only, with no lock held,
//! and every panic caught where it happens (see `shared.rs` for the split with the pump).
//!
//! | user code | a panic |
//! |---|---|
//! | a [`NotificationHandler`] | logged; that handler is dropped, the others go on |
//! | a protocol-violation hook | logged; that hook is dropped |
//! | a [`ClientHandler`] method or its future | the server request is answered with an internal error |
//! | the OAuth [`AuthorizationHandler`](crate::AuthorizationHandler)'s future | the authorization is abandoned, with the reason |
//! | the [`TokenStore`](crate::TokenStore)'s `save` | the connection closes with [`CloseReason::Aborted`](mcp_sansio::CloseReason::Aborted) |
//!
//! A call's own progress callback runs on the call's task (`call.rs`), with the same rule as a
//! handler: logged and dropped.

use std::any::Any;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::task::{Context, Poll};

use mcp_sansio::{ErrorObject, RequestId, ServerRequest};
use serde::Serialize;
use serde_json::value::RawValue;

use super::BoxFuture;
#[cfg(feature = "http")]
use super::authorize::AuthIo;
use crate::contain::{contained, panic_message};
use crate::handler::{ClientHandler, HandlerFuture};
use crate::notifications::NotificationHandler;
use crate::shared::{MAX_INBOX, Shared, ViolationFn, Work};
use crate::source_waker::{SourceWaker, TaskWaker};

/// What one dispatch did.
#[derive(Debug, Default, Clone, Copy)]
pub(super) struct Dispatched {
    /// The engine has new input (an answer, an authorization outcome): the pump must run.
    pub(super) pump: bool,
}

/// The driver's user code and its state.
pub(super) struct Dispatch {
    handler: Arc<dyn ClientHandler>,
    notification_handlers: Vec<Arc<dyn NotificationHandler>>,
    violation_hooks: Vec<ViolationFn>,
    answers: Vec<Answer>,
    #[cfg(feature = "http")]
    pub(super) auth: Option<AuthIo>,
    /// The inbox taken out of the state, reused.
    work: Vec<Work>,
    /// Answers finished in this dispatch, given to the engine in one locked section.
    finished: Vec<(RequestId, Result<Box<RawValue>, ErrorObject>)>,
    /// The driver's task, which the handler futures wake.
    task: Arc<TaskWaker>,
}

/// A server request being answered by the [`ClientHandler`].
struct Answer {
    id: RequestId,
    future: BoxFuture<Result<Box<RawValue>, ErrorObject>>,
    /// Set when the future woke the task: it is polled only then.
    news: SourceWaker,
}

impl Dispatch {
    pub(super) fn new(
        handler: Arc<dyn ClientHandler>,
        notification_handlers: Vec<Arc<dyn NotificationHandler>>,
        violation_hooks: Vec<ViolationFn>,
        task: Arc<TaskWaker>,
    ) -> Self {
        Dispatch {
            handler,
            notification_handlers,
            violation_hooks,
            answers: Vec::new(),
            #[cfg(feature = "http")]
            auth: None,
            work: Vec::new(),
            finished: Vec::new(),
            task,
        }
    }

    /// Server requests the handler is still answering.
    pub(super) fn open_answers(&self) -> usize {
        self.answers.len()
    }

    /// Drops every answer in progress (the connection is over).
    pub(super) fn clear(&mut self) {
        self.answers.clear();
        #[cfg(feature = "http")]
        if let Some(auth) = self.auth.as_mut() {
            auth.clear();
        }
    }

    /// Runs what the pump queued, then polls the handler futures.
    pub(super) fn run(&mut self, cx: &mut Context<'_>, shared: &Shared) -> Dispatched {
        let mut dispatched = Dispatched::default();
        {
            let mut state = shared.lock();
            std::mem::swap(&mut state.inbox, &mut self.work);
        }
        let mut work = std::mem::take(&mut self.work);
        for item in work.drain(..) {
            self.one(item, shared, &mut dispatched);
        }
        self.work = work;
        if self.work.capacity() > MAX_INBOX {
            self.work = Vec::new();
        }
        dispatched.pump |= self.poll_answers(shared);
        #[cfg(feature = "http")]
        if let Some(auth) = self.auth.as_mut() {
            dispatched.pump |= auth.poll(cx, shared);
        }
        #[cfg(not(feature = "http"))]
        let _ = cx;
        dispatched
    }

    fn one(&mut self, item: Work, shared: &Shared, dispatched: &mut Dispatched) {
        match item {
            Work::Notification(notification) => {
                self.notification_handlers.retain(|handler| {
                    contained("a notification handler", || handler.on_notification(&notification))
                });
            }
            Work::Violation(violation) => {
                self.violation_hooks
                    .retain(|hook| contained("a protocol-violation hook", || hook(&violation)));
            }
            Work::Request(id, request) => {
                let handler = &self.handler;
                match catch_unwind(AssertUnwindSafe(|| handler_future(handler.as_ref(), request))) {
                    Ok(future) => {
                        let news = SourceWaker::for_task(self.task.clone());
                        self.answers.push(Answer { id, future, news });
                    }
                    Err(panic) => {
                        self.finished.push((id, Err(handler_panicked(&*panic))));
                    }
                }
            }
            Work::RequestCancelled(id) => {
                // The engine keeps the request's place among the open ones until it is answered
                // (it writes nothing for a cancelled one): tell it, or the place is lost for good.
                let open = self.answers.len();
                self.answers.retain(|answer| answer.id != id);
                if self.answers.len() != open {
                    self.finished.push((id, Err(super::pump::cancelled_by_the_server())));
                }
            }
            #[cfg(feature = "http")]
            Work::Auth(event) => {
                if let Some(auth) = self.auth.as_mut() {
                    dispatched.pump |= auth.on_event(event, shared);
                }
            }
            #[cfg(feature = "http")]
            Work::SaveCredentials(credentials) => {
                if let Some(auth) = self.auth.as_mut() {
                    dispatched.pump |= auth.save(&credentials, shared);
                }
            }
        }
        #[cfg(not(feature = "http"))]
        let _ = (shared, dispatched);
    }

    /// Polls the handler futures that woke the task; gives the finished answers to the engine.
    /// `true` if any finished.
    fn poll_answers(&mut self, shared: &Shared) -> bool {
        let mut i = 0;
        while i < self.answers.len() {
            let answer = &mut self.answers[i];
            if !answer.news.take() {
                i += 1;
                continue;
            }
            let (future, news) = (&mut answer.future, &answer.news);
            let polled = catch_unwind(AssertUnwindSafe(|| future.as_mut().poll(&mut news.context())));
            let outcome = match polled {
                Ok(Poll::Pending) => {
                    i += 1;
                    continue;
                }
                Ok(Poll::Ready(outcome)) => outcome,
                Err(panic) => Err(handler_panicked(&*panic)),
            };
            let answer = self.answers.swap_remove(i);
            self.finished.push((answer.id, outcome));
        }
        if self.finished.is_empty() {
            return false;
        }
        let mut state = shared.lock();
        for (id, outcome) in self.finished.drain(..) {
            let sent = match outcome {
                Ok(raw) => state.engine.respond(&id, Ok(&*raw)),
                Err(error) => state.engine.respond::<RawValue>(&id, Err(error)),
            };
            if let Err(error) = sent {
                tracing::debug!(%id, %error, "answer to a server request not sent");
            }
        }
        true
    }
}

/// The answer to a server request whose handler panicked (the panic is logged).
fn handler_panicked(panic: &(dyn Any + Send)) -> ErrorObject {
    let message = panic_message(panic);
    tracing::error!(panic = message, "the client handler panicked while answering a server request");
    ErrorObject::internal("the client's handler failed")
}

fn handler_future(
    handler: &dyn ClientHandler,
    request: ServerRequest,
) -> BoxFuture<Result<Box<RawValue>, ErrorObject>> {
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

fn raw<T: Serialize + Send + 'static>(
    future: HandlerFuture<T>,
) -> BoxFuture<Result<Box<RawValue>, ErrorObject>> {
    Box::pin(async move {
        let value = future.await?;
        serde_json::value::to_raw_value(&value).map_err(ErrorObject::internal)
    })
}
