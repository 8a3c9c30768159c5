//! Recording a Streamable HTTP session: a reverse proxy between an MCP client and a server.
//!
//! The client is pointed at [`RecordingProxy::url`]; every request (`POST`, `GET`, `DELETE`) is
//! forwarded to the upstream endpoint and the response streamed back as it arrives, chunk by
//! chunk (an event stream may stay open for minutes), while the messages are written to a
//! [`TraceWriter`]:
//!
//! - each request opens an exchange, numbered 1, 2, … in the order requests arrive;
//! - a `POST` body is a client entry (a `GET` or `DELETE` a client entry without a message),
//!   with the request's protocol headers (`mcp-protocol-version`, `mcp-method`, `mcp-name`,
//!   `mcp-param-*`; never the session id, credentials or cookies);
//! - each message of the response is a server entry with the status and content type: a JSON
//!   body, each element of a JSON array body, or each event of an event stream, recorded as it
//!   completes and before its last byte is passed on, so the trace keeps the order the client
//!   saw (see [`crate::http_peer`] for the exact rules);
//! - a response without any message (`202 Accepted`, a refusal without a body, a stream cut
//!   short before its first message) is one server entry without a message.
//!
//! Requests are forwarded with their headers except the hop-by-hop ones, `Host`,
//! `Content-Length` and `Accept-Encoding` (so that bodies arrive uncompressed and can be read),
//! and headers whose values are not visible ASCII. Responses keep their status and headers
//! except the hop-by-hop ones and `Content-Length` (bodies are re-chunked). A client that goes
//! away mid-stream closes the upstream stream with it.

use std::convert::Infallible;
use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use futures_lite::{Stream, StreamExt};
use http_body_util::combinators::UnsyncBoxBody;
use http_body_util::{BodyExt, Full, Limited, StreamBody};
use hyper::body::Frame;
use hyper::header::{HeaderName, HeaderValue};
use hyper::service::service_fn;
use hyper::{HeaderMap, Method, Request, Response, StatusCode};
use mcp_hyper::HyperTransport;
use mcp_sansio::http::{HttpMethod, HttpRequest};
use mcp_smol::http::{BodyStream, HttpTransport};
use smol_hyper::rt::FuturesIo;

use crate::http_peer::{MAX_MESSAGE_SIZE, Splitter, header, media_type};
use crate::trace::{Direction, HttpMeta, TraceWriter};

/// Headers that concern one connection only (RFC 9110, section 7.6.1), never forwarded.
const HOP_BY_HOP: &[&str] = &[
    "connection",
    "keep-alive",
    "proxy-connection",
    "proxy-authenticate",
    "proxy-authorization",
    "te",
    "trailer",
    "transfer-encoding",
    "upgrade",
];

/// How long the proxy waits for the end of a response body that was announced empty.
const EMPTY_BODY_WAIT: Duration = Duration::from_secs(1);

type ProxyBody = UnsyncBoxBody<Bytes, io::Error>;

/// A recording reverse proxy in front of one Streamable HTTP endpoint (see the module
/// documentation). Dropping it (or [`stop`](Self::stop)) closes the listener and every
/// connection, with their upstream streams.
pub struct RecordingProxy {
    addr: SocketAddr,
    path: String,
    shared: Arc<Shared>,
    accept: smol::Task<()>,
    connections: Arc<Mutex<Vec<smol::Task<()>>>>,
}

impl std::fmt::Debug for RecordingProxy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RecordingProxy")
            .field("addr", &self.addr)
            .field("upstream", &self.shared.upstream)
            .field("exchanges", &self.shared.exchanges.load(Ordering::Relaxed))
            .finish()
    }
}

/// What every connection of the proxy shares.
struct Shared {
    upstream: String,
    transport: HyperTransport,
    writer: Arc<Mutex<TraceWriter>>,
    exchanges: AtomicU64,
    /// The first error writing the trace.
    error: Mutex<Option<io::Error>>,
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Shared {
    /// Records one entry; keeps the first write error for [`RecordingProxy::take_write_error`].
    fn record(&self, dir: Direction, bytes: &[u8], meta: HttpMeta) {
        let result = lock(&self.writer).record(dir, bytes, Some(meta));
        if let Err(error) = result {
            lock(&self.error).get_or_insert(error);
        }
    }
}

impl RecordingProxy {
    /// Listens on `listen` (for example `127.0.0.1:0`) and forwards every request to the
    /// endpoint `upstream` (an `http` or `https` URL; a request's query string replaces the
    /// upstream's), recording the exchanges into `writer`.
    pub async fn start(
        listen: SocketAddr,
        upstream: String,
        writer: Arc<Mutex<TraceWriter>>,
    ) -> io::Result<Self> {
        let path = url_path(&upstream).ok_or_else(|| {
            io::Error::new(io::ErrorKind::InvalidInput, format!("not an http(s) URL: {upstream:?}"))
        })?;
        let listener = smol::net::TcpListener::bind(listen).await?;
        let addr = listener.local_addr()?;
        let shared = Arc::new(Shared {
            upstream,
            transport: HyperTransport::new(),
            writer,
            exchanges: AtomicU64::new(0),
            error: Mutex::new(None),
        });
        let connections = Arc::new(Mutex::new(Vec::<smol::Task<()>>::new()));
        let accept = smol::spawn({
            let shared = Arc::clone(&shared);
            let connections = Arc::clone(&connections);
            async move {
                loop {
                    let stream = match listener.accept().await {
                        Ok((stream, _)) => stream,
                        // Out of file descriptors and the like: try again shortly.
                        Err(_) => {
                            async_io::Timer::after(Duration::from_millis(50)).await;
                            continue;
                        }
                    };
                    let _ = stream.set_nodelay(true);
                    let shared = Arc::clone(&shared);
                    let task = smol::spawn(async move {
                        let service = service_fn(move |request| handle(request, Arc::clone(&shared)));
                        let _ = hyper::server::conn::http1::Builder::new()
                            .serve_connection(FuturesIo::new(stream), service)
                            .await;
                    });
                    let mut connections = lock(&connections);
                    connections.retain(|task| !task.is_finished());
                    connections.push(task);
                }
            }
        });
        Ok(Self { addr, path, shared, accept, connections })
    }

    /// The proxy's endpoint for the client: `http://ADDR` and the upstream URL's path.
    pub fn url(&self) -> String {
        format!("http://{}{}", self.addr, self.path)
    }

    /// The address the proxy listens on.
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// How many exchanges were recorded so far.
    pub fn exchanges(&self) -> u64 {
        self.shared.exchanges.load(Ordering::Relaxed)
    }

    /// The first error writing the trace since the last call, if there was one (recording goes
    /// on after an error: the session is not disturbed).
    pub fn take_write_error(&self) -> Option<io::Error> {
        lock(&self.shared.error).take()
    }

    /// Stops listening and closes every connection (and the upstream streams they had open).
    /// The writer itself is left to the caller to [`finish`](TraceWriter::finish).
    pub async fn stop(self) {
        self.accept.cancel().await;
        let connections = std::mem::take(&mut *lock(&self.connections));
        for task in connections {
            task.cancel().await;
        }
    }
}

/// The path of an `http(s)` URL (`/` when it has none); `None` for another scheme.
fn url_path(url: &str) -> Option<String> {
    let lower = url.to_ascii_lowercase();
    let rest = lower
        .strip_prefix("http://")
        .or_else(|| lower.strip_prefix("https://"))
        .map(|rest| &url[url.len() - rest.len()..])?;
    let rest = rest.split(['?', '#']).next().unwrap_or_default();
    Some(rest.find('/').map_or_else(|| "/".to_owned(), |at| rest[at..].to_owned()))
}

/// `upstream` with the request's query, if it has one.
fn upstream_url(upstream: &str, query: Option<&str>) -> String {
    match query {
        Some(query) => {
            let base = upstream.split(['?', '#']).next().unwrap_or(upstream);
            format!("{base}?{query}")
        }
        None => upstream.to_owned(),
    }
}

/// The request headers a trace keeps: the protocol ones, lowercase.
fn recorded_headers(headers: &HeaderMap) -> Vec<(String, String)> {
    headers
        .iter()
        .filter(|(name, _)| {
            let name = name.as_str();
            matches!(name, "mcp-protocol-version" | "mcp-method" | "mcp-name")
                || name.starts_with("mcp-param-")
        })
        .map(|(name, value)| {
            (name.as_str().to_owned(), String::from_utf8_lossy(value.as_bytes()).into_owned())
        })
        .collect()
}

/// Whether a header is not forwarded in either direction.
fn hop_by_hop(name: &str, connection: &[String]) -> bool {
    HOP_BY_HOP.contains(&name) || connection.iter().any(|listed| listed == name)
}

/// The header names listed in `Connection` (lowercase).
fn connection_tokens<'a>(values: impl Iterator<Item = &'a [u8]>) -> Vec<String> {
    values
        .filter_map(|value| std::str::from_utf8(value).ok())
        .flat_map(|value| value.split(','))
        .map(|token| token.trim().to_ascii_lowercase())
        .filter(|token| !token.is_empty())
        .collect()
}

fn full(status: StatusCode, text: &str) -> Response<ProxyBody> {
    let body =
        Full::new(Bytes::from(text.to_owned())).map_err(|never: Infallible| match never {}).boxed_unsync();
    let mut response = Response::new(body);
    *response.status_mut() = status;
    if !text.is_empty() {
        response.headers_mut().insert("content-type", HeaderValue::from_static("text/plain; charset=utf-8"));
    }
    response
}

/// Forwards one request and records its exchange.
async fn handle(
    request: Request<hyper::body::Incoming>,
    shared: Arc<Shared>,
) -> Result<Response<ProxyBody>, Infallible> {
    let (method, name) = match *request.method() {
        Method::POST => (HttpMethod::Post, "POST"),
        Method::GET => (HttpMethod::Get, "GET"),
        Method::DELETE => (HttpMethod::Delete, "DELETE"),
        _ => {
            let mut response = full(StatusCode::METHOD_NOT_ALLOWED, "");
            response.headers_mut().insert("allow", HeaderValue::from_static("GET, POST, DELETE"));
            return Ok(response);
        }
    };
    let (parts, body) = request.into_parts();
    let body = match Limited::new(body, MAX_MESSAGE_SIZE).collect().await {
        Ok(body) => body.to_bytes(),
        Err(_) => return Ok(full(StatusCode::BAD_REQUEST, "the request body could not be read")),
    };
    let exchange = shared.exchanges.fetch_add(1, Ordering::Relaxed) + 1;
    let client_meta = HttpMeta {
        method: name.to_owned(),
        exchange,
        headers: recorded_headers(&parts.headers),
        ..Default::default()
    };
    shared.record(Direction::Client, if method == HttpMethod::Post { &body } else { b"" }, client_meta);

    let connection = connection_tokens(parts.headers.get_all("connection").iter().map(HeaderValue::as_bytes));
    let headers = parts
        .headers
        .iter()
        .filter(|(name, _)| {
            let name = name.as_str();
            !hop_by_hop(name, &connection) && !matches!(name, "host" | "content-length" | "accept-encoding")
        })
        .filter_map(|(name, value)| Some((name.as_str().to_owned(), value.to_str().ok()?.to_owned())))
        .collect();
    let url = upstream_url(&shared.upstream, parts.uri.query());
    let forwarded = HttpRequest::new(method, url, headers, body.to_vec());
    let mut meta = HttpMeta { method: name.to_owned(), exchange, ..Default::default() };
    let upstream = match shared.transport.send(forwarded).await {
        Ok(upstream) => upstream,
        Err(error) => {
            meta.status = Some(502);
            shared.record(Direction::Server, b"", meta);
            return Ok(full(StatusCode::BAD_GATEWAY, &format!("the upstream server failed: {error}")));
        }
    };
    meta.status = Some(upstream.status);
    meta.content_type = media_type(&upstream.headers);

    let status = StatusCode::from_u16(upstream.status).unwrap_or(StatusCode::BAD_GATEWAY);
    let connection = connection_tokens(
        upstream
            .headers
            .iter()
            .filter(|(n, _)| n.eq_ignore_ascii_case("connection"))
            .map(|(_, v)| v.as_slice()),
    );
    let mut head = HeaderMap::new();
    for (name, value) in &upstream.headers {
        let lower = name.to_ascii_lowercase();
        if hop_by_hop(&lower, &connection) || lower == "content-length" {
            continue;
        }
        if let (Ok(name), Ok(value)) =
            (HeaderName::from_bytes(lower.as_bytes()), HeaderValue::from_bytes(value))
        {
            head.append(name, value);
        }
    }
    let empty =
        matches!(upstream.status, 204 | 304) || header(&upstream.headers, "content-length") == Some("0");
    let body = if empty {
        // Read the (empty) body to its end so that the upstream connection is reused, and record
        // the exchange before the client can see the response and send its next request.
        let mut rest = upstream.body;
        let _ = futures_lite::future::or(async { rest.next().await.map(drop) }, async {
            async_io::Timer::after(EMPTY_BODY_WAIT).await;
            None
        })
        .await;
        shared.record(Direction::Server, b"", meta);
        Full::new(Bytes::new()).map_err(|never: Infallible| match never {}).boxed_unsync()
    } else {
        let tee = Tee {
            splitter: Splitter::new(meta.content_type.as_deref()),
            upstream: upstream.body,
            shared,
            meta,
            recorded: false,
            done: false,
        };
        StreamBody::new(tee).boxed_unsync()
    };
    let mut response = Response::new(body);
    *response.status_mut() = status;
    *response.headers_mut() = head;
    Ok(response)
}

/// A response body passed on chunk by chunk, its messages recorded as they complete.
struct Tee {
    upstream: BodyStream,
    splitter: Splitter,
    shared: Arc<Shared>,
    meta: HttpMeta,
    /// Whether a message was recorded.
    recorded: bool,
    /// Whether the upstream body ended (or failed).
    done: bool,
}

impl Tee {
    fn record(&mut self, items: Vec<Result<Vec<u8>, String>>) {
        // A message too large to keep is passed on but not recorded.
        for bytes in items.into_iter().flatten() {
            self.shared.record(Direction::Server, &bytes, self.meta.clone());
            self.recorded = true;
        }
    }

    /// The body ended: what the splitter still held, or an entry for an exchange without any
    /// message.
    fn end(&mut self, complete: bool) {
        self.done = true;
        if complete {
            let rest = self.splitter.finish(self.meta.status.unwrap_or(200));
            self.record(rest);
        }
        if !self.recorded {
            self.recorded = true;
            self.shared.record(Direction::Server, b"", self.meta.clone());
        }
    }
}

impl Stream for Tee {
    type Item = io::Result<Frame<Bytes>>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = &mut *self;
        if this.done {
            return Poll::Ready(None);
        }
        match this.upstream.as_mut().poll_next(cx) {
            Poll::Pending => Poll::Pending,
            Poll::Ready(Some(Ok(chunk))) => {
                let items = this.splitter.feed(&chunk);
                this.record(items);
                Poll::Ready(Some(Ok(Frame::data(chunk))))
            }
            Poll::Ready(Some(Err(error))) => {
                this.end(false);
                Poll::Ready(Some(Err(error)))
            }
            Poll::Ready(None) => {
                this.end(true);
                Poll::Ready(None)
            }
        }
    }
}

impl Drop for Tee {
    /// The client went away (or the proxy stopped) before the body ended.
    fn drop(&mut self) {
        if !self.done {
            self.end(false);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls() {
        assert_eq!(url_path("http://127.0.0.1:3000/mcp?x=1").as_deref(), Some("/mcp"));
        assert_eq!(url_path("HTTPS://example.com").as_deref(), Some("/"));
        assert_eq!(url_path("ftp://example.com/x"), None);
        assert_eq!(upstream_url("http://h/mcp?a=1", Some("b=2")), "http://h/mcp?b=2");
        assert_eq!(upstream_url("http://h/mcp?a=1", None), "http://h/mcp?a=1");
    }

    #[test]
    fn only_protocol_headers_are_recorded() {
        let mut headers = HeaderMap::new();
        for (name, value) in [
            ("Mcp-Session-Id", "secret-session"),
            ("Authorization", "Bearer secret"),
            ("Cookie", "a=b"),
            ("MCP-Protocol-Version", "2025-11-25"),
            ("Mcp-Method", "tools/call"),
            ("Mcp-Name", "echo"),
            ("Mcp-Param-Region", "north"),
        ] {
            headers.append(HeaderName::from_bytes(name.as_bytes()).unwrap(), HeaderValue::from_static(value));
        }
        let recorded = recorded_headers(&headers);
        let names: Vec<&str> = recorded.iter().map(|(name, _)| name.as_str()).collect();
        assert_eq!(names, ["mcp-protocol-version", "mcp-method", "mcp-name", "mcp-param-region"]);
        assert!(!format!("{recorded:?}").contains("secret"));
    }

    #[test]
    fn connection_listed_headers_are_hop_by_hop() {
        let tokens = connection_tokens([&b"keep-alive, X-Private"[..]].into_iter());
        assert!(hop_by_hop("x-private", &tokens) && hop_by_hop("upgrade", &tokens));
        assert!(!hop_by_hop("mcp-session-id", &tokens));
    }
}
