//! Hostile task servers: the tasks extension of 2026-07-28 (`resultType: "task"`, `tasks/get`,
//! `tasks/update`, `tasks/cancel`) and, for `task_result_flood`, the 2025-11-25 experimental
//! tasks the client hosts (`params.task`, `tasks/result`).
//!
//! One core, [`Core::handle`], turns one message from the client into the messages to send back
//! (JSON text, so that a mode can write what `serde_json` would not, such as escaped member
//! names). `mcp-adversary stdio task_<mode>` runs it on stdin and stdout, `mcp-adversary http
//! task_<mode>` behind the Streamable HTTP server of `http.rs` (one core for the process: a
//! single message back is a JSON body, more an event stream; what the client posts that is not
//! a request gets 202).
//!
//! The server answers `server/discover` (2026-07-28, capabilities `tools` and the extension
//! `io.modelcontextprotocol/tasks`) and `initialize` (2025-11-25, `tools`), `ping`, `tools/list`,
//! the tool `echo`, and the tool `task_report`, whose text (also written to stderr) is a JSON
//! object of what the server received: `calls` of the mode's tool, `cancels` (`tasks/cancel`
//! per task id), `updates` (`tasks/update`), `answers` (result responses), `refusals` (error
//! responses, by their `data.limit`, `"none"` without) and `hosted` (the task ids of the
//! client's `CreateTaskResult`s). Every `tasks/cancel` is also logged on stderr as it comes.
//! Calling the tool named after the mode misbehaves:
//!
//! | mode | misbehaviour |
//! |---|---|
//! | `task_id_reuse` | every call is answered with the task `t-reused`; the first call's task completes at its second `tasks/get` with the text `call 1` |
//! | `task_input_flood` | the call becomes a task; each `tasks/get` answers `input_required` with one new key (an elicitation), for ever |
//! | `task_input_burst` | the call becomes a task; its `tasks/get` answers `input_required` with 5 000 keys at once |
//! | `task_escaped` | the task answer is written with escaped names and values (`"result\u0054ype":"t\u0061sk"`); its first `tasks/get` completes it with the text `escaped task's result` |
//! | `task_undecodable` | the task answer has the id `t-bad` and a `status` that is a number |
//! | `task_result_flood` | (2025-11-25) sends `elicitation/create` asking for a task, then `{"count":N}` (default 1000) `tasks/result` for `client-task-0` (the first task a fresh client hosts), then answers the call |

use std::collections::BTreeMap;
use std::io::{self, BufRead, Write};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use serde_json::{Value, json};

use crate::http::{Next, Request, respond};

/// The task modes (over stdio and over HTTP alike).
pub(crate) const MODES: &[&str] = &[
    "task_id_reuse",
    "task_input_flood",
    "task_input_burst",
    "task_escaped",
    "task_undecodable",
    "task_result_flood",
];

const TASKS_EXTENSION: &str = "io.modelcontextprotocol/tasks";
const MODERN: &str = "2026-07-28";
const LEGACY: &str = "2025-11-25";
/// Input requests in `task_input_burst`'s one answer.
const BURST: usize = 5000;
/// The one task id of `task_id_reuse`.
const REUSED: &str = "t-reused";
const STAMP: &str = "2026-11-27T10:00:00Z";

/// The task mode named `mode`, if it is one.
pub(crate) fn mode(mode: &str) -> Option<&'static str> {
    MODES.iter().find(|m| **m == mode).copied()
}

/// A task this server runs: the text it ends with, and how often it was polled.
struct Task {
    result: String,
    polls: u64,
}

/// What the server knows across messages (and, over HTTP, across connections).
pub(crate) struct Core {
    mode: &'static str,
    tasks: BTreeMap<String, Task>,
    calls: u64,
    cancels: BTreeMap<String, u64>,
    updates: u64,
    answers: u64,
    refusals: BTreeMap<String, u64>,
    hosted: Vec<String>,
}

impl Core {
    pub(crate) fn new(mode: &'static str) -> Self {
        Self {
            mode,
            tasks: BTreeMap::new(),
            calls: 0,
            cancels: BTreeMap::new(),
            updates: 0,
            answers: 0,
            refusals: BTreeMap::new(),
            hosted: Vec::new(),
        }
    }

    /// The messages to send back for `message`, each one JSON text.
    pub(crate) fn handle(&mut self, message: &Value) -> Vec<String> {
        let method = message.get("method").and_then(Value::as_str);
        match (method, message.get("id")) {
            (None, _) => {
                self.response(message);
                Vec::new()
            }
            // Notifications need nothing.
            (Some(_), None) => Vec::new(),
            (Some(method), Some(id)) => {
                let params = message.get("params").unwrap_or(&Value::Null);
                // A 2026-07-28 request says its version in `_meta`; its results say their type.
                let modern =
                    params.pointer("/_meta/io.modelcontextprotocol~1protocolVersion") == Some(&json!(MODERN));
                self.request(id, method, params, modern)
            }
        }
    }

    fn response(&mut self, message: &Value) {
        if let Some(error) = message.get("error") {
            let limit = error.pointer("/data/limit").map_or_else(|| "none".to_owned(), Value::to_string);
            *self.refusals.entry(limit).or_default() += 1;
        } else if let Some(result) = message.get("result") {
            self.answers += 1;
            if let Some(task_id) = result.pointer("/task/taskId").and_then(Value::as_str) {
                eprintln!("task-adversary: hosted task created: {task_id}");
                self.hosted.push(task_id.to_owned());
            }
        }
    }

    fn request(&mut self, id: &Value, method: &str, params: &Value, modern: bool) -> Vec<String> {
        let reply = |result: Value| vec![answer(id, result, modern)];
        match method {
            "server/discover" => reply(json!({
                "supportedVersions": [MODERN],
                "capabilities": {"tools": {}, "extensions": {TASKS_EXTENSION: {}}},
                "_meta": {"io.modelcontextprotocol/serverInfo": server_info()},
            })),
            "initialize" => reply(json!({
                "protocolVersion": LEGACY,
                "capabilities": {"tools": {}},
                "serverInfo": server_info(),
            })),
            "ping" => reply(json!({})),
            "tools/list" => {
                let object = json!({"type": "object"});
                let echo = json!({"name": "echo", "inputSchema":
                    {"type": "object", "properties": {"message": {"type": "string"}}}});
                reply(json!({"tools": [
                    echo,
                    {"name": self.mode, "description": "Misbehaves.", "inputSchema": object},
                    {"name": "task_report", "description": "What the server received.", "inputSchema": object},
                ]}))
            }
            "tools/call" => {
                let name = params.get("name").and_then(Value::as_str).unwrap_or_default();
                let arguments = params.get("arguments").unwrap_or(&Value::Null);
                match name {
                    "echo" => {
                        let message = arguments.get("message").and_then(Value::as_str).unwrap_or_default();
                        reply(text(message))
                    }
                    "task_report" => {
                        let report = self.report();
                        eprintln!("task-adversary: report {report}");
                        reply(text(&report.to_string()))
                    }
                    _ if name == self.mode => self.call(id, arguments, modern),
                    _ => vec![error(id, -32602, &format!("unknown tool {name:?}"))],
                }
            }
            "tasks/get" => {
                let task_id = params.get("taskId").and_then(Value::as_str).unwrap_or_default();
                self.poll(id, task_id, modern)
            }
            "tasks/update" => {
                self.updates += 1;
                reply(json!({}))
            }
            "tasks/cancel" => {
                let task_id = params.get("taskId").and_then(Value::as_str).unwrap_or_default().to_owned();
                let count = self.cancels.entry(task_id.clone()).or_default();
                *count += 1;
                eprintln!("task-adversary: tasks/cancel {task_id} ({count} for it)");
                reply(snapshot(&task_id, "cancelled"))
            }
            _ => vec![error(id, -32601, &format!("method not found: {method}"))],
        }
    }

    /// The call of the mode's tool.
    fn call(&mut self, id: &Value, arguments: &Value, modern: bool) -> Vec<String> {
        self.calls += 1;
        let calls = self.calls;
        let mut new_task = |result: &str| {
            let task_id = format!("t-{calls}");
            self.tasks.insert(task_id.clone(), Task { result: result.to_owned(), polls: 0 });
            task_id
        };
        match self.mode {
            "task_id_reuse" => {
                if calls == 1 {
                    self.tasks.insert(REUSED.to_owned(), Task { result: "call 1".to_owned(), polls: 0 });
                }
                eprintln!("task-adversary: call {calls} answered with task {REUSED}");
                vec![created(id, REUSED, 200)]
            }
            "task_input_flood" | "task_input_burst" => {
                let task_id = new_task("never");
                vec![created(id, &task_id, 10)]
            }
            "task_escaped" => {
                let task_id = new_task("escaped task's result");
                vec![format!(
                    r#"{{"jsonrpc":"2.0","id":{id},"result":{{"result\u0054ype":"t\u0061sk","taskId":"{task_id}","status":"working","createdAt":"{STAMP}","lastUpdatedAt":"{STAMP}","ttlMs":60000,"pollIntervalMs":100}}}}"#
                )]
            }
            "task_undecodable" => {
                vec![answer(id, json!({"resultType": "task", "taskId": "t-bad", "status": 42}), false)]
            }
            "task_result_flood" => {
                let count = arguments.get("count").and_then(Value::as_u64).unwrap_or(1000);
                let ask = json!({"mode": "form", "message": "Name?", "task": {"ttl": 60000},
                    "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}}});
                let mut out = vec![request(&json!(format!("h{calls}")), "elicitation/create", ask)];
                for n in 0..count {
                    let params = json!({"taskId": "client-task-0"});
                    out.push(request(&json!(format!("r{calls}-{n}")), "tasks/result", params));
                }
                eprintln!("task-adversary: sent {count} tasks/result for client-task-0");
                out.push(answer(id, text(&format!("flooded {count}")), modern));
                out
            }
            _ => vec![error(id, -32603, "no misbehaviour for this mode")],
        }
    }

    /// `tasks/get` of `task_id`.
    fn poll(&mut self, id: &Value, task_id: &str, modern: bool) -> Vec<String> {
        let mode = self.mode;
        let Some(task) = self.tasks.get_mut(task_id) else {
            return vec![error(id, -32602, &format!("unknown task {task_id:?}"))];
        };
        task.polls += 1;
        let mut status = snapshot(task_id, "working");
        let completed = match mode {
            "task_id_reuse" => task.polls >= 2,
            "task_escaped" => true,
            _ => false,
        };
        if completed {
            status["status"] = json!("completed");
            status["result"] = json!({"content": [{"type": "text", "text": task.result}], "isError": false});
        } else {
            match mode {
                "task_input_flood" => {
                    status["status"] = json!("input_required");
                    status["inputRequests"] = json!({format!("k{}", task.polls): elicitation()});
                }
                "task_input_burst" => {
                    let requests: serde_json::Map<String, Value> =
                        (0..BURST).map(|n| (format!("k{n}"), elicitation())).collect();
                    status["status"] = json!("input_required");
                    status["inputRequests"] = Value::Object(requests);
                }
                _ => status["pollIntervalMs"] = json!(200),
            }
        }
        vec![answer(id, status, modern)]
    }

    fn report(&self) -> Value {
        json!({
            "calls": self.calls,
            "cancels": self.cancels,
            "updates": self.updates,
            "answers": self.answers,
            "refusals": self.refusals,
            "hosted": self.hosted,
        })
    }
}

fn server_info() -> Value {
    json!({"name": "mcp-adversary", "version": env!("CARGO_PKG_VERSION")})
}

/// A task's state as `tasks/get` tells it.
fn snapshot(task_id: &str, status: &str) -> Value {
    json!({"taskId": task_id, "status": status, "createdAt": STAMP, "lastUpdatedAt": STAMP, "ttlMs": 60000})
}

/// The answer that makes a call a task.
fn created(id: &Value, task_id: &str, poll_ms: u64) -> String {
    let mut task = snapshot(task_id, "working");
    task["resultType"] = json!("task");
    task["pollIntervalMs"] = json!(poll_ms);
    answer(id, task, false)
}

/// One input request of a task: a form elicitation.
fn elicitation() -> Value {
    json!({"method": "elicitation/create", "params": {"mode": "form", "message": "?",
        "requestedSchema": {"type": "object", "properties": {}}}})
}

/// A response; a 2026-07-28 one says `resultType: "complete"` unless it says otherwise.
fn answer(id: &Value, mut result: Value, modern: bool) -> String {
    if modern && result.get("resultType").is_none() {
        result["resultType"] = json!("complete");
    }
    json!({"jsonrpc": "2.0", "id": id, "result": result}).to_string()
}

fn error(id: &Value, code: i64, message: &str) -> String {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}}).to_string()
}

fn request(id: &Value, method: &str, params: Value) -> String {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string()
}

/// A tool result with one text block.
fn text(message: &str) -> Value {
    json!({"content": [{"type": "text", "text": message}]})
}

/// Serves `mode` on stdin and stdout until stdin ends; returns the exit status.
pub(crate) fn run_stdio(mode: &'static str) -> i32 {
    let mut core = Core::new(mode);
    let mut stdout = io::stdout().lock();
    for line in io::stdin().lock().split(b'\n') {
        let Ok(line) = line else { break };
        let Ok(message) = serde_json::from_slice::<Value>(&line) else { continue };
        let mut bytes = Vec::new();
        for out in core.handle(&message) {
            bytes.extend_from_slice(out.as_bytes());
            bytes.push(b'\n');
        }
        if !bytes.is_empty() && stdout.write_all(&bytes).and_then(|()| stdout.flush()).is_err() {
            break;
        }
    }
    0
}

/// The core of the HTTP server (one per process: sessions share it).
static CORE: Mutex<Option<Core>> = Mutex::new(None);
static SESSIONS: AtomicU64 = AtomicU64::new(0);

/// Serves a `POST` of a task mode; `None` for what `http.rs` serves as for every mode (`GET`,
/// `DELETE`, a body that is not JSON) and for the other modes.
pub(crate) fn intercept_http(
    mode: &'static str,
    request: &Request,
    writer: &mut impl Write,
) -> io::Result<Option<Next>> {
    if self::mode(mode).is_none() || request.method != "POST" {
        return Ok(None);
    }
    let Ok(message) = serde_json::from_slice::<Value>(&request.body) else { return Ok(None) };
    let out = {
        let mut core = CORE.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        core.get_or_insert_with(|| Core::new(mode)).handle(&message)
    };
    let method = message.get("method").and_then(Value::as_str);
    if method.is_none() || message.get("id").is_none() {
        respond(writer, 202, &[], b"")?;
        return Ok(Some(Next::KeepAlive));
    }
    let session = format!("task-adversary-{}", SESSIONS.fetch_add(1, Ordering::Relaxed));
    let mut headers = Vec::new();
    if method == Some("initialize") {
        headers.push(("Mcp-Session-Id", session.as_str()));
    }
    if let [one] = &out[..] {
        headers.push(("Content-Type", "application/json"));
        respond(writer, 200, &headers, one.as_bytes())?;
    } else {
        let mut events = String::new();
        for message in &out {
            events.push_str(&format!("event: message\ndata: {message}\n\n"));
        }
        headers.extend([("Content-Type", "text/event-stream"), ("Cache-Control", "no-cache")]);
        respond(writer, 200, &headers, events.as_bytes())?;
    }
    Ok(Some(Next::KeepAlive))
}
