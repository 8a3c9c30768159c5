//! `tools/call` throughput over Streamable HTTP: the `mcp-smol` client with the `mcp-hyper`
//! transport against raw hyper requests (hand-written JSON, no MCP engine), both talking to the
//! same local server in the same run. Usage: `http-throughput [calls]` (default 4000).

use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use mcp_benches::http_server::BenchServer;
use mcp_hyper::HyperTransport;
use mcp_sansio::http::HttpConfig;
use mcp_sansio::schema::Implementation;
use mcp_smol::{Client, ClientBuilder};
use serde_json::json;
use smol_hyper::rt::FuturesIo;

const IN_FLIGHT: usize = 32;

/// `calls` sequential calls on each of `lanes` concurrent tasks with the MCP client.
async fn mcp_run(client: &Client, lanes: usize, calls: usize) -> Duration {
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

/// The same with raw hyper: one connection per lane, hand-written JSON-RPC.
async fn raw_run(server: &BenchServer, lanes: usize, calls: usize) -> Duration {
    let start = Instant::now();
    let tasks: Vec<_> = (0..lanes)
        .map(|lane| {
            let addr = server.addr();
            smol::spawn(async move {
                let stream = smol::net::TcpStream::connect(addr).await.expect("connect");
                stream.set_nodelay(true).expect("nodelay");
                let (mut sender, connection) =
                    hyper::client::conn::http1::handshake(FuturesIo::new(stream)).await.expect("handshake");
                smol::spawn(connection).detach();
                for i in 0..calls {
                    let body = format!(
                        r#"{{"jsonrpc":"2.0","id":{},"method":"tools/call","params":{{"name":"echo","arguments":{{"message":"hi"}}}}}}"#,
                        lane * calls + i
                    );
                    let request = hyper::Request::post(format!("http://{addr}/mcp"))
                        .header("host", addr.to_string())
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

fn rate(calls: usize, elapsed: Duration) -> f64 {
    calls as f64 / elapsed.as_secs_f64()
}

fn main() {
    let calls: usize = std::env::args().nth(1).and_then(|n| n.parse().ok()).unwrap_or(4000);
    let server = BenchServer::start().expect("server");
    smol::block_on(async {
        let transport = HyperTransport::new();
        let client = ClientBuilder::new(Implementation::new("http-throughput", "0.1.0"))
            .spawn_http(HttpConfig::new(server.url()), transport.clone())
            .await
            .expect("connect");
        // Warm-up: connections, allocator, caches.
        mcp_run(&client, 1, 200).await;
        raw_run(&server, 1, 200).await;
        println!("# tools/call over Streamable HTTP (JSON responses), {calls} calls per workload, same run");
        for (name, lanes) in [("sequential", 1), ("32 in flight", IN_FLIGHT)] {
            let per_lane = calls / lanes;
            let total = per_lane * lanes;
            let server_before = server.connections_accepted();
            let client_before = transport.connections_opened();
            let mcp = rate(total, mcp_run(&client, lanes, per_lane).await);
            let mcp_server_conns = server.connections_accepted() - server_before;
            let mcp_client_conns = transport.connections_opened() - client_before;
            let raw = rate(total, raw_run(&server, lanes, per_lane).await);
            println!(
                "http {name:<13} mcp-hyper {mcp:>9.0} calls/s   raw hyper {raw:>9.0} calls/s   ratio {:.2}   \
                 new connections during the run: client {mcp_client_conns}, server saw {mcp_server_conns} \
                 (raw: {lanes})",
                mcp / raw
            );
        }
        println!(
            "connections over the whole MCP session: client opened {}, for at most {IN_FLIGHT} concurrent streams",
            transport.connections_opened()
        );
        client.close().await;
    });
}
