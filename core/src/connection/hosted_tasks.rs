//! The client as a task *receiver* (2025-11-25, SEP-1686, experimental): a server's
//! `sampling/createMessage` or `elicitation/create` that asks for a task (`params.task`), when
//! the client declared `tasks.requests.<kind>`, is answered at once with the task, and the
//! application answers the request as usual (an [`Event::Request`] under the id
//! `task/<taskId>`). The server follows the task with `tasks/get`, `tasks/result` (answered
//! when the application's answer is in), `tasks/list` and `tasks/cancel`.
//!
//! - At most [`ClientConfig::max_open_server_requests`](crate::ClientConfig) tasks are kept;
//!   past that the oldest ended one is forgotten, and a new task is refused if none has ended.
//! - A task not ended and each `tasks/result` waiting for one count against the one budget of
//!   what the server asks of the application (with its wire requests and input requests:
//!   [`ClientConnection::open_asks`]); past it a new task or a new waiter is refused with
//!   `-32603` and `data.limit`, counted in [`Stats::server_requests_refused`](crate::Stats)
//!   and reported as [`Event::ServerRequestRefused`].
//! - The application's id of a hosted task's request is `task/client-task-<n>`, or that with a
//!   `/1`, `/2`, … suffix when the server has a request open under it: chosen so that it never
//!   clashes with an id in use, and a server request arriving later under it is refused as an
//!   id in use.
//! - A task is forgotten once its `ttl` (from the server, capped at one hour) has passed since
//!   it ended, at the next request about tasks.
//! - The timestamps need the time of day, which the driver gives with
//!   [`ClientConnection::set_wall_clock`]; without it the client hosts no task (the request is
//!   answered as a plain one).

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::ClientConnection;
use super::incoming::server_request;
use crate::RequestId;
use crate::error::UsageError;
use crate::event::Event;
use crate::json_scan::JsonText;
use crate::jsonrpc::ErrorObject;
use crate::schema::{self, TaskStatus};

/// How long an ended task is kept at most, whatever `ttl` the server asked for.
const MAX_KEEP: Duration = Duration::from_secs(60 * 60);

/// The poll interval the client suggests to the server.
const POLL_INTERVAL_MS: u64 = 500;

#[derive(Debug)]
struct Hosted {
    status: TaskStatus,
    status_message: Option<String>,
    created: Instant,
    updated: Instant,
    ended: Option<Instant>,
    ttl_ms: Option<u64>,
    /// The application's answer, once in.
    outcome: Option<Result<Value, ErrorObject>>,
    /// The server's `tasks/result` requests waiting for the end.
    waiting: Vec<RequestId>,
    /// The application's id of the task's request.
    app_id: RequestId,
}

/// The tasks the client hosts, by id (ids are `client-task-<n>`, in creation order).
#[derive(Debug, Default)]
pub(crate) struct HostedTasks {
    tasks: BTreeMap<u64, Hosted>,
    /// The application's ids of the hosted tasks' requests → the task.
    app_ids: BTreeMap<RequestId, u64>,
    next: u64,
    /// The time of day at an instant: `(instant, unix seconds)`.
    wall_clock: Option<(Instant, u64)>,
}

fn task_number(task_id: &str) -> Option<u64> {
    task_id.strip_prefix("client-task-")?.parse().ok()
}

/// `unix` seconds as an RFC 3339 UTC timestamp (days to civil date: Howard Hinnant's algorithm).
fn rfc3339(unix: u64) -> String {
    let (days, secs) = ((unix / 86_400) as i64, unix % 86_400);
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z", secs / 3_600, secs % 3_600 / 60, secs % 60)
}

impl HostedTasks {
    /// What the hosted tasks hold open of the budget: the tasks not ended, and the server's
    /// `tasks/result` requests waiting for them.
    pub(crate) fn open(&self) -> usize {
        if self.tasks.is_empty() {
            return 0;
        }
        self.tasks.values().filter(|t| t.ended.is_none()).map(|t| 1 + t.waiting.len()).sum()
    }

    /// Whether `id` is the application's id of a hosted task's request.
    pub(crate) fn app_id_in_use(&self, id: &RequestId) -> bool {
        !self.app_ids.is_empty() && self.app_ids.contains_key(id)
    }

    fn unix_at(&self, at: Instant) -> Option<u64> {
        let (anchor, unix) = self.wall_clock?;
        Some(match at.checked_duration_since(anchor) {
            Some(later) => unix.saturating_add(later.as_secs()),
            None => unix.saturating_sub(anchor.saturating_duration_since(at).as_secs()),
        })
    }

    fn to_json(&self, n: u64, task: &Hosted) -> Value {
        let time = |at| self.unix_at(at).map(rfc3339).unwrap_or_default();
        let mut value = json!({
            "taskId": format!("client-task-{n}"),
            "status": task.status.as_str(),
            "createdAt": time(task.created),
            "lastUpdatedAt": time(task.updated),
            "ttl": task.ttl_ms,
            "pollInterval": POLL_INTERVAL_MS,
        });
        if let Some(message) = &task.status_message {
            value["statusMessage"] = message.clone().into();
        }
        value
    }

    /// Forgets the ended tasks whose time is up, and the oldest ended one past `limit`.
    fn prune(&mut self, now: Instant, limit: usize) {
        self.tasks.retain(|_, task| {
            let keep = task.ttl_ms.map_or(MAX_KEEP, Duration::from_millis).min(MAX_KEEP);
            task.ended.is_none_or(|ended| now.saturating_duration_since(ended) < keep)
        });
        while self.tasks.len() >= limit {
            let Some(oldest) = self.tasks.iter().find(|(_, t)| t.ended.is_some()).map(|(&n, _)| n) else {
                break;
            };
            self.tasks.remove(&oldest);
        }
        let tasks = &self.tasks;
        self.app_ids.retain(|_, n| tasks.contains_key(n));
    }
}

impl ClientConnection {
    /// The time of day at `now` (`now_unix`, seconds since the Unix epoch): what the client's
    /// hosted tasks' timestamps are made from. The engine never reads a clock; a driver calls
    /// this once at the start.
    pub fn set_wall_clock(&mut self, now: Instant, now_unix: u64) {
        self.hosted.wall_clock = Some((now, now_unix));
    }

    /// Whether the client hosts a task for server request `method` with these params.
    fn hosts(&self, method: &str, params: Option<JsonText<'_>>) -> bool {
        let declared =
            schema::TaskRequest::of(method).is_some_and(|r| self.config.capabilities.hosts_task(r));
        declared
            && self.hosted.wall_clock.is_some()
            && params.is_some_and(|p| schema::task_peek::asks_for_task(p.get().as_bytes()))
    }

    /// A server request the client may host as a task, or a `tasks/*` request about its tasks.
    /// Returns `false` when it is neither (the caller goes on as usual).
    pub(super) fn on_hosted_request(
        &mut self,
        id: &RequestId,
        method: &str,
        params: Option<JsonText<'_>>,
    ) -> bool {
        if method.starts_with("tasks/") && self.config.capabilities.tasks.is_some() {
            self.on_task_request(id, method, params);
            return true;
        }
        if !self.hosts(method, params) {
            return false;
        }
        let request = match server_request(method, params) {
            Some(Ok(request)) => request,
            // Invalid params: the usual path refuses them.
            _ => return false,
        };
        let now = self.clock;
        self.hosted.prune(now, self.config.max_open_server_requests);
        if self.hosted.tasks.len() >= self.config.max_open_server_requests
            || self.open_asks() >= self.config.max_open_server_requests
        {
            self.refuse_over_budget(id.clone(), method);
            return true;
        }
        let ttl_ms = params.and_then(schema::task_peek::requested_ttl);
        let n = self.hosted.next;
        self.hosted.next += 1;
        let app_id = self.free_id(format!("task/client-task-{n}"));
        self.hosted.app_ids.insert(app_id.clone(), n);
        let task = Hosted {
            status: TaskStatus::Working,
            status_message: None,
            created: now,
            updated: now,
            ended: None,
            ttl_ms,
            outcome: None,
            waiting: Vec::new(),
            app_id: app_id.clone(),
        };
        let created = json!({"task": self.hosted.to_json(n, &task)});
        self.hosted.tasks.insert(n, task);
        self.respond_value(id, Ok(&created));
        tracing::debug!(task = n, method, "hosting a task for the server");
        self.events.push_back(Event::Request { id: app_id, request });
        true
    }

    /// `tasks/get`, `tasks/result`, `tasks/list` or `tasks/cancel` from the server.
    fn on_task_request(&mut self, id: &RequestId, method: &str, params: Option<JsonText<'_>>) {
        let now = self.clock;
        self.hosted.prune(now, usize::MAX);
        if method == "tasks/list" {
            let tasks: Vec<Value> =
                self.hosted.tasks.iter().map(|(&n, t)| self.hosted.to_json(n, t)).collect();
            return self.respond_value(id, Ok(&json!({"tasks": tasks})));
        }
        let named = params.and_then(|p| serde_json::from_str::<schema::GetTaskRequestParams>(p.get()).ok());
        let found = named
            .as_ref()
            .and_then(|named| task_number(&named.task_id))
            .filter(|n| self.hosted.tasks.contains_key(n));
        let Some(n) = found else {
            let error = match named {
                Some(named) => ErrorObject::invalid_params(format_args!("unknown task {:?}", named.task_id)),
                None => ErrorObject::invalid_params("taskId is required"),
            };
            return self.respond_value(id, Err(error));
        };
        match method {
            "tasks/get" => {
                let value = self.hosted.to_json(n, &self.hosted.tasks[&n]);
                self.respond_value(id, Ok(&value));
            }
            "tasks/result" => {
                let ended = self.hosted.tasks.get(&n).is_some_and(|t| t.ended.is_some());
                if ended {
                    self.answer_result(n, id.clone());
                } else if self.open_asks() >= self.config.max_open_server_requests {
                    self.refuse_over_budget(id.clone(), method);
                } else if let Some(task) = self.hosted.tasks.get_mut(&n) {
                    task.waiting.push(id.clone());
                }
            }
            "tasks/cancel" => {
                let Some(task) = self.hosted.tasks.get_mut(&n) else { return };
                if task.ended.is_some() {
                    let error =
                        ErrorObject::invalid_params(format_args!("task client-task-{n} has ended already"));
                    return self.respond_value(id, Err(error));
                }
                task.status = TaskStatus::Cancelled;
                task.ended = Some(now);
                task.updated = now;
                let error = ErrorObject::internal("the task was cancelled");
                task.outcome = Some(Err(error));
                let waiting = std::mem::take(&mut task.waiting);
                let value = self.hosted.to_json(n, &self.hosted.tasks[&n]);
                self.respond_value(id, Ok(&value));
                for waiter in waiting {
                    self.answer_result(n, waiter);
                }
                let app_id = self.hosted.tasks[&n].app_id.clone();
                self.events.push_back(Event::ServerRequestCancelled { id: app_id, reason: None });
            }
            _ => self.respond_value(id, Err(ErrorObject::method_not_found(method))),
        }
    }

    /// Answers `tasks/result` request `id` for ended task `n`: its result (tagged with the
    /// task), or its error.
    fn answer_result(&mut self, n: u64, id: RequestId) {
        let outcome = self.hosted.tasks.get(&n).and_then(|t| t.outcome.clone());
        match outcome {
            Some(Ok(mut value)) => {
                if let Some(object) = value.as_object_mut() {
                    let meta = object.entry("_meta").or_insert_with(|| json!({}));
                    if let Some(meta) = meta.as_object_mut() {
                        let related = json!({"taskId": format!("client-task-{n}")});
                        meta.insert(schema::RELATED_TASK_META_KEY.into(), related);
                    }
                }
                self.respond_value(&id, Ok(&value));
            }
            Some(Err(error)) => self.respond_value(&id, Err(error)),
            None => {}
        }
    }

    /// The hosted task whose request the application knows under `id`.
    pub(super) fn hosted_task_of(&self, id: &RequestId) -> Option<u64> {
        if self.hosted.app_ids.is_empty() {
            return None;
        }
        self.hosted.app_ids.get(id).copied().filter(|n| self.hosted.tasks.contains_key(n))
    }

    /// The application answered hosted task `n`'s request: the task ends, and the server's
    /// waiting `tasks/result` requests are answered. An answer to a task the server cancelled
    /// meanwhile is accepted and changes nothing.
    pub(super) fn settle_hosted(
        &mut self,
        n: u64,
        outcome: Result<serde_json::Result<Value>, ErrorObject>,
    ) -> Result<(), UsageError> {
        let outcome = match outcome {
            Ok(Ok(value)) => Ok(value),
            Ok(Err(e)) => return Err(UsageError::InvalidParams(e.to_string())),
            Err(error) => Err(error),
        };
        let now = self.clock;
        let Some(task) = self.hosted.tasks.get_mut(&n).filter(|t| t.ended.is_none()) else { return Ok(()) };
        task.status = if outcome.is_ok() { TaskStatus::Completed } else { TaskStatus::Failed };
        if let Err(error) = &outcome {
            task.status_message = Some(error.message.clone());
        }
        task.outcome = Some(outcome);
        task.ended = Some(now);
        task.updated = now;
        for waiter in std::mem::take(&mut task.waiting) {
            self.answer_result(n, waiter);
        }
        Ok(())
    }

    fn respond_value(&mut self, id: &RequestId, outcome: Result<&Value, ErrorObject>) {
        match outcome {
            Ok(value) => match serde_json::value::to_raw_value(value) {
                Ok(raw) => self.queue_response(id, Ok(&raw)),
                Err(e) => self.queue_response(id, Err(&ErrorObject::internal(e))),
            },
            Err(error) => self.queue_response(id, Err(&error)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::rfc3339;

    #[test]
    fn timestamps_are_rfc3339_utc() {
        assert_eq!(rfc3339(0), "1970-01-01T00:00:00Z");
        assert_eq!(rfc3339(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(rfc3339(1_795_777_200), "2026-11-27T11:00:00Z");
    }
}
