//! One case: a generated sequence played against a fresh session of the server, at the wire
//! level, with every property checked as the answers come in.
//!
//! A request that is not answered in time is not a violation in itself: MCP lets a request run
//! as long as it likes. A tool call, prompt or resource read that outlives its budget is
//! cancelled, and the server is then probed with `ping` (`server/discover` in 2026-07-28). If
//! it answers, the request is reported as slow. If it does not, the server broke `responsive`.
//! Only requests that need no work (a ping, a list, an unknown method) must be answered within
//! the budget.

use std::collections::{BTreeMap, BTreeSet};
use std::io;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use mcp_sansio::schema::{
    META_CLIENT_CAPABILITIES, META_CLIENT_INFO, META_PROTOCOL_VERSION, META_SERVER_INFO, SKILLS_EXTENSION,
};

use super::actions::{Action, ArgumentKind, action_line, request_summary};
use super::{
    Catalog, CheckOptions, Finding, Property, SdkDeviation, SlowRequest, client_capabilities, client_info,
    is_modern,
};
use super::{headers, skills};
use crate::json_schema;
use crate::official;
use crate::peer::{Incoming, LivePeer, Target};
use crate::rules::short;
use crate::trace::{Direction, Trace, TraceBuffer, TraceHeader};

pub(super) mod tasks;

/// How long a case waits, for what.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Budgets {
    /// The wait for an answer that must come: a probe, a ping, a list, an unknown method. Past
    /// it, silence is a violation.
    pub verdict: Duration,
    /// The wait for a tool call, prompt or read before it is cancelled as slow.
    pub slow: Duration,
    /// The same, for a tool (or method) already seen to be slow.
    pub known_slow: Duration,
    /// The wait for an answer to malformed JSON or an invalid request.
    pub parse: Duration,
    /// A short look, for an answer that may never come and whose absence is already known.
    pub glance: Duration,
    /// The wait for an answer whose silence would only break a property already found broken.
    pub settled: Duration,
}

impl Budgets {
    /// The budgets before anything is learned: the options' timeouts.
    pub(crate) fn from_options(options: &CheckOptions) -> Self {
        let glance = options.parse_error_timeout.min(Duration::from_millis(200));
        Budgets {
            verdict: options.request_timeout,
            slow: options.request_timeout,
            known_slow: options.request_timeout.min(Duration::from_millis(500)),
            parse: options.parse_error_timeout,
            glance,
            settled: options.request_timeout,
        }
    }

    /// Budgets fitted to a server that answers requests that need no work within `latency`: for an answer that must come, ten times that and a margin; for a call already
    /// known to be slow, four times that and a margin (cutting it short costs nothing but a
    /// note). Never more than the options' timeouts. The verdicts of the cases that taught it
    /// were reached with the full budgets.
    pub(crate) fn learned(options: &CheckOptions, latency: Duration) -> Self {
        let full = Self::from_options(options);
        let fitted = (latency * 10 + Duration::from_millis(200)).max(Duration::from_millis(400));
        let cutoff = (latency * 4 + Duration::from_millis(100)).max(Duration::from_millis(200));
        Budgets {
            verdict: fitted.min(full.verdict),
            slow: fitted.min(full.slow),
            known_slow: cutoff.min(full.known_slow),
            parse: fitted.min(full.parse),
            glance: full.glance.min(fitted),
            settled: fitted.min(full.settled),
        }
    }
}

/// How one case is run.
#[derive(Debug, Clone)]
pub(crate) struct Plan {
    /// A finding of this property ends the case (while shrinking it); `None` runs every case to
    /// its end, to see every property.
    pub stop_on: Option<Property>,
    /// Properties whose silent failure is already known (allowed, or already found): a short
    /// look replaces their wait.
    pub settled: BTreeSet<Property>,
    /// The waits.
    pub budgets: Budgets,
    /// Tools (by name) and methods already seen to be slow.
    pub slow_keys: BTreeSet<String>,
}

impl Plan {
    /// The plan of [`super::run_case`]: every property, the options' timeouts.
    pub(crate) fn full(options: &CheckOptions) -> Self {
        Plan {
            stop_on: None,
            settled: options.allow.clone(),
            budgets: Budgets::from_options(options),
            slow_keys: BTreeSet::new(),
        }
    }
}

/// The outcome of one sequence.
#[derive(Debug, Clone)]
pub struct CaseOutcome {
    /// Properties that failed.
    pub violations: Vec<Finding>,
    /// Failures that the options allow (`--allow`, or known SDK deviations when those are
    /// allowed).
    pub allowed: Vec<Finding>,
    /// Softer findings: a tool that accepts invalid arguments, refuses valid ones, and so on.
    pub warnings: Vec<String>,
    /// Requests that outlived their budget, were cancelled, and after which the server
    /// answered.
    pub slow: Vec<SlowRequest>,
    /// How many times each property was put to the test.
    pub checks: BTreeMap<Property, u32>,
    /// How long the server took to answer each request that needs no work (ping, lists,
    /// errors).
    pub latencies: Vec<Duration>,
    /// The session, as a trace; server lines that broke a property are left out, so that a
    /// replay against the same server fails the same way and a fixed server passes.
    pub trace: Trace,
    /// What was cancelled for outliving its budget (see [`SlowRequest::key`]), whether or not
    /// the server answered after.
    pub(crate) cut_short: BTreeSet<String>,
}

impl CaseOutcome {
    /// Whether the case broke `property` (not counting allowed failures).
    pub fn violates(&self, property: Property) -> bool {
        self.violations.iter().any(|f| f.property == property)
    }
}

/// Plays `actions` against a fresh session of `target` under `plan`.
pub(crate) async fn run_case_with(
    target: &Target,
    catalog: &Catalog,
    actions: &[Action],
    options: &CheckOptions,
    plan: &Plan,
) -> io::Result<CaseOutcome> {
    let mut header =
        TraceHeader::new(target.transport(), target.identity(), crate::record::recorded_with("check"));
    header.protocol_version = Some(catalog.version.clone());
    let recorder = Arc::new(Mutex::new(TraceBuffer::new(header)));
    let mut session = Session::start(target, options, plan, Some(Arc::clone(&recorder))).await?;
    session.tools = Some(&catalog.tools);
    session.tasks.offered = catalog.offers_tasks();
    let mut out = Checker::new(catalog);
    match session.initialize().await {
        Ok(_) => {
            // The tool list first: it puts the tools' output schemas into the trace, for replay.
            if catalog.has("tools") {
                session.perform(&Action::List("tools/list"), &mut out).await;
            }
            for action in actions {
                if session.over() {
                    break;
                }
                session.perform(action, &mut out).await;
            }
            session.survives(&mut out).await;
        }
        Err(why) => out.finding(Property::Survives, format!("the handshake failed: {why}")),
    }
    let edits = std::mem::take(&mut session.edits);
    let latencies = std::mem::take(&mut session.latencies);
    session.close().await;
    let mut trace = Arc::try_unwrap(recorder)
        .map(|m| m.into_inner().unwrap_or_else(|e| e.into_inner()).into_trace())
        .unwrap_or_else(|shared| shared.lock().unwrap_or_else(|e| e.into_inner()).trace().clone());
    apply_edits(&mut trace, edits);
    let (violations, allowed): (Vec<Finding>, Vec<Finding>) =
        out.findings.into_iter().partition(|f| !options.allows(f));
    Ok(CaseOutcome {
        violations,
        allowed,
        warnings: out.warnings,
        slow: out.slow,
        checks: out.checks,
        latencies,
        trace,
        cut_short: out.cut_short,
    })
}

/// The answer to a message that must get one particular error.
enum ErrorAnswer {
    /// That error.
    Due,
    /// Something else.
    Wrong(Received),
    /// Nothing, within the wait.
    Missing,
}

/// A request sent.
#[derive(Debug, Clone)]
struct Sent {
    method: String,
    at: Instant,
    /// Whether every request sent before it had been answered: only then does the time its
    /// answer takes say how fast the server is, rather than how long it was busy.
    alone: bool,
}

/// A server message as it came, with its line in the trace.
#[derive(Debug, Clone)]
struct Received {
    message: Value,
    line: usize,
}

/// How the trace of a case differs from what crossed the wire, so that `replay` of it fails
/// against the server as it is and passes against one that keeps the property.
#[derive(Debug, Clone)]
enum TraceEdit {
    /// The line broke a property (a wrong id, a schema failure): left out.
    Drop,
    /// The server's answer broke a property: the answer that was due instead.
    Replace(Value),
    /// No answer came where one was due: it follows this (client) line.
    InsertAfter(Value),
}

/// The error messages of the answers [`TraceEdit`] puts in are not the server's own.
const TRACE_RULES: &[&str] = &["ignore /error/message", "ignore /error/data"];

fn apply_edits(trace: &mut Trace, mut edits: BTreeMap<usize, TraceEdit>) {
    if edits.values().any(|e| !matches!(e, TraceEdit::Drop)) {
        trace.header.rules.extend(TRACE_RULES.iter().map(|r| (*r).to_owned()));
    }
    let server_line = |template: &crate::trace::TraceEntry, message: &Value| {
        let bytes = serde_json::to_vec(message).unwrap_or_default();
        let mut entry = crate::trace::TraceEntry::recorded(Direction::Server, template.ms, &bytes, None);
        entry.http = template.http.clone();
        entry
    };
    let entries = std::mem::take(&mut trace.entries);
    for (index, entry) in entries.into_iter().enumerate() {
        match edits.remove(&index) {
            None => trace.entries.push(entry),
            Some(TraceEdit::Drop) => {}
            Some(TraceEdit::Replace(message)) => trace.entries.push(server_line(&entry, &message)),
            // Over HTTP the answer would need an exchange of its own; the line stays as it was.
            Some(TraceEdit::InsertAfter(_)) if entry.http.is_some() => trace.entries.push(entry),
            Some(TraceEdit::InsertAfter(message)) => {
                let due = server_line(&entry, &message);
                trace.entries.push(entry);
                trace.entries.push(due);
            }
        }
    }
}

/// The verdicts of one case, as they are reached.
struct Checker<'a> {
    catalog: &'a Catalog,
    findings: Vec<Finding>,
    warnings: Vec<String>,
    slow: Vec<SlowRequest>,
    cut_short: BTreeSet<String>,
    checks: BTreeMap<Property, u32>,
}

impl<'a> Checker<'a> {
    fn new(catalog: &'a Catalog) -> Self {
        Checker {
            catalog,
            findings: Vec::new(),
            warnings: Vec::new(),
            slow: Vec::new(),
            cut_short: BTreeSet::new(),
            checks: BTreeMap::new(),
        }
    }

    /// `property` was put to the test once more.
    fn checked(&mut self, property: Property) {
        *self.checks.entry(property).or_default() += 1;
    }

    fn finding(&mut self, property: Property, message: impl Into<String>) {
        self.findings.push(Finding { property, message: message.into(), known: None });
    }

    fn known_finding(&mut self, deviation: SdkDeviation, message: impl Into<String>) {
        self.findings.push(Finding {
            property: deviation.property(),
            message: message.into(),
            known: Some(deviation),
        });
    }

    fn warn(&mut self, message: impl Into<String>) {
        self.warnings.push(message.into());
    }

    /// Checks the answer to one request.
    fn answer(&mut self, action: &Action, method: &str, response: &Value) {
        if self.task_answer(action, method, response) {
            return;
        }
        let version = self.catalog.version.as_str();
        let error = response.get("error");
        let code = error.and_then(|e| e.get("code")).and_then(Value::as_i64);
        self.checked(Property::Schema);
        if let Some(result) = response.get("result") {
            if let Err(errors) = official::validate_result(version, method, result) {
                let list: Vec<String> = errors.iter().take(3).map(ToString::to_string).collect();
                self.finding(
                    Property::Schema,
                    format!("the {method} result does not match the {version} schema: {}", list.join("; ")),
                );
            }
        } else if let Some(error) = error {
            let shape = error.get("code").is_some_and(Value::is_i64)
                && error.get("message").is_some_and(Value::is_string);
            if !shape {
                self.finding(
                    Property::Schema,
                    format!("the error object of {method} is malformed: {}", short(error)),
                );
            }
        } else {
            self.finding(
                Property::Schema,
                format!("the response to {method} has neither result nor error: {}", short(response)),
            );
        }
        let is_error_result = response.pointer("/result/isError").and_then(Value::as_bool) == Some(true);
        match action {
            Action::UnknownTask(id) => self.unknown_task_answer(id, response),
            Action::UnknownMethod(m) => {
                self.checked(Property::MethodNotFound);
                if code != Some(-32601) {
                    self.finding(
                        Property::MethodNotFound,
                        format!("the unknown method {m} got {} instead of error -32601", describe(response)),
                    );
                }
            }
            Action::CallTool { name, kind: ArgumentKind::Invalid(why), arguments } => {
                self.checked(Property::InvalidParams);
                if code.is_some_and(|c| c != -32602) {
                    let message = format!(
                        "tools/call {name} with invalid arguments ({why}: {}) got error {} instead of -32602 or a result with isError",
                        short(arguments),
                        code.unwrap_or_default()
                    );
                    if code == Some(-32603) && !arguments.is_object() {
                        self.known_finding(SdkDeviation::InternalErrorForNonObjectArguments, message);
                    } else {
                        self.finding(Property::InvalidParams, message);
                    }
                } else if code.is_none() && !is_error_result {
                    self.warn(format!(
                        "tools/call {name} accepted invalid arguments ({why}): {}",
                        short(arguments)
                    ));
                }
            }
            Action::CallTool { name, arguments, .. } => {
                if code == Some(-32603) {
                    self.warn(format!(
                        "tools/call {name} failed with an internal error on valid arguments {}",
                        short(arguments)
                    ));
                } else if code == Some(-32602) {
                    self.warn(format!(
                        "tools/call {name} refused arguments that match its inputSchema: {}",
                        short(arguments)
                    ));
                }
                if !is_error_result && let Some(result) = response.get("result") {
                    self.output_schema(name, result);
                }
            }
            Action::GetPrompt { name, missing_required: true, .. } if code.is_none() => {
                self.warn(format!("prompts/get {name} succeeded without a required argument"));
            }
            Action::ReadResource { uri, listed: false } if code.is_none() => {
                self.warn(format!("resources/read of the unlisted {uri} succeeded"));
            }
            Action::ReadSkillFile { uri, digest, size, .. } => {
                self.checked(Property::SkillFiles);
                if let Some(why) = skills::judge_read(uri, digest, *size, response) {
                    self.finding(Property::SkillFiles, why);
                }
            }
            _ => {}
        }
        if let Some(result) = response.get("result") {
            for (property, verdict) in skills::judge_entries(method, result) {
                self.checked(property);
                if let Some(why) = verdict {
                    self.finding(property, why);
                }
            }
        }
    }

    /// The result of a call of tool `name`, judged as the client judges it with
    /// `validate_output` on ([`json_schema::check_tool_output`]).
    fn output_schema(&mut self, name: &str, result: &Value) {
        let Some(schema) = self.catalog.tool(name).and_then(|t| t.get("outputSchema")) else { return };
        let Some(verdict) = json_schema::check_tool_output(name, schema, result) else { return };
        self.checked(Property::OutputSchema);
        if let Err(problem) = verdict {
            self.finding(Property::OutputSchema, format!("tools/call {name}: {problem}"));
        }
    }
}

fn describe(response: &Value) -> String {
    match response.get("error") {
        Some(error) => format!("error {}", error.get("code").map(ToString::to_string).unwrap_or_default()),
        None => "a result".into(),
    }
}

/// The error code JSON-RPC peers (LSP, and the Python SDK's 2025-era HTTP transport) answer a
/// cancelled request with.
const REQUEST_CANCELLED: i64 = -32800;

/// Whether `response` is the answer to a cancellation rather than to the request's content.
fn answers_the_cancellation(response: &Value) -> bool {
    response.pointer("/error/code").and_then(Value::as_i64) == Some(REQUEST_CANCELLED)
}

/// Whether a request of `method` may take as long as it likes (until cancelled): the ones
/// that do the server's work. The others must be answered within the verdict budget.
fn may_take_long(method: &str) -> bool {
    matches!(method, "tools/call" | "prompts/get" | "resources/read" | "completion/complete")
}

/// What a slow request is known by: its tool's name, or its method.
fn slow_key(action: &Action, method: &str) -> String {
    match action {
        Action::CallTool { name, .. } => format!("tools/call {name}"),
        _ => method.to_owned(),
    }
}

/// A request waiting for its answer.
struct Waiting<'x> {
    id: String,
    method: String,
    action: &'x Action,
    budget: Duration,
}

/// A session with the server under test, at the wire level, recording as it goes.
struct Session<'a> {
    peer: LivePeer,
    options: &'a CheckOptions,
    plan: &'a Plan,
    recorder: Option<Arc<Mutex<TraceBuffer>>>,
    next_id: i64,
    /// Responses by id (as JSON text), and how many came.
    responses: BTreeMap<String, Vec<Received>>,
    /// Responses without a request (null id), in order.
    strays: Vec<Received>,
    /// How many responses named an id that no request had.
    unknown_ids: usize,
    /// Requests sent: id → method, and when.
    sent: BTreeMap<String, Sent>,
    /// How the trace is to differ from the wire: lines that broke a property are left out,
    /// and wrong or missing answers give way to the ones that were due.
    edits: BTreeMap<usize, TraceEdit>,
    /// Why the server is gone.
    gone: Option<String>,
    /// Why the server is taken to have stopped answering (a probe went unanswered).
    deaf: Option<String>,
    /// Findings seen while receiving (wrong ids, schema failures of server messages).
    pending_findings: Vec<Finding>,
    /// Schema checks of server messages made while receiving.
    pending_checks: u32,
    /// The negotiated protocol version (the requested one until the handshake answers).
    version: String,
    /// The plan's `stop_on` property broke: the case is over.
    stop: bool,
    /// Whether the session speaks 2026-07-28 (no handshake, `_meta` on every request).
    modern: bool,
    /// The tools, for the `Mcp-Param-*` headers of 2026-07-28 calls over HTTP.
    tools: Option<&'a [Value]>,
    /// How long each answer to a request that needs no work took.
    latencies: Vec<Duration>,
    /// The tasks the server made (the tasks extension).
    tasks: tasks::Tracker,
}

impl<'a> Session<'a> {
    async fn start(
        target: &Target,
        options: &'a CheckOptions,
        plan: &'a Plan,
        recorder: Option<Arc<Mutex<TraceBuffer>>>,
    ) -> io::Result<Session<'a>> {
        let peer = LivePeer::connect(target).await?;
        Ok(Session {
            peer,
            options,
            plan,
            recorder,
            next_id: 1,
            responses: BTreeMap::new(),
            strays: Vec::new(),
            unknown_ids: 0,
            sent: BTreeMap::new(),
            edits: BTreeMap::new(),
            gone: None,
            deaf: None,
            pending_findings: Vec::new(),
            pending_checks: 0,
            version: options.protocol_version.clone(),
            stop: false,
            modern: is_modern(&options.protocol_version),
            tools: None,
            latencies: Vec::new(),
            tasks: tasks::Tracker::default(),
        })
    }

    /// Whether nothing more is worth sending: the server is gone or deaf, or the property the
    /// plan stops on broke.
    fn over(&self) -> bool {
        self.gone.is_some() || self.deaf.is_some() || self.stopped()
    }

    /// Whether the property the plan stops on broke (then nothing is waited for any more:
    /// shrinking runs many cases, and each wait would cost its budget).
    fn stopped(&self) -> bool {
        self.stop
            || self.plan.stop_on.is_some_and(|stop| {
                self.pending_findings.iter().any(|f| f.property == stop && !self.options.allows(f))
            })
    }

    /// The wait for an answer that may never come, to a message testing `property`: a glance
    /// when its silent failure is known already.
    fn answer_wait(&self, property: Property) -> Duration {
        if self.plan.settled.contains(&property) { self.plan.budgets.glance } else { self.plan.budgets.parse }
    }

    /// Hands the findings made while receiving to `out`.
    fn drain_findings(&mut self, out: &mut Checker<'_>) {
        for _ in 0..std::mem::take(&mut self.pending_checks) {
            out.checked(Property::Schema);
        }
        for finding in self.pending_findings.drain(..) {
            self.stop |= self.plan.stop_on == Some(finding.property) && !self.options.allows(&finding);
            out.findings.push(finding);
        }
    }

    /// Receives until `done` holds or `wait` passes; false on timeout or when the server left.
    async fn pump_until(&mut self, wait: Duration, mut done: impl FnMut(&Self) -> bool) -> bool {
        let deadline = Instant::now() + wait;
        while !done(self) {
            if self.gone.is_some() || self.stopped() {
                return false;
            }
            let Some(left) = deadline.checked_duration_since(Instant::now()) else { return false };
            match self.peer.recv(left).await {
                None => return false,
                Some(incoming) => self.handle(incoming).await,
            }
        }
        true
    }

    fn record(&self, dir: Direction, bytes: &[u8]) -> usize {
        match &self.recorder {
            Some(recorder) => {
                let mut recorder = recorder.lock().unwrap_or_else(|e| e.into_inner());
                recorder.record(dir, bytes, None);
                recorder.trace().entries.len() - 1
            }
            None => 0,
        }
    }

    async fn send(&mut self, message: &Value) {
        let bytes = serde_json::to_vec(message).unwrap_or_default();
        self.send_bytes(&bytes, &[]).await;
    }

    /// Sends one message (over HTTP with `headers` on its `POST`), recording it first.
    /// Returns the message's line in the trace.
    async fn send_bytes(&mut self, bytes: &[u8], headers: &[(String, String)]) -> usize {
        let line = self.record(Direction::Client, bytes);
        if let Err(e) = self.peer.send(bytes, headers).await {
            self.gone.get_or_insert(format!("sending failed: {e}"));
        }
        line
    }

    async fn request(&mut self, method: &str, mut params: Value) -> String {
        if self.modern
            && let Some(params) = params.as_object_mut()
        {
            let meta = params.entry("_meta").or_insert_with(|| json!({}));
            if let Some(meta) = meta.as_object_mut() {
                meta.insert(META_PROTOCOL_VERSION.into(), Value::from(self.version.clone()));
                meta.insert(META_CLIENT_INFO.into(), client_info());
                meta.insert(META_CLIENT_CAPABILITIES.into(), self.task_capabilities());
            }
        }
        let headers = match (self.modern, method, &self.tools) {
            (true, "tools/call", Some(tools)) => param_headers(tools, &params),
            _ => Vec::new(),
        };
        let id = self.next_id;
        self.next_id += 1;
        let alone = self.sent.keys().all(|id| self.responses.contains_key(id));
        self.sent.insert(id.to_string(), Sent { method: method.to_owned(), at: Instant::now(), alone });
        let message = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        self.send_bytes(&serde_json::to_vec(&message).unwrap_or_default(), &headers).await;
        id.to_string()
    }

    async fn handle(&mut self, incoming: Incoming) {
        let bytes = match incoming {
            Incoming::Message { bytes, .. } => bytes,
            Incoming::Empty(_) => return,
            Incoming::Closed(why) => {
                self.gone.get_or_insert(why);
                return;
            }
        };
        let line = self.record(Direction::Server, &bytes);
        let Ok(message) = serde_json::from_slice::<Value>(&bytes) else {
            self.edits.insert(line, TraceEdit::Drop);
            self.pending_findings.push(Finding {
                property: Property::Schema,
                known: None,
                message: format!(
                    "the server wrote a line that is not JSON: {}",
                    String::from_utf8_lossy(&bytes)
                ),
            });
            return;
        };
        let version = self.version.clone();
        match (message.get("method").and_then(Value::as_str), message.get("id")) {
            (Some(method), id) => {
                self.pending_checks += 1;
                if let Err(errors) = official::validate_server_message(&version, &message) {
                    let list: Vec<String> = errors.iter().take(3).map(ToString::to_string).collect();
                    self.edits.insert(line, TraceEdit::Drop);
                    self.pending_findings.push(Finding {
                        property: Property::Schema,
                        known: None,
                        message: format!(
                            "the server's {method} does not match the schema: {}",
                            list.join("; ")
                        ),
                    });
                }
                if let Some(id) = id {
                    let answer = answer_server_request(method, id);
                    self.send(&answer).await;
                }
            }
            (None, Some(id)) => {
                let key = id.to_string();
                if id.is_null() {
                    self.strays.push(Received { message, line });
                } else if !self.sent.contains_key(&key) {
                    self.unknown_ids += 1;
                    self.edits.insert(line, TraceEdit::Drop);
                    self.pending_findings.push(Finding {
                        property: Property::OneResponse,
                        known: None,
                        message: format!(
                            "a response with id {id}, which no request had: {}",
                            short(&message)
                        ),
                    });
                } else {
                    if let Some(Sent { method, at, alone: true }) = self.sent.get(&key)
                        && !may_take_long(method)
                        && self.responses.get(&key).is_none_or(Vec::is_empty)
                    {
                        self.latencies.push(at.elapsed());
                    }
                    let seen = self.responses.entry(key).or_default();
                    if !seen.is_empty() {
                        self.edits.insert(line, TraceEdit::Drop);
                        self.pending_findings.push(Finding {
                            property: Property::OneResponse,
                            known: None,
                            message: format!("request {id} was answered twice: {}", short(&message)),
                        });
                    }
                    seen.push(Received { message, line });
                }
            }
            (None, None) => {
                self.edits.insert(line, TraceEdit::Drop);
                self.pending_findings.push(Finding {
                    property: Property::Schema,
                    known: None,
                    message: format!(
                        "a message that is neither request, notification nor response: {}",
                        short(&message)
                    ),
                });
            }
        }
    }

    /// The handshake: `initialize` and `notifications/initialized`, or for 2026-07-28 a
    /// `server/discover` (every later request carries the client's `_meta`).
    async fn initialize(&mut self) -> Result<Value, String> {
        let method = if self.modern { "server/discover" } else { "initialize" };
        let params = if self.modern {
            json!({})
        } else {
            json!({
                "protocolVersion": self.options.protocol_version,
                "capabilities": client_capabilities(),
                "clientInfo": client_info(),
            })
        };
        let id = self.request(method, params).await;
        let timeout = self.options.request_timeout;
        let strays_before = self.strays.len();
        // An error with a null id also ends the wait: over HTTP, a server that refuses the
        // request outright (a 400) answers that way.
        let answered = |s: &Self| s.responses.contains_key(&id) || s.strays.len() > strays_before;
        if !self.pump_until(timeout, answered).await {
            return Err(self
                .gone
                .clone()
                .unwrap_or_else(|| format!("no answer to {method} within {timeout:?}")));
        }
        if !self.responses.contains_key(&id) {
            let refusal = self.strays.get(strays_before).map(|r| short(&r.message)).unwrap_or_default();
            return Err(format!("{method} was refused: {refusal}"));
        }
        let response = self.responses[&id][0].message.clone();
        if response.get("result").is_none() {
            return Err(format!("{method} was refused: {}", short(&response)));
        }
        if self.modern {
            let supported = response.pointer("/result/supportedVersions").and_then(Value::as_array);
            if !supported.into_iter().flatten().any(|v| v.as_str() == Some(self.version.as_str())) {
                return Err(format!(
                    "the server does not list {} in server/discover: {}",
                    self.version,
                    short(&response)
                ));
            }
            return Ok(response);
        }
        if let Some(version) = response.pointer("/result/protocolVersion").and_then(Value::as_str) {
            self.version = version.to_owned();
        }
        self.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"})).await;
        // Over HTTP, the stream on which the server sends requests and notifications that
        // belong to no request (`roots/list`, say): without it, a server that asks the client
        // something would wait for an answer that cannot come. Nothing to do over stdio; a
        // server without the stream refuses it, which changes nothing.
        if let Err(e) = self.peer.open_stream().await {
            self.gone.get_or_insert(format!("opening the server's message stream failed: {e}"));
        }
        Ok(response)
    }

    async fn list_all(&mut self, method: &str, field: &str) -> Vec<Value> {
        let mut items = Vec::new();
        let mut cursor: Option<Value> = None;
        for _ in 0..20 {
            let params = match &cursor {
                Some(cursor) => json!({"cursor": cursor}),
                None => json!({}),
            };
            let id = self.request(method, params).await;
            if !self.pump_until(self.options.request_timeout, |s| s.responses.contains_key(&id)).await {
                break;
            }
            let response = &self.responses[&id][0].message;
            items.extend(
                response
                    .pointer(&format!("/result/{field}"))
                    .and_then(Value::as_array)
                    .cloned()
                    .unwrap_or_default(),
            );
            cursor = response.pointer("/result/nextCursor").filter(|c| c.is_string()).cloned();
            if cursor.is_none() {
                break;
            }
        }
        items
    }

    async fn perform(&mut self, action: &Action, out: &mut Checker<'_>) {
        match action {
            Action::Malformed(text) => {
                let strays_before = self.strays.len();
                let sent = self.send_bytes(text.as_bytes(), &[]).await;
                let wait = self.answer_wait(Property::ParseError);
                self.pump_until(wait, |s| s.strays.len() > strays_before).await;
                let got = self.strays.get(strays_before).cloned();
                let due = json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32700, "message": "Parse error"}});
                match self.error_answer(got, -32700, Property::ParseError, out) {
                    None | Some(ErrorAnswer::Due) => {}
                    Some(ErrorAnswer::Wrong(Received { message: response, line })) => {
                        self.edits.insert(line, TraceEdit::Replace(due));
                        out.finding(
                            Property::ParseError,
                            format!(
                                "malformed JSON {text:?} got {} instead of error -32700",
                                short(&response)
                            ),
                        );
                    }
                    Some(ErrorAnswer::Missing) => {
                        self.edits.insert(sent, TraceEdit::InsertAfter(due));
                        out.known_finding(
                            SdkDeviation::SilentOnMalformedJson,
                            format!(
                                "malformed JSON {text:?} got no answer within {wait:?} (expected error -32700)"
                            ),
                        );
                    }
                }
            }
            Action::InvalidRequest(template) => {
                let key = template.contains("ID").then(|| {
                    let id = self.next_id;
                    self.next_id += 1;
                    let sent =
                        Sent { method: "(an invalid request)".into(), at: Instant::now(), alone: false };
                    self.sent.insert(id.to_string(), sent);
                    id.to_string()
                });
                let text = match &key {
                    Some(id) => template.replace("ID", id),
                    None => template.clone(),
                };
                let strays_before = self.strays.len();
                self.send_bytes(text.as_bytes(), &[]).await;
                let answered = |s: &Self| {
                    s.strays.len() > strays_before
                        || key.as_ref().is_some_and(|k| s.responses.contains_key(k))
                };
                let wait = self.answer_wait(Property::InvalidRequest);
                self.pump_until(wait, answered).await;
                let got = key
                    .as_ref()
                    .and_then(|k| self.responses.get(k))
                    .and_then(|r| r.first())
                    .or_else(|| self.strays.get(strays_before))
                    .cloned();
                match self.error_answer(got, -32600, Property::InvalidRequest, out) {
                    None | Some(ErrorAnswer::Due) => {}
                    Some(ErrorAnswer::Wrong(Received { message: response, line })) => {
                        self.edits.insert(line, TraceEdit::Drop);
                        let message = format!(
                            "the invalid request {text} got {} instead of error -32600",
                            short(&response)
                        );
                        match response.pointer("/error/code").and_then(Value::as_i64) {
                            Some(-32700) => {
                                out.known_finding(SdkDeviation::ParseErrorForInvalidRequest, message)
                            }
                            Some(-32602) => {
                                out.known_finding(SdkDeviation::InvalidParamsForInvalidRequest, message);
                            }
                            _ => out.finding(Property::InvalidRequest, message),
                        }
                    }
                    Some(ErrorAnswer::Missing) => {
                        out.known_finding(
                            SdkDeviation::SilentOnInvalidRequest,
                            format!(
                                "the invalid request {text} got no answer within {wait:?} (expected error -32600)"
                            ),
                        );
                    }
                }
            }
            Action::Cancelled(inner) => {
                let Some((method, params)) = inner.request() else { return };
                let id = self.request(&method, params).await;
                self.cancel(&id).await;
                // An answer is allowed but not required; give it a moment, then move on.
                let glance = self.plan.budgets.glance;
                self.pump_until(glance, |s| s.responses.contains_key(&id)).await;
                if let Some(received) = self.responses.get(&id).and_then(|r| r.first()).cloned() {
                    // `-32800` answers the cancellation, not the request: the Python SDK's
                    // 2025-era HTTP transport ends a cancelled request with it, before or
                    // instead of checking its params. Only its shape is judged then.
                    let judged = if answers_the_cancellation(&received.message) { action } else { inner };
                    self.judge(judged, &method, &received, out);
                }
                let what = format!("{} was cancelled", action_line(inner));
                self.probe(&what, out).await;
            }
            Action::Concurrent(actions) => {
                let mut waiting = Vec::new();
                for action in actions {
                    if let Some((method, params)) = action.request() {
                        let budget = self.budget(action, &method);
                        let id = self.request(&method, params).await;
                        waiting.push(Waiting { id, method, action, budget });
                    }
                }
                let ids: Vec<(String, &Action)> = waiting.iter().map(|w| (w.id.clone(), w.action)).collect();
                self.await_answers(waiting, out).await;
                self.follow_tasks(&ids, out).await;
            }
            Action::CancelTask(inner) => self.cancel_task(inner, out).await,
            other => {
                let Some((method, params)) = other.request() else { return };
                let budget = self.budget(other, &method);
                let id = self.request(&method, params).await;
                self.await_answers(vec![Waiting { id: id.clone(), method, action: other, budget }], out)
                    .await;
                self.follow_tasks(&[(id, other)], out).await;
            }
        }
        self.drain_findings(out);
    }

    /// Checks `received`, the answer to a request of `action`; an answer that breaks a
    /// property gives way in the trace to the one that was due, or, where more than one answer
    /// would do (`-32602` or `isError`), leaves the trace.
    fn judge(&mut self, action: &Action, method: &str, received: &Received, out: &mut Checker<'_>) {
        let before = out.findings.len();
        out.answer(action, method, &received.message);
        for finding in &out.findings[before..] {
            let edit = match finding.property {
                Property::MethodNotFound => TraceEdit::Replace(json!({
                    "jsonrpc": "2.0",
                    "id": received.message.get("id"),
                    "error": {"code": -32601, "message": "Method not found"},
                })),
                _ => TraceEdit::Drop,
            };
            self.edits.insert(received.line, edit);
        }
    }

    /// Sorts the answer `got` to a message that must get error `code`, counting a test of
    /// `property`; `None` when nothing came because the session is over (no test then).
    fn error_answer(
        &self,
        got: Option<Received>,
        code: i64,
        property: Property,
        out: &mut Checker<'_>,
    ) -> Option<ErrorAnswer> {
        let answer = match got {
            Some(received)
                if received.message.pointer("/error/code").and_then(Value::as_i64) == Some(code) =>
            {
                ErrorAnswer::Due
            }
            Some(received) => ErrorAnswer::Wrong(received),
            None if self.over() => return None,
            None => ErrorAnswer::Missing,
        };
        out.checked(property);
        Some(answer)
    }

    /// How long a request may go unanswered before it is cancelled (if it may take long) or
    /// its silence is a violation.
    fn budget(&self, action: &Action, method: &str) -> Duration {
        let budgets = &self.plan.budgets;
        if !may_take_long(method) {
            self.verdict_budget(Property::OneResponse)
        } else if self.plan.slow_keys.contains(&slow_key(action, method)) {
            budgets.known_slow
        } else {
            budgets.slow
        }
    }

    /// How long an answer that must come is waited for, when its silence breaks `property`.
    fn verdict_budget(&self, property: Property) -> Duration {
        let budgets = &self.plan.budgets;
        if self.plan.settled.contains(&property) {
            budgets.settled.min(budgets.verdict)
        } else {
            budgets.verdict
        }
    }

    /// Sends `notifications/cancelled` for request `id`. Its id stays among those sent, so a
    /// late answer is no stray, and is judged like any other.
    async fn cancel(&mut self, id: &str) {
        let id_value: Value = serde_json::from_str(id).unwrap_or(Value::Null);
        self.send(&json!({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId": id_value, "reason": "mcp-conformance check: no answer within its time budget"}}))
            .await;
    }

    /// Waits for the answers to requests sent together, each within its budget, and judges
    /// them. A request that may take long and outlives its budget is cancelled; then the
    /// server must still answer a probe, and the request is reported as slow.
    async fn await_answers(&mut self, waiting: Vec<Waiting<'_>>, out: &mut Checker<'_>) {
        let started = Instant::now();
        let unknown_before = self.unknown_ids;
        let longest = waiting.iter().map(|w| w.budget).max().unwrap_or_default();
        let ids: Vec<String> = waiting.iter().map(|w| w.id.clone()).collect();
        // Until every one is answered, or the longest budget passed, or a response came with an
        // id no request had (it is taken to be the missing answer: that violation is the
        // finding, and waiting longer would only cost time).
        self.pump_until(longest, |s| {
            ids.iter().all(|id| s.responses.contains_key(id)) || s.unknown_ids > unknown_before
        })
        .await;
        let misdirected = self.unknown_ids > unknown_before;
        let mut slow = Vec::new();
        for wait in waiting {
            if let Some(received) = self.responses.get(&wait.id).and_then(|r| r.first()).cloned() {
                out.checked(Property::OneResponse);
                self.judge(wait.action, &wait.method, &received, out);
                continue;
            }
            if misdirected || self.over() {
                if let Some(why) = &self.gone {
                    out.finding(
                        Property::Survives,
                        format!(
                            "the server went away ({why}) before answering {} {}",
                            wait.method,
                            request_summary(wait.action)
                        ),
                    );
                }
                continue;
            }
            if may_take_long(&wait.method) {
                self.cancel(&wait.id).await;
                out.cut_short.insert(slow_key(wait.action, &wait.method));
                slow.push(wait);
            } else {
                out.checked(Property::OneResponse);
                out.finding(
                    Property::OneResponse,
                    format!(
                        "no response to {} {} within {:?}",
                        wait.method,
                        request_summary(wait.action),
                        started.elapsed().min(wait.budget)
                    ),
                );
            }
        }
        if slow.is_empty() {
            return;
        }
        let names: Vec<String> = slow.iter().map(|w| action_line(w.action)).collect();
        let what = format!("{} got no answer within its budget and was cancelled", names.join(" and "));
        if let Some(probe) = self.probe(&what, out).await {
            for wait in slow {
                out.slow.push(SlowRequest {
                    key: slow_key(wait.action, &wait.method),
                    request: action_line(wait.action),
                    budget: wait.budget,
                    probe,
                });
            }
        }
    }

    /// Whether the server still answers, after `what`: a `ping` (`server/discover` in
    /// 2026-07-28) within the verdict budget. Returns how long the answer took.
    async fn probe(&mut self, what: &str, out: &mut Checker<'_>) -> Option<Duration> {
        let alive = if self.modern { "server/discover" } else { "ping" };
        let sent = Instant::now();
        let id = self.request(alive, json!({})).await;
        let budget = self.verdict_budget(Property::Responsive);
        let answered = self.pump_until(budget, |s| s.responses.contains_key(&id)).await;
        if self.stopped() {
            return None;
        }
        out.checked(Property::Responsive);
        if answered {
            return Some(sent.elapsed());
        }
        match self.gone.clone() {
            Some(why) => {
                out.finding(Property::Survives, format!("the server went away ({why}) after {what}"))
            }
            None => {
                let why = format!("after {what}, the server did not answer {alive} within {budget:?}");
                out.finding(Property::Responsive, why.clone());
                self.deaf = Some(why);
            }
        }
        None
    }

    async fn survives(&mut self, out: &mut Checker<'_>) {
        if self.deaf.is_some() {
            // `responsive` said it already; another unanswered ping would only cost its budget.
            return;
        }
        // Sent even to a server that is gone, so that the trace ends with a request a replay
        // against the same server finds unanswered.
        let alive = if self.modern { "server/discover" } else { "ping" };
        let id = self.request(alive, json!({})).await;
        if self.stopped() {
            return;
        }
        out.checked(Property::Survives);
        if let Some(why) = self.gone.clone() {
            if !out.findings.iter().any(|f| f.property == Property::Survives) {
                out.finding(Property::Survives, format!("the server went away: {why}"));
            }
            return;
        }
        let budget = self.verdict_budget(Property::Survives);
        let answered = self.pump_until(budget, |s| s.responses.contains_key(&id)).await;
        // Late stragglers: duplicates of earlier answers, stray ids.
        self.pump_until(Duration::from_millis(50), |_| false).await;
        if self.stopped() {
            self.drain_findings(out);
            return;
        }
        self.drain_findings(out);
        if !answered {
            let why = self.gone.clone().unwrap_or_else(|| format!("no answer within {budget:?}"));
            out.finding(Property::Survives, format!("the server did not answer a final {alive}: {why}"));
        }
    }

    /// Ends the session; a stdio server gets a moment to exit on its own before it is killed,
    /// a shorter one while shrinking, where sessions are many and only the verdict matters.
    async fn close(self) {
        let grace = if self.plan.stop_on.is_some() { 50 } else { 300 };
        self.peer.shutdown(Duration::from_millis(grace)).await;
    }
}

/// The `Mcp-Param-*` headers of a 2026-07-28 `tools/call` over HTTP (see `headers.rs`). Over
/// stdio the peer ignores them.
fn param_headers(tools: &[Value], params: &Value) -> Vec<(String, String)> {
    let name = params.get("name").and_then(Value::as_str);
    let tool = tools.iter().find(|t| t.get("name").and_then(Value::as_str) == name);
    let (Some(tool), Some(arguments)) = (tool, params.get("arguments")) else { return Vec::new() };
    match tool.get("inputSchema").map(headers::annotations) {
        Some(Ok(annotations)) => headers::headers(&annotations, arguments),
        // Invalid: a conforming client never calls it (`explore` leaves such tools out).
        _ => Vec::new(),
    }
}

/// The check client's answer to a server request: one root, a canned sampling reply, a
/// declined elicitation, `{}` for ping, `-32601` otherwise.
fn answer_server_request(method: &str, id: &Value) -> Value {
    let result = match method {
        "ping" => json!({}),
        "roots/list" => json!({"roots": [{"uri": crate::record::RECORDING_ROOT, "name": "check"}]}),
        "sampling/createMessage" => json!({
            "role": "assistant",
            "content": {"type": "text", "text": "A sampling reply from mcp-conformance check."},
            "model": "mcp-conformance",
            "stopReason": "endTurn"
        }),
        "elicitation/create" => json!({"action": "decline"}),
        _ => {
            return json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32601, "message": format!("{method} is not supported by mcp-conformance check")}});
        }
    };
    json!({"jsonrpc": "2.0", "id": id, "result": result})
}

/// Starts a session and learns what the server offers.
pub async fn explore(target: &Target, options: &CheckOptions) -> io::Result<Catalog> {
    let plan = Plan::full(options);
    let mut session = Session::start(target, options, &plan, None).await?;
    let init = session.initialize().await.map_err(io::Error::other)?;
    let server_info = init
        .pointer("/result/serverInfo")
        .or_else(|| init.pointer("/result/_meta").and_then(|meta| meta.get(META_SERVER_INFO)))
        .cloned()
        .unwrap_or(Value::Null);
    let mut catalog = Catalog {
        version: session.version.clone(),
        server_info,
        capabilities: init.pointer("/result/capabilities").cloned().unwrap_or(Value::Null),
        ..Default::default()
    };
    if catalog.has("tools") {
        catalog.tools = session.list_all("tools/list", "tools").await;
        catalog.tools.retain(|tool| {
            let name = tool.get("name").and_then(Value::as_str).unwrap_or_default();
            !options.skip_tools.contains(name)
                && (options.only_tools.is_empty() || options.only_tools.contains(name))
        });
        if session.modern && matches!(target, Target::Http { .. }) {
            // A 2026-07-28 client over HTTP leaves out the tools whose x-mcp-header annotations
            // are invalid (the spec's MUST): they are not called.
            catalog
                .tools
                .retain(|tool| !matches!(tool.get("inputSchema").map(headers::annotations), Some(Err(_))));
        }
    }
    let offered = |name: &String| catalog.tool(name).is_some() || options.skip_tools.contains(name);
    if let Some(missing) = options.only_tools.iter().find(|name| !offered(name)) {
        session.close().await;
        return Err(io::Error::new(
            io::ErrorKind::NotFound,
            format!("the server offers no tool named {missing:?} (asked for with --tool)"),
        ));
    }
    if catalog.has("prompts") {
        catalog.prompts = session.list_all("prompts/list", "prompts").await;
    }
    if catalog.has("resources") {
        catalog.resources = session
            .list_all("resources/list", "resources")
            .await
            .iter()
            .filter_map(|r| r.get("uri").and_then(Value::as_str).map(str::to_owned))
            .take(16)
            .collect();
    }
    if catalog.offers(SKILLS_EXTENSION) {
        catalog.skills = session.list_all("skills/list", "skills").await;
        catalog.skills.truncate(16);
    }
    session.close().await;
    Ok(catalog)
}
