//! Legacy servers that answer the dual-era client's `server/discover` probe badly, as real
//! servers do (issue 36: typescript-sdk #2619 and #2514, adcp-client #2408 and #2434,
//! mcp-context-forge #6561).
//!
//! Each is the correct 2025-11-25 server of its transport (`stdio.rs`, `http.rs`) in every
//! other way: only the probe is answered the way its mode says. Every probe mode keeps count of
//! the handshake requests it got, so that a test can tell how many probes and `initialize`s a
//! connection took:
//! - over stdio, on stderr: `mcp-adversary: started`, then `mcp-adversary: got server/discover`
//!   and `mcp-adversary: got initialize` (one process per spawn);
//! - over HTTP, with the tool `handshakes` (any mode), whose text is `discover N initialize M`,
//!   counted since the server started.
//!
//! | mode | stdio | HTTP |
//! |---|---|---|
//! | `probe_no_versions` | a result with capabilities and server info, and no `supportedVersions` | the same, `200` JSON |
//! | `probe_empty_result` | the result `{}` | the same, `200` JSON |
//! | `probe_401` | - | `401` without `WWW-Authenticate` (only the probe) |
//! | `probe_exit` | exits with status 1 (as some servers do on a method they do not know) | - |
//! | `probe_parse_error` | `-32700` with `id: null` | the same in a `400` |
//! | `probe_null_id` | `-32600` with `id: null` | the same in a `200` |
//! | `probe_empty_200` | - | `200` with an empty body |
//! | `probe_204`, `probe_202` | - | that status, no body |
//! | `probe_403`, `probe_405`, `probe_500` | - | that status, a text body |
//! | `probe_html` | - | `200` with an HTML page |
//! | `probe_stall` | never answers the probe | never answers the probe's `POST` |
//! | `probe_wrong_id` | a discover result with another id | the same, `200` JSON |
//! | `probe_banner` | a banner line on stdout before anything, then `-32601` | - |

use std::io::{self, Read, Write};
use std::net::TcpStream;
use std::sync::atomic::{AtomicU64, Ordering};

use serde_json::{Value, json};

use crate::http::{Next, respond, respond_json};

/// The stdio probe modes.
pub(crate) const STDIO_MODES: &[&str] = &[
    "probe_no_versions",
    "probe_empty_result",
    "probe_exit",
    "probe_parse_error",
    "probe_null_id",
    "probe_stall",
    "probe_wrong_id",
    "probe_banner",
];

/// The HTTP probe modes.
pub(crate) const HTTP_MODES: &[&str] = &[
    "probe_no_versions",
    "probe_empty_result",
    "probe_401",
    "probe_parse_error",
    "probe_null_id",
    "probe_empty_200",
    "probe_204",
    "probe_202",
    "probe_403",
    "probe_405",
    "probe_500",
    "probe_html",
    "probe_stall",
    "probe_wrong_id",
];

/// A discover result without `supportedVersions`: what a sloppy legacy server may answer to a
/// method it does not know.
fn without_versions() -> Value {
    json!({
        "capabilities": {"tools": {}},
        "serverInfo": {"name": "mcp-adversary", "version": env!("CARGO_PKG_VERSION")},
    })
}

/// A proper discover result, for the wrong-id modes (nobody must take it).
fn proper_discover() -> Value {
    json!({
        "resultType": "complete",
        "supportedVersions": ["2026-07-28"],
        "capabilities": {"tools": {}},
        "ttlMs": 0,
        "cacheScope": "public",
    })
}

fn null_id_error(code: i64, message: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": null, "error": {"code": code, "message": message}})
}

fn line(message: &Value) -> Vec<u8> {
    let mut line = serde_json::to_vec(message).unwrap_or_default();
    line.push(b'\n');
    line
}

// ----- stdio -----

/// What a stdio probe mode writes before anything else (and notes that it started).
pub(crate) fn stdio_start(mode: &str) -> Option<Vec<u8>> {
    if !STDIO_MODES.contains(&mode) {
        return None;
    }
    eprintln!("mcp-adversary: started");
    (mode == "probe_banner").then(|| b"mcp-adversary 0.1 (c) nobody; starting up...\n".to_vec())
}

/// Notes a handshake request in a stdio probe mode.
pub(crate) fn stdio_note(mode: &str, method: &str) {
    if STDIO_MODES.contains(&mode) && matches!(method, "server/discover" | "initialize") {
        eprintln!("mcp-adversary: got {method}");
    }
}

/// The stdio answer of `mode` to the probe with `id`: `Some(bytes)` to write (empty: nothing),
/// `None` when the mode leaves the probe to the plain server (`-32601`). Exits in `probe_exit`.
pub(crate) fn stdio_answer(mode: &str, id: &Value) -> Option<Vec<u8>> {
    let result = |result: Value| line(&json!({"jsonrpc": "2.0", "id": id, "result": result}));
    match mode {
        "probe_no_versions" => Some(result(without_versions())),
        "probe_empty_result" => Some(result(json!({}))),
        "probe_exit" => std::process::exit(1),
        "probe_parse_error" => Some(line(&null_id_error(-32700, "Parse error"))),
        "probe_null_id" => Some(line(&null_id_error(-32600, "Invalid Request"))),
        "probe_stall" => Some(Vec::new()),
        "probe_wrong_id" => {
            let other = id.as_i64().map_or(json!("other"), |n| json!(n + 1000));
            Some(line(&json!({"jsonrpc": "2.0", "id": other, "result": proper_discover()})))
        }
        _ => None,
    }
}

// ----- HTTP -----

static DISCOVERS: AtomicU64 = AtomicU64::new(0);
static INITIALIZES: AtomicU64 = AtomicU64::new(0);

/// Handles what the HTTP probe modes change, for a JSON-RPC request `method` with `id`:
/// counts the handshake requests, answers the tool `handshakes`, and the probe of a probe
/// mode. `None` leaves the request to the plain server.
pub(crate) fn http(
    mode: &str,
    method: &str,
    id: &Value,
    message: &Value,
    reader: &mut impl Read,
    writer: &mut TcpStream,
) -> io::Result<Option<Next>> {
    match method {
        "initialize" => {
            INITIALIZES.fetch_add(1, Ordering::SeqCst);
            return Ok(None);
        }
        "tools/call" if message.pointer("/params/name").and_then(Value::as_str) == Some("handshakes") => {
            let text = format!(
                "discover {} initialize {}",
                DISCOVERS.load(Ordering::SeqCst),
                INITIALIZES.load(Ordering::SeqCst)
            );
            let result = json!({"content": [{"type": "text", "text": text}]});
            return respond_json(writer, &json!({"jsonrpc": "2.0", "id": id, "result": result}), &[])
                .map(Some);
        }
        "server/discover" => {
            DISCOVERS.fetch_add(1, Ordering::SeqCst);
        }
        _ => return Ok(None),
    }
    if !HTTP_MODES.contains(&mode) {
        return Ok(None);
    }
    let result = |result: Value| json!({"jsonrpc": "2.0", "id": id, "result": result});
    let text = |status: u16| format!("mcp-adversary: {status} for the probe (on purpose)").into_bytes();
    let plain = [("Content-Type", "text/plain")];
    match mode {
        "probe_no_versions" => respond_json(writer, &result(without_versions()), &[]),
        "probe_empty_result" => respond_json(writer, &result(json!({})), &[]),
        "probe_401" => respond(writer, 401, &plain, &text(401)).map(|()| Next::KeepAlive),
        "probe_parse_error" => {
            let body = serde_json::to_vec(&null_id_error(-32700, "Parse error")).unwrap_or_default();
            respond(writer, 400, &[("Content-Type", "application/json")], &body).map(|()| Next::KeepAlive)
        }
        "probe_null_id" => respond_json(writer, &null_id_error(-32600, "Invalid Request"), &[]),
        "probe_empty_200" => {
            respond(writer, 200, &[("Content-Type", "application/json")], b"").map(|()| Next::KeepAlive)
        }
        "probe_204" => respond(writer, 204, &[], b"").map(|()| Next::KeepAlive),
        "probe_202" => respond(writer, 202, &[], b"").map(|()| Next::KeepAlive),
        "probe_403" => respond(writer, 403, &plain, &text(403)).map(|()| Next::KeepAlive),
        "probe_405" => respond(writer, 405, &[("Content-Type", "text/plain"), ("Allow", "GET")], &text(405))
            .map(|()| Next::KeepAlive),
        "probe_500" => respond(writer, 500, &plain, &text(500)).map(|()| Next::KeepAlive),
        "probe_html" => respond(
            writer,
            200,
            &[("Content-Type", "text/html; charset=utf-8")],
            b"<!doctype html><html><body><h1>Welcome</h1></body></html>",
        )
        .map(|()| Next::KeepAlive),
        "probe_stall" => {
            // Holds the exchange until the client gives up on it.
            let mut buf = [0; 4096];
            while matches!(reader.read(&mut buf), Ok(n) if n > 0) {}
            Ok(Next::Close)
        }
        "probe_wrong_id" => {
            let other = id.as_i64().map_or(json!("other"), |n| json!(n + 1000));
            respond_json(writer, &json!({"jsonrpc": "2.0", "id": other, "result": proper_discover()}), &[])
        }
        _ => return Ok(None),
    }
    .map(Some)
    .and_then(|next| writer.flush().map(|()| next))
}
