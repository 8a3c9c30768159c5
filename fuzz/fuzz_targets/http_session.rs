//! Drives an [`HttpSession`] (Streamable HTTP, with the HTTP+SSE fallback) as an arbitrary
//! server would answer it: arbitrary response heads (status, `Content-Type`, `Mcp-Session-Id`),
//! arbitrary body chunks, ends and failures, for whichever exchanges the session has in flight,
//! interleaved with time and the application's commands.
//!
//! The script's operations pick one of the exchanges in flight (the requests the session asked
//! the driver to send and did not abort) and answer it: a head (a status and content type from a
//! list, or raw bytes from the pool), raw body chunks from the pool, or a scripted JSON-RPC body
//! (as JSON or as an SSE event, with `id` and `retry` fields) that answers the request the exchange
//! carries, a server notification or request on a stream, a legacy `endpoint` event, or a
//! redirect (to the same origin, another one, `https`, nowhere valid); then the end or a failure. Time moves with `handle_timeout`, and the application sends, cancels,
//! responds and closes. At the end the connection is closed and the clock runs out.
//!
//! Asserted:
//! - no panic; every `poll_action` drain ends within a bound (no action loop);
//! - every `Send` has a new stream id; every `Abort` names a stream that was sent, at most once;
//!   every `POST` body is JSON; a request to another origin (after a redirect) carries neither
//!   `Authorization` nor the application's header;
//! - the connection's events keep their contract: one `Response` per request the application
//!   sent, `Ready` and `Closed` at most once, `Closed` after every request was answered;
//! - after `handle_timeout(now)`, `poll_timeout()` is `None` or later than `now`;
//! - after `close` and running the clock to each deadline (at most 256 times), the session is
//!   `is_finished()` (the `DELETE` is answered or times out, nothing is left in flight).
#![no_main]

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use mcp_sansio::http::{HttpAction, HttpConfig, HttpMethod, HttpSession, StreamId};
use mcp_sansio::jsonrpc::ErrorObject;
use mcp_sansio::schema::Implementation;
use mcp_sansio::{ClientConfig, ProtocolVersion, RequestOptions};
use mcp_sansio_fuzz::{
    Contract, all_client_capabilities, epoch, error_body, notification, result_body, server_request,
    server_request_id,
};
use serde_json::{Value, json};

const URL: &str = "http://127.0.0.1:8931/mcp";
/// The configured URL's origin, with the slash that ends it.
const ORIGIN: &str = "http://127.0.0.1:8931/";
/// The most actions one drain may produce.
const MAX_ACTIONS: usize = 10_000;

#[derive(Arbitrary, Debug, Clone, Copy)]
enum Versions {
    Legacy,
    Dual,
    Modern,
    V2024,
}

#[derive(Arbitrary, Debug)]
struct Setup {
    versions: Versions,
    standalone_stream: bool,
    legacy_fallback: bool,
    /// `max_message_size`: 0 → the default, else this many bytes.
    max_message_size: u16,
    client_capabilities: bool,
    /// `max_reconnects` (0..=7).
    max_reconnects: u8,
}

#[derive(Arbitrary, Debug, Clone, Copy)]
enum Status {
    Ok,
    Accepted,
    BadRequest,
    NotFound,
    MethodNotAllowed,
    ServerError,
    Other(u16),
}

#[derive(Arbitrary, Debug, Clone, Copy)]
enum ContentType {
    Json,
    JsonCharset,
    Sse,
    Html,
    None,
    /// The next `n` bytes of the pool.
    Raw(u8),
}

#[derive(Arbitrary, Debug, Clone, Copy)]
enum Location {
    /// Another path on the same origin.
    SameOrigin,
    /// The configured URL itself.
    Same,
    /// Another port: another origin.
    OtherOrigin,
    /// `https` on the same host.
    Https,
    /// Not an `http(s)` URL.
    Invalid,
    /// No `Location` header.
    Missing,
    /// The next `n` bytes of the pool.
    Raw(u8),
}

#[derive(Arbitrary, Debug, Clone, Copy)]
enum SessionHeader {
    None,
    S1,
    S2,
    /// The next `n` bytes of the pool.
    Raw(u8),
}

#[derive(Arbitrary, Debug)]
enum Op {
    /// The response head of the exchange picked.
    Head {
        pick: u8,
        status: Status,
        content_type: ContentType,
        session: SessionHeader,
    },
    /// A head that suits the exchange: 200 with JSON or an event stream (202 for a notification).
    GoodHead {
        pick: u8,
        sse: bool,
        session: bool,
    },
    /// The next `n` bytes of the pool as a body chunk.
    Body {
        pick: u8,
        n: u16,
    },
    /// A scripted message as a body chunk: the response to the exchange's request (a result or an
    /// error), else a notification or a server request; as an SSE event when `sse`.
    Reply {
        pick: u8,
        sse: bool,
        error: bool,
        kind: u8,
        arg: u8,
        event_id: Option<u8>,
        retry: Option<u16>,
    },
    /// A server notification (naming the exchange's request id) or request, as an SSE event.
    ServerMessage {
        pick: u8,
        request: bool,
        kind: u8,
        arg: u8,
    },
    /// A legacy `endpoint` event.
    Endpoint {
        pick: u8,
        url: u8,
    },
    /// A redirect (301, 302, 303, 307 or 308 by `status % 5`) of the exchange picked.
    Redirect {
        pick: u8,
        status: u8,
        location: Location,
    },
    End(u8),
    Error(u8),
    Advance(u32),
    ToDeadline,
    Send {
        method: u8,
        timeout_ms: Option<u16>,
    },
    Cancel(u8),
    Respond {
        pick: u8,
        ok: bool,
    },
    Close,
}

#[derive(Arbitrary, Debug)]
struct Input<'a> {
    setup: Setup,
    ops: Vec<Op>,
    /// Raw bytes for `Body`, raw header values; what is left becomes, at the end, a 200 JSON (or
    /// SSE, if it starts like one) response to the oldest exchange in flight.
    pool: &'a [u8],
}

/// An exchange the session asked for and did not abort.
#[derive(Debug)]
struct Exchange {
    method: HttpMethod,
    /// The JSON-RPC request id its body carries, if any.
    request_id: Option<Value>,
    /// Whether its body is a request (and not a notification or a response).
    is_request: bool,
}

struct Run<'a> {
    session: HttpSession,
    now: Instant,
    pool: &'a [u8],
    exchanges: BTreeMap<StreamId, Exchange>,
    sent_streams: BTreeSet<StreamId>,
    aborted: BTreeSet<StreamId>,

    /// The engine's event contract, as the application sees it.
    contract: Contract,
}

impl<'a> Run<'a> {
    fn take(&mut self, n: usize) -> &'a [u8] {
        let n = n.min(self.pool.len());
        let (head, rest) = self.pool.split_at(n);
        self.pool = rest;
        head
    }

    /// Drains the session's actions and the connection's events, checking them.
    fn pump(&mut self) {
        let mut n = 0;
        while let Some(action) = self.session.poll_action(self.now) {
            n += 1;
            assert!(n < MAX_ACTIONS, "poll_action does not run dry");
            match action {
                HttpAction::Send(request) => {
                    let stream = request.stream();
                    assert!(self.sent_streams.insert(stream), "stream {stream:?} sent twice");
                    // Redirected elsewhere, a request carries neither credentials nor the
                    // application's headers.
                    if !request.url().starts_with(ORIGIN) {
                        for secret in ["authorization", "x-fuzz-secret"] {
                            assert!(
                                request.header(secret).is_none(),
                                "{secret} sent to another origin: {}",
                                request.url()
                            );
                        }
                    }
                    let body: Option<Value> = serde_json::from_slice(request.body()).ok();
                    if request.method() == HttpMethod::Post {
                        assert!(
                            body.is_some(),
                            "a POST body is not JSON: {:?}",
                            String::from_utf8_lossy(request.body())
                        );
                    }
                    let request_id = body.as_ref().and_then(|b| b.get("id")).cloned();
                    let is_request =
                        body.as_ref().is_some_and(|b| b.get("method").is_some() && b.get("id").is_some());
                    self.exchanges
                        .insert(stream, Exchange { method: request.method(), request_id, is_request });
                }
                HttpAction::Abort(stream) => {
                    assert!(self.sent_streams.contains(&stream), "abort of {stream:?}, which was never sent");
                    assert!(self.aborted.insert(stream), "{stream:?} aborted twice");
                    self.exchanges.remove(&stream);
                }
                other => panic!("unknown action {other:?}"),
            }
        }
        while let Some(event) = self.session.poll_event() {
            n += 1;
            assert!(n < MAX_ACTIONS, "poll_event does not run dry");
            self.contract.event(event);
        }
        if self.session.connection().is_closed() {
            assert!(self.contract.closed, "closed without an Event::Closed");
        }
    }

    fn handle_timeout(&mut self, at: Instant) {
        self.now = self.now.max(at);
        self.session.handle_timeout(self.now);
        self.pump();
        if let Some(at) = self.session.poll_timeout() {
            assert!(at > self.now, "after handle_timeout(now) a deadline at or before now is left");
        }
    }

    fn pick(&self, pick: u8) -> Option<StreamId> {
        match self.exchanges.len() {
            0 => None,
            n => self.exchanges.keys().nth(usize::from(pick) % n).copied(),
        }
    }

    fn body(&mut self, stream: StreamId, chunk: &[u8]) {
        self.session.handle_response_body(self.now, stream, chunk);
    }

    /// A scripted message for exchange `stream`: the response to its request if it carries one,
    /// else a notification.
    fn scripted(&self, stream: StreamId, error: bool, kind: u8, arg: u8) -> Value {
        let exchange = &self.exchanges[&stream];
        match (&exchange.request_id, exchange.is_request) {
            (Some(id), true) if error => json!({"jsonrpc": "2.0", "id": id, "error": error_body(kind, arg)}),
            (Some(id), true) => json!({"jsonrpc": "2.0", "id": id, "result": result_body(kind, arg)}),
            _ => notification(kind, json!(arg), arg),
        }
    }

    fn op(&mut self, op: Op) {
        match op {
            Op::Head { pick, status, content_type, session } => {
                let Some(stream) = self.pick(pick) else { return };
                let status = match status {
                    Status::Ok => 200,
                    Status::Accepted => 202,
                    Status::BadRequest => 400,
                    Status::NotFound => 404,
                    Status::MethodNotAllowed => 405,
                    Status::ServerError => 500,
                    Status::Other(s) => s,
                };
                let content_type: &[u8] = match content_type {
                    ContentType::Json => b"application/json",
                    ContentType::JsonCharset => b"Application/JSON; charset=utf-8",
                    ContentType::Sse => b"text/event-stream",
                    ContentType::Html => b"text/html",
                    ContentType::None => b"",
                    ContentType::Raw(n) => self.take(n.into()),
                };
                let session: &[u8] = match session {
                    SessionHeader::None => b"",
                    SessionHeader::S1 => b"s1",
                    SessionHeader::S2 => b"s2",
                    SessionHeader::Raw(n) => self.take(n.into()),
                };
                let mut headers: Vec<(&str, &[u8])> = vec![("content-type", content_type)];
                if !session.is_empty() {
                    headers.push(("Mcp-Session-Id", session));
                }
                self.session.handle_response_head(self.now, stream, status, headers);
            }
            Op::Redirect { pick, status, location } => {
                let Some(stream) = self.pick(pick) else { return };
                let status = [301, 302, 303, 307, 308][usize::from(status) % 5];
                let location: &[u8] = match location {
                    Location::SameOrigin => b"/elsewhere",
                    Location::Same => URL.as_bytes(),
                    Location::OtherOrigin => b"http://127.0.0.1:8932/mcp",
                    Location::Https => b"https://127.0.0.1:8931/mcp",
                    Location::Invalid => b"javascript:void(0)",
                    Location::Missing => b"",
                    Location::Raw(n) => self.take(n.into()),
                };
                let mut headers: Vec<(&str, &[u8])> = vec![("content-type", b"text/plain")];
                if !location.is_empty() {
                    headers.push(("location", location));
                }
                self.session.handle_response_head(self.now, stream, status, headers);
            }
            Op::GoodHead { pick, sse, session } => {
                let Some(stream) = self.pick(pick) else { return };
                let exchange = &self.exchanges[&stream];
                let (status, content_type): (u16, &[u8]) = match exchange.method {
                    HttpMethod::Get => (200, b"text/event-stream"),
                    HttpMethod::Post if !exchange.is_request => (202, b""),
                    _ if sse => (200, b"text/event-stream"),
                    _ => (200, b"application/json"),
                };
                let mut headers: Vec<(&str, &[u8])> = vec![("Content-Type", content_type)];
                if session {
                    headers.push(("mcp-session-id", b"s1"));
                }
                self.session.handle_response_head(self.now, stream, status, headers);
            }
            Op::Body { pick, n } => {
                let Some(stream) = self.pick(pick) else { return };
                let chunk = self.take(n.into());
                self.body(stream, chunk);
            }
            Op::Reply { pick, sse, error, kind, arg, event_id, retry } => {
                let Some(stream) = self.pick(pick) else { return };
                let message = self.scripted(stream, error, kind, arg).to_string();
                let body = if sse {
                    let mut event = String::new();
                    if let Some(id) = event_id {
                        event += &format!("id: e{id}\n");
                    }
                    if let Some(retry) = retry {
                        event += &format!("retry: {retry}\n");
                    }
                    event + &format!("data: {message}\n\n")
                } else {
                    message
                };
                self.body(stream, body.as_bytes());
            }
            Op::ServerMessage { pick, request, kind, arg } => {
                let Some(stream) = self.pick(pick) else { return };
                let id = self.exchanges[&stream].request_id.clone().unwrap_or(json!(0));
                let message = if request {
                    server_request(kind, server_request_id(arg))
                } else {
                    notification(kind, id, arg)
                };
                self.body(stream, format!("event: message\ndata: {message}\n\n").as_bytes());
            }
            Op::Endpoint { pick, url } => {
                let Some(stream) = self.pick(pick) else { return };
                let url = match url % 6 {
                    0 => "/messages?sessionId=1",
                    1 => "http://127.0.0.1:8931/messages",
                    2 => "http://evil.example/messages",
                    3 => "//evil.example/x",
                    4 => "messages",
                    _ => "",
                };
                self.body(stream, format!("event: endpoint\ndata: {url}\n\n").as_bytes());
            }
            Op::End(pick) => {
                let Some(stream) = self.pick(pick) else { return };
                self.exchanges.remove(&stream);
                self.session.handle_response_end(self.now, stream);
            }
            Op::Error(pick) => {
                let Some(stream) = self.pick(pick) else { return };
                self.exchanges.remove(&stream);
                self.session.handle_response_error(self.now, stream, "connection reset");
            }
            Op::Advance(ms) => return self.handle_timeout(self.now + Duration::from_millis(ms.into())),
            Op::ToDeadline => {
                let at = self.session.poll_timeout().unwrap_or(self.now);
                return self.handle_timeout(at);
            }
            Op::Send { method, timeout_ms } => {
                let (method, params) = match method % 8 {
                    0 => ("tools/list", json!({})),
                    1 => ("tools/call", json!({"name": "echo", "arguments": {"text": "hi"}})),
                    2 => ("tools/call", json!({"name": "add", "arguments": {"a": 1}})),
                    3 => ("resources/read", json!({"uri": "file:///a"})),
                    4 => ("prompts/get", json!({"name": "p"})),
                    5 => ("resources/subscribe", json!({"uri": "file:///a"})),
                    6 => ("server/discover", json!({})),
                    _ => ("vendor/custom", json!({"x": 1})),
                };
                let mut options = RequestOptions::default();
                if let Some(ms) = timeout_ms {
                    options = options.timeout(Duration::from_millis(ms.into()));
                }
                let params = params.to_string();
                let sent =
                    self.session.commands().send_request(self.now, method, Some(params.as_bytes()), options);
                if let Ok(id) = sent {
                    self.contract.issued(id);
                }
            }
            Op::Cancel(pick) => {
                if let Some(id) = self
                    .contract
                    .outstanding
                    .iter()
                    .nth(usize::from(pick) % self.contract.outstanding.len().max(1))
                    .cloned()
                {
                    let _ = self.session.commands().cancel(&id, None);
                }
            }
            Op::Respond { pick, ok } => {
                if !self.contract.server_requests.is_empty() {
                    let i = usize::from(pick) % self.contract.server_requests.len();
                    let id = self.contract.server_requests.remove(i).expect("in range");
                    let mut conn = self.session.commands();
                    let _ = if ok {
                        conn.respond(&id, Ok(&json!({"roots": []})))
                    } else {
                        conn.respond::<Value>(&id, Err(ErrorObject::new(-1, "no")))
                    };
                }
            }
            Op::Close => self.session.commands().close(),
        }
        self.pump();
    }
}

fuzz_target!(|input: Input<'_>| {
    let Input { setup, ops, pool } = input;
    let versions: &[ProtocolVersion] = match setup.versions {
        Versions::Legacy => &[ProtocolVersion::V2025_11_25, ProtocolVersion::V2025_03_26],
        Versions::Dual => ProtocolVersion::DUAL_ERA,
        Versions::Modern => ProtocolVersion::MODERN,
        Versions::V2024 => &[ProtocolVersion::V2024_11_05],
    };
    let mut config = ClientConfig::new(Implementation::new("fuzz-client", "0.1.0"))
        .with_versions(versions)
        .with_request_timeout(Duration::from_secs(30))
        .with_max_total(Duration::from_secs(600));
    if setup.max_message_size != 0 {
        config = config.with_max_message_size(setup.max_message_size.into());
    }
    if setup.client_capabilities {
        config = config.with_capabilities(all_client_capabilities());
    }
    let http = HttpConfig::new(URL)
        .header("Authorization", "Bearer fuzz")
        .header("X-Fuzz-Secret", "fuzz")
        .standalone_stream(setup.standalone_stream)
        .legacy_fallback(setup.legacy_fallback)
        .max_reconnects((setup.max_reconnects % 8).into());
    let now = epoch();
    let mut run = Run {
        session: HttpSession::new(http, config, now),
        now,
        pool,
        exchanges: BTreeMap::new(),
        sent_streams: BTreeSet::new(),
        aborted: BTreeSet::new(),
        contract: Contract::default(),
    };
    run.pump();
    for op in ops {
        run.op(op);
    }
    // The rest of the pool answers the oldest exchange in flight.
    if let Some(stream) = run.pick(0) {
        let rest = run.take(usize::MAX);
        let sse = matches!(rest.first(), Some(b'd' | b'e' | b':' | b'i' | b'r'));
        let content_type: &[u8] = if sse { b"text/event-stream" } else { b"application/json" };
        run.session.handle_response_head(
            run.now,
            stream,
            200,
            [("content-type", content_type), ("mcp-session-id", b"s1".as_slice())],
        );
        run.body(stream, rest);
        run.exchanges.remove(&stream);
        run.session.handle_response_end(run.now, stream);
        run.pump();
    }

    // Close, and run the clock out: the session must finish.
    run.session.commands().close();
    run.pump();
    for _ in 0..256 {
        if run.session.is_finished() {
            break;
        }
        match run.session.poll_timeout() {
            Some(at) => run.handle_timeout(at),
            None => break,
        }
    }
    assert!(
        run.contract.outstanding.is_empty(),
        "requests unanswered after close: {:?}",
        run.contract.outstanding
    );
    assert!(
        run.session.is_finished(),
        "not finished after close and the clock ran out: {} streams in flight, next deadline {:?}",
        run.session.streams_in_flight(),
        run.session.poll_timeout().map(|at| at - run.now)
    );
});
