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
//! - Each connection runs on a detached task on smol's global executor.
//! - Header values are never logged; connection events are logged with `tracing` at debug level.
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
//! smol::block_on(async {
//!     let transport = HyperTransport::new();
//!     // The session decides the requests; here, its first one: `initialize`.
//!     let mut session = HttpSession::new(
//!         HttpConfig::new("http://127.0.0.1:3000/mcp"),
//!         ClientConfig::new(Implementation::new("example", "0.1.0")),
//!         Instant::now(),
//!     );
//!     let Some(HttpAction::Send(request)) = session.poll_action(Instant::now()) else { return Ok(()) };
//!     let mut response = transport.send(request).await?;
//!     println!("status {}", response.status);
//!     while let Some(chunk) = response.body.next().await {
//!         println!("{} bytes", chunk?.len());
//!     }
//!     // The body was read to the end: the next request to this server reuses the connection.
//!     assert_eq!(transport.connections_opened(), 1);
//!     Ok::<(), std::io::Error>(())
//! })
//! # .unwrap();
//! ```
#![forbid(unsafe_code)]
#![deny(missing_docs)]

mod body;
mod connect;
mod error;
mod pool;
mod target;
mod transport;

pub use transport::{DEFAULT_IDLE_TIMEOUT, DEFAULT_MAX_IDLE_PER_HOST, HyperTransport, HyperTransportBuilder};

pub use rustls;
