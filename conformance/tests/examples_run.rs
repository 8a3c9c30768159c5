//! Runs every example of the workspace as a newcomer would (no arguments: each starts the demo
//! server linked into itself) and checks what it prints, so the examples are known to work, not
//! only to compile. The examples of other packages are built here, once, with the cargo that
//! runs the tests, into the same target directory and profile: `cargo test -p mcp-conformance`
//! alone (which builds only this package's examples), `--test examples_run` and nextest work as
//! `cargo test --workspace` does, where that build finds everything fresh.

use std::io::Read;
use std::path::PathBuf;
use std::process::{Command, ExitStatus, Stdio};
use std::sync::{Arc, LazyLock, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use mcp_conformance::trace::{Direction, Trace};

mod demo;

/// The longest an example may run: each takes a few seconds at most, even in a debug build on a
/// busy machine.
const LIMIT: Duration = Duration::from_secs(60);

/// The examples of other packages, which `cargo test -p mcp-conformance` does not build.
/// (`record_trace` is this package's own: `cargo test` builds it.)
const OTHER_PACKAGES_EXAMPLES: &[&str] =
    &["quickstart", "tokio", "handlers", "pool", "custom_event_loop", "http_headers", "oauth"];

#[test]
fn the_quickstart_runs() {
    let output = run_example("quickstart", LIMIT);
    output.assert_success_with(&[
        "Connected to mcp-demo-server",
        "Calling echo",
        "-> Hello from mcp-sansio!",
    ]);
}

#[test]
fn the_tokio_example_runs() {
    let output = run_example("tokio", LIMIT);
    output.assert_success_with(&[
        "Connected to mcp-demo-server",
        "from a tokio task",
        "Calling echo",
        "-> Hello from tokio!",
        "Closed; the server process is gone",
    ]);
}

#[test]
fn the_pool_example_runs_and_restarts_the_crashed_member() {
    let output = run_example("pool", LIMIT);
    output.assert_success_with(&["added member", "transaction on pid", "after the crash: 6 of 6 calls fine"]);
    assert!(output.stdout.contains(" 1 deaths, 1 restarts"), "the crashed member came back\n{output}");
}

#[test]
fn the_handlers_example_runs_in_both_eras() {
    let output = run_example("handlers", LIMIT);
    output.assert_success_with(&[
        "(MCP 2025-11-25)",
        "(MCP 2026-07-28)",
        "[handler] roots/list",
        "-> file:///work/project,file:///tmp",
        "-> sampled: a canned answer to \"What is the capital of France?\"",
        r#"-> action=accept content={"name":"Ada"}"#,
        "[NotificationHandler] the Tools list changed",
        "[on_notification] Prompts changed",
        "[NotificationHandler] log Warning: \"disk almost full\"",
        "[on_notification] a log message at Warning",
        "[subscriber] Resources list changed",
        "[subscriber] log: \"disk almost full\"",
        "-> logged",
    ]);
    // Each era: the three questions answered by the handler, and four notifications delivered
    // to the subscriber (three list changes, one log message).
    assert_eq!(output.stdout.matches("-> sampled: a canned answer").count(), 2, "{output}");
    assert_eq!(output.stdout.matches("the subscriber saw 4 notifications").count(), 2, "{output}");
}

#[test]
fn the_custom_event_loop_example_runs() {
    let output = run_example("custom_event_loop", LIMIT);
    output.assert_success_with(&[
        "Connected to mcp-demo-server",
        "echo replied: Hello from a hand-written event loop!",
        "progress of request",
        "4/4 (step 4 of 4)",
        "long_running replied: done after 4 steps",
        "timed out as asked: RequestError::Timeout(300ms)",
        "1 timed out",
        "closed: closed by the client",
        "the server exited (exit status: 0)",
    ]);
}

#[test]
fn the_http_headers_example_runs_and_never_prints_header_values() {
    let output = run_example("http_headers", LIMIT);
    output.assert_success_with(&[
        "Connected to mcp-demo-server",
        r#"header_names: ["Authorization", "X-Request-Source"]"#,
        "-> hello over HTTP",
        "-> 5",
        "3 requests (3 completed, 0 failed)",
        "Closed",
        "Killing the demo server",
    ]);
    assert!(!output.stdout.contains("example-token"), "a header value was printed\n{output}");
    assert!(!output.stderr.contains("example-token"), "a header value was printed\n{output}");
    // The server it started is gone (killed by PID, and reaped).
    let pid = output
        .stdout
        .split("Started the demo server as process ")
        .nth(1)
        .and_then(|rest| rest.split_whitespace().next())
        .expect("the example names the server's process");
    assert!(!std::path::Path::new(&format!("/proc/{pid}")).exists(), "the demo server {pid} still runs");
}

#[test]
fn the_oauth_example_authorizes_steps_up_and_reuses_the_stored_token() {
    let output = run_example("oauth", LIMIT);
    output.assert_success_with(&["First connection:", "Second connection"]);
    let out = &output.stdout;
    assert_eq!(
        out.matches("Authorize at: http://127.0.0.1:").count(),
        2,
        "first authorization and the step-up\n{output}"
    );
    assert!(out.contains("admin_echo after a step-up"), "{output}");
    let second = out.split("Second connection").nth(1).expect("a second connection");
    assert!(!second.contains("Authorize at"), "the stored token is used\n{output}");
    assert!(second.contains("hello again"), "{output}");
    // Tokens never appear in what it prints.
    assert!(!out.contains("access_token") && !out.contains("Bearer"), "{output}");
}

#[test]
fn the_record_trace_example_records_and_both_replays_pass() {
    let output = run_example("record_trace", LIMIT);
    let path = output
        .stdout
        .split("Trace kept at ")
        .nth(1)
        .map(|rest| PathBuf::from(rest.lines().next().unwrap_or_default().trim()));
    let trace = path.as_ref().map(Trace::read);
    if let Some(path) = &path {
        let _ = std::fs::remove_file(path);
    }
    output.assert_success_with(&[
        "The trace: ",
        "server mcp-demo-server",
        "client methods, in order: ",
        "tools/call, tools/call, tools/call, resources/read, prompts/get, demo/nonexistent",
        "; no mismatch",
        "Engine replay verdict: PASS",
        "Server replay: PASS",
    ]);
    let trace = trace.expect("the example names its trace file").expect("the trace is readable");
    assert!(trace.sent_by(Direction::Client).count() >= 6, "{output}");
    assert!(trace.sent_by(Direction::Server).count() >= 6, "{output}");
}

/// What a finished example printed.
struct Output {
    status: ExitStatus,
    stdout: String,
    stderr: String,
}

/// An example binary of the workspace, next to the test binaries: the other packages' examples
/// are built first (once per test process), and so is this package's own when it is stale.
fn example(name: &str) -> PathBuf {
    let path = demo::profile_dir().join("examples").join(name);
    if (OTHER_PACKAGES_EXAMPLES.contains(&name) || demo::is_stale(&path))
        && let Err(error) = &*BUILT
    {
        panic!("{error}");
    }
    assert!(path.exists(), "{} is missing", path.display());
    path
}

/// The examples of other packages and this package's `record_trace`, built by
/// `cargo build --workspace --example …` into this target directory and profile. `--workspace`
/// resolves features as `cargo test --workspace` does, so after it this build is fresh and builds
/// nothing. `Err` holds cargo's output.
static BUILT: LazyLock<Result<(), String>> = LazyLock::new(|| {
    let mut args = vec!["--workspace"];
    for name in OTHER_PACKAGES_EXAMPLES.iter().chain(&["record_trace"]) {
        args.extend(["--example", name]);
    }
    demo::cargo_build(&args)
});

/// Copies a pipe into a buffer on a thread; the buffer can be read while the thread still runs.
fn collect(mut pipe: impl Read + Send + 'static) -> (Arc<Mutex<Vec<u8>>>, JoinHandle<()>) {
    let buffer = Arc::new(Mutex::new(Vec::new()));
    let sink = Arc::clone(&buffer);
    let thread = std::thread::spawn(move || {
        let mut chunk = [0_u8; 4096];
        while let Ok(n @ 1..) = pipe.read(&mut chunk) {
            sink.lock().unwrap().extend_from_slice(&chunk[..n]);
        }
    });
    (buffer, thread)
}

/// Runs the example `name` with no arguments; kills it (by PID) if it runs longer than `limit`.
fn run_example(name: &str, limit: Duration) -> Output {
    let mut child = Command::new(example(name))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start the example");
    let (stdout, stdout_thread) = collect(child.stdout.take().expect("piped stdout"));
    let (stderr, stderr_thread) = collect(child.stderr.take().expect("piped stderr"));
    let text = |buffer: &Arc<Mutex<Vec<u8>>>| String::from_utf8_lossy(&buffer.lock().unwrap()).into_owned();
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait for the example") {
            break status;
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!(
                "the example {name} ran longer than {limit:?} and was killed\n--- stdout\n{}\n--- stderr\n{}",
                text(&stdout),
                text(&stderr)
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    // The pipes end with the example (and whatever it started, which it must have stopped).
    let reading = Instant::now();
    while !(stdout_thread.is_finished() && stderr_thread.is_finished()) && reading.elapsed() < limit {
        std::thread::sleep(Duration::from_millis(10));
    }
    Output { status, stdout: text(&stdout), stderr: text(&stderr) }
}

impl Output {
    /// Asserts a successful exit and that stdout has every one of `lines`.
    fn assert_success_with(&self, lines: &[&str]) {
        assert!(self.status.success(), "exit status {}\n{self}", self.status);
        for line in lines {
            assert!(self.stdout.contains(line), "stdout lacks {line:?}\n{self}");
        }
    }
}

impl std::fmt::Display for Output {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "--- stdout\n{}\n--- stderr\n{}", self.stdout, self.stderr)
    }
}
