//! The end-to-end benches run every measurement in a fresh worker process (the bench binary
//! re-executed with `--worker ...`), so that its peak RSS and CPU time belong to one client
//! alone. This module is both sides of that: the worker's result line and the parent's
//! collection and summary.

use std::process::{Command, Stdio};

pub use mcp_bench_worker::{bench_echo, report};

/// The options both end-to-end benches take: `--calls N`, `--rounds R`, and `--pinned-only` or
/// `--unpinned-only` (both placements by default).
#[derive(Clone, Debug)]
pub struct Options {
    /// Base number of calls per measurement.
    pub calls: usize,
    /// Measurements per figure (the median is reported).
    pub rounds: usize,
    /// Placements to measure: `true` is pinned to CPU 0.
    pub pins: Vec<bool>,
}

impl Options {
    /// Reads the options from `args`, with `calls` as the default call count.
    pub fn parse(args: &[String], calls: usize) -> Self {
        let value =
            |flag: &str| args.iter().position(|a| a == flag).and_then(|i| args.get(i + 1)?.parse().ok());
        let pins = if args.iter().any(|a| a == "--pinned-only") {
            vec![true]
        } else if args.iter().any(|a| a == "--unpinned-only") {
            vec![false]
        } else {
            vec![true, false]
        };
        Self { calls: value("--calls").unwrap_or(calls), rounds: value("--rounds").unwrap_or(3), pins }
    }
}

/// One worker's figures.
#[derive(Clone, Copy, Debug)]
pub struct Figures {
    /// Measured calls per second.
    pub calls_per_sec: f64,
    /// CPU time of the worker process (every thread) per call, in microseconds.
    pub cpu_us_per_call: f64,
    /// Peak resident set size of the worker process, in bytes.
    pub peak_rss: u64,
}

impl Figures {
    /// The median of each figure over `runs` (which must not be empty).
    pub fn median(runs: &[Figures]) -> Figures {
        Figures {
            calls_per_sec: median(runs.iter().map(|f| f.calls_per_sec).collect()),
            cpu_us_per_call: median(runs.iter().map(|f| f.cpu_us_per_call).collect()),
            peak_rss: median(runs.iter().map(|f| f.peak_rss as f64).collect()) as u64,
        }
    }

    /// Peak RSS in MiB.
    pub fn peak_mib(&self) -> f64 {
        self.peak_rss as f64 / (1024.0 * 1024.0)
    }
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

/// Parent side: runs this binary with `args` and reads the worker's figures.
pub fn run(args: &[String]) -> Figures {
    run_with_notes(args).0
}

/// [`run`], also returning the lines the worker printed after `NOTE ` (remarks for the report).
pub fn run_with_notes(args: &[String]) -> (Figures, Vec<String>) {
    run_program(&std::env::current_exe().expect("own path"), args)
}

/// Runs the worker `program` with `args` and reads its figures and `NOTE ` lines: this binary
/// re-executed, or another worker binary such as mcp-bench-worker's `stdio-only`.
pub fn run_program(program: &std::path::Path, args: &[String]) -> (Figures, Vec<String>) {
    let output = Command::new(program).args(args).stderr(Stdio::inherit()).output().expect("run worker");
    assert!(output.status.success(), "worker {args:?} failed");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let line = stdout.lines().find_map(|l| l.strip_prefix("RESULT ")).expect("worker result line");
    let mut fields = line.split_whitespace().map(|f| f.parse::<f64>().expect("number"));
    let mut next = || fields.next().expect("field");
    let figures = Figures { calls_per_sec: next(), cpu_us_per_call: next(), peak_rss: next() as u64 };
    let notes = stdout.lines().filter_map(|l| l.strip_prefix("NOTE ")).map(str::to_owned).collect();
    (figures, notes)
}

/// The line printed for a client beside the raw baseline.
pub fn line(prefix: &str, name: &str, ours: &Figures, raw: Option<&Figures>) -> String {
    let mut line = format!(
        "{prefix} {name:<12} {:>8.0} calls/s {:>6.2} µs cpu/call {:>5.1} MiB peak",
        ours.calls_per_sec,
        ours.cpu_us_per_call,
        ours.peak_mib()
    );
    if let Some(raw) = raw {
        line.push_str(&format!(
            "   ratio to raw: throughput {:.2}, cpu/call {:.2}",
            ours.calls_per_sec / raw.calls_per_sec,
            ours.cpu_us_per_call / raw.cpu_us_per_call
        ));
    }
    line
}

/// The rmcp rows this build can run over stdio: `rmcp-ct` and `rmcp-mt` (rmcp's client on a
/// tokio current-thread or multi-thread runtime) with the feature `rmcp`, none without it.
pub const RMCP_KINDS: &[&str] = if cfg!(feature = "rmcp") { &["rmcp-ct", "rmcp-mt"] } else { &[] };

/// The rmcp rows over HTTP: those of [`RMCP_KINDS`], and `rmcp-ct-pool` (current-thread, with
/// a connection pool and no cap below the lanes' count on concurrent POSTs; see `rmcp_clients`).
pub const RMCP_HTTP_KINDS: &[&str] =
    if cfg!(feature = "rmcp") { &["rmcp-ct", "rmcp-mt", "rmcp-ct-pool"] } else { &[] };

/// The line the benches print when they were built without rmcp.
pub const RMCP_MISSING: &str = "# no rmcp rows: they need the feature `rmcp` \
     (cargo build --release -p mcp-benches --bins --features rmcp)";

/// Each of `kinds` with the median of its `runs`.
pub fn medians<'a>(kinds: &[&'a str], runs: &[Vec<Figures>]) -> Vec<(&'a str, Figures)> {
    kinds.iter().zip(runs).map(|(kind, runs)| (*kind, Figures::median(runs))).collect()
}

/// `line` followed by the ratios of `ours` to each of `others` (named), e.g.
/// `ours/rmcp-ct: throughput 1.70, cpu/call 0.92`.
pub fn with_ratios(mut line: String, ours: &Figures, others: &[(&str, Figures)]) -> String {
    for (name, other) in others {
        line.push_str(&format!(
            "   ours/{name}: throughput {:.2}, cpu/call {:.2}",
            ours.calls_per_sec / other.calls_per_sec,
            ours.cpu_us_per_call / other.cpu_us_per_call
        ));
    }
    line
}

/// A bench HTTP server in a process of its own (the bench binary run again with
/// `--serve MODE`, printing its URL first), so that its CPU and memory are not the client's.
/// Killed and reaped on drop.
pub struct ServeProcess {
    child: std::process::Child,
    url: String,
}

impl ServeProcess {
    /// Starts `--serve` with `args` and reads the URL it prints.
    pub fn start(args: &[&str]) -> Self {
        use std::io::BufRead;
        let mut child = std::process::Command::new(std::env::current_exe().expect("own path"))
            .arg("--serve")
            .args(args)
            .stdout(std::process::Stdio::piped())
            .spawn()
            .expect("start the bench server");
        let mut line = String::new();
        std::io::BufReader::new(child.stdout.take().expect("stdout"))
            .read_line(&mut line)
            .expect("server URL");
        Self { child, url: line.trim().to_owned() }
    }

    /// The server's MCP endpoint.
    pub fn url(&self) -> &str {
        &self.url
    }
}

impl Drop for ServeProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
