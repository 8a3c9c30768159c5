//! Hostile HTTP servers, written on raw TCP so that they can break HTTP itself.
//!
//! Every mode is a correct Streamable HTTP server for protocol 2025-11-25 (one thread per
//! connection, HTTP/1.1 keep-alive, `Content-Length` and chunked request bodies): `initialize`
//! answers with JSON and an `Mcp-Session-Id`, notifications and responses get 202, `ping`,
//! `tools/list` and the `echo` tool answer with JSON (and the `answers_received` tool with the
//! number of responses the client posted so far), `GET` gets 405 and `DELETE` 200. Each mode
//! misbehaves in one way only, and only when the tool named after it is called, so that a test
//! can show that the affected request fails while `echo` and `ping` still succeed. The
//! exceptions misbehave on their own: the `initialize_*` modes refuse the handshake,
//! `never_read` accepts connections and never reads from them, `stall_get` never answers a
//! `GET` and `stall_delete` never answers a `DELETE`.

use std::io::{self, BufRead, BufReader, Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use serde_json::{Value, json};

/// The HTTP modes.
pub(crate) const MODES: &[&str] = &[
    // A correct server: for warming up, and as the well-behaved peer.
    "none",
    // Reads the request and never writes a response head.
    "stall_headers",
    // A JSON head with `Content-Length`, half of the body, then nothing.
    "stall_body_json",
    // An event-stream head and half an event, then nothing.
    "stall_body_sse",
    // An event-stream head, then a keep-alive comment every 50 ms, and never the response.
    "keep_alive_sse",
    // An event-stream head, then a progress notification every 50 ms, and never the response.
    "endless_progress",
    // 200 with `Content-Type: text/html` and an HTML page.
    "html_body",
    // 200 with `Content-Type: application/json` and a body that is not JSON.
    "invalid_json_body",
    // 200 with the right JSON-RPC response but no `Content-Type`.
    "no_content_type",
    // A JSON head with `Content-Length`, half of the body, then the connection is closed.
    "drop_json",
    // An event-stream head and half an event (no event id), then the connection is closed.
    "drop_sse",
    // The same after an event with an id and `retry: 50`, so that the client may resume the
    // stream with `GET` and `Last-Event-ID`, which this server refuses (405).
    "drop_sse_resumable",
    // The call is answered with this status.
    "status_500",
    "status_502",
    // With `Retry-After: 1`.
    "status_503",
    // `initialize` (and the `server/discover` probe) are answered with this status.
    "initialize_500",
    "initialize_502",
    "initialize_503",
    // The call is redirected to `/elsewhere`, where a correct server answers.
    "redirect_307",
    "redirect_308",
    // The same with statuses that turn a POST into a GET (the client must not follow).
    "redirect_301",
    "redirect_302",
    "redirect_303",
    // The call is redirected to `/loop/1`, which redirects to `/loop/2`, and so on, forever.
    "redirect_loop",
    // The call is redirected (307) to a second listener of this process, on another port:
    // another origin. There the call is answered with the names of the request headers that
    // arrived, and the values of `Authorization` and `X-Adversary-Secret` if they did.
    "redirect_cross_origin",
    // A response head with one header value of 1 MiB.
    "huge_header_value",
    // A response head with 100 000 headers.
    "many_headers",
    // A response head whose one header value never ends (until the client hangs up).
    "endless_header",
    // Accepts connections and never reads from them.
    "never_read",
    // Never answers the head of a `GET` (the stream for server-initiated messages).
    "stall_get",
    // Answers the call properly, then closes the connection without `Connection: close`.
    "close_after_response",
    // Answers the call, and in the same write a second, unsolicited response: the answer to the
    // next request id, with the text "forged".
    "extra_response",
    // Never answers `DELETE` (the end of the session).
    "stall_delete",
    // Before the call's response, 2000 `ping` requests on its event stream, in one burst: each
    // answer is a `POST` of its own.
    "request_flood",
    // `100 Continue` interim responses, one after the other, until the client hangs up.
    "endless_continue",
    // A JSON body (with chunked encoding) that never ends.
    "endless_json_body",
    // An event stream whose first event never ends.
    "endless_sse_event",
    // Hostile authorization servers (see `oauth.rs`): every MCP request needs a token.
    // Tokens are DPoP-bound, and the call is refused for a new DPoP nonce every time.
    "oauth_dpop_nonce_churn",
    // The token endpoint's access token holds a CR LF and a header line.
    "oauth_token_crlf",
    // The resource metadata has no `resource` and names a second listener (another origin)
    // as the authorization server.
    "oauth_prm_without_resource",
];

/// The protocol version this server speaks.
const PROTOCOL_VERSION: &str = "2025-11-25";
/// The largest request head read: 64 KiB.
const MAX_HEAD: usize = 64 * 1024;
/// The largest request body read: 16 MiB.
const MAX_BODY: usize = 16 * 1024 * 1024;
/// The most bytes the endless modes write before they give up on a client that keeps reading.
const ENDLESS_LIMIT: usize = 1 << 30;

pub(crate) fn run(mode: &str) -> i32 {
    let Some(&mode) = MODES
        .iter()
        .chain(crate::tasks::MODES)
        .chain(crate::skills::MODES)
        .chain(crate::probe::HTTP_MODES)
        .find(|m| **m == mode)
    else {
        eprintln!("unknown http mode {mode:?}; modes: {}", MODES.join(", "));
        return 2;
    };
    let listener = match TcpListener::bind("127.0.0.1:0") {
        Ok(listener) => listener,
        Err(e) => {
            eprintln!("binding 127.0.0.1:0: {e}");
            return 1;
        }
    };
    let port = match listener.local_addr() {
        Ok(addr) => addr.port(),
        Err(e) => {
            eprintln!("local address: {e}");
            return 1;
        }
    };
    if crate::oauth::is_oauth(mode) {
        let foreign = if crate::oauth::needs_foreign_listener(mode) {
            let other = match TcpListener::bind("127.0.0.1:0").and_then(|l| Ok((l.local_addr()?.port(), l))) {
                Ok(other) => other,
                Err(e) => {
                    eprintln!("binding the second listener: {e}");
                    return 1;
                }
            };
            std::thread::spawn(move || {
                for stream in other.1.incoming().flatten() {
                    std::thread::spawn(move || serve(crate::oauth::FOREIGN_AS, stream));
                }
            });
            Some(format!("http://127.0.0.1:{}", other.0))
        } else {
            None
        };
        crate::oauth::set_origins(format!("http://127.0.0.1:{port}"), foreign);
    }
    if mode == "redirect_cross_origin" {
        // The other origin: the same server on another port, which tells what it received.
        let other = match TcpListener::bind("127.0.0.1:0").and_then(|l| Ok((l.local_addr()?.port(), l))) {
            Ok(other) => other,
            Err(e) => {
                eprintln!("binding the second listener: {e}");
                return 1;
            }
        };
        let _ = OTHER_ORIGIN.set(format!("http://127.0.0.1:{}", other.0));
        std::thread::spawn(move || {
            for stream in other.1.incoming().flatten() {
                std::thread::spawn(move || serve(REDIRECT_TARGET, stream));
            }
        });
    }
    let mut stdout = io::stdout().lock();
    if writeln!(stdout, "listening on http://127.0.0.1:{port}/mcp").and_then(|()| stdout.flush()).is_err() {
        return 1;
    }
    drop(stdout);
    // Connections accepted and never read: kept open until the process is killed.
    let mut unread = Vec::new();
    for stream in listener.incoming() {
        let Ok(stream) = stream else { continue };
        if mode == "never_read" {
            unread.push(stream);
            continue;
        }
        std::thread::spawn(move || serve(mode, stream));
    }
    0
}

static SESSIONS: AtomicU64 = AtomicU64::new(0);

/// `redirect_cross_origin`: the origin of the second listener.
static OTHER_ORIGIN: OnceLock<String> = OnceLock::new();

/// The mode of `redirect_cross_origin`'s second listener.
const REDIRECT_TARGET: &str = "redirect_target";

/// JSON-RPC responses the client posted (answers to this server's requests), reported by the
/// `answers_received` tool.
static ANSWERS: AtomicU64 = AtomicU64::new(0);

/// One request, its body read.
pub(crate) struct Request {
    pub(crate) method: String,
    /// The request target (path and query).
    pub(crate) target: String,
    pub(crate) headers: Vec<(String, String)>,
    pub(crate) body: Vec<u8>,
}

impl Request {
    pub(crate) fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }
}

/// What to do with the connection after a request.
pub(crate) enum Next {
    KeepAlive,
    Close,
}

/// Serves the requests of one connection until the client closes it or a mode ends it.
fn serve(mode: &'static str, stream: TcpStream) {
    let _ = stream.set_nodelay(true);
    let Ok(read_half) = stream.try_clone() else { return };
    let mut reader = BufReader::new(read_half);
    let mut writer = stream;
    loop {
        let request = match read_request(&mut reader) {
            Ok(Some(request)) => request,
            Ok(None) => return,
            Err(e) => {
                let body = format!("bad request: {e}");
                let _ = respond(&mut writer, 400, &[("Content-Type", "text/plain")], body.as_bytes());
                return;
            }
        };
        let keep_alive = !request.header("connection").is_some_and(|v| v.eq_ignore_ascii_case("close"));
        match handle(mode, &request, &mut reader, &mut writer) {
            Ok(Next::KeepAlive) if keep_alive => {}
            _ => {
                let _ = writer.shutdown(Shutdown::Both);
                return;
            }
        }
    }
}

// ----- reading requests -----

fn invalid(why: impl Into<String>) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, why.into())
}

/// One line without its line end, charged to `budget`; `None` at EOF before any byte.
fn read_line(reader: &mut impl BufRead, budget: &mut usize) -> io::Result<Option<String>> {
    let mut line = Vec::new();
    let limit = u64::try_from(*budget).unwrap_or(u64::MAX) + 1;
    let read = reader.by_ref().take(limit).read_until(b'\n', &mut line)?;
    if read == 0 {
        return Ok(None);
    }
    if read > *budget {
        return Err(invalid("request head too large"));
    }
    *budget -= read;
    if line.pop() != Some(b'\n') {
        return Err(io::Error::new(io::ErrorKind::UnexpectedEof, "connection closed mid-line"));
    }
    if line.last() == Some(&b'\r') {
        line.pop();
    }
    String::from_utf8(line).map(Some).map_err(|_| invalid("request head is not UTF-8"))
}

/// Reads one request; `None` when the client closed the connection between requests.
fn read_request(reader: &mut impl BufRead) -> io::Result<Option<Request>> {
    let mut budget = MAX_HEAD;
    let line = loop {
        match read_line(reader, &mut budget)? {
            None => return Ok(None),
            Some(line) if line.is_empty() => continue,
            Some(line) => break line,
        }
    };
    let mut parts = line.split(' ');
    let (Some(method), Some(target), Some(version)) = (parts.next(), parts.next(), parts.next()) else {
        return Err(invalid(format!("bad request line {line:?}")));
    };
    if !version.starts_with("HTTP/1.") {
        return Err(invalid(format!("unsupported version {version:?}")));
    }
    let (method, target) = (method.to_owned(), target.to_owned());
    let mut headers = Vec::new();
    loop {
        let Some(line) = read_line(reader, &mut budget)? else {
            return Err(io::Error::new(io::ErrorKind::UnexpectedEof, "connection closed in the head"));
        };
        if line.is_empty() {
            break;
        }
        let Some((name, value)) = line.split_once(':') else {
            return Err(invalid(format!("bad header line {line:?}")));
        };
        headers.push((name.trim().to_owned(), value.trim().to_owned()));
    }
    let mut request = Request { method, target, headers, body: Vec::new() };
    let chunked = request.header("transfer-encoding").is_some_and(|v| {
        v.rsplit(',').next().is_some_and(|last| last.trim().eq_ignore_ascii_case("chunked"))
    });
    if chunked {
        request.body = read_chunked(reader)?;
    } else if let Some(length) = request.header("content-length") {
        let length: usize = length.parse().map_err(|_| invalid("bad Content-Length"))?;
        if length > MAX_BODY {
            return Err(invalid("request body too large"));
        }
        let mut body = vec![0; length];
        reader.read_exact(&mut body)?;
        request.body = body;
    }
    Ok(Some(request))
}

/// A chunked request body, decoded; trailers are read and ignored.
fn read_chunked(reader: &mut impl BufRead) -> io::Result<Vec<u8>> {
    let mut body = Vec::new();
    loop {
        let mut budget = 1024;
        let line = read_line(reader, &mut budget)?.ok_or_else(|| invalid("EOF in a chunked body"))?;
        let size = line.split(';').next().unwrap_or("").trim();
        let size =
            usize::from_str_radix(size, 16).map_err(|_| invalid(format!("bad chunk size {size:?}")))?;
        if size == 0 {
            let mut budget = MAX_HEAD;
            loop {
                match read_line(reader, &mut budget)? {
                    Some(line) if !line.is_empty() => continue,
                    _ => return Ok(body),
                }
            }
        }
        if body.len() + size > MAX_BODY {
            return Err(invalid("request body too large"));
        }
        let start = body.len();
        body.resize(start + size, 0);
        reader.read_exact(&mut body[start..])?;
        let mut crlf = [0; 2];
        reader.read_exact(&mut crlf)?;
        if &crlf != b"\r\n" {
            return Err(invalid("chunk not followed by CRLF"));
        }
    }
}

// ----- writing responses -----

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        202 => "Accepted",
        301 => "Moved Permanently",
        302 => "Found",
        303 => "See Other",
        307 => "Temporary Redirect",
        308 => "Permanent Redirect",
        400 => "Bad Request",
        401 => "Unauthorized",
        404 => "Not Found",
        405 => "Method Not Allowed",
        500 => "Internal Server Error",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        _ => "Unknown",
    }
}

/// A response head; `Content-Length` is the caller's business.
fn head(status: u16, headers: &[(&str, &str)]) -> Vec<u8> {
    let mut out = format!("HTTP/1.1 {status} {}\r\n", reason(status)).into_bytes();
    for (name, value) in headers {
        out.extend_from_slice(format!("{name}: {value}\r\n").as_bytes());
    }
    out
}

/// A whole response with a `Content-Length` body, written at once.
pub(crate) fn respond(
    writer: &mut impl Write,
    status: u16,
    headers: &[(&str, &str)],
    body: &[u8],
) -> io::Result<()> {
    let mut out = head(status, headers);
    out.extend_from_slice(format!("Content-Length: {}\r\n\r\n", body.len()).as_bytes());
    out.extend_from_slice(body);
    writer.write_all(&out)?;
    writer.flush()
}

pub(crate) fn respond_json(
    writer: &mut impl Write,
    message: &Value,
    extra: &[(&str, &str)],
) -> io::Result<Next> {
    let body = serde_json::to_vec(message).unwrap_or_default();
    let mut headers = vec![("Content-Type", "application/json")];
    headers.extend_from_slice(extra);
    respond(writer, 200, &headers, &body)?;
    Ok(Next::KeepAlive)
}

/// Waits until the client closes the connection (or it breaks), reading and dropping whatever
/// comes: a stalled response holds its connection without answering.
fn wait_for_hang_up(reader: &mut impl Read) {
    let mut buf = [0; 4096];
    while matches!(reader.read(&mut buf), Ok(n) if n > 0) {}
}

// ----- the MCP server -----

fn result(id: &Value, result: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "result": result})
}

fn error(id: &Value, code: i64, message: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
}

fn handle(
    mode: &'static str,
    request: &Request,
    reader: &mut impl Read,
    writer: &mut TcpStream,
) -> io::Result<Next> {
    if let Some(next) = crate::oauth::intercept(mode, request, writer)? {
        return Ok(next);
    }
    if let Some(next) = crate::tasks::intercept_http(mode, request, writer)? {
        return Ok(next);
    }
    match request.method.as_str() {
        "POST" => {}
        "GET" if mode == "stall_get" => {
            wait_for_hang_up(reader);
            return Ok(Next::Close);
        }
        "DELETE" if mode == "stall_delete" => {
            wait_for_hang_up(reader);
            return Ok(Next::Close);
        }
        "DELETE" => {
            respond(writer, 200, &[], b"")?;
            return Ok(Next::KeepAlive);
        }
        _ => {
            respond(writer, 405, &[("Allow", "POST, DELETE")], b"")?;
            return Ok(Next::KeepAlive);
        }
    }
    let Ok(message) = serde_json::from_slice::<Value>(&request.body) else {
        let body = serde_json::to_vec(&error(&Value::Null, -32700, "parse error")).unwrap_or_default();
        respond(writer, 400, &[("Content-Type", "application/json")], &body)?;
        return Ok(Next::KeepAlive);
    };
    let method = message.get("method").and_then(Value::as_str);
    let (Some(method), Some(id)) = (method, message.get("id")) else {
        // A notification or a response.
        if method.is_none() {
            ANSWERS.fetch_add(1, Ordering::Relaxed);
        }
        respond(writer, 202, &[], b"")?;
        return Ok(Next::KeepAlive);
    };
    if let Some(next) = crate::probe::http(mode, method, id, &message, reader, writer)? {
        return Ok(next);
    }
    if let (Some(status), "initialize" | "server/discover") = (handshake_status(mode), method) {
        return fail_with_status(writer, status);
    }
    let params = message.get("params").unwrap_or(&Value::Null);
    if let Some(answer) = crate::skills::answer(mode, id, method, params) {
        respond(writer, 200, &[("Content-Type", "application/json")], answer.as_bytes())?;
        return Ok(Next::KeepAlive);
    }
    match method {
        "initialize" => {
            let session = format!("adversary-{}", SESSIONS.fetch_add(1, Ordering::Relaxed));
            let mut init = json!({
                "protocolVersion": PROTOCOL_VERSION,
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "mcp-adversary", "version": env!("CARGO_PKG_VERSION")},
            });
            crate::skills::declare(mode, &mut init);
            respond_json(writer, &result(id, init), &[("Mcp-Session-Id", &session)])
        }
        "ping" => respond_json(writer, &result(id, json!({})), &[]),
        "tools/list" => {
            let schema = json!({"type": "object"});
            let tools = json!({"tools": [
                {"name": "echo", "inputSchema": {"type": "object", "properties": {"message": {"type": "string"}}}},
                {"name": mode, "description": "misbehaves", "inputSchema": schema},
            ]});
            respond_json(writer, &result(id, tools), &[])
        }
        "tools/call" => {
            let name = message.pointer("/params/name").and_then(Value::as_str).unwrap_or("");
            if name == "answers_received" {
                let count = ANSWERS.load(Ordering::Relaxed).to_string();
                let content = json!({"content": [{"type": "text", "text": count}]});
                respond_json(writer, &result(id, content), &[])
            } else if name == "echo" {
                let text = message.pointer("/params/arguments/message").and_then(Value::as_str).unwrap_or("");
                let content = json!({"content": [{"type": "text", "text": text}]});
                respond_json(writer, &result(id, content), &[])
            } else if name == mode && mode.starts_with("redirect_") && request.target == "/elsewhere" {
                // Where the redirect points: the call is answered, so that a client that
                // followed it would succeed.
                respond_json(
                    writer,
                    &result(id, json!({"content": [{"type": "text", "text": "redirected"}]})),
                    &[],
                )
            } else if mode == REDIRECT_TARGET && name == "redirect_cross_origin" {
                // What reached the other origin.
                let names: Vec<String> =
                    request.headers.iter().map(|(n, _)| n.to_ascii_lowercase()).collect();
                let report = json!({
                    "headers": names,
                    "authorization": request.header("authorization"),
                    "secret": request.header("x-adversary-secret"),
                    "target": request.target,
                });
                respond_json(
                    writer,
                    &result(id, json!({"content": [{"type": "text", "text": report.to_string()}]})),
                    &[],
                )
            } else if name == mode && mode == "redirect_loop" {
                let next = request
                    .target
                    .strip_prefix("/loop/")
                    .and_then(|n| n.parse::<u64>().ok())
                    .map_or(1, |n| n + 1);
                let location = format!("/loop/{next}");
                respond(writer, 307, &[("Location", &location)], b"")?;
                Ok(Next::KeepAlive)
            } else if name == mode && mode == "redirect_cross_origin" {
                let location =
                    format!("{}/mcp", OTHER_ORIGIN.get().map_or("http://127.0.0.1:1", String::as_str));
                respond(writer, 307, &[("Location", &location)], b"")?;
                Ok(Next::KeepAlive)
            } else if name == mode && mode != "none" {
                let token = message.pointer("/params/_meta/progressToken");
                misbehave(mode, id, token, reader, writer)
            } else {
                respond_json(writer, &error(id, -32602, &format!("unknown tool {name:?}")), &[])
            }
        }
        _ => respond_json(writer, &error(id, -32601, "method not found"), &[]),
    }
}

/// The status the `initialize_*` modes answer the handshake with.
fn handshake_status(mode: &str) -> Option<u16> {
    mode.strip_prefix("initialize_").and_then(|status| status.parse().ok())
}

fn fail_with_status(writer: &mut impl Write, status: u16) -> io::Result<Next> {
    let body = format!("mcp-adversary: {} (on purpose)", reason(status));
    let mut headers = vec![("Content-Type", "text/plain")];
    if status == 503 {
        headers.push(("Retry-After", "1"));
    }
    respond(writer, status, &headers, body.as_bytes())?;
    Ok(Next::KeepAlive)
}

/// The response the call would have had: a text result.
fn proper_response(id: &Value) -> Vec<u8> {
    let content = json!({"content": [{"type": "text", "text": "the tool's result"}]});
    serde_json::to_vec(&result(id, content)).unwrap_or_default()
}

/// Half an event of an event stream, as one HTTP chunk: the event is never terminated.
fn partial_event_chunk(id: &Value) -> Vec<u8> {
    let body = String::from_utf8_lossy(&proper_response(id)).into_owned();
    let event = format!("event: message\ndata: {}", &body[..body.len() / 2]);
    format!("{:x}\r\n{event}\r\n", event.len()).into_bytes()
}

const SSE_HEAD: &[(&str, &str)] =
    &[("Content-Type", "text/event-stream"), ("Cache-Control", "no-cache"), ("Transfer-Encoding", "chunked")];

/// Answers the call to the tool named after `mode` the way `mode` says.
fn misbehave(
    mode: &str,
    id: &Value,
    progress_token: Option<&Value>,
    reader: &mut impl Read,
    writer: &mut TcpStream,
) -> io::Result<Next> {
    match mode {
        "stall_headers" => {
            wait_for_hang_up(reader);
            Ok(Next::Close)
        }
        "stall_body_json" | "drop_json" => {
            let body = proper_response(id);
            let length = body.len().to_string();
            let mut out = head(200, &[("Content-Type", "application/json"), ("Content-Length", &length)]);
            out.extend_from_slice(b"\r\n");
            out.extend_from_slice(&body[..body.len() / 2]);
            writer.write_all(&out)?;
            writer.flush()?;
            if mode == "stall_body_json" {
                wait_for_hang_up(reader);
            }
            Ok(Next::Close)
        }
        "stall_body_sse" | "drop_sse" | "drop_sse_resumable" => {
            let mut out = head(200, SSE_HEAD);
            out.extend_from_slice(b"\r\n");
            if mode == "drop_sse_resumable" {
                let priming = "id: adversary-1\nretry: 50\ndata:\n\n";
                out.extend_from_slice(format!("{:x}\r\n{priming}\r\n", priming.len()).as_bytes());
            }
            out.extend_from_slice(&partial_event_chunk(id));
            writer.write_all(&out)?;
            writer.flush()?;
            if mode == "stall_body_sse" {
                wait_for_hang_up(reader);
            }
            Ok(Next::Close)
        }
        "keep_alive_sse" | "endless_progress" => {
            let mut out = head(200, SSE_HEAD);
            out.extend_from_slice(b"\r\n");
            writer.write_all(&out)?;
            let token = progress_token.cloned().unwrap_or(Value::Null);
            // Ends when the client hangs up (the write fails).
            for n in 1.. {
                let event = if mode == "keep_alive_sse" {
                    ": keep-alive\n\n".to_owned()
                } else {
                    let params = json!({"progressToken": token, "progress": n});
                    let message =
                        json!({"jsonrpc": "2.0", "method": "notifications/progress", "params": params});
                    format!("event: message\ndata: {message}\n\n")
                };
                writer.write_all(format!("{:x}\r\n{event}\r\n", event.len()).as_bytes())?;
                writer.flush()?;
                std::thread::sleep(Duration::from_millis(50));
            }
            Ok(Next::Close)
        }
        "html_body" => {
            let page = b"<!DOCTYPE html><html><body><h1>Welcome</h1></body></html>";
            respond(writer, 200, &[("Content-Type", "text/html; charset=utf-8")], page)?;
            Ok(Next::KeepAlive)
        }
        "invalid_json_body" => {
            respond(writer, 200, &[("Content-Type", "application/json")], b"this is {not JSON")?;
            Ok(Next::KeepAlive)
        }
        "no_content_type" => {
            respond(writer, 200, &[], &proper_response(id))?;
            Ok(Next::KeepAlive)
        }
        "status_500" | "status_502" | "status_503" => {
            let status = mode.trim_start_matches("status_").parse().unwrap_or(500);
            fail_with_status(writer, status)
        }
        "redirect_301" | "redirect_302" | "redirect_303" | "redirect_307" | "redirect_308" => {
            let status = mode.trim_start_matches("redirect_").parse().unwrap_or(307);
            respond(writer, status, &[("Location", "/elsewhere")], b"moved to /elsewhere")?;
            Ok(Next::KeepAlive)
        }
        "huge_header_value" => {
            let value = "a".repeat(1024 * 1024);
            send_head_then_response(writer, id, &head(200, &[("X-Huge", &value)]))
        }
        "many_headers" => {
            let mut out = head(200, &[]);
            for i in 0..100_000 {
                out.extend_from_slice(format!("X-Pad-{i}: {i}\r\n").as_bytes());
            }
            send_head_then_response(writer, id, &out)
        }
        "extra_response" => {
            let mut out = Vec::new();
            respond(&mut out, 200, &[("Content-Type", "application/json")], &proper_response(id))?;
            let next = json!(id.as_i64().unwrap_or(0) + 1);
            let content = json!({"content": [{"type": "text", "text": "forged"}]});
            let forged = serde_json::to_vec(&result(&next, content)).unwrap_or_default();
            respond(&mut out, 200, &[("Content-Type", "application/json")], &forged)?;
            writer.write_all(&out)?;
            writer.flush()?;
            Ok(Next::KeepAlive)
        }
        "request_flood" => {
            let mut events = String::new();
            for n in 0..2000 {
                let ping = json!({"jsonrpc": "2.0", "id": format!("flood-{n}"), "method": "ping"});
                events.push_str(&format!("event: message\ndata: {ping}\n\n"));
            }
            let response = String::from_utf8_lossy(&proper_response(id)).into_owned();
            events.push_str(&format!("event: message\ndata: {response}\n\n"));
            let mut out = head(200, SSE_HEAD);
            out.extend_from_slice(format!("\r\n{:x}\r\n{events}\r\n0\r\n\r\n", events.len()).as_bytes());
            writer.write_all(&out)?;
            writer.flush()?;
            Ok(Next::KeepAlive)
        }
        "endless_continue" => {
            for _ in 0..ENDLESS_LIMIT / 32 {
                writer.write_all(b"HTTP/1.1 100 Continue\r\n\r\n")?;
            }
            Ok(Next::Close)
        }
        "close_after_response" => {
            let body = proper_response(id);
            respond(writer, 200, &[("Content-Type", "application/json")], &body)?;
            Ok(Next::Close)
        }
        "endless_json_body" | "endless_sse_event" => {
            let (content_type, start) = if mode == "endless_json_body" {
                ("application/json", format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{"padding":""#))
            } else {
                ("text/event-stream", "event: message\ndata: ".to_owned())
            };
            let mut out = head(200, &[("Content-Type", content_type), ("Transfer-Encoding", "chunked")]);
            out.extend_from_slice(format!("\r\n{:x}\r\n{start}\r\n", start.len()).as_bytes());
            writer.write_all(&out)?;
            let block = [b'a'; 64 * 1024];
            let chunk = [format!("{:x}\r\n", block.len()).as_bytes(), &block, b"\r\n"].concat();
            let mut written = 0;
            while written < ENDLESS_LIMIT {
                writer.write_all(&chunk)?;
                written += block.len();
            }
            Ok(Next::Close)
        }
        "endless_header" => {
            writer.write_all(b"HTTP/1.1 200 OK\r\nX-Endless: ")?;
            let block = [b'a'; 64 * 1024];
            let mut written = 0;
            // Ends when the client hangs up (the write fails) or at the limit.
            while written < ENDLESS_LIMIT {
                writer.write_all(&block)?;
                written += block.len();
            }
            Ok(Next::Close)
        }
        _ => {
            // Modes that misbehave elsewhere answer their tool like `echo` with no message.
            respond_json(writer, &result(id, json!({"content": []})), &[])
        }
    }
}

/// Writes `head` (a status line and headers, unterminated), then the rest of a proper JSON
/// response, if the client is still reading.
fn send_head_then_response(writer: &mut TcpStream, id: &Value, head: &[u8]) -> io::Result<Next> {
    // A client that gave up closes the connection: writing then fails, which ends this one.
    let _ = writer.set_write_timeout(Some(Duration::from_secs(10)));
    writer.write_all(head)?;
    let body = proper_response(id);
    let rest = format!("Content-Type: application/json\r\nContent-Length: {}\r\n\r\n", body.len());
    writer.write_all(rest.as_bytes())?;
    writer.write_all(&body)?;
    writer.flush()?;
    Ok(Next::Close)
}
