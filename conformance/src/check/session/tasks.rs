//! The properties of a server that offers the tasks extension (`io.modelcontextprotocol/tasks`,
//! SEP-2663, 2026-07-28).
//!
//! When the server's `server/discover` offers the extension, every request of the check
//! declares it, so a `tools/call` may be answered with a task (`resultType: "task"`). The check
//! follows each such task to its end: it polls `tasks/get` at the server's `pollIntervalMs`
//! (kept between [`MIN_POLL`] and [`MAX_POLL`]), answers the task's `inputRequests` once each
//! with `tasks/update` (as it answers server requests: a declined elicitation, a canned
//! sampling reply, one root), and stops following within the call's time budget: a task still
//! running then is cancelled (`tasks/cancel`) and reported as slow, as a slow call is. Two more
//! kinds of step test the extension: `tasks/get` of an id no task has, and a call whose task is
//! cancelled twice at once.
//!
//! - `task-status`: a task's status moves only along the valid transitions (`working` and
//!   `input_required` to any status, a terminal status never changes, also on a poll after
//!   the end), and a new task has an id that no earlier task of the session had;
//! - `task-unknown`: `tasks/get` of an unknown task id gets a JSON-RPC error;
//! - `task-cancel`: `tasks/cancel` is idempotent: both of two cancellations are acknowledged
//!   (the task may end `cancelled` or otherwise; cancellation is cooperative, so a task that
//!   runs on is a warning, not a violation);
//! - `task-result`: every task the server reports has the SEP's shape (its id, a known status,
//!   `createdAt`, `lastUpdatedAt`, `ttlMs`, and the payload of its status: `inputRequests`,
//!   `result` or `error`), a completed task's `result` is a valid `CallToolResult` whose
//!   `structuredContent` matches the tool's `outputSchema`, and a failed task's `error` is a
//!   JSON-RPC error object.

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

use proptest::prelude::*;
use serde_json::{Value, json};

use mcp_sansio::schema::{TASKS_EXTENSION, TaskSnapshot};

use super::super::actions::{Action, ArgumentKind, action_line};
use super::super::{Catalog, Property, SlowRequest, client_capabilities, is_modern};
use super::{Checker, Session, answer_server_request, slow_key};
use crate::arguments;
use crate::json_schema;
use crate::official;
use crate::rules::short;

/// The shortest wait between two polls, whatever the server suggests.
pub(crate) const MIN_POLL: Duration = Duration::from_millis(10);

/// The longest wait between two polls: the server's `pollIntervalMs` is honoured up to this, so
/// that a check stays quick.
pub(crate) const MAX_POLL: Duration = Duration::from_millis(250);

/// The ids `check` asks for in `tasks/get` of an unknown task start with this.
const UNKNOWN_PREFIX: &str = "mcp-conformance-no-such-task-";

impl Catalog {
    /// Whether the server offers the tasks extension (on 2026-07-28, the only version that has
    /// it).
    pub(crate) fn offers_tasks(&self) -> bool {
        is_modern(&self.version)
            && self
                .capabilities
                .get("extensions")
                .and_then(|e| e.get(TASKS_EXTENSION))
                .is_some_and(Value::is_object)
    }
}

/// Whether `property` is one of the tasks extension's.
pub(crate) fn is_task_property(property: Property) -> bool {
    matches!(
        property,
        Property::TaskStatus | Property::TaskUnknown | Property::TaskCancel | Property::TaskResult
    )
}

/// The steps that test the extension, for a server that offers it: `tasks/get` of an unknown id,
/// and calls (with valid arguments) whose task, if they make one, is cancelled twice.
pub(crate) fn strategy(catalog: &Catalog) -> Option<BoxedStrategy<Action>> {
    if !catalog.offers_tasks() {
        return None;
    }
    let unknown = "[a-z0-9]{8}".prop_map(|s| Action::UnknownTask(format!("{UNKNOWN_PREFIX}{s}"))).boxed();
    let calls: Vec<BoxedStrategy<Action>> = catalog
        .tools
        .iter()
        .filter_map(|tool| {
            let name = tool.get("name")?.as_str()?.to_owned();
            let schema = tool.get("inputSchema").cloned().unwrap_or_else(|| json!({"type": "object"}));
            Some(
                arguments::valid(&schema)
                    .prop_map(move |arguments| {
                        let call =
                            Action::CallTool { name: name.clone(), arguments, kind: ArgumentKind::Valid };
                        Action::CancelTask(Box::new(call))
                    })
                    .boxed(),
            )
        })
        .collect();
    if calls.is_empty() {
        return Some(unknown);
    }
    Some(prop_oneof![1 => unknown, 2 => proptest::strategy::Union::new(calls)].boxed())
}

/// What the session knows of the tasks the server made.
#[derive(Debug, Default)]
pub(crate) struct Tracker {
    /// Whether the server offers the extension (then every request declares it).
    pub(crate) offered: bool,
    /// Every task seen in the session, by id: its last status, and the step that made it.
    known: BTreeMap<String, (String, String)>,
}

fn terminal(status: &str) -> bool {
    matches!(status, "completed" | "failed" | "cancelled")
}

/// Whether a task may go from status `from` to `to`: anything from `working` and
/// `input_required`, nothing from a terminal status but itself.
fn valid_transition(from: &str, to: &str) -> bool {
    from == to || !terminal(from)
}

/// The created task in a `tools/call` response, if it is one.
fn created_task(response: &Value) -> Option<&Value> {
    response.get("result").filter(|result| result.get("resultType").and_then(Value::as_str) == Some("task"))
}

/// The wait before the next poll: the server's suggestion, kept between [`MIN_POLL`] and
/// [`MAX_POLL`].
fn poll_interval(task: &Value) -> Duration {
    let suggested =
        task.get("pollIntervalMs").and_then(Value::as_u64).map_or(MIN_POLL, Duration::from_millis);
    suggested.clamp(MIN_POLL, MAX_POLL)
}

impl Checker<'_> {
    /// A `tools/call` answered with a task: its shape (`task-result`), and a fresh id
    /// (`task-status`). Returns whether the answer was a task (then it is followed, and its end
    /// judged as the call's answer would be).
    pub(super) fn task_answer(&mut self, action: &Action, method: &str, response: &Value) -> bool {
        if method != "tools/call" || !self.catalog.offers_tasks() {
            return false;
        }
        let Some(task) = created_task(response) else { return false };
        self.task_shape(task, None, "task", &format!("the task {} made", action_line(action)));
        true
    }

    /// `tasks/get` of an unknown id (`task-unknown`).
    pub(super) fn unknown_task_answer(&mut self, id: &str, response: &Value) {
        self.checked(Property::TaskUnknown);
        if response.get("error").is_none() {
            self.finding(
                Property::TaskUnknown,
                format!(
                    "tasks/get of the unknown task {id:?} got a result instead of an error: {}",
                    short(response)
                ),
            );
        }
    }

    /// Checks the shape of a task as the server reported it (`task-result`); `id` is the one
    /// asked for, `result_type` the `resultType` due (`task` when created, `complete` from
    /// `tasks/get`). Returns the status when the task decodes.
    fn task_shape(
        &mut self,
        task: &Value,
        id: Option<&str>,
        result_type: &str,
        what: &str,
    ) -> Option<String> {
        self.checked(Property::TaskResult);
        let mut problems = Vec::new();
        let decoded = serde_json::from_value::<TaskSnapshot>(task.clone());
        match &decoded {
            Err(e) => problems.push(format!("it does not decode as a task: {e}")),
            Ok(snapshot) => {
                if let Err(why) = snapshot.check() {
                    problems.push(why);
                }
                if let Some(id) = id
                    && snapshot.task_id != id
                {
                    problems.push(format!("its taskId is {:?}, not {id:?}", snapshot.task_id));
                }
            }
        }
        for field in ["createdAt", "lastUpdatedAt"] {
            if !task.get(field).is_some_and(Value::is_string) {
                problems.push(format!("it has no string {field}"));
            }
        }
        if !task.get("ttlMs").is_some_and(|ttl| ttl.is_null() || ttl.is_u64()) {
            problems.push("its ttlMs is neither a number of milliseconds nor null".into());
        }
        if task.get("resultType").and_then(Value::as_str) != Some(result_type) {
            problems.push(format!(
                "its resultType is {}, not {result_type:?}",
                short(task.get("resultType").unwrap_or(&Value::Null))
            ));
        }
        if !problems.is_empty() {
            self.finding(
                Property::TaskResult,
                format!("{what} is malformed: {}: {}", problems.join("; "), short(task)),
            );
        }
        decoded.ok().map(|snapshot| snapshot.status.to_string())
    }

    /// The end of a task made by `action`: a completed task's `result` is a valid
    /// `CallToolResult` matching the tool's `outputSchema`, a failed one's `error` an error
    /// object (`task-result`); and as for a call's answer, invalid arguments must end in
    /// `-32602` or `isError`.
    fn task_end(&mut self, action: &Action, task: &Value, what: &str) {
        let Action::CallTool { name, arguments, kind } = action else { return };
        let status = task.get("status").and_then(Value::as_str).unwrap_or_default();
        let invalid = match kind {
            ArgumentKind::Invalid(why) => Some(why),
            _ => None,
        };
        if status == "completed" {
            let Some(result) = task.get("result") else { return };
            self.checked(Property::TaskResult);
            // The SEP's own example of a completed task has a result without `resultType`, which
            // 2026-07-28 reads as "complete".
            let mut full = result.clone();
            if let Some(object) = full.as_object_mut() {
                object.entry("resultType").or_insert_with(|| "complete".into());
            }
            if let Some(schema) = official::schema(&self.catalog.version)
                && let Err(errors) = schema.validate_definition("CallToolResult", &full)
            {
                let list: Vec<String> = errors.iter().take(3).map(ToString::to_string).collect();
                self.finding(
                    Property::TaskResult,
                    format!("{what} completed with a result that is no CallToolResult: {}", list.join("; ")),
                );
                return;
            }
            let is_error = result.get("isError").and_then(Value::as_bool) == Some(true);
            if let Some(why) = invalid
                && !is_error
            {
                self.warn(format!(
                    "tools/call {name} accepted invalid arguments ({why}) in its task: {}",
                    short(arguments)
                ));
            }
            let schema = self.catalog.tool(name).and_then(|t| t.get("outputSchema")).cloned();
            if is_error || invalid.is_some() {
                return;
            }
            // The client's own judgement of a tool's output, as for a plain call.
            let Some(verdict) =
                schema.and_then(|schema| json_schema::check_tool_output(name, &schema, result))
            else {
                return;
            };
            if let Err(problem) = verdict {
                self.finding(
                    Property::TaskResult,
                    format!("{what} completed with a result the client refuses: {problem}"),
                );
            }
        } else if status == "failed" {
            let Some(error) = task.get("error") else { return };
            self.checked(Property::TaskResult);
            let code = error.get("code").and_then(Value::as_i64);
            if code.is_none() || !error.get("message").is_some_and(Value::is_string) {
                self.finding(
                    Property::TaskResult,
                    format!("{what} failed with an error that is no JSON-RPC error: {}", short(error)),
                );
                return;
            }
            match (invalid, code) {
                (Some(why), Some(code)) if code != -32602 => {
                    self.checked(Property::InvalidParams);
                    self.finding(
                        Property::InvalidParams,
                        format!(
                            "tools/call {name} with invalid arguments ({why}: {}) made a task that failed with error {code} instead of -32602 or a result with isError",
                            short(arguments)
                        ),
                    );
                }
                (None, Some(-32603)) => self.warn(format!(
                    "tools/call {name} made a task that failed with an internal error on valid arguments {}",
                    short(arguments)
                )),
                _ => {}
            }
        }
    }
}

impl Session<'_> {
    /// What the check declares on each request: with the extension when the server offers it.
    pub(super) fn task_capabilities(&self) -> Value {
        let mut capabilities = client_capabilities();
        if self.tasks.offered {
            // Beside the skills extension, which the check client always declares.
            capabilities["extensions"][TASKS_EXTENSION] = json!({});
        }
        capabilities
    }

    /// Follows the tasks that the answers to `requests` (request id, action) made, one after
    /// the other.
    pub(super) async fn follow_tasks(&mut self, requests: &[(String, &Action)], out: &mut Checker<'_>) {
        for (id, action) in requests {
            let Some(task) = self.created(id) else { continue };
            if self.over() {
                return;
            }
            self.follow(action, &task, false, out).await;
        }
    }

    /// The task the answer to request `id` created, once the id is known to be fresh
    /// (`task-status`).
    fn created(&mut self, id: &str) -> Option<Value> {
        if !self.tasks.offered {
            return None;
        }
        let response = self.responses.get(id).and_then(|r| r.first())?;
        created_task(&response.message).cloned()
    }

    /// A `CancelTask` step: the call, then (if it made a task) `tasks/cancel` twice at once,
    /// both acknowledged (`task-cancel`), then the task followed to its end.
    pub(super) async fn cancel_task(&mut self, inner: &Action, out: &mut Checker<'_>) {
        let Some((method, params)) = inner.request() else { return };
        let budget = self.budget(inner, &method);
        let id = self.request(&method, params).await;
        self.await_answers(vec![super::Waiting { id: id.clone(), method, action: inner, budget }], out).await;
        let Some(task) = self.created(&id) else { return };
        let Some(task_id) = task.get("taskId").and_then(Value::as_str).map(str::to_owned) else { return };
        if !self.first_sight(inner, &task_id, &task, out) {
            return;
        }
        let params = json!({"taskId": task_id});
        let first = self.request("tasks/cancel", params.clone()).await;
        let second = self.request("tasks/cancel", params).await;
        for (n, request) in [("first", first), ("second", second)] {
            let Some(response) = self.answer_of(&request, "tasks/cancel", out).await else { return };
            out.checked(Property::TaskCancel);
            if response.get("result").is_none() {
                out.finding(
                    Property::TaskCancel,
                    format!(
                        "the {n} of two tasks/cancel of task {task_id:?} ({} made it) got {} instead of an acknowledgement: {}",
                        action_line(inner),
                        if response.get("error").is_some() { "an error" } else { "no result" },
                        short(&response)
                    ),
                );
            }
        }
        self.track(inner, &task_id, &task, budget, true, out).await;
    }

    /// Follows a task that `action` made (`task`, as created) to its end.
    async fn follow(&mut self, action: &Action, task: &Value, cancelled: bool, out: &mut Checker<'_>) {
        let Some(task_id) = task.get("taskId").and_then(Value::as_str).map(str::to_owned) else { return };
        if !self.first_sight(action, &task_id, task, out) {
            return;
        }
        let budget = self.budget(action, "tools/call");
        self.track(action, &task_id, task, budget, cancelled, out).await;
    }

    /// Records a task just created; false (and a `task-status` finding) when an earlier task
    /// of the session had its id.
    fn first_sight(&mut self, action: &Action, task_id: &str, task: &Value, out: &mut Checker<'_>) -> bool {
        let status = task.get("status").and_then(Value::as_str).unwrap_or("?").to_owned();
        out.checked(Property::TaskStatus);
        let made = action_line(action);
        if let Some((earlier, by)) = self.tasks.known.get(task_id) {
            let transition = if valid_transition(earlier, &status) {
                String::new()
            } else {
                format!(", and a {earlier} task never becomes {status}")
            };
            out.finding(
                Property::TaskStatus,
                format!(
                    "{made} answered with task {task_id:?} ({status}), the id of an earlier task of the session ({by} made it; last seen {earlier}): task ids must be unique{transition}"
                ),
            );
            self.tasks.known.insert(task_id.to_owned(), (status, made));
            return false;
        }
        self.tasks.known.insert(task_id.to_owned(), (status, made));
        true
    }

    /// Polls task `task_id` (made by `action`, last seen as `task`) until it ends or `budget`
    /// passes, answering its input requests; then polls once more, to see that the end stays.
    /// When the task outlives the budget it is cancelled and reported as slow (or, when
    /// `cancelled` already, as still running after a cancellation: a warning).
    async fn track(
        &mut self,
        action: &Action,
        task_id: &str,
        task: &Value,
        budget: Duration,
        cancelled: bool,
        out: &mut Checker<'_>,
    ) {
        let started = Instant::now();
        let what = format!("task {task_id:?} ({} made it)", action_line(action));
        let mut last = task.clone();
        let mut answered: BTreeSet<String> = BTreeSet::new();
        let mut ended = false;
        let mut extra_poll = false;
        loop {
            if self.over() {
                return;
            }
            let status = last.get("status").and_then(Value::as_str).unwrap_or_default().to_owned();
            if terminal(&status) {
                if !ended {
                    ended = true;
                    out.task_end(action, &last, &what);
                }
                if extra_poll {
                    return;
                }
                extra_poll = true;
            } else if status == "input_required" {
                self.answer_inputs(task_id, &last, &mut answered, &what, out).await;
            }
            let wait = if ended { Duration::ZERO } else { poll_interval(&last) };
            if !ended && started.elapsed() + wait > budget {
                self.outlived(action, task_id, budget, cancelled, &status, out).await;
                return;
            }
            if !wait.is_zero() {
                self.pump_until(wait, |_| false).await;
            }
            let Some(response) = self.task_get(task_id, out).await else { return };
            let Some(snapshot) = response.get("result") else {
                out.checked(Property::TaskStatus);
                out.finding(
                    Property::TaskStatus,
                    format!(
                        "tasks/get of {what}, last seen {status}, got an error instead of the task: {}",
                        short(&response)
                    ),
                );
                return;
            };
            let Some(now) =
                out.task_shape(snapshot, Some(task_id), "complete", &format!("tasks/get of {what}"))
            else {
                return;
            };
            out.checked(Property::TaskStatus);
            if !valid_transition(&status, &now) {
                out.finding(
                    Property::TaskStatus,
                    format!("{what} went from {status} to {now}: a {status} task never changes"),
                );
                return;
            }
            if let Some(known) = self.tasks.known.get_mut(task_id) {
                known.0.clone_from(&now);
            }
            last = snapshot.clone();
        }
    }

    /// Answers the input requests of `task` not answered yet, with one `tasks/update`.
    async fn answer_inputs(
        &mut self,
        task_id: &str,
        task: &Value,
        answered: &mut BTreeSet<String>,
        what: &str,
        out: &mut Checker<'_>,
    ) {
        let Some(requests) = task.get("inputRequests").and_then(Value::as_object) else { return };
        let mut responses = serde_json::Map::new();
        for (key, request) in requests {
            if answered.contains(key) {
                continue;
            }
            let method = request.get("method").and_then(Value::as_str).unwrap_or_default();
            match answer_server_request(method, &Value::Null).get("result") {
                Some(result) => {
                    responses.insert(key.clone(), result.clone());
                }
                None => out.warn(format!(
                    "{what} asked {method} (key {key:?}), which mcp-conformance check cannot answer"
                )),
            }
            answered.insert(key.clone());
        }
        if responses.is_empty() {
            return;
        }
        let id = self.request("tasks/update", json!({"taskId": task_id, "inputResponses": responses})).await;
        if let Some(response) = self.answer_of(&id, "tasks/update", out).await
            && response.get("result").is_none()
        {
            out.warn(format!(
                "tasks/update of {what} got an error instead of an acknowledgement: {}",
                short(&response)
            ));
        }
    }

    /// A task that did not end within `budget`: cancelled and reported slow (the server must
    /// then answer a probe), or, when it was cancelled already, a warning.
    async fn outlived(
        &mut self,
        action: &Action,
        task_id: &str,
        budget: Duration,
        cancelled: bool,
        status: &str,
        out: &mut Checker<'_>,
    ) {
        let key = slow_key(action, "tools/call");
        out.cut_short.insert(key.clone());
        if cancelled {
            out.warn(format!(
                "tasks/cancel acknowledged, task {task_id:?} ({}) was still {status} {budget:?} later (cancellation is cooperative)",
                action_line(action)
            ));
            return;
        }
        let id = self.request("tasks/cancel", json!({"taskId": task_id})).await;
        let glance = self.plan.budgets.glance;
        self.pump_until(glance, |s| s.responses.contains_key(&id)).await;
        let what =
            format!("the task of {} did not end within its budget and was cancelled", action_line(action));
        if let Some(probe) = self.probe(&what, out).await {
            out.slow.push(SlowRequest {
                key,
                request: format!("{} (a task)", action_line(action)),
                budget,
                probe,
            });
        }
    }

    /// `tasks/get` of `task_id`: the response, or `None` when none came (a `one-response`
    /// finding, unless the session is over).
    async fn task_get(&mut self, task_id: &str, out: &mut Checker<'_>) -> Option<Value> {
        let id = self.request("tasks/get", json!({"taskId": task_id})).await;
        self.answer_of(&id, "tasks/get", out).await
    }

    /// Waits for the answer to request `id` (of `method`) within the verdict budget.
    async fn answer_of(&mut self, id: &str, method: &str, out: &mut Checker<'_>) -> Option<Value> {
        let budget = self.verdict_budget(Property::OneResponse);
        self.pump_until(budget, |s| s.responses.contains_key(id)).await;
        self.drain_findings(out);
        if let Some(received) = self.responses.get(id).and_then(|r| r.first()) {
            out.checked(Property::OneResponse);
            return Some(received.message.clone());
        }
        if !self.over() {
            out.checked(Property::OneResponse);
            out.finding(Property::OneResponse, format!("no response to {method} within {budget:?}"));
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn terminal_statuses_never_change() {
        for from in ["working", "input_required"] {
            for to in ["working", "input_required", "completed", "failed", "cancelled"] {
                assert!(valid_transition(from, to), "{from} → {to}");
            }
        }
        for from in ["completed", "failed", "cancelled"] {
            assert!(valid_transition(from, from));
            for to in ["working", "input_required", "completed", "failed", "cancelled"] {
                assert_eq!(valid_transition(from, to), from == to, "{from} → {to}");
            }
        }
    }

    #[test]
    fn polls_honour_the_server_within_bounds() {
        assert_eq!(poll_interval(&json!({"pollIntervalMs": 50})), Duration::from_millis(50));
        assert_eq!(poll_interval(&json!({"pollIntervalMs": 0})), MIN_POLL);
        assert_eq!(poll_interval(&json!({"pollIntervalMs": 5000})), MAX_POLL);
        assert_eq!(poll_interval(&json!({})), MIN_POLL);
    }

    fn catalog() -> Catalog {
        Catalog {
            version: "2026-07-28".into(),
            capabilities: json!({"tools": {}, "extensions": {TASKS_EXTENSION: {}}}),
            tools: vec![json!({
                "name": "render",
                "inputSchema": {"type": "object"},
                "outputSchema": {"type": "object", "properties": {"frames": {"type": "integer"}}, "required": ["frames"]},
            })],
            ..Catalog::default()
        }
    }

    fn task(status: &str, extra: Value) -> Value {
        let mut task = json!({"resultType": "complete", "taskId": "t", "status": status,
            "createdAt": "2026-07-28T00:00:00Z", "lastUpdatedAt": "2026-07-28T00:00:00Z", "ttlMs": null});
        task.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
        task
    }

    /// The properties `check` finds broken in `task`, as `tasks/get` of `t` answered it and as
    /// the end of a valid call of `render`.
    fn findings(task: &Value) -> Vec<Property> {
        let catalog = catalog();
        let mut out = Checker::new(&catalog);
        // As `track` does: a task that does not decode is not judged further.
        if out.task_shape(task, Some("t"), "complete", "task t").is_some() {
            let call =
                Action::CallTool { name: "render".into(), arguments: json!({}), kind: ArgumentKind::Valid };
            out.task_end(&call, task, "task t");
        }
        out.findings.iter().map(|f| f.property).collect()
    }

    #[test]
    fn tasks_are_checked_for_their_shape_and_their_end() {
        let good = task("completed", json!({"result": {"content": [], "structuredContent": {"frames": 2}}}));
        assert_eq!(findings(&good), []);
        assert_eq!(findings(&task("working", json!({"pollIntervalMs": 5}))), []);
        assert_eq!(findings(&task("failed", json!({"error": {"code": -32000, "message": "no"}}))), []);
        for bad in [
            task("completed", json!({})),
            task("input_required", json!({})),
            task("paused", json!({})),
            task("working", json!({"taskId": "other"})),
            task("working", json!({"resultType": "task"})),
            task("working", json!({"ttlMs": "soon"})),
            task("completed", json!({"result": {"content": "not a list"}})),
            task("completed", json!({"result": {"content": []}})),
            task("completed", json!({"result": {"content": [], "structuredContent": {"frames": "2"}}})),
            task("failed", json!({"error": {"code": "bad"}})),
        ] {
            assert_eq!(findings(&bad), [Property::TaskResult], "{bad}");
        }
        let mut missing = task("working", json!({}));
        missing.as_object_mut().unwrap().remove("createdAt");
        assert_eq!(findings(&missing), [Property::TaskResult]);
        // A tool error is a completed task too, and needs no structuredContent.
        let tool_error = task("completed", json!({"result": {"content": [], "isError": true}}));
        assert_eq!(findings(&tool_error), []);
    }

    #[test]
    fn an_unknown_task_must_be_an_error() {
        let catalog = catalog();
        let mut out = Checker::new(&catalog);
        out.unknown_task_answer(
            "x",
            &json!({"jsonrpc": "2.0", "id": 1, "error": {"code": -32602, "message": "?"}}),
        );
        assert!(out.findings.is_empty());
        out.unknown_task_answer(
            "x",
            &json!({"jsonrpc": "2.0", "id": 2, "result": task("working", json!({}))}),
        );
        assert_eq!(out.findings.iter().map(|f| f.property).collect::<Vec<_>>(), [Property::TaskUnknown]);
        assert_eq!(out.checks.get(&Property::TaskUnknown), Some(&2));
    }

    #[test]
    fn only_2026_servers_offering_the_extension_get_task_steps() {
        let offering = |version: &str| Catalog {
            version: version.into(),
            capabilities: json!({"tools": {}, "extensions": {TASKS_EXTENSION: {}}}),
            ..Catalog::default()
        };
        assert!(offering("2026-07-28").offers_tasks());
        assert!(!offering("2025-11-25").offers_tasks());
        assert!(strategy(&offering("2025-11-25")).is_none());
        assert!(strategy(&offering("2026-07-28")).is_some());
        let plain = Catalog {
            version: "2026-07-28".into(),
            capabilities: json!({"tools": {}}),
            ..Catalog::default()
        };
        assert!(!plain.offers_tasks());
    }
}
