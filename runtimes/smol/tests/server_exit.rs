//! Stdio servers that end: the exit status in the close reason and in what `close()` reports,
//! at each step of the shutdown sequence; and the era cache telling apart two servers that
//! differ only in their environment or working directory.

mod common;

use std::time::{Duration, Instant};

use common::{builder, default_builder, demo_server, demo_server_path, live_group_members, process_gone};
use mcp_smol::mcp_sansio::{CloseReason, ProtocolVersion, RequestError, ServerExit, Status, UsageError};
use mcp_smol::{ClientApi, EndedBy, EraCache, Error, ServerCommand, ServerEnd};
use serde_json::json;

/// Each wait of the shutdown sequence, for the scripted servers.
const STEP: Duration = Duration::from_millis(300);

/// A shell that runs the demo server, then `after` once the server exits at the end of its
/// stdin: `prelude` comes first.
fn shell_around_demo(prelude: &str, after: &str) -> ServerCommand {
    let script = format!("{prelude} '{}'; {after}", demo_server_path().display());
    ServerCommand::new("sh").args(["-c", &script]).shutdown_step(STEP)
}

/// What ended the server and its status, for comparing (`ServerEnd` cannot be built outside
/// its crate).
fn parts(end: Option<ServerEnd>) -> Option<(EndedBy, Option<ServerExit>)> {
    end.map(|end| (end.by, end.exit))
}

#[test]
fn a_server_that_crashes_fails_its_calls_with_its_exit_status() {
    smol::block_on(async {
        let client = builder().spawn_stdio(&demo_server()).await.unwrap();
        let pid = client.server_pid().unwrap();
        // The demo server's `crash` tool exits with status 3.
        let crash = client.call_tool("crash", json!({})).await.unwrap_err();
        let exited = CloseReason::Exited(ServerExit::Code(3));
        assert!(
            matches!(&crash, Error::Request(RequestError::ConnectionClosed(reason)) if *reason == exited),
            "{crash:?}"
        );
        assert!(crash.to_string().contains("the server process ended: exited with status 3"), "{crash}");
        assert!(crash.is_retriable());
        assert_eq!(client.status(), Status::Closed(exited.clone()));
        let later = client.ping().await.unwrap_err();
        assert!(matches!(&later, Error::Usage(UsageError::Closed(reason)) if *reason == exited), "{later:?}");
        let end = client.close().await;
        assert_eq!(parts(end), Some((EndedBy::Itself, Some(ServerExit::Code(3)))), "{end:?}");
        assert!(process_gone(pid, false));
    });
}

#[test]
fn close_reports_a_server_that_exits_once_its_stdin_closes() {
    smol::block_on(async {
        let client = builder().spawn_stdio(&demo_server()).await.unwrap();
        client.ping().await.unwrap();
        let end = client.close().await;
        assert_eq!(parts(end), Some((EndedBy::StdinClosed, Some(ServerExit::Code(0)))), "{end:?}");
        assert_eq!(end.unwrap().to_string(), "exited with status 0 once its stdin closed");
        assert_eq!(client.status(), Status::Closed(CloseReason::Local), "the client closed it");
        // Asked again, the same account.
        assert_eq!(client.close().await, end);
    });
}

/// What a server writes after its stdin closed (its last answers, a goodbye) is read and
/// dropped until it exits: the write does not fail. Before, the client let go of the pipe as it
/// closed stdin, and the shell's `echo` died of SIGPIPE.
#[test]
fn a_server_still_writing_after_its_stdin_closed_exits_cleanly() {
    smol::block_on(async {
        let after = "sleep 0.1; echo '{\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\"}' || exit 7";
        let client = builder().spawn_stdio(&shell_around_demo("", after)).await.unwrap();
        client.ping().await.unwrap();
        let end = client.close().await;
        assert_eq!(parts(end), Some((EndedBy::StdinClosed, Some(ServerExit::Code(0)))), "{end:?}");
    });
}

#[test]
fn close_reports_a_server_ended_by_sigterm() {
    smol::block_on(async {
        // The shell outlives the server's EOF; SIGTERM ends it and its `sleep`.
        let client = builder().spawn_stdio(&shell_around_demo("", "sleep 30")).await.unwrap();
        let pid = client.server_pid().unwrap();
        let start = Instant::now();
        let end = client.close().await;
        let took = start.elapsed();
        assert_eq!(parts(end), Some((EndedBy::Sigterm, Some(ServerExit::Signal(15)))), "{end:?}");
        assert!(took >= STEP, "SIGTERM after {took:?}, before the first step ended");
        assert!(live_group_members(pid).is_empty());
    });
}

#[test]
fn close_reports_a_server_killed_by_sigkill() {
    smol::block_on(async {
        // `trap '' TERM` is inherited: neither the shell nor its `sleep` heeds SIGTERM.
        let client = builder().spawn_stdio(&shell_around_demo("trap '' TERM;", "sleep 30")).await.unwrap();
        let pid = client.server_pid().unwrap();
        let start = Instant::now();
        let end = client.close().await;
        let took = start.elapsed();
        assert_eq!(parts(end), Some((EndedBy::Sigkill, Some(ServerExit::Signal(9)))), "{end:?}");
        assert!(took >= STEP * 2, "SIGKILL after {took:?}, before both steps ended");
        assert!(took < STEP * 2 + Duration::from_millis(700), "close took {took:?}");
        assert!(live_group_members(pid).is_empty());
    });
}

#[test]
fn a_connection_without_a_process_reports_no_server_end() {
    smol::block_on(async {
        // A stream that ends at once: the handshake fails, and there never was a process.
        let (client, driver) = builder().connect(futures_lite::io::empty(), futures_lite::io::sink());
        let driver = smol::spawn(driver);
        let outcome = client.ready().await;
        assert!(matches!(outcome, Err(Error::Connect(CloseReason::Eof))), "{outcome:?}");
        assert_eq!(client.close().await, None);
        driver.await;
    });
}

#[test]
fn the_era_cache_tells_apart_servers_that_differ_only_in_environment_or_directory() {
    smol::block_on(async {
        let cache = EraCache::new();
        let connect = |command: ServerCommand| {
            let cache = cache.clone();
            async move {
                let client = default_builder().era_cache(Some(cache)).spawn_stdio(&command).await.unwrap();
                let version = client.protocol_version();
                client.close().await;
                version
            }
        };
        let legacy = Some(ProtocolVersion::V2025_11_25);
        let modern = Some(ProtocolVersion::V2026_07_28);

        // The same program and arguments: a shell that runs the demo server with the flags in
        // its environment (legacy only, or both eras).
        let script = format!("exec '{}' $DEMO_FLAGS", demo_server_path().display());
        let command = |flags: &str| ServerCommand::new("sh").args(["-c", &script]).env("DEMO_FLAGS", flags);
        assert_eq!(connect(command("--legacy-only")).await, legacy);
        // Known as legacy, the first command skips the probe; this one is another server.
        assert_eq!(connect(command("")).await, modern, "the environment is part of the server");
        assert_eq!(connect(command("--legacy-only")).await, legacy, "the modern one forgot nothing");

        // The same for the working directory: the flags come from a file in it.
        let (old_dir, new_dir) = (scratch_dir("legacy"), scratch_dir("modern"));
        std::fs::write(old_dir.join("flags"), "--legacy-only").unwrap();
        let script = format!("exec '{}' $(cat flags 2>/dev/null)", demo_server_path().display());
        let command = |dir: &std::path::Path| ServerCommand::new("sh").args(["-c", &script]).current_dir(dir);
        assert_eq!(connect(command(&old_dir)).await, legacy);
        assert_eq!(connect(command(&new_dir)).await, modern, "the directory is part of the server");
        let _ = std::fs::remove_dir_all(old_dir);
        let _ = std::fs::remove_dir_all(new_dir);
    });
}

/// An empty directory of this test's own.
fn scratch_dir(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("mcp-smol-server-exit-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}
