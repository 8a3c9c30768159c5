//! The 2026-07-28 ("modern") era: `server/discover`, the per-request `_meta` keys, cache hints
//! and multi round-trip requests (`input_required` results).

use serde::{Deserialize, Serialize};

use super::{Implementation, JsonObject, ServerCapabilities, request};

/// `_meta` key: the protocol version of a modern request (required).
pub const META_PROTOCOL_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
/// `_meta` key: the client's capabilities for this request (required).
pub const META_CLIENT_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";
/// `_meta` key: the client's identity (recommended on every request).
pub const META_CLIENT_INFO: &str = "io.modelcontextprotocol/clientInfo";
/// `_meta` key: the log level wanted for this request; absent means no log messages.
pub const META_LOG_LEVEL: &str = "io.modelcontextprotocol/logLevel";
/// `_meta` key on results: the server's identity.
pub const META_SERVER_INFO: &str = "io.modelcontextprotocol/serverInfo";

/// `_meta` key on the notifications of a `subscriptions/listen` stream: the id of the listen
/// request they belong to.
pub const META_SUBSCRIPTION_ID: &str = "io.modelcontextprotocol/subscriptionId";

/// The notifications a `subscriptions/listen` stream asks for (2026-07-28), and, in its
/// `notifications/subscriptions/acknowledged`, those the server agreed to send.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SubscriptionFilter {
    /// `notifications/tools/list_changed`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub tools_list_changed: bool,
    /// `notifications/prompts/list_changed`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub prompts_list_changed: bool,
    /// `notifications/resources/list_changed`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub resources_list_changed: bool,
    /// `notifications/resources/updated` for these resources (and what lies under them).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub resource_subscriptions: Vec<String>,
    /// `notifications/tasks` for these tasks (the tasks extension).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub task_ids: Vec<String>,
}

impl SubscriptionFilter {
    /// Whether it asks for nothing at all.
    pub fn is_empty(&self) -> bool {
        !self.tools_list_changed
            && !self.prompts_list_changed
            && !self.resources_list_changed
            && self.resource_subscriptions.is_empty()
            && self.task_ids.is_empty()
    }
}

/// Any params or result as read for its `_meta` alone (the `subscriptions/listen` tag of a
/// notification, say): [`get`](Self::get) one of its members.
#[derive(Debug, Default, Deserialize)]
pub(crate) struct WithMeta {
    #[serde(rename = "_meta", default)]
    meta: Option<JsonObject>,
}

impl WithMeta {
    /// The `_meta` member `key`, if there is one.
    pub(crate) fn get(&self, key: &str) -> Option<&serde_json::Value> {
        self.meta.as_ref()?.get(key)
    }
}

/// A 2026-07-28 result as read to know whether it asks for input (multi round-trip requests):
/// `resultType` `input_required`, the input requests by key (each a `method` and its `params`,
/// read with the JSON-RPC envelope's rules), and the state to echo, kept as it came.
#[derive(Debug, Deserialize)]
pub(crate) struct InputRequired<'a> {
    #[serde(rename = "resultType", borrow, default)]
    pub(crate) result_type: Option<std::borrow::Cow<'a, str>>,
    #[serde(rename = "inputRequests", borrow, default)]
    pub(crate) input_requests: Option<std::collections::BTreeMap<String, &'a serde_json::value::RawValue>>,
    #[serde(rename = "requestState", borrow, default)]
    pub(crate) request_state: Option<&'a serde_json::value::RawValue>,
}

/// Params of `notifications/subscriptions/acknowledged` (2026-07-28).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct SubscriptionsAcknowledgedParams {
    /// What the server will send on this stream: the requested notifications it supports.
    #[serde(default)]
    pub notifications: SubscriptionFilter,
    /// Metadata, with [`META_SUBSCRIPTION_ID`].
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
}

/// Result of `server/discover` (2026-07-28).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DiscoverResult {
    /// Always `"complete"` for this result.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result_type: Option<String>,
    /// The protocol versions the server speaks.
    #[serde(default)]
    pub supported_versions: Vec<String>,
    /// What the server offers.
    #[serde(default)]
    pub capabilities: ServerCapabilities,
    /// Guidance for the model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instructions: Option<String>,
    /// How long the result may be reused, in milliseconds (absent or negative: 0).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "super::json_number::signed_hint_opt"
    )]
    pub ttl_ms: Option<i64>,
    /// `"public"` or `"private"`: who may share a cached copy.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_scope: Option<String>,
    /// The server's identity as some servers send it (the schema puts it in `_meta`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_info: Option<Implementation>,
    /// Result metadata, with `io.modelcontextprotocol/serverInfo`.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
}

impl DiscoverResult {
    /// The server's identity: from `_meta` first, else the top-level field.
    pub fn server_info(&self) -> Option<Implementation> {
        self.meta
            .as_ref()
            .and_then(|m| m.get(META_SERVER_INFO))
            .and_then(|v| serde_json::from_value(v.clone()).ok())
            .or_else(|| self.server_info.clone())
    }
}

request!(
    /// `server/discover` (2026-07-28): the server's versions, capabilities and instructions.
    Discover, "server/discover", super::EmptyParams, DiscoverResult
);
