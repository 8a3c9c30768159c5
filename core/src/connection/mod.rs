//! [`ClientConnection`]: the client side of one MCP session, as a state machine.
//!
//! This file holds the connection's public surface (getters, inputs, commands, outputs) and the
//! dispatch of what arrives. The parts live beside it, each an `impl ClientConnection` block
//! over its own state:
//! - `pending.rs`: the table of requests awaiting something (ids, wire ids, deadlines);
//! - `retry.rs`: the plain values a request keeps beside its place in the table (what a
//!   2026-07-28 request needs to be sent again, the round of input it gathers, what it asked
//!   of a task); it imports nothing of the connection, so the table depends on no machine;
//! - `handshake.rs`: the phases (discover, initialize, ready, closed) and what the probe's
//!   answers mean;
//! - `incoming.rs`: what arrives, dispatched (responses, notifications, server requests);
//! - `input.rs`: input the server asks of the application in the middle of a request (decoding,
//!   the ids it is handed out under, gathering the answers) and the one budget of everything
//!   the server has open with the application;
//! - `input_rounds.rs`: 2026-07-28 multi round-trip input, version refusals and re-sending;
//! - `tasks.rs`: following tasks (the 2026-07-28 extension and 2025-11-25's), each in one stage;
//! - `hosted_tasks.rs`: the tasks the client hosts for a 2025-11-25 server;
//! - `subscriptions.rs`: the 2026-07-28 listen stream;
//! - `notify.rs`: the client's own notifications (any the version has, and `roots_changed`);
//! - `meta.rs`: `_meta` and params helpers;
//! - `stats.rs`: the counters.

mod handshake;
mod hosted_tasks;
mod incoming;
mod input;
mod input_rounds;
mod meta;
mod notify;
mod pending;
mod retry;
mod stats;
mod subscriptions;
mod tasks;

use std::borrow::Cow;
use std::collections::{BTreeMap, VecDeque};
use std::time::Instant;

use serde::Serialize;
use serde_json::value::RawValue;

use crate::capability;
use crate::config::{ClientConfig, RequestOptions};
use crate::error::UsageError;
use crate::event::{CloseReason, ConnectionRequest, Event, RequestError};
use crate::framing::{self, Frame, Framed, LineFramer};
use crate::jsonrpc::{self, ErrorObject};
use crate::raw_result::ResultBatch;
use crate::schema::{self, CancelledNotificationParams, InitializeResult, Request, ServerCapabilities};
use crate::transmit::{Route, Transmit, TransmitKind};
use crate::transport::{Commands, TransportEvent};
use crate::{ProtocolVersion, RequestId};

use handshake::{Phase, ProbeAnswer, Session};
use meta::{one_line_json, with_meta};
use pending::{CallId, Expiry, Pending, PendingKind, PendingTable, Timing, WireId};
pub use stats::Stats;
use subscriptions::Listen;

/// Where the connection is in its life.
///
/// ```
/// # use std::time::Instant;
/// # use mcp_sansio::schema::Implementation;
/// # use mcp_sansio::{ClientConfig, ClientConnection, Status};
/// let mut conn = ClientConnection::new(ClientConfig::new(Implementation::new("x", "1")), Instant::now());
/// // By default the handshake starts with the 2026-07-28 probe: still `Initializing`.
/// let first = conn.poll_transmit().unwrap();
/// assert_eq!(first.as_request().map(|r| r.method()), Some("server/discover"));
/// assert_eq!(conn.status(), Status::Initializing);
/// ```
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Status {
    /// The handshake is in progress: `server/discover` or `initialize` sent (possibly both, one
    /// after the other, when a dual-era client falls back), waiting for the answer.
    Initializing,
    /// Handshake done: requests flow.
    Ready,
    /// Over, for this reason.
    Closed(CloseReason),
}

/// A server→client request handed to the application and not answered yet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ServerRequestState {
    /// Waiting for the application's answer.
    Open,
    /// The server cancelled it: the answer, when it comes, is not written.
    CancelledByServer,
}

/// The client side of one MCP connection: a deterministic state machine with no I/O.
///
/// # Methods, by kind
/// - **Getters** (`&self`): [`status`](Self::status), [`protocol_version`](Self::protocol_version),
///   [`server_info`](Self::server_info), [`server_capabilities`](Self::server_capabilities),
///   [`instructions`](Self::instructions), [`stats`](Self::stats), [`pending`](Self::pending),
///   [`handshake_completed`](Self::handshake_completed), and for transports
///   [`wire_version`](Self::wire_version) and [`awaits`](Self::awaits).
/// - **Inputs**: [`feed`](Self::feed) (stdio bytes), [`feed_message`](Self::feed_message) (one
///   framed message), [`feed_eof`](Self::feed_eof), [`feed_exit`](Self::feed_exit) (the
///   server process ended), [`transport_error`](Self::transport_error) (the driver's transport
///   failed), [`handle_timeout`](Self::handle_timeout),
///   [`handle_transport`](Self::handle_transport) (what a transport layer learnt).
/// - **Commands**, checked, returning [`UsageError`] when refused (nothing is sent then):
///   [`send`](Self::send) / [`send_request`](Self::send_request), [`notify`](Self::notify),
///   [`respond`](Self::respond), [`cancel`](Self::cancel), [`close`](Self::close).
/// - **Outputs**: [`poll_transmit`](Self::poll_transmit), [`poll_event`](Self::poll_event),
///   [`poll_timeout`](Self::poll_timeout).
///
/// # Driving it
/// After every input or command, a driver: writes every [`Transmit`] from `poll_transmit` (in
/// order), delivers every [`Event`] from `poll_event`, and arms one timer at `poll_timeout`,
/// calling `handle_timeout` when it fires. Early or spurious `handle_timeout` calls are harmless.
/// Once [`Event::Closed`] is delivered, the driver flushes the remaining transmits and closes the
/// transport. The crate docs show the loop.
///
/// # Time
/// Every `now` comes from the driver's clock and must not go backwards. A `now` earlier than
/// one already given is not an error and never panics: deadlines are compared with it as they
/// are, so a clock stepping back only delays what was due. Durations saturate: a timeout of
/// [`Duration::MAX`](std::time::Duration::MAX) is a deadline a century away, not an overflow.
///
/// The connection starts the handshake in [`new`](Self::new): the first transmit is the
/// `server/discover` or `initialize` request. Requests can be sent after [`Event::Ready`].
#[derive(Debug)]
pub struct ClientConnection {
    config: ClientConfig,
    phase: Phase,
    framer: LineFramer,
    /// Every request of ours awaiting something: ids, wire ids, deadlines.
    pending: PendingTable,
    /// Server→client requests handed to the application and not answered yet.
    server_requests: BTreeMap<RequestId, ServerRequestState>,
    transmits: VecDeque<Transmit>,
    events: VecDeque<Event>,
    last_received: Instant,
    /// The latest `now` any input gave: the time of commands that take none (`respond`,
    /// `cancel`), for the deadlines of the requests they make.
    clock: Instant,
    keep_alive_ping: Option<CallId>,
    /// 2026-07-28: the log level sent in every request's `_meta` (`logging/setLevel` is gone).
    log_level: Option<schema::LoggingLevel>,
    /// 2026-07-28: the ids under which input requests were handed to the application as
    /// [`Event::Request`] → (the request they belong to, the server's key).
    inputs: BTreeMap<RequestId, (CallId, String)>,
    /// 2026-07-28: the `subscriptions/listen` stream.
    listen: Listen,
    /// The tasks followed for the application's requests (tasks extension).
    tasks: tasks::Tasks,
    /// The tasks the client hosts for the server (2025-11-25).
    hosted: hosted_tasks::HostedTasks,
    scratch: Vec<u8>,
    /// The small results not handed out yet, which share one buffer once they are.
    results: ResultBatch,
    stats: Stats,
    /// The handshake completed at some point (the connection may have closed since).
    handshake_completed: bool,
    /// The server's stream ended while the `server/discover` probe was out (see
    /// [`ended_on_probe`](ClientConnection::ended_on_probe)).
    ended_on_probe: bool,
}

/// Request `method` of call `call`, framed under wire id `wire`.
fn request_transmit(
    call: CallId,
    wire: WireId,
    method: Cow<'static, str>,
    params: Option<&[u8]>,
    route: Option<Box<Route>>,
) -> Transmit {
    let mut bytes = Vec::with_capacity(64 + method.len() + params.map_or(0, <[u8]>::len));
    jsonrpc::encode_request(&mut bytes, &RequestId::Number(wire.get()), &method, params);
    Transmit::request(bytes, wire.get(), call.0, method, route)
}

impl ClientConnection {
    /// Creates a connection and queues its first request: `initialize`, or `server/discover`
    /// when 2026-07-28 is among the accepted versions (see [`ClientConfig::versions`]).
    pub fn new(config: ClientConfig, now: Instant) -> Self {
        let requested = config.versions.iter().copied().max().unwrap_or(ProtocolVersion::LATEST_LEGACY);
        let mut conn = Self {
            framer: LineFramer::new(config.max_message_size),
            phase: Phase::Initializing { requested },
            pending: PendingTable::default(),
            server_requests: BTreeMap::new(),
            transmits: VecDeque::new(),
            events: VecDeque::new(),
            last_received: now,
            clock: now,
            keep_alive_ping: None,
            log_level: None,
            inputs: BTreeMap::new(),
            listen: Listen::default(),
            tasks: tasks::Tasks::default(),
            hosted: hosted_tasks::HostedTasks::default(),
            scratch: Vec::new(),
            results: ResultBatch::default(),
            stats: Stats::default(),
            handshake_completed: false,
            ended_on_probe: false,
            config,
        };
        conn.start_handshake(now);
        conn
    }

    /// The connection's commands alone, as a transport layer lends them out (see [`Commands`]).
    pub fn commands(&mut self) -> Commands<'_> {
        Commands::new(self)
    }

    // ----- getters -----

    /// Where the connection is in its life.
    pub fn status(&self) -> Status {
        match &self.phase {
            Phase::Initializing { .. } | Phase::Discovering { .. } => Status::Initializing,
            Phase::Ready(_) => Status::Ready,
            Phase::Closed(reason) => Status::Closed(reason.clone()),
        }
    }

    /// Whether the connection is closed.
    pub fn is_closed(&self) -> bool {
        matches!(self.phase, Phase::Closed(_))
    }

    /// Whether the handshake completed, even if the connection closed since: a server may
    /// answer `initialize` and close its end at once, and a driver that looks at
    /// [`status`](Self::status) only after both were handled still knows the handshake
    /// succeeded (what follows fails as closed).
    pub fn handshake_completed(&self) -> bool {
        self.handshake_completed
    }

    /// Whether the connection ended because the server closed its stream (or exited) while the
    /// dual-era `server/discover` probe was out, before any `initialize`: some legacy stdio
    /// servers exit on a method they do not know. Such a server may well work when started
    /// again and sent `initialize` at once (a configuration with only `initialize`-era
    /// versions); mcp-smol's `spawn_stdio` does that, once, and remembers the server as legacy.
    ///
    /// ```
    /// use std::time::Instant;
    /// use mcp_sansio::{ClientConfig, ClientConnection, CloseReason, ServerExit};
    /// use mcp_sansio::schema::Implementation;
    ///
    /// let now = Instant::now();
    /// let mut conn = ClientConnection::new(ClientConfig::new(Implementation::new("app", "1.0")), now);
    /// let _probe = conn.poll_transmit(); // server/discover (the default versions are dual-era)
    /// conn.feed_exit(now, ServerExit::Code(1));
    /// assert!(conn.ended_on_probe());
    /// assert_eq!(conn.status(), mcp_sansio::Status::Closed(CloseReason::Exited(ServerExit::Code(1))));
    /// ```
    pub fn ended_on_probe(&self) -> bool {
        self.ended_on_probe
    }

    /// The negotiated protocol version, once ready.
    pub fn protocol_version(&self) -> Option<ProtocolVersion> {
        self.session().map(|s| s.version)
    }

    /// The version the messages are sent under now, for transports that also carry it outside
    /// the message (HTTP's `MCP-Protocol-Version`): the probed version while `server/discover`
    /// is out, the negotiated one once ready; `None` during `initialize` and once closed.
    pub fn wire_version(&self) -> Option<ProtocolVersion> {
        match &self.phase {
            Phase::Discovering { requested, .. } => Some(*requested),
            Phase::Ready(session) => Some(session.version),
            Phase::Initializing { .. } | Phase::Closed(_) => None,
        }
    }

    /// The server's `serverInfo`, once ready.
    pub fn server_info(&self) -> Option<&schema::Implementation> {
        self.session().and_then(|s| s.server_info.as_ref())
    }

    /// The server's capabilities, once ready.
    pub fn server_capabilities(&self) -> Option<&ServerCapabilities> {
        self.session().map(|s| &s.capabilities)
    }

    /// The server's `instructions`, if it gave any.
    pub fn instructions(&self) -> Option<&str> {
        self.session().and_then(|s| s.instructions.as_deref())
    }

    /// The whole `initialize` result, once ready.
    pub fn initialize_result(&self) -> Option<&InitializeResult> {
        self.session().and_then(|s| s.init.as_ref())
    }

    /// The `server/discover` result, once ready on a 2026-07-28 connection (the latest, when
    /// the application sent `server/discover` again).
    pub fn discover_result(&self) -> Option<&schema::DiscoverResult> {
        self.session().and_then(|s| s.discover.as_ref())
    }

    /// Whether the discover result is still fresh at `now`: its `ttlMs` (absent or negative: 0)
    /// has not passed since it arrived. A stale one is still the best knowledge there is; send
    /// `server/discover` again (allowed on a 2026-07-28 connection) to refresh it, which also
    /// updates the server's capabilities, info and instructions.
    pub fn discover_is_fresh(&self, now: Instant) -> bool {
        self.session().and_then(|s| s.discover_fresh_until).is_some_and(|until| now < until)
    }

    /// The configuration the connection was made with.
    pub fn config(&self) -> &ClientConfig {
        &self.config
    }

    /// Counters of messages seen and discarded.
    pub fn stats(&self) -> Stats {
        self.stats
    }

    /// Bytes of an incomplete incoming line held by the framer (bounded by `max_message_size`).
    pub fn buffered_bytes(&self) -> usize {
        self.framer.buffered()
    }

    /// How many requests (the application's and the engine's own) await something.
    pub fn pending(&self) -> usize {
        self.pending.len()
    }

    /// Whether the application's request `id` (as `send` returned it) is still pending.
    pub fn is_pending(&self, id: &RequestId) -> bool {
        match id {
            RequestId::Number(n) => self.pending.get(CallId(*n)).is_some_and(|p| p.kind == PendingKind::User),
            RequestId::String(_) => false,
        }
    }

    /// Whether a response with this wire id is awaited: a request of any kind (the
    /// application's, the handshake's, a keep-alive `ping`, a listen stream) went out under it
    /// and is not over. A transport asks this to know whether an exchange is still needed.
    pub fn awaits(&self, id: &RequestId) -> bool {
        match id {
            RequestId::Number(n) => WireId::of(*n).is_some_and(|wire| self.pending.awaits(wire)),
            RequestId::String(_) => false,
        }
    }

    /// Whether `id` names a request the application may answer: the server's, or an input
    /// request the engine made. The two share one space of ids, so neither may take one the
    /// other holds.
    fn id_in_use(&self, id: &RequestId) -> bool {
        self.server_requests.contains_key(id) || self.inputs.contains_key(id) || self.hosted.app_id_in_use(id)
    }

    /// The session, or why commands cannot be sent now.
    fn ready_session(&self) -> Result<&Session, UsageError> {
        match &self.phase {
            Phase::Initializing { .. } | Phase::Discovering { .. } => Err(UsageError::NotReady),
            Phase::Closed(reason) => Err(UsageError::Closed(reason.clone())),
            Phase::Ready(session) => Ok(session),
        }
    }

    fn session(&self) -> Option<&Session> {
        match &self.phase {
            Phase::Ready(session) => Some(session),
            _ => None,
        }
    }

    // ----- inputs -----

    /// Feeds bytes read from a byte-stream transport (stdio). Any chunking works.
    pub fn feed(&mut self, now: Instant, bytes: &[u8]) {
        if self.is_closed() {
            return;
        }
        self.stats.bytes_received += bytes.len() as u64;
        self.results.reading(bytes.len());
        let mut framer = std::mem::replace(&mut self.framer, LineFramer::new(0));
        if framer.wants_spare() {
            if let Some(spare) = self.results.reclaim() {
                framer.give_spare(spare);
            }
        }
        framer.feed_owned(bytes, &mut |framed| match framed {
            Framed::Frame(frame) => {
                self.on_frame(now, frame);
                None
            }
            // A line read in several pieces: its buffer may become a large result's.
            Framed::Owned(line) => self.on_owned(now, line),
        });
        self.framer = framer;
        self.pending.check();
    }

    /// Feeds one complete message (an HTTP JSON body, an SSE `data` field): no newline framing.
    pub fn feed_message(&mut self, now: Instant, message: &[u8]) {
        if self.is_closed() {
            return;
        }
        self.stats.bytes_received += message.len() as u64;
        self.results.reading(message.len());
        self.message_in(now, message);
        self.pending.check();
    }

    /// [`feed_message`](Self::feed_message) with a message the transport gives away (a whole
    /// HTTP body, say): a large result is handed out in its buffer instead of a copy of it.
    /// Returns the buffer when nothing kept it.
    pub fn feed_owned_message(&mut self, now: Instant, message: Vec<u8>) -> Option<Vec<u8>> {
        if self.is_closed() {
            return Some(message);
        }
        self.stats.bytes_received += message.len() as u64;
        self.results.reading(message.len());
        let back = if message.len() > self.config.max_message_size {
            self.message_in(now, &message);
            Some(message)
        } else {
            self.on_owned(now, message)
        };
        self.pending.check();
        back
    }

    /// [`feed_owned_message`](Self::feed_owned_message) with a message known to be UTF-8 (an
    /// event's data): it is not checked again.
    #[cfg(feature = "http")]
    pub(crate) fn feed_owned_text(&mut self, now: Instant, message: String) -> Option<String> {
        if self.is_closed() {
            return Some(message);
        }
        self.stats.bytes_received += message.len() as u64;
        self.results.reading(message.len());
        let back = if message.len() > self.config.max_message_size {
            self.message_in(now, message.as_bytes());
            Some(message)
        } else {
            self.on_owned_text(now, message)
        };
        self.pending.check();
        back
    }

    /// A buffer for a whole message of `len` bytes (an HTTP body whose length is declared, or
    /// 0 when it is not): for a large one or one of unknown length, the last large message's
    /// buffer once no result holds it any more.
    #[cfg(feature = "http")]
    pub(crate) fn message_buffer(&mut self, len: usize) -> Vec<u8> {
        // A small message lets the last large one's buffer go (as a short line does on stdio):
        // a connection back to small messages does not hold a large result's worth.
        let spare = self.spare_buffer();
        if len > framing::KEPT_CAPACITY || len == 0 {
            if let Some(buf) = spare.filter(|buf| buf.capacity() >= len) {
                return buf;
            }
        }
        Vec::with_capacity(len)
    }

    /// The last large message's buffer, empty, once no result holds it any more.
    #[cfg(feature = "http")]
    pub(crate) fn spare_buffer(&mut self) -> Option<Vec<u8>> {
        self.results.reclaim()
    }

    /// One whole message, lent: dropped if too large, else decoded.
    fn message_in(&mut self, now: Instant, message: &[u8]) {
        if message.len() > self.config.max_message_size {
            let len = message.len();
            let head = &message[..len.min(framing::HEAD_LEN)];
            let tail = message[len - len.min(framing::TAIL_LEN)..].trim_ascii_end();
            self.on_frame(now, Frame::TooLong { head });
            self.on_frame(now, Frame::Oversized { len, head, tail });
        } else {
            self.on_frame(now, Frame::Message(message));
        }
    }

    /// The peer closed its output: an unterminated last line is still processed, then every
    /// pending request fails and the connection closes with [`CloseReason::Eof`].
    pub fn feed_eof(&mut self, now: Instant) {
        self.end_of_stream(now, CloseReason::Eof);
    }

    /// The server process ended with `exit` (a driver of child processes learns it from the
    /// operating system): like [`feed_eof`](Self::feed_eof), but the connection closes with
    /// [`CloseReason::Exited`], so every pending request and later command says how.
    pub fn feed_exit(&mut self, now: Instant, exit: crate::ServerExit) {
        self.end_of_stream(now, CloseReason::Exited(exit));
    }

    /// The peer's output ended: processes an unterminated last line, then closes for `reason`.
    fn end_of_stream(&mut self, now: Instant, reason: CloseReason) {
        if self.is_closed() {
            return;
        }
        let mut framer = std::mem::replace(&mut self.framer, LineFramer::new(0));
        framer.finish_owned(&mut |framed| match framed {
            Framed::Frame(frame) => {
                self.on_frame(now, frame);
                None
            }
            Framed::Owned(line) => self.on_owned(now, line),
        });
        self.framer = framer;
        self.transmits.clear();
        self.shut(reason);
    }

    /// Processes every deadline at or before `now`. Calls before any deadline do nothing.
    pub fn handle_timeout(&mut self, now: Instant) {
        self.clock = self.clock.max(now);
        while !self.is_closed() {
            let Some((id, pending, expiry)) = self.pending.pop_expired(now) else { break };
            self.stats.timeouts += 1;
            self.on_expired(now, id, pending, expiry);
        }
        if self.keep_alive_at().is_some_and(|at| at <= now) {
            let timing = Timing::fixed(self.config.request_timeout);
            let pending = Pending::new(PendingKind::KeepAlive, now, Some(timing));
            self.keep_alive_ping = Some(self.start_request(pending, Cow::Borrowed("ping"), None, None));
        }
        self.poll_tasks(now);
        if self.listen.again_at.is_some_and(|at| at <= now) && !self.is_closed() {
            self.listen.again_at = None;
            self.update_listen(now);
        }
        self.pending.check();
    }

    /// What a transport layer learnt about the messages it carries (see [`TransportEvent`]).
    pub fn handle_transport(&mut self, now: Instant, event: TransportEvent) {
        self.clock = self.clock.max(now);
        if self.is_closed() {
            return;
        }
        match event {
            TransportEvent::RequestFailed { id: RequestId::Number(wire), error } => {
                if let Some(wire) = WireId::of(wire) {
                    self.fail_request(now, wire, error);
                }
            }
            TransportEvent::ResponseLost { id: RequestId::Number(wire), error } => {
                if let Some(wire) = WireId::of(wire).filter(|&wire| !self.send_again(wire)) {
                    self.fail_request(now, wire, error);
                }
            }
            TransportEvent::Held { id: RequestId::Number(wire) } => {
                if let Some(call) = WireId::of(wire).and_then(|wire| self.pending.owner(wire)) {
                    self.pending.hold(call);
                }
            }
            TransportEvent::Released { id: RequestId::Number(wire) } => {
                if let Some(call) = WireId::of(wire).and_then(|wire| self.pending.owner(wire)) {
                    self.pending.release(call, now);
                }
            }
            TransportEvent::RequestFailed { .. }
            | TransportEvent::ResponseLost { .. }
            | TransportEvent::Held { .. }
            | TransportEvent::Released { .. } => {}
            TransportEvent::Oversized { len } => self.on_frame_oversized(len),
            TransportEvent::Closed { detail } => self.transport_error(detail),
            TransportEvent::ServerNotReading { unwritten, limit } => {
                self.transport_closed(CloseReason::ServerNotReading { unwritten, limit })
            }
        }
        self.pending.check();
    }

    /// The driver's transport failed (a write error, a broken pipe): closes like
    /// [`feed_eof`](Self::feed_eof) but with the driver's explanation, and drops what was
    /// queued (nothing more can be written).
    pub fn transport_error(&mut self, detail: impl Into<String>) {
        self.transport_closed(CloseReason::Transport(detail.into()));
    }

    /// [`transport_error`](Self::transport_error) with a typed reason (the HTTP session's).
    pub(crate) fn transport_closed(&mut self, reason: CloseReason) {
        if !self.is_closed() {
            self.transmits.clear();
            self.shut(reason);
        }
    }

    /// The transport lost request `wire`: the request fails with `error`. Losing `initialize`
    /// or a keep-alive `ping` closes the connection, since nothing can go on without them.
    fn fail_request(&mut self, now: Instant, wire: WireId, error: RequestError) {
        let Some((id, pending)) = self.pending.take_by_wire(wire) else { return };
        if let (RequestError::Unauthorized(error), PendingKind::Initialize) = (&error, pending.kind) {
            // No handshake without authorization, in either era: nothing to fall back to.
            return self.shut(CloseReason::Unauthorized(error.clone()));
        }
        match pending.kind {
            PendingKind::User | PendingKind::Transport => {
                tracing::debug!(id = id.0, %error, "request failed by the transport");
                self.finish(id, pending, Err(error));
            }
            PendingKind::Discover => self.on_probe_answer(now, ProbeAnswer::Failed(error)),
            PendingKind::Listen => self.listen_lost(now, id, error),
            PendingKind::TaskErrand => self.errand_failed(now, id, error),
            PendingKind::Initialize | PendingKind::KeepAlive => {
                let request = if pending.kind == PendingKind::Initialize {
                    ConnectionRequest::Initialize
                } else {
                    ConnectionRequest::KeepAlive
                };
                self.shut(CloseReason::RequestFailed { request, error: Box::new(error) });
            }
        }
    }

    /// A deadline passed for request `id` (already out of the table).
    fn on_expired(&mut self, now: Instant, id: CallId, pending: Pending, expiry: Expiry) {
        match pending.kind {
            PendingKind::Initialize => self.shut(CloseReason::HandshakeTimeout(pending.timeout())),
            PendingKind::Discover => self.discover_timed_out(now, pending.timeout()),
            PendingKind::KeepAlive => self.shut(CloseReason::KeepAliveTimeout(pending.timeout())),
            // Listen streams have no deadline.
            PendingKind::Listen => {}
            PendingKind::TaskErrand => self.errand_failed(now, id, RequestError::Timeout(pending.timeout())),
            PendingKind::User | PendingKind::Transport => {
                let (error, reason) = match expiry {
                    Expiry::Cap(max_total) => {
                        (RequestError::MaxTotalExceeded(max_total), "maximum total time exceeded")
                    }
                    Expiry::Idle(timeout) => (RequestError::Timeout(timeout), "timed out"),
                };
                tracing::debug!(id = id.0, reason, "request failed by deadline");
                if let Some(wire) = pending.wire() {
                    self.send_cancelled(wire, Some(reason));
                }
                self.drop_task_of(now, id);
                self.finish(id, pending, Err(error));
            }
        }
    }

    // ----- commands -----

    /// Sends a typed request. Returns the id that its [`Event::Response`] will carry.
    ///
    /// ```
    /// # use std::time::Instant;
    /// # use mcp_sansio::{ClientConfig, ClientConnection, RequestOptions, UsageError};
    /// # use mcp_sansio::schema::{CallTool, CallToolRequestParams, Implementation};
    /// # let mut conn = ClientConnection::new(ClientConfig::new(Implementation::new("x", "1")), Instant::now());
    /// let params = CallToolRequestParams::new("echo");
    /// // Before the handshake finished, the engine refuses:
    /// let refused = conn.send::<CallTool>(Instant::now(), &params, RequestOptions::default());
    /// assert_eq!(refused, Err(UsageError::NotReady));
    /// ```
    pub fn send<R: Request>(
        &mut self,
        now: Instant,
        params: &R::Params,
        options: RequestOptions,
    ) -> Result<RequestId, UsageError> {
        let mut json = std::mem::take(&mut self.scratch);
        json.clear();
        let serialized = serde_json::to_writer(&mut json, params);
        let result = match serialized {
            Ok(()) => {
                self.send_checked(now, Cow::Borrowed(R::METHOD), Some(&json), options, PendingKind::User)
            }
            Err(e) => Err(UsageError::InvalidParams(e.to_string())),
        };
        self.scratch = json;
        self.pending.check();
        result
    }

    /// Sends a request whose params were serialized beforehand ([`SerializedParams`]): for a
    /// driver that runs the params' `Serialize` impl (the application's code) before it takes
    /// its lock on the connection. The bytes are not parsed again; otherwise as
    /// [`send`](Self::send).
    ///
    /// [`SerializedParams`]: crate::SerializedParams
    pub fn send_serialized(
        &mut self,
        now: Instant,
        method: &'static str,
        params: &crate::SerializedParams,
        options: RequestOptions,
    ) -> Result<RequestId, UsageError> {
        let params = params.one_line();
        let sent = self.send_checked(now, Cow::Borrowed(method), Some(&params), options, PendingKind::User);
        self.pending.check();
        sent
    }

    /// Sends a request with raw JSON params (a JSON object, or `None` for no params).
    ///
    /// Checked first: the params must be valid JSON, the connection ready, and the server must
    /// have declared the capability the method needs (methods the engine does not know are let
    /// through).
    pub fn send_request(
        &mut self,
        now: Instant,
        method: &str,
        params: Option<&[u8]>,
        options: RequestOptions,
    ) -> Result<RequestId, UsageError> {
        let params = params.map(one_line_json).transpose()?;
        let sent =
            self.send_checked(now, meta::method_name(method), params.as_deref(), options, PendingKind::User);
        self.pending.check();
        sent
    }

    /// Sends a request that a transport layer makes for its own needs (an HTTP session fetching
    /// the tool list again to learn new headers). It is checked and sent like
    /// [`send_request`](Self::send_request) and ends in an [`Event::Response`] like it, which the
    /// transport takes for itself; it does not count among the application's requests in
    /// [`Stats`].
    pub fn send_for_transport(
        &mut self,
        now: Instant,
        method: &str,
        params: Option<&[u8]>,
    ) -> Result<RequestId, UsageError> {
        let params = params.map(one_line_json).transpose()?;
        let method = meta::method_name(method);
        let options = RequestOptions::default();
        let sent = self.send_checked(now, method, params.as_deref(), options, PendingKind::Transport);
        self.pending.check();
        sent
    }

    /// [`send_request`](Self::send_request) for params known to be valid JSON.
    fn send_checked(
        &mut self,
        now: Instant,
        method: Cow<'static, str>,
        params: Option<&[u8]>,
        mut options: RequestOptions,
        kind: PendingKind,
    ) -> Result<RequestId, UsageError> {
        self.clock = self.clock.max(now);
        let session = self.ready_session()?;
        let version = session.version;
        if method == "initialize" || (!version.is_modern() && method == "server/discover") {
            return Err(UsageError::ReservedMethod(method.into_owned()));
        }
        if version.is_modern() {
            match handshake::removed_in_modern(&method) {
                Some(handshake::Removed::Gone(replacement)) => {
                    return Err(UsageError::NotInVersion {
                        method: method.into_owned(),
                        version,
                        replacement,
                    });
                }
                Some(handshake::Removed::LogLevel) => return self.set_modern_log_level(now, params),
                None => {}
            }
        }
        if let Err(capability) = capability::check_server(&method, &session.capabilities, version) {
            return Err(UsageError::CapabilityNotSupported { method: method.into_owned(), capability });
        }
        if version.is_modern() && matches!(&*method, "resources/subscribe" | "resources/unsubscribe") {
            return self.modern_subscribe(now, params, method == "resources/subscribe", &options);
        }
        let timing = Timing::for_request(&options, &self.config);
        // The progress token is the request's own id (no second table to map tokens).
        let token = options.progress.then(|| self.pending.next_id());
        let pending = Pending::new(kind, now, Some(timing));
        let id = match self.session().and_then(|s| s.meta.as_ref()) {
            Some(session_meta) => {
                let mut meta = session_meta.clone();
                if let Some(level) = self.log_level {
                    meta.insert(
                        schema::META_LOG_LEVEL.into(),
                        serde_json::to_value(level).unwrap_or_default(),
                    );
                }
                if let Some(extra) = options.meta.take() {
                    meta.extend(extra);
                }
                let params =
                    with_meta(params, token, Some(&meta))?.map_or_else(|| b"{}".to_vec(), Cow::into_owned);
                let route = meta::route_of(&method, &params).map(Box::new);
                let id = self.start_request(pending, method.clone(), Some(&params), route.clone());
                // Kept to send it again: multi round-trip rounds, version refusals, lost streams.
                if let Some(pending) = self.pending.get_mut(id) {
                    let terms = retry::TaskTerms::of(&options, &self.config);
                    pending.retry = Some(Box::new(retry::Retry::new(method, params, route, terms)));
                }
                id
            }
            None => {
                let task = self.experimental_task(&method, params)?;
                let params = with_meta(params, token, options.meta.as_ref())?;
                let id = self.start_request(pending, method, params.as_deref(), None);
                if task {
                    self.augmented(id, retry::TaskTerms::of(&options, &self.config));
                }
                id
            }
        };
        Ok(RequestId::Number(id.0))
    }

    /// Answers a server→client request delivered as [`Event::Request`].
    ///
    /// Answering a request that the server cancelled meanwhile is accepted and writes nothing.
    pub fn respond<T: Serialize + ?Sized>(
        &mut self,
        id: &RequestId,
        outcome: Result<&T, ErrorObject>,
    ) -> Result<(), UsageError> {
        if let Phase::Closed(reason) = &self.phase {
            return Err(UsageError::Closed(reason.clone()));
        }
        if let Some(n) = self.hosted_task_of(id) {
            return self.settle_hosted(n, outcome.map(serde_json::to_value));
        }
        if let Some((owner, key)) = self.inputs.remove(id) {
            let outcome = outcome.map(serde_json::to_value);
            let answered = match self.tasks.follows(owner) {
                true => self.answer_task_input(self.clock, owner, key, outcome),
                false => self.answer_input(owner, key, outcome),
            };
            self.pending.check();
            return answered;
        }
        match self.server_requests.remove(id) {
            None => return Err(UsageError::UnknownServerRequest(id.clone())),
            Some(ServerRequestState::CancelledByServer) => return Ok(()),
            Some(ServerRequestState::Open) => {}
        }
        match outcome {
            Ok(result) => {
                let raw = serde_json::value::to_raw_value(result)
                    .map_err(|e| UsageError::InvalidParams(e.to_string()))?;
                self.queue_response(id, Ok(&raw));
            }
            Err(error) => self.queue_response(id, Err(&error)),
        }
        Ok(())
    }

    /// Cancels a pending request: sends `notifications/cancelled` and reports the request as
    /// [`RequestError::Cancelled`]. A response that still arrives is ignored.
    pub fn cancel(&mut self, id: &RequestId, reason: Option<&str>) -> Result<(), UsageError> {
        if let Phase::Closed(reason) = &self.phase {
            return Err(UsageError::Closed(reason.clone()));
        }
        let call = match id {
            RequestId::Number(n) if self.is_pending(id) => CallId(*n),
            _ => return Err(UsageError::UnknownRequest(id.clone())),
        };
        if let Some(pending) = self.pending.remove(call) {
            if let Some(wire) = pending.wire() {
                self.send_cancelled(wire, reason);
            }
            self.drop_task_of(self.clock, call);
            self.finish(call, pending, Err(RequestError::Cancelled(reason.map(str::to_owned))));
        }
        self.pending.check();
        Ok(())
    }

    /// Closes the connection: every pending request fails with
    /// [`CloseReason::Local`], and [`Event::Closed`] follows. Transmits queued before stay
    /// available so the driver can flush them. Closing twice does nothing.
    pub fn close(&mut self) {
        // A stdio server may wait for its listen stream to end before it exits on EOF.
        self.end_listen();
        self.shut(CloseReason::Local);
    }

    /// The application closes the connection because its own code failed (a token store or
    /// a handler the driver could not go on without): closes with
    /// [`CloseReason::Aborted`] and `detail`, discarding what was not written.
    pub fn abort(&mut self, detail: impl Into<String>) {
        if !self.is_closed() {
            self.transmits.clear();
            self.shut(CloseReason::Aborted(detail.into()));
        }
    }

    // ----- outputs -----

    /// The next message to write, in order.
    pub fn poll_transmit(&mut self) -> Option<Transmit> {
        self.transmits.pop_front()
    }

    /// The next event to deliver, in order.
    #[must_use]
    pub fn poll_event(&mut self) -> Option<Event> {
        self.results.seal(&mut self.events);
        self.events.pop_front()
    }

    /// When [`handle_timeout`](Self::handle_timeout) must be called next; `None` while nothing
    /// waits on a deadline.
    #[must_use]
    pub fn poll_timeout(&self) -> Option<Instant> {
        if self.is_closed() {
            return None;
        }
        let deadlines = [
            self.pending.next_deadline(),
            self.keep_alive_at(),
            self.listen.again_at,
            self.tasks.next_poll(),
        ];
        deadlines.into_iter().flatten().min()
    }

    // ----- internals -----

    /// Files `pending` under a fresh id, queues its request, and returns the id. The table
    /// holds the request before its message exists, so nothing reaches the wire untracked.
    fn start_request(
        &mut self,
        pending: Pending,
        method: Cow<'static, str>,
        params: Option<&[u8]>,
        route: Option<Box<Route>>,
    ) -> CallId {
        if pending.kind == PendingKind::User {
            self.stats.requests_tracked += 1;
        }
        let id = self.pending.start(pending);
        self.queue_request(id, id.first_wire(), method, params, route);
        id
    }

    /// Queues request `method` of call `call` under wire id `wire`.
    fn queue_request(
        &mut self,
        call: CallId,
        wire: WireId,
        method: Cow<'static, str>,
        params: Option<&[u8]>,
        route: Option<Box<Route>>,
    ) {
        self.push_transmit(request_transmit(call, wire, method, params, route));
    }

    fn queue(&mut self, bytes: Vec<u8>, kind: TransmitKind) {
        self.push_transmit(Transmit::new(bytes, kind));
    }

    fn push_transmit(&mut self, transmit: Transmit) {
        self.stats.messages_sent += 1;
        tracing::trace!(message = %String::from_utf8_lossy(transmit.bytes()).trim_end(), "send");
        self.transmits.push_back(transmit);
    }

    fn queue_response(&mut self, id: &RequestId, outcome: Result<&RawValue, &ErrorObject>) {
        let mut bytes = Vec::new();
        jsonrpc::encode_response(&mut bytes, id, outcome);
        self.queue(bytes, TransmitKind::Response { id: id.clone() });
    }

    fn send_cancelled(&mut self, wire: WireId, reason: Option<&str>) {
        let id = RequestId::Number(wire.get());
        let params = CancelledNotificationParams {
            request_id: Some(id.clone()),
            reason: reason.map(str::to_owned),
            meta: None,
        };
        let mut json = Vec::new();
        let _ = serde_json::to_writer(&mut json, &params);
        let mut bytes = Vec::new();
        jsonrpc::encode_notification(&mut bytes, "notifications/cancelled", Some(&json));
        self.queue(bytes, TransmitKind::Cancellation { id });
    }

    /// Reports the outcome of request `id` (already out of the table) and counts it.
    fn finish(&mut self, id: CallId, pending: Pending, result: Result<&str, RequestError>) {
        self.forget_inputs(id);
        self.forget_task(id);
        if !pending.kind.answers_caller() {
            return;
        }
        if pending.kind == PendingKind::User {
            let counter = match &result {
                Ok(_) => &mut self.stats.requests_completed,
                Err(RequestError::Timeout(_) | RequestError::MaxTotalExceeded(_)) => {
                    &mut self.stats.requests_timed_out
                }
                Err(RequestError::Cancelled(_)) => &mut self.stats.requests_cancelled,
                Err(_) => &mut self.stats.requests_failed,
            };
            *counter += 1;
        }
        let result = result.map(|json| self.results.add(json));
        self.events.push_back(Event::Response { id: RequestId::Number(id.0), result });
    }

    /// Fails everything pending and enters the closed phase.
    fn shut(&mut self, reason: CloseReason) {
        if self.is_closed() {
            return;
        }
        tracing::debug!(%reason, "connection closed");
        if matches!(self.phase, Phase::Discovering { .. })
            && matches!(reason, CloseReason::Eof | CloseReason::Exited(_) | CloseReason::Transport(_))
            && self.config.versions.iter().any(|v| !v.is_modern())
        {
            self.ended_on_probe = true;
        }
        self.server_requests.clear();
        self.inputs.clear();
        self.tasks.clear();
        for (id, pending) in self.pending.drain() {
            self.finish(id, pending, Err(RequestError::ConnectionClosed(reason.clone())));
        }
        self.phase = Phase::Closed(reason.clone());
        self.events.push_back(Event::Closed(reason));
    }
}
