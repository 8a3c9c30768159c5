//! `tools/call` over Streamable HTTP, end to end: the `mcp-smol` client with the `mcp-hyper`
//! transport against raw hyper requests (hand-written JSON, no MCP engine), both talking to the
//! same local server (a separate process) in the same run.
//!
//! Usage: `http-throughput [--calls N] [--rounds R] [--pinned-only | --unpinned-only]`.
//!
//! Built with the feature `rmcp`, it also runs the official Rust SDK's Streamable HTTP client
//! (rmcp with its reqwest transport, on a tokio current-thread and a multi-thread runtime, and
//! on current-thread with a connection pool: `rmcp-ct-pool`) against the same server process in
//! the same rounds, with the ratios of ours to each.
//!
//! As in `stdio-throughput`, every measurement runs in a fresh worker process, raw and ours
//! alternate, figures are medians of `R` rounds, and pinned runs put the server, the worker and
//! all their threads on CPU 0. The MCP worker also reports how many TCP connections its
//! transport opened: the client reuses connections instead of opening one per call.
//!
//! Then the same server answers with an event stream, written in one piece or split (the head,
//! then the event, with `TCP_NODELAY` off: see `Mode::SseSplit`), and each client's rate against
//! the split server is compared with its rate against the one-piece one: mcp-hyper, and raw
//! hyper with a quick ACK after every read (the earliest ACK, so about the best any client can
//! do against that server). A control row shows that the split server stalls a client that does
//! not ask for quick ACKs: raw hyper, a few calls without warm-up.

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use bytes::Bytes;
use futures_lite::{AsyncRead, AsyncWrite};
use http_body_util::{BodyExt, Full};
use mcp_benches::http_server::{BenchServer, Mode};
use mcp_benches::process_stats;
use mcp_benches::workers::{self, Figures, Options, ServeProcess};
use mcp_hyper::HyperTransport;
use mcp_sansio::http::HttpConfig;
use mcp_sansio::schema::Implementation;
use mcp_smol::ClientApi;
use mcp_smol::{Client, ClientBuilder};
use serde_json::json;
use smol_hyper::rt::FuturesIo;

const IN_FLIGHT: usize = 32;
const WARMUP: usize = 200;
/// Calls of the control row (sequential, no warm-up): about 1 s at 40 ms a call.
const CONTROL_CALLS: usize = 25;

/// `calls` sequential calls on each of `lanes` concurrent tasks with the MCP client.
async fn mcp_lanes(client: &Client, lanes: usize, calls: usize) -> Duration {
    let start = Instant::now();
    let tasks: Vec<_> = (0..lanes)
        .map(|_| {
            let client = client.clone();
            smol::spawn(async move {
                for _ in 0..calls {
                    let result = client.call_tool("echo", json!({"message": "hi"})).await.expect("call");
                    assert_eq!(result.content[0].as_text(), Some("hi"));
                }
            })
        })
        .collect();
    for task in tasks {
        task.await;
    }
    start.elapsed()
}

fn mcp_run(url: &str, lanes: usize, calls: usize) -> Duration {
    smol::block_on(async {
        let transport = HyperTransport::new();
        let client = ClientBuilder::new(Implementation::new("http-throughput", "0.1.0"))
            .spawn_http(HttpConfig::new(url), transport.clone())
            .await
            .expect("connect");
        mcp_lanes(&client, 1, WARMUP).await;
        let elapsed = mcp_lanes(&client, lanes, calls / lanes).await;
        println!(
            "NOTE mcp-hyper opened {} TCP connections for {lanes} lanes",
            transport.connections_opened()
        );
        client.close().await;
        elapsed
    })
}

/// The same with raw hyper: one connection per lane, hand-written JSON-RPC; with `quick_ack`, the
/// connections acknowledge every read at once (see [`QuickAckAfterReads`]).
async fn raw_lanes(addr: &str, lanes: usize, calls: usize, quick_ack: bool) -> Duration {
    let start = Instant::now();
    let tasks: Vec<_> = (0..lanes)
        .map(|lane| {
            let addr = addr.to_owned();
            smol::spawn(async move {
                let stream = smol::net::TcpStream::connect(&addr).await.expect("connect");
                stream.set_nodelay(true).expect("nodelay");
                let stream = QuickAckAfterReads { tcp: stream, on: quick_ack };
                let (mut sender, connection) =
                    hyper::client::conn::http1::handshake(FuturesIo::new(stream)).await.expect("handshake");
                smol::spawn(connection).detach();
                for i in 0..calls {
                    let body = format!(
                        r#"{{"jsonrpc":"2.0","id":{},"method":"tools/call","params":{{"name":"echo","arguments":{{"message":"hi"}}}}}}"#,
                        lane * calls + i
                    );
                    let request = hyper::Request::post(format!("http://{addr}/mcp"))
                        .header("host", addr.as_str())
                        .header("content-type", "application/json")
                        .header("accept", "application/json, text/event-stream")
                        .header("mcp-session-id", "bench-session")
                        .header("mcp-protocol-version", "2025-11-25")
                        .body(Full::new(Bytes::from(body)))
                        .expect("request");
                    let response = sender.send_request(request).await.expect("send");
                    let body = response.into_body().collect().await.expect("body").to_bytes();
                    assert!(body.windows(4).any(|w| w == b"\"hi\""));
                }
            })
        })
        .collect();
    for task in tasks {
        task.await;
    }
    start.elapsed()
}

fn raw_run(url: &str, lanes: usize, calls: usize, quick_ack: bool) -> Duration {
    let addr = url.trim_start_matches("http://").trim_end_matches("/mcp").to_owned();
    smol::block_on(async {
        raw_lanes(&addr, 1, WARMUP, quick_ack).await;
        raw_lanes(&addr, lanes, calls / lanes, quick_ack).await
    })
}

/// rmcp's Streamable HTTP client (feature `rmcp`), `calls` calls over `lanes` lanes.
#[cfg(feature = "rmcp")]
fn rmcp_run(kind: &str, url: &str, lanes: usize, calls: usize) -> Duration {
    use mcp_benches::rmcp_clients::{self, Load, Runtime, ToolCall};
    let (runtime, pooled) = match kind.strip_suffix("-pool") {
        Some(runtime) => (runtime, true),
        None => (kind, false),
    };
    rmcp_clients::http_run(
        Runtime::parse(runtime).expect("rmcp runtime"),
        pooled,
        url,
        &ToolCall { name: "echo", arguments: json!({"message": "hi"}), expected_len: 2 },
        Load { warmup: WARMUP, calls: calls / lanes * lanes, lanes },
    )
}

/// [`raw_run`] without the warm-up.
fn raw_cold_run(url: &str, lanes: usize, calls: usize) -> Duration {
    let addr = url.trim_start_matches("http://").trim_end_matches("/mcp").to_owned();
    smol::block_on(raw_lanes(&addr, lanes, calls, false))
}

/// A TCP stream that sets `TCP_QUICKACK` after every read that returned data: the simplest
/// client-side cure for the split server's stall (and the earliest ACK), for the raw baseline.
struct QuickAckAfterReads {
    tcp: smol::net::TcpStream,
    on: bool,
}

impl AsyncRead for QuickAckAfterReads {
    fn poll_read(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut [u8]) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        let poll = Pin::new(&mut this.tcp).poll_read(cx, buf);
        if this.on && matches!(poll, Poll::Ready(Ok(n)) if n > 0) {
            rustix::net::sockopt::set_tcp_quickack(&this.tcp, true).expect("TCP_QUICKACK");
        }
        poll
    }
}

impl AsyncWrite for QuickAckAfterReads {
    fn poll_write(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().tcp).poll_write(cx, buf)
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().tcp).poll_flush(cx)
    }

    fn poll_close(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().tcp).poll_close(cx)
    }
}

/// The worker's arguments.
fn worker_args(kind: &str, lanes: usize, calls: usize, url: &str, pin: bool) -> Vec<String> {
    let mut args: Vec<String> =
        ["--worker", kind, &lanes.to_string(), &calls.to_string(), url].map(str::to_owned).to_vec();
    if pin {
        args.push("--pin".to_owned());
    }
    args
}

/// The event-stream rows, each the median of `rounds` alternating runs: mcp-hyper against the
/// one-piece and the split server, beside raw hyper against the one-piece server and raw hyper
/// with a quick ACK after every read against the split one; then the control row.
fn sse_rows(pinning: &str, pin: bool, calls: usize, rounds: usize) {
    let modes = [Mode::SseOnePiece, Mode::SseSplit];
    let servers = modes.map(|mode| ServeProcess::start(&[mode.name()]));
    let [one_piece_url, split_url] = [servers[0].url(), servers[1].url()];
    for (name, lanes) in [("sequential", 1), ("32-in-flight", IN_FLIGHT)] {
        let runs =
            [("raw", one_piece_url), ("raw-quickack", split_url), ("mcp", one_piece_url), ("mcp", split_url)];
        let mut figures = [(); 4].map(|()| Vec::new());
        for _ in 0..rounds {
            for ((kind, url), figures) in runs.iter().zip(&mut figures) {
                figures.push(workers::run(&worker_args(kind, lanes, calls, url, pin)));
            }
        }
        let [raw_one, raw_split, one, split] = figures.map(|runs| Figures::median(&runs));
        let prefix = |mode: Mode| format!("http {pinning:<8} {name:<13} {:<13}", mode.name());
        println!("{}", workers::line(&prefix(Mode::SseOnePiece), "raw hyper", &raw_one, None));
        println!("{}", workers::line(&prefix(Mode::SseOnePiece), "mcp-hyper", &one, Some(&raw_one)));
        println!(
            "{}   split / one-piece: throughput {:.3}",
            workers::line(&prefix(Mode::SseSplit), "raw+quickack", &raw_split, None),
            raw_split.calls_per_sec / raw_one.calls_per_sec
        );
        println!(
            "{}   split / one-piece: throughput {:.3}",
            workers::line(&prefix(Mode::SseSplit), "mcp-hyper", &split, None),
            split.calls_per_sec / one.calls_per_sec
        );
    }
    for (mode, server) in modes.iter().zip(&servers) {
        let control = workers::run(&worker_args("raw-cold", 1, CONTROL_CALLS, server.url(), pin));
        println!(
            "http {pinning:<8} control       {:<13} raw hyper    {:>8.0} calls/s ({CONTROL_CALLS} sequential calls, \
             no warm-up, no quick ACK)",
            mode.name(),
            control.calls_per_sec
        );
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("--serve") => {
            let mode = args.get(1).and_then(|name| Mode::from_name(name)).unwrap_or(Mode::Json);
            let server = BenchServer::start_with(mode).expect("server");
            println!("{}", server.url());
            loop {
                std::thread::park();
            }
        }
        Some("--worker") => {
            let (kind, lanes, calls, url) = (&args[1], &args[2], &args[3], &args[4]);
            let lanes: usize = lanes.parse().expect("lanes");
            let calls: usize = calls.parse().expect("calls");
            if args.iter().any(|a| a == "--pin") {
                process_stats::pin_to_cpu(0).expect("pin to CPU 0");
            }
            workers::report(calls, WARMUP, || match kind.as_str() {
                "raw" => raw_run(url, lanes, calls, false),
                "raw-quickack" => raw_run(url, lanes, calls, true),
                "raw-cold" => raw_cold_run(url, lanes, calls),
                #[cfg(feature = "rmcp")]
                rmcp if rmcp.starts_with("rmcp") => rmcp_run(rmcp, url, lanes, calls),
                _ => mcp_run(url, lanes, calls),
            });
            return;
        }
        _ => {}
    }
    let Options { calls, rounds, pins } = Options::parse(&args, 4000);
    println!(
        "# tools/call over Streamable HTTP (JSON responses), mcp-hyper vs raw hyper, same server process; \
         median of {rounds} alternating rounds; {calls} calls per workload"
    );
    if workers::RMCP_HTTP_KINDS.is_empty() {
        println!("{}", workers::RMCP_MISSING);
    }
    for pin in pins {
        let pinning = if pin { "pinned" } else { "unpinned" };
        if pin {
            // The server and the workers are started from here: they inherit the placement.
            process_stats::pin_to_cpu(0).expect("pin to CPU 0");
        }
        let server = ServeProcess::start(&[Mode::Json.name()]);
        for (name, lanes) in [("sequential", 1), ("32-in-flight", IN_FLIGHT)] {
            let worker = |kind: &str| {
                let mut args: Vec<String> =
                    ["--worker", kind, &lanes.to_string(), &calls.to_string(), server.url()]
                        .map(str::to_owned)
                        .to_vec();
                if pin {
                    args.push("--pin".to_owned());
                }
                workers::run_with_notes(&args)
            };
            let (mut raw, mut ours, mut notes) = (Vec::new(), Vec::new(), Vec::new());
            let mut rmcp: Vec<Vec<Figures>> = vec![Vec::new(); workers::RMCP_HTTP_KINDS.len()];
            for _ in 0..rounds {
                raw.push(worker("raw").0);
                for (kind, runs) in workers::RMCP_HTTP_KINDS.iter().zip(&mut rmcp) {
                    runs.push(worker(kind).0);
                }
                let (figures, more) = worker("mcp");
                ours.push(figures);
                notes = more;
            }
            let raw = Figures::median(&raw);
            let prefix = format!("http {pinning:<8} {name:<13}");
            println!("{}", workers::line(&prefix, "raw hyper", &raw, None));
            let rmcp = workers::medians(workers::RMCP_HTTP_KINDS, &rmcp);
            for (kind, figures) in &rmcp {
                println!("{}", workers::line(&prefix, kind, figures, Some(&raw)));
            }
            let ours = Figures::median(&ours);
            let line = workers::line(&prefix, "mcp-hyper", &ours, Some(&raw));
            println!("{}", workers::with_ratios(line, &ours, &rmcp));
            for note in notes {
                println!("{prefix} ({note})");
            }
        }
        drop(server);
        sse_rows(pinning, pin, calls, rounds);
        if pin {
            process_stats::unpin().expect("unpin");
        }
    }
}
