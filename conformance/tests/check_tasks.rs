//! `mcp-conformance check` of servers that offer the tasks extension (SEP-2663, 2026-07-28),
//! against the demo server as a real child process: with `--tasks` every task property is
//! tested and holds, and with `--task-bug reused-id` (a task created after another one ended
//! takes its id) `task-status` breaks, shrunk to the two calls it takes. A server without the
//! extension has no task rows.

mod demo;

use std::io::{BufRead, BufReader};
use std::process::{Command, Output, Stdio};

use demo::example;
use serde_json::Value;

fn demo() -> String {
    example("demo_peer").to_string_lossy().into_owned()
}

/// Runs `mcp-conformance check ARGS… -- demo SERVER_ARGS…` to completion.
fn check(args: &[&str], server_args: &[&str]) -> Output {
    let demo = demo();
    let mut all = vec!["check"];
    all.extend_from_slice(args);
    // The demo's tools that end it on purpose, flood stderr, or break their outputSchema on
    // purpose (as in check_cli.rs).
    all.extend(["--skip-tool", "bad_stats", "--skip-tool", "crash", "--skip-tool", "stderr_burst", "--"]);
    all.push(&demo);
    all.extend_from_slice(server_args);
    Command::new(env!("CARGO_BIN_EXE_mcp-conformance")).args(&all).output().expect("run mcp-conformance")
}

fn report(output: &Output) -> String {
    format!("{}\n{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr))
}

const TASK_PROPERTIES: [&str; 4] = ["task-status", "task-unknown", "task-cancel", "task-result"];

fn property<'j>(json: &'j Value, name: &str) -> &'j Value {
    let properties = json["properties"].as_array().expect("properties");
    properties.iter().find(|p| p["property"] == name).unwrap_or_else(|| panic!("no {name}: {json:#}"))
}

#[test]
fn the_demo_server_with_tasks_keeps_every_task_property() {
    let options = [
        "--protocol-version",
        "2026-07-28",
        "--cases",
        "24",
        "--seed",
        "11",
        "--timeout",
        "2",
        "--format",
        "json",
        "--quiet",
    ];
    let output = check(&options, &["--tasks"]);
    let text = report(&output);
    assert!(output.status.success(), "{text}");
    let json: Value = serde_json::from_slice(&output.stdout).expect("the report is JSON");
    assert_eq!(json["passed"], true, "{json:#}");
    assert_eq!(json["properties"].as_array().map(Vec::len), Some(13), "{json:#}");
    for name in TASK_PROPERTIES {
        let row = property(&json, name);
        assert_eq!(row["verdict"], "pass", "{name}: {json:#}");
        assert!(row["checks"].as_u64() > Some(0), "{name} was tested: {json:#}");
    }
    // The calls that never end (an unbounded sleep) became tasks, cancelled as slow calls are.
    let slow = json["slow"].as_array().expect("slow");
    assert!(slow.iter().any(|s| s["request"].as_str().is_some_and(|r| r.ends_with("(a task)"))), "{json:#}");

    // The same server in the initialize era, and the 2026-07-28 one without --tasks, do not
    // offer the extension: no task rows.
    for (version, server) in [("2025-11-25", &["--tasks"][..]), ("2026-07-28", &[])] {
        let options = [
            "--protocol-version",
            version,
            "--cases",
            "4",
            "--seed",
            "1",
            "--timeout",
            "2",
            "--format",
            "json",
            "--quiet",
        ];
        let output = check(&options, server);
        assert!(output.status.success(), "{version}: {}", report(&output));
        let json: Value = serde_json::from_slice(&output.stdout).expect("the report is JSON");
        let names: Vec<&str> =
            json["properties"].as_array().unwrap().iter().filter_map(|p| p["property"].as_str()).collect();
        assert_eq!(names.len(), 9, "{version}: {names:?}");
        assert!(!names.iter().any(|name| name.starts_with("task-")), "{version}: {names:?}");
    }
}

/// Over Streamable HTTP too: the check's `tasks/*` requests carry `Mcp-Name: <taskId>`, which
/// the demo server checks.
#[test]
fn the_demo_server_with_tasks_passes_over_http() {
    let mut server = Command::new(example("demo_peer"))
        .args(["--http", "127.0.0.1:0", "--tasks"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("start the demo server");
    let mut url = String::new();
    BufReader::new(server.stdout.take().expect("piped stdout")).read_line(&mut url).expect("its URL");
    let options = ["--protocol-version", "2026-07-28", "--cases", "8", "--seed", "3", "--timeout", "2"];
    let mut args = vec!["check", "--format", "json", "--quiet", "--url", url.trim()];
    args.extend(options);
    args.extend(["--skip-tool", "bad_stats", "--skip-tool", "crash", "--skip-tool", "stderr_burst"]);
    let output = Command::new(env!("CARGO_BIN_EXE_mcp-conformance")).args(&args).output();
    let _ = server.kill();
    let _ = server.wait();
    let output = output.expect("run mcp-conformance");
    assert!(output.status.success(), "{}", report(&output));
    let json: Value = serde_json::from_slice(&output.stdout).expect("the report is JSON");
    for name in ["task-status", "task-result"] {
        let row = property(&json, name);
        assert_eq!(row["verdict"], "pass", "{name}: {json:#}");
        assert!(row["checks"].as_u64() > Some(0), "{name} was tested: {json:#}");
    }
}

/// The acceptance item: `check` finds the planted task bug and shrinks it to the two calls it
/// takes (the first task ends, the second gets its id).
#[test]
fn a_reused_task_id_is_found_and_shrunk_to_two_calls() {
    let options = [
        "--protocol-version",
        "2026-07-28",
        "--tool",
        "render",
        "--tool",
        "sleep",
        "--cases",
        "32",
        "--seed",
        "5",
        "--timeout",
        "2",
    ];
    let output = check(&options, &["--task-bug", "reused-id"]);
    let text = report(&output);
    assert_eq!(output.status.code(), Some(1), "{text}");
    let row = |name: &str| {
        let line = text.lines().find(|line| line.split_whitespace().next() == Some(name));
        line.unwrap_or_else(|| panic!("no row {name}:\n{text}")).split_whitespace().nth(1).unwrap_or_default()
    };
    assert_eq!(row("task-status"), "FAIL", "{text}");
    for name in ["task-unknown", "task-cancel", "task-result", "one-response", "survives"] {
        assert_eq!(row(name), "pass", "{name}:\n{text}");
    }
    // Shrunk to two steps, both calls that make a task (with their smallest arguments), the
    // second answered with the first one's id.
    let header = "task-status: minimal failing sequence (2 steps; found in case ";
    let at = text.find(header).unwrap_or_else(|| panic!("shrunk to two steps:\n{text}"));
    let steps: Vec<&str> = text[at..].lines().skip(1).take(2).collect();
    for (n, step) in steps.iter().enumerate() {
        let call = step.trim_start().strip_prefix(&format!("{}. tools/call ", n + 1));
        assert!(
            call.is_some_and(|c| c.starts_with("render {") || c.starts_with("sleep {")),
            "{step}:\n{text}"
        );
    }
    assert!(
        text.contains("the id of an earlier task of the session")
            && text.contains("task ids must be unique, and a ")
            && text.contains(" task never becomes working"),
        "{text}"
    );
    assert!(text.contains("FAIL: 1 of 13 properties violated: task-status"), "{text}");
}
