//! Following tasks (the tasks extension, SEP-2663, 2026-07-28): a `tools/call` the server
//! answered with `resultType: "task"`, or a task the application asked to follow again
//! ([`ClientConnection::follow_task`]), stays the application's one request until the task
//! ends.
//!
//! - The call keeps its id. Its deadline becomes the task's ([`TaskPolicy`]): `timeout` without
//!   any change of the task, `max_total` in all.
//! - The engine polls `tasks/get` at the interval the server suggests, kept between the floor
//!   and the cap of the policy, one poll at a time; the polls are the connection's own requests
//!   (with the request timeout, for silence), and their times are deadlines of the engine like
//!   any other ([`ClientConnection::poll_timeout`]).
//! - `input_required`: each input request is handed to the application once, as an
//!   [`Event::Request`]; a key already asked is never asked again, however often the server
//!   repeats it. When the keys asked are all answered, the answers go out in one
//!   `tasks/update`.
//! - The end: `completed` gives the call the task's `result`, `failed` its `error`, `cancelled`
//!   [`RequestError::TaskCancelled`]. Cancelling the call (or its task deadline passing) sends
//!   `tasks/cancel`, never `notifications/cancelled`.
//! - `notifications/tasks` about a followed task count as a poll's answer; while the listen
//!   stream carries them for the task, polls slow down to the cap.
//!
//! Every request of this module carries `Mcp-Name: <taskId>` over HTTP (its route).
//!
//! **2025-11-25 (SEP-1686, experimental)** is followed the same way, for a `tools/call` whose
//! params ask for a task (`params.task`; the server must declare `tasks.requests.tools.call`):
//! the answer is `{"task": {...}}`; the engine polls `tasks/get` (its `pollInterval`), and once
//! the task is `completed`, `failed` or `input_required` it sends `tasks/result` once, which
//! blocks until the end (the server asks for input meanwhile with ordinary requests) and
//! whose answer ends the call. `notifications/tasks/status` counts as a poll's answer.

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

/// The key of a task-augmented call's params, as serde_json writes it. Built once: a finder made
/// per call would search the short params of a plain call with Rabin-Karp, at about 400
/// instructions a call, where the prebuilt one's vectorised search costs a few dozen.
static TASK_KEY: std::sync::LazyLock<memchr::memmem::Finder<'static>> =
    std::sync::LazyLock::new(|| memchr::memmem::Finder::new(b"\"task\""));

use serde_json::value::RawValue;

use super::ClientConnection;
use super::input_rounds::decode_input;
use super::pending::{CallId, Pending, PendingKind, Timing};
use crate::RequestId;
use crate::config::{RequestOptions, TaskMode};
use crate::deadline::deadline_after;
use crate::error::UsageError;
use crate::event::{Event, RequestError};
use crate::jsonrpc::ErrorObject;
use crate::schema::{self, TaskSnapshot, TaskStatus};
use crate::transmit::Route;

/// What one of the engine's own `tasks/*` requests is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Errand {
    Get,
    Update,
    Cancel,
    /// 2025-11-25: `tasks/result`, which blocks until the task ends.
    Result,
}

impl Errand {
    fn method(self) -> &'static str {
        match self {
            Errand::Get => "tasks/get",
            Errand::Update => "tasks/update",
            Errand::Cancel => "tasks/cancel",
            Errand::Result => "tasks/result",
        }
    }
}

/// Which tasks a followed task is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Shape {
    /// The tasks extension (SEP-2663, 2026-07-28).
    Extension,
    /// The experimental tasks of 2025-11-25 (SEP-1686): `tasks/result` fetches the end.
    Experimental,
}

/// A task followed for the application's request.
#[derive(Debug)]
struct Follow {
    task_id: String,
    shape: Shape,
    /// 2025-11-25: `tasks/result` is out (no more polls).
    awaiting_result: bool,
    /// When the next `tasks/get` goes out; `None` while one is out.
    next_poll: Option<Instant>,
    /// The interval the server last suggested, in milliseconds.
    suggested_ms: Option<u64>,
    /// Every input key handed to the application (never asked twice).
    asked: BTreeSet<String>,
    /// Keys asked and not answered yet.
    waiting: BTreeSet<String>,
    /// Answers not sent yet.
    answers: schema::JsonObject,
    /// What changes of the task count as activity: status, message, last update.
    seen: (TaskStatus, Option<String>, Option<String>),
    /// Whether cancelling the request cancels the task (a call's task: yes; a task the
    /// application follows again: no, its handle cancels it explicitly).
    cancel_with_request: bool,
}

/// Every followed task, its poll times, and the engine's requests for them.
#[derive(Debug, Default)]
pub(crate) struct Tasks {
    follows: BTreeMap<CallId, Follow>,
    /// `(when, request)` of each follow's next poll.
    polls: BTreeSet<(Instant, CallId)>,
    /// The engine's `tasks/*` requests in flight → (the request they serve, what for).
    errands: BTreeMap<CallId, (CallId, Errand)>,
    /// 2025-11-25: the application's `tools/call`s that asked for a task, and what to do with
    /// one.
    augmented: BTreeMap<CallId, TaskMode>,
}

impl Tasks {
    pub(crate) fn next_poll(&self) -> Option<Instant> {
        self.polls.first().map(|&(at, _)| at)
    }

    /// 2025-11-25: whether call `id` asked for a task.
    pub(crate) fn asked_for_task(&self, id: CallId) -> bool {
        self.augmented.contains_key(&id)
    }

    pub(crate) fn follows(&self, id: CallId) -> bool {
        self.follows.contains_key(&id)
    }

    /// The ids of the followed tasks, for the listen stream's filter.
    pub(crate) fn task_ids(&self) -> impl Iterator<Item = &str> {
        self.follows.values().map(|f| f.task_id.as_str())
    }

    fn schedule(&mut self, id: CallId, at: Instant) {
        let Some(follow) = self.follows.get_mut(&id) else { return };
        if let Some(old) = follow.next_poll.replace(at) {
            self.polls.remove(&(old, id));
        }
        self.polls.insert((at, id));
    }

    fn unschedule(&mut self, id: CallId) {
        if let Some(at) = self.follows.get_mut(&id).and_then(|f| f.next_poll.take()) {
            self.polls.remove(&(at, id));
        }
    }

    fn forget(&mut self, id: CallId) -> Option<Follow> {
        self.augmented.remove(&id);
        self.unschedule(id);
        let follow = self.follows.remove(&id)?;
        self.errands.retain(|_, (owner, _)| *owner != id);
        Some(follow)
    }

    pub(crate) fn clear(&mut self) {
        *self = Tasks::default();
    }
}

/// The task deadline of the policy.
fn task_timing(policy: &crate::TaskPolicy) -> Timing {
    Timing { timeout: policy.timeout, max_total: policy.max_total, reset_on_progress: true }
}

impl ClientConnection {
    /// A `tools/call` answer that may be a task (`resultType: "task"`): follows it, or hands it
    /// to the application ([`TaskMode::Return`]). Returns the request back when the answer is
    /// to be the request's result as it is.
    pub(super) fn on_task_answer(
        &mut self,
        now: Instant,
        id: CallId,
        pending: Pending,
        raw: &RawValue,
        mode: TaskMode,
    ) -> Option<Pending> {
        #[derive(serde::Deserialize)]
        #[serde(rename_all = "camelCase")]
        struct Kind<'a> {
            #[serde(borrow, default)]
            result_type: Option<Cow<'a, str>>,
        }
        let is_task = serde_json::from_str::<Kind<'_>>(raw.get())
            .is_ok_and(|kind| kind.result_type.as_deref() == Some("task"));
        if !is_task {
            return Some(pending);
        }
        if !self.config.capabilities.has_extension(schema::TASKS_EXTENSION) {
            let why = "the server answered with a task, but the client did not declare the tasks extension";
            self.finish(id, pending, Err(RequestError::InvalidResponse(why.into())));
            return None;
        }
        let snapshot = match serde_json::from_str::<TaskSnapshot>(raw.get()) {
            Ok(snapshot) => snapshot,
            Err(e) => {
                let why = format!("a task that does not decode: {e}");
                self.finish(id, pending, Err(RequestError::InvalidResponse(why)));
                return None;
            }
        };
        self.become_task(now, id, pending, snapshot, Shape::Extension, mode)
    }

    /// Call `id` was answered with a task: the call ends with it ([`TaskMode::Return`]), or
    /// takes the task's deadline and follows it, the seed state counting as the first answer (a
    /// server may create a task already done).
    fn become_task(
        &mut self,
        now: Instant,
        id: CallId,
        mut pending: Pending,
        seed: TaskSnapshot,
        shape: Shape,
        mode: TaskMode,
    ) -> Option<Pending> {
        if mode == TaskMode::Return {
            return Some(pending);
        }
        tracing::debug!(id = id.0, task = %seed.task_id, ?shape, "the call became a task: following it");
        pending.retime(now, task_timing(&self.config.tasks));
        pending.park();
        self.pending.insert(id, pending);
        self.start_follow(now, id, &seed.task_id, shape, true);
        self.on_snapshot(now, id, seed);
        None
    }

    /// A 2026-07-28 task (`resultType: "task"`) answering a request of a 2025-11-25 session: an
    /// invalid response (the extension's tasks need the per-request capabilities of 2026-07-28,
    /// whatever `initialize` declared), which fails the request at once. Looked for only when
    /// the client declared the extension: other clients' responses are not scanned. Returns the
    /// request back when the answer is something else.
    pub(super) fn refuse_modern_task(
        &mut self,
        id: CallId,
        pending: Pending,
        result: &Result<&RawValue, ErrorObject>,
    ) -> Option<Pending> {
        #[derive(serde::Deserialize)]
        #[serde(rename_all = "camelCase")]
        struct Kind<'a> {
            #[serde(borrow, default)]
            result_type: Option<Cow<'a, str>>,
        }
        let Ok(raw) = result else { return Some(pending) };
        if !self.config.capabilities.has_extension(schema::TASKS_EXTENSION)
            || !raw.get().contains("resultType")
        {
            return Some(pending);
        }
        let is_task = serde_json::from_str::<Kind<'_>>(raw.get())
            .is_ok_and(|kind| kind.result_type.as_deref() == Some("task"));
        if !is_task {
            return Some(pending);
        }
        let why =
            "the server answered with a task of the tasks extension, which a 2025-11-25 session cannot have";
        self.finish(id, pending, Err(RequestError::InvalidResponse(why.into())));
        None
    }

    /// 2025-11-25: a `tools/call` of the application's that asks for a task
    /// (`params.task`) is checked against the server's `tasks.requests.tools.call`, and
    /// remembered as such once sent.
    pub(super) fn experimental_task(&self, method: &str, params: Option<&[u8]>) -> Result<bool, UsageError> {
        #[derive(serde::Deserialize)]
        struct Augmented<'a> {
            #[serde(borrow, default)]
            task: Option<&'a RawValue>,
        }
        // Every call on a 2025-11-25 session comes here: parse only params that name `task` at
        // all (the key as serde_json writes it), so a plain call costs a byte search, not a
        // second parse of its arguments.
        let asks = method == "tools/call"
            && params.is_some_and(|p| TASK_KEY.find(p).is_some())
            && params
                .and_then(|p| serde_json::from_slice::<Augmented<'_>>(p).ok())
                .is_some_and(|a| a.task.is_some());
        let Some(session) = self.session().filter(|_| asks) else { return Ok(false) };
        let offered = session
            .capabilities
            .tasks
            .as_ref()
            .and_then(|t| t.get("requests"))
            .and_then(|r| r.get("tools"))
            .and_then(|t| t.get("call"));
        match offered {
            Some(_) if !session.version.is_modern() => Ok(true),
            _ => Err(UsageError::CapabilityNotSupported {
                method: method.to_owned(),
                capability: "tasks.requests.tools.call",
            }),
        }
    }

    /// 2025-11-25: call `id` asked for a task; remember what to do with one.
    pub(super) fn augmented(&mut self, id: CallId, mode: TaskMode) {
        self.tasks.augmented.insert(id, mode);
    }

    /// 2025-11-25: the answer to a call that asked for a task. Returns the request back when
    /// the answer is its result as it is.
    pub(super) fn on_experimental_answer(
        &mut self,
        now: Instant,
        id: CallId,
        pending: Pending,
        result: &Result<&RawValue, ErrorObject>,
    ) -> Option<Pending> {
        #[derive(serde::Deserialize)]
        struct Created {
            task: TaskSnapshot,
        }
        let mode = self.tasks.augmented.remove(&id)?;
        let Ok(raw) = result else { return Some(pending) };
        // A server may answer at once, without a task.
        let Ok(Created { task }) = serde_json::from_str::<Created>(raw.get()) else { return Some(pending) };
        self.become_task(now, id, pending, task, Shape::Experimental, mode)
    }

    /// Follows task `task_id` (of the tasks extension, 2026-07-28) as a request of the
    /// application's, which ends like the call that made the task would have: with the task's
    /// result, its error, or [`RequestError::TaskCancelled`]. For an application that kept a
    /// task's id (a handle it persisted, say) and wants its result: the engine polls, and hands
    /// its input requests to the application, as for a call.
    ///
    /// The task's deadlines are those of [`ClientConfig::tasks`](crate::ClientConfig::tasks).
    /// Cancelling the request stops following the task and does not cancel it (send
    /// `tasks/cancel` for that). Fails at once unless the connection speaks 2026-07-28 and the
    /// server offers the tasks extension, and the client declared it.
    pub fn follow_task(
        &mut self,
        now: Instant,
        task_id: &str,
        _options: RequestOptions,
    ) -> Result<RequestId, UsageError> {
        let session = self.ready_session()?;
        let shape = match session.version.is_modern() {
            true => Shape::Extension,
            false => Shape::Experimental,
        };
        match shape {
            Shape::Extension if !session.capabilities.has_extension(schema::TASKS_EXTENSION) => {
                return Err(UsageError::CapabilityNotSupported {
                    method: "tasks/get".into(),
                    capability: "extensions/io.modelcontextprotocol/tasks",
                });
            }
            Shape::Extension if !self.config.capabilities.has_extension(schema::TASKS_EXTENSION) => {
                return Err(UsageError::InvalidParams(
                    "declare the tasks extension in the client's capabilities to follow a task".into(),
                ));
            }
            Shape::Experimental if session.capabilities.tasks.is_none() => {
                return Err(UsageError::CapabilityNotSupported {
                    method: "tasks/get".into(),
                    capability: "tasks",
                });
            }
            _ => {}
        }
        let pending = Pending::new(PendingKind::User, now, Some(task_timing(&self.config.tasks)));
        self.stats.requests_tracked += 1;
        let id = self.pending.start_local(pending);
        self.start_follow(now, id, task_id, shape, false);
        self.schedule_poll(now, id, Duration::ZERO);
        self.pending.check();
        Ok(RequestId::Number(id.0))
    }

    fn start_follow(
        &mut self,
        now: Instant,
        id: CallId,
        task_id: &str,
        shape: Shape,
        cancel_with_request: bool,
    ) {
        let follow = Follow {
            task_id: task_id.to_owned(),
            shape,
            awaiting_result: false,
            next_poll: None,
            suggested_ms: None,
            asked: BTreeSet::new(),
            waiting: BTreeSet::new(),
            answers: schema::JsonObject::new(),
            seen: (TaskStatus::Unknown(String::new()), None, None),
            cancel_with_request,
        };
        self.tasks.follows.insert(id, follow);
        if self.config.tasks.listen {
            self.update_listen(now);
        }
    }

    /// The next poll of request `id`'s task, `after` from now, or at the cap while the listen
    /// stream carries the task's notifications.
    fn schedule_poll(&mut self, now: Instant, id: CallId, after: Duration) {
        let Some(follow) = self.tasks.follows.get(&id) else { return };
        let listened = self.listen.honoured().is_some_and(|filter| filter.task_ids.contains(&follow.task_id));
        let after = if listened { self.config.tasks.poll_cap } else { after };
        self.tasks.schedule(id, deadline_after(now, after));
    }

    /// Sends the polls that are due.
    pub(super) fn poll_tasks(&mut self, now: Instant) {
        while let Some(&(at, id)) = self.tasks.polls.first() {
            if at > now || self.is_closed() {
                break;
            }
            self.tasks.unschedule(id);
            self.send_errand(now, id, Errand::Get, None);
        }
    }

    /// Sends `tasks/get`, `tasks/update` (with `answers`) or `tasks/cancel` for request `owner`'s
    /// task, as the engine's own request.
    fn send_errand(
        &mut self,
        now: Instant,
        owner: CallId,
        errand: Errand,
        answers: Option<schema::JsonObject>,
    ) {
        let Some(follow) = self.tasks.follows.get(&owner) else { return };
        let task_id = follow.task_id.clone();
        self.send_task_request(now, owner, errand, task_id, answers);
    }

    fn send_task_request(
        &mut self,
        now: Instant,
        owner: CallId,
        errand: Errand,
        task_id: String,
        answers: Option<schema::JsonObject>,
    ) {
        let mut params = schema::JsonObject::new();
        params.insert("taskId".into(), task_id.clone().into());
        if let Some(answers) = answers {
            params.insert("inputResponses".into(), answers.into());
        }
        if let Some(meta) = self.session().and_then(|s| s.meta.clone()) {
            params.insert("_meta".into(), meta.into());
        }
        let params = serde_json::to_vec(&params).unwrap_or_else(|_| b"{}".to_vec());
        let route = Some(Box::new(Route { name: task_id, arguments: None }));
        let timing = match errand {
            // It blocks until the task ends: the task's limits, not the request timeout.
            Errand::Result => task_timing(&self.config.tasks),
            _ => Timing::fixed(self.config.request_timeout),
        };
        let pending = Pending::new(PendingKind::TaskErrand, now, Some(timing));
        let id = self.start_request(pending, Cow::Borrowed(errand.method()), Some(&params), route);
        self.tasks.errands.insert(id, (owner, errand));
    }

    /// The answer to one of the engine's `tasks/*` requests.
    pub(super) fn on_errand_answer(
        &mut self,
        now: Instant,
        errand_id: CallId,
        result: Result<&RawValue, RequestError>,
    ) {
        let Some((owner, errand)) = self.tasks.errands.remove(&errand_id) else { return };
        match (errand, result) {
            (Errand::Cancel, _) => {}
            (_, Err(error)) => self.end_task(owner, Err(error)),
            (Errand::Get, Ok(raw)) => match serde_json::from_str::<TaskSnapshot>(raw.get()) {
                Ok(snapshot) => self.on_snapshot(now, owner, snapshot),
                Err(e) => {
                    self.abandon_task(now, owner, RequestError::InvalidResponse(format!("tasks/get: {e}")))
                }
            },
            (Errand::Update, Ok(_)) => self.schedule_poll(now, owner, self.config.tasks.poll_floor),
            (Errand::Result, Ok(raw)) => self.end_task(owner, Ok(raw.get())),
        }
    }

    /// `notifications/tasks`: an answer for the followed task it names. Returns whether it was
    /// one (otherwise the application gets it as a notification).
    pub(super) fn on_task_notification(&mut self, now: Instant, params: Option<&RawValue>) -> bool {
        let Some(snapshot) = params.and_then(|p| serde_json::from_str::<TaskSnapshot>(p.get()).ok()) else {
            return false;
        };
        let Some(owner) =
            self.tasks.follows.iter().find(|(_, f)| f.task_id == snapshot.task_id).map(|(&id, _)| id)
        else {
            return false;
        };
        self.on_snapshot(now, owner, snapshot);
        true
    }

    /// What the task of request `owner` is now (a poll's answer, a notification, the seed).
    fn on_snapshot(&mut self, now: Instant, owner: CallId, snapshot: TaskSnapshot) {
        let Some(follow) = self.tasks.follows.get_mut(&owner) else { return };
        if snapshot.task_id != follow.task_id {
            let why = format!(
                "asked for task {:?}, the server answered about {:?}",
                follow.task_id, snapshot.task_id
            );
            return self.abandon_task(now, owner, RequestError::InvalidResponse(why));
        }
        // 2025-11-25 carries no payload in a status: `tasks/result` fetches it.
        let checked = match follow.shape {
            Shape::Extension => snapshot.check(),
            Shape::Experimental => match &snapshot.status {
                TaskStatus::Unknown(status) => {
                    Err(format!("task {:?} has unknown status {status:?}", snapshot.task_id))
                }
                _ => Ok(()),
            },
        };
        if let Err(why) = checked {
            return self.abandon_task(now, owner, RequestError::InvalidResponse(why));
        }
        if follow.awaiting_result && !snapshot.status.is_terminal() {
            // `tasks/result` is out and will end the call; a notification changes nothing.
            return;
        }
        let seen =
            (snapshot.status.clone(), snapshot.status_message.clone(), snapshot.last_updated_at.clone());
        if seen != follow.seen {
            follow.seen = seen;
            self.pending.touch(owner, now);
        }
        if let Some(ms) = snapshot.poll_interval_ms {
            follow.suggested_ms = Some(ms);
        }
        let interval = self.config.tasks.interval(follow.suggested_ms);
        let experimental = follow.shape == Shape::Experimental;
        if experimental
            && matches!(
                snapshot.status,
                TaskStatus::InputRequired | TaskStatus::Completed | TaskStatus::Failed
            )
        {
            if !follow.awaiting_result {
                follow.awaiting_result = true;
                self.tasks.unschedule(owner);
                self.send_errand(now, owner, Errand::Result, None);
            }
            return;
        }
        match snapshot.status {
            TaskStatus::Working => self.schedule_poll(now, owner, interval),
            TaskStatus::InputRequired => {
                if self.ask_for_input(now, owner, snapshot.input_requests.unwrap_or_default()) {
                    self.schedule_poll(now, owner, interval);
                }
            }
            TaskStatus::Completed => {
                let result = snapshot.result.unwrap_or_default();
                let json = serde_json::to_string(&result).unwrap_or_else(|_| "{}".into());
                self.end_task(owner, Ok(&json));
            }
            TaskStatus::Failed => {
                let error = snapshot.error.unwrap_or_else(|| ErrorObject::internal("the task failed"));
                self.end_task(owner, Err(RequestError::Server(error)));
            }
            TaskStatus::Cancelled => {
                let error = RequestError::TaskCancelled {
                    task_id: snapshot.task_id,
                    message: snapshot.status_message,
                };
                self.end_task(owner, Err(error));
            }
            // Refused by `check` above.
            TaskStatus::Unknown(_) => {}
        }
    }

    /// Hands the input requests not asked yet to the application. Returns `false` when the
    /// task was abandoned over one the client cannot answer.
    fn ask_for_input(
        &mut self,
        now: Instant,
        owner: CallId,
        requests: BTreeMap<String, serde_json::Value>,
    ) -> bool {
        let mut new = Vec::new();
        for (key, raw) in requests {
            if self.tasks.follows.get(&owner).is_none_or(|f| f.asked.contains(&key)) {
                continue;
            }
            match decode_input(&self.config.capabilities, &key, &raw.to_string()) {
                Ok(request) => new.push((key, request)),
                Err(error) => return self.refuse_input(now, owner, error),
            }
        }
        for (key, request) in new {
            let id = self.input_id(owner, &key);
            if let Some(follow) = self.tasks.follows.get_mut(&owner) {
                follow.asked.insert(key.clone());
                follow.waiting.insert(key.clone());
            }
            self.inputs.insert(id.clone(), (owner, key));
            self.events.push_back(Event::Request { id, request });
        }
        true
    }

    fn refuse_input(&mut self, now: Instant, owner: CallId, error: RequestError) -> bool {
        self.abandon_task(now, owner, error);
        false
    }

    /// The application answered input request `key` of the task of request `owner`.
    pub(super) fn answer_task_input(
        &mut self,
        now: Instant,
        owner: CallId,
        key: String,
        outcome: Result<serde_json::Result<serde_json::Value>, ErrorObject>,
    ) -> Result<(), UsageError> {
        let value = match outcome {
            Ok(Ok(value)) => value,
            Ok(Err(e)) => return Err(UsageError::InvalidParams(e.to_string())),
            Err(error) => {
                // No per-input error exists on the wire: the task is given up.
                self.abandon_task(now, owner, RequestError::InputRefused(error));
                return Ok(());
            }
        };
        let Some(follow) = self.tasks.follows.get_mut(&owner) else { return Ok(()) };
        follow.waiting.remove(&key);
        follow.answers.insert(key, value);
        if follow.waiting.is_empty() {
            let answers = std::mem::take(&mut follow.answers);
            self.send_errand(now, owner, Errand::Update, Some(answers));
        }
        Ok(())
    }

    /// Ends request `owner` with the task's outcome (no `tasks/cancel`: the task ended, or
    /// cannot be reached).
    fn end_task(&mut self, owner: CallId, result: Result<&str, RequestError>) {
        self.tasks.forget(owner);
        if let Some(pending) = self.pending.remove(owner) {
            self.finish(owner, pending, result);
        }
    }

    /// Ends request `owner` with `error` and cancels its task: the client gives it up.
    fn abandon_task(&mut self, now: Instant, owner: CallId, error: RequestError) {
        tracing::debug!(id = owner.0, %error, "the task is given up");
        if let Some(follow) = self.tasks.forget(owner) {
            self.send_task_request(now, owner, Errand::Cancel, follow.task_id, None);
        }
        if let Some(pending) = self.pending.remove(owner) {
            self.finish(owner, pending, Err(error));
        }
    }

    /// Request `id` is cancelled or ran out of time: stops following its task, and cancels
    /// the task when the request made it.
    pub(super) fn drop_task_of(&mut self, now: Instant, id: CallId) {
        if let Some(follow) = self.tasks.forget(id) {
            if follow.cancel_with_request {
                self.send_task_request(now, id, Errand::Cancel, follow.task_id, None);
            }
        }
    }

    /// Request `id` finished: nothing of its task is kept. The listen stream's filter follows
    /// at the next [`handle_timeout`](ClientConnection::handle_timeout), which
    /// [`poll_timeout`](ClientConnection::poll_timeout) asks for at once.
    pub(super) fn forget_task(&mut self, id: CallId) {
        if self.tasks.forget(id).is_some() && self.config.tasks.listen && self.listen.again_at.is_none() {
            self.listen.again_at = Some(self.last_received);
        }
    }

    /// One of the engine's `tasks/*` requests got no answer (its deadline, a lost transport).
    pub(super) fn errand_failed(&mut self, errand_id: CallId, error: RequestError) {
        let Some((owner, errand)) = self.tasks.errands.remove(&errand_id) else { return };
        if errand != Errand::Cancel {
            self.end_task(owner, Err(error));
        }
    }
}
