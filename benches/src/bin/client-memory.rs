//! Memory and scaling of the `mcp-smol` client over stdio, against the `bench-echo` server:
//!
//! - resident memory of this process with one idle connection (and what the connection added
//!   to the process as it was before connecting);
//! - resident memory per pending request (requests the server never answers, held as the
//!   futures a caller keeps), for 10 000 and 100 000 of them;
//! - 100, 1 000 and 10 000 requests in flight at once: time per request, which must stay flat
//!   (no quadratic bookkeeping);
//! - resident memory per open server request (elicitations a handler never answers), and what
//!   20 000 of them cost under the default cap on open server requests.
//!
//! Usage: `client-memory [--rounds R]`. RSS comes from `/proc/self/status` (4 KiB pages).

use std::time::{Duration, Instant};

use mcp_benches::process_stats::{peak_rss, rss};
use mcp_sansio::schema::Implementation;
use mcp_smol::ClientApi;
use mcp_smol::{CallOptions, Client, ClientBuilder, ServerCommand, StderrSink};
use serde_json::value::RawValue;

fn kib(bytes: u64) -> f64 {
    bytes as f64 / 1024.0
}

/// Sends `n` calls of `tool` at once; the futures are returned unpolled (each request is
/// already written when its future is created).
fn send_many(
    client: &Client,
    tool: &str,
    n: usize,
) -> Vec<impl Future<Output = Result<Box<RawValue>, mcp_smol::Error>> + use<>> {
    let params = RawValue::from_string(format!(r#"{{"name":"{tool}","arguments":{{"message":"hi"}}}}"#))
        .expect("valid JSON");
    let options = || CallOptions::default().timeout(Duration::from_secs(120));
    (0..n).map(|_| client.request_raw("tools/call", Some(&params), options())).collect()
}

/// Waits until the driver wrote everything and the process settled.
async fn settle() {
    async_io::Timer::after(Duration::from_millis(300)).await;
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let rounds: usize =
        args.iter().position(|a| a == "--rounds").and_then(|i| args.get(i + 1)?.parse().ok()).unwrap_or(9);
    smol::block_on(async {
        let before = rss();
        let command = ServerCommand::new(mcp_benches::workers::bench_echo()).stderr(StderrSink::Discard);
        let client = ClientBuilder::new(Implementation::new("client-memory", "0.1.0"))
            .spawn_stdio(&command)
            .await
            .expect("connect");
        client.ping().await.expect("ping");
        settle().await;
        let idle = rss();
        println!(
            "idle connection: process RSS {:.0} KiB ({:.2} MiB), of which the connection added {:.0} KiB \
             (RSS before connecting {:.0} KiB)",
            kib(idle),
            idle as f64 / (1024.0 * 1024.0),
            kib(idle.saturating_sub(before)),
            kib(before)
        );

        // Pending requests, measured once on fresh memory (a second batch would reuse what the
        // first one freed and look cheaper than it is).
        let n = 100_000;
        let base = rss();
        let pending = send_many(&client, "hold", n);
        settle().await;
        let held = rss();
        let future_size = std::mem::size_of_val(&pending[0]);
        let per_request = held.saturating_sub(base) as f64 / n as f64;
        println!(
            "pending requests: {n} held, RSS +{:.0} KiB = {per_request:.0} bytes per pending request, \
             of which {future_size} bytes are the caller's future and {:.0} the client's own share",
            kib(held.saturating_sub(base)),
            per_request - future_size as f64,
        );
        // Dropping them cancels them (notifications/cancelled to the server).
        drop(pending);
        settle().await;

        // Requests in flight at once: time per request.
        let sizes = [100usize, 1_000, 10_000];
        let mut per_request = vec![Vec::new(); sizes.len()];
        for _ in 0..rounds {
            for (i, &n) in sizes.iter().enumerate() {
                let start = Instant::now();
                for future in send_many(&client, "echo", n) {
                    future.await.expect("echo");
                }
                per_request[i].push(start.elapsed().as_secs_f64() * 1e6 / n as f64);
            }
        }
        let medians: Vec<f64> = per_request.into_iter().map(median).collect();
        for (n, us) in sizes.iter().zip(&medians) {
            println!(
                "in flight at once: {n:>6} requests, {us:.2} µs per request (median of {rounds}), \
                 {:.2} × the figure at 100",
                us / medians[0]
            );
        }
        client.close().await;

        server_requests(&command).await;
        println!("peak RSS of the whole run: {:.2} MiB", peak_rss() as f64 / (1024.0 * 1024.0));
    });
}

/// A handler that never answers an elicitation.
struct NeverAnswers;

impl mcp_smol::ClientHandler for NeverAnswers {
    fn elicit(
        &self,
        _: mcp_sansio::schema::ElicitRequestParams,
    ) -> mcp_smol::HandlerFuture<mcp_sansio::schema::ElicitResult> {
        Box::pin(std::future::pending())
    }
}

/// Open server requests: what each costs while its answer is awaited (the cap raised so that
/// all are open), and what a flood of 20 000 costs under the default cap. (bench-echo writes
/// them all before it reads the refusals: many more would fill the pipes both ways, as for any
/// server that writes without reading; the adversary's flood test goes to 100 000.)
async fn server_requests(command: &ServerCommand) {
    let capabilities = mcp_sansio::schema::ClientCapabilities {
        elicitation: Some(Default::default()),
        ..Default::default()
    };
    for (asked, cap) in [(10_000usize, 10_000usize), (20_000, mcp_sansio::DEFAULT_MAX_OPEN_SERVER_REQUESTS)] {
        let client = ClientBuilder::new(Implementation::new("client-memory", "0.1.0"))
            .configure(|c| c.with_capabilities(capabilities.clone()).with_max_open_server_requests(cap))
            .handler(NeverAnswers)
            .spawn_stdio(command)
            .await
            .expect("connect");
        client.ping().await.expect("ping");
        settle().await;
        let base = rss();
        let received = client.stats().messages_received;
        let arguments = serde_json::json!({"size": asked});
        client.call_tool("ask", arguments).await.expect("ask");
        while client.stats().messages_received < received + asked as u64 {
            async_io::Timer::after(Duration::from_millis(20)).await;
        }
        settle().await;
        let grown = rss().saturating_sub(base);
        let refused = client.stats().server_requests_refused;
        let open = asked - refused as usize;
        println!(
            "open server requests: {asked} sent, cap {cap}: {open} open, {refused} refused; RSS +{:.0} KiB = \
             {:.0} bytes per request sent",
            kib(grown),
            grown as f64 / asked as f64,
        );
        client.close().await;
    }
}
