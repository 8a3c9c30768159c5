//! A canonical session, with every byte the engine wrote compared to a transcript pinned once.
//!
//! If this test fails, the wire format changed: check the difference against the MCP
//! specification before updating the constant.
#![allow(clippy::unwrap_used)]

mod common;

use std::time::Duration;

use common::Harness;
use mcp_sansio::schema::{
    CallTool, CallToolRequestParams, CallToolResult, ClientCapabilities, Implementation, JsonObject,
    ListChangedCapability, ListRootsResult, ListTools, ListToolsResult, Root,
};
use mcp_sansio::{
    ClientConfig, CloseReason, Event, ProtocolVersion, RequestId, RequestOptions, ServerRequest,
};

/// What the client writes in the canonical session, byte for byte.
const CLIENT_TRANSCRIPT: &str = concat!(
    r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"roots":{"listChanged":true}},"clientInfo":{"name":"golden-client","version":"1.0.0"}}}"#,
    "\n",
    r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
    "\n",
    r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}"#,
    "\n",
    r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"_meta":{"progressToken":2},"name":"echo","arguments":{"text":"hello"}}}"#,
    "\n",
    r#"{"jsonrpc":"2.0","id":"srv-1","result":{}}"#,
    "\n",
    r#"{"jsonrpc":"2.0","id":"srv-2","result":{"roots":[{"uri":"file:///work","name":"work"}]}}"#,
    "\n",
);

/// What the server says, line by line, after the client's matching message.
const SERVER_INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{"listChanged":true}},"serverInfo":{"name":"golden-server","version":"2.0.0"},"instructions":"Say hello."}}"#;
const SERVER_TOOLS: &str = r#"{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"echo","inputSchema":{"type":"object","properties":{"text":{"type":"string"}}}}]}}"#;
const SERVER_PROGRESS: &str = r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":2,"progress":1,"total":2,"message":"halfway"}}"#;
const SERVER_CALL_RESULT: &str =
    r#"{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"hello"}],"isError":false}}"#;
const SERVER_PING: &str = r#"{"jsonrpc":"2.0","id":"srv-1","method":"ping"}"#;
const SERVER_ROOTS: &str = r#"{"jsonrpc":"2.0","id":"srv-2","method":"roots/list"}"#;

#[test]
fn canonical_session_writes_the_pinned_bytes() {
    let capabilities = ClientCapabilities {
        roots: Some(ListChangedCapability { list_changed: Some(true) }),
        ..Default::default()
    };
    // The canonical session is an `initialize`-era one (the default would probe first).
    let legacy: Vec<_> = ProtocolVersion::LEGACY.iter().rev().copied().collect();
    let config = ClientConfig::new(Implementation::new("golden-client", "1.0.0"))
        .with_capabilities(capabilities)
        .with_versions(&legacy);
    let mut h = Harness::new(config);
    let mut written = Vec::<u8>::new();
    let mut flush = |h: &mut Harness| {
        while let Some(t) = h.conn.poll_transmit() {
            written.extend_from_slice(t.bytes());
        }
    };
    let step = Duration::from_millis(5);

    flush(&mut h);
    h.advance(step);
    h.server(SERVER_INITIALIZE);
    let events = h.events();
    assert!(
        matches!(events.as_slice(), [Event::Ready { protocol_version: ProtocolVersion::V2025_11_25 }]),
        "{events:?}"
    );
    assert_eq!(h.conn.instructions(), Some("Say hello."));
    flush(&mut h);

    let list = h.conn.send::<ListTools>(h.now, &Default::default(), RequestOptions::default()).unwrap();
    assert_eq!(list, RequestId::Number(1));
    flush(&mut h);
    h.advance(step);
    h.server(SERVER_TOOLS);
    let events = h.events();
    let [Event::Response { id, result: Ok(raw) }] = events.as_slice() else { panic!("{events:?}") };
    assert_eq!(id, &list);
    let tools: ListToolsResult = serde_json::from_str(raw.get()).unwrap();
    assert_eq!(tools.tools.iter().map(|t| t.name.as_str()).collect::<Vec<_>>(), ["echo"]);

    let mut args = JsonObject::new();
    args.insert("text".into(), "hello".into());
    let params = CallToolRequestParams::new("echo").with_arguments(args);
    let call = h.conn.send::<CallTool>(h.now, &params, RequestOptions::default().with_progress()).unwrap();
    assert_eq!(call, RequestId::Number(2));
    flush(&mut h);

    h.advance(step);
    h.server(SERVER_PROGRESS);
    let events = h.events();
    let [Event::Progress { id, params }] = events.as_slice() else { panic!("{events:?}") };
    assert_eq!(
        (id, params.progress, params.total, params.message.as_deref()),
        (&call, 1.0, Some(2.0), Some("halfway"))
    );

    h.advance(step);
    h.server(SERVER_CALL_RESULT);
    let events = h.events();
    let [Event::Response { id, result: Ok(raw) }] = events.as_slice() else { panic!("{events:?}") };
    assert_eq!(id, &call);
    let result: CallToolResult = serde_json::from_str(raw.get()).unwrap();
    assert!(!result.failed());
    assert_eq!(result.content[0].as_text(), Some("hello"));

    h.advance(step);
    h.server(SERVER_PING);
    assert!(h.events().is_empty());
    flush(&mut h);

    h.advance(step);
    h.server(SERVER_ROOTS);
    let events = h.events();
    let [Event::Request { id, request: ServerRequest::ListRoots }] = events.as_slice() else {
        panic!("{events:?}")
    };
    h.conn.respond(id, Ok(&ListRootsResult::new(vec![Root::new("file:///work").with_name("work")]))).unwrap();
    flush(&mut h);

    h.conn.close();
    assert!(matches!(h.events().as_slice(), [Event::Closed(CloseReason::Local)]));
    flush(&mut h);

    assert_eq!(String::from_utf8(written).unwrap(), CLIENT_TRANSCRIPT);
    let stats = h.conn.stats();
    assert_eq!((stats.messages_sent, stats.messages_received), (6, 6));
    assert_eq!(
        (stats.invalid_messages, stats.late_responses, stats.unknown_responses, stats.timeouts),
        (0, 0, 0, 0)
    );
}

#[test]
fn the_same_session_fed_as_one_chunk_writes_the_same_bytes() {
    // The server's lines depend only on what the client sent before them, so a server that
    // answers eagerly lets the whole session be fed at once once the requests are out.
    let capabilities = ClientCapabilities {
        roots: Some(ListChangedCapability { list_changed: Some(true) }),
        ..Default::default()
    };
    // The canonical session is an `initialize`-era one (the default would probe first).
    let legacy: Vec<_> = ProtocolVersion::LEGACY.iter().rev().copied().collect();
    let config = ClientConfig::new(Implementation::new("golden-client", "1.0.0"))
        .with_capabilities(capabilities)
        .with_versions(&legacy);
    let mut h = Harness::new(config);
    h.server(SERVER_INITIALIZE);
    let _ = h.events();
    h.conn.send::<ListTools>(h.now, &Default::default(), RequestOptions::default()).unwrap();
    let mut args = JsonObject::new();
    args.insert("text".into(), "hello".into());
    let params = CallToolRequestParams::new("echo").with_arguments(args);
    h.conn.send::<CallTool>(h.now, &params, RequestOptions::default().with_progress()).unwrap();
    let rest =
        [SERVER_TOOLS, SERVER_PROGRESS, SERVER_CALL_RESULT, SERVER_PING, SERVER_ROOTS].join("\n") + "\n";
    h.feed(rest.as_bytes());
    let events = h.events();
    let Some(Event::Request { id, .. }) = events.last() else { panic!("{events:?}") };
    h.conn.respond(id, Ok(&ListRootsResult::new(vec![Root::new("file:///work").with_name("work")]))).unwrap();
    let written: String = h.sent_lines().concat();
    assert_eq!(written, CLIENT_TRANSCRIPT);
}
