//! MCP over HTTP, sans-IO: the Streamable HTTP session (with the 2024-11-05 HTTP+SSE transport
//! as a fallback) and the server-sent-events decoder it uses.
//!
//! Like the rest of the crate, nothing here performs I/O or reads a clock. [`HttpSession`]
//! produces [`HttpRequest`]s for a driver to execute and consumes the responses in whatever
//! chunks they arrive; everything time-related is a deadline from
//! [`poll_timeout`](HttpSession::poll_timeout).

mod request;
mod session;
mod sse;

mod url;

pub use request::{
    DEFAULT_MAX_QUEUED_ANSWERS, DEFAULT_MAX_REDIRECTS, HttpAction, HttpConfig, HttpMethod, HttpRequest,
    StreamId,
};
pub use session::{HttpSession, SCOPE_REFUSAL_MEMORY, header_value};
pub use sse::{SseDecoder, SseError, SseEvent};
