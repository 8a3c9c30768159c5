//! Drives a ready [`ClientConnection`] that follows and hosts tasks with arbitrary task answers,
//! task notifications and hosted-task requests, in both eras: the tasks extension on 2026-07-28
//! (`resultType: "task"`, `tasks/get`, `tasks/update`, `tasks/cancel`, `notifications/tasks`)
//! and the experimental tasks of 2025-11-25 (`{"task": …}`, `tasks/result`, the client hosting
//! a server's `elicitation/create` as a task).
//!
//! The server's answers are built from the input: a task id from a small set (so that ids repeat
//! across calls), a status, poll intervals and ttls as JSON numbers in any form (`250`, `250.0`,
//! `2.5e2`, negative, huge), input requests by the handful or by the thousand, member names
//! written with escapes, tasks that do not decode. They answer the requests the client actually
//! sent (its calls, its polls, its updates, its cancels), or arrive as notifications and server
//! requests; time moves between them.
//!
//! Asserted after every step, besides the engine's own debug assertions (the task index, one
//! poll at a time, the pending table):
//! - no panic; draining `poll_transmit` and `poll_event` terminates;
//! - every transmit is one JSON-RPC line (see `check_transmit`);
//! - exactly one `Event::Response` per request of the application's, never before it was sent;
//! - one step never hands the application more requests than `max_open_server_requests`;
//! - while a request of the application is unanswered, `poll_timeout()` is `Some`; running the
//!   clock to each deadline at the end answers every request.
#![no_main]

use std::collections::BTreeSet;
use std::time::Duration;

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use mcp_sansio::schema::{Implementation, TASKS_EXTENSION};
use mcp_sansio::{ClientConfig, ClientConnection, Event, ProtocolVersion, RequestId, RequestOptions, TaskMode, TaskPolicy};
use mcp_sansio_fuzz::{Contract, all_client_capabilities, check_transmit, epoch, initialize_result};
use serde_json::{Value, json};

#[derive(Arbitrary, Debug)]
struct Knobs {
    /// 2026-07-28 (the extension) or 2025-11-25 (experimental tasks, hosting).
    modern: bool,
    /// `max_open_server_requests`, 1 to 64.
    max_open: u8,
    /// `TaskPolicy::max_inputs`, 0 to 15.
    max_inputs: u8,
}

#[derive(Arbitrary, Debug)]
enum Number {
    Int(u16),
    Float(u16),
    Exp,
    Negative,
    Huge,
    Fraction,
    Text,
}

impl Number {
    fn json(&self) -> String {
        match self {
            Number::Int(n) => n.to_string(),
            Number::Float(n) => format!("{n}.0"),
            Number::Exp => "2.5e2".into(),
            Number::Negative => "-5".into(),
            Number::Huge => "1e300".into(),
            Number::Fraction => "0.5".into(),
            Number::Text => "\"250\"".into(),
        }
    }
}

#[derive(Arbitrary, Debug)]
struct TaskAnswer {
    id: u8,
    status: u8,
    poll: Option<Number>,
    ttl: Option<Number>,
    /// Input requests: how many (0..8 as is, 255: 3 000).
    inputs: u8,
    /// The key names start here (so that they repeat across answers).
    first_key: u8,
    escaped: bool,
    /// Break the task (a status of the wrong type).
    broken: bool,
}

impl TaskAnswer {
    fn task_id(&self) -> String {
        format!("t-{}", self.id % 4)
    }

    /// The task's JSON text, `shape`: 0 a created task (2026-07-28), 1 a `tasks/get` answer, 2 a
    /// 2025-11-25 task (wrapped in `task` when `created`).
    fn json(&self, modern: bool, created: bool) -> String {
        let statuses = ["working", "input_required", "completed", "failed", "cancelled", "unknown"];
        let status = statuses[usize::from(self.status) % statuses.len()];
        let mut members = vec![format!("\"taskId\":{}", json!(self.task_id()))];
        members.push(match self.broken {
            true => "\"status\":7".into(),
            false => format!("\"status\":{}", json!(status)),
        });
        members.push("\"createdAt\":\"2026-11-28T10:00:00Z\"".into());
        members.push("\"lastUpdatedAt\":\"2026-11-28T10:00:00Z\"".into());
        let (poll, ttl) = if modern { ("pollIntervalMs", "ttlMs") } else { ("pollInterval", "ttl") };
        if let Some(n) = &self.poll {
            members.push(format!("\"{poll}\":{}", n.json()));
        }
        if let Some(n) = &self.ttl {
            members.push(format!("\"{ttl}\":{}", n.json()));
        }
        if modern {
            let kind = if created { "task" } else { "complete" };
            members.push(match self.escaped {
                true => format!("\"result\\u0054ype\":\"{kind}\""),
                false => format!("\"resultType\":\"{kind}\""),
            });
            if status == "input_required" {
                let count = if self.inputs == 255 { 3000 } else { usize::from(self.inputs % 8) };
                let requests: Vec<String> = (0..count)
                    .map(|n| {
                        let key = format!("k{}", usize::from(self.first_key % 16) + n);
                        format!("\"{key}\":{{\"method\":\"elicitation/create\",\"params\":{{\"message\":\"?\",\"requestedSchema\":{{\"type\":\"object\",\"properties\":{{}}}}}}}}")
                    })
                    .collect();
                members.push(format!("\"inputRequests\":{{{}}}", requests.join(",")));
            }
            if status == "completed" {
                members.push("\"result\":{\"content\":[]}".into());
            }
            if status == "failed" {
                members.push("\"error\":{\"code\":-32603,\"message\":\"broke\"}".into());
            }
        }
        let task = format!("{{{}}}", members.join(","));
        match (modern, created) {
            (false, true) => format!("{{\"task\":{task}}}"),
            _ => task,
        }
    }
}

#[derive(Arbitrary, Debug)]
enum Op {
    /// A `tools/call` (asking for a task on 2025-11-25), followed or returned.
    Call { returned: bool, max_total_ms: Option<u16>, policy: bool },
    /// `follow_task` of one of the ids.
    Follow(u8),
    /// The `to`-th most recent request of the client answered with a task.
    Answer { to: u8, task: TaskAnswer },
    /// The `to`-th most recent request answered with an empty result or an error.
    Plain { to: u8, error: bool },
    /// `notifications/tasks` (`notifications/tasks/status` on 2025-11-25).
    Notify(TaskAnswer),
    /// 2025-11-25: the server asks the client to host an elicitation as a task.
    Host(u8),
    /// 2025-11-25: `tasks/get`, `tasks/result`, `tasks/list` or `tasks/cancel` of a hosted task,
    /// `count` times (a flood).
    AskHosted { method: u8, task: u8, count: u8 },
    /// The application answers (or refuses) one of the requests it was handed.
    Respond { pick: u8, ok: bool },
    /// `cancel` of one of the application's requests.
    Cancel(u8),
    Advance(u16),
    ToDeadline,
}

#[derive(Arbitrary, Debug)]
struct Input {
    knobs: Knobs,
    ops: Vec<Op>,
}

struct Run {
    conn: ClientConnection,
    now: std::time::Instant,
    contract: Contract,
    /// Wire ids of the client's requests, latest last.
    sent: Vec<Value>,
    handed: Vec<RequestId>,
    modern: bool,
    cap: usize,
    server_id: u64,
}

impl Run {
    fn drain(&mut self) {
        let mut steps = 0;
        while let Some(t) = self.conn.poll_transmit() {
            let value = check_transmit(&t);
            if value.get("method").is_some() && value.get("id").is_some() {
                self.sent.push(value["id"].clone());
            }
            steps += 1;
            assert!(steps < 100_000, "transmits without end");
        }
        let mut handed = 0;
        while let Some(event) = self.conn.poll_event() {
            if let Event::Request { id, .. } = &event {
                handed += 1;
                self.handed.push(id.clone());
            }
            self.contract.event(event);
        }
        assert!(handed <= self.cap, "{handed} requests handed out in one step, over the cap of {}", self.cap);
        if !self.contract.outstanding.is_empty() && !self.conn.is_closed() {
            assert!(self.conn.poll_timeout().is_some(), "a request waits with no deadline");
        }
        if self.sent.len() > 64 {
            self.sent.drain(..32);
        }
        if self.handed.len() > 4096 {
            self.handed.drain(..2048);
        }
    }

    fn feed(&mut self, message: String) {
        let mut line = message.into_bytes();
        line.push(b'\n');
        self.conn.feed(self.now, &line);
        self.drain();
    }

    fn nth_sent(&self, to: u8) -> Option<Value> {
        let n = self.sent.len();
        (n > 0).then(|| self.sent[n - 1 - usize::from(to) % n].clone())
    }

    fn step(&mut self, op: Op) {
        match op {
            Op::Call { returned, max_total_ms, policy } => {
                let mut params = json!({"name": "slow", "arguments": {}});
                if !self.modern {
                    params["task"] = json!({"ttl": 60000});
                }
                let mut options = RequestOptions::default();
                if returned {
                    options = options.task_mode(TaskMode::Return);
                }
                if let Some(ms) = max_total_ms {
                    options = options.max_total(Duration::from_millis(u64::from(ms)));
                }
                if policy {
                    options = options.task_policy(TaskPolicy::default());
                }
                let bytes = serde_json::to_vec(&params).unwrap();
                if let Ok(id) = self.conn.send_request(self.now, "tools/call", Some(&bytes), options) {
                    self.contract.issued(id);
                }
            }
            Op::Follow(id) => {
                if let Ok(id) = self.conn.follow_task(self.now, &format!("t-{}", id % 4), RequestOptions::default()) {
                    self.contract.issued(id);
                }
            }
            Op::Answer { to, task } => {
                if let Some(id) = self.nth_sent(to) {
                    let created = to % 2 == 0;
                    let body = task.json(self.modern, created);
                    self.feed(format!("{{\"jsonrpc\":\"2.0\",\"id\":{id},\"result\":{body}}}"));
                    return;
                }
            }
            Op::Plain { to, error } => {
                if let Some(id) = self.nth_sent(to) {
                    let body = match error {
                        true => "\"error\":{\"code\":-32602,\"message\":\"no such task\"}",
                        false => "\"result\":{}",
                    };
                    self.feed(format!("{{\"jsonrpc\":\"2.0\",\"id\":{id},{body}}}"));
                    return;
                }
            }
            Op::Notify(task) => {
                let method = if self.modern { "notifications/tasks" } else { "notifications/tasks/status" };
                let body = task.json(self.modern, false);
                self.feed(format!("{{\"jsonrpc\":\"2.0\",\"method\":\"{method}\",\"params\":{body}}}"));
                return;
            }
            Op::Host(n) => {
                self.server_id += 1;
                let id = format!("task/client-task-{}", n % 3);
                let id = if n & 0x80 != 0 { id } else { format!("h{}", self.server_id) };
                let message = json!({"jsonrpc": "2.0", "id": id, "method": "elicitation/create",
                    "params": {"message": "?", "requestedSchema": {"type": "object", "properties": {}},
                    "task": {"ttl": 1000}}});
                self.feed(message.to_string());
                return;
            }
            Op::AskHosted { method, task, count } => {
                let methods = ["tasks/get", "tasks/result", "tasks/list", "tasks/cancel"];
                let method = methods[usize::from(method) % methods.len()];
                for _ in 0..=usize::from(count) {
                    self.server_id += 1;
                    let message = json!({"jsonrpc": "2.0", "id": self.server_id, "method": method,
                        "params": {"taskId": format!("client-task-{}", task % 4)}});
                    let mut line = message.to_string().into_bytes();
                    line.push(b'\n');
                    self.conn.feed(self.now, &line);
                }
            }
            Op::Respond { pick, ok } => {
                if !self.handed.is_empty() {
                    let id = self.handed.remove(usize::from(pick) % self.handed.len());
                    let outcome = match ok {
                        true => Ok(json!({"action": "accept", "content": {}})),
                        false => Err(mcp_sansio::jsonrpc::ErrorObject::new(-32603, "no")),
                    };
                    let _ = self.conn.respond(&id, outcome.as_ref().map_err(Clone::clone));
                }
            }
            Op::Cancel(pick) => {
                let outstanding: Vec<RequestId> = self.contract.outstanding.iter().cloned().collect();
                if !outstanding.is_empty() {
                    let id = &outstanding[usize::from(pick) % outstanding.len()];
                    let _ = self.conn.cancel(id, Some("fuzz"));
                }
            }
            Op::Advance(ms) => {
                self.now += Duration::from_millis(u64::from(ms));
                self.conn.handle_timeout(self.now);
            }
            Op::ToDeadline => {
                if let Some(at) = self.conn.poll_timeout() {
                    self.now = self.now.max(at);
                    self.conn.handle_timeout(self.now);
                }
            }
        }
        self.drain();
    }
}

fn ready(knobs: &Knobs) -> Run {
    let modern = knobs.modern;
    let mut caps = all_client_capabilities().with_extension(TASKS_EXTENSION, json!({}));
    caps.tasks = json!({"requests": {"elicitation": {"create": {}}}}).as_object().cloned();
    let mut policy = TaskPolicy::default();
    policy.max_inputs = u32::from(knobs.max_inputs % 16);
    let cap = usize::from(knobs.max_open % 64) + 1;
    let version = if modern { ProtocolVersion::V2026_07_28 } else { ProtocolVersion::V2025_11_25 };
    let config = ClientConfig::new(Implementation::new("fuzz", "1"))
        .with_versions(&[version])
        .with_capabilities(caps)
        .with_max_open_server_requests(cap)
        .with_tasks(policy);
    let now = epoch();
    let mut conn = ClientConnection::new(config, now);
    conn.set_wall_clock(now, 1_795_777_200);
    let mut run =
        Run { conn, now, contract: Contract::default(), sent: Vec::new(), handed: Vec::new(), modern, cap, server_id: 0 };
    run.drain();
    let answer = match modern {
        true => json!({"resultType": "complete", "supportedVersions": ["2026-07-28"],
            "capabilities": {"tools": {}, "extensions": {TASKS_EXTENSION: {}}}}),
        false => initialize_result(
            "2025-11-25",
            json!({"tools": {}, "tasks": {"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}}}),
        ),
    };
    run.feed(json!({"jsonrpc": "2.0", "id": 0, "result": answer}).to_string());
    run
}

fuzz_target!(|input: Input| {
    let mut run = ready(&input.knobs);
    for op in input.ops.into_iter().take(256) {
        run.step(op);
    }
    // Time runs out: every request of the application ends.
    let mut seen = BTreeSet::new();
    for _ in 0..10_000 {
        let Some(at) = run.conn.poll_timeout() else { break };
        run.now = run.now.max(at) + Duration::from_millis(1);
        run.conn.handle_timeout(run.now);
        run.drain();
        if !seen.insert(run.now) {
            break;
        }
    }
    if !run.conn.is_closed() {
        assert!(run.contract.outstanding.is_empty() || run.conn.poll_timeout().is_some(), "{:?}", run.contract.outstanding);
    }
});
