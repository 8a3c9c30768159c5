//! What the engine holds for what a server asks of the application, per item, with the budget
//! lifted so that the items accumulate: an open input request of a task (2026-07-28, tasks
//! extension), an open input request of a multi round-trip request, and a server's
//! `tasks/result` waiting for a task the client hosts (2025-11-25). The events handed out are
//! polled and dropped, as an application that never answers would.
//!
//! Usage: `task-memory [--count N]` (default 50 000). RSS comes from `/proc/self/status`; each
//! figure is measured in a fresh process (this binary again, with `--only KIND`), on memory the
//! allocator has not held before: a warm-up round would free memory that the measured round
//! then reuses, hiding it.

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

/// Input requests arrive in rounds of this many, so that what parsing one answer costs for a
/// moment (its JSON as values) is small beside what is held.
const ROUND: usize = 100;

/// A ready 2026-07-28 connection holding `count` open input requests: of one task that asks
/// [`ROUND`] new ones at each `tasks/get` (`task: true`), or of calls that each ask [`ROUND`] in
/// a multi round-trip round (`task: false`).
fn inputs(count: usize, task: bool) -> ClientConnection {
    let mut now = Instant::now();
    let mut conn = ClientConnection::new(config(ProtocolVersion::V2026_07_28, count), now);
    drain(&mut conn);
    let discover = json!({"jsonrpc": "2.0", "id": 0, "result": {"resultType": "complete",
        "supportedVersions": ["2026-07-28"], "capabilities": {"tools": {}, "extensions": {TASKS_EXTENSION: {}}}}});
    conn.feed(now, &line(discover));
    drain(&mut conn);
    let params = br#"{"name":"slow","arguments":{}}"#;
    let rounds = count.div_ceil(ROUND);
    let batch = |round: usize| {
        let mut map = elicitations(ROUND);
        map = map.into_iter().map(|(k, v)| (format!("{k}-{round}"), v)).collect();
        map
    };
    if task {
        conn.send_request(now, "tools/call", Some(params), RequestOptions::default()).expect("sent");
        let wire = drain(&mut conn)[0]["id"].clone();
        let created = json!({"jsonrpc": "2.0", "id": wire, "result": {"resultType": "task", "taskId": "t",
            "status": "working", "createdAt": "x", "lastUpdatedAt": "x", "pollIntervalMs": 100}});
        conn.feed(now, &line(created));
        drain(&mut conn);
        for round in 0..rounds {
            now += std::time::Duration::from_millis(200);
            conn.handle_timeout(now);
            let poll = drain(&mut conn);
            let asked = json!({"jsonrpc": "2.0", "id": poll[0]["id"], "result": {"resultType": "complete",
                "taskId": "t", "status": "input_required", "inputRequests": batch(round),
                "createdAt": "x", "lastUpdatedAt": format!("{round}")}});
            conn.feed(now, &line(asked));
            drain(&mut conn);
        }
    } else {
        for round in 0..rounds {
            conn.send_request(now, "tools/call", Some(params), RequestOptions::default()).expect("sent");
            let wire = drain(&mut conn)[0]["id"].clone();
            let asked = json!({"jsonrpc": "2.0", "id": wire, "result": {"resultType": "input_required",
                "inputRequests": batch(round)}});
            conn.feed(now, &line(asked));
            drain(&mut conn);
        }
    }
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

/// RSS growth per item of holding `count` of what `make` builds, beyond a connection holding
/// one.
fn per_item(count: usize, make: impl Fn(usize) -> ClientConnection) -> f64 {
    let base = make(1);
    let with_one = rss();
    let held = make(count);
    let after = rss();
    drop((base, held));
    after.saturating_sub(with_one) as f64 / count as f64
}

const KINDS: [(&str, &str); 3] = [
    ("task", "open task input request"),
    ("round", "open multi round-trip input request"),
    ("waiter", "hosted-task tasks/result waiter"),
];

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let value = |flag: &str| args.iter().position(|a| a == flag).and_then(|i| args.get(i + 1));
    let count: usize = value("--count").map_or(50_000, |n| n.parse().expect("a count"));
    if let Some(kind) = value("--only") {
        let bytes = match kind.as_str() {
            "task" => per_item(count, |n| inputs(n, true)),
            "round" => per_item(count, |n| inputs(n, false)),
            _ => per_item(count, waiters),
        };
        println!("{bytes:.0}");
        return;
    }
    println!(
        "# what the engine holds per item a server asks of the application ({count} held, budget lifted)"
    );
    let exe = std::env::current_exe().expect("own path");
    for (kind, what) in KINDS {
        let out = std::process::Command::new(&exe)
            .args(["--only", kind, "--count", &count.to_string()])
            .output()
            .expect("the measurement runs");
        println!("{what:<40} {:>6} B", String::from_utf8_lossy(&out.stdout).trim());
    }
}
