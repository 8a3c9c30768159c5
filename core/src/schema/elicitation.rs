//! Elicitation: the server asks the user, through the client, for input (`elicitation/create`,
//! 2025-06-18 and later; URL mode 2025-11-25 and later).

use serde::{Deserialize, Serialize};

use super::{JsonObject, TaskMetadata, request};

/// Params of `elicitation/create` (form mode and URL mode in one struct).
///
/// Form mode (`mode` absent or `"form"`) carries `requested_schema`; URL mode (`"url"`)
/// carries `url` and `elicitation_id`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ElicitRequestParams {
    /// `"form"` or `"url"`; absent means form (and is all 2025-06-18 sends).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<String>,
    /// The message to show the user.
    pub message: String,
    /// Form mode: a restricted JSON Schema (flat object of primitives) for the response.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requested_schema: Option<JsonObject>,
    /// URL mode: the URL the user should open.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// URL mode: identifies the elicitation in `notifications/elicitation/complete`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub elicitation_id: Option<String>,
    /// Asks the client to handle the request as a task (2025-11-25, experimental).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task: Option<TaskMetadata>,
    /// Request metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
}

impl ElicitRequestParams {
    /// Whether this is a URL-mode elicitation.
    pub fn is_url_mode(&self) -> bool {
        self.mode.as_deref() == Some("url")
    }

    /// Whether this is a form-mode elicitation (`mode` absent or `"form"`).
    pub fn is_form_mode(&self) -> bool {
        matches!(self.mode.as_deref(), None | Some("form"))
    }
}

/// The user's answer to an elicitation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ElicitAction {
    /// The user submitted (form mode: with `content`) or consented (URL mode).
    Accept,
    /// The user explicitly declined.
    Decline,
    /// The user dismissed without choosing.
    Cancel,
}

/// Result of `elicitation/create` (sent by the client).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ElicitResult {
    /// What the user did.
    pub action: ElicitAction,
    /// Form mode, on accept: the submitted values, matching the requested schema.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<JsonObject>,
    /// Result metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
}

impl ElicitResult {
    /// The user accepted with `content` (pass an empty object for URL mode).
    pub fn accept(content: JsonObject) -> Self {
        Self { action: ElicitAction::Accept, content: Some(content), meta: None }
    }

    /// The user declined.
    pub fn decline() -> Self {
        Self { action: ElicitAction::Decline, content: None, meta: None }
    }

    /// The user cancelled.
    pub fn cancel() -> Self {
        Self { action: ElicitAction::Cancel, content: None, meta: None }
    }
}

request!(
    /// `elicitation/create`: a server→client request for user input.
    Elicit, "elicitation/create", ElicitRequestParams, ElicitResult
);

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::schema::Request;

    #[test]
    fn form_mode_2025_06_18_without_mode() {
        let raw = json!({
            "message": "Please provide your GitHub username",
            "requestedSchema": {"type": "object",
                "properties": {"name": {"type": "string"}}, "required": ["name"]}
        });
        let params: ElicitRequestParams = serde_json::from_value(raw.clone()).unwrap();
        assert!(params.is_form_mode());
        assert!(!params.is_url_mode());
        assert_eq!(params.requested_schema.as_ref().unwrap()["required"], json!(["name"]));
        assert_eq!(serde_json::to_value(&params).unwrap(), raw);
        assert_eq!(Elicit::METHOD, "elicitation/create");
    }

    #[test]
    fn url_mode_2025_11_25() {
        let raw = json!({
            "mode": "url",
            "message": "Please authorize",
            "url": "https://example.com/oauth?x=1",
            "elicitationId": "550e8400",
            "task": {"ttl": 1000},
            "_meta": {"progressToken": 3}
        });
        let params: ElicitRequestParams = serde_json::from_value(raw.clone()).unwrap();
        assert!(params.is_url_mode());
        assert!(!params.is_form_mode());
        assert_eq!(params.elicitation_id.as_deref(), Some("550e8400"));
        assert_eq!(params.task.as_ref().unwrap().ttl, Some(1000));
        assert_eq!(serde_json::to_value(&params).unwrap(), raw);
    }

    #[test]
    fn results_serialize_per_action() {
        let mut content = JsonObject::new();
        content.insert("name".into(), json!("octocat"));
        assert_eq!(
            serde_json::to_value(ElicitResult::accept(content)).unwrap(),
            json!({"action": "accept", "content": {"name": "octocat"}})
        );
        assert_eq!(serde_json::to_value(ElicitResult::decline()).unwrap(), json!({"action": "decline"}));
        assert_eq!(serde_json::to_value(ElicitResult::cancel()).unwrap(), json!({"action": "cancel"}));
        let back: ElicitResult = serde_json::from_value(json!({"action": "cancel"})).unwrap();
        assert_eq!(back, ElicitResult::cancel());
        assert!(serde_json::from_value::<ElicitResult>(json!({"action": "maybe"})).is_err());
    }
}
