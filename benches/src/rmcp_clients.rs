//! The official Rust SDK's client, rmcp, run the way its documentation shows, so that the
//! end-to-end benches can print it beside ours against the same server in the same run
//! (feature `rmcp`; `cargo build --release -p mcp-benches --bins --features rmcp`).
//!
//! - stdio: `().serve(TokioChildProcess::new(command)?)`, then `call_tool` on the running
//!   service;
//! - Streamable HTTP: `().serve(StreamableHttpClientTransport::from_uri(url))`, the reqwest
//!   transport with its default client and configuration. That client keeps no idle
//!   connection (`pool_max_idle_per_host(0)`), so every POST opens a TCP connection, and at most
//!   16 POSTs run at once. The `pooled` variant passes its own `reqwest::Client` (which keeps
//!   connections) to `with_client`, with `max_concurrent_requests` raised to the lanes' count,
//!   to show what those two defaults cost.
//!
//! Each runs on a tokio runtime built here: current-thread (`rmcp-ct`) or multi-thread
//! (`rmcp-mt`, the runtime `#[tokio::main]` builds). Sequential calls are made from the
//! runtime's `block_on`, as from `#[tokio::main]`'s body; concurrent lanes are `tokio::spawn`ed.

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use rmcp::service::{RoleClient, RunningService};
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};

/// The tokio runtime rmcp runs on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Runtime {
    /// `Builder::new_current_thread()`: rmcp's tasks and the callers share one thread.
    CurrentThread,
    /// `Builder::new_multi_thread()`: worker threads as many as the CPUs the process may use
    /// (one when pinned).
    MultiThread,
}

impl Runtime {
    /// Both, in the order the benches print them.
    pub const ALL: [Runtime; 2] = [Runtime::CurrentThread, Runtime::MultiThread];

    /// The row name (`rmcp-ct` or `rmcp-mt`).
    pub fn name(self) -> &'static str {
        match self {
            Runtime::CurrentThread => "rmcp-ct",
            Runtime::MultiThread => "rmcp-mt",
        }
    }

    /// The runtime named `name` ([`Runtime::name`]).
    pub fn parse(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|r| r.name() == name)
    }

    /// The runtime, never dropped: its worker threads must outlive the measurement, because
    /// the CPU time of a thread that exited is no longer counted (`process_stats::cpu_time`).
    /// The worker process ends right after.
    fn build(self) -> &'static tokio::runtime::Runtime {
        let runtime = match self {
            Runtime::CurrentThread => tokio::runtime::Builder::new_current_thread(),
            Runtime::MultiThread => tokio::runtime::Builder::new_multi_thread(),
        }
        .enable_all()
        .build()
        .expect("tokio runtime");
        Box::leak(Box::new(runtime))
    }
}

/// One `tools/call` as a workload makes it, and the length of the text its result must hold.
#[derive(Clone, Debug)]
pub struct ToolCall {
    /// The tool's name.
    pub name: &'static str,
    /// Its arguments (a JSON object).
    pub arguments: serde_json::Value,
    /// The length of the text content the result must hold.
    pub expected_len: usize,
}

/// What a measurement does: `warmup` unmeasured sequential calls, then `calls` calls spread
/// over `lanes` concurrent lanes (one lane: sequential calls).
#[derive(Clone, Copy, Debug)]
pub struct Load {
    /// Unmeasured calls first.
    pub warmup: usize,
    /// Measured calls (a multiple of `lanes`).
    pub calls: usize,
    /// Concurrent lanes, each making its share of the calls one after the other.
    pub lanes: usize,
}

type Client = Arc<RunningService<RoleClient, ()>>;

async fn one(client: &Client, call: &ToolCall) {
    let serde_json::Value::Object(arguments) = call.arguments.clone() else {
        panic!("tool arguments must be an object")
    };
    let params = CallToolRequestParams::new(call.name).with_arguments(arguments);
    let result = client.call_tool(params).await.expect("rmcp call_tool");
    let text = result.content.first().and_then(|c| c.as_text()).expect("a text result");
    assert_eq!(text.text.len(), call.expected_len);
}

/// Warms up, then returns how long the measured calls took.
async fn measure(client: &Client, call: &ToolCall, load: Load) -> Duration {
    for _ in 0..load.warmup {
        one(client, call).await;
    }
    let start = Instant::now();
    if load.lanes == 1 {
        for _ in 0..load.calls {
            one(client, call).await;
        }
    } else {
        let per_lane = load.calls / load.lanes;
        let lanes: Vec<_> = (0..load.lanes)
            .map(|_| {
                let (client, call) = (client.clone(), call.clone());
                tokio::spawn(async move {
                    for _ in 0..per_lane {
                        one(&client, &call).await;
                    }
                })
            })
            .collect();
        for lane in lanes {
            lane.await.expect("lane");
        }
    }
    start.elapsed()
}

async fn finish(client: Client) {
    if let Ok(client) = Arc::try_unwrap(client) {
        let _ = client.cancel().await;
    }
}

/// rmcp over stdio against `server` (spawned with no arguments).
pub fn stdio_run(runtime: Runtime, server: &Path, call: &ToolCall, load: Load) -> Duration {
    runtime.build().block_on(async {
        let command = tokio::process::Command::new(server);
        let transport = TokioChildProcess::new(command).expect("spawn the server");
        let client: Client = Arc::new(().serve(transport).await.expect("rmcp initialize"));
        let elapsed = measure(&client, call, load).await;
        finish(client).await;
        elapsed
    })
}

/// rmcp over Streamable HTTP against the endpoint `url`: with the documented defaults
/// (`from_uri`), or `pooled` (a `reqwest::Client` that keeps connections, and as many POSTs at
/// once as there are lanes).
pub fn http_run(runtime: Runtime, pooled: bool, url: &str, call: &ToolCall, load: Load) -> Duration {
    runtime.build().block_on(async {
        let transport = if pooled {
            let config =
                StreamableHttpClientTransportConfig::with_uri(url).max_concurrent_requests(load.lanes);
            StreamableHttpClientTransport::with_client(reqwest::Client::new(), config)
        } else {
            StreamableHttpClientTransport::from_uri(url)
        };
        let client: Client = Arc::new(().serve(transport).await.expect("rmcp initialize"));
        let elapsed = measure(&client, call, load).await;
        finish(client).await;
        elapsed
    })
}
