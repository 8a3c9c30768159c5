//! JSON-RPC 2.0 framing: error codes, error values, message builders and the classification of
//! incoming messages.

use serde_json::{Map, Value, json};

/// Invalid JSON was received.
pub(crate) const PARSE_ERROR: i64 = -32700;
/// The JSON sent is not a valid request object.
pub(crate) const INVALID_REQUEST: i64 = -32600;
/// The method does not exist.
pub(crate) const METHOD_NOT_FOUND: i64 = -32601;
/// Invalid method parameters.
pub(crate) const INVALID_PARAMS: i64 = -32602;
/// Internal server error.
pub(crate) const INTERNAL_ERROR: i64 = -32603;
/// MCP: the requested resource does not exist.
pub(crate) const RESOURCE_NOT_FOUND: i64 = -32002;
/// MCP 2026-07-28: the request's `_meta` protocol version is not spoken here (`data:
/// {supported, requested}`).
pub(crate) const UNSUPPORTED_PROTOCOL_VERSION: i64 = -32022;
/// MCP 2026-07-28 (Streamable HTTP): a header that mirrors the body is missing, malformed or
/// different.
pub(crate) const HEADER_MISMATCH: i64 = -32020;
/// MCP 2026-07-28: the request needs a client capability its `_meta` does not declare.
pub(crate) const MISSING_REQUIRED_CLIENT_CAPABILITY: i64 = -32021;

/// A JSON-RPC error object (`{code, message, data?}`).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct RpcError {
    /// The numeric error code.
    pub(crate) code: i64,
    /// A short human-readable description.
    pub(crate) message: String,
    /// Optional structured detail.
    pub(crate) data: Option<Value>,
}

impl RpcError {
    /// An error with the given code and message and no data.
    pub(crate) fn new(code: i64, message: impl Into<String>) -> Self {
        Self { code, message: message.into(), data: None }
    }

    /// `-32602 Invalid params` with a description of what is wrong.
    pub(crate) fn invalid_params(message: impl Into<String>) -> Self {
        Self::new(INVALID_PARAMS, message)
    }

    /// `-32601 Method not found` naming the method.
    pub(crate) fn method_not_found(method: &str) -> Self {
        Self::new(METHOD_NOT_FOUND, format!("Method not found: {method}"))
    }

    /// `-32002 Resource not found` with the uri as data.
    pub(crate) fn resource_not_found(uri: &str) -> Self {
        Self::new(RESOURCE_NOT_FOUND, "Resource not found").with_data(json!({ "uri": uri }))
    }

    /// Attaches structured data.
    pub(crate) fn with_data(mut self, data: Value) -> Self {
        self.data = Some(data);
        self
    }

    /// The error as a JSON object.
    pub(crate) fn to_value(&self) -> Value {
        let mut error = Map::new();
        error.insert("code".into(), self.code.into());
        error.insert("message".into(), self.message.clone().into());
        if let Some(data) = &self.data {
            error.insert("data".into(), data.clone());
        }
        Value::Object(error)
    }
}

impl std::fmt::Display for RpcError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} ({})", self.message, self.code)
    }
}

impl std::error::Error for RpcError {}

/// A successful response.
pub(crate) fn success(id: &Value, result: Value) -> Value {
    json!({ "jsonrpc": "2.0", "id": id, "result": result })
}

/// An error response.
pub(crate) fn failure(id: &Value, error: &RpcError) -> Value {
    json!({ "jsonrpc": "2.0", "id": id, "error": error.to_value() })
}

/// A response carrying either a result or an error.
pub(crate) fn response(id: &Value, outcome: Result<Value, RpcError>) -> Value {
    match outcome {
        Ok(result) => success(id, result),
        Err(error) => failure(id, &error),
    }
}

/// A notification (no id).
pub(crate) fn notification(method: &str, params: Value) -> Value {
    json!({ "jsonrpc": "2.0", "method": method, "params": params })
}

/// A request (server→client).
pub(crate) fn request(id: &Value, method: &str, params: Value) -> Value {
    json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params })
}

/// One incoming JSON-RPC message, classified.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Incoming {
    /// A request that expects a response.
    Request {
        /// The request id (a string or a number).
        id: Value,
        /// The method name.
        method: String,
        /// The parameters (an empty object when absent).
        params: Map<String, Value>,
    },
    /// A notification (no response is ever sent).
    Notification {
        /// The method name.
        method: String,
        /// The parameters (an empty object when absent).
        params: Map<String, Value>,
    },
    /// A response to a server→client request.
    Response {
        /// The id of the request being answered.
        id: Value,
        /// The result or the error object.
        outcome: Result<Value, Value>,
    },
    /// Not a valid JSON-RPC message; carries the error response to send (if any).
    Invalid(Option<Value>),
}

/// Whether `id` is a valid request id (a string or a number).
fn is_valid_id(id: &Value) -> bool {
    id.is_string() || id.is_number()
}

/// Classifies one JSON value (an element of a batch or a whole line).
pub(crate) fn classify(message: Value) -> Incoming {
    let Value::Object(mut object) = message else {
        return Incoming::Invalid(Some(failure(
            &Value::Null,
            &RpcError::new(INVALID_REQUEST, "Invalid Request: expected a JSON object"),
        )));
    };
    let id = object.remove("id");
    let invalid = |id: Option<&Value>, why: &str| {
        let id = id.filter(|id| is_valid_id(id)).cloned().unwrap_or(Value::Null);
        Incoming::Invalid(Some(failure(
            &id,
            &RpcError::new(INVALID_REQUEST, format!("Invalid Request: {why}")),
        )))
    };
    if object.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return invalid(id.as_ref(), "\"jsonrpc\" must be \"2.0\"");
    }
    match object.remove("method") {
        Some(Value::String(method)) => {
            let params = match object.remove("params") {
                None | Some(Value::Null) => Map::new(),
                Some(Value::Object(params)) => params,
                Some(_) => {
                    return match id {
                        Some(id) if is_valid_id(&id) => Incoming::Invalid(Some(failure(
                            &id,
                            &RpcError::invalid_params("params must be an object"),
                        ))),
                        Some(_) => invalid(None, "id must be a string or a number"),
                        // A notification with bad params: nothing can be answered.
                        None => Incoming::Invalid(None),
                    };
                }
            };
            match id {
                None => Incoming::Notification { method, params },
                Some(id) if is_valid_id(&id) => Incoming::Request { id, method, params },
                Some(_) => invalid(None, "id must be a string or a number"),
            }
        }
        Some(_) => invalid(id.as_ref(), "method must be a string"),
        None => {
            let Some(id) = id.filter(is_valid_id) else {
                return invalid(None, "missing method");
            };
            match (object.remove("result"), object.remove("error")) {
                (Some(result), None) => Incoming::Response { id, outcome: Ok(result) },
                (None, Some(error)) => Incoming::Response { id, outcome: Err(error) },
                // A malformed response cannot be answered (responses are never responded to).
                _ => Incoming::Invalid(None),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classifies_requests_notifications_and_responses() {
        let request = classify(json!({"jsonrpc":"2.0","id":1,"method":"ping"}));
        assert_eq!(request, Incoming::Request { id: json!(1), method: "ping".into(), params: Map::new() });
        let note = classify(json!({"jsonrpc":"2.0","method":"x","params":{"a":1}}));
        assert!(matches!(note, Incoming::Notification { ref method, .. } if method == "x"));
        let response = classify(json!({"jsonrpc":"2.0","id":"srv-1","result":{}}));
        assert_eq!(response, Incoming::Response { id: json!("srv-1"), outcome: Ok(json!({})) });
    }

    #[test]
    fn rejects_invalid_messages() {
        for bad in [
            json!(3),
            json!({"id":1,"method":"ping"}),
            json!({"jsonrpc":"2.0","id":null,"method":"ping"}),
            json!({"jsonrpc":"2.0","id":1,"method":7}),
        ] {
            let Incoming::Invalid(Some(reply)) = classify(bad) else { panic!("not invalid") };
            assert_eq!(reply["error"]["code"], INVALID_REQUEST);
        }
        let Incoming::Invalid(Some(reply)) =
            classify(json!({"jsonrpc":"2.0","id":4,"method":"ping","params":[1]}))
        else {
            panic!("not invalid")
        };
        assert_eq!(reply["id"], 4);
        assert_eq!(reply["error"]["code"], INVALID_PARAMS);
    }
}
