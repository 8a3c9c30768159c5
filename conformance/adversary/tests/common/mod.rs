//! What every adversarial test checks after its peer did its worst: the client's process has no
//! more file descriptors, threads or child processes than before, and its memory stayed bounded.
//!
//! The counts are per process, so the tests of one binary run one at a time ([`serial`]).
#![allow(dead_code)]

use std::path::PathBuf;
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// A running `mcp-adversary http <mode>`, killed by PID (and reaped) when dropped, also when the
/// test panics. `url` is the endpoint it printed.
pub(crate) struct HttpServer {
    child: std::process::Child,
    pub(crate) url: String,
}

impl HttpServer {
    pub(crate) fn start(mode: &str) -> Self {
        use std::io::{BufRead, BufReader};
        use std::process::{Command, Stdio};
        let mut child = Command::new(adversary_path())
            .args(["http", mode])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("spawning mcp-adversary");
        let stdout = child.stdout.take().expect("piped stdout");
        // From here on, a failure still kills the child.
        let mut server = HttpServer { child, url: String::new() };
        let mut line = String::new();
        BufReader::new(stdout).read_line(&mut line).expect("reading the server's first line");
        server.url = line
            .trim()
            .strip_prefix("listening on ")
            .unwrap_or_else(|| panic!("unexpected first line {line:?}"))
            .to_owned();
        server
    }
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        // `Child::kill` sends SIGKILL to this PID; `wait` reaps it.
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The adversary binary, built by cargo for this package's tests.
pub(crate) fn adversary_path() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_mcp-adversary"))
}

static SERIAL: Mutex<()> = Mutex::new(());

/// Holds the other tests of this binary off while one counts descriptors and threads.
pub(crate) fn serial() -> MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Open file descriptors of this process.
pub(crate) fn open_fds() -> usize {
    std::fs::read_dir("/proc/self/fd").map(|d| d.count()).unwrap_or(0)
}

/// Threads of this process.
pub(crate) fn threads() -> usize {
    std::fs::read_dir("/proc/self/task").map(|d| d.count()).unwrap_or(0)
}

/// Resident set size of this process, in bytes.
pub(crate) fn rss_bytes() -> usize {
    status_field("VmRSS:")
}

/// Peak resident set size of this process, in bytes.
pub(crate) fn peak_rss_bytes() -> usize {
    status_field("VmHWM:")
}

fn status_field(name: &str) -> usize {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|line| line.strip_prefix(name))
        .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse::<usize>().ok())
        .map_or(0, |kib| kib * 1024)
}

/// Processes (zombies included) whose parent is this process.
pub(crate) fn children() -> Vec<u32> {
    let me = std::process::id();
    let Ok(dir) = std::fs::read_dir("/proc") else { return Vec::new() };
    dir.filter_map(|entry| entry.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            std::fs::read_to_string(format!("/proc/{pid}/stat")).ok().is_some_and(|stat| {
                // pid (comm) state ppid ...: comm may hold spaces and parentheses.
                let rest = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
                rest.split_whitespace().nth(1).and_then(|ppid| ppid.parse::<u32>().ok()) == Some(me)
            })
        })
        .collect()
}

/// Whether process `pid` is gone (a zombie counts as alive: someone must still reap it).
pub(crate) fn process_gone(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_err()
}

/// Live (non-zombie) members of process group `pgid`.
pub(crate) fn live_group_members(pgid: u32) -> Vec<u32> {
    let Ok(dir) = std::fs::read_dir("/proc") else { return Vec::new() };
    dir.filter_map(|entry| entry.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            std::fs::read_to_string(format!("/proc/{pid}/stat")).ok().is_some_and(|stat| {
                let fields: Vec<&str> =
                    stat.rsplit_once(')').map_or("", |(_, rest)| rest).split_whitespace().collect();
                // state ppid pgrp
                fields.first().is_some_and(|s| *s != "Z" && *s != "X")
                    && fields.get(2).and_then(|g| g.parse::<u32>().ok()) == Some(pgid)
            })
        })
        .collect()
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

/// Descriptors, threads and children of this process at one moment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Resources {
    pub(crate) fds: usize,
    pub(crate) threads: usize,
    pub(crate) children: usize,
}

impl Resources {
    pub(crate) fn now() -> Self {
        Self { fds: open_fds(), threads: threads(), children: children().len() }
    }

    /// Asserts that, within a few seconds, this process is back to no more descriptors,
    /// threads and children than `self` (runtime threads started lazily during the test
    /// are allowed for: take the baseline after one warm-up connection).
    pub(crate) fn assert_nothing_leaked(&self, case: &str) {
        let mut last = Resources::now();
        let settled = wait_until(Duration::from_secs(5), || {
            last = Resources::now();
            last.fds <= self.fds && last.threads <= self.threads && last.children <= self.children
        });
        assert!(settled, "{case}: leaked resources: before {self:?}, after {last:?}");
    }
}

/// Resets this process's peak resident set size ([`peak_rss_bytes`]) to its current size, so
/// that the peak of one case can be measured on its own. Returns whether the kernel allowed it.
pub(crate) fn reset_peak_rss() -> bool {
    std::fs::write("/proc/self/clear_refs", "5").is_ok()
}

impl Resources {
    /// The counts once they stopped falling: the same for `quiet` in a row, or as they are
    /// after `limit`. Closing is asynchronous (sockets of a closed client are released by
    /// runtime tasks a little later), so a baseline taken right after a warm-up would count
    /// what is about to go, and hide a leak of the same size.
    pub(crate) fn settled(quiet: Duration, limit: Duration) -> Self {
        let start = Instant::now();
        let mut last = Resources::now();
        let mut since = Instant::now();
        while start.elapsed() < limit {
            std::thread::sleep(Duration::from_millis(10));
            let now = Resources::now();
            if now != last {
                last = now;
                since = Instant::now();
            } else if since.elapsed() >= quiet {
                break;
            }
        }
        last
    }
}
