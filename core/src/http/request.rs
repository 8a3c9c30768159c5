//! What the HTTP session asks a driver to do: [`HttpRequest`]s to execute and streams to abort,
//! and how the session is configured ([`HttpConfig`]).

use std::borrow::Cow;
use std::fmt;
use std::time::Duration;

/// Identifies one HTTP exchange (a request and its response stream) between the session and
/// the driver. The driver passes it back with every piece of the response.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct StreamId(pub(crate) u64);

impl fmt::Display for StreamId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "#{}", self.0)
    }
}

/// The HTTP methods the MCP transports use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum HttpMethod {
    /// Opens a server-sent-event stream (server-initiated messages, resumption, the legacy stream).
    Get,
    /// Sends one JSON-RPC message.
    Post,
    /// Ends the session.
    Delete,
}

impl HttpMethod {
    /// The method's name, e.g. `"POST"`.
    pub const fn as_str(self) -> &'static str {
        match self {
            HttpMethod::Get => "GET",
            HttpMethod::Post => "POST",
            HttpMethod::Delete => "DELETE",
        }
    }
}

impl fmt::Display for HttpMethod {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Headers whose values are protocol metadata and safe to print; every other value (custom
/// headers such as `Authorization`, the session id) is redacted by `Debug`.
const PRINTABLE_HEADERS: &[&str] = &["accept", "content-type", "mcp-protocol-version", "last-event-id"];

/// One HTTP request for the driver to execute.
///
/// The driver sends it as is, then reports the response to the session: its head with
/// [`handle_response_head`](super::HttpSession::handle_response_head), the body in chunks with
/// [`handle_response_body`](super::HttpSession::handle_response_body), and its end with
/// [`handle_response_end`](super::HttpSession::handle_response_end) (or a failure with
/// [`handle_response_error`](super::HttpSession::handle_response_error)), each tagged with
/// [`stream`](Self::stream).
///
/// `Debug` prints header names but redacts the values of all but a few protocol headers, so a
/// request can be logged without leaking credentials.
#[derive(Clone)]
pub struct HttpRequest {
    pub(crate) stream: StreamId,
    pub(crate) method: HttpMethod,
    pub(crate) url: String,
    pub(crate) headers: Vec<(Cow<'static, str>, String)>,
    pub(crate) body: Vec<u8>,
}

impl HttpRequest {
    /// A request built outside a session, for tools that speak HTTP themselves (a recorder or
    /// a replayer) but execute requests through the same transports. Its [`stream`](Self::stream)
    /// is one no session issues.
    ///
    /// ```
    /// use mcp_sansio::http::{HttpMethod, HttpRequest};
    ///
    /// let request = HttpRequest::new(
    ///     HttpMethod::Post,
    ///     "http://127.0.0.1:3000/mcp",
    ///     vec![("Content-Type".into(), "application/json".into())],
    ///     br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#.to_vec(),
    /// );
    /// assert_eq!(request.header("content-type"), Some("application/json"));
    /// ```
    pub fn new(
        method: HttpMethod,
        url: impl Into<String>,
        headers: Vec<(String, String)>,
        body: Vec<u8>,
    ) -> Self {
        Self {
            stream: StreamId(u64::MAX),
            method,
            url: url.into(),
            headers: headers.into_iter().map(|(name, value)| (Cow::Owned(name), value)).collect(),
            body,
        }
    }

    /// The exchange this request starts.
    pub fn stream(&self) -> StreamId {
        self.stream
    }

    /// The method.
    pub fn method(&self) -> HttpMethod {
        self.method
    }

    /// The absolute URL.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The headers, in order: name and value.
    pub fn headers(&self) -> impl ExactSizeIterator<Item = (&str, &str)> + '_ {
        self.headers.iter().map(|(name, value)| (&**name, value.as_str()))
    }

    /// The value of header `name` (case-insensitive), if present.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }

    /// The body: one JSON-RPC message for `POST`, empty otherwise.
    pub fn body(&self) -> &[u8] {
        &self.body
    }

    /// Takes the body, for drivers that send an owned buffer.
    pub fn into_body(self) -> Vec<u8> {
        self.body
    }
}

impl fmt::Debug for HttpRequest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        struct Headers<'a>(&'a [(Cow<'static, str>, String)]);
        impl fmt::Debug for Headers<'_> {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                let mut map = f.debug_map();
                for (name, value) in self.0 {
                    if PRINTABLE_HEADERS.iter().any(|p| name.eq_ignore_ascii_case(p)) {
                        map.entry(name, value);
                    } else {
                        map.entry(name, &"<redacted>");
                    }
                }
                map.finish()
            }
        }
        f.debug_struct("HttpRequest")
            .field("stream", &self.stream)
            .field("method", &self.method)
            .field("url", &self.url)
            .field("headers", &Headers(&self.headers))
            .field("body_len", &self.body.len())
            .finish()
    }
}

/// What the session wants the driver to do next; drained with
/// [`HttpSession::poll_action`](super::HttpSession::poll_action).
#[derive(Debug)]
#[non_exhaustive]
pub enum HttpAction {
    /// Execute this request (concurrently with the others in flight).
    Send(HttpRequest),
    /// Stop this exchange: drop the request or its response stream, and do not reuse its
    /// connection unless the response was read to the end. Nothing more is reported for it.
    Abort(StreamId),
}

/// How the HTTP session behaves: the server URL, custom headers, timeouts and retry policy.
///
/// ```
/// use std::time::Duration;
/// use mcp_sansio::http::HttpConfig;
///
/// let config = HttpConfig::new("http://127.0.0.1:3000/mcp")
///     .header("Authorization", "Bearer secret")
///     .connect_timeout(Duration::from_secs(5));
/// assert_eq!(config.url(), "http://127.0.0.1:3000/mcp");
/// // Header values never appear in debug output.
/// assert!(!format!("{config:?}").contains("secret"));
/// ```
#[derive(Clone)]
#[non_exhaustive]
pub struct HttpConfig {
    pub(crate) url: String,
    pub(crate) headers: Vec<(String, String)>,
    pub(crate) connect_timeout: Duration,
    pub(crate) standalone_stream: bool,
    pub(crate) legacy_fallback: bool,
    pub(crate) max_reconnects: u32,
    pub(crate) reconnect_delay: Duration,
    pub(crate) max_reconnect_delay: Duration,
    pub(crate) close_timeout: Duration,
    pub(crate) max_redirects: u32,
    pub(crate) max_queued_answers: usize,
}

impl HttpConfig {
    /// A configuration for the MCP endpoint at `url` (for example `http://127.0.0.1:3000/mcp`),
    /// with the defaults:
    /// - `connect_timeout` 30 s: the longest wait for response headers where no request's own
    ///   deadline applies (the server-message stream, notifications, answers, `DELETE`);
    /// - the server-message `GET` stream is opened;
    /// - a server that refuses the Streamable HTTP `initialize` with 400, 404 or 405 is tried
    ///   with the 2024-11-05 HTTP+SSE transport;
    /// - a stream that ends is resumed up to 5 times in a row without a message in between,
    ///   after the server's `retry` delay or else 1 s doubling up to 30 s;
    /// - `close_timeout` 5 s for the `DELETE` that ends the session;
    /// - `307` and `308` redirects are followed, at most [`DEFAULT_MAX_REDIRECTS`] in a row
    ///   (see [`max_redirects`](Self::max_redirects));
    /// - at most [`DEFAULT_MAX_QUEUED_ANSWERS`] bytes of answers and notifications wait for a
    ///   `POST` (see [`max_queued_answers`](Self::max_queued_answers)).
    pub fn new(url: impl Into<String>) -> Self {
        Self {
            url: url.into(),
            headers: Vec::new(),
            connect_timeout: Duration::from_secs(30),
            standalone_stream: true,
            legacy_fallback: true,
            max_reconnects: 5,
            reconnect_delay: Duration::from_secs(1),
            max_reconnect_delay: Duration::from_secs(30),
            close_timeout: Duration::from_secs(5),
            max_redirects: DEFAULT_MAX_REDIRECTS,
            max_queued_answers: DEFAULT_MAX_QUEUED_ANSWERS,
        }
    }

    /// The MCP endpoint URL.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// Adds a header sent with every request (for example `Authorization`). Its value is never
    /// logged or printed by `Debug`.
    #[must_use]
    pub fn header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.headers.push((name.into(), value.into()));
        self
    }

    /// The origin (`scheme://host[:port]`) of the server URL, if the URL is valid.
    pub fn origin(&self) -> Option<String> {
        super::url::origin(&self.url)
    }

    /// How long to wait for response headers where no request deadline applies.
    #[must_use]
    pub fn connect_timeout(mut self, timeout: Duration) -> Self {
        self.connect_timeout = timeout;
        self
    }

    /// Whether to open the `GET` stream for server-initiated messages (default `true`).
    #[must_use]
    pub fn standalone_stream(mut self, open: bool) -> Self {
        self.standalone_stream = open;
        self
    }

    /// Whether to fall back to the 2024-11-05 HTTP+SSE transport (default `true`).
    #[must_use]
    pub fn legacy_fallback(mut self, enabled: bool) -> Self {
        self.legacy_fallback = enabled;
        self
    }

    /// How many times in a row a stream is re-opened without receiving a message in between.
    /// A stream that ends gracefully counts like one that failed, so a server that keeps
    /// closing at once cannot keep the client reconnecting forever.
    #[must_use]
    pub fn max_reconnects(mut self, attempts: u32) -> Self {
        self.max_reconnects = attempts;
        self
    }

    /// The reconnection delay when the server gave no `retry` field: `initial`, doubling on each
    /// attempt up to `max`. A server's `retry` is always honoured as given.
    #[must_use]
    pub fn reconnect_delay(mut self, initial: Duration, max: Duration) -> Self {
        self.reconnect_delay = initial;
        self.max_reconnect_delay = max.max(initial);
        self
    }

    /// How long closing waits for the `DELETE` that ends the session.
    #[must_use]
    pub fn close_timeout(mut self, timeout: Duration) -> Self {
        self.close_timeout = timeout;
        self
    }

    /// How many redirects one request follows in a row (default [`DEFAULT_MAX_REDIRECTS`]);
    /// `0` follows none.
    ///
    /// Only `307` and `308` are followed: the request goes again to the `Location` (resolved
    /// against the URL that was redirected) with the same method, body and MCP headers. When
    /// the `Location` is on another origin (scheme, host and port), the headers added with
    /// [`header`](Self::header) and every credential (`Authorization`, the OAuth token and its
    /// DPoP proof, `Cookie`) stay behind. A redirect from `https` to `http` is refused, and so
    /// are `301`, `302` and `303` (which turn a `POST` into a `GET`): the request fails with
    /// [`TransportError::RedirectRefused`](crate::TransportError::RedirectRefused), or
    /// [`TooManyRedirects`](crate::TransportError::TooManyRedirects) past the limit.
    ///
    /// Each request follows its own redirects and the next one starts again at [`url`](Self::url):
    /// a `308` does not move the endpoint.
    ///
    /// ```
    /// use mcp_sansio::http::HttpConfig;
    ///
    /// let strict = HttpConfig::new("https://mcp.example.com/mcp").max_redirects(0);
    /// assert_eq!(strict.redirect_limit(), 0);
    /// ```
    #[must_use]
    pub fn max_redirects(mut self, hops: u32) -> Self {
        self.max_redirects = hops;
        self
    }

    /// How many redirects one request follows in a row (see [`max_redirects`](Self::max_redirects)).
    pub fn redirect_limit(&self) -> u32 {
        self.max_redirects
    }

    /// How many bytes of answers (to the server's requests) and notifications may wait for a
    /// `POST` (default [`DEFAULT_MAX_QUEUED_ANSWERS`]).
    ///
    /// Each goes in a `POST` of its own, at most 8 in flight at once, the others waiting their
    /// turn. A server that asks without end and finishes none of those `POST`s (it takes the
    /// connections and never answers) would make that wait grow without end: past this bound
    /// the connection closes with
    /// [`CloseReason::ServerNotReading`](crate::CloseReason::ServerNotReading) instead, as a
    /// byte stream does when its server stops reading. One message larger than the bound still
    /// waits alone.
    ///
    /// ```
    /// use mcp_sansio::http::HttpConfig;
    ///
    /// let config = HttpConfig::new("https://mcp.example.com/mcp").max_queued_answers(1 << 20);
    /// assert_eq!(config.queued_answers_limit(), 1 << 20);
    /// ```
    #[must_use]
    pub fn max_queued_answers(mut self, bytes: usize) -> Self {
        self.max_queued_answers = bytes;
        self
    }

    /// How many bytes of answers and notifications may wait for a `POST` (see
    /// [`max_queued_answers`](Self::max_queued_answers)).
    pub fn queued_answers_limit(&self) -> usize {
        self.max_queued_answers
    }
}

/// The default for [`HttpConfig::max_queued_answers`]: 8 MiB, the bound mcp-smol's byte streams
/// keep on answers their server has not read (about 190 000 answers to `ping`).
pub const DEFAULT_MAX_QUEUED_ANSWERS: usize = 8 * 1024 * 1024;

/// The default for [`HttpConfig::max_redirects`]: 5. One or two hops cover an endpoint that
/// moved or a path normalised by a proxy; fetch and httpx (under the TypeScript and Python
/// SDKs) allow 20, but a longer chain to an API endpoint is a loop or a misconfiguration, and
/// every hop is a round trip within the request's deadline.
pub const DEFAULT_MAX_REDIRECTS: u32 = 5;

impl fmt::Debug for HttpConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let header_names: Vec<&str> = self.headers.iter().map(|(name, _)| name.as_str()).collect();
        f.debug_struct("HttpConfig")
            .field("url", &self.url)
            .field("header_names", &header_names)
            .field("connect_timeout", &self.connect_timeout)
            .field("standalone_stream", &self.standalone_stream)
            .field("legacy_fallback", &self.legacy_fallback)
            .field("max_reconnects", &self.max_reconnects)
            .field("reconnect_delay", &self.reconnect_delay)
            .field("max_reconnect_delay", &self.max_reconnect_delay)
            .field("close_timeout", &self.close_timeout)
            .field("max_redirects", &self.max_redirects)
            .field("max_queued_answers", &self.max_queued_answers)
            .finish()
    }
}
