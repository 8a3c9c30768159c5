//! The tools: their declarations (`tools/list`) and implementations (`tools/call`).
//!
//! A tool runs the same way in both eras, except where the era shows: `sample`, `elicit` and
//! `list_roots` ask the client with a server→client request (legacy) or with a multi
//! round-trip `input_required` result (2026-07-28), `log` filters by `logging/setLevel`
//! (legacy) or by the request's `_meta` log level (2026-07-28), and `notify_changes` notifies
//! everyone (legacy) or only the `subscriptions/listen` streams (2026-07-28).
//!
//! A tool's own notifications (progress, log messages) go to its request's [`Outlet`]; what it
//! sends that is not part of its request (server→client requests, list-changed notifications)
//! goes through the session (see [`Server::send_unsolicited`]).
//!
//! Besides the built-in [`TOOLS`], a session has the tools `add_tool` registered in it
//! ([`AddedTools`], kept by the [`Server`]): each behaves like `echo` and is listed after the
//! built-in ones. In OAuth mode (HTTP with `--oauth`) the server also has [`ADMIN_TOOL`], listed
//! after the built-in tools and before the added ones; the HTTP layer asks for the `mcp:admin`
//! scope to call it.

use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, PoisonError};
use std::thread;
use std::time::{Duration, Instant};

use serde_json::{Map, Value, json};

use super::arguments::{
    optional_bool, optional_u64, required_array, required_number, required_str, required_u64,
};
use super::assets::{TINY_PNG, base64};
use super::jsonrpc::{self, RpcError};
use super::logging;
use super::modern::{self, META_CLIENT_CAPABILITIES, RequestMeta};
use super::output::Outlet;
use super::server::{CANCEL_POLL, Cancelled, Server};

/// Why a tool call produced no result.
#[derive(Debug)]
pub(crate) enum ToolError {
    /// A protocol error (bad arguments): answered with a JSON-RPC error.
    Rpc(RpcError),
    /// The client cancelled the call: not answered at all.
    Cancelled,
    /// The answer is settled before the tool got to the end: an `input_required` result
    /// (2026-07-28) or a tool error result.
    Done(Value),
}

impl From<RpcError> for ToolError {
    fn from(error: RpcError) -> Self {
        Self::Rpc(error)
    }
}

impl From<Cancelled> for ToolError {
    fn from(Cancelled: Cancelled) -> Self {
        Self::Cancelled
    }
}

/// What a tool implementation returns: a `CallToolResult` or why there is none.
type ToolResult = Result<Value, ToolError>;

/// Everything a running tool may use besides its arguments.
pub(crate) struct Context<'a> {
    server: &'a Server,
    cancel: &'a AtomicBool,
    call: &'a ToolCall,
    /// Where the request's own notifications go.
    outlet: &'a Outlet,
}

impl Context<'_> {
    /// Sends a notification that belongs to this request (progress, a log message).
    fn notify(&self, method: &str, params: Value) {
        self.server.send_on(self.outlet, &jsonrpc::notification(method, params));
    }

    /// Sends a notification that is not part of this request (list-changed, resource updates).
    fn notify_session(&self, method: &str, params: Value) {
        self.server.send_unsolicited(&jsonrpc::notification(method, params), self.outlet);
    }

    /// Sleeps for `duration`, waking every [`CANCEL_POLL`] to check for cancellation. A
    /// duration past the clock's range sleeps until cancelled.
    fn sleep(&self, duration: Duration) -> Result<(), Cancelled> {
        let deadline = Instant::now().checked_add(duration);
        loop {
            if self.cancel.load(Ordering::SeqCst) {
                return Err(Cancelled);
            }
            let left = match deadline {
                Some(deadline) => deadline.saturating_duration_since(Instant::now()),
                None => CANCEL_POLL,
            };
            if left.is_zero() {
                return Ok(());
            }
            thread::sleep(CANCEL_POLL.min(left));
        }
    }

    /// The `progressToken` of the request, if any.
    fn progress_token(&self) -> Option<&Value> {
        self.call.progress_token.as_ref()
    }

    /// Asks the client for `ask.method` with `params`: the client's result (`Ok`) or JSON-RPC
    /// error object (`Err`).
    ///
    /// Legacy: a server→client request, waited for (see [`Server::request_client`]).
    /// 2026-07-28: the `inputResponses[ask.key]` of a retry whose `requestState` is the one
    /// [`modern::request_state`] gives for this call; otherwise the call ends with
    /// [`ToolError::Done`] holding an `input_required` result (or a tool error when the
    /// request's client capabilities do not allow the question). A `requestState` that belongs
    /// to another call, or a response that is not an object, is `-32602`.
    fn ask(&self, ask: &Ask, params: Value) -> Result<Result<Value, Value>, ToolError> {
        let Some(modern) = &self.call.modern else {
            return Ok(self.server.request_client(ask.method, params, self.cancel, self.outlet)?);
        };
        if !(ask.allowed)(&modern.meta) {
            return Err(ToolError::Done(error_result(format!(
                "{} needs the client capability `{}`, which this request's \
                 _meta[\"{META_CLIENT_CAPABILITIES}\"] does not declare",
                ask.method, ask.capability
            ))));
        }
        let state = modern::request_state(self.call.tool.name, ask.key, &self.call.arguments);
        if let Some(echoed) = &modern.request_state {
            if *echoed != state {
                let message = format!("requestState {echoed:?} does not belong to this tools/call");
                return Err(RpcError::invalid_params(message).into());
            }
            if let Some(response) = modern.input_responses.get(ask.key) {
                if !response.is_object() {
                    let message = format!("inputResponses.{} must be an object", ask.key);
                    return Err(RpcError::invalid_params(message).into());
                }
                return Ok(Ok(response.clone()));
            }
        }
        Err(ToolError::Done(json!({
            "resultType": "input_required",
            "inputRequests": { ask.key: { "method": ask.method, "params": params } },
            "requestState": state,
        })))
    }
}

/// Something a tool asks the client for.
struct Ask {
    /// The key of the question in `inputRequests` / `inputResponses` (2026-07-28).
    key: &'static str,
    /// The method of the request (`sampling/createMessage`, ...).
    method: &'static str,
    /// The client capability it needs, as named in the refusal.
    capability: &'static str,
    /// Whether a modern request's client capabilities allow the question.
    allowed: fn(&RequestMeta) -> bool,
}

/// `sample`: `sampling/createMessage`, under the key `sampling`.
const SAMPLING: Ask = Ask {
    key: "sampling",
    method: "sampling/createMessage",
    capability: "sampling",
    allowed: |meta| meta.declares("sampling"),
};

/// `elicit`: a form-mode `elicitation/create`, under the key `elicitation`.
const ELICITATION: Ask = Ask {
    key: "elicitation",
    method: "elicitation/create",
    capability: "elicitation (form mode)",
    allowed: RequestMeta::declares_form_elicitation,
};

/// `list_roots`: `roots/list`, under the key `roots`.
const ROOTS: Ask =
    Ask { key: "roots", method: "roots/list", capability: "roots", allowed: |meta| meta.declares("roots") };

/// A tool declaration plus its implementation.
pub(crate) struct Tool {
    /// The tool name used in `tools/call`.
    pub(crate) name: &'static str,
    title: &'static str,
    description: &'static str,
    input_schema: fn() -> Value,
    output_schema: Option<fn() -> Value>,
    /// Whether the tool may block (sleeps, waits for the client, large writes): such calls run
    /// on their own thread and can be cancelled; the others are answered inline, in order.
    pub(crate) blocking: bool,
    run: fn(&Context<'_>, &Map<String, Value>) -> ToolResult,
}

impl std::fmt::Debug for Tool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tool").field("name", &self.name).finish_non_exhaustive()
    }
}

/// A validated `tools/call` request, ready to run.
#[derive(Debug)]
pub(crate) struct ToolCall {
    /// The tool to run.
    pub(crate) tool: &'static Tool,
    arguments: Map<String, Value>,
    progress_token: Option<Value>,
    /// The 2026-07-28 side of the call; `None` for a legacy call.
    modern: Option<ModernCall>,
}

/// What a 2026-07-28 `tools/call` carries besides the legacy fields.
#[derive(Debug)]
struct ModernCall {
    /// The validated per-request `_meta`.
    meta: RequestMeta,
    /// `inputResponses` of a retry (empty on a first attempt).
    input_responses: Map<String, Value>,
    /// `requestState` echoed by a retry.
    request_state: Option<String>,
}

impl ToolCall {
    /// Runs the tool. `Err(Cancelled)` means the call must not be answered.
    ///
    /// The result of a 2026-07-28 call carries `resultType` and the server's identity in
    /// `_meta` (see [`modern::complete`]).
    pub(crate) fn run(
        &self,
        server: &Server,
        cancel: &AtomicBool,
        outlet: &Outlet,
    ) -> Result<Result<Value, RpcError>, Cancelled> {
        let context = Context { server, cancel, call: self, outlet };
        let result = match (self.tool.run)(&context, &self.arguments) {
            Ok(result) | Err(ToolError::Done(result)) => result,
            Err(ToolError::Rpc(error)) => return Ok(Err(error)),
            Err(ToolError::Cancelled) => return Err(Cancelled),
        };
        Ok(Ok(if self.modern.is_some() { modern::complete(result) } else { result }))
    }
}

/// Validates `tools/call {name, arguments?, _meta?: {progressToken?}}`: `name` is a built-in
/// tool, [`ADMIN_TOOL`] when `oauth` (OAuth mode), or one of `added`.
pub(crate) fn prepare(
    params: &Map<String, Value>,
    added: &AddedTools,
    oauth: bool,
) -> Result<ToolCall, RpcError> {
    let name = params
        .get("name")
        .and_then(Value::as_str)
        .ok_or_else(|| RpcError::invalid_params("tools/call needs a string `name`"))?;
    let tool = match TOOLS.iter().find(|tool| tool.name == name) {
        Some(tool) => tool,
        None if oauth && name == ADMIN_TOOL => &ADMIN_ECHO,
        None if added.contains(name) => &ADDED_TOOL,
        None => return Err(RpcError::invalid_params(format!("Unknown tool: {name}"))),
    };
    // Absent arguments are none; an explicit `null` is not an object, as the schema says.
    let arguments = match params.get("arguments") {
        None => Map::new(),
        Some(Value::Object(arguments)) => arguments.clone(),
        Some(_) => return Err(RpcError::invalid_params("tool arguments must be an object")),
    };
    let progress_token = params
        .get("_meta")
        .and_then(|meta| meta.get("progressToken"))
        .filter(|token| token.is_string() || token.is_number())
        .cloned();
    Ok(ToolCall { tool, arguments, progress_token, modern: None })
}

/// Validates a 2026-07-28 `tools/call {name, arguments?, inputResponses?, requestState?,
/// _meta}` whose `_meta` is `meta` (`name` as for [`prepare`]).
pub(crate) fn prepare_modern(
    params: &Map<String, Value>,
    meta: RequestMeta,
    added: &AddedTools,
    oauth: bool,
) -> Result<ToolCall, RpcError> {
    let mut call = prepare(params, added, oauth)?;
    let input_responses = match params.get("inputResponses") {
        None | Some(Value::Null) => Map::new(),
        Some(Value::Object(responses)) => responses.clone(),
        Some(_) => return Err(RpcError::invalid_params("inputResponses must be an object")),
    };
    let request_state = match params.get("requestState") {
        None | Some(Value::Null) => None,
        Some(Value::String(state)) => Some(state.clone()),
        Some(_) => return Err(RpcError::invalid_params("requestState must be a string")),
    };
    call.modern = Some(ModernCall { meta, input_responses, request_state });
    Ok(call)
}

/// The arguments of tool `name` annotated with `"x-mcp-header"` in its input schema (top-level
/// properties only): `(argument, header name after "Mcp-Param-")`. Empty for an unknown tool.
pub(crate) fn header_params(name: &str) -> Vec<(String, String)> {
    let Some(tool) = TOOLS.iter().find(|tool| tool.name == name) else {
        return Vec::new();
    };
    let schema = (tool.input_schema)();
    let Some(properties) = schema.get("properties").and_then(Value::as_object) else {
        return Vec::new();
    };
    properties
        .iter()
        .filter_map(|(argument, property)| {
            let header = property.get("x-mcp-header")?.as_str()?;
            Some((argument.clone(), header.to_owned()))
        })
        .collect()
}

/// The entries of `tools/list`, in order: the built-in tools, [`ADMIN_TOOL`] when `oauth`, then
/// those of `added` in the order they were added.
pub(crate) fn list(added: &AddedTools, oauth: bool) -> Vec<Value> {
    let built_in = TOOLS.iter().map(|tool| entry(tool, tool.name));
    let admin = oauth.then(|| entry(&ADMIN_ECHO, ADMIN_TOOL));
    let added = added.names().into_iter().map(|name| entry(&ADDED_TOOL, &name));
    built_in.chain(admin).chain(added).collect()
}

/// The `tools/list` entry of `tool`, listed as `name`.
fn entry(tool: &Tool, name: &str) -> Value {
    let mut entry = json!({
        "name": name,
        "title": tool.title,
        "description": tool.description,
        "inputSchema": (tool.input_schema)(),
    });
    if let (Some(schema), Some(entry)) = (tool.output_schema, entry.as_object_mut()) {
        entry.insert("outputSchema".into(), schema());
    }
    entry
}

/// The most tools `add_tool` adds to one session.
const MAX_ADDED_TOOLS: usize = 64;

/// The tools `add_tool` added to a session, in the order they were added (at most
/// [`MAX_ADDED_TOOLS`]).
#[derive(Debug, Default)]
pub(crate) struct AddedTools(Mutex<Vec<String>>);

impl AddedTools {
    /// The names, in the order they were added.
    fn names(&self) -> Vec<String> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner).clone()
    }

    /// Whether `name` was added.
    fn contains(&self, name: &str) -> bool {
        self.0.lock().unwrap_or_else(PoisonError::into_inner).iter().any(|added| added == name)
    }

    /// Adds `name`, or says why not: not a valid tool name, taken (built-in or added), or
    /// [`MAX_ADDED_TOOLS`] reached.
    fn add(&self, name: &str) -> Result<(), String> {
        let valid = |byte: u8| byte.is_ascii_alphanumeric() || matches!(byte, b'_' | b'-' | b'.');
        if name.is_empty() || name.len() > 128 || !name.bytes().all(valid) {
            return Err(format!(
                "{name:?} is not a valid tool name (1 to 128 characters of A-Z, a-z, 0-9, _, - and .)"
            ));
        }
        let mut names = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        let taken = TOOLS.iter().any(|tool| tool.name == name) || name == ADMIN_TOOL;
        if taken || names.iter().any(|added| added == name) {
            return Err(format!("a tool named {name:?} already exists"));
        }
        if names.len() >= MAX_ADDED_TOOLS {
            return Err(format!(
                "add_tool already added {MAX_ADDED_TOOLS} tools to this session, the most it adds"
            ));
        }
        names.push(name.to_owned());
        Ok(())
    }
}

/// A `CallToolResult` with one text block.
fn text_result(text: impl Into<String>) -> Value {
    json!({ "content": [{ "type": "text", "text": text.into() }] })
}

/// A `CallToolResult` reporting a tool execution error (`isError: true`).
fn error_result(text: impl Into<String>) -> Value {
    json!({ "content": [{ "type": "text", "text": text.into() }], "isError": true })
}

/// An object schema with the given properties and required names.
fn object_schema(properties: Value, required: &[&str]) -> Value {
    json!({ "type": "object", "properties": properties, "required": required })
}

/// A schema for tools without arguments.
fn no_arguments() -> Value {
    json!({ "type": "object", "properties": {} })
}

/// Upper bound for durations in milliseconds (one day).
const MAX_MS: u64 = 86_400_000;

/// Upper bound for `long_running` steps.
const MAX_STEPS: u64 = 1_000_000;

/// Upper bound for `stderr_burst` (1 GiB).
const MAX_BURST: u64 = 1 << 30;

/// Upper bound for `weather` days.
const MAX_DAYS: u64 = 366;

/// A tiny valid WAV file (48 bytes): RIFF header, a PCM `fmt ` chunk (mono, 8 kHz, 8 bits) and a
/// `data` chunk of four samples of silence. Used by `mixed_content`.
const TINY_WAV: [u8; 48] = [
    b'R', b'I', b'F', b'F', 40, 0, 0, 0, b'W', b'A', b'V', b'E', //
    b'f', b'm', b't', b' ', 16, 0, 0, 0, 1, 0, 1, 0, 0x40, 0x1f, 0, 0, 0x40, 0x1f, 0, 0, 1, 0, 8, 0, //
    b'd', b'a', b't', b'a', 4, 0, 0, 0, 0x80, 0x80, 0x80, 0x80,
];

/// The input schema of `echo` and of the tools `add_tool` adds.
fn echo_schema() -> Value {
    object_schema(
        json!({ "message": { "type": "string", "description": "The text to echo." } }),
        &["message"],
    )
}

/// The input schema of `get_stats` and `bad_stats`.
fn numbers_schema() -> Value {
    object_schema(json!({ "numbers": { "type": "array", "items": { "type": "number" } } }), &["numbers"])
}

/// The output schema of `get_stats`, also declared (and broken) by `bad_stats`.
fn stats_schema() -> Value {
    object_schema(
        json!({
            "count": { "type": "integer" },
            "sum": { "type": "number" },
            "mean": { "type": "number" },
        }),
        &["count", "sum", "mean"],
    )
}

/// `echo {message}` → the message as text.
fn echo(_: &Context<'_>, args: &Map<String, Value>) -> ToolResult {
    Ok(text_result(required_str(args, "message")?))
}

/// What a tool that `add_tool` added is (its listed name is the one given to `add_tool`).
static ADDED_TOOL: Tool = Tool {
    name: "(added by add_tool)",
    title: "Added tool",
    description: "A tool added by add_tool: returns the message unchanged as text, like echo.",
    input_schema: echo_schema,
    output_schema: None,
    blocking: false,
    run: echo,
};

/// The name of the tool of OAuth mode that needs the `mcp:admin` scope (reserved otherwise:
/// `add_tool` does not take it).
pub(crate) const ADMIN_TOOL: &str = "admin_echo";

/// [`ADMIN_TOOL`]: `echo`, behind the `mcp:admin` scope, for step-up authorization tests.
static ADMIN_ECHO: Tool = Tool {
    name: ADMIN_TOOL,
    title: "Admin echo",
    description: "Returns the message unchanged as text, like echo, but needs the OAuth scope mcp:admin.",
    input_schema: echo_schema,
    output_schema: None,
    blocking: false,
    run: echo,
};

/// All tools, in listing order.
static TOOLS: [Tool; 19] = [
    Tool {
        name: "echo",
        title: "Echo",
        description: "Returns the message unchanged as text.",
        input_schema: echo_schema,
        output_schema: None,
        blocking: false,
        run: echo,
    },
    Tool {
        name: "add",
        title: "Add",
        description: "Adds two numbers and returns the sum as text.",
        input_schema: || {
            object_schema(json!({ "a": { "type": "number" }, "b": { "type": "number" } }), &["a", "b"])
        },
        output_schema: None,
        blocking: false,
        run: |_, args| {
            let a = required_number(args, "a")?;
            let b = required_number(args, "b")?;
            Ok(text_result(format_sum(a, b)))
        },
    },
    Tool {
        name: "long_running",
        title: "Long-running operation",
        description: "Works for `steps` steps of `step_ms` milliseconds, sending progress \
                      notifications when the request carries a progressToken; cancellable.",
        input_schema: || {
            json!({
                "type": "object",
                "properties": {
                    "steps": { "type": "integer", "minimum": 0, "maximum": MAX_STEPS, "default": 5 },
                    "step_ms": { "type": "integer", "minimum": 0, "maximum": MAX_MS, "default": 100 },
                },
            })
        },
        output_schema: None,
        blocking: true,
        run: long_running,
    },
    Tool {
        name: "sleep",
        title: "Sleep",
        description: "Sleeps for `ms` milliseconds (cancellable).",
        input_schema: || object_schema(json!({ "ms": { "type": "integer", "minimum": 0 } }), &["ms"]),
        output_schema: None,
        blocking: true,
        run: |context, args| {
            // No upper bound, as in many real servers: a long sleep lasts until cancelled.
            let ms = required_u64(args, "ms", u64::MAX)?;
            context.sleep(Duration::from_millis(ms))?;
            Ok(text_result(format!("slept {ms} ms")))
        },
    },
    Tool {
        name: "tiny_image",
        title: "Tiny image",
        description: "Returns a tiny PNG image and a text block.",
        input_schema: no_arguments,
        output_schema: None,
        blocking: false,
        run: |_, _| {
            Ok(json!({
                "content": [
                    { "type": "image", "data": base64(&TINY_PNG), "mimeType": "image/png" },
                    { "type": "text", "text": format!("a 4x4 PNG image ({} bytes)", TINY_PNG.len()) },
                ],
            }))
        },
    },
    Tool {
        name: "get_stats",
        title: "Statistics",
        description: "Returns the count, sum and mean of a list of numbers as structured content.",
        input_schema: numbers_schema,
        output_schema: Some(stats_schema),
        blocking: false,
        run: get_stats,
    },
    Tool {
        name: "fail",
        title: "Fail",
        description: "Always fails with a tool execution error (isError: true).",
        input_schema: no_arguments,
        output_schema: None,
        blocking: false,
        run: |_, _| Ok(error_result("the fail tool always fails")),
    },
    Tool {
        name: "crash",
        title: "Crash",
        description: "Exits the server process immediately with code 3, without answering.",
        input_schema: no_arguments,
        output_schema: None,
        blocking: false,
        run: |_, _| {
            eprintln!("demo-server: crash tool called, exiting with code 3");
            std::process::exit(3)
        },
    },
    Tool {
        name: "sample",
        title: "Sample",
        description: "Asks the client to sample an LLM (sampling/createMessage) with the prompt.",
        input_schema: || object_schema(json!({ "prompt": { "type": "string" } }), &["prompt"]),
        output_schema: None,
        blocking: true,
        run: sample,
    },
    Tool {
        name: "elicit",
        title: "Elicit",
        description: "Asks the client for a name (elicitation/create) and reports the answer.",
        input_schema: || object_schema(json!({ "message": { "type": "string" } }), &["message"]),
        output_schema: None,
        blocking: true,
        run: elicit,
    },
    Tool {
        name: "list_roots",
        title: "List roots",
        description: "Asks the client for its roots (roots/list) and returns their uris.",
        input_schema: no_arguments,
        output_schema: None,
        blocking: true,
        run: list_roots,
    },
    Tool {
        name: "log",
        title: "Log",
        description: "Emits a notifications/message at `level` unless filtered by logging/setLevel.",
        input_schema: || {
            object_schema(
                json!({
                    "level": { "type": "string", "enum": logging::LEVELS },
                    "message": { "type": "string" },
                }),
                &["level", "message"],
            )
        },
        output_schema: None,
        blocking: false,
        run: log,
    },
    Tool {
        name: "notify_changes",
        title: "Notify changes",
        description: "Emits tools/resources/prompts list_changed notifications and \
                      resources/updated for every subscribed uri.",
        input_schema: no_arguments,
        output_schema: None,
        blocking: false,
        run: notify_changes,
    },
    Tool {
        name: "cancelled_requests",
        title: "Cancelled requests",
        description: "Returns the JSON array of request ids the server has seen cancelled.",
        input_schema: no_arguments,
        output_schema: None,
        blocking: false,
        run: |context, _| {
            let ids = Value::Array(context.server.cancelled_ids());
            Ok(text_result(ids.to_string()))
        },
    },
    Tool {
        name: "stderr_burst",
        title: "Stderr burst",
        description: "Writes `bytes` bytes of log lines to stderr, then answers.",
        input_schema: || object_schema(json!({ "bytes": { "type": "integer", "minimum": 0 } }), &["bytes"]),
        output_schema: None,
        blocking: true,
        run: stderr_burst,
    },
    Tool {
        name: "weather",
        title: "Weather forecast",
        description: "Returns a canned forecast. Its arguments are annotated with x-mcp-header: over \
                      2026-07-28 Streamable HTTP they must also arrive as Mcp-Param-Region, \
                      Mcp-Param-Days and Mcp-Param-Metric headers.",
        input_schema: || {
            object_schema(
                json!({
                    "region": { "type": "string", "x-mcp-header": "Region" },
                    "days": { "type": "integer", "minimum": 0, "maximum": MAX_DAYS, "default": 1, "x-mcp-header": "Days" },
                    "metric": { "type": "boolean", "default": true, "x-mcp-header": "Metric" },
                }),
                &["region"],
            )
        },
        output_schema: None,
        blocking: false,
        run: |_, args| {
            let region = required_str(args, "region")?;
            let days = optional_u64(args, "days", 1, MAX_DAYS)?;
            let metric = optional_bool(args, "metric", true)?;
            Ok(text_result(format!("forecast for {region}: {days} days, metric={metric}")))
        },
    },
    Tool {
        name: "mixed_content",
        title: "Mixed content",
        description: "Returns one content block of each kind: text, image, audio, resource_link and \
                      an embedded resource.",
        input_schema: no_arguments,
        output_schema: None,
        blocking: false,
        run: |_, _| Ok(mixed_content()),
    },
    Tool {
        name: "bad_stats",
        title: "Broken statistics",
        description: "Exists to test client-side outputSchema validation: declares the outputSchema \
                      of get_stats but answers structuredContent that violates it (count is a \
                      string, mean is missing).",
        input_schema: numbers_schema,
        output_schema: Some(stats_schema),
        blocking: false,
        run: bad_stats,
    },
    Tool {
        name: "add_tool",
        title: "Add a tool",
        description: "Adds a tool named `name` to this session, which behaves like echo and is \
                      listed last, then sends notifications/tools/list_changed.",
        input_schema: || {
            object_schema(
                json!({ "name": {
                    "type": "string",
                    "description": "The new tool's name: 1 to 128 of A-Z, a-z, 0-9, _, - and .",
                } }),
                &["name"],
            )
        },
        output_schema: None,
        blocking: false,
        run: add_tool,
    },
];

/// `a + b` as text: exact for integers, `f64` otherwise (`2.5`, `5`, `-1e-7` print naturally).
fn format_sum(a: &Value, b: &Value) -> String {
    let exact = |value: &Value| value.as_i64().map(i128::from).or_else(|| value.as_u64().map(i128::from));
    if let (Some(a), Some(b)) = (exact(a), exact(b)) {
        return (a + b).to_string();
    }
    let sum = a.as_f64().unwrap_or(0.0) + b.as_f64().unwrap_or(0.0);
    sum.to_string()
}

/// `long_running {steps = 5, step_ms = 100}`.
fn long_running(context: &Context<'_>, args: &Map<String, Value>) -> ToolResult {
    let steps = optional_u64(args, "steps", 5, MAX_STEPS)?;
    let step_ms = optional_u64(args, "step_ms", 100, MAX_MS)?;
    for step in 1..=steps {
        context.sleep(Duration::from_millis(step_ms))?;
        if let Some(token) = context.progress_token() {
            context.notify(
                "notifications/progress",
                json!({
                    "progressToken": token,
                    "progress": step,
                    "total": steps,
                    "message": format!("step {step} of {steps}"),
                }),
            );
        }
    }
    Ok(text_result(format!("done after {steps} steps")))
}

/// The `numbers` argument of `get_stats` and `bad_stats`.
fn numbers(args: &Map<String, Value>) -> Result<Vec<f64>, RpcError> {
    required_array(args, "numbers")?
        .iter()
        .map(|number| number.as_f64().ok_or_else(|| RpcError::invalid_params("`numbers` must hold numbers")))
        .collect()
}

/// `get_stats {numbers}` → structured `{count, sum, mean}` plus the same JSON as text.
fn get_stats(_: &Context<'_>, args: &Map<String, Value>) -> ToolResult {
    let numbers = numbers(args)?;
    let count = numbers.len();
    let sum: f64 = numbers.iter().sum();
    #[allow(clippy::cast_precision_loss, reason = "counts are far below 2^52")]
    let mean = if count == 0 { 0.0 } else { sum / count as f64 };
    if !sum.is_finite() || !mean.is_finite() {
        // JSON has no infinity: say so rather than answer `null` where the schema says number.
        return Ok(error_result("the sum of `numbers` is too large to represent"));
    }
    let stats = json!({ "count": count, "sum": sum, "mean": mean });
    Ok(json!({
        "content": [{ "type": "text", "text": stats.to_string() }],
        "structuredContent": stats,
    }))
}

/// `bad_stats {numbers}` → structured `{count: "<count>", sum}` (against `get_stats`'s
/// outputSchema, which it declares: `count` must be an integer, `mean` is required) plus the
/// same JSON as text.
fn bad_stats(_: &Context<'_>, args: &Map<String, Value>) -> ToolResult {
    let numbers = numbers(args)?;
    let sum: f64 = numbers.iter().sum();
    if !sum.is_finite() {
        return Ok(error_result("the sum of `numbers` is too large to represent"));
    }
    let stats = json!({ "count": numbers.len().to_string(), "sum": sum });
    Ok(json!({
        "content": [{ "type": "text", "text": stats.to_string() }],
        "structuredContent": stats,
    }))
}

/// `mixed_content {}` → text, image, audio, resource_link and embedded resource blocks (the
/// shapes of 2025-06-18 and later).
fn mixed_content() -> Value {
    json!({
        "content": [
            { "type": "text", "text": "mixed" },
            { "type": "image", "data": base64(&TINY_PNG), "mimeType": "image/png" },
            { "type": "audio", "data": base64(&TINY_WAV), "mimeType": "audio/wav" },
            {
                "type": "resource_link",
                "uri": "demo://readme",
                "name": "readme",
                "mimeType": "text/markdown",
            },
            {
                "type": "resource",
                "resource": { "uri": "demo://items/7", "mimeType": "text/plain", "text": "item 7" },
            },
        ],
    })
}

/// `add_tool {name}` → adds `name` to the session, then notifies as `notify_changes` does
/// (legacy: `notifications/tools/list_changed` to the session; both eras: the
/// `subscriptions/listen` streams that asked for tool list changes), then `"added <name>"`. A
/// name that is taken or invalid, or one tool too many, is a tool error.
fn add_tool(context: &Context<'_>, args: &Map<String, Value>) -> ToolResult {
    let name = required_str(args, "name")?;
    if let Err(why) = context.server.added_tools.add(name) {
        return Ok(error_result(why));
    }
    if context.call.modern.is_none() {
        context.notify_session("notifications/tools/list_changed", json!({}));
    }
    context.server.notify_listeners_of_tools();
    Ok(text_result(format!("added {name}")))
}

/// The text of a sampling result's content (a block or, since 2025-11-25, an array of blocks).
fn content_text(content: &Value) -> String {
    match content {
        Value::Array(blocks) => blocks.iter().map(content_text).collect::<Vec<_>>().join(""),
        block => block.get("text").and_then(Value::as_str).unwrap_or_default().to_owned(),
    }
}

/// The message of a JSON-RPC error object.
fn error_message(error: &Value) -> String {
    match error.get("message").and_then(Value::as_str) {
        Some(message) => message.to_owned(),
        None => error.to_string(),
    }
}

/// `sample {prompt}` → `sampling/createMessage` → `sampled: <text>`.
fn sample(context: &Context<'_>, args: &Map<String, Value>) -> ToolResult {
    let prompt = required_str(args, "prompt")?;
    let params = json!({
        "messages": [{ "role": "user", "content": { "type": "text", "text": prompt } }],
        "maxTokens": 100,
    });
    Ok(match context.ask(&SAMPLING, params)? {
        Ok(result) => {
            text_result(format!("sampled: {}", content_text(result.get("content").unwrap_or(&Value::Null))))
        }
        Err(error) => error_result(format!("sampling failed: {}", error_message(&error))),
    })
}

/// `elicit {message}` → `elicitation/create` → `action=<action> content=<json>`.
fn elicit(context: &Context<'_>, args: &Map<String, Value>) -> ToolResult {
    let message = required_str(args, "message")?;
    let params = json!({
        "message": message,
        "requestedSchema": {
            "type": "object",
            "properties": { "name": { "type": "string" } },
            "required": ["name"],
        },
    });
    Ok(match context.ask(&ELICITATION, params)? {
        Ok(result) => {
            let action = result.get("action").and_then(Value::as_str).unwrap_or("unknown");
            let content = result.get("content").unwrap_or(&Value::Null);
            text_result(format!("action={action} content={content}"))
        }
        Err(error) => error_result(format!("elicitation failed: {}", error_message(&error))),
    })
}

/// `list_roots {}` → `roots/list` → the uris joined by `,`.
fn list_roots(context: &Context<'_>, _: &Map<String, Value>) -> ToolResult {
    Ok(match context.ask(&ROOTS, json!({}))? {
        Ok(result) => {
            let uris: Vec<&str> = result
                .get("roots")
                .and_then(Value::as_array)
                .map(|roots| roots.iter().filter_map(|root| root.get("uri")?.as_str()).collect())
                .unwrap_or_default();
            text_result(uris.join(","))
        }
        Err(error) => error_result(format!("roots/list failed: {}", error_message(&error))),
    })
}

/// `log {level, message}` → `notifications/message` unless filtered: by `logging/setLevel`
/// (legacy), or by the request's `_meta` log level (2026-07-28: no level, no message).
fn log(context: &Context<'_>, args: &Map<String, Value>) -> ToolResult {
    let level = required_str(args, "level")?;
    let message = required_str(args, "message")?;
    let rank = logging::rank(level)
        .ok_or_else(|| RpcError::invalid_params(format!("unknown log level {level:?}")))?;
    let allowed = match &context.call.modern {
        Some(modern) => modern.meta.log_level.is_some_and(|minimum| rank >= minimum),
        None => context.server.log_filter.allows(rank),
    };
    if !allowed {
        return Ok(text_result("filtered"));
    }
    context.notify("notifications/message", json!({ "level": level, "logger": "demo", "data": message }));
    Ok(text_result("logged"))
}

/// `notify_changes {}` → the three list_changed notifications and resources/updated.
///
/// A legacy call sends them to the session (resources/updated per `resources/subscribe`d uri);
/// every call also sends what each open `subscriptions/listen` stream asked for, tagged with
/// its subscription id (a 2026-07-28 call sends nothing else: there are no unsolicited
/// notifications in that era).
fn notify_changes(context: &Context<'_>, _: &Map<String, Value>) -> ToolResult {
    let server = context.server;
    if context.call.modern.is_none() {
        for method in [
            "notifications/tools/list_changed",
            "notifications/resources/list_changed",
            "notifications/prompts/list_changed",
        ] {
            context.notify_session(method, json!({}));
        }
        for uri in server.subscriptions.snapshot() {
            context.notify_session("notifications/resources/updated", json!({ "uri": uri }));
        }
    }
    server.notify_listeners();
    Ok(text_result("notified"))
}

/// `stderr_burst {bytes}` → exactly `bytes` bytes of newline-terminated lines on stderr.
fn stderr_burst(_: &Context<'_>, args: &Map<String, Value>) -> ToolResult {
    let bytes = required_u64(args, "bytes", MAX_BURST)?;
    const LINE: &[u8] = b"demo-server: stderr burst ..................................................\n";
    let mut stderr = std::io::stderr().lock();
    let mut remaining = usize::try_from(bytes).unwrap_or(usize::MAX);
    let mut written = Ok(());
    while remaining > 0 && written.is_ok() {
        let take = remaining.min(LINE.len());
        // Keep every chunk newline-terminated: a short last line keeps the tail of LINE.
        written = stderr.write_all(&LINE[LINE.len() - take..]);
        remaining -= take;
    }
    written.and_then(|()| stderr.flush()).map_err(|error| {
        RpcError::new(super::jsonrpc::INTERNAL_ERROR, format!("cannot write to stderr: {error}"))
    })?;
    Ok(text_result(format!("wrote {bytes} bytes")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tool_names_are_unique() {
        let mut names: Vec<&str> = TOOLS.iter().map(|tool| tool.name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), TOOLS.len());
    }

    #[test]
    fn sums_exactly() {
        assert_eq!(format_sum(&json!(2), &json!(3)), "5");
        assert_eq!(format_sum(&json!(u64::MAX), &json!(1)), "18446744073709551616");
        assert_eq!(format_sum(&json!(2.5), &json!(0.25)), "2.75");
        assert_eq!(format_sum(&json!(1.5), &json!(1.5)), "3");
    }

    #[test]
    fn only_weather_mirrors_arguments_in_headers() {
        let mut params = header_params("weather");
        params.sort();
        let expected = [("days", "Days"), ("metric", "Metric"), ("region", "Region")];
        assert_eq!(params, expected.map(|(argument, header)| (argument.to_owned(), header.to_owned())));
        for tool in &TOOLS {
            if tool.name != "weather" {
                assert!(header_params(tool.name).is_empty(), "{}", tool.name);
            }
        }
        assert!(header_params("nope").is_empty());
    }

    #[test]
    fn every_schema_is_an_object_schema() {
        for entry in list(&AddedTools::default(), true) {
            assert_eq!(entry["inputSchema"]["type"], "object", "{}", entry["name"]);
        }
    }

    #[test]
    fn tiny_wav_is_a_wav() {
        assert_eq!(&TINY_WAV[..4], b"RIFF");
        assert_eq!(u32::from_le_bytes([TINY_WAV[4], TINY_WAV[5], TINY_WAV[6], TINY_WAV[7]]), 40);
        assert_eq!(&TINY_WAV[8..16], b"WAVEfmt ");
        assert_eq!(&TINY_WAV[36..40], b"data");
        assert_eq!(usize::from(TINY_WAV[40]), TINY_WAV.len() - 44);
    }

    #[test]
    fn added_tools_are_bounded_unique_and_listed_last() {
        let added = AddedTools::default();
        assert!(added.add("echo").is_err_and(|why| why.contains("already exists")));
        for bad in ["", "has space", "ü", &"x".repeat(129)] {
            assert!(added.add(bad).is_err_and(|why| why.contains("not a valid tool name")), "{bad:?}");
        }
        assert_eq!(added.add("first"), Ok(()));
        assert!(added.add("first").is_err_and(|why| why.contains("already exists")));
        for index in 1..MAX_ADDED_TOOLS {
            assert_eq!(added.add(&format!("tool-{index}.v1")), Ok(()));
        }
        assert!(added.add("one_too_many").is_err_and(|why| why.contains("64 tools")));
        assert!(added.add(ADMIN_TOOL).is_err_and(|why| why.contains("already exists")));
        let listed = list(&added, false);
        assert_eq!(listed.len(), TOOLS.len() + MAX_ADDED_TOOLS);
        assert_eq!(listed[TOOLS.len()]["name"], "first");
        assert_eq!(listed[TOOLS.len()]["inputSchema"], echo_schema());
        let params = json!({ "name": "first", "arguments": { "message": "hi" } });
        let call = prepare(params.as_object().expect("object"), &added, false).expect("an added tool");
        assert_eq!(call.tool.name, ADDED_TOOL.name);
        let unknown = json!({ "name": "one_too_many" });
        assert!(prepare(unknown.as_object().expect("object"), &added, false).is_err());
    }

    #[test]
    fn the_admin_tool_exists_in_oauth_mode_only() {
        let added = AddedTools::default();
        let names =
            |oauth| -> Vec<Value> { list(&added, oauth).iter().map(|tool| tool["name"].clone()).collect() };
        assert!(!names(false).contains(&json!(ADMIN_TOOL)));
        assert_eq!(names(true)[TOOLS.len()], ADMIN_TOOL);
        let params = json!({ "name": ADMIN_TOOL, "arguments": { "message": "hi" } });
        let params = params.as_object().expect("object");
        assert!(prepare(params, &added, false).is_err());
        assert_eq!(prepare(params, &added, true).expect("in OAuth mode").tool.name, ADMIN_TOOL);
    }
}
