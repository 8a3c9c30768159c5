//! Peer misbehaviour and transport details: invalid JSON and envelopes, oversized messages,
//! batches, framing (CRLF, blank lines, byte-by-byte), HTTP-style whole messages, and keep-alive.
#![allow(clippy::unwrap_used)]

mod common;

use std::time::Duration;

use common::{Harness, config, init_result, num, result_line};
use mcp_sansio::{CloseReason, Event, InvalidMessage, RequestId, RequestOptions, ServerNotification, Status};
use serde_json::json;

const S: Duration = Duration::from_secs(1);

fn vendor(h: &mut Harness) -> RequestId {
    let id = h.conn.send_request(h.now, "vendor/x", None, RequestOptions::default()).unwrap();
    h.sent();
    id
}

#[test]
fn invalid_json_is_reported_and_the_connection_goes_on() {
    let mut h = Harness::ready_default("2025-11-25");
    let id = vendor(&mut h);
    h.server("{nope");
    h.server("not json at all");
    h.feed(b"\xff\xfe{}\n");
    let events = h.events();
    assert_eq!(events.len(), 3, "{events:?}");
    assert!(events.iter().all(|e| matches!(e, Event::InvalidMessage(InvalidMessage::Json(_)))), "{events:?}");
    assert_eq!(h.conn.stats().invalid_messages, 3);
    assert_eq!(h.conn.status(), Status::Ready);
    assert!(h.sent().is_empty(), "nothing is answered to garbage");
    h.server(&result_line(num(&id), json!({})));
    assert!(matches!(h.events().as_slice(), [Event::Response { result: Ok(_), .. }]));
}

#[test]
fn invalid_envelopes_are_reported() {
    let mut h = Harness::ready_default("2025-11-25");
    let id = vendor(&mut h);
    let n = num(&id);
    let bad = [
        format!(r#"{{"jsonrpc":"2.0","id":{n},"result":{{}},"error":{{"code":1,"message":"x"}}}}"#),
        format!(r#"{{"jsonrpc":"1.0","id":{n},"result":{{}}}}"#),
        format!(r#"{{"id":{n},"result":{{}}}}"#),
        format!(r#"{{"jsonrpc":"2.0","id":{n}}}"#),
        format!(r#"{{"jsonrpc":"2.0","id":{n}.5,"result":{{}}}}"#),
        format!(r#"{{"jsonrpc":"2.0","id":{n},"error":"boom"}}"#),
        r#"{"jsonrpc":"2.0","id":null,"method":"ping"}"#.to_owned(),
        r#"{"jsonrpc":"2.0","id":1,"method":"ping","result":{}}"#.to_owned(),
        r#"{"jsonrpc":"2.0","result":{}}"#.to_owned(),
        "[]".to_owned(),
        "42".to_owned(),
        r#""text""#.to_owned(),
    ];
    for line in &bad {
        h.server(line);
        let events = h.events();
        assert!(matches!(events.as_slice(), [Event::InvalidMessage(_)]), "{line}: {events:?}");
    }
    assert_eq!(h.conn.stats().invalid_messages, bad.len() as u64);
    assert!(h.conn.is_pending(&id), "no invalid message may complete the request");
    assert!(h.sent().is_empty());
    // A peer error without an id is reported as such.
    h.server(r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}"#);
    let events = h.events();
    assert!(
        matches!(events.as_slice(), [Event::InvalidMessage(InvalidMessage::PeerError(e))] if e.code == -32700),
        "{events:?}"
    );
    h.server(&result_line(n, json!({"fine": 1})));
    assert!(matches!(h.events().as_slice(), [Event::Response { result: Ok(_), .. }]));
}

#[test]
fn oversized_messages_are_dropped_and_counted() {
    let mut h = Harness::new(config().with_max_message_size(400));
    h.ready("2025-11-25");
    let id = vendor(&mut h);
    let big = result_line(num(&id), json!({"blob": "x".repeat(1000)}));
    let len = big.len();
    h.server(&big);
    let events = h.events();
    assert!(
        matches!(events.as_slice(), [Event::InvalidMessage(InvalidMessage::TooLarge { len: l, max: 400 })] if *l == len),
        "{events:?}"
    );
    // Fed in small chunks, the same.
    for chunk in format!("{big}\n").as_bytes().chunks(7) {
        h.feed(chunk);
    }
    let events = h.events();
    assert!(
        matches!(events.as_slice(), [Event::InvalidMessage(InvalidMessage::TooLarge { .. })]),
        "{events:?}"
    );
    // As a whole message (HTTP), the same.
    h.conn.feed_message(h.now, big.as_bytes());
    assert!(matches!(h.events().as_slice(), [Event::InvalidMessage(InvalidMessage::TooLarge { .. })]));
    let stats = h.conn.stats();
    assert_eq!((stats.oversized_messages, stats.invalid_messages), (3, 3));
    assert!(h.conn.is_pending(&id));
    // A message of exactly the maximum passes.
    let fits = result_line(num(&id), json!({"blob": "y"}));
    let fits = format!("{fits:<400}");
    assert_eq!(fits.len(), 400);
    h.server(&fits);
    assert!(matches!(h.events().as_slice(), [Event::Response { result: Ok(_), .. }]));
}

#[test]
fn oversized_crlf_line_is_reported_the_same_however_it_is_split() {
    let mut h = Harness::new(config().with_max_message_size(350));
    h.ready("2025-11-25");
    let line = format!("{{\"jsonrpc\":\"2.0\",\"method\":\"x\",\"params\":\"{}\"}}\r\n", "z".repeat(400));
    let reference = {
        h.feed(line.as_bytes());
        format!("{:?}", h.events())
    };
    for split in 1..line.len() {
        let (a, b) = line.as_bytes().split_at(split);
        h.feed(a);
        h.feed(b);
        assert_eq!(format!("{:?}", h.events()), reference, "split at {split}");
    }
}

#[test]
fn batches_are_processed_element_by_element() {
    let mut h = Harness::ready_default("2025-03-26");
    let a = vendor(&mut h);
    let b = vendor(&mut h);
    let batch = format!(
        "[{},{},{}, 7 ,{},{}]",
        result_line(num(&b), json!({"which": "b"})),
        r#"{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}"#,
        r#"{"jsonrpc":"2.0","id":"p1","method":"ping"}"#,
        result_line(num(&a), json!({"which": "a"})),
        result_line(424242, json!({})),
    );
    h.server(&batch);
    let events = h.events();
    assert_eq!(events.len(), 4, "{events:?}");
    assert!(
        matches!(&events[0], Event::Response { id, result: Ok(r) } if *id == b && r.get() == r#"{"which":"b"}"#)
    );
    assert!(matches!(&events[1], Event::Notification(ServerNotification::ToolListChanged)));
    assert!(matches!(&events[2], Event::InvalidMessage(_)), "the bad element alone is invalid");
    assert!(matches!(&events[3], Event::Response { id, result: Ok(_) } if *id == a));
    assert_eq!(h.sent_lines(), ["{\"jsonrpc\":\"2.0\",\"id\":\"p1\",\"result\":{}}\n"]);
    let stats = h.conn.stats();
    assert_eq!((stats.unknown_responses, stats.invalid_messages), (1, 1));
    // A broken batch is one invalid message.
    h.server(r#"[{"jsonrpc":"2.0","method":"a"},"#);
    assert!(matches!(h.events().as_slice(), [Event::InvalidMessage(InvalidMessage::Json(_))]));
}

#[test]
fn crlf_blank_lines_and_byte_by_byte_input() {
    let mut h = Harness::new(config());
    h.sent();
    let stream = format!(
        "\n\r\n   \n{}\r\n\n{}\r\n\t\n",
        init_result("2025-06-18", json!({"tools": {}})),
        r#"{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}"#
    );
    for byte in stream.as_bytes() {
        h.feed(std::slice::from_ref(byte));
    }
    let events = h.events();
    assert!(
        matches!(
            events.as_slice(),
            [Event::Ready { .. }, Event::Notification(ServerNotification::ToolListChanged)]
        ),
        "{events:?}"
    );
    assert_eq!(h.conn.stats().invalid_messages, 0, "blank lines are not messages");
    assert_eq!(h.sent().len(), 1);
}

#[test]
fn feed_message_takes_one_unframed_message() {
    let mut h = Harness::new(config());
    h.sent();
    h.conn.feed_message(h.now, init_result("2025-11-25", json!({"tools": {}})).as_bytes());
    assert!(matches!(h.events().as_slice(), [Event::Ready { .. }]));
    assert_eq!(h.sent().len(), 1);
    let id = vendor(&mut h);
    // An HTTP body can be a batch too.
    let body = format!("[{}]", result_line(num(&id), json!({})));
    h.conn.feed_message(h.now, body.as_bytes());
    assert!(matches!(h.events().as_slice(), [Event::Response { result: Ok(_), .. }]));
}

#[test]
fn keep_alive_pings_after_silence_and_an_answer_keeps_the_connection() {
    let mut h = Harness::new(config().with_keep_alive(30 * S).with_request_timeout(10 * S));
    h.sent();
    assert_eq!(
        h.conn.poll_timeout(),
        Some(h.start + mcp_sansio::DEFAULT_HANDSHAKE_TIMEOUT),
        "no ping before ready"
    );
    h.advance(2 * S);
    h.ready("2025-11-25");
    let ready_at = h.now;
    assert_eq!(h.conn.poll_timeout(), Some(ready_at + 30 * S));

    // Any message from the server counts as life and moves the ping.
    h.advance(20 * S);
    h.server(r#"{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}"#);
    h.events();
    assert_eq!(h.conn.poll_timeout(), Some(ready_at + 50 * S));
    h.advance(30 * S - Duration::from_millis(1));
    h.assert_quiet();
    h.advance(Duration::from_millis(1));
    let sent = h.sent();
    assert_eq!(sent.len(), 1, "{sent:?}");
    assert_eq!(sent[0]["method"], "ping");
    assert!(sent[0].get("params").is_none());
    let ping_id = sent[0]["id"].as_i64().unwrap();
    assert!(h.events().is_empty());
    assert_eq!(h.conn.poll_timeout(), Some(h.now + 10 * S), "the ping's own deadline");
    assert!(!h.conn.is_pending(&RequestId::Number(ping_id)), "the engine's ping is not the application's");

    // The answer: no event, connection alive, next ping 30 s later.
    h.advance(4 * S);
    h.server(&result_line(ping_id, json!({})));
    h.assert_quiet();
    assert_eq!(h.conn.status(), Status::Ready);
    assert_eq!(h.conn.poll_timeout(), Some(h.now + 30 * S));
    h.advance(30 * S);
    let sent = h.sent();
    assert_eq!(sent.len(), 1);
    assert_eq!(sent[0]["method"], "ping");
    assert_ne!(sent[0]["id"].as_i64().unwrap(), ping_id, "a fresh id each time");
    // Even an error answer proves the server alive.
    h.server(&format!(
        r#"{{"jsonrpc":"2.0","id":{},"error":{{"code":-32601,"message":"no ping"}}}}"#,
        sent[0]["id"]
    ));
    h.assert_quiet();
    assert_eq!(h.conn.status(), Status::Ready);
}

#[test]
fn unanswered_keep_alive_closes_the_connection() {
    let mut h = Harness::new(config().with_keep_alive(30 * S).with_request_timeout(10 * S));
    h.ready("2025-11-25");
    h.advance(30 * S);
    let sent = h.sent();
    assert_eq!(sent.len(), 1);
    assert_eq!(sent[0]["method"], "ping");
    h.advance(10 * S - Duration::from_millis(1));
    h.assert_quiet();
    h.advance(Duration::from_millis(1));
    let events = h.events();
    assert!(
        matches!(events.as_slice(), [Event::Closed(CloseReason::KeepAliveTimeout(d))] if *d == 10 * S),
        "{events:?}"
    );
    assert!(h.sent().is_empty());
    assert_eq!(h.conn.poll_timeout(), None);
    // The answer that comes too late changes nothing.
    h.server(&result_line(sent[0]["id"].as_i64().unwrap(), json!({})));
    h.assert_quiet();
}

#[test]
fn unanswered_keep_alive_fails_pending_requests_too() {
    let mut h = Harness::new(config().with_keep_alive(30 * S).with_request_timeout(10 * S));
    h.ready("2025-11-25");
    let id =
        h.conn.send_request(h.now, "vendor/x", None, RequestOptions::default().timeout(3600 * S)).unwrap();
    h.sent();
    h.advance(30 * S);
    assert_eq!(h.sent()[0]["method"], "ping");
    h.advance(10 * S);
    let events = h.events();
    assert!(
        matches!(events.as_slice(), [
            Event::Response { id: got, result: Err(mcp_sansio::RequestError::ConnectionClosed(CloseReason::KeepAliveTimeout(_))) },
            Event::Closed(CloseReason::KeepAliveTimeout(_)),
        ] if *got == id),
        "{events:?}"
    );
}

#[test]
fn no_keep_alive_by_default() {
    let mut h = Harness::ready_default("2025-11-25");
    assert_eq!(h.conn.poll_timeout(), None);
    h.advance(24 * 3600 * S);
    h.assert_quiet();
    assert_eq!(h.conn.status(), Status::Ready);
}
