//! What the fuzz targets share: the simulated clock, scripted server messages, and the checks
//! every transmit of the engine must pass.
//!
//! Inputs are decoded with `arbitrary`, and every target puts a structured header first and takes
//! the rest of the input verbatim as a byte pool (`&[u8]` as the last field, which `arbitrary`
//! takes whole). A seed file is then a few header bytes followed by real protocol bytes, and the
//! fuzzer mutates both the script and the bytes.

use std::collections::{BTreeSet, VecDeque};
use std::sync::OnceLock;
use std::time::Instant;

use mcp_sansio::{Event, RequestId, Transmit, TransmitKind};
use serde_json::{Value, json};

/// The fixed epoch of the simulated clock: the real clock is read once per process, and time only
/// moves by the amounts an input says.
pub fn epoch() -> Instant {
    static EPOCH: OnceLock<Instant> = OnceLock::new();
    *EPOCH.get_or_init(Instant::now)
}

/// Protocol versions a scripted server may answer with (the last one is not a version).
pub const VERSIONS: [&str; 6] =
    ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28", "1999-01-01"];

/// A version picked by a fuzzer byte.
pub fn version(pick: u8) -> &'static str {
    VERSIONS[usize::from(pick) % VERSIONS.len()]
}

/// Client capabilities declaring everything a handler can serve (roots, sampling, elicitation).
pub fn all_client_capabilities() -> mcp_sansio::schema::ClientCapabilities {
    mcp_sansio::schema::ClientCapabilities {
        roots: Some(mcp_sansio::schema::ListChangedCapability::default()),
        sampling: Some(Default::default()),
        elicitation: Some(Default::default()),
        ..Default::default()
    }
}

/// Server capabilities picked by the bits of a fuzzer byte (tools, resources, subscribe, prompts,
/// logging, completions, list changes).
pub fn server_capabilities(bits: u8) -> Value {
    let list_changed = bits & 0x40 != 0;
    let mut caps = serde_json::Map::new();
    if bits & 0x01 != 0 {
        caps.insert("tools".into(), json!({"listChanged": list_changed}));
    }
    if bits & 0x02 != 0 {
        caps.insert("resources".into(), json!({"subscribe": bits & 0x04 != 0, "listChanged": list_changed}));
    }
    if bits & 0x08 != 0 {
        caps.insert("prompts".into(), json!({"listChanged": list_changed}));
    }
    if bits & 0x10 != 0 {
        caps.insert("logging".into(), json!({}));
    }
    if bits & 0x20 != 0 {
        caps.insert("completions".into(), json!({}));
    }
    Value::Object(caps)
}

/// Every capability (what the scripted handshakes declare).
pub const ALL_CAPABILITIES: u8 = 0x7f;

/// An `initialize` result.
pub fn initialize_result(version: &str, capabilities: Value) -> Value {
    json!({
        "protocolVersion": version,
        "capabilities": capabilities,
        "serverInfo": {"name": "fuzz-server", "version": "1.0.0"},
        "instructions": "Use the tools."
    })
}

/// A `server/discover` result offering `supported`.
pub fn discover_result(supported: &[&str], capabilities: Value) -> Value {
    json!({
        "resultType": "complete",
        "supportedVersions": supported,
        "capabilities": capabilities,
        "instructions": "modern server",
        "ttlMs": 60000,
        "cacheScope": "public",
        "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "fuzz-modern", "version": "1.0"}}
    })
}

/// A result body for a request, picked by a fuzzer byte: the shapes a server answers with.
pub fn result_body(kind: u8, arg: u8) -> Value {
    match kind % 12 {
        0 => json!({}),
        1 => Value::Null,
        2 => initialize_result(version(arg), server_capabilities(arg.rotate_left(3))),
        3 => discover_result(&VERSIONS[..usize::from(arg) % VERSIONS.len()], server_capabilities(arg)),
        4 => json!({"tools": [
            {"name": "echo", "inputSchema": {"type": "object"}},
            {"name": "add", "inputSchema": {"type": "object", "properties": {"a": {"type": "number",
                "x-mcp-header": "A"}}}, "outputSchema": {"type": "object"}}
        ], "nextCursor": if arg & 1 == 1 { json!("c1") } else { Value::Null }}),
        5 => json!({"content": [{"type": "text", "text": "hi"}, {"type": "image", "data": "AAAA",
            "mimeType": "image/png"}], "isError": arg & 1 == 1, "structuredContent": {"n": arg}}),
        6 => json!({"resultType": "input_required", "requestState": format!("state-{arg}"),
            "inputRequests": input_requests(arg)}),
        7 => json!({"contents": [{"uri": "file:///a", "text": "a"}, {"uri": "file:///b", "blob": "AA=="}]}),
        8 => json!({"messages": [{"role": "user", "content": {"type": "text", "text": "p"}}]}),
        9 => json!({"resources": [{"uri": "file:///a", "name": "a"}], "nextCursor": "n"}),
        10 => json!({"completion": {"values": ["a", "b"], "total": 2, "hasMore": false}}),
        _ => json!({"resultType": "complete", "value": arg}),
    }
}

/// The `inputRequests` of an `input_required` result, picked by the bits of a fuzzer byte.
pub fn input_requests(bits: u8) -> Value {
    let mut map = serde_json::Map::new();
    if bits & 0x01 != 0 {
        map.insert("roots".into(), json!({"method": "roots/list"}));
    }
    if bits & 0x02 != 0 {
        map.insert(
            "ask".into(),
            json!({"method": "elicitation/create", "params": {"message": "name?",
                "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}}}}),
        );
    }
    if bits & 0x04 != 0 {
        map.insert("llm".into(), json!({"method": "sampling/createMessage", "params": sampling_params()}));
    }
    if bits & 0x08 != 0 {
        map.insert("odd".into(), json!({"method": "unknown/kind"}));
    }
    if bits & 0x10 != 0 {
        map.insert("bad".into(), json!({"method": "elicitation/create", "params": 5}));
    }
    Value::Object(map)
}

/// Valid `sampling/createMessage` params.
pub fn sampling_params() -> Value {
    json!({"messages": [{"role": "user", "content": {"type": "text", "text": "hello"}}], "maxTokens": 10})
}

/// An error object picked by a fuzzer byte: the codes the engine treats specially, and others.
pub fn error_body(kind: u8, arg: u8) -> Value {
    match kind % 7 {
        0 => json!({"code": -32601, "message": "Method not found"}),
        1 => json!({"code": -32022, "message": "Unsupported protocol version",
            "data": {"supported": &VERSIONS[usize::from(arg) % VERSIONS.len()..], "requested": version(arg)}}),
        2 => json!({"code": -32020, "message": "Header mismatch"}),
        3 => json!({"code": -32021, "message": "Missing capability",
            "data": {"requiredCapabilities": {"sampling": {}}}}),
        4 => json!({"code": -32602, "message": "Invalid params", "data": arg}),
        5 => json!({"code": i64::from(arg) - 128, "message": ""}),
        _ => json!({"code": -32000, "message": "Session not found"}),
    }
}

/// A notification picked by a fuzzer byte; `id` is a request id of the client's it may refer to
/// (progress token, cancelled request, subscription id).
pub fn notification(kind: u8, id: Value, arg: u8) -> Value {
    let tagged = json!({"io.modelcontextprotocol/subscriptionId": id});
    let (method, params) = match kind % 12 {
        0 => ("notifications/progress", json!({"progressToken": id, "progress": arg, "total": 255})),
        1 => ("notifications/cancelled", json!({"requestId": id, "reason": "fuzz"})),
        2 => (
            "notifications/subscriptions/acknowledged",
            json!({"notifications": {"toolsListChanged": arg & 1 == 1, "promptsListChanged": arg & 2 == 2,
                "resourcesListChanged": arg & 4 == 4, "resourceSubscriptions": ["file:///a"]},
                "_meta": tagged}),
        ),
        3 => (
            "notifications/tools/list_changed",
            if arg & 1 == 1 { json!({"_meta": tagged}) } else { json!({}) },
        ),
        4 => ("notifications/resources/list_changed", json!({"_meta": tagged})),
        5 => ("notifications/prompts/list_changed", json!({})),
        6 => ("notifications/resources/updated", json!({"uri": "file:///a", "_meta": tagged})),
        7 => ("notifications/message", json!({"level": "info", "data": {"n": arg}, "logger": "l"})),
        8 => ("notifications/elicitation/complete", json!({"elicitationId": "e1"})),
        9 => ("notifications/progress", json!({"progressToken": "not-ours", "progress": 1})),
        10 => ("notifications/message", json!({"level": "nonsense"})),
        _ => ("notifications/unknown", json!({"x": arg})),
    };
    json!({"jsonrpc": "2.0", "method": method, "params": params})
}

/// A server→client request picked by a fuzzer byte.
pub fn server_request(kind: u8, id: Value) -> Value {
    let (method, params) = match kind % 7 {
        0 => ("ping", Value::Null),
        1 => ("roots/list", json!({})),
        2 => ("sampling/createMessage", sampling_params()),
        3 => (
            "elicitation/create",
            json!({"message": "name?", "requestedSchema": {"type": "object",
            "properties": {"name": {"type": "string"}}}}),
        ),
        4 => ("elicitation/create", json!({"message": 5})),
        5 => ("tools/call", json!({"name": "x"})),
        _ => ("unknown/method", json!([1, 2])),
    };
    let mut message = json!({"jsonrpc": "2.0", "id": id, "method": method});
    if !params.is_null() {
        message["params"] = params;
    }
    message
}

/// A request id a scripted server uses for its own requests, picked by a fuzzer byte: small
/// integers and strings, so that they collide with each other sometimes.
pub fn server_request_id(pick: u8) -> Value {
    if pick & 0x80 != 0 { json!(format!("s{}", pick & 0x07)) } else { json!(i64::from(pick & 0x0f) - 2) }
}

/// Checks a transmit as a stdio peer would read it, and returns it parsed: exactly one line (one
/// `\n`, at the end), holding one JSON-RPC 2.0 object; what its kind says (request with id and
/// method, notification, cancellation of an id, answer to an id) is what the bytes say.
pub fn check_transmit(t: &Transmit) -> Value {
    let bytes = t.bytes();
    assert_eq!(
        bytes.last(),
        Some(&b'\n'),
        "a transmit ends in a newline: {:?}",
        String::from_utf8_lossy(bytes)
    );
    let newlines = bytes.iter().filter(|&&b| b == b'\n').count();
    assert_eq!(newlines, 1, "a transmit is one line (stdio framing): {:?}", String::from_utf8_lossy(bytes));
    assert_eq!(t.message(), &bytes[..bytes.len() - 1]);
    let value: Value = serde_json::from_slice(t.message())
        .unwrap_or_else(|e| panic!("a transmit is JSON ({e}): {:?}", String::from_utf8_lossy(bytes)));
    assert_eq!(value["jsonrpc"], "2.0", "{value}");
    let id_of = |id: &RequestId| serde_json::to_value(id).unwrap();
    match t.kind() {
        TransmitKind::Request(request) => {
            assert_eq!(id_of(&request.id()), value["id"], "{value}");
            assert_eq!(value["method"], request.method(), "{value}");
            if let Some(name) = request.name() {
                // The name the request is routed by (`Mcp-Name`): a tool's or prompt's name, a
                // resource's URI, a task's id.
                let named = match request.method() {
                    "resources/read" => "uri",
                    method if method.starts_with("tasks/") => "taskId",
                    _ => "name",
                };
                assert_eq!(value["params"][named], name, "{value}");
            }
        }
        TransmitKind::Notification { method } => {
            assert_eq!(value["method"], method.as_ref(), "{value}");
            assert!(value.get("id").is_none(), "{value}");
        }
        TransmitKind::Cancellation { id } => {
            assert_eq!(value["method"], "notifications/cancelled", "{value}");
            assert_eq!(value["params"]["requestId"], id_of(id), "{value}");
        }
        TransmitKind::Response { id } => {
            assert_eq!(value["id"], id_of(id), "{value}");
            assert!(value.get("method").is_none(), "{value}");
        }
        other => panic!("a transmit of a new kind: {other:?}"),
    }
    value
}

/// What the application sees of the engine's event contract, checked event by event: one
/// `Ready` before any `Closed`, exactly one `Response` per request the application sent, no
/// server request after `Closed`, and `Closed` only once every request was answered.
#[derive(Debug, Default)]
pub struct Contract {
    /// Requests sent and not answered yet.
    pub outstanding: BTreeSet<RequestId>,
    /// Every request id the application was given.
    pub issued: BTreeSet<RequestId>,
    /// Server requests delivered and not answered by the application yet.
    pub server_requests: VecDeque<RequestId>,
    /// `Event::Ready` was seen.
    pub ready: bool,
    /// `Event::Closed` was seen.
    pub closed: bool,
}

impl Contract {
    /// The application sent request `id`.
    pub fn issued(&mut self, id: RequestId) {
        assert!(self.issued.insert(id.clone()), "id {id} issued twice");
        self.outstanding.insert(id);
    }

    /// Checks one event against the contract.
    pub fn event(&mut self, event: Event) {
        match event {
            Event::Ready { protocol_version } => {
                assert!(!self.ready, "a second Ready ({protocol_version})");
                assert!(!self.closed, "Ready after Closed");
                self.ready = true;
            }
            Event::Response { id, .. } => {
                assert!(self.issued.contains(&id), "a response to {id}, which the application never sent");
                assert!(self.outstanding.remove(&id), "a second response to {id}");
            }
            Event::Request { id, .. } => {
                assert!(!self.closed, "a server request after Closed");
                self.server_requests.push_back(id);
            }
            Event::Closed(reason) => {
                assert!(!self.closed, "a second Closed ({reason})");
                assert!(
                    self.outstanding.is_empty(),
                    "Closed ({reason}) while requests are unanswered: {:?}",
                    self.outstanding
                );
                self.closed = true;
            }
            _ => {}
        }
    }
}
