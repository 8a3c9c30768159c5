//! [`ClientConnection`]: the client side of one MCP session, as a state machine.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::time::{Duration, Instant};

use serde::Serialize;
use serde_json::value::RawValue;

use crate::capability;
use crate::config::{ClientConfig, RequestOptions};
use crate::error::UsageError;
use crate::event::{CloseReason, Event, RequestError, ServerNotification, ServerRequest};
use crate::framing::{Frame, LineFramer};
use crate::jsonrpc::{self, ErrorObject, InvalidMessage, Message, error_codes};
use crate::schema::SubscriptionFilter;
use crate::schema::{
    self, CancelledNotificationParams, InitializeRequestParams, InitializeResult, Request, ServerCapabilities,
};
use crate::subscriptions::{Listen, Stream, Waiting};
use crate::{ProtocolVersion, RequestId};

/// One whole outgoing message, framed for a byte stream (it ends in `\n`).
#[derive(Debug, Clone, PartialEq, Eq)]
#[must_use = "a transmit must be written to the transport"]
pub struct Transmit {
    bytes: Vec<u8>,
    /// The id, when the message is a request of ours.
    request: Option<i64>,
}

impl Transmit {
    /// The framed bytes, newline included: what a stdio driver writes.
    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// The JSON message without the newline: what an HTTP driver sends as a body.
    pub fn message(&self) -> &[u8] {
        self.bytes.strip_suffix(b"\n").unwrap_or(&self.bytes)
    }

    /// Takes the framed bytes.
    pub fn into_bytes(self) -> Vec<u8> {
        self.bytes
    }

    /// The request id, when the message is a request (its response is awaited); `None` for
    /// notifications and for answers to the server's requests.
    pub fn request_id(&self) -> Option<RequestId> {
        self.request.map(RequestId::Number)
    }

    /// The request id as the engine keeps it.
    pub(crate) fn request(&self) -> Option<i64> {
        self.request
    }
}

/// Where the connection is in its life.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Status {
    /// `initialize` sent, waiting for the result.
    Initializing,
    /// Handshake done: requests flow.
    Ready,
    /// Over, for this reason.
    Closed(CloseReason),
}

/// Counters of what the engine saw and discarded; for diagnostics and tests.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Stats {
    /// Messages received (a batch counts each element).
    pub messages_received: u64,
    /// Bytes received: every byte fed, framing included.
    pub bytes_received: u64,
    /// Messages sent.
    pub messages_sent: u64,
    /// Invalid messages discarded (including oversized ones).
    pub invalid_messages: u64,
    /// Messages discarded because they were not JSON at all (a subset of `invalid_messages`).
    pub parse_errors: u64,
    /// Messages discarded for exceeding `max_message_size`.
    pub oversized_messages: u64,
    /// Responses to ids the engine issued but no longer waits for (timed out, cancelled, answered twice).
    pub late_responses: u64,
    /// Responses to ids the engine never issued.
    pub unknown_responses: u64,
    /// Requests that timed out, the engine's own (`initialize`, keep-alive `ping`) included.
    pub timeouts: u64,
    /// The application's requests: every id handed out by [`ClientConnection::send`] and
    /// [`ClientConnection::send_request`]. Each ends in exactly one of the four outcomes below,
    /// or is still pending.
    pub requests_tracked: u64,
    /// The application's requests answered with a result.
    pub requests_completed: u64,
    /// The application's requests that failed: an error answer, a lost transport, a closed
    /// connection.
    pub requests_failed: u64,
    /// The application's requests that hit their idle timeout or their cap on total time.
    pub requests_timed_out: u64,
    /// The application's requests cancelled with [`ClientConnection::cancel`].
    pub requests_cancelled: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum PendingKind {
    Initialize,
    /// The 2026-07-28 `server/discover` probe.
    Discover,
    KeepAlive,
    User,
    /// A 2026-07-28 `subscriptions/listen` stream: no deadline, no caller.
    Listen,
}

#[derive(Debug)]
struct Pending {
    kind: PendingKind,
    deadline: Instant,
    timeout: Duration,
    max_total: Duration,
    max_total_at: Instant,
    reset_on_progress: bool,
    /// The id the request currently has on the wire: its own id, or the id of its latest
    /// retry after an `input_required` answer (2026-07-28).
    wire: i64,
    /// What a 2026-07-28 request needs to be sent again (a multi round-trip retry, a re-issue
    /// after a broken HTTP stream or a version refusal): the method and the params first sent.
    retry: Option<Box<Retry>>,
    /// Times it was sent again under a new id for a reason other than input (at most
    /// [`MAX_REISSUES`]).
    reissues: u8,
}

/// How often a 2026-07-28 request is sent again after its HTTP response stream broke (a version
/// refusal only sends it again once).
const MAX_REISSUES: u8 = 2;

/// `Pending::wire` while a 2026-07-28 request waits for the application's input: no message of
/// it is in flight (ids are never negative).
const NO_WIRE: i64 = -1;

/// A 2026-07-28 request that may be sent again: with `inputResponses` (multi round-trip), or
/// as it was under a new id.
#[derive(Debug)]
struct Retry {
    method: String,
    params: Vec<u8>,
    rounds: u32,
    /// The round in progress: the opaque state to echo and the answers gathered so far.
    state: Option<Box<RawValue>>,
    waiting: BTreeSet<String>,
    answers: schema::JsonObject,
}

impl Retry {
    /// Whether the method may answer `input_required` (only these three may).
    fn takes_input(&self) -> bool {
        matches!(self.method.as_str(), "tools/call" | "resources/read" | "prompts/get")
    }
}

#[derive(Debug)]
struct Session {
    version: ProtocolVersion,
    capabilities: ServerCapabilities,
    server_info: Option<schema::Implementation>,
    instructions: Option<String>,
    init: Option<InitializeResult>,
    discover: Option<schema::DiscoverResult>,
    /// 2026-07-28: when the discover result stops being fresh (`ttlMs` after it arrived).
    discover_fresh_until: Option<Instant>,
    /// 2026-07-28: the `_meta` every request carries.
    meta: Option<schema::JsonObject>,
}

#[derive(Debug)]
enum Phase {
    /// 2026-07-28: `server/discover` sent (a probe when legacy versions are accepted too).
    Discovering {
        requested: ProtocolVersion,
        retried: bool,
    },
    Initializing {
        requested: ProtocolVersion,
    },
    Ready(Box<Session>),
    Closed(CloseReason),
}

/// The client side of one MCP connection: a deterministic state machine with no I/O.
///
/// # Methods, by kind
/// - **Getters** (`&self`): [`status`](Self::status), [`protocol_version`](Self::protocol_version),
///   [`server_info`](Self::server_info), [`server_capabilities`](Self::server_capabilities),
///   [`instructions`](Self::instructions), [`stats`](Self::stats), [`pending`](Self::pending).
/// - **Inputs**: [`feed`](Self::feed) (stdio bytes), [`feed_message`](Self::feed_message) (one
///   framed message), [`feed_eof`](Self::feed_eof), [`handle_timeout`](Self::handle_timeout).
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
/// The connection starts the `initialize` handshake in [`new`](Self::new): the first transmit is
/// the `initialize` request. Requests can be sent after [`Event::Ready`].
#[derive(Debug)]
pub struct ClientConnection {
    config: ClientConfig,
    phase: Phase,
    framer: LineFramer,
    next_id: i64,
    pending: BTreeMap<i64, Pending>,
    /// `(deadline, id)` of every pending request, so the earliest is found in O(log n).
    deadlines: BTreeSet<(Instant, i64)>,
    /// Server→client requests handed to the application and not answered yet; `true` once the
    /// server cancelled one.
    server_requests: BTreeMap<RequestId, bool>,
    transmits: VecDeque<Transmit>,
    events: VecDeque<Event>,
    last_received: Instant,
    keep_alive_ping: Option<i64>,
    /// 2026-07-28: the log level sent in every request's `_meta` (`logging/setLevel` is gone).
    log_level: Option<schema::LoggingLevel>,
    /// 2026-07-28: the wire ids of multi round-trip retries → the request's own id.
    retries: BTreeMap<i64, i64>,
    /// 2026-07-28: the ids under which input requests were handed to the application as
    /// [`Event::Request`] → (the request's own id, the server's key).
    inputs: BTreeMap<RequestId, (i64, String)>,
    /// 2026-07-28: the `subscriptions/listen` stream.
    listen: Listen,
    scratch: Vec<u8>,
    stats: Stats,
}

impl ClientConnection {
    /// Creates a connection and queues its first request: `initialize`, or `server/discover`
    /// when 2026-07-28 is among the accepted versions (see [`ClientConfig::versions`]).
    pub fn new(config: ClientConfig, now: Instant) -> Self {
        let requested = config.versions.first().copied().unwrap_or(ProtocolVersion::LATEST_LEGACY);
        let mut conn = Self {
            framer: LineFramer::new(config.max_message_size),
            phase: Phase::Initializing { requested },
            next_id: 0,
            pending: BTreeMap::new(),
            deadlines: BTreeSet::new(),
            server_requests: BTreeMap::new(),
            transmits: VecDeque::new(),
            events: VecDeque::new(),
            last_received: now,
            keep_alive_ping: None,
            log_level: None,
            retries: BTreeMap::new(),
            inputs: BTreeMap::new(),
            listen: Listen::default(),
            scratch: Vec::new(),
            stats: Stats::default(),
            config,
        };
        match conn.config.versions.iter().copied().find(|v| v.is_modern()) {
            Some(modern) => conn.start_discover(now, modern, false),
            None => {
                let legacy = conn.config.versions.iter().copied().find(|v| !v.is_modern());
                conn.start_initialize(now, legacy.unwrap_or(ProtocolVersion::LATEST_LEGACY));
            }
        }
        conn
    }

    /// Queues `initialize` for `requested`.
    fn start_initialize(&mut self, now: Instant, requested: ProtocolVersion) {
        self.phase = Phase::Initializing { requested };
        let conn = self;
        let params = InitializeRequestParams {
            protocol_version: requested.as_str().to_owned(),
            capabilities: conn.config.capabilities.clone(),
            client_info: conn.config.client_info.clone(),
            meta: None,
        };
        let timeout = conn.config.handshake_timeout;
        let mut params_json = Vec::new();
        // Plain data structs serialize infallibly into a Vec.
        let _ = serde_json::to_writer(&mut params_json, &params);
        conn.start(now, PendingKind::Initialize, "initialize", Some(&params_json), timeout, timeout, false);
    }

    /// Queues `server/discover` for `requested`: a probe with the (short) discover timeout when
    /// legacy versions are accepted too, else the first request with the handshake timeout.
    fn start_discover(&mut self, now: Instant, requested: ProtocolVersion, retried: bool) {
        self.phase = Phase::Discovering { requested, retried };
        let meta = self.modern_meta(requested);
        let mut params = Vec::new();
        let _ = serde_json::to_writer(&mut params, &serde_json::json!({ "_meta": meta }));
        // The probe never waits longer than the whole handshake may take: a caller who sets a
        // handshake timeout shorter than the discover timeout must not wait for the latter
        // before `initialize` even starts (a silent server then took discover_timeout plus the
        // handshake timeout to fail, with an error naming the handshake timeout).
        let timeout = if self.accepts_legacy() {
            self.config.discover_timeout.min(self.config.handshake_timeout)
        } else {
            self.config.handshake_timeout
        };
        self.start(now, PendingKind::Discover, "server/discover", Some(&params), timeout, timeout, false);
    }

    /// The legacy version to request, in the configuration's order of preference.
    fn preferred_legacy(&self) -> ProtocolVersion {
        self.config
            .versions
            .iter()
            .copied()
            .find(|v| !v.is_modern())
            .unwrap_or(ProtocolVersion::LATEST_LEGACY)
    }

    /// Drops the multi round-trip bookkeeping of request `id` (now finished).
    fn forget_retry(&mut self, id: i64, wire: i64) {
        if wire != id {
            self.retries.remove(&wire);
        }
        if !self.inputs.is_empty() {
            self.inputs.retain(|_, (owner, _)| *owner != id);
        }
    }

    /// Whether request `id` is the legacy `initialize`.
    pub(crate) fn is_initialize(&self, id: i64) -> bool {
        self.pending.get(&id).is_some_and(|p| p.kind == PendingKind::Initialize)
    }

    /// The version a 2026-07-28 message is sent under (the `MCP-Protocol-Version` header over
    /// HTTP): the probed version while discovering, the negotiated one once ready; `None` on a
    /// legacy connection.
    pub(crate) fn modern_version(&self) -> Option<ProtocolVersion> {
        match &self.phase {
            Phase::Discovering { requested, .. } => Some(*requested),
            Phase::Ready(session) if session.version.is_modern() => Some(session.version),
            _ => None,
        }
    }

    /// Whether the configuration accepts an `initialize`-era version.
    fn accepts_legacy(&self) -> bool {
        self.config.versions.iter().any(|v| !v.is_modern())
    }

    /// The `_meta` every 2026-07-28 request carries: version, capabilities, client info.
    fn modern_meta(&self, version: ProtocolVersion) -> schema::JsonObject {
        let mut meta = schema::JsonObject::new();
        meta.insert(schema::META_PROTOCOL_VERSION.into(), version.as_str().into());
        let capabilities = serde_json::to_value(&self.config.capabilities).unwrap_or_default();
        meta.insert(schema::META_CLIENT_CAPABILITIES.into(), capabilities);
        let info = serde_json::to_value(&self.config.client_info).unwrap_or_default();
        meta.insert(schema::META_CLIENT_INFO.into(), info);
        meta
    }

    /// A complete 2026-07-28 request (one JSON line, without the newline) with id `id` and the
    /// connection's `_meta`, for requests the HTTP session makes on its own (a `tools/list`
    /// refresh); `None` unless the connection is ready and modern.
    pub(crate) fn modern_request_body(
        &self,
        id: &str,
        method: &str,
        cursor: Option<&str>,
    ) -> Option<Vec<u8>> {
        let meta = self.session()?.meta.as_ref()?;
        let mut params = schema::JsonObject::new();
        if let Some(cursor) = cursor {
            params.insert("cursor".into(), cursor.into());
        }
        params.insert("_meta".into(), serde_json::Value::Object(meta.clone()));
        let message = serde_json::json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        serde_json::to_vec(&message).ok()
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

    /// The negotiated protocol version, once ready.
    pub fn protocol_version(&self) -> Option<ProtocolVersion> {
        self.session().map(|s| s.version)
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

    /// How many requests (the application's and the engine's own) await a response.
    pub fn pending(&self) -> usize {
        self.pending.len()
    }

    /// Whether the application's request `id` still awaits a response.
    pub fn is_pending(&self, id: &RequestId) -> bool {
        match id {
            RequestId::Number(n) => self.pending.get(n).is_some_and(|p| p.kind == PendingKind::User),
            RequestId::String(_) => false,
        }
    }

    /// Whether a request of any kind (the application's, `initialize`, a keep-alive `ping`)
    /// with this id still awaits its response.
    pub(crate) fn awaits(&self, id: i64) -> bool {
        let own = self.retries.get(&id).copied().unwrap_or(id);
        self.pending.get(&own).is_some_and(|p| p.wire == id)
    }

    /// The transport lost request `id` (an HTTP error status, a stream that ended before the
    /// response): the request fails with `error`. Losing `initialize` or a keep-alive `ping`
    /// closes the connection, since nothing can go on without them.
    pub(crate) fn fail_request(&mut self, now: Instant, wire: i64, error: RequestError) {
        if !self.awaits(wire) {
            return;
        }
        let id = self.retries.remove(&wire).unwrap_or(wire);
        let Some(pending) = self.pending.remove(&id) else { return };
        self.deadlines.remove(&(pending.deadline, id));
        match pending.kind {
            PendingKind::User => {
                tracing::debug!(id, %error, "request failed by the transport");
                self.finish_user(id, Err(error));
            }
            PendingKind::Discover => {
                // No answer that a modern server would give: try the legacy handshake.
                self.not_modern(now, CloseReason::Transport(format!("server/discover failed: {error}")));
            }
            PendingKind::Listen => {
                let refused =
                    matches!(error, RequestError::HttpStatus { status, .. } if (400..500).contains(&status));
                if refused {
                    self.on_listen_answer(now, id, Err(error));
                } else {
                    tracing::debug!(id, %error, "listen stream lost");
                    self.listen.ended(now, id);
                }
            }
            PendingKind::Initialize | PendingKind::KeepAlive => {
                let what =
                    if pending.kind == PendingKind::Initialize { "initialize" } else { "keep-alive ping" };
                self.shut(CloseReason::Transport(format!("{what} failed: {error}")));
            }
        }
    }

    /// A transport dropped a message of `len` bytes (at least) for exceeding the size limit.
    pub(crate) fn report_oversized(&mut self, len: usize) {
        self.on_frame_oversized(len);
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
        let mut framer = std::mem::replace(&mut self.framer, LineFramer::new(0));
        framer.feed(bytes, &mut |frame| self.on_frame(now, frame));
        self.framer = framer;
    }

    /// Feeds one complete message (an HTTP JSON body, an SSE `data` field): no newline framing.
    pub fn feed_message(&mut self, now: Instant, message: &[u8]) {
        if self.is_closed() {
            return;
        }
        self.stats.bytes_received += message.len() as u64;
        if message.len() > self.config.max_message_size {
            self.on_frame(now, Frame::Oversized { len: message.len() });
        } else {
            self.on_frame(now, Frame::Message(message));
        }
    }

    /// The peer closed its output: an unterminated last line is still processed, then every
    /// pending request fails and the connection closes with [`CloseReason::Eof`].
    pub fn feed_eof(&mut self, now: Instant) {
        if self.is_closed() {
            return;
        }
        let mut framer = std::mem::replace(&mut self.framer, LineFramer::new(0));
        framer.finish(&mut |frame| self.on_frame(now, frame));
        self.framer = framer;
        self.transmits.clear();
        self.shut(CloseReason::Eof);
    }

    /// Processes every deadline at or before `now`. Calls before any deadline do nothing.
    pub fn handle_timeout(&mut self, now: Instant) {
        while let Some(&(deadline, id)) = self.deadlines.first() {
            if deadline > now || self.is_closed() {
                break;
            }
            self.deadlines.pop_first();
            let Some(pending) = self.pending.remove(&id) else { continue };
            self.stats.timeouts += 1;
            let by_cap = deadline >= pending.max_total_at;
            match pending.kind {
                PendingKind::Initialize => {
                    return self.shut(CloseReason::HandshakeTimeout(pending.timeout));
                }
                PendingKind::Discover => {
                    // No answer to the probe: a legacy server that ignores unknown requests
                    // before `initialize` (or a modern one too slow for the probe).
                    if let (Phase::Discovering { .. }, true) = (&self.phase, self.accepts_legacy()) {
                        tracing::debug!("no answer to server/discover: falling back to initialize");
                        self.start_initialize(now, self.preferred_legacy());
                        continue;
                    }
                    return self.shut(CloseReason::HandshakeTimeout(pending.timeout));
                }
                PendingKind::KeepAlive => {
                    return self.shut(CloseReason::KeepAliveTimeout(pending.timeout));
                }
                // Listen streams have no deadline.
                PendingKind::Listen => {}
                PendingKind::User => {
                    let (error, reason) = if by_cap {
                        (RequestError::MaxTotalExceeded(pending.max_total), "maximum total time exceeded")
                    } else {
                        (RequestError::Timeout(pending.timeout), "timed out")
                    };
                    tracing::debug!(id, reason, "request failed by deadline");
                    if pending.wire != NO_WIRE {
                        self.send_cancelled(pending.wire, Some(reason));
                    }
                    self.forget_retry(id, pending.wire);
                    self.finish_user(id, Err(error));
                }
            }
        }
        if let (Some(at), true) = (self.keep_alive_at(), self.session().is_some()) {
            if at <= now {
                let timeout = self.config.request_timeout;
                let id = self.start(now, PendingKind::KeepAlive, "ping", None, timeout, timeout, false);
                self.keep_alive_ping = Some(id);
            }
        }
        if self.listen.again_at.is_some_and(|at| at <= now) && !self.is_closed() {
            self.listen.again_at = None;
            self.update_listen(now);
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
            Ok(()) => self.send_checked(now, R::METHOD, Some(&json), options),
            Err(e) => Err(UsageError::InvalidParams(e.to_string())),
        };
        self.scratch = json;
        result
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
        self.send_checked(now, method, params.as_deref(), options)
    }

    /// [`send_request`](Self::send_request) for params known to be valid JSON.
    fn send_checked(
        &mut self,
        now: Instant,
        method: &str,
        params: Option<&[u8]>,
        options: RequestOptions,
    ) -> Result<RequestId, UsageError> {
        let session = self.ready_session()?;
        if method == "initialize" || (!session.version.is_modern() && method == "server/discover") {
            return Err(UsageError::ReservedMethod(method.to_owned()));
        }
        let version = session.version;
        if version.is_modern() {
            match removed_in_modern(method) {
                Some(Removed::Gone(replacement)) => {
                    return Err(UsageError::NotInVersion { method: method.to_owned(), version, replacement });
                }
                Some(Removed::LogLevel) => return self.set_modern_log_level(params),
                None => {}
            }
        }
        if let Err(capability) = capability::check_server(method, &session.capabilities, session.version) {
            return Err(UsageError::CapabilityNotSupported { method: method.to_owned(), capability });
        }
        if version.is_modern() && matches!(method, "resources/subscribe" | "resources/unsubscribe") {
            return self.modern_subscribe(now, params, method == "resources/subscribe", &options);
        }
        let modern_meta = session.meta.clone();
        let id = self.next_id;
        if let Some(mut meta) = modern_meta {
            if let Some(level) = self.log_level {
                meta.insert(schema::META_LOG_LEVEL.into(), serde_json::to_value(level).unwrap_or_default());
            }
            if let Some(extra) = options.meta {
                meta.extend(extra);
            }
            let params =
                with_meta(params, options.progress.then_some(id), Some(&meta))?.map(|p| p.into_owned());
            let params = params.unwrap_or_else(|| b"{}".to_vec());
            let timeout = options.timeout.unwrap_or(self.config.request_timeout);
            let max_total = options.max_total.unwrap_or(self.config.max_total);
            let reset = options.reset_on_progress.unwrap_or(true);
            let id = self.start(now, PendingKind::User, method, Some(&params), timeout, max_total, reset);
            if let Some(pending) = self.pending.get_mut(&id) {
                pending.retry = Some(Box::new(Retry {
                    method: method.to_owned(),
                    params,
                    rounds: 0,
                    state: None,
                    waiting: BTreeSet::new(),
                    answers: schema::JsonObject::new(),
                }));
            }
            return Ok(RequestId::Number(id));
        }
        let params = with_meta(params, options.progress.then_some(id), options.meta.as_ref())?;
        let timeout = options.timeout.unwrap_or(self.config.request_timeout);
        let max_total = options.max_total.unwrap_or(self.config.max_total);
        let reset = options.reset_on_progress.unwrap_or(true);
        let id = self.start(now, PendingKind::User, method, params.as_deref(), timeout, max_total, reset);
        Ok(RequestId::Number(id))
    }

    /// `logging/setLevel` on a 2026-07-28 connection: the level goes into every later
    /// request's `_meta` instead, and the call succeeds at once without a message.
    fn set_modern_log_level(&mut self, params: Option<&[u8]>) -> Result<RequestId, UsageError> {
        let params: schema::SetLevelRequestParams = serde_json::from_slice(params.unwrap_or(b"{}"))
            .map_err(|e| UsageError::InvalidParams(e.to_string()))?;
        self.log_level = Some(params.level);
        let id = self.next_id;
        self.next_id += 1;
        self.stats.requests_tracked += 1;
        self.finish_user(id, Ok(empty_object().to_owned()));
        Ok(RequestId::Number(id))
    }

    /// Sends a notification (for example `notifications/roots/list_changed`).
    pub fn notify(&mut self, method: &str, params: Option<&[u8]>) -> Result<(), UsageError> {
        let version = self.ready_session()?.version;
        if method == "notifications/initialized" {
            return Err(UsageError::ReservedMethod(method.to_owned()));
        }
        if version.is_modern() && method == "notifications/roots/list_changed" {
            // Roots are asked for per request now (multi round-trip input).
            return Err(UsageError::NotInVersion { method: method.to_owned(), version, replacement: None });
        }
        let params = params.map(one_line_json).transpose()?;
        let mut bytes = Vec::new();
        jsonrpc::encode_notification(&mut bytes, method, params.as_deref());
        self.queue(bytes);
        Ok(())
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
        if let Some((owner, key)) = self.inputs.remove(id) {
            return self.answer_input(owner, key, outcome.map(serde_json::to_value));
        }
        let Some(cancelled) = self.server_requests.remove(id) else {
            return Err(UsageError::UnknownServerRequest(id.clone()));
        };
        if cancelled {
            return Ok(());
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
    pub fn cancel(&mut self, now: Instant, id: &RequestId, reason: Option<&str>) -> Result<(), UsageError> {
        let _ = now;
        if let Phase::Closed(reason) = &self.phase {
            return Err(UsageError::Closed(reason.clone()));
        }
        let n = match id {
            RequestId::Number(n) if self.is_pending(id) => *n,
            _ => return Err(UsageError::UnknownRequest(id.clone())),
        };
        let mut wire = n;
        if let Some(pending) = self.pending.remove(&n) {
            self.deadlines.remove(&(pending.deadline, n));
            wire = pending.wire;
            self.forget_retry(n, wire);
        }
        if wire != NO_WIRE {
            self.send_cancelled(wire, reason);
        }
        self.finish_user(n, Err(RequestError::Cancelled(reason.map(str::to_owned))));
        Ok(())
    }

    /// Closes the connection: every pending request fails with
    /// [`CloseReason::Local`], and [`Event::Closed`] follows. Transmits queued before stay
    /// available so the driver can flush them. Closing twice does nothing.
    pub fn close(&mut self, now: Instant) {
        let _ = now;
        self.shut(CloseReason::Local);
    }

    /// The driver's transport failed (a write error, a broken pipe): closes like
    /// [`feed_eof`](Self::feed_eof) but with the driver's explanation.
    pub fn transport_error(&mut self, now: Instant, detail: impl Into<String>) {
        let _ = now;
        if !self.is_closed() {
            self.transmits.clear();
            self.shut(CloseReason::Transport(detail.into()));
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
        self.events.pop_front()
    }

    /// When [`handle_timeout`](Self::handle_timeout) must be called next; `None` while nothing
    /// waits on a deadline.
    #[must_use]
    pub fn poll_timeout(&self) -> Option<Instant> {
        if self.is_closed() {
            return None;
        }
        let request = self.deadlines.first().map(|&(at, _)| at);
        [request, self.keep_alive_at(), self.listen.again_at].into_iter().flatten().min()
    }

    // ----- internals -----

    fn keep_alive_at(&self) -> Option<Instant> {
        match (self.config.keep_alive, self.keep_alive_ping, &self.phase) {
            // 2026-07-28 has no `ping`.
            (Some(interval), None, Phase::Ready(session)) if !session.version.is_modern() => {
                Some(self.last_received + interval)
            }
            _ => None,
        }
    }

    /// Allocates an id, queues the request and arms its deadline.
    #[allow(clippy::too_many_arguments)]
    fn start(
        &mut self,
        now: Instant,
        kind: PendingKind,
        method: &str,
        params: Option<&[u8]>,
        timeout: Duration,
        max_total: Duration,
        reset_on_progress: bool,
    ) -> i64 {
        let id = self.next_id;
        self.next_id += 1;
        let mut bytes = Vec::with_capacity(64 + method.len() + params.map_or(0, <[u8]>::len));
        jsonrpc::encode_request(&mut bytes, &RequestId::Number(id), method, params);
        self.queue_with(bytes, Some(id));
        self.track(now, id, kind, timeout, max_total, reset_on_progress);
        id
    }

    /// Enters request `id` in the pending table and arms its deadline.
    fn track(
        &mut self,
        now: Instant,
        id: i64,
        kind: PendingKind,
        timeout: Duration,
        max_total: Duration,
        reset_on_progress: bool,
    ) {
        if kind == PendingKind::User {
            self.stats.requests_tracked += 1;
        }
        let max_total_at = now + max_total;
        let deadline = (now + timeout).min(max_total_at);
        self.deadlines.insert((deadline, id));
        self.pending.insert(
            id,
            Pending {
                kind,
                deadline,
                timeout,
                max_total,
                max_total_at,
                reset_on_progress,
                wire: id,
                retry: None,
                reissues: 0,
            },
        );
    }

    fn queue(&mut self, bytes: Vec<u8>) {
        self.queue_with(bytes, None);
    }

    fn queue_with(&mut self, bytes: Vec<u8>, request: Option<i64>) {
        self.stats.messages_sent += 1;
        tracing::trace!(message = %String::from_utf8_lossy(&bytes).trim_end(), "send");
        self.transmits.push_back(Transmit { bytes, request });
    }

    fn queue_response(&mut self, id: &RequestId, outcome: Result<&RawValue, &ErrorObject>) {
        let mut bytes = Vec::new();
        jsonrpc::encode_response(&mut bytes, id, outcome);
        self.queue(bytes);
    }

    fn send_cancelled(&mut self, id: i64, reason: Option<&str>) {
        let params = CancelledNotificationParams {
            request_id: Some(RequestId::Number(id)),
            reason: reason.map(str::to_owned),
            meta: None,
        };
        let mut json = Vec::new();
        let _ = serde_json::to_writer(&mut json, &params);
        let mut bytes = Vec::new();
        jsonrpc::encode_notification(&mut bytes, "notifications/cancelled", Some(&json));
        self.queue(bytes);
    }

    /// Fails everything pending and enters the closed phase.
    fn shut(&mut self, reason: CloseReason) {
        if self.is_closed() {
            return;
        }
        tracing::debug!(%reason, "connection closed");
        self.deadlines.clear();
        self.server_requests.clear();
        self.retries.clear();
        self.inputs.clear();
        for (id, pending) in std::mem::take(&mut self.pending) {
            if pending.kind == PendingKind::User {
                self.finish_user(id, Err(RequestError::ConnectionClosed(reason.clone())));
            }
        }
        self.phase = Phase::Closed(reason.clone());
        self.events.push_back(Event::Closed(reason));
    }

    fn on_frame_oversized(&mut self, len: usize) {
        self.stats.oversized_messages += 1;
        self.invalid(InvalidMessage::TooLarge { len, max: self.config.max_message_size });
    }

    fn invalid(&mut self, error: InvalidMessage) {
        tracing::debug!(%error, "invalid message discarded");
        self.stats.invalid_messages += 1;
        if matches!(error, InvalidMessage::Json(_)) {
            self.stats.parse_errors += 1;
        }
        self.events.push_back(Event::InvalidMessage(error));
    }

    fn on_frame(&mut self, now: Instant, frame: Frame<'_>) {
        match frame {
            Frame::Oversized { len } => self.on_frame_oversized(len),
            Frame::Message(bytes) => {
                self.last_received = now;
                tracing::trace!(message = %String::from_utf8_lossy(bytes), "recv");
                jsonrpc::decode(bytes, &mut |message| {
                    if self.is_closed() {
                        return;
                    }
                    self.stats.messages_received += 1;
                    match message {
                        Ok(Message::Response { id, result }) => self.on_response(now, id, result),
                        Ok(Message::Notification { method, params }) => {
                            self.on_notification(now, &method, params)
                        }
                        Ok(Message::Request { id, method, params }) => self.on_request(id, &method, params),
                        Err(error) => self.invalid(error),
                    }
                });
            }
        }
    }

    fn on_response(&mut self, now: Instant, id: RequestId, result: Result<&RawValue, ErrorObject>) {
        let wire = match id {
            RequestId::Number(n) => n,
            RequestId::String(_) => {
                self.stats.unknown_responses += 1;
                return;
            }
        };
        // A multi round-trip retry answers under its own wire id; an earlier round's id is stale.
        let n = if self.retries.is_empty() { wire } else { self.retries.get(&wire).copied().unwrap_or(wire) };
        // One lookup: this runs for every response.
        let pending = match self.pending.entry(n) {
            std::collections::btree_map::Entry::Occupied(entry) if entry.get().wire == wire => {
                Some(entry.remove())
            }
            _ => None,
        };
        let Some(pending) = pending else {
            if (0..self.next_id).contains(&wire) {
                self.stats.late_responses += 1;
            } else {
                self.stats.unknown_responses += 1;
            }
            tracing::debug!(id = wire, "response to no pending request ignored");
            return;
        };
        self.deadlines.remove(&(pending.deadline, n));
        match pending.kind {
            PendingKind::User => {
                let pending = match result {
                    Ok(raw)
                        if pending.retry.as_ref().is_some_and(|r| r.takes_input())
                            && raw.get().contains("\"input_required\"") =>
                    {
                        match self.on_input_required(n, pending, raw) {
                            Some(pending) => pending,
                            None => return,
                        }
                    }
                    Err(error)
                        if error.code == error_codes::UNSUPPORTED_PROTOCOL_VERSION
                            && pending.retry.is_some()
                            && pending.reissues == 0 =>
                    {
                        match self.after_version_refusal(n, pending, &error) {
                            Some(pending) => {
                                return self.finish_failed(n, pending, RequestError::Server(error));
                            }
                            None => return,
                        }
                    }
                    Ok(raw) if pending.retry.as_ref().is_some_and(|r| r.method == "server/discover") => {
                        self.on_rediscover(now, raw);
                        pending
                    }
                    _ => pending,
                };
                self.forget_retry(n, pending.wire);
                let result = result.map(RawValue::to_owned).map_err(RequestError::Server);
                self.finish_user(n, result);
            }
            PendingKind::KeepAlive => self.keep_alive_ping = None,
            PendingKind::Initialize => self.on_initialize_result(result),
            PendingKind::Discover => self.on_discover_result(now, result),
            PendingKind::Listen => self.on_listen_answer(now, n, result.map_err(RequestError::Server)),
        }
    }

    /// A 2026-07-28 `input_required` result for request `n`: hands the input requests to the
    /// application (as [`Event::Request`]s) and retries once they are all answered. Returns the
    /// pending request back when the result is not `input_required` after all.
    fn on_input_required(&mut self, n: i64, mut pending: Pending, raw: &RawValue) -> Option<Pending> {
        #[derive(serde::Deserialize)]
        struct InputRequired<'a> {
            #[serde(rename = "resultType")]
            result_type: Option<&'a str>,
            #[serde(rename = "inputRequests", borrow, default)]
            input_requests: Option<BTreeMap<String, &'a RawValue>>,
            #[serde(rename = "requestState", borrow, default)]
            request_state: Option<&'a RawValue>,
        }
        #[derive(serde::Deserialize)]
        struct Input<'a> {
            method: String,
            #[serde(borrow, default)]
            params: Option<&'a RawValue>,
        }
        let parsed = match serde_json::from_str::<InputRequired<'_>>(raw.get()) {
            Ok(parsed) if parsed.result_type == Some("input_required") => parsed,
            _ => return Some(pending),
        };
        let retry = pending.retry.as_mut()?;
        retry.rounds += 1;
        if retry.rounds > self.config.max_input_rounds {
            let error = RequestError::TooManyInputRounds(self.config.max_input_rounds);
            self.finish_failed(n, pending, error);
            return None;
        }
        retry.state = parsed.request_state.map(RawValue::to_owned);
        retry.answers.clear();
        retry.waiting.clear();
        let mut requests = Vec::new();
        for (key, raw_input) in parsed.input_requests.unwrap_or_default() {
            let input = match serde_json::from_str::<Input<'_>>(raw_input.get()) {
                Ok(input) => input,
                Err(e) => {
                    let error = RequestError::InvalidInputRequest(format!("input request {key:?}: {e}"));
                    self.finish_failed(n, pending, error);
                    return None;
                }
            };
            if !capability::client_declared(&input.method, &self.config.capabilities) {
                let error = RequestError::InvalidInputRequest(format!(
                    "input request {key:?} is {}, a capability the client did not declare",
                    input.method
                ));
                self.finish_failed(n, pending, error);
                return None;
            }
            let request = match input.method.as_str() {
                "roots/list" => Ok(ServerRequest::ListRoots),
                "sampling/createMessage" => decode_params(&input.method, input.params)
                    .map(|p| ServerRequest::CreateMessage(Box::new(p))),
                "elicitation/create" => {
                    decode_params(&input.method, input.params).map(|p| ServerRequest::Elicit(Box::new(p)))
                }
                other => {
                    let error = RequestError::InvalidInputRequest(format!(
                        "input request {key:?}: unknown kind {other}"
                    ));
                    self.finish_failed(n, pending, error);
                    return None;
                }
            };
            match request {
                Ok(request) => requests.push((key, request)),
                Err(e) => {
                    let error = RequestError::InvalidInputRequest(format!("input request {key:?}: {e}"));
                    self.finish_failed(n, pending, error);
                    return None;
                }
            }
        }
        let retry = pending.retry.as_mut()?;
        for (key, request) in requests {
            let id = RequestId::String(format!("input/{n}/{key}"));
            retry.waiting.insert(key.clone());
            self.inputs.insert(id.clone(), (n, key));
            self.events.push_back(Event::Request { id, request });
        }
        let ready = retry.waiting.is_empty();
        // This round is over on the wire: until the retry goes out, nothing is in flight.
        if pending.wire != n {
            self.retries.remove(&pending.wire);
        }
        pending.wire = NO_WIRE;
        // The whole exchange stays under the request's deadline.
        self.deadlines.insert((pending.deadline, n));
        self.pending.insert(n, pending);
        if ready {
            self.send_retry(n);
        }
        None
    }

    /// The application answered input request `key` of request `owner` (2026-07-28).
    fn answer_input(
        &mut self,
        owner: i64,
        key: String,
        outcome: Result<serde_json::Result<serde_json::Value>, ErrorObject>,
    ) -> Result<(), UsageError> {
        let value = match outcome {
            Ok(Ok(value)) => value,
            Ok(Err(e)) => return Err(UsageError::InvalidParams(e.to_string())),
            Err(error) => {
                // No per-input error exists on the wire: the request is abandoned.
                if let Some(pending) = self.pending.remove(&owner) {
                    self.deadlines.remove(&(pending.deadline, owner));
                    self.finish_failed(owner, pending, RequestError::InputRefused(error));
                }
                return Ok(());
            }
        };
        let Some(retry) = self.pending.get_mut(&owner).and_then(|p| p.retry.as_mut()) else { return Ok(()) };
        retry.waiting.remove(&key);
        retry.answers.insert(key, value);
        if retry.waiting.is_empty() {
            self.send_retry(owner);
        }
        Ok(())
    }

    /// Re-sends request `n` with the inputs gathered and the state to echo, under a new id.
    fn send_retry(&mut self, n: i64) {
        let wire = self.next_id;
        let Some(pending) = self.pending.get_mut(&n) else { return };
        let Some(retry) = pending.retry.as_mut() else { return };
        let mut params: schema::JsonObject = serde_json::from_slice(&retry.params).unwrap_or_default();
        if !retry.answers.is_empty() {
            params.insert(
                "inputResponses".into(),
                serde_json::Value::Object(std::mem::take(&mut retry.answers)),
            );
        }
        if let Some(state) = retry.state.take() {
            if let Ok(value) = serde_json::from_str::<serde_json::Value>(state.get()) {
                params.insert("requestState".into(), value);
            }
        }
        let method = retry.method.clone();
        let old = std::mem::replace(&mut pending.wire, wire);
        self.next_id += 1;
        if old != n && old != NO_WIRE {
            self.retries.remove(&old);
        }
        self.retries.insert(wire, n);
        let params = serde_json::to_vec(&params).unwrap_or_else(|_| b"{}".to_vec());
        let mut bytes = Vec::with_capacity(64 + params.len());
        jsonrpc::encode_request(&mut bytes, &RequestId::Number(wire), &method, Some(&params));
        self.queue_with(bytes, Some(wire));
    }

    /// A 2026-07-28 request refused with `-32022`: when the server names another version this
    /// client speaks, the connection moves to it and the request is sent again with it (the
    /// server may have been upgraded under a live connection). Returns the request back when
    /// there is no such version.
    fn after_version_refusal(
        &mut self,
        n: i64,
        mut pending: Pending,
        error: &ErrorObject,
    ) -> Option<Pending> {
        let supported: Vec<ProtocolVersion> =
            offered_versions(error).iter().filter_map(|v| v.parse().ok()).collect();
        let Some(version) = self.mutual_modern(&supported) else { return Some(pending) };
        let meta = self.modern_meta(version);
        let Phase::Ready(session) = &mut self.phase else { return Some(pending) };
        if session.version != version {
            tracing::info!(from = %session.version, to = %version, "the server refused the protocol version; switching");
            session.version = version;
            session.meta = Some(meta);
        }
        let Some(retry) = pending.retry.as_mut() else { return Some(pending) };
        let Ok(mut params) = serde_json::from_slice::<schema::JsonObject>(&retry.params) else {
            return Some(pending);
        };
        if let Some(serde_json::Value::Object(meta)) = params.get_mut("_meta") {
            meta.insert(schema::META_PROTOCOL_VERSION.into(), version.as_str().into());
        }
        match serde_json::to_vec(&params) {
            Ok(params) => retry.params = params,
            Err(_) => return Some(pending),
        }
        pending.reissues += 1;
        self.deadlines.insert((pending.deadline, n));
        self.pending.insert(n, pending);
        self.send_retry(n);
        None
    }

    /// 2026-07-28 over HTTP: the response stream of request `wire` broke before the response;
    /// the request gets a new id, returned, under which the transport sends it again (`None`:
    /// not to be sent again, it was re-issued enough already or is not awaited).
    pub(crate) fn reissue(&mut self, wire: i64) -> Option<i64> {
        if !self.awaits(wire) {
            return None;
        }
        let n = self.retries.get(&wire).copied().unwrap_or(wire);
        let new = self.next_id;
        let pending = self.pending.get_mut(&n)?;
        if pending.kind != PendingKind::User || pending.reissues >= MAX_REISSUES {
            return None;
        }
        pending.reissues += 1;
        pending.wire = new;
        self.next_id += 1;
        if wire != n {
            self.retries.remove(&wire);
        }
        self.retries.insert(new, n);
        Some(new)
    }

    /// Reports the outcome of the application's request `id` and counts it.
    fn finish_user(&mut self, id: i64, result: Result<Box<RawValue>, RequestError>) {
        let counter = match &result {
            Ok(_) => &mut self.stats.requests_completed,
            Err(RequestError::Timeout(_) | RequestError::MaxTotalExceeded(_)) => {
                &mut self.stats.requests_timed_out
            }
            Err(RequestError::Cancelled(_)) => &mut self.stats.requests_cancelled,
            Err(_) => &mut self.stats.requests_failed,
        };
        *counter += 1;
        self.events.push_back(Event::Response { id: RequestId::Number(id), result });
    }

    /// Ends request `n` (already out of the pending table and its deadline set) with `error`.
    fn finish_failed(&mut self, n: i64, pending: Pending, error: RequestError) {
        self.forget_retry(n, pending.wire);
        self.finish_user(n, Err(error));
    }

    fn on_discover_result(&mut self, now: Instant, result: Result<&RawValue, ErrorObject>) {
        let Phase::Discovering { requested, retried } = self.phase else { return };
        match result {
            Ok(raw) => {
                let discover = match serde_json::from_str::<schema::DiscoverResult>(raw.get()) {
                    Ok(discover) => discover,
                    Err(e) => {
                        let reason = CloseReason::InvalidInitializeResult(format!("server/discover: {e}"));
                        return self.not_modern(now, reason);
                    }
                };
                let supported: Vec<ProtocolVersion> =
                    discover.supported_versions.iter().filter_map(|v| v.parse().ok()).collect();
                let version = if discover.supported_versions.is_empty() || supported.contains(&requested) {
                    Some(requested)
                } else {
                    self.mutual_modern(&supported)
                };
                match version {
                    Some(version) => self.ready_modern(now, version, discover),
                    None => self.after_unsupported(now, requested, &discover.supported_versions),
                }
            }
            Err(error) if error.code == error_codes::UNSUPPORTED_PROTOCOL_VERSION => {
                let offered = offered_versions(&error);
                let supported: Vec<ProtocolVersion> = offered.iter().filter_map(|v| v.parse().ok()).collect();
                match self.mutual_modern(&supported) {
                    // Retried once, even with the same version (the server asked for a retry).
                    Some(version) if !retried => self.start_discover(now, version, true),
                    _ => self.after_unsupported(now, requested, &offered),
                }
            }
            // A modern server that refused: not a reason to try the legacy handshake.
            Err(error)
                if error.code == error_codes::HEADER_MISMATCH
                    || error.code == error_codes::MISSING_REQUIRED_CLIENT_CAPABILITY =>
            {
                self.shut(CloseReason::InitializeRefused(error))
            }
            // Anything else: a legacy server (which answers unknown methods as it likes).
            Err(error) => self.not_modern(now, CloseReason::InitializeRefused(error)),
        }
    }

    /// The server is not a modern one: `initialize` if legacy versions are accepted.
    fn not_modern(&mut self, now: Instant, reason: CloseReason) {
        if self.accepts_legacy() {
            tracing::debug!(%reason, "not a 2026-07-28 server: falling back to initialize");
            self.start_initialize(now, self.preferred_legacy());
        } else {
            self.shut(reason);
        }
    }

    /// A modern server that offers no modern version the client accepts.
    fn after_unsupported(&mut self, now: Instant, requested: ProtocolVersion, offered: &[String]) {
        let legacy_offered =
            offered.iter().filter_map(|v| v.parse::<ProtocolVersion>().ok()).any(|v| !v.is_modern());
        if self.accepts_legacy() && (offered.is_empty() || legacy_offered) {
            return self.start_initialize(now, self.preferred_legacy());
        }
        let accepted = self.config.versions.iter().map(|v| v.as_str()).collect::<Vec<_>>().join(", ");
        self.shut(CloseReason::UnsupportedVersion { requested, offered: offered.join(", "), accepted });
    }

    /// The first modern version in the client's order of preference that `supported` has.
    fn mutual_modern(&self, supported: &[ProtocolVersion]) -> Option<ProtocolVersion> {
        self.config.versions.iter().copied().find(|v| v.is_modern() && supported.contains(v))
    }

    fn ready_modern(&mut self, now: Instant, version: ProtocolVersion, discover: schema::DiscoverResult) {
        let session = Session {
            version,
            capabilities: discover.capabilities.clone(),
            server_info: discover.server_info(),
            instructions: discover.instructions.clone(),
            init: None,
            meta: Some(self.modern_meta(version)),
            discover_fresh_until: Some(fresh_until(now, &discover)),
            discover: Some(discover),
        };
        tracing::debug!(%version, "ready (2026-07-28, no initialize)");
        self.phase = Phase::Ready(Box::new(session));
        self.events.push_back(Event::Ready { protocol_version: version });
        self.update_listen(now);
    }

    // ----- 2026-07-28 subscriptions (see `subscriptions.rs`) -----

    /// What a modern connection listens to now: the list changes the server offers (unless
    /// turned off in the configuration) and the subscribed resources.
    fn listen_filter(&self) -> SubscriptionFilter {
        let Some(caps) = self.session().map(|s| &s.capabilities) else {
            return SubscriptionFilter::default();
        };
        let lists = self.config.listen_for_list_changes;
        let offers = |c: Option<&schema::ListChangedCapability>| {
            lists && c.is_some_and(|c| c.list_changed == Some(true))
        };
        let resources = caps.resources.as_ref();
        SubscriptionFilter {
            tools_list_changed: offers(caps.tools.as_ref()),
            prompts_list_changed: offers(caps.prompts.as_ref()),
            resources_list_changed: lists && resources.is_some_and(|r| r.list_changed == Some(true)),
            resource_subscriptions: match resources.is_some_and(|r| r.subscribe == Some(true)) {
                true => self.listen.resources.iter().cloned().collect(),
                false => Vec::new(),
            },
        }
    }

    /// Opens, replaces or ends the listen stream so that it asks for what there is to listen to.
    fn update_listen(&mut self, now: Instant) {
        if !self.session().is_some_and(|s| s.version.is_modern()) {
            return;
        }
        let filter = self.listen_filter();
        if filter.is_empty() {
            if let Some(stream) = self.listen.current.take() {
                self.stop_listen(stream.id);
            }
            if let Some(id) = self.listen.previous.take() {
                self.stop_listen(id);
            }
            self.listen.again_at = None;
            return self.settle_waiting(now, Ok(&SubscriptionFilter::default()));
        }
        if self.listen.refused || self.listen.again_at.is_some() {
            return;
        }
        if let Some(current) = &self.listen.current {
            if current.asked == filter {
                if let Some(honoured) = current.honoured.clone() {
                    self.settle_waiting(now, Ok(&honoured));
                }
                return;
            }
        }
        match self.listen.current.take() {
            // Kept until its replacement is acknowledged, so that no notification is missed.
            Some(old) if old.honoured.is_some() => {
                if let Some(older) = self.listen.previous.replace(old.id) {
                    self.stop_listen(older);
                }
            }
            Some(old) => self.stop_listen(old.id),
            None => {}
        }
        let Some(meta) = self.session().and_then(|s| s.meta.clone()) else { return };
        let params = serde_json::json!({"notifications": &filter, "_meta": meta});
        let Ok(params) = serde_json::to_vec(&params) else { return };
        let timeout = self.config.request_timeout;
        let id = self.start(
            now,
            PendingKind::Listen,
            "subscriptions/listen",
            Some(&params),
            timeout,
            timeout,
            false,
        );
        // A listen stream has no deadline: it lasts until one side ends it.
        if let Some(pending) = self.pending.get(&id) {
            self.deadlines.remove(&(pending.deadline, id));
        }
        tracing::debug!(id, ?filter, "listening");
        self.listen.current = Some(Stream { id, asked: filter, honoured: None });
    }

    /// Ends listen stream `id`: on stdio with `notifications/cancelled`; the HTTP session aborts
    /// the stream instead.
    fn stop_listen(&mut self, id: i64) {
        if self.pending.remove(&id).is_some() {
            self.send_cancelled(id, None);
        }
    }

    /// Completes the `resources/subscribe` and `unsubscribe` calls waiting for a listen stream:
    /// with the filter the server acknowledged, or with why there is no stream.
    fn settle_waiting(&mut self, now: Instant, outcome: Result<&SubscriptionFilter, RequestError>) {
        let mut refused = false;
        for waiting in std::mem::take(&mut self.listen.waiting) {
            let Some(pending) = self.pending.remove(&waiting.id) else { continue };
            self.deadlines.remove(&(pending.deadline, waiting.id));
            let result = match &outcome {
                Err(error) => Err(error.clone()),
                Ok(honoured)
                    if waiting.subscribe && !honoured.resource_subscriptions.contains(&waiting.uri) =>
                {
                    refused |= self.listen.resources.remove(&waiting.uri);
                    Err(RequestError::SubscriptionRefused { uri: waiting.uri })
                }
                Ok(_) => Ok(empty_object().to_owned()),
            };
            self.finish_user(waiting.id, result);
        }
        if refused {
            // Listen again without the resources the server would not follow.
            self.update_listen(now);
        }
    }

    /// `resources/subscribe` or `resources/unsubscribe` on a modern connection: the resource set
    /// of the listen stream changes, and the call completes when the server acknowledges it.
    fn modern_subscribe(
        &mut self,
        now: Instant,
        params: Option<&[u8]>,
        subscribe: bool,
        options: &RequestOptions,
    ) -> Result<RequestId, UsageError> {
        let params: schema::SubscribeRequestParams = serde_json::from_slice(params.unwrap_or(b"{}"))
            .map_err(|e| UsageError::InvalidParams(e.to_string()))?;
        let timeout = options.timeout.unwrap_or(self.config.request_timeout);
        let max_total = options.max_total.unwrap_or(self.config.max_total);
        let id = self.next_id;
        self.next_id += 1;
        self.track(now, id, PendingKind::User, timeout, max_total, false);
        if let Some(pending) = self.pending.get_mut(&id) {
            // Nothing goes on the wire for it: the listen stream carries the change.
            pending.wire = NO_WIRE;
        }
        let uri = params.uri;
        if subscribe {
            self.listen.resources.insert(uri.clone());
        } else {
            self.listen.resources.remove(&uri);
        }
        self.listen.waiting.push(Waiting { id, uri, subscribe });
        // Asked for by the application: worth trying now, even after a refusal or an end.
        self.listen.refused = false;
        self.listen.again_at = None;
        self.update_listen(now);
        Ok(RequestId::Number(id))
    }

    /// The server answered listen stream `id`: a result ends it gracefully, an error refuses it.
    fn on_listen_answer(&mut self, now: Instant, id: i64, result: Result<&RawValue, RequestError>) {
        let current = self.listen.current.as_ref().is_some_and(|s| s.id == id);
        match result {
            Err(error) if current => {
                tracing::warn!(%error, "subscriptions/listen refused: no list-changed or resource notifications");
                self.listen.current = None;
                self.listen.refused = true;
                self.settle_waiting(now, Err(error));
            }
            _ => {
                tracing::debug!(id, "the server ended a listen stream");
                self.listen.ended(now, id);
            }
        }
    }

    /// `notifications/subscriptions/acknowledged`: the stream is up, with what the server honours.
    fn on_acknowledged(&mut self, now: Instant, params: schema::SubscriptionsAcknowledgedParams) {
        let id =
            params.meta.as_ref().and_then(|m| m.get(schema::META_SUBSCRIPTION_ID)).and_then(|v| v.as_i64());
        let Some(current) = self.listen.current.as_mut().filter(|s| Some(s.id) == id) else { return };
        if params.notifications != current.asked {
            tracing::debug!(asked = ?current.asked, honoured = ?params.notifications, "listen stream acknowledged in part");
        }
        current.honoured = Some(params.notifications.clone());
        self.listen.failures = 0;
        if let Some(previous) = self.listen.previous.take() {
            self.stop_listen(previous);
        }
        self.settle_waiting(now, Ok(&params.notifications));
    }

    /// The filter the server acknowledged for the current `subscriptions/listen` stream
    /// (2026-07-28), if one is up.
    pub fn subscription(&self) -> Option<&SubscriptionFilter> {
        self.listen.honoured()
    }

    /// The answer to a `server/discover` the application sent on a ready modern connection: it
    /// replaces what the connection knows of the server.
    fn on_rediscover(&mut self, now: Instant, raw: &RawValue) {
        let Ok(discover) = serde_json::from_str::<schema::DiscoverResult>(raw.get()) else { return };
        let Phase::Ready(session) = &mut self.phase else { return };
        session.capabilities = discover.capabilities.clone();
        session.server_info = discover.server_info().or(session.server_info.take());
        session.instructions = discover.instructions.clone();
        session.discover_fresh_until = Some(fresh_until(now, &discover));
        session.discover = Some(discover);
        // The server may offer other notifications now.
        self.update_listen(now);
    }

    fn on_initialize_result(&mut self, result: Result<&RawValue, ErrorObject>) {
        let Phase::Initializing { requested } = self.phase else { return };
        let init = match result {
            Err(error) => return self.shut(CloseReason::InitializeRefused(error)),
            Ok(raw) => match serde_json::from_str::<InitializeResult>(raw.get()) {
                Ok(init) => init,
                Err(e) => return self.shut(CloseReason::InvalidInitializeResult(e.to_string())),
            },
        };
        let version = match init.protocol_version.parse::<ProtocolVersion>() {
            Ok(v) if self.config.versions.contains(&v) && !v.is_modern() => v,
            _ => {
                let accepted = self.config.versions.iter().map(|v| v.as_str()).collect::<Vec<_>>().join(", ");
                return self.shut(CloseReason::UnsupportedVersion {
                    requested,
                    offered: init.protocol_version,
                    accepted,
                });
            }
        };
        let mut bytes = Vec::new();
        jsonrpc::encode_notification(&mut bytes, "notifications/initialized", None);
        self.queue(bytes);
        tracing::debug!(%version, server = %init.server_info.name, "initialized");
        let session = Session {
            version,
            capabilities: init.capabilities.clone(),
            server_info: Some(init.server_info.clone()),
            instructions: init.instructions.clone(),
            init: Some(init),
            discover: None,
            discover_fresh_until: None,
            meta: None,
        };
        self.phase = Phase::Ready(Box::new(session));
        self.events.push_back(Event::Ready { protocol_version: version });
    }

    fn on_notification(&mut self, now: Instant, method: &str, params: Option<&RawValue>) {
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
                            self.server_requests.insert(id.clone(), true);
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
            "notifications/tools/list_changed" => N::ToolListChanged,
            "notifications/resources/list_changed" => N::ResourceListChanged,
            "notifications/prompts/list_changed" => N::PromptListChanged,
            _ => N::Other { method: method.to_owned(), params: params.map(RawValue::to_owned) },
        };
        self.events.push_back(Event::Notification(notification));
    }

    /// What a modern connection does with a notification before the usual handling: the
    /// listen streams' own notifications are handled here, and those of a stream that is no
    /// longer wanted are dropped. Returns whether the notification goes on.
    fn modern_notification(&mut self, now: Instant, method: &str, params: Option<&RawValue>) -> bool {
        #[derive(serde::Deserialize)]
        struct Meta {
            #[serde(rename = "io.modelcontextprotocol/subscriptionId")]
            subscription: Option<serde_json::Value>,
        }
        #[derive(serde::Deserialize)]
        struct Tagged {
            #[serde(rename = "_meta")]
            meta: Option<Meta>,
            #[serde(rename = "requestId")]
            request_id: Option<serde_json::Value>,
        }
        match method {
            "notifications/subscriptions/acknowledged" => {
                match decode_params::<schema::SubscriptionsAcknowledgedParams>(method, params) {
                    Ok(p) => self.on_acknowledged(now, p),
                    Err(e) => self.invalid(e),
                }
                false
            }
            "notifications/tools/list_changed"
            | "notifications/prompts/list_changed"
            | "notifications/resources/list_changed"
            | "notifications/resources/updated" => {
                let tagged = params.and_then(|p| serde_json::from_str::<Tagged>(p.get()).ok());
                match tagged.and_then(|t| t.meta).and_then(|m| m.subscription) {
                    // Untagged: delivered, as the `initialize` era would.
                    None => true,
                    Some(id) => id.as_i64().is_some_and(|id| self.listen.owns(id)),
                }
            }
            "notifications/cancelled" => {
                // On stdio a server may end a listen stream this way.
                let tagged = params.and_then(|p| serde_json::from_str::<Tagged>(p.get()).ok());
                let id = tagged.and_then(|t| t.request_id).and_then(|id| id.as_i64());
                match id.filter(|&id| self.listen.owns(id)) {
                    Some(id) => {
                        self.pending.remove(&id);
                        self.listen.ended(now, id);
                        false
                    }
                    None => true,
                }
            }
            _ => true,
        }
    }

    fn on_progress(&mut self, now: Instant, params: schema::ProgressNotificationParams) {
        // The engine's progress token for a request is the request's own id.
        let id = match params.progress_token {
            crate::ProgressToken::Number(n) => Some(n),
            crate::ProgressToken::String(_) => None,
        };
        match id.and_then(|id| Some((id, self.pending.get_mut(&id)?))) {
            Some((id, pending)) if pending.kind == PendingKind::User => {
                if pending.reset_on_progress {
                    let deadline = (now + pending.timeout).min(pending.max_total_at);
                    self.deadlines.remove(&(pending.deadline, id));
                    self.deadlines.insert((deadline, id));
                    pending.deadline = deadline;
                }
                self.events.push_back(Event::Progress { id: RequestId::Number(id), params });
            }
            _ => self.events.push_back(Event::Notification(ServerNotification::Progress(params))),
        }
    }

    fn on_request(&mut self, id: RequestId, method: &str, params: Option<&RawValue>) {
        if self.server_requests.contains_key(&id) {
            return self.invalid(InvalidMessage::Envelope("the server reused the id of an open request"));
        }
        if method == "ping" {
            return self.queue_response(&id, Ok(empty_object()));
        }
        if !capability::client_declared(method, &self.config.capabilities) {
            return self.queue_response(&id, Err(&ErrorObject::method_not_found(method)));
        }
        let request = match method {
            "roots/list" => Ok(ServerRequest::ListRoots),
            "sampling/createMessage" => {
                decode_params(method, params).map(|p| ServerRequest::CreateMessage(Box::new(p)))
            }
            "elicitation/create" => decode_params(method, params).map(|p| ServerRequest::Elicit(Box::new(p))),
            _ => return self.queue_response(&id, Err(&ErrorObject::method_not_found(method))),
        };
        match request {
            Ok(request) => {
                self.server_requests.insert(id.clone(), false);
                self.events.push_back(Event::Request { id, request });
            }
            Err(error) => {
                let detail = error.to_string();
                self.invalid(error);
                self.queue_response(&id, Err(&ErrorObject::invalid_params(detail)));
            }
        }
    }
}

/// What a 2026-07-28 connection does with a method that era removed.
enum Removed {
    /// Refused locally, naming the replacement if there is one.
    Gone(Option<&'static str>),
    /// `logging/setLevel`: the level moves into each request's `_meta`.
    LogLevel,
}

fn removed_in_modern(method: &str) -> Option<Removed> {
    match method {
        "ping" => Some(Removed::Gone(Some("any request: every request is answered or times out"))),
        "logging/setLevel" => Some(Removed::LogLevel),
        _ => None,
    }
}

/// The versions a `-32022` error says the server supports (`data.supported`; whatever of it is
/// readable, leniently: the error is acted on even when `data.requested` is missing).
fn offered_versions(error: &ErrorObject) -> Vec<String> {
    let supported = error.data.as_ref().and_then(|d| d.get("supported")).and_then(|s| s.as_array());
    supported.map(|a| a.iter().filter_map(|v| v.as_str().map(str::to_owned)).collect()).unwrap_or_default()
}

/// When a discover result received at `now` stops being fresh.
fn fresh_until(now: Instant, discover: &schema::DiscoverResult) -> Instant {
    let ttl = u64::try_from(discover.ttl_ms.unwrap_or(0)).unwrap_or(0);
    now.checked_add(Duration::from_millis(ttl)).unwrap_or(now)
}

fn empty_object() -> &'static RawValue {
    // A constant, valid JSON text.
    const EMPTY: &str = "{}";
    match serde_json::from_str::<&RawValue>(EMPTY) {
        Ok(raw) => raw,
        Err(_) => unreachable!("\"{{}}\" is valid JSON"),
    }
}

fn decode_params<T: serde::de::DeserializeOwned>(
    method: &str,
    params: Option<&RawValue>,
) -> Result<T, InvalidMessage> {
    let text = params.map_or("{}", RawValue::get);
    serde_json::from_str(text)
        .map_err(|e| InvalidMessage::Params { method: method.to_owned(), detail: e.to_string() })
}

/// Checks that `bytes` hold one JSON value, so that nothing malformed is ever written.
fn check_json(bytes: &[u8]) -> Result<(), UsageError> {
    // JSON text is UTF-8; skipping a string's contents would not check that.
    let text =
        std::str::from_utf8(bytes).map_err(|e| UsageError::InvalidParams(format!("not UTF-8: {e}")))?;
    serde_json::from_str::<serde::de::IgnoredAny>(text)
        .map(|_| ())
        .map_err(|e| UsageError::InvalidParams(e.to_string()))
}

/// Checks that `bytes` is JSON and returns it on one line: a raw line break in valid JSON can
/// only be white space between tokens (inside strings it is escaped), so dropping it keeps the
/// value and the newline framing of stdio intact. Borrowed unless there was one to drop.
fn one_line_json(bytes: &[u8]) -> Result<std::borrow::Cow<'_, [u8]>, UsageError> {
    check_json(bytes)?;
    if memchr::memchr2(b'\n', b'\r', bytes).is_none() {
        return Ok(std::borrow::Cow::Borrowed(bytes));
    }
    Ok(std::borrow::Cow::Owned(bytes.iter().copied().filter(|b| !matches!(b, b'\n' | b'\r')).collect()))
}

/// Returns the params to send, with `_meta.progressToken` and extra `_meta` members merged in.
///
/// Without anything to merge the params go out as given. Merging splices text when the params
/// cannot already hold a `_meta` member, and only otherwise parses them.
fn with_meta<'a>(
    params: Option<&'a [u8]>,
    progress: Option<i64>,
    extra: Option<&schema::JsonObject>,
) -> Result<Option<std::borrow::Cow<'a, [u8]>>, UsageError> {
    use std::borrow::Cow;
    if progress.is_none() && extra.is_none_or(|m| m.is_empty()) {
        return Ok(params.map(Cow::Borrowed));
    }
    let mut meta = extra.cloned().unwrap_or_default();
    if let Some(token) = progress {
        meta.insert("progressToken".into(), token.into());
    }
    let params = params.unwrap_or(b"{}");
    let body = params.trim_ascii();
    if body.first() != Some(&b'{') {
        return Err(UsageError::InvalidParams("params must be a JSON object to carry _meta".into()));
    }
    let contains_meta = params.windows(7).any(|w| w == b"\"_meta\"");
    if !contains_meta {
        let rest = body[1..].trim_ascii_start();
        let mut out = Vec::with_capacity(params.len() + 64);
        out.extend_from_slice(b"{\"_meta\":");
        let _ = serde_json::to_writer(&mut out, &meta);
        if rest.first() != Some(&b'}') {
            out.push(b',');
        }
        out.extend_from_slice(rest);
        return Ok(Some(Cow::Owned(out)));
    }
    let mut object: schema::JsonObject =
        serde_json::from_slice(params).map_err(|e| UsageError::InvalidParams(e.to_string()))?;
    match object.entry("_meta").or_insert_with(|| serde_json::Value::Object(Default::default())) {
        serde_json::Value::Object(existing) => existing.extend(meta),
        _ => return Err(UsageError::InvalidParams("params._meta must be an object".into())),
    }
    serde_json::to_vec(&object)
        .map(|v| Some(Cow::Owned(v)))
        .map_err(|e| UsageError::InvalidParams(e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn meta_is_spliced_or_merged() {
        let got = |p: Option<&[u8]>, t, e: Option<&schema::JsonObject>| {
            with_meta(p, t, e).unwrap().map(|c| String::from_utf8(c.into_owned()).unwrap())
        };
        assert_eq!(got(Some(b"{\"a\":1}"), None, None).as_deref(), Some("{\"a\":1}"));
        assert_eq!(got(None, None, None), None);
        assert_eq!(
            got(Some(b"{\"a\":1}"), Some(4), None).as_deref(),
            Some("{\"_meta\":{\"progressToken\":4},\"a\":1}")
        );
        assert_eq!(got(Some(b" { } "), Some(4), None).as_deref(), Some("{\"_meta\":{\"progressToken\":4}}"));
        assert_eq!(got(None, Some(4), None).as_deref(), Some("{\"_meta\":{\"progressToken\":4}}"));
        let mut extra = schema::JsonObject::new();
        extra.insert("trace".into(), "x".into());
        let merged = got(Some(b"{\"_meta\":{\"k\":true},\"a\":1}"), Some(2), Some(&extra)).unwrap();
        let v: serde_json::Value = serde_json::from_str(&merged).unwrap();
        assert_eq!(v, serde_json::json!({"_meta": {"k": true, "progressToken": 2, "trace": "x"}, "a": 1}));
        assert!(with_meta(Some(b"[1]"), Some(1), None).is_err());
    }
}
