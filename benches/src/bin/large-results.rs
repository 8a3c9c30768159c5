//! `large-results`: one `tools/call` result of 1 KiB to 12 MiB at a time, end to end, over
//! stdio and over HTTP (JSON and event-stream bodies), beside a raw client that reads the
//! message and parses it into a `serde_json::Value` (what a minimal client does). It prints
//! MiB/s, the client's CPU per MiB and its peak RSS against the result's size (issue 37: at most
//! 2.5 × the result + 4 MiB, the `target` column), with the RSS the worker had once connected
//! (`base`) and how many results' worth the calls added to it at the peak (`copies`).
//!
//! Usage: `large-results [--sizes 1K,64K,1M,4M,12M] [--rounds R] [--mib M] [--pin]
//! [--kinds raw-stdio,stdio,stdio-linked,raw-http,http-json,http-sse]` (the default kinds; also
//! `http-json-linked` and `http-sse-linked`).
//!
//! - `raw-stdio`: a blocking `std::process` client of `bench-echo` (tool `blob`): writes the
//!   request, reads the line (`read_until`, the line's buffer reused), `from_slice::<Value>`.
//! - `stdio`: the README's shape (`smol::block_on`, `spawn_stdio`, `call_tool`) as a stdio-only
//!   program is built: mcp-bench-worker's `stdio-only`, mcp-smol with its default features. Build
//!   it on its own beside this one: `cargo build --release -p mcp-bench-worker`.
//! - `stdio-linked`: the same client run inside this binary, which links HTTP, OAuth and hyper
//!   too; its peak RSS holds that much more resident code.
//! - `raw-http`: raw hyper, one connection, the body collected and parsed into a `Value`.
//! - `http-json` and `http-sse`: mcp-hyper against the same server answering with an
//!   `application/json` body or a `text/event-stream` of one event, as an HTTP program is built:
//!   mcp-bench-worker's `http-only`, built beside this one with `cargo build --release -p
//!   mcp-bench-worker --features http --bin http-only` (after the `stdio-only` build).
//! - `http-json-linked` and `http-sse-linked`: the same client run inside this binary.
//!
//! The HTTP server runs in a process of its own and sends prebuilt bodies (only the id is
//! written per response), so that its cost is small beside the client's. Every measurement runs
//! in a fresh worker process (its peak RSS is its own), the kinds alternate within a round, and
//! each figure is the median of `R` rounds. `--pin` puts everything on CPU 0; unpinned, server
//! and client overlap on the two CPUs.

use std::cell::RefCell;
use std::collections::{HashMap, VecDeque};
use std::convert::Infallible;
use std::io::{BufRead, BufReader, Write};
use std::pin::Pin;
use std::process::{Command, Stdio};
use std::rc::Rc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::{Body, Frame, Incoming, SizeHint};
use hyper::{Method, Request, Response, StatusCode};
use mcp_benches::process_stats;
use mcp_benches::workers::{self, Figures};
use mcp_hyper::HyperTransport;
use mcp_sansio::http::HttpConfig;
use mcp_sansio::schema::Implementation;
use mcp_smol::{ClientBuilder, ServerCommand, StderrSink};
use serde_json::{Value, json};
use smol_hyper::rt::FuturesIo;

const MIB: f64 = 1024.0 * 1024.0;

/// The worker's RSS once connected, before the first call: what the results add is measured
/// from there (the processes differ in code and threads).
static CONNECTED_RSS: AtomicU64 = AtomicU64::new(0);

fn connected() {
    CONNECTED_RSS.store(process_stats::rss(), Ordering::Relaxed);
}
/// Every kind; the first six run by default.
const KINDS: [&str; 8] = [
    "raw-stdio",
    "stdio",
    "stdio-linked",
    "raw-http",
    "http-json",
    "http-sse",
    "http-json-linked",
    "http-sse-linked",
];

/// The kinds run by mcp-bench-worker's programs, which link only what their transport needs:
/// the program, the command that builds it, and the arguments it takes after `SIZE WARMUP
/// CALLS`.
fn separate_program(kind: &str, url: &str) -> Option<(&'static str, &'static str, Vec<String>)> {
    const STDIO: &str = "cargo build --release -p mcp-bench-worker";
    const HTTP: &str = "cargo build --release -p mcp-bench-worker --features http --bin http-only";
    match kind {
        "stdio" => Some(("stdio-only", STDIO, Vec::new())),
        "http-json" => Some(("http-only", HTTP, vec![format!("{url}/json")])),
        "http-sse" => Some(("http-only", HTTP, vec![format!("{url}/sse")])),
        _ => None,
    }
}

/// Calls for one measurement of results of `size` bytes: about `mib` MiB in all, at least 10.
fn calls_for(size: usize, mib: usize) -> usize {
    (mib * 1024 * 1024 / size).clamp(10, 5000)
}

/// Unmeasured calls first: enough for the allocator to settle.
fn warmup_for(calls: usize) -> usize {
    (calls / 10).clamp(2, 50)
}

fn parse_size(text: &str) -> usize {
    let (digits, unit) = text.split_at(text.find(|c: char| !c.is_ascii_digit()).unwrap_or(text.len()));
    let n: usize = digits.parse().expect("a size such as 64K or 12M");
    n * match unit {
        "" => 1,
        "K" | "k" => 1024,
        "M" | "m" => 1024 * 1024,
        _ => panic!("unknown unit in {text}"),
    }
}

fn size_name(size: usize) -> String {
    if size >= 1024 * 1024 { format!("{} MiB", size / (1024 * 1024)) } else { format!("{} KiB", size / 1024) }
}

/// The text of a `CallToolResult` parsed into a `Value`, checked to be `size` bytes.
fn check_value(message: &Value, size: usize) {
    let text = message.pointer("/result/content/0/text").and_then(Value::as_str).expect("a text result");
    assert_eq!(text.len(), size);
}

// ----- stdio -----

fn raw_stdio(size: usize, warmup: usize, calls: usize) -> Duration {
    let mut child = Command::new(mcp_benches::workers::bench_echo())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn bench-echo");
    let mut stdin = child.stdin.take().expect("stdin");
    let mut stdout = BufReader::with_capacity(256 * 1024, child.stdout.take().expect("stdout"));
    let mut line = Vec::new();
    stdin.write_all(b"{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"2025-11-25\",\"capabilities\":{},\"clientInfo\":{\"name\":\"raw\",\"version\":\"0\"}}}\n").expect("write");
    stdout.read_until(b'\n', &mut line).expect("initialize result");
    stdin.write_all(b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n").expect("write");
    connected();
    let mut call = |id: usize| {
        let request = format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"tools/call\",\"params\":{{\"name\":\"blob\",\"arguments\":{{\"size\":{size}}}}}}}\n"
        );
        stdin.write_all(request.as_bytes()).expect("write");
        line.clear();
        stdout.read_until(b'\n', &mut line).expect("read");
        let message: Value = serde_json::from_slice(&line).expect("JSON");
        assert_eq!(message["id"], id);
        check_value(&message, size);
    };
    for id in 1..=warmup {
        call(id);
    }
    let start = Instant::now();
    for id in warmup + 1..=warmup + calls {
        call(id);
    }
    let elapsed = start.elapsed();
    drop(stdin);
    let _ = child.wait();
    elapsed
}

fn stdio(size: usize, warmup: usize, calls: usize) -> Duration {
    smol::block_on(async {
        let command = ServerCommand::new(mcp_benches::workers::bench_echo()).stderr(StderrSink::Discard);
        let client = ClientBuilder::new(Implementation::new("large-results", "0.1.0"))
            .spawn_stdio(&command)
            .await
            .expect("connect");
        mcp_calls(client, size, warmup, calls).await
    })
}

/// Ours, connected: notes the RSS, then [`mcp_bench_worker::blob_calls`].
async fn mcp_calls(client: mcp_smol::Client, size: usize, warmup: usize, calls: usize) -> Duration {
    connected();
    mcp_bench_worker::blob_calls(client, size, warmup, calls).await
}

// ----- HTTP -----

fn raw_http(url: &str, size: usize, warmup: usize, calls: usize) -> Duration {
    let addr = url.trim_start_matches("http://").split('/').next().expect("address").to_owned();
    smol::block_on(async {
        let stream = smol::net::TcpStream::connect(&addr).await.expect("connect");
        stream.set_nodelay(true).expect("nodelay");
        let (mut sender, connection) =
            hyper::client::conn::http1::handshake(FuturesIo::new(stream)).await.expect("handshake");
        smol::spawn(connection).detach();
        connected();
        let mut call = async |id: usize| {
            let body = format!(
                r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"blob","arguments":{{"size":{size}}}}}}}"#
            );
            let request = hyper::Request::post(url)
                .header("host", addr.as_str())
                .header("content-type", "application/json")
                .header("accept", "application/json, text/event-stream")
                .header("mcp-session-id", "bench-session")
                .header("mcp-protocol-version", "2025-11-25")
                .body(Full::new(Bytes::from(body)))
                .expect("request");
            sender.ready().await.expect("connection ready");
            let response = sender.send_request(request).await.expect("send");
            let body = response.into_body().collect().await.expect("body").to_bytes();
            let message: Value = serde_json::from_slice(&body).expect("JSON");
            check_value(&message, size);
        };
        for id in 1..=warmup {
            call(id).await;
        }
        let start = Instant::now();
        for id in warmup + 1..=warmup + calls {
            call(id).await;
        }
        start.elapsed()
    })
}

fn mcp_http(url: &str, size: usize, warmup: usize, calls: usize) -> Duration {
    smol::block_on(async {
        let client = ClientBuilder::new(Implementation::new("large-results", "0.1.0"))
            .spawn_http(HttpConfig::new(url), HyperTransport::new())
            .await
            .expect("connect");
        mcp_calls(client, size, warmup, calls).await
    })
}

/// A response body sent as the frames it was built of (the prebuilt blob is one of them).
struct Pieces(VecDeque<Bytes>);

impl Body for Pieces {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        self: Pin<&mut Self>,
        _: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        Poll::Ready(self.get_mut().0.pop_front().map(|data| Ok(Frame::data(data))))
    }

    fn is_end_stream(&self) -> bool {
        self.0.is_empty()
    }

    fn size_hint(&self) -> SizeHint {
        SizeHint::with_exact(self.0.iter().map(|piece| piece.len() as u64).sum())
    }
}

fn response(status: StatusCode, sse: bool, pieces: Vec<Bytes>) -> Response<Pieces> {
    let mut response = Response::new(Pieces(pieces.into_iter().filter(|p| !p.is_empty()).collect()));
    *response.status_mut() = status;
    let kind = if sse { "text/event-stream" } else { "application/json" };
    response.headers_mut().insert("content-type", hyper::header::HeaderValue::from_static(kind));
    response.headers_mut().insert("mcp-session-id", hyper::header::HeaderValue::from_static("bench-session"));
    response
}

/// The JSON string of a blob of `size` bytes, built once per size.
type Blobs = Rc<RefCell<HashMap<usize, Bytes>>>;

async fn serve(blobs: Blobs, request: Request<Incoming>) -> Result<Response<Pieces>, Infallible> {
    let sse = request.uri().path() == "/sse";
    if request.method() != Method::POST {
        let status =
            if request.method() == Method::DELETE { StatusCode::OK } else { StatusCode::METHOD_NOT_ALLOWED };
        return Ok(response(status, false, Vec::new()));
    }
    let body = request.into_body().collect().await.map(|b| b.to_bytes()).unwrap_or_default();
    let message: Value = serde_json::from_slice(&body).unwrap_or_default();
    let (Some(id), Some(method)) = (message.get("id"), message.get("method").and_then(Value::as_str)) else {
        return Ok(response(StatusCode::ACCEPTED, false, Vec::new()));
    };
    let result = match method {
        "initialize" => json!({
            "protocolVersion": "2025-11-25",
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "large-results", "version": "0.1.0"}
        })
        .to_string(),
        "tools/call" => {
            let size =
                message.pointer("/params/arguments/size").and_then(Value::as_u64).unwrap_or(0) as usize;
            let blob = blobs
                .borrow_mut()
                .entry(size)
                .or_insert_with(|| Bytes::from(serde_json::to_vec(&"x".repeat(size)).expect("JSON")))
                .clone();
            let head = format!(
                "{}{{\"jsonrpc\":\"2.0\",\"id\":{id},\"result\":{{\"content\":[{{\"type\":\"text\",\"text\":",
                if sse { "event: message\ndata: " } else { "" }
            );
            let tail = if sse { "}]}}\n\n" } else { "}]}}" };
            let pieces = vec![Bytes::from(head), blob, Bytes::from_static(tail.as_bytes())];
            return Ok(response(StatusCode::OK, sse, pieces));
        }
        "ping" => "{}".to_owned(),
        _ => {
            let error = format!(
                "{{\"jsonrpc\":\"2.0\",\"id\":{id},\"error\":{{\"code\":-32601,\"message\":\"method not found\"}}}}"
            );
            let body = if sse { format!("event: message\ndata: {error}\n\n") } else { error };
            return Ok(response(StatusCode::OK, sse, vec![Bytes::from(body)]));
        }
    };
    let message = format!("{{\"jsonrpc\":\"2.0\",\"id\":{id},\"result\":{result}}}");
    let body = if sse { format!("event: message\ndata: {message}\n\n") } else { message };
    Ok(response(StatusCode::OK, sse, vec![Bytes::from(body)]))
}

fn run_server() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    println!("http://{}", listener.local_addr().expect("address"));
    std::io::stdout().flush().expect("flush");
    let listener = async_io::Async::new(listener).expect("async listener");
    let executor = smol::LocalExecutor::new();
    let blobs = Blobs::default();
    smol::block_on(executor.run(async {
        loop {
            let Ok((stream, _)) = listener.accept().await else { continue };
            let _ = stream.get_ref().set_nodelay(true);
            let blobs = blobs.clone();
            executor
                .spawn(async move {
                    let service = hyper::service::service_fn(move |request| serve(blobs.clone(), request));
                    let _ = hyper::server::conn::http1::Builder::new()
                        .serve_connection(FuturesIo::new(stream), service)
                        .await;
                })
                .detach();
        }
    }));
}

// ----- workers and the report -----

fn worker(args: &[String]) {
    let (kind, size, calls, base) = (&args[1], parse_size(&args[2]), &args[3], &args[4]);
    let calls: usize = calls.parse().expect("calls");
    if args.iter().any(|a| a == "--pin") {
        process_stats::pin_to_cpu(0).expect("pin to CPU 0");
    }
    let warmup = warmup_for(calls);
    workers::report(calls, warmup, || match kind.as_str() {
        "raw-stdio" => raw_stdio(size, warmup, calls),
        "stdio-linked" => stdio(size, warmup, calls),
        "raw-http" => raw_http(&format!("{base}/json"), size, warmup, calls),
        "http-json-linked" => mcp_http(&format!("{base}/json"), size, warmup, calls),
        "http-sse-linked" => mcp_http(&format!("{base}/sse"), size, warmup, calls),
        other => panic!("unknown kind {other}"),
    });
    println!("NOTE {}", CONNECTED_RSS.load(Ordering::Relaxed));
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("--serve") => return run_server(),
        Some("--worker") => return worker(&args),
        _ => {}
    }
    let value = |flag: &str| args.iter().position(|a| a == flag).and_then(|i| args.get(i + 1));
    let sizes: Vec<usize> =
        value("--sizes").map_or("1K,64K,1M,4M,12M", String::as_str).split(',').map(parse_size).collect();
    let kinds: Vec<&str> = value("--kinds")
        .map_or(KINDS[..6].join(","), String::clone)
        .split(',')
        .map(|k| KINDS.into_iter().find(|known| *known == k).unwrap_or_else(|| panic!("unknown kind {k}")))
        .collect();
    let rounds: usize = value("--rounds").and_then(|r| r.parse().ok()).unwrap_or(3);
    let mib: usize = value("--mib").and_then(|r| r.parse().ok()).unwrap_or(192);
    let pin = args.iter().any(|a| a == "--pin");
    if pin {
        // The server and the workers inherit the placement.
        process_stats::pin_to_cpu(0).expect("pin to CPU 0");
    }
    let server = mcp_benches::workers::ServeProcess::start(&[]);
    println!(
        "# one tools/call result at a time, {}; median of {rounds} alternating rounds of about {mib} MiB each",
        if pin { "pinned to CPU 0" } else { "unpinned" }
    );
    println!(
        "# {:<14} {:<8} {:>9} {:>9} {:>11} {:>10} {:>9} {:>9} {:>13}",
        "kind", "result", "MiB/s", "to raw", "CPU ms/MiB", "peak MiB", "base MiB", "copies", "target MiB"
    );
    for size in sizes {
        let calls = calls_for(size, mib);
        let mut runs: Vec<Vec<Figures>> = vec![Vec::new(); kinds.len()];
        let mut bases: Vec<Vec<Figures>> = vec![Vec::new(); kinds.len()];
        for _ in 0..rounds {
            for ((kind, runs), bases) in kinds.iter().zip(&mut runs).zip(&mut bases) {
                let mut args = vec![
                    "--worker".to_owned(),
                    (*kind).to_owned(),
                    size.to_string(),
                    calls.to_string(),
                    server.url().to_owned(),
                ];
                if pin {
                    args.push("--pin".to_owned());
                }
                let (figures, notes) = match separate_program(kind, server.url()) {
                    Some((program, build, extra)) => {
                        let mut args =
                            vec![size.to_string(), warmup_for(calls).to_string(), calls.to_string()];
                        args.extend(extra);
                        args.extend(pin.then(|| "--pin".to_owned()));
                        workers::run_program(&mcp_bench_worker::beside_me(program, build), &args)
                    }
                    None => workers::run_with_notes(&args),
                };
                let base = notes.first().and_then(|n| n.parse().ok()).unwrap_or(0);
                bases.push(Figures { peak_rss: base, ..figures });
                runs.push(figures);
            }
        }
        let medians: Vec<Figures> = runs.iter().map(|runs| Figures::median(runs)).collect();
        for ((kind, figures), bases) in kinds.iter().zip(&medians).zip(&bases) {
            let base = Figures::median(bases).peak_mib();
            let raw = if kind.contains("stdio") { "raw-stdio" } else { "raw-http" };
            let to_raw = kinds
                .iter()
                .position(|k| *k == raw)
                .map(|i| figures.calls_per_sec / medians[i].calls_per_sec);
            let mib_per_sec = figures.calls_per_sec * size as f64 / MIB;
            let cpu_ms_per_mib = figures.cpu_us_per_call / 1000.0 / (size as f64 / MIB);
            let target = 2.5 * size as f64 / MIB + 4.0;
            println!(
                "{:<16} {:<8} {:>9.1} {:>9} {:>11.3} {:>10.1} {:>9.1} {:>9.2} {:>13.1}",
                kind,
                size_name(size),
                mib_per_sec,
                to_raw.map_or("-".to_owned(), |r| format!("{r:.2}")),
                cpu_ms_per_mib,
                figures.peak_mib(),
                base,
                (figures.peak_mib() - base) / (size as f64 / MIB),
                target
            );
        }
    }
    drop(server);
}
