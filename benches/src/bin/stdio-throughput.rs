//! `tools/call` over stdio, end to end: the `mcp-smol` client against a raw baseline client
//! (blocking `std::process`, hand-written JSON lines, no framework), both talking to the same
//! fast Rust echo server (`bench-echo`) in the same run.
//!
//! Usage: `stdio-throughput [--calls N] [--rounds R] [--pinned-only | --unpinned-only]`.
//!
//! Built with the feature `rmcp`, it also runs the official Rust SDK's client (rmcp, on a tokio
//! current-thread and a multi-thread runtime) against the same server in the same rounds, and
//! prints the ratio of each of our placements to each rmcp row.
//!
//! Every measurement runs in a fresh worker process (this binary re-executed with `--worker`),
//! so that its peak RSS belongs to one client alone. Workers alternate raw, ours, raw, ours…
//! and each figure is the median of `R` rounds. Pinned runs put the worker, its threads and the
//! server on CPU 0: on two shared vCPUs a cross-CPU wake-up costs more than a whole round trip.

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use mcp_benches::process_stats;
use mcp_benches::workers::{self, Figures, Options};
use mcp_sansio::schema::Implementation;
use mcp_smol::ClientApi;
use mcp_smol::{ClientBuilder, ServerCommand, StderrSink};
use serde_json::json;

const IN_FLIGHT: usize = 32;
const BLOB: usize = 64 * 1024;
/// Unmeasured calls before each measurement.
const WARMUP: usize = 200;

#[derive(Clone, Copy, PartialEq, Eq)]
enum Workload {
    Sequential,
    InFlight,
    Blob,
}

impl Workload {
    const ALL: [Workload; 3] = [Workload::Sequential, Workload::InFlight, Workload::Blob];

    fn name(self) -> &'static str {
        match self {
            Workload::Sequential => "sequential",
            Workload::InFlight => "32-in-flight",
            Workload::Blob => "64KiB-results",
        }
    }

    fn parse(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|w| w.name() == name)
    }

    /// Calls per measurement for a base count `calls` (64 KiB results cost more per call).
    fn calls(self, calls: usize) -> usize {
        match self {
            Workload::Sequential => calls,
            Workload::InFlight => calls * 4,
            Workload::Blob => calls / 8,
        }
    }

    /// The request a call sends, as the raw client writes it (without id).
    fn tool(self) -> (&'static str, serde_json::Value) {
        match self {
            Workload::Blob => ("blob", json!({"size": BLOB})),
            _ => ("echo", json!({"message": "hi"})),
        }
    }
}

// ----- the raw baseline -----

struct RawServer {
    child: std::process::Child,
    stdin: std::process::ChildStdin,
    stdout: BufReader<std::process::ChildStdout>,
}

impl RawServer {
    fn start() -> Self {
        let mut child = Command::new(mcp_benches::workers::bench_echo())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn bench-echo");
        let stdin = child.stdin.take().expect("stdin");
        let stdout = BufReader::with_capacity(256 * 1024, child.stdout.take().expect("stdout"));
        let mut server = Self { child, stdin, stdout };
        server.send(b"{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"2025-11-25\",\"capabilities\":{},\"clientInfo\":{\"name\":\"raw\",\"version\":\"0\"}}}\n");
        server.stdin.flush().expect("flush");
        let mut line = Vec::new();
        server.stdout.read_until(b'\n', &mut line).expect("initialize result");
        server.send(b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n");
        server
    }

    /// Writes one message (which ends with its newline) in one system call.
    fn send(&mut self, line: &[u8]) {
        self.stdin.write_all(line).expect("write");
    }
}

/// The id of a response line, read by hand: what a minimal client does.
fn response_id(line: &[u8]) -> u64 {
    let at = memchr::memmem::find(line, b"\"id\":").expect("a response has an id") + 5;
    line[at..].iter().take_while(|b| b.is_ascii_digit()).fold(0, |n, b| n * 10 + u64::from(b - b'0'))
}

fn raw_request(buf: &mut Vec<u8>, id: u64, prefix: &[u8], suffix: &[u8]) {
    buf.clear();
    buf.extend_from_slice(prefix);
    buf.extend_from_slice(id.to_string().as_bytes());
    buf.extend_from_slice(suffix);
}

fn raw_run(workload: Workload, calls: usize) -> Duration {
    let mut server = RawServer::start();
    let (name, arguments) = workload.tool();
    let prefix = br#"{"jsonrpc":"2.0","id":"#;
    let suffix = format!(r#","method":"tools/call","params":{{"name":"{name}","arguments":{arguments}}}}}"#)
        .into_bytes();
    let suffix = [suffix, b"\n".to_vec()].concat();
    let mut request = Vec::new();
    let mut line = Vec::new();
    let mut call = |server: &mut RawServer, id: u64| {
        raw_request(&mut request, id, prefix, &suffix);
        server.send(&request);
    };
    // Warm-up.
    for id in 1..=WARMUP as u64 {
        call(&mut server, id);
        server.stdin.flush().expect("flush");
        line.clear();
        server.stdout.read_until(b'\n', &mut line).expect("read");
    }
    let start = Instant::now();
    match workload {
        Workload::Sequential | Workload::Blob => {
            for id in 1000..1000 + calls as u64 {
                call(&mut server, id);
                server.stdin.flush().expect("flush");
                line.clear();
                server.stdout.read_until(b'\n', &mut line).expect("read");
                assert_eq!(response_id(&line), id);
            }
        }
        Workload::InFlight => {
            // Keep 32 requests outstanding: write a request for every response read, and
            // flush once the responses already received are consumed.
            let mut next = 1000u64;
            let end = 1000 + calls as u64;
            for _ in 0..IN_FLIGHT.min(calls) {
                call(&mut server, next);
                next += 1;
            }
            server.stdin.flush().expect("flush");
            let mut received = 0;
            while received < calls {
                line.clear();
                server.stdout.read_until(b'\n', &mut line).expect("read");
                assert!(response_id(&line) < end);
                received += 1;
                if next < end {
                    call(&mut server, next);
                    next += 1;
                }
                if server.stdout.buffer().is_empty() {
                    server.stdin.flush().expect("flush");
                }
            }
        }
    }
    let elapsed = start.elapsed();
    drop(server.stdin);
    let _ = server.child.wait();
    elapsed
}

// ----- the mcp-smol client -----

/// Where the client's driver and its callers run.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Placement {
    /// Driver and callers are tasks of one executor, run by the bench's thread
    /// (`ClientBuilder::stdio` and `executor.spawn(driver)`): no thread hop per call.
    OneExecutor,
    /// `spawn_stdio` (the driver on its own thread) and callers spawned on smol's global
    /// executor.
    Global,
    /// `spawn_stdio`, callers in `smol::block_on` on the main thread: the quickstart's shape.
    BlockOn,
}

impl Placement {
    const ALL: [Placement; 3] = [Placement::OneExecutor, Placement::Global, Placement::BlockOn];

    fn name(self) -> &'static str {
        match self {
            Placement::OneExecutor => "one-executor",
            Placement::Global => "global",
            Placement::BlockOn => "block-on",
        }
    }

    fn parse(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|p| p.name() == name)
    }
}

fn mcp_run(workload: Workload, calls: usize, placement: Placement) -> Duration {
    let executor: &'static smol::Executor<'static> = Box::leak(Box::new(smol::Executor::new()));
    let spawn = move |future: smol::future::Boxed<()>| match placement {
        Placement::OneExecutor => executor.spawn(future),
        _ => smol::spawn(future),
    };
    let work = async move {
        let command = ServerCommand::new(mcp_benches::workers::bench_echo()).stderr(StderrSink::Discard);
        let builder = ClientBuilder::new(Implementation::new("stdio-throughput", "0.1.0"));
        let client = if placement == Placement::OneExecutor {
            let (client, driver) = builder.stdio(&command).expect("spawn");
            executor.spawn(driver).detach();
            client.ready().await.expect("connect");
            client
        } else {
            builder.spawn_stdio(&command).await.expect("connect")
        };
        let (name, arguments) = workload.tool();
        let expected_len = if workload == Workload::Blob { BLOB } else { 2 };
        let one = move |client: &mcp_smol::Client| {
            let client = client.clone();
            let arguments = arguments.clone();
            async move {
                let result = client.call_tool(name, arguments).await.expect("call");
                let text = result.content[0].as_text().expect("text");
                assert_eq!(text.len(), expected_len);
            }
        };
        for _ in 0..WARMUP {
            one(&client).await;
        }
        let start = Instant::now();
        match workload {
            Workload::Sequential | Workload::Blob => {
                for _ in 0..calls {
                    one(&client).await;
                }
            }
            Workload::InFlight => {
                let per_lane = calls / IN_FLIGHT;
                let lanes: Vec<_> = (0..IN_FLIGHT)
                    .map(|_| {
                        let one = one.clone();
                        let client = client.clone();
                        spawn(Box::pin(async move {
                            for _ in 0..per_lane {
                                one(&client).await;
                            }
                        }))
                    })
                    .collect();
                for lane in lanes {
                    lane.await;
                }
            }
        }
        let elapsed = start.elapsed();
        client.close().await;
        elapsed
    };
    match placement {
        Placement::OneExecutor => smol::block_on(executor.run(work)),
        Placement::Global => smol::block_on(smol::spawn(work)),
        Placement::BlockOn => smol::block_on(work),
    }
}

// ----- rmcp, the official Rust SDK (feature `rmcp`) -----

#[cfg(feature = "rmcp")]
fn rmcp_run(workload: Workload, calls: usize, runtime: &str) -> Duration {
    use mcp_benches::rmcp_clients::{self, Load, Runtime, ToolCall};
    let (name, arguments) = workload.tool();
    let expected_len = if workload == Workload::Blob { BLOB } else { 2 };
    let lanes = if workload == Workload::InFlight { IN_FLIGHT } else { 1 };
    rmcp_clients::stdio_run(
        Runtime::parse(runtime).expect("rmcp runtime"),
        &mcp_benches::workers::bench_echo(),
        &ToolCall { name, arguments, expected_len },
        Load { warmup: WARMUP, calls, lanes },
    )
}

// ----- workers and the report -----

fn worker(kind: &str, workload: Workload, calls: usize, pin: bool) {
    if pin {
        process_stats::pin_to_cpu(0).expect("pin to CPU 0");
    }
    workers::report(calls, WARMUP, || match kind {
        "raw" => raw_run(workload, calls),
        #[cfg(feature = "rmcp")]
        rmcp if rmcp.starts_with("rmcp") => rmcp_run(workload, calls, rmcp),
        placement => mcp_run(workload, calls, Placement::parse(placement).expect("placement")),
    });
}

fn run_worker(kind: &str, workload: Workload, calls: usize, pin: bool) -> Figures {
    let mut args =
        vec!["--worker".to_owned(), kind.to_owned(), workload.name().to_owned(), calls.to_string()];
    if pin {
        args.push("--pin".to_owned());
    }
    workers::run(&args)
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("--worker") {
        let workload = Workload::parse(&args[2]).expect("workload");
        let calls = args[3].parse().expect("calls");
        worker(&args[1], workload, calls, args.iter().any(|a| a == "--pin"));
        return;
    }
    let Options { calls, rounds, pins } = Options::parse(&args, 20_000);
    println!(
        "# tools/call over stdio, mcp-smol vs raw blocking std::process, same bench-echo server; \
         median of {rounds} alternating rounds; base calls {calls}"
    );
    if workers::RMCP_KINDS.is_empty() {
        println!("{}", workers::RMCP_MISSING);
    }
    for pin in pins {
        let pinning = if pin { "pinned" } else { "unpinned" };
        for workload in Workload::ALL {
            let n = workload.calls(calls);
            let mut raw = Vec::new();
            let mut ours: Vec<Vec<Figures>> = vec![Vec::new(); Placement::ALL.len()];
            let mut rmcp: Vec<Vec<Figures>> = vec![Vec::new(); workers::RMCP_KINDS.len()];
            for _ in 0..rounds {
                raw.push(run_worker("raw", workload, n, pin));
                for (kind, runs) in workers::RMCP_KINDS.iter().zip(&mut rmcp) {
                    runs.push(run_worker(kind, workload, n, pin));
                }
                for (placement, runs) in Placement::ALL.iter().zip(&mut ours) {
                    runs.push(run_worker(placement.name(), workload, n, pin));
                }
            }
            let raw = Figures::median(&raw);
            let prefix = format!("stdio {pinning:<8} {:<13}", workload.name());
            println!("{}", workers::line(&prefix, "raw", &raw, None));
            let rmcp = workers::medians(workers::RMCP_KINDS, &rmcp);
            for (kind, figures) in &rmcp {
                println!("{}", workers::line(&prefix, kind, figures, Some(&raw)));
            }
            for (placement, runs) in Placement::ALL.iter().zip(&ours) {
                let ours = Figures::median(runs);
                let line = workers::line(&prefix, placement.name(), &ours, Some(&raw));
                println!("{}", workers::with_ratios(line, &ours, &rmcp));
            }
        }
    }
}
