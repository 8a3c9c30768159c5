//! [`SurfTransport`]: the [`HttpTransport`] over a surf client with the curl backend.

use std::fmt;
use std::io;
use std::panic::AssertUnwindSafe;

use futures_lite::FutureExt;
use mcp_sansio::http::HttpRequest;
use mcp_smol::HttpTransport;
use mcp_smol::http::{BoxFuture, HttpResponse};

use crate::{error, request, response};

/// Executes the HTTP session's requests with surf 2 over libcurl (through isahc).
///
/// One value owns one libcurl "multi" handle, driven by isahc's own thread, and its
/// connection cache: clones share both. Create one per application and clone it.
///
/// The client is configured for the [`HttpTransport`] contract: no total timeout (surf's
/// default would cut an event stream after 60 seconds), keep-alive on, `TCP_NODELAY`, and no
/// redirect following (surf adds no redirect middleware unless asked, and isahc's policy
/// defaults to none).
#[derive(Clone)]
pub struct SurfTransport {
    client: surf::Client,
}

impl SurfTransport {
    /// A transport with its own surf client.
    ///
    /// # Panics
    ///
    /// If libcurl cannot be initialized or isahc's thread cannot be started; see
    /// [`try_new`](Self::try_new).
    pub fn new() -> Self {
        match Self::try_new() {
            Ok(transport) => transport,
            Err(error) => panic!("mcp-surf: cannot create the HTTP client: {error}"),
        }
    }

    /// A transport with its own surf client, or the error that prevented creating it.
    pub fn try_new() -> io::Result<Self> {
        let config = surf::Config::new().set_timeout(None).set_http_keep_alive(true).set_tcp_no_delay(true);
        let client = surf::Client::try_from(config)
            .map_err(|error| io::Error::other(format!("cannot create the HTTP client: {error}")))?;
        Ok(Self { client })
    }
}

impl Default for SurfTransport {
    /// Same as [`SurfTransport::new`].
    fn default() -> Self {
        Self::new()
    }
}

impl fmt::Debug for SurfTransport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SurfTransport").finish_non_exhaustive()
    }
}

impl HttpTransport for SurfTransport {
    fn send(&self, request: HttpRequest) -> BoxFuture<io::Result<HttpResponse>> {
        let client = self.client.clone();
        Box::pin(async move {
            // libcurl re-sends a request by itself when the kept-alive connection it picked turns
            // out to be dead (the server restarted, say), but it cannot rewind the streamed body
            // surf hands it, and gives up with CURLE_SEND_FAIL_REWIND. Nothing reached a live
            // server then, so retrying is safe; each failed attempt retires one dead connection
            // from libcurl's cache, which may hold several.
            let mut attempts = 1;
            loop {
                match send_once(&client, request.clone()).await {
                    Ok(response) => return Ok(response),
                    Err(Failure::Rewind(e)) if attempts >= MAX_ATTEMPTS => return Err(e),
                    Err(Failure::Rewind(_)) => attempts += 1,
                    Err(Failure::Other(e)) => return Err(e),
                }
            }
        })
    }
}

/// Attempts per request when libcurl finds dead kept-alive connections (see `send`).
const MAX_ATTEMPTS: usize = 8;

/// Why one attempt failed.
enum Failure {
    /// libcurl could not rewind the body to re-send it on a fresh connection.
    Rewind(io::Error),
    Other(io::Error),
}

async fn send_once(client: &surf::Client, request: HttpRequest) -> Result<HttpResponse, Failure> {
    let request = request::to_surf(request).map_err(Failure::Other)?;
    // http-client's isahc glue panics on a response header value that is not visible ASCII: a
    // server must not be able to crash the caller's task.
    match AssertUnwindSafe(client.send(request)).catch_unwind().await {
        Ok(Ok(response)) => Ok(response::from_surf(response)),
        Ok(Err(failure)) if error::is_rewind_failure(&failure) => {
            Err(Failure::Rewind(error::from_surf(failure)))
        }
        Ok(Err(failure)) => Err(Failure::Other(error::from_surf(failure))),
        Err(_panic) => Err(Failure::Other(error::backend_panicked())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_total_timeout_and_keep_alive() {
        let transport = SurfTransport::new();
        let config = &transport.client.config().http_config;
        assert_eq!(config.timeout, None, "the session owns every deadline");
        assert!(config.http_keep_alive);
        assert!(config.tcp_no_delay);
    }
}
