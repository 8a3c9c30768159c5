//! A sans-IO [Model Context Protocol](https://modelcontextprotocol.io) client engine.
//!
//! [`ClientConnection`] knows the whole protocol and nothing about I/O: bytes and time go in,
//! messages to write, events and the next deadline come out. It never reads a clock, spawns a
//! thread or touches a socket, so the same engine runs under any async runtime, in a blocking
//! loop, or in a test with simulated time. The `mcp-smol` crate drives it on smol (or any
//! executor) with stdio child processes.
//!
//! What the engine does: newline framing with a hard message-size limit; strict JSON-RPC 2.0
//! decoding with payloads kept raw until the caller decodes them; id correlation; deadlines
//! (per-request idle timeout reset by progress, a cap on total time, the handshake deadline,
//! keep-alive pings); the `initialize` handshake and version negotiation for MCP 2024-11-05,
//! 2025-03-26, 2025-06-18 and 2025-11-25, and the stateless 2026-07-28 (per-request `_meta`,
//! `server/discover`, multi round-trip requests, `subscriptions/listen`), with the era a server
//! speaks found by probing (the default; see [`ClientConfig::versions`]); capability checks
//! before anything is sent;
//! answering `ping`; surfacing server requests (roots, sampling, elicitation) and notifications as
//! typed [`Event`]s. The typed MCP model is in [`schema`].
//!
//! # The driver loop
//!
//! Every driver is the same loop: feed what was read, write every transmit, deliver every event,
//! and call `handle_timeout` when the deadline from `poll_timeout` passes. This one is blocking
//! and, to stay self-contained, reads a recorded server reply from memory:
//!
//! ```
//! use std::io::{Read, Write};
//! use std::time::Instant;
//!
//! use mcp_sansio::schema::{Implementation, ListTools, ListToolsResult};
//! use mcp_sansio::{ClientConfig, ClientConnection, Event, ProtocolVersion, RequestOptions};
//!
//! fn list_tools(mut input: impl Read, mut output: impl Write) -> std::io::Result<Vec<String>> {
//!     // Pinned to one version, to match the recording (by default the client first probes
//!     // for 2026-07-28 with `server/discover`).
//!     let config = ClientConfig::new(Implementation::new("example", "0.1.0"))
//!         .with_versions(&[ProtocolVersion::V2025_11_25]);
//!     let mut conn = ClientConnection::new(config, Instant::now());
//!     let mut buf = vec![0; 64 * 1024];
//!     let mut names = Vec::new();
//!     loop {
//!         while let Some(transmit) = conn.poll_transmit() {
//!             output.write_all(transmit.bytes())?;
//!         }
//!         output.flush()?;
//!         while let Some(event) = conn.poll_event() {
//!             match event {
//!                 Event::Ready { .. } => {
//!                     let params = Default::default();
//!                     conn.send::<ListTools>(Instant::now(), &params, RequestOptions::default())
//!                         .expect("the server declared tools");
//!                 }
//!                 Event::Response { result, .. } => {
//!                     let raw = result.map_err(std::io::Error::other)?;
//!                     let tools: ListToolsResult = serde_json::from_str(raw.get())?;
//!                     names.extend(tools.tools.into_iter().map(|t| t.name));
//!                     conn.close();
//!                 }
//!                 Event::Closed(_) => return Ok(names),
//!                 _ => {}
//!             }
//!         }
//!         // A real driver waits for input *or* the deadline; this blocking one checks the
//!         // deadline between reads.
//!         if conn.poll_timeout().is_some_and(|deadline| deadline <= Instant::now()) {
//!             conn.handle_timeout(Instant::now());
//!             continue;
//!         }
//!         match input.read(&mut buf)? {
//!             0 => conn.feed_eof(Instant::now()),
//!             n => conn.feed(Instant::now(), &buf[..n]),
//!         }
//!     }
//! }
//!
//! // The server's side of a session, one read at a time (as a pipe would deliver it).
//! # struct Replay(std::collections::VecDeque<&'static [u8]>);
//! # impl Read for Replay {
//! #     fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
//! #         let Some(chunk) = self.0.pop_front() else { return Ok(0) };
//! #         buf[..chunk.len()].copy_from_slice(chunk);
//! #         Ok(chunk.len())
//! #     }
//! # }
//! let server = Replay([
//!     concat!(r#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-11-25","#,
//!             r#""capabilities":{"tools":{}},"serverInfo":{"name":"demo","version":"1"}}}"#, "\n").as_bytes(),
//!     concat!(r#"{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"echo","inputSchema":{"type":"object"}}]}}"#,
//!             "\n").as_bytes(),
//! ].into());
//! let mut written = Vec::new();
//! let names = list_tools(server, &mut written).unwrap();
//! assert_eq!(names, ["echo"]);
//! assert!(String::from_utf8(written).unwrap().starts_with(r#"{"jsonrpc":"2.0","id":0,"method":"initialize""#));
//! ```
//!
//! # Contracts
//!
//! - **Call order.** Inputs (`feed*`, `handle_timeout`, `handle_transport`) and commands (`send`,
//!   `notify`, `respond`, `cancel`, `close`) may come in any order. After each, a driver drains
//!   `poll_transmit` (writing in order), then `poll_event`, then reads `poll_timeout`. Outputs
//!   wait in queues until drained; nothing is lost by draining late.
//! - **Time only moves forward.** Every `now` comes from one monotonic clock. A `now` earlier
//!   than one already given never panics and never fires a deadline early: deadlines are
//!   compared with it as they are, so a clock that steps back only delays what was due.
//!   Durations saturate (a timeout of `Duration::MAX` is a deadline a century away).
//! - **Every request ends once.** Every id that [`ClientConnection::send`] or
//!   [`send_request`](ClientConnection::send_request) returned ends in exactly one
//!   [`Event::Response`], whatever happens; after [`Event::Closed`] no event follows. Debug
//!   builds assert the pending table's invariants (one deadline per timed request, wire ids
//!   indexed both ways) after every input and command.
//! - **Transports above a byte stream** use only public API: each [`Transmit`] says what it is
//!   ([`TransmitKind`]: a request with its method and routing name, a notification, a
//!   cancellation, an answer), so no layer parses outgoing bytes; what the transport learns goes
//!   back in as a [`TransportEvent`] through
//!   [`handle_transport`](ClientConnection::handle_transport); [`ClientConnection::awaits`] and
//!   [`wire_version`](ClientConnection::wire_version) answer its questions; and it lends the
//!   application [`Commands`], which cannot feed the connection or take its output.
//!   [`http::HttpSession`] is built that way, and so is the in-memory transport of
//!   `core/tests/custom_transport.rs`.
//!
//! # Errors, in three classes
//! - The caller misused the API: a command returns [`UsageError`] and sends nothing.
//! - The server broke the protocol or failed: an [`Event`] says so ([`Event::ProtocolViolation`],
//!   [`RequestError`] in [`Event::Response`], [`Event::Closed`]); the engine never panics on
//!   peer input.
//! - Requests never wait forever: every one has a deadline, and all fail on EOF or close.
#![forbid(unsafe_code)]
#![deny(missing_docs)]
#![cfg_attr(docsrs, feature(doc_cfg))]
// Some docs link to the HTTP session and OAuth, which only the `http` feature builds.
#![cfg_attr(not(feature = "http"), allow(rustdoc::broken_intra_doc_links))]
#![cfg_attr(not(test), warn(clippy::unwrap_used, clippy::expect_used, clippy::panic))]

// Without `http`, only `AuthError` (which `RequestError::Unauthorized` carries).
#[cfg_attr(not(feature = "http"), path = "auth/error_only.rs")]
pub mod auth;
mod base64;
mod capability;
mod config;
mod connection;
mod deadline;
mod error;
mod event;
pub mod framing;
#[cfg(feature = "http")]
pub mod http;
mod ids;
mod json_scan;
pub mod jsonrpc;
mod params;
mod raw_result;
pub mod schema;
mod transmit;
mod transport;
mod transport_error;
mod version;

pub use config::{
    ClientConfig, DEFAULT_HANDSHAKE_TIMEOUT, DEFAULT_MAX_MESSAGE_SIZE, DEFAULT_MAX_OPEN_SERVER_REQUESTS,
    DEFAULT_MAX_TASK_INPUTS, DEFAULT_MAX_TOTAL, DEFAULT_REQUEST_TIMEOUT, RequestOptions, TaskMode,
    TaskPolicy,
};
pub use connection::{ClientConnection, Stats, Status};
pub use error::UsageError;
pub use event::{
    CloseReason, ConnectionRequest, Event, ProtocolViolation, RequestError, ServerExit, ServerNotification,
    ServerRequest,
};
pub use ids::{IdHasher, ProgressToken, RequestId};
pub use jsonrpc::{ErrorObject, InvalidMessage, McpError};
pub use params::SerializedParams;
pub use raw_result::RawResult;
pub use transmit::{OutgoingRequest, Transmit, TransmitKind};
pub use transport::{Commands, TransportEvent};
pub use transport_error::{RedirectRefusal, TransportError};
pub use version::{ProtocolVersion, UnknownVersion};
