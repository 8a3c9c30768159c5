//! What a check found: one verdict per property, each violation with its own minimal sequence,
//! and the slow requests. Printed as a table ([`fmt::Display`]), as JSON
//! ([`CheckReport::to_json`]) or as JUnit XML ([`CheckReport::to_junit`]).

use std::fmt;
use std::fmt::Write as _;
use std::time::Duration;

use serde_json::{Value, json};

use super::actions::{Action, action_line};
use super::shrink::VALUE_RUNS;
use super::{Catalog, Finding, Property, SlowRequest};
use crate::trace::Trace;

/// How a property fared.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// It was tested and always held.
    Held,
    /// It broke.
    Violated,
    /// It broke, and the options allow that (`--allow`, or a known SDK deviation with
    /// `--allow-sdk-deviations`).
    Allowed,
    /// No case tested it (no tool declares an `outputSchema`, say).
    NotTested,
}

impl Verdict {
    /// The word the table shows.
    pub fn word(self) -> &'static str {
        match self {
            Verdict::Held => "pass",
            Verdict::Violated => "FAIL",
            Verdict::Allowed => "allowed",
            Verdict::NotTested => "not tested",
        }
    }
}

/// How shrinking a violation ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ShrinkEnd {
    /// No smaller sequence breaks the property.
    Minimal,
    /// The shrink time (`--shrink-time`) ran out first: the sequence is small, maybe not
    /// minimal.
    OutOfTime,
    /// The most shrink sessions were run first.
    OutOfSteps,
    /// The steps stopped getting fewer, and their values had been shrunk for 48 sessions: the
    /// steps are minimal, the values maybe not.
    ValuesCut,
    /// The failing sequence passed when run again: the failure depends on more than the
    /// sequence (state the server keeps across sessions, or chance), and shrinking stopped.
    Unstable,
}

/// A property that broke, with its own minimal sequence.
#[derive(Debug, Clone)]
pub struct Violation {
    /// What the minimal sequence broke (the first finding of the property in its last run).
    pub finding: Finding,
    /// The minimal sequence.
    pub minimal: Vec<Action>,
    /// How many steps the sequence had when found.
    pub found_len: usize,
    /// The case (counting from 1) that first broke the property.
    pub case: u32,
    /// How many sessions shrinking ran.
    pub shrink_runs: u32,
    /// How shrinking ended.
    pub shrink_end: ShrinkEnd,
    /// The minimal sequence's session, as a trace that `replay` reproduces.
    pub trace: Trace,
}

/// Why a failure only warns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AllowedBy {
    /// `--allow PROPERTY` ([`CheckOptions::allow`](super::CheckOptions::allow)).
    Flag,
    /// It is a known SDK deviation, and those are allowed
    /// ([`CheckOptions::allow_sdk_deviations`](super::CheckOptions::allow_sdk_deviations)).
    SdkDeviation,
}

/// A failure the options allow.
#[derive(Debug, Clone)]
pub struct Allowed {
    /// The first such failure.
    pub finding: Finding,
    /// Why it only warns.
    pub by: AllowedBy,
}

/// One row of the table.
#[derive(Debug, Clone)]
pub struct PropertyReport {
    /// The property.
    pub property: Property,
    /// How it fared.
    pub verdict: Verdict,
    /// How many times the cases tested it.
    pub checks: u64,
    /// Its minimal failing sequence, when violated.
    pub violation: Option<Violation>,
    /// The first allowed failure, when allowed.
    pub allowed: Option<Allowed>,
}

/// The outcome of [`check`](super::check).
#[derive(Debug, Clone, Default)]
pub struct CheckReport {
    /// What the server offered.
    pub catalog: Catalog,
    /// The seed of the run: `--seed` with it repeats the run.
    pub seed: u64,
    /// Cases run (not counting shrinking).
    pub cases: u32,
    /// Whether the time limit stopped the cases early.
    pub out_of_time: bool,
    /// How long the whole run took.
    pub elapsed: Duration,
    /// One row per property, in the order of [`Property::ALL`].
    pub properties: Vec<PropertyReport>,
    /// Requests that outlived their budget and were cancelled, after which the server answered:
    /// one per tool or method.
    pub slow: Vec<SlowRequest>,
    /// Softer findings, one example of each kind.
    pub warnings: Vec<String>,
}

impl CheckReport {
    /// Whether every property held (or broke only as allowed).
    pub fn passed(&self) -> bool {
        self.violations().next().is_none()
    }

    /// The violated properties, each with its minimal sequence.
    pub fn violations(&self) -> impl Iterator<Item = (Property, &Violation)> {
        self.properties.iter().filter_map(|row| Some((row.property, row.violation.as_ref()?)))
    }

    /// The row of `property`.
    pub fn property(&self, property: Property) -> Option<&PropertyReport> {
        self.properties.iter().find(|row| row.property == property)
    }

    fn server_line(&self) -> String {
        let info = &self.catalog.server_info;
        let name = info.get("name").and_then(Value::as_str).unwrap_or("?");
        let version =
            info.get("version").and_then(Value::as_str).map(|v| format!(" {v}")).unwrap_or_default();
        let skills = match self.catalog.skills.len() {
            0 => String::new(),
            n => format!(", {}", count(n, "skill")),
        };
        format!(
            "server {name}{version} ({}): {}, {}, {}{skills}",
            self.catalog.version,
            count(self.catalog.tools.len(), "tool"),
            count(self.catalog.prompts.len(), "prompt"),
            count(self.catalog.resources.len(), "resource")
        )
    }

    /// The report as one JSON object (`mcp-conformance check --format json`). Its shape:
    ///
    /// ```text
    /// {"passed": bool, "server": {"name", "version", "protocolVersion"}, "seed", "cases",
    ///  "elapsedMs", "outOfTime",
    ///  "properties": [{"property", "verdict" (pass | FAIL | allowed | not tested), "checks",
    ///                  "meaning", "violation"?: {"message", "knownSdkDeviation"?, "minimal": [step…],
    ///                  "foundInCase", "foundSteps", "shrinkRuns", "shrink" (minimal | out of time |
    ///                  out of steps | values cut short | unstable)}, "allowed"?: {"message", "knownSdkDeviation"?, "by"
    ///                  (--allow | --allow-sdk-deviations)}}…],
    ///  "slow": [{"key", "request", "budgetMs", "probeMs"}…], "warnings": [text…]}
    /// ```
    pub fn to_json(&self) -> Value {
        let properties: Vec<Value> = self
            .properties
            .iter()
            .map(|row| {
                let mut entry = json!({
                    "property": row.property.name(),
                    "verdict": row.verdict.word(),
                    "checks": row.checks,
                    "meaning": row.property.meaning(),
                });
                if let Some(violation) = &row.violation {
                    entry["violation"] = json!({
                        "message": violation.finding.message,
                        "knownSdkDeviation": violation.finding.known.map(|k| k.seen_in()),
                        "minimal": violation.minimal.iter().map(action_line).collect::<Vec<_>>(),
                        "foundInCase": violation.case,
                        "foundSteps": violation.found_len,
                        "shrinkRuns": violation.shrink_runs,
                        "shrink": shrink_word(violation.shrink_end),
                    });
                }
                if let Some(allowed) = &row.allowed {
                    entry["allowed"] = json!({
                        "message": allowed.finding.message,
                        "knownSdkDeviation": allowed.finding.known.map(|k| k.seen_in()),
                        "by": match allowed.by {
                            AllowedBy::Flag => "--allow",
                            AllowedBy::SdkDeviation => "--allow-sdk-deviations",
                        },
                    });
                }
                entry
            })
            .collect();
        let info = &self.catalog.server_info;
        json!({
            "passed": self.passed(),
            "server": {
                "name": info.get("name"),
                "version": info.get("version"),
                "protocolVersion": self.catalog.version,
            },
            "seed": self.seed,
            "cases": self.cases,
            "elapsedMs": millis(self.elapsed),
            "outOfTime": self.out_of_time,
            "properties": properties,
            "slow": self.slow.iter().map(|slow| json!({
                "key": slow.key,
                "request": slow.request,
                "budgetMs": millis(slow.budget),
                "probeMs": millis(slow.probe),
            })).collect::<Vec<_>>(),
            "warnings": self.warnings,
        })
    }

    /// The report as JUnit XML (`mcp-conformance check --format junit`): one test suite, one
    /// test case per property. A violated property is a `<failure>` with its minimal sequence;
    /// a property no case tested is `<skipped>`; an allowed failure, the slow requests and the
    /// warnings go to `<system-out>`.
    pub fn to_junit(&self) -> String {
        let failures = self.violations().count();
        let skipped = self.properties.iter().filter(|row| row.verdict == Verdict::NotTested).count();
        let mut xml = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
        let suite = format!("mcp-conformance check: {}", self.server_line());
        let _ = writeln!(
            xml,
            "<testsuites tests=\"{}\" failures=\"{failures}\" errors=\"0\" skipped=\"{skipped}\" time=\"{:.3}\">",
            self.properties.len(),
            self.elapsed.as_secs_f64()
        );
        let _ = writeln!(
            xml,
            "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{failures}\" errors=\"0\" skipped=\"{skipped}\" time=\"{:.3}\">",
            xml_escape(&suite),
            self.properties.len(),
            self.elapsed.as_secs_f64()
        );
        for row in &self.properties {
            let _ = write!(
                xml,
                "    <testcase classname=\"mcp-conformance.check\" name=\"{}\"",
                xml_escape(row.property.name())
            );
            match (&row.violation, row.verdict) {
                (Some(violation), _) => {
                    let _ = writeln!(xml, ">");
                    let _ = writeln!(
                        xml,
                        "      <failure message=\"{}\" type=\"{}\">{}</failure>",
                        xml_escape(&violation.finding.message),
                        row.property.name(),
                        xml_escape(&violation_text(row.property, violation))
                    );
                    let _ = writeln!(xml, "    </testcase>");
                }
                (None, Verdict::NotTested) => {
                    let _ =
                        writeln!(xml, ">\n      <skipped message=\"no case tested it\"/>\n    </testcase>");
                }
                (None, _) => match &row.allowed {
                    Some(allowed) => {
                        let _ = writeln!(
                            xml,
                            ">\n      <system-out>allowed: {}</system-out>\n    </testcase>",
                            xml_escape(&allowed.finding.message)
                        );
                    }
                    None => {
                        let _ = writeln!(xml, "/>");
                    }
                },
            }
        }
        let mut notes = String::new();
        let _ = writeln!(notes, "{} cases, seed {}", self.cases, self.seed);
        for slow in &self.slow {
            let _ = writeln!(notes, "slow: {}", slow_line(slow));
        }
        for warning in &self.warnings {
            let _ = writeln!(notes, "warning: {warning}");
        }
        let _ = writeln!(xml, "    <system-out>{}</system-out>", xml_escape(&notes));
        xml.push_str("  </testsuite>\n</testsuites>\n");
        xml
    }
}

/// `n thing` or `n things`.
fn count(n: usize, thing: &str) -> String {
    if n == 1 { format!("1 {thing}") } else { format!("{n} {thing}s") }
}

/// `text` cut to about `max` characters, with an ellipsis when cut.
fn clip(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.to_owned(),
    }
}

fn shrink_word(end: ShrinkEnd) -> &'static str {
    match end {
        ShrinkEnd::Minimal => "minimal",
        ShrinkEnd::OutOfTime => "out of time",
        ShrinkEnd::OutOfSteps => "out of steps",
        ShrinkEnd::ValuesCut => "values cut short",
        ShrinkEnd::Unstable => "unstable",
    }
}

fn millis(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX)
}

fn xml_escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            // XML 1.0 has no place for other control characters, escaped or not.
            c if c.is_control() && !matches!(c, '\n' | '\r' | '\t') => {
                let _ = write!(out, "\\u{{{:x}}}", u32::from(c));
            }
            c => out.push(c),
        }
    }
    out
}

fn slow_line(slow: &SlowRequest) -> String {
    format!(
        "{}: no answer within {:.1?} to {}; cancelled, and the server answered a ping {:.1?} later",
        slow.key, slow.budget, slow.request, slow.probe
    )
}

/// A violation's minimal sequence and what it broke, as the text report prints it.
fn violation_text(property: Property, violation: &Violation) -> String {
    let mut text = String::new();
    let steps = violation.minimal.len();
    let shrink = match (violation.shrink_end, steps) {
        (ShrinkEnd::Minimal, _) => String::new(),
        (ShrinkEnd::ValuesCut, _) => format!("; the values were shrunk for {VALUE_RUNS} runs only"),
        (ShrinkEnd::Unstable, _) => {
            "; it passed when run again, so shrinking stopped: the failure depends on more than these steps (state the server keeps across sessions, or chance)".into()
        }
        // proptest shrinks the steps first: what was left was the values.
        (other, 1) => format!("; shrinking the values stopped: {}", shrink_word(other)),
        (other, _) => format!("; shrinking stopped: {}", shrink_word(other)),
    };
    let _ = writeln!(
        text,
        "{property}: minimal failing sequence ({steps} step{}; found in case {} with {} step{}, {} shrink runs{shrink}):",
        if steps == 1 { "" } else { "s" },
        violation.case,
        violation.found_len,
        if violation.found_len == 1 { "" } else { "s" },
        violation.shrink_runs
    );
    for (i, action) in violation.minimal.iter().enumerate() {
        let _ = writeln!(text, "  {}. {}", i + 1, action_line(action));
    }
    let _ = writeln!(text, "  violated: {}", violation.finding.message);
    if let Some(known) = violation.finding.known {
        let _ = writeln!(
            text,
            "  known SDK deviation: {}; likely not your code (--allow-sdk-deviations makes it a warning)",
            known.seen_in()
        );
    }
    text
}

impl fmt::Display for CheckReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "{}", self.server_line())?;
        writeln!(
            f,
            "{} cases{} in {:.1} s, seed {} (--seed {} repeats the run)",
            self.cases,
            if self.out_of_time { " (stopped at the time limit)" } else { "" },
            self.elapsed.as_secs_f64(),
            self.seed,
            self.seed
        )?;
        writeln!(f)?;
        writeln!(f, "{:<17} {:<10} {:>6}", "property", "verdict", "checks")?;
        let mut numbered = 0;
        for row in &self.properties {
            let note = match (&row.violation, &row.allowed) {
                (Some(violation), _) => {
                    numbered += 1;
                    let known =
                        if violation.finding.known.is_some() { " (a known SDK deviation)" } else { "" };
                    format!("see {numbered} below{known}")
                }
                (None, Some(allowed)) => {
                    let why = match allowed.by {
                        AllowedBy::Flag => "--allow",
                        AllowedBy::SdkDeviation => "a known SDK deviation",
                    };
                    format!("{why}: {}", clip(&allowed.finding.message, 100))
                }
                (None, None) if row.verdict == Verdict::NotTested => "no case tested it".into(),
                (None, None) => String::new(),
            };
            let line =
                format!("{:<17} {:<10} {:>6}  {note}", row.property.name(), row.verdict.word(), row.checks);
            writeln!(f, "{}", line.trim_end())?;
        }
        if !self.slow.is_empty() {
            writeln!(f)?;
            writeln!(f, "slow (not a failure: MCP lets a request run until it is cancelled):")?;
            for slow in &self.slow {
                writeln!(f, "  {}", slow_line(slow))?;
            }
        }
        if !self.warnings.is_empty() {
            writeln!(f)?;
            for warning in &self.warnings {
                writeln!(f, "warning: {warning}")?;
            }
        }
        for (i, (property, violation)) in self.violations().enumerate() {
            writeln!(f)?;
            write!(f, "{}. {}", i + 1, violation_text(property, violation))?;
        }
        writeln!(f)?;
        let violated: Vec<&str> = self.violations().map(|(p, _)| p.name()).collect();
        if violated.is_empty() {
            let allowed = self.properties.iter().filter(|r| r.verdict == Verdict::Allowed).count();
            let untested = self.properties.iter().filter(|r| r.verdict == Verdict::NotTested).count();
            writeln!(f, "PASS: every property held ({allowed} allowed, {untested} not tested)")
        } else {
            writeln!(
                f,
                "FAIL: {} of {} properties violated: {}",
                violated.len(),
                self.properties.len(),
                violated.join(", ")
            )
        }
    }
}
