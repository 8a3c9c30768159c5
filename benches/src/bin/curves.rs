//! `curves`: how the client's cost grows with the work (issue 37). Four curves, each with our
//! client, a raw client (parse included) and rmcp 3.11 on a tokio current-thread runtime
//! (feature `rmcp`) where rmcp can do the workload, every point in a fresh worker process:
//!
//! - `size`: one `tools/call` after another whose result is 1 KiB … 12 MiB of text, over stdio
//!   (`bench-echo`'s `blob` tool), Streamable HTTP with JSON responses and with event-stream
//!   responses (the bench HTTP server's `blob` tool, sent from a prebuilt body): MiB/s, CPU per
//!   MiB, peak RSS;
//! - `inflight`: 1, 32, 1 000 and 10 000 `tools/call`s in flight at once over stdio: calls/s,
//!   CPU per call, peak RSS;
//! - `tools`: `list_all_tools` of 10, 1 000 and 10 000 tools that each have an `outputSchema`
//!   (`bench-echo` with `BENCH_ECHO_TOOLS`), with our validation of results on, then a call to
//!   each of 100 tools (each result checked against its schema, each validator compiled on first
//!   use): time and CPU per list and per call, peak RSS;
//! - `connections`: 1, 100 and 1 000 HTTP connections (each its own client and transport, to
//!   one bench HTTP server process) and 1 and 100 stdio children, each connection used for one
//!   call and then idle: resident memory per idle connection (the process's RSS growth divided
//!   by the count), time and CPU per connection, peak RSS.
//!
//! The raw client is what a minimal client does: blocking `std` I/O, a hand-written request, and
//! the response parsed into a `serde_json::Value` (for event streams, the `data:` line parsed).
//! Ours is the README's shape: `smol::block_on` with `spawn_stdio` or `spawn_http` (mcp-hyper),
//! concurrent calls on smol's global executor as in `stdio-throughput`. With
//! `CURVES_DRIVERS=executor` in the environment, our drivers run on smol's executor instead of
//! a thread each (what a process with hundreds of connections would do).
//!
//! Usage: `curves [--quick] [--only size|inflight|tools|connections] [--rounds R]
//! [--unpinned] [--svg-dir DIR]`. It prints markdown tables and writes one SVG per curve into
//! `DIR` (default `target/curves`). Every figure is the median of `R` rounds (default 3; 1 with
//! `--quick`), raw, rmcp and ours alternating. By default the workers and the servers are pinned
//! to CPU 0, as in the other end-to-end benches. `--quick` runs small counts (a smoke test for
//! CI, a few seconds in a debug build); its figures mean nothing.

use std::collections::BTreeMap;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use mcp_benches::http_server::{BenchServer, Mode};
use mcp_benches::process_stats;
use mcp_benches::workers::ServeProcess;
use mcp_hyper::HyperTransport;
use mcp_sansio::http::HttpConfig;
use mcp_sansio::schema::Implementation;
use mcp_smol::{Client, ClientApi, ClientBuilder, ServerCommand, StderrSink};
use serde_json::{Value, json};

const KIB: usize = 1024;
const MIB: f64 = 1024.0 * 1024.0;
/// Unmeasured sequential calls before an `inflight` measurement.
const WARMUP: usize = 200;
/// Tools called once each after the listings of the `tools` curve.
const CALLED_TOOLS: usize = 100;
/// What a worker measured: named numbers (`units`, `secs`, `cpu`, `peak`, and per curve more).
type Sample = BTreeMap<String, f64>;

/// The three clients, in the order they run and print.
const KINDS: &[&str] = if cfg!(feature = "rmcp") { &["raw", "rmcp", "ours"] } else { &["raw", "ours"] };

/// Wall and CPU time of a stretch of a worker (CPU of every live thread of the process).
struct Meter {
    start: Instant,
    cpu: Duration,
}

impl Meter {
    fn start() -> Self {
        Self { start: Instant::now(), cpu: process_stats::cpu_time() }
    }

    /// Seconds and CPU seconds since `start`.
    fn stop(&self) -> (f64, f64) {
        (self.start.elapsed().as_secs_f64(), (process_stats::cpu_time() - self.cpu).as_secs_f64())
    }
}

/// Prints the worker's result line: `RESULT key=value …`.
fn report(sample: &[(&str, f64)]) {
    let fields: Vec<String> = sample.iter().map(|(key, value)| format!("{key}={value}")).collect();
    println!("RESULT {}", fields.join(" "));
}

/// Reports `calls` timed calls that took `secs`, and `cpu` seconds of CPU for the whole worker:
/// the connection and the `warmup` calls too, so it is divided by every call made.
fn report_calls(calls: usize, warmup: usize, secs: f64, cpu: f64) {
    report(&[
        ("units", calls as f64),
        ("secs", secs),
        ("cpu_per_unit", cpu / (calls + warmup) as f64),
        ("peak", process_stats::peak_rss() as f64),
    ]);
}

// ----- the raw clients -----

/// A raw stdio client: `bench-echo` as a child, lines written and read by hand.
struct RawStdio {
    child: Child,
    stdin: std::process::ChildStdin,
    stdout: BufReader<std::process::ChildStdout>,
    line: Vec<u8>,
}

impl RawStdio {
    fn start(tools: Option<usize>, buffer: usize) -> Self {
        let mut command = Command::new(mcp_benches::workers::bench_echo());
        if let Some(n) = tools {
            command.env("BENCH_ECHO_TOOLS", n.to_string());
        }
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn");
        let stdin = child.stdin.take().expect("stdin");
        let stdout = BufReader::with_capacity(buffer, child.stdout.take().expect("stdout"));
        let mut raw = Self { child, stdin, stdout, line: Vec::new() };
        raw.call_line(
            r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}"#,
        );
        raw.stdin
            .write_all(b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n")
            .expect("write");
        raw
    }

    /// Writes `request` (one line, no newline) and reads the response into a `Value`.
    fn call_line(&mut self, request: &str) -> Value {
        let mut message = Vec::with_capacity(request.len() + 1);
        message.extend_from_slice(request.as_bytes());
        message.push(b'\n');
        self.stdin.write_all(&message).expect("write");
        self.read()
    }

    fn read(&mut self) -> Value {
        self.line.clear();
        self.stdout.read_until(b'\n', &mut self.line).expect("read");
        serde_json::from_slice(&self.line).expect("a JSON response")
    }

    fn finish(mut self) {
        drop(self.stdin);
        let _ = self.child.wait();
    }
}

fn call_request(id: u64, name: &str, arguments: &Value) -> String {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": name, "arguments": arguments}})
        .to_string()
}

/// The length of the first text content of a `tools/call` response.
fn text_len(response: &Value) -> usize {
    response.pointer("/result/content/0/text").and_then(Value::as_str).map_or(usize::MAX, str::len)
}

/// A raw HTTP/1.1 client: one keep-alive connection, blocking, requests written by hand, the
/// body read by its `Content-Length` and parsed (for an event stream: its `data:` line).
struct RawHttp {
    stream: BufReader<TcpStream>,
    host: String,
}

impl RawHttp {
    fn connect(url: &str) -> Self {
        let host = url.trim_start_matches("http://").trim_end_matches("/mcp").to_owned();
        let stream = TcpStream::connect(&host).expect("connect");
        stream.set_nodelay(true).expect("nodelay");
        Self { stream: BufReader::with_capacity(64 * KIB, stream), host }
    }

    fn post(&mut self, body: &str) -> Value {
        let request = format!(
            "POST /mcp HTTP/1.1\r\nhost: {}\r\ncontent-type: application/json\r\n\
             accept: application/json, text/event-stream\r\nmcp-protocol-version: 2025-11-25\r\n\
             content-length: {}\r\n\r\n{body}",
            self.host,
            body.len()
        );
        self.stream.get_mut().write_all(request.as_bytes()).expect("write");
        let (mut length, mut sse, mut line) = (0usize, false, String::new());
        loop {
            line.clear();
            self.stream.read_line(&mut line).expect("read head");
            let header = line.trim_end();
            if header.is_empty() {
                break;
            }
            let lower = header.to_ascii_lowercase();
            if let Some(value) = lower.strip_prefix("content-length:") {
                length = value.trim().parse().expect("content-length");
            } else if let Some(value) = lower.strip_prefix("content-type:") {
                sse = value.trim().starts_with("text/event-stream");
            }
        }
        let mut body = vec![0; length];
        self.stream.read_exact(&mut body).expect("read body");
        let json = if sse {
            let start = memchr::memmem::find(&body, b"data: ").expect("an event with data") + 6;
            let end = memchr::memchr(b'\n', &body[start..]).map_or(body.len(), |n| start + n);
            &body[start..end]
        } else {
            &body[..]
        };
        serde_json::from_slice(json).expect("a JSON response")
    }
}

// ----- curve 1: result size -----

/// Calls of `size` bytes per measurement: about `total` bytes, within bounds.
fn size_calls(size: usize, quick: bool) -> usize {
    let (total, min, max) = if quick { (2 << 20, 2, 200) } else { (96 << 20, 12, 20_000) };
    (total / size).clamp(min, max)
}

fn size_worker(kind: &str, transport: &str, url: &str, size: usize, calls: usize) {
    let warmup = (calls / 4).max(1);
    let arguments = json!({"size": size});
    let meter = Meter::start();
    let secs = match (kind, transport) {
        ("raw", "stdio") => {
            let mut raw = RawStdio::start(None, 256 * KIB);
            let mut id = 1;
            let mut call = |raw: &mut RawStdio| {
                id += 1;
                assert_eq!(text_len(&raw.call_line(&call_request(id, "blob", &arguments))), size);
            };
            (0..warmup).for_each(|_| call(&mut raw));
            let start = Instant::now();
            (0..calls).for_each(|_| call(&mut raw));
            let secs = start.elapsed().as_secs_f64();
            raw.finish();
            secs
        }
        ("raw", _) => {
            let mut raw = RawHttp::connect(url);
            let mut id = 1;
            let mut call = |raw: &mut RawHttp| {
                id += 1;
                assert_eq!(text_len(&raw.post(&call_request(id, "blob", &arguments))), size);
            };
            (0..warmup).for_each(|_| call(&mut raw));
            let start = Instant::now();
            (0..calls).for_each(|_| call(&mut raw));
            start.elapsed().as_secs_f64()
        }
        ("ours", _) => smol::block_on(async {
            let client = ours_connect(transport, url, None).await;
            for _ in 0..warmup {
                blob_call(&client, &arguments, size).await;
            }
            let start = Instant::now();
            for _ in 0..calls {
                blob_call(&client, &arguments, size).await;
            }
            let secs = start.elapsed().as_secs_f64();
            client.close().await;
            secs
        }),
        #[cfg(feature = "rmcp")]
        ("rmcp", _) => {
            use mcp_benches::rmcp_clients::{Load, Runtime, ToolCall, http_run, stdio_run};
            let call = ToolCall { name: "blob", arguments: arguments.clone(), expected_len: size };
            let load = Load { warmup, calls, lanes: 1 };
            let elapsed = if transport == "stdio" {
                stdio_run(Runtime::CurrentThread, &mcp_benches::workers::bench_echo(), &call, load)
            } else {
                http_run(Runtime::CurrentThread, false, url, &call, load)
            };
            elapsed.as_secs_f64()
        }
        _ => panic!("unknown client {kind}"),
    };
    report_calls(calls, warmup, secs, meter.stop().1);
}

async fn blob_call(client: &Client, arguments: &Value, size: usize) {
    let result = client.call_tool("blob", arguments).await.expect("call");
    assert_eq!(result.content[0].as_text().map(str::len), Some(size));
}

/// One `echo` call of ours.
async fn echo_call(client: Client) {
    let result = client.call_tool("echo", json!({"message": "hi"})).await.expect("call");
    assert_eq!(result.content[0].as_text(), Some("hi"));
}

/// Whether `CURVES_DRIVERS=executor` asks for the drivers on smol's executor
/// (`ClientBuilder::stdio` / `connect_http` and `smol::spawn`) instead of a thread each
/// (`spawn_stdio` / `spawn_http`, the README's way): the shape for a process with hundreds of
/// connections (see docs/architecture.md).
fn drivers_on_executor() -> bool {
    std::env::var("CURVES_DRIVERS").is_ok_and(|v| v == "executor")
}

/// Our client over `transport` (`stdio`, or HTTP to `url`), the README's way (or with
/// [`drivers_on_executor`]).
async fn ours_connect(transport: &str, url: &str, tools: Option<usize>) -> Client {
    let builder = ClientBuilder::new(Implementation::new("curves", "0.1.0"));
    if transport == "stdio" {
        let mut command = ServerCommand::new(mcp_benches::workers::bench_echo()).stderr(StderrSink::Discard);
        if let Some(n) = tools {
            command = command.env("BENCH_ECHO_TOOLS", n.to_string());
        }
        if drivers_on_executor() {
            let (client, driver) = builder.validate_output(tools.is_some()).stdio(&command).expect("connect");
            smol::spawn(driver).detach();
            client.ready().await.expect("ready");
            return client;
        }
        builder.validate_output(tools.is_some()).spawn_stdio(&command).await.expect("connect")
    } else {
        if drivers_on_executor() {
            let (client, driver) = builder.connect_http(HttpConfig::new(url), HyperTransport::new());
            smol::spawn(driver).detach();
            client.ready().await.expect("ready");
            return client;
        }
        builder.spawn_http(HttpConfig::new(url), HyperTransport::new()).await.expect("connect")
    }
}

// ----- curve 2: calls in flight (stdio) -----

fn inflight_calls(lanes: usize, quick: bool) -> usize {
    let base = if quick { 400 } else { 40_000 };
    base.max(lanes * 4).div_ceil(lanes) * lanes
}

fn inflight_worker(kind: &str, lanes: usize, calls: usize) {
    let arguments = json!({"message": "hi"});
    let meter = Meter::start();
    let secs = match kind {
        "raw" => raw_inflight(lanes, calls, &arguments),
        "ours" => smol::block_on(async {
            let client = ours_connect("stdio", "", None).await;
            for _ in 0..WARMUP {
                echo_call(client.clone()).await;
            }
            let start = Instant::now();
            if lanes == 1 {
                for _ in 0..calls {
                    echo_call(client.clone()).await;
                }
            } else {
                let tasks: Vec<_> = (0..lanes)
                    .map(|_| {
                        let client = client.clone();
                        smol::spawn(async move {
                            for _ in 0..calls / lanes {
                                echo_call(client.clone()).await;
                            }
                        })
                    })
                    .collect();
                for task in tasks {
                    task.await;
                }
            }
            let secs = start.elapsed().as_secs_f64();
            client.close().await;
            secs
        }),
        #[cfg(feature = "rmcp")]
        "rmcp" => {
            use mcp_benches::rmcp_clients::{Load, Runtime, ToolCall, stdio_run};
            let call = ToolCall { name: "echo", arguments: arguments.clone(), expected_len: 2 };
            stdio_run(
                Runtime::CurrentThread,
                &mcp_benches::workers::bench_echo(),
                &call,
                Load { warmup: WARMUP, calls, lanes },
            )
            .as_secs_f64()
        }
        _ => panic!("unknown client {kind}"),
    };
    report_calls(calls, WARMUP, secs, meter.stop().1);
}

/// The raw client with `lanes` requests outstanding. One at a time is a plain loop. More take a
/// writer thread beside the reader: with thousands outstanding, one thread that writes them all
/// before it reads would fill both pipes and wait for the server forever. The reader hands the
/// writer credits (how many responses it consumed), the writer writes that many requests in one
/// write.
fn raw_inflight(lanes: usize, calls: usize, arguments: &Value) -> f64 {
    let mut raw = RawStdio::start(None, 256 * KIB);
    for id in 1..=WARMUP as u64 {
        assert_eq!(text_len(&raw.call_line(&call_request(id, "echo", arguments))), 2);
    }
    let start = Instant::now();
    if lanes == 1 {
        for id in 0..calls as u64 {
            assert_eq!(text_len(&raw.call_line(&call_request(1000 + id, "echo", arguments))), 2);
        }
        let secs = start.elapsed().as_secs_f64();
        raw.finish();
        return secs;
    }
    let (credits, credited) = std::sync::mpsc::channel::<usize>();
    let mut stdin = clone_stdin(&raw.stdin);
    let arguments = arguments.clone();
    let writer = std::thread::spawn(move || {
        let mut next = 1000u64;
        let end = 1000 + calls as u64;
        let mut batch = Vec::new();
        let mut allowed = lanes;
        loop {
            batch.clear();
            while allowed > 0 && next < end {
                batch.extend_from_slice(call_request(next, "echo", &arguments).as_bytes());
                batch.push(b'\n');
                next += 1;
                allowed -= 1;
            }
            if !batch.is_empty() {
                stdin.write_all(&batch).expect("write");
            }
            if next == end {
                return stdin;
            }
            let Ok(more) = credited.recv() else { return stdin };
            allowed += more + credited.try_iter().sum::<usize>();
        }
    });
    let mut consumed = 0;
    for _ in 0..calls {
        assert_eq!(text_len(&raw.read()), 2);
        consumed += 1;
        if raw.stdout.buffer().is_empty() {
            let _ = credits.send(consumed);
            consumed = 0;
        }
    }
    let secs = start.elapsed().as_secs_f64();
    drop(credits);
    drop(writer.join().expect("writer"));
    raw.finish();
    secs
}

/// A second handle to a child's stdin, for a writer thread.
fn clone_stdin(stdin: &std::process::ChildStdin) -> std::fs::File {
    let fd = std::os::fd::AsFd::as_fd(stdin).try_clone_to_owned().expect("dup stdin");
    std::fs::File::from(fd)
}

// ----- curve 3: tools per list (stdio) -----

fn tools_lists(tools: usize, quick: bool) -> usize {
    let total = if quick { 2_000 } else { 200_000 };
    (total / tools).clamp(2, 500)
}

fn tools_worker(kind: &str, tools: usize, lists: usize) {
    let called = tools.min(CALLED_TOOLS);
    let check_call = |count: usize, structured: Option<&Value>| {
        assert_eq!(structured.and_then(|s| s.get("count")).and_then(Value::as_u64), Some(count as u64));
    };
    let (list, calls) = match kind {
        "raw" => {
            let mut raw = RawStdio::start(Some(tools), 64 * KIB);
            let mut id = 1;
            let mut list = |raw: &mut RawStdio| {
                id += 1;
                let request = json!({"jsonrpc": "2.0", "id": id, "method": "tools/list", "params": {}});
                let response = raw.call_line(&request.to_string());
                let listed = response.pointer("/result/tools").and_then(Value::as_array).map(Vec::len);
                assert_eq!(listed, Some(tools));
            };
            list(&mut raw);
            let meter = Meter::start();
            (0..lists).for_each(|_| list(&mut raw));
            let list = meter.stop();
            let meter = Meter::start();
            for i in 0..called {
                let response = raw.call_line(&call_request(10_000 + i as u64, &format!("t{i}"), &json!({})));
                check_call(i, response.pointer("/result/structuredContent"));
            }
            let calls = meter.stop();
            raw.finish();
            (list, calls)
        }
        "ours" => smol::block_on(async {
            let client = ours_connect("stdio", "", Some(tools)).await;
            assert_eq!(client.list_all_tools().await.expect("list").len(), tools);
            let meter = Meter::start();
            for _ in 0..lists {
                assert_eq!(client.list_all_tools().await.expect("list").len(), tools);
            }
            let list = meter.stop();
            let meter = Meter::start();
            for i in 0..called {
                let result = client.call_tool(&format!("t{i}"), json!({})).await.expect("call");
                check_call(i, result.structured_content.as_ref());
            }
            let calls = meter.stop();
            client.close().await;
            (list, calls)
        }),
        #[cfg(feature = "rmcp")]
        "rmcp" => rmcp::tools(tools, lists, called, check_call),
        _ => panic!("unknown client {kind}"),
    };
    report(&[
        ("units", lists as f64),
        ("secs", list.0),
        ("cpu_per_unit", list.1 / lists as f64),
        ("call_secs", calls.0 / called as f64),
        ("call_cpu", calls.1 / called as f64),
        ("peak", process_stats::peak_rss() as f64),
    ]);
}

// ----- curve 4: connections per process -----

/// Waits until what the connections started has settled (threads parked, buffers written).
fn settle() {
    std::thread::sleep(Duration::from_millis(300));
}

/// The connections curve's readings: the process's RSS at the start, after a first connection
/// (which also pays what any first connection does: code paged in, runtime and allocator
/// arenas set up), and the CPU and time of the `n` connections made after it.
struct ConnectionMeter {
    start: u64,
    base: u64,
    meter: Meter,
}

impl ConnectionMeter {
    fn new() -> Self {
        Self { start: process_stats::rss(), base: 0, meter: Meter::start() }
    }

    /// Called once the first connection is up: the measured ones start here.
    fn first_done(&mut self) {
        self.base = process_stats::rss();
        self.meter = Meter::start();
    }

    /// What the first connection added, and what the measured ones added since (once idle).
    fn grown(&self) -> (u64, u64) {
        (self.base.saturating_sub(self.start), process_stats::rss().saturating_sub(self.base))
    }
}

fn connections_worker(kind: &str, transport: &str, url: &str, n: usize) {
    let arguments = json!({"message": "hi"});
    let mut meter = ConnectionMeter::new();
    // Each arm makes 1 + `n` connections, each used for one call, and keeps them all open until
    // it has read the RSS with them idle.
    let (connect, (first, grown)) = match kind {
        "raw" if transport == "stdio" => {
            let mut held = Vec::with_capacity(n + 1);
            for id in 0..=n as u64 {
                let mut raw = RawStdio::start(None, 8 * KIB);
                assert_eq!(text_len(&raw.call_line(&call_request(id + 1, "echo", &arguments))), 2);
                held.push(raw);
                if id == 0 {
                    meter.first_done();
                }
            }
            let connect = meter.meter.stop();
            settle();
            let grown = meter.grown();
            held.into_iter().for_each(RawStdio::finish);
            (connect, grown)
        }
        "raw" => {
            let mut held = Vec::with_capacity(n + 1);
            for id in 0..=n as u64 {
                let mut raw = RawHttp::connect(url);
                assert_eq!(text_len(&raw.post(&call_request(id + 1, "echo", &arguments))), 2);
                held.push(raw);
                if id == 0 {
                    meter.first_done();
                }
            }
            let connect = meter.meter.stop();
            settle();
            (connect, meter.grown())
        }
        "ours" => smol::block_on(async {
            let mut held = Vec::with_capacity(n + 1);
            for i in 0..=n {
                let client = ours_connect(transport, url, None).await;
                let result = client.call_tool("echo", &arguments).await.expect("call");
                assert_eq!(result.content[0].as_text(), Some("hi"));
                held.push(client);
                if i == 0 {
                    meter.first_done();
                }
            }
            let connect = meter.meter.stop();
            settle();
            let grown = meter.grown();
            for client in held {
                client.close().await;
            }
            (connect, grown)
        }),
        #[cfg(feature = "rmcp")]
        "rmcp" => rmcp::connections(transport, url, n, &mut meter),
        _ => panic!("unknown client {kind}"),
    };
    report(&[
        ("units", n as f64),
        ("secs", connect.0),
        ("cpu_per_unit", connect.1 / n as f64),
        ("rss_per_conn", grown as f64 / n as f64),
        ("first_conn", first as f64),
        ("peak", process_stats::peak_rss() as f64),
    ]);
}

// ----- rmcp (feature `rmcp`) -----

#[cfg(feature = "rmcp")]
mod rmcp {
    //! rmcp 3.11's client on a tokio current-thread runtime, as its documentation shows it, for
    //! the `tools` and `connections` curves (the others go through `mcp_benches::rmcp_clients`).

    use rmcp::ServiceExt;
    use rmcp::model::CallToolRequestParams;
    use rmcp::service::{RoleClient, RunningService};
    use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
    use serde_json::Value;

    use super::{ConnectionMeter, Meter};

    type Service = RunningService<RoleClient, ()>;

    fn runtime() -> tokio::runtime::Runtime {
        tokio::runtime::Builder::new_current_thread().enable_all().build().expect("tokio runtime")
    }

    async fn stdio(tools: Option<usize>) -> Service {
        let mut command = tokio::process::Command::new(mcp_benches::workers::bench_echo());
        if let Some(n) = tools {
            command.env("BENCH_ECHO_TOOLS", n.to_string());
        }
        ().serve(TokioChildProcess::new(command).expect("spawn")).await.expect("rmcp initialize")
    }

    fn call(name: &str, arguments: Value) -> CallToolRequestParams {
        let Value::Object(arguments) = arguments else { unreachable!("arguments are an object") };
        CallToolRequestParams::new(name.to_owned()).with_arguments(arguments)
    }

    /// `lists` × `list_all_tools`, then a call to each of the first `called` tools: wall and CPU
    /// seconds of each part.
    pub(super) fn tools(
        tools: usize,
        lists: usize,
        called: usize,
        check_call: impl Fn(usize, Option<&Value>),
    ) -> ((f64, f64), (f64, f64)) {
        runtime().block_on(async {
            let client = stdio(Some(tools)).await;
            assert_eq!(client.list_all_tools().await.expect("list").len(), tools);
            let meter = Meter::start();
            for _ in 0..lists {
                assert_eq!(client.list_all_tools().await.expect("list").len(), tools);
            }
            let list = meter.stop();
            let meter = Meter::start();
            for i in 0..called {
                let result =
                    client.call_tool(call(&format!("t{i}"), serde_json::json!({}))).await.expect("call");
                check_call(i, result.structured_content.as_ref());
            }
            let calls = meter.stop();
            let _ = client.cancel().await;
            (list, calls)
        })
    }

    /// 1 + `n` connections, each used for one call: the time and CPU of the last `n`, and the
    /// RSS grown (see `ConnectionMeter`).
    pub(super) fn connections(
        transport: &str,
        url: &str,
        n: usize,
        meter: &mut ConnectionMeter,
    ) -> ((f64, f64), (u64, u64)) {
        let runtime = runtime();
        runtime.block_on(async {
            let mut held = Vec::with_capacity(n + 1);
            for i in 0..=n {
                let client = if transport == "stdio" {
                    stdio(None).await
                } else {
                    ().serve(StreamableHttpClientTransport::from_uri(url)).await.expect("rmcp initialize")
                };
                let result =
                    client.call_tool(call("echo", serde_json::json!({"message": "hi"}))).await.expect("call");
                let text = result.content.first().and_then(|c| c.as_text()).map(|t| t.text.as_str());
                assert_eq!(text, Some("hi"));
                held.push(client);
                if i == 0 {
                    meter.first_done();
                }
            }
            let connect = meter.meter.stop();
            // The runtime's tasks settle while the runtime runs.
            tokio::time::sleep(std::time::Duration::from_millis(300)).await;
            let grown = meter.grown();
            for client in held {
                let _ = client.cancel().await;
            }
            (connect, grown)
        })
    }
}

// ----- the parent: servers, workers, tables, plots -----

struct Options {
    quick: bool,
    only: Option<String>,
    rounds: usize,
    pin: bool,
    svg_dir: PathBuf,
}

impl Options {
    fn parse(args: &[String]) -> Self {
        let value = |flag: &str| args.iter().position(|a| a == flag).and_then(|i| args.get(i + 1)).cloned();
        let quick = args.iter().any(|a| a == "--quick");
        Self {
            quick,
            only: value("--only"),
            rounds: value("--rounds").and_then(|r| r.parse().ok()).unwrap_or(if quick { 1 } else { 3 }),
            pin: !args.iter().any(|a| a == "--unpinned"),
            svg_dir: value("--svg-dir").map_or_else(|| PathBuf::from("target/curves"), PathBuf::from),
        }
    }

    fn runs(&self, curve: &str) -> bool {
        self.only.as_deref().is_none_or(|only| only == curve)
    }

    /// Runs a worker with `args`, pinned if asked, and reads its sample.
    fn worker(&self, args: &[String]) -> Sample {
        let mut command = Command::new(std::env::current_exe().expect("own path"));
        command.arg("--worker").args(args).stderr(Stdio::inherit());
        if self.pin {
            command.arg("--pin");
        }
        let output = command.output().expect("run worker");
        assert!(output.status.success(), "worker {args:?} failed");
        let stdout = String::from_utf8_lossy(&output.stdout);
        let line = stdout.lines().find_map(|l| l.strip_prefix("RESULT ")).expect("worker result line");
        line.split_whitespace()
            .filter_map(|field| {
                let (key, value) = field.split_once('=')?;
                Some((key.to_owned(), value.parse().ok()?))
            })
            .collect()
    }

    /// The median sample of each kind over the rounds, the kinds alternating within a round.
    fn measure(&self, args: impl Fn(&str) -> Vec<String>) -> BTreeMap<&'static str, Sample> {
        let mut runs: BTreeMap<&'static str, Vec<Sample>> = BTreeMap::new();
        for _ in 0..self.rounds {
            for &kind in KINDS {
                runs.entry(kind).or_default().push(self.worker(&args(kind)));
            }
        }
        runs.into_iter().map(|(kind, samples)| (kind, median(&samples))).collect()
    }
}

fn median(samples: &[Sample]) -> Sample {
    let keys: std::collections::BTreeSet<&String> = samples.iter().flat_map(|s| s.keys()).collect();
    keys.into_iter()
        .map(|key| {
            let mut values: Vec<f64> = samples.iter().filter_map(|s| s.get(key).copied()).collect();
            values.sort_by(f64::total_cmp);
            (key.clone(), values[values.len() / 2])
        })
        .collect()
}

fn get(sample: &Sample, key: &str) -> f64 {
    sample.get(key).copied().unwrap_or(f64::NAN)
}

/// Units per second.
fn rate(sample: &Sample) -> f64 {
    get(sample, "units") / get(sample, "secs")
}

fn peak_mib(sample: &Sample) -> f64 {
    get(sample, "peak") / MIB
}

/// One line of a curve: a client's points `(x, y)`.
struct Series {
    kind: &'static str,
    points: Vec<(f64, f64)>,
}

/// One panel of a plot: its title, its y axis, and a series per client.
struct Panel {
    title: String,
    y_label: String,
    series: Vec<Series>,
}

/// `panel`'s series of the figure `y` of each point.
fn panel(
    title: &str,
    y_label: &str,
    points: &[(f64, BTreeMap<&'static str, Sample>)],
    y: impl Fn(f64, &Sample) -> f64,
) -> Panel {
    let series = KINDS
        .iter()
        .map(|&kind| Series {
            kind,
            points: points.iter().filter_map(|(x, samples)| Some((*x, y(*x, samples.get(kind)?)))).collect(),
        })
        .collect();
    Panel { title: title.to_owned(), y_label: y_label.to_owned(), series }
}

fn color(kind: &str) -> plotters::style::RGBColor {
    match kind {
        "raw" => plotters::style::RGBColor(90, 90, 90),
        "rmcp" => plotters::style::RGBColor(214, 39, 40),
        _ => plotters::style::RGBColor(31, 119, 180),
    }
}

/// The row name of a client.
fn label(kind: &str) -> &'static str {
    match kind {
        "raw" => "raw (parse included)",
        "rmcp" => "rmcp 3.11 current-thread",
        _ => "ours (mcp-smol)",
    }
}

/// Writes an SVG of `panels` side by side, log-log, to `path`.
fn plot(path: &Path, title: &str, x_label: &str, panels: &[Panel]) -> Result<(), Box<dyn std::error::Error>> {
    use plotters::prelude::*;
    let root = SVGBackend::new(path, (560 * panels.len() as u32, 440)).into_drawing_area();
    root.fill(&WHITE)?;
    let root = root.titled(title, ("sans-serif", 18))?;
    for (i, (area, panel)) in root.split_evenly((1, panels.len())).iter().zip(panels).enumerate() {
        let values =
            || panel.series.iter().flat_map(|s| s.points.iter()).filter(|(x, y)| *x > 0.0 && *y > 0.0);
        let (x_min, x_max) = values().fold((f64::MAX, f64::MIN), |(lo, hi), (x, _)| (lo.min(*x), hi.max(*x)));
        let (y_min, y_max) = values().fold((f64::MAX, f64::MIN), |(lo, hi), (_, y)| (lo.min(*y), hi.max(*y)));
        if x_min > x_max || y_min > y_max {
            continue;
        }
        let mut chart = ChartBuilder::on(area)
            .caption(&panel.title, ("sans-serif", 15))
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(64)
            // Room above the lines for the legend.
            .build_cartesian_2d(
                (x_min / 1.5..x_max * 1.5).log_scale(),
                (y_min / 1.5..y_max * 4.0).log_scale(),
            )?;
        chart
            .configure_mesh()
            .x_desc(x_label)
            .y_desc(&panel.y_label)
            .label_style(("sans-serif", 12))
            .light_line_style(TRANSPARENT)
            .x_label_formatter(&|x| number(*x))
            .y_label_formatter(&|y| number(*y))
            .draw()?;
        for series in &panel.series {
            let color = color(series.kind);
            let points: Vec<(f64, f64)> =
                series.points.iter().copied().filter(|(x, y)| *x > 0.0 && *y > 0.0).collect();
            chart
                .draw_series(LineSeries::new(points.clone(), color.stroke_width(2)))?
                .label(label(series.kind))
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], color.stroke_width(2)));
            chart.draw_series(points.into_iter().map(|point| Circle::new(point, 3, color.filled())))?;
        }
        if i > 0 {
            continue;
        }
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::UpperLeft)
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK)
            .label_font(("sans-serif", 12))
            .draw()?;
    }
    root.present()?;
    Ok(())
}

/// An axis label: no decimals from 10 on (nor for whole numbers), ten thousands and more in `k`.
fn number(value: f64) -> String {
    if value >= 10_000.0 {
        format!("{:.0}k", value / 1000.0)
    } else if value >= 10.0 || (value >= 1.0 && value.fract() == 0.0) {
        format!("{value:.0}")
    } else if value >= 1.0 {
        format!("{value:.1}")
    } else {
        format!("{value:.2}")
    }
}

fn write_plot(options: &Options, name: &str, title: &str, x_label: &str, panels: &[Panel]) {
    let path = options.svg_dir.join(format!("{name}.svg"));
    match plot(&path, title, x_label, panels) {
        Ok(()) => println!("\nplot: {}", path.display()),
        Err(error) => println!("\nplot {} failed: {error}", path.display()),
    }
}

fn ratio(ours: f64, other: f64) -> String {
    if other.is_finite() && other > 0.0 && ours.is_finite() {
        format!("{:.2}", ours / other)
    } else {
        "-".to_owned()
    }
}

fn cell(value: f64, digits: usize) -> String {
    if value.is_finite() { format!("{value:.digits$}") } else { "-".to_owned() }
}

/// A sample's figure `f`, or NaN when that client did not run.
fn of(samples: &BTreeMap<&str, Sample>, kind: &str, f: impl Fn(&Sample) -> f64) -> f64 {
    samples.get(kind).map_or(f64::NAN, f)
}

/// Peak RSS (MiB) in results of `size` bytes, for results of 1 MiB and more (the issue's
/// "copies of the result at the peak"; below 1 MiB the process's own memory dominates).
fn copies(peak_mib: f64, size: usize) -> String {
    if size >= 1 << 20 { cell(peak_mib * MIB / size as f64, 2) } else { "-".to_owned() }
}

fn size_label(size: usize) -> String {
    if size >= 1 << 20 { format!("{} MiB", size >> 20) } else { format!("{} KiB", size >> 10) }
}

fn size_curve(options: &Options) {
    let sizes: &[usize] =
        if options.quick { &[KIB, 256 * KIB] } else { &[KIB, 64 * KIB, 1 << 20, 4 << 20, 12 << 20] };
    let servers = [ServeProcess::start(&[Mode::Json.name()]), ServeProcess::start(&[Mode::Sse.name()])];
    for (transport, url, name) in [
        ("stdio", "", "stdio"),
        ("json", servers[0].url(), "HTTP JSON"),
        ("sse", servers[1].url(), "HTTP SSE"),
    ] {
        println!("\n### Result size, {name}\n");
        println!(
            "| result | raw MiB/s | rmcp MiB/s | ours MiB/s | ours / raw | ours / rmcp | raw CPU ms/MiB | rmcp CPU ms/MiB | \
             ours CPU ms/MiB | raw peak MiB | rmcp peak MiB | ours peak MiB | raw peak / result | ours peak / result |"
        );
        println!("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|");
        let mut points = Vec::new();
        for &size in sizes {
            let calls = size_calls(size, options.quick);
            let samples = options.measure(|kind| {
                ["size", kind, transport, url, &size.to_string(), &calls.to_string()]
                    .map(str::to_owned)
                    .into()
            });
            let mib_s = |s: &Sample| rate(s) * size as f64 / MIB;
            let cpu_ms = |s: &Sample| get(s, "cpu_per_unit") * 1e3 * MIB / size as f64;
            let (raw, rmcp, ours) =
                (of(&samples, "raw", mib_s), of(&samples, "rmcp", mib_s), of(&samples, "ours", mib_s));
            println!(
                "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
                size_label(size),
                cell(raw, 0),
                cell(rmcp, 0),
                cell(ours, 0),
                ratio(ours, raw),
                ratio(ours, rmcp),
                cell(of(&samples, "raw", cpu_ms), 2),
                cell(of(&samples, "rmcp", cpu_ms), 2),
                cell(of(&samples, "ours", cpu_ms), 2),
                cell(of(&samples, "raw", peak_mib), 1),
                cell(of(&samples, "rmcp", peak_mib), 1),
                cell(of(&samples, "ours", peak_mib), 1),
                copies(of(&samples, "raw", peak_mib), size),
                copies(of(&samples, "ours", peak_mib), size),
            );
            points.push(((size / KIB) as f64, samples));
        }
        // x is the result's size in KiB.
        let panels = [
            panel("throughput", "MiB/s", &points, |kib, s| rate(s) * kib / 1024.0),
            panel("CPU per MiB", "ms of CPU per MiB", &points, |kib, s| {
                get(s, "cpu_per_unit") * 1e3 * 1024.0 / kib
            }),
            panel("peak RSS", "MiB", &points, |_, s| peak_mib(s)),
        ];
        write_plot(
            options,
            &format!("size-{transport}"),
            &format!("Result size, {name}"),
            "result (KiB)",
            &panels,
        );
    }
}

fn inflight_curve(options: &Options) {
    let all: &[usize] = if options.quick { &[1, 32, 1000] } else { &[1, 32, 1000, 10_000] };
    println!("\n### Calls in flight, stdio\n");
    println!(
        "| in flight | calls | raw calls/s | rmcp calls/s | ours calls/s | ours / raw | ours / rmcp | raw CPU µs/call | \
         rmcp CPU µs/call | ours CPU µs/call | raw peak MiB | rmcp peak MiB | ours peak MiB |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|---|");
    let mut points = Vec::new();
    for &lanes in all {
        let calls = inflight_calls(lanes, options.quick);
        let samples = options.measure(|kind| {
            ["inflight", kind, &lanes.to_string(), &calls.to_string()].map(str::to_owned).into()
        });
        let cpu_us = |s: &Sample| get(s, "cpu_per_unit") * 1e6;
        let (raw, rmcp, ours) =
            (of(&samples, "raw", rate), of(&samples, "rmcp", rate), of(&samples, "ours", rate));
        println!(
            "| {lanes} | {calls} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
            cell(raw, 0),
            cell(rmcp, 0),
            cell(ours, 0),
            ratio(ours, raw),
            ratio(ours, rmcp),
            cell(of(&samples, "raw", cpu_us), 2),
            cell(of(&samples, "rmcp", cpu_us), 2),
            cell(of(&samples, "ours", cpu_us), 2),
            cell(of(&samples, "raw", peak_mib), 1),
            cell(of(&samples, "rmcp", peak_mib), 1),
            cell(of(&samples, "ours", peak_mib), 1),
        );
        points.push((lanes as f64, samples));
    }
    let panels = [
        panel("throughput", "calls/s", &points, |_, s| rate(s)),
        panel("CPU per call", "µs of CPU per call", &points, |_, s| get(s, "cpu_per_unit") * 1e6),
        panel("peak RSS", "MiB", &points, |_, s| peak_mib(s)),
    ];
    write_plot(options, "inflight", "Calls in flight, stdio", "calls in flight", &panels);
}

fn tools_curve(options: &Options) {
    let all: &[usize] = if options.quick { &[10, 1000] } else { &[10, 1000, 10_000] };
    println!("\n### Tools per list, each with an outputSchema (ours validates results), stdio\n");
    println!(
        "| tools | lists | raw ms/list | rmcp ms/list | ours ms/list | ours / raw (time) | ours / rmcp (time) | \
         raw CPU ms/list | rmcp CPU ms/list | ours CPU ms/list | raw peak MiB | rmcp peak MiB | ours peak MiB | \
         raw µs/call | rmcp µs/call | ours µs/call (validated) | ours CPU µs/call |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|");
    let mut points = Vec::new();
    for &tools in all {
        let lists = tools_lists(tools, options.quick);
        let samples = options.measure(|kind| {
            ["tools", kind, &tools.to_string(), &lists.to_string()].map(str::to_owned).into()
        });
        let ms = |s: &Sample| get(s, "secs") * 1e3 / get(s, "units");
        let cpu_ms = |s: &Sample| get(s, "cpu_per_unit") * 1e3;
        let call_us = |s: &Sample| get(s, "call_secs") * 1e6;
        let (raw, rmcp, ours) = (of(&samples, "raw", ms), of(&samples, "rmcp", ms), of(&samples, "ours", ms));
        println!(
            "| {tools} | {lists} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
            cell(raw, 3),
            cell(rmcp, 3),
            cell(ours, 3),
            ratio(ours, raw),
            ratio(ours, rmcp),
            cell(of(&samples, "raw", cpu_ms), 3),
            cell(of(&samples, "rmcp", cpu_ms), 3),
            cell(of(&samples, "ours", cpu_ms), 3),
            cell(of(&samples, "raw", peak_mib), 1),
            cell(of(&samples, "rmcp", peak_mib), 1),
            cell(of(&samples, "ours", peak_mib), 1),
            cell(of(&samples, "raw", call_us), 1),
            cell(of(&samples, "rmcp", call_us), 1),
            cell(of(&samples, "ours", call_us), 1),
            cell(of(&samples, "ours", |s| get(s, "call_cpu") * 1e6), 1),
        );
        points.push((tools as f64, samples));
    }
    let panels = [
        panel("time per list_all_tools", "ms per list", &points, |_, s| {
            get(s, "secs") * 1e3 / get(s, "units")
        }),
        panel("then a call to each of 100 tools", "µs per call", &points, |_, s| get(s, "call_secs") * 1e6),
        panel("peak RSS", "MiB", &points, |_, s| peak_mib(s)),
    ];
    write_plot(
        options,
        "tools",
        "Tools per list (each with an outputSchema), stdio",
        "tools in the list",
        &panels,
    );
}

fn connections_curve(options: &Options) {
    let server = ServeProcess::start(&[Mode::Json.name()]);
    let http: &[usize] = if options.quick { &[1, 10] } else { &[1, 100, 1000] };
    let stdio: &[usize] = if options.quick { &[1, 4] } else { &[1, 100] };
    for (transport, counts, name) in [("http", http, "HTTP"), ("stdio", stdio, "stdio")] {
        println!(
            "\n### Connections per process, {name} (each used for one call, then idle; per connection: after a first one)\n"
        );
        println!(
            "| connections | raw KiB/conn | rmcp KiB/conn | ours KiB/conn | raw ms/conn | rmcp ms/conn | ours ms/conn | \
             raw CPU ms/conn | rmcp CPU ms/conn | ours CPU ms/conn | raw peak MiB | rmcp peak MiB | ours peak MiB | \
             first connection KiB: raw, rmcp, ours |"
        );
        println!("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|");
        let mut points = Vec::new();
        for &n in counts {
            let samples = options.measure(|kind| {
                ["connections", kind, transport, server.url(), &n.to_string()].map(str::to_owned).into()
            });
            let kib = |s: &Sample| get(s, "rss_per_conn") / 1024.0;
            let first_kib = |s: &Sample| get(s, "first_conn") / 1024.0;
            let ms = |s: &Sample| get(s, "secs") * 1e3 / get(s, "units");
            let cpu_ms = |s: &Sample| get(s, "cpu_per_unit") * 1e3;
            println!(
                "| {n} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {}, {}, {} |",
                cell(of(&samples, "raw", kib), 1),
                cell(of(&samples, "rmcp", kib), 1),
                cell(of(&samples, "ours", kib), 1),
                cell(of(&samples, "raw", ms), 2),
                cell(of(&samples, "rmcp", ms), 2),
                cell(of(&samples, "ours", ms), 2),
                cell(of(&samples, "raw", cpu_ms), 2),
                cell(of(&samples, "rmcp", cpu_ms), 2),
                cell(of(&samples, "ours", cpu_ms), 2),
                cell(of(&samples, "raw", peak_mib), 1),
                cell(of(&samples, "rmcp", peak_mib), 1),
                cell(of(&samples, "ours", peak_mib), 1),
                cell(of(&samples, "raw", first_kib), 0),
                cell(of(&samples, "rmcp", first_kib), 0),
                cell(of(&samples, "ours", first_kib), 0),
            );
            points.push((n as f64, samples));
        }
        let panels = [
            panel("memory per idle connection", "KiB (RSS growth / connections)", &points, |_, s| {
                get(s, "rss_per_conn") / 1024.0
            }),
            panel("CPU per connection (connect + one call)", "ms of CPU", &points, |_, s| {
                get(s, "cpu_per_unit") * 1e3
            }),
            panel("peak RSS", "MiB", &points, |_, s| peak_mib(s)),
        ];
        write_plot(
            options,
            &format!("connections-{transport}"),
            &format!("Connections per process, {name}"),
            "connections",
            &panels,
        );
    }
}

fn worker_main(args: &[String]) {
    if args.iter().any(|a| a == "--pin") {
        process_stats::pin_to_cpu(0).expect("pin to CPU 0");
    }
    let arg = |i: usize| args.get(i).map_or("", String::as_str);
    let number = |i: usize| arg(i).parse::<usize>().expect("a count");
    match arg(0) {
        "inflight" => inflight_worker(arg(1), number(2), number(3)),
        "tools" => tools_worker(arg(1), number(2), number(3)),
        "connections" => connections_worker(arg(1), arg(2), arg(3), number(4)),
        "size" => size_worker(arg(1), arg(2), arg(3), number(4), number(5)),
        curve => panic!("unknown curve {curve}"),
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
        Some("--worker") => return worker_main(&args[1..]),
        _ => {}
    }
    let options = Options::parse(&args);
    if let Some(only) = &options.only {
        assert!(
            ["size", "inflight", "tools", "connections"].contains(&only.as_str()),
            "--only takes size, inflight, tools or connections"
        );
    }
    std::fs::create_dir_all(&options.svg_dir).expect("create the SVG directory");
    if options.pin {
        // The servers are started from here: they inherit the placement (workers pin themselves).
        process_stats::pin_to_cpu(0).expect("pin to CPU 0");
    }
    println!(
        "# curves: ours (mcp-smol, block_on + spawn_*), raw (blocking std, parse included){}; median of {} rounds; {}{}",
        if cfg!(feature = "rmcp") { ", rmcp 3.11 current-thread" } else { "" },
        options.rounds,
        if options.pin { "pinned to CPU 0" } else { "unpinned" },
        if options.quick { "; --quick: smoke counts, figures mean nothing" } else { "" },
    );
    if !cfg!(feature = "rmcp") {
        println!("{}", mcp_benches::workers::RMCP_MISSING);
    }
    if options.runs("size") {
        size_curve(&options);
    }
    if options.runs("inflight") {
        inflight_curve(&options);
    }
    if options.runs("tools") {
        tools_curve(&options);
    }
    if options.runs("connections") {
        connections_curve(&options);
    }
}
