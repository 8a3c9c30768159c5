//! [`LoopbackRedirect`]: the authorization redirect of a desktop or command-line app, received
//! on 127.0.0.1 (RFC 8252 §7.3).

use std::io;
use std::net::{Ipv4Addr, SocketAddr, TcpListener, TcpStream};
use std::sync::Arc;

use async_io::Async;
use futures_lite::{AsyncReadExt, AsyncWriteExt};

use crate::auth::{AuthFuture, AuthorizationHandler};

/// The longest request head the redirect listener reads.
const MAX_HEAD: usize = 16 * 1024;
/// The path the redirect comes to.
const CALLBACK: &str = "/callback";

const PAGE: &str = "<!doctype html><html><head><meta charset=\"utf-8\"><title>Authorized</title></head>\
<body><p>Authorization received. You can close this window and return to the application.</p></body></html>";

/// An [`AuthorizationHandler`] for apps on the user's machine: it listens on 127.0.0.1 on a
/// free port, gives each authorization URL to a function of yours (print it, open a browser),
/// receives the redirect to `http://127.0.0.1:<port>/callback` that follows, answers the
/// browser with a small page, and hands the redirect URL to the client. It serves every
/// authorization of the connection, one after the other, on the same port: the first one, a
/// step-up to more scopes later, a new login after the refresh token was refused.
///
/// Use [`redirect_uri`](Self::redirect_uri) as the redirect URI of the
/// [`AuthConfig`](mcp_sansio::auth::AuthConfig). Other requests to the port (a browser's
/// `/favicon.ico`) get a 404 and are otherwise ignored.
///
/// ```no_run
/// use mcp_smol::LoopbackRedirect;
///
/// let redirect = LoopbackRedirect::bind(|url| eprintln!("Open this URL to authorize: {url}"))?;
/// assert!(redirect.redirect_uri().starts_with("http://127.0.0.1:"));
/// # Ok::<(), std::io::Error>(())
/// ```
#[derive(Clone)]
pub struct LoopbackRedirect {
    listener: Arc<Async<TcpListener>>,
    uri: String,
    open: Arc<dyn Fn(&str) + Send + Sync>,
}

impl std::fmt::Debug for LoopbackRedirect {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LoopbackRedirect").field("redirect_uri", &self.uri).finish_non_exhaustive()
    }
}

impl LoopbackRedirect {
    /// Listens on 127.0.0.1 on a free port; `open` gets each authorization URL.
    pub fn bind(open: impl Fn(&str) + Send + Sync + 'static) -> io::Result<Self> {
        Self::bind_port(0, open)
    }

    /// Listens on 127.0.0.1:`port` (for authorization servers that only accept a redirect URI
    /// registered with its port).
    pub fn bind_port(port: u16, open: impl Fn(&str) + Send + Sync + 'static) -> io::Result<Self> {
        let listener = Async::<TcpListener>::bind(SocketAddr::from((Ipv4Addr::LOCALHOST, port)))?;
        let port = listener.get_ref().local_addr()?.port();
        Ok(LoopbackRedirect {
            listener: Arc::new(listener),
            uri: format!("http://127.0.0.1:{port}{CALLBACK}"),
            open: Arc::new(open),
        })
    }

    /// The redirect URI to register: `http://127.0.0.1:<port>/callback`.
    pub fn redirect_uri(&self) -> &str {
        &self.uri
    }

    /// Waits for the redirect: the first `GET /callback…` request; answers it and returns its
    /// whole URL.
    async fn receive(listener: Arc<Async<TcpListener>>, uri: String) -> io::Result<String> {
        loop {
            let (mut stream, _) = listener.accept().await?;
            let target = match read_target(&mut stream).await {
                Ok(target) => target,
                Err(error) => {
                    tracing::debug!(%error, "unreadable request on the redirect listener");
                    continue;
                }
            };
            let path = target.split('?').next().unwrap_or("");
            if path != CALLBACK {
                let _ = respond(&mut stream, "404 Not Found", "Not found").await;
                continue;
            }
            let _ = respond(&mut stream, "200 OK", PAGE).await;
            let origin = uri.strip_suffix(CALLBACK).unwrap_or(&uri);
            return Ok(format!("{origin}{target}"));
        }
    }
}

impl AuthorizationHandler for LoopbackRedirect {
    fn authorize(&self, url: String) -> AuthFuture<Result<String, String>> {
        (self.open)(&url);
        let listener = Arc::clone(&self.listener);
        let uri = self.uri.clone();
        Box::pin(async move {
            Self::receive(listener, uri).await.map_err(|e| format!("the redirect listener failed: {e}"))
        })
    }
}

/// Reads a request head and returns its target (`/callback?code=…`).
async fn read_target(stream: &mut Async<TcpStream>) -> io::Result<String> {
    let mut head = Vec::with_capacity(1024);
    let mut buf = [0u8; 1024];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") && !head.windows(2).any(|w| w == b"\n\n") {
        let n = stream.read(&mut buf).await?;
        if n == 0 {
            break;
        }
        head.extend_from_slice(&buf[..n]);
        if head.len() > MAX_HEAD {
            return Err(io::Error::new(io::ErrorKind::InvalidData, "request head too long"));
        }
    }
    let line = head.split(|&b| b == b'\n').next().unwrap_or(&[]);
    let line =
        std::str::from_utf8(line).map_err(|_| io::Error::new(io::ErrorKind::InvalidData, "not UTF-8"))?;
    let mut parts = line.trim_end().split(' ');
    match (parts.next(), parts.next()) {
        (Some("GET"), Some(target)) if target.starts_with('/') => Ok(target.to_owned()),
        _ => Err(io::Error::new(io::ErrorKind::InvalidData, "not a GET request")),
    }
}

async fn respond(stream: &mut Async<TcpStream>, status: &str, body: &str) -> io::Result<()> {
    let response = format!(
        "HTTP/1.1 {status}\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: {}\r\n\
         Cache-Control: no-store\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(response.as_bytes()).await?;
    stream.flush().await
}
