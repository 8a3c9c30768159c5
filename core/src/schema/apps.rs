//! Two small extensions of metadata: W3C trace context in a request's `_meta` (SEP-414), and
//! MCP Apps' `_meta.ui` on tools and their `ui://` resources (SEP-1865).

use serde::{Deserialize, Serialize};

use super::{JsonObject, ResourceContents, Tool};

/// `_meta` key of the W3C `traceparent` (SEP-414: a root key of the request's `_meta`).
pub const META_TRACEPARENT: &str = "traceparent";
/// `_meta` key of the W3C `tracestate`.
pub const META_TRACESTATE: &str = "tracestate";

/// A W3C trace context to send with a request, so that a server's spans join the caller's trace.
///
/// ```
/// use mcp_sansio::schema::TraceContext;
/// let ctx = TraceContext::new("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01").unwrap();
/// let meta = ctx.clone().with_state("vendor=1").to_meta();
/// assert_eq!(meta["traceparent"], "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01");
/// assert_eq!(meta["tracestate"], "vendor=1");
/// // Malformed (uppercase, all-zero trace id, wrong length) is refused, typed:
/// assert!(TraceContext::new("00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01").is_err());
/// assert!(TraceContext::new("00-00000000000000000000000000000000-00f067aa0ba902b7-01").is_err());
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TraceContext {
    traceparent: String,
    tracestate: Option<String>,
}

/// Why a `traceparent` was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("not a W3C traceparent ({why}): {value:?}")]
pub struct InvalidTraceparent {
    /// What was given.
    pub value: String,
    /// What is wrong with it.
    pub why: &'static str,
}

impl TraceContext {
    /// A trace context with this `traceparent` (`version-traceid-parentid-flags`, lowercase
    /// hex, 55 characters for version `00`), checked as the W3C recommendation says.
    pub fn new(traceparent: impl Into<String>) -> Result<Self, InvalidTraceparent> {
        let value = traceparent.into();
        let refuse = |why| Err(InvalidTraceparent { value: value.clone(), why });
        let parts: Vec<&str> = value.split('-').collect();
        let lower_hex = |s: &str| s.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b));
        let [version, trace_id, parent_id, flags] = parts[..] else { return refuse("four fields") };
        if [(version, 2), (trace_id, 32), (parent_id, 16), (flags, 2)]
            .iter()
            .any(|(field, len)| field.len() != *len || !lower_hex(field))
        {
            return refuse("fields of 2, 32, 16 and 2 lowercase hex digits");
        }
        if version == "ff" {
            return refuse("version ff is invalid");
        }
        if trace_id.bytes().all(|b| b == b'0') || parent_id.bytes().all(|b| b == b'0') {
            return refuse("an all-zero id");
        }
        Ok(TraceContext { traceparent: value, tracestate: None })
    }

    /// Adds the vendor-specific `tracestate`.
    pub fn with_state(mut self, tracestate: impl Into<String>) -> Self {
        self.tracestate = Some(tracestate.into());
        self
    }

    /// The `traceparent`.
    pub fn traceparent(&self) -> &str {
        &self.traceparent
    }

    /// The `tracestate`, if any.
    pub fn tracestate(&self) -> Option<&str> {
        self.tracestate.as_deref()
    }

    /// The `_meta` members to send.
    pub fn to_meta(&self) -> JsonObject {
        let mut meta = JsonObject::new();
        meta.insert(META_TRACEPARENT.into(), self.traceparent.clone().into());
        if let Some(state) = &self.tracestate {
            meta.insert(META_TRACESTATE.into(), state.clone().into());
        }
        meta
    }
}

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

    #[test]
    fn traceparents_are_checked() {
        let good = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
        assert_eq!(TraceContext::new(good).unwrap().traceparent(), good);
        for bad in [
            "",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7",
            "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",
            "00-4bf92f3577b34da6a3ce929d0e0e473-00f067aa0ba902b7-01",
        ] {
            assert!(TraceContext::new(bad).is_err(), "{bad:?}");
        }
    }
}
