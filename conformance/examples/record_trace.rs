//! Recording a session into a trace, then replaying it: against the engine (does today's client
//! still send what it sent then?) and against the live server (does the server still answer
//! what it answered then?).
//!
//! ```text
//! cargo run -p mcp-conformance --example record_trace                       # trace in the temp dir
//! cargo run -p mcp-conformance --example record_trace -- session.jsonl      # trace file of your choice
//! cargo run -p mcp-conformance --example record_trace -- session.jsonl my-server --flag
//! ```
//!
//! With no server command the example records the demo server, which is linked into this same
//! binary (`--serve` runs it), so one command runs both ends with nothing to install. After the
//! trace path, any stdio MCP server's command line may follow (the plan's demo-specific calls
//! then get error answers, which are recorded like any other answer).
//!
//! How the recording works: `record_session` runs our own client (mcp-smol) through a
//! recording proxy, a process started as the client's "server command" that passes every line
//! through unchanged and writes it to the trace. The `mcp-conformance` binary is that proxy
//! (`record --proxy`); here this binary plays the part itself when started with `--proxy`, by
//! calling `run_stdio_proxy`, so nothing else has to be built.

use std::error::Error;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use mcp_conformance::engine_replay::replay_against_engine;
use mcp_conformance::peer::Target;
use mcp_conformance::record::{self, Plan, Step};
use mcp_conformance::replay::{self, ReplayOptions};
use mcp_conformance::trace::{Direction, Trace, TraceHeader, TraceWriter};
use serde_json::json;

fn main() -> Result<ExitCode, Box<dyn Error>> {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("--serve") => return Ok(mcp_demo_server::main_with_args(args.split_off(1))),
        Some("--proxy") => return proxy(&args[1..]),
        _ => {}
    }
    let path = match args.first() {
        Some(path) => PathBuf::from(path),
        None => std::env::temp_dir().join(format!("mcp-record-trace-example-{}.jsonl", std::process::id())),
    };
    let exe = std::env::current_exe()?.to_string_lossy().into_owned();
    let server: Vec<String> = match args.get(1..) {
        Some(command) if !command.is_empty() => command.to_vec(),
        _ => vec![exe.clone(), "--serve".into()],
    };
    let target = Target::stdio(server);

    // 1. Record: our client lists what the server offers, then runs these steps.
    let plan = Plan {
        steps: vec![
            Step::Call { name: "echo".into(), arguments: json!({"message": "recorded"}) },
            Step::Call { name: "add".into(), arguments: json!({"a": 2, "b": 3}) },
            Step::Call { name: "long_running".into(), arguments: json!({"steps": 3, "step_ms": 10}) },
            Step::Read("demo://readme".into()),
            Step::Prompt { name: "greeting".into(), arguments: json!({"name": "Ada"}) },
            Step::UnknownMethod("demo/nonexistent".into()),
        ],
        note: Some("recorded by the record_trace example".into()),
        ..Plan::default()
    };
    println!("Recording {} steps into {}", plan.steps.len(), path.display());
    // The proxy command line: this binary with `--proxy`; `record_session` appends
    // `-o TRACE [--note TEXT] -- SERVER COMMAND…`.
    let proxy_command = [exe, "--proxy".into()];
    let report = smol::block_on(record::record_session(&target, &plan, &path, &proxy_command))?;
    for problem in &report.problems {
        println!("  problem: {problem}");
    }

    // 2. Summarise the trace.
    let trace = Trace::read(&path)?;
    let header = &trace.header;
    println!(
        "\nThe trace: {} entries, server {} {} over {}, MCP {}",
        trace.entries.len(),
        header.server.name.as_deref().unwrap_or("?"),
        header.server.version.as_deref().unwrap_or("?"),
        header.transport,
        header.protocol_version.as_deref().unwrap_or("?")
    );
    for dir in [Direction::Client, Direction::Server] {
        let (mut requests, mut notifications, mut responses, mut other) = (0, 0, 0, 0);
        for entry in trace.sent_by(dir) {
            match entry.value() {
                Some(message) if message.get("method").is_some() && message.get("id").is_some() => {
                    requests += 1
                }
                Some(message) if message.get("method").is_some() => notifications += 1,
                Some(message) if message.get("result").is_some() || message.get("error").is_some() => {
                    responses += 1
                }
                _ => other += 1,
            }
        }
        println!(
            "  {dir:>6}: {:>3} entries ({requests} requests, {notifications} notifications, \
             {responses} responses, {other} other)",
            requests + notifications + responses + other
        );
    }
    let methods: Vec<String> = trace
        .sent_by(Direction::Client)
        .filter_map(|entry| Some(entry.value()?.get("method")?.as_str()?.to_owned()))
        .collect();
    println!("  client methods, in order: {}", methods.join(", "));

    // 3. Replay the server's side into the engine: it must send what the recorded client sent.
    let engine = replay_against_engine(&trace);
    println!("\n{engine}");
    println!("Engine replay verdict: {}", if engine.is_ok() { "PASS" } else { "FAIL" });

    // 4. Replay the client's side against the live server: it must answer as recorded.
    let options = ReplayOptions { timeout: Duration::from_secs(10), ..ReplayOptions::default() };
    let live = smol::block_on(replay::replay(&trace, &target, &options))?;
    println!("\nServer replay: {live}");

    let passed = report.problems.is_empty() && engine.is_ok() && live.passed();
    println!("\nTrace kept at {}", path.display());
    Ok(if passed { ExitCode::SUCCESS } else { ExitCode::FAILURE })
}

/// The recording proxy, when this binary is started with
/// `--proxy -o TRACE [--note TEXT] -- SERVER COMMAND…` (what `mcp-conformance record --proxy`
/// does over stdio).
fn proxy(args: &[String]) -> Result<ExitCode, Box<dyn Error>> {
    let split = args.iter().position(|arg| arg == "--").ok_or("--proxy needs `-- SERVER COMMAND…`")?;
    let (options, command) = (&args[..split], &args[split + 1..]);
    let value = |name: &str| options.iter().position(|o| o == name).and_then(|at| options.get(at + 1));
    let out = value("-o").ok_or("--proxy needs -o TRACE")?;
    let target = Target::stdio(command.iter().cloned());
    let mut header = TraceHeader::new(
        target.transport(),
        target.identity(),
        record::recorded_with("record_trace example"),
    );
    header.note = value("--note").cloned();
    let writer = TraceWriter::create(out, header)?;
    let status = record::run_stdio_proxy(command, writer)?;
    Ok(ExitCode::from(u8::try_from(status.code().unwrap_or(1)).unwrap_or(1)))
}
