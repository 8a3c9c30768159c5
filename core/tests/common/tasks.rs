//! Helpers of the task tests (`tests/tasks.rs`, `tests/hostile_tasks.rs`): a connection ready
//! with the tasks extension (2026-07-28) or experimental tasks (2025-11-25), calls, and the
//! server's task answers.
#![allow(dead_code, clippy::unwrap_used)]

use std::time::Duration;

use mcp_sansio::schema::{CallTool, CallToolRequestParams, ClientCapabilities, TASKS_EXTENSION};
use mcp_sansio::{
    ClientConfig, Event, ProtocolVersion, RequestError, RequestId, RequestOptions, TaskMode, UsageError,
};
use serde_json::{Value, json};

use super::{Harness, config, result_line};

pub(crate) const MS: Duration = Duration::from_millis(1);

pub(crate) fn task_config() -> ClientConfig {
    let caps =
        ClientCapabilities::default().with_elicitation_form().with_extension(TASKS_EXTENSION, json!({}));
    config().with_versions(&[ProtocolVersion::V2026_07_28]).with_capabilities(caps)
}

/// A modern connection to a server offering tools and the tasks extension (and, with
/// `listen`, list changes, so that a listen stream is open).
pub(crate) fn ready(config: ClientConfig, extension: bool) -> Harness {
    let mut h = Harness::new(config);
    assert_eq!(h.sent().remove(0)["method"], "server/discover");
    let mut capabilities = json!({"tools": {}});
    if extension {
        capabilities["extensions"] = json!({TASKS_EXTENSION: {}});
    }
    h.server(&result_line(
        0,
        json!({"resultType": "complete", "supportedVersions": ["2026-07-28"], "capabilities": capabilities,
               "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "s", "version": "1"}}}),
    ));
    assert!(matches!(h.events()[..], [Event::Ready { .. }]));
    h
}

pub(crate) fn call(h: &mut Harness, options: RequestOptions) -> (RequestId, i64) {
    let id = h.conn.send::<CallTool>(h.now, &CallToolRequestParams::new("slow"), options).unwrap();
    let sent = h.sent();
    assert_eq!(sent.len(), 1, "{sent:?}");
    // The per-request capabilities carry the client's extensions (2026-07-28).
    let caps = &sent[0]["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"];
    let declared = h.conn.config().capabilities.has_extension(TASKS_EXTENSION);
    assert_eq!(caps["extensions"].get(TASKS_EXTENSION).is_some(), declared, "{caps}");
    (id, sent[0]["id"].as_i64().unwrap())
}

pub(crate) fn task(status: &str, extra: Value) -> Value {
    let mut task = json!({"taskId": "t-1", "status": status, "createdAt": "2026-11-27T10:00:00Z",
        "lastUpdatedAt": "2026-11-27T10:00:00Z", "ttlMs": 60000});
    task.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
    task
}

pub(crate) fn created(wire: i64, poll_ms: Option<u64>) -> String {
    let mut seed = task("working", json!({"resultType": "task"}));
    if let Some(ms) = poll_ms {
        seed["pollIntervalMs"] = json!(ms);
    }
    result_line(wire, seed)
}

pub(crate) fn got(wire: i64, task: Value) -> String {
    let mut task = task;
    task["resultType"] = json!("complete");
    result_line(wire, task)
}

/// Advances until the engine sends something, at most `limit`; returns what and when.
pub(crate) fn next_send(h: &mut Harness, step: Duration, limit: Duration) -> (Vec<Value>, Duration) {
    let start = h.elapsed();
    while h.elapsed() - start < limit {
        h.advance(step);
        let sent = h.sent();
        if !sent.is_empty() {
            return (sent, h.elapsed() - start);
        }
    }
    (Vec::new(), limit)
}

pub(crate) fn only_response(h: &mut Harness) -> (RequestId, Result<String, RequestError>) {
    let events = h.events();
    match &events[..] {
        [Event::Response { id, result }] => {
            (id.clone(), result.as_ref().map(|r| r.get().to_owned()).map_err(Clone::clone))
        }
        _ => panic!("{events:?}"),
    }
}

pub(crate) fn legacy_ready(tasks_capability: bool) -> Harness {
    let mut h = Harness::new(task_config().with_versions(&[ProtocolVersion::V2025_11_25]));
    // `initialize` declares the client's extensions too.
    let init = h.sent();
    assert_eq!(init[0]["params"]["capabilities"]["extensions"], json!({TASKS_EXTENSION: {}}));
    let mut capabilities = json!({"tools": {}});
    if tasks_capability {
        capabilities["tasks"] = json!({"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}});
    }
    h.ready_with(&super::init_result("2025-11-25", capabilities));
    h
}

pub(crate) fn augmented_call(h: &mut Harness, mode: TaskMode) -> Result<(RequestId, i64), UsageError> {
    let params = json!({"name": "slow", "arguments": {}, "task": {"ttl": 60000}});
    let params = serde_json::to_vec(&params).unwrap();
    let id =
        h.conn.send_request(h.now, "tools/call", Some(&params), RequestOptions::default().task_mode(mode))?;
    let sent = h.sent();
    assert_eq!(sent[0]["params"]["task"]["ttl"], 60000);
    Ok((id, sent[0]["id"].as_i64().unwrap()))
}

pub(crate) fn legacy_task(status: &str) -> Value {
    json!({"taskId": "old-1", "status": status, "createdAt": "2025-11-25T10:30:00Z",
        "lastUpdatedAt": "2025-11-25T10:30:00Z", "ttl": 60000, "pollInterval": 300})
}
