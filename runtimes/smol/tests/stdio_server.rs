//! The smol driver against the demo server as a real child process: pagination, progress,
//! cancellation, and everything that goes wrong with processes. (Every typed call, in both eras
//! and over every transport, is in the conformance crate's `demo_eras.rs`.)

mod common;

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use common::{builder, demo_server, live_group_members, process_gone, wait_until};
use mcp_smol::ClientApi;
use mcp_smol::mcp_sansio::schema::{CallTool, CallToolRequestParams};
use mcp_smol::mcp_sansio::{CloseReason, RequestError, ServerExit};
use mcp_smol::{CallOptions, Error, ServerCommand};
use serde_json::json;

#[test]
fn pagination_helpers_follow_cursors() {
    smol::block_on(async {
        let paged = builder().spawn_stdio(&demo_server().args(["--page-size", "2"])).await.unwrap();
        let whole = builder().spawn_stdio(&demo_server()).await.unwrap();
        let first_page = paged.list_tools(None).await.unwrap();
        assert_eq!(first_page.tools.len(), 2);
        assert!(first_page.next_cursor.is_some());
        let all_paged: Vec<_> = paged.list_all_tools().await.unwrap().into_iter().map(|t| t.name).collect();
        let all_whole: Vec<_> = whole.list_all_tools().await.unwrap().into_iter().map(|t| t.name).collect();
        assert_eq!(all_paged, all_whole);
        assert!(all_whole.len() > 2);
        assert_eq!(
            paged.list_all_resources().await.unwrap().len(),
            whole.list_all_resources().await.unwrap().len()
        );
        paged.close().await;
        whole.close().await;
    });
}

#[test]
fn progress_reaches_the_callback() {
    smol::block_on(async {
        let client = builder().spawn_stdio(&demo_server()).await.unwrap();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let sink = seen.clone();
        let options =
            CallOptions::default().on_progress(move |p| sink.lock().unwrap().push((p.progress, p.total)));
        let params = CallToolRequestParams::new("long_running")
            .with_arguments(json!({"steps": 4, "step_ms": 10}).as_object().unwrap().clone());
        let result = client.call_tool_with(&params, options).await.unwrap();
        assert_eq!(result.content[0].as_text(), Some("done after 4 steps"));
        assert_eq!(
            *seen.lock().unwrap(),
            [(1.0, Some(4.0)), (2.0, Some(4.0)), (3.0, Some(4.0)), (4.0, Some(4.0))]
        );
        client.close().await;
    });
}

#[test]
fn a_server_dying_mid_call_fails_the_call_promptly() {
    smol::block_on(async {
        let client = builder().spawn_stdio(&demo_server()).await.unwrap();
        let pid = client.server_pid().unwrap();
        // `request` sends at once (an `async fn` wrapper would send on its first poll).
        let sleep = CallToolRequestParams::new("sleep")
            .with_arguments(json!({"ms": 60_000}).as_object().unwrap().clone());
        let other = client.request::<CallTool>(&sleep, CallOptions::default());
        let start = Instant::now();
        let crash = client.call_tool("crash", json!({})).await.unwrap_err();
        assert!(start.elapsed() < Duration::from_secs(5), "took {:?}", start.elapsed());
        // The demo server's `crash` exits with status 3, which the close reason carries.
        let exited = CloseReason::Exited(ServerExit::Code(3));
        assert!(
            matches!(&crash, Error::Request(RequestError::ConnectionClosed(reason)) if *reason == exited),
            "unexpected error: {crash}"
        );
        assert!(crash.to_string().contains("server process ended: exited with status 3"), "{crash}");
        // A call that was already in flight fails the same way instead of waiting 60 s.
        let other = other.await;
        assert!(matches!(&other, Err(Error::Request(RequestError::ConnectionClosed(r))) if *r == exited));
        client.closed().await;
        assert!(process_gone(pid, false));
    });
}

#[test]
fn a_server_ignoring_sigterm_is_killed_within_the_bound() {
    let step = Duration::from_millis(300);
    // `trap '' TERM` makes the shell and everything it starts ignore SIGTERM; after the demo
    // server exits on EOF, the stubborn `sleep` keeps the group alive.
    let script = format!("trap '' TERM; '{}'; sleep 30", common::demo_server_path().display());
    let command = ServerCommand::new("sh").args(["-c", &script]).shutdown_step(step);
    smol::block_on(async {
        let client = builder().spawn_stdio(&command).await.unwrap();
        let pid = client.server_pid().unwrap();
        let start = Instant::now();
        client.close().await;
        let took = start.elapsed();
        // Both waits ran (stdin close, then SIGTERM ignored), then SIGKILL ended it.
        assert!(took >= step * 2, "closed in {took:?}: SIGTERM should have been ignored");
        assert!(took < step * 2 + Duration::from_secs(2), "closed in {took:?}");
        assert!(process_gone(pid, false));
        assert!(wait_until(Duration::from_secs(2), || live_group_members(pid).is_empty()));
    });
}

#[test]
fn a_grandchild_is_gone_after_close() {
    let grandchild = Arc::new(Mutex::new(None::<u32>));
    let found = grandchild.clone();
    let command = demo_server().arg("--spawn-grandchild").stderr_to(move |line| {
        if let Some(pid) = line.strip_prefix("demo-server: grandchild pid ") {
            *found.lock().unwrap() = pid.trim().parse().ok();
        }
    });
    smol::block_on(async {
        let client = builder().spawn_stdio(&command).await.unwrap();
        let pid = client.server_pid().unwrap();
        assert!(wait_until(Duration::from_secs(5), || grandchild.lock().unwrap().is_some()));
        let grandchild = grandchild.lock().unwrap().unwrap();
        assert!(!process_gone(grandchild, true), "the grandchild should run until close");
        client.close().await;
        assert!(process_gone(pid, false));
        assert!(wait_until(Duration::from_secs(2), || process_gone(grandchild, true)), "grandchild survived");
        assert!(live_group_members(pid).is_empty());
    });
}

#[test]
fn a_server_flooding_stderr_does_not_deadlock() {
    let lines = Arc::new(Mutex::new(0usize));
    let counter = lines.clone();
    let command = demo_server().arg("--flood-stderr").stderr_to(move |_| *counter.lock().unwrap() += 1);
    smol::block_on(async {
        let client = builder().spawn_stdio(&command).await.unwrap();
        for i in 0..100 {
            let result = client.call_tool("echo", json!({"message": format!("m{i}")})).await.unwrap();
            assert_eq!(result.content[0].as_text(), Some(format!("m{i}").as_str()));
        }
        // A burst far larger than a pipe buffer (64 KiB) in the middle of a call.
        let burst = client.call_tool("stderr_burst", json!({"bytes": 1024 * 1024})).await.unwrap();
        assert_eq!(burst.content[0].as_text(), Some("wrote 1048576 bytes"));
        assert!(*lines.lock().unwrap() > 500, "stderr was not drained");
        let pid = client.server_pid().unwrap();
        client.close().await;
        assert!(process_gone(pid, false));
    });
}

#[test]
fn dropping_a_call_future_cancels_the_request() {
    smol::block_on(async {
        let client = builder().spawn_stdio(&demo_server()).await.unwrap();
        let call = client.call_tool("sleep", json!({"ms": 30_000}));
        // Poll the call for a moment, then give up on it: the future is dropped.
        let outcome = futures_lite::future::or(async { Some(call.await) }, async {
            async_io::Timer::after(Duration::from_millis(100)).await;
            None
        })
        .await;
        assert!(outcome.is_none(), "the sleep should still have been running");
        // The server saw notifications/cancelled for the sleep request (id 1: initialize is 0).
        let mut cancelled = String::new();
        for _ in 0..100 {
            let result = client.call_tool("cancelled_requests", json!({})).await.unwrap();
            cancelled = result.content[0].as_text().unwrap().to_owned();
            if cancelled != "[]" {
                break;
            }
            async_io::Timer::after(Duration::from_millis(10)).await;
        }
        assert_eq!(cancelled, "[1]");
        client.close().await;
    });
}

#[test]
fn a_calls_id_is_the_one_the_server_sees() {
    smol::block_on(async {
        let client = builder().spawn_stdio(&demo_server()).await.unwrap();
        // A few calls first, so that the id is not a lucky guess.
        for _ in 0..3 {
            client.call_tool("echo", json!({"message": "x"})).await.unwrap();
        }
        let sent = Arc::new(Mutex::new(None));
        let seen = sent.clone();
        let options = CallOptions::default()
            .timeout(Duration::from_millis(200))
            .on_sent(move |id| *seen.lock().unwrap() = Some(id.clone()));
        let error = client.call_tool_with_options("sleep", json!({"ms": 30_000}), options).await.unwrap_err();
        assert!(error.is_timeout(), "{error:?}");
        let id = sent.lock().unwrap().clone().expect("on_sent ran when the call was made");
        // The server lists the ids it saw cancelled: the call's is among them.
        let mut cancelled = String::new();
        for _ in 0..100 {
            let result = client.call_tool("cancelled_requests", json!({})).await.unwrap();
            cancelled = result.content[0].as_text().unwrap().to_owned();
            if cancelled != "[]" {
                break;
            }
            async_io::Timer::after(Duration::from_millis(10)).await;
        }
        assert_eq!(cancelled, format!("[{id}]"));
        client.close().await;
    });
}

#[test]
fn a_timed_out_call_fails_and_the_server_hears_of_it() {
    smol::block_on(async {
        let client = builder().spawn_stdio(&demo_server()).await.unwrap();
        let params = CallToolRequestParams::new("sleep")
            .with_arguments(json!({"ms": 30_000}).as_object().unwrap().clone());
        let start = Instant::now();
        let error = client
            .call_tool_with(&params, CallOptions::default().timeout(Duration::from_millis(200)))
            .await
            .unwrap_err();
        assert!(error.is_timeout(), "{error}");
        assert!(start.elapsed() < Duration::from_secs(3));
        let result = client.call_tool("cancelled_requests", json!({})).await.unwrap();
        assert_eq!(result.content[0].as_text(), Some("[1]"));
        client.close().await;
    });
}

#[test]
fn dropping_every_client_handle_shuts_the_server_down() {
    let pid = smol::block_on(async {
        let client = builder().spawn_stdio(&demo_server()).await.unwrap();
        let copy = client.clone();
        let pid = client.server_pid().unwrap();
        drop(client);
        copy.ping().await.unwrap();
        drop(copy);
        pid
    });
    // The driver (on its own thread) notices, closes stdin and reaps the child.
    assert!(wait_until(Duration::from_secs(5), || process_gone(pid, false)), "server {pid} left behind");
}

#[test]
fn dropping_the_driver_kills_the_process_group() {
    let (client, driver) = builder().stdio(&demo_server().arg("--spawn-grandchild")).unwrap();
    let pid = client.server_pid().unwrap();
    smol::block_on(async {
        let ready = async {
            client.ready().await.unwrap();
            true
        };
        let run = async {
            driver.await;
            false
        };
        assert!(futures_lite::future::or(ready, run).await);
        // Leaving the block drops the driver without its graceful shutdown.
    });
    assert!(wait_until(Duration::from_secs(5), || live_group_members(pid).is_empty()), "group survived");
    assert!(wait_until(Duration::from_secs(5), || process_gone(pid, false)), "server not reaped");
    drop(client);
}

#[test]
fn a_missing_program_is_a_clear_spawn_error() {
    let error = builder().stdio(&ServerCommand::new("/nonexistent/mcp-server")).unwrap_err();
    assert!(matches!(error, Error::Spawn { .. }));
    assert!(error.to_string().contains("/nonexistent/mcp-server"), "{error}");
}

#[test]
fn a_server_that_exits_before_the_handshake_is_a_connect_error() {
    smol::block_on(async {
        let error = builder().spawn_stdio(&ServerCommand::new("true")).await.unwrap_err();
        assert!(matches!(error, Error::Connect(CloseReason::Exited(ServerExit::Code(0)))), "{error}");
    });
}

#[test]
fn only_allow_listed_and_explicit_environment_reaches_the_server() {
    // Cargo sets CARGO_PKG_NAME for the test process; it is not on the allow-list.
    assert!(std::env::var_os("CARGO_PKG_NAME").is_some());
    let script = "printf '%s|%s|%s' \"${CARGO_PKG_NAME-unset}\" \"${EXPLICIT-unset}\" \"${PATH:+path}\" >&2";
    let seen = Arc::new(Mutex::new(String::new()));
    let sink = seen.clone();
    let command = ServerCommand::new("sh")
        .args(["-c", script])
        .env("EXPLICIT", "yes")
        .stderr_to(move |line| sink.lock().unwrap().push_str(line));
    smol::block_on(async {
        let error = builder().spawn_stdio(&command).await.unwrap_err();
        assert!(matches!(error, Error::Connect(CloseReason::Exited(ServerExit::Code(0)))), "{error}");
    });
    assert!(wait_until(Duration::from_secs(2), || !seen.lock().unwrap().is_empty()));
    assert_eq!(*seen.lock().unwrap(), "unset|yes|path");
}

#[test]
fn the_server_runs_in_the_requested_directory() {
    let dir = std::env::temp_dir().canonicalize().unwrap();
    let seen = Arc::new(Mutex::new(String::new()));
    let sink = seen.clone();
    let command = ServerCommand::new("sh")
        .args(["-c", "pwd >&2"])
        .current_dir(&dir)
        .stderr_to(move |line| sink.lock().unwrap().push_str(line));
    smol::block_on(async {
        let outcome = builder().spawn_stdio(&command).await;
        assert!(
            matches!(outcome, Err(Error::Connect(CloseReason::Exited(ServerExit::Code(0))))),
            "{outcome:?}"
        );
    });
    assert!(
        wait_until(Duration::from_secs(2), || !seen.lock().unwrap().is_empty()),
        "the server's stderr line never arrived"
    );
    assert_eq!(*seen.lock().unwrap(), dir.display().to_string());
}
