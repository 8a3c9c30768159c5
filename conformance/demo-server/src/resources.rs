//! Resources: three static ones, the `demo://items/{id}` template, reading and subscriptions.

use std::collections::BTreeSet;
use std::sync::{Mutex, PoisonError};

use serde_json::{Map, Value, json};

use super::assets::{CONFIG_JSON, README_MD, TINY_PNG, base64};
use super::jsonrpc::RpcError;

/// The uri template of the item resources.
pub(crate) const ITEM_TEMPLATE: &str = "demo://items/{id}";

/// The prefix every item uri starts with.
const ITEM_PREFIX: &str = "demo://items/";

/// The body of a static resource.
enum Body {
    /// UTF-8 text.
    Text(&'static str),
    /// Binary data, sent base64-encoded.
    Blob(&'static [u8]),
}

/// A static resource.
struct StaticResource {
    uri: &'static str,
    name: &'static str,
    title: &'static str,
    description: &'static str,
    mime_type: &'static str,
    body: Body,
}

/// The static resources, in listing order.
const STATIC_RESOURCES: [StaticResource; 3] = [
    StaticResource {
        uri: "demo://readme",
        name: "readme",
        title: "README",
        description: "What this demo server offers (Markdown).",
        mime_type: "text/markdown",
        body: Body::Text(README_MD),
    },
    StaticResource {
        uri: "demo://config.json",
        name: "config.json",
        title: "Configuration",
        description: "A small JSON document.",
        mime_type: "application/json",
        body: Body::Text(CONFIG_JSON),
    },
    StaticResource {
        uri: "demo://logo.png",
        name: "logo.png",
        title: "Logo",
        description: "A tiny 4x4 PNG image (binary resource).",
        mime_type: "image/png",
        body: Body::Blob(&TINY_PNG),
    },
];

/// The entries of `resources/list`, in order.
pub(crate) fn list() -> Vec<Value> {
    STATIC_RESOURCES
        .iter()
        .map(|resource| {
            let size = match resource.body {
                Body::Text(text) => text.len(),
                Body::Blob(bytes) => bytes.len(),
            };
            json!({
                "uri": resource.uri,
                "name": resource.name,
                "title": resource.title,
                "description": resource.description,
                "mimeType": resource.mime_type,
                "size": size,
            })
        })
        .collect()
}

/// The entries of `resources/templates/list`, in order.
pub(crate) fn templates() -> Vec<Value> {
    vec![json!({
        "uriTemplate": ITEM_TEMPLATE,
        "name": "item",
        "title": "Item",
        "description": "Item number {id}; reading demo://items/42 returns the text \"item 42\".",
        "mimeType": "text/plain",
    })]
}

/// The id of an item uri (`demo://items/<id>`, with a non-empty id without `/`).
fn item_id(uri: &str) -> Option<&str> {
    uri.strip_prefix(ITEM_PREFIX).filter(|id| !id.is_empty() && !id.contains(['/', '?', '#']))
}

/// Whether `uri` names a readable resource.
pub(crate) fn exists(uri: &str) -> bool {
    item_id(uri).is_some() || STATIC_RESOURCES.iter().any(|resource| resource.uri == uri)
}

/// The `contents` entry of a readable uri.
fn contents(uri: &str) -> Option<Value> {
    if let Some(id) = item_id(uri) {
        return Some(json!({ "uri": uri, "mimeType": "text/plain", "text": format!("item {id}") }));
    }
    let resource = STATIC_RESOURCES.iter().find(|resource| resource.uri == uri)?;
    Some(match resource.body {
        Body::Text(text) => json!({ "uri": uri, "mimeType": resource.mime_type, "text": text }),
        Body::Blob(bytes) => {
            json!({ "uri": uri, "mimeType": resource.mime_type, "blob": base64(bytes) })
        }
    })
}

/// The `uri` parameter shared by read, subscribe and unsubscribe.
fn uri_param<'a>(params: &'a Map<String, Value>, method: &str) -> Result<&'a str, RpcError> {
    params
        .get("uri")
        .and_then(Value::as_str)
        .ok_or_else(|| RpcError::invalid_params(format!("{method} needs a string `uri`")))
}

/// `resources/read {uri}` → `{contents: [...]}`, or `-32002` for an unknown uri.
pub(crate) fn read(params: &Map<String, Value>) -> Result<Value, RpcError> {
    let uri = uri_param(params, "resources/read")?;
    let contents = contents(uri).ok_or_else(|| RpcError::resource_not_found(uri))?;
    Ok(json!({ "contents": [contents] }))
}

/// The set of subscribed resource uris.
#[derive(Debug, Default)]
pub(crate) struct Subscriptions {
    uris: Mutex<BTreeSet<String>>,
}

impl Subscriptions {
    /// `resources/subscribe {uri}` → `{}`; the uri must name a readable resource.
    pub(crate) fn subscribe(&self, params: &Map<String, Value>) -> Result<Value, RpcError> {
        let uri = uri_param(params, "resources/subscribe")?;
        if !exists(uri) {
            return Err(RpcError::resource_not_found(uri));
        }
        self.lock().insert(uri.to_owned());
        Ok(json!({}))
    }

    /// `resources/unsubscribe {uri}` → `{}` (unsubscribing an unknown uri is not an error).
    pub(crate) fn unsubscribe(&self, params: &Map<String, Value>) -> Result<Value, RpcError> {
        let uri = uri_param(params, "resources/unsubscribe")?;
        self.lock().remove(uri);
        Ok(json!({}))
    }

    /// The subscribed uris, sorted.
    pub(crate) fn snapshot(&self) -> Vec<String> {
        self.lock().iter().cloned().collect()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, BTreeSet<String>> {
        self.uris.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(uri: &str) -> Map<String, Value> {
        json!({ "uri": uri }).as_object().cloned().expect("object")
    }

    #[test]
    fn reads_static_and_templated_resources() {
        let readme = read(&params("demo://readme")).expect("readme");
        assert_eq!(readme["contents"][0]["mimeType"], "text/markdown");
        let logo = read(&params("demo://logo.png")).expect("logo");
        assert_eq!(logo["contents"][0]["blob"], base64(&TINY_PNG));
        let item = read(&params("demo://items/42")).expect("item");
        assert_eq!(item["contents"][0]["text"], "item 42");
    }

    #[test]
    fn unknown_uris_are_not_found() {
        for uri in ["demo://nope", "demo://items/", "demo://items/1/2", "file:///etc/passwd"] {
            let error = read(&params(uri)).expect_err("not found");
            assert_eq!(error.code, super::super::jsonrpc::RESOURCE_NOT_FOUND);
        }
        assert!(read(&Map::new()).is_err());
    }

    #[test]
    fn tracks_subscriptions() {
        let subscriptions = Subscriptions::default();
        assert!(subscriptions.subscribe(&params("demo://readme")).is_ok());
        assert!(subscriptions.subscribe(&params("demo://items/7")).is_ok());
        assert!(subscriptions.subscribe(&params("demo://missing")).is_err());
        assert_eq!(subscriptions.snapshot(), ["demo://items/7", "demo://readme"]);
        assert!(subscriptions.unsubscribe(&params("demo://items/7")).is_ok());
        assert_eq!(subscriptions.snapshot(), ["demo://readme"]);
    }
}
