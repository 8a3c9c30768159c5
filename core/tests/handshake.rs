//! The `initialize` handshake: the exact request, version negotiation on all four versions, the
//! getters, and every way the handshake fails.
#![allow(clippy::unwrap_used)]

mod common;

use std::time::Duration;

use common::{Harness, config, full_server_capabilities, init_result};
use mcp_sansio::schema::{
    CallTool, CallToolRequestParams, ClientCapabilities, JsonObject, ListChangedCapability,
};
use mcp_sansio::{CloseReason, Event, ProtocolVersion, RequestOptions, Status, UsageError};
use serde_json::json;

fn assert_ready_getters(h: &Harness, version: ProtocolVersion) {
    assert_eq!(h.conn.status(), Status::Ready);
    assert_eq!(h.conn.protocol_version(), Some(version));
    let info = h.conn.server_info().unwrap();
    assert_eq!((info.name.as_str(), info.version.as_str()), ("test-server", "9.9.9"));
    let caps = h.conn.server_capabilities().unwrap();
    assert_eq!(caps.tools, Some(ListChangedCapability { list_changed: Some(true) }));
    assert_eq!(caps.resources.as_ref().unwrap().subscribe, Some(true));
    assert!(caps.logging.is_some() && caps.completions.is_some() && caps.prompts.is_some());
    assert_eq!(h.conn.instructions(), Some("Use the tools wisely."));
    assert_eq!(h.conn.initialize_result().unwrap().protocol_version, version.as_str());
}

#[test]
fn pinned_client_handshakes_on_each_version() {
    for &version in ProtocolVersion::LEGACY {
        let mut h = Harness::new(config().with_versions(&[version]));
        assert_eq!(h.conn.status(), Status::Initializing);
        assert_eq!(h.conn.protocol_version(), None);
        assert!(h.conn.server_info().is_none() && h.conn.server_capabilities().is_none());
        assert_eq!(h.conn.instructions(), None);

        let sent = h.sent_lines();
        let expected = format!(
            concat!(
                r#"{{"jsonrpc":"2.0","id":0,"method":"initialize","params":{{"protocolVersion":"{}","#,
                r#""capabilities":{{}},"clientInfo":{{"name":"test-client","version":"0.1.0"}}}}}}"#,
                "\n"
            ),
            version
        );
        assert_eq!(sent, [expected], "initialize for {version}");

        h.server(&init_result(version.as_str(), full_server_capabilities()));
        let events = h.events();
        assert!(
            matches!(events.as_slice(), [Event::Ready { protocol_version }] if *protocol_version == version),
            "{version}: {events:?}"
        );
        assert_eq!(
            h.sent_lines(),
            [concat!(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#, "\n")]
        );
        assert_ready_getters(&h, version);
        assert_eq!(h.conn.pending(), 0);
    }
}

#[test]
fn default_client_requests_the_latest_and_accepts_every_older_version() {
    for &version in ProtocolVersion::LEGACY {
        let mut h = Harness::new(config());
        let sent = h.sent();
        assert_eq!(sent[0]["params"]["protocolVersion"], "2025-11-25");
        h.server(&init_result(version.as_str(), full_server_capabilities()));
        let events = h.events();
        assert!(
            matches!(events.as_slice(), [Event::Ready { protocol_version }] if *protocol_version == version),
            "{version}: {events:?}"
        );
        assert_eq!(h.sent(), [json!({"jsonrpc": "2.0", "method": "notifications/initialized"})]);
        assert_ready_getters(&h, version);
    }
}

#[test]
fn initialize_carries_the_declared_client_capabilities() {
    let mut sampling = JsonObject::new();
    sampling.insert("tools".into(), json!({}));
    let capabilities = ClientCapabilities {
        roots: Some(ListChangedCapability { list_changed: Some(true) }),
        sampling: Some(sampling),
        elicitation: Some(JsonObject::new()),
        ..Default::default()
    };
    let mut h =
        Harness::new(config().with_capabilities(capabilities).with_versions(&[ProtocolVersion::V2025_06_18]));
    assert_eq!(
        h.sent(),
        [json!({
            "jsonrpc": "2.0",
            "id": 0,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {"roots": {"listChanged": true}, "sampling": {"tools": {}}, "elicitation": {}},
                "clientInfo": {"name": "test-client", "version": "0.1.0"}
            }
        })]
    );
}

#[test]
fn a_preference_list_accepts_only_its_members() {
    let versions = [ProtocolVersion::V2025_06_18, ProtocolVersion::V2024_11_05];
    let mut h = Harness::new(config().with_versions(&versions));
    h.ready("2024-11-05");
    assert_eq!(h.conn.protocol_version(), Some(ProtocolVersion::V2024_11_05));

    // 2025-11-25 is newer, but not in the list: refused.
    let mut h = Harness::new(config().with_versions(&versions));
    assert_eq!(h.sent()[0]["params"]["protocolVersion"], "2025-06-18");
    h.server(&init_result("2025-11-25", json!({})));
    let events = h.events();
    let [Event::Closed(CloseReason::UnsupportedVersion { requested, offered, accepted })] = events.as_slice()
    else {
        panic!("{events:?}")
    };
    assert_eq!(*requested, ProtocolVersion::V2025_06_18);
    assert_eq!(offered, "2025-11-25");
    assert_eq!(accepted, "2025-06-18, 2024-11-05");
}

#[test]
fn unsupported_version_closes_without_initialized() {
    for offered in ["2025-11-25", "2026-07-28", "1.0"] {
        let mut h = Harness::new(config().with_versions(&[ProtocolVersion::V2025_06_18]));
        h.sent();
        h.server(&init_result(offered, full_server_capabilities()));
        let events = h.events();
        let [Event::Closed(reason @ CloseReason::UnsupportedVersion { .. })] = events.as_slice() else {
            panic!("{offered}: {events:?}")
        };
        let text = reason.to_string();
        assert!(text.contains(offered) && text.contains("2025-06-18"), "{text}");
        assert!(h.sent().is_empty(), "nothing, and no notifications/initialized, may be sent");
        assert!(matches!(h.conn.status(), Status::Closed(CloseReason::UnsupportedVersion { .. })));
        assert_eq!(h.conn.protocol_version(), None);
        assert_eq!(h.conn.poll_timeout(), None);
        let refused =
            h.conn.send::<CallTool>(h.now, &CallToolRequestParams::new("x"), RequestOptions::default());
        assert!(matches!(refused, Err(UsageError::Closed(CloseReason::UnsupportedVersion { .. }))));
    }
}

#[test]
fn initialize_error_response_is_a_refusal() {
    let mut h = Harness::new(config());
    h.sent();
    h.server(r#"{"jsonrpc":"2.0","id":0,"error":{"code":-32602,"message":"Unsupported protocol version","data":{"supported":["2024-11-05"]}}}"#);
    let events = h.events();
    let [Event::Closed(CloseReason::InitializeRefused(error))] = events.as_slice() else {
        panic!("{events:?}")
    };
    assert_eq!(error.code, -32602);
    assert_eq!(error.message, "Unsupported protocol version");
    assert_eq!(error.data, Some(json!({"supported": ["2024-11-05"]})));
    assert!(h.sent().is_empty());
    assert!(h.conn.is_closed());
}

#[test]
fn garbage_initialize_result_is_invalid() {
    for result in [json!({"foo": 1}), json!([]), json!("ok"), json!({"protocolVersion": "2025-11-25"})] {
        let mut h = Harness::new(config());
        h.sent();
        h.server(&json!({"jsonrpc": "2.0", "id": 0, "result": result}).to_string());
        let events = h.events();
        assert!(
            matches!(events.as_slice(), [Event::Closed(CloseReason::InvalidInitializeResult(_))]),
            "{result}: {events:?}"
        );
        assert!(h.sent().is_empty());
    }
}

#[test]
fn handshake_times_out() {
    let mut h = Harness::new(config().with_handshake_timeout(Duration::from_secs(5)));
    h.sent();
    assert_eq!(h.conn.poll_timeout(), Some(h.start + Duration::from_secs(5)));
    h.advance(Duration::from_millis(4999));
    h.assert_quiet();
    assert_eq!(h.conn.status(), Status::Initializing);
    h.advance(Duration::from_millis(1));
    let events = h.events();
    assert!(
        matches!(events.as_slice(), [Event::Closed(CloseReason::HandshakeTimeout(d))] if *d == Duration::from_secs(5)),
        "{events:?}"
    );
    assert!(h.sent().is_empty());
    assert_eq!(h.conn.poll_timeout(), None);
    // A late result changes nothing.
    h.server(&init_result("2025-11-25", json!({})));
    h.assert_quiet();
    assert!(matches!(h.conn.status(), Status::Closed(CloseReason::HandshakeTimeout(_))));
}

#[test]
fn default_handshake_timeout_is_used() {
    let mut h = Harness::new(config());
    assert_eq!(h.conn.poll_timeout(), Some(h.start + mcp_sansio::DEFAULT_HANDSHAKE_TIMEOUT));
    h.advance(mcp_sansio::DEFAULT_HANDSHAKE_TIMEOUT);
    assert!(matches!(h.events().as_slice(), [Event::Closed(CloseReason::HandshakeTimeout(_))]));
}

#[test]
fn commands_before_ready_are_refused() {
    let mut h = Harness::new(config());
    h.sent();
    let params = CallToolRequestParams::new("echo");
    assert_eq!(h.conn.send::<CallTool>(h.now, &params, RequestOptions::default()), Err(UsageError::NotReady));
    assert_eq!(
        h.conn.send_request(h.now, "vendor/x", None, RequestOptions::default()),
        Err(UsageError::NotReady)
    );
    assert_eq!(h.conn.notify("notifications/roots/list_changed", None), Err(UsageError::NotReady));
    h.assert_quiet();
    // The refused request did not consume an id: the first real one is 1.
    h.ready("2025-11-25");
    let id = h.conn.send::<CallTool>(h.now, &params, RequestOptions::default()).unwrap();
    assert_eq!(id, 1.into());
    assert_eq!(h.sent()[0]["id"], 1);
}

#[test]
fn ping_is_answered_during_the_handshake() {
    let mut h = Harness::new(config());
    h.sent();
    h.server(r#"{"jsonrpc":"2.0","id":"early","method":"ping"}"#);
    assert_eq!(h.sent_lines(), [concat!(r#"{"jsonrpc":"2.0","id":"early","result":{}}"#, "\n")]);
    assert!(h.events().is_empty());
    h.ready_with(&init_result("2025-03-26", json!({})));
}

#[test]
fn reserved_methods_are_refused() {
    let mut h = Harness::ready_default("2025-11-25");
    assert_eq!(
        h.conn.send_request(h.now, "initialize", Some(b"{}"), RequestOptions::default()),
        Err(UsageError::ReservedMethod("initialize".into()))
    );
    assert_eq!(
        h.conn.notify("notifications/initialized", None),
        Err(UsageError::ReservedMethod("notifications/initialized".into()))
    );
    h.assert_quiet();
}
