//! `mcp-conformance`: record MCP sessions, replay them against live servers, and property-test
//! servers. Run `mcp-conformance help` for the usage; `docs/conformance.md` has the guide.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use mcp_conformance::check::{self, CheckOptions, Property};
use mcp_conformance::peer::Target;
use mcp_conformance::record::{self, Plan, Step};
use mcp_conformance::record_http::RecordingProxy;
use mcp_conformance::replay::{self, ReplayOptions};
use mcp_conformance::rules::Rules;
use mcp_conformance::trace::{Trace, TraceHeader, TraceWriter};
use mcp_sansio::ProtocolVersion;
use mcp_sansio::schema::LoggingLevel;
use serde_json::Value;

const USAGE: &str = "\
mcp-conformance: recorded MCP sessions as a test oracle

USAGE
  mcp-conformance record -o TRACE [STEP…] [--legacy] [--note TEXT] -- SERVER COMMAND…
  mcp-conformance record -o TRACE [STEP…] [--legacy] [--note TEXT] --url URL [--header 'Name: value']…
  mcp-conformance record --proxy -o TRACE [--note TEXT] -- SERVER COMMAND…
  mcp-conformance record --proxy -o TRACE [--listen ADDR] --url UPSTREAM
  mcp-conformance replay TRACE [--rules FILE] [--timeout SECS] [--no-pace] -- SERVER COMMAND…
  mcp-conformance replay TRACE [--rules FILE] [--timeout SECS] [--no-pace] --url URL [--header …]
  mcp-conformance check [OPTION…] -- SERVER COMMAND…     (or --url URL [--header …])

record
  Our own client connects (through a recording proxy), lists everything the server offers, runs
  the STEPs in order, and closes. Every message is written to TRACE (JSON Lines).
  STEPs: --call NAME[=JSON]  --read URI  --prompt NAME[=JSON]  --subscribe URI
         --log-level LEVEL  --ping  --unknown-method METHOD  --wait MS
  --legacy   pin the initialize era (2025-11-25 and older) instead of the dual-era default
  --proxy    record another client: give `mcp-conformance record --proxy -o TRACE -- SERVER…` to a
             host application as its server command; lines pass through unchanged. With
             --url, a recording reverse proxy: it prints its own URL for the client, and
             records until its stdin closes.

replay
  Sends the trace's client side to a live server and compares each answer with the recording.
  Without a server, a stdio trace's recorded command is started (from the current directory).
  Exit 0 when everything matches, 1 with a diff when not. --rules names what may vary.

check
  Property tests of a live server with proptest: generated request sequences from its own
  tools, prompts and resources. Exit 0 when every property holds, 1 with a minimal failing
  sequence (and --failure-trace FILE to write it as a trace that `replay` reproduces).
  --cases N (32)  --max-actions N (6)  --time-limit SECS (120)  --timeout SECS (10)
  --seed N  --protocol-version V (2025-11-25)  --skip-tool NAME (never call it)
  --allow PROPERTY (warn instead of fail; one of
  one-response, parse-error, invalid-request, method-not-found, invalid-params, schema,
  output-schema, survives)

Exit codes: 0 pass, 1 a difference or a violated property, 2 a usage or I/O error.
";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some((command, rest)) = args.split_first() else {
        eprint!("{USAGE}");
        return ExitCode::from(2);
    };
    let result = match command.as_str() {
        "record" => record_command(rest),
        "replay" => replay_command(rest),
        "check" => check_command(rest),
        "help" | "--help" | "-h" => {
            print!("{USAGE}");
            Ok(ExitCode::SUCCESS)
        }
        other => Err(format!("unknown command {other:?}")),
    };
    result.unwrap_or_else(|e| {
        eprintln!("mcp-conformance: {e}\n(run `mcp-conformance help` for the usage)");
        ExitCode::from(2)
    })
}

/// The options before `--`, the server command after it, and the target.
struct Parsed {
    options: Vec<(String, Option<String>)>,
    positional: Vec<String>,
    target: Option<Target>,
}

/// Options that take no value.
const FLAGS: &[&str] = &["--proxy", "--legacy", "--ping", "--no-pace"];

fn parse(args: &[String]) -> Result<Parsed, String> {
    let (before, command) = match args.iter().position(|a| a == "--") {
        Some(at) => (&args[..at], Some(&args[at + 1..])),
        None => (args, None),
    };
    let mut options = Vec::new();
    let mut positional = Vec::new();
    let mut url = None;
    let mut headers = Vec::new();
    let mut iter = before.iter();
    while let Some(arg) = iter.next() {
        if !arg.starts_with('-') {
            positional.push(arg.clone());
            continue;
        }
        if FLAGS.contains(&arg.as_str()) {
            options.push((arg.clone(), None));
            continue;
        }
        let value = iter.next().ok_or_else(|| format!("{arg} needs a value"))?.clone();
        match arg.as_str() {
            "--url" => url = Some(value),
            "--header" => {
                let (name, value) = value
                    .split_once(':')
                    .ok_or_else(|| format!("--header {value:?}: expected 'Name: value'"))?;
                headers.push((name.trim().to_owned(), value.trim().to_owned()));
            }
            _ => options.push((arg.clone(), Some(value))),
        }
    }
    let target = match (command, url) {
        (Some(_), Some(_)) => return Err("give a server command after `--` or --url, not both".into()),
        (Some([]), None) => return Err("no server command after `--`".into()),
        (Some(command), None) => Some(Target::stdio(command.iter().cloned())),
        (None, Some(url)) => Some(Target::Http { url, headers }),
        (None, None) => None,
    };
    Ok(Parsed { options, positional, target })
}

impl Parsed {
    fn value(&self, name: &str) -> Option<&str> {
        self.options.iter().rev().find(|(n, _)| n == name).and_then(|(_, v)| v.as_deref())
    }

    fn flag(&self, name: &str) -> bool {
        self.options.iter().any(|(n, _)| n == name)
    }

    fn number<T: std::str::FromStr>(&self, name: &str) -> Result<Option<T>, String> {
        self.value(name).map(|v| v.parse().map_err(|_| format!("{name} {v:?}: not a number"))).transpose()
    }

    fn seconds(&self, name: &str) -> Result<Option<Duration>, String> {
        Ok(self.number::<f64>(name)?.filter(|s| *s >= 0.0).map(Duration::from_secs_f64))
    }

    fn target(&self) -> Result<&Target, String> {
        self.target.as_ref().ok_or_else(|| "no server: give `-- SERVER COMMAND…` or --url URL".into())
    }

    fn check_known(&self, known: &[&str]) -> Result<(), String> {
        match self.options.iter().find(|(n, _)| !known.contains(&n.as_str())) {
            Some((name, _)) => Err(format!("unknown option {name}")),
            None => Ok(()),
        }
    }
}

/// `NAME` or `NAME=JSON`.
fn name_and_json(text: &str) -> Result<(String, Value), String> {
    match text.split_once('=') {
        None => Ok((text.to_owned(), Value::Object(Default::default()))),
        Some((name, json)) => {
            let value: Value = serde_json::from_str(json)
                .map_err(|e| format!("{text:?}: the arguments are not JSON: {e}"))?;
            if !value.is_object() {
                return Err(format!("{text:?}: the arguments must be a JSON object"));
            }
            Ok((name.to_owned(), value))
        }
    }
}

fn record_command(args: &[String]) -> Result<ExitCode, String> {
    let parsed = parse(args)?;
    let out = PathBuf::from(parsed.value("-o").ok_or("record needs -o TRACE")?);
    if parsed.flag("--proxy") {
        parsed.check_known(&["--proxy", "-o", "--note", "--listen"])?;
        let target = parsed.target()?;
        let mut header =
            TraceHeader::new(target.transport(), target.identity(), record::recorded_with("record --proxy"));
        header.note = parsed.value("--note").map(str::to_owned);
        let writer =
            TraceWriter::create(&out, header).map_err(|e| format!("cannot create {}: {e}", out.display()))?;
        return match target {
            Target::Stdio { command } => {
                let status = record::run_stdio_proxy(command, writer).map_err(|e| e.to_string())?;
                Ok(ExitCode::from(u8::try_from(status.code().unwrap_or(1)).unwrap_or(1)))
            }
            Target::Http { url, .. } => {
                let listen = parsed.value("--listen").unwrap_or("127.0.0.1:0");
                let listen = listen.parse().map_err(|_| format!("--listen {listen:?}: not an address"))?;
                http_proxy(listen, url, writer)
            }
        };
    }
    let mut plan = Plan { note: parsed.value("--note").map(str::to_owned), ..Plan::default() };
    if parsed.flag("--legacy") {
        plan.versions = Some(ProtocolVersion::LEGACY.iter().rev().copied().collect());
    }
    for (name, value) in &parsed.options {
        let value = value.as_deref().unwrap_or_default();
        let step = match name.as_str() {
            "--call" => {
                let (name, arguments) = name_and_json(value)?;
                Step::Call { name, arguments }
            }
            "--prompt" => {
                let (name, arguments) = name_and_json(value)?;
                Step::Prompt { name, arguments }
            }
            "--read" => Step::Read(value.to_owned()),
            "--subscribe" => Step::Subscribe(value.to_owned()),
            "--ping" => Step::Ping,
            "--unknown-method" => Step::UnknownMethod(value.to_owned()),
            "--wait" => Step::Wait(Duration::from_millis(
                value.parse().map_err(|_| format!("--wait {value:?}: not a number of ms"))?,
            )),
            "--log-level" => Step::LogLevel(
                serde_json::from_value::<LoggingLevel>(Value::String(value.to_owned())).map_err(|_| {
                    format!("--log-level {value:?}: not a level (debug, info, notice, warning, error, …)")
                })?,
            ),
            "-o" | "--note" | "--legacy" => continue,
            other => return Err(format!("unknown option {other}")),
        };
        plan.steps.push(step);
    }
    let target = parsed.target()?;
    let exe = std::env::current_exe().map_err(|e| format!("cannot find this program: {e}"))?;
    let proxy = vec![exe.to_string_lossy().into_owned(), "record".into(), "--proxy".into()];
    let report =
        smol::block_on(record::record_session(target, &plan, &out, &proxy)).map_err(|e| e.to_string())?;
    let trace =
        Trace::read(&out).map_err(|e| format!("the recording {} is unreadable: {e}", out.display()))?;
    eprintln!("recorded {} messages to {}", trace.entries.len(), out.display());
    for problem in &report.problems {
        eprintln!("problem: {problem}");
    }
    Ok(if report.problems.is_empty() { ExitCode::SUCCESS } else { ExitCode::FAILURE })
}

/// `record --proxy --url`: a recording reverse proxy for any HTTP client, until stdin closes.
fn http_proxy(listen: std::net::SocketAddr, upstream: &str, writer: TraceWriter) -> Result<ExitCode, String> {
    let writer = std::sync::Arc::new(std::sync::Mutex::new(writer));
    smol::block_on(async {
        let proxy = RecordingProxy::start(listen, upstream.to_owned(), writer.clone())
            .await
            .map_err(|e| format!("cannot listen on {listen}: {e}"))?;
        println!("{}", proxy.url());
        eprintln!("recording; point the client at the URL above, close stdin (Ctrl-D) to stop");
        smol::unblock(|| std::io::copy(&mut std::io::stdin().lock(), &mut std::io::sink())).await.ok();
        proxy.stop().await;
        Ok::<(), String>(())
    })?;
    let mut writer = writer.lock().unwrap_or_else(|e| e.into_inner());
    writer.finish().map_err(|e| format!("cannot write the trace: {e}"))?;
    Ok(ExitCode::SUCCESS)
}

fn replay_command(args: &[String]) -> Result<ExitCode, String> {
    let parsed = parse(args)?;
    parsed.check_known(&["--rules", "--timeout", "--no-pace"])?;
    let [path] = parsed.positional.as_slice() else { return Err("replay needs one TRACE".into()) };
    let trace = Trace::read(path).map_err(|e| format!("{path}: {e}"))?;
    let mut options = ReplayOptions::default();
    if let Some(rules) = parsed.value("--rules") {
        options.rules = Rules::read(rules)?;
    }
    if let Some(timeout) = parsed.seconds("--timeout")? {
        options.timeout = timeout;
    }
    options.pace = !parsed.flag("--no-pace");
    // A stdio trace names the command it was recorded from; it is the default server.
    let recorded = match (&trace.header.transport, &trace.header.server.command) {
        (mcp_conformance::trace::Transport::Stdio, Some(command)) if !command.is_empty() => {
            Some(Target::stdio(command.iter().cloned()))
        }
        _ => None,
    };
    let target = match (&parsed.target, &recorded) {
        (Some(target), _) | (None, Some(target)) => target,
        (None, None) => return Err("no server: give `-- SERVER COMMAND…` or --url URL".into()),
    };
    let report = smol::block_on(replay::replay(&trace, target, &options)).map_err(|e| e.to_string())?;
    println!("{report}");
    if !report.passed() && !report.stderr.trim().is_empty() {
        println!("server stderr (tail):\n{}", report.stderr.trim_end());
    }
    Ok(if report.passed() { ExitCode::SUCCESS } else { ExitCode::FAILURE })
}

fn check_command(args: &[String]) -> Result<ExitCode, String> {
    let parsed = parse(args)?;
    parsed.check_known(&[
        "--cases",
        "--max-actions",
        "--time-limit",
        "--timeout",
        "--seed",
        "--protocol-version",
        "--allow",
        "--failure-trace",
        "--skip-tool",
    ])?;
    let mut options = CheckOptions::default();
    if let Some(cases) = parsed.number("--cases")? {
        options.cases = cases;
    }
    if let Some(max) = parsed.number("--max-actions")? {
        options.max_actions = max;
    }
    if let Some(limit) = parsed.seconds("--time-limit")? {
        options.time_limit = limit;
    }
    if let Some(timeout) = parsed.seconds("--timeout")? {
        options.request_timeout = timeout;
    }
    options.seed = parsed.number("--seed")?;
    if let Some(version) = parsed.value("--protocol-version") {
        options.protocol_version = version.to_owned();
    }
    for (name, value) in &parsed.options {
        if name == "--skip-tool" {
            options.skip_tools.insert(value.clone().unwrap_or_default());
        }
        if name == "--allow" {
            let value = value.as_deref().unwrap_or_default();
            let property =
                Property::from_name(value).ok_or_else(|| format!("--allow {value:?}: no such property"))?;
            options.allow.insert(property);
        }
    }
    let target = parsed.target()?;
    let report = check::check(target, &options).map_err(|e| e.to_string())?;
    print!("{report}");
    if let (Some(path), Some(trace)) = (parsed.value("--failure-trace"), &report.failure_trace) {
        trace.write(path).map_err(|e| format!("cannot write {path}: {e}"))?;
        println!("wrote the failing sequence to {path}; `mcp-conformance replay {path} -- …` reproduces it");
    }
    Ok(if report.passed() { ExitCode::SUCCESS } else { ExitCode::FAILURE })
}
