//! A minimal, fast Streamable HTTP MCP server for benchmarks: hyper 1 on smol, JSON responses,
//! `echo` as its only tool, and a count of the TCP connections it accepted (to show that the
//! client reuses connections instead of reconnecting per call).

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::service::service_fn;
use hyper::{Method, Request, Response, StatusCode};
use serde_json::{Value, json};
use smol_hyper::rt::FuturesIo;

/// A running server; it lives until the process ends.
#[derive(Debug, Clone)]
pub struct BenchServer {
    addr: SocketAddr,
    accepted: Arc<AtomicU64>,
}

impl BenchServer {
    /// Starts the server on 127.0.0.1 on a free port, on its own thread.
    pub fn start() -> std::io::Result<Self> {
        let listener = std::net::TcpListener::bind("127.0.0.1:0")?;
        let addr = listener.local_addr()?;
        let accepted = Arc::new(AtomicU64::new(0));
        let count = accepted.clone();
        let listener = async_io::Async::new(listener)?;
        std::thread::Builder::new().name("bench-http-server".into()).spawn(move || {
            let executor = smol::LocalExecutor::new();
            smol::block_on(executor.run(async {
                loop {
                    let Ok((stream, _)) = listener.accept().await else { continue };
                    let _ = stream.get_ref().set_nodelay(true);
                    count.fetch_add(1, Ordering::Relaxed);
                    executor
                        .spawn(async move {
                            let service = service_fn(handle);
                            let _ = hyper::server::conn::http1::Builder::new()
                                .serve_connection(FuturesIo::new(stream), service)
                                .await;
                        })
                        .detach();
                }
            }));
        })?;
        Ok(Self { addr, accepted })
    }

    /// The MCP endpoint.
    pub fn url(&self) -> String {
        format!("http://{}/mcp", self.addr)
    }

    /// The address it listens on.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// TCP connections accepted so far.
    pub fn connections_accepted(&self) -> u64 {
        self.accepted.load(Ordering::Relaxed)
    }
}

fn reply(status: StatusCode, body: Vec<u8>) -> Response<Full<Bytes>> {
    let mut response = Response::new(Full::new(Bytes::from(body)));
    *response.status_mut() = status;
    let headers = response.headers_mut();
    headers.insert("content-type", hyper::header::HeaderValue::from_static("application/json"));
    headers.insert("mcp-session-id", hyper::header::HeaderValue::from_static("bench-session"));
    response
}

async fn handle(request: Request<Incoming>) -> Result<Response<Full<Bytes>>, Infallible> {
    if request.method() != Method::POST {
        // No server-message stream; DELETE is accepted.
        let status =
            if request.method() == Method::DELETE { StatusCode::OK } else { StatusCode::METHOD_NOT_ALLOWED };
        return Ok(reply(status, Vec::new()));
    }
    let Ok(body) = request.into_body().collect().await else {
        return Ok(reply(StatusCode::BAD_REQUEST, Vec::new()));
    };
    let Ok(message) = serde_json::from_slice::<Value>(&body.to_bytes()) else {
        return Ok(reply(StatusCode::BAD_REQUEST, Vec::new()));
    };
    let (Some(id), Some(method)) = (message.get("id"), message.get("method").and_then(Value::as_str)) else {
        // A notification or an answer.
        return Ok(reply(StatusCode::ACCEPTED, Vec::new()));
    };
    let params = message.get("params").cloned().unwrap_or(Value::Null);
    let result = match method {
        "initialize" => json!({
            "protocolVersion": params
                .get("protocolVersion")
                .and_then(Value::as_str)
                .and_then(|offered| crate::INITIALIZE_VERSIONS.into_iter().find(|v| *v == offered))
                .unwrap_or("2025-11-25"),
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "mcp-bench-http-server", "version": "0.1.0"}
        }),
        "tools/list" => json!({"tools": [{"name": "echo", "inputSchema": {"type": "object"}}]}),
        "tools/call" => {
            let text = params.pointer("/arguments/message").cloned().unwrap_or(json!(""));
            json!({"content": [{"type": "text", "text": text}]})
        }
        "ping" => json!({}),
        _ => {
            let error =
                json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32601, "message": "Method not found"}});
            return Ok(reply(StatusCode::OK, serde_json::to_vec(&error).unwrap_or_default()));
        }
    };
    let response = json!({"jsonrpc": "2.0", "id": id, "result": result});
    Ok(reply(StatusCode::OK, serde_json::to_vec(&response).unwrap_or_default()))
}
