//! The client on any executor: the same stdio session (handshake, a listing, concurrent calls, a
//! call that times out, close) run by tokio's current-thread and multi-thread runtimes (built
//! without any of tokio's drivers: no I/O, no timers), `async-executor`,
//! `futures::executor::block_on` with the driver joined, and a hand-written loop that polls the
//! driver and the session with a thread-parking waker. Each one ends with the demo server's
//! process reaped.
//!
//! It works because nothing in the client belongs to an executor: the pipes and timers are
//! async-io's (its own reactor thread), the child process is async-process's, and the
//! [`Driver`] is a plain future that whoever polls it drives. The HTTP side (mcp-hyper and
//! mcp-surf on the same executors) is in the conformance crate's `tests/executors_http.rs`.

mod common;

use std::future::Future;
use std::pin::pin;
use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};
use std::thread::{self, Thread};
use std::time::{Duration, Instant};

use common::{default_builder, demo_server, live_group_members, process_gone, wait_until};
use mcp_smol::mcp_sansio::Status;
use mcp_smol::mcp_sansio::schema::{CallTool, CallToolRequestParams};
use mcp_smol::{CallOptions, Client, ClientApi, Driver, Error};
use serde_json::json;

/// How long a whole session may take before the test calls it stranded.
const LIMIT: Duration = Duration::from_secs(20);

/// `f`'s outcome, or a panic if it does not finish within [`LIMIT`]. The timer is async-io's,
/// which works under every executor here.
async fn within<T>(what: &str, f: impl Future<Output = T>) -> T {
    let timeout = async {
        async_io::Timer::after(LIMIT).await;
        panic!("{what}: stranded for {LIMIT:?}");
    };
    futures_lite::future::or(f, timeout).await
}

/// What every executor runs: the handshake, a listing, two calls in flight at once, a call
/// that times out (the connection's deadline fires on async-io's timer, not the executor's),
/// then close, which returns once the server process is gone.
async fn session(client: Client) -> Result<(), Error> {
    within("ready", client.ready()).await?;
    let tools = within("list tools", client.list_all_tools()).await?;
    assert!(tools.iter().any(|tool| tool.name == "echo"), "the demo server lists echo");

    // Both requests are sent before either is awaited.
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
    // The connection is still fine after the timeout (the sleep was cancelled).
    let after =
        within("a call after the timeout", client.call_tool("echo", json!({"message": "after"}))).await?;
    assert_eq!(after.joined_text().as_deref(), Some("after"));

    within("close", client.close()).await;
    assert!(matches!(client.status(), Status::Closed(_)), "{:?}", client.status());
    Ok(())
}

/// Kills a process group when the test ends, whatever its outcome, so a failing test leaves
/// nothing behind.
struct KillGroup(u32);

impl Drop for KillGroup {
    fn drop(&mut self) {
        if !live_group_members(self.0).is_empty() {
            let _ =
                std::process::Command::new("kill").args(["-KILL", "--", &format!("-{}", self.0)]).status();
        }
    }
}

/// Starts the demo server, hands the driver and the session to `run`, and checks the server
/// process is gone (reaped by us) afterwards.
fn stdio_session(run: impl FnOnce(Driver, Client) -> Result<(), Error>) {
    let (client, driver) = default_builder().stdio(&demo_server()).expect("start the demo server");
    let pid = client.server_pid().expect("a pid");
    let _cleanup = KillGroup(pid);
    run(driver, client).expect("the session");
    assert!(wait_until(Duration::from_secs(5), || process_gone(pid, false)), "server {pid} not reaped");
    assert!(live_group_members(pid).is_empty(), "the server's process group survived");
}

#[test]
fn tokio_current_thread() {
    stdio_session(|driver, client| {
        // No `enable_io`, no `enable_time`: the client needs none of tokio's drivers.
        let runtime = tokio::runtime::Builder::new_current_thread().build().expect("a runtime");
        runtime.block_on(async {
            let driver = tokio::spawn(driver);
            session(client).await?;
            driver.await.expect("the driver task");
            Ok(())
        })
    });
}

#[test]
fn tokio_multi_thread() {
    stdio_session(|driver, client| {
        let runtime =
            tokio::runtime::Builder::new_multi_thread().worker_threads(2).build().expect("a runtime");
        runtime.block_on(async {
            // Both on the worker threads, the session apart from the driver.
            let driver = tokio::spawn(driver);
            let session = tokio::spawn(session(client));
            session.await.expect("the session task")?;
            driver.await.expect("the driver task");
            Ok(())
        })
    });
}

#[test]
fn async_executor() {
    stdio_session(|driver, client| {
        let executor = async_executor::Executor::new();
        futures_lite::future::block_on(executor.run(async {
            let driver = executor.spawn(driver);
            session(client).await?;
            driver.await;
            Ok(())
        }))
    });
}

#[test]
fn futures_block_on_with_the_driver_joined() {
    stdio_session(|driver, client| {
        // No spawning at all: the driver and the session are two halves of one future.
        let ((), outcome) = futures::executor::block_on(futures::future::join(driver, session(client)));
        outcome
    });
}

#[test]
fn a_hand_written_loop() {
    stdio_session(|driver, client| poll_by_hand(driver, session(client)));
}

#[test]
fn dropping_a_tokio_runtime_drops_the_driver_and_kills_the_server() {
    let (client, driver) = default_builder().stdio(&demo_server()).expect("start the demo server");
    let pid = client.server_pid().expect("a pid");
    let _cleanup = KillGroup(pid);
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(1).build().expect("a runtime");
    runtime.spawn(driver);
    let listed = runtime.block_on(async {
        within("ready", client.ready()).await?;
        within("list tools", client.list_tools(None)).await
    });
    listed.expect("a call before the shutdown");
    // The driver's task is dropped with the runtime: the server goes at once.
    drop(runtime);
    assert!(wait_until(Duration::from_secs(5), || live_group_members(pid).is_empty()), "the server survived");
    assert!(wait_until(Duration::from_secs(5), || process_gone(pid, false)), "server {pid} not reaped");
    let later = futures_lite::future::block_on(client.list_tools(None)).expect_err("no driver, no call");
    assert!(matches!(later, Error::DriverGone), "{later}");
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

/// No executor crate at all: poll the driver and the session on this thread, and park until
/// one of them is woken. A wake that comes during a poll leaves the thread's token set, so the
/// next park returns at once and nothing is missed.
fn poll_by_hand<T>(driver: Driver, session: impl Future<Output = T>) -> T {
    let waker = Waker::from(Arc::new(Unpark(thread::current())));
    let mut cx = Context::from_waker(&waker);
    let mut driver = pin!(driver);
    let mut session = pin!(session);
    let mut driver_done = false;
    let mut outcome = None;
    let deadline = Instant::now() + LIMIT;
    loop {
        if !driver_done {
            driver_done = driver.as_mut().poll(&mut cx).is_ready();
        }
        if outcome.is_none() {
            if let Poll::Ready(value) = session.as_mut().poll(&mut cx) {
                outcome = Some(value);
            }
        }
        if driver_done {
            if let Some(value) = outcome {
                return value;
            }
        }
        let now = Instant::now();
        assert!(now < deadline, "stranded: driver done {driver_done}, session done {}", outcome.is_some());
        thread::park_timeout(deadline - now);
    }
}
