//! `mcp-demo-server`: the deterministic demo MCP server of the mcp-sansio workspace,
//! newline-delimited JSON-RPC 2.0 over stdio, or Streamable HTTP (see [HTTP](#http)).
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
//! any byte streams with [`serve`]; over HTTP with [`run_http`] (`mcp-demo-server --http ADDR`)
//! or [`serve_http`] on a bound listener.
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
//! With `--legacy-only` the server is one of the `initialize` era only, as servers written
//! before 2026-07-28 are: `server/discover` is `-32601`, `_meta` keys are ignored, and over
//! HTTP every request needs a session.
//!
//! One process may serve both eras: a modern request after `initialize` still gets modern
//! semantics. A session whose first era-selecting request was modern (not `initialize`) treats a
//! request without the required `_meta` as a malformed modern request (`-32602`, or `-32601`
//! for a method the modern era lacks) until an `initialize` arrives. Before either, requests
//! without `_meta` are legacy and answered as always.
//!
//! ## Tasks (`--tasks`)
//!
//! With `--tasks` the server offers the tasks extension (SEP-2663): `server/discover` declares
//! `extensions: {"io.modelcontextprotocol/tasks": {}}`. A 2026-07-28 `tools/call` whose
//! `_meta` client capabilities declare the extension is answered with a task (`resultType:
//! "task"`, status `working`, a 32-hex-digit id, `ttlMs: 600000`, `pollIntervalMs: 20`) when
//! its tool runs on its own thread (`long_running`, `sleep`, `sample`, `elicit`, `list_roots`,
//! `stderr_burst`): the task runs the tool, and ends `completed` with the `CallToolResult` the
//! call would have had as `result`, or `failed` with its JSON-RPC `error`. The question a tool
//! asks (`elicit`'s elicitation, say) makes the task `input_required`, with the call's
//! `inputRequests` (keys never reused over a task's life); `tasks/update {taskId,
//! inputResponses}` answers it, and the task goes on as the call's retry would. Two tools are
//! listed last: `render {frames: 0..=20, frame_ms: 0..=100 = 20, fail = false}`, a task only
//! (`-32021` with `data.requiredCapabilities.extensions` naming the extension when the request
//! does not declare it, in either era), which sleeps `frames` × `frame_ms` ms, then completes
//! with `structuredContent {frames, frameMs}` (its `outputSchema`), or fails with `-32000` when
//! `fail`; and `cancelled_tasks`, the JSON array of the ids `tasks/cancel` named.
//!
//! `tasks/get {taskId}` answers the task now (the spec's `DetailedTask`: `inputRequests`,
//! `result` or `error` with their status), `tasks/update` and `tasks/cancel` an empty
//! acknowledgement; `tasks/cancel` is idempotent, and a task not ended yet ends `cancelled`
//! (stderr: `demo-server: tasks/cancel <id>`). An unknown task id is `-32602` with
//! `data.taskId`. Over HTTP the tasks belong to the stateless side that every 2026-07-28
//! request shares (they outlive connections), and `Mcp-Name` must be the `taskId`. Without
//! `--tasks`, `tasks/*` are `-32601` and nothing else changes.
//!
//! `--task-bug reused-id` (implies `--tasks`) plants a mistake for `mcp-conformance check` to
//! find: task ids are `task-<n>`, `n` being one more than the number of tasks still running,
//! so a task created after another one ended takes that one's id (and record): a `completed`
//! task is seen `working` again. It takes two calls, one after the other, to show.
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
//! | `weather` | `region: string, days: integer = 1, metric: boolean = true`, each annotated `"x-mcp-header"` (`Region`, `Days`, `Metric`) | `"forecast for <region>: <days> days, metric=<bool>"` |
//! | `mixed_content` | — | one block of each kind: text `"mixed"`, an `image/png` image, an `audio/wav` clip (a 48-byte WAV), a `resource_link` to `demo://readme` (`text/markdown`) and the embedded text resource `demo://items/7` (`"item 7"`) |
//! | `bad_stats` | `numbers: number[]` | declares the `outputSchema` of `get_stats` but answers `structuredContent {count: "<n>", sum}` that violates it (a string count, no mean), plus the same JSON as text: for testing client-side `outputSchema` validation |
//! | `add_tool` | `name: string` | adds a tool `name` that behaves like `echo` (see below), sends `notifications/tools/list_changed`, then `"added <name>"` |
//!
//! `add_tool` adds to the session's state, like `resources/subscribe`: over stdio the tool lasts
//! as long as the process, over HTTP as long as the legacy session, and a 2026-07-28 request adds
//! it to the one stateless side that every modern request shares. An added tool is listed after
//! the built-in ones, in the order added, with `echo`'s input schema. The list change is notified
//! as `notify_changes` notifies (a legacy call also sends it to the session; every call sends it
//! to the `subscriptions/listen` streams that asked for `toolsListChanged`). A name already taken
//! (built-in or added), one that is not 1 to 128 of `A-Z a-z 0-9 _ - .`, or a 65th added tool is
//! a tool error (`isError: true`) that changes nothing.
//!
//! `long_running`, `sleep`, `sample`, `elicit`, `list_roots` and `stderr_burst` run on their own
//! thread and honour `notifications/cancelled` (a cancelled request is never answered); every
//! other request is answered inline, in arrival order. Server→client requests use the ids
//! `srv-1`, `srv-2`, ...; when their failure is reported the tool result has `isError: true`.
//! With a 2026-07-28 request, `sample`, `elicit` and `list_roots` ask through `input_required`
//! results instead, `log` filters by the request's `_meta` log level and `notify_changes`
//! notifies the `subscriptions/listen` streams (see above). The `x-mcp-header` annotations of
//! `weather` only matter on 2026-07-28 Streamable HTTP (see [HTTP](#http)); over stdio they are
//! ignored.
//!
//! # Resources and prompts
//!
//! Resources `demo://readme` (Markdown), `demo://config.json` (JSON), `demo://logo.png` (blob)
//! and the template `demo://items/{id}` (`demo://items/42` reads as `"item 42"`). Prompts
//! `greeting(name)` and `code_review(code, language?)`. Completion offers languages for
//! `code_review`'s `language` and ids `1, 2, 3, 42` for the item template.
//!
//! # Skills (`--skills`)
//!
//! With `--skills` the server offers the skills extension (SEP-2640): its capabilities declare
//! `extensions: {"io.modelcontextprotocol/skills": {}}`, and it answers `skills/list`
//! (paginated by `--page-size`; cacheable on 2026-07-28) and `skills/get {uri}` (`-32602` with
//! `data.uri` for a URI that is no skill's `SKILL.md`). Without it both are `-32601`. Two
//! skills, each file readable with `resources/read` as text (not listed by `resources/list`):
//!
//! - `skill://pdf-processing/SKILL.md`, whose body sends the reader to
//!   `references/FORMS.md` and `scripts/extract.py`; frontmatter with a nested `metadata`;
//! - `skill://acme/billing/refunds/SKILL.md` (the prefix `acme/billing`), with
//!   `examples/email.md`; a folded `description`, a `license` and a flow list
//!   `allowed-tools`.
//!
//! Each entry's digests and sizes are computed from the bytes served, and its `frontmatter` is
//! its `SKILL.md`'s. Every read of a skill file is logged to stderr (`demo-server: read skill
//! file <uri>`), so a test can see what a client fetched and when.
//!
//! `--skill-bug BUG` (implies `--skills`) plants one mistake ([`SkillBug`]): `digest`
//! (`references/FORMS.md` served with a byte changed), `size` (with a line more), `frontmatter`
//! (`pdf-processing`'s `SKILL.md` says another `description` than its entry; its digest and
//! size match what is served), `name` (`acme/billing/refunds` named `refund`), `unlisted`
//! (`scripts/extract.py` left out of the entry, still served), `limits` (two more skills:
//! `demo/too-many` lists 513 files, `demo/too-large` says its two files weigh 8 MiB and a byte
//! each).
//!
//! # HTTP
//!
//! `mcp-demo-server --http 127.0.0.1:0` binds, prints the endpoint URL
//! (`http://127.0.0.1:PORT/mcp`) as the only line on stdout, and serves Streamable HTTP until it
//! is killed (logs on stderr; the other flags apply as over stdio). It is a small hand-written
//! HTTP/1.1 server, a thread per connection:
//!
//! - Only the path `/mcp` is served (the query is ignored; other paths are `404`), and the OAuth
//!   paths in [OAuth mode](#oauth-mode---oauth). A request
//!   with an `Origin` whose host is not `localhost`, `127.0.0.1` or `[::1]` is `403`.
//! - Heads over 64 KiB are `431`, bodies over 16 MiB `413` (both close the connection), a
//!   malformed request `400`. Bodies come with `Content-Length` or `Transfer-Encoding: chunked`;
//!   `Expect: 100-continue` is honoured. Connections are kept alive (HTTP/1.1) unless the request
//!   says `Connection: close`.
//! - A POST body is one JSON-RPC message (a batch only in a legacy session); unparsable JSON is
//!   `400` with `-32700`. A notification or response alone is `202` with no body. A request is
//!   answered on its POST: `application/json` (with `Content-Length`) when the response is the
//!   only message of the request, otherwise a chunked `text/event-stream` carrying the
//!   request's messages (`event: message`, `data: <json>`, no `id:`) and ending after the
//!   response. Silent event streams get an SSE comment every 15 s.
//!
//! Which era handles a POST: `initialize` opens a legacy session; a request whose
//! `params._meta` has `io.modelcontextprotocol/protocolVersion` (whatever its headers),
//! `server/discover`, or, without `Mcp-Session-Id`, a request whose `MCP-Protocol-Version`
//! header is `2026-07-28` is modern; anything else needs `Mcp-Session-Id` (notifications and
//! responses without one go to the modern side). A message that is not valid JSON-RPC is `400`
//! with its error.
//!
//! ## 2026-07-28 over HTTP (stateless)
//!
//! Every modern request is handled by one shared server (as a stdio session that opened modern),
//! whatever connection it arrives on; there are no sessions, and GET or DELETE (without a
//! session) is `405`. Before anything else, a request's headers must mirror its body (spec
//! "Request Metadata"); each value may be `=?base64?<standard Base64 of UTF-8>?=`:
//!
//! - `MCP-Protocol-Version` = `_meta["io.modelcontextprotocol/protocolVersion"]` (checked when
//!   that is a string), `Mcp-Method` = the method, and `Mcp-Name` = `params.name` for
//!   `tools/call` and `prompts/get`, `params.uri` for `resources/read` (when the body has it).
//! - For a `tools/call` of a tool with `"x-mcp-header": "<Name>"` properties (`weather`), every
//!   such argument that is present and not `null` must come as `Mcp-Param-<Name>` (names are
//!   case-insensitive): strings exactly, integers as `-?[0-9]+` compared numerically (`007`
//!   matches 7; `7.0`, `+7` do not), booleans as `true`/`false`. A header for an absent or
//!   `null` argument is ignored.
//! - A missing, repeated, mismatched or undecodable header is `400` with `-32020`
//!   (HeaderMismatch) naming the header, with the request's id.
//!
//! Statuses of JSON answers: `-32022`, `-32021`, `-32020`, and `-32602` for a missing or
//! invalid `_meta` are `400`; `-32601` is `404`; results and every other error (bad arguments,
//! unknown tools or resources) are `200`. The body is always the JSON-RPC response. Progress
//! (`_meta.progressToken`) and log messages (`_meta` log level) of a request come on its own
//! event stream before the response. A client that closes the connection before the response
//! cancels the request, as `notifications/cancelled` would (the id then shows in
//! `cancelled_requests`); a cancelled request's stream ends without a response. MRTR works as
//! over stdio (the retry is another POST). `subscriptions/listen` answers with an event stream:
//! the acknowledgement, then the notifications that `notify_changes` calls of any request (modern
//! or legacy, on any connection) produce for it; closing the stream (or `notifications/cancelled`
//! naming it, which ends the stream) removes the subscription. Request ids are global on this
//! side: two blocking calls in flight with the same id get `-32600` for the second, as over stdio.
//!
//! ## Legacy sessions (2025-03-26 … 2025-11-25 Streamable HTTP)
//!
//! A successful `initialize` POST opens a session (its own server, legacy semantics) and returns
//! its id in `Mcp-Session-Id` (opaque visible ASCII; a failed `initialize` is `400` and opens
//! nothing). Every later POST, GET and DELETE of the session must carry it: without it `400`
//! (`"Bad Request: missing Mcp-Session-Id"`), unknown or deleted `404`. When the session
//! negotiated 2025-06-18 or later, an `MCP-Protocol-Version` header, if present, must be the
//! negotiated version (else `400`). Statuses of JSON answers are `200`.
//!
//! - POSTed notifications and responses (answers to `sampling/createMessage`,
//!   `elicitation/create`, `roots/list`) are `202`; a response completes the waiting tool call.
//! - GET with `Accept: text/event-stream` opens the session's standalone stream (one at a time:
//!   a second is `409`, until the first is closed).
//! - DELETE ends the session (`200`) and its standalone stream.
//! - Routing: a request's progress and log messages and its response go on its POST's stream.
//!   Messages not tied to a request (server→client requests, their cancellation, list-changed
//!   and resource-updated notifications) go to the standalone stream if it is open, else to
//!   the stream of the request whose handler sent them, else to the newest request stream open
//!   in the session; with none open they are dropped (logged). Closing a POST's connection
//!   early is not a cancellation in this era (use `notifications/cancelled`).
//!
//! The `crash` tool ends the whole process, as over stdio.
//!
//! ## OAuth mode (`--oauth`)
//!
//! `mcp-demo-server --http 127.0.0.1:0 --oauth` (or [`serve_http`] with
//! [`Options::with_oauth`]) makes `/mcp` an OAuth 2.1 protected resource and the same listener
//! its authorization server, for testing clients' authorization on one machine. The issuer is
//! `http://<bound address>` (the real port when bound to port 0; bind a concrete host, as the
//! issuer names it), the resource `http://<bound address>/mcp`. Everything is in memory and
//! lost when the process ends. The "user" always approves: `/authorize` never shows a page.
//!
//! - **`/mcp`**: every request (any method) needs `Authorization: Bearer <access token>`.
//!   Without one: `401`, `WWW-Authenticate: Bearer resource_metadata="<issuer>/.well-known/
//!   oauth-protected-resource/mcp", scope="mcp:tools"`; with a token that is unknown, revoked or
//!   expired the challenge starts with `error="invalid_token", error_description="..."`. A
//!   token lacking a scope the request needs: `403`, `WWW-Authenticate: Bearer
//!   error="insufficient_scope", scope="<needed>", resource_metadata="..."`. Every request needs
//!   `mcp:tools`; calling the tool `admin_echo` (echo, listed only in OAuth mode, alone or in a
//!   batch) needs `mcp:tools mcp:admin`, which is what step-up tests ask for. The bodies of
//!   these answers are JSON-RPC errors (`-32000`, id `null`). Otherwise `/mcp` is as above.
//! - **`GET /.well-known/oauth-protected-resource/mcp`** (and the same document at
//!   `/.well-known/oauth-protected-resource`): RFC 9728 metadata, `{resource, authorization_servers:
//!   [issuer], scopes_supported: ["mcp:tools", "mcp:admin"], bearer_methods_supported:
//!   ["header"], resource_name}`.
//! - **`GET /.well-known/oauth-authorization-server`**: RFC 8414 metadata: `issuer`,
//!   `authorization_endpoint` (`/authorize`), `token_endpoint` (`/token`),
//!   `registration_endpoint` (`/register`), `response_types_supported: ["code"]`,
//!   `grant_types_supported: ["authorization_code", "refresh_token", "client_credentials"]`,
//!   `code_challenge_methods_supported: ["S256"]`, `token_endpoint_auth_methods_supported:
//!   ["none", "client_secret_basic", "client_secret_post"]`, `scopes_supported`,
//!   `client_id_metadata_document_supported: false`,
//!   `authorization_response_iss_parameter_supported: true`.
//! - **`POST /register`** (RFC 7591, JSON): `201` with the metadata as sent plus `client_id`,
//!   `client_id_issued_at`, the defaults (`token_endpoint_auth_method: client_secret_basic`, as
//!   the RFC says, `grant_types: ["authorization_code"]`, `response_types: ["code"]`) and, unless
//!   the method is `none`, `client_secret` (`client_secret_expires_at: 0`). `400` with
//!   `invalid_redirect_uri` when an `authorization_code` client has no `redirect_uris` or one is
//!   not an absolute URI without a fragment; `invalid_client_metadata` for an unknown method or
//!   grant, `client_credentials` with `none`, or a body that is not a JSON object.
//! - **Pre-registered clients** (`--oauth-client ID:SECRET`, [`Options::with_oauth_client`]) are
//!   confidential: they may use `client_secret_basic` or `client_secret_post`, every grant, and
//!   any loopback redirect URI.
//! - **`GET /authorize`**: needs a known `client_id` and a `redirect_uri` registered for it
//!   (exactly; a loopback `http://127.0.0.1`, `http://localhost` or `http://[::1]` URI matches a
//!   registered one on the same host and path with any port, RFC 8252 §7.3); it may be left out
//!   when the client has a single one. Otherwise `400` (JSON `{error, error_description}`), no
//!   redirect. Then `response_type=code`, `code_challenge` (43 to 128 unreserved characters)
//!   with `code_challenge_method=S256` (`plain` or none is refused), `resource` if present equal
//!   to the `/mcp` URL, `scope` among the known ones (`offline_access` is accepted and ignored;
//!   no scope means `mcp:tools`), no repeated parameter. Success: `302` to
//!   `<redirect_uri>?code=...&state=...&iss=<issuer>` (the code is good for 60 s); a failure:
//!   `302` to `<redirect_uri>?error=...&error_description=...&state=...&iss=...`
//!   (`invalid_request`, `unsupported_response_type`, `unauthorized_client`, `invalid_target`,
//!   `invalid_scope`).
//! - **`POST /token`** (`application/x-www-form-urlencoded`): the client authenticates with HTTP
//!   Basic (id and secret form-urlencoded first, RFC 6749 §2.3.1), `client_id` and
//!   `client_secret` in the form, or (public clients) `client_id` alone; a registered client
//!   must use the method it registered. Grants: `authorization_code` (`code`, `code_verifier`
//!   checked against the S256 challenge, `redirect_uri` as sent to `/authorize`, `resource` if
//!   given equal to the `/mcp` URL; a code is redeemed once: any attempt by its client uses it
//!   up, and a second use also revokes the tokens the first one got), `refresh_token`
//!   (rotating: the answer has a new refresh token and the old one is `invalid_grant` from then
//!   on; `scope` may narrow, not widen, the grant) and `client_credentials` (confidential
//!   clients only; no refresh token). Success: `200 {access_token, token_type: "Bearer",
//!   expires_in, refresh_token?, scope}` with `Cache-Control: no-store`; refresh tokens come with
//!   every `authorization_code` and `refresh_token` grant (whether or not `offline_access` was
//!   asked for) and do not expire. Errors are RFC 6749 §5.2 JSON: `400` (`invalid_request`,
//!   `invalid_grant`, `unauthorized_client`, `unsupported_grant_type`, `invalid_scope`,
//!   `invalid_target`), `401` for `invalid_client` (with `WWW-Authenticate: Basic` when Basic
//!   was used).
//! - Access tokens live `--oauth-token-ttl` seconds (default 3600; `0` makes them expire at
//!   once), see [`Options::with_oauth_token_ttl`]. Tokens, codes and client ids are opaque
//!   strings from a counter hashed with std's randomly keyed hasher: unguessable enough for a
//!   demo, not cryptographic.
//! - **`GET /demo/oauth-stats`** (for tests): counters as JSON: `registrations`,
//!   `registration_errors`, `authorizations` (codes issued), `authorization_errors` and
//!   `token_errors` (by error code), `token_requests` (by `grant_type`, `other` for the rest),
//!   `access_tokens_issued`, `refresh_tokens_issued`, and `mcp_requests: {authorized,
//!   unauthorized, insufficient_scope}`.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod arguments;
mod assets;
mod completion;
mod exchange;
mod http;
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
mod skills;
mod startup;
mod tasks;
mod tools;

use std::io::{self, BufRead, Write};
use std::net::TcpListener;
use std::process::Child;
use std::sync::Arc;

pub use options::{Command, OAuthOptions, Options, SkillBug, USAGE};
pub use tasks::TaskBug;

use output::Output;
use server::Server;

/// Serves one session: reads messages from `input` until EOF, writes responses and
/// notifications to `output`. `options.oauth` is ignored (OAuth mode is for HTTP).
///
/// Returns at EOF without waiting for requests still running on their own threads (they are
/// abandoned; in a process, returning from `main` ends them). Note that the `crash` tool ends
/// the whole process, whoever calls this.
///
/// # Errors
///
/// Fails only when reading `input` fails.
pub fn serve<R: BufRead>(mut input: R, output: Box<dyn Write + Send>, options: Options) -> io::Result<()> {
    // OAuth is an HTTP matter: without it the admin tool would be listed with nothing guarding it.
    let options = Options { oauth: None, ..options };
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
    let _grandchild = start(&options, None);
    serve(io::stdin().lock(), Box::new(io::stdout()), options)
}

/// Serves Streamable HTTP on `listener` (see "HTTP" above) until the process ends: both eras,
/// one thread per connection, the endpoint being `/mcp`. `options.http` is not used (the
/// listener is already bound). With `options.oauth` the listener is in OAuth mode (see "OAuth
/// mode" above), its issuer being `http://` and the listener's local address.
///
/// # Errors
///
/// Fails only when the listener cannot be put in blocking mode; errors accepting a connection
/// are logged to stderr and retried, so it does not return otherwise.
pub fn serve_http(listener: TcpListener, options: Options) -> io::Result<()> {
    http::serve(listener, options)
}

/// Runs the server on Streamable HTTP at `options.http` (`--http ADDR`): binds, prints the
/// endpoint URL (`http://HOST:PORT/mcp`) as one line on stdout, applies the startup behaviours
/// selected by `options`, then serves until the process is killed (see [`serve_http`]).
///
/// # Errors
///
/// Fails when `options.http` is `None`, or the address cannot be bound, or stdout cannot be
/// written.
pub fn run_http(options: Options) -> io::Result<()> {
    let address = options.http.clone().ok_or_else(|| {
        io::Error::new(io::ErrorKind::InvalidInput, "no HTTP address (--http ADDR) was given")
    })?;
    let listener = TcpListener::bind(&address)
        .map_err(|error| io::Error::new(error.kind(), format!("cannot listen on {address}: {error}")))?;
    let url = format!("http://{}/mcp", listener.local_addr()?);
    let mut stdout = io::stdout().lock();
    writeln!(stdout, "{url}")?;
    stdout.flush()?;
    drop(stdout);
    let _grandchild = start(&options, Some(&url));
    serve_http(listener, options)
}

/// The whole command line of `mcp-demo-server` (the arguments after the program name): prints
/// the usage for `--help`, serves over stdio or, with `--http`, over HTTP, and returns the exit
/// status (2 for a bad argument). The binary, and the examples other crates build to start the
/// server from their tests, are this one call.
pub fn main_with_args(args: impl IntoIterator<Item = String>) -> std::process::ExitCode {
    use std::process::ExitCode;
    match Options::parse(args) {
        Ok(Command::Help) => {
            print!("{USAGE}");
            ExitCode::SUCCESS
        }
        Ok(Command::Run(options)) => {
            let http = options.http.is_some();
            match if http { run_http(options) } else { run_stdio(options) } {
                Ok(()) => ExitCode::SUCCESS,
                Err(error) if http => {
                    eprintln!("mcp-demo-server: {error}");
                    ExitCode::FAILURE
                }
                Err(error) => {
                    eprintln!("mcp-demo-server: cannot read stdin: {error}");
                    ExitCode::FAILURE
                }
            }
        }
        Err(message) => {
            eprintln!("mcp-demo-server: {message}\n\n{USAGE}");
            ExitCode::from(2)
        }
    }
}

/// The startup behaviours selected by `options` (banner, stderr flood, grandchild).
fn start(options: &Options, endpoint: Option<&str>) -> Option<Child> {
    if options.banner {
        startup::print_banner(options, endpoint);
    }
    if options.flood_stderr {
        startup::flood_stderr();
    }
    // Never waited for: the grandchild must outlive a server that is killed alone.
    options.spawn_grandchild.then(startup::spawn_grandchild).flatten()
}
