//! The README and the guide tell a new user how to run the demo server over HTTP, with and
//! without OAuth: these tests run those commands as written (with this build's binary for
//! `target/debug/mcp-demo-server`) and hold the server to what the docs promise of them: the
//! endpoint URL as the only line on stdout, a server that answers there, and in `--oauth` mode a
//! `401` that points to the resource metadata. If a command leaves the docs, or the binary stops
//! doing what they say, a test here fails.

mod common;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::Command;

use common::{HttpServer, URL_TIMEOUT as TIMEOUT};

fn doc(relative: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").join(relative);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The arguments of every `target/debug/mcp-demo-server ...` line in the `sh` blocks of
/// `text`, with the trailing comment dropped.
fn documented_invocations(text: &str) -> Vec<Vec<String>> {
    let mut in_sh = false;
    let mut found = Vec::new();
    for line in text.lines() {
        let trimmed = line.trim();
        if trimmed.starts_with("```") {
            in_sh = trimmed == "```sh";
            continue;
        }
        if !in_sh {
            continue;
        }
        if let Some(rest) = trimmed.strip_prefix("target/debug/mcp-demo-server") {
            let command = rest.split('#').next().unwrap_or_default();
            found.push(command.split_whitespace().map(str::to_owned).collect());
        }
    }
    found
}

/// One HTTP/1.1 `POST /mcp` of an `initialize` request: the status code and the head.
fn post_initialize(address: &str) -> (u16, String) {
    let body = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"docs","version":"1"}}}"#;
    let mut stream = TcpStream::connect(address).expect("connect to the printed address");
    stream.set_read_timeout(Some(TIMEOUT)).unwrap();
    write!(
        stream,
        "POST /mcp HTTP/1.1\r\nHost: {address}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut response = String::new();
    let _ = stream.read_to_string(&mut response);
    let head = response.split("\r\n\r\n").next().unwrap_or_default().to_owned();
    let status = head.split_whitespace().nth(1).and_then(|code| code.parse().ok()).unwrap_or(0);
    (status, head)
}

/// Runs the demo server with `args` and asks `initialize` at the URL it printed: the URL, the
/// answer's status and head, and everything else the server wrote on stdout until killed.
fn run_documented(args: &[String]) -> (String, u16, String, String) {
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let mut server = HttpServer::spawn(&args);
    let (status, head) = post_initialize(&server.address);
    let rest = server.kill_and_read_the_rest();
    (server.url(), status, head, rest)
}

#[test]
fn the_readme_s_http_commands_do_what_it_says() {
    let invocations = documented_invocations(&doc("README.md"));
    let plain = vec!["--http".to_owned(), "127.0.0.1:0".to_owned()];
    let oauth = vec!["--http".to_owned(), "127.0.0.1:0".to_owned(), "--oauth".to_owned()];
    assert!(invocations.contains(&plain), "the README shows `--http 127.0.0.1:0`: {invocations:?}");
    assert!(invocations.contains(&oauth), "the README shows `--oauth`: {invocations:?}");

    for args in &invocations {
        let (url, status, head, rest) = run_documented(args);
        assert!(url.starts_with("http://127.0.0.1:"), "{url}");
        assert_eq!(rest, "", "the URL is the only line on stdout ({args:?})");
        if args.iter().any(|a| a == "--oauth") {
            assert_eq!(status, 401, "behind its own OAuth server, a request without a token: {head}");
            let challenge = head.lines().find(|l| l.to_ascii_lowercase().starts_with("www-authenticate:"));
            assert!(
                challenge.is_some_and(|c| c.contains("resource_metadata=")),
                "the 401 points to the resource metadata: {head}"
            );
        } else {
            assert_eq!(status, 200, "the server answers at the printed URL: {head}");
        }
    }
}

#[test]
fn the_guide_names_the_same_modes_and_help_lists_the_others() {
    let guide = doc("docs/guide.md");
    for promise in
        ["mcp-demo-server --http 127.0.0.1:0", "--oauth", "only line on stdout", "mcp-demo-server --help"]
    {
        assert!(guide.contains(promise), "the guide's section 1 says {promise:?}");
    }
    // The README and the guide send readers to `--help` for the other modes: it lists them.
    let help = Command::new(env!("CARGO_BIN_EXE_mcp-demo-server")).arg("--help").output().expect("--help");
    assert!(help.status.success());
    let help = String::from_utf8_lossy(&help.stdout).into_owned() + &String::from_utf8_lossy(&help.stderr);
    for mode in ["--http", "--oauth", "--tasks", "--skills"] {
        assert!(help.contains(mode), "--help lists {mode}:\n{help}");
    }
}

#[test]
fn the_scan_reads_sh_blocks_only() {
    let text = "```sh\ntarget/debug/mcp-demo-server --http 127.0.0.1:0   # note\n```\n\
                ```rust\ntarget/debug/mcp-demo-server --skip\n```\ntarget/debug/mcp-demo-server --prose\n";
    assert_eq!(documented_invocations(text), [vec!["--http".to_owned(), "127.0.0.1:0".to_owned()]]);
}
