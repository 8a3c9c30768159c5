//! The demo server with one deliberate protocol violation, for showing that `mcp-conformance
//! check` finds and shrinks real bugs. Usage: `planted_bug_server BUG`, where BUG is
//!
//! - `wrong-id`: a `tools/call` of `echo` with an empty `message` (a boundary value) is answered
//!   with the wrong id (the request's id plus 1000);
//! - `crash`: a `tools/call` of `add` where `a` or `b` is 10^15 or more in size makes the process
//!   exit at once, as an unchecked overflow would.
//!
//! Everything else is the demo server over stdio, unchanged.

use std::io::{self, BufRead, Read, Write};
use std::process::ExitCode;
use std::sync::{Arc, Mutex};

use serde_json::Value;

#[derive(Clone, Copy, PartialEq, Eq)]
enum Bug {
    WrongId,
    Crash,
}

/// Reads stdin for the server, watching each request for the bug's trigger.
struct Watch<R> {
    inner: R,
    bug: Bug,
    /// Ids of requests whose response gets the wrong id.
    marked: Arc<Mutex<Vec<Value>>>,
}

impl<R: BufRead> Read for Watch<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let available = self.fill_buf()?;
        let n = available.len().min(buf.len());
        buf[..n].copy_from_slice(&available[..n]);
        self.consume(n);
        Ok(n)
    }
}

impl<R: BufRead> BufRead for Watch<R> {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        self.inner.fill_buf()
    }

    fn consume(&mut self, amount: usize) {
        self.inner.consume(amount)
    }

    fn read_until(&mut self, byte: u8, line: &mut Vec<u8>) -> io::Result<usize> {
        let n = self.inner.read_until(byte, line)?;
        if let Ok(message) = serde_json::from_slice::<Value>(line) {
            self.inspect(&message);
        }
        Ok(n)
    }
}

impl<R> Watch<R> {
    fn inspect(&self, message: &Value) {
        if message.get("method").and_then(Value::as_str) != Some("tools/call") {
            return;
        }
        let tool = message.pointer("/params/name").and_then(Value::as_str);
        let argument = |name: &str| message.pointer(&format!("/params/arguments/{name}"));
        match (self.bug, tool) {
            (Bug::WrongId, Some("echo")) if argument("message").and_then(Value::as_str) == Some("") => {
                if let Some(id) = message.get("id") {
                    self.marked.lock().unwrap_or_else(|e| e.into_inner()).push(id.clone());
                }
            }
            (Bug::Crash, Some("add")) => {
                let huge =
                    |name: &str| argument(name).and_then(Value::as_f64).is_some_and(|x| x.abs() >= 1e15);
                if huge("a") || huge("b") {
                    eprintln!("planted bug: overflow in add");
                    std::process::exit(101);
                }
            }
            _ => {}
        }
    }
}

/// Writes the server's output, giving marked responses the wrong id.
struct Rewrite {
    inner: io::Stdout,
    marked: Arc<Mutex<Vec<Value>>>,
    line: Vec<u8>,
}

impl Write for Rewrite {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.line.extend_from_slice(buf);
        while let Some(end) = self.line.iter().position(|b| *b == b'\n') {
            let line: Vec<u8> = self.line.drain(..=end).collect();
            let mut out = line.clone();
            if let Ok(mut message) = serde_json::from_slice::<Value>(&line) {
                let mut marked = self.marked.lock().unwrap_or_else(|e| e.into_inner());
                let hit = message.get("method").is_none()
                    && message.get("id").is_some_and(|id| marked.contains(id));
                if hit {
                    let id = message["id"].clone();
                    marked.retain(|m| *m != id);
                    message["id"] = Value::from(id.as_i64().unwrap_or(0) + 1000);
                    out = serde_json::to_vec(&message).unwrap_or(line);
                    out.push(b'\n');
                }
            }
            self.inner.write_all(&out)?;
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

fn main() -> ExitCode {
    let bug = match std::env::args().nth(1).as_deref() {
        Some("wrong-id") => Bug::WrongId,
        Some("crash") => Bug::Crash,
        _ => {
            eprintln!("usage: planted_bug_server wrong-id|crash");
            return ExitCode::from(2);
        }
    };
    let marked = Arc::new(Mutex::new(Vec::new()));
    let input = Watch { inner: io::stdin().lock(), bug, marked: Arc::clone(&marked) };
    let output = Rewrite { inner: io::stdout(), marked, line: Vec::new() };
    match mcp_demo_server::serve(input, Box::new(output), mcp_demo_server::Options::default()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("planted_bug_server: {e}");
            ExitCode::FAILURE
        }
    }
}
