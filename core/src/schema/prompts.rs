//! Prompts: `prompts/list` and `prompts/get`.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::pagination::list_result;
use super::{ContentBlock, Icon, JsonObject, PaginatedRequest, PaginatedRequestParams, Role, request};

/// A prompt (template) the server offers.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Prompt {
    /// Programmatic name, used in `prompts/get`.
    pub name: String,
    /// Human-readable display name (2025-06-18 and later).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What the prompt provides.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Arguments the prompt accepts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arguments: Option<Vec<PromptArgument>>,
    /// Icons for user interfaces (2025-11-25 and later).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub icons: Option<Vec<Icon>>,
    /// Prompt metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
}

/// An argument a prompt accepts.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PromptArgument {
    /// Programmatic name.
    pub name: String,
    /// Human-readable display name (2025-06-18 and later).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What the argument is for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Whether the argument must be given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub required: Option<bool>,
}

list_result! {
    /// Result of `prompts/list`.
    ListPromptsResult {
        /// The prompts on this page.
        prompts: Vec<Prompt>
    }
}

/// Params of `prompts/get`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GetPromptRequestParams {
    /// Name of the prompt.
    pub name: String,
    /// Argument values, by argument name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arguments: Option<BTreeMap<String, String>>,
    /// Request metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
}

impl GetPromptRequestParams {
    /// Params getting `name` without arguments.
    pub fn new(name: impl Into<String>) -> Self {
        Self { name: name.into(), ..Self::default() }
    }

    /// Sets the argument values.
    #[must_use]
    pub fn with_arguments(mut self, arguments: BTreeMap<String, String>) -> Self {
        self.arguments = Some(arguments);
        self
    }
}

/// A message in a prompt's result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PromptMessage {
    /// Who says it.
    pub role: Role,
    /// What is said.
    pub content: ContentBlock,
}

/// Result of `prompts/get`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GetPromptResult {
    /// Description of the prompt.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The prompt's messages.
    pub messages: Vec<PromptMessage>,
    /// Result metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
}

request!(
    /// `prompts/list`: lists the server's prompts, one page at a time.
    ListPrompts, "prompts/list", PaginatedRequestParams, ListPromptsResult
);
impl PaginatedRequest for ListPrompts {}

request!(
    /// `prompts/get`: renders a prompt with arguments.
    GetPrompt, "prompts/get", GetPromptRequestParams, GetPromptResult
);

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::schema::{Paginated, Request};

    #[test]
    fn list_prompts_decodes_arguments() {
        let raw = json!({"prompts": [{
            "name": "code_review",
            "title": "Request Code Review",
            "description": "Asks the LLM to review code",
            "arguments": [{"name": "code", "description": "The code", "required": true}],
            "icons": [{"src": "data:image/png;base64,AA=="}]
        }], "nextCursor": "n"});
        let result: ListPromptsResult = serde_json::from_value(raw.clone()).unwrap();
        assert_eq!(serde_json::to_value(&result).unwrap(), raw);
        assert_eq!(result.next_cursor(), Some("n"));
        let prompts = result.into_items();
        let args = prompts[0].arguments.as_ref().unwrap();
        assert_eq!(args[0].required, Some(true));
        assert_eq!(ListPrompts::METHOD, "prompts/list");
    }

    #[test]
    fn get_prompt_params_serialize_arguments_in_order() {
        let mut args = BTreeMap::new();
        args.insert("b".to_owned(), "2".to_owned());
        args.insert("a".to_owned(), "1".to_owned());
        let params = GetPromptRequestParams::new("p").with_arguments(args);
        assert_eq!(serde_json::to_string(&params).unwrap(), r#"{"name":"p","arguments":{"a":"1","b":"2"}}"#);
        assert_eq!(GetPrompt::METHOD, "prompts/get");
    }

    #[test]
    fn get_prompt_result_with_mixed_content() {
        let raw = json!({
            "description": "Code review prompt",
            "messages": [
                {"role": "user", "content": {"type": "text", "text": "Review this"}},
                {"role": "assistant", "content": {"type": "resource",
                    "resource": {"uri": "file:///x", "text": "fn main() {}"}}},
                {"role": "user", "content": {"type": "video", "url": "x"}}
            ]
        });
        let result: GetPromptResult = serde_json::from_value(raw.clone()).unwrap();
        assert_eq!(result.messages[0].role, Role::User);
        assert_eq!(result.messages[0].content.as_text(), Some("Review this"));
        assert!(matches!(result.messages[1].content, ContentBlock::Resource(_)));
        assert!(matches!(result.messages[2].content, ContentBlock::Unknown(_)));
        assert_eq!(serde_json::to_value(&result).unwrap(), raw);
    }
}
