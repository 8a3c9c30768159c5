//! The official MCP JSON schemas, one per protocol version, as test data.
//!
//! The files in `conformance/schemas/<version>/schema.json` are copies of `schema/<version>/schema.json`
//! from the specification repository (modelcontextprotocol/modelcontextprotocol). They are embedded
//! in the library and parsed the first time a version is used.
//!
//! [`validate_result`] checks the `result` of a response against the definition the specification
//! gives for the request's method; [`validate_server_message`] checks a whole message a server sent
//! (a request, a notification or a response).
//!
//! The 2026-07-28 schema differs from the earlier ones in ways that show here:
//! - there is no `initialize` (its counterpart is `server/discover`), no `ping`, and no requests from
//!   server to client at all;
//! - every result has a `resultType`; `tools/call`, `prompts/get` and `resources/read` may answer
//!   with an `InputRequiredResult` (`"resultType": "input_required"`) instead of their own result.

use std::sync::OnceLock;

use serde_json::Value;

use crate::json_schema::{Schema, SchemaError, describe, resolve_ref};

/// The protocol versions whose schemas are embedded, oldest first.
pub const VERSIONS: &[&str] = &["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28"];

/// The embedded schema documents, in the order of [`VERSIONS`].
const SOURCES: [&str; 5] = [
    include_str!("../schemas/2024-11-05/schema.json"),
    include_str!("../schemas/2025-03-26/schema.json"),
    include_str!("../schemas/2025-06-18/schema.json"),
    include_str!("../schemas/2025-11-25/schema.json"),
    include_str!("../schemas/2026-07-28/schema.json"),
];

static SCHEMAS: [OnceLock<Schema>; 5] = [const { OnceLock::new() }; 5];

/// Each request method with the definitions of its request and of its result. A method belongs to
/// a version when that version's schema has both definitions.
const METHODS: &[(&str, &str, &str)] = &[
    ("initialize", "InitializeRequest", "InitializeResult"),
    ("ping", "PingRequest", "EmptyResult"),
    ("server/discover", "DiscoverRequest", "DiscoverResult"),
    ("tools/list", "ListToolsRequest", "ListToolsResult"),
    ("tools/call", "CallToolRequest", "CallToolResult"),
    ("prompts/list", "ListPromptsRequest", "ListPromptsResult"),
    ("prompts/get", "GetPromptRequest", "GetPromptResult"),
    ("resources/list", "ListResourcesRequest", "ListResourcesResult"),
    ("resources/templates/list", "ListResourceTemplatesRequest", "ListResourceTemplatesResult"),
    ("resources/read", "ReadResourceRequest", "ReadResourceResult"),
    ("resources/subscribe", "SubscribeRequest", "EmptyResult"),
    ("resources/unsubscribe", "UnsubscribeRequest", "EmptyResult"),
    ("subscriptions/listen", "SubscriptionsListenRequest", "SubscriptionsListenResult"),
    ("logging/setLevel", "SetLevelRequest", "EmptyResult"),
    ("completion/complete", "CompleteRequest", "CompleteResult"),
    ("sampling/createMessage", "CreateMessageRequest", "CreateMessageResult"),
    ("roots/list", "ListRootsRequest", "ListRootsResult"),
    ("elicitation/create", "ElicitRequest", "ElicitResult"),
    ("tasks/get", "GetTaskRequest", "GetTaskResult"),
    ("tasks/result", "GetTaskPayloadRequest", "GetTaskPayloadResult"),
    ("tasks/list", "ListTasksRequest", "ListTasksResult"),
    ("tasks/cancel", "CancelTaskRequest", "CancelTaskResult"),
];

/// The schema of protocol `version`, or `None` for a version not in [`VERSIONS`].
pub fn schema(version: &str) -> Option<&'static Schema> {
    let index = VERSIONS.iter().position(|v| *v == version)?;
    Some(SCHEMAS[index].get_or_init(|| {
        let document = serde_json::from_str(SOURCES[index]).expect("an embedded MCP schema is valid JSON");
        Schema::new(document).expect("an embedded MCP schema is a valid schema")
    }))
}

/// The definition name of the result a request method gets in protocol `version`, e.g.
/// `tools/call` → `CallToolResult`, `initialize` → `InitializeResult`, `ping` → `EmptyResult`;
/// `None` for a method the version does not define (or an unknown version).
///
/// This is the method's own result. In 2026-07-28 some methods may also answer with an
/// `InputRequiredResult`; [`validate_result`] accounts for that. In 2025-11-25 a task-augmented
/// request answers with a `CreateTaskResult`, which is not accounted for: check it with
/// [`Schema::validate_definition`].
pub fn result_definition(version: &str, method: &str) -> Option<&'static str> {
    let schema = schema(version)?;
    let (_, request, result) = METHODS.iter().find(|(m, _, _)| *m == method)?;
    (schema.definition(request).is_some() && schema.definition(result).is_some()).then_some(*result)
}

/// Validates the `result` of a response to `method` for protocol `version`. `Ok(())` when the
/// version or the method is unknown to the schemas.
///
/// In 2026-07-28, a result whose `resultType` is `input_required` is checked as an
/// `InputRequiredResult` when the schema allows one for the method (the `result` of its
/// `…ResultResponse` definition), and as the method's own result otherwise.
pub fn validate_result(version: &str, method: &str, result: &Value) -> Result<(), Vec<SchemaError>> {
    let (Some(schema), Some(definition)) = (schema(version), result_definition(version, method)) else {
        return Ok(());
    };
    let input_required = result.get("resultType").and_then(Value::as_str) == Some("input_required");
    if input_required && allows_input_required(schema, definition) {
        schema.validate_definition("InputRequiredResult", result)
    } else {
        schema.validate_definition(definition, result)
    }
}

/// Whether the `…ResultResponse` definition for `result` admits an `InputRequiredResult`.
fn allows_input_required(schema: &Schema, result: &str) -> bool {
    schema
        .definition(&format!("{result}Response"))
        .and_then(|response| response.pointer("/properties/result/anyOf"))
        .and_then(Value::as_array)
        .is_some_and(|alternatives| {
            alternatives.iter().any(|alternative| {
                alternative
                    .get("$ref")
                    .and_then(Value::as_str)
                    .is_some_and(|r| r.ends_with("/InputRequiredResult"))
            })
        })
}

/// Validates a whole message a server sent, for protocol `version`:
///
/// - a request against `JSONRPCRequest` and the member of `ServerRequest` for its method (2026-07-28
///   has no server-to-client requests, so any request is an error there);
/// - a notification against `JSONRPCNotification` and the member of `ServerNotification` for its
///   method;
/// - an error response against `JSONRPCError` (`JSONRPCErrorResponse` from 2025-11-25);
/// - a successful response against `JSONRPCResponse` (`JSONRPCResultResponse` from 2025-11-25);
///   that only checks the envelope: check the result itself with [`validate_result`].
///
/// A method the version does not define for the server is an error at `/method`. `Ok(())` for an
/// unknown version.
pub fn validate_server_message(version: &str, message: &Value) -> Result<(), Vec<SchemaError>> {
    let Some(schema) = schema(version) else {
        return Ok(());
    };
    let Some(object) = message.as_object() else {
        return Err(vec![error(
            "",
            format!("expected a JSON-RPC message object, found {}", describe(message)),
        )]);
    };
    let definition =
        |names: &[&'static str]| names.iter().copied().find(|name| schema.definition(name).is_some());
    if let Some(method) = object.get("method") {
        let (envelope, union, kind) = if object.contains_key("id") {
            ("JSONRPCRequest", "ServerRequest", "request")
        } else {
            ("JSONRPCNotification", "ServerNotification", "notification")
        };
        let mut errors = schema.validate_definition(envelope, message).err().unwrap_or_default();
        let member = method.as_str().and_then(|method| member_for(schema, union, method));
        match (member, method.as_str()) {
            (Some(member), _) => errors.extend(schema.validate_at(member, message).err().unwrap_or_default()),
            (None, Some(method)) => errors.push(unknown_method(schema, version, union, kind, method)),
            // A method that is not a string is reported by the envelope.
            (None, None) => {}
        }
        dedup(&mut errors);
        return if errors.is_empty() { Ok(()) } else { Err(errors) };
    }
    let envelope = if object.contains_key("error") {
        definition(&["JSONRPCErrorResponse", "JSONRPCError"])
    } else if object.contains_key("result") {
        definition(&["JSONRPCResultResponse", "JSONRPCResponse"])
    } else {
        return Err(vec![error("", "neither a request, a notification nor a response".to_owned())]);
    };
    match envelope {
        Some(envelope) => schema.validate_definition(envelope, message),
        None => Ok(()),
    }
}

/// The `$ref` of the member of the union definition `union` whose `method` is the constant `method`.
fn member_for(schema: &'static Schema, union: &str, method: &str) -> Option<&'static str> {
    members(schema, union).find(|(_, m)| *m == method).map(|(reference, _)| reference)
}

/// The members of a union definition (`ServerRequest`…): each `$ref` with its method constant.
fn members<'s>(schema: &'s Schema, union: &str) -> impl Iterator<Item = (&'s str, &'s str)> + 's {
    let alternatives = schema.definition(union).and_then(|d| d.get("anyOf")).and_then(Value::as_array);
    alternatives.into_iter().flatten().filter_map(|alternative| {
        let reference = alternative.get("$ref")?.as_str()?;
        let method = resolve_ref(schema.root(), reference)?.pointer("/properties/method/const")?.as_str()?;
        Some((reference, method))
    })
}

fn unknown_method(schema: &Schema, version: &str, union: &str, kind: &str, method: &str) -> SchemaError {
    let known: Vec<&str> = members(schema, union).map(|(_, m)| m).collect();
    let message = if known.is_empty() {
        format!("protocol version {version} has no {kind}s from server to client, found `{method}`")
    } else {
        format!(
            "`{method}` is not a {kind} a server sends in protocol version {version} (expected one of: {})",
            known.join(", ")
        )
    };
    error("/method", message)
}

fn error(path: &str, message: String) -> SchemaError {
    SchemaError { instance_path: path.to_owned(), message }
}

fn dedup(errors: &mut Vec<SchemaError>) {
    let mut seen = Vec::with_capacity(errors.len());
    errors.retain(|e| {
        let new = !seen.contains(e);
        if new {
            seen.push(e.clone());
        }
        new
    });
}

#[cfg(test)]
mod tests {
    use serde_json::{Map, json};

    use super::*;

    const V2026: &str = "2026-07-28";

    /// Adds the fields every 2026-07-28 result has (and the cache fields of cacheable ones).
    fn result(version: &str, mut value: Value, cacheable: bool) -> Value {
        if version == V2026 {
            value["resultType"] = json!("complete");
            if cacheable {
                value["cacheScope"] = json!("public");
                value["ttlMs"] = json!(0);
            }
        }
        value
    }

    fn tools_list(version: &str) -> Value {
        result(
            version,
            json!({"tools": [{
                "name": "echo",
                "description": "Echoes its input",
                "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
            }]}),
            true,
        )
    }

    fn call_result(version: &str) -> Value {
        result(version, json!({"content": [{"type": "text", "text": "hello"}], "isError": false}), false)
    }

    fn definitions(version: &str) -> &'static Map<String, Value> {
        let root = schema(version).unwrap().root();
        root.get("$defs").or_else(|| root.get("definitions")).and_then(Value::as_object).unwrap()
    }

    #[test]
    fn every_version_parses() {
        assert_eq!(VERSIONS.len(), SOURCES.len());
        for version in VERSIONS {
            assert!(schema(version).is_some(), "{version}");
            assert!(definitions(version).len() > 50, "{version}");
        }
        assert!(schema("1999-01-01").is_none());
    }

    #[test]
    fn the_method_table_covers_every_request_of_every_version() {
        for version in VERSIONS {
            let schema = schema(version).unwrap();
            for (name, definition) in definitions(version) {
                let Some(method) = definition.pointer("/properties/method/const").and_then(Value::as_str)
                else {
                    continue;
                };
                if !name.ends_with("Request") {
                    continue;
                }
                let (_, request, result) = METHODS
                    .iter()
                    .find(|(m, _, _)| *m == method)
                    .unwrap_or_else(|| panic!("{version}: {method} ({name}) is not in METHODS"));
                assert_eq!(*request, name, "{version}: {method}");
                assert!(schema.definition(result).is_some(), "{version}: no {result}");
                assert_eq!(result_definition(version, method), Some(*result), "{version}: {method}");
            }
            for (method, request, _) in METHODS {
                if schema.definition(request).is_none() {
                    assert_eq!(result_definition(version, method), None, "{version}: {method}");
                }
            }
        }
    }

    #[test]
    fn result_responses_of_2026_agree_with_the_method_table() {
        let schema = schema(V2026).unwrap();
        let mut checked = 0;
        for (method, _, result) in METHODS {
            if result_definition(V2026, method).is_none() {
                continue;
            }
            let Some(response) = schema.definition(&format!("{result}Response")) else { continue };
            let wanted = format!("#/$defs/{result}");
            let result_schema = &response["properties"]["result"];
            let refs: Vec<&str> = match result_schema.get("anyOf").and_then(Value::as_array) {
                Some(alternatives) => alternatives.iter().filter_map(|a| a["$ref"].as_str()).collect(),
                None => result_schema["$ref"].as_str().into_iter().collect(),
            };
            assert!(refs.contains(&wanted.as_str()), "{method}: {refs:?}");
            checked += 1;
        }
        assert!(checked >= 10, "{checked}");
    }

    #[test]
    fn result_definitions() {
        for version in VERSIONS {
            assert_eq!(result_definition(version, "tools/call"), Some("CallToolResult"));
            assert_eq!(result_definition(version, "tools/list"), Some("ListToolsResult"));
            assert_eq!(result_definition(version, "no/such/method"), None);
        }
        for version in &VERSIONS[..4] {
            assert_eq!(result_definition(version, "initialize"), Some("InitializeResult"));
            assert_eq!(result_definition(version, "ping"), Some("EmptyResult"));
            assert_eq!(result_definition(version, "server/discover"), None);
        }
        assert_eq!(result_definition(V2026, "initialize"), None);
        assert_eq!(result_definition(V2026, "ping"), None);
        assert_eq!(result_definition(V2026, "server/discover"), Some("DiscoverResult"));
        assert_eq!(result_definition("2024-11-05", "elicitation/create"), None);
        assert_eq!(result_definition("2025-06-18", "elicitation/create"), Some("ElicitResult"));
        assert_eq!(result_definition("2025-06-18", "tasks/get"), None);
        assert_eq!(result_definition("2025-11-25", "tasks/get"), Some("GetTaskResult"));
        assert_eq!(result_definition(V2026, "subscriptions/listen"), Some("SubscriptionsListenResult"));
    }

    #[test]
    fn real_results_validate() {
        for version in VERSIONS {
            let check = |method: &str, value: &Value| {
                if let Err(errors) = validate_result(version, method, value) {
                    panic!("{version} {method}: {errors:?}");
                }
            };
            check("tools/list", &tools_list(version));
            check("tools/call", &call_result(version));
            if *version == V2026 {
                let discover = json!({
                    "resultType": "complete",
                    "cacheScope": "public",
                    "ttlMs": 60000,
                    "supportedVersions": [V2026],
                    "capabilities": {"tools": {"listChanged": true}},
                    "instructions": "Be nice.",
                });
                check("server/discover", &discover);
                let input_required = json!({"resultType": "input_required", "requestState": "opaque"});
                check("tools/call", &input_required);
            } else {
                let initialize = json!({
                    "protocolVersion": version,
                    "capabilities": {"tools": {"listChanged": true}, "logging": {}},
                    "serverInfo": {"name": "demo", "version": "1.0.0"},
                });
                check("initialize", &initialize);
                check("ping", &json!({}));
            }
            // Unknown methods are not checked.
            check("vendor/custom", &json!("anything"));
        }
        assert!(validate_result("1999-01-01", "tools/list", &json!(1)).is_ok());
    }

    #[test]
    fn broken_results_fail_with_a_useful_path() {
        for version in VERSIONS {
            let mut missing_type = call_result(version);
            missing_type["content"][0].as_object_mut().unwrap().remove("type");
            let errors = validate_result(version, "tools/call", &missing_type).unwrap_err();
            assert_eq!(errors[0].instance_path, "/content/0", "{version}: {errors:?}");
            assert!(errors[0].message.contains(r#""type" is a required property"#), "{version}: {errors:?}");

            let mut wrong_text = call_result(version);
            wrong_text["content"][0]["text"] = json!(42);
            let errors = validate_result(version, "tools/call", &wrong_text).unwrap_err();
            assert!(
                errors[0].message.contains(r#"at /content/0/text: 42 is not of type "string""#),
                "{version}: {errors:?}"
            );

            let mut not_an_array = tools_list(version);
            not_an_array["tools"] = json!({"echo": {}});
            let errors = validate_result(version, "tools/list", &not_an_array).unwrap_err();
            assert_eq!(errors[0].instance_path, "/tools", "{version}: {errors:?}");
            assert!(errors[0].message.ends_with(r#"is not of type "array""#), "{version}: {errors:?}");

            let mut nameless = tools_list(version);
            nameless["tools"][0].as_object_mut().unwrap().remove("name");
            let errors = validate_result(version, "tools/list", &nameless).unwrap_err();
            assert_eq!(errors[0].instance_path, "/tools/0", "{version}: {errors:?}");
        }
        // Without `resultType`, 2026-07-28 results are not conformant.
        let errors = validate_result(V2026, "tools/call", &json!({"content": []})).unwrap_err();
        assert_eq!(errors[0].message, r#""resultType" is a required property"#);
        // `input_required` is only an answer for some methods.
        let input_required = json!({"resultType": "input_required", "requestState": "opaque"});
        assert!(validate_result(V2026, "tools/list", &input_required).is_err());
    }

    #[test]
    fn server_notifications_and_requests() {
        let changed = json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"});
        let progress = json!({"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": 1, "progress": 5}});
        let error =
            json!({"jsonrpc": "2.0", "id": 3, "error": {"code": -32601, "message": "Method not found"}});
        let response = json!({"jsonrpc": "2.0", "id": 3, "result": {"resultType": "complete"}});
        for version in VERSIONS {
            for message in [&changed, &progress, &error, &response] {
                if let Err(errors) = validate_server_message(version, message) {
                    panic!("{version} {message}: {errors:?}");
                }
            }
            let no_token =
                json!({"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progress": 5}});
            let errors = validate_server_message(version, &no_token).unwrap_err();
            assert_eq!(errors[0].instance_path, "/params", "{version}: {errors:?}");
            let unknown = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
            let errors = validate_server_message(version, &unknown).unwrap_err();
            assert_eq!(errors[0].instance_path, "/method", "{version}: {errors:?}");
            let bad_error = json!({"jsonrpc": "2.0", "id": 3, "error": {"code": "oops", "message": "x"}});
            let errors = validate_server_message(version, &bad_error).unwrap_err();
            assert_eq!(errors[0].instance_path, "/error/code", "{version}: {errors:?}");
            let wrong_version = json!({"jsonrpc": "1.0", "method": "notifications/tools/list_changed"});
            assert!(validate_server_message(version, &wrong_version).is_err(), "{version}");
            assert!(validate_server_message(version, &json!([1])).is_err(), "{version}");
            assert!(validate_server_message(version, &json!({"jsonrpc": "2.0"})).is_err(), "{version}");
        }
        let ping = json!({"jsonrpc": "2.0", "id": "s-1", "method": "ping"});
        let roots = json!({"jsonrpc": "2.0", "id": 7, "method": "roots/list"});
        for version in &VERSIONS[..4] {
            assert!(validate_server_message(version, &ping).is_ok(), "{version}");
            assert!(validate_server_message(version, &roots).is_ok(), "{version}");
            let tools = json!({"jsonrpc": "2.0", "id": 8, "method": "tools/list"});
            let errors = validate_server_message(version, &tools).unwrap_err();
            assert!(errors[0].message.contains("expected one of: ping"), "{version}: {errors:?}");
            let no_id_type = json!({"jsonrpc": "2.0", "id": true, "method": "ping"});
            assert!(validate_server_message(version, &no_id_type).is_err(), "{version}");
        }
        let errors = validate_server_message(V2026, &roots).unwrap_err();
        assert_eq!(
            errors[0].message,
            "protocol version 2026-07-28 has no requests from server to client, found `roots/list`"
        );
        assert!(validate_server_message("1999-01-01", &json!(1)).is_ok());
    }
}
