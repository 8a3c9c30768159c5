//! A small JSON Schema validator: enough for the official MCP schemas and for tools' input and
//! output schemas.
//!
//! [`Schema::new`] takes a schema document once (checking that its local `$ref`s resolve);
//! [`Schema::validate`] then checks any number of instances and reports each failure as a
//! [`SchemaError`] with a JSON pointer to the offending part of the instance.
//!
//! ```
//! use mcp_conformance::json_schema::Schema;
//! use serde_json::json;
//!
//! let schema = Schema::new(json!({
//!     "type": "object",
//!     "properties": {"text": {"type": "string"}},
//!     "required": ["text"],
//! }))
//! .unwrap();
//! assert!(schema.validate(&json!({"text": "hi"})).is_ok());
//! let errors = schema.validate(&json!({"text": 3})).unwrap_err();
//! assert_eq!(errors[0].to_string(), "/text: expected string, found number 3");
//! ```
//!
//! # Supported keywords
//!
//! - Any instance: `type` (a name or an array of names; `integer` is a number without a fractional
//!   part, so `1.0` is an integer), `enum` and `const` (numbers compare by value: `1` equals `1.0`).
//! - Combinators: `allOf`, `anyOf`, `oneOf`, `not`, `if`/`then`/`else`. When no alternative of an
//!   `anyOf` or `oneOf` matches, the error names the closest alternative and its first failure.
//! - References: `$ref` to a JSON pointer into the same document (`#`, `#/$defs/X`,
//!   `#/definitions/X`, `#/properties/a/items`…, with `~0`/`~1` and percent escapes). Keywords next
//!   to a `$ref` apply too, as in JSON Schema 2019-09 and later. A reference to another document
//!   (one that does not start with `#`) is not followed and accepts anything.
//! - Numbers: `minimum`, `maximum`, `exclusiveMinimum`, `exclusiveMaximum` (the number form, and
//!   the draft-04 boolean form next to `minimum`/`maximum`), `multipleOf`.
//! - Strings: `minLength`, `maxLength`, counted in Unicode scalar values (Rust `char`s).
//! - Arrays: `items` (a schema, or an array of schemas as in draft-07), `prefixItems`,
//!   `additionalItems`, `minItems`, `maxItems`, `uniqueItems`, `contains`.
//! - Objects: `properties`, `required`, `additionalProperties` (a boolean or a schema),
//!   `minProperties`, `maxProperties`, `propertyNames`.
//! - Boolean schemas: `true` accepts everything, `false` nothing.
//!
//! # Not checked
//!
//! - `pattern` and `patternProperties`: there is no regular-expression engine here. Since which
//!   properties are "additional" depends on the patterns, `additionalProperties` is not checked
//!   either in a schema that has `patternProperties`.
//! - `format`, annotations (`title`, `description`, `default`, `examples`…) and unknown keywords.
//!   A keyword whose value has the wrong shape (say `"minimum": "3"`) is ignored too: a malformed
//!   schema is lenient, never a panic.
//! - `$id`, `$anchor`, `$dynamicRef`: references resolve only as JSON pointers into the root
//!   document.
//!
//! More than [`MAX_REF_DEPTH`] `$ref`s followed in a row without descending into the instance (a
//! reference cycle such as `{"$ref": "#"}`) is reported as an error instead of overflowing the
//! stack, and so is an instance so deep that more than 256 schemas apply inside one another.

use std::cmp::{Ordering, Reverse};
use std::fmt;

use serde_json::{Map, Number, Value};

/// How many `$ref`s may be followed in a row, without descending into the instance, before the
/// validator reports a reference cycle.
pub const MAX_REF_DEPTH: usize = 64;

/// How many schemas may be applied inside one another before the validator gives up.
const MAX_NESTING: usize = 256;

/// How many values an error message quotes from an `enum`.
const ENUM_QUOTE_LIMIT: usize = 8;

/// A JSON Schema document, checked once and then used to validate any number of instances.
#[derive(Debug, Clone, PartialEq)]
pub struct Schema {
    root: Value,
}

/// One way an instance fails a schema.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SchemaError {
    /// A JSON pointer to the failing part of the instance, like `/content/0/text`; empty for the
    /// instance itself.
    pub instance_path: String,
    /// What is wrong, like `expected string, found number 3`.
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
    /// Takes a schema document: an object or a boolean, whose local `$ref`s (those starting with
    /// `#`) all resolve. The error says what is wrong.
    pub fn new(root: Value) -> Result<Self, String> {
        if !matches!(root, Value::Object(_) | Value::Bool(_)) {
            return Err(format!("a schema must be an object or a boolean, found {}", describe(&root)));
        }
        check_refs(&root, &root, &mut String::new())?;
        Ok(Schema { root })
    }

    /// Takes any JSON value as a schema without checking it: a root that is neither an object
    /// nor a boolean, and a `$ref` that does not resolve, accept anything.
    pub fn lenient(root: Value) -> Self {
        Schema { root }
    }

    /// The schema document.
    pub fn root(&self) -> &Value {
        &self.root
    }

    /// The definition `name` under `$defs` or (draft-07) `definitions`, if there is one.
    pub fn definition(&self, name: &str) -> Option<&Value> {
        ["$defs", "definitions"].iter().find_map(|key| self.root.get(key)?.get(name))
    }

    /// Validates `instance` against the whole schema; `Err` lists every failure found.
    pub fn validate(&self, instance: &Value) -> Result<(), Vec<SchemaError>> {
        self.validate_with(&self.root, instance)
    }

    /// Whether `instance` satisfies the whole schema.
    pub fn is_valid(&self, instance: &Value) -> bool {
        self.validate(instance).is_ok()
    }

    /// Validates `instance` against the definition `name` (`#/$defs/name` or
    /// `#/definitions/name`). A missing definition is an error at the root of the instance.
    pub fn validate_definition(&self, name: &str, instance: &Value) -> Result<(), Vec<SchemaError>> {
        match self.definition(name) {
            Some(definition) => self.validate_with(definition, instance),
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
        match resolve_ref(&self.root, &reference) {
            Some(subschema) => self.validate_with(subschema, instance),
            None => Err(vec![SchemaError {
                instance_path: String::new(),
                message: format!("the schema has nothing at `{reference}`"),
            }]),
        }
    }

    /// Validates `instance` against `subschema`, some schema whose `$ref`s point into this
    /// schema's document (typically a part of it).
    pub fn validate_with(&self, subschema: &Value, instance: &Value) -> Result<(), Vec<SchemaError>> {
        let mut issues = Vec::new();
        Validator { root: &self.root }.check(subschema, instance, "", Ctx::default(), &mut issues);
        if issues.is_empty() {
            Ok(())
        } else {
            Err(issues
                .into_iter()
                .map(|issue| SchemaError { instance_path: issue.path, message: issue.message })
                .collect())
        }
    }
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

/// A value as compact JSON, shortened to about 60 characters.
fn compact(value: &Value) -> String {
    let text = value.to_string();
    if text.chars().count() > 60 { format!("{}…", text.chars().take(57).collect::<String>()) } else { text }
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

/// Joins names as `a`, `a or b`, `a, b or c`.
fn join_or(names: &[&str]) -> String {
    match names {
        [] => String::new(),
        [one] => (*one).to_owned(),
        [init @ .., last] => format!("{} or {last}", init.join(", ")),
    }
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

/// A non-negative integer keyword value (`3` or `3.0`).
fn as_count(value: &Value) -> Option<u64> {
    match value {
        Value::Number(n) => n.as_u64().or_else(|| {
            let f = n.as_f64()?;
            (f >= 0.0 && f.fract() == 0.0 && f < 1.8e19).then_some(f as u64)
        }),
        _ => None,
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

/// Appends a property name to a JSON pointer, escaping `~` and `/`.
fn child_path(path: &str, key: &str) -> String {
    format!("{path}/{}", key.replace('~', "~0").replace('/', "~1"))
}

fn index_path(path: &str, index: usize) -> String {
    format!("{path}/{index}")
}

fn check_refs(root: &Value, node: &Value, at: &mut String) -> Result<(), String> {
    match node {
        Value::Object(map) => {
            if let Some(Value::String(reference)) = map.get("$ref") {
                if reference.starts_with('#') && resolve_ref(root, reference).is_none() {
                    return Err(format!("unresolvable `$ref` {reference:?} at #{at}"));
                }
            }
            for (key, value) in map {
                if matches!(key.as_str(), "enum" | "const" | "default" | "examples") {
                    continue;
                }
                let len = at.len();
                at.push_str(&child_path("", key));
                let result = check_refs(root, value, at);
                at.truncate(len);
                result?;
            }
            Ok(())
        }
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                let len = at.len();
                at.push_str(&index_path("", i));
                let result = check_refs(root, item, at);
                at.truncate(len);
                result?;
            }
            Ok(())
        }
        _ => Ok(()),
    }
}

/// A failure found while validating.
struct Issue {
    path: String,
    message: String,
    /// Whether the failure is a `const`/`enum` mismatch: when it concerns a property directly,
    /// the alternative it comes from was probably not the one meant (a discriminator mismatch).
    wrong_value: bool,
}

impl Issue {
    fn new(path: &str, message: String) -> Self {
        Issue { path: path.to_owned(), message, wrong_value: false }
    }
}

/// Where the validator is: how many `$ref`s it followed in a row without descending into the
/// instance, and how deeply schemas are nested.
#[derive(Debug, Clone, Copy, Default)]
struct Ctx {
    refs: usize,
    depth: usize,
}

impl Ctx {
    /// Another schema applied to the same instance.
    fn same(self) -> Self {
        Ctx { refs: self.refs, depth: self.depth + 1 }
    }

    /// A schema applied to a part of the instance.
    fn child(self) -> Self {
        Ctx { refs: 0, depth: self.depth + 1 }
    }

    fn via_ref(self) -> Self {
        Ctx { refs: self.refs + 1, depth: self.depth + 1 }
    }
}

fn pointer_depth(path: &str) -> usize {
    path.matches('/').count()
}

struct Validator<'a> {
    root: &'a Value,
}

impl Validator<'_> {
    fn check(&self, schema: &Value, instance: &Value, path: &str, ctx: Ctx, out: &mut Vec<Issue>) {
        if ctx.depth > MAX_NESTING {
            out.push(Issue::new(path, format!("nested more than {MAX_NESTING} schemas deep; not checked")));
            return;
        }
        match schema {
            Value::Bool(false) => out.push(Issue::new(
                path,
                format!("no value is allowed here (the schema is `false`), found {}", describe(instance)),
            )),
            Value::Object(s) => self.check_keywords(s, instance, path, ctx, out),
            _ => {}
        }
    }

    fn failures(&self, schema: &Value, instance: &Value, path: &str, ctx: Ctx) -> Vec<Issue> {
        let mut issues = Vec::new();
        self.check(schema, instance, path, ctx, &mut issues);
        issues
    }

    fn check_keywords(
        &self,
        s: &Map<String, Value>,
        instance: &Value,
        path: &str,
        ctx: Ctx,
        out: &mut Vec<Issue>,
    ) {
        if let Some(Value::String(reference)) = s.get("$ref") {
            if ctx.refs >= MAX_REF_DEPTH {
                out.push(Issue::new(
                    path,
                    format!(
                        "`$ref` {reference:?}: more than {MAX_REF_DEPTH} references followed in a row \
                         (a reference cycle?)"
                    ),
                ));
                return;
            }
            // An unresolvable reference was rejected by `Schema::new`, or is lenient.
            if let Some(target) = resolve_ref(self.root, reference) {
                self.check(target, instance, path, ctx.via_ref(), out);
            }
        }
        check_type(s, instance, path, out);
        check_const_enum(s, instance, path, out);
        match instance {
            Value::Number(n) => check_number(s, n, path, out),
            Value::String(text) => check_string(s, text, path, out),
            Value::Array(items) => self.check_array(s, items, path, ctx, out),
            Value::Object(map) => self.check_object(s, map, path, ctx, out),
            Value::Null | Value::Bool(_) => {}
        }
        self.check_combinators(s, instance, path, ctx, out);
    }

    fn check_array(
        &self,
        s: &Map<String, Value>,
        items: &[Value],
        path: &str,
        ctx: Ctx,
        out: &mut Vec<Issue>,
    ) {
        let mut checked = 0;
        if let Some(Value::Array(prefix)) = s.get("prefixItems") {
            for (i, (schema, item)) in prefix.iter().zip(items).enumerate() {
                self.check(schema, item, &index_path(path, i), ctx.child(), out);
            }
            checked = prefix.len();
        }
        match s.get("items") {
            Some(Value::Array(tuple)) => {
                for (i, (schema, item)) in tuple.iter().zip(items).enumerate() {
                    self.check(schema, item, &index_path(path, i), ctx.child(), out);
                }
                if let Some(additional) = s.get("additionalItems") {
                    for (i, item) in items.iter().enumerate().skip(tuple.len()) {
                        self.check(additional, item, &index_path(path, i), ctx.child(), out);
                    }
                }
            }
            Some(schema @ (Value::Object(_) | Value::Bool(_))) => {
                for (i, item) in items.iter().enumerate().skip(checked) {
                    self.check(schema, item, &index_path(path, i), ctx.child(), out);
                }
            }
            _ => {}
        }
        check_count(s, ("minItems", "maxItems"), items.len(), ("item", "items"), path, out);
        if s.get("uniqueItems") == Some(&Value::Bool(true)) {
            let duplicate = (0..items.len()).find_map(|i| {
                (i + 1..items.len()).find(|&j| json_equal(&items[i], &items[j])).map(|j| (i, j))
            });
            if let Some((i, j)) = duplicate {
                out.push(Issue::new(
                    path,
                    format!("items {i} and {j} are equal, but the items must be unique"),
                ));
            }
        }
        if let Some(contains) = s.get("contains") {
            let found = items
                .iter()
                .enumerate()
                .any(|(i, item)| self.failures(contains, item, &index_path(path, i), ctx.child()).is_empty());
            if !found {
                out.push(Issue::new(path, "no item matches the `contains` schema".to_owned()));
            }
        }
    }

    fn check_object(
        &self,
        s: &Map<String, Value>,
        map: &Map<String, Value>,
        path: &str,
        ctx: Ctx,
        out: &mut Vec<Issue>,
    ) {
        if let Some(Value::Array(required)) = s.get("required") {
            for name in required.iter().filter_map(Value::as_str) {
                if !map.contains_key(name) {
                    out.push(Issue::new(path, format!("missing required property `{name}`")));
                }
            }
        }
        let properties = s.get("properties").and_then(Value::as_object);
        if let Some(properties) = properties {
            for (name, schema) in properties {
                if let Some(value) = map.get(name) {
                    self.check(schema, value, &child_path(path, name), ctx.child(), out);
                }
            }
        }
        if !s.contains_key("patternProperties") {
            let declared = |name: &str| properties.is_some_and(|p| p.contains_key(name));
            match s.get("additionalProperties") {
                Some(Value::Bool(false)) => {
                    for name in map.keys().filter(|name| !declared(name)) {
                        out.push(Issue::new(
                            path,
                            format!("unexpected property `{name}` (additionalProperties is false)"),
                        ));
                    }
                }
                Some(schema @ Value::Object(_)) => {
                    for (name, value) in map.iter().filter(|(name, _)| !declared(name)) {
                        self.check(schema, value, &child_path(path, name), ctx.child(), out);
                    }
                }
                _ => {}
            }
        }
        check_count(s, ("minProperties", "maxProperties"), map.len(), ("property", "properties"), path, out);
        if let Some(names) = s.get("propertyNames") {
            for name in map.keys() {
                let key_path = child_path(path, name);
                let failures = self.failures(names, &Value::String(name.clone()), &key_path, ctx.child());
                if let Some(first) = failures.first() {
                    out.push(Issue::new(&key_path, format!("invalid property name: {}", first.message)));
                }
            }
        }
    }

    fn check_combinators(
        &self,
        s: &Map<String, Value>,
        instance: &Value,
        path: &str,
        ctx: Ctx,
        out: &mut Vec<Issue>,
    ) {
        if let Some(Value::Array(all)) = s.get("allOf") {
            for schema in all {
                self.check(schema, instance, path, ctx.same(), out);
            }
        }
        if let Some(Value::Array(alternatives)) = s.get("anyOf") {
            let mut failures = Vec::new();
            for (i, schema) in alternatives.iter().enumerate() {
                let issues = self.failures(schema, instance, path, ctx.same());
                if issues.is_empty() {
                    failures.clear();
                    break;
                }
                failures.push((i, issues));
            }
            if !failures.is_empty() {
                out.push(none_matched("anyOf", alternatives, failures, path));
            }
        }
        if let Some(Value::Array(alternatives)) = s.get("oneOf") {
            let mut matched = Vec::new();
            let mut failures = Vec::new();
            for (i, schema) in alternatives.iter().enumerate() {
                let issues = self.failures(schema, instance, path, ctx.same());
                if issues.is_empty() {
                    matched.push(i);
                } else {
                    failures.push((i, issues));
                }
            }
            if matched.len() > 1 {
                let which: Vec<String> = matched.iter().map(|i| format!("#{i}")).collect();
                out.push(Issue::new(
                    path,
                    format!(
                        "matches {} of the {} alternatives of `oneOf` ({}), expected exactly one",
                        matched.len(),
                        alternatives.len(),
                        join_or(&which.iter().map(String::as_str).collect::<Vec<_>>())
                            .replace(" or ", " and ")
                    ),
                ));
            } else if matched.is_empty() && !failures.is_empty() {
                out.push(none_matched("oneOf", alternatives, failures, path));
            }
        }
        if let Some(not) = s.get("not") {
            if self.failures(not, instance, path, ctx.same()).is_empty() {
                out.push(Issue::new(path, "matches the schema in `not`".to_owned()));
            }
        }
        if let Some(condition) = s.get("if") {
            let branch = if self.failures(condition, instance, path, ctx.same()).is_empty() {
                s.get("then")
            } else {
                s.get("else")
            };
            if let Some(branch) = branch {
                self.check(branch, instance, path, ctx.same(), out);
            }
        }
    }
}

/// One error for an `anyOf`/`oneOf` none of whose alternatives matched, quoting the closest one:
/// the alternative with the fewest `const`/`enum` mismatches on this object's own properties
/// (a wrong discriminator), then with the deepest failure, then with the fewest failures.
fn none_matched(
    keyword: &str,
    alternatives: &[Value],
    failures: Vec<(usize, Vec<Issue>)>,
    path: &str,
) -> Issue {
    let own_depth = pointer_depth(path);
    let closest = failures.into_iter().min_by_key(|(_, issues)| {
        let mismatches =
            issues.iter().filter(|i| i.wrong_value && pointer_depth(&i.path) <= own_depth + 1).count();
        let deepest = issues.iter().map(|i| pointer_depth(&i.path)).max().unwrap_or(0);
        (mismatches, Reverse(deepest), issues.len())
    });
    let Some((index, issues)) = closest else {
        return Issue::new(path, format!("matches none of the alternatives of `{keyword}`"));
    };
    let name = match alternatives[index].get("$ref").and_then(Value::as_str) {
        Some(reference) => format!("`{reference}`"),
        None => format!("#{index}"),
    };
    let first = &issues[0];
    let at = if first.path == path { String::new() } else { format!("at {}: ", first.path) };
    let more = match issues.len() {
        1 => String::new(),
        n => format!(" (and {} more)", n - 1),
    };
    Issue::new(
        path,
        format!(
            "matches none of the {} alternatives of `{keyword}`; the closest, {name}, fails with: {at}{}{more}",
            alternatives.len(),
            first.message
        ),
    )
}

fn check_type(s: &Map<String, Value>, instance: &Value, path: &str, out: &mut Vec<Issue>) {
    let names: Vec<&str> = match s.get("type") {
        Some(Value::String(name)) => vec![name.as_str()],
        Some(Value::Array(names)) => names.iter().filter_map(Value::as_str).collect(),
        _ => return,
    };
    if !names.is_empty() && !names.iter().any(|name| has_type(instance, name)) {
        out.push(Issue::new(path, format!("expected {}, found {}", join_or(&names), describe(instance))));
    }
}

fn check_const_enum(s: &Map<String, Value>, instance: &Value, path: &str, out: &mut Vec<Issue>) {
    if let Some(expected) = s.get("const") {
        if !json_equal(expected, instance) {
            out.push(Issue {
                path: path.to_owned(),
                message: format!("expected {}, found {}", compact(expected), describe(instance)),
                wrong_value: true,
            });
        }
    }
    if let Some(Value::Array(options)) = s.get("enum") {
        if !options.iter().any(|option| json_equal(option, instance)) {
            let mut quoted: Vec<String> = options.iter().take(ENUM_QUOTE_LIMIT).map(compact).collect();
            if options.len() > ENUM_QUOTE_LIMIT {
                quoted.push(format!("… ({} values)", options.len()));
            }
            out.push(Issue {
                path: path.to_owned(),
                message: format!("expected one of {}, found {}", quoted.join(", "), describe(instance)),
                wrong_value: true,
            });
        }
    }
}

fn check_number(s: &Map<String, Value>, n: &Number, path: &str, out: &mut Vec<Issue>) {
    let flag = |key: &str| s.get(key) == Some(&Value::Bool(true));
    if let Some(Value::Number(min)) = s.get("minimum") {
        let ordering = compare_numbers(n, min);
        if flag("exclusiveMinimum") && ordering != Ordering::Greater {
            out.push(Issue::new(path, format!("expected more than {min}, found {n}")));
        } else if ordering == Ordering::Less {
            out.push(Issue::new(path, format!("expected at least {min}, found {n}")));
        }
    }
    if let Some(Value::Number(max)) = s.get("maximum") {
        let ordering = compare_numbers(n, max);
        if flag("exclusiveMaximum") && ordering != Ordering::Less {
            out.push(Issue::new(path, format!("expected less than {max}, found {n}")));
        } else if ordering == Ordering::Greater {
            out.push(Issue::new(path, format!("expected at most {max}, found {n}")));
        }
    }
    if let Some(Value::Number(min)) = s.get("exclusiveMinimum") {
        if compare_numbers(n, min) != Ordering::Greater {
            out.push(Issue::new(path, format!("expected more than {min}, found {n}")));
        }
    }
    if let Some(Value::Number(max)) = s.get("exclusiveMaximum") {
        if compare_numbers(n, max) != Ordering::Less {
            out.push(Issue::new(path, format!("expected less than {max}, found {n}")));
        }
    }
    if let Some(Value::Number(step)) = s.get("multipleOf") {
        if !is_multiple(n, step) {
            out.push(Issue::new(path, format!("expected a multiple of {step}, found {n}")));
        }
    }
}

/// Whether `n` is a multiple of `step`: exactly for integers, within a relative 1e-9 otherwise.
fn is_multiple(n: &Number, step: &Number) -> bool {
    match (exact_integer(n), exact_integer(step)) {
        (_, Some(0)) => true,
        (Some(x), Some(m)) => x % m == 0,
        _ => {
            let (x, m) = (n.as_f64().unwrap_or(0.0), step.as_f64().unwrap_or(0.0));
            if m <= 0.0 {
                return true;
            }
            let quotient = x / m;
            !quotient.is_finite() || (quotient - quotient.round()).abs() <= 1e-9 * quotient.abs().max(1.0)
        }
    }
}

fn check_string(s: &Map<String, Value>, text: &str, path: &str, out: &mut Vec<Issue>) {
    if s.contains_key("minLength") || s.contains_key("maxLength") {
        let length = text.chars().count();
        check_count(s, ("minLength", "maxLength"), length, ("character", "characters"), path, out);
    }
}

/// The `min…`/`max…` keywords (`keys`) that bound a count: items, properties or characters.
fn check_count(
    s: &Map<String, Value>,
    keys: (&str, &str),
    found: usize,
    unit: (&str, &str),
    path: &str,
    out: &mut Vec<Issue>,
) {
    let count = found as u64;
    if let Some(min) = s.get(keys.0).and_then(as_count).filter(|&min| count < min) {
        out.push(Issue::new(
            path,
            format!("expected at least {}, found {found}", plural(min as usize, unit.0, unit.1)),
        ));
    }
    if let Some(max) = s.get(keys.1).and_then(as_count).filter(|&max| count > max) {
        out.push(Issue::new(
            path,
            format!("expected at most {}, found {found}", plural(max as usize, unit.0, unit.1)),
        ));
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn errors(schema: Value, instance: Value) -> Vec<SchemaError> {
        Schema::new(schema).expect("valid schema").validate(&instance).err().unwrap_or_default()
    }

    #[track_caller]
    fn accepts(schema: Value, instance: Value) {
        let found = errors(schema, instance);
        assert!(found.is_empty(), "unexpected errors: {found:?}");
    }

    #[track_caller]
    fn rejects(schema: Value, instance: Value) -> SchemaError {
        let found = errors(schema, instance);
        assert!(!found.is_empty(), "expected an error");
        found[0].clone()
    }

    #[test]
    fn type_single_and_array() {
        accepts(json!({"type": "string"}), json!("x"));
        let e = rejects(json!({"type": "string"}), json!(3));
        assert_eq!(e.to_string(), "(root): expected string, found number 3");
        accepts(json!({"type": ["string", "null"]}), json!(null));
        let e = rejects(json!({"type": ["string", "number", "null"]}), json!(true));
        assert_eq!(e.message, "expected string, number or null, found boolean true");
        accepts(json!({"type": "object"}), json!({}));
        rejects(json!({"type": "object"}), json!([]));
        accepts(json!({"type": "array"}), json!([]));
        rejects(json!({"type": "array"}), json!({}));
        accepts(json!({"type": "boolean"}), json!(false));
        rejects(json!({"type": "boolean"}), json!(0));
        accepts(json!({"type": "null"}), json!(null));
        rejects(json!({"type": "null"}), json!(false));
        accepts(json!({"type": "number"}), json!(1.5));
        rejects(json!({"type": "number"}), json!("1.5"));
    }

    #[test]
    fn integer_means_no_fractional_part() {
        accepts(json!({"type": "integer"}), json!(1));
        accepts(json!({"type": "integer"}), json!(1.0));
        accepts(json!({"type": "integer"}), json!(u64::MAX));
        accepts(json!({"type": "integer"}), json!(-7));
        let e = rejects(json!({"type": "integer"}), json!(1.5));
        assert_eq!(e.message, "expected integer, found number 1.5");
    }

    #[test]
    fn malformed_keywords_are_ignored() {
        accepts(json!({"type": 7, "minimum": "3", "required": "a", "properties": []}), json!(1));
        accepts(json!({"type": "no-such-type"}), json!(1));
        accepts(json!({"pattern": "^a+$", "format": "email", "x-unknown": {"type": "string"}}), json!("bbb"));
    }

    #[test]
    fn schema_root_must_be_object_or_boolean() {
        assert!(Schema::new(json!([])).is_err());
        assert!(Schema::new(json!(3)).is_err());
        assert!(Schema::new(json!(true)).is_ok());
        assert!(Schema::lenient(json!(3)).is_valid(&json!("anything")));
    }

    #[test]
    fn boolean_schemas() {
        accepts(json!(true), json!({"a": 1}));
        rejects(json!(false), json!(null));
        accepts(json!({"properties": {"a": true}}), json!({"a": 1}));
        let e = rejects(json!({"properties": {"a": false}}), json!({"a": 1}));
        assert_eq!(e.instance_path, "/a");
    }

    #[test]
    fn properties_and_required() {
        let schema = json!({
            "type": "object",
            "properties": {"a": {"type": "number"}, "b/c~d": {"type": "string"}},
            "required": ["a"],
        });
        accepts(schema.clone(), json!({"a": 1, "b/c~d": "x"}));
        let e = rejects(schema.clone(), json!({}));
        assert_eq!(e.to_string(), "(root): missing required property `a`");
        let e = rejects(schema.clone(), json!({"a": 1, "b/c~d": 2}));
        assert_eq!(e.instance_path, "/b~1c~0d");
        // Properties are not checked on non-objects.
        accepts(json!({"properties": {"a": {"type": "number"}}, "required": ["a"]}), json!("x"));
    }

    #[test]
    fn additional_properties() {
        let closed = json!({"properties": {"a": {}}, "additionalProperties": false});
        accepts(closed.clone(), json!({"a": 1}));
        let e = rejects(closed, json!({"a": 1, "b": 2}));
        assert_eq!(e.message, "unexpected property `b` (additionalProperties is false)");
        let typed = json!({"properties": {"a": {}}, "additionalProperties": {"type": "string"}});
        accepts(typed.clone(), json!({"a": 1, "b": "x"}));
        assert_eq!(rejects(typed, json!({"a": 1, "b": 2})).instance_path, "/b");
        accepts(json!({"additionalProperties": true}), json!({"b": 2}));
    }

    #[test]
    fn pattern_properties_disable_additional_properties() {
        let schema = json!({"patternProperties": {"^x-": {"type": "string"}}, "additionalProperties": false});
        accepts(schema, json!({"x-a": 1, "other": 2}));
    }

    #[test]
    fn items_and_prefix_items() {
        let schema = json!({"type": "array", "items": {"type": "integer"}});
        accepts(schema.clone(), json!([1, 2, 3]));
        assert_eq!(rejects(schema, json!([1, "2"])).instance_path, "/1");
        let tuple =
            json!({"prefixItems": [{"type": "string"}, {"type": "number"}], "items": {"type": "boolean"}});
        accepts(tuple.clone(), json!(["a", 1, true, false]));
        accepts(tuple.clone(), json!(["a"]));
        assert_eq!(rejects(tuple.clone(), json!([1])).instance_path, "/0");
        assert_eq!(rejects(tuple, json!(["a", 1, 2])).instance_path, "/2");
        let draft7 = json!({"items": [{"type": "string"}], "additionalItems": false});
        accepts(draft7.clone(), json!(["a"]));
        assert_eq!(rejects(draft7, json!(["a", 1])).instance_path, "/1");
    }

    #[test]
    fn min_and_max_items() {
        let schema = json!({"minItems": 1, "maxItems": 2});
        accepts(schema.clone(), json!([1]));
        accepts(schema.clone(), json!([1, 2]));
        assert_eq!(rejects(schema.clone(), json!([])).message, "expected at least 1 item, found 0");
        assert_eq!(rejects(schema, json!([1, 2, 3])).message, "expected at most 2 items, found 3");
    }

    #[test]
    fn unique_items_and_contains() {
        accepts(json!({"uniqueItems": true}), json!([1, "1", [1]]));
        let e = rejects(json!({"uniqueItems": true}), json!([1, 2, 1.0]));
        assert_eq!(e.message, "items 0 and 2 are equal, but the items must be unique");
        accepts(json!({"contains": {"type": "string"}}), json!([1, "a"]));
        rejects(json!({"contains": {"type": "string"}}), json!([1, 2]));
    }

    #[test]
    fn enum_and_const() {
        let schema = json!({"enum": ["a", "b", 1]});
        accepts(schema.clone(), json!("a"));
        accepts(schema.clone(), json!(1.0));
        let e = rejects(schema, json!("c"));
        assert_eq!(e.message, r#"expected one of "a", "b", 1, found string "c""#);
        accepts(json!({"const": {"x": [1, 2]}}), json!({"x": [1.0, 2]}));
        let e = rejects(json!({"const": "text"}), json!("txt"));
        assert_eq!(e.message, r#"expected "text", found string "txt""#);
        accepts(json!({"const": null}), json!(null));
        rejects(json!({"const": null}), json!(0));
    }

    #[test]
    fn numeric_bounds() {
        let schema = json!({"minimum": 1, "maximum": 10});
        accepts(schema.clone(), json!(1));
        accepts(schema.clone(), json!(10.0));
        assert_eq!(rejects(schema.clone(), json!(0.5)).message, "expected at least 1, found 0.5");
        assert_eq!(rejects(schema, json!(11)).message, "expected at most 10, found 11");
        let exclusive = json!({"exclusiveMinimum": 0, "exclusiveMaximum": 1});
        accepts(exclusive.clone(), json!(0.5));
        assert_eq!(rejects(exclusive.clone(), json!(0)).message, "expected more than 0, found 0");
        rejects(exclusive, json!(1));
        let draft4 = json!({"minimum": 0, "exclusiveMinimum": true, "maximum": 1, "exclusiveMaximum": true});
        accepts(draft4.clone(), json!(0.5));
        rejects(draft4.clone(), json!(0));
        rejects(draft4, json!(1));
        // Large integers compare exactly.
        accepts(json!({"maximum": i64::MAX}), json!(i64::MAX));
        rejects(json!({"maximum": i64::MAX - 1}), json!(i64::MAX));
        accepts(json!({"minimum": 5}), json!("strings are not numbers"));
    }

    #[test]
    fn multiple_of() {
        accepts(json!({"multipleOf": 3}), json!(9));
        rejects(json!({"multipleOf": 3}), json!(10));
        accepts(json!({"multipleOf": 0.1}), json!(0.3));
        rejects(json!({"multipleOf": 0.1}), json!(0.35));
    }

    #[test]
    fn string_lengths_count_chars() {
        let schema = json!({"minLength": 2, "maxLength": 3});
        accepts(schema.clone(), json!("éé"));
        accepts(schema.clone(), json!("🦀🦀🦀"));
        assert_eq!(rejects(schema.clone(), json!("é")).message, "expected at least 2 characters, found 1");
        rejects(schema, json!("abcd"));
    }

    #[test]
    fn min_and_max_properties() {
        let schema = json!({"minProperties": 1, "maxProperties": 2});
        accepts(schema.clone(), json!({"a": 1}));
        assert_eq!(rejects(schema.clone(), json!({})).message, "expected at least 1 property, found 0");
        rejects(schema, json!({"a": 1, "b": 2, "c": 3}));
    }

    #[test]
    fn property_names() {
        let schema = json!({"propertyNames": {"maxLength": 3}});
        accepts(schema.clone(), json!({"abc": 1}));
        let e = rejects(schema, json!({"abcd": 1}));
        assert_eq!(e.instance_path, "/abcd");
        assert!(e.message.starts_with("invalid property name"), "{e}");
    }

    #[test]
    fn all_of() {
        let schema = json!({"allOf": [{"type": "number"}, {"minimum": 3}]});
        accepts(schema.clone(), json!(4));
        rejects(schema.clone(), json!(2));
        rejects(schema, json!("4"));
    }

    #[test]
    fn any_of_reports_the_closest_alternative() {
        let schema = json!({
            "$defs": {
                "Text": {"properties": {"type": {"const": "text"}, "text": {"type": "string"}}, "required": ["type", "text"]},
                "Image": {"properties": {"type": {"const": "image"}, "data": {"type": "string"}}, "required": ["type", "data"]},
            },
            "type": "array",
            "items": {"anyOf": [{"$ref": "#/$defs/Image"}, {"$ref": "#/$defs/Text"}]},
        });
        accepts(schema.clone(), json!([{"type": "text", "text": "hi"}, {"type": "image", "data": "AA=="}]));
        let found = errors(schema.clone(), json!([{"type": "text", "text": 3}]));
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].instance_path, "/0");
        assert_eq!(
            found[0].message,
            "matches none of the 2 alternatives of `anyOf`; the closest, `#/$defs/Text`, fails with: \
             at /0/text: expected string, found number 3"
        );
        let e = rejects(schema, json!([{"text": "hi"}]));
        assert!(e.message.contains("`#/$defs/Text`, fails with: missing required property `type`"), "{e}");
    }

    #[test]
    fn one_of() {
        let schema = json!({"oneOf": [{"type": "integer"}, {"minimum": 2}]});
        accepts(schema.clone(), json!(1));
        accepts(schema.clone(), json!(2.5));
        let e = rejects(schema.clone(), json!(3));
        assert_eq!(e.message, "matches 2 of the 2 alternatives of `oneOf` (#0 and #1), expected exactly one");
        let e = rejects(schema, json!(1.5));
        assert!(e.message.starts_with("matches none of the 2 alternatives of `oneOf`"), "{e}");
    }

    #[test]
    fn not_and_if_then_else() {
        accepts(json!({"not": {"type": "string"}}), json!(1));
        assert_eq!(
            rejects(json!({"not": {"type": "string"}}), json!("a")).message,
            "matches the schema in `not`"
        );
        let schema = json!({"if": {"type": "string"}, "then": {"minLength": 2}, "else": {"minimum": 0}});
        accepts(schema.clone(), json!("ab"));
        accepts(schema.clone(), json!(1));
        rejects(schema.clone(), json!("a"));
        rejects(schema, json!(-1));
    }

    #[test]
    fn refs_resolve_as_json_pointers() {
        let schema = json!({
            "definitions": {"A": {"type": "string"}},
            "$defs": {"a/b": {"type": "number"}, "c d": {"type": "boolean"}},
            "properties": {
                "x": {"$ref": "#/definitions/A"},
                "y": {"$ref": "#/$defs/a~1b"},
                "z": {"$ref": "#/$defs/c%20d"},
                "w": {"$ref": "#/properties/x"},
                "self": {"$ref": "#"},
            },
        });
        accepts(schema.clone(), json!({"x": "a", "y": 1, "z": true, "w": "b", "self": {"x": "c"}}));
        assert_eq!(rejects(schema.clone(), json!({"x": 1})).instance_path, "/x");
        assert_eq!(rejects(schema.clone(), json!({"y": "1"})).instance_path, "/y");
        assert_eq!(rejects(schema.clone(), json!({"z": 1})).instance_path, "/z");
        assert_eq!(rejects(schema.clone(), json!({"w": 1})).instance_path, "/w");
        assert_eq!(rejects(schema, json!({"self": {"self": {"x": 2}}})).instance_path, "/self/self/x");
    }

    #[test]
    fn ref_siblings_apply() {
        let schema = json!({"$defs": {"N": {"type": "number"}}, "$ref": "#/$defs/N", "minimum": 3});
        accepts(schema.clone(), json!(3));
        rejects(schema.clone(), json!(2));
        rejects(schema, json!("3"));
    }

    #[test]
    fn unresolvable_refs_are_rejected_up_front() {
        let error = Schema::new(json!({"properties": {"a": {"$ref": "#/$defs/Missing"}}})).unwrap_err();
        assert_eq!(error, "unresolvable `$ref` \"#/$defs/Missing\" at #/properties/a");
        assert!(Schema::new(json!({"$ref": "#anchor"})).is_err());
        // References to other documents are not followed.
        accepts(json!({"$ref": "https://example.com/schema.json"}), json!(1));
        // `enum` values are data, not schemas.
        assert!(Schema::new(json!({"enum": [{"$ref": "#/nowhere"}]})).is_ok());
    }

    #[test]
    fn reference_cycles_are_errors_not_overflows() {
        let e = rejects(json!({"$ref": "#"}), json!(1));
        assert!(e.message.contains("reference cycle"), "{e}");
        let schema = json!({"$defs": {"A": {"anyOf": [{"$ref": "#/$defs/B"}]}, "B": {"allOf": [{"$ref": "#/$defs/A"}]}}, "$ref": "#/$defs/A"});
        let e = rejects(schema, json!(1));
        assert!(e.message.contains("reference cycle"), "{e}");
        // A recursive schema that consumes the instance is fine, however deep.
        let tree = json!({"type": "object", "properties": {"child": {"$ref": "#"}}});
        let mut deep = json!({});
        for _ in 0..40 {
            deep = json!({"child": deep});
        }
        accepts(tree.clone(), deep.clone());
        let mut too_deep = deep;
        for _ in 0..300 {
            too_deep = json!({"child": too_deep});
        }
        assert!(rejects(tree, too_deep).message.contains("not checked"));
    }

    #[test]
    fn definitions_and_pointers() {
        let schema = Schema::new(json!({
            "$defs": {"Result": {"type": "object", "properties": {"n": {"type": "integer"}}}},
            "definitions": {"Old": {"type": "string"}},
        }))
        .unwrap();
        assert!(schema.validate_definition("Result", &json!({"n": 1})).is_ok());
        assert!(schema.validate_definition("Result", &json!({"n": 1.5})).is_err());
        assert!(schema.validate_definition("Old", &json!("x")).is_ok());
        let missing = schema.validate_definition("Nope", &json!(1)).unwrap_err();
        assert_eq!(missing[0].message, "the schema has no definition `Nope`");
        assert!(schema.validate_at("/$defs/Result/properties/n", &json!(2)).is_ok());
        assert!(schema.validate_at("#/$defs/Result/properties/n", &json!("2")).is_err());
        assert!(schema.validate_at("/nowhere", &json!(2)).is_err());
    }

    #[test]
    fn every_failure_is_reported() {
        let schema = json!({
            "properties": {"a": {"type": "string"}, "b": {"type": "string"}},
            "required": ["c"],
        });
        let found = errors(schema, json!({"a": 1, "b": 2}));
        let paths: Vec<&str> = found.iter().map(|e| e.instance_path.as_str()).collect();
        assert_eq!(paths, ["", "/a", "/b"]);
    }

    #[test]
    fn long_strings_are_shortened_in_messages() {
        let e = rejects(json!({"type": "number"}), json!("x".repeat(100)));
        assert!(e.message.len() < 80, "{e}");
        assert!(e.message.ends_with("…\""), "{e}");
    }
}
