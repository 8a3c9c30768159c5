//! End-to-end tests of `mcp-demo-server --http`: the real binary on 127.0.0.1, driven with raw
//! HTTP/1.1 over `TcpStream` (a tiny client below: requests, `Content-Length` and chunked
//! bodies, SSE `data:` lines).

mod common;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::thread;
use std::time::{Duration, Instant};

use common::HttpServer;
use serde_json::{Value, json};

/// How long any single read may block.
const TIMEOUT: Duration = Duration::from_secs(10);
/// The modern protocol version.
const MODERN: &str = "2026-07-28";

/// A running `mcp-demo-server --http 127.0.0.1:0`, killed (by PID) and reaped when dropped.
struct DemoHttp {
    server: HttpServer,
}

impl DemoHttp {
    fn spawn() -> Self {
        let server = HttpServer::spawn(&["--http", "127.0.0.1:0"]);
        assert!(server.address.starts_with("127.0.0.1:"), "{}", server.url());
        Self { server }
    }

    fn connect(&self) -> Conn {
        let stream = TcpStream::connect(&self.server.address).expect("connect");
        stream.set_read_timeout(Some(TIMEOUT)).expect("timeout");
        stream.set_nodelay(true).expect("nodelay");
        let writer = stream.try_clone().expect("clone");
        Conn {
            reader: BufReader::new(stream),
            writer,
            stream_buffer: Vec::new(),
            chunked: false,
            ended: false,
        }
    }

    /// One request on a fresh connection.
    fn roundtrip(&self, request: &Req) -> Response {
        self.connect().roundtrip(request)
    }

    /// The text of a modern `cancelled_requests` call.
    fn cancelled(&self) -> Value {
        let response = self.roundtrip(&modern("probe", "tools/call", json!({"name": "cancelled_requests"})));
        serde_json::from_str(text(&response.json())).expect("JSON array")
    }
}

/// A request to send.
#[derive(Debug, Clone)]
struct Req {
    method: &'static str,
    path: String,
    headers: Vec<(String, String)>,
    body: Option<Vec<u8>>,
}

impl Req {
    fn new(method: &'static str) -> Self {
        Self { method, path: "/mcp".into(), headers: Vec::new(), body: None }
    }

    /// A JSON POST that accepts both answers.
    fn post(body: &Value) -> Self {
        Self::new("POST")
            .header("Content-Type", "application/json")
            .header("Accept", "application/json, text/event-stream")
            .body(body.to_string().into_bytes())
    }

    fn header(mut self, name: &str, value: &str) -> Self {
        self.headers.push((name.to_owned(), value.to_owned()));
        self
    }

    /// Replaces (or with `None` removes) every header called `name`.
    fn set(mut self, name: &str, value: Option<&str>) -> Self {
        self.headers.retain(|(known, _)| !known.eq_ignore_ascii_case(name));
        match value {
            Some(value) => self.header(name, value),
            None => self,
        }
    }

    fn body(mut self, body: Vec<u8>) -> Self {
        self.body = Some(body);
        self
    }

    fn session(self, id: &str) -> Self {
        self.header("Mcp-Session-Id", id)
    }
}

/// The per-request `_meta` of a modern request.
fn modern_meta(capabilities: Value) -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": capabilities,
        "io.modelcontextprotocol/clientInfo": {"name": "http-test", "version": "0"},
    })
}

/// A modern request with every header the spec asks for (`Mcp-Name` from `params.name` or
/// `params.uri` where it applies).
fn modern_with(id: impl Into<Value>, method: &str, mut params: Value, capabilities: Value) -> Req {
    let meta = params.get("_meta").cloned().unwrap_or_else(|| json!({}));
    let mut merged = modern_meta(capabilities);
    if let (Some(merged), Some(extra)) = (merged.as_object_mut(), meta.as_object()) {
        merged.extend(extra.clone());
    }
    params["_meta"] = merged;
    let body = json!({"jsonrpc": "2.0", "id": id.into(), "method": method, "params": params});
    let mut request = Req::post(&body).header("MCP-Protocol-Version", MODERN).header("Mcp-Method", method);
    let name = match method {
        "tools/call" | "prompts/get" => params["name"].as_str(),
        "resources/read" => params["uri"].as_str(),
        _ => None,
    };
    if let Some(name) = name {
        request = request.header("Mcp-Name", name);
    }
    request
}

fn modern(id: impl Into<Value>, method: &str, params: Value) -> Req {
    modern_with(id, method, params, json!({}))
}

/// A legacy request (no `_meta`).
fn legacy(id: impl Into<Value>, method: &str, params: Value) -> Req {
    Req::post(&json!({"jsonrpc": "2.0", "id": id.into(), "method": method, "params": params}))
}

/// A response read completely.
#[derive(Debug)]
struct Response {
    status: u16,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

impl Response {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(known, _)| known.eq_ignore_ascii_case(name))
            .map(|(_, value)| value.as_str())
    }

    fn is_event_stream(&self) -> bool {
        self.header("content-type").is_some_and(|kind| kind.starts_with("text/event-stream"))
    }

    /// The JSON body (the response must be `application/json`).
    fn json(&self) -> Value {
        assert_eq!(self.header("content-type"), Some("application/json"), "{self:?}");
        serde_json::from_slice(&self.body).expect("JSON body")
    }

    /// The messages of an event-stream body.
    fn messages(&self) -> Vec<Value> {
        assert!(self.is_event_stream(), "{self:?}");
        let text = String::from_utf8(self.body.clone()).expect("UTF-8 stream");
        text.split("\n\n").filter_map(event_data).collect()
    }
}

/// The JSON of an SSE event's `data:` lines (`None` for comments and empty events).
fn event_data(event: &str) -> Option<Value> {
    let data: Vec<&str> = event
        .lines()
        .filter_map(|line| line.strip_prefix("data:").map(|data| data.strip_prefix(' ').unwrap_or(data)))
        .collect();
    if data.is_empty() {
        return None;
    }
    Some(serde_json::from_str(&data.join("\n")).expect("event data is JSON"))
}

/// The status line and headers of a response.
#[derive(Debug)]
struct Head {
    status: u16,
    headers: Vec<(String, String)>,
}

/// One client connection.
struct Conn {
    reader: BufReader<TcpStream>,
    writer: TcpStream,
    /// Event-stream bytes not yet split into events.
    stream_buffer: Vec<u8>,
    chunked: bool,
    ended: bool,
}

impl Conn {
    fn send(&mut self, request: &Req) {
        let mut bytes =
            format!("{} {} HTTP/1.1\r\nHost: localhost\r\n", request.method, request.path).into_bytes();
        for (name, value) in &request.headers {
            bytes.extend_from_slice(format!("{name}: {value}\r\n").as_bytes());
        }
        if let Some(body) = &request.body {
            if !request.headers.iter().any(|(name, _)| name.eq_ignore_ascii_case("transfer-encoding")) {
                bytes.extend_from_slice(format!("Content-Length: {}\r\n", body.len()).as_bytes());
            }
        }
        bytes.extend_from_slice(b"\r\n");
        bytes.extend_from_slice(request.body.as_deref().unwrap_or_default());
        self.writer.write_all(&bytes).expect("write request");
    }

    fn line(&mut self) -> String {
        let mut line = String::new();
        let read = self.reader.read_line(&mut line).expect("read line");
        assert!(read > 0, "connection closed");
        line.trim_end_matches(['\r', '\n']).to_owned()
    }

    fn head(&mut self) -> Head {
        loop {
            let status_line = self.line();
            let status: u16 = status_line
                .split(' ')
                .nth(1)
                .and_then(|code| code.parse().ok())
                .unwrap_or_else(|| panic!("bad status line {status_line:?}"));
            let mut headers = Vec::new();
            loop {
                let line = self.line();
                if line.is_empty() {
                    break;
                }
                let (name, value) = line.split_once(':').expect("header line");
                headers.push((name.to_owned(), value.trim().to_owned()));
            }
            if status >= 200 {
                let chunked = headers.iter().any(|(name, value)| {
                    name.eq_ignore_ascii_case("transfer-encoding") && value.eq_ignore_ascii_case("chunked")
                });
                self.chunked = chunked;
                self.ended = false;
                self.stream_buffer.clear();
                return Head { status, headers };
            }
        }
    }

    /// The next chunk of a chunked body; `None` after the last one.
    fn chunk(&mut self) -> Option<Vec<u8>> {
        let size_line = self.line();
        let size = usize::from_str_radix(size_line.split(';').next().unwrap_or_default().trim(), 16)
            .unwrap_or_else(|_| panic!("bad chunk size {size_line:?}"));
        if size == 0 {
            while !self.line().is_empty() {}
            return None;
        }
        let mut data = vec![0; size + 2];
        self.reader.read_exact(&mut data).expect("chunk data");
        assert_eq!(&data[size..], b"\r\n");
        data.truncate(size);
        Some(data)
    }

    fn read_body(&mut self, head: &Head) -> Vec<u8> {
        if self.chunked {
            let mut body = Vec::new();
            while let Some(chunk) = self.chunk() {
                body.extend_from_slice(&chunk);
            }
            return body;
        }
        let length = head
            .headers
            .iter()
            .find(|(name, _)| name.eq_ignore_ascii_case("content-length"))
            .map_or(0, |(_, value)| value.parse::<usize>().expect("Content-Length"));
        let mut body = vec![0; length];
        self.reader.read_exact(&mut body).expect("body");
        body
    }

    fn response(&mut self) -> Response {
        let head = self.head();
        let body = self.read_body(&head);
        Response { status: head.status, headers: head.headers, body }
    }

    fn roundtrip(&mut self, request: &Req) -> Response {
        self.send(request);
        self.response()
    }

    /// Sends `request` and reads the head of an event-stream answer.
    fn open_stream(&mut self, request: &Req) -> Head {
        self.send(request);
        let head = self.head();
        assert_eq!(head.status, 200, "{head:?}");
        assert!(self.chunked, "{head:?}");
        let kind = head.headers.iter().find(|(name, _)| name.eq_ignore_ascii_case("content-type"));
        assert_eq!(kind.map(|(_, value)| value.as_str()), Some("text/event-stream"));
        head
    }

    /// The next message of an open event stream; `None` when the stream ends.
    fn next_event(&mut self) -> Option<Value> {
        loop {
            if let Some(at) = self.stream_buffer.windows(2).position(|pair| pair == b"\n\n") {
                let event: Vec<u8> = self.stream_buffer.drain(..at + 2).collect();
                if let Some(message) = event_data(&String::from_utf8(event).expect("UTF-8 event")) {
                    return Some(message);
                }
                continue;
            }
            if self.ended {
                return None;
            }
            match self.chunk() {
                Some(chunk) => self.stream_buffer.extend_from_slice(&chunk),
                None => self.ended = true,
            }
        }
    }

    /// Whether the server closed the connection (EOF).
    fn closed_by_server(&mut self) -> bool {
        let mut byte = [0_u8; 1];
        matches!(self.reader.read(&mut byte), Ok(0) | Err(_))
    }
}

/// The text of the first content block of a `tools/call` response.
fn text(response: &Value) -> &str {
    response["result"]["content"][0]["text"].as_str().unwrap_or_else(|| panic!("no text in {response}"))
}

/// Asserts an HTTP status and a JSON-RPC error code with the request id; returns the message.
fn assert_error(response: &Response, status: u16, code: i64, id: &Value) -> String {
    assert_eq!(response.status, status, "{response:?}");
    let body = response.json();
    assert_eq!(body["error"]["code"], code, "{body}");
    assert_eq!(&body["id"], id, "{body}");
    body["error"]["message"].as_str().expect("message").to_owned()
}

/// Base64 (standard, padded), for `=?base64?...?=` header values.
fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let value =
            chunk.iter().enumerate().fold(0_u32, |acc, (at, byte)| acc | (u32::from(*byte) << (16 - 8 * at)));
        for at in 0..4 {
            if at <= chunk.len() {
                out.push(char::from(ALPHABET[((value >> (18 - 6 * at)) & 63) as usize]));
            } else {
                out.push('=');
            }
        }
    }
    out
}

fn wrapped(text: &str) -> String {
    format!("=?base64?{}?=", base64(text.as_bytes()))
}

// ---------------------------------------------------------------------------------------------
// 2026-07-28 (stateless)
// ---------------------------------------------------------------------------------------------

#[test]
fn modern_discover_and_calls_are_json() {
    let server = DemoHttp::spawn();
    let mut conn = server.connect();
    let discovered = conn.roundtrip(&modern(1, "server/discover", json!({})));
    assert_eq!(discovered.status, 200);
    assert!(discovered.header("mcp-session-id").is_none());
    let result = &discovered.json()["result"];
    assert_eq!(result["resultType"], "complete");
    assert_eq!(result["supportedVersions"][0], MODERN);
    assert_eq!(result["_meta"]["io.modelcontextprotocol/serverInfo"]["name"], "mcp-demo-server");
    // Keep-alive: the same connection carries the next requests.
    let echoed =
        conn.roundtrip(&modern(2, "tools/call", json!({"name": "echo", "arguments": {"message": "hi"}})));
    assert_eq!(echoed.status, 200);
    assert_eq!(text(&echoed.json()), "hi");
    assert_eq!(echoed.json()["id"], 2);
    let listed = conn.roundtrip(&modern(3, "tools/list", json!({})));
    assert_eq!(listed.json()["result"]["tools"].as_array().map(Vec::len), Some(19));
    let read = conn.roundtrip(&modern(4, "resources/read", json!({"uri": "demo://items/7"})));
    assert_eq!(read.json()["result"]["contents"][0]["text"], "item 7");
    // A tool error and a bad argument are ordinary answers (200).
    let unknown = conn.roundtrip(&modern(5, "tools/call", json!({"name": "nope", "arguments": {}})));
    assert_error(&unknown, 200, -32602, &json!(5));
}

#[test]
fn modern_header_mismatches_are_400_with_32020() {
    let server = DemoHttp::spawn();
    let mut conn = server.connect();
    let echo = || modern(7, "tools/call", json!({"name": "echo", "arguments": {"message": "x"}}));
    let id = json!(7);
    let cases = [
        (echo().set("MCP-Protocol-Version", None), "MCP-Protocol-Version"),
        (echo().set("MCP-Protocol-Version", Some("2025-11-25")), "MCP-Protocol-Version"),
        (echo().set("Mcp-Method", None), "Mcp-Method"),
        (echo().set("Mcp-Method", Some("tools/list")), "Mcp-Method"),
        (echo().set("Mcp-Name", None), "Mcp-Name"),
        (echo().set("Mcp-Name", Some("add")), "Mcp-Name"),
        (echo().set("Mcp-Name", Some("=?base64?not*base64?=")), "Mcp-Name"),
        (echo().header("Mcp-Method", "tools/call"), "Mcp-Method"),
    ];
    for (request, header) in cases {
        let message = assert_error(&conn.roundtrip(&request), 400, -32020, &id);
        assert!(message.contains(header), "{header}: {message}");
    }
    // Header names are case-insensitive; values may be Base64-wrapped.
    let request = echo().set("Mcp-Name", None).header("mcp-name", &wrapped("echo"));
    assert_eq!(text(&conn.roundtrip(&request).json()), "x");
    let request = echo().set("Mcp-Method", Some(&wrapped("tools/call")));
    assert_eq!(conn.roundtrip(&request).status, 200);
    // A non-ASCII name (here a resource uri) must be wrapped; the wrapped value is compared.
    let uri = "demo://items/café";
    let read = || modern(8, "resources/read", json!({"uri": uri}));
    let response = conn.roundtrip(&read().set("Mcp-Name", Some(&wrapped(uri))));
    assert_eq!(response.json()["result"]["contents"][0]["text"], "item café");
    let response = conn.roundtrip(&read().set("Mcp-Name", Some(&wrapped("demo://items/cafe"))));
    assert_error(&response, 400, -32020, &json!(8));
    // prompts/get mirrors params.name too.
    let prompt = || modern(9, "prompts/get", json!({"name": "greeting", "arguments": {"name": "Ada"}}));
    assert_eq!(conn.roundtrip(&prompt()).status, 200);
    assert_error(&conn.roundtrip(&prompt().set("Mcp-Name", Some("code_review"))), 400, -32020, &json!(9));
    // Methods without a name ignore Mcp-Name.
    assert_eq!(conn.roundtrip(&modern(10, "tools/list", json!({})).header("Mcp-Name", "x")).status, 200);
}

#[test]
fn modern_weather_arguments_must_be_mirrored_in_mcp_param_headers() {
    let server = DemoHttp::spawn();
    let mut conn = server.connect();
    let call = |arguments: Value| modern(1, "tools/call", json!({"name": "weather", "arguments": arguments}));
    let id = json!(1);
    let full = json!({"region": "Zürich", "days": 7, "metric": false});
    let good = || {
        call(full.clone())
            .header("Mcp-Param-Region", &wrapped("Zürich"))
            .header("Mcp-Param-Days", "7")
            .header("Mcp-Param-Metric", "false")
    };
    let forecast = conn.roundtrip(&good());
    assert_eq!(text(&forecast.json()), "forecast for Zürich: 7 days, metric=false");
    // Integers compare numerically (leading zeros allowed); names are case-insensitive.
    let request = good().set("Mcp-Param-Days", None).header("mcp-param-days", "007");
    assert_eq!(conn.roundtrip(&request).status, 200);
    for (name, value) in [
        ("Mcp-Param-Region", None),
        ("Mcp-Param-Region", Some("Zurich")),
        ("Mcp-Param-Days", None),
        ("Mcp-Param-Days", Some("8")),
        ("Mcp-Param-Days", Some("7.0")),
        ("Mcp-Param-Days", Some("+7")),
        ("Mcp-Param-Metric", None),
        ("Mcp-Param-Metric", Some("False")),
        ("Mcp-Param-Metric", Some("0")),
    ] {
        let message = assert_error(&conn.roundtrip(&good().set(name, value)), 400, -32020, &id);
        assert!(message.contains(name), "{name}={value:?}: {message}");
    }
    // Absent or null arguments need no header, and a header for them is ignored.
    let request = call(json!({"region": "Oslo", "days": null})).header("Mcp-Param-Region", "Oslo");
    assert_eq!(text(&conn.roundtrip(&request).json()), "forecast for Oslo: 1 days, metric=true");
    let request =
        call(json!({"region": "Oslo"})).header("Mcp-Param-Region", "Oslo").header("Mcp-Param-Days", "99");
    assert_eq!(conn.roundtrip(&request).status, 200);
    assert_error(&conn.roundtrip(&call(json!({"region": "Oslo"}))), 400, -32020, &id);
}

#[test]
fn modern_meta_and_method_errors_have_their_statuses() {
    let server = DemoHttp::spawn();
    let mut conn = server.connect();
    // -32022: an unsupported version (the header mirrors it, so only the version is wrong).
    let body = json!({"jsonrpc": "2.0", "id": "v", "method": "tools/list", "params": {"_meta": {
        "io.modelcontextprotocol/protocolVersion": "1999-01-01",
        "io.modelcontextprotocol/clientCapabilities": {},
    }}});
    let request =
        Req::post(&body).header("MCP-Protocol-Version", "1999-01-01").header("Mcp-Method", "tools/list");
    let response = conn.roundtrip(&request);
    assert_error(&response, 400, -32022, &json!("v"));
    assert_eq!(response.json()["error"]["data"]["supported"][0], MODERN);
    // -32602 for missing client capabilities.
    let body = json!({"jsonrpc": "2.0", "id": "c", "method": "tools/list", "params": {"_meta": {
        "io.modelcontextprotocol/protocolVersion": MODERN,
    }}});
    let request = Req::post(&body).header("MCP-Protocol-Version", MODERN).header("Mcp-Method", "tools/list");
    assert_error(&conn.roundtrip(&request), 400, -32602, &json!("c"));
    // -32601 (unknown, or removed in 2026-07-28) → 404.
    assert_error(&conn.roundtrip(&modern("m", "no/such/method", json!({}))), 404, -32601, &json!("m"));
    assert_error(&conn.roundtrip(&modern("p", "ping", json!({}))), 404, -32601, &json!("p"));
    // Unparsable JSON → 400 -32700.
    let request = Req::post(&json!(null)).body(b"{not json".to_vec());
    assert_error(&conn.roundtrip(&request), 400, -32700, &Value::Null);
    // A notification → 202 without a body.
    let cancelled =
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": "nobody"}});
    let accepted = conn.roundtrip(&Req::post(&cancelled));
    assert_eq!((accepted.status, accepted.body.len()), (202, 0));
    assert_eq!(server.cancelled(), json!(["nobody"]));
}

#[test]
fn modern_notifications_of_a_request_come_on_its_event_stream() {
    let server = DemoHttp::spawn();
    let mut conn = server.connect();
    let params = json!({"name": "long_running", "arguments": {"steps": 3, "step_ms": 10}, "_meta": {"progressToken": "tok"}});
    let response = conn.roundtrip(&modern(1, "tools/call", params));
    assert_eq!(response.status, 200);
    assert!(response.header("content-type").is_some_and(|kind| kind == "text/event-stream"));
    assert!(!String::from_utf8_lossy(&response.body).contains("\nid:"), "no event ids");
    let messages = response.messages();
    assert_eq!(messages.len(), 4, "{messages:?}");
    for (step, progress) in messages[..3].iter().enumerate() {
        assert_eq!(progress["method"], "notifications/progress");
        assert_eq!(progress["params"]["progressToken"], "tok");
        assert_eq!(progress["params"]["progress"], step + 1);
    }
    assert_eq!(text(&messages[3]), "done after 3 steps");
    // Without a progress token: plain JSON. Keep-alive survives the event stream.
    let quiet = conn.roundtrip(&modern(
        2,
        "tools/call",
        json!({"name": "long_running", "arguments": {"steps": 2, "step_ms": 1}}),
    ));
    assert_eq!(text(&quiet.json()), "done after 2 steps");
    // Log messages at or above the request's _meta log level.
    let params = json!({"name": "log", "arguments": {"level": "warning", "message": "careful"},
        "_meta": {"io.modelcontextprotocol/logLevel": "info"}});
    let logged = conn.roundtrip(&modern(3, "tools/call", params)).messages();
    assert_eq!(logged[0]["method"], "notifications/message");
    assert_eq!(logged[0]["params"]["data"], "careful");
    assert_eq!(text(&logged[1]), "logged");
}

#[test]
fn modern_mrtr_retry_is_another_post() {
    let server = DemoHttp::spawn();
    let capabilities = json!({"sampling": {}});
    let first = server
        .roundtrip(&modern_with(
            1,
            "tools/call",
            json!({"name": "sample", "arguments": {"prompt": "p"}}),
            capabilities.clone(),
        ))
        .json();
    assert_eq!(first["result"]["resultType"], "input_required");
    let state = first["result"]["requestState"].clone();
    let answer = json!({"role": "assistant", "content": {"type": "text", "text": "hi"}, "model": "m"});
    let params = json!({"name": "sample", "arguments": {"prompt": "p"}, "requestState": state,
        "inputResponses": {"sampling": answer}});
    let retried = server.roundtrip(&modern_with(2, "tools/call", params, capabilities)).json();
    assert_eq!(text(&retried), "sampled: hi");
}

#[test]
fn modern_listen_streams_get_every_notify_changes() {
    let server = DemoHttp::spawn();
    let mut listener = server.connect();
    let params =
        json!({"notifications": {"toolsListChanged": true, "resourceSubscriptions": ["demo://readme"]}});
    listener.open_stream(&modern("sub-1", "subscriptions/listen", params.clone()));
    let ack = listener.next_event().expect("acknowledgement");
    assert_eq!(ack["method"], "notifications/subscriptions/acknowledged");
    assert_eq!(ack["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"], "sub-1");
    // notify_changes on another connection, modern then legacy.
    let notified = server.roundtrip(&modern(1, "tools/call", json!({"name": "notify_changes"})));
    assert_eq!(text(&notified.json()), "notified");
    let tools = listener.next_event().expect("tools/list_changed");
    assert_eq!(tools["method"], "notifications/tools/list_changed");
    assert_eq!(tools["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"], "sub-1");
    let updated = listener.next_event().expect("resources/updated");
    assert_eq!(updated["method"], "notifications/resources/updated");
    assert_eq!(updated["params"]["uri"], "demo://readme");
    let session = initialize(&server, "2025-11-25");
    let legacy_call =
        legacy(2, "tools/call", json!({"name": "notify_changes", "arguments": {}})).session(&session);
    server.roundtrip(&legacy_call);
    assert_eq!(
        listener.next_event().expect("from the legacy call")["method"],
        "notifications/tools/list_changed"
    );

    // notifications/cancelled ends a listen stream (without a response).
    let mut second = server.connect();
    second.open_stream(&modern("sub-2", "subscriptions/listen", params));
    assert!(second.next_event().is_some());
    let cancel =
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": "sub-2"}});
    assert_eq!(server.roundtrip(&Req::post(&cancel)).status, 202);
    assert_eq!(second.next_event(), None);

    // Closing the stream removes the subscription (and the server records the cancellation).
    drop(listener);
    let deadline = Instant::now() + TIMEOUT;
    while !server.cancelled().as_array().is_some_and(|ids| ids.contains(&json!("sub-1"))) {
        assert!(Instant::now() < deadline, "the closed listen stream was never noticed");
        thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(server.roundtrip(&modern(3, "tools/call", json!({"name": "notify_changes"}))).status, 200);
}

#[test]
fn modern_client_disconnect_cancels_the_request() {
    let server = DemoHttp::spawn();
    let mut slow = server.connect();
    slow.send(&modern("slow", "tools/call", json!({"name": "sleep", "arguments": {"ms": 60_000}})));
    thread::sleep(Duration::from_millis(200));
    drop(slow);
    let deadline = Instant::now() + TIMEOUT;
    while server.cancelled() != json!(["slow"]) {
        assert!(Instant::now() < deadline, "the disconnect never cancelled the call");
        thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn get_and_delete_without_a_session_are_405() {
    let server = DemoHttp::spawn();
    let mut conn = server.connect();
    for method in ["GET", "DELETE"] {
        let response = conn.roundtrip(&Req::new(method).header("Accept", "text/event-stream"));
        assert_eq!(response.status, 405, "{method}");
        assert_eq!(response.header("allow"), Some("POST"));
    }
    let response = conn.roundtrip(&Req::new("PUT").body(b"{}".to_vec()));
    assert_eq!(response.status, 405);
}

// ---------------------------------------------------------------------------------------------
// Legacy sessions (2025-03-26 … 2025-11-25)
// ---------------------------------------------------------------------------------------------

/// `initialize` + `notifications/initialized`; the session id.
fn initialize(server: &DemoHttp, version: &str) -> String {
    let mut conn = server.connect();
    let params = json!({"protocolVersion": version, "capabilities": {"sampling": {}, "elicitation": {}},
        "clientInfo": {"name": "http-test", "version": "0"}});
    let response = conn.roundtrip(&legacy(0, "initialize", params));
    assert_eq!(response.status, 200);
    assert_eq!(response.json()["result"]["protocolVersion"], version);
    let session = response.header("mcp-session-id").expect("Mcp-Session-Id").to_owned();
    assert!(!session.is_empty() && session.bytes().all(|byte| (0x21..=0x7e).contains(&byte)), "{session}");
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let accepted = conn.roundtrip(&Req::post(&initialized).session(&session));
    assert_eq!((accepted.status, accepted.body.len()), (202, 0));
    session
}

#[test]
fn add_tool_lasts_for_its_session_only() {
    let server = DemoHttp::spawn();
    let (first, second) = (initialize(&server, "2025-11-25"), initialize(&server, "2025-11-25"));
    let mut conn = server.connect();
    let names = |response: &Response| -> Vec<String> {
        let tools = response.json()["result"]["tools"].as_array().cloned().expect("tools");
        tools.iter().map(|tool| tool["name"].as_str().expect("name").to_owned()).collect()
    };
    let add = legacy(1, "tools/call", json!({"name": "add_tool", "arguments": {"name": "mine"}}));
    let added = conn.roundtrip(&add.session(&first));
    // Without a standalone stream, the list change comes on the request's own stream, first.
    let messages = added.messages();
    assert_eq!(messages[0]["method"], "notifications/tools/list_changed", "{messages:?}");
    assert_eq!(text(&messages[1]), "added mine");
    let listed = conn.roundtrip(&legacy(2, "tools/list", json!({})).session(&first));
    assert_eq!(names(&listed).last().map(String::as_str), Some("mine"));
    let echoed = legacy(3, "tools/call", json!({"name": "mine", "arguments": {"message": "hi"}}));
    assert_eq!(text(&conn.roundtrip(&echoed.session(&first)).json()), "hi");
    // The other session and the stateless 2026-07-28 side do not have it.
    let other = conn.roundtrip(&legacy(4, "tools/list", json!({})).session(&second));
    assert!(!names(&other).contains(&"mine".to_owned()));
    assert!(!names(&conn.roundtrip(&modern(5, "tools/list", json!({})))).contains(&"mine".to_owned()));
}

#[test]
fn legacy_sessions_need_their_id() {
    let server = DemoHttp::spawn();
    let session = initialize(&server, "2025-11-25");
    assert_ne!(session, initialize(&server, "2025-11-25"), "every initialize opens a new session");
    let mut conn = server.connect();
    let echo = || legacy(1, "tools/call", json!({"name": "echo", "arguments": {"message": "old"}}));
    let response = conn.roundtrip(&echo().session(&session));
    assert_eq!(response.json()["result"], json!({"content": [{"type": "text", "text": "old"}]}));
    let message = assert_error(&conn.roundtrip(&echo()), 400, -32000, &Value::Null);
    assert_eq!(message, "Bad Request: missing Mcp-Session-Id");
    assert_eq!(conn.roundtrip(&echo().session("no-such-session")).status, 404);
    // From 2025-06-18 on, a present MCP-Protocol-Version must be the negotiated one.
    assert_eq!(
        conn.roundtrip(&echo().session(&session).header("MCP-Protocol-Version", "2025-11-25")).status,
        200
    );
    assert_eq!(
        conn.roundtrip(&echo().session(&session).header("MCP-Protocol-Version", "2025-06-18")).status,
        400
    );
    let old = initialize(&server, "2025-03-26");
    assert_eq!(
        conn.roundtrip(&echo().session(&old).header("MCP-Protocol-Version", "2025-06-18")).status,
        200
    );
    // Legacy semantics: ping exists, and a batch gets an array.
    assert_eq!(conn.roundtrip(&legacy(2, "ping", json!({})).session(&session)).json()["result"], json!({}));
    let batch = json!([
        {"jsonrpc": "2.0", "id": 3, "method": "ping"},
        {"jsonrpc": "2.0", "method": "notifications/progress", "params": {}},
        {"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {"name": "add", "arguments": {"a": 1, "b": 2}}},
    ]);
    let answers = conn.roundtrip(&Req::post(&batch).session(&old)).json();
    assert_eq!(answers.as_array().map(Vec::len), Some(2), "{answers}");
    // A failed initialize opens nothing.
    let failed = conn.roundtrip(&legacy(5, "initialize", json!({})));
    assert_eq!(failed.status, 400);
    assert!(failed.header("mcp-session-id").is_none());
}

#[test]
fn legacy_standalone_stream_carries_server_requests_until_delete() {
    let server = DemoHttp::spawn();
    let session = initialize(&server, "2025-11-25");
    let mut standalone = server.connect();
    standalone.open_stream(&Req::new("GET").header("Accept", "text/event-stream").session(&session));
    let second = server.roundtrip(&Req::new("GET").header("Accept", "text/event-stream").session(&session));
    assert_eq!(second.status, 409);

    // The tool call waits on its POST while the question goes out on the GET stream.
    let mut call = server.connect();
    call.send(
        &legacy(1, "tools/call", json!({"name": "sample", "arguments": {"prompt": "p"}})).session(&session),
    );
    let question = standalone.next_event().expect("sampling/createMessage");
    assert_eq!(question["method"], "sampling/createMessage");
    assert_eq!(question["id"], "srv-1");
    let answer = json!({"jsonrpc": "2.0", "id": "srv-1",
        "result": {"role": "assistant", "content": {"type": "text", "text": "hi"}, "model": "m"}});
    let accepted = server.roundtrip(&Req::post(&answer).session(&session));
    assert_eq!((accepted.status, accepted.body.len()), (202, 0));
    assert_eq!(text(&call.response().json()), "sampled: hi");

    // Unsolicited notifications go to the GET stream too, so the call's answer is plain JSON.
    let notified =
        server.roundtrip(&legacy(2, "tools/call", json!({"name": "notify_changes"})).session(&session));
    assert_eq!(text(&notified.json()), "notified");
    assert_eq!(standalone.next_event().expect("list_changed")["method"], "notifications/tools/list_changed");

    let deleted = server.roundtrip(&Req::new("DELETE").session(&session));
    assert_eq!(deleted.status, 200);
    let mut rest = Vec::new();
    while let Some(message) = standalone.next_event() {
        rest.push(message);
    }
    assert_eq!(rest.len(), 2, "the other list_changed notifications, then the end: {rest:?}");
    assert_eq!(server.roundtrip(&legacy(3, "ping", json!({})).session(&session)).status, 404);
    assert_eq!(server.roundtrip(&Req::new("DELETE").session(&session)).status, 404);
}

#[test]
fn legacy_server_requests_use_the_request_stream_without_a_get_stream() {
    let server = DemoHttp::spawn();
    let session = initialize(&server, "2025-06-18");
    let mut call = server.connect();
    call.open_stream(
        &legacy("e", "tools/call", json!({"name": "elicit", "arguments": {"message": "who?"}}))
            .session(&session),
    );
    let question = call.next_event().expect("elicitation/create");
    assert_eq!(question["method"], "elicitation/create");
    let answer = json!({"jsonrpc": "2.0", "id": question["id"], "result": {"action": "accept", "content": {"name": "Ada"}}});
    assert_eq!(server.roundtrip(&Req::post(&answer).session(&session)).status, 202);
    let done = call.next_event().expect("the response");
    assert_eq!(text(&done), r#"action=accept content={"name":"Ada"}"#);
    assert_eq!(call.next_event(), None);
    // Progress of a legacy request comes on its own stream too; keep-alive still works.
    let params = json!({"name": "long_running", "arguments": {"steps": 2, "step_ms": 1}, "_meta": {"progressToken": 5}});
    let messages = call.roundtrip(&legacy("l", "tools/call", params).session(&session)).messages();
    assert_eq!(messages.iter().filter(|message| message["method"] == "notifications/progress").count(), 2);
    assert_eq!(text(messages.last().expect("response")), "done after 2 steps");
}

// ---------------------------------------------------------------------------------------------
// HTTP framing
// ---------------------------------------------------------------------------------------------

#[test]
fn limits_and_garbage_do_not_stop_the_server() {
    let server = DemoHttp::spawn();
    // 413: the declared body is too large (the server answers before reading it).
    let mut conn = server.connect();
    conn.writer
        .write_all(b"POST /mcp HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 16777217\r\n\r\n")
        .expect("write");
    assert_eq!(conn.response().status, 413);
    assert!(conn.closed_by_server());
    // 431: more than 64 KiB of headers.
    let mut conn = server.connect();
    let huge = "a".repeat(70 * 1024);
    let response = conn.roundtrip(&modern(1, "tools/list", json!({})).header("X-Huge", &huge));
    assert_eq!(response.status, 431);
    // A garbage request line: 400, and the connection closes.
    let mut conn = server.connect();
    conn.writer.write_all(b"\x16\x03\x01 garbage\r\n\r\n").expect("write");
    assert_eq!(conn.response().status, 400);
    assert!(conn.closed_by_server());
    // Other paths, foreign origins.
    assert_eq!(
        server.roundtrip(&Req { path: "/other".into(), ..modern(2, "tools/list", json!({})) }).status,
        404
    );
    assert_eq!(
        server.roundtrip(&Req { path: "/mcp?x=1".into(), ..modern(2, "tools/list", json!({})) }).status,
        200
    );
    let foreign =
        server.roundtrip(&modern(3, "tools/list", json!({})).header("Origin", "http://evil.example"));
    assert_eq!(foreign.status, 403);
    let local =
        server.roundtrip(&modern(4, "tools/list", json!({})).header("Origin", "http://localhost:5173"));
    assert_eq!(local.status, 200);
    // Still serving: a chunked request body, then Connection: close.
    let mut conn = server.connect();
    let request = modern(5, "tools/call", json!({"name": "echo", "arguments": {"message": "chunks"}}));
    let body = request.body.clone().expect("body");
    let (head, tail) = body.split_at(10);
    let mut chunked = format!("{:x}\r\n", head.len()).into_bytes();
    chunked.extend_from_slice(head);
    chunked.extend_from_slice(format!("\r\n{:x};ext=1\r\n", tail.len()).as_bytes());
    chunked.extend_from_slice(tail);
    chunked.extend_from_slice(b"\r\n0\r\n\r\n");
    let request = request.header("Transfer-Encoding", "chunked").header("Connection", "close").body(chunked);
    let response = conn.roundtrip(&request);
    assert_eq!(text(&response.json()), "chunks");
    assert_eq!(response.header("connection"), Some("close"));
    assert!(conn.closed_by_server());
}
