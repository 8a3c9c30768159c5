//! Conformance tooling for MCP: recorded sessions as the test oracle.
//!
//! - [`trace`]: the trace format (JSON Lines, one message per line).
//! - [`record`]: a recording proxy between a client and a server, over stdio or HTTP.
//! - [`engine_replay`]: replays a trace's server side into the engine and checks that it sends
//!   what the recorded client sent.
//! - [`replay`]: replays a trace's client side against a live server and compares the answers
//!   ([`rules`] says which fields may legitimately differ).
//! - [`check`]: property tests of a live server (any language), with proptest.
//!
//! The `mcp-conformance` binary exposes `record`, `replay` and `check`; `docs/conformance.md`
//! shows a server author how to use them in CI.
#![forbid(unsafe_code)]
#![deny(missing_docs)]

pub mod arguments;
pub mod check;
pub mod engine_replay;
pub mod http_peer;
pub mod json_schema;
pub mod official;
pub mod peer;
pub mod record;
pub mod record_http;
pub mod replay;
pub mod rules;
pub mod trace;
