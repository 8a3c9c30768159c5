//! The bare engine in a hand-written blocking event loop: no async runtime, only a child
//! process, a reader thread and a channel.
//!
//! ```text
//! cargo run -p mcp-sansio --example custom_event_loop            # the bundled demo server
//! cargo run -p mcp-sansio --example custom_event_loop -- my-server --flag
//! ```
//!
//! With no arguments the example starts the demo server, which is linked into this same binary
//! (`--serve` runs it), so one command runs both ends with nothing to install. With arguments,
//! they are the command line of any stdio MCP server (the demo-specific steps are skipped when
//! the server lacks the tool).
//!
//! The loop is the one every driver of `ClientConnection` has:
//! 1. write every transmit (`poll_transmit`) to the server's stdin;
//! 2. handle every event (`poll_event`);
//! 3. wait for bytes from the reader thread, but no longer than the engine's next deadline
//!    (`poll_timeout`), then `feed` what came or call `handle_timeout`.
//!
//! It lists the tools, calls `echo`, calls `long_running` with progress, lets a `sleep` call run
//! into a short timeout, then closes and waits for the server to exit.

// The engine has no clock, no threads and no channels (core/clippy.toml forbids them in this
// crate); the loop around it has all three, so this example opts out of those lints.
#![allow(clippy::disallowed_methods, clippy::disallowed_types)]

use std::error::Error;
use std::io::{Read, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use mcp_sansio::schema::{
    CallTool, CallToolRequestParams, CallToolResult, Implementation, JsonObject, ListTools, ListToolsResult,
    PaginatedRequestParams,
};
use mcp_sansio::{ClientConfig, ClientConnection, Event, RequestError, RequestId, RequestOptions};
use serde_json::json;

/// What the reader thread sends: bytes from the server's stdout, or its end.
enum Input {
    Bytes(Vec<u8>),
    Eof,
    Failed(std::io::Error),
}

/// The engine plus the two ends of the child's pipes: everything the loop needs.
struct Driver {
    conn: ClientConnection,
    to_server: Option<ChildStdin>,
    from_server: Receiver<Input>,
}

impl Driver {
    /// Runs the loop until `done` returns a value for some event. Events `done` declines
    /// (returns `None` for) are printed by [`report`].
    fn run_until<T>(&mut self, mut done: impl FnMut(&Event) -> Option<T>) -> Result<T, Box<dyn Error>> {
        loop {
            // 1. Write what the engine wants sent.
            self.flush()?;
            // 2. Handle what happened.
            while let Some(event) = self.conn.poll_event() {
                if let Some(value) = done(&event) {
                    return Ok(value);
                }
                report(&event);
                if let Event::Closed(reason) = event {
                    return Err(format!("the connection closed: {reason}").into());
                }
            }
            // 3. Wait for input, or for the next deadline.
            let input = match self.conn.poll_timeout() {
                Some(deadline) => {
                    let wait = deadline.saturating_duration_since(Instant::now());
                    match self.from_server.recv_timeout(wait) {
                        Ok(input) => Some(input),
                        Err(RecvTimeoutError::Timeout) => None,
                        Err(RecvTimeoutError::Disconnected) => Some(Input::Eof),
                    }
                }
                None => Some(self.from_server.recv().unwrap_or(Input::Eof)),
            };
            let now = Instant::now();
            match input {
                Some(Input::Bytes(bytes)) => self.conn.feed(now, &bytes),
                Some(Input::Eof) => self.conn.feed_eof(now),
                Some(Input::Failed(error)) => self.conn.transport_error(error.to_string()),
                // The deadline passed: the engine fails what is overdue (or pings, or re-listens).
                None => self.conn.handle_timeout(now),
            }
        }
    }

    /// Writes every queued transmit to the server's stdin.
    fn flush(&mut self) -> std::io::Result<()> {
        let Some(stdin) = &mut self.to_server else {
            while self.conn.poll_transmit().is_some() {}
            return Ok(());
        };
        let mut wrote = false;
        while let Some(transmit) = self.conn.poll_transmit() {
            if let Err(error) = stdin.write_all(transmit.bytes()) {
                // The server is gone: tell the engine, which fails every pending request.
                self.conn.transport_error(format!("writing to the server: {error}"));
                return Ok(());
            }
            wrote = true;
        }
        if wrote { stdin.flush() } else { Ok(()) }
    }

    /// Runs the loop until the response to `id` arrives.
    fn response(
        &mut self,
        id: RequestId,
    ) -> Result<Result<mcp_sansio::RawResult, RequestError>, Box<dyn Error>> {
        self.run_until(|event| match event {
            Event::Response { id: done, result } if *done == id => Some(result.clone()),
            _ => None,
        })
    }

    /// Calls a tool and waits for its result, decoded.
    fn call_tool(
        &mut self,
        name: &str,
        arguments: serde_json::Value,
        options: RequestOptions,
    ) -> Result<Result<CallToolResult, RequestError>, Box<dyn Error>> {
        let arguments: JsonObject = serde_json::from_value(arguments)?;
        let params = CallToolRequestParams::new(name).with_arguments(arguments);
        let id = self.conn.send::<CallTool>(Instant::now(), &params, options)?;
        match self.response(id)? {
            Ok(raw) => Ok(Ok(serde_json::from_str(raw.get())?)),
            Err(error) => Ok(Err(error)),
        }
    }
}

/// Prints an event the current step did not wait for.
fn report(event: &Event) {
    match event {
        Event::Progress { id, params } => {
            let total = params.total.map(|t| format!("/{t}")).unwrap_or_default();
            let message = params.message.as_deref().map(|m| format!(" ({m})")).unwrap_or_default();
            println!("  progress of request {id}: {}{total}{message}", params.progress);
        }
        Event::Notification(notification) => println!("  notification: {notification:?}"),
        Event::Request { request, .. } => {
            println!("  server request {} (not expected here)", request.method())
        }
        Event::ProtocolViolation(violation) => println!("  the server broke the protocol: {violation}"),
        Event::Closed(reason) => println!("  closed: {reason}"),
        other => println!("  event: {other:?}"),
    }
}

/// The text blocks of a tool result, joined.
fn text_of(result: &CallToolResult) -> String {
    result.content.iter().filter_map(|block| block.as_text()).collect::<Vec<_>>().join(" ")
}

fn main() -> Result<(), Box<dyn Error>> {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("--serve") {
        return serve_demo(args.split_off(1));
    }
    let mut command = if args.is_empty() {
        let mut command = Command::new(std::env::current_exe()?);
        command.arg("--serve");
        command
    } else {
        let mut command = Command::new(&args[0]);
        command.args(&args[1..]);
        command
    };

    // The server: a child process with piped stdin and stdout (stderr shows in our terminal).
    let mut child = command.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::inherit()).spawn()?;
    println!("Started the server as process {}", child.id());
    let stdin = child.stdin.take().ok_or("no stdin pipe")?;
    let mut stdout = child.stdout.take().ok_or("no stdout pipe")?;

    // The reader thread: blocking reads of stdout, each chunk sent to the loop as it comes.
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut buffer = vec![0; 64 * 1024];
        loop {
            let input = match stdout.read(&mut buffer) {
                Ok(0) => Input::Eof,
                Ok(n) => Input::Bytes(buffer[..n].to_vec()),
                Err(error) if error.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(error) => Input::Failed(error),
            };
            let last = !matches!(input, Input::Bytes(_));
            if tx.send(input).is_err() || last {
                return;
            }
        }
    });

    let config = ClientConfig::new(Implementation::new("custom-event-loop", env!("CARGO_PKG_VERSION")));
    let conn = ClientConnection::new(config, Instant::now());
    let mut driver = Driver { conn, to_server: Some(stdin), from_server: rx };

    let outcome = session(&mut driver);
    if let Err(error) = &outcome {
        println!("The session failed: {error}");
    }

    // Close: the engine fails whatever is pending and reports `Closed`; then closing stdin tells
    // the server to exit.
    driver.conn.close();
    driver.flush()?;
    while let Some(event) = driver.conn.poll_event() {
        report(&event);
    }
    driver.to_server = None;
    wait_or_kill(&mut child, Duration::from_secs(5))?;
    outcome
}

/// The steps, each one a request sent and the loop run until its response.
fn session(driver: &mut Driver) -> Result<(), Box<dyn Error>> {
    // The handshake: the engine sent `server/discover` (or `initialize`) when it was made.
    let version = driver.run_until(|event| match event {
        Event::Ready { protocol_version } => Some(*protocol_version),
        _ => None,
    })?;
    let server = driver.conn.server_info().cloned().unwrap_or_default();
    println!("Connected to {} {} (MCP {version})", server.name, server.version);

    // tools/list (one page is enough for this example).
    let id = driver.conn.send::<ListTools>(
        Instant::now(),
        &PaginatedRequestParams::default(),
        RequestOptions::default(),
    )?;
    let tools: ListToolsResult =
        serde_json::from_str(driver.response(id)?.map_err(|e| e.to_string())?.get())?;
    let names: Vec<&str> = tools.tools.iter().map(|tool| tool.name.as_str()).collect();
    println!("\n{} tools: {}", names.len(), names.join(", "));
    let has = |name: &str| tools.tools.iter().any(|tool| tool.name == name);

    // echo
    let arguments = json!({"message": "Hello from a hand-written event loop!"});
    println!("\nCalling echo {arguments}");
    match driver.call_tool("echo", arguments, RequestOptions::default())? {
        Ok(result) => println!("  echo replied: {}", text_of(&result)),
        Err(error) => println!("  echo failed: {error}"),
    }

    // long_running with progress: the engine adds `_meta.progressToken` and reports
    // `Event::Progress`, which `report` prints while the loop waits for the result.
    if has("long_running") {
        let arguments = json!({"steps": 4, "step_ms": 50});
        println!("\nCalling long_running {arguments} with progress");
        match driver.call_tool("long_running", arguments, RequestOptions::default().with_progress())? {
            Ok(result) => println!("  long_running replied: {}", text_of(&result)),
            Err(error) => println!("  long_running failed: {error}"),
        }
    }

    // A timeout: `sleep` for 2 s with a 300 ms timeout. The loop's `recv_timeout` wakes at the
    // deadline, `handle_timeout` fails the request and sends `notifications/cancelled`.
    if has("sleep") {
        let timeout = Duration::from_millis(300);
        println!("\nCalling sleep {{\"ms\":2000}} with a {timeout:?} timeout");
        let started = Instant::now();
        match driver.call_tool("sleep", json!({"ms": 2000}), RequestOptions::default().timeout(timeout))? {
            Ok(result) => println!("  sleep replied (unexpectedly): {}", text_of(&result)),
            Err(RequestError::Timeout(after)) => {
                println!(
                    "  timed out as asked: RequestError::Timeout({after:?}) after {:?}",
                    started.elapsed()
                );
            }
            Err(error) => println!("  sleep failed: {error}"),
        }
    }

    let stats = driver.conn.stats();
    println!(
        "\nStats: {} requests, {} completed, {} timed out; {} messages received ({} bytes)",
        stats.requests_tracked,
        stats.requests_completed,
        stats.requests_timed_out,
        stats.messages_received,
        stats.bytes_received
    );
    Ok(())
}

/// Waits up to `limit` for the child to exit after its stdin closed, then kills it (by PID).
fn wait_or_kill(child: &mut Child, limit: Duration) -> std::io::Result<()> {
    let start = Instant::now();
    loop {
        if let Some(status) = child.try_wait()? {
            println!("\nClosed; the server exited ({status})");
            return Ok(());
        }
        if start.elapsed() > limit {
            println!("\nClosed; the server did not exit within {limit:?}: killing process {}", child.id());
            child.kill()?;
            child.wait()?;
            return Ok(());
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The server side, when this binary is started with `--serve [demo server flags]`.
fn serve_demo(flags: Vec<String>) -> Result<(), Box<dyn Error>> {
    let status = mcp_demo_server::main_with_args(flags);
    if status == std::process::ExitCode::SUCCESS { Ok(()) } else { Err("the demo server failed".into()) }
}
