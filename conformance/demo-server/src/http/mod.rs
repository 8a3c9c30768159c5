//! Streamable HTTP: one endpoint (`/mcp`), a thread per connection, both protocol eras.
//!
//! - 2026-07-28 requests are stateless: every one is handled by one shared [`Server`] (modern
//!   from the start) with its own response [`Exchange`], whatever connection it came on, so
//!   `subscriptions/listen` streams see the `notify_changes` of every request.
//! - `initialize` creates a legacy session: its own [`Server`], whose session-level messages
//!   go through a [`SessionRouter`] (standalone GET stream, else a request stream).
//!
//! - In OAuth mode ([`OAuth`]) every `/mcp` request needs a bearer token first, and the
//!   listener also serves the authorization server's paths.
//!
//! See the crate documentation ("HTTP", "OAuth") for the rules as a client sees them.

mod checks;
mod oauth;
mod wire;

use std::collections::HashMap;
use std::hash::{BuildHasher, Hasher};
use std::io::{self, BufReader, Read};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::thread;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde_json::{Map, Value};

use self::oauth::OAuth;
use self::wire::{EventStream, ReadError, Request};
use super::exchange::{Exchange, Next};
use super::jsonrpc::{
    self, HEADER_MISMATCH, INVALID_REQUEST, Incoming, METHOD_NOT_FOUND, MISSING_REQUIRED_CLIENT_CAPABILITY,
    PARSE_ERROR, RpcError, UNSUPPORTED_PROTOCOL_VERSION,
};
use super::modern::{self, Era, Listeners, META_PROTOCOL_VERSION, MODERN_VERSIONS};
use super::options::Options;
use super::output::{Discard, Sink};
use super::server::{Reply, Server};

/// How often a waiting connection thread checks whether its client went away.
const POLL: Duration = Duration::from_millis(50);
/// How long an event stream may stay silent before it gets an SSE comment.
const KEEPALIVE: Duration = Duration::from_secs(15);
/// The only path served.
const ENDPOINT: &str = "/mcp";
/// The generic JSON-RPC error code of transport-level failures.
const TRANSPORT_ERROR: i64 = -32000;
/// The JSON-RPC error code of "session not found" (as the MCP SDKs use it).
const SESSION_NOT_FOUND: i64 = -32001;
/// The first legacy version whose requests carry `MCP-Protocol-Version`.
const VERSION_HEADER_SINCE: &str = "2025-06-18";

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Serves Streamable HTTP on `listener` forever (see [`crate::serve_http`]).
pub(crate) fn serve(listener: TcpListener, options: Options) -> io::Result<()> {
    listener.set_nonblocking(false)?;
    let oauth = match &options.oauth {
        Some(settings) => {
            let oauth = OAuth::new(listener.local_addr()?, settings);
            eprintln!("demo-server: OAuth mode, issuer {}", oauth.issuer());
            Some(oauth)
        }
        None => None,
    };
    let listeners = Arc::new(Listeners::default());
    let modern = Server::with_sink(options.clone(), Arc::new(Discard), Arc::clone(&listeners), Era::Modern);
    let state = Arc::new(HttpState {
        options,
        oauth,
        listeners,
        modern: Arc::new(modern),
        sessions: Mutex::new(HashMap::new()),
        sessions_created: AtomicU64::new(0),
    });
    loop {
        match listener.accept() {
            Ok((stream, _)) => {
                let state = Arc::clone(&state);
                let spawned = thread::Builder::new()
                    .name("http connection".into())
                    .spawn(move || state.connection(stream));
                if let Err(error) = spawned {
                    eprintln!("demo-server: cannot spawn a connection thread: {error}");
                }
            }
            Err(error) => {
                eprintln!("demo-server: accept failed: {error}");
                thread::sleep(Duration::from_millis(10));
            }
        }
    }
}

/// Everything the HTTP server shares between connections.
struct HttpState {
    options: Options,
    /// OAuth mode: the bearer checks of `/mcp`, and the authorization server.
    oauth: Option<OAuth>,
    /// The `subscriptions/listen` streams, shared by the modern server and every session.
    listeners: Arc<Listeners>,
    /// The stateless 2026-07-28 server.
    modern: Arc<Server>,
    /// Live legacy sessions by id.
    sessions: Mutex<HashMap<String, Arc<Session>>>,
    sessions_created: AtomicU64,
}

/// One legacy (`initialize`) session.
struct Session {
    /// The negotiated protocol version.
    version: String,
    server: Arc<Server>,
    router: Arc<SessionRouter>,
}

impl Session {
    /// From 2025-06-18 on, a present `MCP-Protocol-Version` must be the negotiated version.
    fn check_version(&self, request: &Request) -> Result<(), String> {
        if self.version.as_str() < VERSION_HEADER_SINCE {
            return Ok(());
        }
        match request.header("mcp-protocol-version") {
            Some(sent) if sent != self.version.as_bytes() => Err(format!(
                "Bad Request: MCP-Protocol-Version {:?} does not match the negotiated version {}",
                String::from_utf8_lossy(sent),
                self.version
            )),
            _ => Ok(()),
        }
    }
}

/// The session-level messages of a legacy session (server→client requests, list-changed,
/// resource updates): to the standalone GET stream if open, else to the stream of the request
/// that caused them, else to the newest request stream still open in the session, else dropped.
#[derive(Debug)]
struct SessionRouter {
    id: String,
    standalone: Mutex<Option<Arc<Exchange>>>,
    /// The response streams of the session's requests in flight, oldest first.
    requests: Mutex<Vec<Arc<Exchange>>>,
}

impl SessionRouter {
    /// Opens the standalone stream, unless one is open already.
    fn open_standalone(&self) -> Option<Arc<Exchange>> {
        let mut slot = lock(&self.standalone);
        if slot.as_ref().is_some_and(|open| open.is_open()) {
            return None;
        }
        let exchange = Exchange::new();
        *slot = Some(Arc::clone(&exchange));
        Some(exchange)
    }

    /// Forgets the standalone stream `exchange` (its client went away or it ended).
    fn release(&self, exchange: &Arc<Exchange>) {
        let mut slot = lock(&self.standalone);
        if slot.as_ref().is_some_and(|open| Arc::ptr_eq(open, exchange)) {
            *slot = None;
        }
    }

    /// Ends the standalone stream (the session is deleted).
    fn end(&self) {
        if let Some(exchange) = lock(&self.standalone).take() {
            exchange.end();
        }
    }
}

impl Sink for SessionRouter {
    fn send(&self, message: &Value, origin: Option<&Arc<Exchange>>) {
        let standalone = lock(&self.standalone).clone();
        if standalone.is_some_and(|stream| stream.send(message))
            || origin.is_some_and(|stream| stream.send(message))
        {
            return;
        }
        let requests = lock(&self.requests).clone();
        if requests.iter().rev().any(|stream| stream.send(message)) {
            return;
        }
        let what = message.get("method").and_then(Value::as_str).unwrap_or("a message");
        eprintln!("demo-server: session {}: no open stream for {what}; dropped", self.id);
    }
}

/// Registers a request stream in its session's router while the request is in flight.
struct Tracked<'a> {
    router: &'a SessionRouter,
    exchange: Arc<Exchange>,
}

impl<'a> Tracked<'a> {
    fn new(router: &'a SessionRouter, exchange: &Arc<Exchange>) -> Self {
        lock(&router.requests).push(Arc::clone(exchange));
        Self { router, exchange: Arc::clone(exchange) }
    }
}

impl Drop for Tracked<'_> {
    fn drop(&mut self) {
        lock(&self.router.requests).retain(|open| !Arc::ptr_eq(open, &self.exchange));
    }
}

/// What a response stream belongs to.
enum Mode<'a> {
    /// A 2026-07-28 request: the HTTP status follows the error code; a client that goes away
    /// cancels it.
    Modern(&'a Value),
    /// A request of a legacy session (status 200; going away is not a cancellation).
    Legacy,
    /// The standalone GET stream of a legacy session (an event stream from the start).
    Standalone(&'a SessionRouter),
}

/// Whether the connection carries another request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Flow {
    KeepAlive,
    Close,
}

impl Flow {
    fn after(close: bool) -> Self {
        if close { Self::Close } else { Self::KeepAlive }
    }
}

/// One client connection.
struct Connection {
    reader: BufReader<TcpStream>,
    writer: TcpStream,
}

impl Connection {
    /// Whether the client closed (or reset) the connection, without consuming anything.
    fn client_gone(&self) -> bool {
        if !self.reader.buffer().is_empty() {
            return false;
        }
        if self.writer.set_nonblocking(true).is_err() {
            return true;
        }
        let mut byte = [0_u8; 1];
        let gone = match self.writer.peek(&mut byte) {
            Ok(0) => true,
            Ok(_) => false,
            Err(error) => !matches!(error.kind(), io::ErrorKind::WouldBlock | io::ErrorKind::Interrupted),
        };
        let _ = self.writer.set_nonblocking(false);
        gone
    }

    /// Closes the connection gracefully: stop sending, then drain (briefly) what the client is
    /// still sending so that the response is not lost to a reset.
    fn close(self) {
        let stream = self.writer;
        let _ = stream.shutdown(Shutdown::Write);
        let _ = stream.set_read_timeout(Some(Duration::from_millis(100)));
        let deadline = Instant::now() + Duration::from_secs(2);
        let mut buffer = [0_u8; 16 * 1024];
        while Instant::now() < deadline {
            match (&stream).read(&mut buffer) {
                Ok(1..) => {}
                _ => break,
            }
        }
    }
}

/// A JSON-RPC error body for a transport-level failure.
fn error_body(id: &Value, code: i64, message: &str) -> Value {
    jsonrpc::failure(id, &RpcError::new(code, message))
}

/// The HTTP status of a 2026-07-28 response sent as JSON.
fn modern_status(response: &Value) -> u16 {
    match response.pointer("/error/code").and_then(Value::as_i64) {
        Some(METHOD_NOT_FOUND) => 404,
        Some(HEADER_MISMATCH | MISSING_REQUIRED_CLIENT_CAPABILITY | UNSUPPORTED_PROTOCOL_VERSION) => 400,
        _ => 200,
    }
}

/// Whether a message needs an answer (a request, or an invalid message that gets an error).
fn answered(message: &Value) -> bool {
    matches!(jsonrpc::classify(message.clone()), Incoming::Request { .. } | Incoming::Invalid(Some(_)))
}

/// Whether the params carry the 2026-07-28 per-request protocol version key.
fn has_meta_version(params: &Map<String, Value>) -> bool {
    params
        .get("_meta")
        .and_then(Value::as_object)
        .is_some_and(|meta| meta.contains_key(META_PROTOCOL_VERSION))
}

impl HttpState {
    /// Serves one connection until it closes.
    fn connection(&self, stream: TcpStream) {
        let writer = match stream.try_clone() {
            Ok(writer) => writer,
            Err(error) => {
                eprintln!("demo-server: cannot clone a connection: {error}");
                return;
            }
        };
        let _ = stream.set_nodelay(true);
        let mut connection = Connection { reader: BufReader::new(stream), writer };
        loop {
            let request = match wire::read_request(&mut connection.reader, &mut connection.writer) {
                Ok(request) => request,
                Err(ReadError::Closed) => return,
                Err(ReadError::Io(error)) => {
                    eprintln!("demo-server: connection ended in a request: {error}");
                    return;
                }
                Err(ReadError::Reject(status, message)) => {
                    eprintln!("demo-server: HTTP {status}: {message}");
                    let body = error_body(&Value::Null, TRANSPORT_ERROR, &message);
                    let _ = wire::write_json(&mut connection.writer, status, &[], &body, true);
                    connection.close();
                    return;
                }
            };
            let close = !request.keep_alive();
            match self.respond(&mut connection, &request, close) {
                Ok(Flow::KeepAlive) => {}
                Ok(Flow::Close) => return connection.close(),
                Err(_) => return,
            }
        }
    }

    /// Answers one request.
    fn respond(&self, connection: &mut Connection, request: &Request, close: bool) -> io::Result<Flow> {
        let out = &mut connection.writer;
        let oauth_path = self.oauth.is_some() && OAuth::serves(request.path());
        if request.path() != ENDPOINT && !oauth_path {
            let body = error_body(&Value::Null, TRANSPORT_ERROR, "Not Found: the MCP endpoint is /mcp");
            wire::write_json(out, 404, &[], &body, close)?;
            return Ok(Flow::after(close));
        }
        if let Some(origin) = request.header("origin").filter(|origin| !checks::origin_allowed(origin)) {
            let message = format!("Forbidden: Origin {:?} is not allowed", String::from_utf8_lossy(origin));
            wire::write_json(out, 403, &[], &error_body(&Value::Null, TRANSPORT_ERROR, &message), close)?;
            return Ok(Flow::after(close));
        }
        if let Some(oauth) = &self.oauth {
            let refusal = if oauth_path { Some(oauth.endpoint(request)) } else { oauth.guard(request) };
            if let Some(answer) = refusal {
                answer.write(out, close)?;
                return Ok(Flow::after(close));
            }
        }
        match request.method.as_str() {
            "POST" => self.post(connection, request, close),
            "GET" | "DELETE" => self.session_method(connection, request, close),
            other => {
                let message = format!("Method Not Allowed: {other}");
                let body = error_body(&Value::Null, TRANSPORT_ERROR, &message);
                wire::write_json(out, 405, &[("Allow", "GET, POST, DELETE")], &body, close)?;
                Ok(Flow::after(close))
            }
        }
    }

    /// A POST: routed to `initialize`, the modern server or a legacy session.
    fn post(&self, connection: &mut Connection, request: &Request, close: bool) -> io::Result<Flow> {
        let value: Value = match serde_json::from_slice(&request.body) {
            Ok(value) => value,
            Err(error) => {
                let body = error_body(&Value::Null, PARSE_ERROR, &format!("Parse error: {error}"));
                wire::write_json(&mut connection.writer, 400, &[], &body, close)?;
                return Ok(Flow::after(close));
            }
        };
        let session = request.header_text("mcp-session-id");
        if !value.is_array() {
            let incoming = jsonrpc::classify(value.clone());
            let modern = match &incoming {
                Incoming::Request { method, .. } if method == "initialize" => {
                    return self.initialize(connection, value, close);
                }
                // Before 2026-07-28 everything needs a session, as below.
                _ if self.options.legacy_only => false,
                Incoming::Request { method, params, .. } => {
                    has_meta_version(params)
                        || method == "server/discover"
                        || (session.is_none() && self.modern_version_header(request))
                }
                _ => session.is_none(),
            };
            if modern {
                return self.modern_post(connection, request, incoming, value, close);
            }
        }
        match session {
            Some(id) => self.legacy_post(connection, request, &id, value, close),
            None => {
                let body = error_body(&Value::Null, TRANSPORT_ERROR, "Bad Request: missing Mcp-Session-Id");
                wire::write_json(&mut connection.writer, 400, &[], &body, close)?;
                Ok(Flow::after(close))
            }
        }
    }

    /// Whether `MCP-Protocol-Version` names a 2026-07-28-style version.
    fn modern_version_header(&self, request: &Request) -> bool {
        let version = request.header("mcp-protocol-version").and_then(checks::header_value);
        version.is_some_and(|version| MODERN_VERSIONS.contains(&version.as_str()))
    }

    /// A 2026-07-28 POST: header checks, `_meta` checks, then the shared modern server.
    fn modern_post(
        &self,
        connection: &mut Connection,
        request: &Request,
        incoming: Incoming,
        value: Value,
        close: bool,
    ) -> io::Result<Flow> {
        let out = &mut connection.writer;
        let (id, method, params) = match incoming {
            Incoming::Request { id, method, params } => (id, method, params),
            Incoming::Notification { .. } | Incoming::Response { .. } => {
                self.modern.handle_value(value, Reply::Line);
                wire::write_response(out, 202, &[], None, b"", close)?;
                return Ok(Flow::after(close));
            }
            Incoming::Invalid(error) => {
                let body =
                    error.unwrap_or_else(|| error_body(&Value::Null, INVALID_REQUEST, "Invalid Request"));
                wire::write_json(out, 400, &[], &body, close)?;
                return Ok(Flow::after(close));
            }
        };
        let checked =
            checks::modern_headers(request, &method, &params).map_err(|error| (400, error)).and_then(|()| {
                modern::check_request(&method, &params).map_err(|error| {
                    let status = if error.code == METHOD_NOT_FOUND { 404 } else { 400 };
                    (status, error)
                })
            });
        if let Err((status, error)) = checked {
            wire::write_json(out, status, &[], &jsonrpc::failure(&id, &error), close)?;
            return Ok(Flow::after(close));
        }
        let exchange = Exchange::new();
        self.modern.handle_value(value, Reply::Stream(Arc::clone(&exchange)));
        self.stream_out(connection, &exchange, &Mode::Modern(&id), request.http10, close)
    }

    /// `initialize`: a new legacy session, whose id comes back in `Mcp-Session-Id`.
    fn initialize(&self, connection: &mut Connection, value: Value, close: bool) -> io::Result<Flow> {
        let id = self.new_session_id();
        let router = Arc::new(SessionRouter {
            id: id.clone(),
            standalone: Mutex::new(None),
            requests: Mutex::new(Vec::new()),
        });
        let sink: Arc<dyn Sink> = Arc::clone(&router) as Arc<dyn Sink>;
        let server = Arc::new(Server::with_sink(
            self.options.clone(),
            sink,
            Arc::clone(&self.listeners),
            Era::Unknown,
        ));
        let exchange = Exchange::new();
        // `initialize` is answered inline: the response is there when this returns.
        server.handle_value(value, Reply::Stream(Arc::clone(&exchange)));
        let out = &mut connection.writer;
        let Next::Message(response, _) = exchange.next(Duration::ZERO) else {
            let body = error_body(&Value::Null, TRANSPORT_ERROR, "initialize was not answered");
            wire::write_json(out, 500, &[], &body, close)?;
            return Ok(Flow::after(close));
        };
        let Some(version) = response.pointer("/result/protocolVersion").and_then(Value::as_str) else {
            wire::write_json(out, 400, &[], &response, close)?;
            return Ok(Flow::after(close));
        };
        let session = Session { version: version.to_owned(), server, router };
        lock(&self.sessions).insert(id.clone(), Arc::new(session));
        eprintln!("demo-server: session {id} opened ({version})");
        wire::write_json(out, 200, &[("Mcp-Session-Id", &id)], &response, close)?;
        Ok(Flow::after(close))
    }

    /// An opaque, unguessable-enough session id: a counter and two randomly keyed hashes of it,
    /// the time and the process id (visible ASCII).
    fn new_session_id(&self) -> String {
        let count = self.sessions_created.fetch_add(1, Ordering::Relaxed) + 1;
        let nanos = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |elapsed| elapsed.as_nanos());
        let mut first = std::collections::hash_map::RandomState::new().build_hasher();
        first.write_u64(count);
        first.write_u128(nanos);
        first.write_u32(std::process::id());
        let first = first.finish();
        let mut second = std::collections::hash_map::RandomState::new().build_hasher();
        second.write_u64(first);
        second.write_u128(nanos);
        format!("{count:x}-{first:016x}{:016x}", second.finish())
    }

    /// The session named by the request's `Mcp-Session-Id`, or the error response to send.
    fn find_session(&self, id: &str, request: &Request) -> Result<Arc<Session>, (u16, Value)> {
        let session = lock(&self.sessions).get(id).cloned();
        let Some(session) = session else {
            return Err((404, error_body(&Value::Null, SESSION_NOT_FOUND, "Session not found")));
        };
        session
            .check_version(request)
            .map_err(|message| (400, error_body(&Value::Null, TRANSPORT_ERROR, &message)))?;
        Ok(session)
    }

    /// A POST in a legacy session: notifications and responses → 202; requests (or a batch with
    /// any) → their responses.
    fn legacy_post(
        &self,
        connection: &mut Connection,
        request: &Request,
        id: &str,
        value: Value,
        close: bool,
    ) -> io::Result<Flow> {
        let session = match self.find_session(id, request) {
            Ok(session) => session,
            Err((status, body)) => {
                wire::write_json(&mut connection.writer, status, &[], &body, close)?;
                return Ok(Flow::after(close));
            }
        };
        let expects_response = match &value {
            Value::Array(batch) => batch.is_empty() || batch.iter().any(answered),
            single => answered(single),
        };
        if !expects_response {
            session.server.handle_value(value, Reply::Line);
            wire::write_response(&mut connection.writer, 202, &[], None, b"", close)?;
            return Ok(Flow::after(close));
        }
        if !value.is_array() {
            if let Incoming::Invalid(Some(error)) = jsonrpc::classify(value.clone()) {
                wire::write_json(&mut connection.writer, 400, &[], &error, close)?;
                return Ok(Flow::after(close));
            }
        }
        let exchange = Exchange::new();
        let _tracked = Tracked::new(&session.router, &exchange);
        session.server.handle_value(value, Reply::Stream(Arc::clone(&exchange)));
        self.stream_out(connection, &exchange, &Mode::Legacy, request.http10, close)
    }

    /// GET (the standalone stream) and DELETE (end the session): legacy sessions only.
    fn session_method(
        &self,
        connection: &mut Connection,
        request: &Request,
        close: bool,
    ) -> io::Result<Flow> {
        let out = &mut connection.writer;
        let Some(id) = request.header_text("mcp-session-id") else {
            let message = format!(
                "Method Not Allowed: {} needs an Mcp-Session-Id (2026-07-28 requests are POSTs only)",
                request.method
            );
            let body = error_body(&Value::Null, TRANSPORT_ERROR, &message);
            wire::write_json(out, 405, &[("Allow", "POST")], &body, close)?;
            return Ok(Flow::after(close));
        };
        let session = match self.find_session(&id, request) {
            Ok(session) => session,
            Err((status, body)) => {
                wire::write_json(out, status, &[], &body, close)?;
                return Ok(Flow::after(close));
            }
        };
        if request.method == "DELETE" {
            lock(&self.sessions).remove(&id);
            session.router.end();
            eprintln!("demo-server: session {id} deleted");
            wire::write_response(out, 200, &[], None, b"", close)?;
            return Ok(Flow::after(close));
        }
        let accepts =
            ["text/event-stream", "text/*", "*/*"].iter().any(|kind| request.has_token("accept", kind));
        if !accepts {
            let body = error_body(
                &Value::Null,
                TRANSPORT_ERROR,
                "Not Acceptable: GET needs Accept: text/event-stream",
            );
            wire::write_json(out, 406, &[], &body, close)?;
            return Ok(Flow::after(close));
        }
        let Some(exchange) = session.router.open_standalone() else {
            let body = error_body(
                &Value::Null,
                TRANSPORT_ERROR,
                "Conflict: the session's GET stream is already open",
            );
            wire::write_json(out, 409, &[], &body, close)?;
            return Ok(Flow::after(close));
        };
        self.stream_out(connection, &exchange, &Mode::Standalone(&session.router), request.http10, close)
    }

    /// Writes a response stream: JSON when its first message is its last (the response alone),
    /// else an event stream that ends after the last message (or when the stream ends without
    /// one). Watches for the client going away while waiting; a failed write counts as that.
    fn stream_out(
        &self,
        connection: &mut Connection,
        exchange: &Arc<Exchange>,
        mode: &Mode<'_>,
        http10: bool,
        close: bool,
    ) -> io::Result<Flow> {
        self.pump(connection, exchange, mode, http10, close).inspect_err(|_| {
            self.gone(exchange, mode);
        })
    }

    fn pump(
        &self,
        connection: &mut Connection,
        exchange: &Arc<Exchange>,
        mode: &Mode<'_>,
        http10: bool,
        close: bool,
    ) -> io::Result<Flow> {
        let mut events = match mode {
            Mode::Standalone(_) => {
                let stream = EventStream::start(&mut connection.writer, http10, close)?;
                // Some HTTP clients (curl, behind surf) report a response only with its first
                // body bytes: an opening comment shows at once that the stream is open.
                stream.comment(&mut connection.writer)?;
                Some(stream)
            }
            Mode::Modern(_) | Mode::Legacy => None,
        };
        let mut last_write = Instant::now();
        loop {
            match exchange.next(POLL) {
                Next::Message(message, last) => {
                    let stream = match events {
                        Some(stream) => stream,
                        None if last => {
                            let status =
                                if let Mode::Modern(_) = mode { modern_status(&message) } else { 200 };
                            wire::write_json(&mut connection.writer, status, &[], &message, close)?;
                            return Ok(Flow::after(close));
                        }
                        None => *events.insert(EventStream::start(&mut connection.writer, http10, close)?),
                    };
                    stream.event(&mut connection.writer, &message)?;
                    last_write = Instant::now();
                    if last {
                        stream.finish(&mut connection.writer)?;
                        return Ok(Flow::after(close || http10));
                    }
                }
                Next::End => {
                    let stream = match events {
                        Some(stream) => stream,
                        None => EventStream::start(&mut connection.writer, http10, close)?,
                    };
                    if let Mode::Standalone(router) = mode {
                        router.release(exchange);
                    }
                    stream.finish(&mut connection.writer)?;
                    return Ok(Flow::after(close || http10));
                }
                Next::Idle => {
                    if let Some(stream) = events.filter(|_| last_write.elapsed() >= KEEPALIVE) {
                        stream.comment(&mut connection.writer)?;
                        last_write = Instant::now();
                    }
                    if connection.client_gone() {
                        return Ok(self.gone(exchange, mode));
                    }
                }
            }
        }
    }

    /// The client went away (or could not be written to): nothing more is queued for it, and an
    /// unfinished 2026-07-28 request is cancelled.
    fn gone(&self, exchange: &Arc<Exchange>, mode: &Mode<'_>) -> Flow {
        let unfinished = exchange.is_open();
        exchange.close();
        match mode {
            Mode::Modern(id) if unfinished => {
                eprintln!("demo-server: the client of request {id} went away");
                self.modern.cancel_request(id, Some(exchange));
            }
            Mode::Modern(_) => {}
            Mode::Legacy => eprintln!("demo-server: a client went away before its response"),
            Mode::Standalone(router) => router.release(exchange),
        }
        Flow::Close
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn modern_statuses_follow_error_codes() {
        let error = |code: i64| json!({"jsonrpc": "2.0", "id": 1, "error": {"code": code, "message": "m"}});
        assert_eq!(modern_status(&json!({"jsonrpc": "2.0", "id": 1, "result": {}})), 200);
        assert_eq!(modern_status(&error(-32601)), 404);
        for code in [-32020, -32021, -32022] {
            assert_eq!(modern_status(&error(code)), 400);
        }
        for code in [-32602, -32603, -32600] {
            assert_eq!(modern_status(&error(code)), 200);
        }
    }
}
