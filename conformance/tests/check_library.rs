//! The `check` library API as a server author would use it in `cargo test`: the whole check as
//! one test (the report's table in the failure message), and `prop_check` inside an ordinary
//! `proptest!`. The demo server (a real child process per case) keeps every property.

mod demo;

use std::sync::LazyLock;

use mcp_conformance::check::{self, Catalog, CheckOptions};
use mcp_conformance::peer::Target;
use proptest::prelude::*;

static TARGET: LazyLock<Target> =
    LazyLock::new(|| Target::stdio([demo::demo_path().to_string_lossy().into_owned()]));

static OPTIONS: LazyLock<CheckOptions> = LazyLock::new(|| {
    let mut options = CheckOptions::default();
    // Tools that end the server or may sleep for as long as asked, and `bad_stats`, which breaks
    // its own outputSchema on purpose (for the client's validation tests).
    options
        .skip_tools
        .extend(["crash", "sleep", "long_running", "stderr_burst", "bad_stats"].map(String::from));
    options
});

static CATALOG: LazyLock<Catalog> =
    LazyLock::new(|| smol::block_on(check::explore(&TARGET, &OPTIONS)).expect("the demo server starts"));

#[test]
fn explore_learns_what_the_server_offers() {
    assert_eq!(CATALOG.version, "2025-11-25");
    assert_eq!(CATALOG.server_info["name"], "mcp-demo-server");
    let tools: Vec<&str> = CATALOG.tools.iter().filter_map(|t| t["name"].as_str()).collect();
    assert!(tools.contains(&"echo") && tools.contains(&"get_stats"), "{tools:?}");
    assert!(!tools.contains(&"crash"), "skipped tools are left out: {tools:?}");
    assert_eq!(CATALOG.prompts.len(), 2);
    assert_eq!(CATALOG.resources, ["demo://readme", "demo://config.json", "demo://logo.png"]);
}

/// The recipe of docs/conformance.md: one test that runs the whole check and fails with the
/// report.
#[test]
fn the_whole_check_as_one_test() {
    let options = CheckOptions {
        cases: 16,
        seed: Some(7),
        request_timeout: std::time::Duration::from_secs(2),
        ..OPTIONS.clone()
    };
    let report = check::check(&TARGET, &options).expect("the server can be checked");
    assert!(report.passed(), "{report}");
    assert_eq!(report.cases, 16);
    let schema = report.property(check::Property::Schema).expect("a row per property");
    assert_eq!(schema.verdict, check::Verdict::Held, "{report}");
    assert!(schema.checks > 16, "{report}");
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 16, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn the_demo_server_keeps_the_protocol(actions in check::actions(&CATALOG, 5)) {
        check::prop_check(&TARGET, &CATALOG, &actions, &OPTIONS)?;
    }
}
