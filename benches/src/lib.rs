//! Benchmarks of the mcp-sansio engine and its drivers. Every figure is printed beside a raw
//! baseline measured in the same run, because on shared machines only ratios hold.
//!
//! - `cargo bench -p mcp-benches --bench engine`: the engine alone (decode and correlate,
//!   framing, SSE, request encoding) beside `serde_json` and `memchr` on the same bytes.
//! - `cargo run --release -p mcp-benches --bin http-throughput`: `tools/call` over Streamable
//!   HTTP with the hyper driver, sequential and 32 in flight, against raw hyper requests to the
//!   same local server; also prints how many TCP connections each side opened.
//! - `cargo run --release -p mcp-benches --bin stdio-throughput`: `tools/call` over stdio
//!   (sequential, 32 in flight, 64 KiB results) with the smol client against a raw blocking
//!   client, both talking to the `bench-echo` server; calls/s, CPU per call, peak RSS, ratios.
//! - `cargo run --release -p mcp-benches --bin large-results`: one result of 1 KiB to 12 MiB at
//!   a time over stdio, HTTP JSON and HTTP SSE, beside a raw client that parses it into a
//!   `Value`: MiB/s, CPU per MiB, and peak RSS against the result's size (issue 37). Our
//!   client runs in `mcp-bench-worker`'s programs, which link only their transport (build them
//!   as that crate's docs say), and inside this binary as the `*-linked` kinds.
//! - `cargo run --release -p mcp-benches --bin client-memory`: resident memory with one idle
//!   connection, bytes per pending request, and time per request with 100 to 10 000 in flight.
//! - `cargo run --release -p mcp-benches --bin curves`: how each cost grows with the work
//!   (result size over stdio, HTTP JSON and SSE; calls in flight; tools per list with output
//!   schemas; connections per process), ours beside a raw client and rmcp, as markdown tables and
//!   SVG plots (`--quick` for a smoke run, `--only CURVE`).
//! - `cargo run --release -p mcp-benches --bin engine-profile`: the engine bench's
//!   `decode_correlate` work a fixed number of times, for profilers (`valgrind --tool=callgrind`
//!   counts instructions, which a noisy machine does not change).
//!
//! With the feature `rmcp` (off by default, so that the workspace's tests never build rmcp,
//! tokio or reqwest), `stdio-throughput` and `http-throughput` also run the official Rust SDK's
//! client beside ours: `cargo build --release -p mcp-benches --bins --features rmcp`.
#![forbid(unsafe_code)]
#![deny(missing_docs)]

pub mod engine_workload;
pub mod http_server;

/// The protocol versions that have `initialize`, which the bench servers accept as offered;
/// to any other offer (such as rmcp's default, 2026-07-28) they answer 2025-11-25, as a server
/// that predates 2026-07-28 does, so that every client runs the same protocol version.
pub const INITIALIZE_VERSIONS: [&str; 4] = ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"];
/// What a worker process measures of itself (in mcp-bench-worker, which has no driver in it).
pub use mcp_bench_worker::process_stats;
#[cfg(feature = "rmcp")]
pub mod rmcp_clients;
pub mod workers;
