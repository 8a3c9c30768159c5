//! End-to-end tests of the `mcp-conformance` command line against real child processes: the
//! demo server (stdio and HTTP). Record, replay (passing, and
//! failing with a diff after an edit), the `--proxy` mode driven by a hand-written client, and
//! `check` over HTTP (the rest of `check` is in check_cli.rs).

mod demo;

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use demo::{DemoHttp, Scratch, example};
use mcp_conformance::trace::{Direction, Trace, Transport};
use serde_json::Value;

fn demo() -> String {
    example("demo_peer").to_string_lossy().into_owned()
}

/// Runs `mcp-conformance ARGS…` to completion.
fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_mcp-conformance")).args(args).output().expect("run mcp-conformance")
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// Replaces the first `from` in the trace file with `to`, into a new file.
fn edit(trace: &str, from: &str, to: &str, out: &str) {
    let text = std::fs::read_to_string(trace).expect("read trace");
    assert!(text.contains(from), "{from} is not in {trace}");
    std::fs::write(out, text.replacen(from, to, 1)).expect("write edited trace");
}

/// The demo server's tools that end it on purpose or flood stderr, and `bad_stats`, which breaks
/// its own outputSchema on purpose: never called by `check`.
const SKIP: &[&str] = &["--skip-tool", "bad_stats", "--skip-tool", "crash", "--skip-tool", "stderr_burst"];

/// `mcp-conformance check` with `args`, then [`SKIP`], then `server`.
fn check(args: &[&str], server: &[&str]) -> Output {
    let mut all = vec!["check"];
    all.extend_from_slice(args);
    all.extend_from_slice(SKIP);
    all.extend_from_slice(server);
    run(&all)
}

const STEPS: &[&str] = &[
    "--call",
    r#"echo={"message":"hello"}"#,
    "--call",
    r#"long_running={"steps":2,"step_ms":5}"#,
    "--call",
    r#"sample={"prompt":"hi"}"#,
    "--call",
    "fail",
    "--unknown-method",
    "mcp-conformance/none",
];

#[test]
fn record_then_replay_over_stdio_and_an_edit_fails_with_a_diff() {
    let scratch = Scratch::new("stdio");
    let trace_path = scratch.path("demo.jsonl");
    let demo = demo();
    let mut args = vec!["record", "-o", &trace_path, "--legacy", "--ping"];
    args.extend_from_slice(STEPS);
    args.extend(["--ping", "--", &demo]);
    let output = run(&args);
    assert!(output.status.success(), "record failed: {output:?}");

    let trace = Trace::read(&trace_path).expect("a readable trace");
    assert_eq!(trace.header.transport, Transport::Stdio);
    assert_eq!(trace.header.protocol_version.as_deref(), Some("2025-11-25"));
    assert_eq!(trace.header.server.name.as_deref(), Some("mcp-demo-server"));
    let methods: Vec<String> = trace
        .sent_by(Direction::Server)
        .filter_map(|e| e.value()?.get("method")?.as_str().map(str::to_owned))
        .collect();
    assert!(methods.iter().any(|m| m == "notifications/progress"), "{methods:?}");
    assert!(methods.iter().any(|m| m == "sampling/createMessage"), "{methods:?}");
    // The steps ran in the order given, whatever their kinds.
    let client_steps: Vec<String> = trace
        .sent_by(Direction::Client)
        .filter_map(|e| {
            let message = e.value()?;
            match message.get("method")?.as_str()? {
                "tools/call" => Some(format!("call {}", message.pointer("/params/name")?.as_str()?)),
                method @ ("mcp-conformance/none" | "ping") => Some(method.to_owned()),
                _ => None,
            }
        })
        .collect();
    assert_eq!(
        client_steps,
        [
            "ping",
            "call echo",
            "call long_running",
            "call sample",
            "call fail",
            "mcp-conformance/none",
            "ping"
        ],
        "the steps in their order"
    );
    let unknown = trace
        .sent_by(Direction::Server)
        .filter_map(|e| e.value())
        .find(|m| m.pointer("/error/code").and_then(Value::as_i64) == Some(-32601));
    assert!(unknown.is_some(), "the unknown method's error is recorded");

    // The recorded command is the default server.
    let output = run(&["replay", &trace_path]);
    assert!(output.status.success(), "replay failed:\n{}", stdout(&output));
    assert!(stdout(&output).starts_with("PASS"), "{}", stdout(&output));

    let edited = scratch.path("edited.jsonl");
    edit(&trace_path, r#""text":"hello""#, r#""text":"goodbye""#, &edited);
    let output = run(&["replay", &edited, "--", &demo]);
    assert_eq!(output.status.code(), Some(1), "{}", stdout(&output));
    let report = stdout(&output);
    assert!(report.contains(r#"/result/content/0/text: expected "goodbye", found "hello""#), "{report}");

    // A rules file that says the text may differ makes it pass again.
    let rules = scratch.path("echo.rules");
    std::fs::write(&rules, "# any echo text\ntype /result/content/*/text in tools/call\n").unwrap();
    let output = run(&["replay", &edited, "--rules", &rules, "--", &demo]);
    assert!(output.status.success(), "{}", stdout(&output));
}

#[test]
fn record_then_replay_over_http() {
    let scratch = Scratch::new("http");
    let server = DemoHttp::start();
    let trace_path = scratch.path("demo-http.jsonl");
    for (name, era) in [("legacy", Some("--legacy")), ("modern", None)] {
        let mut args = vec!["record", "-o", &trace_path];
        args.extend(era);
        args.extend_from_slice(STEPS);
        args.extend(["--url", &server.url]);
        let output = run(&args);
        assert!(output.status.success(), "{name}: record failed: {output:?}");
        let trace = Trace::read(&trace_path).expect("a readable trace");
        assert_eq!(trace.header.transport, Transport::Http);
        let expected = if era.is_some() { "2025-11-25" } else { "2026-07-28" };
        assert_eq!(trace.header.protocol_version.as_deref(), Some(expected), "{name}");
        assert!(trace.entries.iter().all(|e| e.http.is_some()), "{name}: every entry names its exchange");
        let text = std::fs::read_to_string(&trace_path).unwrap();
        assert!(!text.to_ascii_lowercase().contains("mcp-session-id"), "{name}: no session ids in traces");

        let output = run(&["replay", &trace_path, "--url", &server.url]);
        assert!(output.status.success(), "{name}: replay failed:\n{}", stdout(&output));
    }
    for version in ["2025-11-25", "2026-07-28"] {
        let options = ["--cases", "16", "--seed", "5", "--timeout", "2", "--protocol-version", version];
        let output = check(&options, &["--url", &server.url]);
        let report = stdout(&output);
        assert!(output.status.success(), "check over HTTP at {version}:\n{report}");
        assert!(report.contains(&format!("server mcp-demo-server 0.1.0 ({version})")), "{report}");
        assert!(report.contains("16 cases"), "{report}");
    }
}

#[test]
fn the_proxy_records_any_client() {
    let scratch = Scratch::new("proxy");
    let trace_path = scratch.path("proxied.jsonl");
    // A host application that speaks raw JSON lines, launching the recorder as its server.
    let mut host = Command::new(env!("CARGO_BIN_EXE_mcp-conformance"))
        .args(["record", "--proxy", "-o", &trace_path, "--note", "by hand", "--", &demo()])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("start the proxy");
    let mut to_server = host.stdin.take().unwrap();
    let mut from_server = BufReader::new(host.stdout.take().unwrap());
    let mut exchange = |line: &str| {
        writeln!(to_server, "{line}").unwrap();
        let mut answer = String::new();
        from_server.read_line(&mut answer).unwrap();
        serde_json::from_str::<Value>(&answer).expect("a JSON answer")
    };
    let init = exchange(
        r#"{"jsonrpc":"2.0","id":"a","method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}"#,
    );
    assert_eq!(init["result"]["protocolVersion"], "2025-06-18");
    let garbage = exchange("this is not json");
    assert_eq!(garbage["error"]["code"], -32700);
    drop(to_server);
    let status = host.wait().expect("the proxy exits when the client closes its stdin");
    assert!(status.success(), "{status:?}");

    let trace = Trace::read(&trace_path).expect("a readable trace");
    assert_eq!(trace.header.note.as_deref(), Some("by hand"));
    assert_eq!(trace.header.protocol_version.as_deref(), Some("2025-06-18"));
    let lines: Vec<String> = trace
        .entries
        .iter()
        .map(|e| format!("{} {}", e.dir, String::from_utf8_lossy(e.payload.wire())))
        .collect();
    assert_eq!(lines.len(), 4, "{lines:#?}");
    assert!(
        lines[0].starts_with(r#"client {"jsonrpc":"2.0","id":"a","method":"initialize""#),
        "verbatim: {lines:#?}"
    );
    assert_eq!(lines[2], "client this is not json", "a non-JSON line is kept verbatim");
    assert!(std::fs::read_to_string(&trace_path).unwrap().contains(r#""raw":"this is not json""#));
}

#[test]
fn usage_errors_exit_2() {
    assert_eq!(run(&[]).status.code(), Some(2));
    assert_eq!(run(&["replay"]).status.code(), Some(2));
    assert_eq!(run(&["check", "--cases", "many", "--", "x"]).status.code(), Some(2));
    let output = run(&["replay", Path::new("/nonexistent.jsonl").to_str().unwrap(), "--", "x"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("cannot read"), "{output:?}");
    let help = run(&["help"]);
    assert!(help.status.success() && stdout(&help).contains("mcp-conformance record -o TRACE"));
}

/// `--help` (and `-h`, and `help COMMAND`) on the tool and on each command: exit 0, and the
/// command's options on stdout.
#[test]
fn help_on_every_command() {
    let commands: [(&str, &[&str]); 3] = [
        (
            "record",
            &[
                "-o, --output <TRACE>",
                "--call <NAME[=JSON]>",
                "--read <URI>",
                "--prompt <NAME[=JSON]>",
                "--subscribe <URI>",
                "--log-level <LEVEL>",
                "--ping",
                "--unknown-method <METHOD>",
                "--wait <MS>",
                "--legacy",
                "--note <TEXT>",
                "--proxy",
                "--listen <ADDR>",
                "--url <URL>",
                "--header <NAME: VALUE>",
                "[SERVER COMMAND]...",
            ],
        ),
        (
            "replay",
            &["<TRACE>", "--rules <FILE>", "--timeout <SECS>", "--no-pace", "--url <URL>", "--header"],
        ),
        (
            "check",
            &[
                "--cases <N>",
                "--max-actions <N>",
                "--time-limit <SECS>",
                "--timeout <SECS>",
                "--seed <N>",
                "--protocol-version <VERSION>",
                "--skip-tool <NAME>",
                "--allow <PROPERTY>",
                "--allow-sdk-deviations",
                "--jobs <N>",
                "--tool <NAME>",
                "--shrink-time <SECS>",
                "--format <FORMAT>",
                "--junit <FILE>",
                "--failure-traces <DIR>",
                "responsive",
                "one-response",
                "output-schema",
                "--url <URL>",
            ],
        ),
    ];
    for (command, options) in commands {
        for args in [vec![command, "--help"], vec![command, "-h"], vec!["help", command]] {
            let output = run(&args);
            assert_eq!(output.status.code(), Some(0), "{args:?}: {output:?}");
            let help = stdout(&output);
            for option in options {
                assert!(help.contains(option), "{args:?} does not mention {option}:\n{help}");
            }
        }
        // `--help` anywhere: after options, even after one that takes a value.
        let output = run(&[command, "--url", "http://127.0.0.1:1/mcp", "--help"]);
        assert_eq!(output.status.code(), Some(0), "{command} --url … --help: {output:?}");
    }
    for args in [&["--help"][..], &["-h"], &["help"]] {
        let output = run(args);
        assert_eq!(output.status.code(), Some(0), "{args:?}: {output:?}");
        let help = stdout(&output);
        for command in ["record", "replay", "check", "Exit codes"] {
            assert!(help.contains(command), "{args:?} does not mention {command}:\n{help}");
        }
    }
    let version = run(&["--version"]);
    assert_eq!(version.status.code(), Some(0), "{version:?}");
    assert!(stdout(&version).contains(env!("CARGO_PKG_VERSION")), "{version:?}");
}

/// Usage errors exit 2 with a message on stderr, and start nothing.
#[test]
fn bad_options_exit_2() {
    // Never written: nothing starts.
    const T: &str = "/nonexistent/x.jsonl";
    let cases: &[&[&str]] = &[
        &["record", "--bogus", "-o", T, "--", "true"],
        &["record", "-o", T, "--call"],
        &["record", "-o", T, "--call", "echo=[1]", "--", "true"],
        &["record", "-o", T, "--call", "echo={", "--", "true"],
        &["record", "-o", T, "--log-level", "loud", "--", "true"],
        &["record", "-o", T, "--wait", "soon", "--", "true"],
        &["record", "--call", "echo", "--", "true"],
        &["record", "-o", T],
        &["record", "-o", T, "--url", "http://127.0.0.1:1/mcp", "--", "true"],
        &["record", "-o", T, "--header", "no colon", "--url", "http://127.0.0.1:1/mcp"],
        &["record", "--proxy", "-o", T, "--call", "echo", "--", "true"],
        &["record", "--proxy", "-o", T, "--listen", "nowhere", "--url", "http://127.0.0.1:1/mcp"],
        &["replay", T, "--cases", "3", "--", "true"],
        &["replay", T, "y.jsonl", "--", "true"],
        &["replay", T, "--timeout", "-1", "--", "true"],
        &["check", "--allow", "nonsense", "--", "true"],
        &["check", "--time-limit", "forever", "--", "true"],
        &["check", "--timeout", "1e300", "--", "true"],
        &["check", "--cases", "-3", "--", "true"],
        &["check", "--rules", "x", "--", "true"],
        &["check", "--jobs", "0", "--", "true"],
        &["check", "--format", "yaml", "--", "true"],
        &["check", "--failure-trace", "x.jsonl", "--", "true"],
        &["check"],
        &["frobnicate"],
    ];
    for args in cases {
        let output = run(args);
        assert_eq!(output.status.code(), Some(2), "{args:?}: {output:?}");
        assert!(!output.stderr.is_empty(), "{args:?}: no message");
        assert!(output.stdout.is_empty(), "{args:?}: {}", stdout(&output));
    }
}

#[test]
fn the_http_proxy_records_any_client() {
    use mcp_conformance::peer::{Incoming, LivePeer, Target};

    let scratch = Scratch::new("http-proxy");
    let trace_path = scratch.path("proxied-http.jsonl");
    let server = DemoHttp::start();
    let mut proxy = Command::new(env!("CARGO_BIN_EXE_mcp-conformance"))
        .args(["record", "--proxy", "-o", &trace_path, "--url", &server.url])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("start the proxy");
    let mut line = String::new();
    BufReader::new(proxy.stdout.take().unwrap()).read_line(&mut line).expect("the proxy's URL");
    let url = line.trim().to_owned();
    assert!(url.starts_with("http://127.0.0.1:") && url.ends_with("/mcp"), "{url}");

    // Any HTTP client: here the wire-level peer, with hand-written messages.
    smol::block_on(async {
        let mut client = LivePeer::connect(&Target::http(url)).await.expect("connect");
        let init = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw-http","version":"1"}}}"#;
        client.send(init.as_bytes(), &[]).await.unwrap();
        let answer = client.recv(Duration::from_secs(10)).await;
        assert!(matches!(answer, Some(Incoming::Message { .. })), "{answer:?}");
        client.send(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#, &[]).await.unwrap();
        client.send(br#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#, &[]).await.unwrap();
        let mut listed = false;
        while let Some(incoming) = client.recv(Duration::from_secs(10)).await {
            if let Incoming::Message { bytes, .. } = incoming {
                listed = String::from_utf8_lossy(&bytes).contains(r#""tools""#);
                break;
            }
        }
        assert!(listed, "tools/list answered through the proxy");
        client.shutdown(Duration::from_secs(2)).await;
    });
    drop(proxy.stdin.take());
    assert!(proxy.wait().expect("the proxy stops when its stdin closes").success());

    let trace = Trace::read(&trace_path).expect("a readable trace");
    assert_eq!(trace.header.transport, Transport::Http);
    assert_eq!(trace.header.protocol_version.as_deref(), Some("2025-11-25"));
    let client_methods: Vec<String> = trace
        .sent_by(Direction::Client)
        .filter_map(|e| e.value()?.get("method")?.as_str().map(str::to_owned))
        .collect();
    assert_eq!(client_methods, ["initialize", "notifications/initialized", "tools/list"]);
    assert!(trace.entries.iter().any(|e| e.http.as_ref().is_some_and(|h| h.status == Some(202))));
}
