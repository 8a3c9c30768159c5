//! Recording sessions: a transparent stdio proxy, and a scripted session of our own client.
//!
//! - [`run_stdio_proxy`] is `mcp-conformance record --proxy`: a host application launches it as
//!   its "server command"; it starts the real server, passes every line through unchanged in
//!   both directions, and writes each one to the trace as it goes.
//! - [`record_session`] is `mcp-conformance record`: our own client (`mcp-smol`) runs a
//!   [`Plan`] against the server through that same proxy (stdio) or through the HTTP recording
//!   proxy ([`crate::record_http`]), so what is recorded is what crossed the wire.

use std::io::{self, BufRead, BufReader, Write};
use std::process::{Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::Duration;

use mcp_hyper::HyperTransport;
use mcp_sansio::ProtocolVersion;
use mcp_sansio::http::HttpConfig;
use mcp_sansio::schema::{
    CallToolRequestParams, ClientCapabilities, CreateMessageRequestParams, CreateMessageResult,
    ElicitRequestParams, ElicitResult, Implementation, JsonObject, ListChangedCapability, ListRootsResult,
    LoggingLevel, Root, SamplingContent,
};
use mcp_smol::ClientApi;
use mcp_smol::{CallOptions, Client, ClientBuilder, ClientHandler, HandlerFuture, ServerCommand};
use serde_json::Value;

use crate::peer::Target;
use crate::record_http::RecordingProxy;
use crate::trace::{Direction, TraceHeader, TraceWriter};

/// Runs `command` as the server behind this process's stdin and stdout, recording every line to
/// `writer`. Returns when the server exits (after the client closed stdin, or on its own);
/// stderr passes through.
pub fn run_stdio_proxy(command: &[String], writer: TraceWriter) -> io::Result<ExitStatus> {
    let (program, args) = command
        .split_first()
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "no server command"))?;
    let mut child = Command::new(program)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .map_err(|e| io::Error::new(e.kind(), format!("cannot start {program}: {e}")))?;
    let mut to_server = child.stdin.take().expect("piped stdin");
    let from_server = child.stdout.take().expect("piped stdout");
    let writer = Arc::new(Mutex::new(writer));

    let record = {
        let writer = Arc::clone(&writer);
        move |dir: Direction, line: &[u8]| {
            let mut writer = writer.lock().unwrap_or_else(|e| e.into_inner());
            if let Err(e) = writer.record(dir, trim_newline(line), None) {
                eprintln!("mcp-conformance record: cannot write the trace: {e}");
            }
        }
    };
    let record_server = record.clone();
    let upstream = thread::spawn(move || {
        let mut stdout = io::stdout().lock();
        pump(BufReader::new(from_server), |line| {
            record_server(Direction::Server, line);
            stdout.write_all(line)?;
            stdout.flush()
        })
    });
    // The client's side: our stdin. When it ends, the server's stdin is closed so that it exits.
    let downstream = thread::spawn(move || {
        let result = pump(io::stdin().lock(), |line| {
            record(Direction::Client, line);
            to_server.write_all(line)?;
            to_server.flush()
        });
        drop(to_server);
        result
    });
    let _ = upstream.join();
    // The server closed its stdout: it is exiting. The client may still be writing; that
    // thread ends with the process.
    let status = child.wait()?;
    drop(downstream);
    writer.lock().unwrap_or_else(|e| e.into_inner()).finish()?;
    Ok(status)
}

/// Copies `input` line by line (each line with its newline, verbatim) into `each`; a last line
/// without a newline is passed on too.
fn pump(mut input: impl BufRead, mut each: impl FnMut(&[u8]) -> io::Result<()>) -> io::Result<()> {
    let mut line = Vec::new();
    loop {
        line.clear();
        if input.read_until(b'\n', &mut line)? == 0 {
            return Ok(());
        }
        each(&line)?;
    }
}

fn trim_newline(line: &[u8]) -> &[u8] {
    let mut end = line.len();
    while end > 0 && matches!(line[end - 1], b'\n' | b'\r') {
        end -= 1;
    }
    &line[..end]
}

/// One thing the recording client does, in order.
#[derive(Debug, Clone, PartialEq)]
pub enum Step {
    /// `tools/call` with arguments, asking for progress.
    Call {
        /// The tool.
        name: String,
        /// Its arguments (a JSON object).
        arguments: Value,
    },
    /// `resources/read`.
    Read(String),
    /// `prompts/get` with string arguments.
    Prompt {
        /// The prompt.
        name: String,
        /// Its arguments.
        arguments: Value,
    },
    /// `resources/subscribe`.
    Subscribe(String),
    /// `logging/setLevel`.
    LogLevel(LoggingLevel),
    /// `ping`.
    Ping,
    /// A request with a method no server has, to record the error.
    UnknownMethod(String),
    /// Waits, letting notifications arrive.
    Wait(Duration),
}

/// What the recording client does: list everything the server offers, then the steps.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    /// The steps after the lists, in order.
    pub steps: Vec<Step>,
    /// Pin the era: `Some(LEGACY…)` to record an `initialize` session; `None` for the dual-era
    /// default.
    pub versions: Option<Vec<ProtocolVersion>>,
    /// The longest any one request may take.
    pub request_timeout: Duration,
    /// What the trace header's `note` says.
    pub note: Option<String>,
}

impl Default for Plan {
    fn default() -> Self {
        Self { steps: Vec::new(), versions: None, request_timeout: Duration::from_secs(30), note: None }
    }
}

/// The root the recording client offers.
pub const RECORDING_ROOT: &str = "file:///tmp/mcp-conformance";

/// Answers server requests deterministically, so that re-recording gives the same trace: one
/// root, a canned sampling reply, and elicitations accepted with each field's default (else a
/// plain value of its type).
#[derive(Debug, Clone, Copy, Default)]
pub struct RecordingHandler;

impl ClientHandler for RecordingHandler {
    fn list_roots(&self) -> HandlerFuture<ListRootsResult> {
        Box::pin(async { Ok(ListRootsResult::new(vec![Root::new(RECORDING_ROOT).with_name("recording")])) })
    }

    fn create_message(&self, params: CreateMessageRequestParams) -> HandlerFuture<CreateMessageResult> {
        let _ = params;
        Box::pin(async {
            Ok(CreateMessageResult::new(
                "mcp-conformance",
                SamplingContent::text("A recorded sampling reply."),
            )
            .with_stop_reason("endTurn"))
        })
    }

    fn elicit(&self, params: ElicitRequestParams) -> HandlerFuture<ElicitResult> {
        let content = params.requested_schema.as_ref().map(plain_answers).unwrap_or_default();
        Box::pin(async move { Ok(ElicitResult::accept(content)) })
    }
}

/// A value for every property of an elicitation schema: its default, its first enum value, or
/// a plain value of its type.
fn plain_answers(schema: &JsonObject) -> JsonObject {
    let Some(Value::Object(properties)) = schema.get("properties") else { return JsonObject::new() };
    properties
        .iter()
        .map(|(name, property)| {
            let value = property
                .get("default")
                .or_else(|| property.get("enum").and_then(|e| e.get(0)))
                .or_else(|| property.pointer("/oneOf/0/const"))
                .cloned()
                .unwrap_or_else(|| match property.get("type").and_then(Value::as_str) {
                    Some("number" | "integer") => Value::from(1),
                    Some("boolean") => Value::Bool(true),
                    Some("array") => Value::Array(Vec::new()),
                    _ => Value::from("recorded"),
                });
            (name.clone(), value)
        })
        .collect()
}

/// The client capabilities the recording client declares: roots, sampling, elicitation.
pub fn recording_capabilities() -> ClientCapabilities {
    ClientCapabilities {
        roots: Some(ListChangedCapability { list_changed: Some(true) }),
        sampling: Some(Default::default()),
        elicitation: Some(Default::default()),
        ..Default::default()
    }
}

/// What a recorded session saw go wrong (the trace is written anyway).
#[derive(Debug, Default)]
pub struct SessionReport {
    /// One line per step that failed (an error answer is not a failure: it is recorded).
    pub problems: Vec<String>,
}

/// Records a session of our own client running `plan` against `target`, into `out`.
///
/// Over stdio the client launches `proxy` (this tool's own `record --proxy` command line, to
/// which `-o out -- <server command>` is appended) as its server; over HTTP it talks to an
/// in-process [`RecordingProxy`] in front of the server.
pub async fn record_session(
    target: &Target,
    plan: &Plan,
    out: &std::path::Path,
    proxy: &[String],
) -> io::Result<SessionReport> {
    let builder =
        ClientBuilder::new(Implementation::new("mcp-conformance-recorder", env!("CARGO_PKG_VERSION")))
            .configure(|config| {
                let config = config
                    .with_capabilities(recording_capabilities())
                    .with_request_timeout(plan.request_timeout);
                match &plan.versions {
                    Some(versions) => config.with_versions(versions),
                    None => config,
                }
            })
            .era_cache(None)
            .handler(RecordingHandler);
    match target {
        Target::Stdio { command } => {
            let (program, args) = proxy
                .split_first()
                .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "no proxy command"))?;
            let out = out.to_str().ok_or_else(|| io::Error::other("the trace path is not UTF-8"))?;
            let mut server = ServerCommand::new(program).args(args).args(["-o", out]);
            if let Some(note) = &plan.note {
                server = server.args(["--note", note]);
            }
            let server = server.arg("--").args(command).shutdown_step(Duration::from_secs(5));
            let client = builder.spawn_stdio(&server).await.map_err(io::Error::other)?;
            let report = run_plan(&client, plan).await;
            client.close().await;
            Ok(report)
        }
        Target::Http { url, headers } => {
            let mut header = TraceHeader::new(target.transport(), target.identity(), recorded_with("record"));
            header.note = plan.note.clone();
            let writer = Arc::new(Mutex::new(TraceWriter::create(out, header)?));
            let proxy =
                RecordingProxy::start(([127, 0, 0, 1], 0).into(), url.clone(), Arc::clone(&writer)).await?;
            let mut http = HttpConfig::new(proxy.url());
            for (name, value) in headers {
                http = http.header(name, value);
            }
            let client = builder.spawn_http(http, HyperTransport::new()).await.map_err(io::Error::other)?;
            let report = run_plan(&client, plan).await;
            client.close().await;
            proxy.stop().await;
            writer.lock().unwrap_or_else(|e| e.into_inner()).finish()?;
            Ok(report)
        }
    }
}

/// `mcp-conformance <version> <what>`, for the header's `recordedWith`.
pub fn recorded_with(what: &str) -> String {
    format!("mcp-conformance {} {what}", env!("CARGO_PKG_VERSION"))
}

async fn run_plan(client: &Client, plan: &Plan) -> SessionReport {
    let mut report = SessionReport::default();
    let mut note = |what: &str, e: mcp_smol::Error| {
        // A JSON-RPC error answer is part of the recording, not a failure of it.
        if e.server_error().is_none() {
            report.problems.push(format!("{what}: {e}"));
        }
    };
    let caps = client.server_capabilities().unwrap_or_default();
    if caps.tools.is_some()
        && let Err(e) = client.list_all_tools().await
    {
        note("tools/list", e);
    }
    if caps.resources.is_some() {
        if let Err(e) = client.list_all_resources().await {
            note("resources/list", e);
        }
        if let Err(e) = client.list_all_resource_templates().await {
            note("resources/templates/list", e);
        }
    }
    if caps.prompts.is_some()
        && let Err(e) = client.list_all_prompts().await
    {
        note("prompts/list", e);
    }
    for step in &plan.steps {
        match step {
            Step::Call { name, arguments } => {
                let mut params = CallToolRequestParams::new(name.as_str());
                params.arguments = arguments.as_object().cloned();
                let options = CallOptions::default().on_progress(|_| {});
                if let Err(e) = client.call_tool_with(&params, options).await {
                    note(&format!("tools/call {name}"), e);
                }
            }
            Step::Read(uri) => {
                if let Err(e) = client.read_resource(uri).await {
                    note(&format!("resources/read {uri}"), e);
                }
            }
            Step::Prompt { name, arguments } => {
                let arguments: Vec<(String, String)> = arguments
                    .as_object()
                    .into_iter()
                    .flatten()
                    .map(|(k, v)| (k.clone(), v.as_str().map_or_else(|| v.to_string(), str::to_owned)))
                    .collect();
                if let Err(e) = client.get_prompt(name, arguments).await {
                    note(&format!("prompts/get {name}"), e);
                }
            }
            Step::Subscribe(uri) => {
                if let Err(e) = client.subscribe(uri).await {
                    note(&format!("resources/subscribe {uri}"), e);
                }
            }
            Step::LogLevel(level) => {
                if let Err(e) = client.set_log_level(*level).await {
                    note("logging/setLevel", e);
                }
            }
            Step::Ping => {
                if let Err(e) = client.ping().await {
                    note("ping", e);
                }
            }
            Step::UnknownMethod(method) => {
                let result = client.request_raw(method, None, CallOptions::default()).await;
                if let Err(e) = result {
                    note(method, e);
                }
            }
            Step::Wait(duration) => {
                async_io::Timer::after(*duration).await;
            }
        }
    }
    report
}
