//! Hostile stdio servers.
//!
//! Every mode is the same small server (plain std and `serde_json`): it answers `initialize`
//! (echoing the client's protocol version when it is one of the `initialize` era, else
//! offering 2025-11-25, with capabilities `{"tools":{}}`), ignores notifications, answers
//! `ping`, `tools/list` and a `tools/call` of the tool `echo` (whose result is the text of
//! `arguments.message`). It misbehaves in one way, mostly when a tool named after the mode is
//! called, so that a test can show that this request fails and the others do not:
//!
//! | mode | misbehaviour |
//! |---|---|
//! | `garbage` | the call gets non-JSON and non-JSON-RPC lines; with `{"answer":true}` the real answer follows them (its text says how many lines came first) |
//! | `invalid_utf8` | a line of invalid UTF-8, then the call's answer with invalid UTF-8 inside a JSON string |
//! | `huge_line` | the call's answer is one line of 100 MiB (`{"mib":N}` changes the size), written in pieces; its id comes first, or last with `{"id_last":true}` (the TypeScript SDK's order) |
//! | `deep_nesting` | an unclosed and a closed line of 100 000 `[`, then the call's answer with `structuredContent` nested 100 000 deep |
//! | `stray_responses` | answers to an id never issued, to a string id and to the next id the client will use, then the real answer, then a second answer to the same id |
//! | `result_and_error` | the call's answer carries both `result` and `error`; with `{"bad_error":true}`, an `error` that is a string |
//! | `bom` | writes a UTF-8 byte order mark before its first message |
//! | `batch` | an empty batch, then the call's answer inside a batch with a notification and an invalid element |
//! | `notification_flood` | answers at once, then writes `notifications/message` as fast as the client reads, for `{"ms":N}` (default 2000); then reports on stderr `flood: sent N notifications in M ms` |
//! | `silent` | says nothing after the `initialize` answer |
//! | `silent_handshake` | never answers anything, not even `initialize` |
//! | `partial_line_eof` | half a line for the call, then closes its stdout and stays alive until its stdin closes |
//! | `stderr_flood` | before answering, writes `{"bytes":N}` (default 4 MiB) to stderr without a newline, then as many bytes in 100-byte lines |
//! | `exit_mid_response` | half of the call's answer, then exits with status 3 |
//! | `ignore_sigterm` | runs with SIGTERM ignored and ignores the end of its stdin (the call says whether SIGTERM is ignored) |
//! | `grandchildren` | starts `sleep 1000` twice, once directly and once through `sh -c 'sleep 1000 &'` (an orphan), both holding its stdout and stderr, then answers with the first one's pid; with `{"exit":true}` it exits instead of answering |
//! | `request_flood` | answers at once, then sends `ping` requests as fast as the client reads them for `{"ms":N}` (default 2000), without reading its stdin meanwhile; then reads again, and reports on stderr `flood: sent N requests in M ms` |
//! | `close_stdout` | answers `initialize`, then at once closes its stdout (the answer and the EOF arrive together) and lives on until its stdin closes, then exits with status 0 |
//! | `exit_after_handshake` | answers `initialize`, then at once exits with status 3 |
//! | `killed` | the call is never answered: the server kills itself with SIGKILL |
//! | `stop_reading` | runs with SIGTERM ignored; the call is answered, then the server never reads its stdin again, nor exits |
//! | `elicitation_flood` | answers at once, then sends `{"count":N}` (default 100 000) `elicitation/create` requests (ids `e1`, `e2`, …) while it goes on reading; `{"report":true}` answers `refused R answered A`: the error and result responses it has read to them so far |
//! | `flood_then_read` | single-threaded: once `notifications/initialized` is read, writes `MCP_ADVERSARY_FLOOD` (default 200 000) `elicitation/create` requests from its one thread, reading nothing meanwhile, and only then reads its stdin again. It logs on stderr `flood: wrote N requests in M ms` (or `flood: writing failed within the first N requests: …`), then `read: <method> after R refusals and A results` for every request and notification it reads after the flood, and `read: end of input after R refusals and A results` |

use std::io::{BufRead, Write};
use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

/// The stdio modes.
pub(crate) const MODES: &[&str] = &[
    "garbage",
    "invalid_utf8",
    "huge_line",
    "deep_nesting",
    "stray_responses",
    "result_and_error",
    "bom",
    "batch",
    "notification_flood",
    "silent",
    "silent_handshake",
    "partial_line_eof",
    "stderr_flood",
    "exit_mid_response",
    "ignore_sigterm",
    "grandchildren",
    "request_flood",
    "close_stdout",
    "exit_after_handshake",
    "killed",
    "stop_reading",
    "elicitation_flood",
    "flood_then_read",
];

/// The protocol versions of the `initialize` era, oldest first.
const LEGACY_VERSIONS: &[&str] = &["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"];

/// Nesting depth of the `deep_nesting` lines.
const DEPTH: usize = 100_000;

/// Runs the server of `mode` on this process's stdin and stdout; returns the exit status.
pub(crate) fn run(mode: &str) -> i32 {
    if let Some(mode) = crate::tasks::mode(mode) {
        return crate::tasks::run_stdio(mode);
    }
    if !MODES.contains(&mode)
        && !crate::skills::MODES.contains(&mode)
        && !crate::probe::STDIO_MODES.contains(&mode)
    {
        eprintln!("unknown stdio mode {mode:?}; known: {}", MODES.join(", "));
        return 2;
    }
    if matches!(mode, "ignore_sigterm" | "stop_reading") && !sigterm_ignored() {
        // std cannot change a signal's disposition, but an ignored signal stays ignored across
        // exec: let the shell ignore it, then become this same server again (same pid).
        let me = std::env::current_exe().unwrap_or_else(|_| "mcp-adversary".into());
        let error = Command::new("sh")
            .args(["-c", "trap '' TERM; exec \"$0\" stdio \"$1\""])
            .arg(me)
            .arg(mode)
            .exec();
        eprintln!("could not re-run under sh: {error}");
        return 1;
    }
    Server {
        mode,
        out: Arc::new(Out::default()),
        refused: AtomicUsize::new(0),
        answered: AtomicUsize::new(0),
    }
    .serve()
}

/// Whether this process ignores SIGTERM (bit 15 of `SigIgn` in `/proc/self/status`).
fn sigterm_ignored() -> bool {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|line| line.strip_prefix("SigIgn:"))
        .and_then(|mask| u64::from_str_radix(mask.trim(), 16).ok())
        .is_some_and(|mask| mask & (1 << (15 - 1)) != 0)
}

/// Standard output, shared by the main loop and the flood thread. The main loop's answers
/// go first: the flood thread waits while one is being written (std's locks are not fair,
/// so without this an answer could wait behind the flood for as long as it lasts).
#[derive(Default)]
struct Out {
    urgent: AtomicUsize,
}

impl Out {
    /// Writes `bytes` and flushes, ahead of the flood.
    fn write(&self, bytes: &[u8]) {
        self.urgent.fetch_add(1, Ordering::SeqCst);
        let mut stdout = std::io::stdout().lock();
        let _ = stdout.write_all(bytes).and_then(|()| stdout.flush());
        drop(stdout);
        self.urgent.fetch_sub(1, Ordering::SeqCst);
    }

    /// Writes `bytes` and flushes, after any answer waiting to be written. `false` once the
    /// client stopped reading.
    fn write_bulk(&self, bytes: &[u8]) -> bool {
        while self.urgent.load(Ordering::SeqCst) > 0 {
            std::thread::yield_now();
        }
        let mut stdout = std::io::stdout().lock();
        stdout.write_all(bytes).and_then(|()| stdout.flush()).is_ok()
    }

    /// Writes one message as a line.
    fn message(&self, message: &Value) {
        let mut line = serde_json::to_vec(message).unwrap_or_default();
        line.push(b'\n');
        self.write(&line);
    }
}

struct Server<'a> {
    mode: &'a str,
    out: Arc<Out>,
    /// `elicitation_flood`: the client's error and result responses to its requests.
    refused: AtomicUsize,
    answered: AtomicUsize,
}

impl Server<'_> {
    fn serve(&self) -> i32 {
        if self.mode == "bom" {
            self.out.write(b"\xEF\xBB\xBF");
        }
        if let Some(banner) = crate::probe::stdio_start(self.mode) {
            self.out.write(&banner);
        }
        let mut stdin = std::io::stdin().lock();
        let mut line = Vec::new();
        let mut initialized = false;
        // `flood_then_read`: the flood was written.
        let mut flooded = false;
        loop {
            line.clear();
            match stdin.read_until(b'\n', &mut line) {
                Ok(0) | Err(_) => break,
                Ok(_) => {}
            }
            let Ok(message) = serde_json::from_slice::<Value>(&line) else { continue };
            if message.get("method").is_none() {
                let counter = if message.get("error").is_some() { &self.refused } else { &self.answered };
                counter.fetch_add(1, Ordering::SeqCst);
            }
            if self.mode == "flood_then_read" {
                self.flood_then_read(&message, &mut flooded);
            }
            // Notifications (no id) and responses (no method) need no answer.
            let (Some(id), Some(method)) = (message.get("id"), message.get("method").and_then(Value::as_str))
            else {
                continue;
            };
            let params = message.get("params").unwrap_or(&Value::Null);
            crate::probe::stdio_note(self.mode, method);
            if let Some(answer) = crate::skills::answer(self.mode, id, method, params) {
                self.out.write(&line_of(&answer));
                continue;
            }
            match method {
                "server/discover" if crate::probe::stdio_answer(self.mode, id).is_some() => {
                    let answer = crate::probe::stdio_answer(self.mode, id).unwrap_or_default();
                    if !answer.is_empty() {
                        self.out.write(&answer);
                    }
                }
                _ if self.mode == "silent_handshake" || (self.mode == "silent" && initialized) => {}
                "initialize" => {
                    initialized = true;
                    let mut result = initialize_result(params);
                    crate::skills::declare(self.mode, &mut result);
                    self.answer(id, result);
                    self.after_initialize();
                }
                "ping" => self.answer(id, json!({})),
                "tools/list" => self.answer(id, self.tools()),
                "tools/call" => self.call(id, params),
                _ => self.error(id, -32601, &format!("method not found: {method}")),
            }
        }
        if flooded {
            eprintln!("read: end of input after {}", self.read_so_far());
        }
        if self.mode == "ignore_sigterm" {
            // Stubborn: the end of stdin is no reason to exit either.
            loop {
                std::thread::sleep(Duration::from_secs(3600));
            }
        }
        0
    }

    fn answer(&self, id: &Value, result: Value) {
        self.out.message(&json!({"jsonrpc": "2.0", "id": id, "result": result}));
    }

    fn error(&self, id: &Value, code: i64, message: &str) {
        self.out.message(&json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}}));
    }

    fn tools(&self) -> Value {
        let object = json!({"type": "object"});
        let echo = json!({
            "name": "echo",
            "description": "Answers with the text of `message`.",
            "inputSchema": {"type": "object", "properties": {"message": {"type": "string"}}},
        });
        json!({"tools": [echo, {"name": self.mode, "description": "Misbehaves.", "inputSchema": object}]})
    }

    fn call(&self, id: &Value, params: &Value) {
        let name = params.get("name").and_then(Value::as_str).unwrap_or_default();
        let arguments = params.get("arguments").unwrap_or(&Value::Null);
        if name == "echo" {
            let message = arguments.get("message").and_then(Value::as_str).unwrap_or_default();
            return self.answer(id, text(message));
        }
        if name != self.mode {
            return self.error(id, -32602, &format!("unknown tool {name:?}"));
        }
        let number = |key: &str, default: u64| arguments.get(key).and_then(Value::as_u64).unwrap_or(default);
        match self.mode {
            "garbage" => self.garbage(id, arguments.get("answer") == Some(&Value::Bool(true))),
            "invalid_utf8" => self.invalid_utf8(id),
            "huge_line" => {
                self.huge_line(id, number("mib", 100), arguments.get("id_last") == Some(&Value::Bool(true)))
            }
            "deep_nesting" => self.deep_nesting(id),
            "stray_responses" => self.stray_responses(id),
            "result_and_error" if arguments.get("bad_error") == Some(&Value::Bool(true)) => {
                self.out.write(&line_of(&format!(r#"{{"jsonrpc":"2.0","id":{id},"error":"it broke"}}"#)))
            }
            "result_and_error" => self.out.write(&line_of(&format!(
                r#"{{"jsonrpc":"2.0","id":{id},"result":{},"error":{{"code":-32603,"message":"both"}}}}"#,
                text("result and error")
            ))),
            "batch" => self.batch(id),
            "notification_flood" => self.flood(id, number("ms", 2000)),
            "partial_line_eof" => self.partial_line_eof(id),
            "stderr_flood" => self.stderr_flood(id, number("bytes", 4 << 20)),
            "exit_mid_response" => {
                let response =
                    format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{}}}"#, text("never finished"));
                self.out.write(&response.as_bytes()[..response.len() / 2]);
                std::process::exit(3);
            }
            "ignore_sigterm" => self.answer(id, text(&format!("SIGTERM ignored: {}", sigterm_ignored()))),
            "grandchildren" => self.grandchildren(id, arguments.get("exit") == Some(&Value::Bool(true))),
            "request_flood" => self.request_flood(id, number("ms", 2000)),
            "elicitation_flood" if arguments.get("report") == Some(&Value::Bool(true)) => {
                let (refused, answered) =
                    (self.refused.load(Ordering::SeqCst), self.answered.load(Ordering::SeqCst));
                self.answer(id, text(&format!("refused {refused} answered {answered}")))
            }
            "elicitation_flood" => self.elicitation_flood(id, number("count", 100_000)),
            "killed" => {
                let _ =
                    rustix::process::kill_process(rustix::process::getpid(), rustix::process::Signal::KILL);
            }
            "stop_reading" => {
                self.answer(id, text("no longer reading"));
                loop {
                    std::thread::sleep(Duration::from_secs(3600));
                }
            }
            // `silent` and `silent_handshake` never get here.
            _ => self.error(id, -32603, "no misbehaviour for this mode"),
        }
    }

    /// What the handshake modes do right after answering `initialize`.
    fn after_initialize(&self) {
        match self.mode {
            "close_stdout" => {
                // Become `cat` with stdout on /dev/null: this process's end of the pipe closes
                // right behind the answer, and the process lives on until its stdin closes.
                let error = Command::new("cat").stdout(Stdio::null()).exec();
                eprintln!("could not exec cat: {error}");
                std::process::exit(1);
            }
            "exit_after_handshake" => std::process::exit(3),
            _ => {}
        }
    }

    /// Lines that are not JSON-RPC messages; each one is an invalid message for the client
    /// (blank lines, which clients skip, are left out).
    fn garbage(&self, id: &Value, answer: bool) {
        let lines: &[&str] = &[
            "hello, this is not JSON",
            "Content-Length: 52",
            "\u{1b}[31mERROR\u{1b}[0m: something went wrong",
            "{\"jsonrpc\":\"2.0\",\"id\":",
            "null",
            "42",
            "\"a string\"",
            "[]",
            "{}",
            "{\"jsonrpc\":\"1.0\",\"id\":1,\"result\":{}}",
            "}{",
        ];
        let mut bytes = Vec::new();
        for line in lines {
            bytes.extend_from_slice(line.as_bytes());
            bytes.push(b'\n');
        }
        self.out.write(&bytes);
        if answer {
            self.answer(id, text(&format!("after {} garbage lines", lines.len())));
        }
    }

    fn invalid_utf8(&self, id: &Value) {
        let mut bytes = b"\xff\xfe\xfd not UTF-8 \xc3\x28\n".to_vec();
        // The call's answer, with bytes that are not UTF-8 (a lone continuation byte and an
        // overlong encoding of '/') inside the JSON string.
        let head =
            format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{"content":[{{"type":"text","text":"bad "#);
        bytes.extend_from_slice(head.as_bytes());
        bytes.extend_from_slice(b"\x80\xc0\xaf here\"}]}}\n");
        self.out.write(&bytes);
    }

    /// One line of `mib` MiB, written in 1 MiB pieces, the newline only at the very end; the id
    /// is its first member, or its last with `id_last`.
    fn huge_line(&self, id: &Value, mib: u64, id_last: bool) {
        let (head, tail) = if id_last {
            (
                r#"{"result":{"content":[{"type":"text","text":""#.to_owned(),
                format!("\"}}]}},\"jsonrpc\":\"2.0\",\"id\":{id}}}\n"),
            )
        } else {
            (
                format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{"content":[{{"type":"text","text":""#),
                "\"}]}}\n".to_owned(),
            )
        };
        let total = mib * (1 << 20);
        let piece = vec![b'x'; 1 << 20];
        self.out.write(head.as_bytes());
        let mut written = (head.len() + tail.len()) as u64;
        while written < total {
            let n = piece.len().min(usize::try_from(total - written).unwrap_or(usize::MAX));
            self.out.write(&piece[..n]);
            written += n as u64;
        }
        self.out.write(tail.as_bytes());
    }

    fn deep_nesting(&self, id: &Value) {
        let open = "[".repeat(DEPTH);
        let closed = format!("{open}{}", "]".repeat(DEPTH));
        self.out.write(&line_of(&open));
        self.out.write(&line_of(&closed));
        self.out.write(&line_of(&format!(
            r#"{{"jsonrpc":"2.0","id":{id},"result":{{"content":[],"structuredContent":{{"deep":{closed}}}}}}}"#
        )));
    }

    fn stray_responses(&self, id: &Value) {
        let next = id.as_i64().map_or(json!("next"), |n| json!(n + 1));
        self.answer(&json!(987_654_321), text("to an id never issued"));
        self.answer(&json!("stray"), text("to a string id"));
        self.answer(&next, text("forged answer to the next request"));
        self.answer(id, text("first answer"));
        self.answer(id, text("second answer"));
    }

    fn batch(&self, id: &Value) {
        self.out.write(b"[]\n");
        let notification = json!({
            "jsonrpc": "2.0",
            "method": "notifications/message",
            "params": {"level": "info", "data": "in a batch"},
        });
        let response = json!({"jsonrpc": "2.0", "id": id, "result": text("from a batch")});
        self.out.message(&json!([notification, response, 17]));
    }

    /// Sends notifications for `ms` from a thread of their own, as fast as the pipe takes them.
    fn flood(&self, id: &Value, ms: u64) {
        self.answer(id, text("flooding"));
        self.burst(ms, "notifications", |batch, n| {
            writeln!(
                batch,
                r#"{{"jsonrpc":"2.0","method":"notifications/message","params":{{"level":"info","data":"flood {n}"}}}}"#
            )
        });
    }

    /// Sends `ping` requests for `ms` without reading the answers, then reads again.
    fn request_flood(&self, id: &Value, ms: u64) {
        self.answer(id, text("flooding"));
        self.burst(ms, "requests", |batch, n| {
            writeln!(batch, r#"{{"jsonrpc":"2.0","id":"p{n}","method":"ping"}}"#)
        });
        // Not reading meanwhile is the point. (Not joining the thread either: it may be
        // blocked writing to a client that, rightly, stopped reading until we read.)
        std::thread::sleep(Duration::from_millis(ms));
    }

    fn elicitation_flood(&self, id: &Value, count: u64) {
        self.answer(id, text("flooding"));
        let out = self.out.clone();
        // From a thread of its own: the main loop goes on reading the client's answers.
        std::thread::spawn(move || {
            let mut batch = Vec::with_capacity(64 * 1024);
            let mut sent = 0;
            while sent < count {
                batch.clear();
                for _ in 0..256.min(count - sent) {
                    sent += 1;
                    let _ = writeln!(
                        batch,
                        r#"{{"jsonrpc":"2.0","id":"e{sent}","method":"elicitation/create","params":{{"message":"name?","requestedSchema":{{"type":"object","properties":{{"name":{{"type":"string"}}}}}}}}}}"#
                    );
                }
                if !out.write_bulk(&batch) {
                    break;
                }
            }
            eprintln!("flood: sent {sent} requests");
        });
    }

    /// `flood_then_read`: at `notifications/initialized`, the flood, from this thread (nothing
    /// is read until it is written); after it, every request and notification read is logged.
    fn flood_then_read(&self, message: &Value, flooded: &mut bool) {
        let Some(method) = message.get("method").and_then(Value::as_str) else { return };
        if *flooded {
            eprintln!("read: {method} after {}", self.read_so_far());
            return;
        }
        if method != "notifications/initialized" {
            return;
        }
        *flooded = true;
        let count: u64 =
            std::env::var("MCP_ADVERSARY_FLOOD").ok().and_then(|n| n.parse().ok()).unwrap_or(200_000);
        let start = Instant::now();
        let mut stdout = std::io::stdout().lock();
        let mut batch = Vec::with_capacity(64 * 1024);
        let mut sent = 0;
        while sent < count {
            batch.clear();
            for _ in 0..256.min(count - sent) {
                sent += 1;
                let _ = writeln!(
                    batch,
                    r#"{{"jsonrpc":"2.0","id":"e{sent}","method":"elicitation/create","params":{{"message":"name?","requestedSchema":{{"type":"object","properties":{{"name":{{"type":"string"}}}}}}}}}}"#
                );
            }
            // Blocks while the client does not read: a single-threaded server has no one else
            // to read its stdin meanwhile.
            if let Err(error) = stdout.write_all(&batch).and_then(|()| stdout.flush()) {
                eprintln!("flood: writing failed within the first {sent} requests: {error}");
                return;
            }
        }
        eprintln!("flood: wrote {sent} requests in {} ms", start.elapsed().as_millis());
    }

    /// What the server read of the answers to its requests, for its log.
    fn read_so_far(&self) -> String {
        let (refused, answered) = (self.refused.load(Ordering::SeqCst), self.answered.load(Ordering::SeqCst));
        format!("{refused} refusals and {answered} results")
    }

    /// Writes messages numbered from 1, made by `line`, in batches of 256 for `ms`, from a
    /// thread of its own (which reports how many on stderr).
    fn burst(&self, ms: u64, what: &'static str, line: fn(&mut Vec<u8>, u64) -> std::io::Result<()>) {
        let out = self.out.clone();
        let limit = Duration::from_millis(ms);
        std::thread::spawn(move || {
            let start = Instant::now();
            let mut sent = 0u64;
            let mut batch = Vec::with_capacity(64 * 1024);
            while start.elapsed() < limit {
                batch.clear();
                for _ in 0..256 {
                    sent += 1;
                    let _ = line(&mut batch, sent);
                }
                if !out.write_bulk(&batch) {
                    break;
                }
            }
            eprintln!("flood: sent {sent} {what} in {} ms", start.elapsed().as_millis());
        });
    }

    fn partial_line_eof(&self, id: &Value) {
        let response = format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{}}}"#, text("never finished"));
        self.out.write(&response.as_bytes()[..response.len() / 2]);
        // Become `cat` with stdout on /dev/null: this process's end of the pipe closes (the
        // client reads EOF) while the process lives on until its stdin closes.
        let error = Command::new("cat").stdout(Stdio::null()).exec();
        eprintln!("could not exec cat: {error}");
        std::process::exit(1);
    }

    fn stderr_flood(&self, id: &Value, bytes: u64) {
        let mut stderr = std::io::stderr().lock();
        let chunk = vec![b'e'; 64 * 1024];
        let mut written = 0;
        while written < bytes {
            let n = chunk.len().min(usize::try_from(bytes - written).unwrap_or(usize::MAX));
            let _ = stderr.write_all(&chunk[..n]);
            written += n as u64;
        }
        let _ = stderr.write_all(b"\n");
        let mut line = [b'l'; 100];
        line[99] = b'\n';
        let lines = bytes / 100;
        let mut block = Vec::with_capacity(100 * 1000);
        for i in 0..lines {
            block.extend_from_slice(&line);
            if block.len() >= 100 * 1000 || i + 1 == lines {
                let _ = stderr.write_all(&block);
                block.clear();
            }
        }
        let _ = stderr.flush();
        drop(stderr);
        self.answer(id, text(&format!("wrote {bytes} bytes without a newline and {lines} lines")));
    }

    fn grandchildren(&self, id: &Value, exit: bool) {
        let direct = Command::new("sleep").arg("1000").spawn();
        // `sh` exits at once: its `sleep` is orphaned, still in this process group.
        let orphan = Command::new("sh").args(["-c", "sleep 1000 &"]).status();
        if exit {
            std::process::exit(3);
        }
        match (direct, orphan) {
            (Ok(child), Ok(_)) => self.answer(id, text(&child.id().to_string())),
            (direct, orphan) => self.error(id, -32603, &format!("spawn failed: {direct:?} {orphan:?}")),
        }
    }
}

fn initialize_result(params: &Value) -> Value {
    let requested = params.get("protocolVersion").and_then(Value::as_str).unwrap_or_default();
    let version = if LEGACY_VERSIONS.contains(&requested) { requested } else { "2025-11-25" };
    json!({
        "protocolVersion": version,
        "capabilities": {"tools": {}},
        "serverInfo": {"name": "mcp-adversary", "version": env!("CARGO_PKG_VERSION")},
    })
}

/// A tool result with one text block.
fn text(message: &str) -> Value {
    json!({"content": [{"type": "text", "text": message}]})
}

fn line_of(message: &str) -> Vec<u8> {
    let mut line = message.as_bytes().to_vec();
    line.push(b'\n');
    line
}
