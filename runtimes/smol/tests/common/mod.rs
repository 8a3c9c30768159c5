//! Helpers shared by the driver tests: the demo server binary and process inspection.
#![allow(dead_code)]

use std::path::PathBuf;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Waker};
use std::time::{Duration, Instant};

use mcp_smol::mcp_sansio::ProtocolVersion;
use mcp_smol::mcp_sansio::schema::{ClientCapabilities, Implementation, ListChangedCapability};
use mcp_smol::{AsyncTimer, ClientBuilder, Clock, ServerCommand};

/// The demo server, built by `cargo test` as this package's `demo_server` example.
pub(crate) fn demo_server_path() -> PathBuf {
    let exe = std::env::current_exe().expect("test binary path");
    // target/<profile>/deps/<test binary> -> target/<profile>/examples/demo_server
    let profile_dir = exe.parent().and_then(|deps| deps.parent()).expect("target dir");
    let path = profile_dir.join("examples").join("demo_server");
    assert!(
        path.exists(),
        "{} is missing: run the tests with `cargo test` (it builds examples)",
        path.display()
    );
    path
}

/// A command for the demo server with short shutdown steps, so tests stay quick.
pub(crate) fn demo_server() -> ServerCommand {
    ServerCommand::new(demo_server_path()).shutdown_step(Duration::from_millis(500))
}

/// Roots, sampling and elicitation: every capability a handler can serve.
pub(crate) fn all_capabilities() -> ClientCapabilities {
    ClientCapabilities {
        roots: Some(ListChangedCapability { list_changed: Some(true) }),
        sampling: Some(Default::default()),
        elicitation: Some(Default::default()),
        ..Default::default()
    }
}

/// A builder pinned to the `initialize` era (newest version first), which these suites test;
/// `modern_era.rs` and the conformance crate's `demo_eras.rs` cover 2026-07-28 and the default
/// dual-era probe.
pub(crate) fn builder() -> ClientBuilder {
    let legacy: Vec<_> = ProtocolVersion::LEGACY.iter().rev().copied().collect();
    default_builder().configure(|c| c.with_versions(&legacy))
}

/// A builder with the defaults (dual-era).
pub(crate) fn default_builder() -> ClientBuilder {
    ClientBuilder::new(Implementation::new("mcp-smol-tests", "0.0.0"))
}

/// Whether process `pid` is gone. A zombie counts as gone only if `allow_zombie`: our own
/// child must be reaped by us, while an orphaned grandchild is reaped by whoever adopts it.
pub(crate) fn process_gone(pid: u32, allow_zombie: bool) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(stat) => {
            let state = stat.rsplit(')').next().and_then(|rest| rest.split_whitespace().next());
            allow_zombie && matches!(state, Some("Z") | Some("X"))
        }
    }
}

/// Waits up to `limit` for `condition`; returns whether it held.
pub(crate) fn wait_until(limit: Duration, mut condition: impl FnMut() -> bool) -> bool {
    let start = Instant::now();
    loop {
        if condition() {
            return true;
        }
        if start.elapsed() > limit {
            return false;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Members of process group `pgid` still alive (zombies excluded).
pub(crate) fn live_group_members(pgid: u32) -> Vec<u32> {
    let mut members = Vec::new();
    let Ok(entries) = std::fs::read_dir("/proc") else { return members };
    for entry in entries.flatten() {
        let Some(pid) = entry.file_name().to_str().and_then(|s| s.parse::<u32>().ok()) else { continue };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else { continue };
        let Some(rest) = stat.rsplit(')').next() else { continue };
        let fields: Vec<&str> = rest.split_whitespace().collect();
        // fields: state ppid pgrp ...
        if fields.len() > 2 && fields[2] == pgid.to_string() && fields[0] != "Z" && fields[0] != "X" {
            members.push(pid);
        }
    }
    members
}

/// A clock that moves only when the test says so.
#[derive(Debug, Clone)]
pub(crate) struct ManualClock(Arc<Mutex<(Instant, Vec<Waker>)>>);

impl ManualClock {
    pub(crate) fn new() -> Self {
        Self(Arc::new(Mutex::new((Instant::now(), Vec::new()))))
    }

    pub(crate) fn advance(&self, by: Duration) {
        let mut inner = self.0.lock().unwrap();
        inner.0 += by;
        inner.1.drain(..).for_each(Waker::wake);
    }
}

impl Clock for ManualClock {
    fn now(&self) -> Instant {
        self.0.lock().unwrap().0
    }

    fn timer(&self, at: Instant) -> Pin<Box<dyn AsyncTimer>> {
        Box::pin(ManualTimer { clock: self.clone(), at })
    }
}

#[derive(Debug)]
struct ManualTimer {
    clock: ManualClock,
    at: Instant,
}

impl AsyncTimer for ManualTimer {
    fn reset(mut self: Pin<&mut Self>, at: Instant) {
        self.at = at;
    }

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let mut inner = self.clock.0.lock().unwrap();
        if inner.0 >= self.at {
            return Poll::Ready(());
        }
        inner.1.push(cx.waker().clone());
        Poll::Pending
    }
}

/// A stdio server in `sh`: `prelude` runs first (it may write to stdout); then it answers
/// `initialize` (2025-11-25, tools), `ping`, the tool `echo` (with the text "echo"), and any
/// other `tools/call` with `call`, a shell snippet in which `$id` is the request's id.
pub(crate) fn sh_server(prelude: &str, call: &str) -> ServerCommand {
    let script = format!(
        r#"{prelude}
while IFS= read -r line; do
  id=${{line#*\"id\":}}; id=${{id%%,*}}
  case "$line" in
    *'"method":"initialize"'*)
      printf '%s\n' "{{\"jsonrpc\":\"2.0\",\"id\":$id,\"result\":{{\"protocolVersion\":\"2025-11-25\",\"capabilities\":{{\"tools\":{{}}}},\"serverInfo\":{{\"name\":\"sh\",\"version\":\"0\"}}}}}}" ;;
    *'"method":"ping"'*)
      printf '%s\n' "{{\"jsonrpc\":\"2.0\",\"id\":$id,\"result\":{{}}}}" ;;
    *'"name":"echo"'*)
      printf '%s\n' "{{\"jsonrpc\":\"2.0\",\"id\":$id,\"result\":{{\"content\":[{{\"type\":\"text\",\"text\":\"echo\"}}]}}}}" ;;
    *'"method":"tools/call"'*)
      {call} ;;
  esac
done"#
    );
    ServerCommand::new("sh").args(["-c", &script]).shutdown_step(Duration::from_millis(300))
}

/// `n` bytes of `x`, written by the shell (no newline).
pub(crate) fn xs(n: usize) -> String {
    format!("head -c {n} /dev/zero | tr '\\0' x")
}
