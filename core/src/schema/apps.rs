//! MCP Apps (SEP-1865): `_meta.ui` on tools and on their `ui://` resources. The W3C trace
//! context of a request's `_meta` (SEP-414) is in `trace.rs`.

use serde::{Deserialize, Serialize};

use super::{JsonObject, ResourceContents, Tool};

/// The MIME type of an MCP App's HTML (SEP-1865).
pub const MCP_APP_MIME_TYPE: &str = "text/html;profile=mcp-app";

/// The URI scheme of an MCP App's resource.
pub const UI_SCHEME: &str = "ui://";

/// `_meta.ui` (MCP Apps, SEP-1865): on a tool, which `ui://` resource renders it and who may
/// call it; on that resource's contents, the sandbox it asks for. Members this model does not
/// name are kept in `other`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UiMeta {
    /// The `ui://` resource with the tool's HTML (on a tool).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource_uri: Option<String>,
    /// Who may call the tool: `"model"`, `"app"` (default both).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub visibility: Option<Vec<String>>,
    /// The origins the app may reach (on the resource).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub csp: Option<UiCsp>,
    /// Browser permissions the app asks for (`camera`, `microphone`, `geolocation`,
    /// `clipboardWrite`, each `{}`), on the resource.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub permissions: Option<JsonObject>,
    /// A dedicated origin for the app's sandbox.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub domain: Option<String>,
    /// Whether the app would like a border drawn around it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prefers_border: Option<bool>,
    /// Members this model does not name.
    #[serde(flatten)]
    pub other: JsonObject,
}

/// The content security policy an MCP App asks for: origins by use.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UiCsp {
    /// Origins for `fetch`, XHR and WebSocket (`connect-src`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub connect_domains: Vec<String>,
    /// Origins for scripts, styles, images, fonts and media.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub resource_domains: Vec<String>,
    /// Origins for nested frames (`frame-src`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub frame_domains: Vec<String>,
    /// Origins for the document's base URI (`base-uri`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub base_uri_domains: Vec<String>,
}

/// Reads `_meta.ui` of a `_meta` object: `None` if absent, `Some(Err)` if malformed. The
/// flat key `ui/resourceUri` of earlier drafts is read too.
fn ui_of(meta: Option<&JsonObject>) -> Option<Result<UiMeta, String>> {
    let meta = meta?;
    match (meta.get("ui"), meta.get("ui/resourceUri")) {
        (Some(ui), _) => Some(serde_json::from_value(ui.clone()).map_err(|e| format!("_meta.ui: {e}"))),
        (None, Some(serde_json::Value::String(uri))) => {
            Some(Ok(UiMeta { resource_uri: Some(uri.clone()), ..UiMeta::default() }))
        }
        (None, Some(_)) => Some(Err("_meta[\"ui/resourceUri\"] is not a string".into())),
        (None, None) => None,
    }
}

impl Tool {
    /// The tool's MCP Apps metadata (`_meta.ui`): `None` when it has none, an error when it is
    /// malformed.
    ///
    /// ```
    /// use mcp_sansio::schema::Tool;
    /// let tool: Tool = serde_json::from_value(serde_json::json!({
    ///     "name": "chart", "inputSchema": {"type": "object"},
    ///     "_meta": {"ui": {"resourceUri": "ui://charts/bar", "visibility": ["model", "app"]}}
    /// })).unwrap();
    /// assert_eq!(tool.ui().unwrap().unwrap().resource_uri.as_deref(), Some("ui://charts/bar"));
    /// ```
    pub fn ui(&self) -> Option<Result<UiMeta, String>> {
        ui_of(self.meta.as_ref())
    }
}

impl ResourceContents {
    /// The MCP Apps metadata of these contents (`_meta.ui`: CSP, permissions, …).
    pub fn ui(&self) -> Option<Result<UiMeta, String>> {
        let meta = match self {
            ResourceContents::Text(text) => text.meta.as_ref(),
            ResourceContents::Blob(blob) => blob.meta.as_ref(),
            _ => None,
        };
        ui_of(meta)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn ui_meta_round_trips_and_keeps_what_it_does_not_name() {
        let wire = json!({"resourceUri": "ui://a/b", "csp": {"connectDomains": ["https://api.example"]},
            "permissions": {"camera": {}}, "prefersBorder": true, "futureThing": 1});
        let ui: UiMeta = serde_json::from_value(wire.clone()).unwrap();
        assert_eq!(ui.csp.as_ref().unwrap().connect_domains, ["https://api.example"]);
        assert!(ui.permissions.as_ref().unwrap().contains_key("camera"));
        assert_eq!(ui.other["futureThing"], 1);
        assert_eq!(serde_json::to_value(&ui).unwrap(), wire);
        let tool: Tool = serde_json::from_value(json!({"name": "t", "inputSchema": {},
            "_meta": {"ui/resourceUri": "ui://old"}}))
        .unwrap();
        assert_eq!(tool.ui().unwrap().unwrap().resource_uri.as_deref(), Some("ui://old"));
        let bad: Tool =
            serde_json::from_value(json!({"name": "t", "inputSchema": {}, "_meta": {"ui": {"csp": 3}}}))
                .unwrap();
        assert!(bad.ui().unwrap().is_err());
    }
}
