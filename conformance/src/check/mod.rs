//! Property tests of a live MCP server, in any language, with proptest.
//!
//! [`explore`] asks the server what it offers (tools with their input schemas, prompts,
//! resources). [`actions`] turns that into a proptest strategy of request sequences: calls with
//! valid, boundary and invalid arguments, prompts, reads, lists, pings, unknown methods,
//! malformed JSON, invalid requests, cancellations and concurrent batches. [`run_case`] plays
//! one sequence against a fresh session and checks the protocol's invariants, the
//! [`Property`]s:
//!
//! - every request gets exactly one response, with its id; no response has an id that was never
//!   sent;
//! - malformed JSON gets a `-32700` error, JSON that is not a valid request `-32600`, and an
//!   unknown method `-32601`;
//! - invalid tool arguments get `-32602` or a result with `isError: true`;
//! - every result and every server message validates against the official JSON schema of the
//!   negotiated version, and `structuredContent` against the tool's `outputSchema`;
//! - after a request is cancelled (by the sequence, or because it outlived its time budget),
//!   the server still answers;
//! - the server is still there at the end;
//! - for a server that offers the tasks extension (2026-07-28), its tasks keep to the valid
//!   status transitions, `tasks/get` of an unknown id is an error, `tasks/cancel` is
//!   idempotent, and a task's result has the tool's result shape (see `session/tasks.rs`);
//! - for a server that offers the skills extension (SEP-2640): every file a skill entry lists
//!   reads back with the entry's size and `sha256:` digest, every entry's frontmatter `name` is
//!   the last segment of its skill's path, and no skill lists more than 512 files or 16 MiB.
//!
//! A tool call that takes longer than its budget is not a failure: MCP lets a request run until
//! it is cancelled. It is cancelled, the server must answer a probe, and the call is reported
//! as [slow](SlowRequest).
//!
//! [`check`] runs many cases and tests every property in each. For each property that broke, it
//! shrinks the first sequence that broke it to a minimal one of its own, and records that
//! sequence as a trace that `mcp-conformance replay` reproduces. Softer findings (a tool that
//! accepts invalid arguments, an internal error on valid ones) are warnings.

mod actions;
mod headers;
mod report;
mod run;
mod session;
mod shrink;
mod skills;

use std::collections::BTreeSet;
use std::fmt;
use std::io;
use std::time::Duration;

use mcp_sansio::schema::SKILLS_EXTENSION;
use proptest::test_runner::TestCaseError;
use serde_json::{Value, json};

use crate::peer::Target;

pub use actions::{Action, ArgumentKind, action_line, actions};
pub use report::{Allowed, AllowedBy, CheckReport, PropertyReport, ShrinkEnd, Verdict, Violation};
pub use run::{Progress, check, check_with_progress};
pub use session::{CaseOutcome, explore};

/// The protocol version `check` negotiates unless told otherwise.
pub const DEFAULT_VERSION: &str = "2025-11-25";

/// How a check runs.
#[derive(Debug, Clone)]
pub struct CheckOptions {
    /// How many sequences to try (before shrinking).
    pub cases: u32,
    /// The longest sequence.
    pub max_actions: usize,
    /// The longest wait for an answer that must come (a ping, a list, an error), and for a tool
    /// call before it is cancelled as slow. Once the server has answered a few requests,
    /// shorter budgets are learned from how fast it answered.
    pub request_timeout: Duration,
    /// The longest wait for an answer to malformed JSON (which some servers never answer).
    pub parse_error_timeout: Duration,
    /// Stop starting new cases after this long.
    pub time_limit: Duration,
    /// How long shrinking one property's failure may take.
    pub shrink_time: Duration,
    /// The most shrink steps for one property's failure.
    pub max_shrink_iters: u32,
    /// How many sessions run at once (each case and each shrink is a fresh session).
    pub jobs: usize,
    /// The protocol version to ask for in `initialize`.
    pub protocol_version: String,
    /// Properties that only warn (by name, see [`Property`]).
    pub allow: BTreeSet<Property>,
    /// Whether failures known to come from the server's SDK ([`SdkDeviation`]) only warn.
    pub allow_sdk_deviations: bool,
    /// A fixed seed, for a repeatable run; without one, a seed is drawn and reported.
    pub seed: Option<u64>,
    /// Tools never to call (destructive ones).
    pub skip_tools: BTreeSet<String>,
    /// When not empty, the only tools to call (to look at a few closely).
    pub only_tools: BTreeSet<String>,
}

impl Default for CheckOptions {
    fn default() -> Self {
        Self {
            cases: 32,
            max_actions: 6,
            request_timeout: Duration::from_secs(5),
            parse_error_timeout: Duration::from_secs(2),
            time_limit: Duration::from_secs(120),
            shrink_time: Duration::from_secs(30),
            max_shrink_iters: 500,
            jobs: 2,
            protocol_version: DEFAULT_VERSION.into(),
            allow: BTreeSet::new(),
            allow_sdk_deviations: false,
            seed: None,
            skip_tools: BTreeSet::new(),
            only_tools: BTreeSet::new(),
        }
    }
}

impl CheckOptions {
    /// Whether `finding` only warns under these options.
    pub fn allows(&self, finding: &Finding) -> bool {
        self.allow.contains(&finding.property) || (self.allow_sdk_deviations && finding.known.is_some())
    }
}

/// The properties `check` tests, by the names `--allow` takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Property {
    /// Exactly one response per request, with its id (`one-response`).
    OneResponse,
    /// Malformed JSON gets `-32700` (`parse-error`).
    ParseError,
    /// JSON that is not a valid request gets `-32600` (`invalid-request`).
    InvalidRequest,
    /// An unknown method gets `-32601` (`method-not-found`).
    MethodNotFound,
    /// Invalid tool arguments get `-32602` or `isError` (`invalid-params`).
    InvalidParams,
    /// Results and server messages match the official schema (`schema`).
    Schema,
    /// `structuredContent` matches the tool's `outputSchema` (`output-schema`).
    OutputSchema,
    /// After a request is cancelled, the server still answers (`responsive`).
    Responsive,
    /// The server survives the sequence (`survives`).
    Survives,
    /// A task's status moves only along valid transitions, and its id is fresh (`task-status`).
    TaskStatus,
    /// `tasks/get` of an unknown task id gets an error (`task-unknown`).
    TaskUnknown,
    /// `tasks/cancel` is acknowledged, twice (`task-cancel`).
    TaskCancel,
    /// A task has the SEP's shape and a completed one the tool's result shape (`task-result`).
    TaskResult,
    /// A listed skill file reads back with its entry's size and digest (`skill-files`).
    SkillFiles,
    /// A skill entry's frontmatter `name` is the last segment of its path (`skill-name`).
    SkillName,
    /// No skill lists more than 512 files or 16 MiB (`skill-limits`).
    SkillLimits,
}

impl Property {
    /// Every property, in the order of the report.
    pub const ALL: [Property; 16] = [
        Property::OneResponse,
        Property::ParseError,
        Property::InvalidRequest,
        Property::MethodNotFound,
        Property::InvalidParams,
        Property::Schema,
        Property::OutputSchema,
        Property::Responsive,
        Property::Survives,
        Property::TaskStatus,
        Property::TaskUnknown,
        Property::TaskCancel,
        Property::TaskResult,
        Property::SkillFiles,
        Property::SkillName,
        Property::SkillLimits,
    ];

    /// The name `--allow` takes.
    pub fn name(self) -> &'static str {
        match self {
            Property::OneResponse => "one-response",
            Property::ParseError => "parse-error",
            Property::InvalidRequest => "invalid-request",
            Property::MethodNotFound => "method-not-found",
            Property::InvalidParams => "invalid-params",
            Property::Schema => "schema",
            Property::OutputSchema => "output-schema",
            Property::Responsive => "responsive",
            Property::Survives => "survives",
            Property::TaskStatus => "task-status",
            Property::TaskUnknown => "task-unknown",
            Property::TaskCancel => "task-cancel",
            Property::TaskResult => "task-result",
            Property::SkillFiles => "skill-files",
            Property::SkillName => "skill-name",
            Property::SkillLimits => "skill-limits",
        }
    }

    /// What holds when the property holds, in a few words.
    pub fn meaning(self) -> &'static str {
        match self {
            Property::OneResponse => "every request gets one response, with its id",
            Property::ParseError => "malformed JSON gets error -32700",
            Property::InvalidRequest => "an invalid JSON-RPC request gets error -32600",
            Property::MethodNotFound => "an unknown method gets error -32601",
            Property::InvalidParams => "invalid tool arguments get -32602 or isError",
            Property::Schema => "results and server messages match the official schema",
            Property::OutputSchema => "structuredContent matches the tool's outputSchema",
            Property::Responsive => "after a cancellation, the server still answers",
            Property::Survives => "the server lives through every sequence",
            Property::TaskStatus => "a task's status changes only validly; new tasks get new ids",
            Property::TaskUnknown => "tasks/get of an unknown task id gets an error",
            Property::TaskCancel => "tasks/cancel is acknowledged, and again when repeated",
            Property::TaskResult => "tasks have their shape; a completed one the tool's result",
            Property::SkillFiles => "a listed skill file reads back with its entry's size and digest",
            Property::SkillName => "a skill's frontmatter name is the last segment of its path",
            Property::SkillLimits => "no skill lists more than 512 files or 16 MiB",
        }
    }

    /// Whether the property applies to a server that offers what `catalog` says (the tasks
    /// properties only to one that offers the tasks extension, the skills properties only to
    /// one that offers the skills extension): the report has a row for each property that
    /// applies.
    pub fn applies(self, catalog: &Catalog) -> bool {
        (!session::tasks::is_task_property(self) || catalog.offers_tasks())
            && (!skills::is_skill_property(self) || catalog.offers(SKILLS_EXTENSION))
    }

    /// The property with this name.
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|p| p.name() == name)
    }
}

impl fmt::Display for Property {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A failure known to come from a widely used SDK rather than from the server author's code.
///
/// The check cannot see which SDK a server is built on; it knows the symptom. A finding with
/// one of these symptoms is still a violation (the server does break the protocol), with a note
/// that says where it is known from, unless [`CheckOptions::allow_sdk_deviations`] makes it a
/// warning. Unlike `--allow PROPERTY`, that leaves every other failure of the same property a
/// violation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum SdkDeviation {
    /// Malformed JSON gets no answer at all (`parse-error`).
    SilentOnMalformedJson,
    /// JSON that is not a valid request gets no answer at all (`invalid-request`).
    SilentOnInvalidRequest,
    /// JSON that is not a valid request gets `-32700` as if it were not JSON
    /// (`invalid-request`).
    ParseErrorForInvalidRequest,
    /// JSON that is not a valid request gets `-32602` (`invalid-request`).
    InvalidParamsForInvalidRequest,
    /// `tools/call` with `arguments` that are not an object gets `-32603` (`invalid-params`).
    InternalErrorForNonObjectArguments,
}

impl SdkDeviation {
    /// The property the deviation breaks.
    pub fn property(self) -> Property {
        match self {
            SdkDeviation::SilentOnMalformedJson => Property::ParseError,
            SdkDeviation::SilentOnInvalidRequest
            | SdkDeviation::ParseErrorForInvalidRequest
            | SdkDeviation::InvalidParamsForInvalidRequest => Property::InvalidRequest,
            SdkDeviation::InternalErrorForNonObjectArguments => Property::InvalidParams,
        }
    }

    /// Where the deviation is known from.
    pub fn seen_in(self) -> &'static str {
        match self {
            SdkDeviation::SilentOnMalformedJson => {
                "the stdio transports of the official TypeScript SDK and Python SDK drop lines they cannot parse"
            }
            SdkDeviation::SilentOnInvalidRequest => {
                "the stdio transports of the official TypeScript SDK and Python SDK drop messages that fail their JSON-RPC validation"
            }
            SdkDeviation::ParseErrorForInvalidRequest => {
                "the official TypeScript SDK's Streamable HTTP transport answers -32700 (HTTP 400) to any message that fails its JSON-RPC validation"
            }
            SdkDeviation::InvalidParamsForInvalidRequest => {
                "the official Python SDK's Streamable HTTP transport answers -32602 (HTTP 400) to any message that fails its JSON-RPC validation"
            }
            SdkDeviation::InternalErrorForNonObjectArguments => {
                "the official TypeScript SDK answers -32603 when `arguments` is null or not an object"
            }
        }
    }
}

/// A finding: a property that did not hold.
#[derive(Debug, Clone, PartialEq)]
pub struct Finding {
    /// Which property.
    pub property: Property,
    /// What happened.
    pub message: String,
    /// The SDK deviation this failure looks like, if any.
    pub known: Option<SdkDeviation>,
}

impl fmt::Display for Finding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "[{}] {}", self.property, self.message)
    }
}

/// A request that got no answer within its budget, was cancelled, and after which the server
/// still answered: slow, which MCP allows, not broken.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SlowRequest {
    /// What is slow: `tools/call NAME`, or the method.
    pub key: String,
    /// The request, as [`action_line`] describes it.
    pub request: String,
    /// How long it was given.
    pub budget: Duration,
    /// How long the server then took to answer the probe.
    pub probe: Duration,
}

/// Whether `version` is of the stateless era (2026-07-28 and later; dates sort as text).
fn is_modern(version: &str) -> bool {
    version >= "2026-07-28"
}

const CLIENT_NAME: &str = "mcp-conformance-check";

fn client_info() -> Value {
    json!({"name": CLIENT_NAME, "version": env!("CARGO_PKG_VERSION")})
}

/// What the check client declares: roots, sampling and elicitation, all answered, and the skills
/// extension (so that a server offering it answers `skills/list` and `skills/get`).
fn client_capabilities() -> Value {
    json!({
        "roots": {"listChanged": true},
        "sampling": {},
        "elicitation": {},
        "extensions": {SKILLS_EXTENSION: {}},
    })
}

/// What the server offers, learned once before the cases.
#[derive(Debug, Clone, Default)]
pub struct Catalog {
    /// The negotiated protocol version.
    pub version: String,
    /// `serverInfo`.
    pub server_info: Value,
    /// The server's capabilities.
    pub capabilities: Value,
    /// The tools (as listed, with their schemas).
    pub tools: Vec<Value>,
    /// The prompts.
    pub prompts: Vec<Value>,
    /// The URIs of the listed resources.
    pub resources: Vec<String>,
    /// The skill entries `skills/list` gave (the first 16), when the server offers the skills
    /// extension.
    pub skills: Vec<Value>,
}

impl Catalog {
    fn has(&self, capability: &str) -> bool {
        self.capabilities.get(capability).is_some()
    }

    /// Whether the server offers extension `id`.
    fn offers(&self, id: &str) -> bool {
        self.capabilities.get("extensions").and_then(|e| e.get(id)).is_some()
    }

    fn tool(&self, name: &str) -> Option<&Value> {
        self.tools.iter().find(|t| t.get("name").and_then(Value::as_str) == Some(name))
    }
}

/// Plays `actions` against a fresh session of `target` and checks every property, with the
/// options' timeouts.
pub async fn run_case(
    target: &Target,
    catalog: &Catalog,
    actions: &[Action],
    options: &CheckOptions,
) -> io::Result<CaseOutcome> {
    session::run_case_with(target, catalog, actions, options, &session::Plan::full(options)).await
}

/// [`run_case`] for a server author's own `proptest!` tests: fails the test case with the
/// violations, so that proptest shrinks it.
///
/// ```no_run
/// use std::sync::LazyLock;
///
/// use mcp_conformance::check::{self, Catalog, CheckOptions};
/// use mcp_conformance::peer::Target;
/// use proptest::prelude::*;
///
/// static TARGET: LazyLock<Target> = LazyLock::new(|| Target::stdio(["./my-server", "--stdio"]));
/// static OPTIONS: LazyLock<CheckOptions> = LazyLock::new(CheckOptions::default);
/// static CATALOG: LazyLock<Catalog> =
///     LazyLock::new(|| smol::block_on(check::explore(&TARGET, &OPTIONS)).expect("the server starts"));
///
/// proptest! {
///     #[test]
///     fn my_server_keeps_the_protocol(actions in check::actions(&CATALOG, 6)) {
///         check::prop_check(&TARGET, &CATALOG, &actions, &OPTIONS)?;
///     }
/// }
/// ```
pub fn prop_check(
    target: &Target,
    catalog: &Catalog,
    actions: &[Action],
    options: &CheckOptions,
) -> Result<(), TestCaseError> {
    let outcome = smol::block_on(run_case(target, catalog, actions, options))
        .map_err(|e| TestCaseError::fail(format!("could not run the case: {e}")))?;
    if outcome.violations.is_empty() {
        return Ok(());
    }
    let message = outcome.violations.iter().map(ToString::to_string).collect::<Vec<_>>().join("\n");
    Err(TestCaseError::fail(message))
}
