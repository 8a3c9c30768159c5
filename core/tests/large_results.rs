//! Large results (issue 37): a line read in several pieces or a whole message the transport
//! gives away is decoded in its own buffer, which a large result then shares instead of a copy.
//! Whatever the path, the events are those of a message fed in one piece.
#![allow(clippy::unwrap_used)]

mod common;

use common::{Harness, num, result_line};
use mcp_sansio::{Event, InvalidMessage, ProtocolViolation, RequestId, RequestOptions};
use serde_json::json;

fn vendor(h: &mut Harness) -> RequestId {
    let id = h.conn.send_request(h.now, "vendor/x", None, RequestOptions::default()).unwrap();
    h.sent();
    id
}

/// A response line to `id` whose result holds a text of `len` bytes (with a few escapes).
fn large_line(id: &RequestId, len: usize) -> String {
    let text: String = "ab\"c\\d\u{e9}\n".chars().cycle().take(len).collect();
    result_line(num(id), json!({"content": [{"type": "text", "text": text}]}))
}

fn result_of(event: &Event) -> String {
    match event {
        Event::Response { result: Ok(raw), .. } => raw.get().to_owned(),
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_large_result_read_in_pieces_is_the_result_read_whole() {
    for chunk in [1000, 4096, 65_536] {
        for crlf in [false, true] {
            let mut h = Harness::ready_default("2025-11-25");
            let (a, b) = (vendor(&mut h), vendor(&mut h));
            let (first, second) = (large_line(&a, 100_000), large_line(&b, 3000));
            let mut input = format!("{first}{}\n{second}\n", if crlf { "\r" } else { "" }).into_bytes();
            input.extend_from_slice(b"\n");
            for piece in input.chunks(chunk) {
                h.feed(piece);
            }
            let events = h.events();
            assert_eq!(events.len(), 2, "{events:?}");
            let whole =
                |line: &str| serde_json::from_str::<serde_json::Value>(line).unwrap()["result"].to_string();
            assert_eq!(result_of(&events[0]), whole(&first), "chunk {chunk}, crlf {crlf}");
            assert_eq!(result_of(&events[1]), whole(&second));
            // The events outlive the connection's buffers.
            drop(h);
            assert!(result_of(&events[0]).len() > 100_000);
        }
    }
}

#[test]
fn invalid_utf8_in_a_line_read_in_pieces_is_reported() {
    let mut h = Harness::ready_default("2025-11-25");
    let id = vendor(&mut h);
    let mut line = large_line(&id, 10_000).into_bytes();
    line[5000] = 0xFF;
    line.push(b'\n');
    for piece in line.chunks(1024) {
        h.feed(piece);
    }
    let events = h.events();
    assert!(
        matches!(
            events.as_slice(),
            [Event::ProtocolViolation(ProtocolViolation::Invalid { error: InvalidMessage::Json(e), excerpt: Some(_) })]
                if e.contains("UTF-8")
        ),
        "{events:?}"
    );
    // The connection goes on: the request is still answered by a valid line.
    h.server(&result_line(num(&id), json!({})));
    assert!(matches!(h.events().as_slice(), [Event::Response { result: Ok(_), .. }]));
}

#[test]
fn a_whole_message_given_away_comes_back_unless_a_result_keeps_it() {
    let mut h = Harness::ready_default("2025-11-25");
    let (small, large) = (vendor(&mut h), vendor(&mut h));
    // A small result is copied out: the buffer comes back.
    let message = result_line(num(&small), json!({"ok": true})).into_bytes();
    let back = h.conn.feed_owned_message(h.now, message.clone());
    assert_eq!(back.as_deref(), Some(&message[..]));
    // A large one keeps it.
    let line = large_line(&large, 50_000);
    assert_eq!(h.conn.feed_owned_message(h.now, line.clone().into_bytes()), None);
    // Invalid UTF-8 or JSON: reported, and the buffer comes back.
    let back = h.conn.feed_owned_message(h.now, vec![b'{', 0xFF, b'}']);
    assert_eq!(back, Some(vec![b'{', 0xFF, b'}']));
    let events = h.events();
    assert_eq!(events.len(), 3, "{events:?}");
    assert_eq!(result_of(&events[0]), r#"{"ok":true}"#);
    let whole = serde_json::from_str::<serde_json::Value>(&line).unwrap()["result"].to_string();
    assert_eq!(result_of(&events[1]), whole);
    assert!(matches!(events[2], Event::ProtocolViolation(ProtocolViolation::Invalid { .. })));
    // Past the size limit: dropped as an oversized message, and given back.
    let mut h = Harness::new(common::config().with_max_message_size(10_000));
    h.ready("2025-11-25");
    let id = vendor(&mut h);
    let line = large_line(&id, 20_000).into_bytes();
    assert_eq!(h.conn.feed_owned_message(h.now, line.clone()), Some(line));
    let events = h.events();
    assert!(
        events.iter().any(|e| matches!(e, Event::ProtocolViolation(ProtocolViolation::Oversized { .. })))
    );
}

#[test]
fn a_dropped_large_result_lends_its_buffer_to_the_next_large_line_and_a_held_one_does_not() {
    let mut h = Harness::ready_default("2025-11-25");
    let feed_in_pieces = |h: &mut Harness, line: &str| {
        for piece in format!("{line}\n").as_bytes().chunks(8192) {
            h.feed(piece);
        }
    };
    let (a, b, c) = (vendor(&mut h), vendor(&mut h), vendor(&mut h));
    feed_in_pieces(&mut h, &large_line(&a, 200_000));
    let first = h.events().pop().unwrap();
    let Event::Response { result: Ok(raw), .. } = &first else { unreachable!() };
    let first_at_inside = raw.get().as_ptr() as usize;
    // Held: the next large line has a buffer of its own, and the first result is intact.
    feed_in_pieces(&mut h, &large_line(&b, 200_000));
    let second = h.events().pop().unwrap();
    let Event::Response { result: Ok(second_raw), .. } = &second else { unreachable!() };
    assert_ne!(second_raw.get().as_ptr() as usize, first_at_inside);
    assert_eq!(result_of(&first).len(), result_of(&second).len());
    let second_at = second_raw.get().as_ptr() as usize;
    drop(first);
    // Dropped: the next large line is read into its buffer (the same ids' length, the same place).
    drop(second);
    feed_in_pieces(&mut h, &large_line(&c, 200_000));
    let third = h.events().pop().unwrap();
    let Event::Response { result: Ok(third_raw), .. } = &third else { unreachable!() };
    assert_eq!(third_raw.get().as_ptr() as usize, second_at, "the second's buffer, reused");
    let whole =
        serde_json::from_str::<serde_json::Value>(&large_line(&c, 200_000)).unwrap()["result"].to_string();
    assert_eq!(third_raw.get(), whole);
}

#[test]
fn a_spare_buffer_is_only_lent_once_the_result_is_dropped_and_never_twice() {
    // Through the public surface: a held result is intact whatever comes after it, over
    // whole messages as over lines.
    let mut h = Harness::ready_default("2025-11-25");
    let ids: Vec<RequestId> = (0..4).map(|_| vendor(&mut h)).collect();
    let lines: Vec<String> = ids.iter().map(|id| large_line(id, 30_000 + 1000 * num(id) as usize)).collect();
    let mut held = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        if i % 2 == 0 {
            assert_eq!(h.conn.feed_owned_message(h.now, line.clone().into_bytes()), None);
        } else {
            for piece in format!("{line}\n").as_bytes().chunks(4096) {
                h.feed(piece);
            }
        }
        held.extend(h.events());
    }
    assert_eq!(held.len(), 4);
    for (event, line) in held.iter().zip(&lines) {
        let whole = serde_json::from_str::<serde_json::Value>(line).unwrap()["result"].to_string();
        assert_eq!(result_of(event), whole);
    }
}
