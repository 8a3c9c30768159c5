//! `mcp-demo-server`: the deterministic demo MCP server of the mcp-sansio workspace,
//! newline-delimited JSON-RPC 2.0 over stdio.
//!
//! It is the embedded default that the quickstart, the tests, the examples and the benches spawn,
//! so that nothing needs Node or Python to run them. It exercises every feature a client must
//! handle: progress, cancellation, server→client requests (sampling, elicitation, roots),
//! logging, list-changed and resource-updated notifications, pagination, batches, malformed
//! input, a noisy stderr, a grandchild process and a crash in the middle of a call. It is a
//! dual-era server: besides the `initialize` era it speaks MCP 2026-07-28 (`server/discover`,
//! per-request `_meta`, multi round-trip requests, `subscriptions/listen`).
//!
//! Run it with [`run_stdio`] (the `mcp-demo-server` binary is a thin wrapper), or drive it over
//! any byte streams with [`serve`].
//!
//! # Protocol
//!
//! One JSON object (or batch array) per line on stdin, one per line on stdout; logs go to
//! stderr. Supported protocol versions: `2024-11-05`, `2025-03-26`, `2025-06-18` and
//! `2025-11-25` (the legacy `initialize` era), and `2026-07-28` (see below). `initialize`
//! echoes the requested version when supported and answers `2025-11-25` otherwise. Requests
//! sent before `initialize` are answered anyway.
//!
//! Legacy methods: `initialize`, `ping`, `tools/list`, `tools/call`, `resources/list`,
//! `resources/templates/list`, `resources/read`, `resources/subscribe`,
//! `resources/unsubscribe`, `prompts/list`, `prompts/get`, `completion/complete` and
//! `logging/setLevel`. Unknown methods get `-32601`, bad parameters `-32602`, unparsable lines
//! `-32700` (with id `null`), invalid messages `-32600`, unknown resources `-32002`.
//! A batch is answered with one array holding a response for each of its requests.
//!
//! ## 2026-07-28 ("modern", no `initialize`)
//!
//! The era is chosen per request, from how the client opens, as the 2026-07-28 versioning rules
//! describe: `initialize` selects legacy semantics (everything above, unchanged), and a request
//! whose `params._meta["io.modelcontextprotocol/protocolVersion"]` is `2026-07-28` is handled
//! with modern semantics, without any `initialize`:
//!
//! - Every modern request needs `params._meta` with `io.modelcontextprotocol/protocolVersion`
//!   and `io.modelcontextprotocol/clientCapabilities` (an object); a missing one is `-32602`.
//!   Any other version there (an unknown one, or a legacy one, which only `initialize` selects)
//!   is `-32022` with `data: {"supported": [...], "requested": "<sent>"}`, `supported` being
//!   `2026-07-28, 2025-11-25, 2025-06-18, 2025-03-26, 2024-11-05`. An invalid
//!   `io.modelcontextprotocol/logLevel` is `-32602`.
//! - `server/discover` (modern only: without `_meta` it is `-32602`) answers
//!   `{resultType: "complete", supportedVersions, capabilities, instructions, ttlMs: 60000,
//!   cacheScope: "public", _meta: {"io.modelcontextprotocol/serverInfo": {name, title,
//!   version}}}`, with the capabilities and instructions of the `initialize` result.
//! - Methods: `server/discover`, `tools/list`, `tools/call`, `resources/list`,
//!   `resources/templates/list`, `resources/read`, `prompts/list`, `prompts/get`,
//!   `completion/complete` and `subscriptions/listen`. The removed `ping`, `logging/setLevel`,
//!   `resources/subscribe` and `resources/unsubscribe` (and `initialize`-only names) are
//!   `-32601` on a modern request.
//! - Every result has `resultType` (`"complete"`, or `"input_required"`) and the server's
//!   identity in `_meta["io.modelcontextprotocol/serverInfo"]`; the four lists and
//!   `resources/read` also have `ttlMs: 60000` and `cacheScope: "public"`. An unknown resource
//!   is `-32602` (with `data.uri`) instead of the retired `-32002`.
//! - Stateless: a request's capabilities and log level come from its own `_meta` only.
//!   `notifications/message` is sent for a modern request only when its `_meta` has a
//!   `io.modelcontextprotocol/logLevel` and the message is at or above it (`logging/setLevel`
//!   does not apply). Progress (`_meta.progressToken`) and cancellation
//!   (`notifications/cancelled {requestId}`) work as in the legacy era.
//! - No server→client requests: `sample`, `elicit` and `list_roots` use multi round-trip
//!   requests. The first `tools/call` answers `{resultType: "input_required", inputRequests:
//!   {<key>: {method, params}}, requestState}` with the key `sampling`
//!   (`sampling/createMessage`), `elicitation` (`elicitation/create`, form mode) or `roots`
//!   (`roots/list`) and the same params the legacy request has; `requestState` is
//!   `mrtr1:<tool>:<key>:<16 hex digits>`, a digest of the call's arguments, so nothing is kept
//!   between rounds. The retry (new id, same name and arguments, `inputResponses: {<key>:
//!   <result>}` and the echoed `requestState`) gets the result the legacy tool builds from the
//!   same answer. A retry without that answer, or without `requestState`, gets
//!   `input_required` again; a `requestState` of another call (other tool or arguments), or an
//!   answer that is not an object, is `-32602`. The question is asked only when the request's
//!   `clientCapabilities` declare `sampling`, `elicitation` (`{}` or with `form`) or `roots`;
//!   otherwise the tool result has `isError: true`.
//! - `subscriptions/listen {notifications: {toolsListChanged?, resourcesListChanged?,
//!   promptsListChanged?, resourceSubscriptions?}}` first sends
//!   `notifications/subscriptions/acknowledged` with the honoured subset (readable uris only)
//!   and `_meta["io.modelcontextprotocol/subscriptionId"]` = the request id, then stays open,
//!   unanswered, until `notifications/cancelled` names it. `notify_changes` called by a modern
//!   request notifies only such streams (each notification tagged with its subscription id);
//!   called by a legacy request it also notifies them after its usual notifications.
//!
//! One process may serve both eras: a modern request after `initialize` still gets modern
//! semantics. A session whose first era-selecting request was modern (not `initialize`) treats a
//! request without the required `_meta` as a malformed modern request (`-32602`, or `-32601`
//! for a method the modern era lacks) until an `initialize` arrives. Before either, requests
//! without `_meta` are legacy and answered as always.
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
//! With a 2026-07-28 request, `sample`, `elicit` and `list_roots` ask through `input_required`
//! results instead, `log` filters by the request's `_meta` log level and `notify_changes`
//! notifies the `subscriptions/listen` streams (see above).
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
mod modern;
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
