//! Replaying recorded traces against the engine: hand-written sessions in both eras that the
//! engine reproduces, and edited ones where it must point at the difference.
#![allow(clippy::unwrap_used)]

mod common;

use std::io;
use std::os::unix::net::UnixStream;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, ready};
use std::time::Duration;

use async_io::Async;
use futures_lite::{AsyncRead, AsyncWrite};
use mcp_conformance::engine_replay::{
    EngineReplayReport, VERSION_PLACEHOLDER, config_from_trace, replay_against_engine,
    replay_against_engine_with,
};
use mcp_conformance::trace::{
    Direction, HttpMeta, Payload, ServerIdentity, Trace, TraceBuffer, TraceEntry, TraceHeader, Transport,
};
use mcp_sansio::schema::{CallToolRequestParams, ClientCapabilities, Implementation, LoggingLevel};
use mcp_sansio::{ClientConfig, ProtocolVersion};
use mcp_smol::ClientApi;
use mcp_smol::{CallOptions, ClientBuilder};
use proptest::prelude::*;
use serde_json::{Value, json};

const LEGACY_HEADER: &str = r#"{"mcpTrace":1,"transport":"stdio","server":{"command":["demo"],"name":"demo","version":"1.2.3"},"protocolVersion":"2025-11-25","recordedAt":"2026-11-21T09:30:00Z","recordedWith":"hand"}"#;

/// A 2025-11-25 session as our client writes it: handshake, tools/list, a tools/call with
/// progress, a server ping, roots/list and sampling requests (the latter refused by the user),
/// a server error, a log line and a stray non-JSON line.
const LEGACY_SESSION: &str = r#"
{"dir":"client","ms":0,"msg":{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"roots":{"listChanged":true},"sampling":{}},"clientInfo":{"name":"trace-client","version":"0.9.0"}}}}
{"dir":"server","ms":2,"raw":"demo server starting…"}
{"dir":"server","ms":12,"msg":{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{"listChanged":true},"logging":{}},"serverInfo":{"name":"demo","version":"1.2.3"}}}}
{"dir":"client","ms":12,"msg":{"jsonrpc":"2.0","method":"notifications/initialized"}}
{"dir":"client","ms":13,"msg":{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}}
{"dir":"server","ms":15,"msg":{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"slow","inputSchema":{"type":"object"}}]}}}
{"dir":"client","ms":16,"msg":{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"_meta":{"progressToken":2},"name":"slow","arguments":{"steps":2}}}}
{"dir":"server","ms":20,"msg":{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":2,"progress":1,"total":2,"message":"halfway"}}}
{"dir":"server","ms":25,"msg":{"jsonrpc":"2.0","id":"s-1","method":"ping"}}
{"dir":"client","ms":25,"msg":{"jsonrpc":"2.0","id":"s-1","result":{}}}
{"dir":"server","ms":30,"msg":{"jsonrpc":"2.0","id":"s-2","method":"roots/list"}}
{"dir":"server","ms":31,"msg":{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"working"}}}
{"dir":"client","ms":33,"msg":{"jsonrpc":"2.0","id":"s-2","result":{"roots":[{"uri":"file:///work","name":"work"}]}}}
{"dir":"server","ms":40,"msg":{"jsonrpc":"2.0","id":7,"method":"sampling/createMessage","params":{"messages":[{"role":"user","content":{"type":"text","text":"hi"}}],"maxTokens":10}}}
{"dir":"client","ms":45,"msg":{"jsonrpc":"2.0","id":7,"error":{"code":-1,"message":"User rejected sampling request"}}}
{"dir":"server","ms":50,"msg":{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":2,"progress":2,"total":2}}}
{"dir":"server","ms":55,"msg":{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"done"}]}}}
{"dir":"client","ms":60,"msg":{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"missing"}}}
{"dir":"server","ms":62,"msg":{"jsonrpc":"2.0","id":3,"error":{"code":-32602,"message":"Unknown tool: missing"}}}
{"dir":"server","ms":63,"raw":"not json at all"}
"#;

fn legacy(body: &str) -> Trace {
    Trace::parse(&format!("{LEGACY_HEADER}\n{body}")).unwrap()
}

fn assert_ok(report: &EngineReplayReport) {
    assert!(report.is_ok(), "{report}");
}

/// A trace built in code: one entry per message.
fn built(header: &str, entries: &[(Direction, u64, Value)]) -> Trace {
    let mut trace = Trace::parse(header).unwrap();
    trace.entries = entries
        .iter()
        .map(|(dir, ms, msg)| TraceEntry::new(*dir, *ms, Payload::from_bytes(msg.to_string().as_bytes())))
        .collect();
    trace
}

use Direction::{Client as C, Server as S};

#[test]
fn a_legacy_session_replays_cleanly() {
    let trace = legacy(LEGACY_SESSION);
    let report = replay_against_engine(&trace);
    assert_ok(&report);
    assert_eq!(report.matched, 8, "every client message: {report}");
    assert_eq!(report.fed, 12);
    assert!(report.to_string().contains("8 client message(s) matched"), "{report}");

    let config = config_from_trace(&trace);
    assert_eq!(config.client_info.name, "trace-client");
    assert_eq!(config.versions, [ProtocolVersion::V2025_11_25]);
    assert!(config.capabilities.roots.is_some() && config.capabilities.sampling.is_some());
}

#[test]
fn ids_and_progress_tokens_of_another_client_are_renamed() {
    // Another client's numbering (from 1, strings) and its own progress token: the same session.
    let text = LEGACY_SESSION
        .replace(r#""id":0,"#, r#""id":"init","#)
        .replace(r#""id":1,"#, r#""id":"a-1","#)
        .replace(r#""id":2,"#, r#""id":"a-2","#)
        .replace(r#""id":3,"#, r#""id":"a-3","#)
        .replace(r#""progressToken":2"#, r#""progressToken":"tok-a""#);
    assert!(text.contains(r#"{"jsonrpc":"2.0","id":"a-2","result":{"content""#), "{text}");
    assert_ok(&replay_against_engine(&legacy(&text)));
}

#[test]
fn the_initialize_version_is_the_requested_one_and_the_negotiated_one_is_accepted() {
    // The client asked for 2025-11-25, the server answered 2025-06-18.
    let text = LEGACY_SESSION.replacen(
        r#""protocolVersion":"2025-11-25","capabilities":{"tools""#,
        r#""protocolVersion":"2025-06-18","capabilities":{"tools""#,
        1,
    );
    let mut trace = legacy(&text);
    trace.header.protocol_version = Some("2025-06-18".into());
    assert_eq!(
        config_from_trace(&trace).versions,
        [ProtocolVersion::V2025_11_25, ProtocolVersion::V2025_06_18]
    );
    assert_ok(&replay_against_engine(&trace));
}

#[test]
fn client_info_versions_and_timestamps_are_normalised() {
    // Another build of the client (another version), and a recorded answer with a timestamp.
    let trace = legacy(&LEGACY_SESSION.replace(
        r#"{"jsonrpc":"2.0","id":"s-1","result":{}}"#,
        r#"{"jsonrpc":"2.0","id":"s-1","result":{"timestamp":"2026-11-21T09:30:00Z"}}"#,
    ));
    let mut config = config_from_trace(&trace);
    config.client_info = Implementation::new("trace-client", "2.0.0-dev");
    assert_ok(&replay_against_engine_with(&trace, config));
    assert_eq!(VERSION_PLACEHOLDER, "(normalised)");
}

#[test]
fn an_edited_answer_to_ping_is_reported_where_it_differs() {
    // The engine answers `ping` itself, with an empty result.
    let trace = legacy(&LEGACY_SESSION.replace(
        r#"{"jsonrpc":"2.0","id":"s-1","result":{}}"#,
        r#"{"jsonrpc":"2.0","id":"s-1","result":{"pong":true}}"#,
    ));
    let report = replay_against_engine(&trace);
    let [mismatch] = report.mismatches.as_slice() else { panic!("{report}") };
    assert_eq!((mismatch.line, mismatch.ms), (10, 25));
    assert_eq!(mismatch.path, "/result/pong");
    assert_eq!(mismatch.actual, Some(json!({"jsonrpc": "2.0", "id": "s-1", "result": {}})));
    let text = report.to_string();
    assert!(text.contains("entry 10 (client, 25 ms)"), "{text}");
    assert!(text.contains("at:       /result/pong"), "{text}");
    assert!(text.contains(r#"expected: {"id":"s-1","jsonrpc":"2.0","result":{"pong":true}}"#), "{text}");
    assert!(text.contains(r#"actual:   {"id":"s-1","jsonrpc":"2.0","result":{}}"#), "{text}");
    assert!(text.contains("the engine answers ping"), "{text}");
}

#[test]
fn a_reused_request_id_is_reported() {
    // The recorded client numbered the second tools/call like the first: the engine never does.
    let trace = legacy(&LEGACY_SESSION.replace(r#""id":3,"#, r#""id":2,"#));
    let report = replay_against_engine(&trace);
    let first = report.mismatches.first().unwrap_or_else(|| panic!("{report}"));
    assert_eq!((first.line, first.path.as_str()), (18, "/id"), "{report}");
    assert!(first.detail.contains("already paired with the engine's request 2"), "{report}");
    assert_eq!(first.actual.as_ref().unwrap()["id"], 3);
}

#[test]
fn an_answer_to_an_undeclared_request_is_reported() {
    // Without the roots capability, the engine refuses roots/list itself with -32601.
    let text = LEGACY_SESSION.replace(r#""roots":{"listChanged":true},"#, "");
    let report = replay_against_engine(&legacy(&text));
    let [mismatch] = report.mismatches.as_slice() else { panic!("{report}") };
    assert_eq!(mismatch.line, 13);
    assert_eq!(mismatch.actual.as_ref().unwrap()["error"]["code"], -32601, "{report}");
    assert_eq!(mismatch.path, "/error", "{report}");
}

#[test]
fn a_missing_client_line_is_reported() {
    // The recording lost the client's `notifications/initialized`: the engine sent it.
    let lines: Vec<&str> =
        LEGACY_SESSION.lines().filter(|l| !l.contains("notifications/initialized")).collect();
    let report = replay_against_engine(&legacy(&lines.join("\n")));
    let [mismatch] = report.mismatches.as_slice() else { panic!("{report}") };
    // Found when the engine's next message of its own (the answer to `ping`) is due.
    assert_eq!((mismatch.line, mismatch.ms), (9, 25));
    assert_eq!(mismatch.expected, None);
    assert_eq!(mismatch.actual, Some(json!({"jsonrpc": "2.0", "method": "notifications/initialized"})));
    assert!(report.to_string().contains("the engine sent this before the message of entry 9"), "{report}");

    // And the answer to `ping`.
    let lines: Vec<&str> = LEGACY_SESSION.lines().filter(|l| !l.contains(r#""id":"s-1","result""#)).collect();
    let report = replay_against_engine(&legacy(&lines.join("\n")));
    let [mismatch] = report.mismatches.as_slice() else { panic!("{report}") };
    assert_eq!((mismatch.line, mismatch.ms), (0, 63));
    assert_eq!(mismatch.actual, Some(json!({"jsonrpc": "2.0", "id": "s-1", "result": {}})));
    assert!(report.to_string().contains("after the last entry: the engine sent this"), "{report}");
}

#[test]
fn the_engines_own_initialize_is_compared() {
    // The application's configuration declares other capabilities than the recorded client.
    let trace = legacy(LEGACY_SESSION);
    let config = ClientConfig::new(Implementation::new("trace-client", "0.9.0"))
        .with_capabilities(ClientCapabilities { sampling: Some(Default::default()), ..Default::default() })
        .with_versions(&[ProtocolVersion::V2025_11_25]);
    let report = replay_against_engine_with(&trace, config);
    let first = report.mismatches.first().unwrap_or_else(|| panic!("{report}"));
    assert_eq!((first.line, first.path.as_str()), (1, "/params/capabilities/roots"), "{report}");
    assert!(first.detail.contains("the engine's message lacks it"), "{report}");

    // A capability the engine cannot express as recorded (an unknown member of `roots`).
    let text =
        LEGACY_SESSION.replace(r#""roots":{"listChanged":true}"#, r#""roots":{"listChanged":true,"x":1}"#);
    let report = replay_against_engine(&legacy(&text));
    let first = report.mismatches.first().unwrap_or_else(|| panic!("{report}"));
    assert_eq!((first.line, first.path.as_str()), (1, "/params/capabilities/roots/x"), "{report}");
}

#[test]
fn a_request_before_the_handshake_is_refused_and_reported() {
    let lines: Vec<&str> = LEGACY_SESSION.lines().collect();
    // tools/list moved before the server's initialize result.
    let mut edited = lines.clone();
    let tools_list = edited.remove(5);
    edited.insert(2, tools_list);
    let report = replay_against_engine(&legacy(&edited.join("\n")));
    assert!(!report.is_ok());
    let first = &report.mismatches[0];
    assert_eq!(first.actual, None, "{report}");
    assert!(first.detail.contains("refused to send tools/list"), "{report}");
}

#[test]
fn a_cancellation_and_a_timeout_replay() {
    let header = LEGACY_HEADER;
    let init = json!({"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}});
    let init_result = json!({"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"demo","version":"1.2.3"}}});
    let call = |id: i64, token: bool| {
        let mut params = json!({"name": "slow"});
        if token {
            params["_meta"] = json!({"progressToken": id});
        }
        json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params})
    };
    let cancelled = |id: i64, reason: &str| json!({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId": id, "reason": reason}});
    let progress =
        json!({"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":2,"progress":1}});
    let trace = built(
        header,
        &[
            (C, 0, init),
            (S, 5, init_result),
            (C, 5, json!({"jsonrpc":"2.0","method":"notifications/initialized"})),
            (C, 10, call(1, false)),
            (C, 11, call(2, true)),
            // The application gives up on request 1.
            (C, 500, cancelled(1, "user pressed stop")),
            (S, 800, progress),
            // Request 2 times out 30 s after its last progress, as its result is on its way:
            // the engine cancels it on its own before reading the (then late) result.
            (S, 30_800, json!({"jsonrpc":"2.0","id":2,"result":{"content":[]}})),
            (C, 30_800, cancelled(2, "timed out")),
            (C, 31_000, call(3, false)),
        ],
    );
    assert_ok(&replay_against_engine(&trace));

    // With another reason, the cancellation is the application's: replayed as a call after the
    // result completed the request, so it cannot be.
    let text = trace.to_jsonl().replace(r#""reason":"timed out""#, r#""reason":"enough""#);
    let report = replay_against_engine(&Trace::parse(&text).unwrap());
    let [mismatch] = report.mismatches.as_slice() else { panic!("{report}") };
    assert_eq!((mismatch.line, mismatch.actual.as_ref()), (9, None), "{report}");
    assert!(mismatch.detail.contains("refused to cancel its request 2"), "{report}");
}

#[test]
fn a_request_may_overtake_the_engines_own_answer() {
    // The client wrote a request while the server's ping was in flight: the recording shows
    // it before the answer that the engine queued when it read the ping.
    let lines: Vec<&str> = LEGACY_SESSION.lines().collect();
    let mut edited = lines.clone();
    let pong = edited.remove(10);
    assert!(pong.contains(r#""id":"s-1","result""#), "{pong}");
    let call = edited.remove(17);
    assert!(call.contains(r#""name":"missing""#), "{call}");
    let call = call.replace(r#""ms":60"#, r#""ms":25"#);
    edited.insert(10, &call);
    edited.insert(11, pong);
    assert_ok(&replay_against_engine(&legacy(&edited.join("\n"))));
}

/// The `_meta` a 2026-07-28 request of the recorded client carries.
fn modern_meta(extra: Value) -> Value {
    let mut meta = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {"roots": {}},
        "io.modelcontextprotocol/clientInfo": {"name": "modern-client", "version": "0.3.0"}
    });
    meta.as_object_mut().unwrap().extend(extra.as_object().cloned().unwrap_or_default());
    meta
}

const MODERN_HEADER: &str = r#"{"mcpTrace":1,"transport":"stdio","server":{"name":"demo"},"protocolVersion":"2026-07-28","recordedAt":"2026-11-21T09:30:00Z","recordedWith":"hand"}"#;

fn discover_result(id: Value) -> Value {
    json!({"jsonrpc":"2.0","id":id,"result":{"resultType":"complete","supportedVersions":["2026-07-28","2025-11-25"],
        "capabilities":{"tools":{"listChanged":true},"resources":{"subscribe":true}},"ttlMs":60000,
        "_meta":{"io.modelcontextprotocol/serverInfo":{"name":"demo","version":"1.2.3"}}}})
}

#[test]
fn a_modern_session_replays_with_input_rounds_and_subscriptions() {
    let trace = built(
        MODERN_HEADER,
        &[
            (
                C,
                0,
                json!({"jsonrpc":"2.0","id":0,"method":"server/discover","params":{"_meta": modern_meta(json!({}))}}),
            ),
            (S, 4, discover_result(json!(0))),
            (
                C,
                4,
                json!({"jsonrpc":"2.0","id":1,"method":"subscriptions/listen","params":{
                "notifications":{"toolsListChanged":true},"_meta": modern_meta(json!({}))}}),
            ),
            (
                S,
                6,
                json!({"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged","params":{
                "notifications":{"toolsListChanged":true},"_meta":{"io.modelcontextprotocol/subscriptionId":1}}}),
            ),
            (
                C,
                10,
                json!({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"where",
                "_meta": modern_meta(json!({"progressToken": 2, "io.modelcontextprotocol/logLevel": "debug"}))}}),
            ),
            (
                S,
                12,
                json!({"jsonrpc":"2.0","id":2,"result":{"resultType":"input_required",
                "inputRequests":{"dirs":{"method":"roots/list"}},"requestState":"st-1"}}),
            ),
            (
                C,
                14,
                json!({"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"where",
                "_meta": modern_meta(json!({"progressToken": 2, "io.modelcontextprotocol/logLevel": "debug"})),
                "inputResponses":{"dirs":{"roots":[{"uri":"file:///w"}]}},"requestState":"st-1"}}),
            ),
            (
                S,
                16,
                json!({"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":2,"progress":1}}),
            ),
            (
                S,
                18,
                json!({"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"file:///w"}]}}),
            ),
            // The application subscribes to a resource: the stream is replaced.
            (
                C,
                20,
                json!({"jsonrpc":"2.0","id":5,"method":"subscriptions/listen","params":{
                "notifications":{"toolsListChanged":true,"resourceSubscriptions":["demo://a"]},
                "_meta": modern_meta(json!({}))}}),
            ),
            (
                S,
                22,
                json!({"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged","params":{
                "notifications":{"toolsListChanged":true,"resourceSubscriptions":["demo://a"]},
                "_meta":{"io.modelcontextprotocol/subscriptionId":5}}}),
            ),
            (C, 22, json!({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}})),
        ],
    );
    let config = config_from_trace(&trace);
    assert_eq!(config.versions, [ProtocolVersion::V2026_07_28]);
    assert_eq!(config.client_info.name, "modern-client");
    assert!(config.capabilities.roots.is_some() && config.listen_for_list_changes);
    let report = replay_against_engine(&trace);
    assert_ok(&report);
    assert_eq!(report.matched, 6);

    // Over HTTP, the engine drops its notifications (the stream is closed instead).
    let mut http = trace.clone();
    http.header.transport = Transport::Http;
    assert!(http.entries.pop().unwrap().value().unwrap()["method"] == "notifications/cancelled");
    assert_ok(&replay_against_engine(&http));
}

#[test]
fn a_dual_era_probe_that_fell_back_replays() {
    let init = json!({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25",
        "capabilities":{"roots":{}},"clientInfo":{"name":"modern-client","version":"0.3.0"}}});
    let init_result = json!({"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25","capabilities":{},
        "serverInfo":{"name":"old","version":"1"}}});
    let probe =
        json!({"jsonrpc":"2.0","id":0,"method":"server/discover","params":{"_meta": modern_meta(json!({}))}});
    let initialized = json!({"jsonrpc":"2.0","method":"notifications/initialized"});
    // The legacy server refuses the probe: the client falls back at once.
    let refused = built(
        LEGACY_HEADER,
        &[
            (C, 0, probe.clone()),
            (S, 3, json!({"jsonrpc":"2.0","id":0,"error":{"code":-32601,"message":"Method not found"}})),
            (C, 3, init.clone()),
            (S, 9, init_result.clone()),
            (C, 9, initialized.clone()),
        ],
    );
    assert_eq!(config_from_trace(&refused).versions, ProtocolVersion::DUAL_ERA);
    assert_ok(&replay_against_engine(&refused));
    // The legacy server ignores the probe: the client falls back after its discover timeout.
    let ignored = built(
        LEGACY_HEADER,
        &[(C, 0, probe), (C, 2_500, init), (S, 2_510, init_result), (C, 2_510, initialized)],
    );
    assert_eq!(config_from_trace(&ignored).discover_timeout, Duration::from_millis(2_500));
    assert_ok(&replay_against_engine(&ignored));
}

#[test]
fn http_traces_replay_their_messages_and_skip_the_rest() {
    let header = LEGACY_HEADER.replace(r#""transport":"stdio""#, r#""transport":"http""#);
    let mut trace = legacy(LEGACY_SESSION);
    trace.header = Trace::parse(&header).unwrap().header;
    let post = |exchange| {
        Some(HttpMeta { method: "POST".into(), exchange, status: Some(200), ..Default::default() })
    };
    for (i, entry) in trace.entries.iter_mut().enumerate() {
        entry.http = post(i as u64 + 1);
    }
    // A 202 without a body, and the DELETE that ends the session.
    let accepted = TraceEntry {
        dir: S,
        ms: 12,
        payload: Payload::None,
        http: Some(HttpMeta { method: "POST".into(), exchange: 4, status: Some(202), ..Default::default() }),
    };
    trace.entries.insert(4, accepted);
    trace.entries.push(TraceEntry { dir: C, ms: 70, payload: Payload::None, http: post(99) });
    let report = replay_against_engine(&trace);
    assert_ok(&report);
    assert_eq!(report.skipped, 2);
}

#[test]
fn nonsense_traces_give_mismatches_not_panics() {
    let text = r#"
{"dir":"client","ms":18446744073709551615,"raw":"hello"}
{"dir":"server","ms":0,"msg":[1,2,{"id":0,"result":7}]}
{"dir":"client","ms":5,"msg":{"jsonrpc":"2.0","id":0,"result":{}}}
{"dir":"client","ms":5,"msg":{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":44}}}
{"dir":"client","ms":5,"msg":{"jsonrpc":"2.0","method":"notifications/cancelled"}}
{"dir":"client","ms":5,"msg":{"jsonrpc":"2.0","id":9,"method":"initialize","params":"x"}}
{"dir":"client","ms":6,"msg":42}
{"dir":"server","ms":1,"msg":{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"1999-01-01"}}}
{"dir":"client","ms":7,"msg":{"jsonrpc":"2.0","id":1,"method":"tools/list","params":[1]}}
"#;
    let report = replay_against_engine(&legacy(text));
    assert!(!report.is_ok());
    assert!(report.to_string().contains("mismatch"), "{report}");
    // No entries at all: the engine's initialize is left over.
    let report = replay_against_engine(&legacy(""));
    assert_eq!(report.mismatches.len(), 1, "{report}");
}

fn arbitrary_message() -> impl Strategy<Value = Value> {
    let id = prop_oneof![(0i64..4).prop_map(Value::from), Just(json!("s-1"))];
    let method = prop::sample::select(vec![
        "initialize",
        "notifications/initialized",
        "tools/list",
        "tools/call",
        "ping",
        "roots/list",
        "notifications/cancelled",
        "notifications/progress",
        "subscriptions/listen",
        "server/discover",
    ]);
    let params = prop_oneof![
        Just(Value::Null),
        Just(json!({})),
        Just(json!({"_meta": {"progressToken": 1}})),
        Just(json!({"requestId": 1, "reason": "timed out"})),
        Just(json!({"progressToken": 0, "progress": 1})),
        Just(
            json!({"protocolVersion": "2025-11-25", "capabilities": {"roots": {}}, "serverInfo": {"name": "s", "version": "1"}})
        ),
        Just(json!({"inputResponses": {"k": {}}})),
    ];
    (id, method, params, 0..4u8).prop_map(|(id, method, params, shape)| match shape {
        0 => json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}),
        1 => json!({"jsonrpc": "2.0", "method": method, "params": params}),
        2 => json!({"jsonrpc": "2.0", "id": id, "result": params}),
        _ => json!({"jsonrpc": "2.0", "id": id, "error": {"code": -1, "message": "no"}}),
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn any_trace_replays_without_panicking(
        entries in prop::collection::vec((any::<bool>(), 0u64..100_000, arbitrary_message()), 0..24),
        modern in any::<bool>(),
    ) {
        let header = if modern { MODERN_HEADER } else { LEGACY_HEADER };
        let entries: Vec<_> =
            entries.into_iter().map(|(client, ms, msg)| (if client { C } else { S }, ms, msg)).collect();
        let report = replay_against_engine(&built(header, &entries));
        let _ = report.to_string();
    }
}

// ----- a session of our own client with the demo server, recorded here -----

/// Records every line that passes, as `dir`, into the shared trace.
struct Tap<T> {
    inner: T,
    dir: Direction,
    line: Vec<u8>,
    trace: Arc<Mutex<TraceBuffer>>,
}

impl<T> Tap<T> {
    fn new(inner: T, dir: Direction, trace: &Arc<Mutex<TraceBuffer>>) -> Self {
        Self { inner, dir, line: Vec::new(), trace: Arc::clone(trace) }
    }

    fn take(&mut self, bytes: &[u8]) {
        self.line.extend_from_slice(bytes);
        while let Some(end) = self.line.iter().position(|&b| b == b'\n') {
            let line: Vec<u8> = self.line.drain(..=end).collect();
            let line = line.trim_ascii_end();
            if !line.is_empty() {
                self.trace.lock().unwrap().record(self.dir, line, None);
            }
        }
    }
}

impl<T: AsyncRead + Unpin> AsyncRead for Tap<T> {
    fn poll_read(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut [u8]) -> Poll<io::Result<usize>> {
        let read = ready!(Pin::new(&mut self.inner).poll_read(cx, buf))?;
        self.take(&buf[..read]);
        Poll::Ready(Ok(read))
    }
}

impl<T: AsyncWrite + Unpin> AsyncWrite for Tap<T> {
    fn poll_write(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        let written = ready!(Pin::new(&mut self.inner).poll_write(cx, buf))?;
        self.take(&buf[..written]);
        Poll::Ready(Ok(written))
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_close(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_close(cx)
    }
}

/// Runs our client against the demo server (in this process, over a socket pair), in
/// `versions`, and returns the trace of what crossed the socket.
async fn record_demo_session(versions: &[ProtocolVersion]) -> Trace {
    let header = TraceHeader::new(Transport::Stdio, ServerIdentity::default(), "engine_replay test");
    let trace = Arc::new(Mutex::new(TraceBuffer::new(header)));
    let (ours, theirs) = UnixStream::pair().unwrap();
    let input = std::io::BufReader::new(theirs.try_clone().unwrap());
    let server = std::thread::spawn(move || {
        mcp_demo_server::serve(input, Box::new(theirs), mcp_demo_server::Options::default())
    });
    let (reader, writer) = futures_lite::io::split(Async::new(ours).unwrap());
    let stdin = Tap::new(writer, C, &trace);
    let stdout = Tap::new(reader, S, &trace);
    let (client, driver) = ClientBuilder::new(Implementation::new("engine-replay-test", "0.0.0"))
        .configure(|c| c.with_capabilities(common::capabilities()).with_versions(versions))
        .handler(common::Handler)
        .connect(stdout, stdin);
    smol::spawn(driver).detach();
    client.ready().await.unwrap();
    client.list_all_tools().await.unwrap();
    client.call_tool("echo", json!({"message": "hi"})).await.unwrap();
    client.call_tool("no_such_tool", json!({})).await.unwrap_err();
    client.call_tool("sample", json!({"prompt": "hi"})).await.unwrap();
    client.call_tool("list_roots", json!({})).await.unwrap();
    let params = CallToolRequestParams::new("long_running")
        .with_arguments(json!({"steps": 3, "step_ms": 5}).as_object().unwrap().clone());
    client.call_tool_with(&params, CallOptions::default().on_progress(|_| {})).await.unwrap();
    client.set_log_level(LoggingLevel::Warning).await.unwrap();
    client.call_tool("log", json!({"level": "error", "message": "loud"})).await.unwrap();
    client.subscribe("demo://readme").await.unwrap();
    client.read_resource("demo://items/42").await.unwrap();
    assert!(client.close_within(Duration::from_secs(5)).await);
    server.join().unwrap().unwrap();
    trace.lock().unwrap().trace().clone()
}

#[test]
fn our_client_recorded_against_the_demo_server_replays() {
    for versions in [&[ProtocolVersion::V2025_11_25][..], ProtocolVersion::DUAL_ERA] {
        let trace = smol::block_on(record_demo_session(versions));
        let expected = if versions.len() == 1 { "2025-11-25" } else { "2026-07-28" };
        assert_eq!(trace.header.protocol_version.as_deref(), Some(expected), "{}", trace.to_jsonl());
        let report = replay_against_engine(&trace);
        assert!(report.is_ok(), "{report}\n\n{}", trace.to_jsonl());
        assert!(report.matched >= 12, "{report}");
    }
}

#[test]
fn committed_traces_replay_against_the_engine() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("traces");
    let mut paths: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", dir.display()))
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "jsonl"))
        .collect();
    paths.sort();
    assert!(!paths.is_empty(), "no *.jsonl trace in {}", dir.display());
    let mut failures = Vec::new();
    for path in &paths {
        let trace = Trace::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let report = replay_against_engine(&trace);
        let client_lines = trace.sent_by(Direction::Client).filter(|e| e.value().is_some()).count();
        if !report.is_ok() {
            failures.push(format!("{}: {report}", path.display()));
        } else if report.matched != client_lines || report.fed == 0 {
            failures.push(format!(
                "{}: only {} of {client_lines} client lines were compared ({} server lines fed)",
                path.display(),
                report.matched,
                report.fed
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}
