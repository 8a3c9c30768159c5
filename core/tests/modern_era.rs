//! MCP 2026-07-28 on simulated time: the `server/discover` probe and the dual-era fallback, the
//! per-request `_meta`, version retry after -32022, multi round-trip requests, removed methods.
#![allow(clippy::unwrap_used)]

mod common;

use std::time::Duration;

use common::{Harness, config, result_line};
use mcp_sansio::schema::{
    CallTool, CallToolRequestParams, ClientCapabilities, ElicitResult, ListRootsResult, Ping, Root, SetLevel,
    SetLevelRequestParams,
};
use mcp_sansio::{
    ClientConfig, CloseReason, ErrorObject, Event, ProtocolVersion, RequestError, RequestId, RequestOptions,
    ServerRequest, Status, UsageError,
};
use serde_json::{Value, json};

fn dual() -> ClientConfig {
    config().with_versions(&[ProtocolVersion::V2026_07_28, ProtocolVersion::V2025_11_25])
}

fn modern_only() -> ClientConfig {
    config().with_versions(&[ProtocolVersion::V2026_07_28])
}

fn discover_result(id: i64, supported: &[&str]) -> String {
    result_line(
        id,
        json!({
            "resultType": "complete",
            "supportedVersions": supported,
            "capabilities": {"tools": {}, "resources": {}, "prompts": {}, "logging": {}},
            "instructions": "modern server",
            "ttlMs": 60000,
            "cacheScope": "public",
            "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "modern-server", "version": "1.0"}}
        }),
    )
}

fn error_line(id: i64, code: i64, data: Value) -> String {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": "no", "data": data}}).to_string()
}

fn call(h: &mut Harness, name: &str) -> RequestId {
    let params = CallToolRequestParams::new(name);
    h.conn.send::<CallTool>(h.now, &params, RequestOptions::default()).unwrap()
}

/// A harness that went through discovery: modern, ready.
fn modern_ready(config: ClientConfig) -> Harness {
    let mut h = Harness::new(config);
    let probe = h.sent().remove(0);
    assert_eq!(probe["method"], "server/discover");
    h.server(&discover_result(0, &["2026-07-28", "2025-11-25"]));
    assert!(matches!(h.events()[..], [Event::Ready { protocol_version: ProtocolVersion::V2026_07_28 }]));
    h
}

#[test]
fn probe_carries_the_request_meta_and_a_result_makes_the_connection_modern() {
    let mut h = Harness::new(dual());
    let probe = h.sent().remove(0);
    assert_eq!(probe["method"], "server/discover");
    let meta = &probe["params"]["_meta"];
    assert_eq!(meta["io.modelcontextprotocol/protocolVersion"], "2026-07-28");
    assert!(meta["io.modelcontextprotocol/clientCapabilities"].is_object());
    assert_eq!(meta["io.modelcontextprotocol/clientInfo"]["name"], "test-client");
    h.server(&discover_result(0, &["2026-07-28"]));
    assert!(matches!(h.events()[..], [Event::Ready { protocol_version: ProtocolVersion::V2026_07_28 }]));
    assert!(h.sent().is_empty(), "no initialize, no notifications/initialized");
    assert_eq!(h.conn.server_info().unwrap().name, "modern-server");
    assert_eq!(h.conn.instructions(), Some("modern server"));
    assert!(h.conn.server_capabilities().unwrap().tools.is_some());
    assert_eq!(h.conn.discover_result().unwrap().ttl_ms, Some(60000));
    assert!(h.conn.initialize_result().is_none());

    // Every request carries the metadata, the caller's own `_meta` and progress token too.
    let mut meta = mcp_sansio::schema::JsonObject::new();
    meta.insert("trace".into(), json!("t-1"));
    let params = CallToolRequestParams::new("echo");
    h.conn.send::<CallTool>(h.now, &params, RequestOptions::default().with_progress().meta(meta)).unwrap();
    let sent = h.sent().remove(0);
    let meta = &sent["params"]["_meta"];
    assert_eq!(meta["io.modelcontextprotocol/protocolVersion"], "2026-07-28");
    assert_eq!(meta["io.modelcontextprotocol/clientInfo"]["version"], "0.1.0");
    assert_eq!(meta["trace"], "t-1");
    assert_eq!(meta["progressToken"], 1);
    assert_eq!(meta.get("io.modelcontextprotocol/logLevel"), None, "no log level unless asked for");
}

#[test]
fn the_default_configuration_is_dual_era() {
    let default = ClientConfig::new(mcp_sansio::schema::Implementation::new("x", "1"));
    assert_eq!(default.versions, ProtocolVersion::DUAL_ERA);
    let mut h = Harness::new(default);
    assert_eq!(h.sent().remove(0)["method"], "server/discover");
}

#[test]
fn any_other_error_or_silence_falls_back_to_initialize() {
    // Legacy servers answer unknown pre-initialize methods as they like: never keyed to one code.
    for code in [-32601, -32602, -32600, -32000, 1] {
        let mut h = Harness::new(dual());
        h.sent();
        h.server(&error_line(0, code, Value::Null));
        let init = h.sent().remove(0);
        assert_eq!(init["method"], "initialize", "after error {code}");
        assert_eq!(init["params"]["protocolVersion"], "2025-11-25");
        h.ready_with(
            &common::init_result("2025-11-25", common::full_server_capabilities())
                .replace("\"id\":0", "\"id\":1"),
        );
        assert_eq!(h.conn.protocol_version(), Some(ProtocolVersion::V2025_11_25));
    }
    // No answer within the discover timeout.
    let mut h = Harness::new(dual().with_discover_timeout(Duration::from_secs(3)));
    h.sent();
    h.advance(Duration::from_millis(2999));
    assert!(h.sent().is_empty());
    h.advance(Duration::from_millis(1));
    assert_eq!(h.sent().remove(0)["method"], "initialize");
    // A late answer to the probe is ignored (counted, not acted on).
    h.server(&discover_result(0, &["2026-07-28"]));
    assert_eq!(h.conn.status(), Status::Initializing);
    assert_eq!(h.conn.stats().late_responses, 1);
    // The probe waits no longer than the handshake timeout when that is the shorter one, so a
    // silent server fails the handshake within twice the handshake timeout, not 10 s later.
    let mut h = Harness::new(dual().with_handshake_timeout(Duration::from_secs(1)));
    h.sent();
    h.advance(Duration::from_secs(1));
    assert_eq!(h.sent().remove(0)["method"], "initialize");
    h.advance(Duration::from_secs(1));
    assert!(
        matches!(h.events()[..], [Event::Closed(CloseReason::HandshakeTimeout(d))] if d == Duration::from_secs(1)),
        "closed by the handshake timeout"
    );
}

#[test]
fn unsupported_version_error_retries_with_a_mutual_version() {
    // -32022 naming a version the client speaks: retried once with it (a new request), never a
    // fallback; a second refusal ends it.
    let mut h = Harness::new(dual());
    h.sent();
    h.server(&error_line(0, -32022, json!({"supported": ["2026-07-28"], "requested": "2026-07-28"})));
    let retry = h.sent().remove(0);
    assert_eq!(retry["method"], "server/discover");
    assert_eq!(retry["id"], 1);
    assert_eq!(retry["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"], "2026-07-28");
    h.server(&discover_result(1, &["2026-07-28"]));
    assert!(matches!(h.events()[..], [Event::Ready { protocol_version: ProtocolVersion::V2026_07_28 }]));
    let mut h = Harness::new(modern_only());
    h.sent();
    h.server(&error_line(0, -32022, json!({"supported": ["2026-07-28"], "requested": "2026-07-28"})));
    h.sent();
    h.server(&error_line(1, -32022, json!({"supported": ["2026-07-28"], "requested": "2026-07-28"})));
    assert!(matches!(h.events().last(), Some(Event::Closed(CloseReason::UnsupportedVersion { .. }))));

    // A dual-era client told only legacy versions are supported goes to initialize.
    let mut h = Harness::new(dual());
    h.sent();
    h.server(&error_line(0, -32022, json!({"supported": ["2025-06-18"], "requested": "2026-07-28"})));
    assert_eq!(h.sent().remove(0)["method"], "initialize");

    // A modern-only client offered nothing it speaks closes with both sides named.
    let mut h = Harness::new(modern_only());
    h.sent();
    h.server(&error_line(0, -32022, json!({"supported": ["2099-01-01"], "requested": "2026-07-28"})));
    let events = h.events();
    let Some(Event::Closed(reason)) = events.last() else { panic!("{events:?}") };
    assert!(
        reason.to_string().contains("2099-01-01") && reason.to_string().contains("2026-07-28"),
        "{reason}"
    );

    // A recognised modern refusal is not a reason to try initialize.
    let mut h = Harness::new(dual());
    h.sent();
    h.server(&error_line(0, -32021, json!({"requiredCapabilities": {"elicitation": {}}})));
    assert!(h.sent().is_empty());
    assert!(
        matches!(h.events().last(), Some(Event::Closed(CloseReason::InitializeRefused(e))) if e.code == -32021)
    );
}

#[test]
fn a_modern_only_client_does_not_fall_back() {
    let mut h = Harness::new(modern_only());
    h.sent();
    h.server(&error_line(0, -32601, Value::Null));
    assert!(h.sent().is_empty());
    assert!(matches!(h.events().last(), Some(Event::Closed(CloseReason::InitializeRefused(_)))));
}

#[test]
fn removed_methods_fail_locally_or_map_to_their_replacement() {
    let mut h = modern_ready(dual());
    let err = h.conn.send::<Ping>(h.now, &Default::default(), RequestOptions::default()).unwrap_err();
    assert!(matches!(err, UsageError::NotInVersion { ref method, .. } if method == "ping"), "{err}");
    // Resource subscriptions go through subscriptions/listen (see `subscriptions_*`), and need
    // the server's `resources.subscribe` as before.
    let subscribe =
        h.conn.send_request(h.now, "resources/subscribe", Some(br#"{"uri":"x"}"#), RequestOptions::default());
    assert!(matches!(subscribe, Err(UsageError::CapabilityNotSupported { .. })), "{subscribe:?}");
    assert!(h.conn.notify("notifications/roots/list_changed", None).is_err());
    // Its typed form has nothing to say on 2026-07-28 (roots are asked for per request): it
    // succeeds and sends nothing, once the client declared it sends roots changes.
    assert_eq!(
        h.conn.roots_changed(),
        Err(UsageError::CapabilityNotDeclared { capability: "roots.listChanged" })
    );
    let mut declared = modern_ready(dual().update_capabilities(|c| c.with_roots(true)));
    assert_eq!(declared.conn.roots_changed(), Ok(()));
    assert!(declared.sent().is_empty());

    // logging/setLevel: answered at once, nothing sent; the level rides on later requests.
    let params: SetLevelRequestParams = serde_json::from_value(json!({"level": "warning"})).unwrap();
    let id = h.conn.send::<SetLevel>(h.now, &params, RequestOptions::default()).unwrap();
    assert!(h.sent().is_empty());
    assert!(matches!(&h.events()[..], [Event::Response { id: got, result: Ok(_) }] if *got == id));
    call(&mut h, "echo");
    assert_eq!(h.sent()[0]["params"]["_meta"]["io.modelcontextprotocol/logLevel"], "warning");
}

fn mrtr_config() -> ClientConfig {
    let capabilities: ClientCapabilities =
        serde_json::from_value(json!({"roots": {}, "elicitation": {"form": {}}, "sampling": {}})).unwrap();
    dual().with_capabilities(capabilities)
}

fn input_required(id: i64, requests: Value, state: Option<&str>) -> String {
    let mut result = json!({"resultType": "input_required", "inputRequests": requests});
    if let Some(state) = state {
        result["requestState"] = json!(state);
    }
    result_line(id, result)
}

#[test]
fn multi_round_trip_with_each_input_kind() {
    let mut h = modern_ready(mrtr_config());
    let id = call(&mut h, "book_flight");
    let first = h.sent().remove(0);
    assert_eq!(first["id"], 1);
    h.server(&input_required(
        1,
        json!({
            "who": {"method": "elicitation/create", "params": {"message": "Name?", "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}}}},
            "where": {"method": "roots/list"},
            "llm": {"method": "sampling/createMessage", "params": {"messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}], "maxTokens": 5}}
        }),
        Some("opaque-état-1"),
    ));
    let events = h.events();
    assert_eq!(events.len(), 3, "{events:?}");
    assert!(h.sent().is_empty(), "nothing is retried before every input is in");
    assert!(h.conn.is_pending(&id));
    let mut kinds = Vec::new();
    for event in events {
        let Event::Request { id: input, request } = event else { panic!("{event:?}") };
        match request {
            ServerRequest::Elicit(_) => {
                kinds.push("elicit");
                let content = json!({"name": "Ada"}).as_object().cloned().unwrap();
                h.conn.respond(&input, Ok(&ElicitResult::accept(content))).unwrap();
            }
            ServerRequest::ListRoots => {
                kinds.push("roots");
                h.conn.respond(&input, Ok(&ListRootsResult::new(vec![Root::new("file:///w")]))).unwrap();
            }
            ServerRequest::CreateMessage(_) => {
                kinds.push("sampling");
                let answer =
                    json!({"role": "assistant", "content": {"type": "text", "text": "yo"}, "model": "m"});
                h.conn.respond(&input, Ok(&answer)).unwrap();
            }
            other => panic!("{other:?}"),
        }
    }
    kinds.sort_unstable();
    assert_eq!(kinds, ["elicit", "roots", "sampling"]);
    let retry = h.sent().remove(0);
    assert_eq!(retry["method"], "tools/call");
    assert_ne!(retry["id"], first["id"], "a retry is a new request");
    assert_eq!(retry["params"]["name"], "book_flight");
    assert_eq!(retry["params"]["requestState"], "opaque-état-1", "echoed exactly");
    assert_eq!(retry["params"]["inputResponses"]["who"]["content"]["name"], "Ada");
    assert_eq!(retry["params"]["inputResponses"]["where"]["roots"][0]["uri"], "file:///w");
    assert_eq!(retry["params"]["inputResponses"]["llm"]["model"], "m");
    assert_eq!(retry["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"], "2026-07-28");
    // A stale answer under the first id is ignored (reported as late); the retry's answer
    // completes the call.
    h.server(&result_line(1, json!({"content": []})));
    let events = h.events();
    assert!(
        matches!(&events[..], [Event::ProtocolViolation(mcp_sansio::ProtocolViolation::LateResponse { .. })]),
        "{events:?}"
    );
    let retry_id = retry["id"].as_i64().unwrap();
    h.server(&result_line(
        retry_id,
        json!({"resultType": "complete", "content": [{"type": "text", "text": "booked"}]}),
    ));
    let events = h.events();
    assert!(
        matches!(&events[..], [Event::Response { id: got, result: Ok(raw) }] if *got == id && raw.get().contains("booked"))
    );
}

#[test]
fn state_only_rounds_retry_at_once_and_rounds_are_bounded() {
    let mut h = modern_ready(mrtr_config().with_max_input_rounds(3));
    let id = call(&mut h, "poll");
    let mut wire = h.sent().remove(0)["id"].as_i64().unwrap();
    for round in 1..=3 {
        h.server(&result_line(
            wire,
            json!({"resultType": "input_required", "requestState": format!("s{round}")}),
        ));
        let retry = h.sent().remove(0);
        assert_eq!(retry["params"]["requestState"], format!("s{round}"));
        assert!(retry["params"].get("inputResponses").is_none());
        wire = retry["id"].as_i64().unwrap();
    }
    h.server(&result_line(wire, json!({"resultType": "input_required", "requestState": "s4"})));
    let events = h.events();
    assert!(
        matches!(&events[..], [Event::Response { id: got, result: Err(RequestError::TooManyInputRounds(3)) }] if *got == id),
        "{events:?}"
    );
    assert!(h.sent().is_empty());
}

#[test]
fn a_refused_input_abandons_the_request_and_the_deadline_covers_the_whole_exchange() {
    let mut h = modern_ready(mrtr_config());
    let id = call(&mut h, "needs_input");
    h.sent();
    h.server(&input_required(1, json!({"k": {"method": "roots/list"}}), None));
    let Some(Event::Request { id: input, .. }) = h.events().pop() else { panic!() };
    h.conn.respond::<Value>(&input, Err(ErrorObject::internal("no roots today"))).unwrap();
    let events = h.events();
    assert!(
        matches!(&events[..], [Event::Response { id: got, result: Err(RequestError::InputRefused(_)) }] if *got == id)
    );
    assert!(h.sent().is_empty());

    // Undeclared input kinds are refused without asking the application.
    let mut h = modern_ready(dual());
    let id = call(&mut h, "needs_input");
    h.sent();
    h.server(&input_required(1, json!({"k": {"method": "roots/list"}}), None));
    assert!(
        matches!(&h.events()[..], [Event::Response { id: got, result: Err(RequestError::InvalidInputRequest(_)) }] if *got == id)
    );

    // The call's deadline keeps running while inputs are gathered; the cancellation names the
    // id the server knows (the latest retry's).
    let mut h = modern_ready(mrtr_config().with_request_timeout(Duration::from_secs(5)));
    let id = call(&mut h, "slow");
    h.sent();
    h.advance(Duration::from_secs(2));
    h.server(&result_line(1, json!({"resultType": "input_required", "requestState": "x"})));
    let wire = h.sent().remove(0)["id"].clone();
    h.advance(Duration::from_secs(3));
    let events = h.events();
    assert!(
        matches!(&events[..], [Event::Response { id: got, result: Err(RequestError::Timeout(_)) }] if *got == id)
    );
    let cancel = h.sent().remove(0);
    assert_eq!(cancel["method"], "notifications/cancelled");
    assert_eq!(cancel["params"]["requestId"], wire);
}

#[test]
fn results_without_input_required_pass_through_untouched() {
    let mut h = modern_ready(mrtr_config());
    let id = call(&mut h, "plain");
    h.sent();
    // A result mentioning the words elsewhere is still a plain result.
    h.server(&result_line(1, json!({"content": [{"type": "text", "text": "\"input_required\""}]})));
    assert!(matches!(&h.events()[..], [Event::Response { id: got, result: Ok(_) }] if *got == id));
}

// ----- subscriptions/listen -----

/// A modern connection to a server offering every list change and resource subscriptions.
fn listening_server(config: ClientConfig) -> Harness {
    let mut h = Harness::new(config);
    h.sent();
    let caps = json!({"tools": {"listChanged": true}, "prompts": {"listChanged": true},
                      "resources": {"subscribe": true, "listChanged": true}});
    h.server(&result_line(
        0,
        json!({"resultType": "complete", "supportedVersions": ["2026-07-28"], "capabilities": caps,
               "ttlMs": 0, "cacheScope": "private"}),
    ));
    assert!(matches!(h.events()[..], [Event::Ready { .. }]));
    h
}

fn acknowledge(h: &mut Harness, id: &Value, honoured: Value) {
    let ack = json!({"jsonrpc": "2.0", "method": "notifications/subscriptions/acknowledged",
                     "params": {"notifications": honoured, "_meta": {"io.modelcontextprotocol/subscriptionId": id}}});
    h.server(&ack.to_string());
}

fn tagged(method: &str, subscription: &Value) -> String {
    json!({"jsonrpc": "2.0", "method": method,
           "params": {"_meta": {"io.modelcontextprotocol/subscriptionId": subscription}}})
    .to_string()
}

fn subscribe(h: &mut Harness, method: &str, uri: &str) -> RequestId {
    let params = json!({"uri": uri}).to_string();
    h.conn.send_request(h.now, method, Some(params.as_bytes()), RequestOptions::default()).unwrap()
}

fn responses(events: &[Event]) -> Vec<(RequestId, Result<(), RequestError>)> {
    events
        .iter()
        .filter_map(|e| match e {
            Event::Response { id, result } => {
                Some((id.clone(), result.as_ref().map(|_| ()).map_err(Clone::clone)))
            }
            _ => None,
        })
        .collect()
}

fn is_tool_list_changed(events: &[Event]) -> bool {
    matches!(events, [Event::Notification(mcp_sansio::ServerNotification::ToolListChanged)])
}

#[test]
fn subscriptions_listen_carries_list_changes_and_resource_subscriptions() {
    let mut h = listening_server(dual());
    let listen = h.sent().remove(0);
    assert_eq!(listen["method"], "subscriptions/listen");
    assert_eq!(
        listen["params"]["notifications"],
        json!({"toolsListChanged": true, "promptsListChanged": true, "resourcesListChanged": true})
    );
    assert_eq!(listen["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"], "2026-07-28");
    let first = listen["id"].clone();
    // A listen stream has no deadline.
    h.advance(Duration::from_secs(3600));
    assert!(h.sent().is_empty() && h.events().is_empty());
    assert_eq!(h.conn.subscription(), None, "not acknowledged yet");

    acknowledge(&mut h, &first, json!({"toolsListChanged": true, "resourcesListChanged": true}));
    assert!(h.events().is_empty(), "the acknowledgement is the engine's business");
    assert!(h.conn.subscription().unwrap().tools_list_changed);
    assert!(
        !h.conn.subscription().unwrap().prompts_list_changed,
        "what the server honours, not what was asked"
    );
    h.server(&tagged("notifications/tools/list_changed", &first));
    assert!(is_tool_list_changed(&h.events()));
    h.server(&tagged("notifications/tools/list_changed", &json!(99)));
    assert!(h.events().is_empty(), "another subscription's notification is dropped");
    h.server(r#"{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}"#);
    assert!(is_tool_list_changed(&h.events()), "untagged ones are delivered");

    // Subscribing replaces the stream; the old one serves until the new one is acknowledged.
    let sub = subscribe(&mut h, "resources/subscribe", "demo://a");
    let second = h.sent().remove(0);
    assert_eq!(second["method"], "subscriptions/listen");
    assert_eq!(second["params"]["notifications"]["resourceSubscriptions"], json!(["demo://a"]));
    h.server(&tagged("notifications/tools/list_changed", &first));
    assert!(is_tool_list_changed(&h.events()), "the old stream still serves");
    acknowledge(
        &mut h,
        &second["id"],
        json!({"toolsListChanged": true, "resourceSubscriptions": ["demo://a"]}),
    );
    assert_eq!(responses(&h.events()), [(sub, Ok(()))]);
    let cancel = h.sent().remove(0);
    assert_eq!(
        (cancel["method"].as_str(), &cancel["params"]["requestId"]),
        (Some("notifications/cancelled"), &first)
    );
    h.server(&tagged("notifications/tools/list_changed", &first));
    assert!(h.events().is_empty(), "the replaced stream is gone");
    let updated = json!({"jsonrpc": "2.0", "method": "notifications/resources/updated",
                         "params": {"uri": "demo://a", "_meta": {"io.modelcontextprotocol/subscriptionId": second["id"]}}});
    h.server(&updated.to_string());
    assert!(
        matches!(&h.events()[..], [Event::Notification(mcp_sansio::ServerNotification::ResourceUpdated(p))] if p.uri == "demo://a")
    );

    // A resource the server will not follow fails its subscribe call, and is dropped again.
    let refused = subscribe(&mut h, "resources/subscribe", "demo://secret");
    let third = h.sent().remove(0);
    acknowledge(&mut h, &third["id"], json!({"resourceSubscriptions": ["demo://a"]}));
    let events = h.events();
    assert!(
        matches!(&responses(&events)[..], [(id, Err(RequestError::SubscriptionRefused { uri }))] if *id == refused && uri == "demo://secret"),
        "{events:?}"
    );
    let sent = h.sent();
    assert_eq!(sent[0]["method"], "notifications/cancelled", "the stream before it");
    assert_eq!(
        sent[1]["params"]["notifications"]["resourceSubscriptions"],
        json!(["demo://a"]),
        "without it"
    );

    // Unsubscribing the last resource: one more replacement; with list changes turned off the
    // stream would end instead (next test).
    let unsub = subscribe(&mut h, "resources/unsubscribe", "demo://a");
    let sent = h.sent();
    // The stream not acknowledged yet is just dropped.
    assert_eq!(sent[0]["method"], "notifications/cancelled");
    let fifth = sent[1].clone();
    assert_eq!(fifth["params"]["notifications"].get("resourceSubscriptions"), None);
    acknowledge(&mut h, &fifth["id"], json!({"toolsListChanged": true}));
    assert_eq!(responses(&h.events()), [(unsub, Ok(()))]);
}

#[test]
fn a_listen_stream_ended_by_the_server_is_opened_again_after_a_delay() {
    let mut h = listening_server(dual());
    let first = h.sent().remove(0)["id"].clone();
    acknowledge(&mut h, &first, json!({"toolsListChanged": true}));
    // The graceful end: the listen request's result.
    h.server(&result_line(
        first.as_i64().unwrap(),
        json!({"resultType": "complete",
        "_meta": {"io.modelcontextprotocol/subscriptionId": first}}),
    ));
    assert!(h.events().is_empty());
    assert_eq!(h.conn.subscription(), None);
    h.advance(Duration::from_millis(999));
    assert!(h.sent().is_empty());
    h.advance(Duration::from_millis(1));
    let second = h.sent().remove(0);
    assert_eq!(second["method"], "subscriptions/listen");
    // The stdio way to end it: notifications/cancelled naming it. No acknowledgement came in
    // between, so the delay doubles.
    let cancelled =
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": second["id"]}});
    h.server(&cancelled.to_string());
    assert!(h.events().is_empty(), "not a notification for the application");
    h.advance(Duration::from_millis(1999));
    assert!(h.sent().is_empty());
    h.advance(Duration::from_millis(1));
    let third = h.sent().remove(0);
    assert_eq!(third["method"], "subscriptions/listen");

    // A refusal stops listening, until the application subscribes; a refusal then fails the call.
    h.server(&error_line(third["id"].as_i64().unwrap(), -32601, Value::Null));
    h.advance(Duration::from_secs(600));
    assert!(h.sent().is_empty());
    let sub = subscribe(&mut h, "resources/subscribe", "demo://a");
    let fourth = h.sent().remove(0);
    h.server(&error_line(fourth["id"].as_i64().unwrap(), -32601, Value::Null));
    let events = h.events();
    assert!(
        matches!(&responses(&events)[..], [(id, Err(RequestError::Server(e)))] if *id == sub && e.code == -32601)
    );

    // A subscription never acknowledged fails by its deadline.
    let sub = subscribe(&mut h, "resources/subscribe", "demo://b");
    assert_eq!(h.sent().remove(0)["method"], "subscriptions/listen");
    let timeout = h.conn.config().request_timeout;
    h.advance(timeout);
    let events = h.events();
    assert!(
        matches!(&responses(&events)[..], [(id, Err(RequestError::Timeout(_)))] if *id == sub),
        "{events:?}"
    );
}

#[test]
fn without_list_changes_a_stream_is_open_only_while_resources_are_subscribed() {
    let mut h = listening_server(dual().with_listen_for_list_changes(false));
    assert!(h.sent().is_empty(), "nothing to listen to");
    let sub = subscribe(&mut h, "resources/subscribe", "demo://a");
    let listen = h.sent().remove(0);
    assert_eq!(listen["params"]["notifications"], json!({"resourceSubscriptions": ["demo://a"]}));
    acknowledge(&mut h, &listen["id"], json!({"resourceSubscriptions": ["demo://a"]}));
    assert_eq!(responses(&h.events()), [(sub, Ok(()))]);
    // Subscribing again to the same resource changes nothing and completes at once.
    let again = subscribe(&mut h, "resources/subscribe", "demo://a");
    assert!(h.sent().is_empty());
    assert_eq!(responses(&h.events()), [(again, Ok(()))]);
    let unsub = subscribe(&mut h, "resources/unsubscribe", "demo://a");
    assert_eq!(responses(&h.events()), [(unsub, Ok(()))]);
    let cancel = h.sent().remove(0);
    assert_eq!(
        (cancel["method"].as_str(), &cancel["params"]["requestId"]),
        (Some("notifications/cancelled"), &listen["id"])
    );
    // Closing fails nothing on behalf of a listen stream.
    h.conn.close();
    assert!(matches!(&h.events()[..], [Event::Closed(CloseReason::Local)]));
}

#[test]
fn a_request_refused_for_its_version_is_sent_again_once() {
    let mut h = modern_ready(dual());
    let id = call(&mut h, "echo");
    let first = h.sent().remove(0);
    let refusal = json!({"supported": ["2026-07-28", "2025-11-25"], "requested": "2026-07-28"});
    h.server(&error_line(first["id"].as_i64().unwrap(), -32022, refusal.clone()));
    assert!(h.events().is_empty());
    let again = h.sent().remove(0);
    assert_ne!(again["id"], first["id"], "a new request");
    assert_eq!(again["params"], first["params"]);
    h.server(&error_line(again["id"].as_i64().unwrap(), -32022, refusal));
    let events = h.events();
    assert!(
        matches!(&events[..], [Event::Response { id: got, result: Err(RequestError::Server(e)) }] if *got == id && e.code == -32022),
        "{events:?}"
    );
    assert!(h.sent().is_empty());
}

#[test]
fn a_version_refusal_in_the_middle_of_a_multi_round_request_keeps_the_users_answers() {
    let mut h = modern_ready(mrtr_config());
    let id = call(&mut h, "book_flight");
    let first = h.sent().remove(0);
    h.server(&input_required(
        first["id"].as_i64().unwrap(),
        json!({"where": {"method": "roots/list"}}),
        Some("s1"),
    ));
    let events = h.events();
    let [Event::Request { id: input, request: ServerRequest::ListRoots }] = &events[..] else {
        panic!("{events:?}")
    };
    h.conn.respond(input, Ok(&ListRootsResult::new(vec![Root::new("file:///w")]))).unwrap();
    let round = h.sent().remove(0);
    assert_eq!(round["params"]["requestState"], "s1");
    // The server was upgraded between the rounds: -32022, naming a version the client speaks.
    let refusal = json!({"supported": ["2026-07-28"], "requested": "2026-07-28"});
    h.server(&error_line(round["id"].as_i64().unwrap(), -32022, refusal));
    assert!(h.events().is_empty(), "the user is not asked again");
    let again = h.sent().remove(0);
    assert_ne!(again["id"], round["id"], "a new request");
    assert_eq!(again["params"]["requestState"], "s1");
    assert_eq!(again["params"]["inputResponses"], round["params"]["inputResponses"]);
    assert_eq!(again["params"]["inputResponses"]["where"]["roots"][0]["uri"], "file:///w");
    assert_eq!(again["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"], "2026-07-28");
    h.server(&result_line(again["id"].as_i64().unwrap(), json!({"resultType": "complete", "content": []})));
    assert!(matches!(&h.events()[..], [Event::Response { id: got, result: Ok(_) }] if *got == id));
}

#[test]
fn input_request_ids_never_clash_with_the_servers_request_ids() {
    let roots = || ListRootsResult::new(vec![Root::new("file:///w")]);
    // The engine's id first: a server request reusing it is refused as any reused id is.
    let mut h = modern_ready(mrtr_config());
    call(&mut h, "a");
    let wire = h.sent().remove(0)["id"].as_i64().unwrap();
    h.server(&input_required(wire, json!({"k": {"method": "roots/list"}}), None));
    let events = h.events();
    let [Event::Request { id: input, .. }] = &events[..] else { panic!("{events:?}") };
    h.server(&common::request_line(json!(input.clone()), "roots/list", json!({})));
    let events = h.events();
    assert!(
        matches!(&events[..], [Event::ProtocolViolation(mcp_sansio::ProtocolViolation::Invalid { .. })]),
        "{events:?}"
    );
    h.conn.respond(input, Ok(&roots())).unwrap();
    let sent = h.sent();
    assert_eq!(sent.len(), 1, "{sent:?}");
    assert_eq!(sent[0]["method"], "tools/call", "the answer went into the retry, not to the server");

    // The server's id first: the engine makes another one for its input request.
    let mut h = modern_ready(mrtr_config());
    call(&mut h, "b");
    let wire = h.sent().remove(0)["id"].as_i64().unwrap();
    let taken = format!("input/{wire}/k");
    h.server(&common::request_line(json!(taken), "roots/list", json!({})));
    let events = h.events();
    let [Event::Request { id: servers, .. }] = &events[..] else { panic!("{events:?}") };
    assert_eq!(servers, &RequestId::String(taken.clone()));
    h.server(&input_required(wire, json!({"k": {"method": "roots/list"}}), None));
    let events = h.events();
    let [Event::Request { id: input, .. }] = &events[..] else { panic!("{events:?}") };
    assert_ne!(input, servers);
    // Each answer goes where it belongs.
    h.conn.respond(servers, Ok(&roots())).unwrap();
    let sent = h.sent();
    assert_eq!((sent.len(), &sent[0]["id"]), (1, &json!(taken)), "{sent:?}");
    assert!(sent[0].get("result").is_some());
    h.conn.respond(input, Ok(&roots())).unwrap();
    let sent = h.sent();
    assert_eq!(sent.len(), 1, "{sent:?}");
    assert_eq!(sent[0]["params"]["inputResponses"]["k"]["roots"][0]["uri"], "file:///w");
}

#[test]
fn the_discover_result_is_fresh_for_its_ttl_and_discovering_again_updates_the_server() {
    let mut h = modern_ready(dual());
    assert!(h.conn.discover_is_fresh(h.now), "ttlMs 60000");
    h.advance(Duration::from_millis(59_999));
    assert!(h.conn.discover_is_fresh(h.now));
    h.advance(Duration::from_millis(1));
    assert!(!h.conn.discover_is_fresh(h.now));

    let id = h.conn.send_request(h.now, "server/discover", None, RequestOptions::default()).unwrap();
    let sent = h.sent().remove(0);
    assert_eq!(sent["method"], "server/discover");
    assert_eq!(sent["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"], "2026-07-28");
    let newer = json!({"resultType": "complete", "supportedVersions": ["2026-07-28"], "ttlMs": 0, "cacheScope": "private",
                       "capabilities": {"tools": {"listChanged": true}}, "instructions": "v2",
                       "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "modern-server", "version": "2.0"}}});
    h.server(&result_line(sent["id"].as_i64().unwrap(), newer));
    assert!(matches!(&h.events()[..], [Event::Response { id: got, result: Ok(_) }] if *got == id));
    assert_eq!(h.conn.server_info().unwrap().version, "2.0");
    assert_eq!(h.conn.instructions(), Some("v2"));
    assert!(!h.conn.discover_is_fresh(h.now), "ttlMs 0: stale at once");
    // The server offers list changes now: the connection listens for them.
    assert_eq!(h.sent().remove(0)["method"], "subscriptions/listen");
}

/// The `initialize` that follows a probe that got nothing a modern server would send, answered:
/// the connection is legacy.
fn falls_back_and_settles(h: &mut Harness, case: &str) {
    let sent = h.sent();
    assert_eq!(sent.len(), 1, "{case}: {sent:?}");
    assert_eq!(sent[0]["method"], "initialize", "{case}");
    assert_eq!(sent[0]["id"], 1, "{case}");
    h.ready_with(
        &common::init_result("2025-11-25", common::full_server_capabilities())
            .replace("\"id\":0", "\"id\":1"),
    );
    assert_eq!(h.conn.protocol_version(), Some(ProtocolVersion::V2025_11_25), "{case}");
}

#[test]
fn a_probe_result_without_supported_versions_falls_back_to_initialize_at_once() {
    // A legacy server answering an unknown method sloppily: a result with no `supportedVersions`,
    // an empty list, or `{}`. It used to be read as "the server speaks what I asked for": the
    // client settled on 2026-07-28 against a legacy server (or one with no capabilities).
    for result in [
        json!({"capabilities": {"tools": {}}, "serverInfo": {"name": "legacy", "version": "1"}}),
        json!({"supportedVersions": [], "capabilities": {"tools": {}}}),
        json!({}),
    ] {
        let mut h = Harness::new(dual());
        h.sent();
        h.server(&result_line(0, result.clone()));
        falls_back_and_settles(&mut h, &result.to_string());
    }
    // A modern-only client has nothing to fall back to: it takes the result, as before.
    let mut h = Harness::new(modern_only());
    h.sent();
    h.server(&result_line(0, json!({"capabilities": {"tools": {}}})));
    assert_eq!(h.conn.protocol_version(), Some(ProtocolVersion::V2026_07_28));
}

#[test]
fn an_error_without_an_id_ends_the_probe_at_once() {
    // A legacy stdio server that cannot parse the probe answers with `id: null`. While the probe
    // is the only request out, that can only be about the probe: `initialize` follows at once,
    // not after the discover timeout.
    for code in [-32700, -32600, -32601] {
        let mut h = Harness::new(dual());
        h.sent();
        h.server(
            &json!({"jsonrpc": "2.0", "id": null, "error": {"code": code, "message": "Parse error"}})
                .to_string(),
        );
        assert!(matches!(h.events()[..], [Event::ProtocolViolation(_)]), "still reported as a violation");
        falls_back_and_settles(&mut h, &format!("null id {code}"));
        // The probe is over: its deadline does not close the connection later.
        h.advance(Duration::from_secs(11));
        assert_eq!(h.conn.status(), Status::Ready, "null id {code}");
    }
    // Once ready, an error without an id fails nothing (there is no telling which request).
    let mut h = Harness::new(dual());
    h.sent();
    h.server(&error_line(0, -32601, Value::Null));
    falls_back_and_settles(&mut h, "ready");
    call(&mut h, "echo");
    h.server(
        &json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32700, "message": "Parse error"}})
            .to_string(),
    );
    assert_eq!(h.conn.pending(), 1);
}

#[test]
fn a_server_that_ends_on_the_probe_says_so_and_one_that_ends_later_does_not() {
    // The smol driver starts such a server again with `initialize` (conformance/adversary).
    let mut h = Harness::new(dual());
    h.sent();
    h.conn.feed_exit(h.now, mcp_sansio::ServerExit::Code(1));
    assert!(h.conn.ended_on_probe());
    let mut h = Harness::new(dual());
    h.sent();
    h.conn.feed_eof(h.now);
    assert!(h.conn.ended_on_probe());
    // On `initialize`, or pinned to one era: nothing to try again.
    let mut h = Harness::new(dual());
    h.sent();
    h.server(&error_line(0, -32601, Value::Null));
    h.sent();
    h.conn.feed_eof(h.now);
    assert!(!h.conn.ended_on_probe());
    for pinned in [modern_only(), config().with_versions(&[ProtocolVersion::V2025_11_25])] {
        let mut h = Harness::new(pinned);
        h.sent();
        h.conn.feed_eof(h.now);
        assert!(!h.conn.ended_on_probe());
    }
}
