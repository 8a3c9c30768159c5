//! Following tasks (the tasks extension, SEP-2663, 2026-07-28): a `tools/call` the server
//! answered with `resultType: "task"`, or a task the application asked to follow again
//! ([`ClientConnection::follow_task`]), stays the application's one request until the task
//! ends.
//!
//! - The call keeps its id. Its deadline becomes the task's ([`TaskPolicy`]): `timeout` without
//!   any change of the task, `max_total` in all, unless the caller bounded the call itself
//!   ([`RequestOptions::timeout`] or [`RequestOptions::max_total`] without
//!   [`RequestOptions::task_policy`]): then the call's own limits hold over its task, its cap
//!   counted from the call's start.
//! - Each followed task is filed under its id, which this connection then owns: a second task
//!   with the same id (another call's answer, [`ClientConnection::follow_task`], a task handed
//!   out with [`TaskMode::Return`]) is refused, so that one task's result reaches one caller.
//! - A follow is in one [`Stage`] at a time, changed in one place ([`Tasks::put_stage`]):
//!   polling (the next `tasks/get` due, or one out: never two), input being gathered, an update
//!   out, the end being fetched (2025-11-25), or cancelling. The engine polls at the interval the
//!   server suggests, kept between the floor and the cap of the policy; the polls are the
//!   connection's own requests (with the request timeout, for silence), and their times are
//!   deadlines of the engine like any other ([`ClientConnection::poll_timeout`]).
//! - `input_required`: each input request is handed to the application once, as an
//!   [`Event::Request`](crate::Event::Request); a key already asked is never asked again, however
//!   often the server repeats it. When the keys asked are all answered, the answers go out in one
//!   `tasks/update`. Polls go on meanwhile, so that the task's end is seen. A task may ask
//!   [`TaskPolicy::max_inputs`] keys over its life, and its input counts against
//!   [`ClientConfig::max_open_server_requests`](crate::ClientConfig::max_open_server_requests).
//! - The end: `completed` gives the call the task's `result`, `failed` its `error`, `cancelled`
//!   [`RequestError::TaskCancelled`]. Cancelling the call (or its task deadline passing) sends
//!   `tasks/cancel`, never `notifications/cancelled`.
//! - Every task the client refuses or gives up while its id is readable gets one `tasks/cancel`:
//!   a task that does not decode, a poll that timed out, a bound passed, input the application
//!   refused. The exception is a task whose id another request of this connection owns: that
//!   task is the other request's, and goes on.
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
use std::collections::{BTreeMap, BTreeSet, HashSet, VecDeque};
use std::hash::{DefaultHasher, Hash, Hasher};
use std::time::{Duration, Instant};

use super::ClientConnection;
use super::pending::{CallId, Pending, PendingKind, Timing};
use super::retry::{Gathering, TaskTerms};
use crate::RequestId;
use crate::config::{RequestOptions, TaskMode, TaskPolicy};
use crate::deadline::deadline_after;
use crate::error::UsageError;
use crate::event::RequestError;
use crate::json_scan::JsonText;
use crate::jsonrpc::ErrorObject;
use crate::schema::{self, TaskRequest, TaskSnapshot, TaskStatus, task_peek};
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

/// Where a follow's polling stands: one poll at a time, by construction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Poll {
    /// Nothing scheduled (for a moment, while an answer is handled; or while an update is out,
    /// whose answer schedules the next poll).
    Idle,
    /// The next `tasks/get` goes out then.
    Due(Instant),
    /// A `tasks/get` is out under this id.
    Out(CallId),
}

/// What a followed task waits for. Changed only through [`Tasks::take_stage`] and
/// [`Tasks::put_stage`], which keep the poll and errand indexes in step.
#[derive(Debug)]
enum Stage {
    /// Polling: the task works (or its input was all sent).
    Polling(Poll),
    /// The application holds input requests of the task; polls go on meanwhile, so that the
    /// task's end is seen.
    Gathering { input: Gathering, poll: Poll },
    /// The gathered answers are out in `tasks/update` (a poll may still be out; none is
    /// scheduled: the update's answer schedules the next).
    Updating { errand: CallId, poll: Poll },
    /// 2025-11-25: `tasks/result` is out and ends the request.
    Fetching { errand: CallId },
    /// The request ended, and the client cancels the task (`tasks/cancel` out): its id stays
    /// owned until the server answered.
    Cancelling { errand: CallId },
}

impl Stage {
    fn poll(&self) -> Option<Poll> {
        match self {
            Stage::Polling(poll) | Stage::Gathering { poll, .. } | Stage::Updating { poll, .. } => {
                Some(*poll)
            }
            Stage::Fetching { .. } | Stage::Cancelling { .. } => None,
        }
    }

    fn poll_mut(&mut self) -> Option<&mut Poll> {
        match self {
            Stage::Polling(poll) | Stage::Gathering { poll, .. } | Stage::Updating { poll, .. } => Some(poll),
            Stage::Fetching { .. } | Stage::Cancelling { .. } => None,
        }
    }

    fn due(&self) -> Option<Instant> {
        match self.poll() {
            Some(Poll::Due(at)) => Some(at),
            _ => None,
        }
    }

    /// The engine's requests out for the task, at most two (a poll and an update).
    fn errands(&self) -> [Option<(CallId, Errand)>; 2] {
        let poll = match self.poll() {
            Some(Poll::Out(id)) => Some((id, Errand::Get)),
            _ => None,
        };
        let other = match self {
            Stage::Updating { errand, .. } => Some((*errand, Errand::Update)),
            Stage::Fetching { errand } => Some((*errand, Errand::Result)),
            Stage::Cancelling { errand } => Some((*errand, Errand::Cancel)),
            Stage::Polling(_) | Stage::Gathering { .. } => None,
        };
        [poll, other]
    }
}

/// A task followed for the application's request.
#[derive(Debug)]
struct Follow {
    /// The application's request the task ends (finished already while cancelling).
    owner: CallId,
    shape: Shape,
    stage: Stage,
    policy: TaskPolicy,
    /// The interval the server last suggested, in milliseconds.
    suggested_ms: Option<u64>,
    /// Every input key handed to the application (never asked twice; at most
    /// [`TaskPolicy::max_inputs`]).
    asked: BTreeSet<String>,
    /// What changes of the task count as activity: status, message, last update.
    seen: (TaskStatus, Option<String>, Option<String>),
    /// Whether cancelling the request cancels the task (a call's task: yes; a task the
    /// application follows again: no, its handle cancels it explicitly).
    cancel_with_request: bool,
}

impl Follow {
    fn new(owner: CallId, shape: Shape, policy: TaskPolicy, cancel_with_request: bool) -> Self {
        Follow {
            owner,
            shape,
            stage: Stage::Polling(Poll::Idle),
            policy,
            suggested_ms: None,
            asked: BTreeSet::new(),
            seen: (TaskStatus::Unknown(String::new()), None, None),
            cancel_with_request,
        }
    }
}

/// How many task ids handed out with [`TaskMode::Return`] are remembered, to refuse a second
/// task under one of them.
const MAX_HANDED_OUT: usize = 1024;

/// The ids of tasks handed to the application ([`TaskMode::Return`]), the latest
/// [`MAX_HANDED_OUT`], as 64-bit hashes: a server's ids may be long, and this costs 8 bytes an
/// id whatever their length. A collision (about 2⁻⁵⁴ with a full set) refuses a new task as a
/// duplicate; only a server crafting its own ids could cause one, and it would refuse its own
/// task.
#[derive(Debug, Default)]
struct HandedOut {
    order: VecDeque<u64>,
    set: HashSet<u64>,
}

impl HandedOut {
    fn hash(task_id: &str) -> u64 {
        let mut hasher = DefaultHasher::new();
        task_id.hash(&mut hasher);
        hasher.finish()
    }

    fn contains(&self, task_id: &str) -> bool {
        !self.set.is_empty() && self.set.contains(&Self::hash(task_id))
    }

    fn insert(&mut self, task_id: &str) {
        let hash = Self::hash(task_id);
        if self.set.insert(hash) {
            self.order.push_back(hash);
        }
        while self.order.len() > MAX_HANDED_OUT {
            if let Some(old) = self.order.pop_front() {
                self.set.remove(&old);
            }
        }
    }
}

/// Every followed task (by its id), its poll times, and the engine's requests for it.
#[derive(Debug, Default)]
pub(crate) struct Tasks {
    follows: BTreeMap<String, Follow>,
    /// The application's request → the task it follows (cancelling follows are not here).
    by_owner: BTreeMap<CallId, String>,
    /// `(when, owner)` of each follow's next poll.
    polls: BTreeSet<(Instant, CallId)>,
    /// The engine's `tasks/*` requests in flight → (the task they are about, what for). Only
    /// current ones: a request whose follow moved on is dropped here, and its answer ignored.
    errands: BTreeMap<CallId, (String, Errand)>,
    /// 2025-11-25: the application's `tools/call`s that asked for a task, and what to do with
    /// one.
    augmented: BTreeMap<CallId, TaskTerms>,
    handed: HandedOut,
}

impl Tasks {
    pub(crate) fn next_poll(&self) -> Option<Instant> {
        self.polls.first().map(|&(at, _)| at)
    }

    /// 2025-11-25: whether call `id` asked for a task.
    pub(crate) fn asked_for_task(&self, id: CallId) -> bool {
        !self.augmented.is_empty() && self.augmented.contains_key(&id)
    }

    /// Whether request `id` follows a task.
    pub(crate) fn follows(&self, id: CallId) -> bool {
        self.by_owner.contains_key(&id)
    }

    /// The ids of the followed tasks, for the listen stream's filter.
    pub(crate) fn task_ids(&self) -> impl Iterator<Item = &str> {
        self.by_owner.values().map(String::as_str)
    }

    /// Whether this connection owns task `task_id`: it follows it, cancels it, or handed it out.
    fn owned(&self, task_id: &str) -> bool {
        self.follows.contains_key(task_id) || self.handed.contains(task_id)
    }

    /// Takes task `task`'s stage out (leaving it idle), with its poll and errands unindexed.
    fn take_stage(&mut self, task: &str) -> Option<Stage> {
        let follow = self.follows.get_mut(task)?;
        let stage = std::mem::replace(&mut follow.stage, Stage::Polling(Poll::Idle));
        if let Some(at) = stage.due() {
            self.polls.remove(&(at, follow.owner));
        }
        for (errand, _) in stage.errands().into_iter().flatten() {
            self.errands.remove(&errand);
        }
        Some(stage)
    }

    /// Puts task `task` in `stage`, indexing its poll and errands: with
    /// [`take_stage`](Self::take_stage), the one place a stage changes.
    fn put_stage(&mut self, task: &str, stage: Stage) {
        let Some(follow) = self.follows.get_mut(task) else { return };
        if let Some(at) = stage.due() {
            self.polls.insert((at, follow.owner));
        }
        for (errand, kind) in stage.errands().into_iter().flatten() {
            self.errands.insert(errand, (task.to_owned(), kind));
        }
        follow.stage = stage;
    }

    /// Moves task `task` from its stage to `change(stage)`.
    fn restage(&mut self, task: &str, change: impl FnOnce(Stage) -> Stage) {
        if let Some(stage) = self.take_stage(task) {
            self.put_stage(task, change(stage));
        }
    }

    /// Stops following the task of request `owner`; returns its id and follow.
    fn forget(&mut self, owner: CallId) -> Option<(String, Follow)> {
        if self.by_owner.is_empty() && self.augmented.is_empty() {
            return None;
        }
        self.augmented.remove(&owner);
        let task = self.by_owner.remove(&owner)?;
        self.take_stage(&task);
        let follow = self.follows.remove(&task)?;
        Some((task, follow))
    }

    pub(crate) fn clear(&mut self) {
        *self = Tasks::default();
    }

    /// Asserts that the indexes agree with the follows (debug builds): each follow's due poll
    /// and errands are indexed and nothing else is, and a follow has at most one poll out.
    pub(crate) fn check(&self) {
        if !cfg!(debug_assertions) || self.follows.len() > 256 {
            return;
        }
        let mut polls = 0;
        let mut errands = 0;
        for (task, follow) in &self.follows {
            if let Some(at) = follow.stage.due() {
                debug_assert!(self.polls.contains(&(at, follow.owner)), "poll of {task:?} indexed");
                polls += 1;
            }
            let out = follow.stage.errands();
            let gets = out.iter().flatten().filter(|(_, kind)| *kind == Errand::Get).count();
            debug_assert!(gets <= 1, "task {task:?} has {gets} polls out");
            for (errand, kind) in out.into_iter().flatten() {
                debug_assert_eq!(self.errands.get(&errand), Some(&(task.clone(), kind)), "errand indexed");
                errands += 1;
            }
            let live = !matches!(follow.stage, Stage::Cancelling { .. });
            debug_assert_eq!(live, self.by_owner.get(&follow.owner) == Some(task), "owner of {task:?}");
        }
        debug_assert_eq!(polls, self.polls.len(), "one poll entry per due poll");
        debug_assert_eq!(errands, self.errands.len(), "one errand entry per request out");
    }
}

/// The task deadline of a policy.
fn task_timing(policy: &TaskPolicy) -> Timing {
    Timing { timeout: policy.timeout, max_total: policy.max_total, reset_on_progress: true }
}

impl ClientConnection {
    /// A `tools/call` answered with `resultType: "task"` (the tasks extension): follows the
    /// task, or hands it to the application ([`TaskMode::Return`]). Returns the request back
    /// when the answer is to be the request's result as it is.
    pub(super) fn on_task_answer(
        &mut self,
        now: Instant,
        id: CallId,
        pending: Pending,
        raw: JsonText<'_>,
        terms: TaskTerms,
    ) -> Option<Pending> {
        if !self.config.capabilities.has_extension(schema::TASKS_EXTENSION) {
            let why = "the server answered with a task, but the client did not declare the tasks extension";
            return self.refuse_task(now, id, pending, raw.get(), why.into());
        }
        match serde_json::from_str::<TaskSnapshot>(raw.get()) {
            Ok(snapshot) => self.become_task(now, id, pending, snapshot, Shape::Extension, terms),
            Err(e) => {
                self.refuse_task(now, id, pending, raw.get(), format!("a task that does not decode: {e}"))
            }
        }
    }

    /// Fails request `id` with [`RequestError::InvalidResponse`] over a task answer the client
    /// refuses, and cancels the task when its id can be read, no other request owns it, and the
    /// session has a `tasks/cancel` to send: on 2026-07-28 the server offers the tasks extension,
    /// on 2025-11-25 it declares `tasks.cancel` (a server that declares neither has no such
    /// method, whatever it answered).
    fn refuse_task(
        &mut self,
        now: Instant,
        id: CallId,
        pending: Pending,
        raw: &str,
        why: String,
    ) -> Option<Pending> {
        self.finish(id, pending, Err(RequestError::InvalidResponse(why)));
        let cancellable = self.session().is_some_and(|session| match session.version.is_modern() {
            true => session.capabilities.has_extension(schema::TASKS_EXTENSION),
            false => session.capabilities.tasks.as_ref().is_some_and(|tasks| tasks.contains_key("cancel")),
        });
        let readable = task_peek::readable_task_id(raw).filter(|t| cancellable && !self.tasks.owned(t));
        if let Some(task_id) = readable {
            self.cancel_task(now, task_id, id, Shape::Extension);
        }
        None
    }

    /// Call `id` was answered with a task: the call ends with it ([`TaskMode::Return`]), or
    /// takes the task's deadline and follows it, the seed state counting as the first answer (a
    /// server may create a task already done). A task whose id this connection owns already is
    /// refused, and the other request's task goes on.
    fn become_task(
        &mut self,
        now: Instant,
        id: CallId,
        mut pending: Pending,
        seed: TaskSnapshot,
        shape: Shape,
        terms: TaskTerms,
    ) -> Option<Pending> {
        if self.tasks.owned(&seed.task_id) {
            let why = format!(
                "the server answered with task {:?}, which this connection follows already",
                seed.task_id
            );
            self.finish(id, pending, Err(RequestError::InvalidResponse(why)));
            return None;
        }
        if terms.mode == TaskMode::Return {
            self.tasks.handed.insert(&seed.task_id);
            return Some(pending);
        }
        tracing::debug!(id = id.0, task = %seed.task_id, ?shape, "the call became a task: following it");
        match terms.own_limits {
            // The caller's limits bound the whole call: its cap stays where it was.
            Some(timeout) => pending.retime_within(now, Timing { timeout, ..task_timing(&terms.policy) }),
            None => pending.retime(now, task_timing(&terms.policy)),
        }
        pending.park();
        self.pending.insert(id, pending);
        let task = seed.task_id.clone();
        self.start_follow(now, id, task.clone(), Follow::new(id, shape, terms.policy, true));
        self.on_snapshot(now, &task, seed);
        None
    }

    /// A 2026-07-28 task (`resultType: "task"`) answering a request of a 2025-11-25 session: an
    /// invalid response (the extension's tasks need the per-request capabilities of 2026-07-28,
    /// whatever `initialize` declared), which fails the request at once and cancels the task.
    /// Looked for only when the client declared the extension: other clients' responses are
    /// not read twice. Returns the request back when the answer is something else.
    pub(super) fn refuse_modern_task(
        &mut self,
        now: Instant,
        id: CallId,
        pending: Pending,
        result: &Result<JsonText<'_>, ErrorObject>,
    ) -> Option<Pending> {
        let Ok(raw) = result else { return Some(pending) };
        if !self.config.capabilities.has_extension(schema::TASKS_EXTENSION)
            || task_peek::result_kind(*raw) != task_peek::ResultKind::Task
        {
            return Some(pending);
        }
        let why =
            "the server answered with a task of the tasks extension, which a 2025-11-25 session cannot have";
        self.refuse_task(now, id, pending, raw.get(), why.into())
    }

    /// 2025-11-25: a `tools/call` of the application's that asks for a task
    /// (`params.task`) is checked against the server's `tasks.requests.tools.call`, and
    /// remembered as such once sent.
    pub(super) fn experimental_task(&self, method: &str, params: Option<&[u8]>) -> Result<bool, UsageError> {
        let asks = method == "tools/call" && params.is_some_and(task_peek::asks_for_task);
        let Some(session) = self.session().filter(|_| asks) else { return Ok(false) };
        match session.capabilities.offers_task(TaskRequest::ToolsCall) && !session.version.is_modern() {
            true => Ok(true),
            false => Err(UsageError::CapabilityNotSupported {
                method: method.to_owned(),
                capability: TaskRequest::ToolsCall.capability(),
            }),
        }
    }

    /// 2025-11-25: call `id` asked for a task; remember what to do with one.
    pub(super) fn augmented(&mut self, id: CallId, terms: TaskTerms) {
        self.tasks.augmented.insert(id, terms);
    }

    /// 2025-11-25: the answer to a call that asked for a task. Returns the request back when
    /// the answer is its result as it is.
    pub(super) fn on_experimental_answer(
        &mut self,
        now: Instant,
        id: CallId,
        pending: Pending,
        result: &Result<JsonText<'_>, ErrorObject>,
    ) -> Option<Pending> {
        let Some(terms) = self.tasks.augmented.remove(&id) else { return Some(pending) };
        let Ok(raw) = result else { return Some(pending) };
        match task_peek::created_task(*raw) {
            // A server may answer at once, without a task.
            Ok(None) => Some(pending),
            Ok(Some(task)) => self.become_task(now, id, pending, task, Shape::Experimental, terms),
            Err(e) => {
                self.refuse_task(now, id, pending, raw.get(), format!("a task that does not decode: {e}"))
            }
        }
    }

    /// Follows task `task_id` as a request of the application's, which ends like the call that
    /// made the task would have: with the task's result, its error, or
    /// [`RequestError::TaskCancelled`]. For an application that kept a task's id (a handle it
    /// persisted, say) and wants its result: the engine polls, and hands its input requests to
    /// the application, as for a call. On 2026-07-28 this is a task of the tasks extension; on
    /// 2025-11-25 an experimental task (its end fetched with `tasks/result`).
    ///
    /// The task's deadlines are those of `options`: its
    /// [`task_policy`](RequestOptions::task_policy), else
    /// [`ClientConfig::tasks`](crate::ClientConfig::tasks), with an explicit
    /// [`timeout`](RequestOptions::timeout) or [`max_total`](RequestOptions::max_total) taking
    /// the policy's place. Cancelling the request stops following the task and does not cancel
    /// it (send `tasks/cancel` for that). Fails at once unless the connection is ready and the
    /// server offers tasks (and, on 2026-07-28, the client declared the extension), and when
    /// this connection follows the task already ([`UsageError::TaskFollowed`]).
    pub fn follow_task(
        &mut self,
        now: Instant,
        task_id: &str,
        options: RequestOptions,
    ) -> Result<RequestId, UsageError> {
        self.clock = self.clock.max(now);
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
        if self.tasks.follows.contains_key(task_id) {
            return Err(UsageError::TaskFollowed(task_id.to_owned()));
        }
        let policy = options.task_policy.as_deref().copied().unwrap_or(self.config.tasks);
        let timing = Timing {
            timeout: options.timeout.unwrap_or(policy.timeout),
            max_total: options.max_total.unwrap_or(policy.max_total),
            reset_on_progress: true,
        };
        let pending = Pending::new(PendingKind::User, now, Some(timing));
        self.stats.requests_tracked += 1;
        let id = self.pending.start_local(pending);
        self.start_follow(now, id, task_id.to_owned(), Follow::new(id, shape, policy, false));
        self.poll_in(now, task_id, Duration::ZERO);
        self.tasks.check();
        self.pending.check();
        Ok(RequestId::Number(id.0))
    }

    fn start_follow(&mut self, now: Instant, owner: CallId, task: String, follow: Follow) {
        self.tasks.by_owner.insert(owner, task.clone());
        self.tasks.follows.insert(task, follow);
        if self.config.tasks.listen {
            self.update_listen(now);
        }
    }

    /// Cancels task `task_id` for request `owner` (which has ended): `tasks/cancel` goes out, and
    /// the id stays owned until it is answered.
    fn cancel_task(&mut self, now: Instant, task_id: String, owner: CallId, shape: Shape) {
        tracing::debug!(id = owner.0, task = %task_id, "cancelling the task");
        let errand = self.send_task_request(now, Errand::Cancel, &task_id, None);
        let policy = self.config.tasks;
        self.tasks.follows.insert(task_id.clone(), Follow::new(owner, shape, policy, false));
        self.tasks.put_stage(&task_id, Stage::Cancelling { errand });
    }

    /// Schedules task `task`'s next poll `after` from now (at the cap while the listen stream
    /// carries the task's notifications), unless one is out, or an update is out (its answer
    /// schedules the next).
    fn poll_in(&mut self, now: Instant, task: &str, after: Duration) {
        let Some(follow) = self.tasks.follows.get(task) else { return };
        let waits = matches!(follow.stage, Stage::Updating { .. });
        if waits || !matches!(follow.stage.poll(), Some(Poll::Idle | Poll::Due(_))) {
            return;
        }
        let listened = self.listen.honoured().is_some_and(|filter| filter.task_ids.iter().any(|t| t == task));
        let after = if listened { follow.policy.poll_cap } else { after };
        let at = deadline_after(now, after);
        self.tasks.restage(task, |mut stage| {
            if let Some(poll) = stage.poll_mut() {
                *poll = Poll::Due(at);
            }
            stage
        });
    }

    /// Sends the polls that are due.
    pub(super) fn poll_tasks(&mut self, now: Instant) {
        while let Some(&(at, owner)) = self.tasks.polls.first() {
            if at > now || self.is_closed() {
                break;
            }
            let Some(task) = self.tasks.by_owner.get(&owner).cloned() else {
                self.tasks.polls.remove(&(at, owner));
                continue;
            };
            let errand = self.send_task_request(now, Errand::Get, &task, None);
            self.tasks.restage(&task, |mut stage| {
                if let Some(poll) = stage.poll_mut() {
                    *poll = Poll::Out(errand);
                }
                stage
            });
        }
        self.tasks.check();
    }

    /// Sends `tasks/get`, `tasks/update` (with `answers`), `tasks/result` or `tasks/cancel` about
    /// task `task_id` as the engine's own request; returns its id (the caller files it in the
    /// task's stage).
    fn send_task_request(
        &mut self,
        now: Instant,
        errand: Errand,
        task_id: &str,
        answers: Option<schema::JsonObject>,
    ) -> CallId {
        let mut params = schema::JsonObject::new();
        params.insert("taskId".into(), task_id.into());
        if let Some(answers) = answers {
            params.insert("inputResponses".into(), answers.into());
        }
        if let Some(meta) = self.session().and_then(|s| s.meta.clone()) {
            params.insert("_meta".into(), meta.into());
        }
        let params = serde_json::to_vec(&params).unwrap_or_else(|_| b"{}".to_vec());
        let route = Some(Box::new(Route { name: task_id.to_owned(), arguments: None }));
        let timing = match errand {
            // It blocks until the task ends: the task's limits, not the request timeout.
            Errand::Result => task_timing(&self.config.tasks),
            _ => Timing::fixed(self.config.request_timeout),
        };
        let pending = Pending::new(PendingKind::TaskErrand, now, Some(timing));
        self.start_request(pending, Cow::Borrowed(errand.method()), Some(&params), route)
    }

    /// The answer to one of the engine's `tasks/*` requests (an answer to one the task no
    /// longer waits for is dropped).
    pub(super) fn on_errand_answer(
        &mut self,
        now: Instant,
        errand_id: CallId,
        result: Result<JsonText<'_>, RequestError>,
    ) {
        let Some((task, errand)) = self.tasks.errands.get(&errand_id).cloned() else { return };
        let Some(owner) = self.tasks.follows.get(&task).map(|f| f.owner) else { return };
        match (errand, result) {
            (Errand::Cancel, _) => self.cancelled(&task),
            (Errand::Get, result) => {
                self.tasks.restage(&task, |mut stage| {
                    if let Some(poll) = stage.poll_mut() {
                        *poll = Poll::Idle;
                    }
                    stage
                });
                match result {
                    Ok(raw) => match serde_json::from_str::<TaskSnapshot>(raw.get()) {
                        Ok(snapshot) if snapshot.task_id != task => {
                            let why = format!(
                                "asked for task {task:?}, the server answered about {:?}",
                                snapshot.task_id
                            );
                            self.abandon_task(now, owner, RequestError::InvalidResponse(why));
                        }
                        Ok(snapshot) => self.on_snapshot(now, &task, snapshot),
                        Err(e) => self.abandon_task(
                            now,
                            owner,
                            RequestError::InvalidResponse(format!("tasks/get: {e}")),
                        ),
                    },
                    Err(error) => self.end_task(owner, Err(error)),
                }
            }
            (Errand::Update, Ok(_)) => {
                self.tasks.restage(&task, |stage| match stage {
                    Stage::Updating { poll, .. } => Stage::Polling(poll),
                    other => other,
                });
                let floor = self.tasks.follows.get(&task).map_or(Duration::ZERO, |f| f.policy.poll_floor);
                self.poll_in(now, &task, floor);
            }
            (Errand::Update | Errand::Result, Err(error)) => self.end_task(owner, Err(error)),
            (Errand::Result, Ok(raw)) => self.end_task(owner, Ok(raw.get())),
        }
        self.tasks.check();
    }

    /// One of the engine's `tasks/*` requests got no usable answer (its deadline, a lost
    /// transport, an answer too large or malformed): the task is given up, and cancelled.
    pub(super) fn errand_failed(&mut self, now: Instant, errand_id: CallId, error: RequestError) {
        let Some((task, errand)) = self.tasks.errands.get(&errand_id).cloned() else { return };
        match errand {
            Errand::Cancel => self.cancelled(&task),
            _ => {
                if let Some(owner) = self.tasks.follows.get(&task).map(|f| f.owner) {
                    self.abandon_task(now, owner, error);
                }
            }
        }
        self.tasks.check();
    }

    /// The `tasks/cancel` of task `task` is over (answered or not): the id is free again.
    fn cancelled(&mut self, task: &str) {
        self.tasks.take_stage(task);
        self.tasks.follows.remove(task);
    }

    /// `notifications/tasks`: an answer for the followed task it names. Returns whether it was
    /// one (otherwise the application gets it as a notification).
    pub(super) fn on_task_notification(&mut self, now: Instant, params: Option<JsonText<'_>>) -> bool {
        if self.tasks.follows.is_empty() {
            return false;
        }
        let Some(snapshot) = params.and_then(|p| serde_json::from_str::<TaskSnapshot>(p.get()).ok()) else {
            return false;
        };
        if !self.tasks.follows.contains_key(&snapshot.task_id) {
            return false;
        }
        let task = snapshot.task_id.clone();
        self.on_snapshot(now, &task, snapshot);
        self.tasks.check();
        true
    }

    /// What task `task` is now (a poll's answer, a notification, the seed).
    fn on_snapshot(&mut self, now: Instant, task: &str, snapshot: TaskSnapshot) {
        let Some(follow) = self.tasks.follows.get_mut(task) else { return };
        let owner = follow.owner;
        let fetching = match follow.stage {
            Stage::Cancelling { .. } => return,
            Stage::Fetching { .. } => true,
            _ => false,
        };
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
        if fetching && !snapshot.status.is_terminal() {
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
        let interval = follow.policy.interval(follow.suggested_ms);
        if follow.shape == Shape::Experimental
            && matches!(
                snapshot.status,
                TaskStatus::InputRequired | TaskStatus::Completed | TaskStatus::Failed
            )
        {
            if !fetching {
                let errand = self.send_task_request(now, Errand::Result, task, None);
                self.tasks.restage(task, |_| Stage::Fetching { errand });
            }
            return;
        }
        match snapshot.status {
            TaskStatus::Working => self.poll_in(now, task, interval),
            TaskStatus::InputRequired => {
                let requests = snapshot.input_requests.unwrap_or_default();
                if self.ask_for_input(now, task, owner, requests) {
                    self.poll_in(now, task, interval);
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

    /// Hands the input requests of task `task` not asked yet to the application (none while an
    /// update is out: the server has not read the last answers yet). Returns `false` when the
    /// task was given up: a request the client cannot answer, more than
    /// [`TaskPolicy::max_inputs`] over its life, or more than the budget holds.
    fn ask_for_input(
        &mut self,
        now: Instant,
        task: &str,
        owner: CallId,
        requests: BTreeMap<String, serde_json::Value>,
    ) -> bool {
        let Some(follow) = self.tasks.follows.get(task) else { return false };
        if matches!(follow.stage, Stage::Updating { .. }) {
            return true;
        }
        let new: Vec<(String, String)> = requests
            .into_iter()
            .filter(|(key, _)| !follow.asked.contains(key))
            .map(|(key, raw)| (key, raw.to_string()))
            .collect();
        if new.is_empty() {
            return true;
        }
        let limit = follow.policy.max_inputs;
        if follow.asked.len().saturating_add(new.len()) > limit as usize {
            self.abandon_task(now, owner, RequestError::TooManyTaskInputs(limit));
            return false;
        }
        // Gathering from now on (a round already gathering takes the new keys too).
        self.tasks.restage(task, |stage| match stage {
            Stage::Polling(poll) => Stage::Gathering { input: Gathering::default(), poll },
            other => other,
        });
        let handed =
            self.hand_out_inputs(owner, new.iter().map(|(k, raw)| (k.clone(), raw.as_str())), |this, key| {
                if let Some(follow) = this.tasks.follows.get_mut(task) {
                    follow.asked.insert(key.to_owned());
                    if let Stage::Gathering { input, .. } = &mut follow.stage {
                        input.ask(key.to_owned());
                    }
                }
            });
        match handed {
            Ok(_) => true,
            Err(refusal) => {
                self.abandon_task(now, owner, refusal.into_error());
                false
            }
        }
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
        let Some(task) = self.tasks.by_owner.get(&owner).cloned() else { return Ok(()) };
        let complete = match self.tasks.follows.get_mut(&task).map(|f| &mut f.stage) {
            Some(Stage::Gathering { input, .. }) => input.answer(key, value),
            _ => return Ok(()),
        };
        if complete {
            let Some(Stage::Gathering { mut input, poll }) = self.tasks.take_stage(&task) else {
                return Ok(());
            };
            let errand = self.send_task_request(now, Errand::Update, &task, Some(input.take_answers()));
            // A poll due is dropped: the update's answer schedules the next.
            let poll = if let Poll::Out(id) = poll { Poll::Out(id) } else { Poll::Idle };
            self.tasks.put_stage(&task, Stage::Updating { errand, poll });
        }
        self.tasks.check();
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
        if let Some((task, follow)) = self.tasks.forget(owner) {
            self.cancel_task(now, task, owner, follow.shape);
        }
        if let Some(pending) = self.pending.remove(owner) {
            self.finish(owner, pending, Err(error));
        }
    }

    /// Request `id` is cancelled or ran out of time: stops following its task, and cancels
    /// the task when the request made it.
    pub(super) fn drop_task_of(&mut self, now: Instant, id: CallId) {
        if let Some((task, follow)) = self.tasks.forget(id) {
            if follow.cancel_with_request {
                self.cancel_task(now, task, id, follow.shape);
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
}
