//! The HTTP client on any executor: one session with the demo server over Streamable HTTP on
//! 127.0.0.1 (handshake, a listing, concurrent calls, a call that times out, close with the
//! session's `DELETE`), through `mcp-hyper` and `mcp-surf`, run by tokio's current-thread and
//! multi-thread runtimes (built without tokio's I/O and time drivers), `async-executor`,
//! `futures::executor::block_on` with the driver joined, and a hand-written loop with a
//! thread-parking waker.
//!
//! Neither transport needs the caller's executor: mcp-hyper's sockets and timers are async-io's
//! and its connection tasks run on smol's global executor (its own threads); mcp-surf's transfers
//! run on libcurl's thread. The stdio side is in mcp-smol's `tests/executors.rs`.

mod demo;

use std::future::Future;
use std::pin::pin;
use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};
use std::thread::{self, Thread};
use std::time::{Duration, Instant};

use demo::DemoHttp;
use mcp_hyper::HyperTransport;
use mcp_sansio::ProtocolVersion;
use mcp_sansio::Status;
use mcp_sansio::http::HttpConfig;
use mcp_sansio::schema::{CallTool, CallToolRequestParams, Implementation};
use mcp_smol::{CallOptions, Client, ClientApi, ClientBuilder, Driver, Error};
use mcp_surf::SurfTransport;
use serde_json::json;

/// How long a whole session may take before the test calls it stranded.
const LIMIT: Duration = Duration::from_secs(30);

/// The executors the session runs on.
#[derive(Debug, Clone, Copy)]
enum Runner {
    TokioCurrentThread,
    TokioMultiThread,
    AsyncExecutor,
    FuturesBlockOn,
    ByHand,
}

impl Runner {
    /// Runs `driver` and `work` to completion on this executor.
    fn run<T: Send + 'static>(self, driver: Driver, work: impl Future<Output = T> + Send + 'static) -> T {
        match self {
            Runner::TokioCurrentThread => {
                // No `enable_io`, no `enable_time`: the client needs none of tokio's drivers.
                let runtime = tokio::runtime::Builder::new_current_thread().build().expect("a runtime");
                runtime.block_on(async {
                    let driver = tokio::spawn(driver);
                    let outcome = work.await;
                    driver.await.expect("the driver task");
                    outcome
                })
            }
            Runner::TokioMultiThread => {
                let runtime =
                    tokio::runtime::Builder::new_multi_thread().worker_threads(2).build().expect("a runtime");
                runtime.block_on(async {
                    let driver = tokio::spawn(driver);
                    let outcome = tokio::spawn(work).await.expect("the session task");
                    driver.await.expect("the driver task");
                    outcome
                })
            }
            Runner::AsyncExecutor => {
                let executor = async_executor::Executor::new();
                futures_lite::future::block_on(executor.run(async {
                    let driver = executor.spawn(driver);
                    let outcome = work.await;
                    driver.await;
                    outcome
                }))
            }
            Runner::FuturesBlockOn => futures::executor::block_on(futures::future::join(driver, work)).1,
            Runner::ByHand => poll_by_hand(driver, work),
        }
    }
}

/// `f`'s outcome, or a panic if it does not finish within [`LIMIT`] (async-io's timer, which
/// works under every executor here).
async fn within<T>(what: &str, f: impl Future<Output = T>) -> T {
    let timeout = async {
        async_io::Timer::after(LIMIT).await;
        panic!("{what}: stranded for {LIMIT:?}");
    };
    futures_lite::future::or(f, timeout).await
}

/// The handshake, a listing, two calls in flight at once, a call that times out (on the
/// connection's clock, async-io's timers), one more call, and close.
async fn session(client: Client) -> Result<(), Error> {
    within("ready", client.ready()).await?;
    let tools = within("list tools", client.list_all_tools()).await?;
    assert!(tools.iter().any(|tool| tool.name == "echo"), "the demo server lists echo");

    let first = client.call_tool("echo", json!({"message": "first"}));
    let second = client.call_tool("echo", json!({"message": "second"}));
    let (first, second) = within("two calls", futures_lite::future::zip(first, second)).await;
    assert_eq!(first?.joined_text().as_deref(), Some("first"));
    assert_eq!(second?.joined_text().as_deref(), Some("second"));

    let params = CallToolRequestParams::new("sleep")
        .with_arguments(json!({"ms": 60_000}).as_object().expect("an object").clone());
    let options = CallOptions::default().timeout(Duration::from_millis(200));
    let started = Instant::now();
    let slept = within("a call that times out", client.request::<CallTool>(&params, options)).await;
    let error = slept.expect_err("the sleep outlasts its timeout");
    assert!(error.is_timeout(), "{error}");
    assert!(started.elapsed() < Duration::from_secs(10), "the timeout fired late: {:?}", started.elapsed());
    let after =
        within("a call after the timeout", client.call_tool("echo", json!({"message": "after"}))).await?;
    assert_eq!(after.joined_text().as_deref(), Some("after"));

    within("close", client.close()).await;
    assert!(matches!(client.status(), Status::Closed(_)), "{:?}", client.status());
    Ok(())
}

#[derive(Debug, Clone, Copy)]
enum Transport {
    Hyper,
    Surf,
}

/// Starts the demo server over HTTP (killed by PID when the test ends), runs the session on
/// `runner` in the `initialize` era (the era with sessions), and checks the server saw the
/// session deleted: close went all the way to the wire.
fn http_session(transport: Transport, runner: Runner) {
    let server = DemoHttp::start();
    let legacy: Vec<_> = ProtocolVersion::LEGACY.iter().rev().copied().collect();
    let builder = ClientBuilder::new(Implementation::new("mcp-executors-tests", "0.0.0"))
        .configure(|c| c.with_versions(&legacy));
    let http = HttpConfig::new(server.url.clone());
    let (client, driver) = match transport {
        Transport::Hyper => builder.connect_http(http, HyperTransport::new()),
        Transport::Surf => builder.connect_http(http, SurfTransport::new()),
    };
    runner.run(driver, session(client)).unwrap_or_else(|e| panic!("{transport:?} on {runner:?}: {e}"));
    let start = Instant::now();
    while !server.stderr().contains("deleted") {
        assert!(
            start.elapsed() < Duration::from_secs(5),
            "{transport:?} on {runner:?}: the session was not deleted\n{}",
            server.stderr()
        );
        thread::sleep(Duration::from_millis(10));
    }
}

#[test]
fn hyper_on_tokio_current_thread() {
    http_session(Transport::Hyper, Runner::TokioCurrentThread);
}

#[test]
fn hyper_on_tokio_multi_thread() {
    http_session(Transport::Hyper, Runner::TokioMultiThread);
}

#[test]
fn hyper_on_async_executor() {
    http_session(Transport::Hyper, Runner::AsyncExecutor);
}

#[test]
fn hyper_on_futures_block_on() {
    http_session(Transport::Hyper, Runner::FuturesBlockOn);
}

#[test]
fn hyper_by_hand() {
    http_session(Transport::Hyper, Runner::ByHand);
}

#[test]
fn surf_on_tokio_current_thread() {
    http_session(Transport::Surf, Runner::TokioCurrentThread);
}

#[test]
fn surf_on_tokio_multi_thread() {
    http_session(Transport::Surf, Runner::TokioMultiThread);
}

#[test]
fn surf_on_async_executor() {
    http_session(Transport::Surf, Runner::AsyncExecutor);
}

#[test]
fn surf_on_futures_block_on() {
    http_session(Transport::Surf, Runner::FuturesBlockOn);
}

#[test]
fn surf_by_hand() {
    http_session(Transport::Surf, Runner::ByHand);
}

/// Wakes the thread that polls by hand.
struct Unpark(Thread);

impl Wake for Unpark {
    fn wake(self: Arc<Self>) {
        self.0.unpark();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        self.0.unpark();
    }
}

/// No executor crate at all: poll the driver and the work on this thread, and park until one
/// of them is woken. A wake during a poll leaves the thread's token set, so the next park
/// returns at once and nothing is missed.
fn poll_by_hand<T>(driver: Driver, work: impl Future<Output = T>) -> T {
    let waker = Waker::from(Arc::new(Unpark(thread::current())));
    let mut cx = Context::from_waker(&waker);
    let mut driver = pin!(driver);
    let mut work = pin!(work);
    let mut driver_done = false;
    let mut outcome = None;
    let deadline = Instant::now() + LIMIT;
    loop {
        if !driver_done {
            driver_done = driver.as_mut().poll(&mut cx).is_ready();
        }
        if outcome.is_none()
            && let Poll::Ready(value) = work.as_mut().poll(&mut cx)
        {
            outcome = Some(value);
        }
        if driver_done && let Some(value) = outcome {
            return value;
        }
        let now = Instant::now();
        assert!(now < deadline, "stranded: driver done {driver_done}, work done {}", outcome.is_some());
        thread::park_timeout(deadline - now);
    }
}
