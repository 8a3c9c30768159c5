//! Tools: `tools/list` and `tools/call`, tool definitions and their results.

use serde::{Deserialize, Serialize};

use super::pagination::list_result;
use super::{
    ContentBlock, Icon, JsonObject, PaginatedRequest, PaginatedRequestParams, TaskMetadata, request,
};

/// A tool the server offers.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Tool {
    /// Programmatic name, used in `tools/call`.
    pub name: String,
    /// Human-readable display name (2025-06-18 and later).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What the tool does; a hint for the model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// JSON Schema of the `arguments` object.
    pub input_schema: JsonObject,
    /// JSON Schema of the result's `structuredContent` (2025-06-18 and later).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_schema: Option<JsonObject>,
    /// Behaviour hints (2025-03-26 and later); untrusted unless the server is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<ToolAnnotations>,
    /// Icons for user interfaces (2025-11-25 and later).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub icons: Option<Vec<Icon>>,
    /// Execution properties such as task support (2025-11-25 and later).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub execution: Option<ToolExecution>,
    /// Tool metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
}

/// Hints describing a tool's behaviour (2025-03-26 and later); all are advisory.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolAnnotations {
    /// Human-readable display name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// The tool does not modify its environment (default false).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_only_hint: Option<bool>,
    /// The tool may perform destructive updates (default true; meaningful if not read-only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub destructive_hint: Option<bool>,
    /// Repeated calls with the same arguments have no further effect (default false).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idempotent_hint: Option<bool>,
    /// The tool interacts with an open world of external entities (default true).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub open_world_hint: Option<bool>,
}

/// Execution properties of a tool (2025-11-25 and later).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolExecution {
    /// Whether `tools/call` may be task-augmented: `"forbidden"` (default), `"optional"` or
    /// `"required"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task_support: Option<String>,
}

list_result! {
    /// Result of `tools/list`.
    ListToolsResult {
        /// The tools on this page.
        tools: Vec<Tool>
    }
}

/// Params of `tools/call`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CallToolRequestParams {
    /// Name of the tool.
    pub name: String,
    /// Arguments, matching the tool's `inputSchema`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arguments: Option<JsonObject>,
    /// Asks the server to run the call as a task (2025-11-25, experimental).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task: Option<TaskMetadata>,
    /// Request metadata (`progressToken`, …).
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
}

impl CallToolRequestParams {
    /// Params calling `name` without arguments.
    ///
    /// ```
    /// use mcp_sansio::schema::CallToolRequestParams;
    /// let mut args = serde_json::Map::new();
    /// args.insert("city".into(), "Paris".into());
    /// let params = CallToolRequestParams::new("weather").with_arguments(args);
    /// assert_eq!(params.arguments.unwrap()["city"], "Paris");
    /// ```
    pub fn new(name: impl Into<String>) -> Self {
        Self { name: name.into(), ..Self::default() }
    }

    /// Sets the arguments.
    #[must_use]
    pub fn with_arguments(mut self, arguments: JsonObject) -> Self {
        self.arguments = Some(arguments);
        self
    }

    /// Asks for the call to run as a task.
    #[must_use]
    pub fn with_task(mut self, task: TaskMetadata) -> Self {
        self.task = Some(task);
        self
    }
}

/// Result of `tools/call`.
///
/// A tool's own failure is reported here with `is_error: Some(true)`, not as a JSON-RPC error.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CallToolResult {
    /// Unstructured content.
    pub content: Vec<ContentBlock>,
    /// Structured content matching the tool's `outputSchema` (2025-06-18 and later).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub structured_content: Option<serde_json::Value>,
    /// Whether the tool call failed (absent means false).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub is_error: Option<bool>,
    /// Result metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
}

impl CallToolResult {
    /// A successful result with the given content.
    pub fn success(content: Vec<ContentBlock>) -> Self {
        Self { content, ..Self::default() }
    }

    /// A failed result (`isError: true`) with the given content.
    pub fn error(content: Vec<ContentBlock>) -> Self {
        Self { content, is_error: Some(true), ..Self::default() }
    }

    /// A successful result with one text block.
    pub fn text(text: impl Into<String>) -> Self {
        Self::success(vec![ContentBlock::text(text)])
    }

    /// Whether the result reports a tool failure.
    pub fn failed(&self) -> bool {
        self.is_error == Some(true)
    }
}

request!(
    /// `tools/list`: lists the server's tools, one page at a time.
    ListTools, "tools/list", PaginatedRequestParams, ListToolsResult
);
impl PaginatedRequest for ListTools {}

request!(
    /// `tools/call`: invokes a tool.
    CallTool, "tools/call", CallToolRequestParams, CallToolResult
);

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::schema::{Paginated, Request};

    #[test]
    fn list_tools_result_decodes_2025_11_25_shape() {
        let raw = json!({
            "tools": [{
                "name": "get_weather",
                "title": "Weather",
                "description": "Get current weather",
                "inputSchema": {"type": "object", "properties": {"city": {"type": "string"}},
                    "required": ["city"]},
                "outputSchema": {"type": "object"},
                "annotations": {"readOnlyHint": true, "openWorldHint": false},
                "icons": [{"src": "https://example.com/w.png", "sizes": ["48x48"]}],
                "execution": {"taskSupport": "optional"},
                "_meta": {"vendor": 1},
                "somethingNew": 42
            }],
            "nextCursor": "page2"
        });
        let result: ListToolsResult = serde_json::from_value(raw).unwrap();
        let tool = &result.tools[0];
        assert_eq!(tool.name, "get_weather");
        assert_eq!(tool.input_schema["required"], json!(["city"]));
        assert_eq!(tool.annotations.as_ref().unwrap().read_only_hint, Some(true));
        assert_eq!(tool.execution.as_ref().unwrap().task_support.as_deref(), Some("optional"));
        assert_eq!(result.next_cursor(), Some("page2"));
        assert_eq!(result.into_items().len(), 1);
    }

    #[test]
    fn list_tools_result_decodes_2024_11_05_shape_and_cache_hints() {
        let raw = json!({"tools": [{"name": "echo", "inputSchema": {"type": "object"}}]});
        let result: ListToolsResult = serde_json::from_value(raw.clone()).unwrap();
        assert_eq!(result.tools[0].annotations, None);
        assert_eq!(result.next_cursor(), None);
        assert_eq!(serde_json::to_value(&result).unwrap(), raw);

        let draft = json!({"tools": [], "ttlMs": 5000, "cacheScope": "public",
            "resultType": "complete"});
        let result: ListToolsResult = serde_json::from_value(draft).unwrap();
        assert_eq!(result.ttl_ms, Some(5000));
        assert_eq!(result.cache_scope.as_deref(), Some("public"));
    }

    #[test]
    fn call_tool_params_serialize_minimal() {
        assert_eq!(CallTool::METHOD, "tools/call");
        assert_eq!(ListTools::METHOD, "tools/list");
        let mut args = JsonObject::new();
        args.insert("x".into(), json!(1));
        let params = CallToolRequestParams::new("add").with_arguments(args);
        assert_eq!(serde_json::to_value(&params).unwrap(), json!({"name": "add", "arguments": {"x": 1}}));
        let tasked = CallToolRequestParams::new("slow").with_task(TaskMetadata { ttl: Some(60000) });
        assert_eq!(serde_json::to_value(&tasked).unwrap(), json!({"name": "slow", "task": {"ttl": 60000}}));
    }

    #[test]
    fn call_tool_result_2024_11_05_without_structured_content() {
        let raw = r#"{"content":[{"type":"text","text":"42"}],"isError":false}"#;
        let result: CallToolResult = serde_json::from_str(raw).unwrap();
        assert_eq!(result.content[0].as_text(), Some("42"));
        assert_eq!(result.structured_content, None);
        assert!(!result.failed());
        assert_eq!(serde_json::to_string(&result).unwrap(), raw);
    }

    #[test]
    fn call_tool_result_2025_06_18_with_structured_and_unknown_blocks() {
        let raw = json!({
            "content": [
                {"type": "text", "text": "{\"t\":22}"},
                {"type": "widget", "spec": {"w": 1}},
                {"type": "resource_link", "uri": "file:///r", "name": "r"}
            ],
            "structuredContent": {"t": 22},
            "isError": true,
            "_meta": {"trace": "abc"}
        });
        let result: CallToolResult = serde_json::from_value(raw.clone()).unwrap();
        assert!(result.failed());
        assert_eq!(result.structured_content, Some(json!({"t": 22})));
        assert!(matches!(result.content[1], ContentBlock::Unknown(_)));
        assert!(matches!(result.content[2], ContentBlock::ResourceLink(_)));
        assert_eq!(serde_json::to_value(&result).unwrap(), raw);
    }

    #[test]
    fn call_tool_result_requires_content() {
        assert!(serde_json::from_str::<CallToolResult>(r#"{"isError":true}"#).is_err());
        let r = CallToolResult::error(vec![ContentBlock::text("boom")]);
        assert_eq!(
            serde_json::to_value(&r).unwrap(),
            json!({"content": [{"type": "text", "text": "boom"}], "isError": true})
        );
        assert_eq!(CallToolResult::text("ok").content[0].as_text(), Some("ok"));
    }
}
