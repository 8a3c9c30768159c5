//! [`HyperTransport`]: the [`HttpTransport`] itself, and its configuration.

use std::fmt;
use std::io;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::header::{HOST, HeaderName, HeaderValue};
use hyper::{HeaderMap, Method, Request, Response};
use mcp_sansio::http::HttpRequest;
use mcp_smol::http::{BodyStream, BoxFuture, HttpResponse, HttpTransport};
use rustls::ClientConfig;
use tracing::debug;

use crate::body::{Loan, ResponseBody};
use crate::connect;
use crate::error;
use crate::pool::{Pool, Sender};
use crate::quickack::QuickAck;
use crate::target::Target;

/// The default for [`HyperTransportBuilder::max_idle_per_host`].
pub const DEFAULT_MAX_IDLE_PER_HOST: usize = 32;

/// The default for [`HyperTransportBuilder::idle_timeout`].
pub const DEFAULT_IDLE_TIMEOUT: Duration = Duration::from_secs(90);

/// An [`HttpTransport`] over hyper 1 (HTTP/1.1) on smol, with its own keep-alive pool.
///
/// - Connections are reused: a connection goes back to the pool only once its response body
///   was read to the end, so there is one connection per concurrent exchange, not one per
///   request. A body dropped mid-way closes its connection.
/// - `https` URLs use rustls (the `ring` provider) with the Mozilla root certificates of
///   `webpki-roots`, unless [`HyperTransportBuilder::tls_config`] says otherwise.
/// - No timeout of its own and no redirects: the session owns every deadline and decision.
///   Dropping the future returned by [`send`](HttpTransport::send), or the response body,
///   aborts the exchange.
/// - Each connection is driven by a detached task on smol's global executor.
///
/// Cloning is cheap and clones share the pool.
#[derive(Clone)]
pub struct HyperTransport {
    inner: Arc<Inner>,
}

struct Inner {
    pool: Arc<Pool>,
    /// Built on the first `https` request unless configured.
    tls: OnceLock<Arc<ClientConfig>>,
    connections_opened: AtomicU64,
    max_idle_per_host: usize,
    idle_timeout: Duration,
}

impl HyperTransport {
    /// A transport with the defaults: up to [`DEFAULT_MAX_IDLE_PER_HOST`] idle connections per
    /// (scheme, host, port), closed after [`DEFAULT_IDLE_TIMEOUT`] unused, and the default TLS
    /// configuration.
    pub fn new() -> Self {
        Self::builder().build()
    }

    /// A builder to configure the pool and TLS.
    pub fn builder() -> HyperTransportBuilder {
        HyperTransportBuilder::default()
    }

    /// How many connections this transport (and its clones) opened so far: connected, through
    /// TLS for `https`, and ready for HTTP. With reuse working, this stays at the peak number of
    /// concurrent exchanges rather than growing with every request.
    pub fn connections_opened(&self) -> u64 {
        self.inner.connections_opened.load(Ordering::Relaxed)
    }

    /// How many idle connections the pool holds right now.
    pub fn idle_connections(&self) -> usize {
        self.inner.pool.idle_count()
    }
}

impl Default for HyperTransport {
    fn default() -> Self {
        Self::new()
    }
}

impl fmt::Debug for HyperTransport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HyperTransport")
            .field("max_idle_per_host", &self.inner.max_idle_per_host)
            .field("idle_timeout", &self.inner.idle_timeout)
            .field("connections_opened", &self.connections_opened())
            .field("idle_connections", &self.idle_connections())
            .finish()
    }
}

impl HttpTransport for HyperTransport {
    fn send(&self, request: HttpRequest) -> BoxFuture<io::Result<HttpResponse>> {
        let inner = Arc::clone(&self.inner);
        Box::pin(async move { inner.execute(request).await })
    }

    /// hyper 1's HTTP/1 client hands responses and body chunks over channels that wake their
    /// receivers after releasing their state (atomics, no lock held), its connection tasks run
    /// on smol's executor, and this crate's idle pool wakes nothing under its lock.
    fn wakes_outside_its_locks(&self) -> bool {
        true
    }
}

impl Inner {
    fn tls_config(&self) -> io::Result<Arc<ClientConfig>> {
        if let Some(config) = self.tls.get() {
            return Ok(Arc::clone(config));
        }
        let config = connect::default_tls_config()?;
        Ok(Arc::clone(self.tls.get_or_init(|| config)))
    }

    async fn execute(&self, request: HttpRequest) -> io::Result<HttpResponse> {
        let target = Target::parse(request.url())?;
        let (mut hyper_request, body) = build_request(request, &target)?;
        let key = &target.key;

        // An idle connection first. One that closed before the request was written gives the
        // request back, to try on the next one.
        while let Some((mut sender, ack)) = self.pool.checkout(key) {
            if sender.ready().await.is_err() {
                debug!(peer = %key, "idle connection closed");
                continue;
            }
            let spare = duplicate(&hyper_request, &body);
            match sender.try_send_request(hyper_request).await {
                Ok(response) => {
                    debug!(peer = %key, "reused a connection");
                    return Ok(self.response(response, &target, sender, ack));
                }
                Err(mut e) => match e.take_message() {
                    Some(unsent) => {
                        debug!(peer = %key, "idle connection closed before the request was sent");
                        hyper_request = unsent;
                    }
                    // The server closed the idle connection as the request went out on it (the
                    // keep-alive race: its close was still in flight), and not a byte of a
                    // response came back. The request goes once more, on a fresh connection, as
                    // browsers do: a server that closes without a word has most likely not read
                    // it (one that crashed while handling it could see it twice).
                    None if e.error().is_incomplete_message() => {
                        debug!(peer = %key, "reused connection closed with no response: sending again");
                        hyper_request = spare;
                        break;
                    }
                    None => return Err(error::from_hyper(format_args!("request to {key}"), e.into_error())),
                },
            }
        }

        let (mut sender, ack) = connect::connect(key, || self.tls_config()).await?;
        self.connections_opened.fetch_add(1, Ordering::Relaxed);
        let response = sender
            .send_request(hyper_request)
            .await
            .map_err(|e| error::from_hyper(format_args!("request to {key}"), e))?;
        Ok(self.response(response, &target, sender, ack))
    }

    fn response(
        &self,
        response: Response<Incoming>,
        target: &Target,
        sender: Sender,
        ack: QuickAck,
    ) -> HttpResponse {
        let (parts, body) = response.into_parts();
        let headers = parts
            .headers
            .iter()
            .map(|(name, value)| (name.as_str().to_owned(), value.as_bytes().to_vec()))
            .collect();
        let loan = Loan { pool: Arc::clone(&self.pool), key: target.key.clone(), sender, ack };
        let body: BodyStream = Box::pin(ResponseBody::new(body, loan));
        HttpResponse { status: parts.status.as_u16(), headers, body }
    }
}

/// The same request again (the body is shared, not copied).
fn duplicate(request: &Request<Full<Bytes>>, body: &Bytes) -> Request<Full<Bytes>> {
    let mut copy = Request::new(Full::new(body.clone()));
    *copy.method_mut() = request.method().clone();
    *copy.uri_mut() = request.uri().clone();
    *copy.headers_mut() = request.headers().clone();
    copy
}

/// The hyper request for `request`: origin-form target, the session's headers in order, `Host`
/// unless given, and the body without a copy (also returned, to send the request again).
fn build_request(request: HttpRequest, target: &Target) -> io::Result<(Request<Full<Bytes>>, Bytes)> {
    let invalid = |why: String| io::Error::new(io::ErrorKind::InvalidInput, why);
    let method = Method::from_bytes(request.method().as_str().as_bytes())
        .map_err(|e| invalid(format!("invalid method {}: {e}", request.method())))?;
    let mut headers = HeaderMap::with_capacity(request.headers().len() + 1);
    for (name, value) in request.headers() {
        let header = HeaderName::from_bytes(name.as_bytes())
            .map_err(|_| invalid(format!("invalid header name {name:?}")))?;
        // Never echo the value: it may be a credential.
        let value =
            HeaderValue::from_str(value).map_err(|_| invalid(format!("invalid value for header {name}")))?;
        headers.append(header, value);
    }
    if !headers.contains_key(HOST) {
        let host = HeaderValue::from_str(&target.host_header)
            .map_err(|_| invalid(format!("invalid host {:?}", target.host_header)))?;
        headers.insert(HOST, host);
    }
    let body = Bytes::from(request.into_body());
    let mut hyper_request = Request::new(Full::new(body.clone()));
    *hyper_request.method_mut() = method;
    *hyper_request.uri_mut() = target.uri.clone();
    *hyper_request.headers_mut() = headers;
    Ok((hyper_request, body))
}

/// Configures a [`HyperTransport`].
///
/// ```
/// use std::time::Duration;
/// use mcp_hyper::HyperTransport;
///
/// let transport = HyperTransport::builder()
///     .max_idle_per_host(4)
///     .idle_timeout(Duration::from_secs(30))
///     .build();
/// assert_eq!(transport.connections_opened(), 0);
/// ```
#[derive(Clone)]
#[must_use]
pub struct HyperTransportBuilder {
    max_idle_per_host: usize,
    idle_timeout: Duration,
    tls: Option<Arc<ClientConfig>>,
}

impl Default for HyperTransportBuilder {
    fn default() -> Self {
        Self { max_idle_per_host: DEFAULT_MAX_IDLE_PER_HOST, idle_timeout: DEFAULT_IDLE_TIMEOUT, tls: None }
    }
}

impl HyperTransportBuilder {
    /// The most idle connections kept per (scheme, host, port) (default 32); `0` disables
    /// reuse. Connections in use are not limited: there is one per concurrent exchange.
    pub fn max_idle_per_host(mut self, max: usize) -> Self {
        self.max_idle_per_host = max;
        self
    }

    /// How long an idle connection is kept before it is closed (default 90 s); zero disables
    /// reuse.
    pub fn idle_timeout(mut self, timeout: Duration) -> Self {
        self.idle_timeout = timeout;
        self
    }

    /// The rustls configuration for `https` (for example with private roots or a client
    /// certificate), instead of the default: the `ring` provider and the `webpki-roots`
    /// certificates. Its ALPN protocols are replaced by `http/1.1`, the only one spoken.
    pub fn tls_config(mut self, config: Arc<ClientConfig>) -> Self {
        self.tls = Some(connect::http1_only(ClientConfig::clone(&config)));
        self
    }

    /// Builds the transport.
    pub fn build(self) -> HyperTransport {
        let tls = OnceLock::new();
        if let Some(config) = self.tls {
            let _ = tls.set(config);
        }
        HyperTransport {
            inner: Arc::new(Inner {
                pool: Arc::new(Pool::new(self.max_idle_per_host, self.idle_timeout)),
                tls,
                connections_opened: AtomicU64::new(0),
                max_idle_per_host: self.max_idle_per_host,
                idle_timeout: self.idle_timeout,
            }),
        }
    }
}

impl fmt::Debug for HyperTransportBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HyperTransportBuilder")
            .field("max_idle_per_host", &self.max_idle_per_host)
            .field("idle_timeout", &self.idle_timeout)
            .field("custom_tls_config", &self.tls.is_some())
            .finish()
    }
}
