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
/// - `send` returns at once; the future resolves when the response head arrived (or the
///   exchange failed: connection refused, TLS error, reset). Redirects are not followed.
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
}

impl<T: HttpTransport + ?Sized> HttpTransport for std::sync::Arc<T> {
    fn send(&self, request: HttpRequest) -> BoxFuture<io::Result<HttpResponse>> {
        (**self).send(request)
    }
}
