//! The seam between the HTTP session and an HTTP client library: [`HttpTransport`].
//!
//! The engine's [`HttpSession`](mcp_sansio::http::HttpSession) decides every request (method,
//! URL, headers, body) and interprets every response; a transport only executes requests. The
//! `mcp-hyper` crate provides the recommended one (hyper 1 on smol); `mcp-surf` provides one over
//! surf.

use std::future::Future;
use std::io;
use std::pin::Pin;

use bytes::Bytes;
use futures_lite::Stream;
use mcp_sansio::TransportError;
use mcp_sansio::http::HttpRequest;

/// A boxed, sendable future.
pub type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send + 'static>>;

/// A response body: chunks as they arrive, ending with `None` when the body is complete.
pub type BodyStream = Pin<Box<dyn Stream<Item = io::Result<Bytes>> + Send + 'static>>;

/// The head of an HTTP response and its body, still streaming.
pub struct HttpResponse {
    /// The status code.
    pub status: u16,
    /// The response headers (name, raw value). The session reads `Content-Type`,
    /// `Mcp-Session-Id`, and for OAuth `WWW-Authenticate` and `DPoP-Nonce`; a transport may
    /// pass just those.
    pub headers: Vec<(String, Vec<u8>)>,
    /// The body.
    pub body: BodyStream,
}

impl std::fmt::Debug for HttpResponse {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Header values may carry credentials or session ids: names only.
        let names: Vec<&str> = self.headers.iter().map(|(n, _)| n.as_str()).collect();
        f.debug_struct("HttpResponse").field("status", &self.status).field("header_names", &names).finish()
    }
}

/// Executes HTTP requests for the driver.
///
/// Contract:
/// - [`send`](Self::send) returns at once; the future resolves when the response head arrived
///   (or the exchange failed: connection refused, TLS error, reset).
/// - **Redirects are not followed**: a `3xx` goes to the session as it came, with its
///   `Location`. The session follows `307` and `308` itself (see
///   [`HttpConfig::max_redirects`](mcp_sansio::http::HttpConfig::max_redirects)), so that it
///   decides which headers go to another origin.
/// - An error the session should know by its kind wraps a [`TransportError`] in the
///   `io::Error` (`io::Error::new(kind, TransportError::HeadTooLarge { .. })`); the driver
///   hands it to the session as is. Any other error reaches it as
///   [`TransportError::Io`] with the error's message.
/// - The body is streamed: chunks must reach the stream as they arrive from the network (an
///   event stream may stay open for hours), with no read timeout of the transport's own: the
///   session owns every deadline.
/// - **Dropping** the future or the body stream aborts the exchange. A connection is only
///   reused for another request when its previous response body was read to the end; one
///   abandoned mid-body is closed, never returned to a pool.
/// - Connections are kept alive and reused: one connection per concurrent exchange, not one
///   per request.
pub trait HttpTransport: Send + Sync + 'static {
    /// Starts executing `request`.
    fn send(&self, request: HttpRequest) -> BoxFuture<io::Result<HttpResponse>>;

    /// Whether the wakers this transport's futures are given are only ever woken with no lock
    /// of the transport's held (and never from inside `send` or a poll of them). Then the
    /// connection pumps a response where its wake-up lands, as over a stdio child's pipes,
    /// instead of through the driver's task: one thread hop less per call. `false` (the
    /// default) is always safe; `true` for a transport that wakes under a lock of its own can
    /// deadlock, since the pump polls the transport's futures again from the wake-up.
    fn wakes_outside_its_locks(&self) -> bool {
        false
    }
}

/// Runs `poll`, a poll of the transport's own task (a connection's, which reads responses and
/// hands them to the exchanges' futures), and only then pumps the connections whose news it
/// woke. For a transport whose [`wakes_outside_its_locks`](HttpTransport::wakes_outside_its_locks)
/// is `true`: the response is then pumped once, whole, after the task's poll, instead of in the
/// middle of it (where its head may be there and its body not yet, so the body is polled for
/// nothing). mcp-hyper runs each connection's poll in it.
///
/// ```
/// let answer = mcp_smol::http::defer_pumps(|| 40 + 2);
/// assert_eq!(answer, 42);
/// ```
pub fn defer_pumps<T>(poll: impl FnOnce() -> T) -> T {
    crate::source_waker::defer_pumps(poll)
}

/// The session's view of a transport's error: the [`TransportError`] it wraps, or
/// [`TransportError::Io`] with its message.
///
/// ```
/// use std::io;
/// use mcp_smol::http::transport_error;
/// use mcp_smol::mcp_sansio::TransportError;
///
/// let typed = TransportError::HeadTooLarge { limit: Some(1024) };
/// let too_large = io::Error::new(io::ErrorKind::InvalidData, typed.clone());
/// assert_eq!(transport_error(&too_large), typed);
/// let refused = io::Error::new(io::ErrorKind::ConnectionRefused, "connection refused");
/// assert_eq!(transport_error(&refused), TransportError::Io("connection refused".into()));
/// ```
pub fn transport_error(error: &io::Error) -> TransportError {
    match error.get_ref().and_then(|inner| inner.downcast_ref::<TransportError>()) {
        Some(typed) => typed.clone(),
        None => TransportError::Io(error.to_string()),
    }
}

impl<T: HttpTransport + ?Sized> HttpTransport for std::sync::Arc<T> {
    fn send(&self, request: HttpRequest) -> BoxFuture<io::Result<HttpResponse>> {
        (**self).send(request)
    }

    fn wakes_outside_its_locks(&self) -> bool {
        (**self).wakes_outside_its_locks()
    }
}
