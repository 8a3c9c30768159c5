//! Property tests on the byte stream: (a) however a realistic session is split into chunks, the
//! engine produces the same events and writes the same bytes; (b) arbitrary bytes, and JSON-ish
//! noise built from protocol fragments, fed in arbitrary chunks with time moving, never panic,
//! every request gets exactly one response event, and EOF leaves the connection closed and empty.
#![allow(clippy::unwrap_used)]

mod common;

use std::collections::BTreeMap;
use std::time::Duration;

use common::{Harness, config, init_result};
use mcp_sansio::schema::{ClientCapabilities, JsonObject, ListChangedCapability};
use mcp_sansio::{ClientConfig, Event, RequestId, RequestOptions, Stats};
use proptest::prelude::*;
use proptest::sample::Index;
use serde_json::json;

fn client_config() -> ClientConfig {
    let capabilities = ClientCapabilities {
        roots: Some(ListChangedCapability::default()),
        sampling: Some(JsonObject::new()),
        elicitation: Some(JsonObject::new()),
        ..Default::default()
    };
    config().with_capabilities(capabilities).with_max_message_size(512)
}

/// What the server says before the client sends its requests (the handshake and chatter).
fn phase_one() -> String {
    let init = init_result("2025-03-26", json!({"tools": {}, "resources": {}}));
    [
        "\n",
        &init,
        "\r\n\n  \n",
        r#"{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"hi"}}"#,
        "\n",
        r#"{"jsonrpc":"2.0","id":"s1","method":"ping"}"#,
        "\n",
        r#"{"jsonrpc":"2.0","id":"s2","method":"roots/list"}"#,
        "\n{not json}\n",
    ]
    .concat()
}

/// What the server says once the client's requests 1, 2 and 3 are out; the last line is
/// unterminated and only processed at EOF.
fn phase_two() -> String {
    [
        r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":2,"progress":1,"total":4}}"#,
        "\r\n",
        r#"[{"jsonrpc":"2.0","id":1,"result":{"tools":[]}},{"jsonrpc":"2.0","method":"notifications/tools/list_changed"},{"jsonrpc":"2.0","id":"s3","method":"ping"}]"#,
        "\n\r\n\n",
        &format!(r#"{{"jsonrpc":"2.0","method":"x","params":"{}"}}"#, "o".repeat(600)),
        "\r\n",
        r#"{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"done"}]}}"#,
        "\r\n",
        r#"{"jsonrpc":"2.0","id":99,"result":{}}"#,
        "\n",
        r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"s2","reason":"r"}}"#,
        "\n",
        r#"{"jsonrpc":"2.0","method":"notifications/elicitation/complete","params":{"elicitationId":"e"}}"#,
        "\n",
        r#"{"jsonrpc":"2.0","id":3,"error":{"code":-32601,"message":"Method not found"}}"#,
    ]
    .concat()
}

#[derive(Debug, PartialEq)]
struct Outcome {
    events: Vec<String>,
    written: Vec<String>,
    stats: Stats,
}

/// Splits `bytes` at the given points (taken modulo the length, in order, deduplicated).
fn chunks<'a>(bytes: &'a [u8], cuts: &[Index]) -> Vec<&'a [u8]> {
    let mut points: Vec<usize> = cuts.iter().map(|i| i.index(bytes.len() + 1)).collect();
    points.sort_unstable();
    points.dedup();
    let mut out = Vec::new();
    let mut from = 0;
    for p in points {
        out.push(&bytes[from..p]);
        from = p;
    }
    out.push(&bytes[from..]);
    out
}

fn run_session(first: &[&[u8]], second: &[&[u8]]) -> Outcome {
    let mut h = Harness::new(client_config());
    let mut events = Vec::new();
    let mut written = Vec::new();
    let mut drain = |h: &mut Harness| {
        events.extend(h.events().iter().map(|e| format!("{e:?}")));
        written.extend(h.sent_lines());
    };
    drain(&mut h);
    for c in first {
        h.feed(c);
        drain(&mut h);
    }
    for method in ["tools/list", "tools/call", "vendor/x"] {
        h.conn.send_request(h.now, method, Some(b"{}"), RequestOptions::default().with_progress()).unwrap();
    }
    for c in second {
        h.feed(c);
        drain(&mut h);
    }
    h.conn.feed_eof(h.now);
    drain(&mut h);
    Outcome { events, written, stats: h.conn.stats() }
}

fn reference() -> Outcome {
    run_session(&[phase_one().as_bytes()], &[phase_two().as_bytes()])
}

#[test]
fn the_reference_session_is_what_it_should_be() {
    // Guard the property below against comparing two equally wrong runs.
    let outcome = reference();
    let kinds: Vec<&str> = outcome.events.iter().map(|e| e.split(['(', ' ', '{']).next().unwrap()).collect();
    assert_eq!(
        kinds,
        [
            "Ready",
            "Notification",
            "Request",
            "ProtocolViolation",
            "Progress",
            "Response",
            "Notification",
            "ProtocolViolation",
            "Response",
            "ProtocolViolation",
            "ServerRequestCancelled",
            "Notification",
            "Response",
            "Closed"
        ],
        "{:#?}",
        outcome.events
    );
    assert!(outcome.events[3].contains("excerpt: Some(\"{not json}\")"), "{}", outcome.events[3]);
    assert!(outcome.events[7].contains("Oversized"), "{}", outcome.events[7]);
    assert!(outcome.events[9].contains("UnknownResponse { id: Number(99) }"), "{}", outcome.events[9]);
    assert_eq!(
        outcome.written,
        [
            "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"2025-11-25\",\"capabilities\":{\"roots\":{},\"sampling\":{},\"elicitation\":{}},\"clientInfo\":{\"name\":\"test-client\",\"version\":\"0.1.0\"}}}\n",
            "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n",
            "{\"jsonrpc\":\"2.0\",\"id\":\"s1\",\"result\":{}}\n",
            "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\",\"params\":{\"_meta\":{\"progressToken\":1}}}\n",
            "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"_meta\":{\"progressToken\":2}}}\n",
            "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"vendor/x\",\"params\":{\"_meta\":{\"progressToken\":3}}}\n",
            "{\"jsonrpc\":\"2.0\",\"id\":\"s3\",\"result\":{}}\n",
        ]
    );
    assert_eq!(outcome.stats.unknown_responses, 1);
    assert_eq!(outcome.stats.oversized_messages, 1);
}

proptest! {
    #[test]
    fn any_chunking_gives_the_same_events_and_bytes(
        cuts_one in prop::collection::vec(any::<Index>(), 0..40),
        cuts_two in prop::collection::vec(any::<Index>(), 0..60),
    ) {
        let one = phase_one();
        let two = phase_two();
        let got = run_session(&chunks(one.as_bytes(), &cuts_one), &chunks(two.as_bytes(), &cuts_two));
        prop_assert_eq!(got, reference());
    }
}

#[test]
fn every_fixed_chunk_size_gives_the_same_events() {
    let one = phase_one();
    let two = phase_two();
    let expected = reference();
    for size in 1..=80 {
        let a: Vec<&[u8]> = one.as_bytes().chunks(size).collect();
        let b: Vec<&[u8]> = two.as_bytes().chunks(size).collect();
        assert_eq!(run_session(&a, &b), expected, "chunk size {size}");
    }
}

// ----- (b) noise never breaks the engine -----

const FRAGMENTS: &[&str] = &[
    "{",
    "}",
    "[",
    "]",
    ",",
    ":",
    " ",
    "\n",
    "\r\n",
    "\r",
    "\"",
    "\\",
    "null",
    "true",
    "0",
    "1",
    "2",
    "3",
    "-1",
    "1.5",
    "1e400",
    "99999999999999999999",
    "\"s1\"",
    "\"\\u0000\"",
    "é",
    "\"jsonrpc\":\"2.0\"",
    "\"jsonrpc\":\"1.0\"",
    "\"id\":",
    "\"method\":",
    "\"params\":",
    "\"result\":",
    "\"error\":",
    "\"ping\"",
    "\"roots/list\"",
    "\"sampling/createMessage\"",
    "\"elicitation/create\"",
    "\"notifications/progress\"",
    "\"notifications/cancelled\"",
    "\"notifications/message\"",
    "\"tools/list\"",
    "{\"code\":-32601,\"message\":\"x\"}",
    "{\"progressToken\":1,\"progress\":0.5}",
    "{\"progressToken\":2,\"progress\":1}",
    "{\"requestId\":\"s1\"}",
    "{\"requestId\":1}",
    "{\"level\":\"info\",\"data\":1}",
    "{\"messages\":[],\"maxTokens\":1}",
    "{\"message\":\"m\"}",
    "\"protocolVersion\":\"2025-11-25\"",
    "\"capabilities\":{}",
    "\"serverInfo\":{\"name\":\"s\",\"version\":\"1\"}",
    "{\"jsonrpc\":\"2.0\",\"id\":0,\"result\":{\"protocolVersion\":\"2025-06-18\",\"capabilities\":{\"tools\":{}},\"serverInfo\":{\"name\":\"s\",\"version\":\"1\"}}}\n",
    "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n",
    "{\"jsonrpc\":\"2.0\",\"id\":\"r\",\"method\":\"roots/list\"}\n",
    "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":{\"requestId\":\"r\"}}\n",
    "[{\"jsonrpc\":\"2.0\",\"id\":2,\"error\":{\"code\":1,\"message\":\"m\"}},",
];

fn grammar() -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec(prop::sample::select(FRAGMENTS), 0..120)
        .prop_map(|parts| parts.concat().into_bytes())
}

// `prop_oneof!` builds its union with an `Arc` inside; the engine's ban on shared state does not
// concern the test's strategy.
#[allow(clippy::disallowed_types)]
fn noise() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![prop::collection::vec(any::<u8>(), 0..1500), grammar()]
}

/// Feeds `bytes` in chunks, moving time between them, then EOF; checks the invariants.
fn survive(
    mut h: Harness,
    sent: Vec<RequestId>,
    bytes: &[u8],
    cuts: &[(Index, u8)],
) -> Result<(), TestCaseError> {
    let indices: Vec<Index> = cuts.iter().map(|(i, _)| *i).collect();
    let mut events = Vec::new();
    for (n, chunk) in chunks(bytes, &indices).into_iter().enumerate() {
        h.feed(chunk);
        if let Some(&(_, secs)) = cuts.get(n) {
            h.advance(Duration::from_secs(u64::from(secs)));
        }
        events.extend(h.events());
        // Whatever was written is framed JSON (sent_lines checks the framing).
        for line in h.sent_lines() {
            prop_assert!(serde_json::from_str::<serde_json::Value>(&line).is_ok(), "{}", line);
        }
        if let Some(deadline) = h.conn.poll_timeout() {
            prop_assert!(deadline >= h.start);
        }
    }
    h.conn.feed_eof(h.now);
    events.extend(h.events());
    prop_assert!(h.conn.is_closed());
    prop_assert_eq!(h.conn.pending(), 0);
    prop_assert_eq!(h.conn.poll_timeout(), None);
    prop_assert!(h.conn.poll_transmit().is_none());
    // Exactly one Closed, last.
    let closed = events.iter().filter(|e| matches!(e, Event::Closed(_))).count();
    prop_assert_eq!(closed, 1, "{:?}", events);
    prop_assert!(matches!(events.last(), Some(Event::Closed(_))));
    // Every request the application sent finished exactly once.
    let mut responses = BTreeMap::<RequestId, usize>::new();
    for e in &events {
        if let Event::Response { id, .. } = e {
            *responses.entry(id.clone()).or_default() += 1;
        }
    }
    let expected: BTreeMap<RequestId, usize> = sent.into_iter().map(|id| (id, 1)).collect();
    prop_assert_eq!(responses, expected);
    // And nothing is accepted afterwards.
    h.feed(b"{\"jsonrpc\":\"2.0\",\"id\":\"z\",\"method\":\"ping\"}\n");
    prop_assert!(h.conn.poll_transmit().is_none());
    prop_assert!(h.conn.poll_event().is_none());
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn noise_on_a_fresh_connection_never_panics(
        bytes in noise(),
        cuts in prop::collection::vec((any::<Index>(), 0u8..40), 0..30),
    ) {
        let h = Harness::new(client_config().with_handshake_timeout(Duration::from_secs(300)));
        survive(h, Vec::new(), &bytes, &cuts)?;
    }

    #[test]
    fn noise_on_a_ready_connection_never_panics(
        bytes in noise(),
        cuts in prop::collection::vec((any::<Index>(), 0u8..40), 0..30),
    ) {
        let mut h = Harness::new(client_config().with_keep_alive(Duration::from_secs(45)));
        h.ready_with(&init_result("2025-11-25", json!({"tools": {}})));
        let sent = vec![
            h.conn.send_request(h.now, "tools/list", None, RequestOptions::default()).unwrap(),
            h.conn.send_request(h.now, "tools/call", Some(b"{}"), RequestOptions::default().with_progress()).unwrap(),
            h.conn
                .send_request(h.now, "vendor/x", None, RequestOptions::default().timeout(Duration::from_secs(30)))
                .unwrap(),
        ];
        h.sent();
        survive(h, sent, &bytes, &cuts)?;
    }
}
