//! Server→client requests: `ping` answered by the engine, roots / sampling / elicitation surfaced
//! when declared and refused when not, `respond`, and the server cancelling its own request.
#![allow(clippy::unwrap_used)]

mod common;

use common::{Harness, config, request_line};
use mcp_sansio::jsonrpc::ErrorObject;
use mcp_sansio::schema::{
    ClientCapabilities, CreateMessageResult, ElicitResult, JsonObject, ListChangedCapability,
    ListRootsResult, Root, SamplingContentBlock,
};
use mcp_sansio::{
    Event, InvalidMessage, ProtocolViolation, RequestId, ServerNotification, ServerRequest, UsageError,
};
use serde_json::json;

fn all_client_capabilities() -> ClientCapabilities {
    ClientCapabilities {
        roots: Some(ListChangedCapability { list_changed: Some(true) }),
        sampling: Some(JsonObject::new()),
        elicitation: Some(JsonObject::new()),
        ..Default::default()
    }
}

fn declaring(capabilities: ClientCapabilities) -> Harness {
    let mut h = Harness::new(config().with_capabilities(capabilities));
    h.ready("2025-11-25");
    h
}

fn sampling_params() -> serde_json::Value {
    json!({
        "messages": [{"role": "user", "content": {"type": "text", "text": "What is 2+2?"}}],
        "maxTokens": 100,
        "systemPrompt": "Be brief."
    })
}

#[test]
fn ping_is_answered_with_an_empty_result_echoing_the_id() {
    let mut h = Harness::ready_default("2025-11-25");
    h.server(r#"{"jsonrpc":"2.0","id":"abc-1","method":"ping"}"#);
    h.server(r#"{"jsonrpc":"2.0","id":17,"method":"ping","params":{}}"#);
    h.server(r#"{"jsonrpc":"2.0","id":"q\"uote","method":"ping"}"#);
    h.server(r#"{"jsonrpc":"2.0","id":-3,"method":"ping"}"#);
    assert_eq!(
        h.sent_lines(),
        [
            "{\"jsonrpc\":\"2.0\",\"id\":\"abc-1\",\"result\":{}}\n",
            "{\"jsonrpc\":\"2.0\",\"id\":17,\"result\":{}}\n",
            "{\"jsonrpc\":\"2.0\",\"id\":\"q\\\"uote\",\"result\":{}}\n",
            "{\"jsonrpc\":\"2.0\",\"id\":-3,\"result\":{}}\n",
        ]
    );
    assert!(h.events().is_empty(), "ping never reaches the application");
    assert_eq!(h.conn.stats().messages_sent, 1 + 1 + 4, "initialize, initialized, four pongs");
}

#[test]
fn roots_list_is_surfaced_and_answered_with_the_servers_id() {
    let mut h = declaring(all_client_capabilities());
    h.server(&request_line("r-1", "roots/list", json!({})));
    let events = h.events();
    let [Event::Request { id, request: ServerRequest::ListRoots }] = events.as_slice() else {
        panic!("{events:?}")
    };
    assert_eq!(id, &RequestId::from("r-1"));
    assert!(h.sent().is_empty(), "the engine waits for the application");
    let roots = ListRootsResult::new(vec![Root::new("file:///home/me/project").with_name("project")]);
    h.conn.respond(id, Ok(&roots)).unwrap();
    assert_eq!(
        h.sent_lines(),
        [
            "{\"jsonrpc\":\"2.0\",\"id\":\"r-1\",\"result\":{\"roots\":[{\"uri\":\"file:///home/me/project\",\"name\":\"project\"}]}}\n"
        ]
    );
    // Answered: a second answer is refused.
    assert_eq!(h.conn.respond(id, Ok(&roots)), Err(UsageError::UnknownServerRequest(id.clone())));
    assert!(h.sent().is_empty());
}

#[test]
fn sampling_is_surfaced_typed_and_answered() {
    let mut h = declaring(all_client_capabilities());
    h.server(&request_line(9, "sampling/createMessage", sampling_params()));
    let events = h.events();
    let [Event::Request { id, request: request @ ServerRequest::CreateMessage(params) }] = events.as_slice()
    else {
        panic!("{events:?}")
    };
    assert_eq!(request.method(), "sampling/createMessage");
    assert_eq!(id, &RequestId::Number(9));
    assert_eq!(params.max_tokens, 100);
    assert_eq!(params.system_prompt.as_deref(), Some("Be brief."));
    assert_eq!(params.messages.len(), 1);
    let answer = CreateMessageResult::new("m-1", SamplingContentBlock::text("4")).with_stop_reason("endTurn");
    h.conn.respond(id, Ok(&answer)).unwrap();
    assert_eq!(
        h.sent(),
        [json!({"jsonrpc": "2.0", "id": 9, "result": {
            "role": "assistant", "content": {"type": "text", "text": "4"}, "model": "m-1", "stopReason": "endTurn"
        }})]
    );
}

#[test]
fn elicitation_is_surfaced_and_can_be_answered_with_an_error() {
    let mut h = declaring(all_client_capabilities());
    h.server(&request_line(
        "e1",
        "elicitation/create",
        json!({"message": "Your name?", "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}}}),
    ));
    let events = h.events();
    let [Event::Request { id, request: ServerRequest::Elicit(params) }] = events.as_slice() else {
        panic!("{events:?}")
    };
    assert_eq!(params.message, "Your name?");
    assert!(params.is_form_mode());
    h.conn.respond::<ElicitResult>(id, Err(ErrorObject::new(-32603, "no UI"))).unwrap();
    assert_eq!(
        h.sent_lines(),
        ["{\"jsonrpc\":\"2.0\",\"id\":\"e1\",\"error\":{\"code\":-32603,\"message\":\"no UI\"}}\n"]
    );

    h.server(&request_line("e2", "elicitation/create", json!({"message": "ok?", "requestedSchema": {}})));
    let events = h.events();
    let [Event::Request { id, .. }] = events.as_slice() else { panic!("{events:?}") };
    h.conn.respond(id, Ok(&ElicitResult::decline())).unwrap();
    assert_eq!(h.sent(), [json!({"jsonrpc": "2.0", "id": "e2", "result": {"action": "decline"}})]);
}

#[test]
fn undeclared_capabilities_are_refused_with_method_not_found() {
    let mut h = Harness::ready_default("2025-11-25");
    h.server(&request_line(1, "roots/list", json!({})));
    h.server(&request_line("s", "sampling/createMessage", sampling_params()));
    h.server(&request_line(3, "elicitation/create", json!({"message": "x"})));
    h.server(&request_line(4, "vendor/unknown", json!({})));
    // Nothing undeclared reaches the application as a request; the three it could have served
    // are reported, so that a host whose handler serves them learns what it forgot to declare.
    let undeclared: Vec<_> = h
        .events()
        .into_iter()
        .map(|event| match event {
            Event::UndeclaredServerRequest { id, method } => (id, method),
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(
        undeclared,
        [
            (RequestId::Number(1), "roots/list".to_owned()),
            (RequestId::String("s".into()), "sampling/createMessage".to_owned()),
            (RequestId::Number(3), "elicitation/create".to_owned()),
        ]
    );
    let sent = h.sent();
    let ids: Vec<_> = sent.iter().map(|m| m["id"].clone()).collect();
    assert_eq!(ids, [json!(1), json!("s"), json!(3), json!(4)]);
    for (m, method) in
        sent.iter().zip(["roots/list", "sampling/createMessage", "elicitation/create", "vendor/unknown"])
    {
        assert_eq!(m["error"]["code"], -32601, "{m}");
        assert!(m["error"]["message"].as_str().unwrap().contains(method), "{m}");
        assert!(m.get("result").is_none());
    }
    // Counted too, for a host without a log subscriber; the unknown method is not one of them.
    assert_eq!(h.conn.stats().server_requests_undeclared, 3);
    // Refused requests are not open: respond to them is a usage error.
    assert_eq!(
        h.conn.respond(&RequestId::Number(1), Ok(&json!({"roots": []}))),
        Err(UsageError::UnknownServerRequest(RequestId::Number(1)))
    );
}

#[test]
fn only_the_declared_capability_is_surfaced() {
    let caps = ClientCapabilities { roots: Some(ListChangedCapability::default()), ..Default::default() };
    let mut h = declaring(caps);
    h.server(&request_line(1, "roots/list", json!({})));
    h.server(&request_line(2, "sampling/createMessage", sampling_params()));
    let events = h.events();
    assert!(
        matches!(
            events.as_slice(),
            [Event::Request { request: ServerRequest::ListRoots, .. }, Event::UndeclaredServerRequest { .. }]
        ),
        "{events:?}"
    );
    let sent = h.sent();
    assert_eq!(sent.len(), 1);
    assert_eq!((sent[0]["id"].clone(), sent[0]["error"]["code"].clone()), (json!(2), json!(-32601)));
}

#[test]
fn invalid_sampling_params_are_answered_with_invalid_params() {
    let mut h = declaring(all_client_capabilities());
    h.server(&request_line(5, "sampling/createMessage", json!({"maxTokens": 10})));
    h.server(r#"{"jsonrpc":"2.0","id":6,"method":"sampling/createMessage"}"#);
    let sent = h.sent();
    assert_eq!(sent.len(), 2);
    for (m, id) in sent.iter().zip([5, 6]) {
        assert_eq!(m["id"], id);
        assert_eq!(m["error"]["code"], -32602, "{m}");
    }
    let events = h.events();
    assert!(
        events.iter().all(|e| matches!(
            e,
            Event::ProtocolViolation(ProtocolViolation::Invalid { error: InvalidMessage::Params { method, .. }, .. })
                if method == "sampling/createMessage"
        )),
        "no Event::Request for invalid params: {events:?}"
    );
    assert_eq!(
        h.conn.respond(&RequestId::Number(5), Ok(&json!({}))),
        Err(UsageError::UnknownServerRequest(5.into()))
    );
}

#[test]
fn respond_to_an_unknown_id_is_a_usage_error() {
    let mut h = declaring(all_client_capabilities());
    for id in [RequestId::Number(0), RequestId::Number(77), RequestId::from("nope")] {
        assert_eq!(h.conn.respond(&id, Ok(&json!({}))), Err(UsageError::UnknownServerRequest(id.clone())));
    }
    // An id the server used for a ping is not open either.
    h.server(r#"{"jsonrpc":"2.0","id":"p","method":"ping"}"#);
    h.sent();
    assert!(h.conn.respond(&RequestId::from("p"), Ok(&json!({}))).is_err());
    h.assert_quiet();
}

#[test]
fn server_cancelling_its_request_is_reported_and_the_late_answer_is_dropped() {
    let mut h = declaring(all_client_capabilities());
    h.server(&request_line("r9", "roots/list", json!({})));
    let events = h.events();
    let [Event::Request { id, .. }] = events.as_slice() else { panic!("{events:?}") };
    h.server(r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"r9","reason":"took too long"}}"#);
    let events = h.events();
    let [Event::ServerRequestCancelled { id: cancelled, reason }] = events.as_slice() else {
        panic!("{events:?}")
    };
    assert_eq!((cancelled, reason.as_deref()), (id, Some("took too long")));
    // The answer after the cancellation is accepted and writes nothing.
    h.conn.respond(id, Ok(&ListRootsResult::new(vec![]))).unwrap();
    assert!(h.sent().is_empty());
    // And the request is gone now.
    assert_eq!(h.conn.respond(id, Ok(&json!({}))), Err(UsageError::UnknownServerRequest(id.clone())));
    // A second cancel for the same id is just a notification about an unknown request.
    h.server(r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"r9"}}"#);
    assert!(matches!(h.events().as_slice(), [Event::Notification(ServerNotification::Cancelled(_))]));
}

#[test]
fn a_reused_open_id_is_invalid() {
    let mut h = declaring(all_client_capabilities());
    h.server(&request_line(1, "roots/list", json!({})));
    h.server(&request_line(1, "roots/list", json!({})));
    let events = h.events();
    assert!(
        matches!(
            events.as_slice(),
            [
                Event::Request { .. },
                Event::ProtocolViolation(ProtocolViolation::Invalid {
                    error: InvalidMessage::Envelope(_),
                    ..
                })
            ]
        ),
        "{events:?}"
    );
    assert!(h.sent().is_empty());
    h.conn.respond(&RequestId::Number(1), Ok(&ListRootsResult::new(vec![]))).unwrap();
    assert_eq!(h.sent(), [json!({"jsonrpc": "2.0", "id": 1, "result": {"roots": []}})]);
    // Once answered, the id may be used again.
    h.server(&request_line(1, "roots/list", json!({})));
    assert!(matches!(h.events().as_slice(), [Event::Request { .. }]));
}

#[test]
fn server_requests_and_client_requests_do_not_share_ids() {
    // The server's request id 1 and the client's request id 1 are unrelated.
    let mut h = declaring(all_client_capabilities());
    let mine = h.conn.send_request(h.now, "vendor/x", None, Default::default()).unwrap();
    assert_eq!(mine, RequestId::Number(1));
    h.sent();
    h.server(&request_line(1, "roots/list", json!({})));
    assert!(matches!(h.events().as_slice(), [Event::Request { .. }]));
    assert!(h.conn.is_pending(&mine));
    h.server(&common::result_line(1, json!({"mine": true})));
    let events = h.events();
    assert!(
        matches!(events.as_slice(), [Event::Response { id, result: Ok(_) }] if *id == mine),
        "{events:?}"
    );
    h.conn.respond(&RequestId::Number(1), Ok(&ListRootsResult::new(vec![]))).unwrap();
    assert_eq!(h.sent().len(), 1);
}

#[test]
fn server_requests_past_the_cap_are_refused_at_once_counted_and_reported() {
    let mut h =
        Harness::new(config().with_capabilities(all_client_capabilities()).with_max_open_server_requests(2));
    h.ready("2025-11-25");
    for id in ["a", "b", "c", "d"] {
        h.server(&request_line(id, "roots/list", json!({})));
    }
    let events = h.events();
    let opened: Vec<_> = events.iter().filter(|e| matches!(e, Event::Request { .. })).collect();
    assert_eq!(opened.len(), 2, "{events:?}");
    let refused: Vec<_> = events
        .iter()
        .filter_map(|e| match e {
            Event::ServerRequestRefused { id, method, limit } => Some((id.clone(), method.clone(), *limit)),
            _ => None,
        })
        .collect();
    assert_eq!(
        refused,
        [
            (RequestId::from("c"), "roots/list".to_owned(), 2),
            (RequestId::from("d"), "roots/list".to_owned(), 2)
        ]
    );
    assert_eq!(h.conn.stats().server_requests_refused, 2);
    let sent = h.sent_lines();
    assert_eq!(sent.len(), 2, "{sent:?}");
    for (line, id) in sent.iter().zip(["c", "d"]) {
        let answer: serde_json::Value = serde_json::from_str(line).unwrap();
        assert_eq!(answer["id"], id);
        assert_eq!(answer["error"]["code"], -32603);
        assert_eq!(answer["error"]["data"]["limit"], 2);
    }
    // An answer frees a place; ping never takes one.
    h.conn.respond(&RequestId::from("a"), Ok(&ListRootsResult::new(vec![]))).unwrap();
    h.server(r#"{"jsonrpc":"2.0","id":"p","method":"ping"}"#);
    h.server(&request_line("e", "roots/list", json!({})));
    let events = h.events();
    assert!(matches!(events.as_slice(), [Event::Request { .. }]), "{events:?}");
    assert_eq!(h.conn.stats().server_requests_refused, 2);
}

#[test]
fn roots_changed_is_sent_only_when_declared() {
    // Before the handshake: not ready, as any message.
    let mut h = Harness::new(config().update_capabilities(|c| c.with_roots(true)));
    assert_eq!(h.conn.roots_changed(), Err(UsageError::NotReady));
    h.ready("2025-11-25");
    assert_eq!(h.conn.roots_changed(), Ok(()));
    assert_eq!(h.sent(), [json!({"jsonrpc": "2.0", "method": "notifications/roots/list_changed"})]);

    // `roots` without `listChanged`, or no roots at all: the client never promised to send it.
    for caps in [ClientCapabilities::default().with_roots(false), ClientCapabilities::default()] {
        let mut h = declaring(caps);
        assert_eq!(
            h.conn.roots_changed(),
            Err(UsageError::CapabilityNotDeclared { capability: "roots.listChanged" })
        );
        assert!(h.sent().is_empty());
    }
}
