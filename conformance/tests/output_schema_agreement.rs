//! The client and `mcp-conformance` judge a tool's output alike. The planted-bug server's
//! `version` tool (`pattern-tool`) declares an `outputSchema` whose only constraint a result can
//! miss is a `pattern`; with `pattern-mismatch` it answers a string that does not match it. The
//! client with `validate_output` refuses that result and takes the right one; `check` and
//! `replay` say the same, against the same real server processes.

mod demo;

use std::process::{Command, Output};

use demo::{Scratch, example};
use mcp_smol::mcp_sansio::schema::Implementation;
use mcp_smol::{ClientApi, ClientBuilder, Error, ServerCommand};
use serde_json::{Value, json};

/// The planted-bug server with `variant` (`pattern-tool` or `pattern-mismatch`).
fn server(variant: &str) -> Vec<String> {
    vec![example("planted_bug_server").to_string_lossy().into_owned(), variant.to_owned()]
}

/// Runs `mcp-conformance ARGS… -- server…` to completion.
fn run(args: &[&str], server: &[String]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_mcp-conformance"))
        .args(args)
        .arg("--")
        .args(server)
        .output()
        .expect("run mcp-conformance")
}

/// What the client says of one call of `version`, with `validate_output` on: the structured
/// result, or the output-schema error's message.
fn client_verdict(variant: &str) -> Result<Value, String> {
    let server = server(variant);
    smol::block_on(async {
        let command = ServerCommand::new(&server[0]).arg(&server[1]);
        let client = ClientBuilder::new(Implementation::new("output-schema-agreement", "1"))
            .validate_output(true)
            .spawn_stdio(&command)
            .await
            .expect("the planted-bug server starts");
        let verdict = match client.call_tool("version", json!({})).await {
            Ok(result) => Ok(result.structured_content.expect("structured content")),
            Err(Error::OutputSchema(error)) => Err(error.to_string()),
            Err(other) => panic!("{variant}: not an output-schema verdict: {other:?}"),
        };
        client.close().await;
        verdict
    })
}

/// What `check` says of the `version` tool: whether it passed, and the `output-schema` row of
/// its JSON report.
fn check_verdict(variant: &str, traces: &str) -> (bool, Value) {
    let options = [
        "check",
        "--tool",
        "version",
        "--cases",
        "12",
        "--seed",
        "3",
        "--timeout",
        "2",
        "--format",
        "json",
        "--quiet",
        "--failure-traces",
        traces,
    ];
    let output = run(&options, &server(variant));
    let report: Value = serde_json::from_slice(&output.stdout).unwrap_or_else(|e| {
        panic!("{variant}: the report is JSON ({e}):\n{}", String::from_utf8_lossy(&output.stdout))
    });
    assert_eq!(output.status.success(), report["passed"] == true, "{variant}: {report:#}");
    let row = report["properties"]
        .as_array()
        .and_then(|rows| rows.iter().find(|row| row["property"] == "output-schema"))
        .unwrap_or_else(|| panic!("{variant}: no output-schema row: {report:#}"))
        .clone();
    (output.status.success(), row)
}

#[test]
fn a_result_that_matches_the_pattern_passes_the_client_and_check() {
    assert_eq!(client_verdict("pattern-tool"), Ok(json!({"version": "0.1.0"})));

    let scratch = Scratch::new("pattern-tool");
    let (passed, row) = check_verdict("pattern-tool", &scratch.path("failures"));
    assert!(passed, "{row:#}");
    assert_eq!(row["verdict"], "pass", "{row:#}");
    assert!(row["checks"].as_u64().unwrap() > 0, "the version tool was called: {row:#}");
}

#[test]
fn a_result_that_breaks_only_the_pattern_fails_the_client_and_check() {
    let client = client_verdict("pattern-mismatch").expect_err("the client refuses the result");
    assert!(client.contains(r#"at /version: "v0.1" does not match"#), "{client}");

    let scratch = Scratch::new("pattern-mismatch");
    let traces = scratch.path("failures");
    let (passed, row) = check_verdict("pattern-mismatch", &traces);
    assert!(!passed, "{row:#}");
    assert_eq!(row["verdict"], "FAIL", "{row:#}");
    let message = row["violation"]["message"].as_str().expect("a violation message");
    // The client's own words, after the call that broke it.
    assert!(message.starts_with("tools/call version: "), "{message}");
    assert!(message.ends_with(&client), "check: {message}\nclient: {client}");

    // The minimal sequence `check` wrote replays as a regression test: it fails against the
    // server with the bug, and passes against the one without.
    let trace = format!("{traces}/output-schema.jsonl");
    let output = run(&["replay", &trace, "--timeout", "2"], &server("pattern-mismatch"));
    let report = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(1), "{report}");
    assert!(report.contains(&format!("FAIL the result of tool version (request 3): {client}")), "{report}");
    let output = run(&["replay", &trace, "--timeout", "2"], &server("pattern-tool"));
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stdout));
}
