//! The driver's own life: what callers see when its task is dropped mid-flight, and a
//! connection on simulated time.

mod common;

use std::future::Future;
use std::time::{Duration, Instant};

use common::{
    ManualClock, builder, demo_server, demo_server_path, live_group_members, process_gone, wait_until,
};
use mcp_smol::mcp_sansio::Status;
use mcp_smol::mcp_sansio::schema::{CallTool, CallToolRequestParams};
use mcp_smol::{CallOptions, ClientApi, Error, ServerCommand};
use serde_json::json;

/// How long any step may take before the test calls it stranded.
const LIMIT: Duration = Duration::from_secs(5);

/// `f`'s outcome, or `None` if it did not finish within [`LIMIT`]: a stranded caller fails the
/// test instead of hanging it.
async fn within<T>(f: impl Future<Output = T>) -> Option<T> {
    futures_lite::future::or(async { Some(f.await) }, async {
        async_io::Timer::after(LIMIT).await;
        None
    })
    .await
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

#[test]
fn dropping_the_driver_fails_every_call_and_ends_the_connection() {
    let (client, driver) = builder().stdio(&demo_server().arg("--spawn-grandchild")).unwrap();
    let pid = client.server_pid().unwrap();
    let _cleanup = KillGroup(pid);
    smol::block_on(async {
        let driver = smol::spawn(driver);
        within(client.ready()).await.expect("handshake").unwrap();
        let mut notifications = client.notifications();
        let params = CallToolRequestParams::new("sleep")
            .with_arguments(json!({"ms": 600_000}).as_object().unwrap().clone());
        let call = smol::spawn(client.request::<CallTool>(&params, CallOptions::default()));
        // Written after the sleep on the same pipe: once its answer is back, the server is asleep.
        within(client.ping()).await.expect("ping").unwrap();

        // Dropping the task drops the driver, without its graceful shutdown.
        driver.cancel().await;

        let error = within(call).await.expect("the pending call was stranded").unwrap_err();
        assert!(matches!(error, Error::DriverGone) && error.is_retriable(), "{error}");
        let tracked = client.stats().requests_tracked;
        let later = within(client.ping()).await.expect("a later call was stranded").unwrap_err();
        assert!(matches!(later, Error::DriverGone), "{later}");
        assert_eq!(client.stats().requests_tracked, tracked, "a later call is refused unsent");
        assert!(matches!(client.notify("notifications/roots/list_changed", None), Err(Error::DriverGone)));
        assert_eq!(client.pending_requests(), 0);
        let not_ready = within(client.ready()).await.expect("ready() was stranded");
        assert!(matches!(not_ready, Err(Error::DriverGone)), "{not_ready:?}");
        assert!(matches!(client.status(), Status::Closed(_)), "{:?}", client.status());
        within(client.closed()).await.expect("closed() was stranded");
        within(client.close()).await.expect("close() was stranded");
        let next = within(notifications.next()).await.expect("the notification stream was stranded");
        assert!(next.is_none(), "the notification stream ends");
    });
    assert!(wait_until(LIMIT, || live_group_members(pid).is_empty()), "the process group survived");
    assert!(wait_until(LIMIT, || process_gone(pid, false)), "server {pid} not reaped");
    drop(client);
}

#[test]
fn a_request_timeout_fires_when_simulated_time_passes_it() {
    let clock = ManualClock::new();
    let (client, driver) = builder().clock(clock.clone()).stdio(&demo_server()).unwrap();
    let pid = client.server_pid().unwrap();
    let _cleanup = KillGroup(pid);
    let started = Instant::now();
    smol::block_on(async {
        let driver = smol::spawn(driver);
        within(client.ready()).await.expect("handshake").unwrap();
        let params = CallToolRequestParams::new("sleep")
            .with_arguments(json!({"ms": 600_000}).as_object().unwrap().clone());
        let options = CallOptions::default().timeout(Duration::from_secs(60));
        let call = smol::spawn(client.request::<CallTool>(&params, options));
        within(client.ping()).await.expect("ping").unwrap();

        clock.advance(Duration::from_secs(59));
        // A round trip after the move: the driver has run at +59 s, and the call still waits.
        within(client.ping()).await.expect("ping").unwrap();
        assert!(!call.is_finished(), "timed out before its deadline");

        clock.advance(Duration::from_secs(2));
        let error = within(call).await.expect("the timeout did not fire").unwrap_err();
        assert!(error.is_timeout(), "{error}");
        within(client.close()).await.expect("close");
        within(driver).await.expect("driver");
    });
    assert!(started.elapsed() < Duration::from_secs(10), "took {:?} of real time", started.elapsed());
    assert!(process_gone(pid, false), "server {pid} not reaped");
}

#[test]
fn dropping_the_driver_during_its_shutdown_still_kills_the_group() {
    // The shell outlives the server's EOF and ignores SIGTERM, so the shutdown waits; on a
    // clock that never moves, it waits until the driver is dropped.
    let script = format!("trap '' TERM; '{}'; sleep 30", demo_server_path().display());
    let command = ServerCommand::new("sh").args(["-c", &script]);
    let (client, driver) = builder().clock(ManualClock::new()).stdio(&command).unwrap();
    let pid = client.server_pid().unwrap();
    let _cleanup = KillGroup(pid);
    smol::block_on(async {
        let driver = smol::spawn(driver);
        within(client.ready()).await.expect("handshake").unwrap();
        // Starts the shutdown without waiting for it: a limit of zero is reached at once.
        assert!(!client.close_within(Duration::ZERO).await);
        // The server saw its stdin close and exited: the driver is in its shutdown sequence.
        let sleeping = || live_group_members(pid).iter().any(|&p| command_name(p) == "sleep");
        assert!(wait_until(LIMIT, sleeping), "the server did not exit at EOF");
        driver.cancel().await;
        within(client.closed()).await.expect("closed() was stranded");
    });
    assert!(wait_until(LIMIT, || live_group_members(pid).is_empty()), "the process group survived");
    assert!(wait_until(LIMIT, || process_gone(pid, false)), "shell {pid} not reaped");
}

/// The command name of process `pid` (`/proc/<pid>/comm`).
fn command_name(pid: u32) -> String {
    std::fs::read_to_string(format!("/proc/{pid}/comm")).unwrap_or_default().trim().to_owned()
}

/// A call waiting for its response drives the connection itself: with the driver's task not
/// polled at all after the handshake, calls still get their responses, and a deadline still
/// fires.
#[test]
fn a_waiting_call_drives_the_connection_while_the_driver_is_not_polled() {
    let (client, driver) = builder().stdio(&demo_server()).unwrap();
    let pid = client.server_pid().unwrap();
    let _cleanup = KillGroup(pid);
    let mut driver = Box::pin(driver);
    smol::block_on(async {
        // The handshake with the driver polled; then the driver is left alone, not dropped.
        let handshake = futures_lite::future::or(
            async {
                driver.as_mut().await;
                panic!("the driver ended during the handshake")
            },
            client.ready(),
        );
        within(handshake).await.expect("handshake").unwrap();

        for i in 0..3 {
            let message = format!("call {i}");
            let echo = within(client.call_tool("echo", json!({ "message": message })))
                .await
                .expect("a call with the driver not polled was stranded")
                .unwrap();
            assert_eq!(echo.content[0].as_text(), Some(message.as_str()));
        }
        let sleep = CallToolRequestParams::new("sleep")
            .with_arguments(json!({"ms": 600_000}).as_object().unwrap().clone());
        let options = CallOptions::default().timeout(Duration::from_millis(200));
        let error = within(client.request::<CallTool>(&sleep, options))
            .await
            .expect("the deadline of a call driving the connection did not fire")
            .unwrap_err();
        assert!(error.is_timeout(), "{error}");

        // The driver shuts the server down as usual.
        within(futures_lite::future::zip(driver.as_mut(), client.close())).await.expect("close");
    });
    assert!(process_gone(pid, false), "server {pid} not reaped");
}

/// A call that drives the connection and is then not polled, though woken, must not hold the
/// connection's news back: the driver's watch takes the rounds back, and another call made
/// meanwhile gets its answer.
#[test]
fn a_call_woken_but_not_polled_does_not_hold_the_connection() {
    smol::block_on(async {
        let client = within(builder().spawn_stdio(&demo_server())).await.expect("spawn").unwrap();
        let pid = client.server_pid().unwrap();
        let _cleanup = KillGroup(pid);
        // A call first: it drove the connection, which started the driver's watch; after a
        // moment the driver's task is idle, and nothing but the watch will wake it.
        within(client.call_tool("echo", json!({"message": "first"}))).await.expect("echo").unwrap();
        async_io::Timer::after(Duration::from_millis(20)).await;
        let sleep = CallToolRequestParams::new("sleep")
            .with_arguments(json!({"ms": 600_000}).as_object().unwrap().clone());
        // Polled once: it drives the connection, and its wake-ups go to this task from now on.
        let mut stuck = Box::pin(client.request::<CallTool>(&sleep, CallOptions::default()));
        assert!(futures_lite::future::poll_once(stuck.as_mut()).await.is_none());
        // This task now awaits another call only: the first one is woken, never polled.
        let started = Instant::now();
        let echo = within(client.call_tool("echo", json!({"message": "past the stuck one"})))
            .await
            .expect("a call not polled held the connection")
            .unwrap();
        assert_eq!(echo.content[0].as_text(), Some("past the stuck one"));
        eprintln!("answered after {:?} (the watch runs every 100 ms)", started.elapsed());
        drop(stuck);
        within(client.close()).await.expect("close");
        assert!(process_gone(pid, false), "server {pid} not reaped");
    });
}
