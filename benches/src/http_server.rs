//! A minimal, fast Streamable HTTP MCP server for benchmarks: hyper 1 on smol, JSON responses,
//! `echo` as its only tool, and a count of the TCP connections it accepted (to show that the
//! client reuses connections instead of reconnecting per call).
//!
//! Its [`Mode`]s also answer with an event stream, the way some servers do (rmcp's in its
//! session mode): written in one piece, or with the response head and the event in two writes
//! and `TCP_NODELAY` off, which makes a client that delays its ACKs wait out Nagle's algorithm.

use std::collections::{HashMap, VecDeque};
use std::convert::Infallible;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};

use bytes::Bytes;
use http_body_util::BodyExt;
use hyper::body::{Body, Frame, Incoming, SizeHint};
use hyper::service::service_fn;
use hyper::{Method, Request, Response, StatusCode};
use serde_json::{Value, json};
use smol_hyper::rt::FuturesIo;

/// How the server answers a request that has a response.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// `application/json`, head and body in one write, `TCP_NODELAY` on.
    Json,
    /// `text/event-stream` holding one event, head and event in one write, `TCP_NODELAY` off.
    SseOnePiece,
    /// `text/event-stream` holding one event, the head in one write and the event in a second,
    /// `TCP_NODELAY` off: Nagle's algorithm holds the event until the client acknowledges the
    /// head, so a client that delays that ACK waits for its delayed-ACK timer (40 ms on Linux)
    /// on every response.
    SseSplit,
    /// `text/event-stream` holding one event, head and event in one write, `TCP_NODELAY` on:
    /// the event-stream twin of [`Mode::Json`], for large results (with Nagle's algorithm on, the
    /// last segment of a large event may wait for the client's ACK).
    Sse,
}

impl Mode {
    /// The mode's name on command lines: `json`, `sse-one-piece`, `sse-split`.
    pub fn name(self) -> &'static str {
        match self {
            Mode::Json => "json",
            Mode::SseOnePiece => "sse-one-piece",
            Mode::SseSplit => "sse-split",
            Mode::Sse => "sse",
        }
    }

    /// The mode named `name` (see [`Mode::name`]).
    pub fn from_name(name: &str) -> Option<Self> {
        [Mode::Json, Mode::SseOnePiece, Mode::SseSplit, Mode::Sse]
            .into_iter()
            .find(|mode| mode.name() == name)
    }
}

/// A running server; it lives until the process ends.
#[derive(Debug, Clone)]
pub struct BenchServer {
    addr: SocketAddr,
    accepted: Arc<AtomicU64>,
}

impl BenchServer {
    /// Starts the server in [`Mode::Json`] on 127.0.0.1 on a free port, on its own thread.
    pub fn start() -> std::io::Result<Self> {
        Self::start_with(Mode::Json)
    }

    /// Starts the server in `mode` on 127.0.0.1 on a free port, on its own thread.
    pub fn start_with(mode: Mode) -> std::io::Result<Self> {
        let listener = std::net::TcpListener::bind("127.0.0.1:0")?;
        let addr = listener.local_addr()?;
        let accepted = Arc::new(AtomicU64::new(0));
        let count = accepted.clone();
        let listener = async_io::Async::new(listener)?;
        std::thread::Builder::new().name("bench-http-server".into()).spawn(move || {
            let executor = smol::LocalExecutor::new();
            smol::block_on(executor.run(async {
                loop {
                    let Ok((stream, _)) = listener.accept().await else { continue };
                    let _ = stream.get_ref().set_nodelay(matches!(mode, Mode::Json | Mode::Sse));
                    count.fetch_add(1, Ordering::Relaxed);
                    executor
                        .spawn(async move {
                            let service = service_fn(move |request| handle(mode, request));
                            let _ = hyper::server::conn::http1::Builder::new()
                                .serve_connection(FuturesIo::new(stream), service)
                                .await;
                        })
                        .detach();
                }
            }));
        })?;
        Ok(Self { addr, accepted })
    }

    /// The MCP endpoint.
    pub fn url(&self) -> String {
        format!("http://{}/mcp", self.addr)
    }

    /// The address it listens on.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// TCP connections accepted so far.
    pub fn connections_accepted(&self) -> u64 {
        self.accepted.load(Ordering::Relaxed)
    }
}

/// The largest result the `blob` tool sends (bytes of text).
pub const MAX_BLOB: usize = 64 * 1024 * 1024;

/// A response body of known length, in pieces: all at once, or (`hold`) only from the second
/// poll on, so that hyper writes the head on its own first.
struct Reply {
    frames: VecDeque<Bytes>,
    hold: bool,
}

impl Body for Reply {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        let this = self.get_mut();
        if this.hold {
            // hyper flushes the head it has buffered when the body is not ready.
            this.hold = false;
            cx.waker().wake_by_ref();
            return Poll::Pending;
        }
        Poll::Ready(this.frames.pop_front().map(|data| Ok(Frame::data(data))))
    }

    fn is_end_stream(&self) -> bool {
        self.frames.is_empty()
    }

    fn size_hint(&self) -> SizeHint {
        SizeHint::with_exact(self.frames.iter().map(|frame| frame.len() as u64).sum())
    }
}

fn reply(status: StatusCode, body: Vec<u8>) -> Response<Reply> {
    reply_frames(status, [Bytes::from(body)])
}

fn reply_frames(status: StatusCode, frames: impl IntoIterator<Item = Bytes>) -> Response<Reply> {
    let frames = frames.into_iter().filter(|frame| !frame.is_empty()).collect();
    let mut response = Response::new(Reply { frames, hold: false });
    *response.status_mut() = status;
    let headers = response.headers_mut();
    headers.insert("content-type", hyper::header::HeaderValue::from_static("application/json"));
    headers.insert("mcp-session-id", hyper::header::HeaderValue::from_static("bench-session"));
    response
}

/// `message`, a JSON-RPC response, as `mode` sends it.
fn respond(mode: Mode, message: &Value) -> Response<Reply> {
    let json = serde_json::to_vec(message).unwrap_or_default();
    if mode == Mode::Json {
        return reply(StatusCode::OK, json);
    }
    let mut event = b"event: message\ndata: ".to_vec();
    event.extend_from_slice(&json);
    event.extend_from_slice(b"\n\n");
    let mut response = reply(StatusCode::OK, event);
    response.body_mut().hold = mode == Mode::SseSplit;
    response
        .headers_mut()
        .insert("content-type", hyper::header::HeaderValue::from_static("text/event-stream"));
    response
}

/// The `result` of a `blob` call of `size` bytes, built once per size and shared afterwards.
fn blob_result(size: usize) -> Bytes {
    static BLOBS: Mutex<Option<HashMap<usize, Bytes>>> = Mutex::new(None);
    let mut blobs = BLOBS.lock().unwrap_or_else(PoisonError::into_inner);
    blobs
        .get_or_insert_with(HashMap::new)
        .entry(size)
        .or_insert_with(|| {
            let mut result = br#"{"content":[{"type":"text","text":""#.to_vec();
            result.resize(result.len() + size, b'x');
            result.extend_from_slice(br#""}]}"#);
            Bytes::from(result)
        })
        .clone()
}

/// The response to a `blob` call: the prebuilt result between the response's head (with `id`)
/// and its end, as `mode` frames them, in three pieces (the result itself is not copied).
fn respond_blob(mode: Mode, id: &Value, size: usize) -> Response<Reply> {
    let sse = mode != Mode::Json;
    let mut head = if sse { b"event: message\ndata: ".to_vec() } else { Vec::new() };
    head.extend_from_slice(br#"{"jsonrpc":"2.0","id":"#);
    head.extend_from_slice(id.to_string().as_bytes());
    head.extend_from_slice(br#","result":"#);
    let tail: &'static [u8] = if sse { b"}\n\n" } else { b"}" };
    let frames = [Bytes::from(head), blob_result(size), Bytes::from_static(tail)];
    let mut response = reply_frames(StatusCode::OK, frames);
    response.body_mut().hold = mode == Mode::SseSplit;
    if sse {
        response
            .headers_mut()
            .insert("content-type", hyper::header::HeaderValue::from_static("text/event-stream"));
    }
    response
}

async fn handle(mode: Mode, request: Request<Incoming>) -> Result<Response<Reply>, Infallible> {
    if request.method() != Method::POST {
        // No server-message stream; DELETE is accepted.
        let status =
            if request.method() == Method::DELETE { StatusCode::OK } else { StatusCode::METHOD_NOT_ALLOWED };
        return Ok(reply(status, Vec::new()));
    }
    let Ok(body) = request.into_body().collect().await else {
        return Ok(reply(StatusCode::BAD_REQUEST, Vec::new()));
    };
    let Ok(message) = serde_json::from_slice::<Value>(&body.to_bytes()) else {
        return Ok(reply(StatusCode::BAD_REQUEST, Vec::new()));
    };
    let (Some(id), Some(method)) = (message.get("id"), message.get("method").and_then(Value::as_str)) else {
        // A notification or an answer.
        return Ok(reply(StatusCode::ACCEPTED, Vec::new()));
    };
    let params = message.get("params").cloned().unwrap_or(Value::Null);
    if method == "tools/call" && params.get("name").and_then(Value::as_str) == Some("blob") {
        let size = params.pointer("/arguments/size").and_then(Value::as_u64).unwrap_or(0);
        let size = usize::try_from(size).unwrap_or(MAX_BLOB).min(MAX_BLOB);
        return Ok(respond_blob(mode, id, size));
    }
    let result = match method {
        "initialize" => json!({
            "protocolVersion": params
                .get("protocolVersion")
                .and_then(Value::as_str)
                .and_then(|offered| crate::INITIALIZE_VERSIONS.into_iter().find(|v| *v == offered))
                .unwrap_or("2025-11-25"),
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "mcp-bench-http-server", "version": "0.1.0"}
        }),
        "tools/list" => json!({"tools": [
            {"name": "echo", "inputSchema": {"type": "object"}},
            {"name": "blob", "inputSchema": {"type": "object"}}
        ]}),
        "tools/call" => {
            let text = params.pointer("/arguments/message").cloned().unwrap_or(json!(""));
            json!({"content": [{"type": "text", "text": text}]})
        }
        "ping" => json!({}),
        _ => {
            let error =
                json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32601, "message": "Method not found"}});
            return Ok(respond(mode, &error));
        }
    };
    Ok(respond(mode, &json!({"jsonrpc": "2.0", "id": id, "result": result})))
}
