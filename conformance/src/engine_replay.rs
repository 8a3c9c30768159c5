//! Replays a recorded trace against the engine, client side: the recorded *server* side is fed
//! into a [`ClientConnection`] on simulated time, and what the engine transmits is checked
//! against the recorded *client* side.
//!
//! The trace's client side is normally our own client, recorded with `mcp-conformance record`;
//! the replay then says whether today's engine still writes what it wrote then. A trace
//! recorded with another client says how far our engine's wire behaviour is from that client's.
//!
//! # How the replay runs
//!
//! - **Configuration** ([`config_from_trace`]): `clientInfo` and capabilities are taken from
//!   the first client request (`initialize` params, or the `_meta` of a 2026-07-28
//!   `server/discover`), so that what the recorded client declared compares equal. Versions:
//!   an `initialize` trace accepts the version the client requested, then the one the trace
//!   header says was negotiated (when it differs); a `server/discover` trace accepts the probed
//!   version only; a `server/discover` followed by `initialize` (a dual-era probe that fell
//!   back) accepts the probed version, then the version the `initialize` requested, then the
//!   other `initialize`-era versions newest first. When the recorded probe got no answer before
//!   the client fell back, the probe's timeout is the time it waited. A 2026-07-28 trace listens
//!   for list changes only if the recorded client asked for any in a `subscriptions/listen`.
//!   Every timeout is [`GENEROUS_TIMEOUT`], except where the trace shows one (below).
//!   [`replay_against_engine_with`] takes a configuration of the caller's instead.
//! - **Time**: the connection is made at the time of the first client entry, and each entry is
//!   processed at `epoch + ms` (never earlier than the entry before). Before each entry,
//!   `handle_timeout` runs if a deadline has passed.
//! - **Server entries** are fed with `feed_message`: JSON messages with their ids rewritten into
//!   the engine's (see *Normalisation*), `raw` lines verbatim (blank ones are skipped). HTTP
//!   entries without a message are skipped.
//! - **Client entries** are compared with the engine's next queued transmit when it matches:
//!   that is what the engine does on its own (`initialize`, `notifications/initialized`, a
//!   `server/discover` probe, a `ping` answer, the refusal of a request for an undeclared
//!   capability, a cancellation on timeout, a `subscriptions/listen` stream). Otherwise the entry
//!   is replayed as the API call it implies, and the transmit that call produced is compared:
//!   - a request: `send_request` with the recorded params, minus `_meta.progressToken` (whose
//!     presence sets [`RequestOptions::progress`]) and, on a 2026-07-28 connection, minus the
//!     `_meta` members the engine adds itself (`io.modelcontextprotocol/protocolVersion`,
//!     `…/clientCapabilities`, `…/clientInfo`, and `…/logLevel`, replayed as a
//!     `logging/setLevel` call when it changes); an emptied `_meta` is dropped. If the client
//!     later cancels the request with reason `timed out` (before its result arrives, or within
//!     the same millisecond), the request's idle timeout is the time between its last activity
//!     (the request, or the last progress notification for its token) and the cancellation, so
//!     that the engine times out on its own at that moment; with reason `maximum total time
//!     exceeded`, its total cap is the time since the request.
//!   - a 2026-07-28 retry carrying `inputResponses`: `respond` to each input request the engine
//!     handed out, with the recorded answer under its key.
//!   - `notifications/cancelled`: `cancel` of the request the recorded `requestId` stands for,
//!     with the recorded reason.
//!   - a 2026-07-28 `subscriptions/listen` (or the cancellation of one) that the engine did not
//!     send on its own: `resources/subscribe` and `resources/unsubscribe` calls for the URIs that
//!     the next recorded `subscriptions/listen` adds to or drops from the subscribed set; the
//!     cancellation of one as the client's last message: `close`, which ends the stream first.
//!   - another notification: `notify`.
//!   - a response to an open server request: `respond` with the recorded `result` or `error`.
//!
//!   `initialize`, `notifications/initialized`, a `server/discover` before the session is
//!   ready, and answers to server requests the engine answers itself are never replayed as
//!   calls. When the engine queued such a message behind others, those others are reported
//!   (as messages the recorded client did not send) and the message matches; when it did not
//!   queue it at all, its next transmit is reported against it. An entry that the engine
//!   refuses to replay (its [`UsageError`](mcp_sansio::UsageError) is in the report) or that
//!   produces no transmit is a mismatch; a refused entry is compared with the engine's next
//!   transmit when that is of the same kind (same method, or an answer to the same id).
//! - **At the end**, transmits the engine queued that the recorded client never sent are
//!   mismatches.
//!
//! A replayed call may overtake transmits the engine queued earlier on its own: a client writes
//! its requests while server messages are in flight, so the recording may show a request before
//! the answer to a server `ping` that the engine queued when it read the `ping`. Those queued
//! transmits stay in order and are compared with the following client entries.
//!
//! # Normalisation
//!
//! Messages are compared as parsed JSON values (object member order does not matter), after
//! these rewrites, applied to the recorded message and the engine's alike unless said otherwise:
//!
//! 1. Every object member named `timestamp`, at any depth, is removed.
//! 2. `params.clientInfo.version` (in `initialize`) and the `version` member of
//!    `params._meta["io.modelcontextprotocol/clientInfo"]` (in 2026-07-28 requests) are
//!    replaced by the placeholder `"(normalised)"` where present; whether they are present
//!    still counts.
//! 3. Request ids: the engine numbers its requests itself (0, 1, 2, …), so its ids and the
//!    recorded ones are compared up to a consistent renaming. Each request the engine sends is
//!    paired with the recorded request it is compared with; the first pairing of an engine id
//!    and a recorded id, neither paired yet, makes them stand for each other for the rest of
//!    the replay. In the engine's messages, the `id` of a request and the `params.requestId` of
//!    a `notifications/cancelled` are replaced by the recorded id paired with them; an id
//!    paired with another one (the recorded client reused an id) is left as it is, so the
//!    difference shows.
//! 4. Progress tokens: `params._meta.progressToken` of the engine's requests is renamed the same
//!    way, through pairs of its own (a recorded client may use any token; the engine uses the
//!    request's id).
//! 5. The ids of answers to server requests are the server's ids on both sides: never rewritten.
//!
//! In the other direction, recorded server messages are rewritten into the engine's ids before
//! they are fed: the `id` of a response, the `progressToken` of `notifications/progress`, the
//! `requestId` of a server `notifications/cancelled` that names a client request, and
//! `params._meta["io.modelcontextprotocol/subscriptionId"]`. A response to a recorded id that is
//! paired with nothing is fed unchanged, unless its number is one of the engine's ids, in which
//! case its id becomes the string `"unpaired:<id>"` so that it cannot answer the wrong request.
//!
//! # HTTP traces
//!
//! The JSON-RPC messages of an HTTP trace are replayed through [`ClientConnection`] the same
//! way; HTTP-only entries (exchanges without a message) are skipped. On a 2026-07-28 connection
//! the engine's notifications are dropped, as the HTTP session does (a request is cancelled by
//! closing its stream there). What is HTTP-level is not part of the engine replay: headers,
//! session ids, status codes, and the HTTP session's own recoveries (re-initialising an expired
//! session, sending a request again after its stream broke, the `tools/list` refresh it makes by
//! itself) show up as mismatches.
//!
//! ```
//! use mcp_conformance::engine_replay::replay_against_engine;
//! use mcp_conformance::trace::Trace;
//!
//! let trace = Trace::parse(concat!(
//!     r#"{"mcpTrace":1,"transport":"stdio","server":{},"protocolVersion":"2025-11-25","recordedAt":"x","recordedWith":"hand"}"#, "\n",
//!     r#"{"dir":"client","ms":0,"msg":{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"app","version":"1.0"}}}}"#, "\n",
//!     r#"{"dir":"server","ms":3,"msg":{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"s","version":"1"}}}}"#, "\n",
//!     r#"{"dir":"client","ms":3,"msg":{"jsonrpc":"2.0","method":"notifications/initialized"}}"#, "\n",
//!     r#"{"dir":"client","ms":5,"msg":{"jsonrpc":"2.0","id":1,"method":"tools/list"}}"#, "\n",
//! ))
//! .unwrap();
//! let report = replay_against_engine(&trace);
//! assert!(report.is_ok(), "{report}");
//! assert_eq!(report.matched, 3);
//! ```

use std::collections::{BTreeSet, HashMap, VecDeque};
use std::fmt;
use std::time::{Duration, Instant};

use mcp_sansio::schema::{
    ClientCapabilities, Implementation, META_CLIENT_CAPABILITIES, META_CLIENT_INFO, META_LOG_LEVEL,
    META_PROTOCOL_VERSION, META_SUBSCRIPTION_ID,
};
use mcp_sansio::{
    ClientConfig, ClientConnection, CloseReason, ErrorObject, Event, ProtocolVersion, RequestId,
    RequestOptions, Status,
};
use serde_json::{Map, Value, json};

use crate::trace::{Direction, Payload, Trace, TraceEntry, Transport};

/// The timeouts of a replay where the trace shows none: a year, so that no deadline of the
/// engine passes during a replay unless the trace says it did.
pub const GENEROUS_TIMEOUT: Duration = Duration::from_secs(365 * 24 * 3600);

/// What replaces `clientInfo.version` on both sides before comparing.
pub const VERSION_PLACEHOLDER: &str = "(normalised)";

/// How many mismatches [`EngineReplayReport`]'s `Display` shows in full.
const SHOWN: usize = 10;

/// How many characters of a message a mismatch's `Display` shows.
const SHOWN_CHARS: usize = 2000;

/// One place where the engine did not do what the recorded client did.
#[derive(Debug, Clone, PartialEq)]
pub struct Mismatch {
    /// The 1-based position of the client entry in [`Trace::entries`]; 0 for a message the
    /// engine sent that no entry accounts for (found at the end). In a trace file without
    /// comment or blank lines, the entry's file line is `line + 1` (the header is line 1).
    pub line: usize,
    /// The entry's `ms` (for a message found at the end, the last entry's).
    pub ms: u64,
    /// What the recorded client sent, normalised; `None` when the engine sent something the
    /// recorded client did not.
    pub expected: Option<Value>,
    /// What the engine sent instead, normalised; `None` when it sent nothing.
    pub actual: Option<Value>,
    /// The JSON pointer of the first difference (`/params/name`); empty when one side is
    /// missing or the messages differ as a whole.
    pub path: String,
    /// What happened, in words.
    pub detail: String,
}

impl fmt::Display for Mismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.line {
            0 => write!(f, "after the last entry: {}", self.detail)?,
            line => write!(f, "entry {line} (client, {} ms): {}", self.ms, self.detail)?,
        }
        if !self.path.is_empty() {
            write!(f, "\n    at:       {}", self.path)?;
        }
        let show = |value: &Option<Value>| value.as_ref().map_or_else(|| "(nothing)".to_owned(), compact);
        write!(f, "\n    expected: {}", show(&self.expected))?;
        write!(f, "\n    actual:   {}", show(&self.actual))
    }
}

/// The outcome of [`replay_against_engine`].
#[derive(Debug, Clone, Default, PartialEq)]
pub struct EngineReplayReport {
    /// Every difference, in trace order.
    pub mismatches: Vec<Mismatch>,
    /// Client entries the engine's transmits matched.
    pub matched: usize,
    /// Server entries fed into the engine.
    pub fed: usize,
    /// Entries skipped: HTTP exchanges without a message, blank `raw` lines.
    pub skipped: usize,
}

impl EngineReplayReport {
    /// Whether the engine sent exactly what the recorded client sent, modulo normalisation.
    pub fn is_ok(&self) -> bool {
        self.mismatches.is_empty()
    }
}

impl fmt::Display for EngineReplayReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "engine replay: {} client message(s) matched, {} server entr{} fed, {} skipped",
            self.matched,
            self.fed,
            if self.fed == 1 { "y" } else { "ies" },
            self.skipped
        )?;
        if self.mismatches.is_empty() {
            return f.write_str("; no mismatch");
        }
        write!(f, "; {} mismatch(es):", self.mismatches.len())?;
        for mismatch in self.mismatches.iter().take(SHOWN) {
            write!(f, "\n- {mismatch}")?;
        }
        if self.mismatches.len() > SHOWN {
            write!(f, "\n… and {} more", self.mismatches.len() - SHOWN)?;
        }
        Ok(())
    }
}

/// Replays `trace` against the engine configured by [`config_from_trace`] (see the module
/// docs). Never panics: whatever a hand-edited trace says ends up as mismatches.
pub fn replay_against_engine(trace: &Trace) -> EngineReplayReport {
    replay_against_engine_with(trace, config_from_trace(trace))
}

/// Replays `trace` against an engine made with `config`: for instance an application's own
/// configuration, to check that it still produces a recorded session.
pub fn replay_against_engine_with(trace: &Trace, config: ClientConfig) -> EngineReplayReport {
    Replay::new(trace, config).run()
}

/// The client configuration that reproduces the recorded client's handshake (see the module
/// docs): its `clientInfo`, capabilities and versions, and [`GENEROUS_TIMEOUT`] everywhere.
pub fn config_from_trace(trace: &Trace) -> ClientConfig {
    let client: Vec<(&TraceEntry, Value)> = trace
        .entries
        .iter()
        .filter(|e| e.dir == Direction::Client)
        .filter_map(|e| Some((e, e.value()?)))
        .collect();
    let requests: Vec<&(&TraceEntry, Value)> = client.iter().filter(|(_, v)| is_request(v)).collect();
    let header_version =
        trace.header.protocol_version.as_deref().and_then(|v| v.parse::<ProtocolVersion>().ok());
    let mut info = Implementation::new("mcp-conformance-replay", env!("CARGO_PKG_VERSION"));
    let mut capabilities = ClientCapabilities::default();
    let mut versions: Vec<ProtocolVersion> = header_version.into_iter().collect();
    let mut discover_timeout = None;
    let first = requests.first().map(|(entry, v)| (*entry, v, method_of(v)));
    match first {
        Some((_, first, Some("initialize"))) => {
            let params = first.get("params");
            if let Some(found) = params.and_then(|p| p.get("clientInfo")).and_then(decode) {
                info = found;
            }
            if let Some(found) = params.and_then(|p| p.get("capabilities")).and_then(decode) {
                capabilities = found;
            }
            let requested = params.and_then(|p| p.get("protocolVersion")).and_then(version_of);
            versions = requested.into_iter().chain(header_version).collect();
            versions.dedup();
        }
        Some((probe, first, Some("server/discover"))) => {
            let meta = first.pointer("/params/_meta");
            if let Some(found) = meta.and_then(|m| m.get(META_CLIENT_INFO)).and_then(decode) {
                info = found;
            }
            if let Some(found) = meta.and_then(|m| m.get(META_CLIENT_CAPABILITIES)).and_then(decode) {
                capabilities = found;
            }
            let probed = meta.and_then(|m| m.get(META_PROTOCOL_VERSION)).and_then(version_of);
            let fallback = requests.iter().find(|(_, v)| method_of(v) == Some("initialize"));
            versions = probed.into_iter().collect();
            if let Some((init, init_value)) = fallback {
                let legacy = init_value.pointer("/params/protocolVersion").and_then(version_of);
                if versions.is_empty() {
                    versions.push(ProtocolVersion::DUAL_ERA[0]);
                }
                versions.extend(legacy);
                versions.extend(ProtocolVersion::DUAL_ERA.iter().copied().filter(|v| !v.is_modern()));
                let mut seen = BTreeSet::new();
                versions.retain(|v| seen.insert(*v));
                let probe_id = first.get("id");
                let answered = trace.entries.iter().any(|e| {
                    e.dir == Direction::Server
                        && e.ms <= init.ms
                        && e.value().is_some_and(|v| is_response(&v) && v.get("id") == probe_id)
                });
                discover_timeout = Some(match answered {
                    true => GENEROUS_TIMEOUT,
                    false => Duration::from_millis(init.ms.saturating_sub(probe.ms)),
                });
            }
        }
        _ => {}
    }
    let listens = client.iter().any(|(_, v)| {
        method_of(v) == Some("subscriptions/listen")
            && ["toolsListChanged", "promptsListChanged", "resourcesListChanged"].iter().any(|k| {
                v.pointer("/params/notifications").and_then(|n| n.get(k)) == Some(&Value::Bool(true))
            })
    });
    let mut config = ClientConfig::new(info)
        .with_capabilities(capabilities)
        .with_versions(&versions)
        .with_request_timeout(GENEROUS_TIMEOUT)
        .with_max_total(GENEROUS_TIMEOUT)
        .with_handshake_timeout(GENEROUS_TIMEOUT)
        .with_discover_timeout(discover_timeout.unwrap_or(GENEROUS_TIMEOUT))
        .with_listen_for_list_changes(listens);
    config.keep_alive = None;
    config
}

/// What replaying a client entry as an API call came to.
enum Outcome {
    /// The call was made; the hint says why it may have written nothing.
    Acted(Option<String>),
    /// The engine refused the call, or there was no call to make: why.
    Refused(String),
    /// The message is one the engine sends on its own only: why it is not a call.
    NotACall(String),
}

/// Pairs of engine ids (or tokens) and recorded ones, standing for each other.
#[derive(Default)]
struct Pairs {
    engine: HashMap<i64, Value>,
    recorded: HashMap<String, i64>,
}

impl Pairs {
    fn recorded_for(&self, engine: i64) -> Option<&Value> {
        self.engine.get(&engine)
    }

    fn engine_for(&self, recorded: &Value) -> Option<i64> {
        self.recorded.get(&recorded.to_string()).copied()
    }

    fn pair(&mut self, engine: i64, recorded: Value) {
        if !self.engine.contains_key(&engine) && self.engine_for(&recorded).is_none() {
            self.recorded.insert(recorded.to_string(), engine);
            self.engine.insert(engine, recorded);
        }
    }
}

/// Pairs a comparison would make, made once the messages are paired.
#[derive(Default)]
struct Tentative {
    id: Option<(i64, Value)>,
    token: Option<(i64, Value)>,
}

/// The state of one replay.
struct Replay<'t> {
    entries: &'t [TraceEntry],
    /// Each entry's message, parsed once.
    values: Vec<Option<Value>>,
    http: bool,
    conn: ClientConnection,
    epoch: Instant,
    now: Instant,
    /// The engine's transmits not compared yet, parsed.
    queue: VecDeque<Value>,
    ids: Pairs,
    tokens: Pairs,
    /// The method of each engine request that was paired.
    methods: HashMap<i64, String>,
    /// Open server→client requests, by the id's JSON text: the id, and whether the server
    /// cancelled it.
    server_requests: HashMap<String, (RequestId, bool)>,
    /// 2026-07-28 input requests handed out and not answered: the id and the server's key.
    inputs: Vec<(RequestId, String)>,
    /// 2026-07-28 resources subscribed with `resources/subscribe`.
    subscribed: BTreeSet<String>,
    /// 2026-07-28 log level set with `logging/setLevel`.
    log_level: Option<Value>,
    closed: Option<CloseReason>,
    report: EngineReplayReport,
}

impl<'t> Replay<'t> {
    fn new(trace: &'t Trace, config: ClientConfig) -> Self {
        let epoch = Instant::now();
        let start_ms = trace.entries.iter().find(|e| e.dir == Direction::Client).map_or(0, |e| e.ms);
        let now = epoch.checked_add(Duration::from_millis(start_ms)).unwrap_or(epoch);
        let mut replay = Self {
            entries: &trace.entries,
            values: trace.entries.iter().map(TraceEntry::value).collect(),
            http: trace.header.transport == Transport::Http,
            conn: ClientConnection::new(config, now),
            epoch,
            now,
            queue: VecDeque::new(),
            ids: Pairs::default(),
            tokens: Pairs::default(),
            methods: HashMap::new(),
            server_requests: HashMap::new(),
            inputs: Vec::new(),
            subscribed: BTreeSet::new(),
            log_level: None,
            closed: None,
            report: EngineReplayReport::default(),
        };
        replay.drain();
        replay
    }

    fn run(mut self) -> EngineReplayReport {
        let entries = self.entries;
        for (index, entry) in entries.iter().enumerate() {
            self.advance(entry.ms);
            match entry.dir {
                Direction::Server => self.server(entry),
                Direction::Client => self.client(index, entry),
            }
        }
        let last_ms = entries.last().map_or(0, |e| e.ms);
        while let Some(sent) = self.queue.pop_front() {
            let (actual, _) = self.rewrite_sent(&sent, None);
            let detail = "the engine sent this, which the recorded client did not".to_owned();
            self.mismatch(0, last_ms, None, Some(actual), String::new(), detail);
        }
        self.report
    }

    fn is_modern(&self) -> bool {
        self.conn.protocol_version().is_some_and(ProtocolVersion::is_modern)
    }

    /// Moves the clock to `ms` (never backwards) and processes the deadlines that passed.
    fn advance(&mut self, ms: u64) {
        let at = self.epoch.checked_add(Duration::from_millis(ms)).unwrap_or(self.now);
        self.now = self.now.max(at);
        if self.conn.poll_timeout().is_some_and(|deadline| deadline <= self.now) {
            self.conn.handle_timeout(self.now);
            self.drain();
        }
    }

    /// Takes the engine's transmits into the queue and handles its events.
    fn drain(&mut self) {
        while let Some(transmit) = self.conn.poll_transmit() {
            if self.http && self.is_modern() && transmit.is_one_way() {
                // 2026-07-28 over HTTP posts requests only: a cancellation closes the request's
                // stream instead (and the session refuses notifications of the application).
                continue;
            }
            let message = transmit.message();
            let value = serde_json::from_slice(message)
                .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(message).into_owned()));
            self.queue.push_back(value);
        }
        while let Some(event) = self.conn.poll_event() {
            match event {
                Event::Request { id, .. } => {
                    let input = match &id {
                        RequestId::String(s) if self.is_modern() => s
                            .strip_prefix("input/")
                            .and_then(|rest| rest.split_once('/'))
                            .map(|(_, k)| k.to_owned()),
                        _ => None,
                    };
                    match input {
                        Some(key) => self.inputs.push((id, key)),
                        None => {
                            self.server_requests.insert(id_key(&id), (id, false));
                        }
                    }
                }
                Event::ServerRequestCancelled { id, .. } => {
                    if let Some(open) = self.server_requests.get_mut(&id_key(&id)) {
                        open.1 = true;
                    }
                }
                Event::Closed(reason) => self.closed = Some(reason),
                _ => {}
            }
        }
    }

    // ----- server entries -----

    fn server(&mut self, entry: &TraceEntry) {
        let bytes = match &entry.payload {
            Payload::None => {
                self.report.skipped += 1;
                return;
            }
            Payload::Text(text) if text.trim().is_empty() => {
                self.report.skipped += 1;
                return;
            }
            Payload::Text(text) => text.as_bytes().to_vec(),
            Payload::Json(raw) => {
                let rewritten = serde_json::from_str::<Value>(raw.get()).ok().and_then(|mut value| {
                    self.rewrite_incoming(&mut value).then(|| serde_json::to_vec(&value).ok()).flatten()
                });
                rewritten.unwrap_or_else(|| raw.get().as_bytes().to_vec())
            }
        };
        self.report.fed += 1;
        self.conn.feed_message(self.now, &bytes);
        self.drain();
    }

    /// Rewrites a recorded server message (or batch) into the engine's ids; whether it changed.
    fn rewrite_incoming(&self, value: &mut Value) -> bool {
        match value {
            Value::Array(items) => items.iter_mut().fold(false, |changed, m| self.rewrite_one(m) | changed),
            _ => self.rewrite_one(value),
        }
    }

    fn rewrite_one(&self, message: &mut Value) -> bool {
        let Some(object) = message.as_object_mut() else { return false };
        let mut changed = false;
        let response =
            !object.contains_key("method") && (object.contains_key("result") || object.contains_key("error"));
        if let (true, Some(id)) = (response, object.get("id")) {
            let new = match (self.ids.engine_for(id), id.as_i64()) {
                (Some(engine), _) => Some(Value::from(engine)),
                (None, Some(n)) if self.ids.recorded_for(n).is_some() => Some(format!("unpaired:{n}").into()),
                _ => None,
            };
            if let Some(new) = new.filter(|new| new != id) {
                object.insert("id".into(), new);
                changed = true;
            }
        }
        let method = object.get("method").and_then(Value::as_str).map(str::to_owned);
        let params = object.get_mut("params").and_then(Value::as_object_mut);
        let Some(params) = params else { return changed };
        let slot = match method.as_deref() {
            Some("notifications/progress") => params.get_mut("progressToken").map(|s| (s, &self.tokens)),
            Some("notifications/cancelled") => params
                .get_mut("requestId")
                .filter(|id| !self.server_requests.contains_key(&id.to_string()))
                .map(|s| (s, &self.ids)),
            _ => None,
        };
        if let Some((slot, pairs)) = slot
            && let Some(engine) = pairs.engine_for(slot)
        {
            *slot = engine.into();
            changed = true;
        }
        let subscription = params.get_mut("_meta").and_then(|m| m.get_mut(META_SUBSCRIPTION_ID));
        if let Some(slot) = subscription
            && let Some(engine) = self.ids.engine_for(slot)
        {
            *slot = engine.into();
            changed = true;
        }
        changed
    }

    // ----- client entries -----

    fn client(&mut self, index: usize, entry: &TraceEntry) {
        let (line, ms) = (index + 1, entry.ms);
        let expected = match (&entry.payload, self.values[index].clone()) {
            (Payload::None, _) => {
                self.report.skipped += 1;
                return;
            }
            (_, Some(value)) => value,
            (payload, None) => {
                let text = String::from_utf8_lossy(payload.wire()).into_owned();
                let detail = "the recorded client sent a line that is not JSON; the engine writes only JSON"
                    .to_owned();
                return self.mismatch(line, ms, Some(Value::String(text)), None, String::new(), detail);
            }
        };
        let normal = normalised(&expected);
        if let Some(head) = self.queue.front() {
            let (actual, tentative) = self.rewrite_sent(head, Some(&expected));
            if actual == normal {
                if let Some(sent) = self.queue.pop_front() {
                    self.commit(tentative, &sent);
                }
                self.report.matched += 1;
                return;
            }
        }
        let before = self.queue.len();
        let outcome = self.perform(index, &expected);
        if self.queue.len() > before
            && let Some(sent) = self.queue.remove(before)
        {
            return self.settle(line, ms, &expected, normal, &sent, "");
        }
        if let Outcome::NotACall(_) = outcome
            && let Some(found) = (1..self.queue.len()).find(|&k| {
                self.queue.get(k).is_some_and(|sent| self.rewrite_sent(sent, Some(&expected)).0 == normal)
            })
        {
            // The engine sent it on its own, after messages the recorded client never sent.
            for _ in 0..found {
                if let Some(sent) = self.queue.pop_front() {
                    let (actual, _) = self.rewrite_sent(&sent, None);
                    let detail = format!(
                        "the engine sent this before the message of entry {line}, which it also sent; the \
                         recorded client did not"
                    );
                    self.mismatch(line, ms, None, Some(actual), String::new(), detail);
                }
            }
            if let Some(sent) = self.queue.pop_front() {
                let (_, tentative) = self.rewrite_sent(&sent, Some(&expected));
                self.commit(tentative, &sent);
                self.report.matched += 1;
            }
            return;
        }
        let (why, take_head) = match outcome {
            Outcome::Acted(hint) => {
                let hint = hint.map(|h| format!(" ({h})")).unwrap_or_default();
                (format!("replayed as an API call, the engine sent nothing{hint}"), false)
            }
            Outcome::Refused(why) => {
                let same_kind = self.queue.front().is_some_and(|head| same_kind(head, &expected));
                (why, same_kind)
            }
            Outcome::NotACall(why) => (why, true),
        };
        match self.queue.front().cloned().filter(|_| take_head) {
            Some(head) => {
                self.queue.pop_front();
                let why = format!("{why}; the engine's next message differs");
                self.settle(line, ms, &expected, normal, &head, &why);
            }
            None => {
                let why = match &self.closed {
                    Some(reason) => format!("{why} (the engine had closed the connection: {reason})"),
                    None => why,
                };
                self.mismatch(line, ms, Some(normal), None, String::new(), why);
            }
        }
    }

    /// Compares a transmit paired with a recorded message, and keeps the pairing.
    fn settle(&mut self, line: usize, ms: u64, expected: &Value, normal: Value, sent: &Value, why: &str) {
        let (actual, tentative) = self.rewrite_sent(sent, Some(expected));
        self.commit(tentative, sent);
        if actual == normal {
            self.report.matched += 1;
            return;
        }
        let mut path = String::new();
        let difference = first_difference(&normal, &actual, &mut path).unwrap_or_default();
        let mut detail = match why {
            "" => format!("the engine's message differs: {difference}"),
            why => format!("{why}: {difference}"),
        };
        if path == "/id"
            && let Some(engine) = expected.get("id").and_then(|id| self.ids.engine_for(id))
        {
            detail.push_str(&format!(
                " (the recorded id was already paired with the engine's request {engine})"
            ));
        }
        self.mismatch(line, ms, Some(normal), Some(actual), path, detail);
    }

    fn mismatch(
        &mut self,
        line: usize,
        ms: u64,
        expected: Option<Value>,
        actual: Option<Value>,
        path: String,
        detail: String,
    ) {
        self.report.mismatches.push(Mismatch { line, ms, expected, actual, path, detail });
    }

    /// The engine's message in the recorded side's terms (see *Normalisation*), and the pairs
    /// comparing it with `expected` would make.
    fn rewrite_sent(&self, sent: &Value, expected: Option<&Value>) -> (Value, Tentative) {
        let mut out = sent.clone();
        let mut tentative = Tentative::default();
        let expected_request = expected.filter(|e| is_request(e));
        if is_request(&out) {
            if let Some(engine) = out.get("id").and_then(Value::as_i64) {
                let recorded = expected_request.and_then(|e| e.get("id"));
                if let Some(id) = rename(&self.ids, engine, recorded, &mut tentative.id)
                    && let Some(object) = out.as_object_mut()
                {
                    object.insert("id".into(), id);
                }
            }
            let token = out.pointer("/params/_meta/progressToken").and_then(Value::as_i64);
            if let Some(engine) = token {
                let recorded = expected_request.and_then(|e| e.pointer("/params/_meta/progressToken"));
                if let Some(token) = rename(&self.tokens, engine, recorded, &mut tentative.token)
                    && let Some(slot) = out.pointer_mut("/params/_meta/progressToken")
                {
                    *slot = token;
                }
            }
        }
        if method_of(&out) == Some("notifications/cancelled")
            && let Some(slot) = out.pointer_mut("/params/requestId")
            && let Some(recorded) = slot.as_i64().and_then(|id| self.ids.recorded_for(id))
        {
            *slot = recorded.clone();
        }
        normalise(&mut out);
        (out, tentative)
    }

    fn commit(&mut self, tentative: Tentative, sent: &Value) {
        if let Some((engine, recorded)) = tentative.id {
            self.ids.pair(engine, recorded);
        }
        if let Some((engine, recorded)) = tentative.token {
            self.tokens.pair(engine, recorded);
        }
        if let (Some(id), Some(method)) = (sent.get("id").and_then(Value::as_i64), method_of(sent)) {
            self.methods.entry(id).or_insert_with(|| method.to_owned());
        }
    }

    // ----- replaying client entries as API calls -----

    fn perform(&mut self, index: usize, expected: &Value) -> Outcome {
        let params = expected.get("params");
        let outcome = match (method_of(expected), expected.get("id")) {
            (Some(method), Some(id)) => self.request(index, method, id, params),
            (Some(method), None) => self.notification(index, method, params),
            (None, Some(id)) if is_response(expected) => self.response(id, expected),
            _ => Outcome::NotACall("not a JSON-RPC request, notification or response".into()),
        };
        self.drain();
        outcome
    }

    fn request(&mut self, index: usize, method: &str, id: &Value, params: Option<&Value>) -> Outcome {
        let ready = self.conn.status() == Status::Ready;
        let modern = self.is_modern();
        match method {
            "initialize" => return Outcome::NotACall("the engine sends initialize on its own, first".into()),
            "server/discover" if !ready => {
                return Outcome::NotACall("the engine sends the server/discover handshake on its own".into());
            }
            "subscriptions/listen" if modern => return self.change_subscriptions(index),
            _ => {}
        }
        let input_responses = params.and_then(|p| p.get("inputResponses")).and_then(Value::as_object);
        if let (true, Some(answers)) = (modern && !self.inputs.is_empty(), input_responses) {
            return self.answer_inputs(answers);
        }
        let mut params = params.cloned();
        let mut options = RequestOptions::default();
        let mut token = None;
        let mut level = None;
        if let Some(meta) = params.as_mut().and_then(|p| p.get_mut("_meta")).and_then(Value::as_object_mut) {
            token = meta.remove("progressToken");
            options.progress = token.is_some();
            if modern {
                for key in [META_PROTOCOL_VERSION, META_CLIENT_CAPABILITIES, META_CLIENT_INFO] {
                    meta.remove(key);
                }
                level = meta.remove(META_LOG_LEVEL);
            }
        }
        if let Some(object) = params.as_mut().and_then(Value::as_object_mut)
            && object.get("_meta").and_then(Value::as_object).is_some_and(Map::is_empty)
        {
            object.remove("_meta");
        }
        if let Some(level) = level.filter(|l| self.log_level.as_ref() != Some(l)) {
            let set = serde_json::to_vec(&json!({ "level": level })).unwrap_or_default();
            // Nothing goes on the wire for it; the level goes into later requests' `_meta`.
            if self
                .conn
                .send_request(self.now, "logging/setLevel", Some(&set), RequestOptions::default())
                .is_ok()
            {
                self.log_level = Some(level);
            }
        }
        self.infer_timeouts(index, id, token.as_ref(), &mut options);
        let bytes = params.map(|p| serde_json::to_vec(&p).unwrap_or_default());
        match self.conn.send_request(self.now, method, bytes.as_deref(), options) {
            Ok(_) => Outcome::Acted(None),
            Err(e) => Outcome::Refused(format!("the engine refused to send {method}: {e}")),
        }
    }

    /// Sets the timeouts that make the engine cancel request `id` when the recorded client did.
    fn infer_timeouts(&self, index: usize, id: &Value, token: Option<&Value>, options: &mut RequestOptions) {
        let sent_at = self.entries[index].ms;
        let mut active_at = sent_at;
        let mut answered_at = None;
        for (entry, message) in self.entries.iter().zip(&self.values).skip(index + 1) {
            // A timeout and the result may cross within the same millisecond, not later.
            if answered_at.is_some_and(|at| entry.ms > at) {
                return;
            }
            let Some(message) = message else { continue };
            match entry.dir {
                Direction::Server if is_response(message) && message.get("id") == Some(id) => {
                    answered_at = Some(entry.ms);
                }
                Direction::Server => {
                    let progress = method_of(message) == Some("notifications/progress")
                        && token.is_some()
                        && message.pointer("/params/progressToken") == token;
                    if progress {
                        active_at = active_at.max(entry.ms);
                    }
                }
                Direction::Client => {
                    let cancels = method_of(message) == Some("notifications/cancelled")
                        && message.pointer("/params/requestId") == Some(id);
                    if !cancels {
                        continue;
                    }
                    match message.pointer("/params/reason").and_then(Value::as_str) {
                        Some("timed out") => {
                            options.timeout = Some(Duration::from_millis(entry.ms.saturating_sub(active_at)));
                        }
                        Some("maximum total time exceeded") => {
                            options.max_total = Some(Duration::from_millis(entry.ms.saturating_sub(sent_at)));
                        }
                        _ => {}
                    }
                    return;
                }
            }
        }
    }

    fn notification(&mut self, index: usize, method: &str, params: Option<&Value>) -> Outcome {
        match method {
            "notifications/initialized" => Outcome::NotACall(
                "the engine sends notifications/initialized on its own, after the initialize result".into(),
            ),
            "notifications/cancelled" => {
                let Some(recorded) = params.and_then(|p| p.get("requestId")) else {
                    return Outcome::Refused("a cancellation without requestId cannot be replayed".into());
                };
                let Some(engine) = self.ids.engine_for(recorded) else {
                    return Outcome::Refused(format!(
                        "it cancels request {recorded}, which the engine was never asked to send"
                    ));
                };
                if self.methods.get(&engine).map(String::as_str) == Some("subscriptions/listen") {
                    // The client's last message, ending its newest listen stream: the client
                    // closed the connection, which ends the stream first.
                    if self.closes(index, recorded) {
                        self.conn.close();
                        return Outcome::Acted(None);
                    }
                    return self.change_subscriptions(index);
                }
                let reason = params.and_then(|p| p.get("reason")).and_then(Value::as_str);
                match self.conn.cancel(&RequestId::Number(engine), reason) {
                    Ok(()) => Outcome::Acted(None),
                    Err(e) => {
                        Outcome::Refused(format!("the engine refused to cancel its request {engine}: {e}"))
                    }
                }
            }
            _ => {
                let bytes = params.map(|p| serde_json::to_vec(p).unwrap_or_default());
                match self.conn.notify(method, bytes.as_deref()) {
                    Ok(()) => Outcome::Acted(None),
                    Err(e) => Outcome::Refused(format!("the engine refused to send {method}: {e}")),
                }
            }
        }
    }

    fn response(&mut self, id: &Value, message: &Value) -> Outcome {
        let Some((server_id, cancelled)) = self.server_requests.remove(&id.to_string()) else {
            return Outcome::NotACall(format!(
                "no server request {id} is open for the application to answer (the engine answers \
                 ping, and refuses undeclared requests, on its own)"
            ));
        };
        let outcome = match message.get("error") {
            Some(error) => match serde_json::from_value::<ErrorObject>(error.clone()) {
                Ok(error) => Err(error),
                Err(e) => {
                    return Outcome::Refused(format!("the recorded error is not a JSON-RPC error: {e}"));
                }
            },
            None => Ok(message.get("result").cloned().unwrap_or(Value::Null)),
        };
        let hint = cancelled.then(|| "the server had cancelled its request, so no answer is due".to_owned());
        match self.conn.respond(&server_id, outcome.as_ref().map_err(Clone::clone)) {
            Ok(()) => Outcome::Acted(hint),
            Err(e) => Outcome::Refused(format!("the engine refused to answer {id}: {e}")),
        }
    }

    /// Answers the input requests the engine handed out with the recorded `inputResponses`.
    fn answer_inputs(&mut self, answers: &Map<String, Value>) -> Outcome {
        let mut answered = 0;
        for (id, key) in std::mem::take(&mut self.inputs) {
            match answers.get(&key) {
                Some(answer) => {
                    if let Err(e) = self.conn.respond(&id, Ok(answer)) {
                        return Outcome::Refused(format!(
                            "the engine refused the answer to input {key:?}: {e}"
                        ));
                    }
                    answered += 1;
                }
                None => self.inputs.push((id, key)),
            }
        }
        match answered {
            0 => Outcome::Refused("it answers input requests that the engine did not hand out".into()),
            _ => Outcome::Acted(Some("some input requests are still unanswered".into())),
        }
    }

    /// Subscribes and unsubscribes so that the resources match the next recorded
    /// `subscriptions/listen` (from entry `index` on).
    /// Whether the cancellation of listen stream `recorded` at entry `index` is the client
    /// closing: the last message it sent, and of its newest stream (a replaced stream is
    /// cancelled after its successor opened).
    fn closes(&self, index: usize, recorded: &Value) -> bool {
        let last = self.entries[index + 1..].iter().all(|e| e.dir != Direction::Client);
        let newest = self.entries[..index]
            .iter()
            .zip(&self.values[..index])
            .filter(|(e, _)| e.dir == Direction::Client)
            .filter_map(|(_, v)| v.as_ref())
            .rfind(|v| is_request(v) && method_of(v) == Some("subscriptions/listen"))
            .and_then(|v| v.get("id"));
        last && newest == Some(recorded)
    }

    fn change_subscriptions(&mut self, index: usize) -> Outcome {
        let next = self.entries[index..]
            .iter()
            .zip(&self.values[index..])
            .filter(|(e, _)| e.dir == Direction::Client)
            .filter_map(|(_, v)| v.as_ref())
            .find(|v| is_request(v) && method_of(v) == Some("subscriptions/listen"));
        let wanted: BTreeSet<String> = next
            .as_ref()
            .and_then(|v| v.pointer("/params/notifications/resourceSubscriptions"))
            .and_then(Value::as_array)
            .map(|uris| uris.iter().filter_map(Value::as_str).map(str::to_owned).collect())
            .unwrap_or_default();
        let subscribe: Vec<String> = wanted.difference(&self.subscribed).cloned().collect();
        let unsubscribe: Vec<String> = self.subscribed.difference(&wanted).cloned().collect();
        if subscribe.is_empty() && unsubscribe.is_empty() {
            return Outcome::NotACall(
                "the engine opens and ends subscriptions/listen streams on its own, and did not here".into(),
            );
        }
        let calls = subscribe
            .iter()
            .map(|u| ("resources/subscribe", u))
            .chain(unsubscribe.iter().map(|u| ("resources/unsubscribe", u)));
        for (method, uri) in calls {
            let params = serde_json::to_vec(&json!({ "uri": uri })).unwrap_or_default();
            if let Err(e) = self.conn.send_request(self.now, method, Some(&params), RequestOptions::default())
            {
                return Outcome::Refused(format!("the engine refused {method} {uri}: {e}"));
            }
        }
        self.subscribed = wanted;
        Outcome::Acted(None)
    }
}

/// The recorded id (or token) that engine id `engine` stands for, or would stand for if paired
/// with `recorded` now (then noted in `tentative`).
fn rename(
    pairs: &Pairs,
    engine: i64,
    recorded: Option<&Value>,
    tentative: &mut Option<(i64, Value)>,
) -> Option<Value> {
    if let Some(paired) = pairs.recorded_for(engine) {
        return Some(paired.clone());
    }
    let recorded = recorded.filter(|r| pairs.engine_for(r).is_none())?;
    *tentative = Some((engine, recorded.clone()));
    Some(recorded.clone())
}

/// `message` with rules 1 and 2 of *Normalisation* applied.
fn normalised(message: &Value) -> Value {
    let mut out = message.clone();
    normalise(&mut out);
    out
}

fn normalise(message: &mut Value) {
    drop_timestamps(message);
    let Some(params) = message.get_mut("params") else { return };
    if let Some(version) = params.get_mut("clientInfo").and_then(|i| i.get_mut("version")) {
        *version = VERSION_PLACEHOLDER.into();
    }
    let meta_info = params.get_mut("_meta").and_then(|m| m.get_mut(META_CLIENT_INFO));
    if let Some(version) = meta_info.and_then(|i| i.get_mut("version")) {
        *version = VERSION_PLACEHOLDER.into();
    }
}

fn drop_timestamps(value: &mut Value) {
    match value {
        Value::Object(object) => {
            object.remove("timestamp");
            object.values_mut().for_each(drop_timestamps);
        }
        Value::Array(items) => items.iter_mut().for_each(drop_timestamps),
        _ => {}
    }
}

/// Where `expected` and `actual` first differ (in member-name order), as a JSON pointer in
/// `path`, and how.
fn first_difference(expected: &Value, actual: &Value, path: &mut String) -> Option<String> {
    if expected == actual {
        return None;
    }
    match (expected, actual) {
        (Value::Object(e), Value::Object(a)) => {
            let names: BTreeSet<&String> = e.keys().chain(a.keys()).collect();
            for name in names {
                let len = path.len();
                path.push('/');
                path.push_str(&name.replace('~', "~0").replace('/', "~1"));
                let found = match (e.get(name.as_str()), a.get(name.as_str())) {
                    (Some(e), Some(a)) => first_difference(e, a, path),
                    (Some(e), None) => {
                        Some(format!("the engine's message lacks it (recorded: {})", short(e)))
                    }
                    (None, Some(a)) => Some(format!("the recorded message lacks it (engine: {})", short(a))),
                    (None, None) => None,
                };
                if found.is_some() {
                    return found;
                }
                path.truncate(len);
            }
            None
        }
        (Value::Array(e), Value::Array(a)) => {
            for (i, (e, a)) in e.iter().zip(a).enumerate() {
                let len = path.len();
                path.push_str(&format!("/{i}"));
                if let Some(found) = first_difference(e, a, path) {
                    return Some(found);
                }
                path.truncate(len);
            }
            path.push_str(&format!("/{}", e.len().min(a.len())));
            Some(format!("the recorded array has {} element(s), the engine's {}", e.len(), a.len()))
        }
        _ => Some(format!("recorded {}, engine {}", short(expected), short(actual))),
    }
}

fn is_request(message: &Value) -> bool {
    message.get("method").is_some() && message.get("id").is_some()
}

fn is_response(message: &Value) -> bool {
    message.get("method").is_none() && (message.get("result").is_some() || message.get("error").is_some())
}

fn method_of(message: &Value) -> Option<&str> {
    message.get("method").and_then(Value::as_str)
}

/// Whether two messages are the same kind of thing: same method, or answers to the same id.
fn same_kind(a: &Value, b: &Value) -> bool {
    match (method_of(a), method_of(b)) {
        (Some(x), Some(y)) => x == y,
        (None, None) => a.get("id") == b.get("id"),
        _ => false,
    }
}

fn id_key(id: &RequestId) -> String {
    serde_json::to_string(id).unwrap_or_default()
}

fn decode<T: serde::de::DeserializeOwned>(value: &Value) -> Option<T> {
    serde_json::from_value(value.clone()).ok()
}

fn version_of(value: &Value) -> Option<ProtocolVersion> {
    value.as_str()?.parse().ok()
}

/// A value on one line, cut to [`SHOWN_CHARS`] characters.
fn compact(value: &Value) -> String {
    let text = value.to_string();
    match text.char_indices().nth(SHOWN_CHARS) {
        Some((cut, _)) => format!("{}… ({} bytes)", &text[..cut], text.len()),
        None => text,
    }
}

/// A value on one line, cut to 200 characters.
fn short(value: &Value) -> String {
    let text = value.to_string();
    match text.char_indices().nth(200) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text,
    }
}
