//! Proptest strategies for tool and prompt arguments, derived from a JSON Schema (a tool's
//! `inputSchema`).
//!
//! - [`valid`]: arguments that satisfy the schema.
//! - [`boundary`]: valid arguments whose scalars sit at the edges (range limits, empty and very long
//!   strings, non-ASCII text, empty arrays…).
//! - [`invalid`]: arguments that break the schema in exactly one way, with a description of what was
//!   broken.
//!
//! ```
//! use mcp_conformance::arguments;
//! use proptest::strategy::{Strategy, ValueTree};
//! use proptest::test_runner::TestRunner;
//! use serde_json::json;
//!
//! let schema = json!({
//!     "type": "object",
//!     "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
//!     "required": ["a", "b"],
//! });
//! let mut runner = TestRunner::deterministic();
//! let value = arguments::valid(&schema).new_tree(&mut runner).unwrap().current();
//! assert!(value["a"].is_number() && value["b"].is_number());
//! let (broken, why) = arguments::invalid(&schema).unwrap().new_tree(&mut runner).unwrap().current();
//! println!("{broken} breaks the schema: {why}");
//! ```
//!
//! # What the generators understand
//!
//! `type` (without it, the type the other keywords imply), `const`, `enum`, `properties`,
//! `required`, `additionalProperties`, `minProperties`/`maxProperties`, `items`/`prefixItems`
//! (and draft-07 tuple `items`), `minItems`/`maxItems`, `uniqueItems`, the numeric bounds and
//! `multipleOf`, `minLength`/`maxLength`, local `$ref`s, `allOf` (merged into one schema) and
//! `anyOf`/`oneOf` (one alternative is picked). Strings follow `pattern` when proptest's regex
//! generator handles it (anchors are dropped; `\d`, `\w` and `\s` mean their ASCII classes, as in
//! ECMAScript), and a few `format`s (`date-time`, `date`, `time`, `email`, `uri`, `hostname`,
//! `uuid`, `ipv4`, `ipv6`).
//!
//! Values for a schema with keywords the generators do not construct (`not`, `oneOf`, `if`,
//! `contains`, `propertyNames`, `dependentRequired`, `dependentSchemas`, `uniqueItems`) are
//! filtered through [`crate::json_schema`]; a schema that rejects most values that way can make
//! proptest give up with "too many rejects".
//!
//! # Shapes
//!
//! - The root: MCP arguments are always an object, so a root schema that leaves the type open (`{}`)
//!   generates objects. Below the root, a schema that leaves the type open generates simple values
//!   (null, booleans, integers, strings).
//! - Nesting: deeper than [`MAX_DEPTH`] levels, objects get only their required properties and
//!   arrays their minimum number of items, so recursive schemas stay finite; a schema that requires
//!   infinite nesting has no valid value.
//! - A schema no value satisfies (`false`, an empty `enum`, `minimum` above `maximum`…): [`valid`]
//!   and [`boundary`] then generate `{}`, which the schema rejects, and [`invalid`] gives `None`.
//! - A malformed schema never panics: a keyword whose value has the wrong shape is ignored, and
//!   a schema that does not compile ([`crate::json_schema::compile`]) filters no value out.

use std::cmp::Ordering;
use std::sync::Arc;

use proptest::collection::vec;
use proptest::prelude::*;
use proptest::sample::select;
use proptest::strategy::Union;
use serde_json::{Map, Number, Value, json};

use crate::json_schema::{Schema, compare_numbers, describe, has_type, json_equal, resolve_ref};

/// How deeply objects and arrays nest before they are kept minimal (required properties only,
/// `minItems` items).
pub const MAX_DEPTH: usize = 4;

/// Past this depth nothing is generated: a schema needing deeper values has none.
const HARD_DEPTH: usize = MAX_DEPTH + 8;

/// How many `$ref`/`allOf` steps one schema may take to flatten.
const REF_BUDGET: usize = 32;

/// How many `anyOf`/`oneOf` expansions may nest without descending into the value.
const EXPANSION_BUDGET: usize = 8;

/// The length of the "very long" boundary string.
const LONG_STRING: usize = 10_000;

/// The longest string or array built to satisfy (or break) a length keyword.
const MAX_BUILT_LENGTH: u64 = 100_000;

/// Keywords whose constraints the generators do not construct: values are filtered instead.
const FILTERED: &[&str] = &[
    "not",
    "oneOf",
    "if",
    "contains",
    "propertyNames",
    "dependentRequired",
    "dependentSchemas",
    "uniqueItems",
];

/// The JSON Schema type names, in the order types are tried for a minimal value.
const TYPES: [&str; 7] = ["object", "array", "string", "integer", "number", "boolean", "null"];

/// Arguments that satisfy `schema` (the tool's `inputSchema`, whose own `$defs` resolve local
/// `$ref`s): required properties always present, optional ones sometimes; strings, numbers within
/// their bounds, enums, consts, nested objects and arrays; `anyOf` picks one alternative; where the
/// schema says nothing, simple JSON values.
pub fn valid(schema: &Value) -> BoxedStrategy<Value> {
    Gen::new(schema, Mode::Valid).root()
}

/// Valid arguments whose scalars sit at boundaries: the limits of numeric ranges (just inside when
/// exclusive), `0` and `-0.0`, `i64::MAX`/`i64::MIN` and 2^53 where unbounded; empty strings,
/// minimum- and maximum-length strings, a 10 000-character string where the length is unbounded,
/// non-ASCII text, emoji and control characters; arrays of the minimum and the maximum length (at
/// most 256 items; 16 more than the minimum where unbounded); the first and last value of an `enum`. Strings with a `pattern` or a known
/// `format` are generated as by [`valid`].
pub fn boundary(schema: &Value) -> BoxedStrategy<Value> {
    Gen::new(schema, Mode::Boundary).root()
}

/// Arguments that violate `schema` in exactly one way, each with what was broken (like
/// "required property `a` missing"): a required property missing, a property of the wrong type, a
/// number outside its bounds, a string or an array of the wrong length, a value not in its `enum`
/// or unlike its `const`, a non-object in place of the arguments object (when the schema says
/// `"type": "object"`), an unexpected extra property (only when `additionalProperties` is
/// `false`). Nested objects and arrays are broken the same way, down to [`MAX_DEPTH`].
///
/// `None` when the schema accepts anything (`{}`, `true`: nothing can be invalid), or when no valid
/// value can be built to start from. `{"type": "object"}` only gives non-objects.
///
/// Only values the schema rejects are kept ([`crate::json_schema`], the client's validator);
/// "exactly one way" is what the mutation meant to break: a string cut to break `maxLength` may
/// also stop matching a `pattern`. A schema that does not compile has no invalid arguments.
pub fn invalid(schema: &Value) -> Option<BoxedStrategy<(Value, String)>> {
    let generator = Gen::new(schema, Mode::Valid);
    let mutations = generator.mutations()?;
    let schema = Arc::clone(&generator.schema);
    Some(
        (generator.root(), select(mutations))
            .prop_map(|(value, mutation)| (mutation.apply(value), mutation.description))
            .prop_filter("a mutation must break the schema", move |(value, _)| !schema.is_valid(value))
            .boxed(),
    )
}

/// A schema with its `$ref` and `allOf` merged in.
type Flat = Map<String, Value>;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    Valid,
    Boundary,
}

/// Builds strategies for the parts of one schema document.
struct Gen {
    schema: Arc<Schema>,
    mode: Mode,
}

impl Gen {
    fn new(schema: &Value, mode: Mode) -> Self {
        Gen { schema: Arc::new(Schema::lenient(schema.clone())), mode }
    }

    fn root(&self) -> BoxedStrategy<Value> {
        self.node(self.schema.root(), 0, 0).unwrap_or_else(|| Just(json!({})).boxed())
    }

    fn accepts(&self, schema: &Value, value: &Value) -> bool {
        self.schema.validate_with(schema, value).is_ok()
    }

    /// `node` with its `$ref` and `allOf` merged in; `None` when it accepts nothing (`false`, or
    /// more references than [`REF_BUDGET`]).
    fn flatten(&self, node: &Value, budget: usize) -> Option<Flat> {
        match node {
            Value::Bool(false) => None,
            Value::Object(map) => {
                let budget = budget.checked_sub(1)?;
                let mut flat = map.clone();
                let reference = flat.remove("$ref");
                let all_of = flat.remove("allOf");
                if let Some(Value::String(reference)) = reference
                    && let Some(target) = resolve_ref(self.schema.root(), &reference)
                {
                    flat = merge(self.flatten(target, budget)?, flat);
                }
                if let Some(Value::Array(parts)) = all_of {
                    for part in &parts {
                        flat = merge(flat, self.flatten(part, budget)?);
                    }
                }
                Some(flat)
            }
            _ => Some(Flat::new()),
        }
    }

    // ---------------------------------------------------------------------------------------
    // Strategies
    // ---------------------------------------------------------------------------------------

    /// A strategy for values `node` accepts, `None` when it finds none.
    fn node(&self, node: &Value, depth: usize, steps: usize) -> Option<BoxedStrategy<Value>> {
        if depth > HARD_DEPTH {
            return None;
        }
        let flat = self.flatten(node, REF_BUDGET)?;
        let strategy = self.flat(&flat, depth, steps)?;
        if FILTERED.iter().any(|keyword| flat.contains_key(*keyword)) {
            let schema = Arc::clone(&self.schema);
            let node = node.clone();
            Some(
                strategy
                    .prop_filter("must satisfy the schema", move |v| schema.validate_with(&node, v).is_ok())
                    .boxed(),
            )
        } else {
            Some(strategy)
        }
    }

    fn flat(&self, flat: &Flat, depth: usize, steps: usize) -> Option<BoxedStrategy<Value>> {
        if steps > EXPANSION_BUDGET {
            return None;
        }
        if let Some((keyword, alternatives)) = alternatives(flat) {
            let mut rest = flat.clone();
            rest.remove(keyword);
            let branches: Vec<_> = alternatives
                .iter()
                .filter_map(|alternative| {
                    let branch = self.flatten(alternative, REF_BUDGET)?;
                    self.flat(&merge(rest.clone(), branch), depth, steps + 1)
                })
                .collect();
            return (!branches.is_empty()).then(|| Union::new(branches).boxed());
        }
        self.typed(flat, depth)
    }

    fn typed(&self, flat: &Flat, depth: usize) -> Option<BoxedStrategy<Value>> {
        let whole = Value::Object(flat.clone());
        if let Some(value) = flat.get("const") {
            return self.accepts(&whole, value).then(|| Just(value.clone()).boxed());
        }
        if let Some(Value::Array(options)) = flat.get("enum") {
            let options: Vec<Value> = options.iter().filter(|o| self.accepts(&whole, o)).cloned().collect();
            return match (self.mode, options.as_slice()) {
                (_, []) => None,
                (Mode::Boundary, [first, .., last]) => {
                    Some(select(vec![first.clone(), last.clone()]).boxed())
                }
                _ => Some(select(options).boxed()),
            };
        }
        let strategies: Vec<BoxedStrategy<Value>> = types_to_generate(flat, depth)
            .into_iter()
            .filter_map(|name| match name {
                "null" => Some(Just(Value::Null).boxed()),
                "boolean" => Some(any::<bool>().prop_map(Value::Bool).boxed()),
                "integer" => self.integer(flat),
                "number" => self.number(flat),
                "string" => self.string(flat),
                "array" => self.array(flat, depth),
                "object" => self.object(flat, depth),
                _ => None,
            })
            .collect();
        (!strategies.is_empty()).then(|| Union::new(strategies).boxed())
    }

    fn integer(&self, flat: &Flat) -> Option<BoxedStrategy<Value>> {
        let (lo, hi) = integer_bounds(flat)?;
        let step = integer_step(flat)?;
        let (k_lo, k_hi) = (div_ceil(lo, step), div_floor(hi, step));
        if k_lo > k_hi {
            return None;
        }
        let strategy = match self.mode {
            Mode::Valid => near_zero(k_lo, k_hi).prop_map(move |k| Value::from(k * step)).boxed(),
            Mode::Boundary => {
                let mut values = vec![k_lo * step, k_hi * step];
                for candidate in
                    INTEGER_EDGES.iter().copied().chain([lo.saturating_add(1), hi.saturating_sub(1)])
                {
                    if (lo..=hi).contains(&candidate) && candidate % step == 0 && !values.contains(&candidate)
                    {
                        values.push(candidate);
                    }
                }
                select(values).prop_map(Value::from).boxed()
            }
        };
        Some(strategy)
    }

    fn number(&self, flat: &Flat) -> Option<BoxedStrategy<Value>> {
        let (lo, hi) = float_bounds(flat)?;
        if let Some(step) =
            flat.get("multipleOf").and_then(Value::as_f64).filter(|m| *m > 0.0 && m.is_finite())
        {
            return self.float_multiples(flat, lo, hi, step);
        }
        let mut strategies = Vec::new();
        strategies.extend(self.integer(flat));
        match self.mode {
            Mode::Valid => {
                // Clamped so that `b - a` stays finite.
                let a = lo.unwrap_or_else(|| hi.map_or(-1e9, |hi| hi.min(0.0) - 1e9)).clamp(-1e307, 1e307);
                let b = hi.unwrap_or_else(|| a.max(0.0) + 1e9).clamp(-1e307, 1e307);
                match a.partial_cmp(&b) {
                    Some(Ordering::Less) => strategies.push((a..=b).prop_map(float_value).boxed()),
                    Some(Ordering::Equal) => strategies.push(Just(float_value(a)).boxed()),
                    _ => {}
                }
            }
            Mode::Boundary => {
                let in_range = |x: &f64| lo.is_none_or(|lo| *x >= lo) && hi.is_none_or(|hi| *x <= hi);
                let mut values: Vec<f64> = lo.into_iter().chain(hi).collect();
                values.extend(FLOAT_EDGES.iter().copied().filter(in_range));
                values.dedup_by(|a, b| a.to_bits() == b.to_bits());
                if !values.is_empty() {
                    strategies.push(select(values).prop_map(float_value).boxed());
                }
            }
        }
        (!strategies.is_empty()).then(|| Union::new(strategies).boxed())
    }

    /// Numbers `j * step` within `[lo, hi]`.
    fn float_multiples(
        &self,
        flat: &Flat,
        lo: Option<f64>,
        hi: Option<f64>,
        step: f64,
    ) -> Option<BoxedStrategy<Value>> {
        const LIMIT: f64 = 9_007_199_254_740_992.0;
        let (j_lo, j_hi) = match (lo.map(|lo| (lo / step).ceil()), hi.map(|hi| (hi / step).floor())) {
            (Some(j_lo), Some(j_hi)) => (j_lo, j_hi),
            (Some(j_lo), None) => (j_lo, j_lo + 2e6),
            (None, Some(j_hi)) => (j_hi - 2e6, j_hi),
            (None, None) => (-1e6, 1e6),
        };
        let (j_lo, j_hi) = (j_lo.clamp(-LIMIT, LIMIT) as i64, j_hi.clamp(-LIMIT, LIMIT) as i64);
        if j_lo > j_hi {
            return None;
        }
        let indices = match self.mode {
            Mode::Valid => near_zero(j_lo, j_hi),
            Mode::Boundary => {
                let mut edges = vec![j_lo, j_hi];
                if (j_lo..=j_hi).contains(&0) {
                    edges.push(0);
                }
                select(edges).boxed()
            }
        };
        let whole = Value::Object(flat.clone());
        let schema = Arc::clone(&self.schema);
        Some(
            indices
                .prop_map(move |j| multiple_value(j, step))
                .prop_filter("rounding must keep the multiple in range", move |v| {
                    schema.validate_with(&whole, v).is_ok()
                })
                .boxed(),
        )
    }

    fn string(&self, flat: &Flat) -> Option<BoxedStrategy<Value>> {
        let min = count(flat, "minLength").unwrap_or(0);
        let max = count(flat, "maxLength");
        if max.is_some_and(|max| max < min) || min > MAX_BUILT_LENGTH {
            return None;
        }
        let special = flat
            .get("pattern")
            .and_then(Value::as_str)
            .and_then(pattern_strategy)
            .or_else(|| flat.get("format").and_then(Value::as_str).and_then(format_strategy));
        if let Some(special) = special {
            let fits = move |s: &String| {
                let n = s.chars().count() as u64;
                n >= min && max.is_none_or(|max| n <= max)
            };
            return Some(special.prop_filter("length must fit", fits).prop_map(Value::String).boxed());
        }
        let (min, max) = (min as usize, max.map(|max| max.min(MAX_BUILT_LENGTH) as usize));
        let strategy = match self.mode {
            Mode::Valid => {
                let hi = max.unwrap_or(usize::MAX).min(min + 32);
                vec(text_char(), min..=hi)
                    .prop_map(|chars| Value::String(chars.into_iter().collect()))
                    .boxed()
            }
            Mode::Boundary => {
                let mut samples: Vec<String> = STRING_EDGES.iter().map(|s| (*s).to_owned()).collect();
                match max {
                    Some(max) => {
                        samples.push("x".repeat(max));
                        samples.push("é".repeat(max));
                    }
                    None => samples.push("x".repeat(LONG_STRING.max(min))),
                }
                let mut values: Vec<String> = Vec::new();
                for sample in samples {
                    let fitted = fit_length(&sample, min, max);
                    if !values.contains(&fitted) {
                        values.push(fitted);
                    }
                }
                select(values).prop_map(Value::String).boxed()
            }
        };
        Some(strategy)
    }

    fn array(&self, flat: &Flat, depth: usize) -> Option<BoxedStrategy<Value>> {
        let min = count(flat, "minItems").unwrap_or(0);
        let max = count(flat, "maxItems");
        if max.is_some_and(|max| max < min) || min > 1000 {
            return None;
        }
        let min = min as usize;
        let max = max.map(|max| max.min(1000) as usize);
        let (prefix, rest) = item_schemas(flat);
        let child = depth + 1;
        let longest = if depth >= MAX_DEPTH {
            min
        } else {
            match self.mode {
                Mode::Valid => max.unwrap_or(usize::MAX).min(min + 4),
                Mode::Boundary => max.map_or(min + 16, |max| max.min(min.max(256))),
            }
        };
        let prefix: Vec<BoxedStrategy<Value>> =
            prefix.iter().take(longest).map_while(|schema| self.node(schema, child, 0)).collect();
        let rest = if longest > prefix.len() { self.node(&rest, child, 0) } else { None };
        let sequences = match self.mode {
            Mode::Valid => sequence(&prefix, rest.as_ref(), min, longest).into_iter().collect::<Vec<_>>(),
            Mode::Boundary => {
                let mut lengths = vec![min, longest];
                lengths.dedup();
                lengths.into_iter().filter_map(|n| sequence(&prefix, rest.as_ref(), n, n)).collect()
            }
        };
        if sequences.is_empty() {
            return None;
        }
        let unique = flat.get("uniqueItems") == Some(&Value::Bool(true));
        Some(
            Union::new(sequences)
                .prop_map(move |mut items| {
                    if unique {
                        let mut kept: Vec<Value> = Vec::with_capacity(items.len());
                        for item in items.drain(..) {
                            if !kept.iter().any(|k| json_equal(k, &item)) {
                                kept.push(item);
                            }
                        }
                        items = kept;
                    }
                    Value::Array(items)
                })
                .boxed(),
        )
    }

    fn object(&self, flat: &Flat, depth: usize) -> Option<BoxedStrategy<Value>> {
        let shape = ObjectShape::of(flat);
        let child = depth + 1;
        let minimal = depth >= MAX_DEPTH;
        if shape.max.is_some_and(|max| shape.required.len() > max) {
            return None;
        }
        let mut names: Vec<(String, bool)> = Vec::new();
        let mut entries: Vec<BoxedStrategy<(bool, Value)>> = Vec::new();
        for name in &shape.required {
            let strategy = self.node(&shape.schema_of(name), child, 0)?;
            names.push((name.clone(), true));
            entries.push(strategy.prop_map(|value| (true, value)).boxed());
        }
        if !minimal || shape.min > shape.required.len() {
            for (name, schema) in &shape.properties {
                if shape.required.contains(name) {
                    continue;
                }
                let Some(strategy) = self.node(schema, child, 0) else { continue };
                let presence = if minimal { Just(false).boxed() } else { any::<bool>().boxed() };
                names.push((name.clone(), false));
                entries.push((presence, strategy).boxed());
            }
        }
        let fillers_needed = shape.min.saturating_sub(names.len()).min(64);
        let fillers = if fillers_needed == 0 {
            Just(Vec::new()).boxed()
        } else if shape.closed {
            return None;
        } else {
            vec(self.node(&shape.additional, child, 0)?, fillers_needed..=fillers_needed).boxed()
        };
        let filler_names = shape.fresh_names(fillers_needed);
        let (min, max) = (shape.min, shape.max);
        Some(
            (entries, fillers)
                .prop_map(move |(values, fillers)| {
                    let mut present: Vec<bool> = values.iter().map(|(present, _)| *present).collect();
                    let mut count = present.iter().filter(|p| **p).count();
                    // Top up to minProperties with optional properties, then trim to maxProperties.
                    for p in present.iter_mut().filter(|p| !**p) {
                        if count >= min {
                            break;
                        }
                        *p = true;
                        count += 1;
                    }
                    if let Some(max) = max {
                        for (i, p) in present.iter_mut().enumerate().rev() {
                            if count > max && *p && !names[i].1 {
                                *p = false;
                                count -= 1;
                            }
                        }
                    }
                    let mut object = Map::new();
                    for (((name, _), (_, value)), present) in names.iter().zip(values).zip(present) {
                        if present {
                            object.insert(name.clone(), value);
                        }
                    }
                    for (name, value) in filler_names.iter().zip(fillers) {
                        if object.len() >= min {
                            break;
                        }
                        object.insert(name.clone(), value);
                    }
                    Value::Object(object)
                })
                .boxed(),
        )
    }

    // ---------------------------------------------------------------------------------------
    // Minimal values
    // ---------------------------------------------------------------------------------------

    /// A small value `node` accepts, built without randomness; `None` when none is found.
    fn minimal(&self, node: &Value, depth: usize, steps: usize) -> Option<Value> {
        if depth > HARD_DEPTH || steps > EXPANSION_BUDGET {
            return None;
        }
        let flat = self.flatten(node, REF_BUDGET)?;
        let value = self.minimal_flat(&flat, depth, steps)?;
        self.accepts(node, &value).then_some(value)
    }

    fn minimal_flat(&self, flat: &Flat, depth: usize, steps: usize) -> Option<Value> {
        if steps > EXPANSION_BUDGET {
            return None;
        }
        let whole = Value::Object(flat.clone());
        if let Some((keyword, alternatives)) = alternatives(flat) {
            let mut rest = flat.clone();
            rest.remove(keyword);
            return alternatives.iter().find_map(|alternative| {
                let branch = merge(rest.clone(), self.flatten(alternative, REF_BUDGET)?);
                let value = self.minimal_flat(&branch, depth, steps + 1)?;
                self.accepts(&whole, &value).then_some(value)
            });
        }
        if let Some(value) = flat.get("const") {
            return Some(value.clone());
        }
        if let Some(Value::Array(options)) = flat.get("enum") {
            return options.iter().find(|o| self.accepts(&whole, o)).cloned();
        }
        let mut types = types_to_generate(flat, depth);
        types.sort_by_key(|t| TYPES.iter().position(|n| n == t));
        types
            .into_iter()
            .filter_map(|name| self.minimal_of_type(flat, name, depth))
            .find(|v| self.accepts(&whole, v))
    }

    fn minimal_of_type(&self, flat: &Flat, name: &str, depth: usize) -> Option<Value> {
        let child = depth + 1;
        match name {
            "null" => Some(Value::Null),
            "boolean" => Some(Value::Bool(false)),
            "integer" | "number" => {
                if let Some((lo, hi)) = integer_bounds(flat)
                    && let Some(step) = integer_step(flat)
                {
                    let (k_lo, k_hi) = (div_ceil(lo, step), div_floor(hi, step));
                    if k_lo <= k_hi {
                        return Some(Value::from(0.clamp(k_lo, k_hi) * step));
                    }
                }
                if name == "integer" {
                    return None;
                }
                let (lo, hi) = float_bounds(flat)?;
                let x = lo.unwrap_or(f64::MIN).max(hi.unwrap_or(f64::MAX).min(0.0));
                Some(float_value(x))
            }
            "string" => Some(Value::String(
                "x".repeat(count(flat, "minLength").unwrap_or(0).min(MAX_BUILT_LENGTH) as usize),
            )),
            "array" => {
                let min = count(flat, "minItems").unwrap_or(0).min(1000) as usize;
                let (prefix, rest) = item_schemas(flat);
                let items = (0..min)
                    .map(|i| self.minimal(prefix.get(i).unwrap_or(&rest), child, 0))
                    .collect::<Option<Vec<Value>>>()?;
                Some(Value::Array(items))
            }
            "object" => {
                let shape = ObjectShape::of(flat);
                let mut object = Map::new();
                for name in &shape.required {
                    object.insert(name.clone(), self.minimal(&shape.schema_of(name), child, 0)?);
                }
                for (name, schema) in &shape.properties {
                    if object.len() >= shape.min {
                        break;
                    }
                    if !object.contains_key(name) {
                        object.extend(self.minimal(schema, child, 0).map(|v| (name.clone(), v)));
                    }
                }
                if object.len() < shape.min && !shape.closed {
                    for name in shape.fresh_names(shape.min - object.len()) {
                        object.insert(name, self.minimal(&shape.additional, child, 0)?);
                    }
                }
                Some(Value::Object(object))
            }
            _ => None,
        }
    }

    // ---------------------------------------------------------------------------------------
    // Mutations
    // ---------------------------------------------------------------------------------------

    /// The ways to break the root schema, each checked against a minimal valid value; `None` when
    /// there are none or no valid value is found.
    fn mutations(&self) -> Option<Vec<Mutation>> {
        let root = self.schema.root();
        let base = self.minimal(root, 0, 0)?;
        let mut mutations = Vec::new();
        self.collect_mutations(root, &[], None, 0, &mut mutations);
        let mut seen: Vec<String> = Vec::new();
        mutations.retain(|m| {
            let new = !seen.contains(&m.description) && !self.schema.is_valid(&m.apply(base.clone()));
            if new {
                seen.push(m.description.clone());
            }
            new
        });
        (!mutations.is_empty()).then_some(mutations)
    }

    /// Collects the ways to break `node`, the schema of the value at `path` (named `label`).
    fn collect_mutations(
        &self,
        node: &Value,
        path: &[Step],
        label: Option<&str>,
        depth: usize,
        out: &mut Vec<Mutation>,
    ) {
        let Some(flat) = self.flatten(node, REF_BUDGET) else { return };
        let what = label.map_or_else(|| "the arguments".to_owned(), |label| format!("`{label}`"));
        let verb = if label.is_some() { "has" } else { "have" };
        let mut push =
            |op: Op, description: String| out.push(Mutation { path: path.to_vec(), op, description });

        // A value of another type.
        let declared = declared_types(&flat);
        if !declared.is_empty() {
            let (candidates, limit) = if path.is_empty() {
                (vec![json!(null), json!([]), json!("text"), json!(12345)], 3)
            } else {
                (vec![json!(null), json!("text"), json!(12345), json!(true), json!([]), json!({})], 2)
            };
            let wrong = candidates
                .iter()
                .filter(|c| !declared.iter().any(|t| has_type(c, t) || (*t == "integer" && c.is_number())))
                .filter(|c| !self.accepts(node, c))
                .take(limit);
            for candidate in wrong {
                let expected = declared.join(" or ");
                push(
                    Op::Replace(candidate.clone()),
                    format!("{what} {verb} the wrong type: {} instead of {expected}", describe(candidate)),
                );
            }
        }
        // Only what the schema says: the simple values generated where it says nothing are no
        // constraint to break.
        let types = constrained_types(&flat);
        let has = |name: &str| types.contains(&name);

        // A value other than the one allowed.
        if let Some(constant) = flat.get("const")
            && let Some(other) = other_than(constant)
        {
            push(Op::Replace(other.clone()), format!("{what} is {other} instead of the constant {constant}"));
        }
        if let Some(Value::Array(options)) = flat.get("enum")
            && let Some(other) = outside_enum(options)
        {
            push(Op::Replace(other.clone()), format!("{what} is {other}, which is not in the enum"));
        }

        // Numbers out of bounds, and fractions for integers.
        if has("integer") || has("number") {
            let integer_only = has("integer") && !has("number");
            let flag = |key: &str| flat.get(key) == Some(&Value::Bool(true));
            let bounds = [
                ("minimum", false, !flag("exclusiveMinimum")),
                ("exclusiveMinimum", false, false),
                ("maximum", true, !flag("exclusiveMaximum")),
                ("exclusiveMaximum", true, false),
            ];
            for (keyword, up, inclusive) in bounds {
                let Some(Value::Number(bound)) = flat.get(keyword) else { continue };
                let Some(value) = beyond(bound, up, inclusive, &flat, integer_only) else { continue };
                let description = match (up, inclusive) {
                    (false, true) => format!("{what} is {value}, below the minimum {bound}"),
                    (false, false) => format!("{what} is {value}, not above the exclusive minimum {bound}"),
                    (true, true) => format!("{what} is {value}, above the maximum {bound}"),
                    (true, false) => format!("{what} is {value}, not below the exclusive maximum {bound}"),
                };
                push(Op::Replace(value), description);
            }
            if integer_only
                && !flat.contains_key("multipleOf")
                && let Some((lo, hi)) = integer_bounds(&flat)
            {
                let near = 0.clamp(lo, hi);
                let fraction = if near < hi {
                    Some(near as f64 + 0.5)
                } else if near > lo {
                    Some(near as f64 - 0.5)
                } else {
                    None
                };
                if let Some(fraction) = fraction.filter(|f| f.abs() < 1e15) {
                    let fraction = float_value(fraction);
                    push(Op::Replace(fraction.clone()), format!("{what} is {fraction}, not an integer"));
                }
            }
        }

        // Strings of the wrong length.
        if has("string") {
            if let Some(min) = count(&flat, "minLength").filter(|n| (1..=MAX_BUILT_LENGTH).contains(n)) {
                let short = min as usize - 1;
                push(
                    Op::Replace(Value::String("x".repeat(short))),
                    format!("{what} is {short} characters long, shorter than minLength {min}"),
                );
            }
            if let Some(max) = count(&flat, "maxLength").filter(|n| *n < MAX_BUILT_LENGTH) {
                let long = max as usize + 1;
                push(
                    Op::Replace(Value::String("x".repeat(long))),
                    format!("{what} is {long} characters long, longer than maxLength {max}"),
                );
            }
        }

        // Arrays of the wrong length, and broken items.
        let (prefix, rest) = item_schemas(&flat);
        let max_items = count(&flat, "maxItems");
        if has("array") {
            if let Some(min) = count(&flat, "minItems").filter(|n| (1..=1000).contains(n)) {
                let fewer = min as usize - 1;
                push(Op::Truncate(fewer), format!("{what} has {fewer} items, fewer than minItems {min}"));
            }
            let unique = flat.get("uniqueItems") == Some(&Value::Bool(true));
            if let Some(max) = max_items.filter(|n| *n < 1000 && !unique)
                && let Some(item) = self.minimal(&rest, depth + 1, 0)
            {
                let more = max as usize + 1;
                push(Op::Extend(more, item), format!("{what} has {more} items, more than maxItems {max}"));
            }
        }

        // Objects missing a required property or with an unexpected one.
        let shape = ObjectShape::of(&flat);
        if has("object") {
            let of = label.map_or_else(String::new, |label| format!(" from `{label}`"));
            for name in &shape.required {
                push(Op::Remove(name.clone()), format!("required property `{name}` missing{of}"));
            }
            let extra = shape.fresh_names(1).remove(0);
            let into = label.map_or_else(String::new, |label| format!(" in `{label}`"));
            if shape.closed {
                push(
                    Op::Insert(extra.clone(), json!("surprise")),
                    format!("unexpected property `{extra}`{into} (additionalProperties is false)"),
                );
            } else if shape.additional.is_object() && !flat.contains_key("patternProperties") {
                let wrong = [json!(null), json!("text"), json!(12345), json!({})]
                    .into_iter()
                    .find(|c| !self.accepts(&shape.additional, c));
                if let Some(wrong) = wrong {
                    push(
                        Op::Insert(extra.clone(), wrong),
                        format!("extra property `{extra}`{into} does not match additionalProperties"),
                    );
                }
            }
        }

        // The same, one level down.
        if depth >= MAX_DEPTH {
            return;
        }
        let join = |suffix: &str| label.map_or_else(|| suffix.to_owned(), |label| format!("{label}{suffix}"));
        if has("object") {
            for (name, schema) in &shape.properties {
                let Some(default) = self.minimal(schema, depth + 1, 0) else { continue };
                let mut inner = path.to_vec();
                inner.push(Step::Key(name.clone(), default));
                let inner_label = if label.is_some() { join(&format!(".{name}")) } else { name.clone() };
                self.collect_mutations(schema, &inner, Some(&inner_label), depth + 1, out);
            }
        }
        if has("array")
            && prefix.is_empty()
            && max_items != Some(0)
            && let Some(default) = self.minimal(&rest, depth + 1, 0)
        {
            let mut inner = path.to_vec();
            inner.push(Step::First(default));
            self.collect_mutations(&rest, &inner, Some(&join("[0]")), depth + 1, out);
        }
    }
}

/// What an object schema says about properties.
struct ObjectShape {
    properties: Map<String, Value>,
    required: Vec<String>,
    /// The schema of properties not in `properties` (`true` when absent).
    additional: Value,
    /// Whether properties outside `properties` are forbidden.
    closed: bool,
    min: usize,
    max: Option<usize>,
}

impl ObjectShape {
    fn of(flat: &Flat) -> Self {
        let properties = flat.get("properties").and_then(Value::as_object).cloned().unwrap_or_default();
        let mut required: Vec<String> = Vec::new();
        for name in
            flat.get("required").and_then(Value::as_array).into_iter().flatten().filter_map(Value::as_str)
        {
            if !required.iter().any(|r| r == name) {
                required.push(name.to_owned());
            }
        }
        let additional = flat.get("additionalProperties").cloned().unwrap_or(Value::Bool(true));
        let closed = additional == Value::Bool(false) && !flat.contains_key("patternProperties");
        let min = count(flat, "minProperties").unwrap_or(0).min(1000) as usize;
        let max = count(flat, "maxProperties").map(|max| max.min(u64::from(u32::MAX)) as usize);
        ObjectShape { properties, required, additional, closed, min, max }
    }

    /// The schema of the property `name`.
    fn schema_of(&self, name: &str) -> Value {
        match self.properties.get(name) {
            Some(schema) => schema.clone(),
            None if self.closed => Value::Bool(false),
            None => self.additional.clone(),
        }
    }

    /// `n` property names not in `properties`.
    fn fresh_names(&self, n: usize) -> Vec<String> {
        (1..)
            .map(|i| format!("extra{i}"))
            .filter(|name| !self.properties.contains_key(name))
            .take(n)
            .collect()
    }
}

/// One step from a value to a part of it; the value to insert when the part is missing.
#[derive(Debug, Clone)]
enum Step {
    Key(String, Value),
    First(Value),
}

/// What a mutation does to the value it reaches.
#[derive(Debug, Clone)]
enum Op {
    Replace(Value),
    Remove(String),
    Insert(String, Value),
    Truncate(usize),
    Extend(usize, Value),
}

/// One way to break a valid value.
#[derive(Debug, Clone)]
struct Mutation {
    path: Vec<Step>,
    op: Op,
    description: String,
}

impl Mutation {
    fn apply(&self, mut value: Value) -> Value {
        if let Some(target) = navigate(&mut value, &self.path) {
            match &self.op {
                Op::Replace(replacement) => *target = replacement.clone(),
                Op::Remove(key) => {
                    if let Some(object) = target.as_object_mut() {
                        object.remove(key);
                    }
                }
                Op::Insert(key, inserted) => {
                    if let Some(object) = target.as_object_mut() {
                        object.insert(key.clone(), inserted.clone());
                    }
                }
                Op::Truncate(len) => {
                    if let Some(items) = target.as_array_mut() {
                        items.truncate(*len);
                    }
                }
                Op::Extend(len, item) => {
                    if let Some(items) = target.as_array_mut() {
                        let len = (*len).max(items.len());
                        items.resize(len, item.clone());
                    }
                }
            }
        }
        value
    }
}

/// The part of `value` at `path`, inserting the parts that are missing.
fn navigate<'v>(mut target: &'v mut Value, path: &[Step]) -> Option<&'v mut Value> {
    for step in path {
        target = match step {
            Step::Key(key, default) => {
                target.as_object_mut()?.entry(key.clone()).or_insert_with(|| default.clone())
            }
            Step::First(default) => {
                let items = target.as_array_mut()?;
                if items.is_empty() {
                    items.push(default.clone());
                }
                &mut items[0]
            }
        };
    }
    Some(target)
}

// -------------------------------------------------------------------------------------------
// Schema helpers
// -------------------------------------------------------------------------------------------

const OBJECT_KEYWORDS: &[&str] = &[
    "properties",
    "required",
    "additionalProperties",
    "patternProperties",
    "minProperties",
    "maxProperties",
];
const ARRAY_KEYWORDS: &[&str] =
    &["items", "prefixItems", "additionalItems", "minItems", "maxItems", "uniqueItems"];
const STRING_KEYWORDS: &[&str] = &["minLength", "maxLength", "pattern", "format"];
const NUMBER_KEYWORDS: &[&str] =
    &["minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"];

/// The known type names `flat` declares.
fn declared_types(flat: &Flat) -> Vec<&'static str> {
    let names: Vec<&str> = match flat.get("type") {
        Some(Value::String(name)) => vec![name.as_str()],
        Some(Value::Array(names)) => names.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    };
    let mut known: Vec<&'static str> = Vec::new();
    for name in names {
        if let Some(known_name) = TYPES.iter().find(|t| **t == name)
            && !known.contains(known_name)
        {
            known.push(known_name);
        }
    }
    known
}

/// The types to generate for `flat`: those it declares, else those its keywords imply, else
/// an object at the root and simple values below.
fn types_to_generate(flat: &Flat, depth: usize) -> Vec<&'static str> {
    if let Some(Value::Array(names)) = flat.get("type")
        && names.is_empty()
    {
        return Vec::new();
    }
    let implied = constrained_types(flat);
    match (implied.is_empty(), depth) {
        (false, _) => implied,
        (true, 0) => vec!["object"],
        (true, _) => vec!["null", "boolean", "integer", "string"],
    }
}

/// The types `flat` declares, or else those its keywords imply (`minimum` implies a number…).
fn constrained_types(flat: &Flat) -> Vec<&'static str> {
    let declared = declared_types(flat);
    if !declared.is_empty() {
        return declared;
    }
    [
        ("object", OBJECT_KEYWORDS),
        ("array", ARRAY_KEYWORDS),
        ("string", STRING_KEYWORDS),
        ("number", NUMBER_KEYWORDS),
    ]
    .into_iter()
    .filter(|(_, keywords)| keywords.iter().any(|k| flat.contains_key(*k)))
    .map(|(name, _)| name)
    .collect()
}

/// The first non-empty `anyOf` or `oneOf` of `flat`.
fn alternatives(flat: &Flat) -> Option<(&'static str, &Vec<Value>)> {
    ["anyOf", "oneOf"].into_iter().find_map(|keyword| match flat.get(keyword) {
        Some(Value::Array(alternatives)) if !alternatives.is_empty() => Some((keyword, alternatives)),
        _ => None,
    })
}

/// The schemas of an array's first items (`prefixItems`, or draft-07 tuple `items`) and of the
/// items after them.
fn item_schemas(flat: &Flat) -> (Vec<Value>, Value) {
    let anything = Value::Bool(true);
    match (flat.get("prefixItems"), flat.get("items")) {
        (Some(Value::Array(prefix)), items) => {
            (prefix.clone(), items.filter(|i| !i.is_array()).cloned().unwrap_or(anything))
        }
        (_, Some(Value::Array(tuple))) => {
            (tuple.clone(), flat.get("additionalItems").cloned().unwrap_or(anything))
        }
        (_, Some(items)) => (Vec::new(), items.clone()),
        (_, None) => (Vec::new(), anything),
    }
}

/// Merges two schemas into one that accepts what both accept (as far as generation goes).
fn merge(mut a: Flat, b: Flat) -> Flat {
    for (key, right) in b {
        let Some(left) = a.remove(&key) else {
            a.insert(key, right);
            continue;
        };
        let merged = match key.as_str() {
            "type" => merge_types(left, right),
            "properties" => match (left, right) {
                (Value::Object(mut left), Value::Object(right)) => {
                    for (name, schema) in right {
                        let combined = match left.remove(&name) {
                            Some(existing) => json!({"allOf": [existing, schema]}),
                            None => schema,
                        };
                        left.insert(name, combined);
                    }
                    Value::Object(left)
                }
                (left, _) => left,
            },
            "required" => match (left, right) {
                (Value::Array(mut left), Value::Array(right)) => {
                    for name in right {
                        if !left.contains(&name) {
                            left.push(name);
                        }
                    }
                    Value::Array(left)
                }
                (left, _) => left,
            },
            "minimum" | "exclusiveMinimum" | "minLength" | "minItems" | "minProperties" => {
                stricter(left, right, Ordering::Greater)
            }
            "maximum" | "exclusiveMaximum" | "maxLength" | "maxItems" | "maxProperties" => {
                stricter(left, right, Ordering::Less)
            }
            "enum" => match (left, right) {
                (Value::Array(left), Value::Array(right)) => Value::Array(
                    left.into_iter().filter(|v| right.iter().any(|r| json_equal(v, r))).collect(),
                ),
                (left, _) => left,
            },
            "const" => {
                if !json_equal(&left, &right) {
                    a.insert("enum".to_owned(), json!([]));
                }
                left
            }
            "additionalProperties" | "items" | "additionalItems" => {
                if left == Value::Bool(false) || right == Value::Bool(false) {
                    Value::Bool(false)
                } else if left.is_array() || right.is_array() {
                    left
                } else {
                    json!({"allOf": [left, right]})
                }
            }
            "anyOf" | "oneOf" => match (left, right) {
                (Value::Array(left), Value::Array(right)) if left.len() * right.len() <= 16 => Value::Array(
                    left.iter().flat_map(|l| right.iter().map(move |r| json!({"allOf": [l, r]}))).collect(),
                ),
                (left, _) => left,
            },
            "not" => json!({"anyOf": [left, right]}),
            _ => left,
        };
        a.insert(key, merged);
    }
    a
}

fn merge_types(left: Value, right: Value) -> Value {
    let names = |v: &Value| -> Option<Vec<String>> {
        match v {
            Value::String(name) => Some(vec![name.clone()]),
            Value::Array(names) => Some(names.iter().filter_map(Value::as_str).map(str::to_owned).collect()),
            _ => None,
        }
    };
    let (Some(l), Some(r)) = (names(&left), names(&right)) else {
        return if names(&left).is_some() { left } else { right };
    };
    let mut both: Vec<Value> = Vec::new();
    for name in &l {
        let kept = if r.contains(name) {
            Some(name.as_str())
        } else if (name == "integer" && r.iter().any(|n| n == "number"))
            || (name == "number" && r.iter().any(|n| n == "integer"))
        {
            Some("integer")
        } else {
            None
        };
        if let Some(kept) = kept {
            let kept = Value::String(kept.to_owned());
            if !both.contains(&kept) {
                both.push(kept);
            }
        }
    }
    Value::Array(both)
}

/// The stricter of two numeric bounds: the greater for a minimum, the lesser for a maximum.
fn stricter(left: Value, right: Value, stricter_is: Ordering) -> Value {
    match (&left, &right) {
        (Value::Number(l), Value::Number(r)) if compare_numbers(r, l) == stricter_is => right,
        (Value::Number(_), _) => left,
        (_, Value::Number(_)) => right,
        _ => left,
    }
}

/// A non-negative integer keyword (`3` or `3.0`).
fn count(flat: &Flat, key: &str) -> Option<u64> {
    let Some(Value::Number(n)) = flat.get(key) else { return None };
    n.as_u64().or_else(|| {
        let f = n.as_f64()?;
        (f >= 0.0 && f.fract() == 0.0 && f < 1.8e19).then_some(f as u64)
    })
}

fn floor_i128(n: &Number) -> i128 {
    match (n.as_i64(), n.as_u64()) {
        (Some(i), _) => i.into(),
        (_, Some(u)) => u.into(),
        _ => n.as_f64().unwrap_or(0.0).floor() as i128,
    }
}

fn ceil_i128(n: &Number) -> i128 {
    match (n.as_i64(), n.as_u64()) {
        (Some(i), _) => i.into(),
        (_, Some(u)) => u.into(),
        _ => n.as_f64().unwrap_or(0.0).ceil() as i128,
    }
}

/// The closed range of integers the numeric bounds allow, within `i64`.
fn integer_bounds(flat: &Flat) -> Option<(i64, i64)> {
    let flag = |key: &str| flat.get(key) == Some(&Value::Bool(true));
    let number = |key: &str| flat.get(key).and_then(Value::as_number);
    let mut lo = i128::from(i64::MIN);
    let mut hi = i128::from(i64::MAX);
    if let Some(min) = number("minimum") {
        lo = lo.max(if flag("exclusiveMinimum") { floor_i128(min) + 1 } else { ceil_i128(min) });
    }
    if let Some(min) = number("exclusiveMinimum") {
        lo = lo.max(floor_i128(min) + 1);
    }
    if let Some(max) = number("maximum") {
        hi = hi.min(if flag("exclusiveMaximum") { ceil_i128(max) - 1 } else { floor_i128(max) });
    }
    if let Some(max) = number("exclusiveMaximum") {
        hi = hi.min(ceil_i128(max) - 1);
    }
    let lo = i64::try_from(lo.max(i64::MIN.into())).ok()?;
    let hi = i64::try_from(hi.min(i64::MAX.into())).ok()?;
    (lo <= hi).then_some((lo, hi))
}

/// The step between generated integers: `multipleOf` when it is an integer, the least integer
/// multiple of it otherwise; `None` when there is no such multiple (up to 1000).
fn integer_step(flat: &Flat) -> Option<i64> {
    let Some(step) = flat.get("multipleOf").and_then(Value::as_number) else { return Some(1) };
    if let Some(step) = step.as_i64() {
        return Some(if step > 0 { step } else { 1 });
    }
    let step = step.as_f64()?;
    if !(step > 0.0 && step.is_finite()) {
        return Some(1);
    }
    (1..=1000).find(|k| {
        let q = *k as f64 / step;
        (q - q.round()).abs() <= 1e-9 * q.abs().max(1.0)
    })
}

fn div_floor<T: DivInt>(a: T, b: T) -> T {
    let (q, r) = (a / b, a % b);
    if r != T::ZERO && (r < T::ZERO) != (b < T::ZERO) { q - T::ONE } else { q }
}

fn div_ceil<T: DivInt>(a: T, b: T) -> T {
    let (q, r) = (a / b, a % b);
    if r != T::ZERO && (r < T::ZERO) == (b < T::ZERO) { q + T::ONE } else { q }
}

/// The integer types [`div_floor`] and [`div_ceil`] work on.
trait DivInt:
    Copy
    + PartialOrd
    + std::ops::Div<Output = Self>
    + std::ops::Rem<Output = Self>
    + std::ops::Add<Output = Self>
    + std::ops::Sub<Output = Self>
{
    const ZERO: Self;
    const ONE: Self;
}

impl DivInt for i64 {
    const ZERO: Self = 0;
    const ONE: Self = 1;
}

impl DivInt for i128 {
    const ZERO: Self = 0;
    const ONE: Self = 1;
}

/// The closed range of floats the numeric bounds allow (`None` for no bound); `None` when empty.
fn float_bounds(flat: &Flat) -> Option<(Option<f64>, Option<f64>)> {
    let flag = |key: &str| flat.get(key) == Some(&Value::Bool(true));
    let number = |key: &str| flat.get(key).and_then(Value::as_f64).filter(|f| f.is_finite());
    let mut lo: Option<f64> = None;
    let mut hi: Option<f64> = None;
    let mut raise = |bound: f64| lo = Some(lo.map_or(bound, |lo| lo.max(bound)));
    if let Some(min) = number("minimum") {
        raise(if flag("exclusiveMinimum") { next_up(min) } else { min });
    }
    if let Some(min) = number("exclusiveMinimum") {
        raise(next_up(min));
    }
    let mut lower = |bound: f64| hi = Some(hi.map_or(bound, |hi| hi.min(bound)));
    if let Some(max) = number("maximum") {
        lower(if flag("exclusiveMaximum") { next_down(max) } else { max });
    }
    if let Some(max) = number("exclusiveMaximum") {
        lower(next_down(max));
    }
    match (lo, hi) {
        (Some(lo), Some(hi)) if lo > hi => None,
        bounds => Some(bounds),
    }
}

/// The least float greater than `x` (`f64::next_up`, stable only from Rust 1.86).
fn next_up(x: f64) -> f64 {
    if x.is_nan() || x == f64::INFINITY {
        x
    } else if x == 0.0 {
        f64::from_bits(1)
    } else if x > 0.0 {
        f64::from_bits(x.to_bits() + 1)
    } else {
        f64::from_bits(x.to_bits() - 1)
    }
}

fn next_down(x: f64) -> f64 {
    -next_up(-x)
}

fn float_value(x: f64) -> Value {
    Number::from_f64(x).map_or(Value::Null, Value::Number)
}

/// `j * step`, as an integer when it is one.
fn multiple_value(j: i64, step: f64) -> Value {
    if step.fract() == 0.0
        && step.abs() < 9e15
        && let Some(product) = j.checked_mul(step as i64)
    {
        return Value::from(product);
    }
    float_value(j as f64 * step)
}

/// The value nearest to `bound` on its wrong side (past an inclusive bound, on an exclusive one):
/// lower when `up` is false, higher when it is true. It stays a multiple of `multipleOf`, and an
/// integer for `integer_only` types or integral bounds; `None` when it cannot be represented.
fn beyond(bound: &Number, up: bool, inclusive: bool, flat: &Flat, integer_only: bool) -> Option<Value> {
    let f = bound.as_f64()?;
    let float_step = flat.get("multipleOf").and_then(Value::as_f64).filter(|m| *m > 0.0 && m.is_finite());
    let integral = f.fract() == 0.0 && float_step.is_none_or(|m| m.fract() == 0.0);
    if (integer_only || integral) && f.abs() < 9e18 {
        let step = i128::from(integer_step(flat)?);
        let k = match (up, inclusive) {
            (true, true) => div_floor(floor_i128(bound), step) + 1,
            (true, false) => div_ceil(ceil_i128(bound), step),
            (false, true) => div_ceil(ceil_i128(bound), step) - 1,
            (false, false) => div_floor(floor_i128(bound), step),
        };
        let n = k.checked_mul(step)?;
        return i64::try_from(n).map(Value::from).or_else(|_| u64::try_from(n).map(Value::from)).ok();
    }
    let value = match float_step {
        Some(step) => {
            let q = f / step;
            let k = match (up, inclusive) {
                (true, true) => q.floor() + 1.0,
                (true, false) => q.ceil(),
                (false, true) => q.ceil() - 1.0,
                (false, false) => q.floor(),
            };
            k * step
        }
        None if !inclusive => f,
        None => {
            let moved = if up { f + 1.0 } else { f - 1.0 };
            if moved != f {
                moved
            } else if up {
                next_up(f)
            } else {
                next_down(f)
            }
        }
    };
    value.is_finite().then(|| float_value(value))
}

/// A value of the same type as `constant` but different; `None` if none comes to mind.
fn other_than(constant: &Value) -> Option<Value> {
    let other = match constant {
        Value::String(s) => Value::String(format!("{s}-other")),
        Value::Number(n) => match n.as_i64() {
            Some(i) => Value::from(i.checked_add(1).unwrap_or(i - 1)),
            None => float_value(n.as_f64()? + 1.0),
        },
        Value::Bool(b) => Value::Bool(!b),
        Value::Null => json!(0),
        Value::Array(items) if items.is_empty() => json!([0]),
        Value::Array(_) => json!([]),
        Value::Object(map) if map.is_empty() => json!({"other": 0}),
        Value::Object(_) => json!({}),
    };
    (!json_equal(&other, constant)).then_some(other)
}

/// A value not among `options`, of the type of the first option where possible.
fn outside_enum(options: &[Value]) -> Option<Value> {
    let taken = |v: &Value| options.iter().any(|o| json_equal(o, v));
    let mut candidates: Vec<Value> = Vec::new();
    match options.first() {
        Some(Value::Number(_)) => {
            let greatest = options.iter().filter_map(Value::as_f64).fold(f64::MIN, f64::max);
            if options.iter().all(|o| o.is_i64()) {
                candidates
                    .push(Value::from(options.iter().filter_map(Value::as_i64).max()?.saturating_add(1)));
            }
            candidates.push(float_value(greatest + 1.0));
        }
        Some(Value::Bool(_)) => candidates.extend([json!(true), json!(false)]),
        _ => {
            let mut text = "not-in-enum".to_owned();
            while taken(&Value::String(text.clone())) {
                text.push('!');
            }
            candidates.push(Value::String(text));
        }
    }
    candidates.push(Value::Null);
    candidates.into_iter().find(|c| !taken(c))
}

// -------------------------------------------------------------------------------------------
// Value helpers
// -------------------------------------------------------------------------------------------

const INTEGER_EDGES: &[i64] =
    &[0, 1, -1, i32::MAX as i64, i32::MIN as i64, 1 << 53, -(1 << 53), (1 << 53) + 1, i64::MAX, i64::MIN];

const FLOAT_EDGES: &[f64] = &[
    0.0,
    -0.0,
    0.5,
    -0.5,
    0.1,
    1e-300,
    f64::MIN_POSITIVE,
    5e-324,
    9_007_199_254_740_992.0,
    -9_007_199_254_740_992.0,
    1e300,
    f64::MAX,
    f64::MIN,
];

const STRING_EDGES: &[&str] = &[
    "",
    " ",
    "héllo wörld",
    "日本語のテキスト",
    "🦀🎉👍🏽",
    "👩‍👩‍👧‍👦",
    "مرحبا بالعالم",
    "e\u{301}",
    "\u{0}",
    "line\nbreak\ttab \"quotes\" \\ / <b>&amp;</b> '",
    "null",
    "0",
    "true",
];

/// Integers in `[lo, hi]`, mostly near zero.
fn near_zero(lo: i64, hi: i64) -> BoxedStrategy<i64> {
    let (near_lo, near_hi) = (lo.max(-1000), hi.min(1000));
    if near_lo <= near_hi && (near_lo, near_hi) != (lo, hi) {
        prop_oneof![4 => near_lo..=near_hi, 1 => lo..=hi].boxed()
    } else {
        (lo..=hi).boxed()
    }
}

/// Characters for generated text: mostly ASCII letters and digits, sometimes any character.
fn text_char() -> BoxedStrategy<char> {
    prop_oneof![
        10 => proptest::char::range('a', 'z'),
        3 => proptest::char::range('A', 'Z'),
        3 => proptest::char::range('0', '9'),
        2 => Just(' '),
        1 => any::<char>(),
    ]
    .boxed()
}

/// `text` cut or padded (with `x`) to between `min` and `max` characters.
fn fit_length(text: &str, min: usize, max: Option<usize>) -> String {
    let mut fitted: String = text.chars().take(max.unwrap_or(usize::MAX)).collect();
    let length = fitted.chars().count();
    if length < min {
        fitted.extend(std::iter::repeat_n('x', min - length));
    }
    fitted
}

/// Sequences of `lo..=hi` items: the first ones from `prefix`, the others from `rest`.
fn sequence(
    prefix: &[BoxedStrategy<Value>],
    rest: Option<&BoxedStrategy<Value>>,
    lo: usize,
    hi: usize,
) -> Option<BoxedStrategy<Vec<Value>>> {
    let mut options: Vec<BoxedStrategy<Vec<Value>>> = Vec::new();
    for used in lo.min(prefix.len())..=hi.min(prefix.len()) {
        if used < prefix.len() {
            if used >= lo {
                options.push(prefix[..used].to_vec().boxed());
            }
        } else if let Some(rest) = rest.filter(|_| hi > used) {
            let tail = vec(rest.clone(), lo.saturating_sub(used)..=hi - used);
            options.push(
                (prefix.to_vec(), tail)
                    .prop_map(|(mut head, tail)| {
                        head.extend(tail);
                        head
                    })
                    .boxed(),
            );
        } else if lo <= used {
            options.push(prefix.to_vec().boxed());
        }
    }
    (!options.is_empty()).then(|| Union::new(options).boxed())
}

/// Strings matching an ECMAScript `pattern`, when proptest's regex generator handles it.
fn pattern_strategy(pattern: &str) -> Option<BoxedStrategy<String>> {
    let body = pattern.strip_prefix('^').unwrap_or(pattern);
    let body = match body.strip_suffix('$') {
        Some(stripped) if !stripped.ends_with('\\') => stripped,
        _ => body,
    };
    let mut translated = String::with_capacity(body.len());
    let mut in_class = false;
    let mut chars = body.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                let escaped = chars.next()?;
                let class = match escaped {
                    'd' => Some("0-9"),
                    'w' => Some("A-Za-z0-9_"),
                    's' => Some(" \\t\\n\\r"),
                    _ => None,
                };
                match (class, in_class) {
                    (Some(class), true) => translated.push_str(class),
                    (Some(class), false) => {
                        translated.push('[');
                        translated.push_str(class);
                        translated.push(']');
                    }
                    (None, _) => {
                        translated.push('\\');
                        translated.push(escaped);
                    }
                }
            }
            '[' if !in_class => {
                in_class = true;
                translated.push(c);
            }
            ']' if in_class => {
                in_class = false;
                translated.push(c);
            }
            _ => translated.push(c),
        }
    }
    proptest::string::string_regex(&translated).ok().map(|strategy| strategy.boxed())
}

/// Strings in a few common `format`s.
fn format_strategy(format: &str) -> Option<BoxedStrategy<String>> {
    let word = |max: usize| {
        vec(proptest::char::range('a', 'z'), 1..=max).prop_map(|chars| chars.into_iter().collect::<String>())
    };
    let date = (1970u32..=2099, 1u32..=12, 1u32..=28);
    let time = (0u32..24, 0u32..60, 0u32..60);
    let strategy = match format {
        "date-time" => (date, time)
            .prop_map(|((y, mo, d), (h, mi, s))| format!("{y:04}-{mo:02}-{d:02}T{h:02}:{mi:02}:{s:02}Z"))
            .boxed(),
        "date" => date.prop_map(|(y, mo, d)| format!("{y:04}-{mo:02}-{d:02}")).boxed(),
        "time" => time.prop_map(|(h, mi, s)| format!("{h:02}:{mi:02}:{s:02}Z")).boxed(),
        "email" | "idn-email" => word(10).prop_map(|local| format!("{local}@example.com")).boxed(),
        "uri" | "url" | "iri" | "uri-reference" | "iri-reference" => {
            word(10).prop_map(|path| format!("https://example.com/{path}")).boxed()
        }
        "hostname" | "idn-hostname" => word(10).prop_map(|host| format!("{host}.example.com")).boxed(),
        "uuid" => any::<u128>()
            .prop_map(|n| {
                format!(
                    "{:08x}-{:04x}-{:04x}-{:04x}-{:012x}",
                    n >> 96,
                    (n >> 80) & 0xffff,
                    (n >> 64) & 0xffff,
                    (n >> 48) & 0xffff,
                    n & 0xffff_ffff_ffff
                )
            })
            .boxed(),
        "ipv4" => any::<[u8; 4]>().prop_map(|[a, b, c, d]| format!("{a}.{b}.{c}.{d}")).boxed(),
        "ipv6" => any::<[u16; 8]>()
            .prop_map(|parts| parts.iter().map(|p| format!("{p:x}")).collect::<Vec<_>>().join(":"))
            .boxed(),
        _ => return None,
    };
    Some(strategy)
}

#[cfg(test)]
mod tests {
    use proptest::strategy::ValueTree;
    use proptest::test_runner::{Config, TestRunner};

    use super::*;

    const CASES: u32 = 200;

    fn schemas() -> Vec<(&'static str, Value)> {
        vec![
            (
                "two required numbers",
                json!({
                    "type": "object",
                    "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
                    "required": ["a", "b"],
                }),
            ),
            (
                "string enum",
                json!({
                    "type": "object",
                    "properties": {"color": {"type": "string", "enum": ["red", "green", "blue"]}},
                    "required": ["color"],
                }),
            ),
            (
                "nested object with bounded integers",
                json!({
                    "type": "object",
                    "properties": {
                        "outer": {
                            "type": "object",
                            "properties": {
                                "values": {
                                    "type": "array",
                                    "items": {"type": "integer", "minimum": -5, "maximum": 5},
                                    "minItems": 1,
                                    "maxItems": 3,
                                },
                                "label": {"type": "string", "minLength": 2, "maxLength": 4},
                                "ratio": {"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 1},
                            },
                            "required": ["values"],
                            "additionalProperties": false,
                        },
                        "flag": {"type": "boolean"},
                    },
                    "required": ["outer"],
                    "additionalProperties": false,
                }),
            ),
            (
                "anyOf",
                json!({
                    "type": "object",
                    "properties": {
                        "v": {"anyOf": [{"type": "string", "maxLength": 3}, {"type": "integer", "minimum": 10}]},
                        "w": {"type": ["string", "null"]},
                    },
                    "required": ["v"],
                }),
            ),
            (
                "refs, formats and unique items",
                json!({
                    "$defs": {
                        "Point": {
                            "type": "object",
                            "properties": {"x": {"type": "number", "minimum": 0}, "y": {"type": "number"}},
                            "required": ["x", "y"],
                        },
                    },
                    "type": "object",
                    "properties": {
                        "p": {"$ref": "#/$defs/Point"},
                        "tags": {"type": "array", "items": {"type": "string", "format": "email"}, "uniqueItems": true},
                        "when": {"type": "string", "format": "date-time"},
                    },
                    "required": ["p"],
                }),
            ),
            (
                "recursive tree",
                json!({
                    "type": "object",
                    "properties": {
                        "name": {"type": "string", "maxLength": 8},
                        "children": {"type": "array", "items": {"$ref": "#"}},
                    },
                    "required": ["name"],
                }),
            ),
            (
                "allOf, const, multipleOf and oneOf",
                json!({
                    "allOf": [
                        {"type": "object", "properties": {"kind": {"const": "x"}}, "required": ["kind"]},
                        {"properties": {"n": {"type": "integer", "multipleOf": 5, "maximum": 100}}, "required": ["n"]},
                    ],
                    "properties": {
                        "step": {"type": "number", "multipleOf": 0.25, "minimum": -1, "maximum": 1},
                        "choice": {"oneOf": [{"type": "integer"}, {"type": "number", "minimum": 0.5}]},
                    },
                }),
            ),
            (
                "min and max properties",
                json!({
                    "type": "object",
                    "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}, "c": {"type": "integer"}},
                    "minProperties": 2,
                    "maxProperties": 2,
                }),
            ),
            (
                "tuple and not",
                json!({
                    "type": "object",
                    "properties": {
                        "pair": {"type": "array", "prefixItems": [{"type": "string"}, {"type": "integer"}], "items": false, "minItems": 1},
                        "other": {"not": {"type": "string"}},
                    },
                    "required": ["pair"],
                }),
            ),
            ("empty", json!({})),
            ("any object", json!({"type": "object"})),
        ]
    }

    fn runner() -> TestRunner {
        TestRunner::new_with_rng(
            Config { cases: CASES, failure_persistence: None, ..Config::default() },
            proptest::test_runner::TestRng::deterministic_rng(proptest::test_runner::RngAlgorithm::ChaCha),
        )
    }

    /// Draws `CASES` values from `strategy`.
    fn draw<T: std::fmt::Debug>(strategy: &BoxedStrategy<T>) -> Vec<T> {
        let mut runner = runner();
        (0..CASES).map(|_| strategy.new_tree(&mut runner).expect("a value").current()).collect()
    }

    #[test]
    fn valid_arguments_validate() {
        for (name, schema) in schemas() {
            let validator = Schema::new(schema.clone()).unwrap();
            for value in draw(&valid(&schema)) {
                if let Err(errors) = validator.validate(&value) {
                    panic!("{name}: {value} is invalid: {errors:?}");
                }
            }
        }
    }

    #[test]
    fn boundary_arguments_validate() {
        for (name, schema) in schemas() {
            let validator = Schema::new(schema.clone()).unwrap();
            for value in draw(&boundary(&schema)) {
                if let Err(errors) = validator.validate(&value) {
                    panic!("{name}: {value} is invalid: {errors:?}");
                }
            }
        }
    }

    #[test]
    fn valid_arguments_are_objects_and_vary() {
        for (name, schema) in schemas() {
            let values = draw(&valid(&schema));
            assert!(values.iter().all(Value::is_object), "{name}");
            if name != "empty" && name != "any object" {
                let distinct = values.iter().filter(|v| **v != values[0]).count();
                assert!(distinct > 0, "{name}: always {}", values[0]);
            }
        }
    }

    #[test]
    fn every_mutation_breaks_every_valid_value() {
        for (name, schema) in schemas() {
            let generator = Gen::new(&schema, Mode::Valid);
            let validator = Schema::new(schema.clone()).unwrap();
            let Some(mutations) = generator.mutations() else { continue };
            for value in draw(&valid(&schema)).into_iter().take(50) {
                for mutation in &mutations {
                    let broken = mutation.apply(value.clone());
                    assert!(
                        !validator.is_valid(&broken),
                        "{name}: `{}` applied to {value} gives the valid {broken}",
                        mutation.description
                    );
                }
            }
        }
    }

    #[test]
    fn invalid_arguments_do_not_validate() {
        for (name, schema) in schemas() {
            let validator = Schema::new(schema.clone()).unwrap();
            let Some(strategy) = invalid(&schema) else {
                assert!(name == "empty", "{name}: no invalid arguments");
                continue;
            };
            for (value, why) in draw(&strategy) {
                assert!(!validator.is_valid(&value), "{name}: {value} ({why}) is valid");
                assert!(!why.is_empty());
            }
        }
    }

    fn descriptions(schema: &Value) -> Vec<String> {
        Gen::new(schema, Mode::Valid)
            .mutations()
            .unwrap_or_default()
            .into_iter()
            .map(|m| m.description)
            .collect()
    }

    #[test]
    fn invalid_covers_the_expected_ways() {
        let two = &schemas()[0].1;
        let found = descriptions(two);
        assert!(found.contains(&"required property `a` missing".to_owned()), "{found:?}");
        assert!(found.contains(&"required property `b` missing".to_owned()), "{found:?}");
        assert!(found.contains(&"`a` has the wrong type: null instead of number".to_owned()), "{found:?}");
        assert!(
            found.contains(&"the arguments have the wrong type: null instead of object".to_owned()),
            "{found:?}"
        );

        let color = &schemas()[1].1;
        let found = descriptions(color);
        assert!(
            found.contains(&"`color` is \"not-in-enum\", which is not in the enum".to_owned()),
            "{found:?}"
        );
        // Where the schema declares no type, there is no type to break.
        let untyped = json!({"properties": {"n": {"enum": [1, 2]}, "v": {"anyOf": [{"type": "string"}]}}});
        assert_eq!(descriptions(&untyped), ["`n` is 3, which is not in the enum"]);

        let nested = &schemas()[2].1;
        let found = descriptions(nested);
        for expected in [
            "`outer.values[0]` is 6, above the maximum 5",
            "`outer.values[0]` is -6, below the minimum -5",
            "`outer.values[0]` is 0.5, not an integer",
            "`outer.values` has 0 items, fewer than minItems 1",
            "`outer.values` has 4 items, more than maxItems 3",
            "`outer.label` is 1 characters long, shorter than minLength 2",
            "`outer.ratio` is 0, not above the exclusive minimum 0",
            "required property `values` missing from `outer`",
            "unexpected property `extra1` (additionalProperties is false)",
            "unexpected property `extra1` in `outer` (additionalProperties is false)",
        ] {
            assert!(found.contains(&expected.to_owned()), "{expected}: {found:?}");
        }
    }

    #[test]
    fn open_schemas_have_no_invalid_arguments() {
        assert!(invalid(&json!({})).is_none());
        assert!(invalid(&json!(true)).is_none());
        assert!(invalid(&json!({"properties": {"a": {}}})).is_none());
        // Only non-objects break `{"type": "object"}`.
        let found = descriptions(&json!({"type": "object"}));
        assert_eq!(found.len(), 3, "{found:?}");
        assert!(found.iter().all(|d| d.starts_with("the arguments have the wrong type")), "{found:?}");
    }

    #[test]
    fn boundary_hits_the_edges() {
        let schema = json!({
            "type": "object",
            "properties": {
                "n": {"type": "integer", "minimum": 1, "maximum": 10},
                "free": {"type": "integer"},
                "s": {"type": "string"},
                "e": {"enum": ["first", "middle", "last"]},
                "list": {"type": "array", "items": {"type": "boolean"}},
            },
            "required": ["n", "free", "s", "e", "list"],
        });
        let values = draw(&boundary(&schema));
        let seen = |key: &str, wanted: Value| values.iter().any(|v| v[key] == wanted);
        assert!(seen("n", json!(1)) && seen("n", json!(10)));
        assert!(
            seen("free", json!(i64::MAX)) && seen("free", json!(i64::MIN)) && seen("free", json!(1i64 << 53))
        );
        assert!(seen("s", json!("")));
        assert!(values.iter().any(|v| v["s"].as_str().is_some_and(|s| s.chars().count() == LONG_STRING)));
        assert!(values.iter().any(|v| v["s"].as_str().is_some_and(|s| !s.is_ascii())));
        assert!(seen("e", json!("first")) && seen("e", json!("last")) && !seen("e", json!("middle")));
        assert!(seen("list", json!([])));
        let numbers = draw(&boundary(
            &json!({"type": "object", "properties": {"x": {"type": "number"}}, "required": ["x"]}),
        ));
        assert!(numbers.iter().any(|v| v["x"].as_f64().is_some_and(|x| x == 0.0 && x.is_sign_negative())));
    }

    #[test]
    fn patterns_are_followed_with_ascii_digits() {
        let schema = json!({
            "type": "object",
            "properties": {"code": {"type": "string", "pattern": "^[A-Z]{3}-\\d{2}$"}},
            "required": ["code"],
        });
        for value in draw(&valid(&schema)) {
            let code = value["code"].as_str().unwrap().as_bytes();
            assert_eq!(code.len(), 6, "{value}");
            assert!(code[..3].iter().all(u8::is_ascii_uppercase) && code[3] == b'-', "{value}");
            assert!(code[4..].iter().all(u8::is_ascii_digit), "{value}");
        }
    }

    #[test]
    fn recursion_is_bounded() {
        let tree = &schemas()[5].1;
        let depth = |mut v: &Value| {
            let mut depth = 0;
            while let Some(child) = v.get("children").and_then(|c| c.get(0)) {
                v = child;
                depth += 1;
            }
            depth
        };
        for value in draw(&valid(tree)) {
            assert!(depth(&value) <= MAX_DEPTH, "{value}");
        }
        // A schema that requires infinite nesting has no valid value.
        let endless = json!({"type": "object", "properties": {"next": {"$ref": "#"}}, "required": ["next"]});
        assert_eq!(draw(&valid(&endless))[0], json!({}));
        assert!(invalid(&endless).is_none());
    }

    #[test]
    fn malformed_schemas_do_not_panic() {
        let weird = [
            json!(3),
            json!("object"),
            json!([]),
            json!(null),
            json!(false),
            json!({"type": 5}),
            json!({"type": []}),
            json!({"type": ["object", "nonsense"]}),
            json!({"properties": 3, "required": [1, {}]}),
            json!({"type": "object", "properties": {"a": 7}, "required": ["a"]}),
            json!({"type": "object", "required": ["a"], "additionalProperties": false}),
            json!({"items": "x", "minItems": "2"}),
            json!({"type": "object", "properties": {"a": {"type": "array", "minItems": 5, "maxItems": 1}}, "required": ["a"]}),
            json!({"type": "object", "properties": {"a": {"type": "integer", "minimum": 10, "maximum": 1}}}),
            json!({"type": "object", "properties": {"a": {"type": "integer", "multipleOf": 0.7}}}),
            json!({"type": "object", "properties": {"a": {"type": "number", "multipleOf": -2}}}),
            json!({"type": "object", "properties": {"a": {"type": "integer", "minimum": 1e300}}}),
            json!({"type": "object", "properties": {"a": {"type": "string", "minLength": 1e30}}}),
            json!({"type": "object", "properties": {"a": {"type": "string", "pattern": "(unclosed"}}}),
            json!({"type": "object", "properties": {"a": {"enum": []}}}),
            json!({"type": "object", "properties": {"a": {"enum": "x"}}}),
            json!({"$ref": "#/nowhere"}),
            json!({"$ref": "#"}),
            json!({"anyOf": []}),
            json!({"anyOf": [{"$ref": "#"}, {"$ref": "#"}]}),
            json!({"oneOf": "x", "allOf": {}, "not": 3}),
            json!({"type": "object", "minProperties": 3, "additionalProperties": false}),
            json!({"type": "object", "maxProperties": 0, "required": ["a"]}),
            json!({"type": "object", "properties": {"a": {"const": 1, "type": "string"}}}),
        ];
        for schema in weird {
            let mut runner = runner();
            for strategy in [valid(&schema), boundary(&schema)] {
                for _ in 0..20 {
                    // Rejections are fine; panics are not.
                    let _ = strategy.new_tree(&mut runner).map(|tree| tree.current());
                }
            }
            if let Some(strategy) = invalid(&schema) {
                for _ in 0..20 {
                    let _ = strategy.new_tree(&mut runner).map(|tree| tree.current());
                }
            }
        }
    }

    #[test]
    fn shrinking_drops_optional_properties() {
        let schema = json!({
            "type": "object",
            "properties": {"a": {"type": "integer"}, "b": {"type": "string"}, "c": {"type": "boolean"}},
            "required": ["a"],
        });
        let mut runner = runner();
        let result = runner.run(&valid(&schema), |value| {
            prop_assert!(value.get("a").and_then(Value::as_i64).is_some_and(|a| a < 100));
            Ok(())
        });
        let Err(proptest::test_runner::TestError::Fail(_, minimal)) = result else {
            panic!("expected a failure, got {result:?}")
        };
        assert_eq!(minimal, json!({"a": 100}));
    }
}
