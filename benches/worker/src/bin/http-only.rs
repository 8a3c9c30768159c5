//! `http-only SIZE WARMUP CALLS URL [--pin]`: the README's client over Streamable HTTP with the
//! hyper driver, as an HTTP program is built (mcp-hyper's default features), calling the tool
//! `blob` of the server at `URL` for a result of `SIZE` bytes, `WARMUP` times unmeasured and
//! then `CALLS` times. Prints the `RESULT` line of [`mcp_bench_worker::report`] and, after
//! `NOTE `, its RSS once connected. `large-results` runs it for its `http-json` and `http-sse`
//! kinds when it is built.

use mcp_bench_worker::{blob_calls, process_stats, report};
use mcp_hyper::HyperTransport;
use mcp_smol::ClientBuilder;
use mcp_smol::prelude::{HttpConfig, Implementation};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let usage = "usage: http-only SIZE WARMUP CALLS URL [--pin]";
    let number = |i: usize| -> usize { args.get(i).and_then(|a| a.parse().ok()).expect(usage) };
    let (size, warmup, calls) = (number(0), number(1), number(2));
    let url = args.get(3).expect(usage).clone();
    if args.iter().any(|a| a == "--pin") {
        process_stats::pin_to_cpu(0).expect("pin to CPU 0");
    }
    let mut connected = 0;
    report(calls, warmup, || {
        smol::block_on(async {
            let client = ClientBuilder::new(Implementation::new("large-results", "0.1.0"))
                .spawn_http(HttpConfig::new(url), HyperTransport::new())
                .await
                .expect("connect");
            connected = process_stats::rss();
            blob_calls(client, size, warmup, calls).await
        })
    });
    println!("NOTE {connected}");
}
