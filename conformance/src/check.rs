//! Property tests of a live MCP server, in any language, with proptest.
//!
//! [`explore`] asks the server what it offers (tools with their input schemas, prompts,
//! resources). [`actions`] turns that into a proptest strategy of request sequences: calls with
//! valid, boundary and invalid arguments, prompts, reads, lists, pings, unknown methods,
//! malformed JSON, invalid requests, cancellations and concurrent batches. [`run_case`] plays one sequence
//! against a fresh session and checks the protocol's invariants:
//!
//! - every request gets exactly one response, with its id; no response has an id that was never
//!   sent (a cancelled request may go unanswered);
//! - malformed JSON gets a `-32700` error, JSON that is not a valid request `-32600`, and an
//!   unknown method `-32601`;
//! - invalid tool arguments get `-32602` or a result with `isError: true`;
//! - every result and every server message validates against the official JSON schema of the
//!   negotiated version, and `structuredContent` against the tool's `outputSchema`;
//! - the server is still there at the end (it answers `ping`).
//!
//! [`check`] runs many cases, and when one fails lets proptest shrink it to a minimal sequence,
//! which it replays once more while recording a trace that `mcp-conformance replay` reproduces.
//! Softer findings (a tool that accepts invalid arguments, an internal error on valid ones) are
//! reported as warnings and do not fail the check.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::io;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use proptest::prelude::*;
use proptest::test_runner::{Config, TestCaseError, TestError, TestRunner};
use serde_json::{Value, json};

use mcp_sansio::schema::{
    META_CLIENT_CAPABILITIES, META_CLIENT_INFO, META_PROTOCOL_VERSION, META_SERVER_INFO,
};

use crate::json_schema::Schema;
use crate::peer::{Incoming, LivePeer, Target};
use crate::rules::short;
use crate::trace::{Direction, Trace, TraceBuffer, TraceHeader};
use crate::{arguments, official};

/// The protocol version `check` negotiates unless told otherwise.
pub const DEFAULT_VERSION: &str = "2025-11-25";

/// How a check runs.
#[derive(Debug, Clone)]
pub struct CheckOptions {
    /// How many sequences to try (before shrinking).
    pub cases: u32,
    /// The longest sequence.
    pub max_actions: usize,
    /// The longest wait for any one response.
    pub request_timeout: Duration,
    /// The longest wait for an answer to malformed JSON (which some servers never answer).
    pub parse_error_timeout: Duration,
    /// Stop starting new cases after this long (shrinking a failure may take a little more).
    pub time_limit: Duration,
    /// The most shrink steps after a failure.
    pub max_shrink_iters: u32,
    /// The protocol version to ask for in `initialize`.
    pub protocol_version: String,
    /// Properties that only warn (by name, see [`Property`]).
    pub allow: BTreeSet<Property>,
    /// A fixed seed, for a repeatable run.
    pub seed: Option<u64>,
    /// Tools never to call (destructive ones, or ones that may legitimately take very long).
    pub skip_tools: BTreeSet<String>,
}

impl Default for CheckOptions {
    fn default() -> Self {
        Self {
            cases: 32,
            max_actions: 6,
            request_timeout: Duration::from_secs(5),
            parse_error_timeout: Duration::from_secs(2),
            time_limit: Duration::from_secs(120),
            max_shrink_iters: 1000,
            protocol_version: DEFAULT_VERSION.into(),
            allow: BTreeSet::new(),
            seed: None,
            skip_tools: BTreeSet::new(),
        }
    }
}

/// The properties `check` tests, by the names `--allow` takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Property {
    /// Exactly one response per request, with its id (`one-response`).
    OneResponse,
    /// Malformed JSON gets `-32700` (`parse-error`).
    ParseError,
    /// JSON that is not a valid request gets `-32600` (`invalid-request`).
    InvalidRequest,
    /// An unknown method gets `-32601` (`method-not-found`).
    MethodNotFound,
    /// Invalid tool arguments get `-32602` or `isError` (`invalid-params`).
    InvalidParams,
    /// Results and server messages match the official schema (`schema`).
    Schema,
    /// `structuredContent` matches the tool's `outputSchema` (`output-schema`).
    OutputSchema,
    /// The server survives the sequence (`survives`).
    Survives,
}

impl Property {
    /// Every property.
    pub const ALL: [Property; 8] = [
        Property::OneResponse,
        Property::ParseError,
        Property::InvalidRequest,
        Property::MethodNotFound,
        Property::InvalidParams,
        Property::Schema,
        Property::OutputSchema,
        Property::Survives,
    ];

    /// The name `--allow` takes.
    pub fn name(self) -> &'static str {
        match self {
            Property::OneResponse => "one-response",
            Property::ParseError => "parse-error",
            Property::InvalidRequest => "invalid-request",
            Property::MethodNotFound => "method-not-found",
            Property::InvalidParams => "invalid-params",
            Property::Schema => "schema",
            Property::OutputSchema => "output-schema",
            Property::Survives => "survives",
        }
    }

    /// The property with this name.
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|p| p.name() == name)
    }
}

impl fmt::Display for Property {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// What the server offers, learned once before the cases.
#[derive(Debug, Clone, Default)]
pub struct Catalog {
    /// The negotiated protocol version.
    pub version: String,
    /// `serverInfo`.
    pub server_info: Value,
    /// The server's capabilities.
    pub capabilities: Value,
    /// The tools (as listed, with their schemas).
    pub tools: Vec<Value>,
    /// The prompts.
    pub prompts: Vec<Value>,
    /// The URIs of the listed resources.
    pub resources: Vec<String>,
}

impl Catalog {
    fn has(&self, capability: &str) -> bool {
        self.capabilities.get(capability).is_some()
    }

    fn tool(&self, name: &str) -> Option<&Value> {
        self.tools.iter().find(|t| t.get("name").and_then(Value::as_str) == Some(name))
    }
}

/// How a tool's arguments were made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ArgumentKind {
    /// Valid per the input schema.
    Valid,
    /// Valid, with values at the edges.
    Boundary,
    /// Invalid in the way described.
    Invalid(String),
}

/// One step of a generated sequence.
#[derive(Debug, Clone, PartialEq)]
pub enum Action {
    /// `tools/call`.
    CallTool {
        /// The tool.
        name: String,
        /// The arguments.
        arguments: Value,
        /// How they were made.
        kind: ArgumentKind,
    },
    /// `prompts/get`.
    GetPrompt {
        /// The prompt.
        name: String,
        /// The arguments.
        arguments: Value,
        /// Whether a required argument was left out.
        missing_required: bool,
    },
    /// `resources/read` of a listed resource (`true`) or of one that does not exist.
    ReadResource {
        /// The URI.
        uri: String,
        /// Whether the server listed it.
        listed: bool,
    },
    /// A `*/list` request.
    List(&'static str),
    /// `ping`.
    Ping,
    /// A request with a method no server implements.
    UnknownMethod(String),
    /// A line that is not JSON.
    Malformed(String),
    /// JSON that is not a valid JSON-RPC request (`ID` stands for a fresh request id).
    InvalidRequest(String),
    /// The request, then at once `notifications/cancelled` for it.
    Cancelled(Box<Action>),
    /// All of these sent before any answer is awaited.
    Concurrent(Vec<Action>),
}

impl Action {
    /// The JSON-RPC method and params this action sends, if it is one request.
    fn request(&self) -> Option<(String, Value)> {
        Some(match self {
            Action::CallTool { name, arguments, .. } => {
                ("tools/call".into(), json!({"name": name, "arguments": arguments}))
            }
            Action::GetPrompt { name, arguments, .. } => {
                ("prompts/get".into(), json!({"name": name, "arguments": arguments}))
            }
            Action::ReadResource { uri, .. } => ("resources/read".into(), json!({"uri": uri})),
            Action::List(method) => ((*method).into(), json!({})),
            Action::Ping => ("ping".into(), json!({})),
            Action::UnknownMethod(method) => (method.clone(), json!({})),
            Action::Malformed(_)
            | Action::InvalidRequest(_)
            | Action::Cancelled(_)
            | Action::Concurrent(_) => {
                return None;
            }
        })
    }
}

/// A finding: a property that did not hold.
#[derive(Debug, Clone, PartialEq)]
pub struct Finding {
    /// Which property.
    pub property: Property,
    /// What happened.
    pub message: String,
}

impl fmt::Display for Finding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "[{}] {}", self.property, self.message)
    }
}

/// The outcome of one sequence.
#[derive(Debug, Clone)]
pub struct CaseOutcome {
    /// Properties that failed.
    pub violations: Vec<Finding>,
    /// Softer findings (and violations of allowed properties).
    pub warnings: Vec<String>,
    /// The session, as a trace; server lines that broke a property are left out, so that a
    /// replay against the same server fails the same way and a fixed server passes.
    pub trace: Trace,
}

const CLIENT_NAME: &str = "mcp-conformance-check";

/// Whether `version` is of the stateless era (2026-07-28 and later; dates sort as text).
fn is_modern(version: &str) -> bool {
    version >= "2026-07-28"
}

fn client_info() -> Value {
    json!({"name": CLIENT_NAME, "version": env!("CARGO_PKG_VERSION")})
}

/// What the check client declares: roots, sampling and elicitation, all answered.
fn client_capabilities() -> Value {
    json!({"roots": {"listChanged": true}, "sampling": {}, "elicitation": {}})
}

/// Starts a session and learns what the server offers.
pub async fn explore(target: &Target, options: &CheckOptions) -> io::Result<Catalog> {
    let mut session = Session::start(target, options, None).await?;
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
        });
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
    session.close().await;
    Ok(catalog)
}

/// Malformed lines `check` sends.
const MALFORMED: &[&str] = &[
    "this is not JSON",
    r#"{"jsonrpc":"2.0","id":900,"method":"ping""#,
    r#"{"jsonrpc":"2.0","id":,"method":"tools/list"}"#,
    "[1, 2, ",
    "\u{1}\u{2}{}}",
];

/// JSON that is not a valid request: a method that is not a string, a wrong or missing
/// `jsonrpc`, an id that is neither string nor number. `ID` becomes a fresh request id, which
/// the answer should carry.
const INVALID_REQUESTS: &[&str] = &[
    r#"{"jsonrpc":"2.0","id":ID,"method":42}"#,
    r#"{"jsonrpc":"1.0","id":ID,"method":"ping"}"#,
    r#"{"id":ID,"method":"ping"}"#,
    r#"{"jsonrpc":"2.0","id":{"not":"an id"},"method":"ping"}"#,
];

/// The strategy of request sequences for `catalog`.
pub fn actions(catalog: &Catalog, max_actions: usize) -> BoxedStrategy<Vec<Action>> {
    let single = single_action(catalog);
    let cancelled = request_action(catalog).prop_map(|a| Action::Cancelled(Box::new(a)));
    let concurrent = proptest::collection::vec(request_action(catalog), 2..=4).prop_map(Action::Concurrent);
    let step = prop_oneof![6 => single, 1 => cancelled, 1 => concurrent];
    proptest::collection::vec(step, 1..=max_actions.max(1)).boxed()
}

/// One action of any kind but the composite ones.
fn single_action(catalog: &Catalog) -> BoxedStrategy<Action> {
    let malformed = proptest::sample::select(MALFORMED).prop_map(|s| Action::Malformed(s.to_owned()));
    let invalid =
        proptest::sample::select(INVALID_REQUESTS).prop_map(|s| Action::InvalidRequest(s.to_owned()));
    prop_oneof![12 => request_action(catalog), 1 => malformed, 1 => invalid].boxed()
}

/// One request.
fn request_action(catalog: &Catalog) -> BoxedStrategy<Action> {
    let mut choices: Vec<(u32, BoxedStrategy<Action>)> = Vec::new();
    for tool in &catalog.tools {
        let Some(name) = tool.get("name").and_then(Value::as_str) else { continue };
        let schema = tool.get("inputSchema").cloned().unwrap_or_else(|| json!({"type": "object"}));
        let call = |kind: ArgumentKind| {
            let name = name.to_owned();
            move |arguments: Value| Action::CallTool { name: name.clone(), arguments, kind: kind.clone() }
        };
        choices.push((4, arguments::valid(&schema).prop_map(call(ArgumentKind::Valid)).boxed()));
        choices.push((2, arguments::boundary(&schema).prop_map(call(ArgumentKind::Boundary)).boxed()));
        if let Some(invalid) = arguments::invalid(&schema) {
            let name = name.to_owned();
            choices.push((
                2,
                invalid
                    .prop_map(move |(arguments, why)| Action::CallTool {
                        name: name.clone(),
                        arguments,
                        kind: ArgumentKind::Invalid(why),
                    })
                    .boxed(),
            ));
        }
    }
    for prompt in &catalog.prompts {
        let Some(name) = prompt.get("name").and_then(Value::as_str) else { continue };
        let declared: Vec<(String, bool)> = prompt
            .get("arguments")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|a| {
                Some((
                    a.get("name")?.as_str()?.to_owned(),
                    a.get("required").and_then(Value::as_bool).unwrap_or(false),
                ))
            })
            .collect();
        let name = name.to_owned();
        let has_required = declared.iter().any(|(_, required)| *required);
        let strategy = (any::<bool>(), "[a-z]{0,8}").prop_map(move |(drop_required, text)| {
            let drop_required = drop_required && has_required;
            let mut arguments = serde_json::Map::new();
            let mut dropped = false;
            for (arg, required) in &declared {
                if *required && drop_required && !dropped {
                    dropped = true;
                    continue;
                }
                if *required || !text.is_empty() {
                    arguments.insert(arg.clone(), Value::String(format!("{text}1")));
                }
            }
            Action::GetPrompt {
                name: name.clone(),
                arguments: Value::Object(arguments),
                missing_required: dropped,
            }
        });
        choices.push((2, strategy.boxed()));
    }
    if !catalog.resources.is_empty() {
        let uris = catalog.resources.clone();
        choices.push((
            2,
            proptest::sample::select(uris).prop_map(|uri| Action::ReadResource { uri, listed: true }).boxed(),
        ));
        choices.push((
            1,
            Just(Action::ReadResource { uri: "mcp-conformance://no/such/resource".into(), listed: false })
                .boxed(),
        ));
    }
    let mut lists = vec!["tools/list", "prompts/list", "resources/list", "resources/templates/list"];
    lists.retain(|m| {
        let capability = m.split('/').next().unwrap_or_default();
        catalog.has(capability)
    });
    if !lists.is_empty() {
        choices.push((1, proptest::sample::select(lists).prop_map(Action::List).boxed()));
    }
    // `ping` is gone in 2026-07-28; `server/discover` may be sent any time instead.
    let alive = if is_modern(&catalog.version) { Action::List("server/discover") } else { Action::Ping };
    choices.push((1, Just(alive).boxed()));
    choices.push((
        1,
        "[a-z]{1,8}".prop_map(|s| Action::UnknownMethod(format!("mcp-conformance/no-such-{s}"))).boxed(),
    ));
    proptest::strategy::Union::new_weighted(choices).boxed()
}

/// Plays `actions` against a fresh session of `target` and checks every property.
pub async fn run_case(
    target: &Target,
    catalog: &Catalog,
    actions: &[Action],
    options: &CheckOptions,
) -> io::Result<CaseOutcome> {
    let mut header =
        TraceHeader::new(target.transport(), target.identity(), crate::record::recorded_with("check"));
    header.protocol_version = Some(catalog.version.clone());
    let recorder = Arc::new(Mutex::new(TraceBuffer::new(header)));
    let mut session = Session::start(target, options, Some(Arc::clone(&recorder))).await?;
    session.tools = Some(&catalog.tools);
    let mut out = Checker { catalog, findings: Vec::new(), warnings: Vec::new() };
    match session.initialize().await {
        Ok(_) => {
            // The tool list first: it puts the tools' output schemas into the trace, for replay.
            if catalog.has("tools") {
                session.perform(&Action::List("tools/list"), &mut out).await;
            }
            for action in actions {
                if !session.alive() || session.stopped() {
                    break;
                }
                session.perform(action, &mut out).await;
            }
            session.survives(&mut out).await;
        }
        Err(why) => out.finding(Property::Survives, format!("the handshake failed: {why}")),
    }
    let dropped = std::mem::take(&mut session.bad_lines);
    session.close().await;
    let mut trace = Arc::try_unwrap(recorder)
        .map(|m| m.into_inner().unwrap_or_else(|e| e.into_inner()).into_trace())
        .unwrap_or_else(|shared| shared.lock().unwrap_or_else(|e| e.into_inner()).trace().clone());
    let mut index = 0;
    trace.entries.retain(|_| {
        index += 1;
        !dropped.contains(&(index - 1))
    });
    let (violations, mut warnings): (Vec<Finding>, Vec<Finding>) =
        out.findings.into_iter().partition(|f| !options.allow.contains(&f.property));
    out.warnings.extend(warnings.drain(..).map(|f| format!("{f} (allowed)")));
    Ok(CaseOutcome { violations, warnings: out.warnings, trace })
}

struct Checker<'a> {
    catalog: &'a Catalog,
    findings: Vec<Finding>,
    warnings: Vec<String>,
}

impl Checker<'_> {
    fn finding(&mut self, property: Property, message: impl Into<String>) {
        self.findings.push(Finding { property, message: message.into() });
    }

    fn warn(&mut self, message: impl Into<String>) {
        self.warnings.push(message.into());
    }

    /// Checks the answer to one request.
    fn answer(&mut self, action: &Action, method: &str, response: &Value) {
        let version = self.catalog.version.as_str();
        let error = response.get("error");
        let code = error.and_then(|e| e.get("code")).and_then(Value::as_i64);
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
            Action::UnknownMethod(m) if code != Some(-32601) => self.finding(
                Property::MethodNotFound,
                format!("the unknown method {m} got {} instead of error -32601", describe(response)),
            ),
            Action::CallTool { name, kind: ArgumentKind::Invalid(why), arguments } => {
                if code.is_some_and(|c| c != -32602) {
                    self.finding(
                        Property::InvalidParams,
                        format!(
                            "tools/call {name} with invalid arguments ({why}: {}) got error {} instead of -32602 or a result with isError",
                            short(arguments),
                            code.unwrap_or_default()
                        ),
                    );
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
            _ => {}
        }
    }

    fn output_schema(&mut self, name: &str, result: &Value) {
        let Some(schema) = self.catalog.tool(name).and_then(|t| t.get("outputSchema")) else { return };
        let Ok(schema) = Schema::new(schema.clone()) else { return };
        match result.get("structuredContent") {
            None => self.finding(
                Property::OutputSchema,
                format!("tools/call {name} declares an outputSchema but its result has no structuredContent"),
            ),
            Some(content) => {
                if let Err(errors) = schema.validate(content) {
                    let list: Vec<String> = errors.iter().take(3).map(ToString::to_string).collect();
                    self.finding(
                        Property::OutputSchema,
                        format!(
                            "tools/call {name}: structuredContent does not match the outputSchema: {}",
                            list.join("; ")
                        ),
                    );
                }
            }
        }
    }
}

fn describe(response: &Value) -> String {
    match response.get("error") {
        Some(error) => format!("error {}", error.get("code").map(ToString::to_string).unwrap_or_default()),
        None => "a result".into(),
    }
}

/// A session with the server under test, at the wire level, recording as it goes.
struct Session<'a> {
    peer: LivePeer,
    options: &'a CheckOptions,
    recorder: Option<Arc<Mutex<TraceBuffer>>>,
    next_id: i64,
    /// Responses by id (as JSON text), and how many came.
    responses: BTreeMap<String, Vec<Value>>,
    /// Responses without a request (null id or unknown id), in order.
    strays: Vec<Value>,
    /// Requests sent: id → method.
    sent: BTreeMap<String, String>,
    /// Indexes of trace entries that broke a property.
    bad_lines: BTreeSet<usize>,
    /// Why the server is gone.
    gone: Option<String>,
    /// Findings seen while receiving (wrong ids, schema failures of server messages).
    pending_findings: Vec<Finding>,
    /// The negotiated protocol version (the requested one until the handshake answers).
    version: String,
    /// A property that is not allowed broke: the case is over.
    violated: bool,
    /// Whether the session speaks 2026-07-28 (no handshake, `_meta` on every request).
    modern: bool,
    /// The tools, for the `Mcp-Param-*` headers of 2026-07-28 calls over HTTP.
    tools: Option<&'a [Value]>,
}

impl<'a> Session<'a> {
    async fn start(
        target: &Target,
        options: &'a CheckOptions,
        recorder: Option<Arc<Mutex<TraceBuffer>>>,
    ) -> io::Result<Session<'a>> {
        let peer = LivePeer::connect(target).await?;
        Ok(Session {
            peer,
            options,
            recorder,
            next_id: 1,
            responses: BTreeMap::new(),
            strays: Vec::new(),
            sent: BTreeMap::new(),
            bad_lines: BTreeSet::new(),
            gone: None,
            pending_findings: Vec::new(),
            version: options.protocol_version.clone(),
            violated: false,
            modern: is_modern(&options.protocol_version),
            tools: None,
        })
    }

    fn alive(&self) -> bool {
        self.gone.is_none()
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
    async fn send_bytes(&mut self, bytes: &[u8], headers: &[(String, String)]) {
        self.record(Direction::Client, bytes);
        if let Err(e) = self.peer.send(bytes, headers).await {
            self.gone.get_or_insert(format!("sending failed: {e}"));
        }
    }

    async fn request(&mut self, method: &str, mut params: Value) -> String {
        if self.modern
            && let Some(params) = params.as_object_mut()
        {
            let meta = params.entry("_meta").or_insert_with(|| json!({}));
            if let Some(meta) = meta.as_object_mut() {
                meta.insert(META_PROTOCOL_VERSION.into(), Value::from(self.version.clone()));
                meta.insert(META_CLIENT_INFO.into(), client_info());
                meta.insert(META_CLIENT_CAPABILITIES.into(), client_capabilities());
            }
        }
        let headers = match (self.modern, method, &self.tools) {
            (true, "tools/call", Some(tools)) => param_headers(tools, &params),
            _ => Vec::new(),
        };
        let id = self.next_id;
        self.next_id += 1;
        self.sent.insert(id.to_string(), method.to_owned());
        let message = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        self.send_bytes(&serde_json::to_vec(&message).unwrap_or_default(), &headers).await;
        id.to_string()
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

    /// Whether the case already broke a property that is not allowed: then nothing is waited
    /// for any more (a response that went to the wrong id would otherwise cost a timeout per
    /// case, and shrinking runs many cases).
    fn stopped(&self) -> bool {
        self.violated || self.pending_findings.iter().any(|f| !self.options.allow.contains(&f.property))
    }

    /// How long to wait for the answer to a message that may get none (malformed JSON, an
    /// invalid request): with its property allowed, a short look is enough to report what comes.
    fn answer_wait(&self, property: Property) -> Duration {
        if self.options.allow.contains(&property) {
            self.options.parse_error_timeout.min(Duration::from_millis(200))
        } else {
            self.options.parse_error_timeout
        }
    }

    /// Hands the findings made while receiving to `out`.
    fn drain_findings(&mut self, out: &mut Checker<'_>) {
        for finding in self.pending_findings.drain(..) {
            self.violated |= !self.options.allow.contains(&finding.property);
            out.findings.push(finding);
        }
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
            self.bad_lines.insert(line);
            self.pending_findings.push(Finding {
                property: Property::Schema,
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
                if let Err(errors) = official::validate_server_message(&version, &message) {
                    let list: Vec<String> = errors.iter().take(3).map(ToString::to_string).collect();
                    self.bad_lines.insert(line);
                    self.pending_findings.push(Finding {
                        property: Property::Schema,
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
                    self.strays.push(message);
                } else if !self.sent.contains_key(&key) {
                    self.bad_lines.insert(line);
                    self.pending_findings.push(Finding {
                        property: Property::OneResponse,
                        message: format!(
                            "a response with id {id}, which no request had: {}",
                            short(&message)
                        ),
                    });
                } else {
                    let seen = self.responses.entry(key).or_default();
                    if !seen.is_empty() {
                        self.bad_lines.insert(line);
                        self.pending_findings.push(Finding {
                            property: Property::OneResponse,
                            message: format!("request {id} was answered twice: {}", short(&message)),
                        });
                    }
                    seen.push(message);
                }
            }
            (None, None) => {
                self.bad_lines.insert(line);
                self.pending_findings.push(Finding {
                    property: Property::Schema,
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
        if !self.pump_until(timeout, |s| s.responses.contains_key(&id)).await {
            return Err(self
                .gone
                .clone()
                .unwrap_or_else(|| format!("no answer to {method} within {timeout:?}")));
        }
        let response = self.responses[&id][0].clone();
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
            let response = &self.responses[&id][0];
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
                self.send_bytes(text.as_bytes(), &[]).await;
                let wait = self.answer_wait(Property::ParseError);
                self.pump_until(wait, |s| s.strays.len() > strays_before).await;
                let got = self.strays.get(strays_before).cloned();
                match got {
                    Some(response)
                        if response.pointer("/error/code").and_then(Value::as_i64) == Some(-32700) => {}
                    Some(response) => out.finding(
                        Property::ParseError,
                        format!("malformed JSON {text:?} got {} instead of error -32700", short(&response)),
                    ),
                    None if self.gone.is_some() => {}
                    None => out.finding(
                        Property::ParseError,
                        format!(
                            "malformed JSON {text:?} got no answer within {wait:?} (expected error -32700)"
                        ),
                    ),
                }
            }
            Action::InvalidRequest(template) => {
                let key = template.contains("ID").then(|| {
                    let id = self.next_id;
                    self.next_id += 1;
                    self.sent.insert(id.to_string(), "(an invalid request)".into());
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
                match got {
                    Some(response)
                        if response.pointer("/error/code").and_then(Value::as_i64) == Some(-32600) => {}
                    Some(response) => out.finding(
                        Property::InvalidRequest,
                        format!(
                            "the invalid request {text} got {} instead of error -32600",
                            short(&response)
                        ),
                    ),
                    None if self.gone.is_some() => {}
                    None => out.finding(
                        Property::InvalidRequest,
                        format!(
                            "the invalid request {text} got no answer within {wait:?} (expected error -32600)"
                        ),
                    ),
                }
            }
            Action::Cancelled(inner) => {
                let Some((method, params)) = inner.request() else { return };
                let id = self.request(&method, params).await;
                let id_value: Value = serde_json::from_str(&id).unwrap_or(Value::Null);
                self.send(&json!({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId": id_value, "reason": "check"}}))
                    .await;
                // An answer is allowed but not required; give it a moment, then move on.
                self.pump_until(Duration::from_millis(200), |s| s.responses.contains_key(&id)).await;
                if let Some(response) = self.responses.get(&id).and_then(|r| r.first()).cloned() {
                    out.answer(inner, &method, &response);
                }
                self.sent.remove(&id);
                self.responses.remove(&id);
            }
            Action::Concurrent(actions) => {
                let mut ids = Vec::new();
                for action in actions {
                    if let Some((method, params)) = action.request() {
                        ids.push((self.request(&method, params).await, method, action));
                    }
                }
                let all: Vec<String> = ids.iter().map(|(id, ..)| id.clone()).collect();
                self.pump_until(self.options.request_timeout, |s| {
                    all.iter().all(|id| s.responses.contains_key(id))
                })
                .await;
                for (id, method, action) in ids {
                    self.conclude(&id, &method, action, out);
                }
            }
            other => {
                let Some((method, params)) = other.request() else { return };
                let id = self.request(&method, params).await;
                self.pump_until(self.options.request_timeout, |s| s.responses.contains_key(&id)).await;
                self.conclude(&id, &method, other, out);
            }
        }
        self.drain_findings(out);
    }

    /// The verdict on request `id`'s answer.
    fn conclude(&mut self, id: &str, method: &str, action: &Action, out: &mut Checker<'_>) {
        match self.responses.get(id).and_then(|r| r.first()).cloned() {
            Some(response) => out.answer(action, method, &response),
            None => match &self.gone {
                Some(why) => out.finding(
                    Property::Survives,
                    format!(
                        "the server went away ({why}) before answering {method} {}",
                        request_summary(action)
                    ),
                ),
                None if self.stopped() => {}
                None => out.finding(
                    Property::OneResponse,
                    format!(
                        "no response to {method} {} within {:?}",
                        request_summary(action),
                        self.options.request_timeout
                    ),
                ),
            },
        }
    }

    async fn survives(&mut self, out: &mut Checker<'_>) {
        // Sent even to a server that is gone, so that the trace ends with a request a replay
        // against the same server finds unanswered.
        let alive = if self.modern { "server/discover" } else { "ping" };
        let id = self.request(alive, json!({})).await;
        if self.stopped() {
            return;
        }
        if let Some(why) = self.gone.clone() {
            if !out.findings.iter().any(|f| f.property == Property::Survives) {
                out.finding(Property::Survives, format!("the server went away: {why}"));
            }
            return;
        }
        let answered = self.pump_until(self.options.request_timeout, |s| s.responses.contains_key(&id)).await;
        // Late stragglers: duplicates of earlier answers, stray ids.
        self.pump_until(Duration::from_millis(50), |_| false).await;
        if self.stopped() {
            self.drain_findings(out);
            return;
        }
        self.drain_findings(out);
        if !answered {
            let why = self.gone.clone().unwrap_or_else(|| "no answer".into());
            out.finding(Property::Survives, format!("the server did not answer a final {alive}: {why}"));
        }
    }

    async fn close(self) {
        self.peer.shutdown(Duration::from_millis(300)).await;
    }
}

fn request_summary(action: &Action) -> String {
    match action {
        Action::CallTool { name, arguments, .. } => format!("{name} {}", short(arguments)),
        Action::GetPrompt { name, .. } => name.clone(),
        Action::ReadResource { uri, .. } => uri.clone(),
        _ => String::new(),
    }
}

/// The `Mcp-Param-*` headers of a 2026-07-28 `tools/call` over HTTP: one per argument the
/// tool's input schema annotates with `x-mcp-header` (through `properties` only) that is
/// present and a string, number or boolean. Over stdio the peer ignores them.
fn param_headers(tools: &[Value], params: &Value) -> Vec<(String, String)> {
    fn walk(schema: &Value, arguments: &Value, out: &mut Vec<(String, String)>) {
        let Some(properties) = schema.get("properties").and_then(Value::as_object) else { return };
        for (name, property) in properties {
            let Some(value) = arguments.get(name) else { continue };
            if let Some(header) = property.get("x-mcp-header").and_then(Value::as_str) {
                let text = match value {
                    Value::String(s) => mcp_sansio::http::header_value(s),
                    Value::Number(n) => n.to_string(),
                    Value::Bool(b) => b.to_string(),
                    _ => continue,
                };
                out.push((format!("Mcp-Param-{header}"), text));
            }
            walk(property, value, out);
        }
    }
    let name = params.get("name").and_then(Value::as_str);
    let tool = tools.iter().find(|t| t.get("name").and_then(Value::as_str) == name);
    let (Some(tool), Some(arguments)) = (tool, params.get("arguments")) else { return Vec::new() };
    let mut headers = Vec::new();
    if let Some(schema) = tool.get("inputSchema") {
        walk(schema, arguments, &mut headers);
    }
    headers
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

/// [`run_case`] for a server author's own `proptest!` tests: fails the test case with the
/// violations, so that proptest shrinks it.
///
/// ```no_run
/// use std::sync::LazyLock;
///
/// use mcp_conformance::check::{self, Catalog, CheckOptions};
/// use mcp_conformance::peer::Target;
/// use proptest::prelude::*;
///
/// static TARGET: LazyLock<Target> = LazyLock::new(|| Target::stdio(["./my-server", "--stdio"]));
/// static OPTIONS: LazyLock<CheckOptions> = LazyLock::new(CheckOptions::default);
/// static CATALOG: LazyLock<Catalog> =
///     LazyLock::new(|| smol::block_on(check::explore(&TARGET, &OPTIONS)).expect("the server starts"));
///
/// proptest! {
///     #[test]
///     fn my_server_keeps_the_protocol(actions in check::actions(&CATALOG, 6)) {
///         check::prop_check(&TARGET, &CATALOG, &actions, &OPTIONS)?;
///     }
/// }
/// ```
pub fn prop_check(
    target: &Target,
    catalog: &Catalog,
    actions: &[Action],
    options: &CheckOptions,
) -> Result<(), TestCaseError> {
    let outcome = smol::block_on(run_case(target, catalog, actions, options))
        .map_err(|e| TestCaseError::fail(format!("could not run the case: {e}")))?;
    if outcome.violations.is_empty() {
        return Ok(());
    }
    let message = outcome.violations.iter().map(ToString::to_string).collect::<Vec<_>>().join("\n");
    Err(TestCaseError::fail(message))
}

/// The outcome of [`check`].
#[derive(Debug, Clone, Default)]
pub struct CheckReport {
    /// What the server offered.
    pub catalog: Catalog,
    /// Cases run (not counting shrinking).
    pub cases: u32,
    /// Cases run while shrinking.
    pub shrink_runs: u32,
    /// Whether the time limit cut the run short.
    pub out_of_time: bool,
    /// The minimal failing sequence, if any.
    pub minimal: Option<Vec<Action>>,
    /// What the minimal sequence broke.
    pub violations: Vec<Finding>,
    /// Warnings from every case (deduplicated).
    pub warnings: Vec<String>,
    /// The minimal failing sequence as a trace.
    pub failure_trace: Option<Trace>,
}

impl CheckReport {
    /// Whether every property held.
    pub fn passed(&self) -> bool {
        self.violations.is_empty()
    }
}

impl fmt::Display for CheckReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = self.catalog.server_info.get("name").and_then(Value::as_str).unwrap_or("?");
        writeln!(
            f,
            "server {name} ({}): {} tools, {} prompts, {} resources",
            self.catalog.version,
            self.catalog.tools.len(),
            self.catalog.prompts.len(),
            self.catalog.resources.len()
        )?;
        writeln!(
            f,
            "{} cases{}, {} shrink runs",
            self.cases,
            if self.out_of_time { " (stopped at the time limit)" } else { "" },
            self.shrink_runs
        )?;
        for warning in &self.warnings {
            writeln!(f, "warning: {warning}")?;
        }
        if let Some(minimal) = &self.minimal {
            writeln!(f, "FAIL: minimal failing sequence ({} steps):", minimal.len())?;
            for (i, action) in minimal.iter().enumerate() {
                writeln!(f, "  {}. {}", i + 1, action_line(action))?;
            }
            for violation in &self.violations {
                writeln!(f, "violated: {violation}")?;
            }
        } else {
            writeln!(f, "PASS: every property held")?;
        }
        Ok(())
    }
}

/// One line describing an action.
pub fn action_line(action: &Action) -> String {
    match action {
        Action::CallTool { name, arguments, kind } => {
            let kind = match kind {
                ArgumentKind::Valid => "valid".to_owned(),
                ArgumentKind::Boundary => "boundary".to_owned(),
                ArgumentKind::Invalid(why) => format!("invalid: {why}"),
            };
            format!("tools/call {name} {} ({kind})", short(arguments))
        }
        Action::GetPrompt { name, arguments, .. } => format!("prompts/get {name} {}", short(arguments)),
        Action::ReadResource { uri, .. } => format!("resources/read {uri}"),
        Action::List(method) => (*method).to_owned(),
        Action::Ping => "ping".into(),
        Action::UnknownMethod(method) => format!("{method} (unknown method)"),
        Action::Malformed(text) => format!("malformed line {text:?}"),
        Action::InvalidRequest(text) => format!("invalid request {text}"),
        Action::Cancelled(inner) => format!("{} then cancelled", action_line(inner)),
        Action::Concurrent(actions) => {
            format!("concurrently: {}", actions.iter().map(action_line).collect::<Vec<_>>().join(" | "))
        }
    }
}

/// Explores `target`, runs `options.cases` generated sequences, and shrinks a failure.
pub fn check(target: &Target, options: &CheckOptions) -> io::Result<CheckReport> {
    let catalog = smol::block_on(explore(target, options))?;
    let strategy = actions(&catalog, options.max_actions);
    let mut config = Config::with_cases(options.cases);
    config.max_shrink_iters = options.max_shrink_iters;
    config.max_shrink_time = u32::try_from(options.time_limit.as_millis()).unwrap_or(u32::MAX);
    config.failure_persistence = None;
    config.max_global_rejects = u32::MAX;
    config.max_local_rejects = u32::MAX;
    let mut runner = match options.seed {
        Some(seed) => {
            let mut bytes = [0u8; 32];
            bytes[..8].copy_from_slice(&seed.to_le_bytes());
            TestRunner::new_with_rng(
                config,
                proptest::test_runner::TestRng::from_seed(
                    proptest::test_runner::RngAlgorithm::ChaCha,
                    &bytes,
                ),
            )
        }
        None => TestRunner::new(config),
    };
    let started = Instant::now();
    let state = Mutex::new(Progress::default());
    let result = runner.run(&strategy, |actions| {
        let shrinking = state.lock().unwrap_or_else(|e| e.into_inner()).failed;
        if !shrinking && started.elapsed() > options.time_limit {
            state.lock().unwrap_or_else(|e| e.into_inner()).out_of_time = true;
            return Err(TestCaseError::reject("time limit"));
        }
        let outcome = smol::block_on(run_case(target, &catalog, &actions, options))
            .map_err(|e| TestCaseError::fail(format!("could not run the case: {e}")))?;
        let mut progress = state.lock().unwrap_or_else(|e| e.into_inner());
        if progress.failed {
            progress.shrink_runs += 1;
        } else {
            progress.cases += 1;
        }
        for warning in outcome.warnings {
            // One example per kind of warning: its first three words (property, method, tool).
            let kind = |w: &str| w.split_whitespace().take(3).collect::<Vec<_>>().join(" ");
            let this = kind(&warning);
            if progress.warnings.len() < 50 && !progress.warnings.iter().any(|w| kind(w) == this) {
                progress.warnings.push(warning);
            }
        }
        if outcome.violations.is_empty() {
            return Ok(());
        }
        progress.failed = true;
        let message = outcome.violations.iter().map(ToString::to_string).collect::<Vec<_>>().join("\n");
        Err(TestCaseError::fail(message))
    });
    let progress = state.into_inner().unwrap_or_else(|e| e.into_inner());
    let mut report = CheckReport {
        catalog: catalog.clone(),
        cases: progress.cases,
        shrink_runs: progress.shrink_runs,
        out_of_time: progress.out_of_time,
        warnings: progress.warnings,
        ..Default::default()
    };
    match result {
        Ok(()) => {}
        Err(TestError::Fail(_, minimal)) => {
            let minimal =
                smol::block_on(simplify(target, &catalog, minimal, options, &mut report.shrink_runs));
            // Once more, to record the minimal sequence and its exact violations.
            let outcome = smol::block_on(run_case(target, &catalog, &minimal, options))?;
            let mut trace = outcome.trace;
            trace.header.note = Some(format!(
                "mcp-conformance check failure: {}",
                outcome.violations.iter().map(ToString::to_string).collect::<Vec<_>>().join("; ")
            ));
            report.violations = outcome.violations;
            if report.violations.is_empty() {
                report.violations.push(Finding {
                    property: Property::OneResponse,
                    message: "the minimal sequence failed while shrinking but passed when run again (a flaky server?)".into(),
                });
            }
            report.minimal = Some(minimal);
            report.failure_trace = Some(trace);
        }
        Err(TestError::Abort(why)) => {
            if !report.out_of_time {
                return Err(io::Error::other(format!("the check stopped: {why}")));
            }
        }
    }
    Ok(report)
}

/// What proptest cannot do: a concurrent batch or a cancelled request is replaced by one of
/// its requests alone, as long as the sequence still fails.
async fn simplify(
    target: &Target,
    catalog: &Catalog,
    mut actions: Vec<Action>,
    options: &CheckOptions,
    runs: &mut u32,
) -> Vec<Action> {
    let mut i = 0;
    while i < actions.len() {
        let candidates: Vec<Action> = match &actions[i] {
            Action::Concurrent(batch) => batch.clone(),
            Action::Cancelled(inner) => vec![(**inner).clone()],
            _ => Vec::new(),
        };
        for candidate in candidates {
            let mut shorter = actions.clone();
            shorter[i] = candidate;
            *runs += 1;
            let fails =
                run_case(target, catalog, &shorter, options).await.is_ok_and(|o| !o.violations.is_empty());
            if fails {
                actions = shorter;
                break;
            }
        }
        i += 1;
    }
    actions
}

#[derive(Default)]
struct Progress {
    cases: u32,
    shrink_runs: u32,
    failed: bool,
    out_of_time: bool,
    warnings: Vec<String>,
}
