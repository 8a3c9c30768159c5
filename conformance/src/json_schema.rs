//! JSON Schema validation, by the `jsonschema` crate configured as the client validates tool
//! results (mcp-smol's `output-schema` feature), and the JSON helpers the argument generator
//! shares.
//!
//! [`compile`] is the one place a schema becomes a validator, with the client's settings: the
//! dialect is the one `$schema` names (drafts 4, 6, 7, 2019-09, 2020-12; 2020-12 without one),
//! `format` asserts only where that dialect says it does (drafts 4 to 7), and a `$ref` outside
//! the document is refused, never fetched: the crate is built without its HTTP and file
//! resolvers. So `check` and `replay` judge a server's output as a client does. The test
//! `compile_agrees_with_the_client` holds the two to the same verdicts.
//!
//! [`check_tool_output`] goes further and runs the client's own check of a tool result.
//!
//! [`Schema`] is a schema document: validated whole ([`Schema::validate`]), at a definition or
//! a JSON pointer ([`Schema::validate_definition`], [`Schema::validate_at`]), or against a
//! subschema whose `$ref`s point into the document ([`Schema::validate_with`], for the
//! argument generator). Each failure is a [`SchemaError`] with a JSON pointer to the offending
//! part of the instance.
//!
//! ```
//! use mcp_conformance::json_schema::Schema;
//! use serde_json::json;
//!
//! let schema = Schema::new(json!({
//!     "type": "object",
//!     "properties": {"tag": {"type": "string", "pattern": "^v[0-9]+$"}},
//!     "required": ["tag"],
//! }))
//! .unwrap();
//! assert!(schema.validate(&json!({"tag": "v1"})).is_ok());
//! let errors = schema.validate(&json!({"tag": "1"})).unwrap_err();
//! assert_eq!(errors[0].to_string(), r#"/tag: "1" does not match "^v[0-9]+$""#);
//! // A reference to another document is refused, as the client refuses it.
//! assert!(Schema::new(json!({"$ref": "https://example.com/schema.json"})).is_err());
//! ```

use std::cmp::{Ordering, Reverse};
use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use jsonschema::error::ValidationErrorKind;
use jsonschema::{ValidationError, Validator};
use mcp_smol::OutputSchemas;
use mcp_smol::mcp_sansio::schema::{CallToolResult, Tool};
use serde_json::{Number, Value};

/// The longest message (in bytes) kept for one failure: it may quote what the server sent.
const MAX_MESSAGE: usize = 300;

/// The base URI a document without an absolute `$id` is known by while a part of it compiles.
const BASE_URI: &str = "urn:mcp-conformance:schema";

/// Where [`Schema::validate_with`] puts a subschema in a copy of the document, so that its
/// `$ref`s resolve against the document. Not a keyword of any dialect: nothing else reads it.
const PART_KEY: &str = "x-mcp-conformance-part";

/// Compiles `schema` as mcp-smol's `OutputSchemas` compiles a tool's `outputSchema`: the
/// `jsonschema` crate's defaults, without the HTTP and file resolvers (the dialect from
/// `$schema`; no reference outside the document is fetched). The error says why it does not
/// compile.
pub fn compile(schema: &Value) -> Result<Validator, String> {
    jsonschema::validator_for(schema).map_err(|error| bounded(error.to_string()))
}

/// Checks the result of a `tools/call` against the `outputSchema` the tool was listed with, with
/// the client's own check (mcp-smol's `OutputSchemas`, which `ClientBuilder::validate_output`
/// runs): a tool error (`isError: true`) passes; otherwise `structuredContent` must be there and
/// match. `Err` holds the client's message, which says which of these failed, or that the
/// schema does not compile (a `$ref` to another document, say), so that the client can check
/// none of the tool's results. `None` when `output_schema` is not an object (the official
/// schema reports that).
pub fn check_tool_output(tool: &str, output_schema: &Value, result: &Value) -> Option<Result<(), String>> {
    let listed =
        serde_json::json!({"name": tool, "inputSchema": {"type": "object"}, "outputSchema": output_schema});
    let listed: Tool = serde_json::from_value(listed).ok()?;
    let schemas = OutputSchemas::new();
    schemas.remember(&[listed]);
    // What the client reads of a result: the rest is the official schema's business.
    let result = CallToolResult {
        structured_content: result.get("structuredContent").cloned(),
        is_error: result.get("isError").and_then(Value::as_bool),
        ..CallToolResult::text("")
    };
    Some(schemas.check(tool, &result).map_err(|error| error.to_string()))
}

/// A JSON Schema document, compiled on first use, whose parts can be validated against too.
pub struct Schema {
    root: Value,
    /// The whole document, compiled by [`compile`] (or why it does not compile).
    whole: OnceLock<Result<Validator, String>>,
    /// Parts of the document (by JSON pointer) and subschemas (by their JSON text), each compiled
    /// once.
    parts: Mutex<HashMap<String, Arc<Result<Validator, String>>>>,
}

impl fmt::Debug for Schema {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Schema").field("root", &self.root).finish_non_exhaustive()
    }
}

/// One way an instance fails a schema.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SchemaError {
    /// A JSON pointer to the failing part of the instance, like `/content/0/text`; empty for the
    /// instance itself.
    pub instance_path: String,
    /// What is wrong, like `3 is not of type "string"`.
    pub message: String,
}

impl fmt::Display for SchemaError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.instance_path.is_empty() {
            write!(f, "(root): {}", self.message)
        } else {
            write!(f, "{}: {}", self.instance_path, self.message)
        }
    }
}

impl std::error::Error for SchemaError {}

impl Schema {
    /// Takes a schema document that compiles (see [`compile`]); the error says why it does not.
    pub fn new(root: Value) -> Result<Self, String> {
        let schema = Self::lenient(root);
        match schema.whole() {
            Ok(_) => Ok(schema),
            Err(reason) => Err(reason.clone()),
        }
    }

    /// Takes any JSON value as a schema document without compiling it yet. Whatever does not
    /// compile (the whole document, a part, a subschema) accepts every instance: see
    /// [`compiles`](Self::compiles).
    pub fn lenient(root: Value) -> Self {
        Schema { root, whole: OnceLock::new(), parts: Mutex::new(HashMap::new()) }
    }

    /// The schema document.
    pub fn root(&self) -> &Value {
        &self.root
    }

    /// Whether the whole document compiles; when it does not, every instance passes.
    pub fn compiles(&self) -> bool {
        self.whole().is_ok()
    }

    /// The definition `name` under `$defs` or (draft-07) `definitions`, if there is one.
    pub fn definition(&self, name: &str) -> Option<&Value> {
        ["$defs", "definitions"].iter().find_map(|key| self.root.get(key)?.get(name))
    }

    /// Validates `instance` against the whole schema; `Err` lists every failure found.
    pub fn validate(&self, instance: &Value) -> Result<(), Vec<SchemaError>> {
        match self.whole() {
            Ok(validator) => failures(validator, instance),
            Err(_) => Ok(()),
        }
    }

    /// Whether `instance` satisfies the whole schema.
    pub fn is_valid(&self, instance: &Value) -> bool {
        self.whole().as_ref().map_or(true, |validator| validator.is_valid(instance))
    }

    /// Validates `instance` against the definition `name` (`#/$defs/name` or
    /// `#/definitions/name`). A missing definition is an error at the root of the instance.
    pub fn validate_definition(&self, name: &str, instance: &Value) -> Result<(), Vec<SchemaError>> {
        let key = ["$defs", "definitions"]
            .into_iter()
            .find(|key| self.root.get(key).and_then(|d| d.get(name)).is_some());
        match key {
            Some(key) => self.validate_at(&format!("/{key}/{}", escape(name)), instance),
            None => Err(vec![SchemaError {
                instance_path: String::new(),
                message: format!("the schema has no definition `{name}`"),
            }]),
        }
    }

    /// Validates `instance` against the part of the schema document that `pointer` designates,
    /// written as a JSON pointer (`/$defs/X/properties/result`) or a fragment
    /// (`#/$defs/X/properties/result`). A pointer to nothing is an error at the root of the
    /// instance.
    pub fn validate_at(&self, pointer: &str, instance: &Value) -> Result<(), Vec<SchemaError>> {
        let reference = if pointer.starts_with('#') { pointer.to_owned() } else { format!("#{pointer}") };
        let Some(pointer) =
            percent_decode(&reference[1..]).filter(|_| resolve_ref(&self.root, &reference).is_some())
        else {
            return Err(vec![SchemaError {
                instance_path: String::new(),
                message: format!("the schema has nothing at `{reference}`"),
            }]);
        };
        let fragment = format!("#{}", encode_fragment(&pointer));
        match &*self.part(&fragment, || within(&self.root, &fragment)) {
            Ok(validator) => failures(validator, instance),
            Err(_) => Ok(()),
        }
    }

    /// Validates `instance` against `subschema`, some schema whose `$ref`s point into this
    /// schema's document (typically a part of it, perhaps merged with others). A subschema that
    /// does not compile accepts everything.
    pub fn validate_with(&self, subschema: &Value, instance: &Value) -> Result<(), Vec<SchemaError>> {
        match &*self.part(&subschema.to_string(), || self.compile_subschema(subschema)) {
            Ok(validator) => failures(validator, instance),
            Err(_) => Ok(()),
        }
    }

    fn whole(&self) -> &Result<Validator, String> {
        self.whole.get_or_init(|| compile(&self.root))
    }

    /// The compiled part under `key`, compiled by `build` the first time.
    fn part(
        &self,
        key: &str,
        build: impl FnOnce() -> Result<Validator, String>,
    ) -> Arc<Result<Validator, String>> {
        if let Some(part) = self.lock().get(key) {
            return Arc::clone(part);
        }
        // Compiled without the lock held: two threads may both compile it, to the same result.
        let part = Arc::new(build());
        Arc::clone(self.lock().entry(key.to_owned()).or_insert(part))
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Arc<Result<Validator, String>>>> {
        self.parts.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Compiles `subschema` as a part of a copy of the document, so that its local `$ref`s
    /// resolve where they would inside the document.
    fn compile_subschema(&self, subschema: &Value) -> Result<Validator, String> {
        let Value::Object(root) = &self.root else {
            // A boolean document has nothing to refer to.
            return compile(subschema);
        };
        let mut document = root.clone();
        document.insert(PART_KEY.to_owned(), subschema.clone());
        within(&Value::Object(document), &format!("#/{PART_KEY}"))
    }
}

/// Compiles a `$ref` to `fragment` of `document`, with `document` registered under its `$id`
/// (or [`BASE_URI`]) and read in its own dialect; the rest is [`compile`]'s configuration.
fn within(document: &Value, fragment: &str) -> Result<Validator, String> {
    let base = document
        .get("$id")
        .and_then(Value::as_str)
        .filter(|id| id.contains(':') && !id.contains('#'))
        .unwrap_or(BASE_URI);
    let registry = jsonschema::Registry::new()
        .add(base, document)
        .and_then(jsonschema::RegistryBuilder::prepare)
        .map_err(|error| bounded(error.to_string()))?;
    let mut wrapper = serde_json::json!({ "$ref": format!("{base}{fragment}") });
    if let Some(dialect) = document.get("$schema") {
        wrapper["$schema"] = dialect.clone();
    }
    jsonschema::options().with_registry(&registry).build(&wrapper).map_err(|error| bounded(error.to_string()))
}

/// Every failure of `instance` against `validator`.
fn failures(validator: &Validator, instance: &Value) -> Result<(), Vec<SchemaError>> {
    let found: Vec<SchemaError> = validator.iter_errors(instance).map(|error| schema_error(&error)).collect();
    if found.is_empty() { Ok(()) } else { Err(found) }
}

/// One failure as a [`SchemaError`]: the crate's message (the client's words), cut to
/// [`MAX_MESSAGE`] bytes; for an `anyOf`/`oneOf` none of whose alternatives matched, the closest
/// alternative and its first failure instead of the whole instance.
fn schema_error(error: &ValidationError<'_>) -> SchemaError {
    let instance_path = error.instance_path().to_string();
    let message = match error.kind() {
        ValidationErrorKind::AnyOf { context } => none_matched("anyOf", context, &instance_path),
        ValidationErrorKind::OneOfNotValid { context } => none_matched("oneOf", context, &instance_path),
        _ => bounded(error.to_string()),
    };
    SchemaError { instance_path, message }
}

/// The message for an `anyOf`/`oneOf` none of whose alternatives matched, quoting the closest
/// one: the alternative with the fewest `const`/`enum` mismatches on this object's own
/// properties (a wrong discriminator), then with the deepest failure, then with the fewest.
fn none_matched(keyword: &str, alternatives: &[Vec<ValidationError<'static>>], path: &str) -> String {
    let depth = |pointer: &str| pointer.matches('/').count();
    let own = depth(path);
    let closest =
        alternatives.iter().enumerate().filter(|(_, errors)| !errors.is_empty()).min_by_key(|(_, errors)| {
            let mismatches = errors
                .iter()
                .filter(|e| {
                    matches!(
                        e.kind(),
                        ValidationErrorKind::Constant { .. } | ValidationErrorKind::Enum { .. }
                    )
                })
                .filter(|e| depth(e.instance_path().as_str()) <= own + 1)
                .count();
            let deepest = errors.iter().map(|e| depth(e.instance_path().as_str())).max().unwrap_or(0);
            (mismatches, Reverse(deepest), errors.len())
        });
    let Some((index, errors)) = closest else {
        return format!("matches none of the alternatives of `{keyword}`");
    };
    let first = schema_error(&errors[0]);
    let at =
        if first.instance_path == path { String::new() } else { format!("at {}: ", first.instance_path) };
    let more = match errors.len() {
        1 => String::new(),
        n => format!(" (and {} more)", n - 1),
    };
    format!(
        "matches none of the {} alternatives of `{keyword}`; the closest, #{index}, fails with: {at}{}{more}",
        alternatives.len(),
        first.message
    )
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

/// A JSON pointer as a URI fragment: every byte but the unreserved ones and those a pointer
/// needs (`/`, `~`, `$`…) percent-encoded.
fn encode_fragment(pointer: &str) -> String {
    let mut out = String::with_capacity(pointer.len());
    for byte in pointer.bytes() {
        if byte.is_ascii_alphanumeric() || b"-._~/$!&'()*+,;=:@".contains(&byte) {
            out.push(char::from(byte));
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

/// A property name as a JSON pointer segment (`~` and `/` escaped).
fn escape(name: &str) -> String {
    name.replace('~', "~0").replace('/', "~1")
}

/// Resolves a local reference (`#`, `#/$defs/X`, any JSON pointer fragment, percent-encoded or
/// not) against the document `root`. `None` for a reference to another document, an anchor, or a
/// pointer to nothing.
pub fn resolve_ref<'a>(root: &'a Value, reference: &str) -> Option<&'a Value> {
    let fragment = reference.strip_prefix('#')?;
    let pointer = percent_decode(fragment)?;
    if pointer.is_empty() {
        Some(root)
    } else if pointer.starts_with('/') {
        root.pointer(&pointer)
    } else {
        None
    }
}

/// JSON equality as JSON Schema defines it: like `==`, except that numbers compare by value, so
/// `1` equals `1.0`.
pub fn json_equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => compare_numbers(x, y) == Ordering::Equal,
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(x, y)| json_equal(x, y))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(key, x)| y.get(key).is_some_and(|y| json_equal(x, y)))
        }
        _ => a == b,
    }
}

/// Compares two JSON numbers by value, exactly when both are integers (of any size serde_json
/// holds).
pub fn compare_numbers(a: &Number, b: &Number) -> Ordering {
    match (exact_integer(a), exact_integer(b)) {
        (Some(x), Some(y)) => x.cmp(&y),
        _ => {
            let (x, y) = (a.as_f64().unwrap_or(0.0), b.as_f64().unwrap_or(0.0));
            x.partial_cmp(&y).unwrap_or(Ordering::Equal)
        }
    }
}

/// Whether `value` is a number without a fractional part (`1.0` counts).
pub fn is_integer(value: &Value) -> bool {
    match value {
        Value::Number(n) => n.is_i64() || n.is_u64() || n.as_f64().is_some_and(|f| f.fract() == 0.0),
        _ => false,
    }
}

/// The JSON Schema type name of `value`: `null`, `boolean`, `number`, `string`, `array` or
/// `object` (integers are `number`s).
pub fn type_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// Whether `value` is of the JSON Schema type `name`. An unknown type name matches anything.
pub fn has_type(value: &Value, name: &str) -> bool {
    match name {
        "integer" => is_integer(value),
        "null" | "boolean" | "number" | "string" | "array" | "object" => type_name(value) == name,
        _ => true,
    }
}

/// A short description of `value` for error messages: `number 3`, `string "abc"`, `array of 2
/// items`…
pub fn describe(value: &Value) -> String {
    match value {
        Value::Null => "null".to_owned(),
        Value::Bool(b) => format!("boolean {b}"),
        Value::Number(n) => format!("number {n}"),
        Value::String(s) => format!("string {}", quote(s)),
        Value::Array(items) => format!("array of {}", plural(items.len(), "item", "items")),
        Value::Object(map) if map.is_empty() => "empty object".to_owned(),
        Value::Object(map) => format!("object with {}", plural(map.len(), "property", "properties")),
    }
}

/// A string quoted as JSON, shortened to about 40 characters.
fn quote(s: &str) -> String {
    if s.chars().count() > 40 {
        let head: String = s.chars().take(37).collect();
        let quoted = Value::String(head).to_string();
        format!("{}…\"", quoted.strip_suffix('"').unwrap_or(&quoted))
    } else {
        Value::String(s.to_owned()).to_string()
    }
}

fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

fn exact_integer(n: &Number) -> Option<i128> {
    if let Some(i) = n.as_i64() {
        Some(i.into())
    } else if let Some(u) = n.as_u64() {
        Some(u.into())
    } else {
        let f = n.as_f64()?;
        (f.fract() == 0.0 && f.abs() < 1e36).then_some(f as i128)
    }
}

fn percent_decode(text: &str) -> Option<String> {
    if !text.contains('%') {
        return Some(text.to_owned());
    }
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = bytes.get(i + 1..i + 3).and_then(|h| std::str::from_utf8(h).ok());
        match (bytes[i], hex.and_then(|h| u8::from_str_radix(h, 16).ok())) {
            (b'%', Some(byte)) => {
                out.push(byte);
                i += 3;
            }
            (byte, _) => {
                out.push(byte);
                i += 1;
            }
        }
    }
    String::from_utf8(out).ok()
}

#[cfg(test)]
mod tests {
    use mcp_smol::mcp_sansio::schema::{CallToolResult, Tool};
    use mcp_smol::{OutputSchemaError, OutputSchemas};
    use serde_json::json;

    use super::*;

    const DRAFT7: &str = "http://json-schema.org/draft-07/schema#";
    const DRAFT4: &str = "http://json-schema.org/draft-04/schema#";
    const DRAFT2020: &str = "https://json-schema.org/draft/2020-12/schema";

    /// The verdict of the client (`OutputSchemas::check`, as `validate_output` runs it):
    /// `None` when the schema does not compile, else whether `instance` passes.
    fn client(schema: &Value, instance: &Value) -> Option<bool> {
        let tool: Tool = serde_json::from_value(json!({
            "name": "t", "inputSchema": {"type": "object"}, "outputSchema": schema,
        }))
        .expect("an object schema makes a tool");
        let schemas = OutputSchemas::new();
        schemas.remember(&[tool]);
        let result =
            CallToolResult { structured_content: Some(instance.clone()), ..CallToolResult::text("") };
        match schemas.check("t", &result) {
            Ok(()) => Some(true),
            Err(OutputSchemaError::Invalid { .. }) => Some(false),
            Err(OutputSchemaError::InvalidSchema { .. }) => None,
            Err(other) => panic!("{other:?}"),
        }
    }

    /// The verdict of [`compile`] and of [`Schema`], in the same terms.
    fn ours(schema: &Value, instance: &Value) -> Option<bool> {
        let compiled = compile(schema).ok().map(|validator| validator.is_valid(instance));
        let document = Schema::new(schema.clone()).ok().map(|schema| schema.validate(instance).is_ok());
        assert_eq!(compiled, document, "compile and Schema disagree on {schema} / {instance}");
        compiled
    }

    /// Schemas (each an object, as `outputSchema` must be) with instances, and what the client
    /// says of each: `Some(valid)`, or `None` when the schema does not compile.
    fn cases() -> Vec<(Value, Value, Option<bool>)> {
        let tag = json!({
            "type": "object",
            "properties": {"version": {"type": "string", "pattern": "^[0-9]+\\.[0-9]+\\.[0-9]+$"}},
            "required": ["version"],
        });
        let pattern_properties = json!({
            "type": "object",
            "patternProperties": {"^x-": {"type": "string"}},
            "additionalProperties": false,
        });
        let anchored = json!({
            "$id": "https://example.com/out.json",
            "$defs": {"n": {"$anchor": "count", "type": "integer"}},
            "properties": {"n": {"$ref": "#count"}},
        });
        let relative =
            json!({"$id": "https://example.com/out.json", "properties": {"n": {"$ref": "n.json"}}});
        let email = |dialect: Option<&str>| {
            let mut schema = json!({"properties": {"to": {"type": "string", "format": "email"}}});
            if let Some(dialect) = dialect {
                schema["$schema"] = json!(dialect);
            }
            schema
        };
        let ref_sibling = |dialect: &str| {
            json!({
                "$schema": dialect,
                "definitions": {"n": {"type": "number"}},
                "properties": {"n": {"$ref": "#/definitions/n", "minimum": 5}},
            })
        };
        vec![
            (tag.clone(), json!({"version": "1.2.3"}), Some(true)),
            (tag.clone(), json!({"version": "v1.2"}), Some(false)),
            (tag, json!({"version": 1}), Some(false)),
            (pattern_properties.clone(), json!({"x-a": "1"}), Some(true)),
            (pattern_properties.clone(), json!({"x-a": 1}), Some(false)),
            (pattern_properties, json!({"other": "1"}), Some(false)),
            (anchored.clone(), json!({"n": 3}), Some(true)),
            (anchored, json!({"n": 3.5}), Some(false)),
            (relative, json!({"n": 3}), None),
            (json!({"$ref": "http://127.0.0.1:9/schema.json"}), json!({}), None),
            (json!({"$ref": "file:///etc/passwd"}), json!({}), None),
            (json!({"properties": {"n": {"$ref": "#/$defs/missing"}}}), json!({}), None),
            // `format` asserts in drafts 4 to 7 only.
            (email(Some(DRAFT7)), json!({"to": "nobody"}), Some(false)),
            (email(Some(DRAFT7)), json!({"to": "a@example.com"}), Some(true)),
            (email(Some(DRAFT2020)), json!({"to": "nobody"}), Some(true)),
            (email(None), json!({"to": "nobody"}), Some(true)),
            // Keywords beside `$ref` count from 2019-09 on, not in draft-07.
            (ref_sibling(DRAFT7), json!({"n": 1}), Some(true)),
            (ref_sibling(DRAFT2020), json!({"n": 1}), Some(false)),
            // Draft 4's boolean exclusiveMaximum.
            (
                json!({"$schema": DRAFT4, "properties": {"n": {"maximum": 3, "exclusiveMaximum": true}}}),
                json!({"n": 3}),
                Some(false),
            ),
            (json!({"$schema": "https://example.com/no-such-dialect", "type": "object"}), json!({}), None),
            (json!({"properties": {"n": {"type": "integr"}}}), json!({"n": 1}), None),
            // Reference cycles neither overflow nor fail.
            (json!({"$ref": "#"}), json!({"n": 1}), Some(true)),
            (
                json!({"$defs": {"A": {"anyOf": [{"$ref": "#/$defs/B"}]}, "B": {"allOf": [{"$ref": "#/$defs/A"}]}}, "$ref": "#/$defs/A"}),
                json!({}),
                Some(true),
            ),
        ]
    }

    #[test]
    fn compile_agrees_with_the_client() {
        for (schema, instance, expected) in cases() {
            let client = client(&schema, &instance);
            assert_eq!(client, expected, "the client on {schema} / {instance}");
            assert_eq!(ours(&schema, &instance), client, "{schema} / {instance}");
        }
    }

    #[test]
    fn errors_point_into_the_instance_in_the_clients_words() {
        let schema = Schema::new(json!({
            "type": "object",
            "properties": {"count": {"type": "integer"}, "tag": {"type": "string", "pattern": "^v"}},
            "required": ["count", "mean"],
        }))
        .unwrap();
        let mut found = schema.validate(&json!({"count": "4", "tag": "1"})).unwrap_err();
        found.sort_by(|a, b| a.instance_path.cmp(&b.instance_path));
        let found: Vec<String> = found.iter().map(ToString::to_string).collect();
        assert_eq!(
            found,
            [
                r#"(root): "mean" is a required property"#,
                r#"/count: "4" is not of type "integer""#,
                r#"/tag: "1" does not match "^v""#
            ]
        );
        // Long values are quoted only in part.
        let long = schema.validate(&json!({"count": "x".repeat(10_000)})).unwrap_err();
        assert!(long.iter().all(|e| e.message.len() <= MAX_MESSAGE + '…'.len_utf8()), "{long:?}");
    }

    #[test]
    fn any_of_reports_the_closest_alternative() {
        let schema = Schema::new(json!({
            "$defs": {
                "Text": {"properties": {"type": {"const": "text"}, "text": {"type": "string"}}, "required": ["type", "text"]},
                "Image": {"properties": {"type": {"const": "image"}, "data": {"type": "string"}}, "required": ["type", "data"]},
            },
            "type": "array",
            "items": {"anyOf": [{"$ref": "#/$defs/Image"}, {"$ref": "#/$defs/Text"}]},
        }))
        .unwrap();
        assert!(
            schema
                .validate(&json!([{"type": "text", "text": "hi"}, {"type": "image", "data": "AA=="}]))
                .is_ok()
        );
        let found = schema.validate(&json!([{"type": "text", "text": 3}])).unwrap_err();
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].instance_path, "/0");
        assert_eq!(
            found[0].message,
            r#"matches none of the 2 alternatives of `anyOf`; the closest, #1, fails with: at /0/text: 3 is not of type "string""#
        );
    }

    #[test]
    fn definitions_and_pointers() {
        let schema = Schema::new(json!({
            "$defs": {"Result": {"type": "object", "properties": {"n": {"type": "integer"}}}, "a b": {"type": "string"}},
            "definitions": {"Old": {"type": "string"}},
        }))
        .unwrap();
        assert!(schema.validate_definition("Result", &json!({"n": 1})).is_ok());
        assert_eq!(
            schema.validate_definition("Result", &json!({"n": 1.5})).unwrap_err()[0].instance_path,
            "/n"
        );
        assert!(schema.validate_definition("Old", &json!("x")).is_ok());
        assert!(schema.validate_definition("Old", &json!(1)).is_err());
        assert!(schema.validate_definition("a b", &json!(1)).is_err());
        assert!(schema.validate_definition("a b", &json!("x")).is_ok());
        let missing = schema.validate_definition("Nope", &json!(1)).unwrap_err();
        assert_eq!(missing[0].message, "the schema has no definition `Nope`");
        assert!(schema.validate_at("/$defs/Result/properties/n", &json!(2)).is_ok());
        assert!(schema.validate_at("#/$defs/Result/properties/n", &json!("2")).is_err());
        assert!(schema.validate_at("#/$defs/a%20b", &json!(2)).is_err());
        assert!(schema.validate_at("/nowhere", &json!(2)).is_err());
    }

    #[test]
    fn parts_are_read_in_the_documents_dialect() {
        // Draft-07 ignores `minimum` beside `$ref`, and asserts `format`; 2020-12 the reverse.
        for (dialect, sibling_counts, format_asserts) in [(DRAFT7, false, true), (DRAFT2020, true, false)] {
            let schema = Schema::new(json!({
                "$schema": dialect,
                "definitions": {
                    "N": {"type": "number"},
                    "Capped": {"$ref": "#/definitions/N", "minimum": 5},
                    "Mail": {"type": "string", "format": "email"},
                },
            }))
            .unwrap();
            assert_eq!(schema.validate_definition("Capped", &json!(1)).is_err(), sibling_counts, "{dialect}");
            assert_eq!(
                schema.validate_definition("Mail", &json!("nobody")).is_err(),
                format_asserts,
                "{dialect}"
            );
            let merged = json!({"$ref": "#/definitions/N", "minimum": 5});
            assert_eq!(schema.validate_with(&merged, &json!(1)).is_err(), sibling_counts, "{dialect}");
        }
    }

    #[test]
    fn subschemas_resolve_references_in_the_document() {
        let schema = Schema::lenient(json!({
            "$defs": {"Code": {"type": "string", "pattern": "^[A-Z]{2}$"}},
            "type": "object",
            "properties": {"code": {"$ref": "#/$defs/Code"}},
        }));
        let part = json!({"properties": {"code": {"$ref": "#/$defs/Code"}}, "required": ["code"]});
        assert!(schema.validate_with(&part, &json!({"code": "AB"})).is_ok());
        assert_eq!(
            schema.validate_with(&part, &json!({"code": "ab"})).unwrap_err()[0].instance_path,
            "/code"
        );
        assert!(schema.validate_with(&part, &json!({})).is_err());
        // A part that does not compile accepts everything; so does a document that does not.
        assert!(schema.validate_with(&json!({"$ref": "#/$defs/Nope"}), &json!(1)).is_ok());
        let broken = Schema::lenient(json!({"$ref": "https://example.com/s.json"}));
        assert!(!broken.compiles());
        assert!(broken.is_valid(&json!(1)) && broken.validate(&json!(1)).is_ok());
        assert!(Schema::new(json!({"$ref": "https://example.com/s.json"})).is_err());
    }

    #[test]
    fn boolean_documents() {
        assert!(Schema::new(json!(true)).unwrap().is_valid(&json!({"a": 1})));
        assert!(!Schema::new(json!(false)).unwrap().is_valid(&json!(null)));
        assert!(Schema::new(json!(3)).is_err());
    }

    #[test]
    fn json_helpers() {
        assert!(json_equal(&json!({"x": [1, 2]}), &json!({"x": [1.0, 2]})));
        assert!(!json_equal(&json!([1]), &json!([1, 1])));
        assert_eq!(compare_numbers(&Number::from(i64::MAX), &Number::from(i64::MAX - 1)), Ordering::Greater);
        assert!(has_type(&json!(1.0), "integer") && !has_type(&json!(1.5), "integer"));
        assert_eq!(type_name(&json!(1)), "number");
        assert_eq!(describe(&json!({"a": 1})), "object with 1 property");
        assert!(describe(&json!("x".repeat(100))).ends_with("…\""));
        let root = json!({"$defs": {"a/b": 1, "c d": 2}});
        assert_eq!(resolve_ref(&root, "#/$defs/a~1b"), Some(&json!(1)));
        assert_eq!(resolve_ref(&root, "#/$defs/c%20d"), Some(&json!(2)));
        assert_eq!(resolve_ref(&root, "#"), Some(&root));
        assert_eq!(resolve_ref(&root, "other.json#/x"), None);
    }
}
