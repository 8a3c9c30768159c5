//! The generated steps of a check: [`Action`], and the proptest strategies that make sequences
//! of them from what a server offers.

use proptest::prelude::*;
use serde_json::{Value, json};

use super::{Catalog, is_modern, skills};
use crate::arguments;
use crate::rules::short;

/// How a tool's arguments were made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ArgumentKind {
    /// Valid per the input schema.
    Valid,
    /// Valid, with values at the edges.
    Boundary,
    /// Invalid in the way described.
    Invalid(String),
}

/// One step of a generated sequence.
#[derive(Debug, Clone, PartialEq)]
pub enum Action {
    /// `tools/call`.
    CallTool {
        /// The tool.
        name: String,
        /// The arguments.
        arguments: Value,
        /// How they were made.
        kind: ArgumentKind,
    },
    /// `prompts/get`.
    GetPrompt {
        /// The prompt.
        name: String,
        /// The arguments.
        arguments: Value,
        /// Whether a required argument was left out.
        missing_required: bool,
    },
    /// `resources/read` of a listed resource (`true`) or of one that does not exist.
    ReadResource {
        /// The URI.
        uri: String,
        /// Whether the server listed it.
        listed: bool,
    },
    /// `resources/read` of a file a skill entry lists, with what the entry says of it.
    ReadSkillFile {
        /// The skill's `SKILL.md` URI.
        skill: String,
        /// The file.
        uri: String,
        /// Its digest, as listed.
        digest: String,
        /// Its size, as listed.
        size: u64,
    },
    /// `skills/get` of a listed skill.
    GetSkill {
        /// The skill's `SKILL.md` URI.
        uri: String,
    },
    /// A `*/list` request.
    List(&'static str),
    /// `ping`.
    Ping,
    /// A request with a method no server implements.
    UnknownMethod(String),
    /// A line that is not JSON.
    Malformed(String),
    /// JSON that is not a valid JSON-RPC request (`ID` stands for a fresh request id).
    InvalidRequest(String),
    /// The request, then at once `notifications/cancelled` for it.
    Cancelled(Box<Action>),
    /// All of these sent before any answer is awaited.
    Concurrent(Vec<Action>),
    /// `tasks/get` of a task id the server never made (the tasks extension).
    UnknownTask(String),
    /// A `tools/call` whose task, if it makes one, is cancelled with two `tasks/cancel` at once
    /// (the tasks extension).
    CancelTask(Box<Action>),
}

impl Action {
    /// The JSON-RPC method and params this action sends, if it is one request.
    pub(crate) fn request(&self) -> Option<(String, Value)> {
        Some(match self {
            Action::CallTool { name, arguments, .. } => {
                ("tools/call".into(), json!({"name": name, "arguments": arguments}))
            }
            Action::GetPrompt { name, arguments, .. } => {
                ("prompts/get".into(), json!({"name": name, "arguments": arguments}))
            }
            Action::ReadResource { uri, .. } | Action::ReadSkillFile { uri, .. } => {
                ("resources/read".into(), json!({"uri": uri}))
            }
            Action::GetSkill { uri } => ("skills/get".into(), json!({"uri": uri})),
            Action::List(method) => ((*method).into(), json!({})),
            Action::Ping => ("ping".into(), json!({})),
            Action::UnknownMethod(method) => (method.clone(), json!({})),
            Action::UnknownTask(id) => ("tasks/get".into(), json!({"taskId": id})),
            Action::CancelTask(_)
            | Action::Malformed(_)
            | Action::InvalidRequest(_)
            | Action::Cancelled(_)
            | Action::Concurrent(_) => {
                return None;
            }
        })
    }
}

/// Malformed lines `check` sends.
const MALFORMED: &[&str] = &[
    "this is not JSON",
    r#"{"jsonrpc":"2.0","id":900,"method":"ping""#,
    r#"{"jsonrpc":"2.0","id":,"method":"tools/list"}"#,
    "[1, 2, ",
    "\u{1}\u{2}{}}",
];

/// JSON that is not a valid request: a method that is not a string, a wrong or missing
/// `jsonrpc`, an id that is neither string nor number. `ID` becomes a fresh request id, which
/// the answer should carry.
const INVALID_REQUESTS: &[&str] = &[
    r#"{"jsonrpc":"2.0","id":ID,"method":42}"#,
    r#"{"jsonrpc":"1.0","id":ID,"method":"ping"}"#,
    r#"{"id":ID,"method":"ping"}"#,
    r#"{"jsonrpc":"2.0","id":{"not":"an id"},"method":"ping"}"#,
];

/// The strategy of request sequences for `catalog`.
pub fn actions(catalog: &Catalog, max_actions: usize) -> BoxedStrategy<Vec<Action>> {
    let single = single_action(catalog);
    let cancelled = request_action(catalog).prop_map(|a| Action::Cancelled(Box::new(a)));
    let concurrent = proptest::collection::vec(request_action(catalog), 2..=4).prop_map(Action::Concurrent);
    let step = prop_oneof![6 => single, 1 => cancelled, 1 => concurrent];
    proptest::collection::vec(step, 1..=max_actions.max(1)).boxed()
}

/// One action of any kind but the composite ones.
fn single_action(catalog: &Catalog) -> BoxedStrategy<Action> {
    let malformed = proptest::sample::select(MALFORMED).prop_map(|s| Action::Malformed(s.to_owned()));
    let invalid =
        proptest::sample::select(INVALID_REQUESTS).prop_map(|s| Action::InvalidRequest(s.to_owned()));
    prop_oneof![12 => request_action(catalog), 1 => malformed, 1 => invalid].boxed()
}

/// One request.
///
/// The kinds of request have fixed weights whatever the server offers: a server with forty
/// tools still gets its share of prompts, reads, lists and unknown methods.
fn request_action(catalog: &Catalog) -> BoxedStrategy<Action> {
    let mut tools: Vec<(u32, BoxedStrategy<Action>)> = Vec::new();
    let mut choices: Vec<(u32, BoxedStrategy<Action>)> = Vec::new();
    for tool in &catalog.tools {
        let Some(name) = tool.get("name").and_then(Value::as_str) else { continue };
        let schema = tool.get("inputSchema").cloned().unwrap_or_else(|| json!({"type": "object"}));
        let call = |kind: ArgumentKind| {
            let name = name.to_owned();
            move |arguments: Value| Action::CallTool { name: name.clone(), arguments, kind: kind.clone() }
        };
        tools.push((4, arguments::valid(&schema).prop_map(call(ArgumentKind::Valid)).boxed()));
        tools.push((2, arguments::boundary(&schema).prop_map(call(ArgumentKind::Boundary)).boxed()));
        if let Some(invalid) = arguments::invalid(&schema) {
            let name = name.to_owned();
            tools.push((
                2,
                invalid
                    .prop_map(move |(arguments, why)| Action::CallTool {
                        name: name.clone(),
                        arguments,
                        kind: ArgumentKind::Invalid(why),
                    })
                    .boxed(),
            ));
        }
    }
    if !tools.is_empty() {
        choices.push((12, proptest::strategy::Union::new_weighted(tools).boxed()));
    }
    let mut prompts: Vec<(u32, BoxedStrategy<Action>)> = Vec::new();
    for prompt in &catalog.prompts {
        let Some(name) = prompt.get("name").and_then(Value::as_str) else { continue };
        let declared: Vec<(String, bool)> = prompt
            .get("arguments")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|a| {
                Some((
                    a.get("name")?.as_str()?.to_owned(),
                    a.get("required").and_then(Value::as_bool).unwrap_or(false),
                ))
            })
            .collect();
        let name = name.to_owned();
        let has_required = declared.iter().any(|(_, required)| *required);
        let strategy = (any::<bool>(), "[a-z]{0,8}").prop_map(move |(drop_required, text)| {
            let drop_required = drop_required && has_required;
            let mut arguments = serde_json::Map::new();
            let mut dropped = false;
            for (arg, required) in &declared {
                if *required && drop_required && !dropped {
                    dropped = true;
                    continue;
                }
                if *required || !text.is_empty() {
                    arguments.insert(arg.clone(), Value::String(format!("{text}1")));
                }
            }
            Action::GetPrompt {
                name: name.clone(),
                arguments: Value::Object(arguments),
                missing_required: dropped,
            }
        });
        prompts.push((1, strategy.boxed()));
    }
    if !prompts.is_empty() {
        choices.push((3, proptest::strategy::Union::new_weighted(prompts).boxed()));
    }
    if !catalog.resources.is_empty() {
        let uris = catalog.resources.clone();
        choices.push((
            3,
            proptest::sample::select(uris).prop_map(|uri| Action::ReadResource { uri, listed: true }).boxed(),
        ));
        choices.push((
            1,
            Just(Action::ReadResource { uri: "mcp-conformance://no/such/resource".into(), listed: false })
                .boxed(),
        ));
    }
    let reads = skills::file_reads(catalog);
    if !reads.is_empty() {
        choices.push((4, proptest::sample::select(reads).boxed()));
    }
    let skill_uris = skills::skill_uris(catalog);
    if !skill_uris.is_empty() {
        choices
            .push((1, proptest::sample::select(skill_uris).prop_map(|uri| Action::GetSkill { uri }).boxed()));
    }
    let mut lists = vec!["tools/list", "prompts/list", "resources/list", "resources/templates/list"];
    lists.retain(|m| {
        let capability = m.split('/').next().unwrap_or_default();
        catalog.has(capability)
    });
    if catalog.offers(mcp_sansio::schema::SKILLS_EXTENSION) {
        lists.push("skills/list");
    }
    if !lists.is_empty() {
        choices.push((1, proptest::sample::select(lists).prop_map(Action::List).boxed()));
    }
    // `ping` is gone in 2026-07-28; `server/discover` may be sent any time instead.
    let alive = if is_modern(&catalog.version) { Action::List("server/discover") } else { Action::Ping };
    choices.push((1, Just(alive).boxed()));
    if let Some(tasks) = super::session::tasks::strategy(catalog) {
        choices.push((3, tasks));
    }
    choices.push((
        2,
        "[a-z]{1,8}".prop_map(|s| Action::UnknownMethod(format!("mcp-conformance/no-such-{s}"))).boxed(),
    ));
    proptest::strategy::Union::new_weighted(choices).boxed()
}

/// One line describing an action.
pub fn action_line(action: &Action) -> String {
    match action {
        Action::CallTool { name, arguments, kind } => {
            let kind = match kind {
                ArgumentKind::Valid => "valid".to_owned(),
                ArgumentKind::Boundary => "boundary".to_owned(),
                ArgumentKind::Invalid(why) => format!("invalid: {why}"),
            };
            format!("tools/call {name} {} ({kind})", short(arguments))
        }
        Action::GetPrompt { name, arguments, .. } => format!("prompts/get {name} {}", short(arguments)),
        Action::ReadResource { uri, .. } => format!("resources/read {uri}"),
        Action::ReadSkillFile { skill, uri, digest, size } => {
            format!("resources/read {uri} (a file of the skill {skill}, listed as {size} bytes, {digest})")
        }
        Action::GetSkill { uri } => format!("skills/get {uri}"),
        Action::List(method) => (*method).to_owned(),
        Action::Ping => "ping".into(),
        Action::UnknownMethod(method) => format!("{method} (unknown method)"),
        Action::Malformed(text) => format!("malformed line {text:?}"),
        Action::InvalidRequest(text) if text.contains("ID") => {
            format!("invalid request {} (N: a fresh request id)", text.replace("ID", "N"))
        }
        Action::InvalidRequest(text) => format!("invalid request {text}"),
        Action::Cancelled(inner) => format!("{} then cancelled", action_line(inner)),
        Action::Concurrent(actions) => {
            format!("concurrently: {}", actions.iter().map(action_line).collect::<Vec<_>>().join(" | "))
        }
        Action::UnknownTask(id) => format!("tasks/get {id} (unknown task)"),
        Action::CancelTask(inner) => format!("{}, its task cancelled twice", action_line(inner)),
    }
}

pub(crate) fn request_summary(action: &Action) -> String {
    match action {
        Action::CallTool { name, arguments, .. } => format!("{name} {}", short(arguments)),
        Action::GetPrompt { name, .. } => name.clone(),
        Action::ReadResource { uri, .. } | Action::ReadSkillFile { uri, .. } | Action::GetSkill { uri } => {
            uri.clone()
        }
        _ => String::new(),
    }
}
