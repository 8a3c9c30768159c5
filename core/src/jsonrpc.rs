//! JSON-RPC 2.0 envelopes: strict decoding with borrowed payloads, and encoding.
//!
//! Decoding keeps `params`, `result` and `error` as borrowed, checked JSON text
//! (`JsonText`): the envelope is read once, by a scan of our own (`json_scan`), and a payload
//! is only decoded when, and into the type, its consumer chooses.

use std::borrow::Cow;
use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

use crate::RequestId;
use crate::json_scan::{self, After, JsonText, ScanError};

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
        #[derive(Deserialize)]
        struct UrlRequired {
            elicitations: Vec<crate::schema::ElicitRequestParams>,
        }
        let data = || self.data.clone().unwrap_or_default();
        match self.code {
            error_codes::HEADER_MISMATCH => Some(McpError::HeaderMismatch),
            error_codes::URL_ELICITATION_REQUIRED => {
                let d: UrlRequired = serde_json::from_value(data()).ok()?;
                Some(McpError::UrlElicitationRequired { elicitations: d.elicitations })
            }
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

/// The errors MCP defines beyond JSON-RPC's (2025-11-25's `-32042`, 2026-07-28's `-32020` to
/// `-32022`), decoded from an [`ErrorObject`] with [`ErrorObject::mcp_error`]. Over HTTP the
/// 2026-07-28 ones come with status 400.
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
    /// `-32042` (2025-11-25): the request needs the user to complete these URL-mode
    /// elicitations first (open each `url`, let the user act). The request is not retriable as
    /// it is: retry it once the user has acted (the server may say so with
    /// `notifications/elicitation/complete` for each `elicitationId`).
    UrlElicitationRequired {
        /// The elicitations to complete (`mode: "url"`, `url`, `elicitationId`, `message`).
        elicitations: Vec<crate::schema::ElicitRequestParams>,
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

impl fmt::Display for McpError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            McpError::HeaderMismatch => f.write_str("the HTTP headers do not match the body (-32020)"),
            McpError::UrlElicitationRequired { elicitations } => write!(
                f,
                "the user must complete {} URL elicitation(s) first, then retry (-32042)",
                elicitations.len()
            ),
            McpError::MissingRequiredClientCapability { required } => {
                write!(f, "the server requires client capabilities this request did not declare (-32021): ")?;
                let names = required.declared();
                if names.is_empty() { f.write_str("(none named)") } else { f.write_str(&names.join(", ")) }
            }
            McpError::UnsupportedProtocolVersion { supported, requested } => write!(
                f,
                "the server does not speak protocol version {requested} (-32022); it speaks {}",
                supported.join(", ")
            ),
        }
    }
}

impl McpError {
    /// For `-32021`: whether the server named extension `id` among what it requires.
    ///
    /// ```
    /// use mcp_sansio::{ErrorObject, schema::TASKS_EXTENSION};
    /// let error: ErrorObject = serde_json::from_str(
    ///     r#"{"code":-32021,"message":"Missing required client capability",
    ///         "data":{"requiredCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}}}"#,
    /// ).unwrap();
    /// let missing = error.mcp_error().unwrap();
    /// assert!(missing.requires_extension(TASKS_EXTENSION));
    /// assert_eq!(
    ///     missing.to_string(),
    ///     "the server requires client capabilities this request did not declare (-32021): \
    ///      extensions/io.modelcontextprotocol/tasks",
    /// );
    /// ```
    pub fn requires_extension(&self, id: &str) -> bool {
        matches!(self, McpError::MissingRequiredClientCapability { required } if required.has_extension(id))
    }
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
    Request {
        id: RequestId,
        method: Cow<'a, str>,
        params: Option<JsonText<'a>>,
    },
    Notification {
        method: Cow<'a, str>,
        params: Option<JsonText<'a>>,
    },
    Response {
        id: RequestId,
        result: Result<JsonText<'a>, ErrorObject>,
    },
    /// A response with a readable id that is not a valid response: both `result` and `error`,
    /// neither, or an `error` that is not an error object. The request it names cannot get a
    /// better answer, so it fails rather than waiting.
    InvalidResponse {
        id: RequestId,
        why: &'static str,
    },
}

/// The members of a JSON-RPC object that matter; the others are ignored.
#[derive(Default)]
struct Envelope<'a> {
    jsonrpc: Option<Cow<'a, str>>,
    id: Option<JsonText<'a>>,
    method: Option<Cow<'a, str>>,
    params: Option<JsonText<'a>>,
    result: Option<JsonText<'a>>,
    error: Option<JsonText<'a>>,
    /// The members above that were present (one bit each, in their order), `null` or not.
    seen: u8,
}

/// Why a text is no envelope.
enum NotEnvelope {
    /// Not JSON.
    Json(ScanError),
    /// JSON, but not an object with the members' types, or with a member twice.
    Shape,
}

impl From<ScanError> for NotEnvelope {
    fn from(e: ScanError) -> Self {
        NotEnvelope::Json(e)
    }
}

impl From<NotEnvelope> for InvalidMessage {
    fn from(e: NotEnvelope) -> Self {
        match e {
            NotEnvelope::Json(e) => InvalidMessage::Json(e.to_string()),
            NotEnvelope::Shape => InvalidMessage::Envelope("not an object with the JSON-RPC members"),
        }
    }
}

impl<'a> Envelope<'a> {
    /// Reads `text`, one JSON object: what [`read`](Self::read) says, except that text which is
    /// not JSON is always [`NotEnvelope::Json`], even where a member's type was wrong before
    /// the fault (that case reads the rest once more).
    fn parse(text: &'a str) -> Result<Self, NotEnvelope> {
        Self::read(text).map_err(|e| match e {
            NotEnvelope::Shape => {
                JsonText::parse(text).map_or_else(NotEnvelope::Json, |_| NotEnvelope::Shape)
            }
            json => json,
        })
    }

    /// Reads `text`, one JSON object, in one pass: each member's value is checked as it is
    /// passed, and the ones that matter are kept as the text they are.
    fn read(text: &'a str) -> Result<Self, NotEnvelope> {
        let bytes = text.as_bytes();
        let mut at = json_scan::skip_space(bytes, 0);
        if bytes.get(at) != Some(&b'{') {
            // JSON that is not an object is not an envelope; anything else is not JSON.
            return Err(JsonText::parse(text).map_or_else(NotEnvelope::Json, |_| NotEnvelope::Shape));
        }
        let mut envelope = Envelope::default();
        at = json_scan::skip_space(bytes, at + 1);
        if bytes.get(at) == Some(&b'}') {
            at += 1;
        } else {
            loop {
                let (name_end, colon) = json_scan::member(bytes, at)?;
                let name = member_name(&text[at..name_end])?;
                let start = json_scan::skip_space(bytes, colon);
                let end = json_scan::value_end(bytes, start)?;
                envelope.set(&name, JsonText::within(text, start, end))?;
                match json_scan::after_element(bytes, end, true)? {
                    After::Next(next) => at = next,
                    After::Closed(close) => {
                        at = close;
                        break;
                    }
                }
            }
        }
        json_scan::text_ends(bytes, at)?;
        Ok(envelope)
    }

    /// Keeps member `name`'s `value` if it is one that matters; a member twice, or a
    /// `jsonrpc` or `method` that is not a string (or `null`), is no envelope.
    fn set(&mut self, name: &str, value: JsonText<'a>) -> Result<(), NotEnvelope> {
        let bit = match name {
            "jsonrpc" => 0,
            "id" => 1,
            "method" => 2,
            "params" => 3,
            "result" => 4,
            "error" => 5,
            _ => return Ok(()),
        };
        if self.seen & 1 << bit != 0 {
            return Err(NotEnvelope::Shape);
        }
        self.seen |= 1 << bit;
        match bit {
            0 => self.jsonrpc = text_member(value)?,
            1 => self.id = Some(value),
            2 => self.method = text_member(value)?,
            3 => self.params = Some(value),
            4 => self.result = Some(value),
            _ => self.error = Some(value),
        }
        Ok(())
    }
}

/// A member's name, its escapes (if any) decoded; `quoted` is the string with its quotes.
fn member_name(quoted: &str) -> Result<Cow<'_, str>, NotEnvelope> {
    let inner = &quoted[1..quoted.len() - 1];
    if !inner.contains('\\') {
        return Ok(Cow::Borrowed(inner));
    }
    // A checked string only fails to decode on a lone surrogate escape.
    serde_json::from_str::<String>(quoted).map(Cow::Owned).map_err(|_| NotEnvelope::Shape)
}

/// A string member (`null` is none), borrowed from the text unless it has escapes.
fn text_member(value: JsonText<'_>) -> Result<Option<Cow<'_, str>>, NotEnvelope> {
    let text = value.get();
    match text.as_bytes().first() {
        Some(b'"') => member_name(text).map(Some),
        _ if text == "null" => Ok(None),
        _ => Err(NotEnvelope::Shape),
    }
}

/// Decodes one message or a batch, calling `on_message` for each element.
///
/// A batch element that is invalid is reported on its own; the others still count.
///
/// JSON text is UTF-8 (RFC 8259): the caller checks the whole message once, up front (or it
/// came as a `String`), which lets the parser take it as `str` and skip checking each string
/// and raw member again.
pub(crate) fn decode_text<'a>(
    text: &'a str,
    on_message: &mut dyn FnMut(Result<Message<'a>, InvalidMessage>),
) {
    let first = text.bytes().find(|b| !b.is_ascii_whitespace());
    if first == Some(b'[') {
        match batch_items(text) {
            Ok(items) if items.is_empty() => on_message(Err(InvalidMessage::Envelope("empty batch"))),
            Ok(items) => {
                for item in items {
                    on_message(decode_one(item.get()));
                }
            }
            Err(e) => on_message(Err(InvalidMessage::Json(e.to_string()))),
        }
    } else {
        on_message(decode_one(text));
    }
}

/// The elements of a batch, each checked; the whole text must be the one array.
fn batch_items(text: &str) -> Result<Vec<JsonText<'_>>, ScanError> {
    let bytes = text.as_bytes();
    let mut at = json_scan::skip_space(bytes, json_scan::skip_space(bytes, 0) + 1);
    let mut items = Vec::new();
    if bytes.get(at) == Some(&b']') {
        at += 1;
    } else {
        loop {
            let end = json_scan::value_end(bytes, at)?;
            items.push(JsonText::within(text, at, end));
            match json_scan::after_element(bytes, end, false)? {
                After::Next(next) => at = next,
                After::Closed(close) => {
                    at = close;
                    break;
                }
            }
        }
    }
    json_scan::text_ends(bytes, at)?;
    Ok(items)
}

/// Decodes one message that is not a batch (an HTTP body the transport reads before the
/// connection does): what [`decode`] gives for it.
#[cfg(feature = "http")]
pub(crate) fn decode_single(bytes: &[u8]) -> Result<Message<'_>, InvalidMessage> {
    let text = std::str::from_utf8(bytes).map_err(|e| InvalidMessage::Json(format!("not UTF-8: {e}")))?;
    decode_one(text)
}

#[cfg(feature = "http")]
impl Message<'_> {
    /// The id of a response, valid or not.
    pub(crate) fn response_id(&self) -> Option<&RequestId> {
        match self {
            Message::Response { id, .. } | Message::InvalidResponse { id, .. } => Some(id),
            Message::Request { .. } | Message::Notification { .. } => None,
        }
    }
}

/// The method and params of a request as a 2026-07-28 `input_required` result carries it
/// (`{"method": …, "params": …}`, without `jsonrpc` or an id), read with the envelope's rules.
pub(crate) fn decode_call(text: &str) -> Result<(Cow<'_, str>, Option<JsonText<'_>>), InvalidMessage> {
    let env = Envelope::parse(text)?;
    let method = env.method.ok_or(InvalidMessage::Envelope("no method"))?;
    Ok((method, env.params))
}

fn decode_one(text: &str) -> Result<Message<'_>, InvalidMessage> {
    let env = Envelope::parse(text)?;
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
                (Some(_), Some(_)) => Err("a response cannot carry both result and error"),
                (None, None) => Err("no method, result or error"),
                (Some(result), None) => Ok(Ok(result)),
                (None, Some(error)) => serde_json::from_str::<ErrorObject>(error.get())
                    .map(Err)
                    .map_err(|_| "the error member is not a JSON-RPC error object (code and message)"),
            };
            match (id, result) {
                (Some(Some(id)), Ok(result)) => Ok(Message::Response { id, result }),
                (Some(Some(id)), Err(why)) => Ok(Message::InvalidResponse { id, why }),
                (Some(None), Ok(Err(error))) => Err(InvalidMessage::PeerError(error)),
                (_, Err(why)) => Err(InvalidMessage::Envelope(why)),
                (None, Ok(_)) | (Some(None), Ok(Ok(_))) => {
                    Err(InvalidMessage::Envelope("a response needs a non-null id"))
                }
            }
        }
    }
}

/// `Ok(None)` for `null`; integers and strings are ids; anything else is invalid.
fn parse_id(raw: JsonText<'_>) -> Result<Option<RequestId>, InvalidMessage> {
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

/// What the first bytes of a message too large to parse say about it.
#[derive(Debug, PartialEq)]
pub(crate) enum Head {
    /// A response (a `result` or `error` member came before the bytes ran out), with its id if
    /// that came before them too.
    Response(Option<RequestId>),
    /// A request, a notification, a batch, or nothing that can be told.
    Other,
}

/// Reads the top-level members at the start of an object that does not end within `head`: its
/// id, and whether it is a response. Stops at the first value that does not end within `head`.
pub(crate) fn scan_head(head: &[u8]) -> Head {
    let mut scan = Scanner { bytes: head, pos: 0 };
    let mut id = None;
    let mut response = None;
    if scan.next_byte() != Some(b'{') {
        return Head::Other;
    }
    loop {
        if scan.next_byte() != Some(b'"') {
            break;
        }
        let Some(key) = scan.string_body() else { break };
        if scan.next_byte() != Some(b':') {
            break;
        }
        scan.skip_space();
        let start = scan.pos;
        match key {
            b"result" | b"error" => response = Some(true),
            b"method" | b"params" => response = Some(false),
            _ => {}
        }
        if key == b"id" {
            let Some(end) = scan.value_end() else { break };
            id = std::str::from_utf8(&head[start..end])
                .ok()
                .and_then(|raw| JsonText::parse(raw).ok())
                .and_then(|raw| parse_id(raw).ok().flatten());
        }
        if response.is_some() && (id.is_some() || key == b"id") {
            break;
        }
        if key != b"id" && scan.value_end().is_none() {
            break;
        }
        if scan.next_byte() != Some(b',') {
            break;
        }
    }
    match response {
        Some(true) => Head::Response(id),
        Some(false) | None => Head::Other,
    }
}

/// The id of an object whose last member is `"id"`: `…,"id":7}` (the TypeScript SDK writes its
/// responses in that order). Only the end of the object is read, so call it for a message known
/// to be a response ([`scan_head`]).
pub(crate) fn id_at_end(tail: &[u8]) -> Option<RequestId> {
    let tail = tail.trim_ascii_end().strip_suffix(b"}")?.trim_ascii_end();
    // The value: an integer or a string without escapes (ids are short).
    let value_start = if tail.last() == Some(&b'"') {
        tail[..tail.len() - 1].iter().rposition(|&b| b == b'"' || b == b'\\')?
    } else {
        tail.iter().rposition(|&b| !(b.is_ascii_digit() || b == b'-'))? + 1
    };
    let value = &tail[value_start..];
    let before = tail[..value_start].trim_ascii_end().strip_suffix(b":")?.trim_ascii_end();
    let before = before.strip_suffix(b"\"id\"")?.trim_ascii_end();
    // The member must follow another one or open the object: then it is a top-level member.
    if !matches!(before.last(), Some(b',' | b'{')) || value.first() == Some(&b'\\') {
        return None;
    }
    let raw = JsonText::parse(std::str::from_utf8(value).ok()?).ok()?;
    parse_id(raw).ok().flatten()
}

/// A cursor over the start of a JSON text, for [`scan_head`]: each step says `None` when the
/// bytes run out (or are not JSON) before it is done.
struct Scanner<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl<'a> Scanner<'a> {
    fn skip_space(&mut self) {
        while self.bytes.get(self.pos).is_some_and(u8::is_ascii_whitespace) {
            self.pos += 1;
        }
    }

    /// The next byte that is not white space.
    fn next_byte(&mut self) -> Option<u8> {
        self.skip_space();
        let byte = *self.bytes.get(self.pos)?;
        self.pos += 1;
        Some(byte)
    }

    /// The raw contents of a string whose opening quote was just read; moves past its end.
    fn string_body(&mut self) -> Option<&'a [u8]> {
        let start = self.pos;
        loop {
            match *self.bytes.get(self.pos)? {
                b'"' => {
                    self.pos += 1;
                    return Some(&self.bytes[start..self.pos - 1]);
                }
                b'\\' => self.pos += 2,
                _ => self.pos += 1,
            }
        }
    }

    /// Moves past the value that starts here; returns where it ends.
    fn value_end(&mut self) -> Option<usize> {
        self.skip_space();
        match *self.bytes.get(self.pos)? {
            b'"' => {
                self.pos += 1;
                self.string_body()?;
            }
            b'{' | b'[' => {
                let mut depth = 0usize;
                loop {
                    match *self.bytes.get(self.pos)? {
                        b'"' => {
                            self.pos += 1;
                            self.string_body()?;
                            continue;
                        }
                        b'{' | b'[' => depth += 1,
                        b'}' | b']' => depth -= 1,
                        _ => {}
                    }
                    self.pos += 1;
                    if depth == 0 {
                        break;
                    }
                }
            }
            _ => {
                // A number or a literal: it ends where a delimiter starts, which must be here.
                let len = self.bytes[self.pos..]
                    .iter()
                    .position(|b| matches!(b, b',' | b'}' | b']') || b.is_ascii_whitespace())?;
                self.pos += len;
            }
        }
        Some(self.pos)
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

/// The `notifications/initialized` message that completes a handshake, without a newline (an
/// HTTP body as it is; a line on stdio with one).
pub(crate) const INITIALIZED: &[u8] = br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;

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
        let url = error(
            -32042,
            serde_json::json!({"elicitations": [{"mode": "url", "elicitationId": "e1",
                "url": "https://example.com/connect", "message": "Connect your account"}]}),
        )
        .mcp_error();
        let Some(McpError::UrlElicitationRequired { elicitations }) = &url else { panic!("{url:?}") };
        assert_eq!(elicitations[0].url.as_deref(), Some("https://example.com/connect"));
        assert_eq!(error(-32042, serde_json::json!({})).mcp_error(), None);
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

    /// What the connection does with a frame: checks it as UTF-8, then decodes it.
    fn decode<'a>(bytes: &'a [u8], on_message: &mut dyn FnMut(Result<Message<'a>, InvalidMessage>)) {
        match std::str::from_utf8(bytes) {
            Ok(text) => decode_text(text, on_message),
            Err(e) => on_message(Err(InvalidMessage::Json(format!("not UTF-8: {e}")))),
        }
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
            r#"{"jsonrpc":"2.0","id":null,"result":{},"error":{"code":1,"message":"x"}}"#,
            r#"{"jsonrpc":"2.0","result":{},"error":{"code":1,"message":"x"}}"#,
            r#"{"jsonrpc":"2.0","id":null,"error":"boom"}"#,
            r#"{"jsonrpc":"1.0","id":1,"result":{}}"#,
            r#"{"id":1,"result":{}}"#,
            r#"{"jsonrpc":"2.0","id":1.5,"result":{}}"#,
            r#"{"jsonrpc":"2.0","id":{},"result":{}}"#,
            r#"{"jsonrpc":"2.0","id":null,"method":"x"}"#,
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
    fn an_invalid_response_with_a_readable_id_names_it() {
        for (bad, why) in [
            (r#"{"jsonrpc":"2.0","id":1,"result":{},"error":{"code":1,"message":"x"}}"#, "both"),
            (r#"{"jsonrpc":"2.0","id":1,"error":"boom"}"#, "error object"),
            (r#"{"jsonrpc":"2.0","id":1,"error":{"code":"x","message":"m"}}"#, "error object"),
            (r#"{"jsonrpc":"2.0","id":1}"#, "no method, result or error"),
        ] {
            match one(bad) {
                Ok(Message::InvalidResponse { id: RequestId::Number(1), why: got }) => {
                    assert!(got.contains(why), "{bad}: {got}")
                }
                other => panic!("{bad}: {other:?}"),
            }
        }
    }

    #[test]
    fn the_head_of_an_oversized_message_tells_a_response_and_its_id() {
        use Head::{Other, Response};
        let n = |n| Response(Some(RequestId::Number(n)));
        for (head, expected) in [
            (r#"{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"xxx"#, n(7)),
            (r#" { "id" : 7 , "jsonrpc" : "2.0" , "error" : {"code":1,"message":"xx"#, n(7)),
            (r#"{"jsonrpc":"2.0","result":{"a":[1,{"b":"}]"}],"c":2},"id":8,"x":"#, n(8)),
            (r#"{"jsonrpc":"2.0","id":"s\"1","result":"#, Response(Some(RequestId::from("s\"1")))),
            (r#"{"result":{"content":[{"type":"text","text":"xxxxxxxx"#, Response(None)),
            (r#"{"jsonrpc":"2.0","id":null,"result":"#, Response(None)),
            (r#"{"jsonrpc":"2.0","id":7"#, Other),
            (r#"{"jsonrpc":"2.0","id":7,"method":"sampling/createMessage","params":{"#, Other),
            (r#"{"jsonrpc":"2.0","id":7,"params":{"messages":[],"result":1"#, Other),
            (r#"{"method":"x","params":{"id":7,"result":1"#, Other),
            (r#"[{"jsonrpc":"2.0","id":7,"result":{}}"#, Other),
            (r#"{"jsonrpc":"2.0","id":7.5,"result":{"#, Response(None)),
            ("not json", Other),
            ("", Other),
        ] {
            assert_eq!(scan_head(head.as_bytes()), expected, "{head}");
        }
    }

    #[test]
    fn an_id_written_last_is_read_from_the_end() {
        let id = |s: &str| id_at_end(s.as_bytes());
        assert_eq!(id(r#"xxx"}]},"jsonrpc":"2.0","id":12}"#), Some(RequestId::Number(12)));
        assert_eq!(id("xx\"}]} , \"id\" : -3 }  \r"), Some(RequestId::Number(-3)));
        assert_eq!(id(r#"xx"}]},"id":"abc"}"#), Some(RequestId::from("abc")));
        assert_eq!(id(r#"{"id":5}"#), Some(RequestId::Number(5)));
        assert_eq!(id(r#"xx"}]},"id":"a\"b"}"#), None);
        assert_eq!(id(r#"xx"},"id":5}}"#), None);
        assert_eq!(id(r#"xx","xid":5}"#), None);
        assert_eq!(id(r#"xx","id":null}"#), None);
        assert_eq!(id(r#"xx","id":5]"#), None);
        assert_eq!(id(r#"xx","id":}"#), None);
        assert_eq!(id("5}"), None);
        assert_eq!(id(""), None);
    }

    #[test]
    fn the_version_and_method_are_read_with_or_without_escapes() {
        match one(r#"{"jsonrpc":"2\u002e0","id":1,"method":"tools\/list"}"#).unwrap() {
            Message::Request { method, .. } => assert_eq!(method, "tools/list"),
            other => panic!("{other:?}"),
        }
        // A `null` method is no method, as an absent one.
        assert!(matches!(
            one(r#"{"jsonrpc":"2.0","id":1,"method":null,"result":{}}"#),
            Ok(Message::Response { .. })
        ));
        for bad in [
            r#"{"jsonrpc":2.0,"id":1,"result":{}}"#,
            r#"{"jsonrpc":null,"id":1,"result":{}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":7}"#,
            r#"{"jsonrpc":["2.0"],"id":1,"result":{}}"#,
        ] {
            assert!(matches!(one(bad), Err(InvalidMessage::Envelope(_))), "{bad}");
        }
        // JSON text is UTF-8: anywhere in the message, even in a member nobody reads.
        for bad in [
            &b"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":\"\xff\"}"[..],
            b"{\"x\":\"\xc3\",\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}",
        ] {
            let mut got = Vec::new();
            decode(bad, &mut |m| got.push(m));
            assert!(matches!(got[..], [Err(InvalidMessage::Json(_))]), "{got:?}");
        }
    }

    #[test]
    fn null_result_is_a_present_result() {
        assert!(matches!(
            one(r#"{"jsonrpc":"2.0","id":1,"result":null}"#),
            Ok(Message::Response { result: Ok(_), .. })
        ));
    }

    /// The envelope is read by our own scan: a member twice (even `null` first), a `jsonrpc` or
    /// `method` that is no string, and an array in place of the object are no envelope; text
    /// that is not JSON is a JSON error, wherever the fault is.
    #[test]
    fn the_envelope_is_an_object_with_each_member_once() {
        for bad in [
            r#"{"jsonrpc":"2.0","id":1,"id":2,"result":{}}"#,
            r#"{"jsonrpc":"2.0","id":1,"result":{},"result":{}}"#,
            r#"{"jsonrpc":null,"jsonrpc":"2.0","id":1,"result":{}}"#,
            r#"{"jsonrpc":"2.0","jsonrpc":"2.0","id":1,"result":{}}"#,
            r#"{"jsonrpc":"2.0","method":5}"#,
            r#"{"jsonrpc":"2.0","me\u0074hod":"a","method":"b"}"#,
            r#""{}""#,
        ] {
            assert!(matches!(one(bad), Err(InvalidMessage::Envelope(_))), "{bad}: {:?}", one(bad));
        }
        // serde would have read an array as the struct's members in order.
        let mut got = Vec::new();
        decode(br#"[["2.0",1,"ping"]]"#, &mut |m| got.push(m));
        assert!(matches!(got[..], [Err(InvalidMessage::Envelope(_))]), "{got:?}");
        for bad in [
            r#"{"jsonrpc":"2.0","id":1,"result":{"text":"a\qb"}}"#,
            r#"{"jsonrpc":"2.0","id":1,"result":[1,]}"#,
            r#"{"jsonrpc":"2.0","id":1,"result":{}} x"#,
            r#"{"jsonrpc":"2.0","id":1,"result":01}"#,
            r#"{"jsonrpc":"2.0","id":1 "result":{}}"#,
            r#"{"jsonrpc":"2.0","id":1,"result":{}"#,
            r#"{"jsonrpc":"2.0",}"#,
            "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":\"\u{1}\"}",
            "x",
            "[1,",
        ] {
            assert!(matches!(one(bad), Err(InvalidMessage::Json(_))), "{bad}: {:?}", one(bad));
        }
        // Members that do not matter are checked too, and otherwise ignored.
        match one(r#" { "extra" : [ {"a": "\"}"} ] , "jsonrpc" : "2.0" , "result" : null , "id" : 3 } "#) {
            Ok(Message::Response { id, result: Ok(result) }) => {
                assert_eq!((id, result.get()), (RequestId::Number(3), "null"));
            }
            other => panic!("{other:?}"),
        }
    }

    proptest::proptest! {
        /// A message is a JSON error exactly when serde_json finds its text no JSON.
        #[test]
        fn json_errors_are_what_serde_json_calls_no_json(
            text in r#"\{("(jsonrpc|id|method|params|result|error|x)":(1|"2\.0"|null|\{\}|\[1,2\]|"a\\"b"|tru|01)[,}]){1,5}"#
        ) {
            let serde_says_json = serde_json::from_str::<serde_json::Value>(&text).is_ok();
            let mut got = Vec::new();
            decode(text.as_bytes(), &mut |m| got.push(m));
            let ours_says_json = !matches!(got[..], [Err(InvalidMessage::Json(_))]);
            proptest::prop_assert_eq!(ours_says_json, serde_says_json, "{}: {:?}", text, got);
        }
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
        let mut initialized = Vec::new();
        encode_notification(&mut initialized, "notifications/initialized", None);
        assert_eq!(initialized.strip_suffix(b"\n"), Some(INITIALIZED));
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
