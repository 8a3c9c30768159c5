//! What the engine holds for what a server asks of the application, per item, with the budget
//! lifted so that the items accumulate: an open input request of a task (2026-07-28, tasks
//! extension), an open input request of a multi round-trip request, and a server's
//! `tasks/result` waiting for a task the client hosts (2025-11-25). The events handed out are
//! polled and dropped, as an application that never answers would.
//!
//! Usage: `task-memory [--count N]` (default 10 000). RSS comes from `/proc/self/status`; each
//! figure is measured in a fresh connection, after one warm-up round of the same size.

use std::time::Instant;

use mcp_benches::process_stats::rss;
use mcp_sansio::schema::{ClientCapabilities, Implementation, TASKS_EXTENSION};
use mcp_sansio::{ClientConfig, ClientConnection, ProtocolVersion, RequestOptions, TaskPolicy};
use serde_json::json;

fn elicitations(count: usize) -> serde_json::Map<String, serde_json::Value> {
    (0..count)
        .map(|n| {
            let ask = json!({"method": "elicitation/create", "params": {"mode": "form", "message": "?",
                "requestedSchema": {"type": "object", "properties": {}}}});
            (format!("key-{n}"), ask)
        })
        .collect()
}

fn line(value: serde_json::Value) -> Vec<u8> {
    let mut bytes = serde_json::to_vec(&value).expect("JSON");
    bytes.push(b'\n');
    bytes
}

fn drain(conn: &mut ClientConnection) -> Vec<serde_json::Value> {
    while conn.poll_event().is_some() {}
    let mut sent = Vec::new();
    while let Some(t) = conn.poll_transmit() {
        sent.push(serde_json::from_slice(t.message()).expect("JSON"));
    }
    sent
}

fn config(version: ProtocolVersion, count: usize) -> ClientConfig {
    let mut caps =
        ClientCapabilities::default().with_elicitation_form().with_extension(TASKS_EXTENSION, json!({}));
    caps.tasks = json!({"requests": {"elicitation": {"create": {}}}}).as_object().cloned();
    let mut policy = TaskPolicy::default();
    policy.max_inputs = u32::MAX;
    ClientConfig::new(Implementation::new("task-memory", "0"))
        .with_versions(&[version])
        .with_capabilities(caps)
        .with_max_open_server_requests(count * 2 + 16)
        .with_tasks(policy)
}

/// A ready 2026-07-28 connection, a call that became task `t`, and the task asking `count`
/// questions in one `tasks/get` answer (`task: true`), or the call asking them as multi
/// round-trip input (`task: false`). Returns the connection, holding them.
fn inputs(count: usize, task: bool) -> ClientConnection {
    let now = Instant::now();
    let mut conn = ClientConnection::new(config(ProtocolVersion::V2026_07_28, count), now);
    drain(&mut conn);
    let discover = json!({"jsonrpc": "2.0", "id": 0, "result": {"resultType": "complete",
        "supportedVersions": ["2026-07-28"], "capabilities": {"tools": {}, "extensions": {TASKS_EXTENSION: {}}}}});
    conn.feed(now, &line(discover));
    drain(&mut conn);
    let params = br#"{"name":"slow","arguments":{}}"#;
    conn.send_request(now, "tools/call", Some(params), RequestOptions::default()).expect("sent");
    let wire = drain(&mut conn)[0]["id"].clone();
    let requests = elicitations(count);
    if task {
        let created = json!({"jsonrpc": "2.0", "id": wire, "result": {"resultType": "task", "taskId": "t",
            "status": "input_required", "inputRequests": requests, "createdAt": "x", "lastUpdatedAt": "x"}});
        conn.feed(now, &line(created));
    } else {
        let asked = json!({"jsonrpc": "2.0", "id": wire, "result": {"resultType": "input_required",
            "inputRequests": requests}});
        conn.feed(now, &line(asked));
    }
    drain(&mut conn);
    conn
}

/// A ready 2025-11-25 connection hosting one task that never ends, and `count` `tasks/result`
/// requests of the server's waiting for it.
fn waiters(count: usize) -> ClientConnection {
    let now = Instant::now();
    let mut conn = ClientConnection::new(config(ProtocolVersion::V2025_11_25, count), now);
    conn.set_wall_clock(now, 1_795_777_200);
    drain(&mut conn);
    let init = json!({"jsonrpc": "2.0", "id": 0, "result": {"protocolVersion": "2025-11-25",
        "capabilities": {"tools": {}}, "serverInfo": {"name": "s", "version": "1"}}});
    conn.feed(now, &line(init));
    drain(&mut conn);
    let host = json!({"jsonrpc": "2.0", "id": "e", "method": "elicitation/create", "params": {"mode": "form",
        "message": "?", "requestedSchema": {"type": "object", "properties": {}}, "task": {"ttl": 1000}}});
    conn.feed(now, &line(host));
    drain(&mut conn);
    let mut bytes = Vec::new();
    for n in 0..count {
        bytes.extend(line(
            json!({"jsonrpc": "2.0", "id": n, "method": "tasks/result", "params": {"taskId": "client-task-0"}}),
        ));
    }
    conn.feed(now, &bytes);
    assert!(drain(&mut conn).is_empty(), "every waiter waits");
    conn
}

/// RSS growth per item of holding `count` of what `make` builds (after one warm-up round).
fn per_item(count: usize, make: impl Fn(usize) -> ClientConnection) -> f64 {
    drop(make(count));
    let before = rss();
    let held = make(count);
    let after = rss();
    drop(held);
    (after.saturating_sub(before)) as f64 / count as f64
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let count = match args.as_slice() {
        [flag, n] if flag == "--count" => n.parse().expect("a count"),
        _ => 10_000,
    };
    println!(
        "# what the engine holds per item a server asks of the application ({count} held, budget lifted)"
    );
    println!("open task input request:           {:>6.0} B", per_item(count, |n| inputs(n, true)));
    println!("open multi round-trip input:       {:>6.0} B", per_item(count, |n| inputs(n, false)));
    println!("hosted-task tasks/result waiter:   {:>6.0} B", per_item(count, waiters));
}
