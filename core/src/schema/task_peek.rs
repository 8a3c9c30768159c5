//! What the engine reads of a message to decide what it is before it decodes it whole: a
//! result's `resultType`, whether params ask for a task, a task's id. One home for these small
//! wire structs, and for the typed `tasks.requests` capability of 2025-11-25.
//!
//! Every decision is made on parsed JSON: a member name written with escapes (`"\u0074ask"`)
//! is the same name to serde as to the server, so no byte pattern can make the engine read a
//! message otherwise than its peer does. Where a byte search runs first it only skips work it
//! proves useless (see [`may_name`]).

use std::borrow::Cow;

use serde::Deserialize;
use serde_json::value::RawValue;

use super::{ClientCapabilities, JsonObject, ServerCapabilities, TaskSnapshot};
use crate::json_scan::JsonText;

/// Whether JSON text `json` may have a member or string `name` (given with its quotes, as in
/// `b"\"task\""`). `false` is certain: without a backslash anywhere, a JSON string can only be
/// written one way, so the name's absence from the bytes means its absence from the value. A
/// caller uses it only to skip a parse whose outcome it already knows.
pub(crate) fn may_name(json: &[u8], name: &memchr::memmem::Finder<'_>) -> bool {
    name.find(json).is_some() || memchr::memchr(b'\\', json).is_some()
}

/// What a 2026-07-28 result's `resultType` says it is, of what changes the engine's course.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ResultKind {
    /// `"task"`: a task the request became (the tasks extension).
    Task,
    /// `"input_required"`: a multi round-trip request asking for input.
    InputRequired,
    /// Anything else (`"complete"`, absent, not an object): the request's result.
    Other,
}

/// What `raw`'s `resultType` says it is. The member is parsed only when the bytes may hold one
/// of the two values that matter: without `"task"`, `"input_required"` and any backslash (an
/// escape), neither value can be written, so a plain result (every result of 2026-07-28 names
/// its `resultType`, `"complete"`) costs a byte search, not a second parse.
pub(crate) fn result_kind(raw: JsonText<'_>) -> ResultKind {
    static TASK: std::sync::LazyLock<memchr::memmem::Finder<'static>> =
        std::sync::LazyLock::new(|| memchr::memmem::Finder::new(b"\"task\""));
    static INPUT: std::sync::LazyLock<memchr::memmem::Finder<'static>> =
        std::sync::LazyLock::new(|| memchr::memmem::Finder::new(b"\"input_required\""));
    #[derive(Deserialize)]
    struct Kind<'a> {
        #[serde(rename = "resultType", borrow, default)]
        result_type: Option<Cow<'a, str>>,
    }
    let bytes = raw.get().as_bytes();
    if !may_name(bytes, &TASK) && INPUT.find(bytes).is_none() {
        return ResultKind::Other;
    }
    let kind = serde_json::from_str::<Kind<'_>>(raw.get()).ok().and_then(|k| k.result_type);
    match kind.as_deref() {
        Some("task") => ResultKind::Task,
        Some("input_required") => ResultKind::InputRequired,
        _ => ResultKind::Other,
    }
}

/// Whether request params (JSON text) have a member `task`: a 2025-11-25 task-augmented
/// request. Invalid JSON has none.
pub(crate) fn asks_for_task(params: &[u8]) -> bool {
    static NAME: std::sync::LazyLock<memchr::memmem::Finder<'static>> =
        std::sync::LazyLock::new(|| memchr::memmem::Finder::new(b"\"task\""));
    #[derive(Deserialize)]
    struct Augmented<'a> {
        #[serde(borrow, default)]
        task: Option<&'a RawValue>,
    }
    may_name(params, &NAME) && serde_json::from_slice::<Augmented<'_>>(params).is_ok_and(|a| a.task.is_some())
}

/// The `taskId` of a task that does not decode as a whole, when it can still be read (a string
/// member of the object itself, or of its `task` member for 2025-11-25's `CreateTaskResult`):
/// what a client needs to cancel a task it refuses.
pub(crate) fn readable_task_id(raw: &str) -> Option<String> {
    #[derive(Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct Named {
        #[serde(default)]
        task_id: Option<String>,
        #[serde(default)]
        task: Option<Box<Named>>,
    }
    let named = serde_json::from_str::<Named>(raw).ok()?;
    named.task_id.or_else(|| named.task?.task_id)
}

/// 2025-11-25: the `ttl` a task-augmented request asks for (`params.task.ttl`), when it has one
/// that reads as a number of milliseconds.
pub(crate) fn requested_ttl(params: JsonText<'_>) -> Option<u64> {
    #[derive(Deserialize)]
    struct Augmented {
        #[serde(default)]
        task: Option<super::TaskMetadata>,
    }
    serde_json::from_str::<Augmented>(params.get()).ok()?.task?.ttl
}

/// 2025-11-25: the answer to a task-augmented request, `{"task": {...}}`
/// (`CreateTaskResult`). `Ok(None)` when the answer has no `task` member (the server answered
/// at once); an error when it has one that does not decode.
pub(crate) fn created_task(raw: JsonText<'_>) -> Result<Option<TaskSnapshot>, serde_json::Error> {
    #[derive(Deserialize)]
    struct Created<'a> {
        #[serde(borrow, default)]
        task: Option<&'a RawValue>,
    }
    let Some(task) = serde_json::from_str::<Created<'_>>(raw.get())?.task else { return Ok(None) };
    serde_json::from_str::<TaskSnapshot>(task.get()).map(Some)
}

/// A request that 2025-11-25 lets a peer augment with a task: the path of its
/// `tasks.requests.<kind>.<method>` capability.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum TaskRequest {
    /// `tools/call` (the server runs it as a task: `tasks.requests.tools.call`).
    ToolsCall,
    /// `sampling/createMessage` (the client hosts it: `tasks.requests.sampling.createMessage`).
    SamplingCreateMessage,
    /// `elicitation/create` (the client hosts it: `tasks.requests.elicitation.create`).
    ElicitationCreate,
}

impl TaskRequest {
    /// The request of `method`, if 2025-11-25 lets it be a task.
    pub fn of(method: &str) -> Option<Self> {
        match method {
            "tools/call" => Some(TaskRequest::ToolsCall),
            "sampling/createMessage" => Some(TaskRequest::SamplingCreateMessage),
            "elicitation/create" => Some(TaskRequest::ElicitationCreate),
            _ => None,
        }
    }

    /// `(kind, method)`: the two members under `tasks.requests`.
    fn path(self) -> (&'static str, &'static str) {
        match self {
            TaskRequest::ToolsCall => ("tools", "call"),
            TaskRequest::SamplingCreateMessage => ("sampling", "createMessage"),
            TaskRequest::ElicitationCreate => ("elicitation", "create"),
        }
    }

    /// The capability's name, for error messages (`tasks.requests.tools.call`).
    pub fn capability(self) -> &'static str {
        match self {
            TaskRequest::ToolsCall => "tasks.requests.tools.call",
            TaskRequest::SamplingCreateMessage => "tasks.requests.sampling.createMessage",
            TaskRequest::ElicitationCreate => "tasks.requests.elicitation.create",
        }
    }

    /// Whether a `tasks` capability object declares this request (any value at its path,
    /// `{}` included, declares it).
    pub fn declared_in(self, tasks: Option<&JsonObject>) -> bool {
        let (kind, method) = self.path();
        tasks.and_then(|t| t.get("requests")).and_then(|r| r.get(kind)).and_then(|k| k.get(method)).is_some()
    }
}

impl ServerCapabilities {
    /// 2025-11-25: whether the server runs `request` as a task when asked
    /// (`tasks.requests.<kind>.<method>`).
    pub fn offers_task(&self, request: TaskRequest) -> bool {
        request.declared_in(self.tasks.as_ref())
    }
}

impl ClientCapabilities {
    /// 2025-11-25: whether the client hosts `request` as a task when the server asks
    /// (`tasks.requests.<kind>.<method>`).
    pub fn hosts_task(&self, request: TaskRequest) -> bool {
        request.declared_in(self.tasks.as_ref())
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use serde_json::json;

    use super::*;

    fn raw(json: &str) -> JsonText<'_> {
        JsonText::parse(json).unwrap()
    }

    #[test]
    fn an_escaped_member_name_reads_as_the_plain_one() {
        assert_eq!(result_kind(raw(r#"{"resultType":"task"}"#)), ResultKind::Task);
        assert_eq!(result_kind(raw(r#"{"result\u0054ype":"ta\u0073k"}"#)), ResultKind::Task);
        assert_eq!(result_kind(raw(r#"{"resultType":"input\u005frequired"}"#)), ResultKind::InputRequired);
        assert_eq!(result_kind(raw(r#"{"resultType":"input_required"}"#)), ResultKind::InputRequired);
        assert_eq!(result_kind(raw(r#"{"resultType":"complete","text":"task"}"#)), ResultKind::Other);
        assert_eq!(result_kind(raw(r#"{"content":[]}"#)), ResultKind::Other);
        assert_eq!(result_kind(raw(r#"[1]"#)), ResultKind::Other);
        assert!(asks_for_task(br#"{"name":"x","task":{}}"#));
        assert!(asks_for_task(br#"{"name":"x","\u0074ask":{}}"#));
        assert!(!asks_for_task(br#"{"name":"x","arguments":{"task":1}}"#));
        assert!(!asks_for_task(br#"{"name":"task"}"#));
        assert!(!asks_for_task(b"not json"));
    }

    #[test]
    fn a_task_id_is_read_from_a_task_that_does_not_decode() {
        assert_eq!(readable_task_id(r#"{"taskId":"t-1","status":7}"#).as_deref(), Some("t-1"));
        assert_eq!(readable_task_id(r#"{"task":{"taskId":"t-2","status":[]}}"#).as_deref(), Some("t-2"));
        assert_eq!(readable_task_id(r#"{"t\u0061skId":"t-3"}"#).as_deref(), Some("t-3"));
        assert_eq!(readable_task_id(r#"{"taskId":5}"#), None);
        assert_eq!(readable_task_id(r#"{}"#), None);
    }

    #[test]
    fn the_task_requests_capability_is_typed() {
        let mut caps = ServerCapabilities::default();
        assert!(!caps.offers_task(TaskRequest::ToolsCall));
        caps.tasks = json!({"requests": {"tools": {"call": {}}}}).as_object().cloned();
        assert!(caps.offers_task(TaskRequest::ToolsCall));
        let client = ClientCapabilities {
            tasks: json!({"requests": {"elicitation": {"create": {}}}}).as_object().cloned(),
            ..Default::default()
        };
        assert!(client.hosts_task(TaskRequest::ElicitationCreate));
        assert!(!client.hosts_task(TaskRequest::SamplingCreateMessage));
        assert_eq!(TaskRequest::of("sampling/createMessage"), Some(TaskRequest::SamplingCreateMessage));
        assert_eq!(TaskRequest::ToolsCall.capability(), "tasks.requests.tools.call");
    }
}
