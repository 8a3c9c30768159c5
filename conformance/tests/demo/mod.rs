//! The demo server as the tests of this crate start it: the `demo_peer` example (and its
//! siblings) next to the test binary, and a Streamable HTTP instance killed by PID when dropped.
#![allow(dead_code)]

use std::io::{BufRead, BufReader, Read};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};

/// An example binary of this crate (built by `cargo test`, next to the test binaries).
pub(crate) fn example(name: &str) -> PathBuf {
    let exe = std::env::current_exe().expect("test binary path");
    let profile_dir = exe.parent().and_then(|deps| deps.parent()).expect("target dir");
    let path = profile_dir.join("examples").join(name);
    assert!(
        path.exists(),
        "{} is missing: run the tests with `cargo test` (it builds examples)",
        path.display()
    );
    path
}

/// Everything `child` writes to its (piped) stderr, collected by a thread as it comes.
pub(crate) fn collect_stderr(child: &mut Child) -> Arc<Mutex<String>> {
    let stderr = Arc::new(Mutex::new(String::new()));
    let mut pipe = child.stderr.take().expect("piped stderr");
    let sink = Arc::clone(&stderr);
    std::thread::spawn(move || {
        let mut buffer = [0_u8; 4096];
        while let Ok(n @ 1..) = pipe.read(&mut buffer) {
            sink.lock().unwrap_or_else(|e| e.into_inner()).push_str(&String::from_utf8_lossy(&buffer[..n]));
        }
    });
    stderr
}

/// A scratch directory under the system's temporary one, removed when dropped.
pub(crate) struct Scratch(PathBuf);

impl Scratch {
    /// A fresh, empty directory named for `name` and this process.
    pub(crate) fn new(name: &str) -> Self {
        let dir = std::env::temp_dir().join(format!("mcp-conformance-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("scratch dir");
        Self(dir)
    }

    /// The path of `file` in it.
    pub(crate) fn path(&self, file: &str) -> String {
        self.0.join(file).to_string_lossy().into_owned()
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The demo server binary (the `demo_peer` example).
pub(crate) fn demo_path() -> PathBuf {
    example("demo_peer")
}

/// `mcp-demo-server --http 127.0.0.1:0` as a child process, killed (by PID) when dropped. Its
/// stderr is kept: it names the sessions the server opens.
pub(crate) struct DemoHttp {
    child: Child,
    /// The endpoint URL the server printed.
    pub(crate) url: String,
    stderr: Arc<Mutex<String>>,
}

impl DemoHttp {
    pub(crate) fn start() -> Self {
        Self::start_with(&[])
    }

    /// The demo server over HTTP with more flags (`--skills`, ...).
    pub(crate) fn start_with(args: &[&str]) -> Self {
        let mut child = Command::new(demo_path())
            .args(["--http", "127.0.0.1:0"])
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start the demo server");
        let mut url = String::new();
        let stdout = child.stdout.take().expect("piped stdout");
        BufReader::new(stdout).read_line(&mut url).expect("the demo server prints its URL");
        let stderr = collect_stderr(&mut child);
        Self { child, url: url.trim().to_owned(), stderr }
    }

    /// Whether the server process has exited (it is reaped if so).
    pub(crate) fn exited(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(Some(_)))
    }

    /// What the server wrote to stderr so far.
    pub(crate) fn stderr(&self) -> String {
        self.stderr.lock().unwrap().clone()
    }
}

impl Drop for DemoHttp {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
