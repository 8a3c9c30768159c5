//! Drives a stdio [`ClientConnection`] with arbitrary server bytes, in arbitrary chunks,
//! interleaved with the application's commands and the passing of (simulated) time.
//!
//! The connection is first brought into one of five lifecycle states with valid scripted bytes
//! (fresh with the `server/discover` probe out; awaiting the `initialize` response; awaiting it
//! after a refused probe; ready on 2025-11-25; ready on 2026-07-28 after `server/discover`).
//! Then a script of operations runs: raw chunks and whole messages (`feed`, `feed_message`) cut
//! from the input's byte pool, scripted server messages (answers to the requests the client
//! actually sent, notifications naming its ids, server requests) fed in two chunks, time
//! (`handle_timeout` after a step or at the next deadline), and commands (`send_request` with
//! options, `cancel`, `respond`, `notify`, `close`), then `feed_eof` or the rest of the pool.
//! Finally time runs out until nothing waits.
//!
//! Asserted after every step:
//! - no panic; draining `poll_transmit` and `poll_event` terminates (bounded);
//! - every transmit is one line (a single `\n`, at the end) holding one JSON-RPC 2.0 object,
//!   and a request's transmit carries the id `request_id()` says;
//! - `buffered_bytes()` stays within the configured `max_message_size` (+ 1 for a trailing `\r`
//!   that may start a CRLF);
//! - every `Event::Response` answers a request the application sent and that was not answered
//!   yet (exactly one answer per request); `Ready` at most once and never after `Closed`;
//!   `Closed` at most once, and only after every pending request was answered;
//! - once closed: `is_closed()`, `pending() == 0`, `poll_timeout()` is `None`; after
//!   `feed_eof` the connection is closed;
//! - after `handle_timeout(now)`, `poll_timeout()` is `None` or later than `now` (it processes
//!   "every deadline at or before now");
//! - while a request of the application is unanswered, `poll_timeout()` is `Some` ("requests
//!   never wait forever"), so running the clock to each deadline ends with every request answered;
//! - an answer the client cannot accept (both `result` and `error`, an `error` that is not an
//!   error object, neither, or a response over `max_message_size` with its id first) to a request
//!   of the application in flight fails that request at once, with `InvalidResponse` or
//!   `MessageTooLarge`: never a success, never a wait for its deadline.
//!
//! Found so far (see `core/tests/fuzz_regressions.rs`): raw params with a newline split the
//! stdio line, and raw params with invalid UTF-8 inside a string were written as they were.
#![no_main]

use std::time::{Duration, Instant};

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use mcp_sansio::jsonrpc::ErrorObject;
use mcp_sansio::schema::Implementation;
use mcp_sansio::{
    ClientConfig, ClientConnection, Event, ProtocolVersion, RequestError, RequestId, RequestOptions, Status,
};
use mcp_sansio_fuzz::{
    ALL_CAPABILITIES, Contract, all_client_capabilities, check_transmit, discover_result, epoch, error_body,
    initialize_result, notification, result_body, server_capabilities, server_request, server_request_id,
};
use serde_json::{Value, json};

#[derive(Arbitrary, Debug, Clone, Copy)]
enum Start {
    /// Dual-era default: the `server/discover` probe is out.
    Fresh,
    /// Pinned to the `initialize` era: `initialize` is out.
    AwaitingInitialize,
    /// Dual-era, the probe was refused: `initialize` (id 1) is out.
    AwaitingInitializeAfterProbe,
    /// Ready on 2025-11-25, every server capability.
    ReadyLegacy,
    /// Ready on 2026-07-28 after `server/discover`, every server capability.
    ReadyModern,
}

#[derive(Arbitrary, Debug)]
struct Knobs {
    /// `max_message_size`: 0 → the default (16 MiB), else this many bytes.
    max_message_size: u16,
    /// Keep-alive interval in seconds (0: none).
    keep_alive_s: u8,
    /// Declare roots, sampling and elicitation (so that server requests reach the application).
    client_capabilities: bool,
    /// `listen_for_list_changes` (2026-07-28).
    listen: bool,
}

#[derive(Arbitrary, Debug)]
struct Opts {
    timeout_ms: Option<u16>,
    max_total_ms: Option<u32>,
    progress: bool,
    reset_on_progress: Option<bool>,
    meta: bool,
}

#[derive(Arbitrary, Debug)]
enum Op {
    /// The next `n` bytes of the pool, as one `feed` chunk.
    Feed(u16),
    /// The next `n` bytes of the pool as one message (`feed_message`, the HTTP path; for an odd
    /// `n`, `feed_owned_message`).
    FeedMessage(u16),
    /// `now += ms`, then `handle_timeout(now)`.
    Advance(u32),
    /// Moves the clock to `poll_timeout()` (if any), then `handle_timeout`.
    ToDeadline,
    /// A response to the `to`-th most recent request the client sent: a result or an error.
    Reply { to: u8, error: bool, kind: u8, arg: u8, split: u8 },
    /// An answer to the `to`-th most recent request that the client cannot accept (`how` picks
    /// which), fed in two chunks cut at `split`.
    BadReply { to: u8, how: u8, split: u8 },
    /// A notification naming the `to`-th most recent request id (progress token, cancelled id,
    /// subscription id).
    Notify { to: u8, kind: u8, arg: u8, split: u8 },
    /// A server→client request.
    ServerRequest { id: u8, kind: u8, split: u8 },
    /// `send_request` of a method picked from a list, with options.
    Send { method: u8, opts: Opts },
    /// `send_request` with the next `n` bytes of the pool as raw params (with a progress token,
    /// which makes the engine splice `_meta` into them).
    SendRaw { method: u8, n: u16, progress: bool },
    /// `send_request` of a method named by the next `n` bytes of the pool (any characters).
    SendMethod { n: u8, progress: bool },
    /// `cancel` of one of the application's requests (or of an unknown id).
    Cancel(u8),
    /// `respond` to one of the server requests delivered.
    Respond { pick: u8, ok: bool },
    /// `notify`.
    NotifyServer(u8),
    /// `close`.
    Close,
    /// `feed_eof`.
    Eof,
}

#[derive(Arbitrary, Debug)]
struct Input<'a> {
    start: Start,
    knobs: Knobs,
    ops: Vec<Op>,
    /// The byte pool: raw server bytes for `Feed`, `FeedMessage` and `SendRaw`; what is left
    /// is fed at the end in one chunk.
    pool: &'a [u8],
}

/// The harness: the connection, its simulated clock, and what the application knows.
struct Run<'a> {
    conn: ClientConnection,
    now: Instant,
    max_message_size: usize,
    pool: &'a [u8],
    /// Ids of the requests the client sent (from its transmits), oldest first.
    sent: Vec<i64>,
    /// The engine's event contract, as the application sees it.
    contract: Contract,
    /// The requests that failed since this was last cleared, and how.
    failures: Vec<(RequestId, RequestError)>,
}

const MAX_DRAIN: usize = 100_000;

impl<'a> Run<'a> {
    fn take(&mut self, n: u16) -> &'a [u8] {
        let n = usize::from(n).min(self.pool.len());
        let (head, rest) = self.pool.split_at(n);
        self.pool = rest;
        head
    }

    /// Drains and checks everything the connection produced.
    fn check(&mut self) {
        let mut drained = 0;
        while let Some(t) = self.conn.poll_transmit() {
            drained += 1;
            assert!(drained < MAX_DRAIN, "poll_transmit does not run dry");
            let message = check_transmit(&t);
            if let Some(RequestId::Number(id)) = t.request_id() {
                self.sent.push(id);
            }
            drop(message);
        }
        while let Some(event) = self.conn.poll_event() {
            drained += 1;
            assert!(drained < MAX_DRAIN, "poll_event does not run dry");
            if let Event::Response { id, result: Err(error) } = &event {
                self.failures.push((id.clone(), error.clone()));
            }
            self.contract.event(event);
        }
        let buffered = self.conn.buffered_bytes();
        assert!(
            buffered <= self.max_message_size.saturating_add(1),
            "buffered_bytes {buffered} > max_message_size {}",
            self.max_message_size
        );
        if self.conn.is_closed() {
            assert!(self.contract.closed, "closed without an Event::Closed");
            assert_eq!(self.conn.pending(), 0, "requests still pending on a closed connection");
            assert_eq!(self.conn.poll_timeout(), None, "a deadline on a closed connection");
            assert!(matches!(self.conn.status(), Status::Closed(_)));
        } else {
            assert!(!self.contract.closed, "Event::Closed but the connection is not closed");
        }
        if !self.contract.outstanding.is_empty() {
            assert!(
                self.conn.poll_timeout().is_some(),
                "requests {:?} wait without a deadline",
                self.contract.outstanding
            );
        }
    }

    fn handle_timeout(&mut self, now: Instant) {
        self.now = self.now.max(now);
        self.conn.handle_timeout(self.now);
        if let Some(at) = self.conn.poll_timeout() {
            assert!(
                at > self.now,
                "after handle_timeout(now) a deadline at or before now is left ({:?})",
                self.now - at
            );
        }
        self.check();
    }

    /// Feeds one scripted server message as a line, in two chunks cut at `split`.
    fn server(&mut self, message: &Value, split: u8) {
        let mut line = serde_json::to_vec(message).expect("serializable");
        line.push(b'\n');
        let cut = usize::from(split) % (line.len() + 1);
        self.conn.feed(self.now, &line[..cut]);
        self.check();
        self.conn.feed(self.now, &line[cut..]);
        self.check();
    }

    /// Feeds an answer to the `to`-th most recent request that the client cannot accept; checks
    /// that a request of the application in flight under that id failed at once, typed.
    fn bad_reply(&mut self, to: u8, how: u8, split: u8) {
        // End whatever partial line an earlier `Feed` left, so that the reply is a line of its
        // own (appended to that rest, it is a different line, whose id may not be readable).
        self.conn.feed(self.now, b"\n");
        self.check();
        let id = self.sent_id(to);
        let (message, too_large) = match how % 4 {
            0 => (
                json!({"jsonrpc": "2.0", "id": id, "result": {}, "error": {"code": -1, "message": "both"}}),
                false,
            ),
            1 => (json!({"jsonrpc": "2.0", "id": id, "error": "not an error object"}), false),
            2 => (json!({"jsonrpc": "2.0", "id": id}), false),
            // Larger than the limit, its id before its result: only for small limits.
            _ if self.max_message_size > 1 << 16 => return,
            _ => (
                json!({"jsonrpc": "2.0", "id": id, "result": {"blob": "x".repeat(self.max_message_size)}}),
                true,
            ),
        };
        let wire = id.as_i64().map(RequestId::Number);
        // The application's request `id`, in flight under its own id (not resent under another).
        let in_flight = wire.as_ref().filter(|w| self.conn.is_pending(w) && self.conn.awaits(w)).cloned();
        self.failures.clear();
        self.server(&message, split);
        let Some(wire) = in_flight else { return };
        assert!(!self.conn.is_pending(&wire), "{message}: request {wire} still waits");
        let failed = self.failures.iter().any(|(id, error)| {
            *id == wire
                && match error {
                    RequestError::MessageTooLarge { limit } => too_large && *limit == self.max_message_size,
                    RequestError::InvalidResponse(_) => !too_large,
                    _ => false,
                }
        });
        assert!(failed, "request {wire}: {:?}", self.failures);
    }

    /// The `to`-th most recent request id the client sent (as JSON), if any.
    fn sent_id(&self, to: u8) -> Value {
        match self.sent.len() {
            0 => json!(0),
            n => json!(self.sent[n - 1 - usize::from(to) % n]),
        }
    }

    fn send(&mut self, method: &str, params: Option<&[u8]>, options: RequestOptions) {
        if let Ok(id) = self.conn.send_request(self.now, method, params, options) {
            self.contract.issued(id);
        }
        self.check();
    }

    fn op(&mut self, op: Op) {
        match op {
            Op::Feed(n) => {
                let chunk = self.take(n);
                self.conn.feed(self.now, chunk);
            }
            Op::FeedMessage(n) => {
                let message = self.take(n);
                if n % 2 == 1 {
                    // Given away (`feed_owned_message`): what comes back is the message itself.
                    let given = message.to_vec();
                    if let Some(back) = self.conn.feed_owned_message(self.now, given) {
                        assert_eq!(back, message, "a buffer given back is the message, unchanged");
                    }
                } else {
                    self.conn.feed_message(self.now, message);
                }
            }
            Op::Advance(ms) => return self.handle_timeout(self.now + Duration::from_millis(ms.into())),
            Op::ToDeadline => {
                let at = self.conn.poll_timeout().unwrap_or(self.now);
                return self.handle_timeout(at);
            }
            Op::Reply { to, error, kind, arg, split } => {
                let id = self.sent_id(to);
                let message = if error {
                    json!({"jsonrpc": "2.0", "id": id, "error": error_body(kind, arg)})
                } else {
                    json!({"jsonrpc": "2.0", "id": id, "result": result_body(kind, arg)})
                };
                return self.server(&message, split);
            }
            Op::BadReply { to, how, split } => return self.bad_reply(to, how, split),
            Op::Notify { to, kind, arg, split } => {
                let id = self.sent_id(to);
                return self.server(&notification(kind, id, arg), split);
            }
            Op::ServerRequest { id, kind, split } => {
                return self.server(&server_request(kind, server_request_id(id)), split);
            }
            Op::Send { method, opts } => {
                let (method, params) = method_and_params(method);
                let mut options = RequestOptions::default();
                if let Some(ms) = opts.timeout_ms {
                    options = options.timeout(Duration::from_millis(ms.into()));
                }
                if let Some(ms) = opts.max_total_ms {
                    options = options.max_total(Duration::from_millis(ms.into()));
                }
                if let Some(reset) = opts.reset_on_progress {
                    options = options.reset_on_progress(reset);
                }
                if opts.progress {
                    options = options.with_progress();
                }
                if opts.meta {
                    let mut meta = mcp_sansio::schema::JsonObject::new();
                    meta.insert("trace".into(), json!("t-1"));
                    options = options.meta(meta);
                }
                let params = params.map(|p| serde_json::to_vec(&p).expect("serializable"));
                return self.send(method, params.as_deref(), options);
            }
            Op::SendRaw { method, n, progress } => {
                let params = self.take(n);
                let (method, _) = method_and_params(method);
                let options = if progress {
                    RequestOptions::default().with_progress()
                } else {
                    RequestOptions::default()
                };
                return self.send(method, Some(params), options);
            }
            Op::SendMethod { n, progress } => {
                let method = String::from_utf8_lossy(self.take(n.into())).into_owned();
                let options = if progress {
                    RequestOptions::default().with_progress()
                } else {
                    RequestOptions::default()
                };
                return self.send(&method, Some(b"{}"), options);
            }
            Op::Cancel(pick) => {
                let id = match self.contract.outstanding.len() {
                    0 => RequestId::Number(i64::from(pick)),
                    n => self
                        .contract
                        .outstanding
                        .iter()
                        .nth(usize::from(pick) % n)
                        .cloned()
                        .expect("in range"),
                };
                let _ = self.conn.cancel(&id, Some("fuzz"));
            }
            Op::Respond { pick, ok } => {
                if !self.contract.server_requests.is_empty() {
                    let i = usize::from(pick) % self.contract.server_requests.len();
                    let id = self.contract.server_requests.remove(i).expect("in range");
                    let outcome = if ok {
                        let result = match pick % 3 {
                            0 => json!({"roots": [{"uri": "file:///r", "name": "r"}]}),
                            1 => json!({"action": "accept", "content": {"name": "fuzz"}}),
                            _ => json!({"role": "assistant", "content": {"type": "text", "text": "t"},
                                "model": "m"}),
                        };
                        self.conn.respond(&id, Ok(&result))
                    } else {
                        self.conn.respond::<Value>(&id, Err(ErrorObject::new(-1, "no")))
                    };
                    let _ = outcome;
                }
            }
            Op::NotifyServer(kind) => {
                let _ = match kind % 3 {
                    0 => self.conn.notify("notifications/roots/list_changed", None),
                    1 => self.conn.notify("notifications/initialized", None),
                    _ => self.conn.notify("notifications/custom", Some(b"{\"a\":[1,2]}")),
                };
            }
            Op::Close => self.conn.close(),
            Op::Eof => {
                self.conn.feed_eof(self.now);
                self.check();
                assert!(self.conn.is_closed(), "feed_eof leaves the connection open");
                return;
            }
        }
        self.check();
    }
}

/// A method and valid params for it, picked by a fuzzer byte.
fn method_and_params(pick: u8) -> (&'static str, Option<Value>) {
    match pick % 16 {
        0 => ("tools/list", Some(json!({}))),
        1 => ("tools/call", Some(json!({"name": "echo", "arguments": {"text": "hi"}}))),
        2 => ("tools/call", Some(json!({"name": "add", "arguments": {"a": 1}}))),
        3 => ("resources/read", Some(json!({"uri": "file:///a"}))),
        4 => ("prompts/get", Some(json!({"name": "p", "arguments": {"k": "v"}}))),
        5 => ("resources/subscribe", Some(json!({"uri": "file:///a"}))),
        6 => ("resources/unsubscribe", Some(json!({"uri": "file:///a"}))),
        7 => ("logging/setLevel", Some(json!({"level": "debug"}))),
        8 => ("ping", None),
        9 => (
            "completion/complete",
            Some(json!({"ref": {"type": "ref/prompt", "name": "p"},
            "argument": {"name": "k", "value": "v"}})),
        ),
        10 => ("server/discover", Some(json!({}))),
        11 => ("resources/list", Some(json!({"cursor": "c1"}))),
        12 => ("prompts/list", None),
        13 => ("initialize", Some(json!({}))),
        14 => ("resources/templates/list", Some(json!({}))),
        _ => ("vendor/custom", Some(json!([1, "two"]))),
    }
}

fn config(start: Start, knobs: &Knobs) -> ClientConfig {
    let versions: &[ProtocolVersion] = match start {
        Start::Fresh | Start::AwaitingInitializeAfterProbe => ProtocolVersion::DUAL_ERA,
        Start::AwaitingInitialize | Start::ReadyLegacy => {
            &[ProtocolVersion::V2025_11_25, ProtocolVersion::V2025_06_18]
        }
        Start::ReadyModern => &[ProtocolVersion::V2026_07_28],
    };
    let mut config = ClientConfig::new(Implementation::new("fuzz-client", "0.1.0"))
        .with_versions(versions)
        .with_request_timeout(Duration::from_secs(30))
        .with_max_total(Duration::from_secs(600))
        .with_handshake_timeout(Duration::from_secs(20))
        .with_discover_timeout(Duration::from_secs(3))
        .with_listen_for_list_changes(knobs.listen);
    if knobs.max_message_size != 0 {
        config = config.with_max_message_size(knobs.max_message_size.into());
    }
    if knobs.keep_alive_s != 0 {
        config = config.with_keep_alive(Duration::from_secs(knobs.keep_alive_s.into()));
    }
    if knobs.client_capabilities {
        config = config.with_capabilities(all_client_capabilities());
    }
    config
}

fuzz_target!(|input: Input<'_>| {
    let Input { start, knobs, ops, pool } = input;
    let config = config(start, &knobs);
    let max_message_size = config.max_message_size;
    let now = epoch();
    let mut run = Run {
        conn: ClientConnection::new(config, now),
        now,
        max_message_size,
        pool,
        sent: Vec::new(),
        contract: Contract::default(),
        failures: Vec::new(),
    };
    run.check();

    // Into the selected state, with valid scripted bytes (small configured message sizes may
    // refuse them: that is a state too).
    let line = |v: Value| {
        let mut bytes = serde_json::to_vec(&v).expect("serializable");
        bytes.push(b'\n');
        bytes
    };
    let scripted = match start {
        Start::Fresh | Start::AwaitingInitialize => None,
        Start::AwaitingInitializeAfterProbe => Some(line(json!({"jsonrpc": "2.0", "id": 0,
            "error": {"code": -32601, "message": "Method not found"}}))),
        Start::ReadyLegacy => Some(line(json!({"jsonrpc": "2.0", "id": 0,
            "result": initialize_result("2025-11-25", server_capabilities(ALL_CAPABILITIES))}))),
        Start::ReadyModern => Some(line(json!({"jsonrpc": "2.0", "id": 0,
            "result": discover_result(&["2026-07-28"], server_capabilities(ALL_CAPABILITIES))}))),
    };
    if let Some(bytes) = scripted {
        run.conn.feed(run.now, &bytes);
        run.check();
        if bytes.len() <= max_message_size {
            match start {
                Start::ReadyLegacy | Start::ReadyModern => {
                    assert!(run.contract.ready, "the scripted handshake failed")
                }
                _ => assert_eq!(run.conn.status(), Status::Initializing),
            }
        }
    }

    for op in ops {
        run.op(op);
    }
    let rest = run.pool;
    run.conn.feed(run.now, rest);
    run.check();

    // Run the clock out: every request of the application must end.
    for _ in 0..256 {
        match run.conn.poll_timeout() {
            Some(at) => run.handle_timeout(at),
            None => break,
        }
    }
    if run.conn.poll_timeout().is_none() {
        assert!(
            run.contract.outstanding.is_empty(),
            "requests never answered: {:?}",
            run.contract.outstanding
        );
    }
    run.conn.feed_eof(run.now);
    run.check();
    assert!(run.conn.is_closed());
    assert!(
        run.contract.outstanding.is_empty(),
        "requests unanswered after EOF: {:?}",
        run.contract.outstanding
    );
});
