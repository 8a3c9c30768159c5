//! End-to-end tests of the `mcp-demo-server` binary over real pipes.

use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

/// How long any single expected message may take.
const TIMEOUT: Duration = Duration::from_secs(10);

/// A running demo server with its stdout parsed line by line and its stderr captured.
struct DemoServer {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
    stderr: Arc<Mutex<String>>,
    /// Messages received while waiting for something else.
    backlog: Vec<Value>,
}

impl DemoServer {
    fn spawn(args: &[&str]) -> Self {
        let mut child = Command::new(env!("CARGO_BIN_EXE_mcp-demo-server"))
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn mcp-demo-server");
        let stdin = child.stdin.take();
        let stdout = child.stdout.take().expect("stdout");
        let mut stderr_pipe = child.stderr.take().expect("stderr");
        let (sender, lines) = mpsc::channel();
        thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if sender.send(line).is_err() {
                    break;
                }
            }
        });
        let stderr = Arc::new(Mutex::new(String::new()));
        let sink = Arc::clone(&stderr);
        thread::spawn(move || {
            let mut buffer = [0_u8; 4096];
            while let Ok(read @ 1..) = stderr_pipe.read(&mut buffer) {
                sink.lock().expect("stderr lock").push_str(&String::from_utf8_lossy(&buffer[..read]));
            }
        });
        Self { child, stdin, lines, stderr, backlog: Vec::new() }
    }

    /// Spawns a server and completes the initialize handshake.
    fn initialized(args: &[&str]) -> Self {
        let mut server = Self::spawn(args);
        let result = server.request(
            0,
            "initialize",
            json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "test", "version": "0"}}),
        );
        assert_eq!(result["result"]["protocolVersion"], "2025-11-25");
        server.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        server
    }

    fn send_raw(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        stdin.write_all(line.as_bytes()).expect("write stdin");
        stdin.write_all(b"\n").expect("write stdin");
        stdin.flush().expect("flush stdin");
    }

    fn send(&mut self, message: &Value) {
        self.send_raw(&message.to_string());
    }

    /// The next line from stdout, parsed (fails the test after [`TIMEOUT`]).
    fn next_line(&mut self, timeout: Duration) -> Option<Value> {
        match self.lines.recv_timeout(timeout) {
            Ok(line) => Some(serde_json::from_str(&line).expect("stdout line is JSON")),
            Err(RecvTimeoutError::Timeout) => None,
            Err(RecvTimeoutError::Disconnected) => panic!("server stdout closed"),
        }
    }

    /// The next message matching `predicate`, taken from the backlog first.
    fn wait_for(&mut self, what: &str, predicate: impl Fn(&Value) -> bool) -> Value {
        if let Some(index) = self.backlog.iter().position(&predicate) {
            return self.backlog.remove(index);
        }
        let deadline = Instant::now() + TIMEOUT;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let message = self.next_line(left).unwrap_or_else(|| panic!("timed out waiting for {what}"));
            if predicate(&message) {
                return message;
            }
            self.backlog.push(message);
        }
    }

    fn response(&mut self, id: &Value) -> Value {
        let id = id.clone();
        self.wait_for(&format!("the response to {id}"), |message| {
            message.get("id") == Some(&id) && message.get("method").is_none()
        })
    }

    fn request(&mut self, id: impl Into<Value>, method: &str, params: Value) -> Value {
        let id = id.into();
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        self.response(&id)
    }

    fn call_tool(&mut self, id: impl Into<Value>, name: &str, arguments: Value) -> Value {
        self.request(id, "tools/call", json!({"name": name, "arguments": arguments}))
    }

    /// Closes stdin and waits (bounded) for the process to exit.
    fn close_and_wait(&mut self, timeout: Duration) -> Option<ExitStatus> {
        self.stdin = None;
        self.wait(timeout)
    }

    fn wait(&mut self, timeout: Duration) -> Option<ExitStatus> {
        let deadline = Instant::now() + timeout;
        while Instant::now() < deadline {
            if let Some(status) = self.child.try_wait().expect("try_wait") {
                return Some(status);
            }
            thread::sleep(Duration::from_millis(10));
        }
        None
    }

    fn stderr(&self) -> String {
        self.stderr.lock().expect("stderr lock").clone()
    }
}

impl Drop for DemoServer {
    fn drop(&mut self) {
        self.stdin = None;
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The text of the first content block of a `tools/call` response.
fn text(response: &Value) -> &str {
    response["result"]["content"][0]["text"].as_str().unwrap_or_else(|| panic!("no text in {response}"))
}

#[test]
fn initialize_echoes_supported_versions_and_falls_back_to_latest() {
    let mut server = DemoServer::spawn(&[]);
    let cases = [
        ("2024-11-05", "2024-11-05"),
        ("2025-03-26", "2025-03-26"),
        ("2025-06-18", "2025-06-18"),
        ("2025-11-25", "2025-11-25"),
        ("1999-12-31", "2025-11-25"),
    ];
    for (id, (requested, answered)) in cases.into_iter().enumerate() {
        let response = server.request(
            id,
            "initialize",
            json!({"protocolVersion": requested, "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}),
        );
        let result = &response["result"];
        assert_eq!(result["protocolVersion"], answered, "requested {requested}");
        assert_eq!(result["serverInfo"]["name"], "mcp-demo-server");
        assert_eq!(result["serverInfo"]["version"], env!("CARGO_PKG_VERSION"));
        assert_eq!(result["capabilities"]["tools"]["listChanged"], true);
        assert_eq!(result["capabilities"]["resources"]["subscribe"], true);
        assert_eq!(result["capabilities"]["completions"], json!({}));
    }
    let missing = server.request(9, "initialize", json!({}));
    assert_eq!(missing["error"]["code"], -32602);
}

#[test]
fn requests_before_initialize_are_answered() {
    let mut server = DemoServer::spawn(&[]);
    assert_eq!(server.request(1, "ping", json!({}))["result"], json!({}));
    assert_eq!(server.request(2, "no/such/method", json!({}))["error"]["code"], -32601);
}

#[test]
fn tools_list_declares_every_tool() {
    let mut server = DemoServer::initialized(&[]);
    let response = server.request(1, "tools/list", json!({}));
    let tools = response["result"]["tools"].as_array().expect("tools array");
    let names: Vec<&str> = tools.iter().map(|tool| tool["name"].as_str().expect("name")).collect();
    assert_eq!(
        names,
        [
            "echo",
            "add",
            "long_running",
            "sleep",
            "tiny_image",
            "get_stats",
            "fail",
            "crash",
            "sample",
            "elicit",
            "list_roots",
            "log",
            "notify_changes",
            "cancelled_requests",
            "stderr_burst",
            "weather",
            "mixed_content",
            "bad_stats",
            "add_tool"
        ]
    );
    for tool in tools {
        assert_eq!(tool["inputSchema"]["type"], "object", "{tool}");
        assert!(tool["description"].is_string() && tool["title"].is_string(), "{tool}");
    }
    assert!(response["result"].get("nextCursor").is_none());
    let stats = tools.iter().find(|tool| tool["name"] == "get_stats").expect("get_stats");
    assert_eq!(stats["outputSchema"]["required"], json!(["count", "sum", "mean"]));
    let bad_stats = tools.iter().find(|tool| tool["name"] == "bad_stats").expect("bad_stats");
    assert_eq!(bad_stats["outputSchema"], stats["outputSchema"]);
    assert_eq!(bad_stats["inputSchema"], stats["inputSchema"]);
    let weather = tools.iter().find(|tool| tool["name"] == "weather").expect("weather");
    let properties = &weather["inputSchema"]["properties"];
    assert_eq!(properties["region"], json!({"type": "string", "x-mcp-header": "Region"}));
    assert_eq!(properties["days"]["x-mcp-header"], "Days");
    assert_eq!(properties["metric"]["x-mcp-header"], "Metric");
    assert_eq!(weather["inputSchema"]["required"], json!(["region"]));
}

#[test]
fn simple_tools_answer() {
    let mut server = DemoServer::initialized(&[]);
    assert_eq!(text(&server.call_tool(1, "echo", json!({"message": "héllo\nworld"}))), "héllo\nworld");
    assert_eq!(text(&server.call_tool(2, "add", json!({"a": 2, "b": 3}))), "5");
    assert_eq!(text(&server.call_tool(3, "add", json!({"a": 0.5, "b": 2}))), "2.5");
    let stats = server.call_tool(4, "get_stats", json!({"numbers": [1, 2, 3, 6]}));
    assert_eq!(stats["result"]["structuredContent"], json!({"count": 4, "sum": 12.0, "mean": 3.0}));
    let echoed: Value = serde_json::from_str(text(&stats)).expect("stats text is JSON");
    assert_eq!(echoed, stats["result"]["structuredContent"]);
    let image = server.call_tool(5, "tiny_image", json!({}));
    assert_eq!(image["result"]["content"][0]["type"], "image");
    assert_eq!(image["result"]["content"][0]["mimeType"], "image/png");
    assert!(image["result"]["content"][0]["data"].as_str().expect("data").starts_with("iVBORw0KGgo"));
    let failed = server.call_tool(6, "fail", json!({}));
    assert_eq!(failed["result"]["isError"], true);
    assert_eq!(server.call_tool(7, "echo", json!({}))["error"]["code"], -32602);
    assert_eq!(server.call_tool(8, "no_such_tool", json!({}))["error"]["code"], -32602);
    let burst = server.call_tool(9, "stderr_burst", json!({"bytes": 10_000}));
    assert_eq!(text(&burst), "wrote 10000 bytes");
    // Over stdio the x-mcp-header annotations of `weather` mean nothing.
    let forecast = server.call_tool(10, "weather", json!({"region": "Oslo"}));
    assert_eq!(text(&forecast), "forecast for Oslo: 1 days, metric=true");
    let forecast = server.call_tool(11, "weather", json!({"region": "Lima", "days": 3, "metric": false}));
    assert_eq!(text(&forecast), "forecast for Lima: 3 days, metric=false");
    assert_eq!(server.call_tool(12, "weather", json!({"days": 2}))["error"]["code"], -32602);
    assert_eq!(
        server.call_tool(13, "weather", json!({"region": "x", "metric": "yes"}))["error"]["code"],
        -32602
    );
}

#[test]
fn mixed_content_has_one_block_of_each_kind() {
    let mut server = DemoServer::initialized(&[]);
    let mixed = server.call_tool(1, "mixed_content", json!({}));
    let content = mixed["result"]["content"].as_array().expect("content");
    let kinds: Vec<&str> = content.iter().map(|block| block["type"].as_str().expect("type")).collect();
    assert_eq!(kinds, ["text", "image", "audio", "resource_link", "resource"]);
    assert_eq!(content[0], json!({"type": "text", "text": "mixed"}));
    assert_eq!(content[1]["mimeType"], "image/png");
    // The same PNG as `tiny_image`.
    let image = server.call_tool(2, "tiny_image", json!({}));
    assert_eq!(content[1]["data"], image["result"]["content"][0]["data"]);
    assert_eq!(content[2]["mimeType"], "audio/wav");
    // "RIFF", a 40-byte chunk, "WAVE": the start of a WAV file.
    assert!(content[2]["data"].as_str().expect("data").starts_with("UklGRigAAABXQVZF"), "{}", content[2]);
    let mut link = json!({"type": "resource_link", "uri": "demo://readme", "name": "readme"});
    link["mimeType"] = json!("text/markdown");
    assert_eq!(content[3], link);
    let item = json!({"uri": "demo://items/7", "mimeType": "text/plain", "text": "item 7"});
    assert_eq!(content[4], json!({"type": "resource", "resource": item}));
    assert!(mixed["result"].get("isError").is_none() && mixed["result"].get("structuredContent").is_none());
}

#[test]
fn bad_stats_violates_the_output_schema_it_declares() {
    let mut server = DemoServer::initialized(&[]);
    let bad = server.call_tool(1, "bad_stats", json!({"numbers": [1, 2, 3, 6]}));
    let structured = &bad["result"]["structuredContent"];
    assert_eq!(*structured, json!({"count": "4", "sum": 12.0}));
    assert!(structured["count"].is_string() && structured.get("mean").is_none());
    let echoed: Value = serde_json::from_str(text(&bad)).expect("text is JSON");
    assert_eq!(echoed, *structured);
    assert!(bad["result"].get("isError").is_none());
    assert_eq!(server.call_tool(2, "bad_stats", json!({"numbers": ["x"]}))["error"]["code"], -32602);
}

/// The names `tools/list` answers, in order.
fn tool_names(response: &Value) -> Vec<String> {
    let tools = response["result"]["tools"].as_array().expect("tools");
    tools.iter().map(|tool| tool["name"].as_str().expect("name").to_owned()).collect()
}

#[test]
fn add_tool_adds_an_echo_tool_for_the_session_and_notifies() {
    let mut server = DemoServer::initialized(&[]);
    let added = server.call_tool(1, "add_tool", json!({"name": "shout"}));
    assert_eq!(text(&added), "added shout");
    assert!(added["result"].get("isError").is_none());
    // The notification came before the response (it is in the backlog already).
    let position = server.backlog.iter().position(|m| m["method"] == "notifications/tools/list_changed");
    assert!(position.is_some(), "no tools/list_changed before the response: {:?}", server.backlog);
    server.backlog.clear();

    let names = tool_names(&server.request(2, "tools/list", json!({})));
    assert_eq!(names.len(), 20);
    assert_eq!(names.last().map(String::as_str), Some("shout"));
    let listed = server.request(3, "tools/list", json!({}));
    let shout = listed["result"]["tools"].as_array().and_then(|tools| tools.last()).expect("shout");
    assert_eq!(shout["inputSchema"]["required"], json!(["message"]));
    assert!(shout["title"].is_string() && shout["description"].is_string());
    assert_eq!(text(&server.call_tool(4, "shout", json!({"message": "hey"}))), "hey");
    assert_eq!(server.call_tool(5, "shout", json!({}))["error"]["code"], -32602);

    // Taken, invalid or missing names change nothing.
    for (id, name) in [(6, "shout"), (7, "echo"), (8, "two words"), (9, "")] {
        let refused = server.call_tool(id, "add_tool", json!({"name": name}));
        assert_eq!(refused["result"]["isError"], true, "{name:?}: {refused}");
    }
    assert_eq!(server.call_tool(10, "add_tool", json!({}))["error"]["code"], -32602);
    server.assert_none("a notification for a refused add_tool", |m| m.get("method").is_some());

    // At most 64 added tools; the 65th is a tool error and is not listed.
    for index in 1..64 {
        let added = server.call_tool(100 + index, "add_tool", json!({"name": format!("tool_{index}")}));
        assert_eq!(text(&added), format!("added tool_{index}"));
    }
    let over = server.call_tool(200, "add_tool", json!({"name": "tool_64"}));
    assert_eq!(over["result"]["isError"], true);
    assert!(text(&over).contains("64"), "{over}");
    let names = tool_names(&server.request(201, "tools/list", json!({})));
    assert_eq!(names.len(), 19 + 64);
    assert_eq!(names.last().map(String::as_str), Some("tool_63"));

    // Another session (process) starts with the built-in tools only.
    let mut other = DemoServer::initialized(&[]);
    assert_eq!(tool_names(&other.request(1, "tools/list", json!({}))).len(), 19);
    assert_eq!(other.call_tool(2, "shout", json!({"message": "hey"}))["error"]["code"], -32602);
}

#[test]
fn batches_are_answered_with_an_array() {
    let mut server = DemoServer::initialized(&[]);
    server.send_raw(
        r#"[{"jsonrpc":"2.0","id":"a","method":"ping"},
            {"jsonrpc":"2.0","method":"notifications/initialized"},
            {"jsonrpc":"2.0","id":"b","method":"tools/call","params":{"name":"echo","arguments":{"message":"hi"}}},
            {"jsonrpc":"2.0","id":"c","method":"tools/call","params":{"name":"sleep","arguments":{"ms":20}}},
            {"jsonrpc":"2.0","id":"d","method":"bogus"}]"#
            .replace('\n', " ")
            .as_str(),
    );
    let batch = server.wait_for("the batch response", Value::is_array);
    let responses = batch.as_array().expect("array");
    assert_eq!(responses.len(), 4);
    let by_id = |id: &str| responses.iter().find(|response| response["id"] == id).expect("response");
    assert_eq!(by_id("a")["result"], json!({}));
    assert_eq!(text(by_id("b")), "hi");
    assert_eq!(text(by_id("c")), "slept 20 ms");
    assert_eq!(by_id("d")["error"]["code"], -32601);
    server.send_raw("[]");
    assert_eq!(server.wait_for("the empty batch error", |m| m["id"].is_null())["error"]["code"], -32600);
}

#[test]
fn malformed_lines_get_a_parse_error_and_the_server_keeps_going() {
    let mut server = DemoServer::initialized(&[]);
    for garbage in ["{not json", "\u{1}\u{2}", r#"{"jsonrpc":"2.0","id":1,"method":"ping""#] {
        server.send_raw(garbage);
        let error = server.wait_for("a parse error", |message| message.get("error").is_some());
        assert_eq!(error["error"]["code"], -32700);
        assert_eq!(error["id"], Value::Null);
    }
    server.send_raw(r#"{"jsonrpc":"2.0","id":5,"method":"ping","params":[]}"#);
    assert_eq!(server.response(&json!(5))["error"]["code"], -32602);
    server.send_raw(r#"{"id":6,"method":"ping"}"#);
    assert_eq!(server.response(&json!(6))["error"]["code"], -32600);
    assert_eq!(text(&server.call_tool(7, "echo", json!({"message": "still here"}))), "still here");
}

#[test]
fn long_running_reports_progress() {
    let mut server = DemoServer::initialized(&[]);
    server.send(&json!({
        "jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "long_running", "arguments": {"steps": 3, "step_ms": 10}, "_meta": {"progressToken": "tok"}}
    }));
    for step in 1..=3 {
        let progress = server
            .wait_for("a progress notification", |message| message["method"] == "notifications/progress");
        assert_eq!(
            progress["params"],
            json!({"progressToken": "tok", "progress": step, "total": 3, "message": format!("step {step} of 3")})
        );
    }
    assert_eq!(text(&server.response(&json!(1))), "done after 3 steps");
    // Without a token: no notifications, just the result.
    assert_eq!(
        text(&server.call_tool(2, "long_running", json!({"steps": 2, "step_ms": 1}))),
        "done after 2 steps"
    );
    assert!(server.backlog.is_empty(), "unexpected messages: {:?}", server.backlog);
}

#[test]
fn cancelled_sleep_gets_no_response_and_is_recorded() {
    let mut server = DemoServer::initialized(&[]);
    let started = Instant::now();
    server.send(&json!({
        "jsonrpc": "2.0", "id": 7, "method": "tools/call",
        "params": {"name": "sleep", "arguments": {"ms": 60_000}}
    }));
    // The sleeping call does not block other requests.
    assert_eq!(server.request(8, "ping", json!({}))["result"], json!({}));
    server.send(&json!({
        "jsonrpc": "2.0", "method": "notifications/cancelled",
        "params": {"requestId": 7, "reason": "test"}
    }));
    let recorded = server.call_tool(9, "cancelled_requests", json!({}));
    assert_eq!(text(&recorded), "[7]");
    // No response for 7, even after the sleeper noticed the cancellation.
    thread::sleep(Duration::from_millis(200));
    while let Some(message) = server.next_line(Duration::from_millis(50)) {
        assert_ne!(message["id"], 7, "cancelled request was answered: {message}");
    }
    assert!(server.backlog.iter().all(|message| message["id"] != 7));
    assert!(started.elapsed() < Duration::from_secs(30));
    assert!(server.stderr().contains("demo-server: cancelled request 7"), "stderr: {}", server.stderr());
}

#[test]
fn pagination_walks_tools_list() {
    let mut server = DemoServer::initialized(&["--page-size", "4"]);
    let mut names = Vec::new();
    let mut cursor: Option<String> = None;
    let mut pages = 0;
    loop {
        let params = match &cursor {
            Some(cursor) => json!({"cursor": cursor}),
            None => json!({}),
        };
        let response = server.request(100 + pages, "tools/list", params);
        let tools = response["result"]["tools"].as_array().expect("tools");
        assert!(tools.len() <= 4);
        names.extend(tools.iter().map(|tool| tool["name"].as_str().expect("name").to_owned()));
        pages += 1;
        match response["result"].get("nextCursor") {
            Some(next) => cursor = Some(next.as_str().expect("string cursor").to_owned()),
            None => break,
        }
    }
    assert_eq!(pages, 5);
    assert_eq!(names.len(), 19);
    assert_eq!(names.first().map(String::as_str), Some("echo"));
    assert_eq!(names.last().map(String::as_str), Some("add_tool"));
    let bad = server.request(1, "tools/list", json!({"cursor": "not-a-cursor"}));
    assert_eq!(bad["error"]["code"], -32602);
    let resources = server.request(2, "resources/list", json!({}));
    assert_eq!(resources["result"]["resources"].as_array().map(Vec::len), Some(3));
    assert!(resources["result"].get("nextCursor").is_none());
}

#[test]
fn resources_prompts_completion_and_logging() {
    let mut server = DemoServer::initialized(&[]);
    let item = server.request(1, "resources/read", json!({"uri": "demo://items/42"}));
    assert_eq!(item["result"]["contents"][0]["text"], "item 42");
    let missing = server.request(2, "resources/read", json!({"uri": "demo://missing"}));
    assert_eq!(missing["error"]["code"], -32002);
    let templates = server.request(3, "resources/templates/list", json!({}));
    assert_eq!(templates["result"]["resourceTemplates"][0]["uriTemplate"], "demo://items/{id}");
    assert_eq!(
        server.request(4, "resources/subscribe", json!({"uri": "demo://readme"}))["result"],
        json!({})
    );

    assert_eq!(text(&server.call_tool(5, "notify_changes", json!({}))), "notified");
    for method in [
        "notifications/tools/list_changed",
        "notifications/resources/list_changed",
        "notifications/prompts/list_changed",
    ] {
        server.wait_for(method, |message| message["method"] == method);
    }
    let updated = server.wait_for("resources/updated", |m| m["method"] == "notifications/resources/updated");
    assert_eq!(updated["params"]["uri"], "demo://readme");

    let greeting =
        server.request(6, "prompts/get", json!({"name": "greeting", "arguments": {"name": "Ada"}}));
    assert_eq!(greeting["result"]["messages"][0]["content"]["text"], "Hello, Ada!");
    let missing = server.request(7, "prompts/get", json!({"name": "greeting", "arguments": {}}));
    assert_eq!(missing["error"]["code"], -32602);

    let completion = server.request(
        8,
        "completion/complete",
        json!({"ref": {"type": "ref/prompt", "name": "code_review"}, "argument": {"name": "language", "value": "py"}}),
    );
    assert_eq!(
        completion["result"]["completion"],
        json!({"values": ["python"], "total": 1, "hasMore": false})
    );

    assert_eq!(text(&server.call_tool(9, "log", json!({"level": "debug", "message": "quiet"}))), "filtered");
    assert_eq!(text(&server.call_tool(10, "log", json!({"level": "warning", "message": "loud"}))), "logged");
    let logged = server.wait_for("a log message", |m| m["method"] == "notifications/message");
    assert_eq!(logged["params"], json!({"level": "warning", "logger": "demo", "data": "loud"}));
    assert_eq!(server.request(11, "logging/setLevel", json!({"level": "error"}))["result"], json!({}));
    assert_eq!(text(&server.call_tool(12, "log", json!({"level": "warning", "message": "x"}))), "filtered");
}

#[test]
fn server_to_client_requests_round_trip() {
    let mut server = DemoServer::initialized(&[]);
    server.send(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "sample", "arguments": {"prompt": "hi"}}}));
    let request = server.wait_for("sampling/createMessage", |m| m["method"] == "sampling/createMessage");
    assert_eq!(request["id"], "srv-1");
    assert_eq!(request["params"]["messages"][0]["content"]["text"], "hi");
    assert_eq!(request["params"]["maxTokens"], 100);
    server.send(&json!({"jsonrpc": "2.0", "id": "srv-1", "result": {
        "role": "assistant", "model": "m", "content": {"type": "text", "text": "hello back"}
    }}));
    assert_eq!(text(&server.response(&json!(1))), "sampled: hello back");

    server.send(&json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "elicit", "arguments": {"message": "who?"}}}));
    let request = server.wait_for("elicitation/create", |m| m["method"] == "elicitation/create");
    assert_eq!(request["params"]["requestedSchema"]["required"], json!(["name"]));
    let id = request["id"].clone();
    server.send(
        &json!({"jsonrpc": "2.0", "id": id, "result": {"action": "accept", "content": {"name": "Ada"}}}),
    );
    assert_eq!(text(&server.response(&json!(2))), r#"action=accept content={"name":"Ada"}"#);

    server.send(&json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "list_roots", "arguments": {}}}));
    let request = server.wait_for("roots/list", |m| m["method"] == "roots/list");
    let id = request["id"].clone();
    server.send(&json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32601, "message": "no roots"}}));
    let failed = server.response(&json!(3));
    assert_eq!(text(&failed), "roots/list failed: no roots");
    assert_eq!(failed["result"]["isError"], true);
}

#[test]
fn exits_zero_on_stdin_eof_even_with_work_in_flight() {
    let mut server = DemoServer::initialized(&[]);
    server.send(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "sleep", "arguments": {"ms": 60_000}}}));
    let started = Instant::now();
    let status = server.close_and_wait(Duration::from_secs(5)).expect("server exited at EOF");
    assert!(status.success(), "{status:?}");
    assert!(started.elapsed() < Duration::from_secs(5));
}

#[test]
fn crash_exits_with_code_3_without_answering() {
    let mut server = DemoServer::initialized(&[]);
    server.send(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "crash", "arguments": {}}}));
    let status = server.wait(TIMEOUT).expect("server exited");
    assert_eq!(status.code(), Some(3));
    assert!(server.lines.recv_timeout(Duration::from_secs(1)).is_err(), "crash answered");
}

#[test]
fn help_prints_usage() {
    let output =
        Command::new(env!("CARGO_BIN_EXE_mcp-demo-server")).arg("--help").output().expect("run --help");
    assert!(output.status.success());
    let usage = String::from_utf8_lossy(&output.stdout);
    for flag in ["--page-size", "--flood-stderr", "--spawn-grandchild", "--banner"] {
        assert!(usage.contains(flag), "{flag} missing from usage");
    }
    let bad = Command::new(env!("CARGO_BIN_EXE_mcp-demo-server")).arg("--bogus").output().expect("run");
    assert_eq!(bad.status.code(), Some(2));
}

#[cfg(target_os = "linux")]
#[test]
fn grandchild_stays_in_the_server_process_group() {
    let server = DemoServer::initialized(&["--spawn-grandchild"]);
    let deadline = Instant::now() + TIMEOUT;
    let pid = loop {
        let stderr = server.stderr();
        // Only complete lines: unbuffered stderr may deliver the pid line in pieces.
        let complete = stderr.split_inclusive('\n').filter(|line| line.ends_with('\n'));
        if let Some(pid) =
            complete.into_iter().find_map(|line| line.strip_prefix("demo-server: grandchild pid "))
        {
            break pid.trim().to_owned();
        }
        assert!(Instant::now() < deadline, "no grandchild pid in stderr: {stderr}");
        thread::sleep(Duration::from_millis(10));
    };
    let process_group = |pid: &str| {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).expect("read stat");
        let after_name = stat.rsplit_once(')').expect("stat format").1.to_owned();
        after_name.split_whitespace().nth(2).expect("pgrp field").to_owned()
    };
    let same_group = process_group(&pid) == process_group(&server.child.id().to_string());
    // Clean up the grandchild whatever the outcome.
    let _ = Command::new("kill").arg(&pid).status();
    assert!(same_group, "grandchild {pid} left the server's process group");
}

#[test]
fn flood_stderr_does_not_stop_the_protocol() {
    let mut server = DemoServer::initialized(&["--flood-stderr"]);
    assert_eq!(text(&server.call_tool(1, "echo", json!({"message": "over the noise"}))), "over the noise");
    let deadline = Instant::now() + TIMEOUT;
    while server.stderr.lock().expect("stderr lock").len() < 64 * 1024 {
        assert!(Instant::now() < deadline, "stderr flood too slow");
        thread::sleep(Duration::from_millis(10));
    }
}

// ---------------------------------------------------------------------------------------------
// MCP 2026-07-28 ("modern": no initialize, per-request `_meta`, MRTR)
// ---------------------------------------------------------------------------------------------

/// The modern protocol version.
const MODERN: &str = "2026-07-28";

/// Every version the server lists in `supportedVersions` and in `-32022` data.
const ALL_VERSIONS: [&str; 5] = ["2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"];

/// The required per-request `_meta` of a modern request with these client capabilities.
fn modern_meta(capabilities: Value) -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": capabilities,
        "io.modelcontextprotocol/clientInfo": {"name": "test", "version": "0"},
    })
}

/// `params` with `_meta` set to `meta`.
fn with_meta(mut params: Value, meta: Value) -> Value {
    params["_meta"] = meta;
    params
}

/// The params of a modern `tools/call` with these client capabilities.
fn modern_call(name: &str, arguments: Value, capabilities: Value) -> Value {
    json!({"name": name, "arguments": arguments, "_meta": modern_meta(capabilities)})
}

impl DemoServer {
    /// A modern request with `_meta` declaring no client capabilities.
    fn modern_request(&mut self, id: impl Into<Value>, method: &str, params: Value) -> Value {
        self.request(id, method, with_meta(params, modern_meta(json!({}))))
    }

    /// Fails if a message matching `predicate` arrived (the backlog and what is already sent).
    fn assert_none(&mut self, what: &str, predicate: impl Fn(&Value) -> bool) {
        while let Some(message) = self.next_line(Duration::from_millis(50)) {
            self.backlog.push(message);
        }
        assert!(!self.backlog.iter().any(predicate), "unexpected {what}: {:?}", self.backlog);
    }
}

#[test]
fn modern_discover_answers_without_initialize() {
    let mut server = DemoServer::spawn(&[]);
    let response = server.request(1, "server/discover", json!({"_meta": modern_meta(json!({}))}));
    let result = &response["result"];
    assert_eq!(result["resultType"], "complete");
    assert_eq!(result["supportedVersions"], json!(ALL_VERSIONS));
    assert_eq!(result["ttlMs"], 60_000);
    assert_eq!(result["cacheScope"], "public");
    let info = &result["_meta"]["io.modelcontextprotocol/serverInfo"];
    assert_eq!(info["name"], "mcp-demo-server");
    assert_eq!(info["version"], env!("CARGO_PKG_VERSION"));
    assert!(result.get("serverInfo").is_none() && result.get("protocolVersion").is_none());
    // The same capabilities and instructions as initialize (which still works afterwards).
    let init = server.request(
        2,
        "initialize",
        json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}),
    );
    assert_eq!(result["capabilities"], init["result"]["capabilities"]);
    assert_eq!(result["instructions"], init["result"]["instructions"]);
    assert!(result["instructions"].as_str().is_some_and(|text| !text.is_empty()));
}

#[test]
fn modern_requests_work_without_initialize() {
    let mut server = DemoServer::spawn(&[]);
    let echoed =
        server.modern_request(1, "tools/call", json!({"name": "echo", "arguments": {"message": "hi"}}));
    assert_eq!(text(&echoed), "hi");
    assert_eq!(echoed["result"]["resultType"], "complete");
    assert_eq!(echoed["result"]["_meta"]["io.modelcontextprotocol/serverInfo"]["name"], "mcp-demo-server");
    assert!(echoed["result"].get("ttlMs").is_none(), "tools/call results are not cacheable");
    let stats = server.modern_request(
        2,
        "tools/call",
        json!({"name": "get_stats", "arguments": {"numbers": [1, 3]}}),
    );
    assert_eq!(stats["result"]["structuredContent"], json!({"count": 2, "sum": 4.0, "mean": 2.0}));
    let failed = server.modern_request(3, "tools/call", json!({"name": "fail", "arguments": {}}));
    assert_eq!(failed["result"]["isError"], true);
    assert_eq!(failed["result"]["resultType"], "complete");
    let unknown = server.modern_request(4, "tools/call", json!({"name": "nope", "arguments": {}}));
    assert_eq!(unknown["error"]["code"], -32602);

    for (id, method, key, count) in [
        (10, "tools/list", "tools", 19),
        (11, "resources/list", "resources", 3),
        (12, "resources/templates/list", "resourceTemplates", 1),
        (13, "prompts/list", "prompts", 2),
    ] {
        let listed = server.modern_request(id, method, json!({}));
        let result = &listed["result"];
        assert_eq!(result[key].as_array().map(Vec::len), Some(count), "{method}: {listed}");
        assert_eq!(result["resultType"], "complete", "{method}");
        assert_eq!(result["ttlMs"], 60_000, "{method}");
        assert_eq!(result["cacheScope"], "public", "{method}");
    }
    let read = server.modern_request(20, "resources/read", json!({"uri": "demo://items/42"}));
    assert_eq!(read["result"]["contents"][0]["text"], "item 42");
    assert_eq!((&read["result"]["ttlMs"], &read["result"]["cacheScope"]), (&json!(60_000), &json!("public")));
    let missing = server.modern_request(21, "resources/read", json!({"uri": "demo://missing"}));
    assert_eq!(missing["error"]["code"], -32602, "-32002 is retired in 2026-07-28");
    assert_eq!(missing["error"]["data"]["uri"], "demo://missing");
    let prompt =
        server.modern_request(22, "prompts/get", json!({"name": "greeting", "arguments": {"name": "Ada"}}));
    assert_eq!(prompt["result"]["messages"][0]["content"]["text"], "Hello, Ada!");
    assert_eq!(prompt["result"]["resultType"], "complete");
    let completion = server.modern_request(
        23,
        "completion/complete",
        json!({"ref": {"type": "ref/prompt", "name": "code_review"}, "argument": {"name": "language", "value": "go"}}),
    );
    assert_eq!(completion["result"]["completion"]["values"], json!(["go"]));
    assert_eq!(completion["result"]["resultType"], "complete");
}

#[test]
fn modern_pagination_keeps_cursors_and_cache_hints() {
    let mut server = DemoServer::spawn(&["--page-size", "10"]);
    let first = server.modern_request(1, "tools/list", json!({}));
    assert_eq!(first["result"]["tools"].as_array().map(Vec::len), Some(10));
    let cursor = first["result"]["nextCursor"].clone();
    let second = server.modern_request(2, "tools/list", json!({"cursor": cursor}));
    assert_eq!(second["result"]["tools"].as_array().map(Vec::len), Some(9));
    assert!(second["result"].get("nextCursor").is_none());
    assert_eq!(second["result"]["ttlMs"], 60_000);
}

#[test]
fn modern_requests_missing_meta_are_invalid_params() {
    let mut server = DemoServer::spawn(&[]);
    // server/discover is modern-only: without _meta it is malformed, before or after anything.
    assert_eq!(server.request(1, "server/discover", json!({}))["error"]["code"], -32602);
    let no_capabilities = json!({"_meta": {"io.modelcontextprotocol/protocolVersion": MODERN}});
    assert_eq!(server.request(2, "server/discover", no_capabilities.clone())["error"]["code"], -32602);
    let call =
        with_meta(json!({"name": "echo", "arguments": {"message": "x"}}), no_capabilities["_meta"].clone());
    assert_eq!(server.request(3, "tools/call", call)["error"]["code"], -32602);
    let bad_capabilities = with_meta(
        json!({}),
        json!({"io.modelcontextprotocol/protocolVersion": MODERN, "io.modelcontextprotocol/clientCapabilities": []}),
    );
    assert_eq!(server.request(4, "tools/list", bad_capabilities)["error"]["code"], -32602);
    let mut bad_level = modern_meta(json!({}));
    bad_level["io.modelcontextprotocol/logLevel"] = json!("loud");
    assert_eq!(server.request(5, "tools/list", json!({"_meta": bad_level}))["error"]["code"], -32602);
    // The session opened modern: a request without _meta is now malformed too.
    let bare = server.call_tool(6, "echo", json!({"message": "x"}));
    assert_eq!(bare["error"]["code"], -32602, "{bare}");
    assert_eq!(server.request(7, "tools/list", json!({}))["error"]["code"], -32602);
    // Methods the modern era removed are unknown, with or without _meta.
    assert_eq!(server.request(8, "ping", json!({}))["error"]["code"], -32601);
    for (id, method, params) in [
        (9, "ping", json!({})),
        (10, "logging/setLevel", json!({"level": "debug"})),
        (11, "resources/subscribe", json!({"uri": "demo://readme"})),
        (12, "resources/unsubscribe", json!({"uri": "demo://readme"})),
        (13, "no/such/method", json!({})),
    ] {
        assert_eq!(server.modern_request(id, method, params)["error"]["code"], -32601, "{method}");
    }
    assert_eq!(
        text(&server.modern_request(
            14,
            "tools/call",
            json!({"name": "echo", "arguments": {"message": "ok"}})
        )),
        "ok"
    );
}

#[test]
fn modern_unsupported_version_is_32022_with_data() {
    let mut server = DemoServer::spawn(&[]);
    let mut meta = modern_meta(json!({}));
    meta["io.modelcontextprotocol/protocolVersion"] = json!("1900-01-01");
    let response = server.request(1, "server/discover", json!({"_meta": meta}));
    assert_eq!(response["error"]["code"], -32022, "{response}");
    assert_eq!(response["error"]["data"], json!({"supported": ALL_VERSIONS, "requested": "1900-01-01"}));
    // A legacy version is not spoken with per-request metadata (initialize selects it).
    let mut meta = modern_meta(json!({}));
    meta["io.modelcontextprotocol/protocolVersion"] = json!("2025-11-25");
    let call = with_meta(json!({"name": "echo", "arguments": {"message": "x"}}), meta);
    let response = server.request(2, "tools/call", call);
    assert_eq!(response["error"]["code"], -32022);
    assert_eq!(response["error"]["data"]["requested"], "2025-11-25");
    assert_eq!(response["error"]["data"]["supported"], json!(ALL_VERSIONS));
    // Rejected requests select no era: legacy requests are still answered.
    assert_eq!(server.request(3, "ping", json!({}))["result"], json!({}));
}

#[test]
fn modern_elicit_round_trip() {
    let mut server = DemoServer::spawn(&[]);
    let params = modern_call("elicit", json!({"message": "who?"}), json!({"elicitation": {}}));
    let first = server.request(1, "tools/call", params.clone());
    let result = &first["result"];
    assert_eq!(result["resultType"], "input_required", "{first}");
    assert_eq!(
        result["inputRequests"],
        json!({"elicitation": {"method": "elicitation/create", "params": {
            "message": "who?",
            "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]},
        }}})
    );
    let state = result["requestState"].as_str().expect("requestState").to_owned();
    assert!(state.starts_with("mrtr1:elicit:elicitation:"), "{state}");
    assert!(result.get("content").is_none());

    let mut retry = params.clone();
    retry["inputResponses"] = json!({"elicitation": {"action": "accept", "content": {"name": "Ada"}}});
    retry["requestState"] = json!(state);
    let done = server.request(2, "tools/call", retry);
    assert_eq!(done["result"]["resultType"], "complete");
    assert_eq!(text(&done), r#"action=accept content={"name":"Ada"}"#);

    let mut declined = params;
    declined["inputResponses"] = json!({"elicitation": {"action": "decline"}});
    declined["requestState"] = json!(state);
    assert_eq!(text(&server.request(3, "tools/call", declined)), "action=decline content=null");
    // No server→client request was ever written.
    server.assert_none("server→client request", |message| message.get("method").is_some());
}

#[test]
fn modern_retry_without_the_answer_gets_input_required_again() {
    let mut server = DemoServer::spawn(&[]);
    let params = modern_call("elicit", json!({"message": "who?"}), json!({"elicitation": {"form": {}}}));
    let first = server.request(1, "tools/call", params.clone())["result"].clone();
    let state = first["requestState"].clone();

    let mut no_answer = params.clone();
    no_answer["requestState"] = state.clone();
    let again = server.request(2, "tools/call", no_answer);
    assert_eq!(again["result"]["resultType"], "input_required");
    assert_eq!(again["result"]["inputRequests"], first["inputRequests"]);
    assert_eq!(again["result"]["requestState"], state);

    let mut other_key = params.clone();
    other_key["inputResponses"] = json!({"something_else": {"action": "accept"}});
    other_key["requestState"] = state.clone();
    assert_eq!(server.request(3, "tools/call", other_key)["result"]["resultType"], "input_required");

    let mut without_state = params.clone();
    without_state["inputResponses"] =
        json!({"elicitation": {"action": "accept", "content": {"name": "Ada"}}});
    assert_eq!(server.request(4, "tools/call", without_state)["result"]["resultType"], "input_required");

    let mut foreign_state = params.clone();
    foreign_state["inputResponses"] =
        json!({"elicitation": {"action": "accept", "content": {"name": "Ada"}}});
    foreign_state["requestState"] = json!("mrtr1:elicit:elicitation:0000000000000000");
    assert_eq!(server.request(5, "tools/call", foreign_state)["error"]["code"], -32602);

    let mut changed_arguments = params.clone();
    changed_arguments["arguments"] = json!({"message": "someone else?"});
    changed_arguments["inputResponses"] = json!({"elicitation": {"action": "accept", "content": {}}});
    changed_arguments["requestState"] = state.clone();
    assert_eq!(server.request(6, "tools/call", changed_arguments)["error"]["code"], -32602);

    let mut not_an_object = params;
    not_an_object["inputResponses"] = json!({"elicitation": "yes"});
    not_an_object["requestState"] = state;
    assert_eq!(server.request(7, "tools/call", not_an_object)["error"]["code"], -32602);
}

#[test]
fn modern_mrtr_sample_and_roots_follow_declared_capabilities() {
    let mut server = DemoServer::spawn(&[]);
    for (id, name, arguments, capabilities) in [
        (1, "elicit", json!({"message": "?"}), json!({})),
        (2, "elicit", json!({"message": "?"}), json!({"elicitation": {"url": {}}})),
        (3, "sample", json!({"prompt": "hi"}), json!({"elicitation": {}})),
        (4, "list_roots", json!({}), json!({"sampling": {}})),
    ] {
        let refused = server.request(id, "tools/call", modern_call(name, arguments, capabilities));
        assert_eq!(refused["result"]["isError"], true, "{name}: {refused}");
        assert_eq!(refused["result"]["resultType"], "complete");
        assert!(text(&refused).contains("does not declare"), "{refused}");
    }

    let params = modern_call("sample", json!({"prompt": "hi"}), json!({"sampling": {}}));
    let asked = server.request(10, "tools/call", params.clone())["result"].clone();
    assert_eq!(asked["resultType"], "input_required");
    assert_eq!(
        asked["inputRequests"]["sampling"],
        json!({"method": "sampling/createMessage", "params": {
            "messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}],
            "maxTokens": 100,
        }})
    );
    let mut retry = params;
    retry["inputResponses"] = json!({"sampling": {
        "role": "assistant", "model": "m", "content": {"type": "text", "text": "hello back"}
    }});
    retry["requestState"] = asked["requestState"].clone();
    assert_eq!(text(&server.request(11, "tools/call", retry)), "sampled: hello back");

    let params = modern_call("list_roots", json!({}), json!({"roots": {}}));
    let asked = server.request(12, "tools/call", params.clone())["result"].clone();
    assert_eq!(asked["inputRequests"], json!({"roots": {"method": "roots/list", "params": {}}}));
    let mut retry = params;
    retry["inputResponses"] =
        json!({"roots": {"roots": [{"uri": "file:///a"}, {"uri": "file:///b", "name": "b"}]}});
    retry["requestState"] = asked["requestState"].clone();
    assert_eq!(text(&server.request(13, "tools/call", retry)), "file:///a,file:///b");
    server.assert_none("server→client request", |message| message.get("method").is_some());
}

#[test]
fn modern_log_messages_follow_the_request_log_level() {
    let mut server = DemoServer::spawn(&[]);
    let log = |level: &str, message: &str, wanted: Option<&str>| {
        let mut meta = modern_meta(json!({}));
        if let Some(wanted) = wanted {
            meta["io.modelcontextprotocol/logLevel"] = json!(wanted);
        }
        json!({"name": "log", "arguments": {"level": level, "message": message}, "_meta": meta})
    };
    // No logLevel in _meta: no message at all, whatever the level.
    assert_eq!(text(&server.request(1, "tools/call", log("emergency", "silent", None))), "filtered");
    assert_eq!(text(&server.request(2, "tools/call", log("warning", "below", Some("error")))), "filtered");
    server.assert_none("log message", |message| message["method"] == "notifications/message");
    assert_eq!(text(&server.request(3, "tools/call", log("warning", "at", Some("warning")))), "logged");
    let logged = server.wait_for("a log message", |m| m["method"] == "notifications/message");
    assert_eq!(logged["params"], json!({"level": "warning", "logger": "demo", "data": "at"}));
    // The default legacy filter (info) does not apply to modern requests.
    assert_eq!(text(&server.request(4, "tools/call", log("debug", "chatty", Some("debug")))), "logged");
    let logged = server.wait_for("a debug message", |m| m["method"] == "notifications/message");
    assert_eq!(logged["params"]["data"], "chatty");
    server.assert_none("another log message", |message| message["method"] == "notifications/message");
}

#[test]
fn modern_progress_and_cancellation() {
    let mut server = DemoServer::spawn(&[]);
    let mut meta = modern_meta(json!({}));
    meta["progressToken"] = json!("tok");
    server.send(&json!({
        "jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "long_running", "arguments": {"steps": 3, "step_ms": 10}, "_meta": meta}
    }));
    for step in 1..=3 {
        let progress = server.wait_for("progress", |message| message["method"] == "notifications/progress");
        assert_eq!(progress["params"]["progressToken"], "tok");
        assert_eq!(progress["params"]["progress"], step);
    }
    let done = server.response(&json!(1));
    assert_eq!(text(&done), "done after 3 steps");
    assert_eq!(done["result"]["resultType"], "complete");

    server.send(&json!({
        "jsonrpc": "2.0", "id": 7, "method": "tools/call",
        "params": modern_call("sleep", json!({"ms": 60_000}), json!({}))
    }));
    server.send(&json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 7}}));
    let recorded =
        server.modern_request(8, "tools/call", json!({"name": "cancelled_requests", "arguments": {}}));
    assert_eq!(text(&recorded), "[7]");
    thread::sleep(Duration::from_millis(100));
    server.assert_none("response to the cancelled call", |message| message["id"] == 7);
}

#[test]
fn modern_subscriptions_listen_carries_the_subscription_id() {
    let mut server = DemoServer::spawn(&[]);
    server.send(&json!({"jsonrpc": "2.0", "id": "sub", "method": "subscriptions/listen", "params": {
        "_meta": modern_meta(json!({})),
        "notifications": {"toolsListChanged": true, "resourceSubscriptions": ["demo://readme", "demo://missing"]},
    }}));
    let ack =
        server.wait_for("the acknowledgement", |m| m["method"] == "notifications/subscriptions/acknowledged");
    assert_eq!(
        ack["params"],
        json!({
            "notifications": {"toolsListChanged": true, "resourceSubscriptions": ["demo://readme"]},
            "_meta": {"io.modelcontextprotocol/subscriptionId": "sub"},
        })
    );
    let notified = server.modern_request(1, "tools/call", json!({"name": "notify_changes", "arguments": {}}));
    assert_eq!(text(&notified), "notified");
    let tools = server.wait_for("tools/list_changed", |m| m["method"] == "notifications/tools/list_changed");
    assert_eq!(tools["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"], "sub");
    let updated = server.wait_for("resources/updated", |m| m["method"] == "notifications/resources/updated");
    assert_eq!(updated["params"]["uri"], "demo://readme");
    assert_eq!(updated["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"], "sub");
    server.assert_none("an unrequested notification", |message| {
        matches!(
            message["method"].as_str(),
            Some("notifications/resources/list_changed" | "notifications/prompts/list_changed")
        )
    });

    server.send(
        &json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": "sub"}}),
    );
    server.backlog.clear();
    assert_eq!(
        text(&server.modern_request(2, "tools/call", json!({"name": "notify_changes", "arguments": {}}))),
        "notified"
    );
    server.assert_none("a notification after cancellation", |message| message.get("method").is_some());
    server.assert_none("a response to the listen request", |message| message["id"] == "sub");
    let bad = server.modern_request(3, "subscriptions/listen", json!({}));
    assert_eq!(bad["error"]["code"], -32602);
}

#[test]
fn modern_add_tool_notifies_only_the_listen_streams_that_asked() {
    let mut server = DemoServer::spawn(&[]);
    server.send(&json!({"jsonrpc": "2.0", "id": "tools", "method": "subscriptions/listen", "params": {
        "_meta": modern_meta(json!({})),
        "notifications": {"toolsListChanged": true, "resourcesListChanged": true},
    }}));
    server.send(&json!({"jsonrpc": "2.0", "id": "prompts", "method": "subscriptions/listen", "params": {
        "_meta": modern_meta(json!({})),
        "notifications": {"promptsListChanged": true},
    }}));
    for id in ["tools", "prompts"] {
        server.wait_for("an acknowledgement", |m| {
            m["method"] == "notifications/subscriptions/acknowledged"
                && m["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"] == id
        });
    }
    let added =
        server.modern_request(1, "tools/call", json!({"name": "add_tool", "arguments": {"name": "later"}}));
    assert_eq!(text(&added), "added later");
    assert_eq!(added["result"]["resultType"], "complete");
    let changed =
        server.wait_for("tools/list_changed", |m| m["method"] == "notifications/tools/list_changed");
    assert_eq!(changed["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"], "tools");
    server.assert_none("another notification", |message| {
        message.get("method").is_some() && message["method"] != "notifications/subscriptions/acknowledged"
    });
    let listed = server.modern_request(2, "tools/list", json!({}));
    assert_eq!(tool_names(&listed).last().map(String::as_str), Some("later"));
    let echoed =
        server.modern_request(3, "tools/call", json!({"name": "later", "arguments": {"message": "m"}}));
    assert_eq!(text(&echoed), "m");
}

#[test]
fn legacy_initialize_path_is_unchanged_after_a_discover_probe() {
    let mut server = DemoServer::spawn(&[]);
    // A dual-era client that probes, then falls back to initialize on the same process.
    let probe = server.request("probe", "server/discover", json!({"_meta": modern_meta(json!({}))}));
    assert_eq!(probe["result"]["resultType"], "complete");
    let init = server.request(
        0,
        "initialize",
        json!({"protocolVersion": "2025-06-18", "capabilities": {"elicitation": {}}, "clientInfo": {"name": "t", "version": "1"}}),
    );
    assert_eq!(init["result"]["protocolVersion"], "2025-06-18");
    assert!(init["result"].get("resultType").is_none());
    server.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    assert_eq!(server.request(1, "ping", json!({}))["result"], json!({}));
    let listed = server.request(2, "tools/list", json!({}));
    assert_eq!(listed["result"]["tools"].as_array().map(Vec::len), Some(19));
    for key in ["resultType", "ttlMs", "cacheScope", "_meta"] {
        assert!(listed["result"].get(key).is_none(), "legacy tools/list has {key}");
    }
    let echoed = server.call_tool(3, "echo", json!({"message": "legacy"}));
    assert_eq!(echoed["result"], json!({"content": [{"type": "text", "text": "legacy"}]}));
    assert_eq!(
        server.request(4, "resources/read", json!({"uri": "demo://missing"}))["error"]["code"],
        -32002
    );
    assert_eq!(text(&server.call_tool(5, "log", json!({"level": "info", "message": "m"}))), "logged");
    server.wait_for("a log message", |m| m["method"] == "notifications/message");
    // Legacy elicitation is still a server→client request.
    server.send(&json!({"jsonrpc": "2.0", "id": 6, "method": "tools/call", "params": {"name": "elicit", "arguments": {"message": "who?"}}}));
    let request = server.wait_for("elicitation/create", |m| m["method"] == "elicitation/create");
    assert_eq!(request["id"], "srv-1");
    server.send(&json!({"jsonrpc": "2.0", "id": "srv-1", "result": {"action": "cancel"}}));
    assert_eq!(text(&server.response(&json!(6))), "action=cancel content=null");
    // The process serves both eras: a modern request still gets modern semantics.
    let modern = server.modern_request(7, "tools/list", json!({}));
    assert_eq!(modern["result"]["ttlMs"], 60_000);
    assert!(server.request(8, "tools/list", json!({}))["result"].get("ttlMs").is_none());
}

#[test]
fn legacy_sessions_ignore_unrelated_meta_and_modern_methods() {
    let mut server = DemoServer::initialized(&[]);
    let call = json!({"name": "echo", "arguments": {"message": "x"}, "_meta": {"progressToken": 3}});
    assert!(server.request(1, "tools/call", call)["result"].get("resultType").is_none());
    assert_eq!(
        server.request(2, "subscriptions/listen", json!({"notifications": {}}))["error"]["code"],
        -32601
    );
    assert_eq!(server.request(3, "server/discover", json!({}))["error"]["code"], -32602);
}
