//! `rmcp-peer`: a small MCP server built on rmcp 3.11.0 (the official Rust SDK), a real peer for
//! mcp-sansio's interop tests. It serves the tasks extension (SEP-2663,
//! `io.modelcontextprotocol/tasks`) with rmcp's own `TaskManager`, and, built with the
//! `skills-fs` feature (the default), the skills extension (SEP-2640) from a directory with
//! rmcp's `SkillCatalog`.
//!
//! ```text
//! rmcp-peer                          stdio (newline-delimited JSON-RPC)
//! rmcp-peer --http 127.0.0.1:0       Streamable HTTP at /mcp; prints MCP_SERVER_URL=http://127.0.0.1:N/mcp
//! rmcp-peer --skills DIR             skills from DIR (default: this crate's skills/ directory)
//! rmcp-peer --no-skills              no skills extension
//! ```
//!
//! Protocol versions are rmcp's: 2026-07-28 (`server/discover`, per-request `_meta`, stateless
//! over HTTP) and the `initialize` era (2024-11-05 … 2025-11-25; sessions over HTTP).
//!
//! Like rmcp's own task example, the peer makes a task for any request that declared the
//! extension, whatever the protocol version: on 2025-11-25 too (a client that put the extension
//! in `initialize`), where SEP-2663 says a server must not, and rmcp's dispatch does not stop it.
//! The interop tests use that to see what the client does with such an answer.
//!
//! # Tools
//!
//! The task tools make a task only for a request that declares the tasks extension in its
//! client capabilities; otherwise they answer `-32021` naming the extension (rmcp would refuse
//! to send the task anyway). Every task tool takes `pollIntervalMs` (the interval the task
//! suggests, default 20) and `ttlMs` (default 600000; `null`: unlimited).
//!
//! | tool          | arguments                         | what it does                                          |
//! |---------------|-----------------------------------|-------------------------------------------------------|
//! | `echo`        | `message`                         | answers at once: `Echo: <message>`                    |
//! | `countdown`   | `polls` (default 3) or `ms`, `text` | a task that completes after that many `tasks/get` of it, or after `ms`: `countdown done: <text>` |
//! | `input_task`  | `kinds` (default `["elicitation"]`) | a task that asks each kind (`elicitation`, `sampling`, `roots`) through `inputRequests`, all at once under the keys `<kind>-1`, and completes with what it got, one line per kind |
//! | `fail_task`   | `ms` (default 50)                 | a task that fails with the JSON-RPC error `-32050` "the task failed on purpose", `data: {"tool": "fail_task", "taskId": ...}` |
//! | `self_cancel` | `ms` (default 50)                 | a task the server cancels: status `cancelled`, message "cancelled by the server" |
//! | `endless`     |                                   | a task that runs until `tasks/cancel` (then `cancelled`), at most 10 minutes |
//! | `peer_log`    | `taskId` (optional filter)        | answers at once with what the server saw: structured `{"requests": [{"method", "taskId", "mcpName"}...], "cancelled": [taskId...], "listens": n, "acknowledged": n}` |
//!
//! `peer_log`'s `requests` are the `tasks/get`, `tasks/update` and `tasks/cancel` requests in the
//! order they came, with the `Mcp-Name` header each carried over HTTP (`null` over stdio). rmcp
//! itself refuses a 2026-07-28 HTTP request whose `Mcp-Name` is missing or differs from
//! `params.taskId` (HTTP 400, `-32020`), so a task request that reached the server had the right
//! one. Each `tasks/cancel` is also logged on stderr: `rmcp-peer: tasks/cancel <taskId>`.
//! `listens` counts the `subscriptions/listen` requests: the peer offers `tools.listChanged` and
//! accepts what is asked, which rmcp cuts down to what it knows (never `taskIds`: rmcp 3.11
//! sends no `notifications/tasks`). `acknowledged` counts the streams whose acknowledgement rmcp
//! has sent (and seen written), which then listen until cancelled.
//!
//! # Skills by hand (raw JSON-RPC over stdio, 2026-07-28)
//!
//! Each 2026-07-28 request carries the protocol version and the client's capabilities in its
//! `_meta`; `server/discover` needs neither an `initialize` nor a session.
//!
//! ```text
//! M='"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"sh","version":"0"},"io.modelcontextprotocol/clientCapabilities":{}}'
//! printf '%s\n' \
//!   '{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{'"$M"'}}' \
//!   '{"jsonrpc":"2.0","id":2,"method":"skills/list","params":{'"$M"'}}' \
//!   '{"jsonrpc":"2.0","id":3,"method":"skills/get","params":{"uri":"skill://expense-report/SKILL.md",'"$M"'}}' \
//!   '{"jsonrpc":"2.0","id":4,"method":"resources/read","params":{"uri":"skill://expense-report/references/FORMS.md",'"$M"'}}' \
//!   | .interop/rmcp-target/debug/rmcp-peer
//! ```
//!
//! `server/discover` lists `io.modelcontextprotocol/skills` (with `directoryRead`) among the
//! server's extensions; `skills/list` gives `skill://expense-report/SKILL.md` with its
//! frontmatter and both files (`uri`, `digest` = `sha256:<hex>`, `size`); `resources/read` gives
//! the text. Check a digest with
//! `sha256sum conformance/peers/rmcp-server/skills/expense-report/references/FORMS.md`.
//! The README next to this crate has the session as recorded.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, CancelTaskParams, ClientCapabilities,
    ContentBlock, CreateTaskResult, ErrorCode, GetTaskParams, GetTaskResult, Implementation, InputRequest,
    JsonObject, ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig,
    SubscriptionFilter, Tool, UpdateTaskParams,
};
use rmcp::service::{RequestContext, RoleServer, SubscriptionContext};
use rmcp::task_manager::{TaskContext, TaskExit, TaskFuture, TaskManager, TaskOptions};
use rmcp::{ErrorData as McpError, ServerHandler, ServiceExt};
use serde_json::{Value, json};
use tokio::sync::watch;

/// The interval a task suggests when the call does not say (milliseconds).
const DEFAULT_POLL_INTERVAL_MS: u64 = 20;
/// A task's time to live when the call does not say (milliseconds).
const DEFAULT_TTL_MS: u64 = 600_000;
/// The error code of `fail_task`'s task.
const FAIL_CODE: i32 = -32050;

/// What every connection (and, over HTTP, every request) of the server shares.
struct Shared {
    tasks: TaskManager,
    /// `tasks/get` requests seen per task, for `countdown`.
    polls: Mutex<HashMap<String, watch::Sender<u32>>>,
    /// The `tasks/*` requests seen, in order.
    journal: Mutex<Vec<Value>>,
    /// `subscriptions/listen` requests seen.
    listens: AtomicUsize,
    /// Listen streams acknowledged (rmcp calls `listen` once the acknowledgement is written).
    acknowledged: AtomicUsize,
    #[cfg(feature = "skills-fs")]
    skills: Option<rmcp::handler::server::skill_catalog::SkillCatalog>,
}

#[derive(Clone)]
struct Peer(Arc<Shared>);

fn args_of(request: &CallToolRequestParams) -> JsonObject {
    request.arguments.clone().unwrap_or_default()
}

fn u64_arg(args: &JsonObject, key: &str) -> Option<u64> {
    args.get(key).and_then(Value::as_u64)
}

fn text(text: impl Into<String>) -> CallToolResult {
    CallToolResult::success(vec![ContentBlock::text(text.into())])
}

fn schema(value: Value) -> JsonObject {
    match value {
        Value::Object(map) => map,
        _ => JsonObject::new(),
    }
}

/// The tools, as `tools/list` shows them.
fn tools() -> Vec<Tool> {
    let task_props = |mut extra: JsonObject| {
        extra.insert("pollIntervalMs".into(), json!({"type": "integer", "minimum": 0}));
        extra.insert("ttlMs".into(), json!({"type": ["integer", "null"], "minimum": 1}));
        schema(json!({"type": "object", "properties": extra}))
    };
    vec![
        Tool::new(
            "echo",
            "Answers at once with the message.",
            schema(
                json!({"type": "object", "properties": {"message": {"type": "string"}}, "required": ["message"]}),
            ),
        ),
        Tool::new(
            "countdown",
            "A task that completes after `polls` tasks/get of it (default 3), or after `ms`.",
            task_props(schema(json!({
                "polls": {"type": "integer", "minimum": 0},
                "ms": {"type": "integer", "minimum": 0},
                "text": {"type": "string"}
            }))),
        ),
        Tool::new(
            "input_task",
            "A task that asks the client through inputRequests (elicitation, sampling, roots) and completes with the answers.",
            task_props(schema(json!({
                "kinds": {"type": "array", "items": {"enum": ["elicitation", "sampling", "roots"]}}
            }))),
        ),
        Tool::new(
            "fail_task",
            "A task that fails with a JSON-RPC error (-32050) after `ms`.",
            task_props(schema(json!({"ms": {"type": "integer", "minimum": 0}}))),
        ),
        Tool::new(
            "self_cancel",
            "A task that the server cancels after `ms`.",
            task_props(schema(json!({"ms": {"type": "integer", "minimum": 0}}))),
        ),
        Tool::new("endless", "A task that runs until tasks/cancel.", task_props(JsonObject::new())),
        Tool::new(
            "peer_log",
            "What the server saw: the tasks/* requests with their Mcp-Name header, and the cancelled task ids.",
            schema(json!({"type": "object", "properties": {"taskId": {"type": "string"}}})),
        ),
    ]
}

/// The input request of one kind, as a server-to-client request object.
fn input_request(kind: &str) -> Result<InputRequest, McpError> {
    let request = match kind {
        "elicitation" => json!({
            "method": "elicitation/create",
            "params": {
                "mode": "form",
                "message": "What is your name?",
                "requestedSchema": {
                    "type": "object",
                    "properties": {"name": {"type": "string"}},
                    "required": ["name"]
                }
            }
        }),
        "sampling" => json!({
            "method": "sampling/createMessage",
            "params": {
                "messages": [{"role": "user", "content": {"type": "text", "text": "say hi"}}],
                "maxTokens": 20
            }
        }),
        "roots" => json!({"method": "roots/list", "params": {}}),
        other => return Err(McpError::invalid_params(format!("unknown input kind {other:?}"), None)),
    };
    serde_json::from_value(request).map_err(|e| McpError::internal_error(e.to_string(), None))
}

/// One line of `input_task`'s result for the answer to an input request.
fn describe_answer(kind: &str, answer: &Value) -> String {
    let found = match kind {
        "elicitation" => match answer.get("action").and_then(Value::as_str) {
            Some("accept") => answer.pointer("/content/name").and_then(Value::as_str).map(str::to_owned),
            Some(action) => Some(format!("({action})")),
            None => None,
        },
        "sampling" => answer.pointer("/content/text").and_then(Value::as_str).map(str::to_owned),
        "roots" => answer.pointer("/roots/0/uri").and_then(Value::as_str).map(str::to_owned),
        _ => None,
    };
    format!("{kind}: {}", found.unwrap_or_else(|| answer.to_string()))
}

impl Peer {
    fn new(skills: Option<std::path::PathBuf>) -> Result<Self, String> {
        #[cfg(feature = "skills-fs")]
        let skills = match skills {
            Some(dir) => Some(
                rmcp::handler::server::skill_catalog::SkillCatalog::from_dir(&dir)
                    .map_err(|e| format!("skills from {}: {e}", dir.display()))?,
            ),
            None => None,
        };
        #[cfg(not(feature = "skills-fs"))]
        if let Some(dir) = skills {
            return Err(format!("--skills {}: built without the skills-fs feature", dir.display()));
        }
        Ok(Peer(Arc::new(Shared {
            tasks: TaskManager::new(),
            polls: Mutex::new(HashMap::new()),
            journal: Mutex::new(Vec::new()),
            listens: AtomicUsize::new(0),
            acknowledged: AtomicUsize::new(0),
            #[cfg(feature = "skills-fs")]
            skills,
        })))
    }

    /// Records a `tasks/*` request and the `Mcp-Name` header it came with (over HTTP).
    fn note(&self, method: &str, task_id: &str, context: &RequestContext<RoleServer>) {
        let mcp_name = context
            .extensions
            .get::<http::request::Parts>()
            .and_then(|parts| parts.headers.get("mcp-name"))
            .map(|value| String::from_utf8_lossy(value.as_bytes()).into_owned());
        let entry = json!({"method": method, "taskId": task_id, "mcpName": mcp_name});
        self.0.journal.lock().unwrap().push(entry);
    }

    /// Starts a task with the options of the call's arguments; `make` gets the task's context
    /// and a receiver of the number of `tasks/get` of it so far.
    fn spawn(
        &self,
        args: &JsonObject,
        make: impl FnOnce(TaskContext, watch::Receiver<u32>) -> TaskFuture,
    ) -> CallToolResponse {
        let options = TaskOptions::new()
            .with_poll_interval_ms(u64_arg(args, "pollIntervalMs").unwrap_or(DEFAULT_POLL_INTERVAL_MS))
            .with_ttl_ms(match args.get("ttlMs") {
                Some(Value::Null) => None,
                ttl => Some(ttl.and_then(Value::as_u64).unwrap_or(DEFAULT_TTL_MS)),
            });
        let shared = self.0.clone();
        let task = self.0.tasks.spawn(options, move |ctx| {
            let (tx, rx) = watch::channel(0);
            shared.polls.lock().unwrap().insert(ctx.task_id().to_owned(), tx);
            make(ctx, rx)
        });
        CallToolResponse::Task(CreateTaskResult::new(task))
    }

    fn peer_log(&self, args: &JsonObject) -> CallToolResult {
        let filter = args.get("taskId").and_then(Value::as_str);
        let journal = self.0.journal.lock().unwrap();
        let matches = |entry: &&Value| filter.is_none_or(|id| entry["taskId"] == id);
        let requests: Vec<Value> = journal.iter().filter(matches).cloned().collect();
        let cancelled: Vec<Value> =
            requests.iter().filter(|e| e["method"] == "tasks/cancel").map(|e| e["taskId"].clone()).collect();
        let listens = self.0.listens.load(Ordering::SeqCst);
        let acknowledged = self.0.acknowledged.load(Ordering::SeqCst);
        let log = json!({"requests": requests, "cancelled": cancelled, "listens": listens, "acknowledged": acknowledged});
        let mut result = text(log.to_string());
        result.structured_content = Some(log);
        result
    }

    /// `tools/call` of a task tool, for a request that declared the tasks extension.
    fn call_task_tool(&self, name: &str, args: &JsonObject) -> Result<CallToolResponse, McpError> {
        let ms = u64_arg(args, "ms");
        let response = match name {
            "countdown" => {
                let polls = u64_arg(args, "polls").unwrap_or(3).min(u64::from(u32::MAX)) as u32;
                let label = args.get("text").and_then(Value::as_str).unwrap_or("").to_owned();
                self.spawn(args, move |ctx, mut seen| {
                    Box::pin(async move {
                        let done = async {
                            match ms {
                                Some(ms) => tokio::time::sleep(Duration::from_millis(ms)).await,
                                None => {
                                    let _ = seen.wait_for(|n| *n >= polls).await;
                                }
                            }
                        };
                        tokio::select! {
                            () = ctx.cancelled() => Err(TaskExit::Cancelled),
                            () = done => Ok(text(format!("countdown done: {label}"))),
                        }
                    })
                })
            }
            "input_task" => {
                let kinds: Vec<String> = match args.get("kinds") {
                    Some(Value::Array(kinds)) => {
                        kinds.iter().filter_map(Value::as_str).map(str::to_owned).collect()
                    }
                    _ => vec!["elicitation".to_owned()],
                };
                let requests =
                    kinds.iter().map(|kind| Ok((kind.clone(), input_request(kind)?))).collect::<Result<Vec<_>, McpError>>()?;
                self.spawn(args, move |ctx, _| {
                    Box::pin(async move {
                        // All asked at once: the task shows every key until each is answered.
                        let asks: Vec<_> = requests
                            .into_iter()
                            .map(|(kind, request)| {
                                let ctx = ctx.clone();
                                tokio::spawn(async move {
                                    let answer = ctx.request_input(format!("{kind}-1"), request).await;
                                    (kind, answer)
                                })
                            })
                            .collect();
                        let mut lines = Vec::new();
                        for ask in asks {
                            let (kind, answer) = ask
                                .await
                                .map_err(|e| TaskExit::Error(McpError::internal_error(e.to_string(), None)))?;
                            lines.push(describe_answer(&kind, &answer?));
                        }
                        Ok(text(lines.join("\n")))
                    })
                })
            }
            "fail_task" => self.spawn(args, move |ctx, _| {
                Box::pin(async move {
                    tokio::time::sleep(Duration::from_millis(ms.unwrap_or(50))).await;
                    let data = json!({"tool": "fail_task", "taskId": ctx.task_id()});
                    Err(TaskExit::Error(McpError::new(ErrorCode(FAIL_CODE), "the task failed on purpose", Some(data))))
                })
            }),
            "self_cancel" => self.spawn(args, move |ctx, _| {
                Box::pin(async move {
                    tokio::time::sleep(Duration::from_millis(ms.unwrap_or(50))).await;
                    ctx.set_status_message("cancelled by the server");
                    Err(TaskExit::Cancelled)
                })
            }),
            "endless" => self.spawn(args, move |ctx, _| {
                Box::pin(async move {
                    tokio::select! {
                        () = ctx.cancelled() => Err(TaskExit::Cancelled),
                        () = tokio::time::sleep(Duration::from_secs(600)) => Ok(text("endless ended after 10 minutes")),
                    }
                })
            }),
            other => return Err(McpError::invalid_params(format!("unknown tool {other:?}"), None)),
        };
        Ok(response)
    }
}

impl ServerHandler for Peer {
    fn get_info(&self) -> ServerConfig {
        #[allow(unused_mut)]
        let mut capabilities =
            ServerCapabilities::builder().enable_tools().enable_tool_list_changed().enable_tasks().build();
        #[cfg(feature = "skills-fs")]
        if self.0.skills.is_some() {
            capabilities = ServerCapabilities::builder()
                .enable_tools()
                .enable_tool_list_changed()
                .enable_resources()
                .enable_tasks()
                .enable_skills_with_directory_read()
                .build();
        }
        ServerConfig::new(capabilities)
            .with_server_info(Implementation::new("mcp-sansio-rmcp-peer", "0.1.0 (rmcp 3.11.0)"))
            .with_instructions("A test peer built on rmcp 3.11.0: SEP-2663 tasks and SEP-2640 skills.")
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        Ok(ListToolsResult::with_all_items(tools()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let args = args_of(&request);
        match request.name.as_ref() {
            "echo" => {
                let message = args.get("message").and_then(Value::as_str).unwrap_or("");
                Ok(text(format!("Echo: {message}")).into())
            }
            "peer_log" => Ok(self.peer_log(&args).into()),
            name => {
                let declared = context.client_capabilities().is_some_and(|caps| caps.supports_tasks());
                if !declared {
                    if !tools().iter().any(|tool| tool.name == name) {
                        return Err(McpError::invalid_params(format!("unknown tool {name:?}"), None));
                    }
                    return Err(McpError::missing_required_client_capability(
                        ClientCapabilities::builder().enable_tasks().build(),
                    ));
                }
                self.call_task_tool(name, &args)
            }
        }
    }

    /// `subscriptions/listen` (2026-07-28): whatever was asked, as far as the capabilities go
    /// (rmcp intersects them). rmcp's filter has no `taskIds`: they are never acknowledged.
    fn accepted_subscription_filter(&self, requested: &SubscriptionFilter) -> Option<SubscriptionFilter> {
        self.0.listens.fetch_add(1, Ordering::SeqCst);
        Some(requested.clone())
    }

    /// rmcp's own listen (until the stream is cancelled), counted: rmcp calls it once the
    /// stream's acknowledgement was written.
    async fn listen(&self, context: SubscriptionContext) -> Result<(), McpError> {
        self.0.acknowledged.fetch_add(1, Ordering::SeqCst);
        context.cancelled().await;
        Ok(())
    }

    async fn get_task(
        &self,
        request: GetTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetTaskResult, McpError> {
        self.note("tasks/get", &request.task_id, &context);
        if let Some(polls) = self.0.polls.lock().unwrap().get(&request.task_id) {
            polls.send_modify(|n| *n += 1);
        }
        Ok(GetTaskResult::new(self.0.tasks.get_task(&request.task_id)?))
    }

    async fn update_task(
        &self,
        request: UpdateTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        self.note("tasks/update", &request.task_id, &context);
        self.0.tasks.update_task(&request.task_id, request.input_responses)
    }

    async fn cancel_task(
        &self,
        request: CancelTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        self.note("tasks/cancel", &request.task_id, &context);
        eprintln!("rmcp-peer: tasks/cancel {}", request.task_id);
        self.0.tasks.cancel_task(&request.task_id)
    }

    #[cfg(feature = "skills-fs")]
    async fn list_skills(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::ListSkillsResult, McpError> {
        Ok(self.catalog()?.list_skills())
    }

    #[cfg(feature = "skills-fs")]
    async fn get_skill(
        &self,
        request: rmcp::model::GetSkillRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::GetSkillResult, McpError> {
        self.catalog()?.get_skill(&request.uri)
    }

    #[cfg(feature = "skills-fs")]
    async fn read_resource_directory(
        &self,
        request: rmcp::model::ReadResourceDirectoryRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::ReadResourceDirectoryResult, McpError> {
        self.catalog()?.read_resource_directory(&request.uri)
    }

    #[cfg(feature = "skills-fs")]
    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::ListResourcesResult, McpError> {
        Ok(rmcp::model::ListResourcesResult::with_all_items(self.catalog()?.resources()))
    }

    #[cfg(feature = "skills-fs")]
    async fn read_resource(
        &self,
        request: rmcp::model::ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::ReadResourceResponse, McpError> {
        self.catalog()?
            .read_resource(&request.uri)
            .map(Into::into)
            .ok_or_else(|| McpError::resource_not_found(format!("no resource {}", request.uri), None))
    }
}

#[cfg(feature = "skills-fs")]
impl Peer {
    fn catalog(&self) -> Result<&rmcp::handler::server::skill_catalog::SkillCatalog, McpError> {
        self.0.skills.as_ref().ok_or_else(|| McpError::internal_error("no skills served", None))
    }
}

struct Options {
    http: Option<SocketAddr>,
    skills: Option<std::path::PathBuf>,
}

const USAGE: &str = "usage: rmcp-peer [--http ADDR] [--skills DIR | --no-skills]
  (no --http)     serve on stdio
  --http ADDR     Streamable HTTP on ADDR (e.g. 127.0.0.1:0) at /mcp; prints MCP_SERVER_URL=<url>
  --skills DIR    serve the skills below DIR (default: the crate's skills/ directory)
  --no-skills     no skills extension";

fn options() -> Result<Options, String> {
    let default_skills = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("skills");
    let mut options = Options {
        http: None,
        skills: (cfg!(feature = "skills-fs") && default_skills.is_dir()).then_some(default_skills),
    };
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--http" => {
                let addr = args.next().ok_or("--http needs an address")?;
                options.http = Some(addr.parse().map_err(|e| format!("--http {addr}: {e}"))?);
            }
            "--skills" => options.skills = Some(args.next().ok_or("--skills needs a directory")?.into()),
            "--no-skills" => options.skills = None,
            "-h" | "--help" => {
                println!("{USAGE}");
                std::process::exit(0);
            }
            other => return Err(format!("unknown argument {other:?}\n{USAGE}")),
        }
    }
    Ok(options)
}

/// Streamable HTTP at `/mcp` on `addr`, for ever; prints the URL once listening.
async fn serve_http(peer: Peer, addr: SocketAddr) -> Result<(), String> {
    use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
    use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
    use std::io::Write;
    use tower_service::Service;

    let listener = tokio::net::TcpListener::bind(addr).await.map_err(|e| format!("binding {addr}: {e}"))?;
    let local = listener.local_addr().map_err(|e| e.to_string())?;
    let host = local.ip().to_string();
    let config =
        StreamableHttpServerConfig::default().with_allowed_hosts([host.as_str(), "localhost", "127.0.0.1"]);
    let service = StreamableHttpService::new(
        move || Ok(peer.clone()),
        Arc::new(LocalSessionManager::default()),
        config,
    );
    {
        let mut stdout = std::io::stdout().lock();
        let _ = writeln!(stdout, "MCP_SERVER_URL=http://{local}/mcp");
        let _ = stdout.flush();
    }
    loop {
        let (stream, _) = match listener.accept().await {
            Ok(accepted) => accepted,
            Err(e) => {
                eprintln!("rmcp-peer: accept: {e}");
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            }
        };
        let service = service.clone();
        tokio::spawn(async move {
            let handle = hyper::service::service_fn(move |request: http::Request<hyper::body::Incoming>| {
                let mut service = service.clone();
                async move {
                    if request.uri().path() == "/mcp" {
                        service.call(request).await
                    } else {
                        let body = Full::new(Bytes::from_static(b"not found"))
                            .map_err(|never| match never {})
                            .boxed();
                        Ok(http::Response::builder().status(404).body(body).expect("a 404"))
                    }
                }
            });
            let io = hyper_util::rt::TokioIo::new(stream);
            if let Err(e) = hyper::server::conn::http1::Builder::new().serve_connection(io, handle).await {
                eprintln!("rmcp-peer: connection: {e}");
            }
        });
    }
}

#[tokio::main]
async fn main() {
    let run = async {
        let options = options()?;
        let peer = Peer::new(options.skills)?;
        match options.http {
            Some(addr) => serve_http(peer, addr).await,
            None => {
                let running =
                    peer.serve(rmcp::transport::stdio()).await.map_err(|e| format!("stdio: {e}"))?;
                running.waiting().await.map(|_| ()).map_err(|e| format!("stdio: {e}"))
            }
        }
    };
    if let Err(e) = run.await {
        eprintln!("rmcp-peer: {e}");
        std::process::exit(2);
    }
}
