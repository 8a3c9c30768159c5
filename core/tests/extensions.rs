//! Extension negotiation and the extensions of metadata, on simulated time: what the client
//! declares goes out in `initialize` and in each 2026-07-28 request; what the server offers is
//! read from `initialize` and from `server/discover`, unknown ones kept; `-32021` names what is
//! missing; a W3C trace context rides in `_meta` as root keys.
#![allow(clippy::unwrap_used)]

mod common;

use common::{Harness, config, result_line};
use mcp_sansio::schema::{
    CallTool, CallToolRequestParams, ClientCapabilities, TASKS_EXTENSION, TraceContext,
};
use mcp_sansio::{Event, McpError, ProtocolVersion, RequestError, RequestOptions};
use serde_json::json;

const PARENT: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

fn caps() -> ClientCapabilities {
    ClientCapabilities::default().with_extension("com.example/x", json!({"level": 2}))
}

#[test]
fn the_server_s_extensions_are_read_in_either_era_and_unknown_ones_kept() {
    let mut legacy =
        Harness::new(config().with_versions(&[ProtocolVersion::V2025_11_25]).with_capabilities(caps()));
    let init = legacy.sent();
    assert_eq!(init[0]["params"]["capabilities"]["extensions"], json!({"com.example/x": {"level": 2}}));
    legacy.ready_with(&common::init_result(
        "2025-11-25",
        json!({"tools": {}, "extensions": {TASKS_EXTENSION: {}, "org.other/y": {"v": [1]}}}),
    ));
    let offered = legacy.conn.server_capabilities().unwrap();
    assert!(offered.has_extension(TASKS_EXTENSION));
    assert_eq!(offered.extension("org.other/y"), Some(&json!({"v": [1]})));

    let mut modern =
        Harness::new(config().with_versions(&[ProtocolVersion::V2026_07_28]).with_capabilities(caps()));
    let probe = modern.sent();
    let declared = &probe[0]["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"]["extensions"];
    assert_eq!(declared, &json!({"com.example/x": {"level": 2}}));
    modern.server(&result_line(
        0,
        json!({"resultType": "complete", "supportedVersions": ["2026-07-28"],
               "capabilities": {"tools": {}, "extensions": {"org.other/y": {}}}}),
    ));
    assert!(matches!(modern.events()[..], [Event::Ready { .. }]));
    assert!(modern.conn.server_capabilities().unwrap().has_extension("org.other/y"));
    assert!(!modern.conn.server_capabilities().unwrap().has_extension(TASKS_EXTENSION));
}

#[test]
fn a_missing_required_capability_is_typed_and_named() {
    let mut h = Harness::new(config().with_versions(&[ProtocolVersion::V2026_07_28]));
    h.sent();
    h.server(&result_line(
        0,
        json!({"resultType": "complete", "supportedVersions": ["2026-07-28"], "capabilities": {"tools": {}}}),
    ));
    h.events();
    let id = h
        .conn
        .send::<CallTool>(h.now, &CallToolRequestParams::new("render"), RequestOptions::default())
        .unwrap();
    let wire = h.sent()[0]["id"].as_i64().unwrap();
    h.server(
        &json!({"jsonrpc": "2.0", "id": wire, "error": {"code": -32021, "message": "Missing required client capability",
            "data": {"requiredCapabilities": {"extensions": {TASKS_EXTENSION: {}}, "sampling": {}}}}})
        .to_string(),
    );
    let events = h.events();
    let [Event::Response { id: got, result: Err(error @ RequestError::Server(_)) }] = &events[..] else {
        panic!("{events:?}")
    };
    assert_eq!(got, &id);
    let missing = error.mcp_error().unwrap();
    assert!(missing.requires_extension(TASKS_EXTENSION));
    let McpError::MissingRequiredClientCapability { required } = &missing else { panic!("{missing:?}") };
    assert_eq!(required.declared(), ["sampling", "extensions/io.modelcontextprotocol/tasks"]);
    assert!(missing.to_string().contains("extensions/io.modelcontextprotocol/tasks"), "{missing}");
}

#[test]
fn a_trace_context_goes_out_as_root_keys_of_meta_in_either_era() {
    let context = TraceContext::new(PARENT).unwrap().with_state("v=1");
    for version in [ProtocolVersion::V2025_11_25, ProtocolVersion::V2026_07_28] {
        let mut h = Harness::new(config().with_versions(&[version]));
        if version.is_modern() {
            h.sent();
            h.server(&result_line(
                0,
                json!({"resultType": "complete", "supportedVersions": ["2026-07-28"], "capabilities": {"tools": {}}}),
            ));
            h.events();
        } else {
            h.ready("2025-11-25");
        }
        let options = RequestOptions::default().meta(context.to_meta());
        h.conn.send::<CallTool>(h.now, &CallToolRequestParams::new("t"), options).unwrap();
        let meta = &h.sent()[0]["params"]["_meta"];
        assert_eq!((&meta["traceparent"], &meta["tracestate"]), (&json!(PARENT), &json!("v=1")), "{version}");
    }
}
