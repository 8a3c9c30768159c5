//! MCP over HTTP for [`mcp_smol`] with **surf 2 on libcurl**: [`SurfTransport`] implements
//! [`mcp_smol::HttpTransport`], the seam through which the driver executes the requests the
//! sans-IO HTTP session decides.
//!
//! Prefer `mcp-hyper` (see [Trade-offs](#trade-offs)); this crate is for applications that
//! already build on surf or libcurl.
//!
//! - Backend: surf's `curl-client`, that is http-client 6 → isahc 0.9 → libcurl, whose transfers
//!   run on a thread isahc owns. The futures are executor-agnostic: smol or any other.
//! - No total timeout (surf's default would cut an event stream after 60 s) and no redirect
//!   following: the session owns every deadline and decision. The only deadline below it is
//!   libcurl's connect timeout (300 s).
//! - Keep-alive with libcurl's connection cache, shared by clones: a connection whose response
//!   body was read to the end is reused; concurrent exchanges use one connection each (over
//!   `https`, libcurl may negotiate HTTP/2 and multiplex them on one instead).
//! - Response bodies are streamed in chunks of at most 16 KiB as libcurl delivers them.
//! - Dropping the response future or its body aborts the transfer, and libcurl closes the
//!   connection instead of caching it, but lazily: see [Caveats](#caveats).
//! - Errors are `io::Error`s with messages that name what failed; header values never appear
//!   in them, and this crate logs nothing. A response head over libcurl's limits (300 KiB in
//!   all, 100 KiB for one header; libcurl says "A value or data field grew larger than
//!   allowed") wraps [`TransportError::HeadTooLarge`](mcp_sansio::TransportError), so the
//!   session reports it as such.
//!
//! ```no_run
//! use mcp_surf::SurfTransport;
//! use mcp_smol::HttpTransport;
//! use mcp_smol::mcp_sansio::ClientConfig;
//! use mcp_smol::mcp_sansio::http::{HttpAction, HttpConfig, HttpSession};
//! use mcp_smol::mcp_sansio::schema::Implementation;
//! use futures_lite::StreamExt;
//! use std::time::Instant;
//!
//! fn main() -> Result<(), std::io::Error> {
//!     smol::block_on(async {
//!         let transport = SurfTransport::new();
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
//!         Ok(())
//!     })
//! }
//! ```
//!
//! # Building
//!
//! libcurl (with nghttp2 and zlib) is always compiled from the source bundled in `curl-sys`
//! (its `static-curl` feature), so no libcurl package is needed and every machine gets the
//! same libcurl. TLS is OpenSSL:
//!
//! - feature `vendored-openssl` (default): OpenSSL is compiled from source too. Nothing but a
//!   C compiler, `make` and `perl` is needed; a cold build of this crate takes five to eight
//!   minutes on two cores, most of it OpenSSL's.
//! - without it (`default-features = false`): the system's OpenSSL is linked, which needs its
//!   development files and `pkg-config` (Debian: `libssl-dev pkg-config`); the cold build then
//!   takes about a minute and a half.
//!
//! Certificates are found where the system keeps them (`openssl-probe`: `/etc/ssl/certs`, …).
//!
//! # Caveats
//!
//! What the surf/isahc/libcurl stack does that `mcp-hyper` does not:
//!
//! - **Lazy abort.** isahc 0.9 notices a dropped response future only when the response head
//!   arrives, and a dropped body only when libcurl hands it more data. The transfer is then
//!   aborted and its connection closed, never reused; until then an abandoned exchange keeps
//!   its connection open: an idle event stream dropped by the session stays open until the
//!   server writes to it again (or closes it), and a dropped request until its response head
//!   comes. The connection is never handed to another request meanwhile.
//! - **Headers.** Request header values must be visible ASCII, spaces and tabs (anything else
//!   is refused with `InvalidInput`, before anything is sent); a repeated request header name
//!   is sent once with its values joined by `", "`. A response header value that is not
//!   visible ASCII fails the exchange with `InvalidData` (http-client 6 panics on it; the
//!   panic is caught, but the panic hook still prints it). Response headers of different
//!   names come in no particular order; values of one name keep theirs.
//! - **Added request headers.** libcurl and isahc add `Accept-Encoding: deflate, gzip`
//!   (libcurl then decompresses the body itself), a `User-Agent` naming curl and isahc, and,
//!   for a body over 1 MiB, `Expect: 100-continue` (a server that does not answer it delays
//!   the body by a second).
//! - **Proxies.** libcurl honours the proxy environment variables (`http_proxy`,
//!   `HTTPS_PROXY`, `ALL_PROXY`, `NO_PROXY`).
//! - **Logging.** When a `log` or `tracing` subscriber enables debug output for the `isahc`
//!   target, isahc logs libcurl's verbose trace, request header lines included (at trace
//!   level, target `isahc::wire`): keep that target below debug wherever requests carry
//!   credentials.
//! - **Threads.** Each [`SurfTransport::new`] starts a libcurl multi handle on a thread of its
//!   own; clones share it. Dropping the last clone (and the last response body) waits for that
//!   thread to exit.
//! - **Servers that split a response without `TCP_NODELAY`.** A server that writes a response's
//!   head and its body in two small writes with Nagle's algorithm on (rmcp's Streamable HTTP
//!   server in its session mode) holds the body until the client acknowledges the head, and on a
//!   kept-alive connection Linux delays that ACK by 40 ms: every call then takes at least 40 ms
//!   (22 calls/s against such a local server, 440 to 1 300 when it writes in one piece; 50 calls
//!   each, debug build). `mcp-hyper` acknowledges such responses at once (`TCP_QUICKACK`, see
//!   `docs/performance.md`); here it cannot be done: quick-ACK mode does not last, so it must be
//!   set again while a response is read, and neither surf nor isahc 0.9 exposes libcurl's
//!   socket, whose socket-option callback only runs once, when the connection is made.
//!
//! # Trade-offs
//!
//! **Why the curl backend.** surf 2.3 is unmaintained, and of its backends only
//! `curl-client` meets the [`HttpTransport`](mcp_smol::HttpTransport) contract:
//!
//! - `h1-client` / `h1-client-rustls` (async-h1 with a deadpool pool) return a connection to
//!   the pool when its response is dropped even if a cancelled or abandoned body left it dirty,
//!   mid-stream: the next request on it reads the rest of the old stream as its response. Only
//!   turning keep-alive off avoids that, at the cost of a new connection per request.
//! - `hyper-client` is hyper 0.13 on tokio 0.2: old, unmaintained, and a second runtime.
//! - `curl-client` rests on libcurl, which is maintained, has no known advisory against this
//!   use, and never returns an aborted transfer's connection to its cache.
//!
//! **What is lost against `mcp-hyper`** (hyper 1 on smol, pure Rust, rustls):
//!
//! - A heavier native dependency: libcurl, nghttp2, zlib and (by default) OpenSSL compiled from
//!   C, minutes of cold build, and C code in the process.
//! - libcurl's own thread per transport: requests and body chunks cross threads through
//!   wakers, instead of running on the caller's executor.
//! - Less control over connection reuse: libcurl's cache decides (idle connections are dropped
//!   after 118 s, its default), with no counters and no knobs through surf's configuration.
//! - The lazy abort, the header restrictions and the 40 ms stall on split responses above.
//! - An unmaintained stack: surf 2.3, http-client 6, http-types 2 and isahc 0.9 (isahc 1 exists,
//!   surf does not use it), with async-std pulled in for a buffered reader.
//!
//! Use `mcp-hyper` unless surf or libcurl is already a given.
#![forbid(unsafe_code)]
#![deny(missing_docs)]

mod error;
mod request;
mod response;
mod transport;

pub use transport::SurfTransport;
