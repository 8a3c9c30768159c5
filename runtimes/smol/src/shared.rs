//! State shared between the [`Client`](crate::Client) handles, the calls in flight and the
//! driver.
//!
//! # Who runs what
//!
//! The connection has two kinds of work, and they never mix:
//!
//! - **The pump** (`Pump`, `driver/pump.rs`): transport ↔ engine, the engine's deadlines,
//!   responses and progress into the calls' [`Slot`]s, the list cache and the broadcast ring.
//!   Whoever needs it runs it: a source's wake-up where its news lands (a stdio child's own
//!   sources, see [`TaskWaker`]), a call that writes its request, a command, the driver's task.
//!   It never runs user code, and it never waits for the core: a pump that finds another one
//!   running asks it to go once more (`Pump`'s `again`). A call waiting for its response only
//!   looks at its slot: nobody's progress waits on a future being polled.
//! - **Dispatch** (`driver/dispatch.rs`): notification handlers, protocol-violation hooks, the
//!   [`ClientHandler`](crate::ClientHandler)'s futures for server requests, the OAuth
//!   [`AuthorizationHandler`](crate::AuthorizationHandler) and the
//!   [`TokenStore`](crate::TokenStore). Only the driver's task dispatches; a pump queues the work
//!   in [`State::inbox`] and wakes it. Each call's own progress callback runs on that call's
//!   task, from its poll, before its result. A panic in user code is caught where it runs.
//!
//! # Locks, and their order
//!
//! 1. The pump's core (`Pump::core`): the transport, the timer, the server process. Only ever
//!    `try_lock`ed while the connection runs; the driver waits for it only while it is built
//!    and at its end (finished or dropped).
//! 2. The connection's state (`Shared::state`, this module's [`State`]): the engine, the calls'
//!    slots, the dispatch inbox. Taken by the pump, by the commands of [`Client`](crate::Client)
//!    and the calls, and by dispatch, for short synchronous sections.
//! 3. Leaves, each taken with nothing below it: the driver task's waker ([`TaskWaker`]), the
//!    broadcast ring (`notifications.rs`), the list cache's slots (`cache.rs`), the era cache's
//!    map.
//!
//! A lock is only taken while holding locks above it in this list. `locks.rs` lists every lock
//! of the crate (the pool's above these, a list's fetch above all, the other leaves), and each
//! is an [`OrderedMutex`](crate::locks::OrderedMutex) of its level: in debug builds an
//! acquisition against the order panics. No user code runs and no waker is called while any of
//! them is held: wakers are gathered under the locks and called after (nor is anything dropped
//! under them whose drop wakes: a channel's sender, an HTTP exchange). (The runtime's seams are called by the pump: the [`Clock`]'s `now` and `timer`, an
//! `HttpTransport`'s `send` and its futures, the byte streams. They must not block, as any
//! future's poll must not.) So user code cannot poison them, and cannot deadlock on a client
//! call from a callback.
//! A poisoned lock can only come from a bug in this crate or the engine; the state's lock then
//! closes the connection (every call fails, typed) rather than carry on with what a panic left
//! half-done, and the task's waker and the ring, whose sections leave them whole at every step, are
//! taken as they are.
//!
//! # No cycle
//!
//! [`Connection`](crate::driver::Connection) (`driver/connection.rs`) owns this `Shared` and
//! the pump, side by side, so that this module needs nothing of the driver. The pump's core
//! holds no `Arc` of either (the pump is lent `&Shared`), so dropping the last handle, call and
//! driver frees the connection.

use std::collections::HashMap;
use std::hash::BuildHasherDefault;
use std::ops::{Deref, DerefMut};
use std::sync::Arc;
use std::task::Waker;

use std::time::Instant;

#[cfg(feature = "http")]
use mcp_sansio::auth::{AuthEvent, Credentials};
#[cfg(feature = "http")]
use mcp_sansio::http::HttpSession;
use mcp_sansio::schema::{Implementation, ProgressNotificationParams, ServerCapabilities};
use mcp_sansio::{
    ClientConnection, Commands, ErrorObject, IdHasher, ProtocolVersion, ProtocolViolation, RawResult,
    RequestError, RequestId, ServerNotification, ServerRequest, UsageError,
};
use serde::Serialize;

use crate::cache::ListCache;
use crate::clock::Clock;
use crate::era::EraMemo;
use crate::locks::{self, OrderedGuard, OrderedMutex};
use crate::notifications::Broadcast;
use crate::source_waker::TaskWaker;

/// A progress callback for one call.
pub(crate) type ProgressFn = Arc<dyn Fn(&ProgressNotificationParams) + Send + Sync>;

/// A callback for the server's protocol violations
/// ([`on_protocol_violation`](crate::ClientBuilder::on_protocol_violation)).
pub(crate) type ViolationFn = Arc<dyn Fn(&mcp_sansio::ProtocolViolation) + Send + Sync>;

/// Most progress notifications held for one call whose task has not taken them yet; past it
/// the oldest goes (the newest says the most). A server flooding progress for a call whose
/// future is not being polled cannot grow the client's memory.
pub(crate) const MAX_QUEUED_PROGRESS: usize = 64;

/// Most work items waiting for the driver's task ([`State::inbox`]) before the pump drops the
/// server's notifications for the handlers and its protocol violations for the hooks (each
/// logged, and counted in [`State::inbox_dropped`]) until the task has caught up. Server
/// requests and their cancellations are always queued: the engine bounds the requests
/// ([`max_open_server_requests`](mcp_sansio::ClientConfig::max_open_server_requests)), and a
/// request the server cancels while it is still queued is taken out (so the cancellations are
/// bounded by the requests the task took). The pump never stops reading for user code that is
/// behind: it used to, and a handler that blocked then held back every call's response too
/// (issue 35).
pub(crate) const MAX_INBOX: usize = 1024;

/// Everything of a connection that its handles, calls and driver share but the pump (which
/// [`Connection`](crate::driver::Connection) puts beside it).
pub(crate) struct Shared {
    state: OrderedMutex<State, { locks::STATE }>,
    /// Where the sources' wake-ups go: the driver's task, or a pump run where they land.
    pub(crate) route: Arc<TaskWaker>,
    /// Where the driver and the commands get the time (outside the lock: it never changes).
    pub(crate) clock: Arc<dyn Clock>,
    /// What the connection has besides the engine (outside the lock).
    pub(crate) extras: Extras,
}

/// What a connection has besides the engine, fixed when it is built. The user code (handlers,
/// hooks) is not here: the driver owns it, and only its task runs it.
/// The application's hook for the W3C trace context of each call
/// ([`ClientBuilder::trace_context`](crate::ClientBuilder::trace_context)).
pub(crate) type TraceHook = Arc<dyn Fn() -> Option<mcp_sansio::schema::TraceContext> + Send + Sync + 'static>;

pub(crate) struct Extras {
    pub(crate) broadcast: Arc<Broadcast>,
    /// Whether any notification handler was added (else notifications are not queued for the
    /// driver's task).
    pub(crate) notification_handlers: bool,
    /// Whether any protocol-violation hook was added.
    pub(crate) violation_hooks: bool,
    pub(crate) lists: ListCache,
    /// Fills a call's W3C trace context from the application's tracing, when set.
    pub(crate) trace: Option<TraceHook>,
    #[cfg(feature = "output-schema")]
    pub(crate) output_schemas: Option<crate::output_schema::OutputSchemas>,
    /// Whether a tool listing taught `output_schemas` this connection's tools.
    #[cfg(feature = "output-schema")]
    pub(crate) tools_listed: std::sync::atomic::AtomicBool,
}

/// A call waiting for its response.
pub(crate) struct Slot {
    pub(crate) waker: Option<Waker>,
    /// The outcome, once it arrived. The error is boxed to keep every pending call's slot
    /// small (an unboxed `RequestError` would make each slot 56 bytes larger).
    pub(crate) result: Option<Result<RawResult, Box<RequestError>>>,
    /// Progress for the call's task to run its callback on, oldest first (at most
    /// [`MAX_QUEUED_PROGRESS`]); `None` when the call has no progress callback.
    pub(crate) progress: Option<Vec<ProgressNotificationParams>>,
}

impl Slot {
    /// A call just sent; `progress`: whether it has a progress callback.
    pub(crate) fn new(progress: bool) -> Self {
        Slot { waker: None, result: None, progress: progress.then(Vec::new) }
    }

    /// Queues progress for the call (if it wants it): `true` if queued.
    pub(crate) fn push_progress(&mut self, params: ProgressNotificationParams) -> bool {
        let Some(queue) = self.progress.as_mut() else { return false };
        if queue.len() == MAX_QUEUED_PROGRESS {
            queue.remove(0);
        }
        queue.push(params);
        true
    }
}

/// Work for the driver's task: user code, in the order the engine produced it.
pub(crate) enum Work {
    /// For the notification handlers.
    Notification(ServerNotification),
    /// For the protocol-violation hooks.
    Violation(ProtocolViolation),
    /// A server request, for the [`ClientHandler`](crate::ClientHandler).
    Request(RequestId, ServerRequest),
    /// The server cancelled its request: its answer is dropped unfinished.
    RequestCancelled(RequestId),
    /// For the OAuth handler.
    #[cfg(feature = "http")]
    Auth(AuthEvent),
    /// New credentials, for the token store.
    #[cfg(feature = "http")]
    SaveCredentials(Credentials),
}

/// The engine behind a connection: the bare connection on a byte stream, or the HTTP session
/// wrapped around it.
///
/// What both kinds do is a method here. What only one kind has (a byte stream's bytes and
/// transmits; an HTTP session's actions, responses and authorization) is reached through
/// [`stream`](Self::stream) or [`http`](Self::http), each of which asks for the key made with
/// the engine ([`StreamKey`], [`HttpKey`]) and kept by that connection's transport. The kind is
/// private and fixed when the engine is made, so a key exists only beside an engine of its kind:
/// a byte-stream transport cannot be paired with an HTTP session, and no input meant for one
/// kind goes silently nowhere on the other (the one delegation that does nothing on stdio,
/// [`forget_scope_refusals`](Self::forget_scope_refusals), is the application's and says so).
pub(crate) struct Engine {
    kind: Kind,
}

/// The engine's kind. One per connection, so the variants' size difference does not matter.
#[allow(clippy::large_enum_variant)]
enum Kind {
    Stream(ClientConnection),
    #[cfg(feature = "http")]
    Http(HttpSession),
}

/// Proof that a connection's engine is the bare connection of a byte stream: made only with
/// such an engine ([`Engine::stream_engine`]), and kept by its transport (`StreamIo`).
pub(crate) struct StreamKey(());

/// Proof that a connection's engine is an HTTP session: made only with such an engine
/// ([`Engine::http_engine`]), and kept by its transport (`HttpIo`) and its OAuth side (`AuthIo`),
/// both of the same connection's driver.
#[cfg(feature = "http")]
#[derive(Clone)]
pub(crate) struct HttpKey(());

impl Engine {
    /// The engine of a byte-stream connection, and the key its transport reaches it with.
    pub(crate) fn stream_engine(conn: ClientConnection) -> (Self, StreamKey) {
        (Engine { kind: Kind::Stream(conn) }, StreamKey(()))
    }

    /// The engine of an HTTP connection, and the key its transport reaches it with.
    #[cfg(feature = "http")]
    pub(crate) fn http_engine(session: HttpSession) -> (Self, HttpKey) {
        (Engine { kind: Kind::Http(session) }, HttpKey(()))
    }

    /// The bare connection of a byte stream, for its transport's inputs and output (bytes read,
    /// the end of the stream, transmits).
    pub(crate) fn stream(&mut self, _key: &StreamKey) -> &mut ClientConnection {
        match &mut self.kind {
            Kind::Stream(conn) => conn,
            #[cfg(feature = "http")]
            Kind::Http(_) => unreachable!("a stream key is made only with a stream engine"),
        }
    }

    /// The HTTP session, for its transport's actions and responses and for authorization.
    #[cfg(feature = "http")]
    pub(crate) fn http(&mut self, _key: &HttpKey) -> &mut HttpSession {
        match &mut self.kind {
            Kind::Http(session) => session,
            Kind::Stream(_) => unreachable!("an HTTP key is made only with an HTTP engine"),
        }
    }

    /// The bare connection, for tests that feed it by hand (with no driver, so no key).
    #[cfg(test)]
    pub(crate) fn stream_for_tests(&mut self) -> &mut ClientConnection {
        self.stream(&StreamKey(()))
    }

    pub(crate) fn conn(&self) -> &ClientConnection {
        match &self.kind {
            Kind::Stream(conn) => conn,
            #[cfg(feature = "http")]
            Kind::Http(session) => session.connection(),
        }
    }

    /// The connection's commands (the HTTP session's, which refuse what HTTP cannot carry).
    pub(crate) fn commands(&mut self) -> Commands<'_> {
        match &mut self.kind {
            Kind::Stream(conn) => conn.commands(),
            #[cfg(feature = "http")]
            Kind::Http(session) => session.commands(),
        }
    }

    /// The next event for the application.
    pub(crate) fn poll_event(&mut self) -> Option<mcp_sansio::Event> {
        match &mut self.kind {
            Kind::Stream(conn) => conn.poll_event(),
            #[cfg(feature = "http")]
            Kind::Http(session) => session.poll_event(),
        }
    }

    pub(crate) fn poll_timeout(&self) -> Option<Instant> {
        match &self.kind {
            Kind::Stream(conn) => conn.poll_timeout(),
            #[cfg(feature = "http")]
            Kind::Http(session) => session.poll_timeout(),
        }
    }

    pub(crate) fn handle_timeout(&mut self, now: Instant) {
        match &mut self.kind {
            Kind::Stream(conn) => conn.handle_timeout(now),
            #[cfg(feature = "http")]
            Kind::Http(session) => session.handle_timeout(now),
        }
    }

    /// Whether the connection closed (its deadlines and events may still be pending).
    pub(crate) fn is_closed(&self) -> bool {
        self.conn().is_closed()
    }

    /// Whether nothing is left to do: the connection closed and, for HTTP, the session's last
    /// exchanges (the `DELETE`) are over.
    pub(crate) fn is_finished(&self) -> bool {
        match &self.kind {
            Kind::Stream(conn) => conn.is_closed(),
            #[cfg(feature = "http")]
            Kind::Http(session) => session.is_finished(),
        }
    }

    /// Answers a server request.
    pub(crate) fn respond<T: Serialize + ?Sized>(
        &mut self,
        id: &RequestId,
        outcome: Result<&T, ErrorObject>,
    ) -> Result<(), UsageError> {
        self.commands().respond(id, outcome)
    }

    /// The application's own code failed (a token store that panicked): closes the connection
    /// with [`CloseReason::Aborted`](mcp_sansio::CloseReason::Aborted).
    #[cfg(feature = "http")]
    pub(crate) fn abort(&mut self, detail: impl Into<String>) {
        self.commands().abort(detail);
    }

    /// The transport failed: closes the connection with `detail`.
    // (`now` is for the HTTP session, which ends its session with a `DELETE`.)
    #[cfg_attr(not(feature = "http"), allow(unused_variables))]
    pub(crate) fn transport_error(&mut self, now: Instant, detail: impl Into<String>) {
        match &mut self.kind {
            Kind::Stream(conn) => conn.transport_error(detail),
            #[cfg(feature = "http")]
            Kind::Http(session) => session.transport_error(now, detail),
        }
    }

    /// [`Client::forget_scope_refusals`](crate::Client::forget_scope_refusals): the HTTP
    /// session's; a byte stream has no authorization, so nothing to forget.
    #[cfg(feature = "http")]
    pub(crate) fn forget_scope_refusals(&mut self) {
        match &mut self.kind {
            Kind::Http(session) => session.forget_scope_refusals(),
            Kind::Stream(_) => {}
        }
    }
}

/// Where the driver is in its life: it ends by finishing (the connection closed and the server
/// is gone) or by being dropped before that.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum DriverLife {
    Running,
    Finished,
    /// Dropped before it finished: nothing moves on this connection any more, and every call
    /// fails with [`Error::DriverGone`](crate::Error::DriverGone).
    Dropped,
}

pub(crate) struct State {
    pub(crate) engine: Engine,
    /// Keyed by the engine's own ids (a peer's unknown ids never reach it), so hashed cheaply.
    pub(crate) calls: HashMap<RequestId, Slot, BuildHasherDefault<IdHasher>>,
    /// User code for the driver's task to run, in order (see the module docs).
    pub(crate) inbox: Vec<Work>,
    /// Notifications and protocol violations dropped because [`MAX_INBOX`] items waited.
    pub(crate) inbox_dropped: u64,
    /// Tasks waiting for the handshake to end or for the driver to finish.
    watchers: Vec<Waker>,
    /// Live `Client` handles; the last one dropped closes the connection.
    pub(crate) handles: usize,
    /// Where the driver is in its life.
    pub(crate) driver: DriverLife,
    /// The server's process id, for stdio servers.
    pub(crate) server_pid: Option<u32>,
    /// What the era cache learns from this connection's handshake.
    pub(crate) era: Option<EraMemo>,
    /// How the server process ended, once the driver's shutdown saw it (stdio servers).
    pub(crate) server_end: Option<crate::stdio::ServerEnd>,
    /// What the connection knew of the server when it was last seen ready (see [`StateGuard`]).
    kept: Option<Box<KeptSession>>,
}

/// What a ready connection knows of its server, kept for when the connection has ended: the
/// engine forgets its session when it closes, and applications still ask which server and
/// version that was (in an error report, after `close()`).
pub(crate) struct KeptSession {
    pub(crate) version: ProtocolVersion,
    pub(crate) server_info: Option<Implementation>,
    pub(crate) capabilities: ServerCapabilities,
    pub(crate) instructions: Option<String>,
}

/// The lock on a connection's [`State`]. Released, it keeps what the engine knows of the server
/// the first time it finds the engine ready: every way the handshake can end (a response fed
/// by the pump, an HTTP body) is a section under this lock, so the session is kept before any
/// later section can close the connection, even when the pump handles the handshake's answer
/// and the server's EOF in one go. After that it costs one comparison per section.
pub(crate) struct StateGuard<'a>(OrderedGuard<'a, State, { locks::STATE }>);

impl Deref for StateGuard<'_> {
    type Target = State;

    fn deref(&self) -> &State {
        &self.0
    }
}

impl DerefMut for StateGuard<'_> {
    fn deref_mut(&mut self) -> &mut State {
        &mut self.0
    }
}

impl Drop for StateGuard<'_> {
    fn drop(&mut self) {
        if self.0.kept.is_none() {
            self.0.remember_session();
        }
    }
}

impl Shared {
    pub(crate) fn new(engine: Engine, extras: Extras, clock: Arc<dyn Clock>) -> Self {
        Self {
            state: OrderedMutex::new(State {
                engine,
                calls: HashMap::default(),
                inbox: Vec::new(),
                inbox_dropped: 0,
                watchers: Vec::new(),
                handles: 0,
                driver: DriverLife::Running,
                server_pid: None,
                era: None,
                server_end: None,
                kept: None,
            }),
            route: Arc::new(TaskWaker::new()),
            clock,
            extras,
        }
    }

    /// Locks the state. No user code runs under this lock, so a poisoned lock means a bug in
    /// this crate or the engine panicked mid-section: the connection is closed then, so that
    /// every call fails with a typed error instead of trusting what the panic left.
    pub(crate) fn lock(&self) -> StateGuard<'_> {
        match self.state.lock() {
            Ok(guard) => StateGuard(guard),
            Err(poisoned) => {
                self.state.clear_poison();
                let mut guard = StateGuard(poisoned.into_inner());
                tracing::error!("mcp-smol: a panic inside the client left the connection's state locked");
                guard.engine.transport_error(self.clock.now(), "internal error: a panic inside mcp-smol");
                guard
            }
        }
    }
}

impl State {
    /// Keeps what the engine knows of the server now, if it is ready (else keeps what it had).
    pub(crate) fn remember_session(&mut self) {
        let conn = self.engine.conn();
        let Some(version) = conn.protocol_version() else { return };
        self.kept = Some(Box::new(KeptSession {
            version,
            server_info: conn.server_info().cloned(),
            capabilities: conn.server_capabilities().cloned().unwrap_or_default(),
            instructions: conn.instructions().map(str::to_owned),
        }));
    }

    /// Something known of the server: from the engine while the connection is ready (`live`),
    /// else from what was kept when it last was (`kept`); `None` before the handshake ended.
    pub(crate) fn about_server<T>(
        &self,
        live: impl FnOnce(&ClientConnection) -> Option<T>,
        kept: impl FnOnce(&KeptSession) -> Option<T>,
    ) -> Option<T> {
        let conn = self.engine.conn();
        if conn.protocol_version().is_some() { live(conn) } else { self.kept.as_deref().and_then(kept) }
    }

    /// The connection's commands (through the HTTP session, for HTTP).
    pub(crate) fn commands(&mut self) -> Commands<'_> {
        self.engine.commands()
    }

    /// The wakers of up to `limit` calls still waiting for their response (polled, no result
    /// yet), into `wake`, for after the lock.
    pub(crate) fn waiting_calls(&self, limit: usize, wake: &mut Vec<Waker>) {
        let waiting = self.calls.values().filter(|slot| slot.result.is_none());
        wake.extend(waiting.filter_map(|slot| slot.waker.clone()).take(limit));
    }

    /// The tasks waiting on readiness or on the driver's end, to wake once the lock is released.
    pub(crate) fn take_watchers(&mut self, wake: &mut Vec<Waker>) {
        wake.append(&mut self.watchers);
    }

    /// Whether the driver is gone without finishing: calls must fail at once, unsent.
    pub(crate) fn driver_dropped(&self) -> bool {
        self.driver == DriverLife::Dropped
    }

    /// The driver ended (finished, or `how` says it was dropped): every call and every watcher
    /// is to be woken (their wakers go into `wake`, for after the lock). A dropped driver also
    /// closes the engine, so the status says the connection is over and nothing can be queued
    /// that no one would write.
    pub(crate) fn driver_ended(&mut self, how: DriverLife, now: Instant, wake: &mut Vec<Waker>) {
        self.driver = how;
        if how == DriverLife::Dropped {
            self.engine.transport_error(now, "the driver was dropped");
        }
        self.inbox.clear();
        self.take_watchers(wake);
        wake.extend(self.calls.values_mut().filter_map(|slot| slot.waker.take()));
    }

    /// Registers `waker` to be woken on the next readiness or end change.
    pub(crate) fn watch(&mut self, waker: &Waker) {
        if !self.watchers.iter().any(|w| w.will_wake(waker)) {
            self.watchers.push(waker.clone());
        }
    }
}

/// Wakes every waker of `wakers`, emptying it (outside every lock).
pub(crate) fn wake_all(wakers: &mut Vec<Waker>) {
    for waker in wakers.drain(..) {
        waker.wake();
    }
}
