//! A request is on the wire when its call returns, before its future is polled, when it is the
//! only call in flight; behind another one, once its future was polled (the calls made in one
//! turn of an executor go out in one write, on a call's second poll), whatever else happens:
//! over stdio and over HTTP (hyper and surf). The demo server's `crash` tool exits the server
//! when its request arrives, so the server's exit shows the request was sent; the call in
//! flight before it is never polled, and is not answered for 30 s.

mod demo;

use std::time::{Duration, Instant};

use demo::{DemoHttp, demo_path};
use mcp_sansio::ProtocolVersion;
use mcp_sansio::http::HttpConfig;
use mcp_sansio::schema::Implementation;
use mcp_smol::{Client, ClientApi, ClientBuilder, HttpTransport, ServerCommand};
use serde_json::json;

const LIMIT: Duration = Duration::from_secs(10);

fn builder() -> ClientBuilder {
    let legacy: Vec<_> = ProtocolVersion::LEGACY.iter().rev().copied().collect();
    ClientBuilder::new(Implementation::new("on-the-wire", "0.0.0")).configure(|c| c.with_versions(&legacy))
}

fn wait_until(mut condition: impl FnMut() -> bool) -> bool {
    let start = Instant::now();
    while start.elapsed() < LIMIT {
        if condition() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    false
}

/// Whether process `pid` exited (gone, or a zombie not reaped yet).
fn exited(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(stat) => stat.rsplit(')').next().and_then(|rest| rest.split_whitespace().next()) == Some("Z"),
    }
}

/// Makes the calls (`behind`: after a long one still in flight) and holds their futures
/// unpolled; `gone` tells when the server exited.
fn crash_unpolled(client: &Client, behind: bool, mut gone: impl FnMut() -> bool) {
    let mut held = Vec::new();
    if behind {
        held.push(Box::pin(client.call_tool("sleep", json!({"ms": 30_000}))));
        std::thread::sleep(Duration::from_millis(50));
        assert!(!gone(), "the server exited before the crash was sent");
    }
    let mut crash = Box::pin(client.call_tool("crash", json!({})));
    if behind {
        // Its first poll yields (for the other calls of the turn); its second writes it.
        assert!(smol::block_on(futures_lite::future::poll_once(crash.as_mut())).is_none());
        let _ = smol::block_on(futures_lite::future::poll_once(crash.as_mut()));
    }
    held.push(crash);
    assert!(wait_until(&mut gone), "the crash request never reached the server (behind another: {behind})");
    drop(held);
}

#[test]
fn stdio_requests_are_on_the_wire_before_their_futures_are_polled() {
    for behind in [false, true] {
        let client = smol::block_on(builder().spawn_stdio(&ServerCommand::new(demo_path()))).unwrap();
        let pid = client.server_pid().unwrap();
        crash_unpolled(&client, behind, || exited(pid));
        smol::block_on(client.close());
    }
}

fn http(transport: impl HttpTransport + Clone) {
    for behind in [false, true] {
        let mut server = DemoHttp::start();
        let client =
            smol::block_on(builder().spawn_http(HttpConfig::new(server.url.as_str()), transport.clone()))
                .unwrap();
        crash_unpolled(&client, behind, || server.exited());
        smol::block_on(client.close_within(LIMIT));
    }
}

#[test]
fn hyper_requests_are_on_the_wire_before_their_futures_are_polled() {
    http(mcp_hyper::HyperTransport::new());
}

#[test]
fn surf_requests_are_on_the_wire_before_their_futures_are_polled() {
    http(mcp_surf::SurfTransport::new());
}
