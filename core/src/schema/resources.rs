//! Resources: listing, templates, reading and subscriptions.

use serde::{Deserialize, Serialize};

use super::pagination::list_result;
use super::{
    Annotations, EmptyResult, Icon, JsonObject, PaginatedRequest, PaginatedRequestParams, ResourceContents,
    ResourceLink, request,
};

/// A resource the server can read.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Resource {
    /// URI of the resource.
    pub uri: String,
    /// Programmatic name.
    pub name: String,
    /// Human-readable display name (2025-06-18 and later).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What the resource is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// MIME type, if known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// Size in bytes of the raw content, if known.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "super::json_number::hint_opt"
    )]
    pub size: Option<u64>,
    /// Display hints.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Annotations>,
    /// Icons for user interfaces (2025-11-25 and later).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub icons: Option<Vec<Icon>>,
    /// Resource metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
}

impl From<ResourceLink> for Resource {
    fn from(l: ResourceLink) -> Self {
        Self {
            uri: l.uri,
            name: l.name,
            title: l.title,
            description: l.description,
            mime_type: l.mime_type,
            size: l.size,
            annotations: l.annotations,
            icons: l.icons,
            meta: l.meta,
        }
    }
}

impl From<Resource> for ResourceLink {
    fn from(r: Resource) -> Self {
        Self {
            uri: r.uri,
            name: r.name,
            title: r.title,
            description: r.description,
            mime_type: r.mime_type,
            size: r.size,
            annotations: r.annotations,
            icons: r.icons,
            meta: r.meta,
        }
    }
}

/// A template for resource URIs (RFC 6570).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourceTemplate {
    /// The URI template.
    pub uri_template: String,
    /// Programmatic name.
    pub name: String,
    /// Human-readable display name (2025-06-18 and later).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What the resources are.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// MIME type of all matching resources, if they share one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// Display hints.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Annotations>,
    /// Icons for user interfaces (2025-11-25 and later).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub icons: Option<Vec<Icon>>,
    /// Template metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
}

list_result! {
    /// Result of `resources/list`.
    ListResourcesResult {
        /// The resources on this page.
        resources: Vec<Resource>
    }
}

list_result! {
    /// Result of `resources/templates/list`.
    ListResourceTemplatesResult {
        /// The templates on this page.
        resource_templates: Vec<ResourceTemplate>
    }
}

/// Params of `resources/read`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ReadResourceRequestParams {
    /// URI of the resource to read.
    pub uri: String,
    /// Request metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
}

impl ReadResourceRequestParams {
    /// Params reading `uri`.
    pub fn new(uri: impl Into<String>) -> Self {
        Self { uri: uri.into(), meta: None }
    }
}

/// Result of `resources/read`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ReadResourceResult {
    /// The contents (several for a directory-like resource).
    pub contents: Vec<ResourceContents>,
    /// Caching hint in milliseconds (2026-07-28).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "super::json_number::hint_opt"
    )]
    pub ttl_ms: Option<u64>,
    /// Caching scope, `"public"` or `"private"` (2026-07-28).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_scope: Option<String>,
    /// Result metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
}

/// Params of `resources/subscribe`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SubscribeRequestParams {
    /// URI of the resource to watch.
    pub uri: String,
    /// Request metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
}

impl SubscribeRequestParams {
    /// Params subscribing to `uri`.
    pub fn new(uri: impl Into<String>) -> Self {
        Self { uri: uri.into(), meta: None }
    }
}

/// Params of `resources/unsubscribe`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UnsubscribeRequestParams {
    /// URI of the resource to stop watching.
    pub uri: String,
    /// Request metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
}

impl UnsubscribeRequestParams {
    /// Params unsubscribing from `uri`.
    pub fn new(uri: impl Into<String>) -> Self {
        Self { uri: uri.into(), meta: None }
    }
}

request!(
    /// `resources/list`: lists the server's resources, one page at a time.
    ListResources, "resources/list", PaginatedRequestParams, ListResourcesResult
);
impl PaginatedRequest for ListResources {}

request!(
    /// `resources/templates/list`: lists resource templates, one page at a time.
    ListResourceTemplates, "resources/templates/list", PaginatedRequestParams,
    ListResourceTemplatesResult
);
impl PaginatedRequest for ListResourceTemplates {}

request!(
    /// `resources/read`: reads a resource.
    ReadResource, "resources/read", ReadResourceRequestParams, ReadResourceResult
);

request!(
    /// `resources/subscribe`: asks for `notifications/resources/updated` about a resource.
    Subscribe, "resources/subscribe", SubscribeRequestParams, EmptyResult
);

request!(
    /// `resources/unsubscribe`: cancels a subscription.
    Unsubscribe, "resources/unsubscribe", UnsubscribeRequestParams, EmptyResult
);

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::schema::{Paginated, Request};

    #[test]
    fn list_resources_decodes_and_paginates() {
        let raw = json!({
            "resources": [
                {"uri": "file:///project/src/main.rs", "name": "main.rs", "mimeType": "text/x-rust",
                 "size": 1024, "annotations": {"priority": 0.8}, "unknownMember": [1]},
                {"uri": "file:///old", "name": "old"}
            ],
            "nextCursor": "c2"
        });
        let result: ListResourcesResult = serde_json::from_value(raw).unwrap();
        assert_eq!(result.next_cursor(), Some("c2"));
        let items = result.into_items();
        assert_eq!(items[0].size, Some(1024));
        assert_eq!(items[0].annotations.as_ref().unwrap().priority, Some(0.8));
        assert_eq!(items[1].mime_type, None);
    }

    #[test]
    fn templates_use_camel_case_members() {
        let raw = json!({"resourceTemplates": [
            {"uriTemplate": "file:///{path}", "name": "files", "title": "Files"}
        ]});
        let result: ListResourceTemplatesResult = serde_json::from_value(raw.clone()).unwrap();
        assert_eq!(result.resource_templates[0].uri_template, "file:///{path}");
        assert_eq!(result.next_cursor(), None);
        assert_eq!(serde_json::to_value(&result).unwrap(), raw);
        assert_eq!(ListResourceTemplates::METHOD, "resources/templates/list");
    }

    #[test]
    fn read_resource_result_mixes_text_and_blob() {
        let raw = json!({"contents": [
            {"uri": "file:///a", "mimeType": "text/plain", "text": "hello"},
            {"uri": "file:///b", "blob": "AAEC", "_meta": {"x": 1}}
        ]});
        let result: ReadResourceResult = serde_json::from_value(raw.clone()).unwrap();
        assert_eq!(result.contents[0].as_text(), Some("hello"));
        assert!(matches!(&result.contents[1], ResourceContents::Blob(b) if b.meta.is_some()));
        assert_eq!(serde_json::to_value(&result).unwrap(), raw);
    }

    #[test]
    fn subscribe_params_and_methods() {
        assert_eq!(Subscribe::METHOD, "resources/subscribe");
        assert_eq!(Unsubscribe::METHOD, "resources/unsubscribe");
        assert_eq!(ReadResource::METHOD, "resources/read");
        assert_eq!(
            serde_json::to_value(SubscribeRequestParams::new("file:///a")).unwrap(),
            json!({"uri": "file:///a"})
        );
        assert_eq!(
            serde_json::to_value(UnsubscribeRequestParams::new("file:///a")).unwrap(),
            json!({"uri": "file:///a"})
        );
        assert_eq!(
            serde_json::to_value(ReadResourceRequestParams::new("file:///a")).unwrap(),
            json!({"uri": "file:///a"})
        );
    }

    #[test]
    fn resource_link_converts_both_ways() {
        let r = Resource { uri: "a://x".into(), name: "x".into(), size: Some(3), ..Default::default() };
        let link = ResourceLink::from(r.clone());
        assert_eq!(link.size, Some(3));
        assert_eq!(Resource::from(link), r);
    }
}
