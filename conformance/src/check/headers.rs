//! The `Mcp-Param-*` headers of a 2026-07-28 tool call over HTTP, as the spec words them
//! (Streamable HTTP, "Custom Headers from Tool Parameters"). Written here apart from the
//! engine's copy (`mcp_sansio::http`'s tool headers), so that `check` stays an independent
//! oracle of what a conforming client sends:
//!
//! - an annotation is the `x-mcp-header` member of a property schema reached from the root
//!   through `properties` keys alone; its value is the name after `Mcp-Param-`, a non-empty
//!   RFC 9110 token, unique in the schema ignoring case, on a property of type `string`,
//!   `integer` or `boolean`. One anywhere else, or one that breaks a rule, makes the tool
//!   invalid: a client leaves it out of the tool list and never calls it.
//! - the header's value is the argument at the annotation's exact path (nested objects
//!   included), when there is one and it is not `null`: a string as is (Base64-wrapped when it
//!   is not plain printable ASCII), an integer in decimal, a boolean as `true` or `false`.

use serde_json::Value;

/// One annotated argument: where it sits in the arguments (its chain of property names) and
/// its header's name after `Mcp-Param-`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Annotation {
    path: Vec<String>,
    name: String,
}

/// The keywords whose values are data, not subschemas: an `x-mcp-header` member inside them
/// annotates nothing.
const DATA_KEYWORDS: [&str; 4] = ["const", "enum", "default", "examples"];

/// The annotations of a tool's input schema, or why the tool is invalid.
pub(crate) fn annotations(schema: &Value) -> Result<Vec<Annotation>, String> {
    let mut found = Vec::new();
    visit(schema, &mut Vec::new(), true, &mut found)?;
    for (i, a) in found.iter().enumerate() {
        if found[..i].iter().any(|b| b.name.eq_ignore_ascii_case(&a.name)) {
            return Err(format!("x-mcp-header {:?} is used twice (names are case-insensitive)", a.name));
        }
    }
    Ok(found)
}

/// Looks for annotations in `schema`, reached through `path`; `chain` says whether every step
/// so far was a `properties` key.
fn visit(
    schema: &Value,
    path: &mut Vec<String>,
    chain: bool,
    found: &mut Vec<Annotation>,
) -> Result<(), String> {
    let members = match schema {
        Value::Object(members) => members,
        Value::Array(items) => {
            return items.iter().try_for_each(|item| visit(item, path, false, found));
        }
        _ => return Ok(()),
    };
    if let Some(annotation) = members.get("x-mcp-header") {
        let at = path.join(".");
        if !chain || path.is_empty() {
            return Err(format!("x-mcp-header at {at:?} is not reached through `properties` alone"));
        }
        let name = annotation.as_str().ok_or_else(|| format!("x-mcp-header at {at:?} is not a string"))?;
        if name.is_empty() || !name.bytes().all(is_tchar) {
            return Err(format!(
                "x-mcp-header {name:?} at {at:?} is not an HTTP field name (RFC 9110 token)"
            ));
        }
        match members.get("type").and_then(Value::as_str) {
            Some("string" | "integer" | "boolean") => {}
            other => {
                return Err(format!("x-mcp-header {name:?} at {at:?} is on a property of type {other:?}"));
            }
        }
        found.push(Annotation { path: path.clone(), name: name.to_owned() });
    }
    for (key, value) in members {
        if key == "properties" {
            let Value::Object(properties) = value else { continue };
            for (property, subschema) in properties {
                path.push(property.clone());
                let visited = visit(subschema, path, chain, found);
                path.pop();
                visited?;
            }
        } else if key != "x-mcp-header" && !DATA_KEYWORDS.contains(&key.as_str()) {
            visit(value, path, false, found)?;
        }
    }
    Ok(())
}

/// RFC 9110 §5.6.2 `tchar`.
fn is_tchar(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

/// The headers of a call with `arguments`: one per annotation whose argument is there and not
/// `null`.
pub(crate) fn headers(annotations: &[Annotation], arguments: &Value) -> Vec<(String, String)> {
    annotations
        .iter()
        .filter_map(|a| {
            let value = a.path.iter().try_fold(arguments, |at, key| at.as_object()?.get(key))?;
            let text = match value {
                Value::String(s) => mcp_sansio::http::header_value(s),
                Value::Bool(b) => b.to_string(),
                Value::Number(n) => match (n.as_i64(), n.as_u64(), n.as_f64()) {
                    (Some(i), _, _) => i.to_string(),
                    (_, Some(u), _) => u.to_string(),
                    // An integral number written with a fraction (`2.0`) is that integer.
                    (_, _, Some(f)) if f.fract() == 0.0 && f.abs() < 9_007_199_254_740_992.0 => {
                        format!("{f:.0}")
                    }
                    _ => n.to_string(),
                },
                Value::Null | Value::Array(_) | Value::Object(_) => return None,
            };
            Some((format!("Mcp-Param-{}", a.name), text))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    /// The names found, sorted (the order of a schema's members is not the point).
    fn names(schema: Value) -> Result<Vec<String>, String> {
        let mut names: Vec<String> = annotations(&schema)?.into_iter().map(|a| a.name).collect();
        names.sort();
        Ok(names)
    }

    #[test]
    fn header_names_are_tokens_unique_ignoring_case_on_primitive_properties() {
        let valid = json!({"type": "object", "properties": {
            "region": {"type": "string", "x-mcp-header": "Region"},
            "odd": {"type": "integer", "x-mcp-header": "X!#$%&'*+-.^_`|~9"},
        }});
        assert_eq!(names(valid).unwrap(), ["Region", "X!#$%&'*+-.^_`|~9"]);
        for bad in ["", "Two Words", "Colon:", "Slash/", "Tab\t", "Ünicode", "Line\r\nBreak", "(paren)"] {
            let schema = json!({"properties": {"p": {"type": "string", "x-mcp-header": bad}}});
            assert!(names(schema).is_err(), "{bad:?}");
        }
        let twice = json!({"properties": {
            "a": {"type": "string", "x-mcp-header": "Region"},
            "b": {"type": "string", "x-mcp-header": "REGION"},
        }});
        assert!(names(twice).unwrap_err().contains("twice"));
        for ty in [json!("number"), json!("object"), json!(["string", "null"]), Value::Null] {
            let schema = json!({"properties": {"p": {"type": ty, "x-mcp-header": "P"}}});
            assert!(names(schema).is_err(), "{ty}");
        }
    }

    #[test]
    fn annotations_count_only_through_properties_chains() {
        let nested = json!({"properties": {"options": {"type": "object", "properties": {
            "limit": {"type": "integer", "x-mcp-header": "Limit"}}}}});
        let found = annotations(&nested).unwrap();
        assert_eq!(
            found,
            [Annotation { path: vec!["options".into(), "limit".into()], name: "Limit".into() }]
        );
        for unreachable in [
            json!({"type": "string", "x-mcp-header": "Root"}),
            json!({"properties": {"list": {"type": "array", "items": {"type": "string", "x-mcp-header": "I"}}}}),
            json!({"anyOf": [{"properties": {"p": {"type": "string", "x-mcp-header": "P"}}}]}),
            json!({"$defs": {"d": {"type": "string", "x-mcp-header": "D"}}}),
        ] {
            assert!(annotations(&unreachable).is_err(), "{unreachable}");
        }
        // Data is not a schema, and a property may be named like the keyword.
        let data = json!({"properties": {
            "x-mcp-header": {"type": "string"},
            "p": {"type": "string", "default": {"x-mcp-header": "NotOne"}, "enum": [{"x-mcp-header": "N"}]},
        }});
        assert_eq!(names(data).unwrap(), Vec::<String>::new());
    }

    #[test]
    fn values_come_from_the_exact_path_and_absent_or_null_ones_send_nothing() {
        let schema = json!({"properties": {
            "region": {"type": "string", "x-mcp-header": "Region"},
            "days": {"type": "integer", "x-mcp-header": "Days"},
            "options": {"type": "object", "properties": {
                "metric": {"type": "boolean", "x-mcp-header": "Metric"},
                "limit": {"type": "integer", "x-mcp-header": "Limit"}}},
        }});
        let found = annotations(&schema).unwrap();
        let arguments = json!({"region": "Zürich", "days": 2.0, "options": {"metric": false, "limit": null},
                               "limit": 7, "metric": true});
        let mut sent = headers(&found, &arguments);
        sent.sort();
        assert_eq!(
            sent,
            [
                ("Mcp-Param-Days".to_owned(), "2".to_owned()),
                ("Mcp-Param-Metric".to_owned(), "false".to_owned()),
                ("Mcp-Param-Region".to_owned(), "=?base64?WsO8cmljaA==?=".to_owned()),
            ]
        );
        // A nested value is read at its path only, not wherever a member of that name is.
        assert_eq!(headers(&found, &json!({"options": "flat", "metric": true})), []);
    }
}
