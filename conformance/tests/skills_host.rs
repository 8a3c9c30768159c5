//! `conformance-client` as the host of the official runner's skills scenarios (SEP-2640), with
//! the positive control the runner lacks: against the demo server's honest skills it must load
//! `SKILL.md` and then read the files it names (`references/FORMS.md`, `scripts/extract.py`);
//! against a planted mistake it must stop at the file that does not verify, with exit status 1.
//! What it fetched is what the server logged serving (`demo-server: read skill file <uri>`).

mod demo;

use std::process::{Command, Output};
use std::time::Duration;

use demo::DemoHttp;

const SKILL_MD: &str = "skill://pdf-processing/SKILL.md";
const FORMS: &str = "skill://pdf-processing/references/FORMS.md";
const EXTRACT: &str = "skill://pdf-processing/scripts/extract.py";

/// Runs `conformance-client` as the runner does for `scenario`, against `server`.
fn host(scenario: &str, server: &DemoHttp) -> Output {
    Command::new(env!("CARGO_BIN_EXE_conformance-client"))
        .arg(&server.url)
        .env("MCP_CONFORMANCE_SCENARIO", scenario)
        .env_remove("MCP_CONFORMANCE_CONTEXT")
        .env_remove("MCP_CONFORMANCE_PROTOCOL_VERSION")
        .output()
        .expect("run conformance-client")
}

/// The skill files the server served, in order (its stderr is read by a thread: give the last
/// line a moment).
fn served(server: &DemoHttp) -> Vec<String> {
    std::thread::sleep(Duration::from_millis(100));
    server
        .stderr()
        .lines()
        .filter_map(|line| line.strip_prefix("demo-server: read skill file ").map(str::to_owned))
        .collect()
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

#[test]
fn an_honest_skill_is_loaded_and_its_files_read() {
    let server = DemoHttp::start_with(&["--skills"]);
    let output = host("sep-2640-client-verify-digest", &server);
    assert!(output.status.success(), "{}", stderr(&output));
    assert_eq!(served(&server), [SKILL_MD, FORMS, EXTRACT]);
    assert!(stderr(&output).contains("read references/FORMS.md ("), "{}", stderr(&output));
}

#[test]
fn no_prefetch_lists_and_reads_nothing() {
    let server = DemoHttp::start_with(&["--skills"]);
    let output = host("sep-2640-client-no-prefetch", &server);
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(stderr(&output).contains("listed 2 skill(s)"), "{}", stderr(&output));
    assert!(served(&server).is_empty(), "{:?}", served(&server));
}

#[test]
fn a_skill_md_that_does_not_verify_stops_the_host_before_its_files() {
    let server = DemoHttp::start_with(&["--skill-bug", "frontmatter"]);
    let output = host("sep-2640-client-verify-frontmatter", &server);
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    assert!(stderr(&output).contains("frontmatter field \"description\""), "{}", stderr(&output));
    assert_eq!(served(&server), [SKILL_MD]);
}

#[test]
fn a_supporting_file_that_does_not_verify_stops_the_host_there() {
    let server = DemoHttp::start_with(&["--skill-bug", "digest"]);
    let output = host("sep-2640-client-verify-digest", &server);
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    assert!(stderr(&output).contains(&format!("{FORMS} has digest")), "{}", stderr(&output));
    assert_eq!(served(&server), [SKILL_MD, FORMS]);
}
