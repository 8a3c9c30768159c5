//! What a request of ours keeps, beside its place in the pending table, to go on after an
//! answer: [`Retry`] (a 2026-07-28 request's method, params and route, to be sent again), the
//! round of input it is gathering ([`Gathering`], which a followed task's round uses too), and
//! what it asked of a task it may become ([`TaskTerms`]).
//!
//! Plain values with no behaviour of the connection's: [`Pending`](super::pending::Pending)
//! holds them, and the machines that act on them (`input_rounds.rs`, `tasks.rs`) import them.
//! This module imports nothing of `connection`, so holding them makes the table depend on no
//! machine that depends on the table (`.ci/module-cycles core/src/connection`).

use std::borrow::Cow;
use std::collections::BTreeSet;
use std::time::Duration;

use serde_json::value::RawValue;

use crate::config::{ClientConfig, RequestOptions, TaskMode, TaskPolicy};
use crate::schema;
use crate::transmit::Route;

/// A 2026-07-28 request that may be sent again: with `inputResponses` (multi round-trip), or
/// as it was under a new id.
#[derive(Debug)]
pub(crate) struct Retry {
    pub(super) method: Cow<'static, str>,
    /// The params as first sent (with `_meta`).
    pub(super) params: Vec<u8>,
    /// The params of the latest round, when they differ from the first (they carry
    /// `inputResponses`): what a re-send after a lost response sends again.
    pub(super) round_params: Option<Vec<u8>>,
    pub(super) route: Option<Box<Route>>,
    pub(super) rounds: u32,
    /// The round in progress: the opaque state to echo and the answers gathered so far.
    pub(super) state: Option<Box<RawValue>>,
    pub(super) input: Gathering,
    /// What a task answer does (the tasks extension), and under which deadlines.
    pub(super) task: TaskTerms,
}

impl Retry {
    pub(crate) fn new(
        method: Cow<'static, str>,
        params: Vec<u8>,
        route: Option<Box<Route>>,
        task: TaskTerms,
    ) -> Self {
        Retry {
            method,
            params,
            round_params: None,
            route,
            rounds: 0,
            state: None,
            input: Gathering::default(),
            task,
        }
    }

    /// Whether the method may answer `input_required` (only these three may).
    pub(super) fn takes_input(&self) -> bool {
        matches!(&*self.method, "tools/call" | "resources/read" | "prompts/get")
    }
}

/// One round of input being gathered: the keys handed to the application and not answered
/// yet, and the answers so far. The round is complete when nothing is waiting; its answers then
/// go out together (a multi round-trip retry's `inputResponses`, a task's `tasks/update`).
#[derive(Debug, Default)]
pub(super) struct Gathering {
    waiting: BTreeSet<String>,
    answers: schema::JsonObject,
}

impl Gathering {
    /// Key `key` was handed to the application.
    pub(super) fn ask(&mut self, key: String) {
        self.waiting.insert(key);
    }

    /// The application answered key `key` (an answer to a key not waited for is dropped).
    /// Returns whether the round is now complete.
    pub(super) fn answer(&mut self, key: String, value: serde_json::Value) -> bool {
        if self.waiting.remove(&key) {
            self.answers.insert(key, value);
        }
        self.is_complete()
    }

    pub(super) fn is_complete(&self) -> bool {
        self.waiting.is_empty()
    }

    /// The answers gathered, taken out (the round starts empty again).
    pub(super) fn take_answers(&mut self) -> schema::JsonObject {
        std::mem::take(&mut self.answers)
    }
}

/// What a request asked of a task it may become: how the request ends, and under which
/// deadlines the task is followed.
#[derive(Debug, Clone, Copy)]
pub(crate) struct TaskTerms {
    pub(crate) mode: TaskMode,
    pub(super) policy: TaskPolicy,
    /// The caller bounded the request itself (`timeout` or `max_total`, no task policy): those
    /// limits hold over its task too.
    pub(super) own_limits: Option<Duration>,
}

impl TaskTerms {
    pub(crate) fn of(options: &RequestOptions, config: &ClientConfig) -> Self {
        let bounded =
            options.task_policy.is_none() && (options.timeout.is_some() || options.max_total.is_some());
        let policy = options.task_policy.as_deref().copied().unwrap_or(config.tasks);
        TaskTerms {
            mode: options.task,
            policy,
            own_limits: bounded.then(|| options.timeout.unwrap_or(policy.timeout)),
        }
    }
}
