//! The sans-IO pieces of MCP's HTTP transports; the Streamable HTTP session will live here too.
//!
//! Like the rest of the crate, nothing here performs I/O or reads a clock: the driver owns the
//! HTTP connection and feeds the response body in, in whatever chunks it arrives.

mod sse;

pub use sse::{SseDecoder, SseError, SseEvent};
