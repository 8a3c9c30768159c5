//! Capability checks before sending: requests the server did not declare are refused with
//! nothing on the wire; unknown (custom) methods go through; params are validated.
#![allow(clippy::unwrap_used)]

mod common;

use common::{Harness, config, init_result};
use mcp_sansio::schema::{
    CallTool, CallToolRequestParams, Complete, CompleteRequestParams, CompletionReference, ListPrompts,
    ListResources, ListTools, LoggingLevel, ReadResource, ReadResourceRequestParams, SetLevel,
    SetLevelRequestParams, Subscribe, SubscribeRequestParams, Unsubscribe, UnsubscribeRequestParams,
};
use mcp_sansio::{ProtocolVersion, RequestId, RequestOptions, UsageError};
use serde_json::{Value, json};

fn ready_with_caps(version: ProtocolVersion, caps: Value) -> Harness {
    let mut h = Harness::new(config());
    h.ready_with(&init_result(version.as_str(), caps));
    h
}

fn refused(result: Result<RequestId, UsageError>, method: &str, capability: &str) {
    match result {
        Err(UsageError::CapabilityNotSupported { method: m, capability: c }) => {
            assert_eq!((m.as_str(), c), (method, capability));
        }
        other => panic!("{method}: expected a capability refusal, got {other:?}"),
    }
}

#[test]
fn subscribe_needs_resources_subscribe() {
    let mut h = ready_with_caps(ProtocolVersion::V2025_11_25, json!({"resources": {"listChanged": true}}));
    let o = RequestOptions::default;
    refused(
        h.conn.send::<Subscribe>(h.now, &SubscribeRequestParams::new("file:///a"), o()),
        "resources/subscribe",
        "resources.subscribe",
    );
    refused(
        h.conn.send::<Unsubscribe>(h.now, &UnsubscribeRequestParams::new("file:///a"), o()),
        "resources/unsubscribe",
        "resources.subscribe",
    );
    refused(
        h.conn.send_request(h.now, "resources/subscribe", Some(br#"{"uri":"x"}"#), o()),
        "resources/subscribe",
        "resources.subscribe",
    );
    h.assert_quiet();
    assert_eq!(h.conn.pending(), 0);
    assert_eq!(h.conn.poll_timeout(), None);
    // What the server did declare goes out, with the next id: the refusals consumed none.
    let id = h.conn.send::<ReadResource>(h.now, &ReadResourceRequestParams::new("file:///a"), o()).unwrap();
    assert_eq!(id, RequestId::Number(1));
    assert_eq!(
        h.sent(),
        [json!({"jsonrpc": "2.0", "id": 1, "method": "resources/read", "params": {"uri": "file:///a"}})]
    );
    h.conn.send::<ListResources>(h.now, &Default::default(), o()).unwrap();
    assert_eq!(h.sent().len(), 1);
}

#[test]
fn subscribe_false_is_refused_and_true_is_allowed() {
    let mut h = ready_with_caps(ProtocolVersion::V2025_06_18, json!({"resources": {"subscribe": false}}));
    refused(
        h.conn.send::<Subscribe>(h.now, &SubscribeRequestParams::new("u"), RequestOptions::default()),
        "resources/subscribe",
        "resources.subscribe",
    );
    assert!(h.sent().is_empty());
    let mut h = ready_with_caps(ProtocolVersion::V2025_06_18, json!({"resources": {"subscribe": true}}));
    h.conn.send::<Subscribe>(h.now, &SubscribeRequestParams::new("u"), RequestOptions::default()).unwrap();
    assert_eq!(h.sent()[0]["method"], "resources/subscribe");
}

#[test]
fn every_feature_needs_its_capability() {
    let mut h = ready_with_caps(ProtocolVersion::V2025_11_25, json!({}));
    let o = RequestOptions::default;
    refused(h.conn.send::<CallTool>(h.now, &CallToolRequestParams::new("echo"), o()), "tools/call", "tools");
    refused(h.conn.send::<ListTools>(h.now, &Default::default(), o()), "tools/list", "tools");
    refused(h.conn.send::<ListPrompts>(h.now, &Default::default(), o()), "prompts/list", "prompts");
    refused(h.conn.send::<ListResources>(h.now, &Default::default(), o()), "resources/list", "resources");
    refused(
        h.conn.send::<SetLevel>(h.now, &SetLevelRequestParams::new(LoggingLevel::Info), o()),
        "logging/setLevel",
        "logging",
    );
    let complete = CompleteRequestParams::new(CompletionReference::prompt("p"), "arg", "va");
    refused(h.conn.send::<Complete>(h.now, &complete, o()), "completion/complete", "completions");
    refused(
        h.conn.send_request(h.now, "tools/call", Some(br#"{"name":"echo"}"#), o()),
        "tools/call",
        "tools",
    );
    h.assert_quiet();
    assert_eq!(h.conn.pending(), 0);
}

#[test]
fn custom_methods_and_ping_are_allowed_without_capabilities() {
    let mut h = ready_with_caps(ProtocolVersion::V2025_11_25, json!({}));
    let a = h
        .conn
        .send_request(h.now, "vendor/custom", Some(br#"{"x":[1,2]}"#), RequestOptions::default())
        .unwrap();
    let b = h.conn.send_request(h.now, "ping", None, RequestOptions::default()).unwrap();
    assert_eq!(
        h.sent_lines(),
        [
            format!(
                "{{\"jsonrpc\":\"2.0\",\"id\":{},\"method\":\"vendor/custom\",\"params\":{{\"x\":[1,2]}}}}\n",
                common::num(&a)
            ),
            format!("{{\"jsonrpc\":\"2.0\",\"id\":{},\"method\":\"ping\"}}\n", common::num(&b)),
        ]
    );
    h.conn.notify("notifications/vendor/hello", Some(br#"{"k":"v"}"#)).unwrap();
    assert_eq!(
        h.sent_lines(),
        ["{\"jsonrpc\":\"2.0\",\"method\":\"notifications/vendor/hello\",\"params\":{\"k\":\"v\"}}\n"]
    );
}

#[test]
fn completion_on_2024_11_05_follows_prompts_or_resources() {
    let complete = CompleteRequestParams::new(CompletionReference::prompt("p"), "arg", "va");
    // 2024-11-05 had no `completions` capability: prompts imply completion.
    let mut h = ready_with_caps(ProtocolVersion::V2024_11_05, json!({"prompts": {}}));
    h.conn.send::<Complete>(h.now, &complete, RequestOptions::default()).unwrap();
    assert_eq!(h.sent()[0]["method"], "completion/complete");
    // From 2025-03-26 on, it must be declared.
    let mut h = ready_with_caps(ProtocolVersion::V2025_03_26, json!({"prompts": {}}));
    refused(
        h.conn.send::<Complete>(h.now, &complete, RequestOptions::default()),
        "completion/complete",
        "completions",
    );
    assert!(h.sent().is_empty());
    let mut h = ready_with_caps(ProtocolVersion::V2025_03_26, json!({"completions": {}}));
    h.conn.send::<Complete>(h.now, &complete, RequestOptions::default()).unwrap();
    assert_eq!(h.sent().len(), 1);
}

#[test]
fn invalid_raw_params_are_refused_before_anything_is_sent() {
    let mut h = Harness::ready_default("2025-11-25");
    for bad in [&b"{"[..], b"{\"a\":}", b"", b"{} {}", b"nul"] {
        let got = h.conn.send_request(h.now, "tools/call", Some(bad), RequestOptions::default());
        assert!(
            matches!(got, Err(UsageError::InvalidParams(_))),
            "{:?}: {got:?}",
            String::from_utf8_lossy(bad)
        );
        let got = h.conn.notify("notifications/x", Some(bad));
        assert!(matches!(got, Err(UsageError::InvalidParams(_))), "{got:?}");
    }
    // `_meta` needs an object.
    let got = h.conn.send_request(h.now, "vendor/x", Some(b"[1]"), RequestOptions::default().with_progress());
    assert!(matches!(got, Err(UsageError::InvalidParams(_))), "{got:?}");
    h.assert_quiet();
    assert_eq!(h.conn.pending(), 0);
}

#[test]
fn params_serialized_beforehand_go_out_as_a_typed_sends_and_on_one_line() {
    let mut h = Harness::ready_default("2025-11-25");
    let params = CallToolRequestParams::new("echo")
        .with_arguments(json!({"text": "a\nb"}).as_object().unwrap().clone());
    let typed = h.conn.send::<CallTool>(h.now, &params, RequestOptions::default()).unwrap();
    let serialized = mcp_sansio::SerializedParams::serialize(Vec::new(), &params).unwrap();
    let early = h.conn.send_serialized(h.now, "tools/call", &serialized, RequestOptions::default()).unwrap();
    let sent = h.sent();
    assert_eq!(sent[0]["params"], sent[1]["params"]);
    assert_eq!(
        (sent[0]["id"].clone(), sent[1]["id"].clone()),
        (json!(typed_id(&typed)), json!(typed_id(&early)))
    );

    // A raw value inside the params is written as given: its line breaks go, the framing stays.
    let raw = serde_json::value::RawValue::from_string("{\n  \"text\": \"x\"\n}".to_owned()).unwrap();
    #[derive(serde::Serialize)]
    struct WithRaw<'a> {
        name: &'a str,
        arguments: &'a serde_json::value::RawValue,
    }
    let serialized =
        mcp_sansio::SerializedParams::serialize(Vec::new(), &WithRaw { name: "echo", arguments: &raw })
            .unwrap();
    h.conn.send_serialized(h.now, "tools/call", &serialized, RequestOptions::default()).unwrap();
    let lines = h.sent_lines();
    assert_eq!(lines.len(), 1, "one line");
    let sent: Value = serde_json::from_str(&lines[0]).unwrap();
    assert_eq!(sent["params"]["arguments"], json!({"text": "x"}));

    // Params that fail to serialize are refused before the connection sees them.
    struct Failing;
    impl serde::Serialize for Failing {
        fn serialize<S: serde::Serializer>(&self, _: S) -> Result<S::Ok, S::Error> {
            Err(serde::ser::Error::custom("no"))
        }
    }
    let refused = mcp_sansio::SerializedParams::serialize(Vec::new(), &Failing);
    assert!(matches!(refused, Err(UsageError::InvalidParams(_))), "{refused:?}");
}

fn typed_id(id: &RequestId) -> i64 {
    match id {
        RequestId::Number(n) => *n,
        RequestId::String(s) => panic!("a string id {s}"),
    }
}
