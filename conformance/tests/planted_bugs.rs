//! The planted bugs of `examples/planted_bug_server.rs`, checked at the wire level against real
//! child processes: each bug shows, and the demo server (`demo_peer`) does not have it.
//!
//! Every wait is a timeout on a read of the server's stdout. A test that expects silence waits
//! a fixed time for nothing to arrive; every other wait ends as soon as the line it waits for
//! arrives.

mod demo;

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use demo::example;
use serde_json::{Value, json};

/// How long to wait for a line that should come.
const ANSWER: Duration = Duration::from_secs(2);

/// How long to wait for a line that should not come.
const SILENCE: Duration = Duration::from_millis(500);

/// A server as a child process over stdio, killed (by PID) when dropped.
struct Server {
    child: Child,
    stdin: ChildStdin,
    lines: Receiver<Value>,
    stderr: Arc<Mutex<String>>,
}

impl Server {
    fn start(program: &Path, args: &[&str]) -> Self {
        let mut child = Command::new(program)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start the server");
        let stdin = child.stdin.take().expect("piped stdin");
        let stdout = child.stdout.take().expect("piped stdout");
        let (sender, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                let message = serde_json::from_str(&line).unwrap_or(Value::String(line));
                if sender.send(message).is_err() {
                    break;
                }
            }
        });
        let stderr = demo::collect_stderr(&mut child);
        Self { child, stdin, lines, stderr }
    }

    /// The planted-bug server with `bugs` (a comma-separated list).
    fn planted(bugs: &str) -> Self {
        Self::start(&example("planted_bug_server"), &[bugs])
    }

    /// The demo server itself.
    fn demo() -> Self {
        Self::start(&example("demo_peer"), &[])
    }

    /// Sends the lines in one write, so that they reach the server together.
    fn send(&mut self, lines: &[&str]) {
        let mut bytes = String::new();
        for line in lines {
            bytes.push_str(line);
            bytes.push('\n');
        }
        self.stdin.write_all(bytes.as_bytes()).expect("write to the server");
        self.stdin.flush().expect("flush");
    }

    /// The next line the server writes, within `timeout`.
    fn next(&self, timeout: Duration) -> Result<Value, RecvTimeoutError> {
        self.lines.recv_timeout(timeout)
    }

    /// The next line, which must come within [`ANSWER`].
    fn answer(&self) -> Value {
        self.next(ANSWER).unwrap_or_else(|e| panic!("no answer ({e:?}); stderr: {}", self.stderr()))
    }

    /// Asserts that the server writes nothing for [`SILENCE`].
    fn assert_silent(&self) {
        if let Ok(line) = self.next(SILENCE) {
            panic!("expected silence, got {line}");
        }
    }

    /// `initialize` and `notifications/initialized`.
    fn handshake(&mut self) {
        self.send(&[
            r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#,
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        ]);
        let answer = self.answer();
        assert_eq!(answer["id"], 1, "{answer}");
        assert_eq!(answer["result"]["serverInfo"]["name"], "mcp-demo-server", "{answer}");
    }

    /// Waits for the process to exit (its stdout closes) and returns its status.
    fn exit_status(&mut self) -> ExitStatus {
        loop {
            match self.next(ANSWER) {
                Ok(_) => {}
                Err(RecvTimeoutError::Disconnected) => break,
                Err(RecvTimeoutError::Timeout) => panic!("the server did not exit"),
            }
        }
        self.child.wait().expect("wait for the server")
    }

    fn alive(&mut self) -> bool {
        self.child.try_wait().expect("try_wait").is_none()
    }

    fn stderr(&self) -> String {
        self.stderr.lock().unwrap().clone()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn sleep_call(id: u64, ms: u64) -> String {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": "sleep", "arguments": {"ms": ms}}})
        .to_string()
}

fn cancel(id: u64) -> String {
    json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": id, "reason": "timed out"}})
        .to_string()
}

fn ping(id: u64) -> String {
    json!({"jsonrpc": "2.0", "id": id, "method": "ping"}).to_string()
}

/// A long sleep, its cancellation and a ping, as a client that timed the call out sends them.
fn time_out_a_sleep(server: &mut Server, ms: u64) {
    server.send(&[&sleep_call(2, ms), &cancel(2), &ping(3)]);
}

#[test]
fn the_demo_answers_a_ping_after_a_cancelled_sleep() {
    let mut server = Server::demo();
    server.handshake();
    time_out_a_sleep(&mut server, 60_000);
    let answer = server.answer();
    assert_eq!(answer, json!({"jsonrpc": "2.0", "id": 3, "result": {}}), "the ping's answer first");
    // The cancelled call is never answered, and the server goes on answering.
    server.send(&[&ping(4)]);
    assert_eq!(server.answer()["id"], 4);
    assert!(server.alive());
}

#[test]
fn blocking_sleep_answers_nothing_until_the_sleep_is_over() {
    let mut server = Server::planted("blocking-sleep");
    server.handshake();
    let sent = Instant::now();
    time_out_a_sleep(&mut server, 1500);
    // The reader sleeps before it reads the cancellation: the call is answered after all.
    let slept = server.answer();
    assert_eq!(slept["id"], 2, "{slept}");
    assert_eq!(slept["result"]["content"][0]["text"], "slept 1500 ms", "{slept}");
    let pong = server.answer();
    assert_eq!(pong["id"], 3, "{pong}");
    let waited = sent.elapsed();
    assert!(waited >= Duration::from_millis(1500), "the ping was answered after {waited:?}");
}

#[test]
fn blocking_sleep_blocks_the_reader() {
    let mut server = Server::planted("blocking-sleep");
    server.handshake();
    server.send(&[&sleep_call(2, 2000), &ping(3)]);
    // While the sleep lasts, not even a ping is answered.
    server.assert_silent();
    assert!(server.alive());
}

#[test]
fn cancel_answer_answers_a_call_cancelled_at_once_with_32800_and_runs_the_others() {
    let mut server = Server::planted("cancel-answer");
    server.handshake();
    let invalid =
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":null}}"#;
    server.send(&[invalid, &cancel(2)]);
    let answer = server.answer();
    assert_eq!((&answer["id"], &answer["error"]["code"]), (&json!(2), &json!(-32800)), "{answer}");
    // The same call, not cancelled, is refused as the demo refuses it.
    server.send(&[&invalid.replace(r#""id":2"#, r#""id":3"#)]);
    let answer = server.answer();
    assert_eq!((&answer["id"], &answer["error"]["code"]), (&json!(3), &json!(-32602)), "{answer}");
}

#[test]
fn deaf_after_cancel_stops_writing_but_stays_alive() {
    let mut server = Server::planted("deaf-after-cancel");
    server.handshake();
    time_out_a_sleep(&mut server, 60_000);
    server.assert_silent();
    server.send(&[&ping(4)]);
    server.assert_silent();
    assert!(server.alive(), "the server is still running");
}

#[test]
fn deaf_after_cancel_needs_a_request_not_answered_yet() {
    let mut server = Server::planted("deaf-after-cancel");
    server.handshake();
    server.send(&[&ping(2)]);
    assert_eq!(server.answer()["id"], 2);
    // A cancellation that comes after the answer, or names no request, changes nothing.
    server.send(&[&cancel(2), &cancel(99), &ping(3)]);
    assert_eq!(server.answer()["id"], 3);
}

#[test]
fn dies_after_cancel_exits_on_a_cancellation() {
    let mut server = Server::planted("dies-after-cancel");
    server.handshake();
    time_out_a_sleep(&mut server, 60_000);
    let status = server.exit_status();
    assert_eq!(status.code(), Some(101), "{status:?}");
    // The thread that collects stderr may read the last words a moment after the exit.
    let start = Instant::now();
    while !server.stderr().contains("notifications/cancelled") && start.elapsed() < ANSWER {
        std::thread::sleep(Duration::from_millis(10));
    }
    assert!(server.stderr().contains("notifications/cancelled"), "stderr: {}", server.stderr());
}

#[test]
fn the_demo_answers_malformed_json_and_unknown_methods() {
    let mut server = Server::demo();
    server.handshake();
    server.send(&["{not json", r#"{"jsonrpc":"2.0","id":2,"method":"no/such/method"}"#]);
    let parse_error = server.answer();
    assert_eq!(parse_error["id"], Value::Null, "{parse_error}");
    assert_eq!(parse_error["error"]["code"], -32700, "{parse_error}");
    let unknown = server.answer();
    assert_eq!(unknown["id"], 2, "{unknown}");
    assert_eq!(unknown["error"]["code"], -32601, "{unknown}");
}

#[test]
fn silent_parse_error_does_not_answer_malformed_json() {
    let mut server = Server::planted("silent-parse-error");
    server.handshake();
    server.send(&["{not json", &ping(2)]);
    // The ping's answer is the first line: nothing came for the malformed one.
    assert_eq!(server.answer(), json!({"jsonrpc": "2.0", "id": 2, "result": {}}));
}

#[test]
fn internal_error_for_unknown_method_answers_32603() {
    let mut server = Server::planted("internal-error-for-unknown-method");
    server.handshake();
    server.send(&[r#"{"jsonrpc":"2.0","id":2,"method":"no/such/method"}"#]);
    let answer = server.answer();
    assert_eq!(answer["id"], 2, "{answer}");
    assert_eq!(answer["error"]["code"], -32603, "{answer}");
}

#[test]
fn bugs_combine_and_stay_independent() {
    let mut server = Server::planted("silent-parse-error,internal-error-for-unknown-method,wrong-id");
    server.handshake();
    server.send(&[
        "{not json",
        r#"{"jsonrpc":"2.0","id":2,"method":"no/such/method"}"#,
        r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{"message":""}}}"#,
        r#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"echo","arguments":{"message":"hi"}}}"#,
        &cancel(4),
        &ping(5),
    ]);
    assert_eq!(server.answer()["error"]["code"], -32603);
    assert_eq!(server.answer()["id"], 1003, "wrong-id");
    assert_eq!(server.answer()["result"]["content"][0]["text"], "hi");
    assert_eq!(server.answer()["id"], 5, "a cancellation does nothing without the cancel bugs");
}

#[test]
fn unknown_bug_names_are_a_usage_error() {
    for args in [&["no-such-bug"][..], &["crash,no-such-bug"], &[""], &[]] {
        let output = Command::new(example("planted_bug_server"))
            .args(args)
            .stdin(Stdio::null())
            .output()
            .expect("run planted_bug_server");
        assert_eq!(output.status.code(), Some(2), "{args:?}");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(stderr.contains("usage: planted_bug_server BUG[,BUG...]"), "{args:?}: {stderr}");
        assert!(output.stdout.is_empty(), "{args:?}");
    }
}
