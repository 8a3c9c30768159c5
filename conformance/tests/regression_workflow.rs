//! The regression workflow of `docs/conformance.md` ("Regression testing across versions of
//! your server"), end to end with the `mcp-conformance` binary: a trace recorded against the
//! demo server (the released version) is replayed against `planted_bug_server next-version`
//! (its next release). The intended changes fail the replay without rules and pass with
//! `examples/regression.rules`; a real regression still fails with the rules.

mod demo;

use std::path::PathBuf;
use std::process::{Command, Output};

use demo::{Scratch, example};

/// Runs `mcp-conformance ARGS…` to completion.
fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_mcp-conformance")).args(args).output().expect("run mcp-conformance")
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// `examples/regression.rules`.
fn rules() -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("examples/regression.rules").to_string_lossy().into_owned()
}

fn path(name: &str) -> String {
    example(name).to_string_lossy().into_owned()
}

/// Records the session of the docs' example against the demo server (the released version).
/// `era` is empty (dual-era: 2026-07-28 with the demo) or `--legacy`.
fn record(scratch: &Scratch, era: &[&str]) -> String {
    let trace = scratch.path("session.jsonl");
    let demo = path("demo_peer");
    let mut args = vec!["record", "-o", &trace];
    args.extend_from_slice(era);
    args.extend([
        "--call",
        r#"echo={"message":"hello"}"#,
        "--call",
        r#"echo={"message":""}"#,
        "--call",
        "tiny_image",
        "--call",
        r#"add={"a":2,"b":3}"#,
        "--unknown-method",
        "no/such/method",
        "--",
        &demo,
    ]);
    let output = run(&args);
    assert!(output.status.success(), "record failed: {output:?}");
    trace
}

/// Replays `trace` against `planted_bug_server BUGS`, with `options` before the server.
fn replay(trace: &str, options: &[&str], bugs: &str) -> Output {
    let server = path("planted_bug_server");
    let mut args = vec!["replay", trace];
    args.extend_from_slice(options);
    args.extend(["--", &server, bugs]);
    run(&args)
}

#[test]
fn the_next_version_fails_without_rules_and_passes_with_them() {
    let scratch = Scratch::new("modern");
    let trace = record(&scratch, &[]);

    // The released version replays its own trace.
    let output = run(&["replay", &trace, "--", &path("demo_peer")]);
    assert!(output.status.success(), "{}", stdout(&output));

    // Without rules, each intended change is a difference.
    let output = replay(&trace, &[], "next-version");
    let report = stdout(&output);
    assert_eq!(output.status.code(), Some(1), "{report}");
    for difference in [
        r#"/result/_meta/io.modelcontextprotocol~1serverInfo/version: expected "0.1.0", found "0.2.0""#,
        r#"/result/tools/0/name: expected "echo", found "add""#,
        "/result/content/0/data: expected \"iVBOR",
    ] {
        assert!(report.contains(difference), "{difference} is not in:\n{report}");
    }

    // The rules allow exactly those changes.
    let rules = rules();
    let output = replay(&trace, &["--rules", &rules], "next-version");
    assert!(output.status.success(), "{}", stdout(&output));
    assert!(stdout(&output).starts_with("PASS"), "{}", stdout(&output));
}

#[test]
fn the_initialize_era_passes_with_the_same_rules() {
    let scratch = Scratch::new("legacy");
    let trace = record(&scratch, &["--legacy"]);

    let output = replay(&trace, &[], "next-version");
    let report = stdout(&output);
    assert_eq!(output.status.code(), Some(1), "{report}");
    assert!(report.contains(r#"/result/serverInfo/version: expected "0.1.0", found "0.2.0""#), "{report}");

    let rules = rules();
    let output = replay(&trace, &["--rules", &rules], "next-version");
    assert!(output.status.success(), "{}", stdout(&output));
}

#[test]
fn a_real_regression_fails_even_with_the_rules() {
    let scratch = Scratch::new("regression");
    let trace = record(&scratch, &[]);
    let rules = rules();

    // Another error code for an unknown method.
    let output = replay(&trace, &["--rules", &rules], "next-version,internal-error-for-unknown-method");
    let report = stdout(&output);
    assert_eq!(output.status.code(), Some(1), "{report}");
    assert!(report.contains("/error/code: expected -32601, found -32603"), "{report}");

    // A response with the wrong id: the request goes unanswered.
    let output = replay(&trace, &["--rules", &rules, "--timeout", "0.5"], "next-version,wrong-id");
    let report = stdout(&output);
    assert_eq!(output.status.code(), Some(1), "{report}");
    assert!(report.contains("which no request had"), "{report}");
}
