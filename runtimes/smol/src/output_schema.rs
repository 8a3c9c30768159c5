//! Client-side validation of tool results against the tools' `outputSchema`
//! (MCP 2025-06-18 and later: "clients SHOULD validate structured results against this schema").
//!
//! [`OutputSchemas`] remembers the `outputSchema` of each tool a `tools/list` answered, compiles
//! each into a validator the first time a result of that tool is checked, and keeps it until the
//! tool's schema changes, or until it is the least recently used of
//! [`MAX_VALIDATORS`](OutputSchemas::MAX_VALIDATORS) (a server may list ten thousand tools; the validators of the ones in use
//! stay). Compiling never fetches anything: the `jsonschema` crate is built
//! without its HTTP and file resolvers, so a schema whose `$ref` points outside itself does not
//! compile ([`OutputSchemaError::InvalidSchema`]) instead of making the client reach out to a URL
//! a server chose.
//!
//! Schemas are read with the dialect their `$schema` names (drafts 4, 6, 7, 2019-09, 2020-12),
//! and 2020-12 without one, as MCP specifies; `format` is an annotation only (2020-12 default).

use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, OnceLock, PoisonError};

use mcp_sansio::schema::{CallToolResult, Tool};
use serde_json::Value;

use crate::locks::{self, OrderedGuard, OrderedMutex};

/// The most schema violations an [`OutputSchemaError::Invalid`] lists (it counts them all).
const MAX_REPORTED_VIOLATIONS: usize = 5;

/// The longest message (in bytes) kept for one violation or schema error: both may quote what
/// the server sent.
const MAX_MESSAGE: usize = 300;

/// The `outputSchema` of every tool the client has seen listed, with a validator compiled for each
/// on first use (at most [`MAX_VALIDATORS`](OutputSchemas::MAX_VALIDATORS) kept). Cheap to clone (the clones share the same table), `Send` and `Sync`.
///
/// ```
/// use mcp_smol::OutputSchemas;
/// use mcp_smol::mcp_sansio::schema::{CallToolResult, Tool};
/// use serde_json::json;
///
/// let tools: Vec<Tool> = serde_json::from_value(json!([{
///     "name": "get_stats",
///     "inputSchema": {"type": "object"},
///     "outputSchema": {
///         "type": "object",
///         "properties": {"count": {"type": "integer"}},
///         "required": ["count"]
///     }
/// }]))?;
/// let schemas = OutputSchemas::new();
/// schemas.remember(&tools);
///
/// let result = |structured| -> CallToolResult {
///     CallToolResult { structured_content: Some(structured), ..CallToolResult::text("stats") }
/// };
/// let good = result(json!({"count": 4}));
/// assert!(schemas.check("get_stats", &good).is_ok());
/// let bad = result(json!({"count": "4"}));
/// let error = schemas.check("get_stats", &bad).unwrap_err();
/// assert_eq!(
///     error.to_string(),
///     "tool \"get_stats\" returned structuredContent that does not match its outputSchema \
///      (1 violation): at /count: \"4\" is not of type \"integer\""
/// );
/// // Tools without a known outputSchema are not checked.
/// assert!(schemas.check("echo", &CallToolResult::text("hi")).is_ok());
/// # Ok::<(), serde_json::Error>(())
/// ```
#[derive(Clone, Default)]
pub struct OutputSchemas {
    inner: Arc<Inner>,
}

/// What the clones of one [`OutputSchemas`] share.
#[derive(Default)]
struct Inner {
    /// The schema of each tool that has one, and the validators compiled.
    table: OrderedMutex<Table, { locks::LEAF }>,
    /// How many schemas were compiled (tests check that it happens once per schema).
    #[cfg(test)]
    compiles: std::sync::atomic::AtomicUsize,
}

/// What the lock guards: the tools' schemas, and the validators compiled from them.
#[derive(Default)]
struct Table {
    /// The schema of each tool that has one, by tool name.
    tools: HashMap<String, Arc<Entry>>,
    /// The validator (or why the schema does not compile) of each entry checked lately, by
    /// [`Entry::id`], with when it was last used; at most [`MAX_VALIDATORS`](OutputSchemas::MAX_VALIDATORS).
    compiled: HashMap<u64, (Compiled, u64)>,
    /// Counts uses, to find the least recently used validator.
    uses: u64,
    /// The next [`Entry::id`].
    next_id: u64,
}

/// A schema's validator, or why the schema does not compile: filled by the first check that
/// needs it, while the others that need it at once wait for it (it is compiled once).
type Compiled = Arc<OnceLock<Result<jsonschema::Validator, String>>>;

impl Table {
    /// The validator cell of `entry`, marked as just used: the one kept, or a new one kept from
    /// now on (dropping the least recently used one when [`MAX_VALIDATORS`](OutputSchemas::MAX_VALIDATORS) are kept).
    fn validator(&mut self, entry: &Entry) -> Compiled {
        self.uses += 1;
        let uses = self.uses;
        if let Some((compiled, used)) = self.compiled.get_mut(&entry.id) {
            *used = uses;
            return compiled.clone();
        }
        if self.compiled.len() >= OutputSchemas::MAX_VALIDATORS {
            // Linear, but only before a schema is compiled, which costs far more.
            let oldest = self.compiled.iter().min_by_key(|(_, (_, used))| *used).map(|(id, _)| *id);
            if let Some(oldest) = oldest {
                self.compiled.remove(&oldest);
            }
        }
        let compiled = Compiled::default();
        self.compiled.insert(entry.id, (compiled.clone(), uses));
        compiled
    }

    /// Records `tool`'s schema, keeping the entry (and its validator) when it is unchanged.
    fn remember(&mut self, tool: &Tool) {
        match &tool.output_schema {
            None => {
                if let Some(entry) = self.tools.remove(&tool.name) {
                    self.compiled.remove(&entry.id);
                }
            }
            Some(schema) => {
                let unchanged =
                    self.tools.get(&tool.name).is_some_and(|entry| entry.schema.as_object() == Some(schema));
                if !unchanged {
                    self.next_id += 1;
                    let entry = Arc::new(Entry { schema: Value::Object(schema.clone()), id: self.next_id });
                    if let Some(old) = self.tools.insert(tool.name.clone(), entry) {
                        self.compiled.remove(&old.id);
                    }
                }
            }
        }
    }
}

/// One tool's `outputSchema`.
struct Entry {
    /// The schema, as listed (always an object).
    schema: Value,
    /// Names the entry in [`Table::compiled`] (a schema listed again unchanged keeps its entry).
    id: u64,
}

impl fmt::Debug for OutputSchemas {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let table = self.lock();
        let mut names: Vec<&str> = table.tools.keys().map(String::as_str).collect();
        names.sort_unstable();
        f.debug_struct("OutputSchemas").field("tools", &names).finish()
    }
}

impl OutputSchemas {
    /// How many compiled validators an `OutputSchemas` keeps: past it, compiling one more drops
    /// the one used least recently (compiled again if it is needed again). A listing's schemas
    /// are kept whatever their number, as the list cache keeps the tools.
    pub const MAX_VALIDATORS: usize = 256;

    /// An empty table: every tool is unknown, so every result passes.
    pub fn new() -> Self {
        Self::default()
    }

    /// The table, whatever a panicking thread left (every update leaves it consistent).
    fn lock(&self) -> OrderedGuard<'_, Table, { locks::LEAF }> {
        self.inner.table.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Records the `outputSchema` of each of `tools` (a page of `tools/list`, or all of them):
    /// a tool listed with a schema replaces what was known of it (the compiled validator is kept
    /// when the schema is unchanged), a tool listed without one is forgotten. Tools not in
    /// `tools` are left as they are; [`replace_all`](Self::replace_all) forgets them.
    ///
    /// ```
    /// use mcp_smol::OutputSchemas;
    /// use mcp_smol::mcp_sansio::schema::{CallToolResult, Tool};
    /// use serde_json::json;
    ///
    /// let schemas = OutputSchemas::new();
    /// let listed = |output_schema: serde_json::Value| -> Vec<Tool> {
    ///     let mut tool = json!({"name": "t", "inputSchema": {"type": "object"}});
    ///     if !output_schema.is_null() { tool["outputSchema"] = output_schema; }
    ///     vec![serde_json::from_value(tool).unwrap()]
    /// };
    /// let result: CallToolResult = serde_json::from_value(json!({"content": [], "structuredContent": {}}))?;
    /// schemas.remember(&listed(json!({"type": "object", "required": ["x"]})));
    /// assert!(schemas.check("t", &result).is_err());
    /// schemas.remember(&listed(json!(null)));      // listed again, without an outputSchema
    /// assert!(schemas.check("t", &result).is_ok());
    /// # Ok::<(), serde_json::Error>(())
    /// ```
    pub fn remember(&self, tools: &[Tool]) {
        let mut table = self.lock();
        for tool in tools {
            table.remember(tool);
        }
    }

    /// Records the `outputSchema` of each of `tools`, the whole `tools/list` (every page), and
    /// forgets every tool not in it.
    pub fn replace_all(&self, tools: &[Tool]) {
        let mut table = self.lock();
        let mut known = std::mem::replace(&mut table.tools, HashMap::with_capacity(tools.len()));
        for tool in tools {
            if let Some(entry) = known.remove(&tool.name) {
                table.tools.insert(tool.name.clone(), entry);
            }
            table.remember(tool);
        }
        // The validators of the tools no longer listed go with them.
        for entry in known.values() {
            table.compiled.remove(&entry.id);
        }
    }

    /// Forgets every tool.
    pub fn clear(&self) {
        let mut table = self.lock();
        table.tools.clear();
        table.compiled.clear();
    }

    /// Checks a result of tool `tool` against its `outputSchema`.
    ///
    /// `Ok` when the tool is unknown or was listed without an `outputSchema`, or the result is a
    /// tool error (`isError: true`, which need not carry structured content); otherwise the
    /// result must have `structuredContent` that the schema accepts. The schema is compiled on
    /// the first check of the tool and kept.
    ///
    /// # Errors
    ///
    /// [`OutputSchemaError::MissingStructuredContent`], [`OutputSchemaError::Invalid`] with
    /// the first five violations, or [`OutputSchemaError::InvalidSchema`]
    /// when the tool's own schema does not compile.
    pub fn check(&self, tool: &str, result: &CallToolResult) -> Result<(), OutputSchemaError> {
        if result.is_error == Some(true) {
            return Ok(());
        }
        // The table is locked only to look up and to keep: compiling and validating happen
        // outside.
        let (entry, compiled) = {
            let mut table = self.lock();
            let Some(entry) = table.tools.get(tool).cloned() else { return Ok(()) };
            let compiled = table.validator(&entry);
            (entry, compiled)
        };
        let Some(structured) = &result.structured_content else {
            return Err(OutputSchemaError::MissingStructuredContent { tool: tool.to_owned() });
        };
        let validator = compiled.get_or_init(|| self.compile(&entry.schema)).as_ref().map_err(|reason| {
            OutputSchemaError::InvalidSchema { tool: tool.to_owned(), reason: reason.clone() }
        })?;
        let mut violations = Vec::new();
        let mut total = 0;
        for error in validator.iter_errors(structured) {
            total += 1;
            if violations.len() < MAX_REPORTED_VIOLATIONS {
                violations.push(SchemaViolation {
                    instance_path: error.instance_path().to_string(),
                    message: bounded(error.to_string()),
                });
            }
        }
        if total == 0 {
            return Ok(());
        }
        Err(OutputSchemaError::Invalid { tool: tool.to_owned(), violations, total })
    }

    /// Compiles `schema` (no references outside it are fetched).
    fn compile(&self, schema: &Value) -> Result<jsonschema::Validator, String> {
        #[cfg(test)]
        self.inner.compiles.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        jsonschema::validator_for(schema).map_err(|error| bounded(error.to_string()))
    }

    /// How many schemas were compiled so far.
    #[cfg(test)]
    fn compiles(&self) -> usize {
        self.inner.compiles.load(std::sync::atomic::Ordering::Relaxed)
    }
}

/// `message`, cut to [`MAX_MESSAGE`] bytes (on a character boundary) with `…` when longer.
fn bounded(mut message: String) -> String {
    if message.len() > MAX_MESSAGE {
        let mut end = MAX_MESSAGE;
        while !message.is_char_boundary(end) {
            end -= 1;
        }
        message.truncate(end);
        message.push('…');
    }
    message
}

/// One way `structuredContent` breaks the tool's `outputSchema`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SchemaViolation {
    /// Where in `structuredContent`, as a JSON Pointer (`""` for the whole value, `/count`, ...).
    pub instance_path: String,
    /// What is wrong there (quoting the value, cut to a few hundred bytes).
    pub message: String,
}

impl fmt::Display for SchemaViolation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.instance_path.as_str() {
            "" => write!(f, "at the root: {}", self.message),
            path => write!(f, "at {path}: {}", self.message),
        }
    }
}

/// A tool result that its tool's `outputSchema` does not accept.
///
/// The server broke its own contract, so the structured result cannot be trusted to have the
/// shape the schema promises; the content blocks may still be usable.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum OutputSchemaError {
    /// The tool declares an `outputSchema` but the result has no `structuredContent`.
    #[error(
        "tool {tool:?} declares an outputSchema but its result has no structuredContent \
         (a server must send structuredContent for such a tool)"
    )]
    MissingStructuredContent {
        /// The tool called.
        tool: String,
    },
    /// `structuredContent` does not match the schema.
    #[error(
        "tool {tool:?} returned structuredContent that does not match its outputSchema \
         ({total} violation{}): {}",
        if *total == 1 { "" } else { "s" },
        list(violations, *total)
    )]
    Invalid {
        /// The tool called.
        tool: String,
        /// The first five violations, in the order the validator found them.
        violations: Vec<SchemaViolation>,
        /// How many there are in all.
        total: usize,
    },
    /// The tool's `outputSchema` is not a JSON Schema this client can compile (malformed, an
    /// unknown `$schema`, or a `$ref` to a document outside it, which is never fetched), so
    /// none of its results can be checked.
    #[error("the outputSchema of tool {tool:?} does not compile, so its results cannot be checked: {reason}")]
    InvalidSchema {
        /// The tool called.
        tool: String,
        /// What the compiler said.
        reason: String,
    },
}

impl OutputSchemaError {
    /// The name of the tool whose result failed the check.
    pub fn tool(&self) -> &str {
        match self {
            Self::MissingStructuredContent { tool }
            | Self::Invalid { tool, .. }
            | Self::InvalidSchema { tool, .. } => tool,
        }
    }
}

/// The violations joined with `; `, and how many more there are.
fn list(violations: &[SchemaViolation], total: usize) -> String {
    let mut text = violations.iter().map(ToString::to_string).collect::<Vec<_>>().join("; ");
    if total > violations.len() {
        text.push_str(&format!("; and {} more", total - violations.len()));
    }
    text
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use serde_json::json;

    use super::*;

    /// The output schema of the demo server's `get_stats` (and `bad_stats`).
    fn stats_schema() -> Value {
        json!({
            "type": "object",
            "properties": {
                "count": {"type": "integer"},
                "sum": {"type": "number"},
                "mean": {"type": "number"},
            },
            "required": ["count", "sum", "mean"],
        })
    }

    fn tool(name: &str, output_schema: Option<Value>) -> Tool {
        let mut tool = json!({"name": name, "inputSchema": {"type": "object"}});
        if let Some(schema) = output_schema {
            tool["outputSchema"] = schema;
        }
        serde_json::from_value(tool).unwrap()
    }

    fn structured(value: Value) -> CallToolResult {
        CallToolResult { structured_content: Some(value), ..CallToolResult::text("text") }
    }

    fn schemas_with_stats() -> OutputSchemas {
        let schemas = OutputSchemas::new();
        schemas.remember(&[tool("get_stats", Some(stats_schema())), tool("echo", None)]);
        schemas
    }

    #[test]
    fn valid_structured_content_passes() {
        let schemas = schemas_with_stats();
        let good = structured(json!({"count": 4, "sum": 12.0, "mean": 3.0}));
        assert_eq!(schemas.check("get_stats", &good), Ok(()));
    }

    #[test]
    fn invalid_structured_content_fails_with_the_paths() {
        let schemas = schemas_with_stats();
        let bad = structured(json!({"count": "4", "sum": 12.0}));
        let error = schemas.check("get_stats", &bad).unwrap_err();
        let OutputSchemaError::Invalid { tool, violations, total } = &error else { panic!("{error:?}") };
        assert_eq!((tool.as_str(), *total), ("get_stats", 2));
        let mut paths: Vec<&str> = violations.iter().map(|v| v.instance_path.as_str()).collect();
        paths.sort_unstable();
        assert_eq!(paths, ["", "/count"]);
        let count = violations.iter().find(|v| v.instance_path == "/count").unwrap();
        assert_eq!(count.message, r#""4" is not of type "integer""#);
        let message = error.to_string();
        assert!(message.starts_with("tool \"get_stats\" returned structuredContent that does not match"));
        assert!(message.contains("(2 violations)"), "{message}");
        assert!(message.contains(r#"at /count: "4" is not of type "integer""#), "{message}");
        assert!(message.contains(r#"at the root: "mean" is a required property"#), "{message}");
        assert_eq!(error.tool(), "get_stats");
    }

    #[test]
    fn only_the_first_violations_are_listed() {
        let schemas = OutputSchemas::new();
        let schema = json!({"type": "object", "additionalProperties": {"type": "string"}});
        schemas.remember(&[tool("t", Some(schema))]);
        let many: serde_json::Map<String, Value> = (0..8).map(|n| (format!("k{n}"), json!(n))).collect();
        let error = schemas.check("t", &structured(Value::Object(many))).unwrap_err();
        let OutputSchemaError::Invalid { violations, total, .. } = &error else { panic!("{error:?}") };
        assert_eq!((violations.len(), *total), (MAX_REPORTED_VIOLATIONS, 8));
        assert!(error.to_string().ends_with("; and 3 more"), "{error}");
        // Long values are quoted only in part.
        let long = structured(json!("x".repeat(10_000)));
        let error = schemas.check("t", &long).unwrap_err();
        let OutputSchemaError::Invalid { violations, .. } = &error else { panic!("{error:?}") };
        assert!(violations[0].message.len() <= MAX_MESSAGE + '…'.len_utf8(), "{}", violations[0].message);
        assert!(violations[0].message.ends_with('…'));
    }

    #[test]
    fn missing_structured_content_fails() {
        let schemas = schemas_with_stats();
        let error = schemas.check("get_stats", &CallToolResult::text("{\"count\":4}")).unwrap_err();
        assert_eq!(error, OutputSchemaError::MissingStructuredContent { tool: "get_stats".into() });
        assert!(
            error.to_string().contains("declares an outputSchema but its result has no structuredContent")
        );
    }

    #[test]
    fn tool_errors_are_not_checked() {
        let schemas = schemas_with_stats();
        let failed = CallToolResult::error(vec![mcp_sansio::schema::ContentBlock::text("boom")]);
        assert_eq!(schemas.check("get_stats", &failed), Ok(()));
        let failed_with_bad_structure =
            CallToolResult { is_error: Some(true), ..structured(json!({"count": "x"})) };
        assert_eq!(schemas.check("get_stats", &failed_with_bad_structure), Ok(()));
        // `isError: false` is checked like an absent one.
        let explicit = CallToolResult { is_error: Some(false), ..CallToolResult::text("x") };
        assert!(schemas.check("get_stats", &explicit).is_err());
    }

    #[test]
    fn unknown_tools_and_tools_without_a_schema_pass() {
        let schemas = schemas_with_stats();
        assert_eq!(schemas.check("nope", &CallToolResult::text("x")), Ok(()));
        assert_eq!(schemas.check("echo", &CallToolResult::text("x")), Ok(()));
        assert_eq!(schemas.check("echo", &structured(json!("anything"))), Ok(()));
        assert_eq!(OutputSchemas::new().check("get_stats", &CallToolResult::text("x")), Ok(()));
    }

    #[test]
    fn remembering_again_replaces_or_forgets_the_schema() {
        let schemas = schemas_with_stats();
        let counted = structured(json!({"count": 1}));
        assert!(schemas.check("get_stats", &counted).is_err());
        let loose = json!({"type": "object", "required": ["count"]});
        schemas.remember(&[tool("get_stats", Some(loose))]);
        assert_eq!(schemas.check("get_stats", &counted), Ok(()));
        // Listed again without a schema: forgotten.
        schemas.remember(&[tool("get_stats", None)]);
        assert_eq!(schemas.check("get_stats", &CallToolResult::text("x")), Ok(()));
        // A clone shares the table.
        let clone = schemas.clone();
        clone.remember(&[tool("get_stats", Some(stats_schema()))]);
        assert!(schemas.check("get_stats", &counted).is_err());
        assert_eq!(format!("{schemas:?}"), r#"OutputSchemas { tools: ["get_stats"] }"#);
    }

    #[test]
    fn remember_keeps_other_tools_and_replace_all_forgets_them() {
        let schemas = OutputSchemas::new();
        let required = |name: &str| json!({"type": "object", "required": [name]});
        schemas.remember(&[tool("a", Some(required("a")))]);
        schemas.remember(&[tool("b", Some(required("b")))]);
        let empty = structured(json!({}));
        assert!(schemas.check("a", &empty).is_err() && schemas.check("b", &empty).is_err());
        schemas.replace_all(&[tool("b", Some(required("b"))), tool("c", None)]);
        assert_eq!(schemas.check("a", &empty), Ok(()));
        assert!(schemas.check("b", &empty).is_err());
        schemas.clear();
        assert_eq!(schemas.check("b", &empty), Ok(()));
    }

    #[test]
    fn a_schema_that_does_not_compile_is_its_own_error() {
        let schemas = OutputSchemas::new();
        let broken = json!({"type": "object", "properties": {"n": {"type": "integr"}}});
        schemas.remember(&[tool("broken", Some(broken))]);
        let error = schemas.check("broken", &structured(json!({"n": 1}))).unwrap_err();
        let OutputSchemaError::InvalidSchema { tool, reason } = &error else { panic!("{error:?}") };
        assert_eq!(tool, "broken");
        assert!(!reason.is_empty());
        assert!(
            error.to_string().starts_with("the outputSchema of tool \"broken\" does not compile"),
            "{error}"
        );
        // The failure is remembered, not retried on every call.
        assert!(matches!(
            schemas.check("broken", &structured(json!({}))),
            Err(OutputSchemaError::InvalidSchema { .. })
        ));
        assert_eq!(schemas.compiles(), 1);
    }

    #[test]
    fn references_outside_the_schema_are_never_fetched() {
        let schemas = OutputSchemas::new();
        for (name, reference) in [("http", "http://127.0.0.1:9/schema.json"), ("file", "file:///etc/passwd")]
        {
            schemas.remember(&[tool(name, Some(json!({"$ref": reference})))]);
            let error = schemas.check(name, &structured(json!({}))).unwrap_err();
            assert!(matches!(error, OutputSchemaError::InvalidSchema { .. }), "{name}: {error:?}");
        }
        // References inside the schema work.
        let local = json!({
            "$defs": {"count": {"type": "integer"}},
            "type": "object",
            "properties": {"count": {"$ref": "#/$defs/count"}},
        });
        schemas.remember(&[tool("local", Some(local))]);
        assert_eq!(schemas.check("local", &structured(json!({"count": 1}))), Ok(()));
        assert!(schemas.check("local", &structured(json!({"count": 1.5}))).is_err());
    }

    #[test]
    fn older_dialects_are_read_by_their_schema_keyword() {
        let schemas = OutputSchemas::new();
        let draft7 = json!({
            "$schema": "http://json-schema.org/draft-07/schema#",
            "type": "object",
            "definitions": {"n": {"type": "number"}},
            "properties": {"n": {"$ref": "#/definitions/n"}},
        });
        schemas.remember(&[tool("d7", Some(draft7))]);
        assert_eq!(schemas.check("d7", &structured(json!({"n": 1}))), Ok(()));
        assert!(schemas.check("d7", &structured(json!({"n": "1"}))).is_err());
    }

    #[test]
    fn each_schema_is_compiled_once() {
        let schemas = schemas_with_stats();
        assert_eq!(schemas.compiles(), 0, "compiled lazily, not when remembered");
        let good = structured(json!({"count": 4, "sum": 12.0, "mean": 3.0}));
        for _ in 0..3 {
            assert_eq!(schemas.check("get_stats", &good), Ok(()));
        }
        assert_eq!(schemas.compiles(), 1);
        // The same list again (a refresh): the validator is kept.
        schemas.remember(&[tool("get_stats", Some(stats_schema()))]);
        schemas.replace_all(&[tool("get_stats", Some(stats_schema()))]);
        assert_eq!(schemas.check("get_stats", &good), Ok(()));
        assert_eq!(schemas.compiles(), 1);
        // A changed schema is compiled anew, once.
        let mut changed = stats_schema();
        changed["required"] = json!(["count"]);
        schemas.remember(&[tool("get_stats", Some(changed))]);
        for _ in 0..2 {
            assert_eq!(schemas.check("get_stats", &structured(json!({"count": 1}))), Ok(()));
        }
        assert_eq!(schemas.compiles(), 2);
        // Nothing is compiled for unknown tools, tools without a schema or tool errors.
        let _ = schemas.check("echo", &good);
        let _ = schemas.check("nope", &good);
        assert_eq!(schemas.compiles(), 2);
    }

    #[test]
    fn only_the_validators_used_last_are_kept() {
        let schemas = OutputSchemas::new();
        let count = OutputSchemas::MAX_VALIDATORS + 44;
        let tools: Vec<Tool> = (0..count).map(|n| tool(&format!("t{n}"), Some(stats_schema()))).collect();
        schemas.replace_all(&tools);
        let good = structured(json!({"count": 4, "sum": 12.0, "mean": 3.0}));
        let bad = structured(json!({"count": "4"}));
        for n in 0..count {
            assert_eq!(schemas.check(&format!("t{n}"), &good), Ok(()));
        }
        assert_eq!(schemas.compiles(), count);
        assert_eq!(schemas.lock().compiled.len(), OutputSchemas::MAX_VALIDATORS);
        assert_eq!(schemas.lock().tools.len(), count, "every schema is kept");
        // The last ones used are kept; the first were dropped and are compiled again, and still
        // check.
        assert!(schemas.check(&format!("t{}", count - 1), &bad).is_err());
        assert_eq!(schemas.compiles(), count);
        assert!(schemas.check("t0", &bad).is_err());
        assert_eq!(schemas.compiles(), count + 1);
        assert_eq!(schemas.lock().compiled.len(), OutputSchemas::MAX_VALIDATORS);
        // A tool in use is not the one dropped: t0 was just used, t1 is the oldest now.
        assert!(schemas.check("t1", &good).is_ok());
        assert_eq!(schemas.compiles(), count + 2);
        assert!(schemas.check("t0", &good).is_ok());
        assert_eq!(schemas.compiles(), count + 2);
    }

    #[test]
    fn the_validators_of_tools_forgotten_or_changed_go_with_them() {
        let schemas = schemas_with_stats();
        let good = structured(json!({"count": 4, "sum": 12.0, "mean": 3.0}));
        assert_eq!(schemas.check("get_stats", &good), Ok(()));
        assert_eq!(schemas.lock().compiled.len(), 1);
        let mut changed = stats_schema();
        changed["required"] = json!(["count"]);
        schemas.remember(&[tool("get_stats", Some(changed))]);
        assert_eq!(schemas.lock().compiled.len(), 0, "the old schema's validator is dropped");
        assert_eq!(schemas.check("get_stats", &good), Ok(()));
        schemas.replace_all(&[tool("other", Some(stats_schema()))]);
        assert_eq!(schemas.lock().compiled.len(), 0);
        assert_eq!(schemas.check("other", &good), Ok(()));
        schemas.clear();
        assert_eq!(schemas.lock().compiled.len(), 0);
    }

    #[test]
    fn is_send_sync_and_shared_across_threads() {
        fn assert_send_sync<T: Send + Sync + Clone + 'static>() {}
        assert_send_sync::<OutputSchemas>();
        assert_send_sync::<OutputSchemaError>();
        let schemas = schemas_with_stats();
        let good = structured(json!({"count": 4, "sum": 12.0, "mean": 3.0}));
        let threads: Vec<_> = (0..4)
            .map(|_| {
                let (schemas, good) = (schemas.clone(), good.clone());
                std::thread::spawn(move || schemas.check("get_stats", &good))
            })
            .collect();
        for thread in threads {
            assert_eq!(thread.join().unwrap(), Ok(()));
        }
        assert_eq!(schemas.compiles(), 1, "concurrent first checks still compile once");
    }
}
