//! `bench-echo`: a fast stdio MCP server for the end-to-end benches. It answers `initialize`
//! (with the version the client offers if that version has `initialize`, else 2025-11-25, as a
//! server that predates 2026-07-28 does), `ping`, and three tools:
//!
//! - `echo {"message": s}`: a text result holding `s`;
//! - `blob {"size": n}`: a text result of `n` bytes (for the 64 KiB workload);
//! - `hold {}`: never answered (pending-request memory), unless cancelled;
//! - `ask {"size": n}`: sends `n` `elicitation/create` requests to the client (open
//!   server-request memory), then answers with an empty text; what the client answers to them
//!   is read and dropped.
//!
//! With `BENCH_ECHO_TOOLS=N` in its environment it also lists tools (for the curves bench):
//! `tools/list` answers, in one page, `N` tools `t0`…`t{N-1}`, each with an input and an output
//! schema, and a call of `t{i}` answers `structuredContent` `{"count": i, "name": "t{i}"}` (which
//! matches that schema) with the same JSON as text. The list is built once, at start.
//!
//! It reads whole buffers of lines and writes all their answers in one write, so neither a
//! sequential nor a pipelined client waits on it. Everything it does is the same for the raw
//! baseline client and for ours; only the client side differs between the two.

use std::io::{BufRead, BufReader, Write};

use serde::Deserialize;
use serde_json::value::RawValue;

#[derive(Deserialize)]
struct Message<'a> {
    #[serde(borrow)]
    id: Option<&'a RawValue>,
    #[serde(borrow)]
    method: Option<&'a str>,
    #[serde(borrow)]
    params: Option<&'a RawValue>,
}

#[derive(Deserialize)]
struct CallParams<'a> {
    #[serde(borrow)]
    name: &'a str,
    #[serde(default)]
    arguments: Arguments,
}

#[derive(Deserialize, Default)]
struct Arguments {
    #[serde(default)]
    message: String,
    #[serde(default)]
    size: usize,
}

#[derive(Deserialize)]
struct InitializeParams<'a> {
    #[serde(borrow, rename = "protocolVersion")]
    protocol_version: &'a str,
}

/// The `result` of `tools/list` with `n` tools, each with an output schema.
fn tool_list(n: usize) -> Vec<u8> {
    let tools: Vec<serde_json::Value> = (0..n)
        .map(|i| {
            serde_json::json!({
                "name": format!("t{i}"),
                "description": format!("Tool number {i}: returns its number and its name."),
                "inputSchema": {
                    "type": "object",
                    "properties": {"verbose": {"type": "boolean"}},
                },
                "outputSchema": {
                    "type": "object",
                    "properties": {
                        "count": {"type": "integer", "minimum": 0},
                        "name": {"type": "string", "pattern": "^t[0-9]+$"},
                    },
                    "required": ["count", "name"],
                    "additionalProperties": false,
                },
            })
        })
        .collect();
    serde_json::to_vec(&serde_json::json!({"tools": tools})).expect("serialize")
}

fn main() {
    let tools = std::env::var("BENCH_ECHO_TOOLS").ok().and_then(|n| n.parse().ok()).map(tool_list);
    let stdin = std::io::stdin().lock();
    let mut input = BufReader::with_capacity(256 * 1024, stdin);
    let mut out = Vec::with_capacity(256 * 1024);
    let mut stdout = std::io::stdout().lock();
    let mut line = Vec::new();
    loop {
        line.clear();
        match input.read_until(b'\n', &mut line) {
            Ok(0) | Err(_) => break,
            Ok(_) => {}
        }
        answer(&line, tools.as_deref(), &mut out);
        // Write once nothing more is buffered: every answer to one burst goes out together.
        if input.buffer().is_empty() && !out.is_empty() {
            if stdout.write_all(&out).and_then(|()| stdout.flush()).is_err() {
                break;
            }
            out.clear();
        }
    }
}

fn answer(line: &[u8], tools: Option<&[u8]>, out: &mut Vec<u8>) {
    let Ok(message) = serde_json::from_slice::<Message<'_>>(line) else { return };
    let (Some(id), Some(method)) = (message.id, message.method) else { return };
    let params = message.params.map_or("{}", RawValue::get);
    let start = |out: &mut Vec<u8>| {
        out.extend_from_slice(br#"{"jsonrpc":"2.0","id":"#);
        out.extend_from_slice(id.get().as_bytes());
        out.extend_from_slice(br#","result":"#);
    };
    match method {
        "initialize" => {
            let version = serde_json::from_str::<InitializeParams<'_>>(params)
                .ok()
                .and_then(|p| mcp_benches::INITIALIZE_VERSIONS.into_iter().find(|v| *v == p.protocol_version))
                .unwrap_or("2025-11-25");
            start(out);
            let result = serde_json::json!({
                "protocolVersion": version,
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "bench-echo", "version": "0.1.0"}
            });
            serde_json::to_writer(&mut *out, &result).expect("write to a Vec");
        }
        "ping" => {
            start(out);
            out.extend_from_slice(b"{}");
        }
        "tools/list" if tools.is_some() => {
            start(out);
            out.extend_from_slice(tools.unwrap_or_default());
        }
        "tools/call" => {
            let Ok(call) = serde_json::from_str::<CallParams<'_>>(params) else { return };
            if let Some(count) = call.name.strip_prefix('t').and_then(|n| n.parse::<u64>().ok()) {
                let structured = serde_json::json!({"count": count, "name": call.name});
                let result = serde_json::json!({
                    "content": [{"type": "text", "text": structured.to_string()}],
                    "structuredContent": structured,
                });
                start(out);
                serde_json::to_writer(&mut *out, &result).expect("write to a Vec");
                out.extend_from_slice(b"}\n");
                return;
            }
            let text = match call.name {
                "echo" => call.arguments.message,
                "blob" => "x".repeat(call.arguments.size),
                "ask" => {
                    for n in 0..call.arguments.size {
                        writeln!(
                            out,
                            r#"{{"jsonrpc":"2.0","id":"q{n}","method":"elicitation/create","params":{{"message":"name?","requestedSchema":{{"type":"object","properties":{{"name":{{"type":"string"}}}}}}}}}}"#
                        )
                        .expect("write to a Vec");
                    }
                    String::new()
                }
                _ => return,
            };
            start(out);
            out.extend_from_slice(br#"{"content":[{"type":"text","text":"#);
            serde_json::to_writer(&mut *out, &text).expect("write to a Vec");
            out.extend_from_slice(b"}]}");
        }
        _ => {
            out.extend_from_slice(br#"{"jsonrpc":"2.0","id":"#);
            out.extend_from_slice(id.get().as_bytes());
            out.extend_from_slice(br#","error":{"code":-32601,"message":"method not found"}"#);
        }
    }
    out.extend_from_slice(b"}\n");
}
