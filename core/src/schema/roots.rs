//! Roots: the directories or files the client exposes to the server (`roots/list`).

use serde::{Deserialize, Serialize};

use super::{EmptyParams, JsonObject, request};

/// A root: a `file://` URI the server may operate in.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Root {
    /// URI of the root (currently always `file://`).
    pub uri: String,
    /// Human-readable name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Root metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
}

impl Root {
    /// A root at `uri`, without a name.
    pub fn new(uri: impl Into<String>) -> Self {
        Self { uri: uri.into(), ..Self::default() }
    }

    /// Sets the display name.
    #[must_use]
    pub fn with_name(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }
}

/// Result of `roots/list` (sent by the client).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListRootsResult {
    /// The client's roots.
    pub roots: Vec<Root>,
    /// Result metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
}

impl ListRootsResult {
    /// A result listing `roots`.
    pub fn new(roots: Vec<Root>) -> Self {
        Self { roots, meta: None }
    }
}

request!(
    /// `roots/list`: a server→client request for the client's roots.
    ListRoots, "roots/list", EmptyParams, ListRootsResult
);

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::schema::Request;

    #[test]
    fn roots_result_round_trips() {
        let result = ListRootsResult::new(vec![
            Root::new("file:///home/user/project").with_name("Project"),
            Root::new("file:///tmp"),
        ]);
        let json = serde_json::to_value(&result).unwrap();
        assert_eq!(
            json,
            json!({"roots": [
                {"uri": "file:///home/user/project", "name": "Project"},
                {"uri": "file:///tmp"}
            ]})
        );
        assert_eq!(serde_json::from_value::<ListRootsResult>(json).unwrap(), result);
        assert_eq!(ListRoots::METHOD, "roots/list");
    }

    #[test]
    fn root_requires_uri_and_tolerates_extras() {
        assert!(serde_json::from_str::<Root>(r#"{"name":"x"}"#).is_err());
        let root: Root =
            serde_json::from_str(r#"{"uri":"file:///a","_meta":{"k":true},"future":1}"#).unwrap();
        assert_eq!(root.meta.unwrap()["k"], json!(true));
    }
}
