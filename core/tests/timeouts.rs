//! Deadlines: the idle timeout with its `notifications/cancelled`, reset by progress, the cap on
//! total time, and `poll_timeout` / `handle_timeout` bookkeeping. Time moves only by hand.
#![allow(clippy::unwrap_used)]

mod common;

use std::time::Duration;

use common::{Harness, config, num, progress_line, result_line};
use mcp_sansio::schema::{CallTool, CallToolRequestParams};
use mcp_sansio::{Event, RequestError, RequestId, RequestOptions};
use serde_json::json;

const S: Duration = Duration::from_secs(1);

fn call(h: &mut Harness, options: RequestOptions) -> RequestId {
    let id = h.conn.send::<CallTool>(h.now, &CallToolRequestParams::new("slow"), options).unwrap();
    let sent = h.sent();
    assert_eq!(sent.len(), 1);
    assert_eq!(sent[0]["id"], num(&id));
    id
}

fn cancelled(id: &RequestId, reason: &str) -> serde_json::Value {
    json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": num(id), "reason": reason}})
}

fn ready(config: mcp_sansio::ClientConfig) -> Harness {
    let mut h = Harness::new(config);
    h.ready("2025-11-25");
    h
}

#[test]
fn request_times_out_after_the_idle_timeout_and_is_cancelled_on_the_wire() {
    let mut h = Harness::ready_default("2025-11-25");
    let id = call(&mut h, RequestOptions::default());
    assert_eq!(h.conn.poll_timeout(), Some(h.now + mcp_sansio::DEFAULT_REQUEST_TIMEOUT));
    h.advance(mcp_sansio::DEFAULT_REQUEST_TIMEOUT - Duration::from_millis(1));
    h.assert_quiet();
    assert!(h.conn.is_pending(&id));
    h.advance(Duration::from_millis(1));
    let events = h.events();
    let [Event::Response { id: got, result: Err(RequestError::Timeout(d)) }] = events.as_slice() else {
        panic!("{events:?}")
    };
    assert_eq!((got, *d), (&id, mcp_sansio::DEFAULT_REQUEST_TIMEOUT));
    assert_eq!(h.sent(), [cancelled(&id, "timed out")]);
    assert!(!h.conn.is_pending(&id));
    assert_eq!(h.conn.pending(), 0);
    assert_eq!(h.conn.stats().timeouts, 1);
    assert_eq!(h.conn.poll_timeout(), None);
    // The answer that comes after the deadline is late: reported, and otherwise ignored.
    h.server(&result_line(num(&id), json!({"content": []})));
    let events = h.events();
    assert!(
        matches!(&events[..], [Event::ProtocolViolation(mcp_sansio::ProtocolViolation::LateResponse { id: late })] if *late == id),
        "{events:?}"
    );
    assert!(h.sent().is_empty());
    assert_eq!(h.conn.stats().late_responses, 1);
}

#[test]
fn per_request_timeout_overrides_the_config() {
    let mut h = ready(config().with_request_timeout(30 * S));
    let a = call(&mut h, RequestOptions::default());
    let b = call(&mut h, RequestOptions::default().timeout(5 * S));
    h.advance(5 * S);
    let events = h.events();
    assert!(
        matches!(events.as_slice(), [Event::Response { id, result: Err(RequestError::Timeout(d)) }] if *id == b && *d == 5 * S),
        "{events:?}"
    );
    assert_eq!(h.sent(), [cancelled(&b, "timed out")]);
    h.advance(25 * S);
    let events = h.events();
    assert!(
        matches!(events.as_slice(), [Event::Response { id, result: Err(RequestError::Timeout(d)) }] if *id == a && *d == 30 * S),
        "{events:?}"
    );
}

#[test]
fn with_progress_adds_the_progress_token() {
    let mut h = Harness::ready_default("2025-11-25");
    let id = h
        .conn
        .send::<CallTool>(
            h.now,
            &CallToolRequestParams::new("slow"),
            RequestOptions::default().with_progress(),
        )
        .unwrap();
    assert_eq!(
        h.sent_lines(),
        [format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":{n},\"method\":\"tools/call\",\"params\":{{\"_meta\":{{\"progressToken\":{n}}},\"name\":\"slow\"}}}}\n",
            n = num(&id)
        )]
    );
    // Without `with_progress`, no `_meta`.
    let id = h
        .conn
        .send::<CallTool>(h.now, &CallToolRequestParams::new("quick"), RequestOptions::default())
        .unwrap();
    assert_eq!(
        h.sent(),
        [json!({"jsonrpc": "2.0", "id": num(&id), "method": "tools/call", "params": {"name": "quick"}})]
    );
}

#[test]
fn progress_pushes_the_deadline() {
    let mut h = ready(config().with_request_timeout(60 * S));
    let id = call(&mut h, RequestOptions::default().with_progress());
    let sent_at = h.now;
    h.advance(50 * S);
    h.server(&progress_line(num(&id), 1.0));
    let events = h.events();
    assert!(
        matches!(events.as_slice(), [Event::Progress { id: got, params }] if *got == id && params.progress == 1.0)
    );
    assert_eq!(h.conn.poll_timeout(), Some(sent_at + 110 * S), "deadline is 60 s after the progress");
    h.advance(59 * S); // 109 s after sending: past the original deadline, before the new one
    h.assert_quiet();
    assert!(h.conn.is_pending(&id));
    h.server(&progress_line(num(&id), 2.0));
    h.events();
    h.advance(60 * S - Duration::from_millis(1));
    h.assert_quiet();
    h.advance(Duration::from_millis(1));
    let events = h.events();
    assert!(
        matches!(events.as_slice(), [Event::Response { id: got, result: Err(RequestError::Timeout(d)) }] if *got == id && *d == 60 * S),
        "{events:?}"
    );
    assert_eq!(h.sent(), [cancelled(&id, "timed out")]);
}

#[test]
fn progress_does_not_extend_when_reset_on_progress_is_off() {
    let mut h = ready(config().with_request_timeout(60 * S));
    let id = call(&mut h, RequestOptions::default().with_progress().reset_on_progress(false));
    let sent_at = h.now;
    h.advance(50 * S);
    h.server(&progress_line(num(&id), 0.5));
    // The progress is still reported...
    assert!(matches!(h.events().as_slice(), [Event::Progress { .. }]));
    // ...but the deadline stays 60 s after the request.
    assert_eq!(h.conn.poll_timeout(), Some(sent_at + 60 * S));
    h.advance(10 * S);
    let events = h.events();
    assert!(
        matches!(events.as_slice(), [Event::Response { id: got, result: Err(RequestError::Timeout(_)) }] if *got == id),
        "{events:?}"
    );
}

#[test]
fn max_total_caps_a_request_that_keeps_reporting_progress() {
    let mut h = ready(config().with_request_timeout(10 * S).with_max_total(25 * S));
    let id = call(&mut h, RequestOptions::default().with_progress());
    for step in 1..=4 {
        h.advance(5 * S);
        h.server(&progress_line(num(&id), f64::from(step)));
        assert!(matches!(h.events().as_slice(), [Event::Progress { .. }]), "step {step}");
        assert!(h.sent().is_empty());
    }
    // 20 s in, progress would push the idle deadline to 30 s; the cap holds it at 25 s.
    let sent_at = h.now - 20 * S;
    assert_eq!(h.conn.poll_timeout(), Some(sent_at + 25 * S));
    h.advance(4 * S);
    h.server(&progress_line(num(&id), 5.0));
    h.events();
    h.advance(S);
    let events = h.events();
    assert!(
        matches!(events.as_slice(), [Event::Response { id: got, result: Err(RequestError::MaxTotalExceeded(d)) }] if *got == id && *d == 25 * S),
        "{events:?}"
    );
    assert_eq!(h.sent(), [cancelled(&id, "maximum total time exceeded")]);
    assert_eq!(h.conn.stats().timeouts, 1);
}

#[test]
fn per_request_max_total_overrides_the_config() {
    let mut h = ready(config().with_request_timeout(10 * S));
    let id = call(&mut h, RequestOptions::default().max_total(12 * S));
    h.advance(8 * S);
    h.server(&progress_line(num(&id), 1.0));
    h.events();
    h.advance(4 * S);
    let events = h.events();
    assert!(
        matches!(events.as_slice(), [Event::Response { result: Err(RequestError::MaxTotalExceeded(d)), .. }] if *d == 12 * S),
        "{events:?}"
    );
}

#[test]
fn poll_timeout_is_the_earliest_deadline_and_moves_forward() {
    let mut h = Harness::ready_default("2025-11-25");
    assert_eq!(h.conn.poll_timeout(), None, "nothing pending, no keep-alive");
    let t0 = h.now;
    let a = call(&mut h, RequestOptions::default().timeout(30 * S));
    let b = call(&mut h, RequestOptions::default().timeout(10 * S));
    let c = call(&mut h, RequestOptions::default().timeout(20 * S));
    assert_eq!(h.conn.poll_timeout(), Some(t0 + 10 * S));

    h.advance(10 * S);
    assert!(matches!(h.events().as_slice(), [Event::Response { id, .. }] if *id == b));
    assert_eq!(h.sent(), [cancelled(&b, "timed out")]);
    assert_eq!(h.conn.poll_timeout(), Some(t0 + 20 * S));

    // Answering c removes its deadline.
    h.server(&result_line(num(&c), json!({"content": []})));
    assert!(matches!(h.events().as_slice(), [Event::Response { id, result: Ok(_) }] if *id == c));
    assert_eq!(h.conn.poll_timeout(), Some(t0 + 30 * S));

    // A late driver: handle_timeout long after several deadlines handles them all at once.
    let d = call(&mut h, RequestOptions::default().timeout(5 * S));
    assert_eq!(h.conn.poll_timeout(), Some(h.now + 5 * S));
    h.advance(100 * S);
    let events = h.events();
    let ids: Vec<_> = events
        .iter()
        .map(|e| match e {
            Event::Response { id, result: Err(RequestError::Timeout(_)) } => id.clone(),
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(ids, [d.clone(), a.clone()], "in deadline order");
    assert_eq!(h.sent(), [cancelled(&d, "timed out"), cancelled(&a, "timed out")]);
    assert_eq!(h.conn.poll_timeout(), None);
}

#[test]
fn early_and_spurious_handle_timeout_do_nothing() {
    let mut h = Harness::ready_default("2025-11-25");
    let id = call(&mut h, RequestOptions::default().timeout(10 * S));
    let deadline = h.conn.poll_timeout().unwrap();
    for at in [h.start, h.now, h.now + 3 * S, deadline - Duration::from_nanos(1)] {
        h.conn.handle_timeout(at);
        h.assert_quiet();
        assert!(h.conn.is_pending(&id));
        assert_eq!(h.conn.poll_timeout(), Some(deadline));
    }
    h.conn.handle_timeout(deadline);
    assert_eq!(h.events().len(), 1);
    assert_eq!(h.sent().len(), 1);
    // Again at the same or a later instant: already handled.
    h.conn.handle_timeout(deadline);
    h.conn.handle_timeout(deadline + 10 * S);
    h.assert_quiet();
    assert_eq!(h.conn.stats().timeouts, 1);
}

#[test]
fn progress_for_another_request_does_not_extend_this_one() {
    let mut h = ready(config().with_request_timeout(10 * S));
    let a = call(&mut h, RequestOptions::default().with_progress());
    let b = call(&mut h, RequestOptions::default().with_progress());
    h.advance(8 * S);
    h.server(&progress_line(num(&b), 1.0));
    assert!(matches!(h.events().as_slice(), [Event::Progress { id, .. }] if *id == b));
    h.advance(2 * S);
    assert!(
        matches!(h.events().as_slice(), [Event::Response { id, result: Err(RequestError::Timeout(_)) }] if *id == a)
    );
    assert!(h.conn.is_pending(&b));
}

#[test]
fn durations_from_the_caller_saturate_instead_of_panicking() {
    // Duration::MAX used to overflow `now + timeout` inside the engine, after the request
    // was queued: a panic on caller input, and a request on the wire without its entry.
    let mut h = Harness::new(config().with_keep_alive(Duration::MAX));
    h.ready("2025-11-25");
    let options = RequestOptions::default().timeout(Duration::MAX).max_total(Duration::MAX).with_progress();
    let id = call(&mut h, options);
    assert!(h.conn.is_pending(&id));
    let deadline = h.conn.poll_timeout().expect("the request still has a deadline");
    assert!(deadline > h.now + Duration::from_secs(50 * 365 * 24 * 3600), "far away: {deadline:?}");
    // Progress moves the deadline without overflowing either.
    h.server(&progress_line(num(&id), 1.0));
    h.advance(Duration::from_secs(3600));
    h.server(&result_line(num(&id), json!({"content": []})));
    let events = h.events();
    assert!(
        events.iter().any(|e| matches!(e, Event::Response { id: got, result: Ok(_) } if *got == id)),
        "{events:?}"
    );
    let huge = RequestOptions::default().timeout(Duration::from_secs(u64::MAX));
    let other = call(&mut h, huge);
    assert!(h.conn.is_pending(&other));
}
