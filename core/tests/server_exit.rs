//! A server that ends: its exit status as the close reason (`feed_exit`), and a handshake that
//! completed right before the end (`handshake_completed`).
#![allow(clippy::unwrap_used)]

mod common;

use common::{Harness, config, full_server_capabilities, init_result, num, result_line};
use mcp_sansio::schema::{CallTool, CallToolRequestParams};
use mcp_sansio::{CloseReason, Event, RequestError, RequestOptions, ServerExit, Status, UsageError};
use serde_json::json;

#[test]
fn an_exit_fails_every_pending_request_with_its_status() {
    let mut h = Harness::ready_default("2025-11-25");
    let a =
        h.conn.send::<CallTool>(h.now, &CallToolRequestParams::new("t"), RequestOptions::default()).unwrap();
    let b =
        h.conn.send::<CallTool>(h.now, &CallToolRequestParams::new("t"), RequestOptions::default()).unwrap();
    h.sent();
    // The answer to `a` is the last line, unterminated: it still counts.
    h.feed(result_line(num(&a), json!({"content": []})).as_bytes());
    h.conn.feed_exit(h.now, ServerExit::Code(3));
    let exited = CloseReason::Exited(ServerExit::Code(3));
    let events = h.events();
    let [
        Event::Response { id: first, result: Ok(_) },
        Event::Response { id: second, result: Err(error) },
        Event::Closed(reason),
    ] = events.as_slice()
    else {
        panic!("{events:?}")
    };
    assert_eq!((first, second), (&a, &b));
    assert_eq!(error, &RequestError::ConnectionClosed(exited.clone()));
    assert!(error.is_retriable());
    assert_eq!(reason, &exited);
    assert_eq!(reason.to_string(), "the server process ended: exited with status 3");
    assert_eq!(h.conn.status(), Status::Closed(exited.clone()));
    let refused = h.conn.send::<CallTool>(h.now, &CallToolRequestParams::new("t"), RequestOptions::default());
    assert_eq!(refused, Err(UsageError::Closed(exited)));
    // A later end changes nothing.
    h.conn.feed_eof(h.now);
    h.conn.feed_exit(h.now, ServerExit::Signal(9));
    h.assert_quiet();
}

#[test]
fn a_signal_is_told_apart_from_an_exit_code() {
    let mut h = Harness::ready_default("2025-11-25");
    h.conn.feed_exit(h.now, ServerExit::Signal(9));
    let killed = CloseReason::Exited(ServerExit::Signal(9));
    assert!(matches!(h.events().as_slice(), [Event::Closed(reason)] if *reason == killed));
    assert_eq!(killed.to_string(), "the server process ended: killed by signal 9");
    assert!(killed.is_retriable());
    assert_eq!((ServerExit::Signal(9).signal(), ServerExit::Signal(9).code()), (Some(9), None));
    assert_eq!((ServerExit::Code(0).code(), ServerExit::Code(0).success()), (Some(0), true));
    assert!(!ServerExit::Code(3).success());
}

#[test]
fn a_handshake_answered_right_before_the_end_completed() {
    // The answer and the end in one go: the status is closed, but the handshake completed.
    let mut h = Harness::new(config());
    h.sent();
    assert!(!h.conn.handshake_completed());
    h.server(&init_result("2025-11-25", full_server_capabilities()));
    h.conn.feed_exit(h.now, ServerExit::Code(0));
    let events = h.events();
    assert!(
        matches!(events.as_slice(), [Event::Ready { .. }, Event::Closed(CloseReason::Exited(_))]),
        "{events:?}"
    );
    assert!(h.conn.handshake_completed());
    assert!(matches!(h.conn.status(), Status::Closed(_)));

    // An end before any answer: the handshake never completed.
    let mut h = Harness::new(config());
    h.conn.feed_eof(h.now);
    assert!(!h.conn.handshake_completed());
    assert_eq!(h.conn.status(), Status::Closed(CloseReason::Eof));
}
