//! Sampling: the server asks the client's model for a completion (`sampling/createMessage`).
//!
//! 2025-11-25 added tool use to sampling: messages may carry `tool_use` / `tool_result` blocks,
//! and a message's `content` may be an array of blocks instead of a single one.

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

use super::content::{from_value, type_tag};
use super::{
    AudioContent, ContentBlock, ImageContent, JsonObject, Role, TaskMetadata, TextContent, Tool, request,
};

/// A request from the model to call a tool (2025-11-25 and later).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolUseContent {
    /// Identifies this tool use; matched by a later `tool_result`'s `tool_use_id`.
    pub id: String,
    /// Name of the tool.
    pub name: String,
    /// Arguments, matching the tool's input schema.
    pub input: JsonObject,
    /// Content metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
}

/// The result of a tool use, given back to the model (2025-11-25 and later).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolResultContent {
    /// The `id` of the tool use this answers.
    pub tool_use_id: String,
    /// Unstructured result, as in a `tools/call` result.
    pub content: Vec<ContentBlock>,
    /// Structured result.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub structured_content: Option<Value>,
    /// Whether the tool use failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub is_error: Option<bool>,
    /// Content metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
}

/// A block of content in a sampling message, tagged on the wire by `type`.
///
/// Unknown `type`s decode into [`SamplingContentBlock::Unknown`] and serialize back unchanged.
#[derive(Debug, Clone, PartialEq)]
pub enum SamplingContentBlock {
    /// `"type": "text"`.
    Text(TextContent),
    /// `"type": "image"`.
    Image(ImageContent),
    /// `"type": "audio"` (2025-03-26 and later).
    Audio(AudioContent),
    /// `"type": "tool_use"` (2025-11-25 and later).
    ToolUse(ToolUseContent),
    /// `"type": "tool_result"` (2025-11-25 and later).
    ToolResult(ToolResultContent),
    /// Any other block, kept as it came.
    Unknown(Value),
}

impl SamplingContentBlock {
    /// A text block.
    pub fn text(text: impl Into<String>) -> Self {
        SamplingContentBlock::Text(TextContent::new(text))
    }

    /// The text of a text block.
    pub fn as_text(&self) -> Option<&str> {
        match self {
            SamplingContentBlock::Text(t) => Some(&t.text),
            _ => None,
        }
    }
}

/// Serialization view of the known [`SamplingContentBlock`] variants.
#[derive(Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum TaggedSamplingBlock<'a> {
    Text(&'a TextContent),
    Image(&'a ImageContent),
    Audio(&'a AudioContent),
    ToolUse(&'a ToolUseContent),
    ToolResult(&'a ToolResultContent),
}

impl Serialize for SamplingContentBlock {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            SamplingContentBlock::Text(c) => TaggedSamplingBlock::Text(c).serialize(serializer),
            SamplingContentBlock::Image(c) => TaggedSamplingBlock::Image(c).serialize(serializer),
            SamplingContentBlock::Audio(c) => TaggedSamplingBlock::Audio(c).serialize(serializer),
            SamplingContentBlock::ToolUse(c) => TaggedSamplingBlock::ToolUse(c).serialize(serializer),
            SamplingContentBlock::ToolResult(c) => TaggedSamplingBlock::ToolResult(c).serialize(serializer),
            SamplingContentBlock::Unknown(v) => v.serialize(serializer),
        }
    }
}

impl<'de> Deserialize<'de> for SamplingContentBlock {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        decode_block(Value::deserialize(deserializer)?)
    }
}

/// Decodes one sampling block from a JSON value.
fn decode_block<E: serde::de::Error>(value: Value) -> Result<SamplingContentBlock, E> {
    /// Which variant the `type` tag names, read before the value is moved.
    enum Kind {
        Text,
        Image,
        Audio,
        ToolUse,
        ToolResult,
        Unknown,
    }
    let kind = match type_tag(&value) {
        Some("text") => Kind::Text,
        Some("image") => Kind::Image,
        Some("audio") => Kind::Audio,
        Some("tool_use") => Kind::ToolUse,
        Some("tool_result") => Kind::ToolResult,
        _ => Kind::Unknown,
    };
    match kind {
        Kind::Text => from_value(value).map(SamplingContentBlock::Text),
        Kind::Image => from_value(value).map(SamplingContentBlock::Image),
        Kind::Audio => from_value(value).map(SamplingContentBlock::Audio),
        Kind::ToolUse => from_value(value).map(SamplingContentBlock::ToolUse),
        Kind::ToolResult => from_value(value).map(SamplingContentBlock::ToolResult),
        Kind::Unknown => Ok(SamplingContentBlock::Unknown(value)),
    }
}

/// The `content` of a sampling message: one block, or (2025-11-25 and later) an array.
#[derive(Debug, Clone, PartialEq)]
pub enum SamplingContent {
    /// A single block (every protocol version).
    Single(SamplingContentBlock),
    /// An array of blocks (2025-11-25 and later).
    Multiple(Vec<SamplingContentBlock>),
}

impl SamplingContent {
    /// A single text block.
    pub fn text(text: impl Into<String>) -> Self {
        SamplingContent::Single(SamplingContentBlock::text(text))
    }

    /// The blocks, whichever the form.
    pub fn blocks(&self) -> &[SamplingContentBlock] {
        match self {
            SamplingContent::Single(b) => std::slice::from_ref(b),
            SamplingContent::Multiple(v) => v,
        }
    }

    /// The blocks, whichever the form, by value.
    pub fn into_blocks(self) -> Vec<SamplingContentBlock> {
        match self {
            SamplingContent::Single(b) => vec![b],
            SamplingContent::Multiple(v) => v,
        }
    }
}

impl From<SamplingContentBlock> for SamplingContent {
    fn from(b: SamplingContentBlock) -> Self {
        SamplingContent::Single(b)
    }
}

impl From<Vec<SamplingContentBlock>> for SamplingContent {
    fn from(v: Vec<SamplingContentBlock>) -> Self {
        SamplingContent::Multiple(v)
    }
}

impl Serialize for SamplingContent {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            SamplingContent::Single(b) => b.serialize(serializer),
            SamplingContent::Multiple(v) => v.serialize(serializer),
        }
    }
}

impl<'de> Deserialize<'de> for SamplingContent {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        match Value::deserialize(deserializer)? {
            Value::Array(items) => items
                .into_iter()
                .map(decode_block)
                .collect::<Result<Vec<_>, D::Error>>()
                .map(SamplingContent::Multiple),
            other => decode_block(other).map(SamplingContent::Single),
        }
    }
}

/// A message in a sampling conversation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SamplingMessage {
    /// Who says it.
    pub role: Role,
    /// What is said.
    pub content: SamplingContent,
    /// Message metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
}

/// A hint for model selection; clients may map it to an equivalent model.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ModelHint {
    /// A full or partial model name, such as `"claude-3-5-sonnet"` or `"sonnet"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

/// The server's preferences for model selection; all advisory.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ModelPreferences {
    /// Model hints, in order of preference.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hints: Option<Vec<ModelHint>>,
    /// How much cost matters, 0 to 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_priority: Option<f64>,
    /// How much speed matters, 0 to 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub speed_priority: Option<f64>,
    /// How much capability matters, 0 to 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub intelligence_priority: Option<f64>,
}

/// How the model may use the offered tools (2025-11-25 and later).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolChoice {
    /// `"auto"` (default), `"required"` or `"none"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<String>,
}

/// Params of `sampling/createMessage`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CreateMessageRequestParams {
    /// The conversation so far.
    pub messages: Vec<SamplingMessage>,
    /// Preferences for model selection.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_preferences: Option<ModelPreferences>,
    /// System prompt the server would like used.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system_prompt: Option<String>,
    /// Context to include: `"none"`, `"thisServer"` or `"allServers"` (the last two
    /// soft-deprecated in 2025-11-25).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub include_context: Option<String>,
    /// Sampling temperature.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f64>,
    /// Maximum number of tokens to sample: an integer in any JSON form (`1000.0` too); a
    /// fraction or a negative number makes the request invalid (`json_number::exact`).
    #[serde(deserialize_with = "super::json_number::exact")]
    pub max_tokens: u64,
    /// Sequences that stop sampling.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop_sequences: Option<Vec<String>>,
    /// Provider-specific metadata to pass through.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<JsonObject>,
    /// Tools the model may use (2025-11-25 and later).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools: Option<Vec<Tool>>,
    /// How the model may use the tools (2025-11-25 and later).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_choice: Option<ToolChoice>,
    /// Asks the client to handle the request as a task (2025-11-25, experimental).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task: Option<TaskMetadata>,
    /// Request metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
}

/// Result of `sampling/createMessage` (sent by the client).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CreateMessageResult {
    /// Who produced the message (normally the assistant).
    pub role: Role,
    /// The sampled content.
    pub content: SamplingContent,
    /// Name of the model that produced it.
    pub model: String,
    /// Why sampling stopped: `"endTurn"`, `"stopSequence"`, `"maxTokens"`, `"toolUse"` or other.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop_reason: Option<String>,
    /// Result metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
}

impl CreateMessageResult {
    /// An assistant message with `content`, produced by `model`.
    pub fn new(model: impl Into<String>, content: impl Into<SamplingContent>) -> Self {
        Self {
            role: Role::Assistant,
            content: content.into(),
            model: model.into(),
            stop_reason: None,
            meta: None,
        }
    }

    /// Sets the stop reason.
    #[must_use]
    pub fn with_stop_reason(mut self, reason: impl Into<String>) -> Self {
        self.stop_reason = Some(reason.into());
        self
    }
}

request!(
    /// `sampling/createMessage`: a server→client request to sample the client's model.
    CreateMessage, "sampling/createMessage", CreateMessageRequestParams, CreateMessageResult
);

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::schema::Request;

    #[test]
    fn request_2024_11_05_single_block() {
        let raw = json!({
            "messages": [{"role": "user", "content": {"type": "text",
                "text": "What is the capital of France?"}}],
            "modelPreferences": {"hints": [{"name": "claude-3-sonnet"}], "intelligencePriority": 0.8,
                "speedPriority": 0.5},
            "systemPrompt": "You are a helpful assistant.",
            "includeContext": "thisServer",
            "maxTokens": 100,
            "stopSequences": ["\n\n"],
            "metadata": {"provider": "x"}
        });
        let params: CreateMessageRequestParams = serde_json::from_value(raw.clone()).unwrap();
        assert_eq!(params.max_tokens, 100);
        let msg = &params.messages[0];
        assert!(matches!(msg.content, SamplingContent::Single(_)));
        assert_eq!(msg.content.blocks()[0].as_text(), Some("What is the capital of France?"));
        let prefs = params.model_preferences.as_ref().unwrap();
        assert_eq!(prefs.hints.as_ref().unwrap()[0].name.as_deref(), Some("claude-3-sonnet"));
        assert_eq!(serde_json::to_value(&params).unwrap(), raw);
        assert_eq!(CreateMessage::METHOD, "sampling/createMessage");
    }

    #[test]
    fn request_2025_11_25_with_tools_and_block_arrays() {
        let raw = json!({
            "messages": [
                {"role": "user", "content": "ignored?"},
                {"role": "assistant", "content": [
                    {"type": "text", "text": "Let me check."},
                    {"type": "tool_use", "id": "call_1", "name": "get_weather",
                        "input": {"city": "Paris"}}
                ]},
                {"role": "user", "content": [
                    {"type": "tool_result", "toolUseId": "call_1",
                        "content": [{"type": "text", "text": "18C"}],
                        "structuredContent": {"t": 18}}
                ]}
            ],
            "maxTokens": 1000,
            "tools": [{"name": "get_weather", "inputSchema": {"type": "object"}}],
            "toolChoice": {"mode": "auto"},
            "task": {"ttl": 10}
        });
        let params: CreateMessageRequestParams = serde_json::from_value(raw.clone()).unwrap();
        // A bare string is not a block; it is kept as Unknown rather than failing the request.
        assert!(matches!(
            params.messages[0].content,
            SamplingContent::Single(SamplingContentBlock::Unknown(_))
        ));
        let blocks = params.messages[1].content.blocks();
        assert_eq!(blocks.len(), 2);
        assert!(matches!(&blocks[1], SamplingContentBlock::ToolUse(u)
            if u.id == "call_1" && u.input["city"] == "Paris"));
        let result_blocks = params.messages[2].content.clone().into_blocks();
        assert!(matches!(&result_blocks[0], SamplingContentBlock::ToolResult(r)
            if r.tool_use_id == "call_1" && r.content[0].as_text() == Some("18C")));
        assert_eq!(params.tools.as_ref().unwrap()[0].name, "get_weather");
        assert_eq!(params.tool_choice.as_ref().unwrap().mode.as_deref(), Some("auto"));
        assert_eq!(serde_json::to_value(&params).unwrap(), raw);
    }

    #[test]
    fn result_single_and_array_forms() {
        let single = CreateMessageResult::new("claude", SamplingContentBlock::text("Paris"))
            .with_stop_reason("endTurn");
        let json = serde_json::to_value(&single).unwrap();
        assert_eq!(
            json,
            json!({"role": "assistant", "content": {"type": "text", "text": "Paris"},
                "model": "claude", "stopReason": "endTurn"})
        );
        assert_eq!(serde_json::from_value::<CreateMessageResult>(json).unwrap(), single);

        let multi = CreateMessageResult::new(
            "m",
            vec![
                SamplingContentBlock::text("a"),
                SamplingContentBlock::Unknown(json!({"type": "thinking", "t": "hmm"})),
            ],
        );
        let json = serde_json::to_value(&multi).unwrap();
        assert_eq!(json["content"][0], json!({"type": "text", "text": "a"}));
        assert_eq!(json["content"][1], json!({"type": "thinking", "t": "hmm"}));
        assert_eq!(serde_json::from_value::<CreateMessageResult>(json).unwrap(), multi);
    }

    #[test]
    fn malformed_known_block_in_array_fails() {
        let raw = json!({"role": "user", "content": [{"type": "tool_use", "id": "x"}]});
        assert!(serde_json::from_value::<SamplingMessage>(raw).is_err());
    }
}
