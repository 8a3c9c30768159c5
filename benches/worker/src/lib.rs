//! The worker side of the end-to-end benches, with nothing of the drivers in it: what a worker
//! process measures of itself ([`process_stats`]), the result line it prints ([`report`]), and
//! where the `bench-echo` server is ([`bench_echo`]). mcp-benches re-exports all three.
//!
//! Its binaries are the README's client (`smol::block_on`, `spawn_*`, `call_tool`) as programs
//! that link only their transport, because the resident code of a binary that links every driver
//! is part of what a worker's peak RSS measures. `large-results` runs them:
//!
//! - `stdio-only`, its `stdio` kind: mcp-smol with its default features, so without HTTP, OAuth
//!   or hyper. Build it on its own, `cargo build --release -p mcp-bench-worker`, so that cargo
//!   does not unify its features with mcp-benches'.
//! - `http-only`, its `http-json` and `http-sse` kinds: mcp-hyper with its default features.
//!   Build it next, `cargo build --release -p mcp-bench-worker --features http --bin
//!   http-only`.
#![forbid(unsafe_code)]
#![deny(missing_docs)]

use std::time::{Duration, Instant};

use mcp_smol::ClientApi;

pub mod process_stats;

/// Runs `work` (which returns the duration of its `calls` measured calls, after `warmup`
/// unmeasured ones), then prints the result line the parent reads
/// (`mcp_benches::workers::run`). CPU time covers the warm-up too, so it is divided by all
/// calls.
pub fn report(calls: usize, warmup: usize, work: impl FnOnce() -> Duration) {
    let cpu_before = process_stats::cpu_time();
    let elapsed = work();
    let cpu = process_stats::cpu_time() - cpu_before;
    println!(
        "RESULT {} {} {}",
        calls as f64 / elapsed.as_secs_f64(),
        cpu.as_secs_f64() * 1e6 / (calls + warmup) as f64,
        process_stats::peak_rss()
    );
}

/// The binary `name` beside this one (in the same target directory), which must exist; `build`
/// is the command that builds it, for the message if it does not.
pub fn beside_me(name: &str, build: &str) -> std::path::PathBuf {
    let path = std::env::current_exe().expect("own path").with_file_name(name);
    assert!(path.exists(), "{} is missing: build it with `{build}`", path.display());
    path
}

/// The `bench-echo` server beside this binary.
pub fn bench_echo() -> std::path::PathBuf {
    beside_me("bench-echo", "cargo build --release -p mcp-benches --bin bench-echo")
}

/// Calls `bench-echo`'s tool `blob` for a result of `size` bytes through a connected `client`,
/// `warmup` times unmeasured and then `calls` times, checking each result's length; closes the
/// client and returns the time of the measured calls.
pub async fn blob_calls(client: mcp_smol::Client, size: usize, warmup: usize, calls: usize) -> Duration {
    let call = || async {
        let result = client.call_tool("blob", serde_json::json!({ "size": size })).await.expect("call");
        assert_eq!(result.content[0].as_text().map(str::len), Some(size));
    };
    for _ in 0..warmup {
        call().await;
    }
    let start = Instant::now();
    for _ in 0..calls {
        call().await;
    }
    let elapsed = start.elapsed();
    client.close().await;
    elapsed
}
