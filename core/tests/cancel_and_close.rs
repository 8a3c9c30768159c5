//! Cancellation by the caller, responses that arrive late, twice or for ids never issued, and the
//! end of a connection: EOF, `close`, transport errors, and commands afterwards.
#![allow(clippy::unwrap_used)]

mod common;

use std::time::Duration;

use common::{Harness, num, result_line};
use mcp_sansio::schema::{CallTool, CallToolRequestParams};
use mcp_sansio::{
    CloseReason, Event, ProtocolViolation, RequestError, RequestId, RequestOptions, Status, UsageError,
};
use serde_json::json;

fn call(h: &mut Harness) -> RequestId {
    let id =
        h.conn.send::<CallTool>(h.now, &CallToolRequestParams::new("t"), RequestOptions::default()).unwrap();
    assert_eq!(h.sent().len(), 1);
    id
}

#[test]
fn cancel_transmits_cancelled_and_fails_the_request() {
    let mut h = Harness::ready_default("2025-11-25");
    let a = call(&mut h);
    let b = call(&mut h);
    h.conn.cancel(&a, Some("user pressed stop")).unwrap();
    assert_eq!(
        h.sent_lines(),
        [format!(
            "{{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":{{\"requestId\":{},\"reason\":\"user pressed stop\"}}}}\n",
            num(&a)
        )]
    );
    let events = h.events();
    let [Event::Response { id, result: Err(RequestError::Cancelled(reason)) }] = events.as_slice() else {
        panic!("{events:?}")
    };
    assert_eq!((id, reason.as_deref()), (&a, Some("user pressed stop")));
    assert!(!h.conn.is_pending(&a));
    assert!(h.conn.is_pending(&b));

    // Without a reason, no `reason` member.
    h.conn.cancel(&b, None).unwrap();
    assert_eq!(
        h.sent(),
        [json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": num(&b)}})]
    );
    assert!(matches!(
        h.events().as_slice(),
        [Event::Response { result: Err(RequestError::Cancelled(None)), .. }]
    ));
    // The cancelled requests no longer hold a deadline.
    assert_eq!(h.conn.poll_timeout(), None);
    assert_eq!(h.conn.pending(), 0);
}

#[test]
fn late_response_after_cancel_is_ignored_and_counted() {
    let mut h = Harness::ready_default("2025-11-25");
    let a = call(&mut h);
    h.conn.cancel(&a, None).unwrap();
    h.sent();
    h.events();
    h.server(&result_line(num(&a), json!({"content": []})));
    h.server(&format!(
        r#"{{"jsonrpc":"2.0","id":{},"error":{{"code":-32800,"message":"cancelled"}}}}"#,
        num(&a)
    ));
    let late = Event::ProtocolViolation(ProtocolViolation::LateResponse { id: a.clone() });
    assert_eq!(format!("{:?}", h.events()), format!("{:?}", [&late, &late]), "reported, nothing else");
    assert!(h.sent().is_empty());
    let stats = h.conn.stats();
    assert_eq!(stats.late_responses, 2);
    assert_eq!(stats.unknown_responses, 0);
    assert_eq!(stats.invalid_messages, 0);
}

#[test]
fn responses_to_ids_never_issued_are_counted_as_unknown() {
    let mut h = Harness::ready_default("2025-11-25");
    let a = call(&mut h);
    h.server(&result_line(999, json!({})));
    h.server(&result_line(-1, json!({})));
    h.server(&result_line("1", json!({}))); // a string is not the engine's numeric id 1
    let events = h.events();
    assert!(
        matches!(
            &events[..],
            [
                Event::ProtocolViolation(ProtocolViolation::UnknownResponse { id: RequestId::Number(999) }),
                Event::ProtocolViolation(ProtocolViolation::UnknownResponse { id: RequestId::Number(-1) }),
                Event::ProtocolViolation(ProtocolViolation::UnknownResponse { id: RequestId::String(s) }),
            ] if s == "1"
        ),
        "reported, nothing else: {events:?}"
    );
    assert!(h.sent().is_empty());
    let stats = h.conn.stats();
    assert_eq!((stats.unknown_responses, stats.late_responses), (3, 0));
    assert!(h.conn.is_pending(&a), "a string id must not match a numeric one");
    h.server(&result_line(num(&a), json!({"ok": true})));
    let events = h.events();
    let [Event::Response { id, result: Ok(raw) }] = events.as_slice() else { panic!("{events:?}") };
    assert_eq!(id, &a);
    assert_eq!(raw.get(), r#"{"ok":true}"#);
}

#[test]
fn duplicate_responses_are_ignored() {
    let mut h = Harness::ready_default("2025-11-25");
    let a = call(&mut h);
    h.server(&result_line(num(&a), json!({"n": 1})));
    h.server(&result_line(num(&a), json!({"n": 2})));
    let events = h.events();
    let [
        Event::Response { result: Ok(raw), .. },
        Event::ProtocolViolation(ProtocolViolation::LateResponse { id }),
    ] = events.as_slice()
    else {
        panic!("{events:?}")
    };
    assert_eq!(raw.get(), r#"{"n":1}"#, "the first answer wins");
    assert_eq!(id, &a, "the second is reported as late");
    assert_eq!(h.conn.stats().late_responses, 1);
    assert!(h.sent().is_empty());
}

#[test]
fn server_error_responses_reach_the_caller() {
    let mut h = Harness::ready_default("2025-11-25");
    let a = call(&mut h);
    h.server(&format!(
        r#"{{"jsonrpc":"2.0","id":{},"error":{{"code":-32602,"message":"Unknown tool: t","data":{{"tool":"t"}}}}}}"#,
        num(&a)
    ));
    let events = h.events();
    let [Event::Response { id, result: Err(RequestError::Server(e)) }] = events.as_slice() else {
        panic!("{events:?}")
    };
    assert_eq!(id, &a);
    assert_eq!(
        (e.code, e.message.as_str(), e.data.clone()),
        (-32602, "Unknown tool: t", Some(json!({"tool": "t"})))
    );
}

#[test]
fn cancel_of_an_unknown_id_is_a_usage_error() {
    let mut h = Harness::ready_default("2025-11-25");
    let a = call(&mut h);
    for id in [RequestId::Number(42), RequestId::Number(0), RequestId::from("x")] {
        assert_eq!(h.conn.cancel(&id, None), Err(UsageError::UnknownRequest(id.clone())));
    }
    h.assert_quiet();
    h.conn.cancel(&a, None).unwrap();
    h.sent();
    h.events();
    // Twice: the second is refused and sends nothing.
    assert_eq!(h.conn.cancel(&a, None), Err(UsageError::UnknownRequest(a.clone())));
    h.assert_quiet();
    // After an answer, too.
    let b = call(&mut h);
    h.server(&result_line(num(&b), json!({})));
    h.events();
    assert_eq!(h.conn.cancel(&b, None), Err(UsageError::UnknownRequest(b.clone())));
    h.assert_quiet();
}

fn assert_all_failed_then_closed(events: &[Event], ids: &[RequestId], reason: &CloseReason) {
    assert_eq!(events.len(), ids.len() + 1, "{events:?}");
    for (event, expected) in events.iter().zip(ids) {
        match event {
            Event::Response { id, result: Err(RequestError::ConnectionClosed(r)) } => {
                assert_eq!((id, r), (expected, reason));
            }
            other => panic!("expected the failure of {expected}: {other:?}"),
        }
    }
    assert!(matches!(events.last(), Some(Event::Closed(r)) if r == reason), "{events:?}");
}

fn assert_commands_refused(h: &mut Harness, reason: &CloseReason) {
    let closed = Err(UsageError::Closed(reason.clone()));
    assert_eq!(
        h.conn.send::<CallTool>(h.now, &CallToolRequestParams::new("t"), RequestOptions::default()),
        closed
    );
    assert_eq!(h.conn.send_request(h.now, "vendor/x", None, RequestOptions::default()), closed);
    assert_eq!(h.conn.notify("notifications/roots/list_changed", None), closed.map(|_| ()));
    assert_eq!(
        h.conn.respond(&RequestId::Number(1), Ok(&json!({}))),
        Err(UsageError::Closed(reason.clone()))
    );
    assert!(h.conn.cancel(&RequestId::Number(1), None).is_err());
    assert_eq!(h.conn.status(), Status::Closed(reason.clone()));
    assert_eq!(h.conn.poll_timeout(), None);
    assert_eq!(h.conn.pending(), 0);
    // Inputs after the end change nothing: no second `Closed`, no answers.
    h.server(r#"{"jsonrpc":"2.0","id":5,"method":"ping"}"#);
    h.server(&result_line(1, json!({})));
    h.conn.feed_eof(h.now);
    h.conn.close();
    h.advance(Duration::from_secs(3600));
    h.assert_quiet();
}

#[test]
fn eof_fails_every_pending_request_in_id_order_then_closes() {
    let mut h = Harness::ready_default("2025-11-25");
    let ids: Vec<_> = (0..4).map(|_| call(&mut h)).collect();
    // Answer one in the middle: it is not pending any more.
    h.server(&result_line(num(&ids[2]), json!({})));
    assert_eq!(h.events().len(), 1);
    h.conn.feed_eof(h.now);
    assert!(h.sent().is_empty());
    let failed = [ids[0].clone(), ids[1].clone(), ids[3].clone()];
    assert_all_failed_then_closed(&h.events(), &failed, &CloseReason::Eof);
    assert!(h.conn.is_closed());
    assert_commands_refused(&mut h, &CloseReason::Eof);
}

#[test]
fn eof_processes_an_unterminated_last_line_first() {
    let mut h = Harness::ready_default("2025-11-25");
    let a = call(&mut h);
    let b = call(&mut h);
    h.feed(result_line(num(&a), json!({"last": true})).as_bytes());
    h.assert_quiet();
    h.conn.feed_eof(h.now);
    let events = h.events();
    assert!(matches!(&events[0], Event::Response { id, result: Ok(_) } if *id == a), "{events:?}");
    assert_all_failed_then_closed(&events[1..], &[b], &CloseReason::Eof);
}

#[test]
fn eof_during_the_handshake_closes() {
    let mut h = common::Harness::new(common::config());
    h.conn.feed_eof(h.now);
    assert!(matches!(h.events().as_slice(), [Event::Closed(CloseReason::Eof)]));
    assert!(h.sent().is_empty(), "the unwritten initialize is dropped");
    assert_commands_refused(&mut h, &CloseReason::Eof);
}

#[test]
fn close_fails_pending_requests_with_local_and_keeps_queued_transmits() {
    let mut h = Harness::ready_default("2025-11-25");
    let a = call(&mut h);
    let b =
        h.conn.send::<CallTool>(h.now, &CallToolRequestParams::new("u"), RequestOptions::default()).unwrap();
    h.conn.close();
    // The request queued before close is still there for the driver to flush.
    let sent = h.sent();
    assert_eq!(sent.len(), 1);
    assert_eq!(sent[0]["id"], num(&b));
    assert_all_failed_then_closed(&h.events(), &[a, b], &CloseReason::Local);
    assert_commands_refused(&mut h, &CloseReason::Local);
}

#[test]
fn transport_error_closes_with_the_drivers_explanation() {
    let mut h = Harness::ready_default("2025-11-25");
    let a = call(&mut h);
    let _ = h.conn.send_request(h.now, "vendor/x", None, RequestOptions::default()).unwrap();
    h.conn.transport_error("broken pipe");
    assert!(h.sent().is_empty(), "nothing can be written any more");
    let reason = CloseReason::Transport("broken pipe".into());
    let events = h.events();
    assert_all_failed_then_closed(&events, &[a, RequestId::Number(2)], &reason);
    assert!(reason.to_string().contains("broken pipe"));
    assert_commands_refused(&mut h, &reason);
}

#[test]
fn stats_count_every_outcome_bytes_and_parse_errors() {
    let mut h = Harness::ready_default("2025-11-25");
    let before = h.conn.stats();
    assert_eq!(before.requests_tracked, 0, "the handshake is the engine's own, not the application's");
    let ok = call(&mut h);
    let failed = call(&mut h);
    let cancelled = call(&mut h);
    let timed_out = h
        .conn
        .send::<CallTool>(
            h.now,
            &CallToolRequestParams::new("t"),
            RequestOptions::default().timeout(Duration::from_secs(1)),
        )
        .unwrap();
    h.sent();
    let _closed = call(&mut h);
    assert_eq!(h.conn.stats().requests_tracked, 5);

    let answer = result_line(num(&ok), json!({"content": []}));
    h.server(&answer);
    let error =
        format!(r#"{{"jsonrpc":"2.0","id":{},"error":{{"code":-32602,"message":"bad"}}}}"#, num(&failed));
    h.server(&error);
    h.conn.cancel(&cancelled, None).unwrap();
    h.advance(Duration::from_secs(2));
    let garbage = ["{not json", r#"{"jsonrpc":"1.0","id":1,"result":{}}"#];
    for line in garbage {
        h.server(line);
    }
    h.conn.close();
    let _ = timed_out;

    let stats = h.conn.stats();
    assert_eq!(
        (stats.requests_completed, stats.requests_failed, stats.requests_cancelled, stats.requests_timed_out),
        (1, 2, 1, 1),
        "the failed pair is the error answer and the request the close ended: {stats:?}"
    );
    assert_eq!((stats.parse_errors, stats.invalid_messages), (1, 2), "{stats:?}");
    let fed: usize =
        [answer.as_str(), &error, garbage[0], garbage[1]].iter().map(|line| line.len() + 1).sum();
    assert_eq!(stats.bytes_received - before.bytes_received, fed as u64, "every byte fed, newlines included");
}
