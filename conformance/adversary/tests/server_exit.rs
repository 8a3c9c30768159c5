//! Stdio servers that end: a handshake answered right before the server's stdout closes (or the
//! server exits), the server's exit status in the close reason and in what `close()` reports,
//! and `close()` within its documented bound against a server that stopped reading and ignores
//! SIGTERM.

mod common;

use std::future::Future;
use std::time::{Duration, Instant};

use common::{live_group_members, process_gone, wait_until};
use mcp_smol::mcp_sansio::schema::{CallToolRequestParams, EmptyParams, EmptyResult, Implementation, Ping};
use mcp_smol::mcp_sansio::{CloseReason, ProtocolVersion, RequestError, ServerExit, Status, UsageError};
use mcp_smol::{CallOptions, Client, ClientApi, ClientBuilder, EndedBy, Error, ServerCommand, ServerEnd};
use serde_json::json;

/// Each wait of the shutdown sequence.
const STEP: Duration = Duration::from_millis(300);

/// How many times a racy case runs: a race lost about one run in two shows within a few.
const RUNS: usize = 50;

fn command(mode: &str) -> ServerCommand {
    ServerCommand::new(common::adversary_path()).args(["stdio", mode]).shutdown_step(STEP)
}

/// A builder pinned to the `initialize` era.
fn builder() -> ClientBuilder {
    ClientBuilder::new(Implementation::new("mcp-adversary-tests", "0.0.0"))
        .configure(|c| c.with_versions(ProtocolVersion::LEGACY))
}

async fn ping(client: &Client) -> Result<EmptyResult, Error> {
    client
        .request::<Ping>(&EmptyParams::default(), CallOptions::default().timeout(Duration::from_secs(5)))
        .await
}

/// `f`'s outcome, or a panic naming `what` if it takes more than 10 s.
async fn within<T>(what: &str, f: impl Future<Output = T>) -> T {
    let limit = async {
        smol::Timer::after(Duration::from_secs(10)).await;
        panic!("{what} took more than 10 s");
    };
    futures_lite::future::or(f, limit).await
}

/// What ended the server and its status, for comparing (`ServerEnd` cannot be built outside
/// its crate).
fn parts(end: Option<ServerEnd>) -> Option<(EndedBy, Option<ServerExit>)> {
    end.map(|end| (end.by, end.exit))
}

#[test]
fn a_handshake_answered_right_before_stdout_closes_is_ready() {
    let _guard = common::serial();
    smol::block_on(async {
        for run in 0..RUNS {
            // The `initialize` answer and the EOF arrive together; the server lives on.
            let outcome = within("the handshake", builder().spawn_stdio(&command("close_stdout"))).await;
            let client = outcome.unwrap_or_else(|e| panic!("run {run}: a completed handshake failed: {e}"));
            let pid = client.server_pid().expect("a pid");
            assert_eq!(client.protocol_version(), Some(ProtocolVersion::V2025_11_25), "run {run}");
            // What follows fails as closed by the EOF: the server lived on, so no exit status.
            let closed = || matches!(client.status(), Status::Closed(_));
            assert!(wait_until(Duration::from_secs(2), closed), "run {run}: {:?}", client.status());
            let after = ping(&client).await;
            let closed_by_eof = matches!(after, Err(Error::Usage(UsageError::Closed(CloseReason::Eof))));
            assert!(closed_by_eof, "run {run}: {after:?}");
            // The driver shuts the server down: it exits once its stdin closes, and its status
            // is known from then on.
            within("the driver's end", client.closed()).await;
            let end = within("close", client.close()).await;
            assert_eq!(parts(end), Some((EndedBy::StdinClosed, Some(ServerExit::Code(0)))), "run {run}");
            assert_eq!(
                client.status(),
                Status::Closed(CloseReason::Exited(ServerExit::Code(0))),
                "run {run}"
            );
            assert!(process_gone(pid), "run {run}: server not reaped");
        }
    });
}

#[test]
fn a_handshake_answered_right_before_the_server_exits_is_ready() {
    let _guard = common::serial();
    smol::block_on(async {
        let exited = CloseReason::Exited(ServerExit::Code(3));
        for run in 0..RUNS {
            let outcome =
                within("the handshake", builder().spawn_stdio(&command("exit_after_handshake"))).await;
            let client = outcome.unwrap_or_else(|e| panic!("run {run}: a completed handshake failed: {e}"));
            let pid = client.server_pid().expect("a pid");
            let closed = || matches!(client.status(), Status::Closed(_));
            assert!(wait_until(Duration::from_secs(2), closed), "run {run}: {:?}", client.status());
            assert_eq!(client.status(), Status::Closed(exited.clone()), "run {run}");
            let after = ping(&client).await;
            let refused =
                matches!(&after, Err(Error::Usage(UsageError::Closed(reason))) if *reason == exited);
            assert!(refused, "run {run}: {after:?}");
            let end = within("close", client.close()).await;
            assert_eq!(parts(end), Some((EndedBy::Itself, Some(ServerExit::Code(3)))), "run {run}");
            assert!(process_gone(pid), "run {run}: server not reaped");
        }
    });
}

#[test]
fn a_server_killed_by_a_signal_fails_its_call_saying_so() {
    let _guard = common::serial();
    smol::block_on(async {
        let client = builder().spawn_stdio(&command("killed")).await.expect("the handshake");
        let start = Instant::now();
        let params = CallToolRequestParams::new("killed");
        let options = CallOptions::default().timeout(Duration::from_secs(30));
        let error = within("the call", client.call_tool_with(&params, options)).await.unwrap_err();
        let killed = CloseReason::Exited(ServerExit::Signal(9));
        let typed =
            matches!(&error, Error::Request(RequestError::ConnectionClosed(reason)) if *reason == killed);
        assert!(typed, "{error:?}");
        assert!(error.to_string().contains("killed by signal 9"), "{error}");
        assert!(start.elapsed() < Duration::from_secs(2), "took {:?}", start.elapsed());
        let end = within("close", client.close()).await;
        assert_eq!(parts(end), Some((EndedBy::Itself, Some(ServerExit::Signal(9)))));
    });
}

#[test]
fn close_keeps_its_bound_with_writes_queued_to_a_server_that_stopped_reading() {
    let _guard = common::serial();
    smol::block_on(async {
        let client = builder().spawn_stdio(&command("stop_reading")).await.expect("the handshake");
        let pid = client.server_pid().expect("a pid");
        let params = CallToolRequestParams::new("stop_reading");
        let result = within("the call", client.call_tool_with(&params, CallOptions::default())).await;
        result.expect("the server answers, then stops reading");
        // Far more than a pipe holds: most of it stays queued in the client.
        let message = "x".repeat(256 * 1024);
        let queued: Vec<_> = (0..8).map(|_| client.call_tool("echo", json!({"message": message}))).collect();
        let start = Instant::now();
        let end = within("close", client.close()).await;
        let took = start.elapsed();
        let bound = STEP * 2 + Duration::from_millis(400);
        assert!(took <= bound, "close took {took:?}, more than 2 × shutdown_step and a margin ({bound:?})");
        assert!(took >= STEP * 2, "closed after {took:?}: the server should have held out");
        assert_eq!(parts(end), Some((EndedBy::Sigkill, Some(ServerExit::Signal(9)))), "{end:?}");
        drop(queued);
        assert!(process_gone(pid), "the server survived");
        assert!(live_group_members(pid).is_empty());
    });
}
