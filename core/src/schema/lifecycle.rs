//! The lifecycle: `initialize`, capabilities, implementation info, `ping`.

use serde::{Deserialize, Serialize};

use super::{Extensions, JsonObject, request};

/// Name, version and presentation details of an MCP implementation (client or server).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Implementation {
    /// Programmatic name.
    pub name: String,
    /// Version string.
    pub version: String,
    /// Human-readable display name (2025-06-18 and later).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What this implementation does (2025-11-25 and later).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Icons for user interfaces (2025-11-25 and later).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub icons: Option<Vec<Icon>>,
    /// Website (2025-11-25 and later).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub website_url: Option<String>,
}

impl Implementation {
    /// An implementation with just a name and a version.
    pub fn new(name: impl Into<String>, version: impl Into<String>) -> Self {
        Self { name: name.into(), version: version.into(), ..Self::default() }
    }
}

/// An icon for display (2025-11-25 and later).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Icon {
    /// URI of the icon (`https:` or `data:`).
    pub src: String,
    /// MIME type override.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// Sizes such as `"48x48"` or `"any"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sizes: Option<Vec<String>>,
    /// `"light"` or `"dark"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub theme: Option<String>,
}

/// A capability with only a `listChanged` flag (roots, tools, prompts).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListChangedCapability {
    /// Whether the peer sends `notifications/*/list_changed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub list_changed: Option<bool>,
}

/// The server's `resources` capability.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourcesCapability {
    /// Whether `resources/subscribe` is supported.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subscribe: Option<bool>,
    /// Whether `notifications/resources/list_changed` is sent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub list_changed: Option<bool>,
}

/// What a client supports; sent in `initialize`.
///
/// Presence of a member declares the capability. Server→client requests for a capability the
/// client did not declare are refused by the engine with `-32601`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ClientCapabilities {
    /// Non-standard capabilities.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub experimental: Option<JsonObject>,
    /// `roots/list` support.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub roots: Option<ListChangedCapability>,
    /// `sampling/createMessage` support (members: `context`, `tools`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sampling: Option<JsonObject>,
    /// `elicitation/create` support (members: `form`, `url`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub elicitation: Option<JsonObject>,
    /// Task-augmented requests (2025-11-25, experimental).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tasks: Option<JsonObject>,
    /// Extensions the client supports (2026), with their settings: see [`Extensions`].
    #[serde(default, skip_serializing_if = "Extensions::is_empty")]
    pub extensions: Extensions,
    /// Capabilities this model does not name, kept as they came.
    #[serde(flatten)]
    pub other: JsonObject,
}

/// Builders: each declares one capability and returns the capabilities, so that a client's
/// whole declaration reads as one expression.
///
/// ```
/// use mcp_sansio::schema::{ClientCapabilities, TASKS_EXTENSION};
///
/// let caps = ClientCapabilities::default()
///     .with_sampling()
///     .with_roots(true)
///     .with_elicitation_form()
///     .with_elicitation_url()
///     .with_extension(TASKS_EXTENSION, serde_json::json!({}));
/// assert_eq!(
///     serde_json::to_value(&caps).unwrap(),
///     serde_json::json!({
///         "sampling": {},
///         "roots": {"listChanged": true},
///         "elicitation": {"form": {}, "url": {}},
///         "extensions": {"io.modelcontextprotocol/tasks": {}},
///     }),
/// );
/// ```
impl ClientCapabilities {
    /// Declares `sampling/createMessage` (without tools or context inclusion).
    pub fn with_sampling(mut self) -> Self {
        self.sampling.get_or_insert_with(JsonObject::new);
        self
    }

    /// Declares sampling with tools (`sampling.tools`, 2025-11-25 and later).
    pub fn with_sampling_tools(mut self) -> Self {
        self.sampling.get_or_insert_with(JsonObject::new).insert("tools".into(), JsonObject::new().into());
        self
    }

    /// Declares sampling with context inclusion (`sampling.context`: the server may ask for
    /// `includeContext` other than `"none"`).
    pub fn with_sampling_context(mut self) -> Self {
        self.sampling.get_or_insert_with(JsonObject::new).insert("context".into(), JsonObject::new().into());
        self
    }

    /// Declares `roots/list`; `list_changed` says the client sends
    /// `notifications/roots/list_changed`.
    pub fn with_roots(mut self, list_changed: bool) -> Self {
        self.roots = Some(ListChangedCapability { list_changed: list_changed.then_some(true) });
        self
    }

    /// Declares form-mode elicitation (`elicitation.form`).
    pub fn with_elicitation_form(mut self) -> Self {
        self.elicitation.get_or_insert_with(JsonObject::new).insert("form".into(), JsonObject::new().into());
        self
    }

    /// Declares URL-mode elicitation (`elicitation.url`, 2025-11-25 and later).
    pub fn with_elicitation_url(mut self) -> Self {
        self.elicitation.get_or_insert_with(JsonObject::new).insert("url".into(), JsonObject::new().into());
        self
    }

    /// Declares that the client hosts tasks for the server (2025-11-25, experimental): a
    /// server may ask for a task-augmented `sampling/createMessage` or `elicitation/create`
    /// (for those of the two that are declared too), and follow it with `tasks/get`,
    /// `tasks/result`, `tasks/list` and `tasks/cancel`, which the engine answers.
    pub fn with_hosted_tasks(mut self) -> Self {
        let mut requests = JsonObject::new();
        if self.sampling.is_some() {
            requests.insert("sampling".into(), serde_json::json!({"createMessage": {}}));
        }
        if self.elicitation.is_some() {
            requests.insert("elicitation".into(), serde_json::json!({"create": {}}));
        }
        let tasks = self.tasks.get_or_insert_with(JsonObject::new);
        tasks.insert("list".into(), JsonObject::new().into());
        tasks.insert("cancel".into(), JsonObject::new().into());
        tasks.insert("requests".into(), requests.into());
        self
    }

    /// Declares extension `id` with its `settings` (`serde_json::json!({})` when it has none).
    pub fn with_extension(mut self, id: impl Into<String>, settings: serde_json::Value) -> Self {
        self.extensions.insert(id, settings);
        self
    }

    /// Whether extension `id` is declared.
    pub fn has_extension(&self, id: &str) -> bool {
        self.extensions.contains(id)
    }

    /// What these capabilities declare, one name each: `sampling`, `sampling.tools`,
    /// `elicitation.form`, `roots`, `extensions/<id>`, … (what a `-32021` error says is
    /// missing, for a message or a log).
    ///
    /// ```
    /// use mcp_sansio::schema::ClientCapabilities;
    /// let caps = ClientCapabilities::default().with_elicitation_url().with_extension("com.example/x", serde_json::json!({}));
    /// assert_eq!(caps.declared(), ["elicitation.url", "extensions/com.example/x"]);
    /// ```
    pub fn declared(&self) -> Vec<String> {
        let mut names = Vec::new();
        let mut with_members = |name: &str, object: Option<&JsonObject>| {
            let Some(object) = object else { return };
            if object.is_empty() {
                names.push(name.to_owned());
            }
            names.extend(object.keys().map(|member| format!("{name}.{member}")));
        };
        with_members("experimental", self.experimental.as_ref());
        with_members("sampling", self.sampling.as_ref());
        with_members("elicitation", self.elicitation.as_ref());
        with_members("tasks", self.tasks.as_ref());
        if self.roots.is_some() {
            names.push("roots".to_owned());
        }
        names.extend(self.extensions.ids().map(|id| format!("extensions/{id}")));
        names.extend(self.other.keys().cloned());
        names
    }
}

/// What a server supports; received in the `initialize` result.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ServerCapabilities {
    /// Non-standard capabilities.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub experimental: Option<JsonObject>,
    /// `logging/setLevel` and `notifications/message`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub logging: Option<JsonObject>,
    /// `completion/complete` (2025-03-26 and later; older servers are assumed to have it when
    /// they offer prompts or resources).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub completions: Option<JsonObject>,
    /// `prompts/*`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompts: Option<ListChangedCapability>,
    /// `resources/*`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resources: Option<ResourcesCapability>,
    /// `tools/*`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools: Option<ListChangedCapability>,
    /// Task-augmented requests (2025-11-25, experimental).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tasks: Option<JsonObject>,
    /// Extensions the server offers (2026), with their settings: see [`Extensions`].
    #[serde(default, skip_serializing_if = "Extensions::is_empty")]
    pub extensions: Extensions,
    /// Capabilities this model does not name, kept as they came.
    #[serde(flatten)]
    pub other: JsonObject,
}

impl ServerCapabilities {
    /// Whether the server offers extension `id`.
    pub fn has_extension(&self, id: &str) -> bool {
        self.extensions.contains(id)
    }

    /// The settings the server gave for extension `id`, if it offers it.
    pub fn extension(&self, id: &str) -> Option<&serde_json::Value> {
        self.extensions.settings(id)
    }
}

/// Params of `initialize`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InitializeRequestParams {
    /// The latest version the client supports.
    pub protocol_version: String,
    /// What the client supports.
    pub capabilities: ClientCapabilities,
    /// Who the client is.
    pub client_info: Implementation,
    /// Request metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
}

/// Result of `initialize`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InitializeResult {
    /// The version the server chose.
    pub protocol_version: String,
    /// What the server supports.
    pub capabilities: ServerCapabilities,
    /// Who the server is.
    pub server_info: Implementation,
    /// Hints for the model on how to use the server.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instructions: Option<String>,
    /// Result metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
}

/// Params of requests that take none but `_meta` (`ping`, `roots/list`, …).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct EmptyParams {
    /// Request metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
}

/// A result with no content but `_meta` (`ping`, `logging/setLevel`, subscribe, …).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct EmptyResult {
    /// Result metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
}

request!(
    /// `initialize`: sent by the engine itself; listed for completeness and for servers under test.
    Initialize, "initialize", InitializeRequestParams, InitializeResult
);
request!(
    /// `ping`: checks that the peer is alive.
    Ping, "ping", EmptyParams, EmptyResult
);
