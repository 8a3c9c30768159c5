//! `mcp-conformance`: record MCP sessions, replay them against live servers, and property-test
//! servers. `mcp-conformance --help` and `mcp-conformance COMMAND --help` give the usage;
//! `docs/conformance.md` has the guide.
//!
//! Exit codes: 0 pass (and `--help`, `--version`), 1 a difference or a violated property, 2 a
//! usage or I/O error.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::builder::PossibleValuesParser;
use clap::error::ErrorKind;
use clap::{ArgAction, ArgMatches, Args, CommandFactory, FromArgMatches, Parser, Subcommand};
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

/// The exit code of a usage or I/O error (clap's own for usage errors).
const USAGE_ERROR: u8 = 2;

const EXIT_CODES: &str = "Exit codes: 0 pass, 1 a difference or a violated property, 2 a usage or I/O error.";

/// Recorded MCP sessions as a test oracle: record a session with any MCP server (stdio or HTTP),
/// replay it against a live server, and property-test servers.
#[derive(Parser)]
#[command(
    name = "mcp-conformance",
    version,
    arg_required_else_help = true,
    after_help = EXIT_CODES,
    override_usage = "\
mcp-conformance record -o TRACE [STEP…] [--legacy] [--note TEXT] -- SERVER COMMAND…
       mcp-conformance record -o TRACE [STEP…] [--legacy] [--note TEXT] --url URL [--header 'Name: value']…
       mcp-conformance record --proxy -o TRACE [--note TEXT] -- SERVER COMMAND…
       mcp-conformance record --proxy -o TRACE [--listen ADDR] --url UPSTREAM
       mcp-conformance replay TRACE [--rules FILE] [--timeout SECS] [--no-pace] [-- SERVER COMMAND… | --url URL]
       mcp-conformance check [OPTION…] -- SERVER COMMAND…     (or --url URL [--header …])
       mcp-conformance COMMAND --help"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    Record(RecordArgs),
    Replay(ReplayArgs),
    Check(CheckArgs),
}

/// The server under test: a command line after `--`, or an HTTP endpoint.
#[derive(Args)]
#[command(next_help_heading = "Server")]
struct ServerArgs {
    /// The server's MCP endpoint (Streamable HTTP, or 2024-11-05 HTTP+SSE), instead of
    /// `-- SERVER COMMAND…`.
    #[arg(long, value_name = "URL", conflicts_with = "server")]
    url: Option<String>,
    /// A header sent with every HTTP request to --url (repeatable), e.g. 'Authorization: Bearer …'.
    #[arg(long = "header", value_name = "NAME: VALUE", value_parser = parse_header, requires = "url")]
    headers: Vec<(String, String)>,
    /// The stdio server's command line, after `--`: the tool starts it as a child process.
    #[arg(last = true, value_name = "SERVER COMMAND", num_args = 1..)]
    server: Vec<String>,
}

impl ServerArgs {
    /// The target named on the command line, if any (clap made sure it is at most one).
    fn target(&self) -> Option<Target> {
        match &self.url {
            Some(url) => Some(Target::Http { url: url.clone(), headers: self.headers.clone() }),
            None if self.server.is_empty() => None,
            None => Some(Target::stdio(self.server.iter().cloned())),
        }
    }
}

/// Record a session into a trace (JSON Lines).
///
/// Our own client connects (through a recording proxy), lists everything the server offers,
/// runs the steps in the order given, and closes. Every message that crosses the wire is written
/// to TRACE.
///
/// With --proxy, record another client instead: give `mcp-conformance record --proxy -o TRACE --
/// SERVER…` to a host application as its server command; lines pass through unchanged, and it
/// exits with the server's exit status. With --proxy --url, a recording reverse proxy: it prints
/// its own URL for the client, and records until its stdin closes.
#[derive(Args)]
#[command(after_help = EXIT_CODES)]
struct RecordArgs {
    /// The trace file to write.
    #[arg(short = 'o', long = "output", value_name = "TRACE")]
    output: PathBuf,
    /// Call a tool (asking for progress), with a JSON object as its arguments (default `{}`).
    #[arg(long, value_name = "NAME[=JSON]", value_parser = parse_name_and_json, help_heading = STEPS)]
    call: Vec<(String, Value)>,
    /// Read a resource.
    #[arg(long, value_name = "URI", help_heading = STEPS)]
    read: Vec<String>,
    /// Get a prompt, with a JSON object as its arguments (default `{}`).
    #[arg(long, value_name = "NAME[=JSON]", value_parser = parse_name_and_json, help_heading = STEPS)]
    prompt: Vec<(String, Value)>,
    /// Subscribe to a resource's updates.
    #[arg(long, value_name = "URI", help_heading = STEPS)]
    subscribe: Vec<String>,
    /// Set the server's log level (debug, info, notice, warning, error, critical, alert,
    /// emergency).
    #[arg(long, value_name = "LEVEL", value_parser = parse_log_level, help_heading = STEPS)]
    log_level: Vec<LoggingLevel>,
    /// Ping the server.
    // One value per occurrence (not a count), so that each has its place among the steps.
    #[arg(long, action = ArgAction::Append, num_args = 0, default_missing_value = "true", help_heading = STEPS)]
    ping: Vec<bool>,
    /// Send a request with a method the server does not know, to record its error.
    #[arg(long, value_name = "METHOD", help_heading = STEPS)]
    unknown_method: Vec<String>,
    /// Wait this many milliseconds (for notifications the server sends on its own).
    #[arg(long, value_name = "MS", help_heading = STEPS)]
    wait: Vec<u64>,
    /// Pin the initialize era (2025-11-25 and older) instead of the dual-era default.
    #[arg(long, conflicts_with = "proxy")]
    legacy: bool,
    /// Free text for the trace's header: what the session covers.
    #[arg(long, value_name = "TEXT", allow_hyphen_values = true)]
    note: Option<String>,
    /// Record another client's session instead of running our own (see above).
    #[arg(long, conflicts_with_all = ["call", "read", "prompt", "subscribe", "log_level", "ping", "unknown_method", "wait"])]
    proxy: bool,
    /// With --proxy: what the trace header's `recordedWith` names (a plain `record` launches
    /// its proxy with `--recorded-as record`).
    #[arg(long, value_name = "WHAT", requires = "proxy", hide = true)]
    recorded_as: Option<String>,
    /// With --proxy --url: the address the reverse proxy listens on.
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:0", requires_all = ["proxy", "url"])]
    listen: SocketAddr,
    #[command(flatten)]
    server: ServerArgs,
}

const STEPS: &str = "Steps (run in the order given)";

impl RecordArgs {
    /// The steps, in the order they were given on the command line (clap groups values by
    /// option; `matches` knows where each one stood).
    fn steps(&self, matches: &ArgMatches) -> Vec<Step> {
        fn at(matches: &ArgMatches, id: &str) -> Vec<usize> {
            matches.indices_of(id).map(Iterator::collect).unwrap_or_default()
        }
        let mut steps: Vec<(usize, Step)> = Vec::new();
        let mut add = |id: &str, each: Vec<Step>| steps.extend(at(matches, id).into_iter().zip(each));
        add(
            "call",
            self.call
                .iter()
                .map(|(name, arguments)| Step::Call { name: name.clone(), arguments: arguments.clone() })
                .collect(),
        );
        add("read", self.read.iter().cloned().map(Step::Read).collect());
        add(
            "prompt",
            self.prompt
                .iter()
                .map(|(name, arguments)| Step::Prompt { name: name.clone(), arguments: arguments.clone() })
                .collect(),
        );
        add("subscribe", self.subscribe.iter().cloned().map(Step::Subscribe).collect());
        add("log_level", self.log_level.iter().copied().map(Step::LogLevel).collect());
        add("ping", self.ping.iter().map(|_| Step::Ping).collect());
        add("unknown_method", self.unknown_method.iter().cloned().map(Step::UnknownMethod).collect());
        add("wait", self.wait.iter().map(|ms| Step::Wait(Duration::from_millis(*ms))).collect());
        steps.sort_by_key(|(index, _)| *index);
        steps.into_iter().map(|(_, step)| step).collect()
    }
}

/// Replay a trace against a live server and compare every answer with the recording.
///
/// Sends the trace's client side to the server and compares each answer with the recorded one;
/// prints a diff for each difference. Without a server, a stdio trace's recorded command is
/// started (from the current directory). Exit 0 when everything matches, 1 when not.
#[derive(Args)]
#[command(after_help = EXIT_CODES)]
struct ReplayArgs {
    /// The trace to replay.
    #[arg(value_name = "TRACE")]
    trace: PathBuf,
    /// A rules file naming what may differ (ignore, type, unordered, optional; see
    /// docs/conformance.md).
    #[arg(long, value_name = "FILE")]
    rules: Option<PathBuf>,
    /// The longest wait for one awaited server line, in seconds [default: 10].
    #[arg(long, value_name = "SECS", value_parser = parse_seconds)]
    timeout: Option<Duration>,
    /// Send the client lines as fast as possible instead of keeping the recorded gaps.
    #[arg(long)]
    no_pace: bool,
    #[command(flatten)]
    server: ServerArgs,
}

/// Property-test a live server with generated request sequences.
///
/// The sequences are built from the server's own tools, prompts and resources (valid, boundary
/// and invalid arguments, malformed messages, cancellations, concurrent requests), each on a
/// fresh session. Every case tests every property. The report is a table with one verdict per
/// property, and for each violated property its own minimal failing sequence. A tool call that
/// outlives its budget is cancelled; if the server then still answers, the call is reported as
/// slow, which is not a failure.
///
/// Progress goes to stderr (--quiet silences it); the report goes to stdout.
#[derive(Args)]
#[command(after_help = CHECK_EXIT_CODES)]
struct CheckArgs {
    /// How many sequences to try, before shrinking [default: 32].
    #[arg(long, value_name = "N")]
    cases: Option<u32>,
    /// The most steps in one sequence [default: 6].
    #[arg(long, value_name = "N")]
    max_actions: Option<usize>,
    /// Stop starting new cases after this many seconds [default: 120].
    #[arg(long, value_name = "SECS", value_parser = parse_seconds)]
    time_limit: Option<Duration>,
    /// How long shrinking one property's failure may take, in seconds [default: 30].
    #[arg(long, value_name = "SECS", value_parser = parse_seconds)]
    shrink_time: Option<Duration>,
    /// The longest wait for an answer that must come, and for a tool call before it is
    /// cancelled as slow, in seconds; shorter waits are learned from the server's answers
    /// [default: 5].
    #[arg(long, value_name = "SECS", value_parser = parse_seconds)]
    timeout: Option<Duration>,
    /// How many sessions run at once (each case is a fresh session: a fresh process over
    /// stdio) [default: 2].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..=64))]
    jobs: Option<u16>,
    /// A fixed seed, for a repeatable run (the report names the seed of every run).
    #[arg(long, value_name = "N")]
    seed: Option<u64>,
    /// The protocol version to ask for; 2026-07-28 starts with server/discover [default:
    /// 2025-11-25].
    #[arg(long, value_name = "VERSION")]
    protocol_version: Option<String>,
    /// A tool never to call (repeatable): a destructive one, say.
    #[arg(long, value_name = "NAME")]
    skip_tool: Vec<String>,
    /// Call only this tool (repeatable), to look at a few tools closely.
    #[arg(long, value_name = "NAME")]
    tool: Vec<String>,
    /// A property that only warns instead of failing (repeatable).
    #[arg(long, value_name = "PROPERTY", value_parser = PossibleValuesParser::new(Property::ALL.map(Property::name)))]
    allow: Vec<String>,
    /// Failures known to come from a widely used SDK (no answer to malformed JSON, say) only
    /// warn; other failures of the same properties still fail.
    #[arg(long)]
    allow_sdk_deviations: bool,
    /// The report's format on stdout.
    #[arg(long, value_name = "FORMAT", value_enum, default_value_t = Format::Text)]
    format: Format,
    /// Also write the report as JUnit XML to FILE.
    #[arg(long, value_name = "FILE")]
    junit: Option<PathBuf>,
    /// Write each violated property's minimal sequence to DIR/PROPERTY.jsonl, as a trace that
    /// `replay` reproduces.
    #[arg(long, value_name = "DIR")]
    failure_traces: Option<PathBuf>,
    /// No progress on stderr.
    #[arg(long, short = 'q')]
    quiet: bool,
    #[command(flatten)]
    server: ServerArgs,
}

/// The formats of `check`'s report.
#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum Format {
    /// A table, then each violation with its minimal sequence.
    Text,
    /// One JSON object.
    Json,
    /// JUnit XML: one test case per property.
    Junit,
}

const CHECK_EXIT_CODES: &str = "Exit codes: 0 every property held (or broke only as allowed), 1 a property was violated, \
2 a usage or I/O error, 3 the server could not be checked (it did not start, or refused the handshake).";

/// The exit code of `check` when the server cannot be checked at all.
const UNCHECKABLE: u8 = 3;

/// Why a command did not run to its verdict.
enum Failure {
    /// The command line is wrong: printed by clap, with the usage.
    Usage(clap::Error),
    /// Anything else that stopped the command (an unreadable file, a server that never answered).
    Other(String),
}

impl From<String> for Failure {
    fn from(message: String) -> Self {
        Failure::Other(message)
    }
}

impl From<&str> for Failure {
    fn from(message: &str) -> Self {
        Failure::Other(message.to_owned())
    }
}

/// A usage error of `command`, worded and printed the way clap prints its own.
fn usage_error(command: &str, message: &str) -> Failure {
    let mut cli = Cli::command();
    cli.build();
    let error = match cli.find_subcommand_mut(command) {
        Some(sub) => sub.error(ErrorKind::MissingRequiredArgument, message),
        None => cli.error(ErrorKind::MissingRequiredArgument, message),
    };
    Failure::Usage(error)
}

fn main() -> ExitCode {
    let parsed = Cli::command().try_get_matches().and_then(|matches| {
        let cli = Cli::from_arg_matches(&matches)?;
        Ok((cli, matches))
    });
    let (cli, matches) = match parsed {
        Ok(parsed) => parsed,
        Err(error) => return clap_exit(&error),
    };
    let result = match &cli.command {
        Command::Record(args) => {
            let sub = matches.subcommand_matches("record").expect("clap parsed the record command");
            record_command(args, sub)
        }
        Command::Replay(args) => replay_command(args),
        Command::Check(args) => check_command(args),
    };
    match result {
        Ok(code) => code,
        Err(Failure::Usage(error)) => clap_exit(&error),
        Err(Failure::Other(message)) => {
            eprintln!("mcp-conformance: {message}");
            ExitCode::from(USAGE_ERROR)
        }
    }
}

/// Prints what clap has to say: help and version to stdout with exit 0, usage errors to
/// stderr with exit 2.
fn clap_exit(error: &clap::Error) -> ExitCode {
    // Nothing more to say if even the terminal is gone.
    let _ = error.print();
    if error.use_stderr() { ExitCode::from(USAGE_ERROR) } else { ExitCode::SUCCESS }
}

/// `Name: value`, for --header.
fn parse_header(text: &str) -> Result<(String, String), String> {
    let (name, value) = text.split_once(':').ok_or_else(|| format!("{text:?}: expected 'Name: value'"))?;
    if name.trim().is_empty() {
        return Err(format!("{text:?}: no header name"));
    }
    Ok((name.trim().to_owned(), value.trim().to_owned()))
}

/// `NAME` or `NAME=JSON`, where the JSON is an object.
fn parse_name_and_json(text: &str) -> Result<(String, Value), String> {
    match text.split_once('=') {
        None => Ok((text.to_owned(), Value::Object(Default::default()))),
        Some((name, json)) => {
            let value: Value =
                serde_json::from_str(json).map_err(|e| format!("the arguments are not JSON: {e}"))?;
            if !value.is_object() {
                return Err("the arguments must be a JSON object".into());
            }
            Ok((name.to_owned(), value))
        }
    }
}

fn parse_log_level(text: &str) -> Result<LoggingLevel, String> {
    serde_json::from_value(Value::String(text.to_owned()))
        .map_err(|_| "not a level (debug, info, notice, warning, error, critical, alert, emergency)".into())
}

/// A number of seconds, fractions allowed: not negative, and small enough to be a [`Duration`].
fn parse_seconds(text: &str) -> Result<Duration, String> {
    let seconds: f64 = text.parse().map_err(|_| "not a number of seconds".to_owned())?;
    if seconds < 0.0 {
        return Err("a negative number of seconds".into());
    }
    Duration::try_from_secs_f64(seconds).map_err(|_| "too many seconds".into())
}

fn record_command(args: &RecordArgs, matches: &ArgMatches) -> Result<ExitCode, Failure> {
    let Some(target) = args.server.target() else {
        return Err(usage_error("record", "no server: give `-- SERVER COMMAND…` or --url URL"));
    };
    let out = &args.output;
    if args.proxy {
        let what = args.recorded_as.as_deref().unwrap_or("record --proxy");
        let mut header = TraceHeader::new(target.transport(), target.identity(), record::recorded_with(what));
        header.note = args.note.clone();
        let writer =
            TraceWriter::create(out, header).map_err(|e| format!("cannot create {}: {e}", out.display()))?;
        return match &target {
            Target::Stdio { command } => {
                let status = record::run_stdio_proxy(command, writer).map_err(|e| e.to_string())?;
                Ok(ExitCode::from(u8::try_from(status.code().unwrap_or(1)).unwrap_or(1)))
            }
            Target::Http { url, .. } => http_proxy(args.listen, url, writer),
        };
    }
    let mut plan = Plan { note: args.note.clone(), steps: args.steps(matches), ..Plan::default() };
    if args.legacy {
        plan.versions = Some(ProtocolVersion::LEGACY.iter().rev().copied().collect());
    }
    let exe = std::env::current_exe().map_err(|e| format!("cannot find this program: {e}"))?;
    let proxy = vec![
        exe.to_string_lossy().into_owned(),
        "record".into(),
        "--proxy".into(),
        "--recorded-as".into(),
        "record".into(),
    ];
    let report =
        smol::block_on(record::record_session(&target, &plan, out, &proxy)).map_err(|e| e.to_string())?;
    let trace =
        Trace::read(out).map_err(|e| format!("the recording {} is unreadable: {e}", out.display()))?;
    eprintln!("recorded {} messages to {}", trace.entries.len(), out.display());
    for problem in &report.problems {
        eprintln!("problem: {problem}");
    }
    Ok(if report.problems.is_empty() { ExitCode::SUCCESS } else { ExitCode::FAILURE })
}

/// `record --proxy --url`: a recording reverse proxy for any HTTP client, until stdin closes.
fn http_proxy(listen: SocketAddr, upstream: &str, writer: TraceWriter) -> Result<ExitCode, Failure> {
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

fn replay_command(args: &ReplayArgs) -> Result<ExitCode, Failure> {
    let path = args.trace.display();
    let trace = Trace::read(&args.trace).map_err(|e| format!("{path}: {e}"))?;
    let mut options = ReplayOptions::default();
    if let Some(rules) = &args.rules {
        options.rules = Rules::read(rules)?;
    }
    if let Some(timeout) = args.timeout {
        options.timeout = timeout;
    }
    options.pace = !args.no_pace;
    // A stdio trace names the command it was recorded from; it is the default server.
    let recorded = match (&trace.header.transport, &trace.header.server.command) {
        (mcp_conformance::trace::Transport::Stdio, Some(command)) if !command.is_empty() => {
            Some(Target::stdio(command.iter().cloned()))
        }
        _ => None,
    };
    let Some(target) = args.server.target().or(recorded) else {
        return Err(usage_error(
            "replay",
            "no server: the trace names no command; give `-- SERVER COMMAND…` or --url URL",
        ));
    };
    let report = smol::block_on(replay::replay(&trace, &target, &options)).map_err(|e| e.to_string())?;
    println!("{report}");
    if !report.passed() && !report.stderr.trim().is_empty() {
        println!("server stderr (tail):\n{}", report.stderr.trim_end());
    }
    Ok(if report.passed() { ExitCode::SUCCESS } else { ExitCode::FAILURE })
}

fn check_command(args: &CheckArgs) -> Result<ExitCode, Failure> {
    let Some(target) = args.server.target() else {
        return Err(usage_error("check", "no server: give `-- SERVER COMMAND…` or --url URL"));
    };
    let mut options = CheckOptions::default();
    if let Some(cases) = args.cases {
        options.cases = cases;
    }
    if let Some(max) = args.max_actions {
        options.max_actions = max;
    }
    if let Some(limit) = args.time_limit {
        options.time_limit = limit;
    }
    if let Some(limit) = args.shrink_time {
        options.shrink_time = limit;
    }
    if let Some(timeout) = args.timeout {
        options.request_timeout = timeout;
    }
    if let Some(jobs) = args.jobs {
        options.jobs = usize::from(jobs);
    }
    options.seed = args.seed;
    if let Some(version) = &args.protocol_version {
        options.protocol_version = version.clone();
    }
    options.skip_tools.extend(args.skip_tool.iter().cloned());
    options.only_tools.extend(args.tool.iter().cloned());
    for name in &args.allow {
        // clap accepted only the names of properties.
        let property =
            Property::from_name(name).ok_or_else(|| format!("--allow {name:?}: no such property"))?;
        options.allow.insert(property);
    }
    options.allow_sdk_deviations = args.allow_sdk_deviations;
    let quiet = args.quiet;
    let progress = move |event: check::Progress<'_>| {
        if !quiet {
            print_progress(&event);
        }
    };
    let report = match check::check_with_progress(&target, &options, &progress) {
        Ok(report) => report,
        Err(e) => {
            eprintln!("mcp-conformance: the server could not be checked: {e}");
            return Ok(ExitCode::from(UNCHECKABLE));
        }
    };
    match args.format {
        Format::Text => print!("{report}"),
        Format::Json => println!("{:#}", report.to_json()),
        Format::Junit => print!("{}", report.to_junit()),
    }
    if let Some(path) = &args.junit {
        std::fs::write(path, report.to_junit())
            .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    }
    if let Some(dir) = &args.failure_traces {
        std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        for (property, violation) in report.violations() {
            let path = dir.join(format!("{property}.jsonl"));
            violation.trace.write(&path).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
            if !quiet {
                let path = path.display();
                eprintln!(
                    "wrote {property}'s failing sequence to {path}; `mcp-conformance replay {path} -- …` reproduces it"
                );
            }
        }
    }
    Ok(if report.passed() { ExitCode::SUCCESS } else { ExitCode::FAILURE })
}

/// One line of progress on stderr: the cases as they end (at most one line a second, and
/// every new violation at once), then each property's shrinking.
fn print_progress(event: &check::Progress<'_>) {
    use std::sync::Mutex;
    use std::time::Instant;
    static LAST: Mutex<Option<Instant>> = Mutex::new(None);
    match event {
        check::Progress::Explored { catalog, seed } => {
            let name = catalog.server_info.get("name").and_then(Value::as_str).unwrap_or("?");
            eprintln!(
                "check: {name} ({}), {} tool(s), {} prompt(s), {} resource(s); seed {seed}",
                catalog.version,
                catalog.tools.len(),
                catalog.prompts.len(),
                catalog.resources.len()
            );
        }
        check::Progress::Found { property, case, finding } => {
            eprintln!("check: case {case} broke {property}: {}", finding.message);
        }
        check::Progress::Case { done, of, violated } => {
            let mut last = LAST.lock().unwrap_or_else(|e| e.into_inner());
            let due = last.is_none_or(|at| at.elapsed() >= Duration::from_secs(1));
            if due || done == of {
                *last = Some(Instant::now());
                let names: Vec<&str> = violated.iter().map(|p| p.name()).collect();
                let so_far = if names.is_empty() { "none".to_owned() } else { names.join(", ") };
                eprintln!("check: {done}/{of} cases; violated so far: {so_far}");
            }
        }
        check::Progress::Shrinking { property, runs, steps } => {
            eprintln!("check: shrinking {property}: {runs} runs, {steps} step(s) so far");
        }
        check::Progress::Shrunk { property, steps, runs } => {
            eprintln!("check: {property} shrunk to {steps} step(s) in {runs} runs");
        }
        _ => {}
    }
}
