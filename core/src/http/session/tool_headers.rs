//! 2026-07-28 `Mcp-Param-*` headers: tool arguments that a server asks to see as HTTP headers,
//! by annotating properties of a tool's input schema with `"x-mcp-header": "<Name>"`.
//!
//! The session learns the annotations from every `tools/list` result it carries, drops the tools
//! whose annotations are invalid (the spec says a client MUST exclude them, so one malformed
//! tool does not make the others unusable), and adds `Mcp-Param-<Name>: <value>` to each
//! `tools/call` of an annotated tool. A call the server refuses with `-32020` (header mismatch)
//! makes the session fetch the tool list again with a request of its own, then re-send the call
//! once with the headers the tools ask for now.

use std::collections::HashMap;

use serde::Deserialize;
use serde_json::Value;
use serde_json::value::RawValue;

use super::{HttpSession, Outgoing, Refused, header_value};
use crate::event::{Event, RequestError};
use crate::raw_result::RawResult;
use std::time::Instant;

/// One annotated argument: the header's name (after `Mcp-Param-`) and where the argument sits in
/// `arguments`, as a chain of property names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ParamHeader {
    name: String,
    path: Vec<String>,
}

/// What the session knows of the tools' header annotations, from the `tools/list` results it saw.
#[derive(Debug, Default)]
pub(crate) struct ToolHeaders {
    /// Tools with at least one valid annotation.
    specs: HashMap<String, Vec<ParamHeader>>,
    /// Tools excluded from `tools/list` results, with the reason.
    rejected: HashMap<String, String>,
}

impl ToolHeaders {
    /// Learns from one `tools/list` result and returns it without the tools whose annotations
    /// are invalid (`None`: nothing to remove, the result stands as it is).
    pub(crate) fn learn(&mut self, result: &str) -> Option<Box<RawValue>> {
        #[derive(Deserialize)]
        struct Page<'a> {
            #[serde(borrow)]
            tools: Vec<&'a RawValue>,
        }
        #[derive(Deserialize)]
        struct Tool {
            name: String,
            #[serde(rename = "inputSchema", default)]
            input_schema: Value,
        }
        let page: Page<'_> = serde_json::from_str(result).ok()?;
        let total = page.tools.len();
        let mut kept = Vec::with_capacity(total);
        for raw in page.tools {
            // A tool that does not decode is the application's to report; it is left alone.
            let Ok(tool) = serde_json::from_str::<Tool>(raw.get()) else {
                kept.push(raw);
                continue;
            };
            match scan(&tool.input_schema) {
                Ok(headers) => {
                    self.rejected.remove(&tool.name);
                    if headers.is_empty() {
                        self.specs.remove(&tool.name);
                    } else {
                        self.specs.insert(tool.name, headers);
                    }
                    kept.push(raw);
                }
                Err(reason) => {
                    tracing::warn!(tool = %tool.name, %reason, "tool excluded: invalid x-mcp-header annotation");
                    self.specs.remove(&tool.name);
                    self.rejected.insert(tool.name, reason);
                }
            }
        }
        if kept.len() == total {
            return None;
        }
        // Only a list that lost tools is rebuilt.
        let Ok(Value::Object(mut object)) = serde_json::from_str::<Value>(result) else { return None };
        let tools = kept.into_iter().filter_map(|raw| serde_json::from_str(raw.get()).ok()).collect();
        object.insert("tools".to_owned(), Value::Array(tools));
        serde_json::value::to_raw_value(&object).ok()
    }

    /// Why `tool` was excluded from the tool list, if it was.
    pub(crate) fn rejection(&self, tool: &str) -> Option<&str> {
        self.rejected.get(tool).map(String::as_str)
    }

    /// The `Mcp-Param-*` headers of a call of `tool` with `arguments`: one per annotated argument
    /// that is present and not `null`. The arguments are only parsed for an annotated tool.
    pub(crate) fn headers(&self, tool: &str, arguments: Option<&RawValue>) -> Vec<(String, String)> {
        let (Some(specs), Some(arguments)) = (self.specs.get(tool), arguments) else { return Vec::new() };
        let Ok(arguments) = serde_json::from_str::<Value>(arguments.get()) else { return Vec::new() };
        let arguments = &arguments;
        specs
            .iter()
            .filter_map(|spec| {
                let value = spec.path.iter().try_fold(arguments, |v, key| v.get(key))?;
                let text = match value {
                    Value::String(s) => header_value(s),
                    Value::Number(n) => n.to_string(),
                    Value::Bool(b) => b.to_string(),
                    Value::Null | Value::Array(_) | Value::Object(_) => return None,
                };
                Some((format!("Mcp-Param-{}", spec.name), text))
            })
            .collect()
    }
}

/// The valid annotations of an input schema, or why the tool must be excluded.
///
/// An annotation must be a non-empty RFC 9110 token, unique (case-insensitively) in the schema,
/// on a property of type `string`, `integer` or `boolean`, reachable from the root through
/// `properties` alone (not through `items`, `anyOf`, `$ref`, …).
pub(crate) fn scan(schema: &Value) -> Result<Vec<ParamHeader>, String> {
    let mut found = Vec::new();
    walk(schema, &mut Vec::new(), true, &mut found)?;
    Ok(found)
}

fn walk(
    schema: &Value,
    path: &mut Vec<String>,
    reachable: bool,
    found: &mut Vec<ParamHeader>,
) -> Result<(), String> {
    let object = match schema {
        Value::Object(object) => object,
        Value::Array(items) => {
            for item in items {
                walk(item, path, false, found)?;
            }
            return Ok(());
        }
        _ => return Ok(()),
    };
    if let Some(annotation) = object.get("x-mcp-header") {
        let at = if path.is_empty() {
            "the schema's root".to_owned()
        } else {
            format!("property {:?}", path.join("."))
        };
        if !reachable || path.is_empty() {
            return Err(format!("x-mcp-header on {at}, which is not reachable through `properties` alone"));
        }
        let Some(name) = annotation.as_str() else {
            return Err(format!("x-mcp-header on {at} is not a string"));
        };
        if name.is_empty() {
            return Err(format!("x-mcp-header on {at} is empty"));
        }
        if !name.bytes().all(is_token_char) {
            return Err(format!("x-mcp-header {name:?} on {at} is not an HTTP token (RFC 9110)"));
        }
        match object.get("type").and_then(Value::as_str) {
            Some("string" | "integer" | "boolean") => {}
            other => {
                let ty = other.map_or_else(|| "no single type".to_owned(), |t| format!("type {t:?}"));
                return Err(format!(
                    "x-mcp-header {name:?} on {at} with {ty}: only string, integer and boolean arguments can be headers"
                ));
            }
        }
        if found.iter().any(|h| h.name.eq_ignore_ascii_case(name)) {
            return Err(format!("x-mcp-header {name:?} appears more than once (names are case-insensitive)"));
        }
        found.push(ParamHeader { name: name.to_owned(), path: path.clone() });
    }
    for (key, value) in object {
        match key.as_str() {
            "properties" => {
                let Value::Object(properties) = value else { continue };
                for (name, property) in properties {
                    path.push(name.clone());
                    let result = walk(property, path, reachable, found);
                    path.pop();
                    result?;
                }
            }
            // Annotations and literal data, not subschemas.
            "x-mcp-header" | "const" | "enum" | "default" | "examples" | "required" | "description"
            | "title" => {}
            _ => {
                // Any other subschema (items, anyOf, $defs, if/then/else, …) is not statically
                // reachable: an annotation there is invalid.
                let depth = path.len();
                walk(value, path, false, found)?;
                path.truncate(depth);
            }
        }
    }
    Ok(())
}

/// RFC 9110 `tchar`.
fn is_token_char(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

/// 2026-07-28: a `tools/call` refused with `-32020` (header mismatch) while the tool list is
/// fetched again (a request of the session's own, page by page), to re-send the call with the
/// headers the tools now ask for.
#[derive(Debug)]
pub(super) struct Refresh {
    /// The refused call.
    pub(super) call: Outgoing,
    /// The server's refusal, which stands if the list cannot be had.
    pub(super) refusal: Vec<u8>,
    /// Pages of the tool list fetched so far (at most [`MAX_REFRESH_PAGES`]).
    pub(super) pages: u16,
}

/// How many pages of the tool list a refresh after `-32020` fetches at most: a server whose
/// list never ends (or repeats its cursor) leaves the refusal standing instead of keeping the
/// call's deadline busy with pages.
pub(super) const MAX_REFRESH_PAGES: u16 = 100;

impl HttpSession {
    /// What the session does with one of the connection's events: `None` if it was for the
    /// session itself. Without `now` (a command's event, drained by `poll_event`), an answer to
    /// the session's own request can only be a failure of a closing connection: dropped.
    pub(super) fn screen(
        &mut self,
        event: Event,
        now: Option<Instant>,
        refused: Option<&Refused>,
    ) -> Option<Event> {
        let Event::Response { id, result } = event else { return Some(event) };
        // The server's JSON-RPC error came with an HTTP error status (see `refuse`): keep both.
        let result = match (result, refused) {
            (Err(RequestError::Server(error)), Some(refused)) if refused.call == id => {
                Err(RequestError::HttpStatus {
                    status: refused.status,
                    body: refused.body.clone(),
                    error: Some(error),
                })
            }
            (result, _) => result,
        };
        if let Some(refresh) = self.refreshes.remove(&id) {
            if let Some(now) = now {
                self.on_refresh_answer(now, refresh, result);
            }
            return None;
        }
        let result = match result {
            Ok(raw) if self.tool_lists.remove(&id) => {
                // Tools whose `Mcp-Param-*` annotations are invalid are left out (refused
                // locally if called).
                Ok(self.tool_headers.learn(raw.get()).map_or(raw, |kept| RawResult::from(&*kept)))
            }
            other => {
                self.tool_lists.remove(&id);
                other
            }
        };
        Some(Event::Response { id, result })
    }

    /// A `tools/call` was refused for its headers (`-32020`): fetch the tool list (page `cursor`)
    /// with a request of the session's own, to learn what the tools ask for now; the call is
    /// re-sent once that is done.
    pub(super) fn refresh_tools(&mut self, now: Instant, refresh: Refresh, cursor: Option<&str>) {
        tracing::debug!(?cursor, "the server refused a tool call's headers: fetching the tool list again");
        let params = cursor.map(|cursor| serde_json::json!({ "cursor": cursor }).to_string());
        match self.conn.send_for_transport(now, "tools/list", params.as_deref().map(str::as_bytes)) {
            Ok(id) => {
                self.refreshes.insert(id, refresh);
            }
            Err(error) => {
                tracing::debug!(%error, "the tool list cannot be fetched: the refusal stands");
                self.refuse(now, refresh.call, 400, &refresh.refusal);
            }
        }
    }

    /// A page of the refreshed tool list arrived (or the request failed): learn from it, then
    /// fetch the next page or re-send the refused call.
    pub(super) fn on_refresh_answer(
        &mut self,
        now: Instant,
        refresh: Refresh,
        result: Result<RawResult, RequestError>,
    ) {
        #[derive(Deserialize)]
        struct Page {
            #[serde(rename = "nextCursor", default)]
            next_cursor: Option<String>,
        }
        if !refresh.call.id().is_some_and(|id| self.awaits(id)) {
            // The call finished meanwhile (timed out, cancelled).
            return;
        }
        let Ok(result) = result else {
            // Not a list: the refusal stands.
            return self.refuse(now, refresh.call, 400, &refresh.refusal);
        };
        let _ = self.tool_headers.learn(result.get());
        match serde_json::from_str::<Page>(result.get()).ok().and_then(|p| p.next_cursor) {
            Some(_) if refresh.pages >= MAX_REFRESH_PAGES => {
                tracing::debug!(pages = refresh.pages, "the tool list does not end: the refusal stands");
                self.refuse(now, refresh.call, 400, &refresh.refusal);
            }
            Some(cursor) => {
                let refresh = Refresh { pages: refresh.pages + 1, ..refresh };
                self.refresh_tools(now, refresh, Some(&cursor))
            }
            None => {
                let mut call = refresh.call;
                call.refreshed = true;
                self.send(now, call);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn raw(value: Value) -> Box<RawValue> {
        serde_json::value::to_raw_value(&value).unwrap()
    }

    fn property(ty: &str, header: &str) -> Value {
        json!({"type": ty, "x-mcp-header": header})
    }

    #[test]
    fn valid_annotations_are_found_with_their_paths() {
        let schema = json!({"type": "object", "properties": {
            "region": property("string", "Region"),
            "count": property("integer", "Count"),
            "flag": property("boolean", "Flag"),
            "nested": {"type": "object", "properties": {"zone": property("string", "Zone")}},
            "plain": {"type": "number"},
        }});
        let mut found = scan(&schema).unwrap();
        found.sort_by(|a, b| a.name.cmp(&b.name));
        let names: Vec<_> = found.iter().map(|h| (h.name.as_str(), h.path.join("."))).collect();
        assert_eq!(
            names,
            [
                ("Count", "count".into()),
                ("Flag", "flag".into()),
                ("Region", "region".into()),
                ("Zone", "nested.zone".into())
            ]
        );
    }

    #[test]
    fn invalid_annotations_reject_the_tool() {
        let cases = [
            (json!({"properties": {"v": property("string", "")}}), "empty"),
            (json!({"properties": {"v": property("object", "Data")}}), "only string"),
            (json!({"properties": {"v": property("array", "Items")}}), "only string"),
            (json!({"properties": {"v": property("null", "Nil")}}), "only string"),
            (json!({"properties": {"v": property("number", "Score")}}), "only string"),
            (
                json!({"properties": {"a": property("string", "Region"), "b": property("string", "Region")}}),
                "more than once",
            ),
            (
                json!({"properties": {"a": property("string", "MyField"), "b": property("string", "myfield")}}),
                "more than once",
            ),
            (json!({"properties": {"v": property("string", "My Region")}}), "token"),
            (json!({"properties": {"v": property("string", "Region:Primary")}}), "token"),
            (json!({"properties": {"v": property("string", "Région")}}), "token"),
            (json!({"properties": {"v": property("string", "Region\t1")}}), "token"),
            (
                json!({"properties": {"v": {"type": "array", "items": property("string", "Item")}}}),
                "not reachable",
            ),
            (json!({"anyOf": [{"properties": {"v": property("string", "V")}}]}), "not reachable"),
            (json!({"$defs": {"d": property("string", "D")}}), "not reachable"),
            (json!({"type": "string", "x-mcp-header": "Root"}), "not reachable"),
            (json!({"properties": {"v": {"type": "string", "x-mcp-header": 3}}}), "not a string"),
        ];
        for (schema, expected) in cases {
            let error = scan(&schema).unwrap_err();
            assert!(error.contains(expected), "{schema}: {error}");
        }
    }

    #[test]
    fn literal_data_is_not_mistaken_for_annotations() {
        let schema = json!({"properties": {
            "x-mcp-header": {"type": "string"},
            "v": {"type": "object", "default": {"x-mcp-header": "Nope"}, "enum": [{"x-mcp-header": "No"}]},
        }});
        assert_eq!(scan(&schema).unwrap(), []);
    }

    #[test]
    fn tools_list_results_lose_invalid_tools_and_calls_get_headers() {
        let result = json!({"tools": [
            {"name": "good", "inputSchema": {"type": "object", "properties": {
                "region": property("string", "Region"), "n": property("integer", "N"),
                "on": property("boolean", "On"), "deep": {"type": "object", "properties": {"z": property("string", "Z")}}}}},
            {"name": "bad", "inputSchema": {"type": "object", "properties": {"s": property("number", "Score")}}},
            {"name": "plain", "inputSchema": {"type": "object"}},
        ], "nextCursor": "c2", "ttlMs": 0});
        let mut headers = ToolHeaders::default();
        let filtered: Value = serde_json::from_str(headers.learn(raw(result).get()).unwrap().get()).unwrap();
        let names: Vec<_> = filtered["tools"].as_array().unwrap().iter().map(|t| t["name"].clone()).collect();
        assert_eq!(names, [json!("good"), json!("plain")]);
        assert_eq!(filtered["nextCursor"], "c2");
        assert!(headers.rejection("bad").unwrap().contains("Score"));
        assert_eq!(headers.rejection("good"), None);

        let arguments =
            raw(json!({"region": "Hello, 世界", "n": 42, "on": false, "deep": {"z": " padded "}}));
        let mut sent = headers.headers("good", Some(&arguments));
        sent.sort();
        assert_eq!(
            sent,
            [
                ("Mcp-Param-N".to_owned(), "42".to_owned()),
                ("Mcp-Param-On".to_owned(), "false".to_owned()),
                ("Mcp-Param-Region".to_owned(), "=?base64?SGVsbG8sIOS4lueVjA==?=".to_owned()),
                ("Mcp-Param-Z".to_owned(), "=?base64?IHBhZGRlZCA=?=".to_owned()),
            ]
        );
        // Null and absent arguments send no header; unknown tools none at all.
        let sparse = raw(json!({"region": null, "n": 7}));
        assert_eq!(headers.headers("good", Some(&sparse)), [("Mcp-Param-N".to_owned(), "7".to_owned())]);
        assert_eq!(headers.headers("plain", Some(&arguments)), []);
        assert_eq!(headers.headers("unknown", Some(&arguments)), []);

        // A later list without problems keeps the result as it is, and forgives the tool.
        let fixed = json!({"tools": [{"name": "bad", "inputSchema": {"type": "object"}}]});
        assert!(headers.learn(raw(fixed).get()).is_none());
        assert_eq!(headers.rejection("bad"), None);
    }
}
