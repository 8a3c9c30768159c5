//! Opening a connection: TCP, TLS for `https` (rustls with the `ring` provider and the
//! webpki roots), the HTTP/1.1 handshake, and the connection's driver task on smol.

use std::io;
use std::sync::Arc;

use futures_lite::{AsyncRead, AsyncWrite};
use futures_rustls::TlsConnector;
use rustls::pki_types::ServerName;
use rustls::{ClientConfig, RootCertStore};
use smol::net::TcpStream;
use tracing::debug;

use crate::coop::Cooperative;
use crate::error;
use crate::io::HyperIo;
use crate::pool::Sender;
use crate::quickack::{QuickAck, Stream};
use crate::target::{Key, Scheme};

/// The only application protocol spoken.
const HTTP_1_1: &[u8] = b"http/1.1";

/// The default TLS configuration: the `ring` provider with its safe default protocol versions,
/// the Mozilla roots from `webpki-roots`, no client certificate.
pub(crate) fn default_tls_config() -> io::Result<Arc<ClientConfig>> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut roots = RootCertStore::empty();
    roots.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned());
    let config = ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| io::Error::other(format!("building the TLS configuration: {e}")))?
        .with_root_certificates(roots)
        .with_no_client_auth();
    Ok(http1_only(config))
}

/// Restricts ALPN to `http/1.1`, the only protocol this crate speaks.
pub(crate) fn http1_only(mut config: ClientConfig) -> Arc<ClientConfig> {
    config.alpn_protocols = vec![HTTP_1_1.to_vec()];
    Arc::new(config)
}

/// Opens a connection to `key` and returns its sender and the handle that acknowledges what it
/// receives; the connection itself runs on a detached smol task until it closes.
pub(crate) async fn connect(
    key: &Key,
    tls: impl FnOnce() -> io::Result<Arc<ClientConfig>>,
) -> io::Result<(Sender, QuickAck)> {
    let tcp = TcpStream::connect((key.host.as_str(), key.port))
        .await
        .map_err(|e| error::with_context(format_args!("connecting to {key}"), e))?;
    // Requests are small and written at once: do not let Nagle delay them.
    if let Err(e) = tcp.set_nodelay(true) {
        debug!(peer = %key, error = %e, "could not set TCP_NODELAY");
    }
    // A server that writes a response in small pieces without TCP_NODELAY must not wait for our
    // delayed ACK: a head that arrives alone, and a response body that has to wait for more,
    // are acknowledged at once (see `quickack.rs`).
    let (tcp, ack) = Stream::new(tcp);
    let sender = match key.scheme {
        Scheme::Http => handshake(tcp, key).await?,
        Scheme::Https => {
            let name = ServerName::try_from(key.host.clone()).map_err(|e| {
                io::Error::new(
                    io::ErrorKind::InvalidInput,
                    format!("invalid TLS server name {:?}: {e}", key.host),
                )
            })?;
            let stream = TlsConnector::from(tls()?)
                .connect(name, tcp)
                .await
                .map_err(|e| error::with_context(format_args!("TLS handshake with {key}"), e))?;
            handshake(stream, key).await?
        }
    };
    Ok((sender, ack))
}

/// The HTTP/1.1 handshake over `io`; spawns the connection's driver.
async fn handshake<S>(io: S, key: &Key) -> io::Result<Sender>
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    // Cooperative: a server sending interim responses without end must not hold the executor
    // (see `coop.rs`).
    let (sender, connection) = hyper::client::conn::http1::handshake(HyperIo::new(Cooperative::new(io)))
        .await
        .map_err(|e| error::from_hyper(format_args!("HTTP handshake with {key}"), e))?;
    let peer = key.to_string();
    smol::spawn(async move {
        // The responses this poll hands over are pumped once it returns, whole (see
        // `mcp_smol::http::defer_pumps`).
        let mut connection = std::pin::pin!(connection);
        let connection =
            std::future::poll_fn(|cx| mcp_smol::http::defer_pumps(|| connection.as_mut().poll(cx)));
        match connection.await {
            Ok(()) => debug!(%peer, "connection closed"),
            Err(e) => debug!(%peer, error = %e, "connection failed"),
        }
    })
    .detach();
    debug!(peer = %key, "connection opened");
    Ok(sender)
}
