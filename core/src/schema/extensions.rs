//! Extensions (2026): optional protocol features negotiated under `capabilities.extensions`,
//! keyed by an identifier such as `io.modelcontextprotocol/tasks`, each with a settings object.
//!
//! Client and server capabilities both carry an [`Extensions`] map. The client's is sent in
//! `initialize` and, on 2026-07-28, in every request's `_meta` client capabilities; the server's
//! arrives in the `initialize` result or in `server/discover`. Extensions this crate does not
//! know are kept as they came, settings included.
//!
//! ```
//! use mcp_sansio::schema::{ClientCapabilities, TASKS_EXTENSION};
//!
//! let caps = ClientCapabilities::default().with_extension(TASKS_EXTENSION, serde_json::json!({}));
//! assert!(caps.extensions.contains(TASKS_EXTENSION));
//! assert_eq!(
//!     serde_json::to_value(&caps).unwrap(),
//!     serde_json::json!({"extensions": {"io.modelcontextprotocol/tasks": {}}}),
//! );
//! ```

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// The tasks extension (SEP-2663, 2026-07-28): a `tools/call` may be answered with a task to
/// poll (`resultType: "task"`). No settings are defined; declare it with `{}`.
pub const TASKS_EXTENSION: &str = "io.modelcontextprotocol/tasks";

/// The skills extension (SEP-2640): `skills/list`, `skills/get`, and a skill's files as
/// resources with digests.
pub const SKILLS_EXTENSION: &str = "io.modelcontextprotocol/skills";

/// MCP Apps (SEP-1865): tools with an interactive `ui://` resource the host renders.
pub const UI_EXTENSION: &str = "io.modelcontextprotocol/ui";

/// A peer's extensions: identifier → settings, in identifier order.
///
/// The settings are kept as they came (the schema says a JSON object; any other value is kept
/// too, so that a peer's odd settings never fail a handshake). An empty map is not written.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Extensions(BTreeMap<String, serde_json::Value>);

impl Extensions {
    /// No extension.
    pub fn new() -> Self {
        Self::default()
    }

    /// Declares extension `id` with `settings` (`serde_json::json!({})` when it has none),
    /// replacing an earlier declaration of the same id.
    pub fn insert(&mut self, id: impl Into<String>, settings: serde_json::Value) {
        self.0.insert(id.into(), settings);
    }

    /// Removes extension `id`, returning its settings.
    pub fn remove(&mut self, id: &str) -> Option<serde_json::Value> {
        self.0.remove(id)
    }

    /// Whether extension `id` is declared.
    pub fn contains(&self, id: &str) -> bool {
        self.0.contains_key(id)
    }

    /// The settings of extension `id`, if it is declared.
    pub fn settings(&self, id: &str) -> Option<&serde_json::Value> {
        self.0.get(id)
    }

    /// The declared extensions' identifiers, in order.
    pub fn ids(&self) -> impl Iterator<Item = &str> {
        self.0.keys().map(String::as_str)
    }

    /// Every declared extension with its settings, in identifier order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &serde_json::Value)> {
        self.0.iter().map(|(id, settings)| (id.as_str(), settings))
    }

    /// Whether no extension is declared.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// How many extensions are declared.
    pub fn len(&self) -> usize {
        self.0.len()
    }
}

impl<K: Into<String>> FromIterator<(K, serde_json::Value)> for Extensions {
    fn from_iter<I: IntoIterator<Item = (K, serde_json::Value)>>(iter: I) -> Self {
        Extensions(iter.into_iter().map(|(id, settings)| (id.into(), settings)).collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::{ClientCapabilities, ServerCapabilities};

    #[test]
    fn unknown_extensions_and_odd_settings_are_kept_as_they_came() {
        let wire = serde_json::json!({
            "tools": {},
            "extensions": {
                "io.modelcontextprotocol/tasks": {},
                "com.example/odd": {"level": 3, "nested": {"a": [1, 2]}},
                "com.example/not-an-object": true,
            },
        });
        let caps: ServerCapabilities = serde_json::from_value(wire.clone()).unwrap();
        assert!(caps.has_extension(TASKS_EXTENSION));
        assert!(!caps.has_extension(SKILLS_EXTENSION));
        assert_eq!(caps.extension("com.example/odd").unwrap()["level"], 3);
        assert_eq!(caps.extension("com.example/not-an-object"), Some(&serde_json::json!(true)));
        assert!(caps.other.is_empty(), "extensions no longer land in `other`: {:?}", caps.other);
        assert_eq!(serde_json::to_value(&caps).unwrap(), wire);
    }

    #[test]
    fn no_extension_writes_no_member() {
        let caps = ClientCapabilities::default().with_sampling();
        assert_eq!(serde_json::to_value(&caps).unwrap(), serde_json::json!({"sampling": {}}));
        let caps: ClientCapabilities = serde_json::from_str(r#"{"extensions":{}}"#).unwrap();
        assert!(caps.extensions.is_empty());
    }
}
