//! The shared harness of the integration tests: one client connection driven with simulated time.
//!
//! Time never flows by itself: the harness reads the real clock once, when it is built, and from
//! then on `now` moves only through [`Harness::advance`]. Nothing sleeps.
#![allow(dead_code, clippy::unwrap_used)]

pub(crate) mod tasks;

use std::time::{Duration, Instant};

use mcp_sansio::schema::Implementation;
use mcp_sansio::{ClientConfig, ClientConnection, Event, ProtocolVersion, RequestId};
use serde_json::{Value, json};

/// The capabilities [`Harness::ready`] makes the server declare: everything, subscribe included.
pub(crate) fn full_server_capabilities() -> Value {
    json!({
        "tools": {"listChanged": true},
        "resources": {"subscribe": true, "listChanged": true},
        "prompts": {"listChanged": true},
        "logging": {},
        "completions": {}
    })
}

/// A client configuration with a fixed `clientInfo` and the engine's defaults, pinned to the
/// `initialize` era (newest first), which most suites test; the 2026-07-28 suites choose their
/// versions themselves.
pub(crate) fn config() -> ClientConfig {
    let legacy: Vec<_> = mcp_sansio::ProtocolVersion::LEGACY.iter().rev().copied().collect();
    ClientConfig::new(Implementation::new("test-client", "0.1.0")).with_versions(&legacy)
}

/// The one reading of the real clock: every test starts from it and moves time by hand.
#[allow(clippy::disallowed_methods)]
pub(crate) fn epoch() -> Instant {
    Instant::now()
}

/// A server's `initialize` result line for request 0.
pub(crate) fn init_result(version: &str, capabilities: Value) -> String {
    json!({
        "jsonrpc": "2.0",
        "id": 0,
        "result": {
            "protocolVersion": version,
            "capabilities": capabilities,
            "serverInfo": {"name": "test-server", "version": "9.9.9"},
            "instructions": "Use the tools wisely."
        }
    })
    .to_string()
}

/// A response line with a result.
pub(crate) fn result_line(id: impl Into<Value>, result: Value) -> String {
    json!({"jsonrpc": "2.0", "id": id.into(), "result": result}).to_string()
}

/// A notification line.
pub(crate) fn notification_line(method: &str, params: Value) -> String {
    json!({"jsonrpc": "2.0", "method": method, "params": params}).to_string()
}

/// A request line (server → client).
pub(crate) fn request_line(id: impl Into<Value>, method: &str, params: Value) -> String {
    json!({"jsonrpc": "2.0", "id": id.into(), "method": method, "params": params}).to_string()
}

/// A `notifications/progress` line.
pub(crate) fn progress_line(token: impl Into<Value>, progress: f64) -> String {
    notification_line("notifications/progress", json!({"progressToken": token.into(), "progress": progress}))
}

/// One client connection, its simulated clock, and helpers to talk to it as the server.
pub(crate) struct Harness {
    pub(crate) conn: ClientConnection,
    pub(crate) now: Instant,
    pub(crate) start: Instant,
}

impl Harness {
    /// A fresh connection: the `initialize` request is queued, nothing is drained yet.
    pub(crate) fn new(config: ClientConfig) -> Self {
        let start = epoch();
        Self { conn: ClientConnection::new(config, start), now: start, start }
    }

    /// A connection with the default test config, after a handshake on `version`.
    pub(crate) fn ready_default(version: &str) -> Self {
        let mut h = Self::new(config());
        h.ready(version);
        h
    }

    /// How much simulated time has passed since the connection was made.
    pub(crate) fn elapsed(&self) -> Duration {
        self.now - self.start
    }

    /// Moves the clock forward and lets the engine process every deadline that passed.
    pub(crate) fn advance(&mut self, by: Duration) {
        self.now += by;
        self.conn.handle_timeout(self.now);
    }

    /// Feeds one server message, newline-terminated, at the current time.
    pub(crate) fn server(&mut self, line: &str) {
        let mut bytes = line.as_bytes().to_vec();
        bytes.push(b'\n');
        self.conn.feed(self.now, &bytes);
    }

    /// Feeds raw bytes at the current time.
    pub(crate) fn feed(&mut self, bytes: &[u8]) {
        self.conn.feed(self.now, bytes);
    }

    /// Drains every transmit as raw text, checking the framing: one `\n`, at the end.
    pub(crate) fn sent_lines(&mut self) -> Vec<String> {
        let mut out = Vec::new();
        while let Some(t) = self.conn.poll_transmit() {
            let text = String::from_utf8(t.bytes().to_vec()).expect("transmits are UTF-8");
            assert!(text.ends_with('\n'), "a transmit must end in a newline: {text:?}");
            assert_eq!(text.matches('\n').count(), 1, "a transmit must be one line: {text:?}");
            assert_eq!(t.message(), &t.bytes()[..t.bytes().len() - 1]);
            out.push(text);
        }
        out
    }

    /// Drains every transmit, parsed as JSON.
    pub(crate) fn sent(&mut self) -> Vec<Value> {
        self.sent_lines()
            .iter()
            .map(|line| serde_json::from_str(line).expect("transmits are valid JSON"))
            .collect()
    }

    /// Drains every event.
    pub(crate) fn events(&mut self) -> Vec<Event> {
        std::iter::from_fn(|| self.conn.poll_event()).collect()
    }

    /// Asserts that nothing was transmitted and no event happened.
    pub(crate) fn assert_quiet(&mut self) {
        let sent = self.sent();
        assert!(sent.is_empty(), "unexpected transmits: {sent:?}");
        let events = self.events();
        assert!(events.is_empty(), "unexpected events: {events:?}");
    }

    /// Completes the handshake with a server answering `version` and declaring every capability.
    pub(crate) fn ready(&mut self, version: &str) {
        self.ready_with(&init_result(version, full_server_capabilities()));
    }

    /// Completes the handshake with `line` as the server's `initialize` response.
    pub(crate) fn ready_with(&mut self, line: &str) {
        // The `initialize` request may or may not have been drained already; nothing else may wait.
        let sent = self.sent();
        assert!(sent.iter().all(|m| m["method"] == "initialize" && m["id"] == 0), "{sent:?}");
        self.server(line);
        let events = self.events();
        let expected: ProtocolVersion =
            serde_json::from_str::<Value>(line).unwrap()["result"]["protocolVersion"]
                .as_str()
                .unwrap()
                .parse()
                .unwrap();
        assert!(
            matches!(events.as_slice(), [Event::Ready { protocol_version }] if *protocol_version == expected),
            "{events:?}"
        );
        assert_eq!(self.sent(), [json!({"jsonrpc": "2.0", "method": "notifications/initialized"})]);
    }
}

/// The numeric value of an engine-issued id.
pub(crate) fn num(id: &RequestId) -> i64 {
    match id {
        RequestId::Number(n) => *n,
        RequestId::String(s) => panic!("the engine issues numeric ids, got {s:?}"),
    }
}
