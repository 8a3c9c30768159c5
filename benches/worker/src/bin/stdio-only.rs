//! `stdio-only SIZE WARMUP CALLS [--pin]`: the README's client as a stdio-only program is built
//! (mcp-smol's default features), calling `bench-echo`'s tool `blob` for a result of `SIZE`
//! bytes, `WARMUP` times unmeasured and then `CALLS` times. Prints the `RESULT` line of
//! [`mcp_bench_worker::report`] and, after `NOTE `, its RSS once connected. `large-results`
//! runs it as its `stdio` kind.

use mcp_bench_worker::{bench_echo, blob_calls, process_stats, report};
use mcp_smol::prelude::Implementation;
use mcp_smol::{ClientBuilder, ServerCommand, StderrSink};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let number = |i: usize| -> usize {
        args.get(i).and_then(|a| a.parse().ok()).expect("usage: stdio-only SIZE WARMUP CALLS [--pin]")
    };
    let (size, warmup, calls) = (number(0), number(1), number(2));
    if args.iter().any(|a| a == "--pin") {
        process_stats::pin_to_cpu(0).expect("pin to CPU 0");
    }
    let mut connected = 0;
    report(calls, warmup, || {
        smol::block_on(async {
            let command = ServerCommand::new(bench_echo()).stderr(StderrSink::Discard);
            let client = ClientBuilder::new(Implementation::new("large-results", "0.1.0"))
                .spawn_stdio(&command)
                .await
                .expect("connect");
            connected = process_stats::rss();
            blob_calls(client, size, warmup, calls).await
        })
    });
    println!("NOTE {connected}");
}
