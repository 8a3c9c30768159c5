//! The HTTP driver suite: the same client test-suite, run with each HTTP transport (`mcp-hyper`,
//! `mcp-surf`) against real servers on 127.0.0.1:
//! - `@modelcontextprotocol/server-everything` (TypeScript SDK) in `streamableHttp` mode,
//! - the same server in `sse` mode (the 2024-11-05 HTTP+SSE transport, reached through the
//!   client's fallback),
//! - a server built with the official Python SDK (`conformance/peers/python_server.py`) in
//!   streamable-http mode.
//!
//! Each test starts its server on a free port and kills it by PID at the end. They need Node,
//! Python and the peer packages, which `.ci/install-peers` installs; `.ci/interop` runs them with
//! `MCP_EVERYTHING_SERVER` and `MCP_PYTHON_PATH` set. Plain `cargo test` skips them (they are
//! `#[ignore]`d), and running them without the variables fails loudly.
//!
//! The tests at the end need no peer and run in every `cargo test`: redirects (followed to
//! another origin without credentials, refused by name) and a response head too large, with
//! both transports, against the demo server in this process behind small raw-TCP servers.

mod common;

use std::net::{TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use common::{Handler, text, wait_for_tool};
use mcp_sansio::http::HttpConfig;
use mcp_sansio::schema::{CallToolRequestParams, Implementation};
use mcp_sansio::{ProtocolVersion, ServerNotification};
use mcp_smol::ClientApi;
use mcp_smol::{CallOptions, Client, ClientBuilder, HttpTransport, Notifications};
use serde_json::json;

/// A peer server process, killed (by PID) and reaped when dropped.
struct Peer {
    child: Child,
    url: String,
}

impl Drop for Peer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// Starts `command` and waits until it accepts connections on `port`.
fn start(mut command: Command, port: u16, path: &str) -> Peer {
    command.stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::null());
    let child = command.spawn().unwrap_or_else(|e| panic!("starting {command:?}: {e}"));
    let peer = Peer { child, url: format!("http://127.0.0.1:{port}{path}") };
    let start = Instant::now();
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(start.elapsed() < Duration::from_secs(30), "{command:?} never listened on {port}");
        std::thread::sleep(Duration::from_millis(50));
    }
    peer
}

fn everything_entry() -> String {
    std::env::var("MCP_EVERYTHING_SERVER")
        .expect("MCP_EVERYTHING_SERVER must point at server-everything's dist/index.js: run .ci/interop")
}

fn everything(mode: &str, path: &str) -> Peer {
    everything_on(free_port(), mode, path)
}

fn everything_on(port: u16, mode: &str, path: &str) -> Peer {
    // server-everything has no host setting: the preload makes it listen on 127.0.0.1 only.
    let preload = concat!(env!("CARGO_MANIFEST_DIR"), "/peers/bind-localhost.cjs");
    let mut command = Command::new("node");
    command.arg("--require").arg(preload).arg(everything_entry()).arg(mode).env("PORT", port.to_string());
    start(command, port, path)
}

fn python() -> Peer {
    python_on(free_port())
}

fn python_on(port: u16) -> Peer {
    let pythonpath = std::env::var("MCP_PYTHON_PATH")
        .expect("MCP_PYTHON_PATH must point at the Python SDK's install dir: run .ci/interop");
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/peers/python_server.py");
    let mut command = Command::new("python3");
    command.arg(script).arg("--port").arg(port.to_string()).env("PYTHONPATH", pythonpath);
    start(command, port, "/mcp")
}

/// Connects with every client capability, subscribing to notifications before the driver runs
/// so that none sent right after the handshake is missed.
/// Connects in the default (dual-era) configuration.
async fn connect(url: &str, transport: impl HttpTransport) -> (Client, Notifications) {
    connect_with(url, transport, ProtocolVersion::DUAL_ERA).await
}

/// Connects in the `initialize` era: for what only exists there (server→client requests on a
/// back channel, sessions), against a server that speaks both eras (the Python SDK).
async fn connect_legacy(url: &str, transport: impl HttpTransport) -> (Client, Notifications) {
    let legacy: Vec<_> = ProtocolVersion::LEGACY.iter().rev().copied().collect();
    connect_with(url, transport, &legacy).await
}

async fn connect_with(
    url: &str,
    transport: impl HttpTransport,
    versions: &[ProtocolVersion],
) -> (Client, Notifications) {
    let capabilities = common::capabilities();
    let (client, driver) = ClientBuilder::new(Implementation::new("mcp-sansio-http-interop", "0.1.0"))
        .configure(|c| c.with_capabilities(capabilities).with_versions(versions))
        .handler(Handler)
        .connect_http(HttpConfig::new(url).header("Authorization", "Bearer interop-token"), transport);
    let notifications = client.notifications();
    smol::spawn(driver).detach();
    client.ready().await.unwrap_or_else(|e| panic!("connecting to {url}: {e}"));
    (client, notifications)
}

/// Waits (bounded) for a notification matching `want`.
async fn expect_notification(notifications: &mut Notifications, want: impl Fn(&ServerNotification) -> bool) {
    let deadline = async_io::Timer::after(Duration::from_secs(10));
    let found = futures_lite::future::or(
        async {
            while let Some(n) = notifications.next().await {
                if want(&n) {
                    return true;
                }
            }
            false
        },
        async {
            deadline.await;
            false
        },
    )
    .await;
    assert!(found, "the expected notification never arrived");
}

fn progress_options(seen: &Arc<Mutex<Vec<f64>>>) -> CallOptions {
    let sink = seen.clone();
    CallOptions::default().on_progress(move |p| sink.lock().unwrap().push(p.progress))
}

/// The suite against server-everything, in either HTTP mode.
async fn everything_suite(url: &str, transport: impl HttpTransport, legacy: bool) {
    let (client, mut notifications) = connect(url, transport).await;
    assert_eq!(client.server_info().unwrap().name, "mcp-servers/everything");
    assert_eq!(client.protocol_version(), Some(ProtocolVersion::V2025_11_25));
    wait_for_tool(&client, "trigger-sampling-request").await;

    // Tools, with progress.
    let echo = client.call_tool("echo", json!({"message": "hi"})).await.unwrap();
    assert_eq!(text(&echo), "Echo: hi");
    let seen = Arc::new(Mutex::new(Vec::new()));
    let params = CallToolRequestParams::new("trigger-long-running-operation")
        .with_arguments(json!({"duration": 1, "steps": 4}).as_object().unwrap().clone());
    let done = client.call_tool_with(&params, progress_options(&seen)).await.unwrap();
    assert!(text(&done).starts_with("Long running operation completed"), "{}", text(&done));
    assert_eq!(*seen.lock().unwrap(), [1.0, 2.0, 3.0, 4.0]);

    // Concurrent calls share the session.
    let calls = (0..8).map(|i| {
        let client = client.clone();
        smol::spawn(async move { client.call_tool("get-sum", json!({"a": i, "b": 1})).await })
    });
    for (i, call) in calls.collect::<Vec<_>>().into_iter().enumerate() {
        assert_eq!(text(&call.await.unwrap()), format!("The sum of {i} and 1 is {}.", i + 1));
    }

    // Resources and prompts.
    assert_eq!(client.list_all_resources().await.unwrap().len(), 7);
    let features = client.read_resource("demo://resource/static/document/features.md").await.unwrap();
    assert!(features.contents[0].as_text().unwrap().starts_with("# Everything Server"));
    let weather = client.get_prompt("args-prompt", [("city", "Paris"), ("state", "TX")]).await.unwrap();
    assert_eq!(weather.messages[0].content.as_text(), Some("What's weather in Paris, TX?"));

    // Server→client requests, answered by POST.
    let sampled =
        client.call_tool("trigger-sampling-request", json!({"prompt": "say hi", "maxTokens": 20})).await;
    let sampled = text(&sampled.unwrap());
    assert!(sampled.contains("interop-model"), "{sampled}");
    let elicited = text(&client.call_tool("trigger-elicitation-request", json!({})).await.unwrap());
    assert!(elicited.contains("Ada"), "{elicited}");

    // Unprompted server messages: the roots request the server sends after the handshake comes on
    // the GET stream (the only stream, for the legacy transport), and so do log messages.
    let start = Instant::now();
    loop {
        let roots = text(&client.call_tool("get-roots-list", json!({})).await.unwrap());
        if roots.contains("file:///tmp/interop") {
            break;
        }
        assert!(start.elapsed() < Duration::from_secs(10), "roots never arrived: {roots}");
        async_io::Timer::after(Duration::from_millis(100)).await;
    }
    client.call_tool("toggle-simulated-logging", json!({})).await.unwrap();
    expect_notification(&mut notifications, |n| matches!(n, ServerNotification::LoggingMessage(_))).await;
    let _ = legacy;
    assert!(client.close_within(Duration::from_secs(10)).await, "close took too long");
}

/// The suite against the Python SDK server, in the `initialize` era: its tools ask the client
/// with server→client requests, which 2026-07-28 has no channel for (the dual-era suite below
/// covers its modern side).
async fn python_suite(url: &str, transport: impl HttpTransport) {
    let (client, mut notifications) = connect_legacy(url, transport).await;
    let echo = client.call_tool("echo", json!({"message": "hi"})).await.unwrap();
    assert_eq!(text(&echo), "Echo: hi");
    let seen = Arc::new(Mutex::new(Vec::new()));
    let params = CallToolRequestParams::new("long_running")
        .with_arguments(json!({"steps": 3, "delay_ms": 20}).as_object().unwrap().clone());
    let done = client.call_tool_with(&params, progress_options(&seen)).await.unwrap();
    assert!(text(&done).contains('3'), "{}", text(&done));
    assert_eq!(seen.lock().unwrap().len(), 3);

    let readme = client.read_resource("demo://readme").await.unwrap();
    assert!(!readme.contents.is_empty());
    let item = client.read_resource("demo://items/42").await.unwrap();
    assert!(item.contents[0].as_text().unwrap().contains("42"));
    let greeting = client.get_prompt("greeting", [("name", "Ada")]).await.unwrap();
    assert!(greeting.messages[0].content.as_text().unwrap().contains("Ada"));

    let sampled = text(&client.call_tool("sample", json!({"prompt": "say hi"})).await.unwrap());
    assert!(sampled.contains("reply to say hi"), "{sampled}");
    let elicited = text(&client.call_tool("elicit", json!({"message": "who?"})).await.unwrap());
    assert!(elicited.contains("Ada"), "{elicited}");
    let roots = text(&client.call_tool("list_roots", json!({})).await.unwrap());
    assert!(roots.contains("file:///tmp/interop"), "{roots}");
    client.call_tool("log", json!({"message": "hello log"})).await.unwrap();
    expect_notification(&mut notifications, |n| matches!(n, ServerNotification::LoggingMessage(_))).await;
    // Sent on the GET stream (not in answer to any request).
    client.call_tool("notify_changes", json!({"standalone": true})).await.unwrap();
    expect_notification(&mut notifications, |n| matches!(n, ServerNotification::ToolListChanged)).await;
    let failed = client.call_tool("fail", json!({})).await.unwrap();
    assert_eq!(failed.is_error, Some(true));
    assert!(client.close_within(Duration::from_secs(10)).await, "close took too long");
}

/// A server restarted on the same port has forgotten the session (server-everything answers
/// 400, the Python SDK 404): the client re-initializes and re-sends the call, transparently.
async fn expiry_suite(start: impl Fn(u16) -> Peer, transport: impl HttpTransport) {
    let port = free_port();
    let peer = start(port);
    // Sessions exist only in the initialize era.
    let (client, _notifications) = connect_legacy(&peer.url, transport).await;
    assert_eq!(text(&client.call_tool("echo", json!({"message": "before"})).await.unwrap()), "Echo: before");
    drop(peer);
    let _peer = start(port);
    let after = client.call_tool("echo", json!({"message": "after"})).await.unwrap();
    assert_eq!(text(&after), "Echo: after");
    assert!(client.close_within(Duration::from_secs(10)).await, "close took too long");
}

fn hyper() -> mcp_hyper::HyperTransport {
    mcp_hyper::HyperTransport::new()
}

fn surf() -> mcp_surf::SurfTransport {
    mcp_surf::SurfTransport::new()
}

#[test]
#[ignore = "needs server-everything: run .ci/interop"]
fn hyper_everything_streamable_http() {
    let peer = everything("streamableHttp", "/mcp");
    smol::block_on(everything_suite(&peer.url, hyper(), false));
}

#[test]
#[ignore = "needs server-everything: run .ci/interop"]
fn hyper_everything_legacy_sse() {
    let peer = everything("sse", "/sse");
    smol::block_on(everything_suite(&peer.url, hyper(), true));
}

#[test]
#[ignore = "needs the Python SDK: run .ci/interop"]
fn hyper_python_streamable_http() {
    let peer = python();
    smol::block_on(python_suite(&peer.url, hyper()));
}

#[test]
#[ignore = "needs server-everything: run .ci/interop"]
fn surf_everything_streamable_http() {
    let peer = everything("streamableHttp", "/mcp");
    smol::block_on(everything_suite(&peer.url, surf(), false));
}

#[test]
#[ignore = "needs server-everything: run .ci/interop"]
fn surf_everything_legacy_sse() {
    let peer = everything("sse", "/sse");
    smol::block_on(everything_suite(&peer.url, surf(), true));
}

#[test]
#[ignore = "needs the Python SDK: run .ci/interop"]
fn surf_python_streamable_http() {
    let peer = python();
    smol::block_on(python_suite(&peer.url, surf()));
}

#[test]
#[ignore = "needs server-everything: run .ci/interop"]
fn hyper_everything_session_expiry() {
    smol::block_on(expiry_suite(|port| everything_on(port, "streamableHttp", "/mcp"), hyper()));
}

#[test]
#[ignore = "needs the Python SDK: run .ci/interop"]
fn hyper_python_session_expiry() {
    smol::block_on(expiry_suite(python_on, hyper()));
}

#[test]
#[ignore = "needs server-everything: run .ci/interop"]
fn surf_everything_session_expiry() {
    smol::block_on(expiry_suite(|port| everything_on(port, "streamableHttp", "/mcp"), surf()));
}

#[test]
#[ignore = "needs the Python SDK: run .ci/interop"]
fn surf_python_session_expiry() {
    smol::block_on(expiry_suite(python_on, surf()));
}

/// A client in the default (dual-era) configuration probes with `server/discover`: a legacy
/// server's refusal sends it to `initialize` (and, for the HTTP+SSE server, on to the legacy
/// transport); the Python SDK (2.3.0) speaks 2026-07-28 and stays modern. No era cache, so
/// every run probes.
async fn dual_era_suite(url: &str, transport: impl HttpTransport, expected: ProtocolVersion) {
    let (client, driver) = ClientBuilder::new(Implementation::new("mcp-sansio-http-interop", "0.1.0"))
        .era_cache(None)
        .connect_http(HttpConfig::new(url), transport);
    smol::spawn(driver).detach();
    client.ready().await.unwrap_or_else(|e| panic!("connecting to {url}: {e}"));
    assert_eq!(client.protocol_version(), Some(expected), "{url}");
    assert_eq!(text(&client.call_tool("echo", json!({"message": "hi"})).await.unwrap()), "Echo: hi");
    assert!(client.close_within(Duration::from_secs(10)).await, "close took too long");
}

#[test]
#[ignore = "needs server-everything and the Python SDK: run .ci/interop"]
fn hyper_dual_era_client_against_both_eras() {
    for (mode, path) in [("streamableHttp", "/mcp"), ("sse", "/sse")] {
        let peer = everything(mode, path);
        smol::block_on(dual_era_suite(&peer.url, hyper(), ProtocolVersion::V2025_11_25));
    }
    let peer = python();
    smol::block_on(dual_era_suite(&peer.url, hyper(), ProtocolVersion::V2026_07_28));
}

#[test]
#[ignore = "needs server-everything and the Python SDK: run .ci/interop"]
fn surf_dual_era_client_against_both_eras() {
    for (mode, path) in [("streamableHttp", "/mcp"), ("sse", "/sse")] {
        let peer = everything(mode, path);
        smol::block_on(dual_era_suite(&peer.url, surf(), ProtocolVersion::V2025_11_25));
    }
    let peer = python();
    smol::block_on(dual_era_suite(&peer.url, surf(), ProtocolVersion::V2026_07_28));
}

// ----- Redirects and response heads, with both transports, against the demo server -----
//
// These need no peers (the demo server runs in this process) and run in every `cargo test`.

/// The demo server, in this process, on a free port: its `/mcp` URL.
fn demo_server() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    std::thread::spawn(move || mcp_demo_server::serve_http(listener, mcp_demo_server::Options::default()));
    url
}

/// What a test server received: every byte the client sent it.
type Seen = Arc<Mutex<Vec<u8>>>;

fn contains(seen: &Seen, needle: &str) -> bool {
    let seen = String::from_utf8_lossy(&seen.lock().unwrap()).to_ascii_lowercase();
    seen.contains(&needle.to_ascii_lowercase())
}

/// A forwarder on 127.0.0.1 to `target` (`host:port`): each connection's bytes pass both ways,
/// and what the client sent is kept. Returns its address and what it saw.
fn recorder(target: String) -> (String, Seen) {
    use std::io::{Read, Write};
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    let seen = Seen::default();
    let kept = seen.clone();
    std::thread::spawn(move || {
        for client in listener.incoming() {
            let Ok(mut client) = client else { return };
            let Ok(mut server) = TcpStream::connect(&target) else { return };
            let (Ok(mut to_client), Ok(mut from_server)) = (client.try_clone(), server.try_clone()) else {
                return;
            };
            let kept = kept.clone();
            std::thread::spawn(move || {
                let mut buf = [0; 16 * 1024];
                while let Ok(n @ 1..) = client.read(&mut buf) {
                    kept.lock().unwrap().extend_from_slice(&buf[..n]);
                    if server.write_all(&buf[..n]).is_err() {
                        break;
                    }
                }
                let _ = server.shutdown(std::net::Shutdown::Both);
            });
            std::thread::spawn(move || {
                let _ = std::io::copy(&mut from_server, &mut to_client);
                let _ = to_client.shutdown(std::net::Shutdown::Both);
            });
        }
    });
    (addr, seen)
}

/// A server on 127.0.0.1 that answers every request with `head` (a status line and headers,
/// without the blank line) and an empty body, keeping what the client sent. Returns its `/mcp`
/// URL and what it saw.
fn answering(head: String) -> (String, Seen) {
    use std::io::{BufRead, BufReader, Read, Write};
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let seen = Seen::default();
    let kept = seen.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(stream) = stream else { return };
            let (kept, head) = (kept.clone(), head.clone());
            std::thread::spawn(move || {
                let Ok(mut writer) = stream.try_clone() else { return };
                let mut reader = BufReader::new(stream);
                loop {
                    // One request: its head, then a `Content-Length` body.
                    let mut length = 0;
                    loop {
                        let mut line = String::new();
                        if reader.read_line(&mut line).unwrap_or(0) == 0 {
                            return;
                        }
                        kept.lock().unwrap().extend_from_slice(line.as_bytes());
                        let lower = line.to_ascii_lowercase();
                        if let Some(value) = lower.strip_prefix("content-length:") {
                            length = value.trim().parse().unwrap_or(0);
                        }
                        if line == "\r\n" {
                            break;
                        }
                    }
                    let mut body = vec![0; length];
                    if reader.read_exact(&mut body).is_err() {
                        return;
                    }
                    kept.lock().unwrap().extend_from_slice(&body);
                    let response = format!("{head}\r\nContent-Length: 0\r\n\r\n");
                    if writer.write_all(response.as_bytes()).is_err() {
                        return;
                    }
                }
            });
        }
    });
    (url, seen)
}

const SECRET_TOKEN: &str = "Bearer redirect-secret-token";
const SECRET_HEADER: &str = "custom-secret-value";

fn secret_config(url: &str) -> HttpConfig {
    HttpConfig::new(url).header("Authorization", SECRET_TOKEN).header("X-Custom-Secret", SECRET_HEADER)
}

/// Every request to the configured URL is redirected (307 or 308) to the demo server on another
/// port, through a forwarder that keeps what it sees: the calls work, and neither the
/// `Authorization` header nor the custom one reaches the other origin.
/// Both eras: 2026-07-28 (stateless `POST`s) and the `initialize` era (a session id, the `GET`
/// stream and the closing `DELETE` are redirected too).
async fn cross_origin_redirect_suite(
    transport: impl HttpTransport,
    status: u16,
    versions: &[ProtocolVersion],
) {
    let demo = demo_server();
    let demo_addr = demo.trim_start_matches("http://").trim_end_matches("/mcp").to_owned();
    let (other, seen_there) = recorder(demo_addr);
    let reason = if status == 307 { "Temporary Redirect" } else { "Permanent Redirect" };
    let (url, seen_here) = answering(format!("HTTP/1.1 {status} {reason}\r\nLocation: http://{other}/mcp"));
    let client = ClientBuilder::new(Implementation::new("redirect-test", "0.0.0"))
        .configure(|c| c.with_versions(versions))
        .era_cache(None)
        .spawn_http(secret_config(&url), transport)
        .await
        .unwrap_or_else(|e| panic!("HTTP {status}: connecting through the redirect: {e}"));
    let echo = client.call_tool("echo", json!({"message": "moved"})).await.unwrap();
    assert!(text(&echo).contains("moved"), "{}", text(&echo));
    assert!(!client.list_all_tools().await.unwrap().is_empty());
    assert!(client.close_within(Duration::from_secs(10)).await, "close took too long");
    // The configured origin got the credentials; the other one got the MCP requests only.
    assert!(contains(&seen_here, SECRET_TOKEN) && contains(&seen_here, SECRET_HEADER), "HTTP {status}");
    assert!(contains(&seen_there, "\"method\":\"tools/call\""), "HTTP {status}: the call went there");
    assert!(
        !contains(&seen_there, "redirect-secret-token"),
        "HTTP {status}: Authorization went to another origin"
    );
    assert!(!contains(&seen_there, SECRET_HEADER), "HTTP {status}: a custom header went to another origin");
    assert!(!contains(&seen_there, "x-custom-secret"), "HTTP {status}");
}

/// A `302` is refused with its status and `Location` named, and nothing is sent where it
/// points (neither the session nor the HTTP client below it follows it).
async fn refused_redirect_suite(transport: impl HttpTransport) {
    let demo = demo_server();
    let demo_addr = demo.trim_start_matches("http://").trim_end_matches("/mcp").to_owned();
    let (other, seen_there) = recorder(demo_addr);
    let (url, _) = answering(format!("HTTP/1.1 302 Found\r\nLocation: http://{other}/mcp"));
    let outcome = ClientBuilder::new(Implementation::new("redirect-test", "0.0.0"))
        .era_cache(None)
        .spawn_http(secret_config(&url), transport)
        .await;
    match outcome {
        Err(mcp_smol::Error::Connect(reason)) => {
            let message = reason.to_string();
            assert!(message.contains("302") && message.contains(&other), "{message}");
            assert!(message.contains("only 307 and 308"), "{message}");
        }
        Err(other) => panic!("expected the connection to fail, got {other:?}"),
        Ok(_) => panic!("connected through a 302"),
    }
    assert!(seen_there.lock().unwrap().is_empty(), "the redirect was followed");
}

/// A response head with a 1 MiB header fails with an error that says the head is too large
/// (libcurl's own words are "A value or data field grew larger than allowed").
async fn huge_head_suite(transport: impl HttpTransport) {
    let (url, _) = answering(format!("HTTP/1.1 200 OK\r\nX-Huge: {}", "a".repeat(1 << 20)));
    let outcome = ClientBuilder::new(Implementation::new("head-test", "0.0.0"))
        .spawn_http(HttpConfig::new(&url), transport)
        .await;
    match outcome {
        Err(mcp_smol::Error::Connect(reason)) => {
            let message = reason.to_string();
            assert!(message.contains("response head is too large"), "{message}");
            assert!(message.contains("limit is"), "{message}");
        }
        Err(other) => panic!("expected the connection to fail, got {other:?}"),
        Ok(_) => panic!("connected"),
    }
}

#[test]
fn hyper_follows_307_and_308_to_another_origin_without_credentials() {
    for status in [307, 308] {
        smol::block_on(cross_origin_redirect_suite(hyper(), status, ProtocolVersion::DUAL_ERA));
        smol::block_on(cross_origin_redirect_suite(hyper(), status, &[ProtocolVersion::V2025_11_25]));
    }
}

#[test]
fn surf_follows_307_and_308_to_another_origin_without_credentials() {
    for status in [307, 308] {
        smol::block_on(cross_origin_redirect_suite(surf(), status, ProtocolVersion::DUAL_ERA));
        smol::block_on(cross_origin_redirect_suite(surf(), status, &[ProtocolVersion::V2025_11_25]));
    }
}

#[test]
fn hyper_refuses_a_302_by_name() {
    smol::block_on(refused_redirect_suite(hyper()));
}

#[test]
fn surf_refuses_a_302_by_name() {
    smol::block_on(refused_redirect_suite(surf()));
}

#[test]
fn hyper_says_a_huge_response_head_is_too_large() {
    smol::block_on(huge_head_suite(hyper()));
}

#[test]
fn surf_says_a_huge_response_head_is_too_large() {
    smol::block_on(huge_head_suite(surf()));
}

/// A URL with the wrong path: the demo server answers 404 to every request there, so the
/// client falls back from `server/discover` to `initialize` and on to the HTTP+SSE transport,
/// which is refused too. The connection fails at once, typed: the status is there to read, and
/// nothing says a retry would help (the same URL answers the same).
async fn wrong_path_suite(transport: impl HttpTransport, versions: &[ProtocolVersion]) {
    let url = demo_server().replace("/mcp", "/wrong");
    let connecting = ClientBuilder::new(Implementation::new("wrong-path", "0.1.0"))
        .era_cache(None)
        .configure(|c| c.with_versions(versions))
        .spawn_http(HttpConfig::new(url.as_str()), transport);
    match connecting.await {
        Err(error @ mcp_smol::Error::Connect(_)) => {
            assert_eq!(error.http_status(), Some(404), "{error}");
            assert!(!error.is_retriable(), "{error}");
            assert!(error.to_string().contains("HTTP 404"), "{error}");
        }
        Err(other) => panic!("expected the connection to fail, got {other:?}"),
        Ok(_) => panic!("connected to {url}"),
    }
}

#[test]
fn hyper_a_wrong_path_fails_the_connection_with_its_status() {
    smol::block_on(wrong_path_suite(hyper(), ProtocolVersion::DUAL_ERA));
    smol::block_on(wrong_path_suite(hyper(), &[ProtocolVersion::V2025_11_25]));
    smol::block_on(wrong_path_suite(hyper(), &[ProtocolVersion::V2026_07_28]));
}

#[test]
fn surf_a_wrong_path_fails_the_connection_with_its_status() {
    smol::block_on(wrong_path_suite(surf(), ProtocolVersion::DUAL_ERA));
}
