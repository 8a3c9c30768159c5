//! Notifications: progress, cancellation, log messages, list changes, resource updates,
//! elicitation completion and task status.

use serde::{Deserialize, Serialize};

use super::{EmptyParams, JsonObject, LoggingMessageNotificationParams, Task, notification};
use crate::{ProgressToken, RequestId};

/// Params of `notifications/progress`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ProgressNotificationParams {
    /// The token from the request's `_meta.progressToken`.
    pub progress_token: ProgressToken,
    /// Progress so far; increases with each notification.
    pub progress: f64,
    /// Total, if known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total: Option<f64>,
    /// Human-readable description of the progress (2025-03-26 and later).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// Notification metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
}

/// Params of `notifications/cancelled`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CancelledNotificationParams {
    /// The request to cancel (required before 2025-11-25, and for anything but tasks).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_id: Option<RequestId>,
    /// Why the request is cancelled.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Notification metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
}

impl CancelledNotificationParams {
    /// Params cancelling `request_id`, with an optional reason.
    pub fn new(request_id: RequestId, reason: Option<String>) -> Self {
        Self { request_id: Some(request_id), reason, meta: None }
    }
}

/// Params of `notifications/resources/updated`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourceUpdatedNotificationParams {
    /// URI of the updated resource (possibly a sub-resource of the one subscribed to).
    pub uri: String,
    /// Notification metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
}

/// Params of `notifications/elicitation/complete` (2025-11-25 and later).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ElicitationCompleteNotificationParams {
    /// The URL-mode elicitation that completed.
    pub elicitation_id: String,
    /// Notification metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
}

/// Params of `notifications/tasks/status`: the task's new state (with optional `_meta`).
pub type TaskStatusNotificationParams = Task;

notification!(
    /// `notifications/initialized`: the client is ready, after `initialize`.
    InitializedNotification, "notifications/initialized", EmptyParams
);
notification!(
    /// `notifications/progress`: progress of a long-running request.
    ProgressNotification, "notifications/progress", ProgressNotificationParams
);
notification!(
    /// `notifications/cancelled`: a request (either direction) is no longer wanted.
    CancelledNotification, "notifications/cancelled", CancelledNotificationParams
);
notification!(
    /// `notifications/message`: a log message from the server.
    LoggingMessageNotification, "notifications/message", LoggingMessageNotificationParams
);
notification!(
    /// `notifications/resources/updated`: a subscribed resource changed.
    ResourceUpdatedNotification, "notifications/resources/updated",
    ResourceUpdatedNotificationParams
);
notification!(
    /// `notifications/resources/list_changed`: the server's resource list changed.
    ResourceListChangedNotification, "notifications/resources/list_changed", EmptyParams
);
notification!(
    /// `notifications/tools/list_changed`: the server's tool list changed.
    ToolListChangedNotification, "notifications/tools/list_changed", EmptyParams
);
notification!(
    /// `notifications/prompts/list_changed`: the server's prompt list changed.
    PromptListChangedNotification, "notifications/prompts/list_changed", EmptyParams
);
notification!(
    /// `notifications/roots/list_changed`: the client's roots changed.
    RootsListChangedNotification, "notifications/roots/list_changed", EmptyParams
);
notification!(
    /// `notifications/elicitation/complete`: a URL-mode elicitation finished.
    ElicitationCompleteNotification, "notifications/elicitation/complete",
    ElicitationCompleteNotificationParams
);
notification!(
    /// `notifications/tasks/status`: a task changed state (2025-11-25, experimental).
    TaskStatusNotification, "notifications/tasks/status", TaskStatusNotificationParams
);

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::schema::{Notification, TaskStatus};

    #[test]
    fn progress_with_string_and_integer_tokens() {
        let p: ProgressNotificationParams = serde_json::from_value(
            json!({"progressToken": "abc123", "progress": 50, "total": 100, "message": "Half"}),
        )
        .unwrap();
        assert_eq!(p.progress_token, ProgressToken::String("abc123".into()));
        assert_eq!(p.progress, 50.0);
        assert_eq!(p.total, Some(100.0));
        let p: ProgressNotificationParams =
            serde_json::from_value(json!({"progressToken": 7, "progress": 0.25})).unwrap();
        assert_eq!(p.progress_token, ProgressToken::Number(7));
        assert_eq!(p.message, None);
        assert_eq!(serde_json::to_value(&p).unwrap(), json!({"progressToken": 7, "progress": 0.25}));
        assert_eq!(ProgressNotification::METHOD, "notifications/progress");
    }

    #[test]
    fn cancelled_with_and_without_request_id() {
        let c = CancelledNotificationParams::new(RequestId::Number(123), Some("timeout".into()));
        let json = serde_json::to_value(&c).unwrap();
        assert_eq!(json, json!({"requestId": 123, "reason": "timeout"}));
        assert_eq!(serde_json::from_value::<CancelledNotificationParams>(json).unwrap(), c);
        let bare: CancelledNotificationParams = serde_json::from_value(json!({})).unwrap();
        assert_eq!(bare.request_id, None);
        let s: CancelledNotificationParams = serde_json::from_value(json!({"requestId": "r-1"})).unwrap();
        assert_eq!(s.request_id, Some(RequestId::String("r-1".into())));
    }

    #[test]
    fn method_names() {
        assert_eq!(InitializedNotification::METHOD, "notifications/initialized");
        assert_eq!(CancelledNotification::METHOD, "notifications/cancelled");
        assert_eq!(LoggingMessageNotification::METHOD, "notifications/message");
        assert_eq!(ResourceUpdatedNotification::METHOD, "notifications/resources/updated");
        assert_eq!(ResourceListChangedNotification::METHOD, "notifications/resources/list_changed");
        assert_eq!(ToolListChangedNotification::METHOD, "notifications/tools/list_changed");
        assert_eq!(PromptListChangedNotification::METHOD, "notifications/prompts/list_changed");
        assert_eq!(RootsListChangedNotification::METHOD, "notifications/roots/list_changed");
        assert_eq!(ElicitationCompleteNotification::METHOD, "notifications/elicitation/complete");
        assert_eq!(TaskStatusNotification::METHOD, "notifications/tasks/status");
    }

    #[test]
    fn resource_updated_elicitation_complete_and_task_status() {
        let r: ResourceUpdatedNotificationParams =
            serde_json::from_value(json!({"uri": "file:///a", "extra": 1})).unwrap();
        assert_eq!(r.uri, "file:///a");
        let e: ElicitationCompleteNotificationParams =
            serde_json::from_value(json!({"elicitationId": "550e"})).unwrap();
        assert_eq!(e.elicitation_id, "550e");
        assert_eq!(serde_json::to_value(&e).unwrap(), json!({"elicitationId": "550e"}));
        let t: TaskStatusNotificationParams = serde_json::from_value(json!({
            "taskId": "t", "status": "input_required", "createdAt": "c", "lastUpdatedAt": "u",
            "ttl": 5, "_meta": {"m": 1}
        }))
        .unwrap();
        assert_eq!(t.status, TaskStatus::InputRequired);
        assert!(t.meta.is_some());
    }
}
