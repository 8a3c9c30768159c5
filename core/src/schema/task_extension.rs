//! The tasks extension (`io.modelcontextprotocol/tasks`, SEP-2663): a server may answer a
//! `tools/call` with a task (`resultType: "task"`) that the client polls with `tasks/get`, feeds
//! input with `tasks/update`, and stops with `tasks/cancel`.
//!
//! **Era: 2026-07-28.** The client declares the extension in the `extensions` member of its
//! capabilities ([`TASKS_EXTENSION`](super::TASKS_EXTENSION)), not in a `tasks` capability, and
//! does not ask for a task: the server decides per call.
//!
//! The engine drives this itself for a call that declared the extension (see
//! [`TaskMode`](crate::TaskMode)); these types are what it reads and writes, and what an
//! application that keeps a task handle sees.
//!
//! The 2025-11-25 experimental tasks (SEP-1686) are a different shape (`ttl`, `pollInterval`,
//! `tasks/result`): see [`Task`](super::Task). A [`TaskSnapshot`] reads a 2025-11-25 `Task` too
//! (without its payload fields, which that version fetches with `tasks/result`).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::{EmptyResult, GetTaskRequestParams, JsonObject, TaskStatus, request};
use crate::jsonrpc::ErrorObject;

/// A task as `tasks/get` and `notifications/tasks` report it (the spec's `DetailedTask`), and
/// as a `tools/call` creates it (`resultType: "task"`, the spec's `CreateTaskResult`): the
/// task's fields, plus what its status carries.
///
/// Decoding is lenient; [`check`](Self::check) says whether the status and its payload agree
/// (an `input_required` task names its `inputRequests`, a `completed` one its `result`, a
/// `failed` one its `error`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskSnapshot {
    /// `"task"` when a request created it, `"complete"` from `tasks/get`. This is the kind of
    /// the *response* (the `tasks/get` request itself completed), not the task's progress: a
    /// task still `working` comes back with `"complete"` here. Read [`status`](Self::status)
    /// for the task.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result_type: Option<String>,
    /// The server's identifier of the task.
    pub task_id: String,
    /// Where the task is.
    pub status: TaskStatus,
    /// A message about the current status, for the user or the model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status_message: Option<String>,
    /// ISO 8601 creation time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created_at: Option<String>,
    /// ISO 8601 time of the last change.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_updated_at: Option<String>,
    /// How long the server keeps the task after its creation, in milliseconds; `None` for no
    /// limit. (Read from `ttl` too, the 2025-11-25 name.)
    #[serde(default, alias = "ttl", deserialize_with = "super::json_number::hint_opt")]
    pub ttl_ms: Option<u64>,
    /// How often the server would like to be polled, in milliseconds. (Read from
    /// `pollInterval` too, the 2025-11-25 name.)
    #[serde(
        default,
        alias = "pollInterval",
        skip_serializing_if = "Option::is_none",
        deserialize_with = "super::json_number::hint_opt"
    )]
    pub poll_interval_ms: Option<u64>,
    /// `input_required`: the server's requests to the client, by key (each key is unique over
    /// the task's life).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_requests: Option<BTreeMap<String, serde_json::Value>>,
    /// `completed`: the result of the request that created the task (a `CallToolResult` for
    /// `tools/call`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<JsonObject>,
    /// `failed`: the JSON-RPC error the request ended with.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<ErrorObject>,
    /// Metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
}

impl TaskSnapshot {
    /// Whether the status and its payload agree; the message says what is missing.
    pub fn check(&self) -> Result<(), String> {
        let missing =
            |field: &str| Err(format!("task {:?} is {} without {field}", self.task_id, self.status));
        match self.status {
            TaskStatus::InputRequired if self.input_requests.is_none() => missing("inputRequests"),
            TaskStatus::Completed if self.result.is_none() => missing("a result"),
            TaskStatus::Failed if self.error.is_none() => missing("an error"),
            TaskStatus::Unknown(ref status) => {
                Err(format!("task {:?} has unknown status {status:?}", self.task_id))
            }
            _ => Ok(()),
        }
    }
}

/// Params of `tasks/update`: answers to the task's input requests, by key.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UpdateTaskRequestParams {
    /// The task.
    pub task_id: String,
    /// Key → the result of the request that key named (an `ElicitResult`, a
    /// `CreateMessageResult`, a `ListRootsResult`).
    pub input_responses: JsonObject,
    /// Metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
}

request!(
    /// `tasks/get` of the tasks extension (2026-07-28): the task's current [`TaskSnapshot`].
    GetTaskSnapshot, "tasks/get", GetTaskRequestParams, TaskSnapshot
);
request!(
    /// `tasks/update` (2026-07-28): answers to the task's input requests.
    UpdateTask, "tasks/update", UpdateTaskRequestParams, EmptyResult
);
request!(
    /// `tasks/cancel` of the tasks extension (2026-07-28): asks the server to stop the task;
    /// the acknowledgement is empty, and the task may still end otherwise.
    CancelTaskModern, "tasks/cancel", GetTaskRequestParams, EmptyResult
);

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn snapshots_decode_in_each_status_and_check_their_payload() {
        let base = json!({"taskId": "t", "createdAt": "x", "lastUpdatedAt": "x", "ttlMs": null});
        let with = |extra: serde_json::Value| {
            let mut v = base.clone();
            v.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
            serde_json::from_value::<TaskSnapshot>(v).unwrap()
        };
        let created = with(json!({"resultType": "task", "status": "working", "pollIntervalMs": 5000}));
        assert_eq!((created.result_type.as_deref(), created.poll_interval_ms), (Some("task"), Some(5000)));
        assert_eq!(created.check(), Ok(()));
        let input = with(json!({"status": "input_required",
            "inputRequests": {"name": {"method": "elicitation/create", "params": {}}}}));
        assert_eq!(input.input_requests.unwrap().len(), 1);
        assert!(with(json!({"status": "input_required"})).check().unwrap_err().contains("inputRequests"));
        assert!(with(json!({"status": "completed"})).check().unwrap_err().contains("result"));
        let failed = with(json!({"status": "failed", "error": {"code": -32603, "message": "boom"}}));
        assert_eq!(failed.error.unwrap().code, -32603);
        assert!(with(json!({"status": "paused"})).check().unwrap_err().contains("paused"));
        assert_eq!(with(json!({"status": "cancelled"})).check(), Ok(()));
    }
}
