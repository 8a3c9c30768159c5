//! Replaying a trace's client side against a live server and comparing what it answers.
//!
//! The replayer walks the trace in order:
//! - a **client** line is sent as recorded (ids included). An answer to a server request gets
//!   the id the live server used for that request. Gaps between consecutive client lines are
//!   kept (up to 5 s), so that a cancellation still follows its request as closely as it did;
//! - a **server** line is awaited: a response by its id, a server request or notification by
//!   its method (the first live one not yet matched). It is compared with [`Rules`]: exact by
//!   default. Live messages arriving early are held until their line comes.
//!
//! Whatever the trace says, these always hold (they are the invariants `check` tests, so that
//! a failure it writes out replays as a failure):
//! - every request gets exactly one response with its id (a request whose response the trace
//!   does not record still needs one, unless the client cancelled it or it is an open-ended
//!   `subscriptions/listen`); no response names an id
//!   that was never sent; the server does not exit while a request is waiting;
//! - results and server messages match the official schema of the trace's protocol version,
//!   and a tool's `structuredContent` matches the `outputSchema` the live server listed, as the
//!   client checks it with `validate_output` ([`crate::json_schema::check_tool_output`]);
//! - every live server message is accounted for by a line of the trace (or an `optional` rule).

use std::collections::{BTreeMap, HashSet};
use std::fmt;
use std::io;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::json_schema::{self, SchemaError};
use crate::official;
use crate::peer::{Incoming, LivePeer, Target};
use crate::rules::{Rules, short};
use crate::trace::{Direction, Payload, Trace, TraceEntry};

/// Requests that stay open as long as the client wants: the trace may end before their
/// response, and a replay does not wait for one.
const OPEN_ENDED: &[&str] = &["subscriptions/listen"];

/// How a replay runs.
#[derive(Debug, Clone)]
pub struct ReplayOptions {
    /// What may differ.
    pub rules: Rules,
    /// The longest wait for one awaited server line.
    pub timeout: Duration,
    /// How long to keep listening after the last line, for stray messages.
    pub linger: Duration,
    /// Keep the recorded gaps between consecutive client lines.
    pub pace: bool,
}

impl Default for ReplayOptions {
    fn default() -> Self {
        Self {
            rules: Rules::default(),
            timeout: Duration::from_secs(10),
            linger: Duration::from_millis(300),
            pace: true,
        }
    }
}

/// One thing that did not hold.
#[derive(Debug, Clone, PartialEq)]
pub struct Failure {
    /// The trace line it is about (1-based, counting the header as line 1), if any.
    pub line: Option<usize>,
    /// What went wrong, with the differences one per line.
    pub message: String,
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.line {
            Some(line) => write!(f, "line {line}: {}", self.message),
            None => f.write_str(&self.message),
        }
    }
}

/// The outcome of a replay.
#[derive(Debug, Clone, Default)]
pub struct ReplayReport {
    /// Client lines sent.
    pub sent: usize,
    /// Server lines matched (equal or not).
    pub matched: usize,
    /// Everything that did not hold.
    pub failures: Vec<Failure>,
    /// The server's stderr, when it failed (stdio only; the last 64 KiB).
    pub stderr: String,
}

impl ReplayReport {
    /// Whether the server answered as recorded.
    pub fn passed(&self) -> bool {
        self.failures.is_empty()
    }
}

impl fmt::Display for ReplayReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for failure in &self.failures {
            writeln!(f, "FAIL {failure}")?;
        }
        let verdict = if self.passed() { "PASS" } else { "FAIL" };
        write!(
            f,
            "{verdict}: {} client lines sent, {} server lines matched, {} failures",
            self.sent,
            self.matched,
            self.failures.len()
        )
    }
}

/// A live message not yet matched to a trace line.
#[derive(Debug)]
struct Live {
    bytes: Vec<u8>,
    value: Option<Value>,
}

/// What a server line waits for.
#[derive(Debug, Clone, PartialEq)]
enum Key {
    Response(Value),
    Request(String),
    Notification(String),
    Text(String),
}

impl Key {
    fn of(payload: &Payload) -> Option<Key> {
        match payload {
            Payload::Text(text) => Some(Key::Text(text.clone())),
            Payload::None => None,
            Payload::Json(_) => {
                let value = payload.value()?;
                let method = value.get("method").and_then(Value::as_str).map(str::to_owned);
                match (method, value.get("id")) {
                    (Some(method), Some(_)) => Some(Key::Request(method)),
                    (Some(method), None) => Some(Key::Notification(method)),
                    (None, Some(id)) => Some(Key::Response(id.clone())),
                    (None, None) => Some(Key::Text(value.to_string())),
                }
            }
        }
    }

    fn matches(&self, live: &Live) -> bool {
        match (self, &live.value) {
            (Key::Text(text), None) => String::from_utf8_lossy(&live.bytes) == *text,
            (Key::Text(text), Some(value)) => {
                value.get("method").is_none()
                    && value.get("id").is_none()
                    && serde_json::from_str::<Value>(text).is_ok_and(|t| &t == value)
            }
            (Key::Response(id), Some(value)) => value.get("method").is_none() && value.get("id") == Some(id),
            (Key::Request(method), Some(value)) => {
                value.get("id").is_some() && value.get("method").and_then(Value::as_str) == Some(method)
            }
            (Key::Notification(method), Some(value)) => {
                value.get("id").is_none() && value.get("method").and_then(Value::as_str) == Some(method)
            }
            _ => false,
        }
    }

    fn describe(&self, requests: &BTreeMap<String, String>) -> String {
        match self {
            Key::Response(id) => match requests.get(&id.to_string()) {
                Some(method) => format!("the response to request {id} ({method})"),
                None => format!("the response with id {id}"),
            },
            Key::Request(method) => format!("a server request {method}"),
            Key::Notification(method) => format!("a notification {method}"),
            Key::Text(text) => format!("the line {}", short(&Value::String(text.clone()))),
        }
    }
}

/// The replay's bookkeeping of requests and ids.
#[derive(Default)]
struct Ledger {
    /// Client requests sent: id (as JSON text) → method.
    requests: BTreeMap<String, String>,
    /// Ids whose response has arrived.
    answered: HashSet<String>,
    /// Ids the client cancelled.
    cancelled: HashSet<String>,
    /// Recorded server-request id → live id.
    server_ids: BTreeMap<String, Value>,
    /// `tools/call` requests: id → tool name.
    calls: BTreeMap<String, String>,
    /// Output schemas of the tools the live server listed.
    output_schemas: BTreeMap<String, Value>,
    /// HTTP exchange → the id of the request it carried.
    exchanges: BTreeMap<u64, String>,
}

/// Replays `trace` against `target`.
pub async fn replay(trace: &Trace, target: &Target, options: &ReplayOptions) -> io::Result<ReplayReport> {
    // The trace's own rules, after the caller's.
    let with_trace_rules;
    let options = if trace.header.rules.is_empty() {
        options
    } else {
        let own = Rules::parse(&trace.header.rules.join("\n"))
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, format!("the trace's own rules: {e}")))?;
        let mut merged = options.clone();
        merged.rules.extend(own);
        with_trace_rules = merged;
        &with_trace_rules
    };
    let mut peer = LivePeer::connect(target).await?;
    let mut run = Run {
        peer: &mut peer,
        options,
        version: trace.header.protocol_version.clone(),
        held: Vec::new(),
        ledger: Ledger::default(),
        report: ReplayReport::default(),
        closed: None,
    };
    run.walk(trace).await;
    let mut report = run.report;
    if !report.passed() {
        report.stderr = peer.stderr_tail();
    }
    peer.shutdown(Duration::from_secs(2)).await;
    Ok(report)
}

struct Run<'a> {
    peer: &'a mut LivePeer,
    options: &'a ReplayOptions,
    /// The protocol version whose official schema live messages must match.
    version: Option<String>,
    held: Vec<Live>,
    ledger: Ledger,
    report: ReplayReport,
    closed: Option<String>,
}

impl Run<'_> {
    fn fail(&mut self, line: Option<usize>, message: impl Into<String>) {
        self.report.failures.push(Failure { line, message: message.into() });
    }

    async fn walk(&mut self, trace: &Trace) {
        let mut last: Option<(u64, Instant)> = None;
        for (index, entry) in trace.entries.iter().enumerate() {
            // Line 1 is the header; comments in a hand-edited file shift this, which is why
            // `Trace::parse` keeps them out of hand-edited corpora by convention.
            let line = index + 2;
            match entry.dir {
                Direction::Client => {
                    if self.options.pace
                        && let Some((ms, at)) = last
                    {
                        let gap =
                            Duration::from_millis(entry.ms.saturating_sub(ms)).min(Duration::from_secs(5));
                        let elapsed = at.elapsed();
                        if gap > elapsed {
                            async_io::Timer::after(gap - elapsed).await;
                        }
                    }
                    self.send(line, entry).await;
                }
                Direction::Server => self.expect(line, entry).await,
            }
            last = Some((entry.ms, Instant::now()));
        }
        self.finish().await;
    }

    async fn send(&mut self, line: usize, entry: &TraceEntry) {
        let headers = entry.http.as_ref().map(|h| h.headers.clone()).unwrap_or_default();
        let mut bytes = entry.payload.wire().to_vec();
        if matches!(entry.payload, Payload::None) {
            // An HTTP exchange without a message: a GET opens the server-message stream; the
            // live session ends itself (DELETE) when the replay is over.
            if entry.http.as_ref().is_some_and(|http| http.method == "GET")
                && let Err(e) = self.peer.open_stream().await
            {
                self.fail(Some(line), format!("could not open the GET stream: {e}"));
            }
            return;
        }
        let mut request_id = None;
        if let Some(mut value) = entry.value() {
            let id = value.get("id").cloned();
            if value.get("method").is_some() {
                request_id = id.as_ref().map(ToString::to_string);
            }
            // A `method` that is not a string still makes a (malformed) request, owed an answer.
            let method = value.get("method").map(|m| m.as_str().map_or_else(|| m.to_string(), str::to_owned));
            match (method, id) {
                (Some(method), Some(id)) => {
                    if method == "tools/call"
                        && let Some(name) = value.pointer("/params/name").and_then(Value::as_str)
                    {
                        self.ledger.calls.insert(id.to_string(), name.to_owned());
                    }
                    self.ledger.requests.insert(id.to_string(), method);
                }
                (Some(method), None) if method == "notifications/cancelled" => {
                    if let Some(id) = value.pointer("/params/requestId") {
                        self.ledger.cancelled.insert(id.to_string());
                    }
                }
                (None, Some(id)) => match self.ledger.server_ids.get(&id.to_string()) {
                    Some(live) => {
                        value["id"] = live.clone();
                        bytes = serde_json::to_vec(&value).unwrap_or(bytes);
                    }
                    None => {
                        self.fail(
                            Some(line),
                            format!("this answers server request {id}, which the live server never sent"),
                        );
                        return;
                    }
                },
                _ => {}
            }
        }
        match self.peer.send(&bytes, &headers).await {
            Ok(()) => {
                self.report.sent += 1;
                if let (Some(exchange), Some(id)) = (self.peer.last_exchange(), request_id) {
                    self.ledger.exchanges.insert(exchange, id);
                }
            }
            Err(e) => self.fail(Some(line), format!("could not send: {e}")),
        }
    }

    async fn expect(&mut self, line: usize, entry: &TraceEntry) {
        let Some(key) = Key::of(&entry.payload) else { return };
        if let Key::Request(method) | Key::Notification(method) = &key
            && self.options.rules.is_optional(method)
        {
            return;
        }
        let Some(live) = self.take(&key).await else {
            let mut message = format!(
                "expected {} within {:?}; it never came",
                key.describe(&self.ledger.requests),
                self.options.timeout
            );
            if let Some(why) = &self.closed {
                message.push_str(&format!(" ({why})"));
            }
            self.fail(Some(line), message);
            return;
        };
        self.report.matched += 1;
        let Some(expected) = entry.value() else { return };
        let Some(mut actual) = live.value else { return };
        let method = match &key {
            Key::Response(id) => self.ledger.requests.get(&id.to_string()).cloned(),
            Key::Request(method) | Key::Notification(method) => Some(method.clone()),
            Key::Text(_) => None,
        };
        if let Key::Request(_) = key {
            // The live server picks its own ids; remember the mapping and compare the rest.
            if let (Some(recorded), Some(live_id)) = (expected.get("id"), actual.get("id").cloned()) {
                self.ledger.server_ids.insert(recorded.to_string(), live_id);
                actual["id"] = recorded.clone();
            }
        }
        let differences = self.options.rules.compare(method.as_deref(), &expected, &actual);
        if !differences.is_empty() {
            let mut message = format!("{} differs from the recording:", key.describe(&self.ledger.requests));
            for difference in &differences {
                message.push_str(&format!("\n    {difference}"));
            }
            message.push_str(&format!("\n  recorded: {}\n  live:     {}", short(&expected), short(&actual)));
            self.fail(Some(line), message);
        }
    }

    /// The first held or arriving live message `key` matches, waiting up to the timeout.
    async fn take(&mut self, key: &Key) -> Option<Live> {
        if let Some(at) = self.held.iter().position(|live| key.matches(live)) {
            return Some(self.held.remove(at));
        }
        let deadline = Instant::now() + self.options.timeout;
        loop {
            let left = deadline.checked_duration_since(Instant::now())?;
            if self.closed.is_some() {
                return None;
            }
            let live = self.receive(left).await?;
            if key.matches(&live) {
                return Some(live);
            }
            self.held.push(live);
        }
    }

    /// The next live message, checking the invariants that hold whatever the trace says.
    async fn receive(&mut self, wait: Duration) -> Option<Live> {
        loop {
            match self.peer.recv(wait).await? {
                Incoming::Message { bytes, http } => {
                    let value: Option<Value> = serde_json::from_slice(&bytes).ok();
                    if let Some(value) = &value {
                        let exchange = http.map(|http| http.exchange);
                        self.check_response(value, exchange);
                    }
                    return Some(Live { bytes, value });
                }
                Incoming::Empty(_) => continue,
                Incoming::Closed(why) => {
                    let waiting: Vec<String> = self.waiting();
                    if !waiting.is_empty() {
                        self.fail(
                            None,
                            format!(
                                "the server went away ({why}) while requests {} waited",
                                waiting.join(", ")
                            ),
                        );
                    }
                    self.closed = Some(why);
                    return None;
                }
            }
        }
    }

    fn check_response(&mut self, value: &Value, exchange: Option<u64>) {
        if let Some(method) = value.get("method").and_then(Value::as_str) {
            if let Some(version) = &self.version
                && let Err(errors) = official::validate_server_message(version, value)
            {
                let method = method.to_owned();
                self.fail(
                    None,
                    format!("the server's {method} does not match the {version} schema: {}", list(&errors)),
                );
            }
            return;
        }
        let Some(id) = value.get("id") else { return };
        let key = id.to_string();
        if id.is_null() {
            // An error about a message the server could not read, matched by its line. Over
            // HTTP the exchange still tells which request it refused.
            if let Some(request) = exchange.and_then(|e| self.ledger.exchanges.get(&e)) {
                self.ledger.answered.insert(request.clone());
            }
            return;
        }
        let Some(method) = self.ledger.requests.get(&key).cloned() else {
            self.fail(
                None,
                format!("the server sent a response with id {id}, which no request had: {}", short(value)),
            );
            return;
        };
        if !self.ledger.answered.insert(key.clone()) {
            self.fail(None, format!("the server answered request {id} twice: {}", short(value)));
            return;
        }
        let Some(result) = value.get("result") else { return };
        if let Some(version) = &self.version
            && let Err(errors) = official::validate_result(version, &method, result)
        {
            self.fail(
                None,
                format!(
                    "the {method} result for request {id} does not match the {version} schema: {}",
                    list(&errors)
                ),
            );
        }
        if method == "tools/list" {
            for tool in result.get("tools").and_then(Value::as_array).into_iter().flatten() {
                if let (Some(name), Some(schema)) =
                    (tool.get("name").and_then(Value::as_str), tool.get("outputSchema"))
                {
                    self.ledger.output_schemas.insert(name.to_owned(), schema.clone());
                }
            }
        }
        let verdict = self.ledger.calls.get(&key).and_then(|name| {
            let schema = self.ledger.output_schemas.get(name)?;
            Some((name.clone(), json_schema::check_tool_output(name, schema, result)?))
        });
        if let Some((name, Err(problem))) = verdict {
            self.fail(None, format!("the result of tool {name} (request {id}): {problem}"));
        }
    }

    /// Requests still owed a response (a listen stream is open-ended by design).
    fn waiting(&self) -> Vec<String> {
        self.ledger
            .requests
            .iter()
            .filter(|(id, method)| {
                !self.ledger.answered.contains(*id)
                    && !self.ledger.cancelled.contains(*id)
                    && !OPEN_ENDED.contains(&method.as_str())
            })
            .map(|(id, method)| format!("{id} ({method})"))
            .collect()
    }

    async fn finish(&mut self) {
        // Responses the trace does not record are still owed (unless cancelled).
        let deadline = Instant::now() + self.options.timeout;
        while !self.waiting().is_empty() && self.closed.is_none() {
            let Some(left) = deadline.checked_duration_since(Instant::now()) else { break };
            match self.receive(left).await {
                Some(live) => self.held.push(live),
                None => break,
            }
        }
        let waiting = self.waiting();
        if !waiting.is_empty() && self.closed.is_none() {
            self.fail(
                None,
                format!("no response to requests {} within {:?}", waiting.join(", "), self.options.timeout),
            );
        }
        while self.closed.is_none() {
            match self.receive(self.options.linger).await {
                Some(live) => self.held.push(live),
                None => break,
            }
        }
        let held = std::mem::take(&mut self.held);
        for live in held {
            let Some(value) = &live.value else {
                self.fail(
                    None,
                    format!(
                        "the server wrote a line that is not JSON: {}",
                        String::from_utf8_lossy(&live.bytes)
                    ),
                );
                continue;
            };
            let method = value.get("method").and_then(Value::as_str);
            match method {
                Some(method) if self.options.rules.is_optional(method) => {}
                Some(method) => self.fail(
                    None,
                    format!("the server sent {method}, which the trace does not have: {}", short(value)),
                ),
                // Responses the trace left unrecorded; the invariants above already checked them.
                None => {}
            }
        }
    }
}

/// The first few schema errors, on one line.
fn list(errors: &[SchemaError]) -> String {
    errors.iter().take(3).map(ToString::to_string).collect::<Vec<_>>().join("; ")
}
