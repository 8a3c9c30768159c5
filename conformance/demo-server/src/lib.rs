//! `mcp-demo-server`: the deterministic demo MCP server of the mcp-sansio workspace,
//! newline-delimited JSON-RPC 2.0 over stdio.
//!
//! It is the embedded default that the quickstart, the tests, the examples and the benches spawn,
//! so that nothing needs Node or Python to run them. It exercises every feature a client must
//! handle: progress, cancellation, server→client requests (sampling, elicitation, roots),
//! logging, list-changed and resource-updated notifications, pagination, batches, malformed
//! input, a noisy stderr, a grandchild process and a crash in the middle of a call.
//!
//! Run it with [`run_stdio`] (the `mcp-demo-server` binary is a thin wrapper), or drive it over
//! any byte streams with [`serve`].
//!
//! # Protocol
//!
//! One JSON object (or batch array) per line on stdin, one per line on stdout; logs go to
//! stderr. Supported protocol versions: `2024-11-05`, `2025-03-26`, `2025-06-18` and
//! `2025-11-25`; `initialize` echoes the requested version when supported and answers
//! `2025-11-25` otherwise. Requests sent before `initialize` are answered anyway.
//!
//! Methods: `initialize`, `ping`, `tools/list`, `tools/call`, `resources/list`,
//! `resources/templates/list`, `resources/read`, `resources/subscribe`,
//! `resources/unsubscribe`, `prompts/list`, `prompts/get`, `completion/complete` and
//! `logging/setLevel`. Unknown methods get `-32601`, bad parameters `-32602`, unparsable lines
//! `-32700` (with id `null`), invalid messages `-32600`, unknown resources `-32002`.
//! A batch is answered with one array holding a response for each of its requests.
//!
//! # Tools
//!
//! | tool | arguments | result |
//! |---|---|---|
//! | `echo` | `message: string` | the message as text |
//! | `add` | `a: number, b: number` | the sum as text (`"5"`) |
//! | `long_running` | `steps: integer = 5, step_ms: integer = 100` | progress notifications, then `"done after N steps"` |
//! | `sleep` | `ms: integer` | `"slept <ms> ms"` |
//! | `tiny_image` | — | an `image/png` block and a text block |
//! | `get_stats` | `numbers: number[]` | `structuredContent {count, sum, mean}` plus the same JSON as text |
//! | `fail` | — | a tool error (`isError: true`) |
//! | `crash` | — | the process exits with code 3 without answering |
//! | `sample` | `prompt: string` | `sampling/createMessage` → `"sampled: <text>"` |
//! | `elicit` | `message: string` | `elicitation/create` → `"action=<action> content=<json>"` |
//! | `list_roots` | — | `roots/list` → the uris joined by `,` |
//! | `log` | `level: string, message: string` | `notifications/message`, then `"logged"` or `"filtered"` |
//! | `notify_changes` | — | list_changed ×3 and `resources/updated` per subscription, then `"notified"` |
//! | `cancelled_requests` | — | the JSON array of request ids seen in `notifications/cancelled` |
//! | `stderr_burst` | `bytes: integer` | writes that many bytes to stderr, then `"wrote <n> bytes"` |
//!
//! `long_running`, `sleep`, `sample`, `elicit`, `list_roots` and `stderr_burst` run on their own
//! thread and honour `notifications/cancelled` (a cancelled request is never answered); every
//! other request is answered inline, in arrival order. Server→client requests use the ids
//! `srv-1`, `srv-2`, ...; when their failure is reported the tool result has `isError: true`.
//!
//! # Resources and prompts
//!
//! Resources `demo://readme` (Markdown), `demo://config.json` (JSON), `demo://logo.png` (blob)
//! and the template `demo://items/{id}` (`demo://items/42` reads as `"item 42"`). Prompts
//! `greeting(name)` and `code_review(code, language?)`. Completion offers languages for
//! `code_review`'s `language` and ids `1, 2, 3, 42` for the item template.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod arguments;
mod assets;
mod completion;
mod jsonrpc;
mod lifecycle;
mod logging;
mod options;
mod output;
mod pagination;
mod prompts;
mod resources;
mod server;
mod startup;
mod tools;

use std::io::{self, BufRead, Write};
use std::sync::Arc;

pub use options::{Command, Options, USAGE};

use output::Output;
use server::Server;

/// Serves one session: reads messages from `input` until EOF, writes responses and
/// notifications to `output`.
///
/// Returns at EOF without waiting for requests still running on their own threads (they are
/// abandoned; in a process, returning from `main` ends them). Note that the `crash` tool ends
/// the whole process, whoever calls this.
///
/// # Errors
///
/// Fails only when reading `input` fails.
pub fn serve<R: BufRead>(mut input: R, output: Box<dyn Write + Send>, options: Options) -> io::Result<()> {
    let server = Arc::new(Server::new(options, Output::new(output)));
    let mut line = Vec::new();
    loop {
        line.clear();
        if input.read_until(b'\n', &mut line)? == 0 {
            return Ok(());
        }
        server.handle_line(&line);
    }
}

/// Runs the server on the process's stdin and stdout, after the startup behaviours selected by
/// `options` (banner, stderr flood, grandchild). Returns when stdin reaches EOF.
///
/// # Errors
///
/// Fails only when reading stdin fails.
pub fn run_stdio(options: Options) -> io::Result<()> {
    if options.banner {
        startup::print_banner(&options);
    }
    if options.flood_stderr {
        startup::flood_stderr();
    }
    // Never waited for: the grandchild must outlive a server that is killed alone.
    let _grandchild = options.spawn_grandchild.then(startup::spawn_grandchild).flatten();
    serve(io::stdin().lock(), Box::new(io::stdout()), options)
}
