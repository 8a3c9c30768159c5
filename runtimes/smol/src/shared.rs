//! State shared between the [`Client`](crate::Client) handles and the driver.
//!
//! One mutex guards the engine and the bookkeeping around it. It is only ever held for short,
//! synchronous sections (never across an await), by the driver and by the handles' commands.

use std::collections::HashMap;
use std::hash::BuildHasherDefault;
use std::ops::{Deref, DerefMut};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::Waker;

use std::time::Instant;

use mcp_sansio::RawResult;
#[cfg(feature = "http")]
use mcp_sansio::http::{HttpAction, HttpSession, StreamId};
use mcp_sansio::schema::{Implementation, ProgressNotificationParams, ServerCapabilities};
use mcp_sansio::{
    ClientConnection, Commands, ErrorObject, IdHasher, ProtocolVersion, RequestError, RequestId, Transmit,
    UsageError,
};
use serde::Serialize;

use crate::cache::ListCache;
use crate::clock::Clock;
use crate::driver::Drive;
use crate::era::EraMemo;
use crate::notifications::{Broadcast, NotificationHandler};

/// A progress callback for one call.
pub(crate) type ProgressFn = Arc<dyn Fn(&ProgressNotificationParams) + Send + Sync>;

/// A callback for the server's protocol violations
/// ([`on_protocol_violation`](crate::ClientBuilder::on_protocol_violation)).
pub(crate) type ViolationFn = Arc<dyn Fn(&mcp_sansio::ProtocolViolation) + Send + Sync>;

pub(crate) struct Shared {
    state: Mutex<State>,
    /// The driver's rounds, run by its task or by a call waiting for its response.
    pub(crate) drive: Drive,
    /// Tokens that tell the calls driving the connection apart.
    next_token: AtomicU64,
    /// Where the driver and the commands get the time (outside the lock: it never changes).
    pub(crate) clock: Arc<dyn Clock>,
    /// Where server notifications go besides the engine (outside the lock: handlers may call
    /// the client).
    pub(crate) extras: Extras,
}

/// What a connection has besides the engine, fixed when it is built.
pub(crate) struct Extras {
    pub(crate) broadcast: Arc<Broadcast>,
    pub(crate) handlers: Vec<Arc<dyn NotificationHandler>>,
    /// Who sees the server's protocol violations (none: they are only logged).
    pub(crate) violation_hooks: Vec<ViolationFn>,
    pub(crate) lists: ListCache,
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
    pub(crate) on_progress: Option<ProgressFn>,
}

/// The engine behind a connection: the bare connection on a byte stream, or the HTTP session
/// wrapped around it. One per connection, so the variants' size difference does not matter.
#[allow(clippy::large_enum_variant)]
pub(crate) enum Engine {
    Stream(ClientConnection),
    #[cfg(feature = "http")]
    Http(HttpSession),
}

impl Engine {
    pub(crate) fn conn(&self) -> &ClientConnection {
        match self {
            Engine::Stream(conn) => conn,
            #[cfg(feature = "http")]
            Engine::Http(session) => session.connection(),
        }
    }

    /// The connection's commands (the HTTP session's, which refuse what HTTP cannot carry).
    pub(crate) fn commands(&mut self) -> Commands<'_> {
        match self {
            Engine::Stream(conn) => conn.commands(),
            #[cfg(feature = "http")]
            Engine::Http(session) => session.commands(),
        }
    }

    /// The next event for the application.
    pub(crate) fn poll_event(&mut self) -> Option<mcp_sansio::Event> {
        match self {
            Engine::Stream(conn) => conn.poll_event(),
            #[cfg(feature = "http")]
            Engine::Http(session) => session.poll_event(),
        }
    }

    /// The bare connection of a byte-stream transport, for its inputs (`None` for HTTP, whose
    /// session takes the responses).
    pub(crate) fn stream_mut(&mut self) -> Option<&mut ClientConnection> {
        match self {
            Engine::Stream(conn) => Some(conn),
            #[cfg(feature = "http")]
            Engine::Http(_) => None,
        }
    }

    pub(crate) fn poll_timeout(&self) -> Option<Instant> {
        match self {
            Engine::Stream(conn) => conn.poll_timeout(),
            #[cfg(feature = "http")]
            Engine::Http(session) => session.poll_timeout(),
        }
    }

    pub(crate) fn handle_timeout(&mut self, now: Instant) {
        match self {
            Engine::Stream(conn) => conn.handle_timeout(now),
            #[cfg(feature = "http")]
            Engine::Http(session) => session.handle_timeout(now),
        }
    }

    // The driver's calls. Each transport of the driver uses the ones for its kind of engine;
    // on the other kind they do nothing.

    /// Whether the connection closed (its deadlines and events may still be pending).
    pub(crate) fn is_closed(&self) -> bool {
        self.conn().is_closed()
    }

    /// Whether nothing is left to do: the connection closed and, for HTTP, the session's last
    /// exchanges (the `DELETE`) are over.
    pub(crate) fn is_finished(&self) -> bool {
        match self {
            Engine::Stream(conn) => conn.is_closed(),
            #[cfg(feature = "http")]
            Engine::Http(session) => session.is_finished(),
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

    /// The transport failed: closes the connection with `detail`.
    // (`now` is for the HTTP session, which ends its session with a `DELETE`.)
    #[cfg_attr(not(feature = "http"), allow(unused_variables))]
    pub(crate) fn transport_error(&mut self, now: Instant, detail: impl Into<String>) {
        match self {
            Engine::Stream(conn) => conn.transport_error(detail),
            #[cfg(feature = "http")]
            Engine::Http(session) => session.transport_error(now, detail),
        }
    }

    /// Byte streams: bytes read from the server.
    pub(crate) fn feed(&mut self, now: Instant, bytes: &[u8]) {
        if let Some(conn) = self.stream_mut() {
            conn.feed(now, bytes);
        }
    }

    /// Byte streams: the server closed its end.
    pub(crate) fn feed_eof(&mut self, now: Instant) {
        if let Some(conn) = self.stream_mut() {
            conn.feed_eof(now);
        }
    }

    /// Byte streams: the next message to write.
    pub(crate) fn poll_transmit(&mut self) -> Option<Transmit> {
        self.stream_mut()?.poll_transmit()
    }

    /// HTTP: the next request to start or exchange to abort.
    #[cfg(feature = "http")]
    pub(crate) fn poll_action(&mut self, now: Instant) -> Option<HttpAction> {
        match self {
            Engine::Http(session) => session.poll_action(now),
            Engine::Stream(_) => None,
        }
    }

    /// HTTP: the head of exchange `stream` arrived.
    #[cfg(feature = "http")]
    pub(crate) fn handle_response_head<'h>(
        &mut self,
        now: Instant,
        stream: StreamId,
        status: u16,
        headers: impl IntoIterator<Item = (&'h str, &'h [u8])>,
    ) {
        if let Engine::Http(session) = self {
            session.handle_response_head(now, stream, status, headers);
        }
    }

    /// HTTP: a chunk of the body of exchange `stream`.
    #[cfg(feature = "http")]
    pub(crate) fn handle_response_body(&mut self, now: Instant, stream: StreamId, chunk: &[u8]) {
        if let Engine::Http(session) = self {
            session.handle_response_body(now, stream, chunk);
        }
    }

    /// HTTP: the body of exchange `stream` ended.
    #[cfg(feature = "http")]
    pub(crate) fn handle_response_end(&mut self, now: Instant, stream: StreamId) {
        if let Engine::Http(session) = self {
            session.handle_response_end(now, stream);
        }
    }

    /// HTTP: exchange `stream` failed.
    #[cfg(feature = "http")]
    pub(crate) fn handle_response_error(
        &mut self,
        now: Instant,
        stream: StreamId,
        error: mcp_sansio::TransportError,
    ) {
        if let Engine::Http(session) = self {
            session.handle_response_error(now, stream, error);
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
    driver_waker: Option<Waker>,
    /// Tasks waiting for the handshake to end or for the driver to finish.
    pub(crate) watchers: Vec<Waker>,
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
/// by the driver, an HTTP body) is a section under this lock, so the session is kept before any
/// later section can close the connection, even when the driver handles the handshake's answer
/// and the server's EOF in one poll. After that it costs one comparison per section.
pub(crate) struct StateGuard<'a>(MutexGuard<'a, State>);

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
    pub(crate) fn new(engine: Engine, extras: Extras, clock: Arc<dyn Clock>) -> Arc<Self> {
        Arc::new(Self {
            state: Mutex::new(State {
                engine,
                calls: HashMap::default(),
                driver_waker: None,
                watchers: Vec::new(),
                handles: 0,
                driver: DriverLife::Running,
                server_pid: None,
                era: None,
                server_end: None,
                kept: None,
            }),
            drive: Drive::new(),
            next_token: AtomicU64::new(0),
            clock,
            extras,
        })
    }

    /// A token for a new call (see [`Drive::drive_for`]).
    pub(crate) fn call_token(&self) -> u64 {
        self.next_token.fetch_add(1, Ordering::Relaxed)
    }

    /// Locks the state. A panic elsewhere while locked cannot leave it half-updated in a way
    /// that matters more than stopping would, so poisoning is ignored.
    pub(crate) fn lock(&self) -> StateGuard<'_> {
        StateGuard(self.state.lock().unwrap_or_else(|poisoned| poisoned.into_inner()))
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

    /// Remembers the driver's waker, to wake it after a command queued output.
    pub(crate) fn set_driver_waker(&mut self, waker: &Waker) {
        if !self.driver_waker.as_ref().is_some_and(|w| w.will_wake(waker)) {
            self.driver_waker = Some(waker.clone());
        }
    }

    /// Wakes the driver so it writes what a command queued.
    pub(crate) fn wake_driver(&mut self) {
        if let Some(waker) = &self.driver_waker {
            waker.wake_by_ref();
        }
    }

    /// Wakes every task waiting on readiness or on the driver's end.
    pub(crate) fn wake_watchers(&mut self) {
        for waker in self.watchers.drain(..) {
            waker.wake();
        }
    }

    /// Whether the driver is gone without finishing: calls must fail at once, unsent.
    pub(crate) fn driver_dropped(&self) -> bool {
        self.driver == DriverLife::Dropped
    }

    /// The driver ended (finished, or `how` says it was dropped): wakes every call and every
    /// watcher. A dropped driver also closes the engine, so the status says the connection is
    /// over and nothing can be queued that no one would write.
    pub(crate) fn driver_ended(&mut self, how: DriverLife, now: Instant) {
        self.driver = how;
        if how == DriverLife::Dropped {
            self.engine.transport_error(now, "the driver was dropped");
        }
        self.wake_watchers();
        for slot in self.calls.values_mut() {
            if let Some(waker) = slot.waker.take() {
                waker.wake();
            }
        }
    }

    /// Registers `waker` to be woken on the next readiness or end change.
    pub(crate) fn watch(&mut self, waker: &Waker) {
        if !self.watchers.iter().any(|w| w.will_wake(waker)) {
            self.watchers.push(waker.clone());
        }
    }
}
