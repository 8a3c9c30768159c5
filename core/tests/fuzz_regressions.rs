//! Regression tests for what the fuzz targets (`fuzz/`, see `fuzz/README.md`) found: each one
//! replays the minimized input through the same public calls as its target and asserts the
//! behaviour the engine promises. A test stays `#[ignore]`d until the bug is fixed.
#![allow(clippy::unwrap_used)]

mod common;

use common::Harness;
use mcp_sansio::{RequestOptions, Transmit, UsageError};
use serde_json::Value;

/// Found by the `feed` target (2 vCPUs, ~610k executions, `--sanitizer none`); minimized input:
/// a connection ready on 2025-11-25, then `send_request("tools/call", Some(b"\n\"\""), default)`.
///
/// `send_request` accepts any valid JSON as params, and JSON may contain whitespace newlines
/// (pretty-printed params, a trailing newline), but the engine copies the params verbatim into
/// the request (`jsonrpc::encode_request` / `write_params`; `with_meta` splices them too when it
/// adds `_meta`), so the transmit spans several lines. On stdio that breaks the newline framing:
/// the server reads a truncated message and then garbage. `notify` has the same path.
///
/// Fixed behaviour (either is fine): the request goes out as one line holding the same params, or
/// the call is refused with `UsageError::InvalidParams` and nothing is sent.
#[test]
fn raw_params_with_newlines_stay_one_stdio_line() {
    let mut h = Harness::ready_default("2025-11-25");
    let cases: [(&[u8], bool); 5] = [
        // The minimized fuzz input.
        (b"\n\"\"", false),
        // What an application would send: pretty-printed or newline-terminated JSON.
        (b"{\n  \"name\": \"echo\",\n  \"arguments\": {}\n}", false),
        (b"{\"name\":\"echo\"}\n", false),
        // The same through the `_meta` splice (a progress token is added).
        (b"{\n  \"name\": \"echo\"\n}", true),
        (b"{\"name\":\"echo\",\r\n\"arguments\":{\"a\":[1,\n2]}}", true),
    ];
    for (params, progress) in cases {
        let options =
            if progress { RequestOptions::default().with_progress() } else { RequestOptions::default() };
        let sent = h.conn.send_request(h.now, "tools/call", Some(params), options);
        check_one_line(&mut h, sent.map(|_| ()), params);
    }
    let sent = h.conn.notify("notifications/custom", Some(b"{\n\"a\": 1\n}"));
    check_one_line(&mut h, sent, b"{\n\"a\": 1\n}");
}

fn check_one_line(h: &mut Harness, sent: Result<(), UsageError>, params: &[u8]) {
    check_sent(h, sent, params, |t| {
        let text = String::from_utf8_lossy(t.bytes()).into_owned();
        assert!(text.ends_with('\n'), "{text:?}");
        assert_eq!(text.matches('\n').count(), 1, "the message spans several lines: {text:?}");
        let message: Value = serde_json::from_slice(t.message()).unwrap();
        let expected: Value = serde_json::from_slice(params).unwrap();
        let got = &message["params"];
        // With a progress token, `_meta` was added; the rest must be the caller's params.
        let mut got = got.clone();
        if let Some(object) = got.as_object_mut() {
            if expected.get("_meta").is_none() {
                object.remove("_meta");
            }
        }
        assert_eq!(got, expected, "params changed: {text:?}");
    });
}

/// A send the engine either refused with `InvalidParams` (then nothing is queued) or queued:
/// then `check` looks at what it queued.
fn check_sent(h: &mut Harness, sent: Result<(), UsageError>, params: &[u8], check: impl FnOnce(&Transmit)) {
    let shown = String::from_utf8_lossy(params);
    match sent {
        Err(UsageError::InvalidParams(_)) => {
            assert!(h.conn.poll_transmit().is_none(), "refused, yet sent: {shown:?}");
        }
        Err(other) => panic!("unexpected refusal {other:?} for {shown:?}"),
        Ok(()) => check(&h.conn.poll_transmit().expect("a transmit")),
    }
}

/// Found by the `feed` target (2 vCPUs, ~400k executions, `--sanitizer none`, after the newline
/// bug above was kept out of the way); minimized input: a connection ready on 2025-11-25, then
/// `send_request("tools/list", Some(b"\"\x90\""), default)`.
///
/// `send_request` checks raw params with `serde_json::from_slice::<IgnoredAny>` (`check_json` in
/// `connection.rs`), which skips over string contents without validating UTF-8, so a string with
/// invalid UTF-8 passes and the engine writes a message that is not JSON (JSON text is UTF-8) —
/// although "nothing malformed is ever written" is what the check is for. `notify` has the same
/// check.
///
/// Fixed behaviour (either is fine): refused with `UsageError::InvalidParams` and nothing sent,
/// or a transmit that is valid JSON.
#[test]
fn raw_params_with_invalid_utf8_are_refused() {
    let mut h = Harness::ready_default("2025-11-25");
    let cases: [&[u8]; 3] = [
        // The minimized fuzz input.
        b"\"\x90\"",
        b"{\"cursor\":\"\xff\xfe\"}",
        b"{\"cursor\":\"caf\xc3\"}",
    ];
    for params in cases {
        let sent = h.conn.send_request(h.now, "tools/list", Some(params), RequestOptions::default());
        check_valid_json(&mut h, sent.map(|_| ()), params);
    }
    let params = b"{\"a\":\"\xc0\xaf\"}";
    let sent = h.conn.notify("notifications/custom", Some(params));
    check_valid_json(&mut h, sent, params);
}

fn check_valid_json(h: &mut Harness, sent: Result<(), UsageError>, params: &[u8]) {
    check_sent(h, sent, params, |t| {
        let parsed = serde_json::from_slice::<Value>(t.message());
        assert!(parsed.is_ok(), "not JSON ({parsed:?}): {:?}", String::from_utf8_lossy(t.bytes()));
    });
}
