//! A live Streamable HTTP server at the wire level (see [`crate::peer`]).
//!
//! Each message is `POST`ed on its own exchange, executed by [`mcp_hyper::HyperTransport`]; a
//! task per exchange reads the response and turns it into [`Incoming`]s:
//!
//! - a JSON body is one message; a non-empty JSON array (a batch) is split into one message per
//!   element, each element's bytes verbatim, in order;
//! - an event stream gives one message per event with data, as each event completes (events
//!   without data, such as resumption primers, are skipped);
//! - a body that is not JSON is one message (its raw bytes) on a success status, and no message
//!   on an error status;
//! - an exchange that carried no message (`202 Accepted`, an empty body, an error status without
//!   a JSON body) gives one [`Incoming::Empty`];
//! - an exchange that fails at the connection level (refused, reset, a body cut short) gives
//!   [`Incoming::Closed`].
//!
//! The peer learns the session id from any response's `Mcp-Session-Id` header and the protocol
//! version from the result of `initialize`, before it delivers the messages of that response,
//! and sends both on every later request.

use std::fmt;
use std::io;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use futures_lite::StreamExt;
use mcp_hyper::HyperTransport;
use mcp_sansio::http::{HttpMethod, HttpRequest, SseDecoder, header_value};
use mcp_sansio::schema::META_PROTOCOL_VERSION;
use mcp_smol::http::HttpTransport;
use serde_json::Value;
use serde_json::value::RawValue;

use crate::peer::Incoming;
use crate::trace::HttpMeta;

/// The largest message (a JSON body or one event) read from a response; a larger one ends the
/// exchange with [`Incoming::Closed`].
pub const MAX_MESSAGE_SIZE: usize = 64 * 1024 * 1024;

/// How long [`HttpPeer::send`] waits for the response head before it returns anyway.
const HEAD_GRACE: Duration = Duration::from_millis(200);

/// How long [`HttpPeer::shutdown`] waits for the answer to its `DELETE`.
const DELETE_WAIT: Duration = Duration::from_secs(2);

/// What the peer learned from the server's responses.
#[derive(Debug, Default)]
struct Learned {
    session_id: Option<String>,
    protocol_version: Option<String>,
}

/// A Streamable HTTP endpoint: each message is `POST`ed; what comes back (a JSON body or an
/// event stream) arrives on [`incoming`](Self::incoming).
///
/// Every exchange is read by its own task; dropping the peer (or [`shutdown`](Self::shutdown))
/// cancels them all, which closes every open response stream.
pub struct HttpPeer {
    url: String,
    headers: Vec<(String, String)>,
    transport: HyperTransport,
    learned: Arc<Mutex<Learned>>,
    exchanges: u64,
    tx: async_channel::Sender<Incoming>,
    incoming: async_channel::Receiver<Incoming>,
    tasks: Vec<smol::Task<()>>,
}

impl fmt::Debug for HttpPeer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Header values may be credentials: names only.
        let names: Vec<&str> = self.headers.iter().map(|(name, _)| name.as_str()).collect();
        let learned = lock(&self.learned);
        f.debug_struct("HttpPeer")
            .field("url", &self.url)
            .field("header_names", &names)
            .field("exchanges", &self.exchanges)
            .field("in_session", &learned.session_id.is_some())
            .field("protocol_version", &learned.protocol_version)
            .finish()
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

impl HttpPeer {
    /// A peer for the endpoint `url` (`http` or `https`), sending `headers` with every request.
    /// Nothing is sent until [`send`](Self::send).
    pub fn new(url: &str, headers: Vec<(String, String)>) -> io::Result<Self> {
        let lower = url.to_ascii_lowercase();
        if !(lower.starts_with("http://") || lower.starts_with("https://")) {
            return Err(io::Error::new(io::ErrorKind::InvalidInput, format!("not an http(s) URL: {url:?}")));
        }
        let (tx, incoming) = async_channel::unbounded();
        Ok(Self {
            url: url.to_owned(),
            headers,
            transport: HyperTransport::new(),
            learned: Arc::default(),
            exchanges: 0,
            tx,
            incoming,
            tasks: Vec::new(),
        })
    }

    /// `POST`s one message (any bytes: they need not be JSON).
    ///
    /// The request carries `Content-Type: application/json`, `Accept: application/json,
    /// text/event-stream`, the peer's headers, then `headers` (recorded `Mcp-*` headers), then
    /// those the caller did not give: `Mcp-Session-Id` once learned; `MCP-Protocol-Version`
    /// (the body's `_meta` version for a 2026-07-28-style request, else the version `initialize`
    /// negotiated); and for a request whose `params._meta` names a protocol version, `Mcp-Method`
    /// and, for `tools/call`, `prompts/get`, `resources/read` and `tasks/*`, `Mcp-Name`.
    ///
    /// Returns once the response head arrived, the exchange failed, or 200 ms passed, so that
    /// messages sent one after the other reach a promptly answering server in that order. The
    /// response arrives on [`incoming`](Self::incoming).
    pub async fn send(&mut self, bytes: &[u8], headers: &[(String, String)]) -> io::Result<()> {
        let mut all = vec![
            ("Content-Type".to_owned(), "application/json".to_owned()),
            ("Accept".to_owned(), "application/json, text/event-stream".to_owned()),
        ];
        all.extend(self.headers.iter().cloned());
        all.extend(headers.iter().cloned());
        let message = serde_json::from_slice::<Value>(bytes).ok();
        let method = message.as_ref().and_then(|m| m.get("method")).and_then(Value::as_str);
        let params = message.as_ref().and_then(|m| m.get("params"));
        let modern_version = params
            .and_then(|p| p.get("_meta"))
            .and_then(|meta| meta.get(META_PROTOCOL_VERSION))
            .and_then(Value::as_str);
        self.add_session_headers(&mut all, modern_version);
        if modern_version.is_some()
            && let Some(method) = method
        {
            add_missing(&mut all, "Mcp-Method", method);
            let name = match method {
                "tools/call" | "prompts/get" => params.and_then(|p| p.get("name")),
                "resources/read" => params.and_then(|p| p.get("uri")),
                "tasks/get" | "tasks/update" | "tasks/cancel" => params.and_then(|p| p.get("taskId")),
                _ => None,
            };
            if let Some(name) = name.and_then(Value::as_str) {
                add_missing(&mut all, "Mcp-Name", name);
            }
        }
        let initialize = method == Some("initialize");
        let request = HttpRequest::new(HttpMethod::Post, self.url.clone(), all, bytes.to_vec());
        self.start(request, "POST", initialize).await;
        Ok(())
    }

    /// Opens the standalone `GET` stream of the session (or whatever the server answers to a
    /// `GET`): its events arrive on [`incoming`](Self::incoming) with method `GET`, and an
    /// [`Incoming::Empty`] when it ends without any. Returns like [`send`](Self::send).
    pub async fn open_stream(&mut self) -> io::Result<()> {
        let mut all = vec![("Accept".to_owned(), "text/event-stream".to_owned())];
        all.extend(self.headers.iter().cloned());
        self.add_session_headers(&mut all, None);
        let request = HttpRequest::new(HttpMethod::Get, self.url.clone(), all, Vec::new());
        self.start(request, "GET", false).await;
        Ok(())
    }

    /// The session id the server gave (`Mcp-Session-Id`), if any.
    pub fn session_id(&self) -> Option<String> {
        lock(&self.learned).session_id.clone()
    }

    /// The protocol version `initialize` negotiated, if it was seen.
    pub fn protocol_version(&self) -> Option<String> {
        lock(&self.learned).protocol_version.clone()
    }

    /// How many exchanges were started so far (the number of the last one).
    pub fn exchanges(&self) -> u64 {
        self.exchanges
    }

    /// Where responses arrive.
    pub fn incoming(&self) -> async_channel::Receiver<Incoming> {
        self.incoming.clone()
    }

    /// Ends the session: cancels every exchange still open (closing its stream, without
    /// reporting anything more for it), then sends `DELETE` when a session id is known, waiting
    /// at most 2 s for the answer (reported as [`Incoming::Empty`] with method `DELETE`, or
    /// [`Incoming::Closed`], to receivers still holding [`incoming`](Self::incoming)).
    pub async fn shutdown(mut self) {
        for task in self.tasks.drain(..) {
            task.cancel().await;
        }
        if self.session_id().is_some() {
            let mut all = self.headers.clone();
            self.add_session_headers(&mut all, None);
            let request = HttpRequest::new(HttpMethod::Delete, self.url.clone(), all, Vec::new());
            self.exchanges += 1;
            let task = smol::spawn(exchange(Exchange {
                transport: self.transport.clone(),
                request,
                number: self.exchanges,
                method: "DELETE",
                initialize: false,
                learned: Arc::clone(&self.learned),
                tx: self.tx.clone(),
                head: None,
            }));
            let finished = futures_lite::future::or(
                async {
                    task.await;
                    true
                },
                async {
                    async_io::Timer::after(DELETE_WAIT).await;
                    false
                },
            )
            .await;
            if !finished {
                let _ = self.tx.try_send(Incoming::Closed(format!(
                    "DELETE (exchange {}) was not answered within {DELETE_WAIT:?}",
                    self.exchanges
                )));
            }
        }
    }

    /// Adds `Mcp-Session-Id` and `MCP-Protocol-Version` unless present.
    fn add_session_headers(&self, headers: &mut Vec<(String, String)>, modern_version: Option<&str>) {
        let learned = lock(&self.learned);
        if let Some(id) = &learned.session_id {
            add_missing(headers, "Mcp-Session-Id", id);
        }
        if let Some(version) = modern_version.or(learned.protocol_version.as_deref()) {
            add_missing(headers, "MCP-Protocol-Version", version);
        }
    }

    /// Starts an exchange on its own task; waits (bounded) for its response head.
    async fn start(&mut self, request: HttpRequest, method: &'static str, initialize: bool) {
        self.tasks.retain(|task| !task.is_finished());
        self.exchanges += 1;
        let (head_tx, head_rx) = async_channel::bounded(1);
        self.tasks.push(smol::spawn(exchange(Exchange {
            transport: self.transport.clone(),
            request,
            number: self.exchanges,
            method,
            initialize,
            learned: Arc::clone(&self.learned),
            tx: self.tx.clone(),
            head: Some(head_tx),
        })));
        futures_lite::future::or(
            async {
                let _ = head_rx.recv().await;
            },
            async {
                async_io::Timer::after(HEAD_GRACE).await;
            },
        )
        .await;
    }
}

/// Appends `name: value` unless a header of that name (case-insensitive) is there; encodes a
/// value that is not plain printable ASCII as `=?base64?…?=`, as 2026-07-28 does.
fn add_missing(headers: &mut Vec<(String, String)>, name: &str, value: &str) {
    if !headers.iter().any(|(n, _)| n.eq_ignore_ascii_case(name)) {
        headers.push((name.to_owned(), header_value(value)));
    }
}

/// One exchange, as its task sees it.
struct Exchange {
    transport: HyperTransport,
    request: HttpRequest,
    number: u64,
    method: &'static str,
    /// The request is `initialize`: its result sets the protocol version.
    initialize: bool,
    learned: Arc<Mutex<Learned>>,
    tx: async_channel::Sender<Incoming>,
    /// Closed (dropped) when the response head arrived or the exchange failed.
    head: Option<async_channel::Sender<()>>,
}

/// Runs one exchange: sends the request, learns from the response, delivers its messages.
async fn exchange(exchange: Exchange) {
    let Exchange { transport, request, number, method, initialize, learned, tx, head } = exchange;
    let response = match transport.send(request).await {
        Ok(response) => response,
        Err(error) => {
            drop(head);
            let _ = tx.send(Incoming::Closed(format!("{method} (exchange {number}) failed: {error}"))).await;
            return;
        }
    };
    if let Some(id) = header(&response.headers, "mcp-session-id")
        && is_visible_ascii(id)
    {
        lock(&learned).session_id = Some(id.to_owned());
    }
    drop(head);
    let content_type = media_type(&response.headers);
    let meta = HttpMeta {
        method: method.to_owned(),
        exchange: number,
        status: Some(response.status),
        content_type: content_type.clone(),
        headers: Vec::new(),
    };
    let mut splitter = Splitter::new(content_type.as_deref());
    let mut delivery = Delivery { tx: &tx, learned: &learned, meta, initialize, delivered: false };
    let mut body = response.body;
    loop {
        match body.next().await {
            Some(Ok(chunk)) => {
                if !delivery.deliver(splitter.feed(&chunk)).await {
                    return;
                }
            }
            Some(Err(error)) => {
                let reason = format!("{method} (exchange {number}): the response body failed: {error}");
                let _ = tx.send(Incoming::Closed(reason)).await;
                return;
            }
            None => break,
        }
    }
    drop(body);
    if delivery.deliver(splitter.finish(response.status)).await && !delivery.delivered {
        let _ = tx.send(Incoming::Empty(delivery.meta)).await;
    }
}

/// Delivers the messages of one exchange.
struct Delivery<'a> {
    tx: &'a async_channel::Sender<Incoming>,
    learned: &'a Mutex<Learned>,
    meta: HttpMeta,
    initialize: bool,
    /// Whether a message was delivered.
    delivered: bool,
}

impl Delivery<'_> {
    /// Sends messages on, learning the protocol version from an `initialize` result first; a
    /// problem ends the exchange with [`Incoming::Closed`]. Returns whether to go on.
    async fn deliver(&mut self, items: Vec<Result<Vec<u8>, String>>) -> bool {
        for item in items {
            let bytes = match item {
                Ok(bytes) => bytes,
                Err(problem) => {
                    let reason = format!("{} (exchange {}): {problem}", self.meta.method, self.meta.exchange);
                    let _ = self.tx.send(Incoming::Closed(reason)).await;
                    return false;
                }
            };
            if self.initialize
                && let Some(version) = negotiated_version(&bytes)
            {
                lock(self.learned).protocol_version = Some(version);
            }
            self.delivered = true;
            if self.tx.send(Incoming::Message { bytes, http: Some(self.meta.clone()) }).await.is_err() {
                return false;
            }
        }
        true
    }
}

/// The `protocolVersion` of an `initialize` result.
fn negotiated_version(bytes: &[u8]) -> Option<String> {
    let message: Value = serde_json::from_slice(bytes).ok()?;
    message.pointer("/result/protocolVersion").and_then(Value::as_str).map(str::to_owned)
}

/// Visible ASCII, as the spec requires of a session id.
fn is_visible_ascii(value: &str) -> bool {
    !value.is_empty() && value.bytes().all(|b| (0x21..=0x7e).contains(&b))
}

/// The first value of header `name` (case-insensitive), if it is UTF-8.
pub(crate) fn header<'a>(headers: &'a [(String, Vec<u8>)], name: &str) -> Option<&'a str> {
    headers
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case(name))
        .and_then(|(_, value)| std::str::from_utf8(value).ok())
        .map(str::trim)
}

/// The response's media type: `Content-Type` without parameters, lowercase.
pub(crate) fn media_type(headers: &[(String, Vec<u8>)]) -> Option<String> {
    let value = header(headers, "content-type")?;
    let media = value.split(';').next().unwrap_or_default().trim().to_ascii_lowercase();
    (!media.is_empty()).then_some(media)
}

/// Splits a response body into the messages it carries, as it streams (see the module
/// documentation): events as they complete, a plain body at its end.
pub(crate) struct Splitter {
    kind: SplitKind,
}

enum SplitKind {
    Events(SseDecoder),
    /// A plain body, until it grew past [`MAX_MESSAGE_SIZE`] (then `None`).
    Body(Option<Vec<u8>>),
}

impl Splitter {
    /// A splitter for a body of `content_type` (without parameters).
    pub(crate) fn new(content_type: Option<&str>) -> Self {
        let kind = if content_type == Some("text/event-stream") {
            SplitKind::Events(SseDecoder::new(MAX_MESSAGE_SIZE))
        } else {
            SplitKind::Body(Some(Vec::new()))
        };
        Self { kind }
    }

    /// Feeds a chunk; returns the messages it completed, and problems (an event or a body too
    /// large), in order.
    pub(crate) fn feed(&mut self, chunk: &[u8]) -> Vec<Result<Vec<u8>, String>> {
        match &mut self.kind {
            SplitKind::Events(decoder) => {
                let mut out = Vec::new();
                decoder.feed(chunk, &mut |item| match item {
                    Ok(event) if event.data.trim().is_empty() => {}
                    Ok(event) => out.push(Ok(event.data.into_bytes())),
                    Err(error) => out.push(Err(error.to_string())),
                });
                out
            }
            SplitKind::Body(Some(body)) if body.len() + chunk.len() > MAX_MESSAGE_SIZE => {
                self.kind = SplitKind::Body(None);
                vec![Err(format!("the response body is larger than {MAX_MESSAGE_SIZE} bytes"))]
            }
            SplitKind::Body(Some(body)) => {
                body.extend_from_slice(chunk);
                Vec::new()
            }
            SplitKind::Body(None) => Vec::new(),
        }
    }

    /// The body ended: the messages of a plain body (none for an event stream, whose
    /// unterminated last event is discarded).
    pub(crate) fn finish(&mut self, status: u16) -> Vec<Result<Vec<u8>, String>> {
        match &mut self.kind {
            SplitKind::Events(decoder) => {
                let mut out = Vec::new();
                decoder.finish(&mut |item| match item {
                    Ok(event) if event.data.trim().is_empty() => {}
                    Ok(event) => out.push(Ok(event.data.into_bytes())),
                    Err(error) => out.push(Err(error.to_string())),
                });
                out
            }
            SplitKind::Body(body) => body
                .take()
                .map(|body| body_messages(status, &body))
                .unwrap_or_default()
                .into_iter()
                .map(Ok)
                .collect(),
        }
    }
}

/// The messages of a whole plain body: none when empty; each element of a non-empty JSON
/// array; the JSON value; else (not JSON) the raw bytes on a success status and nothing on an
/// error status.
fn body_messages(status: u16, body: &[u8]) -> Vec<Vec<u8>> {
    let trimmed = body.trim_ascii();
    if trimmed.is_empty() {
        return Vec::new();
    }
    if let Ok(batch) = serde_json::from_slice::<Vec<&RawValue>>(trimmed)
        && !batch.is_empty()
    {
        return batch.into_iter().map(|element| element.get().as_bytes().to_vec()).collect();
    }
    if serde_json::from_slice::<&RawValue>(trimmed).is_ok() || status < 400 {
        return vec![trimmed.to_vec()];
    }
    Vec::new()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bodies_split_into_messages() {
        assert!(body_messages(200, b"  ").is_empty());
        assert_eq!(body_messages(200, br#" {"id":1} "#), vec![br#"{"id":1}"#.to_vec()]);
        assert_eq!(
            body_messages(200, br#"[{"id":1}, {"id":2}]"#),
            vec![br#"{"id":1}"#.to_vec(), br#"{"id":2}"#.to_vec()]
        );
        assert_eq!(body_messages(200, b"[]"), vec![b"[]".to_vec()]);
        assert_eq!(body_messages(200, b"hello"), vec![b"hello".to_vec()]);
        assert!(body_messages(400, b"Bad Request").is_empty());
        assert_eq!(body_messages(400, br#"{"error":{}}"#), vec![br#"{"error":{}}"#.to_vec()]);
    }

    #[test]
    fn event_streams_split_as_events_complete() {
        let mut splitter = Splitter::new(Some("text/event-stream"));
        assert!(splitter.feed(b"id: 1\ndata:\n\ndata: {\"a\"").is_empty());
        assert_eq!(splitter.feed(b":1}\n\n: keep-alive\n\n"), vec![Ok(br#"{"a":1}"#.to_vec())]);
        assert!(splitter.finish(200).is_empty());
    }

    #[test]
    fn media_types_drop_parameters() {
        let headers = vec![("Content-Type".to_owned(), b"Application/JSON; charset=utf-8".to_vec())];
        assert_eq!(media_type(&headers).as_deref(), Some("application/json"));
        assert_eq!(header_value("héllo"), "=?base64?aMOpbGxv?=");
        assert_eq!(header_value("tools/call"), "tools/call");
    }
}
