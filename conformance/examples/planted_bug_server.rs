//! The demo server with deliberate protocol violations, for showing that `mcp-conformance`
//! finds real bugs. Usage: `planted_bug_server BUG[,BUG…]`, a comma-separated list of the
//! bugs below. Each one is independent of the others; a name may be given once or more.
//!
//! - `wrong-id`: a `tools/call` of `echo` with an empty `message` (a boundary value) is answered
//!   with the wrong id (the request's id plus 1000).
//! - `crash`: a `tools/call` of `add` where `a` or `b` is 10^15 or more in size makes the process
//!   exit at once (code 101), as an unchecked overflow would.
//! - `blocking-sleep`: a `tools/call` of `sleep` (`{"ms": N}`) runs inline, in the thread that
//!   reads stdin. That thread sleeps N ms (at most one hour), ignoring cancellation, so nothing
//!   else is read or answered meanwhile. Then the call is answered with `slept N ms`, as the
//!   demo answers it, and only then is the next line read: a `notifications/cancelled` for the
//!   call comes too late and changes nothing. A client that times the call out, cancels it and
//!   pings gets no answer to the ping until the N ms are over. (A request for more than an hour
//!   is passed on unchanged after the hour, and the demo handles it as usual.)
//! - `deaf-after-cancel`: once a `notifications/cancelled` arrives that names a request the
//!   server has not answered yet, the server writes nothing more to stdout. It keeps reading
//!   stdin and stays alive until stdin closes.
//! - `dies-after-cancel`: any `notifications/cancelled` makes the process exit at once, with
//!   code 101 and a line on stderr.
//! - `silent-parse-error`: malformed JSON gets no answer: the server's `-32700` error responses
//!   (with a null id) are dropped. The stdio transports of the official TypeScript and Python
//!   SDKs behave this way.
//! - `internal-error-for-unknown-method`: an unknown method is answered with `-32603` instead of
//!   `-32601`: the code of every `-32601` error response is rewritten, the message is kept.
//!
//! - `pattern-mismatch`: the tool of `pattern-tool` (below) answers `{"version": "v0.1"}`, a
//!   string, as its `outputSchema` says, but one that does not match the schema's `pattern`.
//!   Only a validator that reads `pattern` sees it: `mcp-conformance check`, and the client
//!   with `validate_output`.
//!
//! One name is not a bug but an extra tool, to test `outputSchema` validation on something only
//! a `pattern` constrains:
//!
//! - `pattern-tool`: `tools/list` lists one more tool, last, `version` (no arguments), whose
//!   `outputSchema` says `{"version": <string matching ^[0-9]+\.[0-9]+\.[0-9]+$>}`; a call with
//!   no arguments (or `{}`) is answered `{"version": "0.1.0"}`, as structured content and as
//!   text. Other arguments are passed to the demo's `echo`, which refuses them with `-32602`.
//!
//! One name is not a bug but the server's "next release", for the regression workflow of
//! `docs/conformance.md` (a trace recorded against the demo, replayed with
//! `examples/regression.rules`):
//!
//! - `next-version`: three changes that a rules file can allow, and nothing else:
//!   - the server's version is `0.2.0`: in `serverInfo` (the `initialize` result) and in the
//!     `io.modelcontextprotocol/serverInfo` member of a result's `_meta` (2026-07-28);
//!   - the `tools/list` result lists the tools sorted by name, where the demo lists them in
//!     the order of its table;
//!   - the PNG in tool results (`tiny_image`, `mixed_content`) is re-encoded: the same 4×4
//!     pixels and the same 98 bytes, compressed at another zlib level, so its base64 `data`
//!     differs.
//!
//! One name is not a bug but a behaviour of the official Python SDK's 2025-era HTTP transport,
//! which answers a cancelled request with error `-32800` instead of staying silent:
//!
//! - `cancel-answer`: a `tools/call` followed within 100 ms by a `notifications/cancelled` that
//!   names it is not run: it is answered with error `-32800` (`Request cancelled`), as when the
//!   cancellation overtakes the call before its arguments are validated. Every other
//!   `tools/call` is run as usual, at most 100 ms later.
//!
//! Everything else is the demo server over stdio, unchanged. An unknown name prints the usage on
//! stderr and exits with code 2.

use std::io::{self, BufRead, Read, Write};
use std::process::ExitCode;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, mpsc};
use std::time::Duration;

use serde_json::Value;

const USAGE: &str = "\
usage: planted_bug_server BUG[,BUG...]
bugs: wrong-id, crash, blocking-sleep, deaf-after-cancel, dies-after-cancel,
      silent-parse-error, internal-error-for-unknown-method, pattern-mismatch,
      pattern-tool (not a bug: one more tool, whose outputSchema has a pattern),
      next-version (not a bug: the demo server's next release),
      cancel-answer (not a bug: a call cancelled at once is answered -32800)";

/// How long `cancel-answer` waits, after a `tools/call`, for a cancellation of it.
const CANCEL_WINDOW: Duration = Duration::from_millis(100);

/// The error `cancel-answer` answers a cancelled call with.
const REQUEST_CANCELLED: i64 = -32800;

/// The longest inline sleep of `blocking-sleep`.
const MAX_INLINE_SLEEP: Duration = Duration::from_secs(3600);

/// The `version` tool of `pattern-tool`: its name, its output schema's pattern, and what it
/// answers with and without `pattern-mismatch`.
const PATTERN_TOOL: &str = "version";
const VERSION_PATTERN: &str = "^[0-9]+\\.[0-9]+\\.[0-9]+$";
const VERSION: &str = "0.1.0";
const MISMATCHED_VERSION: &str = "v0.1";

/// The version `next-version` reports.
const NEXT_VERSION: &str = "0.2.0";

/// The demo server's 4×4 PNG, base64 (`TINY_PNG` in `mcp-demo-server`).
const PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAQAAAAECAIAAAAmkwkpAAAAKUlEQVR42g3HMQEAAAzCMIQhDGEVUVlbviSxcZGY1NZV+pmdm+yDxSF4F/IXwVmoCzoAAAAASUVORK5CYII=";

/// The same pixels and size, compressed at zlib level 1 instead of 9 (`next-version`).
const PNG_REENCODED: &str = "iVBORw0KGgoAAAANSUhEUgAAAAQAAAAECAIAAAAmkwkpAAAAKUlEQVR4AQ3HMQEAAAzCMIQhDGEVUVlbviSxcZGY1NZV+pmdm+yDxSF4F/IXwVICPD0AAAAASUVORK5CYII=";

/// The bugs selected on the command line.
#[derive(Debug, Clone, Copy, Default)]
struct Bugs {
    wrong_id: bool,
    crash: bool,
    blocking_sleep: bool,
    deaf_after_cancel: bool,
    dies_after_cancel: bool,
    silent_parse_error: bool,
    internal_error_for_unknown_method: bool,
    pattern_mismatch: bool,
    pattern_tool: bool,
    next_version: bool,
    cancel_answer: bool,
}

impl Bugs {
    /// Parses `BUG[,BUG…]`; an unknown or empty name is an error naming it.
    fn parse(list: &str) -> Result<Self, String> {
        let mut bugs = Bugs::default();
        for name in list.split(',') {
            let flag = match name {
                "wrong-id" => &mut bugs.wrong_id,
                "crash" => &mut bugs.crash,
                "blocking-sleep" => &mut bugs.blocking_sleep,
                "deaf-after-cancel" => &mut bugs.deaf_after_cancel,
                "dies-after-cancel" => &mut bugs.dies_after_cancel,
                "silent-parse-error" => &mut bugs.silent_parse_error,
                "internal-error-for-unknown-method" => &mut bugs.internal_error_for_unknown_method,
                "pattern-mismatch" => {
                    bugs.pattern_tool = true;
                    &mut bugs.pattern_mismatch
                }
                "pattern-tool" => &mut bugs.pattern_tool,
                "next-version" => &mut bugs.next_version,
                "cancel-answer" => &mut bugs.cancel_answer,
                _ => return Err(format!("unknown bug {name:?}")),
            };
            *flag = true;
        }
        Ok(bugs)
    }
}

/// What the reader and the writer share.
#[derive(Default)]
struct Shared {
    state: Mutex<State>,
    /// Notified when a `blocking-sleep` call has been answered.
    answered: Condvar,
}

#[derive(Default)]
struct State {
    /// `wrong-id`: ids of requests whose response gets the wrong id.
    marked: Vec<Value>,
    /// `blocking-sleep`: ids of `sleep` calls passed on as `{"ms": 0}`, with the `ms` asked for.
    slept: Vec<(Value, u64)>,
    /// `deaf-after-cancel`: ids of requests not answered yet.
    pending: Vec<Value>,
    /// `deaf-after-cancel`: nothing more is written.
    deaf: bool,
    /// `pattern-tool`: ids of `version` calls passed on as `echo` calls.
    version_calls: Vec<Value>,
    /// `cancel-answer`: ids of calls passed on as `ping`s, whose answer becomes `-32800`.
    cancelled_calls: Vec<Value>,
}

fn lock(shared: &Shared) -> MutexGuard<'_, State> {
    shared.state.lock().unwrap_or_else(|e| e.into_inner())
}

/// The messages of a line: the object itself, or the elements of a batch.
fn messages(value: &Value) -> &[Value] {
    match value {
        Value::Array(batch) => batch,
        message => std::slice::from_ref(message),
    }
}

fn messages_mut(value: &mut Value) -> &mut [Value] {
    match value {
        Value::Array(batch) => batch,
        message => std::slice::from_mut(message),
    }
}

/// A request (not a notification, not a response): it has a method and an id.
fn is_request(message: &Value) -> bool {
    message.get("method").is_some() && message.get("id").is_some()
}

/// A response: an id and no method.
fn is_response(message: &Value) -> bool {
    message.get("method").is_none() && message.get("id").is_some()
}

fn error_code(message: &Value) -> Option<i64> {
    message.pointer("/error/code").and_then(Value::as_i64)
}

/// The server's input: stdin as it comes, or (`cancel-answer`) read ahead by a thread, so that
/// the line after a call can be looked at with a time limit.
trait Input: BufRead {
    /// The next line, left unread, if one comes within `wait`.
    fn peek_line(&mut self, wait: Duration) -> Option<&[u8]>;
}

impl Input for io::StdinLock<'_> {
    fn peek_line(&mut self, _: Duration) -> Option<&[u8]> {
        None
    }
}

/// Stdin's lines, each read by a thread as it comes, at most one line ahead (the thread waits
/// for the server to take it, so a client that writes faster than the server reads fills the
/// pipe, as with stdin read directly).
struct Lines {
    receiver: mpsc::Receiver<Vec<u8>>,
    line: Vec<u8>,
    at: usize,
}

impl Lines {
    fn stdin() -> Self {
        let (sender, receiver) = mpsc::sync_channel(1);
        std::thread::spawn(move || {
            let mut stdin = io::stdin().lock();
            loop {
                let mut line = Vec::new();
                match stdin.read_until(b'\n', &mut line) {
                    Ok(0) | Err(_) => break,
                    Ok(_) if sender.send(line).is_err() => break,
                    Ok(_) => {}
                }
            }
        });
        Self { receiver, line: Vec::new(), at: 0 }
    }
}

/// `Read` for a reader that is read through its `BufRead` side.
fn read_buffered(reader: &mut impl BufRead, buf: &mut [u8]) -> io::Result<usize> {
    let available = reader.fill_buf()?;
    let n = available.len().min(buf.len());
    buf[..n].copy_from_slice(&available[..n]);
    reader.consume(n);
    Ok(n)
}

impl Read for Lines {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        read_buffered(self, buf)
    }
}

impl BufRead for Lines {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        if self.at == self.line.len() {
            // A closed channel is the end of stdin: an empty buffer.
            self.line = self.receiver.recv().unwrap_or_default();
            self.at = 0;
        }
        Ok(&self.line[self.at..])
    }

    fn consume(&mut self, amount: usize) {
        self.at = (self.at + amount).min(self.line.len());
    }
}

impl Input for Lines {
    fn peek_line(&mut self, wait: Duration) -> Option<&[u8]> {
        if self.at == self.line.len() {
            self.line = self.receiver.recv_timeout(wait).ok()?;
            self.at = 0;
        }
        Some(&self.line[self.at..])
    }
}

/// Reads stdin for the server, watching each line for the bugs' triggers.
struct Watch<R> {
    inner: R,
    bugs: Bugs,
    state: Arc<Shared>,
}

impl<R: Input> Read for Watch<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        read_buffered(self, buf)
    }
}

impl<R: Input> BufRead for Watch<R> {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        self.inner.fill_buf()
    }

    fn consume(&mut self, amount: usize) {
        self.inner.consume(amount)
    }

    fn read_until(&mut self, byte: u8, line: &mut Vec<u8>) -> io::Result<usize> {
        if self.bugs.blocking_sleep {
            self.wait_for_sleep_answers();
        }
        let start = line.len();
        let n = self.inner.read_until(byte, line)?;
        if let Ok(mut value) = serde_json::from_slice::<Value>(&line[start..])
            && (self.inspect(&mut value) | self.cancel_answer(&mut value))
        {
            line.truncate(start);
            serde_json::to_writer(&mut *line, &value).map_err(io::Error::other)?;
            line.push(b'\n');
        }
        Ok(n)
    }
}

impl<R: Input> Watch<R> {
    /// `cancel-answer`: a call whose cancellation is the next line, within [`CANCEL_WINDOW`],
    /// goes on as a `ping` whose answer [`Rewrite`] turns into `-32800`. Returns whether the
    /// call changed.
    fn cancel_answer(&mut self, call: &mut Value) -> bool {
        if !self.bugs.cancel_answer || call.get("method").and_then(Value::as_str) != Some("tools/call") {
            return false;
        }
        let Some(id) = call.get("id").cloned() else { return false };
        let Some(next) = self.inner.peek_line(CANCEL_WINDOW) else { return false };
        let cancels = serde_json::from_slice::<Value>(next).is_ok_and(|next| {
            next.get("method").and_then(Value::as_str) == Some("notifications/cancelled")
                && next.pointer("/params/requestId") == Some(&id)
        });
        if !cancels {
            return false;
        }
        *call = serde_json::json!({"jsonrpc": "2.0", "id": id, "method": "ping"});
        lock(&self.state).cancelled_calls.push(id);
        true
    }
}

impl<R> Watch<R> {
    /// Looks at one line the client sent; returns whether it was changed (`blocking-sleep`).
    fn inspect(&self, value: &mut Value) -> bool {
        for message in messages(value) {
            self.track(message);
        }
        if value.get("method").and_then(Value::as_str) != Some("tools/call") {
            return false;
        }
        let tool = value.pointer("/params/name").and_then(Value::as_str);
        let argument = |name: &str| value.pointer(&format!("/params/arguments/{name}"));
        match tool {
            Some("echo") if self.bugs.wrong_id && argument("message").and_then(Value::as_str) == Some("") => {
                if let Some(id) = value.get("id") {
                    lock(&self.state).marked.push(id.clone());
                }
            }
            Some("add") if self.bugs.crash => {
                let huge =
                    |name: &str| argument(name).and_then(Value::as_f64).is_some_and(|x| x.abs() >= 1e15);
                if huge("a") || huge("b") {
                    eprintln!("planted bug: overflow in add");
                    std::process::exit(101);
                }
            }
            Some("sleep") if self.bugs.blocking_sleep => return self.sleep_inline(value),
            Some(PATTERN_TOOL) if self.bugs.pattern_tool => return self.version_call(value),
            _ => {}
        }
        false
    }

    /// `pattern-tool`: a `version` call goes on as an `echo` call, whose answer [`Rewrite`] turns
    /// into the version. Without arguments (or with `{}`) the echo succeeds; with any others it
    /// fails as `echo` fails on them. Returns whether the call changed (always).
    fn version_call(&self, call: &mut Value) -> bool {
        let params = &mut call["params"];
        params["name"] = Value::from("echo");
        let no_arguments =
            params.get("arguments").is_none_or(|a| a.as_object().is_some_and(|a| a.is_empty()));
        if no_arguments {
            params["arguments"] = serde_json::json!({"message": PATTERN_TOOL});
        }
        if let Some(id) = call.get("id") {
            lock(&self.state).version_calls.push(id.clone());
        }
        true
    }

    /// The `deaf-after-cancel` and `dies-after-cancel` bugs: requests seen, and cancellations.
    fn track(&self, message: &Value) {
        if message.get("method").and_then(Value::as_str) == Some("notifications/cancelled") {
            if self.bugs.dies_after_cancel {
                eprintln!("planted bug: exiting on notifications/cancelled");
                std::process::exit(101);
            }
            if self.bugs.deaf_after_cancel {
                let mut state = lock(&self.state);
                let id = message.pointer("/params/requestId");
                if id.is_some_and(|id| state.pending.contains(id)) {
                    eprintln!("planted bug: deaf after cancellation of an unanswered request");
                    state.deaf = true;
                }
            }
        } else if self.bugs.deaf_after_cancel && is_request(message) {
            lock(&self.state).pending.push(message["id"].clone());
        }
    }

    /// `blocking-sleep`: sleeps here, in the reader, then passes the call on as `{"ms": 0}` and
    /// remembers the `ms` asked for, for the answer's text. Returns whether the call changed.
    fn sleep_inline(&self, call: &mut Value) -> bool {
        let (Some(id), Some(ms)) =
            (call.get("id").cloned(), call.pointer("/params/arguments/ms").and_then(Value::as_u64))
        else {
            return false;
        };
        let asked = Duration::from_millis(ms);
        std::thread::sleep(asked.min(MAX_INLINE_SLEEP));
        if asked > MAX_INLINE_SLEEP {
            return false;
        }
        call["params"]["arguments"]["ms"] = Value::from(0);
        lock(&self.state).slept.push((id, ms));
        true
    }

    /// `blocking-sleep`: the reader reads on only once the calls it slept for are answered (the
    /// demo answers `{"ms": 0}` at once), so that a cancellation read next cannot overtake the
    /// answer. Gives up after a few seconds, should the answer never come.
    fn wait_for_sleep_answers(&self) {
        let state = lock(&self.state);
        let _ = self
            .state
            .answered
            .wait_timeout_while(state, Duration::from_secs(5), |state| !state.slept.is_empty());
    }
}

/// Writes the server's output, applying the bugs that change or drop what it says.
struct Rewrite {
    inner: io::Stdout,
    bugs: Bugs,
    state: Arc<Shared>,
    line: Vec<u8>,
}

impl Rewrite {
    /// The line to write for one line the server wrote, or `None` to drop it.
    fn rewrite(&self, line: Vec<u8>) -> Option<Vec<u8>> {
        let mut state = lock(&self.state);
        let Ok(mut value) = serde_json::from_slice::<Value>(&line) else {
            return if state.deaf { None } else { Some(line) };
        };
        let mut slept = None;
        for message in messages(&value) {
            if is_response(message) {
                let id = &message["id"];
                state.pending.retain(|pending| pending != id);
                if let Some(at) = state.slept.iter().position(|(slept, _)| slept == id) {
                    slept = Some(state.slept.remove(at).1);
                    self.state.answered.notify_all();
                }
            }
        }
        if state.deaf {
            return None;
        }
        let mut changed = false;
        if self.bugs.silent_parse_error
            && value.get("id").is_some_and(Value::is_null)
            && error_code(&value) == Some(-32700)
        {
            return None;
        }
        for message in messages_mut(&mut value) {
            if self.bugs.internal_error_for_unknown_method && error_code(message) == Some(-32601) {
                message["error"]["code"] = Value::from(-32603);
                changed = true;
            }
            if self.bugs.next_version {
                changed |= next_version(message);
            }
            if self.bugs.pattern_tool {
                changed |= pattern_tool(message, &mut state.version_calls, self.bugs.pattern_mismatch);
            }
        }
        if let Some(ms) = slept
            && let Some(text) = value.pointer_mut("/result/content/0/text")
            && text == "slept 0 ms"
        {
            *text = Value::from(format!("slept {ms} ms"));
            changed = true;
        }
        if is_response(&value) {
            let id = value["id"].clone();
            if let Some(at) = state.cancelled_calls.iter().position(|c| *c == id) {
                state.cancelled_calls.remove(at);
                value = serde_json::json!({
                    "jsonrpc": "2.0",
                    "id": id,
                    "error": {"code": REQUEST_CANCELLED, "message": "Request cancelled"},
                });
                changed = true;
            }
            if state.marked.contains(&id) {
                state.marked.retain(|m| *m != id);
                value["id"] = Value::from(id.as_i64().unwrap_or(0) + 1000);
                changed = true;
            }
        }
        if !changed {
            return Some(line);
        }
        let mut out = serde_json::to_vec(&value).ok()?;
        out.push(b'\n');
        Some(out)
    }
}

/// `pattern-tool`'s changes to one message: the `version` tool last in the (last page of the)
/// tools list, and the answer to a `version` call (an `echo` that succeeded) made the version,
/// mismatched with `pattern-mismatch`. Returns whether it changed.
fn pattern_tool(message: &mut Value, version_calls: &mut Vec<Value>, mismatch: bool) -> bool {
    let call = is_response(message) && version_calls.contains(&message["id"]);
    if call {
        version_calls.retain(|id| *id != message["id"]);
    }
    let Some(result) = message.get_mut("result").and_then(Value::as_object_mut) else {
        return false;
    };
    if call {
        if result.get("isError").and_then(Value::as_bool) == Some(true) {
            return false;
        }
        let structured = serde_json::json!({"version": if mismatch { MISMATCHED_VERSION } else { VERSION }});
        result
            .insert("content".into(), serde_json::json!([{"type": "text", "text": structured.to_string()}]));
        result.insert("structuredContent".into(), structured);
        return true;
    }
    let last_page = result.get("nextCursor").is_none_or(Value::is_null);
    match result.get_mut("tools") {
        Some(Value::Array(tools)) if last_page => {
            tools.push(serde_json::json!({
                "name": PATTERN_TOOL,
                "title": "Version",
                "description": "The server's version, as structured content.",
                "inputSchema": {"type": "object", "additionalProperties": false},
                "outputSchema": {
                    "type": "object",
                    "properties": {"version": {"type": "string", "pattern": VERSION_PATTERN}},
                    "required": ["version"],
                },
            }));
            true
        }
        _ => false,
    }
}

/// `next-version`'s changes to one message; returns whether it changed.
fn next_version(message: &mut Value) -> bool {
    let Some(result) = message.get_mut("result") else {
        return false;
    };
    let mut changed = false;
    for pointer in ["/serverInfo/version", "/_meta/io.modelcontextprotocol~1serverInfo/version"] {
        if let Some(version) = result.pointer_mut(pointer) {
            *version = Value::from(NEXT_VERSION);
            changed = true;
        }
    }
    if let Some(Value::Array(tools)) = result.get_mut("tools") {
        tools.sort_by(|a, b| a["name"].as_str().cmp(&b["name"].as_str()));
        changed = true;
    }
    if let Some(Value::Array(content)) = result.get_mut("content") {
        for block in content {
            if block.get("type").and_then(Value::as_str) == Some("image") && block["data"] == PNG {
                block["data"] = Value::from(PNG_REENCODED);
                changed = true;
            }
        }
    }
    changed
}

impl Write for Rewrite {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.line.extend_from_slice(buf);
        while let Some(end) = self.line.iter().position(|b| *b == b'\n') {
            let line: Vec<u8> = self.line.drain(..=end).collect();
            if let Some(out) = self.rewrite(line) {
                self.inner.write_all(&out)?;
            }
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

fn main() -> ExitCode {
    let bugs = match std::env::args().nth(1).map(|list| Bugs::parse(&list)) {
        Some(Ok(bugs)) => bugs,
        Some(Err(error)) => {
            eprintln!("planted_bug_server: {error}\n{USAGE}");
            return ExitCode::from(2);
        }
        None => {
            eprintln!("{USAGE}");
            return ExitCode::from(2);
        }
    };
    let state = Arc::new(Shared::default());
    let output = Rewrite { inner: io::stdout(), bugs, state: Arc::clone(&state), line: Vec::new() };
    let served = if bugs.cancel_answer {
        let input = Watch { inner: Lines::stdin(), bugs, state };
        mcp_demo_server::serve(input, Box::new(output), mcp_demo_server::Options::default())
    } else {
        let input = Watch { inner: io::stdin().lock(), bugs, state };
        mcp_demo_server::serve(input, Box::new(output), mcp_demo_server::Options::default())
    };
    match served {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("planted_bug_server: {e}");
            ExitCode::FAILURE
        }
    }
}
