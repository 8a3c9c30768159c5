//! Peer misbehaviour and transport details: invalid JSON and envelopes, invalid responses,
//! oversized messages, stray responses, batches, framing (CRLF, blank lines, byte-by-byte, a
//! byte order mark), HTTP-style whole messages, and keep-alive.
#![allow(clippy::unwrap_used)]

mod common;

use std::time::Duration;

use common::{Harness, config, init_result, num, result_line};
use mcp_sansio::{
    CloseReason, Event, InvalidMessage, ProtocolViolation, RequestError, RequestId, RequestOptions,
    ServerNotification, Status,
};
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
    assert!(
        events.iter().all(|e| matches!(
            e,
            Event::ProtocolViolation(ProtocolViolation::Invalid {
                error: InvalidMessage::Json(_),
                excerpt: Some(_)
            })
        )),
        "{events:?}"
    );
    // The violation shows what the server wrote, as far as an excerpt goes.
    let Event::ProtocolViolation(violation) = &events[1] else { unreachable!() };
    assert!(violation.to_string().ends_with(", in \"not json at all\""), "{violation}");
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
        format!(r#"{{"jsonrpc":"1.0","id":{n},"result":{{}}}}"#),
        format!(r#"{{"id":{n},"result":{{}}}}"#),
        format!(r#"{{"jsonrpc":"2.0","id":{n}.5,"result":{{}}}}"#),
        r#"{"jsonrpc":"2.0","id":null,"result":{},"error":{"code":1,"message":"x"}}"#.to_owned(),
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
        assert!(
            matches!(events.as_slice(), [Event::ProtocolViolation(ProtocolViolation::Invalid { .. })]),
            "{line}: {events:?}"
        );
    }
    assert_eq!(h.conn.stats().invalid_messages, bad.len() as u64);
    assert!(h.conn.is_pending(&id), "no invalid message may complete the request");
    assert!(h.sent().is_empty());
    // A peer error without an id is reported as such.
    h.server(r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}"#);
    let events = h.events();
    assert!(
        matches!(
            events.as_slice(),
            [Event::ProtocolViolation(ProtocolViolation::Invalid { error: InvalidMessage::PeerError(e), .. })]
                if e.code == -32700
        ),
        "{events:?}"
    );
    h.server(&result_line(n, json!({"fine": 1})));
    assert!(matches!(h.events().as_slice(), [Event::Response { result: Ok(_), .. }]));
}

/// `events` is the one violation "oversized" of `len` bytes (any length if `None`) against a
/// limit of `limit`, naming `id`.
fn is_oversized(events: &[Event], len: Option<usize>, limit: usize, id: Option<&RequestId>) -> bool {
    matches!(
        events,
        [Event::ProtocolViolation(ProtocolViolation::Oversized { len: l, limit: m, id: i })]
            if len.is_none_or(|len| len == *l) && *m == limit && i.as_ref() == id
    )
}

/// `events` is the failure of request `id` with `MessageTooLarge { limit }`.
fn is_too_large(events: &[Event], id: &RequestId, limit: usize) -> bool {
    matches!(
        events,
        [Event::Response { id: got, result: Err(RequestError::MessageTooLarge { limit: l }) }]
            if got == id && *l == limit
    )
}

#[test]
fn oversized_messages_are_dropped_and_counted() {
    let mut h = Harness::new(config().with_max_message_size(400));
    h.ready("2025-11-25");
    let id = vendor(&mut h);
    let big =
        format!(r#"{{"jsonrpc":"2.0","method":"vendor/blob","params":{{"blob":"{}"}}}}"#, "x".repeat(1000));
    let len = big.len();
    h.server(&big);
    let events = h.events();
    assert!(is_oversized(&events, Some(len), 400, None), "{events:?}");
    // Fed in small chunks, the same.
    for chunk in format!("{big}\n").as_bytes().chunks(7) {
        h.feed(chunk);
        assert_eq!(h.conn.buffered_bytes().max(400), 400);
    }
    let events = h.events();
    assert!(is_oversized(&events, Some(len), 400, None), "{events:?}");
    // As a whole message (HTTP), the same.
    h.conn.feed_message(h.now, big.as_bytes());
    let events = h.events();
    assert!(is_oversized(&events, Some(len), 400, None), "{events:?}");
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
fn an_oversized_response_fails_its_request_as_soon_as_it_passes_the_limit() {
    let mut h = Harness::new(config().with_max_message_size(400));
    h.ready("2025-11-25");
    let id = vendor(&mut h);
    let other = vendor(&mut h);
    let head = format!(r#"{{"jsonrpc":"2.0","id":{},"result":{{"blob":""#, num(&id));
    h.feed(head.as_bytes());
    h.assert_quiet();
    // Past the limit, with no end in sight: the request fails now, not at its deadline.
    h.feed(&[b'x'; 400]);
    let events = h.events();
    assert!(is_too_large(&events, &id, 400), "{events:?}");
    assert_eq!(h.conn.buffered_bytes(), 0, "the rest is dropped as it comes");
    assert!(!h.conn.is_pending(&id));
    for _ in 0..100 {
        h.feed(&[b'x'; 1000]);
    }
    h.assert_quiet();
    // Its end: one violation for the whole message, naming the request.
    h.feed(b"\"}}\r\n");
    let events = h.events();
    assert!(is_oversized(&events, Some(head.len() + 100_400 + 3), 400, Some(&id)), "{events:?}");
    let stats = h.conn.stats();
    assert_eq!((stats.oversized_messages, stats.invalid_messages, stats.requests_failed), (1, 1, 1));
    // The other request is unharmed.
    h.server(&result_line(num(&other), json!({})));
    assert!(matches!(h.events().as_slice(), [Event::Response { id: got, result: Ok(_) }] if *got == other));
    // The same response as one line, or as a whole message (HTTP), fails its request the same.
    for whole_message in [false, true] {
        let id = vendor(&mut h);
        let line = result_line(num(&id), json!({"blob": "x".repeat(500)}));
        if whole_message {
            h.conn.feed_message(h.now, line.as_bytes());
        } else {
            h.server(&line);
        }
        let events = h.events();
        assert!(is_too_large(&events[..1], &id, 400), "{events:?}");
        assert!(is_oversized(&events[1..], Some(line.len()), 400, Some(&id)), "{events:?}");
    }
}

#[test]
fn an_oversized_response_with_its_id_last_fails_its_request_when_it_ends() {
    let mut h = Harness::new(config().with_max_message_size(400));
    h.ready("2025-11-25");
    let id = vendor(&mut h);
    // The TypeScript SDK's order: `result` first, `id` last.
    h.feed(br#"{"result":{"blob":""#);
    h.feed(&[b'x'; 5000]);
    h.assert_quiet();
    h.feed(format!(r#""}},"jsonrpc":"2.0","id":{}}}"#, num(&id)).as_bytes());
    h.assert_quiet();
    h.feed(b"\n");
    let events = h.events();
    assert!(is_oversized(&events[..1], None, 400, Some(&id)), "{events:?}");
    assert!(is_too_large(&events[1..], &id, 400), "{events:?}");
}

#[test]
fn an_oversized_server_request_or_notification_fails_nothing() {
    let mut h = Harness::new(config().with_max_message_size(400));
    h.ready("2025-11-25");
    let id = vendor(&mut h);
    let n = num(&id);
    let blob = "x".repeat(1000);
    for line in [
        // The server's ids are not the client's, even when the numbers match.
        format!(
            r#"{{"jsonrpc":"2.0","id":{n},"method":"sampling/createMessage","params":{{"b":"{blob}"}}}}"#
        ),
        format!(
            r#"{{"method":"sampling/createMessage","params":{{"b":"{blob}"}},"jsonrpc":"2.0","id":{n}}}"#
        ),
        format!(
            r#"{{"jsonrpc":"2.0","method":"notifications/message","params":{{"data":"{blob}","id":{n}}}}}"#
        ),
        format!(r#"[{{"jsonrpc":"2.0","id":{n},"result":{{"b":"{blob}"}}}}]"#),
    ] {
        h.server(&line);
        let events = h.events();
        assert!(is_oversized(&events, Some(line.len()), 400, None), "{line}: {events:?}");
    }
    assert!(h.conn.is_pending(&id));
}

#[test]
fn an_answer_with_result_and_error_fails_its_request_at_once() {
    let mut h = Harness::ready_default("2025-11-25");
    for (answer, why) in [
        (
            r#""result":{},"error":{"code":-32603,"message":"both"}"#,
            "a response cannot carry both result and error",
        ),
        (r#""error":"boom""#, "the error member is not a JSON-RPC error object (code and message)"),
        (
            r#""error":{"code":"x","message":"m"}"#,
            "the error member is not a JSON-RPC error object (code and message)",
        ),
        (
            r#""error":{"message":"no code"}"#,
            "the error member is not a JSON-RPC error object (code and message)",
        ),
        ("\"jsonrpc_extra\":1", "no method, result or error"),
    ] {
        let id = vendor(&mut h);
        h.server(&format!(r#"{{"jsonrpc":"2.0","id":{},{answer}}}"#, num(&id)));
        let events = h.events();
        let expected = RequestError::InvalidResponse(why.to_owned());
        assert!(
            matches!(
                events.as_slice(),
                [
                    Event::ProtocolViolation(ProtocolViolation::InvalidResponse { id: named, detail }),
                    Event::Response { id: got, result: Err(error) },
                ] if *got == id && *error == expected && *named == id && *detail == why
            ),
            "{answer}: {events:?}"
        );
        assert!(h.sent().is_empty(), "nothing is sent back");
        // A proper answer that follows is late.
        h.server(&result_line(num(&id), json!({})));
        let events = h.events();
        assert!(
            matches!(events.as_slice(), [Event::ProtocolViolation(ProtocolViolation::LateResponse { id: late })] if *late == id),
            "{events:?}"
        );
    }
    let stats = h.conn.stats();
    assert_eq!((stats.requests_failed, stats.invalid_messages, stats.late_responses), (5, 5, 5));
    assert_eq!(stats.requests_timed_out, 0);
    // To an id that is not pending: reported, nothing else.
    h.server(r#"{"jsonrpc":"2.0","id":4242,"result":{},"error":{"code":1,"message":"x"}}"#);
    let events = h.events();
    assert!(
        matches!(
            events.as_slice(),
            [Event::ProtocolViolation(ProtocolViolation::InvalidResponse {
                id: RequestId::Number(4242),
                ..
            })]
        ),
        "{events:?}"
    );
    assert_eq!(h.conn.status(), Status::Ready);
}

#[test]
fn an_unusable_answer_to_the_handshake_or_a_keep_alive_ping_is_dealt_with_at_once() {
    // `initialize`: the connection closes now, not at the handshake timeout.
    let mut h = Harness::new(config());
    h.sent();
    h.server(r#"{"jsonrpc":"2.0","id":0,"result":{},"error":{"code":1,"message":"x"}}"#);
    let events = h.events();
    assert!(
        matches!(
            &events[..],
            [Event::ProtocolViolation(_), Event::Closed(CloseReason::InvalidInitializeResult(why))]
                if why.contains("both")
        ),
        "{events:?}"
    );
    let mut h = Harness::new(config().with_max_message_size(100));
    h.sent();
    h.feed(br#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-11-25","capabilities":{"#);
    // Past the limit, and past the 256 bytes the framer reads an id from.
    h.feed(&[b' '; 200]);
    let events = h.events();
    assert!(
        matches!(&events[..], [Event::Closed(CloseReason::InvalidInitializeResult(why))] if why.contains("100 bytes")),
        "{events:?}"
    );
    // A keep-alive ping: any answer shows the server alive.
    let s = Duration::from_secs(1);
    let mut h = Harness::new(config().with_keep_alive(30 * s).with_request_timeout(10 * s));
    h.ready("2025-11-25");
    h.advance(30 * s);
    let ping = h.sent()[0]["id"].as_i64().unwrap();
    h.server(&format!(r#"{{"jsonrpc":"2.0","id":{ping},"error":"not an object"}}"#));
    assert!(matches!(
        h.events().as_slice(),
        [Event::ProtocolViolation(ProtocolViolation::InvalidResponse { .. })]
    ));
    h.advance(10 * s);
    h.assert_quiet();
    assert_eq!(h.conn.status(), Status::Ready);
}

#[test]
fn unknown_and_late_responses_are_reported() {
    let mut h = Harness::ready_default("2025-11-25");
    let id = h.conn.send_request(h.now, "vendor/x", None, RequestOptions::default().timeout(S)).unwrap();
    h.sent();
    h.advance(S);
    assert!(matches!(h.events().as_slice(), [Event::Response { result: Err(RequestError::Timeout(_)), .. }]));
    h.sent();
    h.server(&result_line(num(&id), json!({})));
    h.server(&result_line(777, json!({})));
    let long = "s".repeat(100_000);
    h.server(&result_line(long.as_str(), json!({})));
    let events = h.events();
    let shown = format!("{}…", "s".repeat(ProtocolViolation::EXCERPT_LEN));
    assert!(
        matches!(
            &events[..],
            [
                Event::ProtocolViolation(ProtocolViolation::LateResponse { id: late }),
                Event::ProtocolViolation(ProtocolViolation::UnknownResponse { id: RequestId::Number(777) }),
                Event::ProtocolViolation(ProtocolViolation::UnknownResponse { id: RequestId::String(s) }),
            ] if *late == id && *s == shown
        ),
        "{events:?}"
    );
    let stats = h.conn.stats();
    assert_eq!((stats.late_responses, stats.unknown_responses, stats.invalid_messages), (1, 2, 0));
}

#[test]
fn a_byte_order_mark_at_the_start_of_the_stream_is_skipped() {
    let stream = format!("\u{FEFF}{}\n", init_result("2025-11-25", json!({"tools": {}})));
    for split in 0..=4 {
        let mut h = Harness::new(config());
        h.sent();
        let (a, b) = stream.as_bytes().split_at(split);
        for byte in a {
            h.feed(std::slice::from_ref(byte));
        }
        h.feed(b);
        let events = h.events();
        assert!(matches!(events.as_slice(), [Event::Ready { .. }]), "split at {split}: {events:?}");
        assert_eq!(h.conn.stats().invalid_messages, 0);
        // Later, it is data: the line is not JSON.
        h.server("\u{FEFF}{\"jsonrpc\":\"2.0\",\"method\":\"notifications/tools/list_changed\"}");
        let events = h.events();
        assert!(
            matches!(
                events.as_slice(),
                [Event::ProtocolViolation(ProtocolViolation::Invalid { error: InvalidMessage::Json(_), .. })]
            ),
            "{events:?}"
        );
    }
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
    assert_eq!(events.len(), 5, "{events:?}");
    assert!(
        matches!(&events[0], Event::Response { id, result: Ok(r) } if *id == b && r.get() == r#"{"which":"b"}"#)
    );
    assert!(matches!(&events[1], Event::Notification(ServerNotification::ToolListChanged)));
    assert!(
        matches!(&events[2], Event::ProtocolViolation(ProtocolViolation::Invalid { .. })),
        "the bad element alone is invalid"
    );
    assert!(matches!(&events[3], Event::Response { id, result: Ok(_) } if *id == a));
    assert!(matches!(
        &events[4],
        Event::ProtocolViolation(ProtocolViolation::UnknownResponse { id: RequestId::Number(424242) })
    ));
    assert_eq!(h.sent_lines(), ["{\"jsonrpc\":\"2.0\",\"id\":\"p1\",\"result\":{}}\n"]);
    let stats = h.conn.stats();
    assert_eq!((stats.unknown_responses, stats.invalid_messages), (1, 1));
    // A broken batch is one invalid message.
    h.server(r#"[{"jsonrpc":"2.0","method":"a"},"#);
    assert!(matches!(
        h.events().as_slice(),
        [Event::ProtocolViolation(ProtocolViolation::Invalid { error: InvalidMessage::Json(_), .. })]
    ));
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
