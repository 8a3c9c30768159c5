//! MCP over HTTP for [`mcp_smol`], with **hyper 1 on smol**: [`HyperTransport`] implements
//! [`mcp_smol::HttpTransport`], the seam through which the driver executes the requests the
//! sans-IO HTTP session decides.
//!
//! - HTTP/1.1 with keep-alive and its own connection pool, keyed by (scheme, host, port): a
//!   connection is reused only after its previous response body was read to the end, so there
//!   is one connection per concurrent exchange (a long-lived event stream holds its own), not one
//!   per request. A body dropped mid-way closes its connection. Idle connections are closed after
//!   [`HyperTransportBuilder::idle_timeout`].
//! - `https` with rustls (the `ring` provider, the Mozilla roots from `webpki-roots`), or your own
//!   [`rustls::ClientConfig`] through [`HyperTransportBuilder::tls_config`].
//! - Response bodies are streamed chunk by chunk as they arrive; no read timeout and no
//!   redirects: the session owns every deadline and decision.
//! - Each connection runs on a detached task on smol's global executor, and gives the executor
//!   back after 32 reads or 64 KiB in a row, however fast the server sends.
//! - On Linux, a response head that arrives alone, and whatever was received when a response
//!   body has to wait for more, are acknowledged at once (`TCP_QUICKACK`): a server that writes a
//!   response head and its body in two small writes without `TCP_NODELAY` would otherwise wait
//!   out the 40 ms delayed-ACK timer on every response. Elsewhere ACKs follow the system's policy.
//! - Errors are `io::Error`s naming what failed. A response head over hyper's limits (408 KiB,
//!   100 header fields) wraps [`TransportError::HeadTooLarge`](mcp_sansio::TransportError), so the
//!   session reports it as such rather than as a message.
//! - Header values are never logged; connection events are logged with `tracing` at debug level.
//!
//! Most applications only hand the transport to the smol client:
//!
//! ```no_run
//! use mcp_hyper::HyperTransport;
//! use mcp_smol::{ClientApi, ClientBuilder};
//! use mcp_smol::mcp_sansio::http::HttpConfig;
//! use mcp_smol::mcp_sansio::schema::Implementation;
//!
//! fn main() -> Result<(), mcp_smol::Error> {
//!     smol::block_on(async {
//!         let http = HttpConfig::new("http://127.0.0.1:3000/mcp").header("Authorization", "Bearer t");
//!         let client = ClientBuilder::new(Implementation::new("my-app", "1.0.0"))
//!             .spawn_http(http, HyperTransport::new())
//!             .await?;
//!         println!("{:?}", client.list_all_tools().await?);
//!         client.close().await;
//!         Ok(())
//!     })
//! }
//! ```
//!
//! The transport can also be driven by hand, for a custom loop around the engine's
//! [`HttpSession`](mcp_smol::mcp_sansio::http::HttpSession):
//!
//! ```no_run
//! use mcp_hyper::HyperTransport;
//! use mcp_smol::HttpTransport;
//! use mcp_smol::mcp_sansio::ClientConfig;
//! use mcp_smol::mcp_sansio::http::{HttpAction, HttpConfig, HttpSession};
//! use mcp_smol::mcp_sansio::schema::Implementation;
//! use futures_lite::StreamExt;
//! use std::time::Instant;
//!
//! fn main() -> Result<(), std::io::Error> {
//!     smol::block_on(async {
//!         let transport = HyperTransport::new();
//!         // The session decides the requests; here, its first one: `initialize`.
//!         let mut session = HttpSession::new(
//!             HttpConfig::new("http://127.0.0.1:3000/mcp"),
//!             ClientConfig::new(Implementation::new("example", "0.1.0")),
//!             Instant::now(),
//!         );
//!         let Some(HttpAction::Send(request)) = session.poll_action(Instant::now()) else { return Ok(()) };
//!         let mut response = transport.send(request).await?;
//!         println!("status {}", response.status);
//!         while let Some(chunk) = response.body.next().await {
//!             println!("{} bytes", chunk?.len());
//!         }
//!         // The body was read to the end: the next request to this server reuses the connection.
//!         assert_eq!(transport.connections_opened(), 1);
//!         Ok(())
//!     })
//! }
//! ```
#![forbid(unsafe_code)]
#![deny(missing_docs)]

mod body;
mod connect;
mod coop;
mod error;
mod io;
mod pool;
mod quickack;
mod target;
mod transport;

pub use transport::{DEFAULT_IDLE_TIMEOUT, DEFAULT_MAX_IDLE_PER_HOST, HyperTransport, HyperTransportBuilder};

pub use rustls;

/// The workspace README's examples (stdio and HTTP), compiled as doc tests so that they stay true.
#[cfg(doctest)]
#[doc = include_str!("../../../README.md")]
struct ReadmeDoctests;

/// This crate's README (its page on crates.io), compiled as a doc test.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct CrateReadmeDoctests;

/// The guide's examples (`docs/guide.md`), compiled as doc tests so that they stay true.
#[cfg(doctest)]
#[doc = include_str!("../../../docs/guide.md")]
struct GuideDoctests;
