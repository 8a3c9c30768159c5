//! Tasks (the tasks extension, SEP-2663, 2026-07-28) for applications that do not want to
//! wait: [`Client::call_tool_as_task`] returns a [`TaskHandle`] as soon as the server made a
//! task, and [`Client::resume_task`] picks a task up again from its [`TaskRecord`] after a
//! restart.
//!
//! A plain [`call_tool`](crate::ClientApi::call_tool) needs none of this: with the extension
//! declared, the engine follows a task the call became and the call returns its result.

use serde::{Deserialize, Serialize};

use crate::arguments::tool_params;
use crate::call::Decode;
use crate::mcp_sansio::TaskMode;
use crate::mcp_sansio::schema::{
    CallTool, CallToolRequestParams, CallToolResult, CancelTaskModern, EmptyResult, GetTaskRequestParams,
    GetTaskSnapshot, ListTasks, ListTasksResult, PaginatedRequestParams, Request, TaskSnapshot, TaskStatus,
};
use crate::{CallOptions, Client, Error};

/// What a [`TaskHandle`] needs to find its task again: a small record to persist (the spec
/// says clients SHOULD keep task ids, so that polling can go on after a crash or a restart).
///
/// ```
/// use mcp_smol::TaskRecord;
/// let record: TaskRecord = serde_json::from_str(r#"{"taskId":"t-1","tool":"render"}"#).unwrap();
/// assert_eq!(record.task_id, "t-1");
/// assert_eq!(serde_json::to_string(&record).unwrap(), r#"{"taskId":"t-1","tool":"render"}"#);
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct TaskRecord {
    /// The server's id of the task.
    pub task_id: String,
    /// The tool the task runs, when known: its result is checked against that tool's
    /// `outputSchema` (when `ClientBuilder::validate_output` is on).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
    /// The name the server gave itself (`serverInfo.name`), to tell records of different
    /// servers apart; not checked on resumption.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server: Option<String>,
    /// When the server created the task (ISO 8601, as it said).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created_at: Option<String>,
}

impl TaskRecord {
    /// A record of task `task_id` and nothing else.
    pub fn new(task_id: impl Into<String>) -> Self {
        TaskRecord { task_id: task_id.into(), tool: None, server: None, created_at: None }
    }
}

/// How [`Client::call_tool_as_task`] came back: the server made a task, or answered at once
/// (it decides, call by call).
#[derive(Debug)]
#[must_use]
pub enum TaskCall {
    /// The server made a task: follow it with the handle.
    Started(TaskHandle),
    /// The server answered with the result at once.
    Finished(CallToolResult),
}

impl TaskCall {
    /// The result: at once if the server gave it, else by following the task to its end.
    pub async fn result(self) -> Result<CallToolResult, Error> {
        match self {
            TaskCall::Started(handle) => handle.result().await,
            TaskCall::Finished(result) => Ok(result),
        }
    }
}

/// A task on the server (the tasks extension), to poll, wait for, or cancel.
///
/// Cheap to clone; it holds the client and the task's [`TaskRecord`]. Dropping it does not
/// cancel the task.
#[derive(Debug, Clone)]
pub struct TaskHandle {
    client: Client,
    record: TaskRecord,
    /// The task as last seen.
    last: Option<Box<TaskSnapshot>>,
}

impl TaskHandle {
    /// The server's id of the task.
    pub fn id(&self) -> &str {
        &self.record.task_id
    }

    /// The record to persist, and to give [`Client::resume_task`] later.
    pub fn record(&self) -> &TaskRecord {
        &self.record
    }

    /// The status as last seen (at creation, or by the last [`poll`](Self::poll)); `None`
    /// for a resumed handle not polled yet.
    pub fn status(&self) -> Option<&TaskStatus> {
        self.last.as_deref().map(|task| &task.status)
    }

    /// The task as last seen.
    pub fn last_seen(&self) -> Option<&TaskSnapshot> {
        self.last.as_deref()
    }

    /// One `tasks/get`: the task now. Input requests it carries are left to the caller
    /// (answer them with [`UpdateTask`](crate::mcp_sansio::schema::UpdateTask), or use
    /// [`result`](Self::result), which hands them to the [`ClientHandler`](crate::ClientHandler)).
    pub async fn poll(&mut self) -> Result<TaskSnapshot, Error> {
        let params = GetTaskRequestParams::new(self.record.task_id.clone());
        let snapshot = self.client.request::<GetTaskSnapshot>(&params, CallOptions::default()).await?;
        self.last = Some(Box::new(snapshot.clone()));
        Ok(snapshot)
    }

    /// Waits for the task's end and returns its result: the engine polls (within
    /// [`TaskPolicy`](crate::mcp_sansio::TaskPolicy)), hands input requests to the
    /// [`ClientHandler`](crate::ClientHandler) once each, and answers with `tasks/update`. A
    /// `failed` task gives the server's error, a `cancelled` one
    /// [`RequestError::TaskCancelled`](crate::mcp_sansio::RequestError::TaskCancelled). Dropping the future stops following; the task goes on.
    pub fn result(&self) -> impl Future<Output = Result<CallToolResult, Error>> + Send + 'static + use<> {
        self.result_with(CallOptions::default())
    }

    /// [`result`](Self::result), with the deadlines of `options`: its
    /// [`task_policy`](CallOptions::task_policy), else the client's, with an explicit
    /// [`timeout`](CallOptions::timeout) or [`max_total`](CallOptions::max_total) in the
    /// policy's place.
    pub fn result_with(
        &self,
        options: CallOptions,
    ) -> impl Future<Output = Result<CallToolResult, Error>> + Send + 'static + use<> {
        let task_id = self.record.task_id.clone();
        let started = self
            .client
            .start("tasks/get", options, |conn, now, options| conn.follow_task(now, &task_id, options));
        let call = Decode::from_result(started.map(|r| Decode::sent(r, CallTool::METHOD)), CallTool::METHOD);
        self.client.checked_tool_call(self.record.tool.as_deref().unwrap_or_default(), call)
    }

    /// Asks the server to cancel the task (`tasks/cancel`). Cancellation is cooperative: the
    /// task may still end otherwise.
    pub async fn cancel(&self) -> Result<(), Error> {
        let params = GetTaskRequestParams::new(self.record.task_id.clone());
        self.client
            .request::<CancelTaskModern>(&params, CallOptions::default())
            .await
            .map(|_: EmptyResult| ())
    }
}

impl Client {
    /// `tools/call`, ending as soon as the server made a task (the tasks extension, 2026-07-28):
    /// [`TaskCall::Started`] with a [`TaskHandle`] to poll, wait for or cancel, and whose
    /// [`record`](TaskHandle::record) can be persisted and resumed after a restart with
    /// [`resume_task`](Self::resume_task). If the server answers at once,
    /// [`TaskCall::Finished`] has the result.
    ///
    /// The client must declare the extension
    /// (`ClientCapabilities::with_extension(TASKS_EXTENSION, json!({}))`).
    ///
    /// ```no_run
    /// use mcp_smol::prelude::*;
    ///
    /// # async fn run(client: Client) -> Result<(), Error> {
    /// let arguments = serde_json::json!({"frames": 20});
    /// match client.call_tool_as_task("render", arguments, CallOptions::default()).await? {
    ///     TaskCall::Started(handle) => {
    ///         let saved = serde_json::to_string(handle.record()).unwrap(); // persist it
    ///         // ... after a restart, on a new connection:
    ///         let record: TaskRecord = serde_json::from_str(&saved).unwrap();
    ///         let result = client.resume_task(record).result().await?;
    ///         println!("{:?}", result.joined_text());
    ///     }
    ///     TaskCall::Finished(result) => println!("{:?}", result.joined_text()),
    /// }
    /// # Ok(()) }
    /// ```
    pub fn call_tool_as_task<A: Serialize>(
        &self,
        name: &str,
        arguments: A,
        options: CallOptions,
    ) -> impl Future<Output = Result<TaskCall, Error>> + Send + 'static + use<A> {
        // The arguments are serialized now, as every call's are; the future owns what it needs
        // (it may list the tools first).
        let (client, params) = (self.clone(), tool_params(name, &arguments));
        async move { client.start_tool_task(&params?, options).await }
    }

    async fn start_tool_task(
        &self,
        params: &CallToolRequestParams,
        options: CallOptions,
    ) -> Result<TaskCall, Error> {
        let mut options = options;
        options.request = options.request.task_mode(TaskMode::Return);
        let experimental = self.experimental_task_support(&params.name).await?;
        let raw = match experimental {
            true => {
                let mut params = params.clone();
                params.task = Some(Default::default());
                self.send_as::<CallTool, serde_json::Value>(&params, options)?.await?
            }
            false => self.send_as::<CallTool, serde_json::Value>(params, options)?.await?,
        };
        // 2026-07-28 marks a task with `resultType`; 2025-11-25 wraps it in `task`.
        let raw = match raw {
            serde_json::Value::Object(mut object) if experimental && object.contains_key("task") => {
                object.remove("task").unwrap_or_default()
            }
            raw if raw.get("resultType").and_then(serde_json::Value::as_str) == Some("task") => raw,
            raw => {
                let result = serde_json::from_value::<CallToolResult>(raw)
                    .map_err(|source| Error::Decode { method: CallTool::METHOD, source })?;
                self.check_output(&params.name, &result).await?;
                return Ok(TaskCall::Finished(result));
            }
        };
        let snapshot = serde_json::from_value::<TaskSnapshot>(raw)
            .map_err(|source| Error::Decode { method: CallTool::METHOD, source })?;
        let record = TaskRecord {
            task_id: snapshot.task_id.clone(),
            tool: Some(params.name.clone()),
            server: self.server_info().map(|info| info.name),
            created_at: snapshot.created_at.clone(),
        };
        Ok(TaskCall::Started(TaskHandle { client: self.clone(), record, last: Some(Box::new(snapshot)) }))
    }

    /// 2025-11-25: whether tool `name` may be called as a task: the server offers
    /// `tasks.requests.tools.call` and the tool's `execution.taskSupport` is `optional` or
    /// `required` (from the cached tool list). Always `false` on 2026-07-28, where the server
    /// decides.
    async fn experimental_task_support(&self, name: &str) -> Result<bool, Error> {
        let modern = self.protocol_version().is_some_and(crate::mcp_sansio::ProtocolVersion::is_modern);
        let offered = self
            .server_capabilities()
            .is_some_and(|caps| caps.offers_task(crate::mcp_sansio::schema::TaskRequest::ToolsCall));
        if modern || !offered {
            return Ok(false);
        }
        let tools = self.tools().await?;
        let support = tools
            .iter()
            .find(|tool| tool.name == name)
            .and_then(|tool| tool.execution.as_ref()?.task_support.clone());
        Ok(matches!(support.as_deref(), Some("optional" | "required")))
    }

    /// 2025-11-25: `tasks/list`, one page (2026-07-28 has no task list: the method is refused
    /// at once there).
    pub async fn list_tasks(&self, cursor: Option<String>) -> Result<ListTasksResult, Error> {
        self.request::<ListTasks>(&PaginatedRequestParams::with_cursor(cursor), CallOptions::default()).await
    }

    /// A handle on a task this client (or an earlier run of the application) started, from
    /// its persisted [`TaskRecord`]: nothing is sent until the handle is polled or awaited.
    pub fn resume_task(&self, record: TaskRecord) -> TaskHandle {
        TaskHandle { client: self.clone(), record, last: None }
    }
}
