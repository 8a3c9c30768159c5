//! JSON-RPC 2.0 envelopes: strict decoding with borrowed payloads, and encoding.
//!
//! Decoding keeps `params`, `result` and `error.data` as borrowed [`RawValue`]s: the envelope is
//! parsed once, and a payload is only decoded when, and into the type, its consumer chooses.

use std::borrow::Cow;
use std::fmt;

use serde::{Deserialize, Deserializer, Serialize};
use serde_json::value::RawValue;

use crate::RequestId;

/// Standard JSON-RPC and MCP error codes.
pub mod error_codes {
    /// Invalid JSON was received.
    pub const PARSE_ERROR: i64 = -32700;
    /// The JSON sent is not a valid request object.
    pub const INVALID_REQUEST: i64 = -32600;
    /// The method does not exist or is not available.
    pub const METHOD_NOT_FOUND: i64 = -32601;
    /// Invalid method parameters.
    pub const INVALID_PARAMS: i64 = -32602;
    /// Internal error.
    pub const INTERNAL_ERROR: i64 = -32603;
    /// MCP: the requested resource does not exist.
    pub const RESOURCE_NOT_FOUND: i64 = -32002;
    /// MCP 2025-11-25: the server needs the user to complete a URL-mode elicitation first.
    pub const URL_ELICITATION_REQUIRED: i64 = -32042;
    /// 2026-07-28: HTTP headers and body disagree, or required headers are missing.
    pub const HEADER_MISMATCH: i64 = -32020;
    /// 2026-07-28: the request needs a client capability the request did not declare.
    pub const MISSING_REQUIRED_CLIENT_CAPABILITY: i64 = -32021;
    /// 2026-07-28: the request's protocol version is not one the server speaks
    /// (`data.supported` lists those it does).
    pub const UNSUPPORTED_PROTOCOL_VERSION: i64 = -32022;
}

/// A JSON-RPC error object, as received in an error response or sent in one.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ErrorObject {
    /// The error code (see [`error_codes`]).
    pub code: i64,
    /// A short description.
    pub message: String,
    /// Additional information, as the peer sent it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<serde_json::Value>,
}

impl ErrorObject {
    /// An error with a code and a message.
    pub fn new(code: i64, message: impl Into<String>) -> Self {
        Self { code, message: message.into(), data: None }
    }

    /// `-32601 Method not found`.
    pub fn method_not_found(method: &str) -> Self {
        Self::new(error_codes::METHOD_NOT_FOUND, format!("Method not found: {method}"))
    }

    /// `-32602 Invalid params`.
    pub fn invalid_params(detail: impl fmt::Display) -> Self {
        Self::new(error_codes::INVALID_PARAMS, format!("Invalid params: {detail}"))
    }

    /// `-32603 Internal error`.
    pub fn internal(detail: impl fmt::Display) -> Self {
        Self::new(error_codes::INTERNAL_ERROR, format!("Internal error: {detail}"))
    }

    /// The error as one of the MCP errors 2026-07-28 defines, with its data decoded; `None`
    /// for any other code, or when the data does not have the shape the code requires.
    ///
    /// ```
    /// use mcp_sansio::jsonrpc::{ErrorObject, McpError};
    ///
    /// let error: ErrorObject = serde_json::from_str(
    ///     r#"{"code":-32022,"message":"Unsupported protocol version",
    ///         "data":{"supported":["2026-07-28"],"requested":"1900-01-01"}}"#,
    /// ).unwrap();
    /// let Some(McpError::UnsupportedProtocolVersion { supported, requested }) = error.mcp_error() else {
    ///     panic!()
    /// };
    /// assert_eq!((supported.as_slice(), requested.as_str()), (&["2026-07-28".to_owned()][..], "1900-01-01"));
    /// ```
    pub fn mcp_error(&self) -> Option<McpError> {
        #[derive(Deserialize)]
        struct Unsupported {
            supported: Vec<String>,
            requested: String,
        }
        #[derive(Deserialize)]
        #[serde(rename_all = "camelCase")]
        struct Missing {
            required_capabilities: crate::schema::ClientCapabilities,
        }
        let data = || self.data.clone().unwrap_or_default();
        match self.code {
            error_codes::HEADER_MISMATCH => Some(McpError::HeaderMismatch),
            error_codes::MISSING_REQUIRED_CLIENT_CAPABILITY => {
                let missing: Missing = serde_json::from_value(data()).ok()?;
                Some(McpError::MissingRequiredClientCapability { required: missing.required_capabilities })
            }
            error_codes::UNSUPPORTED_PROTOCOL_VERSION => {
                let d: Unsupported = serde_json::from_value(data()).ok()?;
                Some(McpError::UnsupportedProtocolVersion { supported: d.supported, requested: d.requested })
            }
            _ => None,
        }
    }
}

/// The errors MCP 2026-07-28 defines (codes `-32020` to `-32022`), decoded from an
/// [`ErrorObject`] with [`ErrorObject::mcp_error`]. Over HTTP they come with status 400.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum McpError {
    /// `-32020`: the HTTP headers (`MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name`,
    /// `Mcp-Param-*`) are missing or do not match the body. The HTTP session already fetched the
    /// tool list again and re-sent a refused tool call once.
    HeaderMismatch,
    /// `-32021`: the server needs a client capability this request did not declare; declare it
    /// (and handle what it implies) to use this feature.
    MissingRequiredClientCapability {
        /// The capabilities the server requires.
        required: crate::schema::ClientCapabilities,
    },
    /// `-32022`: the server does not speak the request's protocol version. The engine already
    /// moved to a version from `supported` if it speaks one.
    UnsupportedProtocolVersion {
        /// The versions the server speaks.
        supported: Vec<String>,
        /// The version the request carried.
        requested: String,
    },
}

impl fmt::Display for ErrorObject {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} (code {})", self.message, self.code)
    }
}

impl std::error::Error for ErrorObject {}

/// Why an incoming message was discarded as invalid.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum InvalidMessage {
    /// The bytes are not valid JSON (or not UTF-8).
    #[error("not valid JSON: {0}")]
    Json(String),
    /// Valid JSON, but not a JSON-RPC 2.0 message.
    #[error("not a JSON-RPC 2.0 message: {0}")]
    Envelope(&'static str),
    /// A message longer than the configured maximum; it was dropped unread.
    #[error("message of {len} bytes exceeds the maximum of {max} bytes")]
    TooLarge {
        /// Bytes seen.
        len: usize,
        /// The configured maximum.
        max: usize,
    },
    /// A known notification or request whose params do not match the schema.
    #[error("invalid params for {method}: {detail}")]
    Params {
        /// The method.
        method: String,
        /// What serde said.
        detail: String,
    },
    /// An error response with a `null` id: the peer could not parse something we sent.
    #[error("peer reported an error without an id: {0}")]
    PeerError(ErrorObject),
}

/// One decoded JSON-RPC message, borrowing from the input bytes.
#[derive(Debug)]
pub(crate) enum Message<'a> {
    Request { id: RequestId, method: Cow<'a, str>, params: Option<&'a RawValue> },
    Notification { method: Cow<'a, str>, params: Option<&'a RawValue> },
    Response { id: RequestId, result: Result<&'a RawValue, ErrorObject> },
}

#[derive(Deserialize)]
struct Envelope<'a> {
    #[serde(borrow, default)]
    jsonrpc: Option<Cow<'a, str>>,
    #[serde(borrow, default, deserialize_with = "present")]
    id: Option<&'a RawValue>,
    #[serde(borrow, default)]
    method: Option<Cow<'a, str>>,
    #[serde(borrow, default, deserialize_with = "present")]
    params: Option<&'a RawValue>,
    #[serde(borrow, default, deserialize_with = "present")]
    result: Option<&'a RawValue>,
    #[serde(borrow, default, deserialize_with = "present")]
    error: Option<&'a RawValue>,
}

/// Maps a present member (even `null`) to `Some`, so that absent and `null` stay distinct.
fn present<'de, D: Deserializer<'de>>(d: D) -> Result<Option<&'de RawValue>, D::Error> {
    <&RawValue>::deserialize(d).map(Some)
}

/// Decodes one message or a batch, calling `on_message` for each element.
///
/// A batch element that is invalid is reported on its own; the others still count.
pub(crate) fn decode<'a>(bytes: &'a [u8], on_message: &mut dyn FnMut(Result<Message<'a>, InvalidMessage>)) {
    let first = bytes.iter().find(|b| !b.is_ascii_whitespace());
    if first == Some(&b'[') {
        match serde_json::from_slice::<Vec<&'a RawValue>>(bytes) {
            Ok(items) if items.is_empty() => on_message(Err(InvalidMessage::Envelope("empty batch"))),
            Ok(items) => {
                for item in items {
                    on_message(decode_one(item.get().as_bytes()));
                }
            }
            Err(e) => on_message(Err(InvalidMessage::Json(e.to_string()))),
        }
    } else {
        on_message(decode_one(bytes));
    }
}

fn decode_one(bytes: &[u8]) -> Result<Message<'_>, InvalidMessage> {
    let env: Envelope<'_> = serde_json::from_slice(bytes).map_err(|e| {
        if e.is_data() {
            InvalidMessage::Envelope("not an object with the JSON-RPC members")
        } else {
            InvalidMessage::Json(e.to_string())
        }
    })?;
    if env.jsonrpc.as_deref() != Some("2.0") {
        return Err(InvalidMessage::Envelope("\"jsonrpc\" must be \"2.0\""));
    }
    let id = env.id.map(parse_id).transpose()?;
    match (env.method, id) {
        (Some(method), Some(Some(id))) => {
            if env.result.is_some() || env.error.is_some() {
                return Err(InvalidMessage::Envelope("a request cannot carry result or error"));
            }
            Ok(Message::Request { id, method, params: env.params })
        }
        (Some(_), Some(None)) => Err(InvalidMessage::Envelope("a request id cannot be null")),
        (Some(method), None) => {
            if env.result.is_some() || env.error.is_some() {
                return Err(InvalidMessage::Envelope("a notification cannot carry result or error"));
            }
            Ok(Message::Notification { method, params: env.params })
        }
        (None, id) => {
            let result = match (env.result, env.error) {
                (Some(_), Some(_)) => {
                    return Err(InvalidMessage::Envelope("a response cannot carry both result and error"));
                }
                (None, None) => {
                    return Err(InvalidMessage::Envelope("no method, result or error"));
                }
                (Some(result), None) => Ok(result),
                (None, Some(error)) => Err(serde_json::from_str::<ErrorObject>(error.get())
                    .map_err(|_| InvalidMessage::Envelope("malformed error object"))?),
            };
            match (id, result) {
                (Some(Some(id)), result) => Ok(Message::Response { id, result }),
                (Some(None), Err(error)) => Err(InvalidMessage::PeerError(error)),
                (None, _) | (Some(None), Ok(_)) => {
                    Err(InvalidMessage::Envelope("a response needs a non-null id"))
                }
            }
        }
    }
}

/// `Ok(None)` for `null`; integers and strings are ids; anything else is invalid.
fn parse_id(raw: &RawValue) -> Result<Option<RequestId>, InvalidMessage> {
    let text = raw.get();
    match text.as_bytes().first() {
        Some(b'n') => Ok(None),
        Some(b'"') => serde_json::from_str::<String>(text)
            .map(|s| Some(RequestId::String(s)))
            .map_err(|_| InvalidMessage::Envelope("malformed string id")),
        _ => text
            .parse::<i64>()
            .map(|n| Some(RequestId::Number(n)))
            .map_err(|_| InvalidMessage::Envelope("an id must be an integer or a string")),
    }
}

/// Appends a request line: `{"jsonrpc":"2.0","id":…,"method":…,"params":…}\n`.
///
/// `params` must be one valid JSON value (the callers check or produce it).
pub(crate) fn encode_request(out: &mut Vec<u8>, id: &RequestId, method: &str, params: Option<&[u8]>) {
    out.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"id\":");
    write_id(out, id);
    out.extend_from_slice(b",\"method\":");
    write_str(out, method);
    write_params(out, params);
    out.extend_from_slice(b"}\n");
}

/// Appends a notification line.
pub(crate) fn encode_notification(out: &mut Vec<u8>, method: &str, params: Option<&[u8]>) {
    out.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"method\":");
    write_str(out, method);
    write_params(out, params);
    out.extend_from_slice(b"}\n");
}

/// Appends a response line, with a result or an error.
pub(crate) fn encode_response(out: &mut Vec<u8>, id: &RequestId, outcome: Result<&RawValue, &ErrorObject>) {
    out.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"id\":");
    write_id(out, id);
    match outcome {
        Ok(result) => {
            out.extend_from_slice(b",\"result\":");
            out.extend_from_slice(result.get().as_bytes());
        }
        Err(error) => {
            out.extend_from_slice(b",\"error\":");
            // Serializing plain data into a Vec cannot fail.
            let _ = serde_json::to_writer(&mut *out, error);
        }
    }
    out.extend_from_slice(b"}\n");
}

fn write_params(out: &mut Vec<u8>, params: Option<&[u8]>) {
    if let Some(params) = params {
        out.extend_from_slice(b",\"params\":");
        out.extend_from_slice(params);
    }
}

fn write_id(out: &mut Vec<u8>, id: &RequestId) {
    match id {
        RequestId::Number(n) => out.extend_from_slice(n.to_string().as_bytes()),
        RequestId::String(s) => write_str(out, s),
    }
}

fn write_str(out: &mut Vec<u8>, s: &str) {
    if s.bytes().all(|b| b >= 0x20 && b != b'"' && b != b'\\') {
        out.push(b'"');
        out.extend_from_slice(s.as_bytes());
        out.push(b'"');
    } else {
        // Strings cannot fail to serialize.
        let _ = serde_json::to_writer(&mut *out, s);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mcp_errors_decode_with_their_data() {
        let error =
            |code: i64, data: serde_json::Value| ErrorObject { code, message: "m".into(), data: Some(data) };
        assert_eq!(error(-32020, serde_json::Value::Null).mcp_error(), Some(McpError::HeaderMismatch));
        let missing =
            error(-32021, serde_json::json!({"requiredCapabilities": {"elicitation": {}}})).mcp_error();
        let Some(McpError::MissingRequiredClientCapability { required }) = missing else {
            panic!("{missing:?}")
        };
        assert!(required.elicitation.is_some());
        // The data each code requires, or no decoding.
        assert_eq!(error(-32021, serde_json::json!({})).mcp_error(), None);
        assert_eq!(error(-32022, serde_json::json!({"supported": ["x"]})).mcp_error(), None);
        // Codes the legacy range leaves to implementations mean nothing.
        assert_eq!(
            error(-32004, serde_json::json!({"supported": ["x"], "requested": "y"})).mcp_error(),
            None
        );
    }

    fn one(s: &str) -> Result<Message<'_>, InvalidMessage> {
        let mut got = Vec::new();
        decode(s.as_bytes(), &mut |m| got.push(m));
        assert_eq!(got.len(), 1);
        got.pop().unwrap()
    }

    #[test]
    fn decodes_requests_notifications_and_responses() {
        match one(r#"{"jsonrpc":"2.0","id":"a","method":"roots/list","params":{}}"#).unwrap() {
            Message::Request { id, method, params } => {
                assert_eq!(id, RequestId::from("a"));
                assert_eq!(method, "roots/list");
                assert_eq!(params.unwrap().get(), "{}");
            }
            other => panic!("{other:?}"),
        }
        assert!(matches!(
            one(r#"{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}"#).unwrap(),
            Message::Notification { params: None, .. }
        ));
        match one(r#"{"jsonrpc":"2.0","id":7,"result":{"tools":[]}}"#).unwrap() {
            Message::Response { id, result } => {
                assert_eq!(id, RequestId::Number(7));
                assert_eq!(result.unwrap().get(), r#"{"tools":[]}"#);
            }
            other => panic!("{other:?}"),
        }
        match one(r#"{"jsonrpc":"2.0","id":7,"error":{"code":-32601,"message":"nope"}}"#).unwrap() {
            Message::Response { result: Err(e), .. } => assert_eq!(e.code, -32601),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn rejects_what_the_spec_forbids() {
        for bad in [
            r#"{"jsonrpc":"2.0","id":1,"result":{},"error":{"code":1,"message":"x"}}"#,
            r#"{"jsonrpc":"1.0","id":1,"result":{}}"#,
            r#"{"id":1,"result":{}}"#,
            r#"{"jsonrpc":"2.0","id":1.5,"result":{}}"#,
            r#"{"jsonrpc":"2.0","id":{},"result":{}}"#,
            r#"{"jsonrpc":"2.0","id":null,"method":"x"}"#,
            r#"{"jsonrpc":"2.0","id":1}"#,
            r#"{"jsonrpc":"2.0","id":1,"error":"boom"}"#,
            r#"{"jsonrpc":"2.0","result":{}}"#,
            r#"[]"#,
            r#"42"#,
            r#"{"jsonrpc":"2.0","id":1,"result":{}"#,
        ] {
            assert!(one(bad).is_err(), "accepted {bad}");
        }
        assert!(matches!(
            one(r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}"#),
            Err(InvalidMessage::PeerError(_))
        ));
    }

    #[test]
    fn null_result_is_a_present_result() {
        assert!(matches!(
            one(r#"{"jsonrpc":"2.0","id":1,"result":null}"#),
            Ok(Message::Response { result: Ok(_), .. })
        ));
    }

    #[test]
    fn batches_report_each_element() {
        let input = br#"[{"jsonrpc":"2.0","method":"a"}, 5, {"jsonrpc":"2.0","id":2,"result":{}}]"#;
        let mut kinds = Vec::new();
        decode(input, &mut |m| kinds.push(m.is_ok()));
        assert_eq!(kinds, vec![true, false, true]);
    }

    #[test]
    fn encodes_exact_bytes() {
        let mut out = Vec::new();
        encode_request(&mut out, &RequestId::Number(3), "tools/call", Some(br#"{"name":"echo"}"#));
        encode_notification(&mut out, "notifications/initialized", None);
        encode_response(&mut out, &RequestId::from("s\"1"), Err(&ErrorObject::method_not_found("x")));
        assert_eq!(
            String::from_utf8(out).unwrap(),
            concat!(
                r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo"}}"#,
                "\n",
                r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
                "\n",
                r#"{"jsonrpc":"2.0","id":"s\"1","error":{"code":-32601,"message":"Method not found: x"}}"#,
                "\n",
            )
        );
    }
}
