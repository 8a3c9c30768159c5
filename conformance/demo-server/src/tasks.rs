//! The tasks extension (`io.modelcontextprotocol/tasks`, SEP-2663) on 2026-07-28, with
//! `--tasks`: a `tools/call` whose per-request client capabilities declare the extension may be
//! answered with a task (`resultType: "task"`), which the client follows with `tasks/get`,
//! feeds with `tasks/update` and stops with `tasks/cancel`.
//!
//! Which calls become tasks: those of the tools that run on their own thread (`long_running`,
//! `sleep`, `sample`, `elicit`, `list_roots`, `stderr_burst`) and `render`, the task-only tool
//! (`-32021` without the extension, in either era). A task runs the tool as the call would
//! have, on its own thread; a question the tool asks (the multi round-trip `input_required`
//! of 2026-07-28) becomes the task's `input_required` status with the same `inputRequests`,
//! and the answers that `tasks/update` brings are given to the tool as a retry would give them.
//!
//! The tasks live in the [`Server`] that created them: over stdio as long as the process, over
//! HTTP in the one stateless side that every 2026-07-28 request shares, whatever connection
//! it comes on. A task is forgotten [`TTL_MS`] after its creation, and the oldest ones when
//! there are [`MAX_TASKS`].

use std::collections::hash_map::RandomState;
use std::hash::{BuildHasher, Hasher};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::thread;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde_json::{Map, Value, json};

use super::arguments::{optional_bool, optional_u64};
use super::jsonrpc::{self, INTERNAL_ERROR, INVALID_PARAMS, MISSING_REQUIRED_CLIENT_CAPABILITY, RpcError};
use super::modern::{self, RequestMeta};
use super::output::Outlet;
use super::server::{CANCEL_POLL, Reply, Server};
use super::tools;

/// The extension's identifier.
pub(crate) const EXTENSION: &str = "io.modelcontextprotocol/tasks";

/// The methods of the extension.
pub(crate) const METHODS: [&str; 3] = ["tasks/get", "tasks/update", "tasks/cancel"];

/// How long a task is kept after its creation (`ttlMs`).
pub(crate) const TTL_MS: u64 = 600_000;

/// The polling interval the server suggests (`pollIntervalMs`).
pub(crate) const POLL_INTERVAL_MS: u64 = 20;

/// The most tasks kept at once; the oldest go first.
pub(crate) const MAX_TASKS: usize = 1024;

/// The name of the task-only tool.
pub(crate) const RENDER: &str = "render";

/// The name of the tool that reports the ids `tasks/cancel` named.
pub(crate) const CANCELLED_TASKS: &str = "cancelled_tasks";

/// The error a `render` with `fail: true` ends with (a server error of JSON-RPC's
/// implementation-defined range).
pub(crate) const RENDER_FAILED: i64 = -32000;

/// The most frames `render` renders, and the longest frame.
const MAX_FRAMES: u64 = 20;
const MAX_FRAME_MS: u64 = 100;

/// A deliberate mistake in the tasks (`--task-bug`), for showing that `mcp-conformance check`
/// finds it. See the crate docs, "Tasks".
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TaskBug {
    /// Task ids are `task-<n>`, `n` being one more than the number of tasks still running: a
    /// task created after another one ended takes that one's id and record, so a `completed`
    /// task is seen `working` again.
    ReusedId,
}

impl TaskBug {
    /// Every bug, in the order of `--help`.
    pub const ALL: [TaskBug; 1] = [TaskBug::ReusedId];

    /// The name `--task-bug` takes.
    pub fn name(self) -> &'static str {
        match self {
            TaskBug::ReusedId => "reused-id",
        }
    }

    /// The bug named `name`, or a message listing the names.
    pub(crate) fn parse(name: &str) -> Result<Self, String> {
        Self::ALL.into_iter().find(|bug| bug.name() == name).ok_or_else(|| {
            let names: Vec<&str> = Self::ALL.iter().map(|bug| bug.name()).collect();
            format!("--task-bug expects one of {}, got {name:?}", names.join(", "))
        })
    }
}

/// Where a task is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Status {
    Working,
    InputRequired,
    Completed,
    Failed,
    Cancelled,
}

impl Status {
    fn name(self) -> &'static str {
        match self {
            Status::Working => "working",
            Status::InputRequired => "input_required",
            Status::Completed => "completed",
            Status::Failed => "failed",
            Status::Cancelled => "cancelled",
        }
    }

    fn terminal(self) -> bool {
        matches!(self, Status::Completed | Status::Failed | Status::Cancelled)
    }
}

/// What a task is now.
#[derive(Debug)]
struct State {
    status: Status,
    message: Option<String>,
    updated: SystemTime,
    /// `input_required`: the questions not answered yet, by key.
    questions: Map<String, Value>,
    /// Answers received for the current questions, by key.
    answers: Map<String, Value>,
    /// `completed`: the `CallToolResult`; `failed`: the JSON-RPC error object.
    outcome: Option<Value>,
}

/// One task.
#[derive(Debug)]
struct Task {
    id: String,
    created: SystemTime,
    created_at: Instant,
    state: Mutex<State>,
    /// Notified when answers arrive or the task is cancelled.
    changed: Condvar,
    /// Raised by `tasks/cancel`; the running tool sees it.
    cancel: Arc<AtomicBool>,
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Task {
    /// The `Task` fields (the spec's `DetailedTask`), for `tasks/get` and task creation.
    fn to_value(&self) -> Value {
        let state = lock(&self.state);
        let mut task = json!({
            "taskId": self.id,
            "status": state.status.name(),
            "createdAt": iso8601(self.created),
            "lastUpdatedAt": iso8601(state.updated),
            "ttlMs": TTL_MS,
            "pollIntervalMs": POLL_INTERVAL_MS,
        });
        if let Some(message) = &state.message {
            task["statusMessage"] = message.clone().into();
        }
        match (state.status, &state.outcome) {
            (Status::InputRequired, _) => task["inputRequests"] = Value::Object(state.questions.clone()),
            (Status::Completed, Some(result)) => task["result"] = result.clone(),
            (Status::Failed, Some(error)) => task["error"] = error.clone(),
            _ => {}
        }
        task
    }

    /// Moves to `status` unless the task has ended (a terminal status never changes).
    fn set(&self, status: Status, message: Option<String>, outcome: Option<Value>) {
        let mut state = lock(&self.state);
        if state.status.terminal() {
            return;
        }
        state.status = status;
        state.message = message;
        state.updated = SystemTime::now();
        if status != Status::InputRequired {
            state.questions.clear();
        }
        state.outcome = outcome;
        drop(state);
        self.changed.notify_all();
    }

    /// Asks the client `questions` and waits until each is answered: the answers, or `None`
    /// when the task is cancelled meanwhile.
    fn ask(&self, questions: Map<String, Value>) -> Option<Map<String, Value>> {
        let mut state = lock(&self.state);
        if state.status.terminal() {
            return None;
        }
        state.status = Status::InputRequired;
        state.message = Some("waiting for the client's answers".into());
        state.updated = SystemTime::now();
        state.answers.clear();
        state.questions = questions;
        loop {
            if self.cancel.load(Ordering::SeqCst) || state.status.terminal() {
                return None;
            }
            if state.questions.keys().all(|key| state.answers.contains_key(key)) {
                state.status = Status::Working;
                state.message = None;
                state.updated = SystemTime::now();
                state.questions.clear();
                return Some(std::mem::take(&mut state.answers));
            }
            state = self.changed.wait_timeout(state, CANCEL_POLL).unwrap_or_else(PoisonError::into_inner).0;
        }
    }
}

/// The tasks of one server.
#[derive(Debug, Default)]
pub(crate) struct Tasks {
    all: Mutex<Vec<Arc<Task>>>,
    /// Every id `tasks/cancel` named (known tasks only), in arrival order.
    cancelled: Mutex<Vec<String>>,
    /// The counter behind the ids.
    minted: Mutex<u64>,
}

impl Tasks {
    fn find(&self, id: &str) -> Option<Arc<Task>> {
        lock(&self.all).iter().find(|task| task.id == id).cloned()
    }

    /// A new task, `working`, stored before it is returned (a `tasks/get` of its id resolves
    /// as soon as the client can know it).
    fn create(&self, bug: Option<TaskBug>) -> Arc<Task> {
        let mut all = lock(&self.all);
        all.retain(|task| task.created_at.elapsed() < Duration::from_millis(TTL_MS));
        while all.len() >= MAX_TASKS {
            all.remove(0);
        }
        let id = match bug {
            Some(TaskBug::ReusedId) => {
                let running = all.iter().filter(|task| !lock(&task.state).status.terminal()).count();
                let id = format!("task-{}", running + 1);
                // The planted bug: the new task takes the id, and the record, of an ended one.
                all.retain(|task| task.id != id);
                id
            }
            None => self.mint(),
        };
        let now = SystemTime::now();
        let task = Arc::new(Task {
            id,
            created: now,
            created_at: Instant::now(),
            state: Mutex::new(State {
                status: Status::Working,
                message: None,
                updated: now,
                questions: Map::new(),
                answers: Map::new(),
                outcome: None,
            }),
            changed: Condvar::new(),
            cancel: Arc::new(AtomicBool::new(false)),
        });
        all.push(Arc::clone(&task));
        task
    }

    /// An unguessable-enough id: a counter and the time through two hashers of std's
    /// `RandomState` (random keys per process), as the OAuth tokens are made.
    fn mint(&self) -> String {
        let mut minted = lock(&self.minted);
        *minted += 1;
        let nanos = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |elapsed| elapsed.as_nanos());
        let mut first = RandomState::new().build_hasher();
        first.write_u64(*minted);
        first.write_u128(nanos);
        let first = first.finish();
        let mut second = RandomState::new().build_hasher();
        second.write_u64(first);
        format!("{first:016x}{:016x}", second.finish())
    }

    /// The ids `tasks/cancel` named so far.
    fn cancelled_ids(&self) -> Vec<String> {
        lock(&self.cancelled).clone()
    }
}

/// Whether a request's client capabilities declare the extension.
fn declared(meta: Option<&RequestMeta>) -> bool {
    meta.and_then(|meta| meta.client_capabilities.get("extensions"))
        .and_then(|extensions| extensions.get(EXTENSION))
        .is_some_and(Value::is_object)
}

/// `-32021` naming the extension.
fn missing_extension(tool: &str) -> RpcError {
    RpcError::new(
        MISSING_REQUIRED_CLIENT_CAPABILITY,
        format!("{tool} runs only as a task: declare the {EXTENSION} extension in this request's client capabilities"),
    )
    .with_data(json!({ "requiredCapabilities": { "extensions": { EXTENSION: {} } } }))
}

/// `-32602` for a task id the server does not know.
fn unknown_task(id: &str) -> RpcError {
    RpcError::invalid_params(format!("unknown task {id:?}")).with_data(json!({ "taskId": id }))
}

/// The `tools/list` entries `--tasks` adds, after every other tool.
pub(crate) fn entries() -> [Value; 2] {
    [
        json!({
            "name": RENDER,
            "title": "Render (a task)",
            "description": "Renders `frames` frames of `frame_ms` milliseconds each, only ever as a task \
                            (it needs the io.modelcontextprotocol/tasks extension: -32021 without it). \
                            With `fail: true` the task fails with a JSON-RPC error.",
            "inputSchema": {
                "type": "object",
                "properties": {
                    "frames": { "type": "integer", "minimum": 0, "maximum": MAX_FRAMES },
                    "frame_ms": { "type": "integer", "minimum": 0, "maximum": MAX_FRAME_MS, "default": 20 },
                    "fail": { "type": "boolean", "default": false },
                },
                "required": ["frames"],
            },
            "outputSchema": {
                "type": "object",
                "properties": { "frames": { "type": "integer" }, "frameMs": { "type": "integer" } },
                "required": ["frames", "frameMs"],
            },
        }),
        json!({
            "name": CANCELLED_TASKS,
            "title": "Cancelled tasks",
            "description": "Returns the JSON array of the task ids tasks/cancel named, in order.",
            "inputSchema": { "type": "object", "properties": {} },
        }),
    ]
}

/// What the task runs.
enum Work {
    /// A tool of the tool table, as prepared for a 2026-07-28 call.
    Tool { params: Map<String, Value>, meta: RequestMeta, call: tools::ToolCall },
    /// `render`.
    Render { frames: u64, frame_ms: u64, fail: bool },
}

impl Server {
    /// `tools/list`: the tools, and with `--tasks` the tools of this module last.
    pub(crate) fn tool_list(&self) -> Vec<Value> {
        let mut tools = tools::list(&self.added_tools, self.options.oauth.is_some());
        if self.options.tasks {
            tools.extend(entries());
        }
        tools
    }

    /// A `server/discover` result offers the extension with `--tasks`; other results pass.
    pub(crate) fn offer_tasks(&self, method: &str, mut result: Value) -> Value {
        if self.options.tasks
            && method == "server/discover"
            && let Some(capabilities) = result.get_mut("capabilities").and_then(Value::as_object_mut)
        {
            let extensions = capabilities.entry("extensions").or_insert_with(|| json!({}));
            if let Some(extensions) = extensions.as_object_mut() {
                extensions.insert(EXTENSION.into(), json!({}));
            }
        }
        result
    }

    /// A `tools/call` this module answers (with `--tasks`): `render` and `cancelled_tasks` in
    /// either era, and on 2026-07-28 a call of a tool that runs on its own thread when `meta`
    /// declares the extension. Returns `None` for every other call, which goes on as usual;
    /// otherwise whether the answer comes later from another thread (never: a task is answered
    /// at once).
    pub(crate) fn task_call(
        self: &Arc<Self>,
        id: &Value,
        params: &Map<String, Value>,
        meta: Option<&RequestMeta>,
        reply: &Reply,
    ) -> Option<bool> {
        if !self.options.tasks {
            return None;
        }
        let name = params.get("name").and_then(Value::as_str)?;
        let outcome = match name {
            CANCELLED_TASKS | RENDER if params.get("arguments").is_some_and(|a| !a.is_object()) => {
                Err(RpcError::invalid_params("tool arguments must be an object"))
            }
            CANCELLED_TASKS => {
                let ids = Value::Array(self.tasks.cancelled_ids().into_iter().map(Value::from).collect());
                let result = json!({ "content": [{ "type": "text", "text": ids.to_string() }] });
                Ok(if meta.is_some() { modern::complete(result) } else { result })
            }
            RENDER if !declared(meta) => Err(missing_extension(RENDER)),
            RENDER => self.start_render(params),
            _ => {
                let meta = meta.filter(|meta| declared(Some(meta)))?;
                // The tools that run on their own thread become tasks; the others answer at once.
                // (A call that does not prepare gets its error the usual way.)
                let call = tools::prepare_modern(params, meta.clone(), &self.added_tools, false).ok()?;
                if !call.tool.blocking {
                    return None;
                }
                Ok(self.start(Work::Tool { params: task_params(params), meta: meta.clone(), call }))
            }
        };
        self.deliver(reply.clone(), jsonrpc::response(id, outcome));
        Some(false)
    }

    fn start_render(self: &Arc<Self>, params: &Map<String, Value>) -> Result<Value, RpcError> {
        let arguments = params.get("arguments").and_then(Value::as_object).cloned().unwrap_or_default();
        if arguments.get("frames").is_none_or(Value::is_null) {
            return Err(RpcError::invalid_params("missing argument `frames`"));
        }
        let frames = optional_u64(&arguments, "frames", 0, MAX_FRAMES)?;
        let frame_ms = optional_u64(&arguments, "frame_ms", 20, MAX_FRAME_MS)?;
        let fail = optional_bool(&arguments, "fail", false)?;
        Ok(self.start(Work::Render { frames, frame_ms, fail }))
    }

    /// Creates a task for `work`, starts it on its own thread, and returns the
    /// `CreateTaskResult`.
    fn start(self: &Arc<Self>, work: Work) -> Value {
        let task = self.tasks.create(self.options.task_bug);
        let created = modern::complete(json!({ "resultType": "task" }));
        let mut created = merge(created, task.to_value());
        let server = Arc::clone(self);
        let running = Arc::clone(&task);
        let spawned = thread::Builder::new()
            .name(format!("task {}", task.id))
            .spawn(move || server.run_task(&running, work));
        if let Err(error) = spawned {
            let error = RpcError::new(INTERNAL_ERROR, format!("cannot spawn a thread: {error}"));
            task.set(Status::Failed, None, Some(error.to_value()));
            created = merge(created, task.to_value());
        }
        created
    }

    /// Runs a task's work to its end.
    fn run_task(&self, task: &Task, work: Work) {
        match work {
            Work::Render { frames, frame_ms, fail } => {
                for _ in 0..frames {
                    if sleep(task, Duration::from_millis(frame_ms)).is_err() {
                        return;
                    }
                }
                if fail {
                    let error = RpcError::new(RENDER_FAILED, "render failed, as `fail: true` asked");
                    task.set(Status::Failed, Some("the render failed".into()), Some(error.to_value()));
                } else {
                    let result = modern::complete(json!({
                        "content": [{ "type": "text", "text": format!("rendered {frames} frames") }],
                        "structuredContent": { "frames": frames, "frameMs": frame_ms },
                    }));
                    task.set(Status::Completed, None, Some(result));
                }
            }
            Work::Tool { mut params, meta, mut call } => {
                // Keys already asked over the task's life, so that none is used twice.
                let mut used: Vec<String> = Vec::new();
                loop {
                    let outcome = match call.run(self, &task.cancel, &Outlet::Session) {
                        Err(_cancelled) => return,
                        Ok(outcome) => outcome,
                    };
                    let result = match outcome {
                        Err(error) => {
                            return task.set(Status::Failed, None, Some(error.to_value()));
                        }
                        Ok(result) if result["resultType"] != "input_required" => {
                            return task.set(Status::Completed, None, Some(result));
                        }
                        Ok(result) => result,
                    };
                    // The tool asks (multi round-trip): the task asks the same, under keys of
                    // its own that are never reused, and retries with the answers.
                    let asked =
                        result.get("inputRequests").and_then(Value::as_object).cloned().unwrap_or_default();
                    let mut keys = Vec::new();
                    let mut questions = Map::new();
                    for (key, question) in asked {
                        let mut task_key = key.clone();
                        let mut round = 1;
                        while used.contains(&task_key) {
                            round += 1;
                            task_key = format!("{key}-{round}");
                        }
                        used.push(task_key.clone());
                        keys.push((key, task_key.clone()));
                        questions.insert(task_key, question);
                    }
                    let Some(mut answers) = task.ask(questions) else { return };
                    let responses: Map<String, Value> = keys
                        .into_iter()
                        .filter_map(|(key, task_key)| Some((key, answers.remove(&task_key)?)))
                        .collect();
                    params.insert("inputResponses".into(), Value::Object(responses));
                    params.insert(
                        "requestState".into(),
                        result.get("requestState").cloned().unwrap_or_default(),
                    );
                    call = match tools::prepare_modern(&params, meta.clone(), &self.added_tools, false) {
                        Ok(call) => call,
                        Err(error) => return task.set(Status::Failed, None, Some(error.to_value())),
                    };
                }
            }
        }
    }

    /// `tasks/get`, `tasks/update` or `tasks/cancel` (2026-07-28; `-32601` without `--tasks`).
    pub(crate) fn task_request(&self, method: &str, params: &Map<String, Value>) -> Result<Value, RpcError> {
        if !self.options.tasks {
            return Err(RpcError::method_not_found(method));
        }
        let id = params
            .get("taskId")
            .and_then(Value::as_str)
            .ok_or_else(|| RpcError::invalid_params(format!("{method} needs a string `taskId`")))?;
        let task = self.tasks.find(id).ok_or_else(|| unknown_task(id))?;
        match method {
            "tasks/get" => Ok(modern::complete(task.to_value())),
            "tasks/update" => {
                let responses = match params.get("inputResponses") {
                    Some(Value::Object(responses)) => responses,
                    _ => {
                        return Err(RpcError::invalid_params(
                            "tasks/update needs an object `inputResponses`",
                        ));
                    }
                };
                let mut state = lock(&task.state);
                for (key, response) in responses {
                    // Keys not asked now (never issued, answered already) are ignored.
                    if !state.questions.contains_key(key) || state.answers.contains_key(key) {
                        continue;
                    }
                    if !response.is_object() {
                        return Err(RpcError::new(
                            INVALID_PARAMS,
                            format!("inputResponses.{key} must be an object"),
                        ));
                    }
                    state.answers.insert(key.clone(), response.clone());
                }
                drop(state);
                task.changed.notify_all();
                Ok(modern::complete(json!({})))
            }
            _ => {
                eprintln!("demo-server: tasks/cancel {id}");
                lock(&self.tasks.cancelled).push(id.to_owned());
                task.cancel.store(true, Ordering::SeqCst);
                task.set(Status::Cancelled, Some("cancelled by tasks/cancel".into()), None);
                Ok(modern::complete(json!({})))
            }
        }
    }
}

/// The params of a call that becomes a task: its `_meta` keeps what the tool needs, not the
/// progress token or log level (a task sends no notifications).
fn task_params(params: &Map<String, Value>) -> Map<String, Value> {
    let mut params = params.clone();
    if let Some(meta) = params.get_mut("_meta").and_then(Value::as_object_mut) {
        meta.remove("progressToken");
        meta.remove(modern::META_LOG_LEVEL);
    }
    params
}

/// `base` with the members of `more` (an object) set.
fn merge(mut base: Value, more: Value) -> Value {
    if let (Some(base), Value::Object(more)) = (base.as_object_mut(), more) {
        base.extend(more);
    }
    base
}

/// Sleeps `duration` unless the task is cancelled first (`Err`).
fn sleep(task: &Task, duration: Duration) -> Result<(), ()> {
    let deadline = Instant::now() + duration;
    loop {
        if task.cancel.load(Ordering::SeqCst) {
            return Err(());
        }
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Ok(());
        }
        thread::sleep(CANCEL_POLL.min(left));
    }
}

/// `time` as ISO 8601 in UTC with milliseconds: `2026-07-28T12:34:56.789Z`.
fn iso8601(time: SystemTime) -> String {
    let since = time.duration_since(UNIX_EPOCH).unwrap_or_default();
    let seconds = since.as_secs();
    let (days, rest) = (seconds / 86_400, seconds % 86_400);
    // Days since 1970-01-01 to a civil date (H. Hinnant's algorithm).
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{:03}Z",
        rest / 3600,
        rest % 3600 / 60,
        rest % 60,
        since.subsec_millis()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_times() {
        assert_eq!(iso8601(UNIX_EPOCH), "1970-01-01T00:00:00.000Z");
        let time = UNIX_EPOCH + Duration::from_millis(1_785_242_096_789);
        assert_eq!(iso8601(time), "2026-07-28T12:34:56.789Z");
        let leap = UNIX_EPOCH + Duration::from_secs(951_782_400);
        assert_eq!(iso8601(leap), "2000-02-29T00:00:00.000Z");
    }

    #[test]
    fn bugs_have_names() {
        assert_eq!(TaskBug::parse("reused-id"), Ok(TaskBug::ReusedId));
        assert!(TaskBug::parse("nope").unwrap_err().contains("reused-id"));
    }

    #[test]
    fn ended_tasks_never_change_and_ids_are_fresh() {
        let tasks = Tasks::default();
        let (a, b) = (tasks.create(None), tasks.create(None));
        assert_ne!(a.id, b.id);
        assert_eq!(a.id.len(), 32);
        a.set(Status::Completed, None, Some(json!({"content": []})));
        a.set(Status::Working, None, None);
        assert_eq!(a.to_value()["status"], "completed");
        assert_eq!(a.to_value()["result"], json!({"content": []}));
        // The planted bug: a task created after one ended takes its id.
        let tasks = Tasks::default();
        let first = tasks.create(Some(TaskBug::ReusedId));
        first.set(Status::Completed, None, Some(json!({})));
        let second = tasks.create(Some(TaskBug::ReusedId));
        assert_eq!((first.id.as_str(), second.id.as_str()), ("task-1", "task-1"));
        assert_eq!(
            tasks.find("task-1").map(|task| task.to_value()["status"].clone()),
            Some(json!("working"))
        );
    }
}
