//! The tasks extension of `mcp-demo-server --tasks` (SEP-2663, 2026-07-28) at the wire level,
//! over real pipes: what `server/discover` offers, which calls become tasks, `tasks/get`
//! through a task's life, `tasks/update`, `tasks/cancel`, the errors, and the planted bug.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

const TIMEOUT: Duration = Duration::from_secs(10);
const TASKS: &str = "io.modelcontextprotocol/tasks";

/// The server as a child process, killed when dropped.
struct Demo {
    child: Child,
    stdin: ChildStdin,
    lines: Receiver<Value>,
    next_id: u64,
}

impl Demo {
    fn spawn(args: &[&str]) -> Self {
        let mut child = Command::new(env!("CARGO_BIN_EXE_mcp-demo-server"))
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn mcp-demo-server");
        let stdin = child.stdin.take().expect("stdin");
        let stdout = child.stdout.take().expect("stdout");
        let (sender, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if sender.send(serde_json::from_str(&line).expect("a JSON line")).is_err() {
                    break;
                }
            }
        });
        Self { child, stdin, lines, next_id: 0 }
    }

    /// A request (2026-07-28 `_meta` with `capabilities` when given), and its response.
    fn call(&mut self, method: &str, mut params: Value, capabilities: Option<Value>) -> Value {
        if let Some(capabilities) = capabilities {
            params["_meta"] = json!({
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": capabilities,
            });
        }
        self.next_id += 1;
        let id = self.next_id;
        let line = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string();
        writeln!(self.stdin, "{line}").expect("write");
        self.stdin.flush().expect("flush");
        loop {
            let message = self.lines.recv_timeout(TIMEOUT).expect("an answer");
            if message["id"] == id {
                return message;
            }
        }
    }

    /// A 2026-07-28 request declaring the tasks extension (and elicitation).
    fn modern(&mut self, method: &str, params: Value) -> Value {
        self.call(method, params, Some(json!({"elicitation": {}, "extensions": {TASKS: {}}})))
    }

    /// Polls `tasks/get` until the task's status is `status`.
    fn until(&mut self, task_id: &str, status: &str) -> Value {
        let start = Instant::now();
        loop {
            let task = self.modern("tasks/get", json!({"taskId": task_id}));
            if task["result"]["status"] == status {
                return task["result"].clone();
            }
            assert!(start.elapsed() < TIMEOUT, "never {status}: {task}");
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

impl Drop for Demo {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn only_tasks_servers_offer_the_extension() {
    let mut plain = Demo::spawn(&[]);
    let discovered = plain.modern("server/discover", json!({}));
    assert!(discovered["result"]["capabilities"].get("extensions").is_none(), "{discovered}");
    let get = plain.modern("tasks/get", json!({"taskId": "x"}));
    assert_eq!(get["error"]["code"], -32601, "{get}");
    let tools = plain.modern("tools/list", json!({}));
    assert!(!tools["result"]["tools"].as_array().unwrap().iter().any(|t| t["name"] == "render"));
    // A blocking tool answers at once, as always, whatever the request declares.
    let slept = plain.modern("tools/call", json!({"name": "sleep", "arguments": {"ms": 1}}));
    assert_eq!(slept["result"]["content"][0]["text"], "slept 1 ms", "{slept}");

    let mut tasks = Demo::spawn(&["--tasks"]);
    let discovered = tasks.modern("server/discover", json!({}));
    assert_eq!(discovered["result"]["capabilities"]["extensions"], json!({TASKS: {}}), "{discovered}");
    let tools = tasks.modern("tools/list", json!({}));
    let names: Vec<&str> =
        tools["result"]["tools"].as_array().unwrap().iter().filter_map(|t| t["name"].as_str()).collect();
    assert_eq!(names[names.len() - 2..], ["render", "cancelled_tasks"], "{names:?}");
}

#[test]
fn a_call_becomes_a_task_only_when_the_request_declares_the_extension() {
    let mut demo = Demo::spawn(&["--tasks"]);
    // Without the extension: the blocking tool answers at once, the task-only one is -32021.
    let slept = demo.call("tools/call", json!({"name": "sleep", "arguments": {"ms": 1}}), Some(json!({})));
    assert_eq!(slept["result"]["content"][0]["text"], "slept 1 ms", "{slept}");
    let refused =
        demo.call("tools/call", json!({"name": "render", "arguments": {"frames": 1}}), Some(json!({})));
    assert_eq!(refused["error"]["code"], -32021, "{refused}");
    assert_eq!(refused["error"]["data"], json!({"requiredCapabilities": {"extensions": {TASKS: {}}}}));
    let mut legacy = Demo::spawn(&["--tasks"]);
    let info = json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}});
    legacy.call("initialize", info, None);
    let refused = legacy.call("tools/call", json!({"name": "render", "arguments": {"frames": 1}}), None);
    assert_eq!(refused["error"]["code"], -32021, "in the initialize era too: {refused}");
    // With it: a task, stored before the answer, ending with the tool's result.
    let created = demo.modern("tools/call", json!({"name": "sleep", "arguments": {"ms": 50}}));
    let task = &created["result"];
    assert_eq!((&task["resultType"], &task["status"]), (&json!("task"), &json!("working")), "{created}");
    assert_eq!((&task["ttlMs"], &task["pollIntervalMs"]), (&json!(600_000), &json!(20)));
    assert!(task["createdAt"].as_str().is_some_and(|t| t.ends_with('Z') && t.len() == 24), "{task}");
    let id = task["taskId"].as_str().unwrap().to_owned();
    assert_eq!(id.len(), 32);
    let completed = demo.until(&id, "completed");
    assert_eq!(completed["resultType"], "complete");
    assert_eq!(completed["result"]["content"][0]["text"], "slept 50 ms", "{completed}");
    // A non-blocking tool answers at once even with the extension.
    let echoed = demo.modern("tools/call", json!({"name": "echo", "arguments": {"message": "hi"}}));
    assert_eq!(echoed["result"]["content"][0]["text"], "hi", "{echoed}");
    // render: its structured result, or a failure with a JSON-RPC error; bad arguments at once.
    let created =
        demo.modern("tools/call", json!({"name": "render", "arguments": {"frames": 2, "frame_ms": 5}}));
    let done = demo.until(created["result"]["taskId"].as_str().unwrap(), "completed");
    assert_eq!(done["result"]["structuredContent"], json!({"frames": 2, "frameMs": 5}), "{done}");
    let created =
        demo.modern("tools/call", json!({"name": "render", "arguments": {"frames": 0, "fail": true}}));
    let failed = demo.until(created["result"]["taskId"].as_str().unwrap(), "failed");
    assert_eq!(failed["error"]["code"], -32000, "{failed}");
    let bad = demo.modern("tools/call", json!({"name": "render", "arguments": {"frames": 21}}));
    assert_eq!(bad["error"]["code"], -32602, "{bad}");
    // An argument the blocking tool refuses: the task fails with the call's -32602.
    let created = demo.modern("tools/call", json!({"name": "sleep", "arguments": {"ms": "long"}}));
    let failed = demo.until(created["result"]["taskId"].as_str().unwrap(), "failed");
    assert_eq!(failed["error"]["code"], -32602, "{failed}");
}

#[test]
fn a_question_makes_the_task_input_required_until_tasks_update_answers_it() {
    let mut demo = Demo::spawn(&["--tasks"]);
    let created = demo.modern("tools/call", json!({"name": "elicit", "arguments": {"message": "who?"}}));
    let id = created["result"]["taskId"].as_str().unwrap().to_owned();
    let asking = demo.until(&id, "input_required");
    let question = &asking["inputRequests"]["elicitation"];
    assert_eq!(question["method"], "elicitation/create", "{asking}");
    assert_eq!(question["params"]["message"], "who?");
    // The same question on every poll until it is answered.
    assert_eq!(demo.until(&id, "input_required")["inputRequests"], asking["inputRequests"]);
    // Keys not asked are ignored; an answer that is not an object is refused.
    let ignored = demo.modern("tasks/update", json!({"taskId": id, "inputResponses": {"other": {}}}));
    assert_eq!(ignored["result"]["resultType"], "complete", "{ignored}");
    let refused = demo.modern("tasks/update", json!({"taskId": id, "inputResponses": {"elicitation": 3}}));
    assert_eq!(refused["error"]["code"], -32602, "{refused}");
    let answer = json!({"action": "accept", "content": {"name": "Ada"}});
    let acked = demo.modern("tasks/update", json!({"taskId": id, "inputResponses": {"elicitation": answer}}));
    assert_eq!(acked["result"]["resultType"], "complete", "{acked}");
    let done = demo.until(&id, "completed");
    assert_eq!(done["result"]["content"][0]["text"], r#"action=accept content={"name":"Ada"}"#, "{done}");
    assert!(done.get("inputRequests").is_none());
}

#[test]
fn cancel_is_idempotent_and_unknown_ids_are_errors() {
    let mut demo = Demo::spawn(&["--tasks"]);
    let created = demo.modern("tools/call", json!({"name": "sleep", "arguments": {"ms": 60_000}}));
    let id = created["result"]["taskId"].as_str().unwrap().to_owned();
    for _ in 0..2 {
        let acked = demo.modern("tasks/cancel", json!({"taskId": id}));
        assert_eq!(acked["result"]["resultType"], "complete", "{acked}");
    }
    assert_eq!(demo.until(&id, "cancelled")["statusMessage"], "cancelled by tasks/cancel");
    // A task that ended stays as it ended.
    let created = demo.modern("tools/call", json!({"name": "render", "arguments": {"frames": 0}}));
    let done_id = created["result"]["taskId"].as_str().unwrap().to_owned();
    demo.until(&done_id, "completed");
    demo.modern("tasks/cancel", json!({"taskId": done_id}));
    demo.until(&done_id, "completed");
    let listed = demo.modern("tools/call", json!({"name": "cancelled_tasks", "arguments": {}}));
    assert_eq!(listed["result"]["content"][0]["text"], json!([id, id, done_id]).to_string());
    for method in ["tasks/get", "tasks/update", "tasks/cancel"] {
        let unknown = demo.modern(method, json!({"taskId": "no-such-task", "inputResponses": {}}));
        assert_eq!(unknown["error"]["code"], -32602, "{method}: {unknown}");
        assert_eq!(unknown["error"]["data"]["taskId"], "no-such-task");
    }
}

#[test]
fn the_planted_bug_gives_an_ended_tasks_id_to_the_next_task() {
    let mut demo = Demo::spawn(&["--task-bug", "reused-id"]);
    let first = demo.modern("tools/call", json!({"name": "render", "arguments": {"frames": 0}}));
    assert_eq!(first["result"]["taskId"], "task-1");
    demo.until("task-1", "completed");
    let second = demo.modern("tools/call", json!({"name": "render", "arguments": {"frames": 20}}));
    assert_eq!(second["result"]["taskId"], "task-1", "{second}");
    let again = demo.modern("tasks/get", json!({"taskId": "task-1"}));
    assert_eq!(again["result"]["status"], "working", "the completed task is working again: {again}");
    // Two tasks running at once get two ids.
    let third = demo.modern("tools/call", json!({"name": "render", "arguments": {"frames": 20}}));
    assert_eq!(third["result"]["taskId"], "task-2", "{third}");
}
