//! Tasks of the 2025-11-25 protocol (SEP-1686, experimental): long-running, pollable requests.
//!
//! **Era: 2025-11-25 only** (the `initialize` era). Both sides declare them in the `tasks`
//! capability of [`ClientCapabilities`](super::ClientCapabilities) and
//! [`ServerCapabilities`](super::ServerCapabilities), per request
//! (`tasks.requests.tools.call`, `tasks.requests.sampling.createMessage`,
//! `tasks.requests.elicitation.create`: [`TaskRequest`](super::TaskRequest)), and the requester
//! asks for a task: a request whose params carry `task` ([`TaskMetadata`]) is answered at once
//! with a [`CreateTaskResult`]; its real result is fetched later with `tasks/result`. The
//! client reads the server's tasks with these types; the tasks it hosts for the server's
//! sampling and elicitation speak the same shape.
//!
//! 2026-07-28 has no `tasks` capability: tasks are the extension `io.modelcontextprotocol/tasks`
//! (SEP-2663), declared in `extensions`, where the server decides and the shape differs
//! (`resultType: "task"`, `ttlMs`, `pollIntervalMs`, `tasks/update`, no `tasks/result` nor
//! `tasks/list`): `task_extension.rs`. [`TaskStatus`] and [`GetTaskRequestParams`] are shared
//! by both.

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::pagination::paginated;
use super::{JsonObject, PaginatedRequest, PaginatedRequestParams, request};

/// The `_meta` key under which a message names the task it belongs to ([`RelatedTaskMetadata`]).
pub const RELATED_TASK_META_KEY: &str = "io.modelcontextprotocol/related-task";

/// The state of a task.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum TaskStatus {
    /// `"working"`: in progress.
    Working,
    /// `"input_required"`: waiting for input from the requester.
    InputRequired,
    /// `"completed"`: finished successfully.
    Completed,
    /// `"failed"`: finished with an error.
    Failed,
    /// `"cancelled"`: cancelled before finishing.
    Cancelled,
    /// A status this model does not know, as it came.
    Unknown(String),
}

impl TaskStatus {
    /// The wire name of the status.
    pub fn as_str(&self) -> &str {
        match self {
            TaskStatus::Working => "working",
            TaskStatus::InputRequired => "input_required",
            TaskStatus::Completed => "completed",
            TaskStatus::Failed => "failed",
            TaskStatus::Cancelled => "cancelled",
            TaskStatus::Unknown(s) => s,
        }
    }

    /// Whether the task has finished (completed, failed or cancelled) and will not change.
    pub fn is_terminal(&self) -> bool {
        matches!(self, TaskStatus::Completed | TaskStatus::Failed | TaskStatus::Cancelled)
    }
}

impl From<String> for TaskStatus {
    fn from(s: String) -> Self {
        match s.as_str() {
            "working" => TaskStatus::Working,
            "input_required" => TaskStatus::InputRequired,
            "completed" => TaskStatus::Completed,
            "failed" => TaskStatus::Failed,
            "cancelled" => TaskStatus::Cancelled,
            _ => TaskStatus::Unknown(s),
        }
    }
}

impl fmt::Display for TaskStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for TaskStatus {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for TaskStatus {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        String::deserialize(deserializer).map(TaskStatus::from)
    }
}

/// A task and its state.
///
/// Also the result of `tasks/get` and `tasks/cancel` and the params of
/// `notifications/tasks/status`, which add only `_meta`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Task {
    /// The task's identifier.
    pub task_id: String,
    /// Current state.
    pub status: TaskStatus,
    /// Human-readable description of the current state.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status_message: Option<String>,
    /// ISO 8601 creation time.
    pub created_at: String,
    /// ISO 8601 time of the last update (required by the schema; tolerated when absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_updated_at: Option<String>,
    /// Retention from creation in milliseconds; `None` (`null`) for unlimited.
    #[serde(default, deserialize_with = "super::json_number::hint_opt")]
    pub ttl: Option<u64>,
    /// Suggested polling interval in milliseconds.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "super::json_number::hint_opt"
    )]
    pub poll_interval: Option<u64>,
    /// Metadata, when the task is a result or notification params.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
}

/// The `task` member of a task-augmented request's params.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskMetadata {
    /// Requested retention from creation in milliseconds.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "super::json_number::hint_opt"
    )]
    pub ttl: Option<u64>,
}

/// Names the task a message belongs to; found in `_meta` under [`RELATED_TASK_META_KEY`].
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RelatedTaskMetadata {
    /// The task's identifier.
    pub task_id: String,
}

/// The immediate result of a task-augmented request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CreateTaskResult {
    /// The created task.
    pub task: Task,
    /// Result metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
}

/// Params of `tasks/get`, `tasks/result` and `tasks/cancel`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GetTaskRequestParams {
    /// The task's identifier.
    pub task_id: String,
    /// Request metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
}

impl GetTaskRequestParams {
    /// Params naming the task `task_id`.
    pub fn new(task_id: impl Into<String>) -> Self {
        Self { task_id: task_id.into(), meta: None }
    }
}

/// Params of `tasks/result` (same shape as [`GetTaskRequestParams`]).
pub type GetTaskPayloadRequestParams = GetTaskRequestParams;
/// Params of `tasks/cancel` (same shape as [`GetTaskRequestParams`]).
pub type CancelTaskRequestParams = GetTaskRequestParams;
/// Result of `tasks/get`: the task with optional `_meta`.
pub type GetTaskResult = Task;
/// Result of `tasks/cancel`: the task with optional `_meta`.
pub type CancelTaskResult = Task;

/// Result of `tasks/list`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListTasksResult {
    /// The tasks on this page.
    pub tasks: Vec<Task>,
    /// Cursor for the next page; absent on the last.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
    /// Result metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
}

paginated!(ListTasksResult, tasks, Task);

request!(
    /// `tasks/get`: polls a task's state.
    GetTask, "tasks/get", GetTaskRequestParams, GetTaskResult
);
request!(
    /// `tasks/result`: the original request's result, once the task is done (blocks until then).
    GetTaskPayload, "tasks/result", GetTaskPayloadRequestParams, serde_json::Value
);
request!(
    /// `tasks/list`: lists tasks, one page at a time.
    ListTasks, "tasks/list", PaginatedRequestParams, ListTasksResult
);
impl PaginatedRequest for ListTasks {}
request!(
    /// `tasks/cancel`: cancels a task.
    CancelTask, "tasks/cancel", CancelTaskRequestParams, CancelTaskResult
);

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::schema::{Paginated, Request};

    #[test]
    fn task_decodes_and_keeps_null_ttl() {
        let raw = json!({
            "taskId": "786512e2",
            "status": "working",
            "statusMessage": "The operation is now in progress.",
            "createdAt": "2025-11-25T10:30:00Z",
            "lastUpdatedAt": "2025-11-25T10:40:00Z",
            "ttl": null,
            "pollInterval": 5000
        });
        let task: Task = serde_json::from_value(raw.clone()).unwrap();
        assert_eq!(task.status, TaskStatus::Working);
        assert!(!task.status.is_terminal());
        assert_eq!(task.ttl, None);
        assert_eq!(task.poll_interval, Some(5000));
        assert_eq!(serde_json::to_value(&task).unwrap(), raw);
    }

    #[test]
    fn statuses_round_trip_and_unknown_is_kept() {
        for s in ["working", "input_required", "completed", "failed", "cancelled", "paused"] {
            let status: TaskStatus = serde_json::from_value(json!(s)).unwrap();
            assert_eq!(status.as_str(), s);
            assert_eq!(serde_json::to_value(&status).unwrap(), json!(s));
        }
        assert_eq!(TaskStatus::from("paused".to_owned()), TaskStatus::Unknown("paused".into()));
        assert_eq!(TaskStatus::from("input_required".to_owned()), TaskStatus::InputRequired);
        assert!(TaskStatus::Cancelled.is_terminal());
    }

    #[test]
    fn create_task_result_and_list() {
        let created: CreateTaskResult = serde_json::from_value(json!({
            "task": {"taskId": "t1", "status": "working", "createdAt": "x", "lastUpdatedAt": "x",
                "ttl": 60000},
            "_meta": {RELATED_TASK_META_KEY: {"taskId": "t1"}}
        }))
        .unwrap();
        assert_eq!(created.task.ttl, Some(60000));
        let related: RelatedTaskMetadata =
            serde_json::from_value(created.meta.unwrap()[RELATED_TASK_META_KEY].clone()).unwrap();
        assert_eq!(related.task_id, "t1");

        let list: ListTasksResult = serde_json::from_value(json!({
            "tasks": [{"taskId": "a", "status": "completed", "createdAt": "x", "ttl": null}],
            "nextCursor": "more"
        }))
        .unwrap();
        assert_eq!(list.next_cursor(), Some("more"));
        assert_eq!(list.into_items()[0].status, TaskStatus::Completed);
    }

    #[test]
    fn request_params_and_methods() {
        assert_eq!(GetTask::METHOD, "tasks/get");
        assert_eq!(GetTaskPayload::METHOD, "tasks/result");
        assert_eq!(ListTasks::METHOD, "tasks/list");
        assert_eq!(CancelTask::METHOD, "tasks/cancel");
        assert_eq!(serde_json::to_value(GetTaskRequestParams::new("t9")).unwrap(), json!({"taskId": "t9"}));
        assert!(serde_json::from_value::<Task>(json!({"taskId": "a", "status": "working"})).is_err());
    }
}
