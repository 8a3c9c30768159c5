//! The driver's own life: what callers see when its task is dropped mid-flight.

mod common;

use std::future::Future;
use std::time::Duration;

use common::{builder, demo_server, live_group_members, process_gone, wait_until};
use mcp_smol::mcp_sansio::Status;
use mcp_smol::mcp_sansio::schema::{CallTool, CallToolRequestParams};
use mcp_smol::{CallOptions, ClientApi, Error};
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
