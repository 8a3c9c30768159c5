//! [`HttpSession`]: MCP over HTTP (Streamable HTTP, and the 2024-11-05 HTTP+SSE transport) as
//! a state machine layered on [`ClientConnection`].
//!
//! The connection keeps all of the protocol (ids, deadlines, the handshake, capabilities); the
//! session turns its transmits into HTTP requests and the HTTP responses back into messages, and
//! owns what only exists on HTTP: the session id, the stream for server-initiated messages,
//! resumption, session expiry, the legacy fallback and the `DELETE` on close.
//!
//! This file holds the session's state, its public surface and the response inputs; the rest
//! is split by concern: `outgoing.rs` (turning transmits into requests, headers, holding and
//! pacing), `incoming.rs` (what arrives on a stream and how an exchange ends, resumption),
//! `expiry.rs` (session expiry and re-initialization, the HTTP+SSE fallback, the close),
//! `tool_headers.rs` (2026-07-28 `Mcp-Param-*` headers and the tool-list refresh).

mod authorization;
mod expiry;
mod incoming;
mod outgoing;
mod redirect;
mod tool_headers;

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::time::{Duration, Instant};

use std::borrow::Cow;

use self::authorization::AuthResponse;
use super::request::{HttpAction, HttpConfig, HttpMethod, HttpRequest, StreamId};
use super::sse::{SseDecoder, SseError, SseEvent};
use super::url;
use crate::auth::{AuthEvent, Authorizer, Stamp};
use crate::connection::{ClientConnection, Status};
use crate::deadline::deadline_after;
use crate::event::{CloseReason, ConnectionRequest, Event, RequestError};
use crate::jsonrpc::{self, Message};
use crate::schema::InitializeResult;
use crate::transmit::{OutgoingRequest, TransmitKind};
use crate::transport::{Commands, TransportEvent};
use crate::transport_error::{RedirectRefusal, TransportError, bounded};
use crate::{ClientConfig, ProtocolVersion, RequestId};
use tool_headers::{Refresh, ToolHeaders};

/// How much of an error response's body is kept: enough for a JSON-RPC error object.
const ERROR_BODY_LIMIT: usize = 4096;
/// How much of it an error message quotes.
const EXCERPT_LIMIT: usize = 512;

/// The longest requests wait for the head of the first standalone `GET` (see
/// `Standalone::Opening`), unless `connect_timeout` is shorter. A server that holds that head
/// until it has an event to send (some frameworks do not flush headers before the first write)
/// must not hold every call for the whole `connect_timeout` (30 s by default): a head that has
/// not come within this will likely not come soon, and the stream keeps waiting for it on its
/// own.
const GATE_LIMIT: Duration = Duration::from_secs(1);

/// The most `POST`s carrying no request (answers to server requests, notifications) in flight
/// at once; the others wait their turn. Each exchange takes a connection of its own, and a
/// server decides how many of these there are: 2000 `ping`s sent in one burst made the client
/// open some 1700 TCP connections at once (past the usual limit of 1024 open files, every
/// other socket and file of the process would fail). Servers answer these with 202 at once,
/// so a few at a time keep up.
const MAX_ONE_WAY_POSTS: usize = 8;

/// How long an operation that failed for want of scope, after the step-ups that were allowed,
/// fails at once without being sent ([`AuthError::ScopeRefusedRecently`]): long enough that a
/// model retrying a tool does not send the user through the consent screen again and again,
/// short enough that scope granted meanwhile (by an administrator) is found without a restart.
/// [`HttpSession::forget_scope_refusals`] forgets sooner.
///
/// [`AuthError::ScopeRefusedRecently`]: crate::auth::AuthError::ScopeRefusedRecently
pub const SCOPE_REFUSAL_MEMORY: Duration = Duration::from_secs(600);

const ACCEPT_POST: &str = "application/json, text/event-stream";
const ACCEPT_SSE: &str = "text/event-stream";

/// What a 2026-07-28 session cannot post (only requests go over HTTP there).
const MODERN_HTTP: &str = "2026-07-28 Streamable HTTP";

/// A message for the server, waiting to be posted or kept for a retry.
#[derive(Debug, Clone)]
struct Outgoing {
    /// One JSON-RPC message, without a trailing newline.
    body: Vec<u8>,
    /// What the connection said of it, when it is a request awaiting a response.
    request: Option<OutgoingRequest>,
    /// Already re-sent once after the session expired.
    retried: bool,
    /// 2026-07-28: already re-sent once after a `-32020` header mismatch and a fresh tool list.
    refreshed: bool,
    /// The credentials of its last send, which the server refused (401, 403): the authorizer
    /// counts what it allows per request from there.
    refused: Option<Stamp>,
}

/// Answers and notifications waiting for a `POST`, and their bytes (bounded by
/// [`HttpConfig::max_queued_answers`]).
#[derive(Debug, Default)]
struct OneWay {
    waiting: VecDeque<Outgoing>,
    bytes: usize,
}

impl OneWay {
    /// Queues `out`, unless that would make more than `limit` bytes wait (one message alone
    /// always may): then it is given back, with the bytes that would have waited.
    fn push(&mut self, out: Outgoing, limit: usize) -> Result<(), (Outgoing, usize)> {
        let bytes = self.bytes + out.body.len();
        if bytes > limit && !self.waiting.is_empty() {
            return Err((out, bytes));
        }
        self.bytes = bytes;
        self.waiting.push_back(out);
        Ok(())
    }

    fn pop(&mut self) -> Option<Outgoing> {
        let out = self.waiting.pop_front()?;
        self.bytes -= out.body.len();
        Some(out)
    }

    fn is_empty(&self) -> bool {
        self.waiting.is_empty()
    }

    fn clear(&mut self) {
        self.waiting.clear();
        self.bytes = 0;
    }
}

/// Which transport the session speaks.
#[derive(Debug)]
enum Mode {
    /// Streamable HTTP (2025-03-26 and later; also what a 2024-11-05 client tries first).
    Streamable,
    /// The 2024-11-05 HTTP+SSE transport: one `GET` stream carries every server message, and
    /// messages are posted to the URL its `endpoint` event names.
    Legacy {
        /// Why Streamable HTTP was abandoned, for error messages.
        refused_with: u16,
        /// Where to post, once the `endpoint` event arrived.
        endpoint: Option<String>,
    },
}

/// Where the session is in its life. With [`Mode`] (which transport), [`Standalone`] (the stream
/// for server-initiated messages) and the authorizer, it decides whether a message goes out now
/// or waits in `held` ([`HttpSession::hold_reason`]); [`HttpSession::release`] is the one way out.
#[derive(Debug)]
enum Phase {
    /// Messages go out.
    Open,
    /// The server forgot the session: a new one is being made (the original `initialize`, then
    /// `notifications/initialized`), and the requests it lost go again after.
    Reinitializing(Reinit),
    /// The server forgot the new session at once: the next request starts another (not at once:
    /// a server that forgets every session would be re-initialized in a loop).
    Stale,
    /// The connection closed: every exchange was aborted; the `DELETE`, if any, is awaited.
    Closing,
}

/// Why a message waits in `held` instead of going out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Hold {
    /// The authorizer is getting a token (a request's deadline is suspended meanwhile).
    Authorization,
    /// A new session is being made, or is to be made ([`Phase::Reinitializing`], [`Phase::Stale`]).
    Session,
    /// HTTP+SSE: the `endpoint` event has not come.
    Endpoint,
    /// Requests only: the head of the first standalone `GET` has not come ([`Standalone::Opening`]).
    Gate,
}

/// The stream for server-initiated messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Standalone {
    /// Not opened yet (or to be re-opened after a re-initialization, or after the server refused
    /// the credentials it carried: `refused`, as for [`Outgoing::refused`]).
    Idle { refused: Option<Stamp> },
    /// Just opened and its head not in: requests wait for it, so that a server message unrelated
    /// to any request (an elicitation sent from a tool, say) has a stream to travel on (some
    /// servers drop such messages when no `GET` stream is open); until the head came, the `GET`
    /// failed, or `until` ([`GATE_LIMIT`]).
    Opening { stream: StreamId, until: Instant },
    /// In flight or scheduled to reconnect: never two at once.
    Active,
    /// The server does not offer one (405), or it failed for good.
    Off,
}

/// What a `GET` stream is for.
#[derive(Debug)]
enum GetKind {
    /// Server-initiated messages.
    Standalone,
    /// Resuming a `POST`'s response stream that ended before the response.
    Resume(Outgoing),
}

impl Outgoing {
    /// The request's wire id, when it is a request.
    fn id(&self) -> Option<i64> {
        self.request.as_ref().and_then(|r| wire_number(&r.id()))
    }

    fn method(&self) -> Option<&str> {
        self.request.as_ref().map(OutgoingRequest::method)
    }
}

/// What an exchange is for.
#[derive(Debug)]
enum Role {
    /// A message posted to the server.
    Post {
        out: Outgoing,
        /// The response to its request arrived on this stream.
        answered: bool,
        /// It is the `initialize` request of the connection.
        initialize: bool,
    },
    /// A server-sent-event stream: the standalone one, or a resumption.
    Get {
        kind: GetKind,
        /// Consecutive re-opens without a message in between.
        attempts: u32,
        /// The credentials the previous `GET` of the stream carried, refused by the server.
        refused: Option<Stamp>,
    },
    /// The `initialize` re-sent after the session expired.
    Reinitialize,
    /// The `notifications/initialized` that completes a re-initialization.
    ReinitializedNotice,
    /// The 2024-11-05 transport's event stream.
    LegacyGet,
    /// Ending the session.
    Delete,
    /// One of the authorizer's requests (metadata, registration, token).
    Auth,
}

/// How a response body is handled.
#[derive(Debug)]
enum Body {
    /// No head yet.
    AwaitingHead,
    /// A JSON body, gathered whole.
    Json(Vec<u8>),
    /// An event stream, decoded by `Stream::decoder`.
    Sse,
    /// An error status: the start of the body, for the error message.
    Error(Vec<u8>),
    /// Nothing wanted from it (a 202, the body of a legacy `POST`).
    Ignore,
    /// A success status with a content type that cannot carry the response.
    Unexpected(String),
    /// The response to one of the authorizer's requests, whatever its status.
    Auth(Box<AuthResponse>),
}

#[derive(Debug)]
struct Stream {
    role: Role,
    status: Option<u16>,
    body: Body,
    /// Response headers are due by then (or, once the response was received, the rest of the body).
    deadline: Option<Instant>,
    /// The event-stream decoder: made when a `POST` answers with an event stream; given to a
    /// `GET` when it opens, to carry `Last-Event-ID` and `retry` from one connection of the
    /// stream to the next.
    decoder: Option<SseDecoder>,
    /// What identifies the credentials the request carried, if any.
    token: Option<Stamp>,
    /// What was sent, when redirects are followed (not for the authorizer's exchanges).
    sent: Option<Box<Sent>>,
}

/// A `GET` to open later: a reconnection after the server's `retry` delay.
#[derive(Debug)]
struct Reconnect {
    at: Instant,
    kind: GetKind,
    attempts: u32,
    decoder: SseDecoder,
}

/// A re-initialization in progress, after the server forgot the session.
#[derive(Debug, Default)]
struct Reinit {
    /// Requests to re-send once the new session is up.
    retry: Vec<Outgoing>,
    /// The server answered the new `initialize`.
    answered: bool,
}

/// A request being refused with an HTTP error status whose body is its JSON-RPC error: its
/// call id, the status and the body's start, for the `Event::Response` the body makes (see
/// `refuse` and `screen`).
#[derive(Debug)]
struct Refused {
    call: RequestId,
    status: u16,
    body: String,
}

/// How a response ended.
enum End {
    Complete,
    Failed(TransportError),
}

/// What an exchange sent, kept to send it again where a `307` or `308` points.
#[derive(Debug)]
struct Sent {
    method: HttpMethod,
    url: String,
    /// The headers before credentials (the authorizer adds those for each hop).
    headers: Vec<(Cow<'static, str>, String)>,
    /// Redirects followed so far.
    hops: u32,
    /// A redirect left the MCP server's origin: no credentials, no custom headers, and a
    /// challenge is not the MCP server's.
    foreign: bool,
}

/// The client side of MCP over HTTP, as a sans-IO state machine around a [`ClientConnection`].
///
/// The session turns what the connection transmits into [`HttpRequest`]s and what the driver
/// reports of their responses back into messages. It handles, all by itself and on simulated time:
/// the `Accept` and `Content-Type` headers, the `Mcp-Session-Id` and `MCP-Protocol-Version`
/// headers, custom headers on every request, JSON and event-stream responses, the `GET` stream
/// for server-initiated messages (at most one; none if the server answers 405), resuming a
/// stream that ended early with `Last-Event-ID` after the server's `retry` delay, re-initializing
/// transparently when the server forgot the session (404, or 400 naming the session) and
/// re-sending the affected requests once, failing a request at once when its stream ended without
/// its response, the 2024-11-05 HTTP+SSE transport as a fallback, and the `DELETE` that ends the
/// session on close.
///
/// # Driving it
///
/// Commands (`send`, `cancel`, `close`, …) go through [`commands`](Self::commands), getters
/// through [`connection`](Self::connection); neither can feed the connection or take its
/// transmits behind the session's back. The session uses only the connection's public API: a
/// transport written outside this crate can be built the same way. After every input or
/// command, a driver:
/// 1. drains [`poll_action`](Self::poll_action): executes each [`HttpAction::Send`] concurrently,
///    drops the exchange named by each [`HttpAction::Abort`];
/// 2. reports each response with [`handle_response_head`](Self::handle_response_head),
///    [`handle_response_body`](Self::handle_response_body) and
///    [`handle_response_end`](Self::handle_response_end) or
///    [`handle_response_error`](Self::handle_response_error);
/// 3. delivers the events of [`poll_event`](Self::poll_event), and arms one timer at
///    [`poll_timeout`](Self::poll_timeout) that calls [`handle_timeout`](Self::handle_timeout);
/// 4. stops once [`is_finished`](Self::is_finished): the connection closed and the `DELETE` (if
///    any) was answered or timed out.
#[derive(Debug)]
pub struct HttpSession {
    conn: ClientConnection,
    config: HttpConfig,
    mode: Mode,
    session_id: Option<String>,
    /// The `initialize` request (its id and body), kept for the legacy fallback and
    /// re-initialization.
    initialize: Option<(i64, Vec<u8>)>,
    streams: BTreeMap<StreamId, Stream>,
    next_stream: u64,
    actions: VecDeque<HttpAction>,
    /// Messages waiting for the session: a legacy endpoint, or a re-initialization.
    held: VecDeque<Outgoing>,
    /// Answers and notifications waiting for one of the [`MAX_ONE_WAY_POSTS`] to finish.
    one_way: OneWay,
    reconnects: Vec<Reconnect>,
    standalone: Standalone,
    phase: Phase,
    /// Scratch for decoded event-stream items.
    sse_items: Vec<Result<SseEvent, SseError>>,
    /// The connection's events, once the session has seen them.
    events: VecDeque<Event>,
    /// 2026-07-28: the tools' `Mcp-Param-*` annotations, from the `tool/list` results seen.
    tool_headers: ToolHeaders,
    /// 2026-07-28: the application's `tools/list` requests in flight (by the id their response
    /// event carries), whose results teach the tools' headers and lose the tools with invalid
    /// ones.
    tool_lists: BTreeSet<RequestId>,
    /// 2026-07-28: the session's own `tools/list` requests (by id), each with the call it
    /// fetches new headers for.
    refreshes: BTreeMap<RequestId, Refresh>,
    /// OAuth, when configured (see `with_authorizer`).
    auth: Option<Box<Authorizer>>,
    /// The authorizer's events, for the application.
    auth_events: VecDeque<AuthEvent>,
    /// Operations that failed for want of scope (see [`SCOPE_REFUSAL_MEMORY`]): the scope asked
    /// for, and until when they fail at once.
    scope_refusals: BTreeMap<String, (Option<String>, Instant)>,
}

impl HttpSession {
    /// Creates a session for `http`'s URL; the connection queues its first request at once
    /// (`initialize`, or `server/discover` when 2026-07-28 is among the versions).
    ///
    /// On a 2026-07-28 connection every POST carries `MCP-Protocol-Version`, `Mcp-Method` and,
    /// for `tools/call`, `prompts/get` and `resources/read`, `Mcp-Name`; there is no session, no
    /// GET stream and no `DELETE`. A dual-era client whose `server/discover` is refused without a
    /// recognised modern error (an empty or non-JSON-RPC 4xx body, any other JSON-RPC error)
    /// falls back to `initialize`, and from there to HTTP+SSE.
    pub fn new(http: HttpConfig, config: ClientConfig, now: Instant) -> Self {
        Self::with_connection(http, ClientConnection::new(config, now))
    }

    /// Wraps a connection that has not transmitted anything yet.
    pub fn with_connection(http: HttpConfig, conn: ClientConnection) -> Self {
        Self {
            conn,
            config: http,
            mode: Mode::Streamable,
            session_id: None,
            initialize: None,
            streams: BTreeMap::new(),
            next_stream: 0,
            actions: VecDeque::new(),
            held: VecDeque::new(),
            one_way: OneWay::default(),
            reconnects: Vec::new(),
            standalone: Standalone::Idle { refused: None },
            phase: Phase::Open,
            sse_items: Vec::new(),
            events: VecDeque::new(),
            tool_headers: ToolHeaders::default(),
            tool_lists: BTreeSet::new(),
            refreshes: BTreeMap::new(),
            auth: None,
            auth_events: VecDeque::new(),
            scope_refusals: BTreeMap::new(),
        }
    }

    /// The connection, for its getters.
    pub fn connection(&self) -> &ClientConnection {
        &self.conn
    }

    /// [`ClientConnection::set_wall_clock`]: the time of day, for the tasks the client hosts.
    pub fn set_wall_clock(&mut self, now: Instant, now_unix: u64) {
        self.conn.set_wall_clock(now, now_unix);
    }

    /// The connection's commands (`send`, `cancel`, `close`, …). On a 2026-07-28 session,
    /// notifications are refused ([`UsageError::TransportCannotCarry`](crate::UsageError)):
    /// only requests are posted there.
    pub fn commands(&mut self) -> Commands<'_> {
        let modern = self.modern();
        let commands = self.conn.commands();
        if modern { commands.refuse_notifications(MODERN_HTTP) } else { commands }
    }

    /// The next event, in order: the connection's, less the answers to the session's own
    /// requests.
    #[must_use]
    pub fn poll_event(&mut self) -> Option<Event> {
        if let Some(event) = self.events.pop_front() {
            return Some(event);
        }
        // Events a command made since the last input (a cancellation, a close).
        while let Some(event) = self.conn.poll_event() {
            if let Some(event) = self.screen(event, None, None) {
                return Some(event);
            }
        }
        None
    }

    /// Whether messages go out under 2026-07-28 rules.
    fn modern(&self) -> bool {
        self.conn.wire_version().is_some_and(ProtocolVersion::is_modern)
    }

    /// Whether the connection still awaits a response with this wire id.
    fn awaits(&self, id: i64) -> bool {
        self.conn.awaits(&RequestId::Number(id))
    }

    /// The transport cannot deliver the response to request `id`.
    fn fail(&mut self, now: Instant, id: i64, error: RequestError) {
        self.conn.handle_transport(now, TransportEvent::RequestFailed { id: RequestId::Number(id), error });
    }

    /// The MCP endpoint URL.
    pub fn url(&self) -> &str {
        &self.config.url
    }

    /// The session id the server assigned, if any.
    pub fn session_id(&self) -> Option<&str> {
        self.session_id.as_deref()
    }

    /// Whether the session fell back to the 2024-11-05 HTTP+SSE transport.
    pub fn is_legacy(&self) -> bool {
        matches!(self.mode, Mode::Legacy { .. })
    }

    /// HTTP exchanges in flight.
    pub fn streams_in_flight(&self) -> usize {
        self.streams.len()
    }

    /// The connection is closed and nothing is left in flight: the driver can stop.
    pub fn is_finished(&self) -> bool {
        self.conn.is_closed()
            && matches!(self.phase, Phase::Closing)
            && self.streams.is_empty()
            && self.actions.is_empty()
    }

    // ----- outputs -----

    /// The next thing for the driver to do. Call it after every input and command: it also
    /// picks up what the connection queued since.
    pub fn poll_action(&mut self, now: Instant) -> Option<HttpAction> {
        self.sync(now);
        self.actions.pop_front()
    }

    /// When [`handle_timeout`](Self::handle_timeout) must be called next.
    pub fn poll_timeout(&self) -> Option<Instant> {
        let streams = self.streams.values().filter_map(|s| s.deadline);
        let reconnects = self.reconnects.iter().map(|r| r.at);
        let gate = match self.standalone {
            Standalone::Opening { until, .. } => Some(until),
            _ => None,
        };
        let auth = self.auth.as_ref().and_then(|a| a.poll_timeout());
        streams.chain(reconnects).chain(gate).chain(auth).chain(self.conn.poll_timeout()).min()
    }

    // ----- inputs -----

    /// Deadlines at or before `now`: request timeouts, response headers that did not come,
    /// reconnections that are due.
    pub fn handle_timeout(&mut self, now: Instant) {
        self.conn.handle_timeout(now);
        if let Some(auth) = self.auth.as_mut() {
            auth.handle_timeout(now);
        }
        let expired: Vec<StreamId> = self
            .streams
            .iter()
            .filter(|(_, s)| s.deadline.is_some_and(|at| at <= now))
            .map(|(&id, _)| id)
            .collect();
        for id in expired {
            let Some(stream) = self.streams.remove(&id) else { continue };
            self.actions.push_back(HttpAction::Abort(id));
            let answered = matches!(stream.role, Role::Post { answered: true, .. });
            if answered || matches!(stream.role, Role::Delete) {
                continue;
            }
            let limit = match stream.role {
                Role::Reinitialize => self.conn.config().handshake_timeout,
                _ => self.config.connect_timeout,
            };
            self.finish_stream(now, stream, End::Failed(TransportError::NoResponse(limit)));
        }
        let mut i = 0;
        while i < self.reconnects.len() {
            if self.reconnects[i].at <= now {
                let reconnect = self.reconnects.swap_remove(i);
                self.open_get(now, reconnect.kind, reconnect.attempts, reconnect.decoder);
            } else {
                i += 1;
            }
        }
        if matches!(self.standalone, Standalone::Opening { until, .. } if until <= now) {
            // The first `GET`'s head is late: stop holding requests for it (it stays open).
            tracing::debug!("the stream for server-initiated messages has no head yet: requests go ahead");
            self.standalone = Standalone::Active;
        }
        self.sync(now);
    }

    /// The response head of exchange `stream` arrived: its status and headers (name, value).
    pub fn handle_response_head<'h>(
        &mut self,
        now: Instant,
        stream: StreamId,
        status: u16,
        headers: impl IntoIterator<Item = (&'h str, &'h [u8])>,
    ) {
        let Some(s) = self.streams.get_mut(&stream) else { return };
        if !matches!(s.body, Body::AwaitingHead) {
            return;
        }
        let mut content_type = String::new();
        let mut session_id = None;
        let mut www_authenticate = None;
        let mut dpop_nonce = None;
        let mut location = None;
        let mut content_length = None;
        let auth_exchange = matches!(s.role, Role::Auth);
        let mut auth_headers = Vec::new();
        for (name, value) in headers {
            if auth_exchange {
                auth_headers.push((name.to_owned(), value.to_vec()));
            } else if name.eq_ignore_ascii_case("dpop-nonce") {
                dpop_nonce = std::str::from_utf8(value).ok().map(|v| v.trim().to_owned());
            }
            if name.eq_ignore_ascii_case("www-authenticate") {
                let value = String::from_utf8_lossy(value);
                // Several challenges may come in several headers: keep them all.
                www_authenticate = Some(match www_authenticate {
                    Some(previous) => format!("{previous}, {value}"),
                    None => value.into_owned(),
                });
            } else if name.eq_ignore_ascii_case("content-type") {
                let value = String::from_utf8_lossy(value);
                content_type = value.split(';').next().unwrap_or("").trim().to_ascii_lowercase();
            } else if name.eq_ignore_ascii_case("mcp-session-id") {
                session_id = std::str::from_utf8(value).ok().map(str::trim).filter(|v| is_visible_ascii(v));
            } else if name.eq_ignore_ascii_case("location") {
                location = Some(String::from_utf8_lossy(value).trim().to_owned());
            } else if name.eq_ignore_ascii_case("content-length") {
                content_length = std::str::from_utf8(value).ok().and_then(|v| v.trim().parse::<usize>().ok());
            }
        }
        s.status = Some(status);
        if auth_exchange {
            s.body = Body::Auth(Box::new(AuthResponse { headers: auth_headers, body: Vec::new() }));
            return;
        }
        let carried = s.token;
        let foreign = s.sent.as_ref().is_some_and(|sent| sent.foreign);
        if (300..400).contains(&status) {
            // The session decides redirects (drivers follow none): see `redirect.rs`.
            self.on_redirect(now, stream, status, location.as_deref());
            return self.sync(now);
        }
        let challenged = (status == 401 || status == 403)
            && !foreign
            && self.on_challenge(now, stream, status, www_authenticate.as_deref(), dpop_nonce.as_deref());
        if challenged {
            return self.sync(now);
        }
        if !foreign {
            self.authorized_response(status, carried, dpop_nonce.as_deref());
        }
        let Some(s) = self.streams.get_mut(&stream) else { return };
        if !matches!(s.role, Role::Reinitialize) {
            // The re-initialization keeps its deadline for the whole answer (see
            // `session_expired`); every other exchange waited for its head only.
            s.deadline = None;
        }
        let success = (200..300).contains(&status);
        let sse = content_type == "text/event-stream";
        s.body = match &s.role {
            _ if !success => Body::Error(Vec::new()),
            Role::Delete | Role::ReinitializedNotice => Body::Ignore,
            Role::Post { out, .. } if out.request.is_none() => Body::Ignore,
            Role::Post { .. } if matches!(self.mode, Mode::Legacy { .. }) => Body::Ignore,
            Role::Post { .. } | Role::Reinitialize | Role::Get { .. } | Role::LegacyGet if sse => {
                let max = self.conn.config().max_message_size;
                s.decoder.get_or_insert_with(|| SseDecoder::new(max));
                Body::Sse
            }
            Role::Post { .. } | Role::Reinitialize if content_type == "application/json" => {
                // The body's room at once when its length is known (and allowed): no copies as
                // it grows, and it is handed over whole to the connection.
                let max = self.conn.config().max_message_size;
                Body::Json(self.conn.message_buffer(content_length.filter(|&len| len <= max).unwrap_or(0)))
            }
            _ => Body::Unexpected(content_type),
        };
        if matches!(self.standalone, Standalone::Opening { stream: opening, .. } if opening == stream) {
            self.standalone = Standalone::Active;
        }
        let takes_session =
            success && matches!(s.role, Role::Post { initialize: true, .. } | Role::Reinitialize);
        if let (true, Some(id), Mode::Streamable) = (takes_session, session_id, &self.mode) {
            self.session_id = Some(id.to_owned());
        }
        match s.role {
            // Ending the session needs no more than the head.
            Role::Delete => {
                self.streams.remove(&stream);
                self.actions.push_back(HttpAction::Abort(stream));
            }
            Role::ReinitializedNotice => {
                self.streams.remove(&stream);
                self.actions.push_back(HttpAction::Abort(stream));
                self.reinitialized(now);
            }
            _ => {}
        }
        self.pump(now);
    }

    /// A chunk of the response body of exchange `stream`.
    pub fn handle_response_body(&mut self, now: Instant, stream: StreamId, chunk: &[u8]) {
        let max = self.conn.config().max_message_size;
        let Some(mut s) = self.streams.remove(&stream) else { return };
        match &mut s.body {
            Body::Json(buf) => {
                if buf.len() + chunk.len() > max {
                    let len = buf.len() + chunk.len();
                    self.conn.handle_transport(now, TransportEvent::Oversized { len });
                    self.actions.push_back(HttpAction::Abort(stream));
                    // A JSON body is one message: the request's response, too large. It fails at
                    // once (rather than as a lost response, which 2026-07-28 would send again).
                    if let Role::Post { out, .. } = &s.role {
                        if let Some(id) = out.id().filter(|&id| self.awaits(id)) {
                            self.fail(now, id, RequestError::MessageTooLarge { limit: max });
                        }
                    }
                    self.finish_stream(now, s, End::Failed(TransportError::BodyTooLarge { limit: max }));
                    return self.pump(now);
                }
                buf.extend_from_slice(chunk);
            }
            Body::Error(buf) => {
                let room = ERROR_BODY_LIMIT - buf.len();
                buf.extend_from_slice(&chunk[..chunk.len().min(room)]);
                if buf.len() >= ERROR_BODY_LIMIT {
                    // Enough to explain the error; the rest is not worth waiting for.
                    self.actions.push_back(HttpAction::Abort(stream));
                    self.finish_stream(now, s, End::Complete);
                    return self.pump(now);
                }
            }
            Body::Sse => {
                let mut items = std::mem::take(&mut self.sse_items);
                if let Some(decoder) = s.decoder.as_mut() {
                    if decoder.wants_spare() {
                        if let Some(spare) = self.conn.spare_buffer() {
                            decoder.give_spare(spare);
                        }
                    }
                    decoder.feed(chunk, &mut |item| items.push(item));
                }
                for item in items.drain(..) {
                    self.on_sse_item(now, &mut s, item);
                }
                self.sse_items = items;
            }
            Body::Auth(response) => {
                if chunk.len() > Self::auth_body_room(&response.body) {
                    // No metadata document or token response is this big: stop reading.
                    let why = format!("the response exceeds {} KiB", crate::auth::MAX_RESPONSE_BODY / 1024);
                    self.actions.push_back(HttpAction::Abort(stream));
                    self.finish_stream(now, s, End::Failed(TransportError::Io(why)));
                    return self.sync(now);
                }
                response.body.extend_from_slice(chunk);
            }
            Body::AwaitingHead | Body::Ignore | Body::Unexpected(_) => {}
        }
        self.put_back(stream, s);
        self.pump(now);
    }

    /// Returns a stream taken out of the table for processing; if the session started closing
    /// meanwhile, it is aborted instead.
    fn put_back(&mut self, id: StreamId, s: Stream) {
        if matches!(self.phase, Phase::Closing) {
            self.actions.push_back(HttpAction::Abort(id));
        } else {
            self.streams.insert(id, s);
        }
    }

    /// The response body of exchange `stream` ended normally.
    pub fn handle_response_end(&mut self, now: Instant, stream: StreamId) {
        if let Some(s) = self.streams.remove(&stream) {
            self.finish_stream(now, s, End::Complete);
        }
        self.sync(now);
    }

    /// Exchange `stream` failed: the connection could not be made, or broke before the response
    /// or its body ended. `error` explains it (it ends up in request errors): a
    /// [`TransportError`] when the driver's HTTP client said what went wrong (a head too
    /// large, say), else a message (`&str` or `String`, which become [`TransportError::Io`]).
    pub fn handle_response_error(
        &mut self,
        now: Instant,
        stream: StreamId,
        error: impl Into<TransportError>,
    ) {
        if let Some(s) = self.streams.remove(&stream) {
            self.finish_stream(now, s, End::Failed(error.into()));
        }
        self.sync(now);
    }

    /// The driver cannot go on (its HTTP client is gone, say): the connection closes with
    /// `detail` as its reason, every exchange is aborted, and a session is ended with `DELETE`
    /// as on any close.
    pub fn transport_error(&mut self, now: Instant, detail: impl Into<String>) {
        self.conn.transport_error(detail);
        self.sync(now);
    }
}

/// The number of an id the engine issued (it issues no string ids).
fn wire_number(id: &RequestId) -> Option<i64> {
    match id {
        RequestId::Number(n) => Some(*n),
        RequestId::String(_) => None,
    }
}

/// Whether an error body is the JSON-RPC error `-32020` (header mismatch).
fn header_mismatch(body: &[u8]) -> bool {
    matches!(
        jsonrpc::decode_single(body),
        Ok(Message::Response { result: Err(error), .. }) if error.code == jsonrpc::error_codes::HEADER_MISMATCH
    )
}

/// A header value as 2026-07-28 sends it (`Mcp-Method`, `Mcp-Name`, `Mcp-Param-*`): as is when
/// it is printable ASCII without leading or trailing white space, else
/// `=?base64?<Base64 of the UTF-8 bytes>?=`. A plain value that looks like the encoded form is
/// encoded too, so it cannot be misread.
///
/// ```
/// use mcp_sansio::http::header_value;
///
/// assert_eq!(header_value("get_weather"), "get_weather");
/// assert_eq!(header_value("héllo"), "=?base64?aMOpbGxv?=");
/// ```
pub fn header_value(value: &str) -> String {
    let plain = value.bytes().all(|b| (0x20..0x7f).contains(&b))
        && !value.starts_with([' ', '\t'])
        && !value.ends_with([' ', '\t'])
        && (!value.starts_with("=?base64?") || !value.ends_with("?="));
    if plain { value.to_owned() } else { format!("=?base64?{}?=", crate::base64::encode(value.as_bytes())) }
}

/// Header values the session accepts as a session id: visible ASCII, as the spec requires.
fn is_visible_ascii(value: &str) -> bool {
    !value.is_empty() && value.bytes().all(|b| (0x21..=0x7e).contains(&b))
}

/// Whether an error answer means the server no longer knows the session: 404 as the spec says,
/// or 400 with a body that names the session, as some servers answer.
fn session_gone(status: u16, body: &[u8]) -> bool {
    status == 404 || (status == 400 && String::from_utf8_lossy(body).to_ascii_lowercase().contains("session"))
}

/// Whether `message` is a JSON-RPC response (or error, or an invalid response) with integer id
/// `id`.
fn is_response_to(message: &[u8], id: i64) -> bool {
    jsonrpc::decode_single(message).is_ok_and(|m| m.response_id() == Some(&RequestId::Number(id)))
}

/// The start of a body, for an error message.
fn excerpt(body: &[u8]) -> String {
    let text = String::from_utf8_lossy(&body[..body.len().min(EXCERPT_LIMIT)]);
    text.trim().to_owned()
}

/// How an exchange that should have carried a response failed, typed as a request's error: an
/// error status, a content type that cannot carry it, or a stream that ended or broke first.
fn failure_error(status: Option<u16>, body: &Body, end: &End) -> RequestError {
    let transport = match (status, body, end) {
        (None, _, End::Failed(error)) => error.clone(),
        (Some(status), Body::Error(buf), _) => {
            return RequestError::HttpStatus { status, body: excerpt(buf), error: None };
        }
        (Some(status), Body::Unexpected(content_type), _) => {
            TransportError::UnexpectedContentType { status, content_type: content_type_of(content_type) }
        }
        (_, _, End::Failed(error)) => TransportError::StreamBroke(Box::new(error.clone())),
        (_, _, End::Complete) => TransportError::StreamEnded,
    };
    RequestError::Transport(transport)
}

/// How an exchange failed, for a log line or a close reason's detail.
fn describe_failure(status: Option<u16>, body: &Body, end: &End) -> String {
    match (status, body, end) {
        (_, _, End::Failed(error)) if status.is_none() => error.to_string(),
        (Some(status), Body::Error(buf), _) => {
            let text = excerpt(buf);
            if text.is_empty() { format!("HTTP {status}") } else { format!("HTTP {status}: {text}") }
        }
        (Some(status), Body::Unexpected(content_type), _) => {
            format!("HTTP {status} with content type {content_type:?} instead of an event stream")
        }
        (_, _, End::Failed(error)) => format!("the stream broke: {error}"),
        (_, _, End::Complete) => "the server ended the stream".to_owned(),
    }
}

/// A content type as [`TransportError::UnexpectedContentType`] has it.
fn content_type_of(content_type: &str) -> Option<String> {
    (!content_type.is_empty()).then(|| content_type.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_waiting_for_a_post_are_bounded_in_bytes_but_one_always_waits() {
        let out = |len: usize| Outgoing {
            body: vec![b'x'; len],
            request: None,
            retried: false,
            refreshed: false,
            refused: None,
        };
        let mut waiting = OneWay::default();
        assert!(waiting.push(out(30), 10).is_ok(), "one message larger than the bound waits alone");
        assert!(matches!(waiting.push(out(1), 10), Err((_, 31))));
        assert_eq!(waiting.pop().map(|o| o.body.len()), Some(30));
        assert!(waiting.is_empty());
        for _ in 0..5 {
            assert!(waiting.push(out(2), 10).is_ok());
        }
        assert!(matches!(waiting.push(out(1), 10), Err((_, 11))));
        assert_eq!(waiting.pop().map(|o| o.body.len()), Some(2));
        assert!(waiting.push(out(1), 10).is_ok(), "room again once one went");
        waiting.clear();
        assert!(waiting.is_empty() && waiting.bytes == 0);
    }

    #[test]
    fn recognises_responses_by_id() {
        assert!(is_response_to(br#"{"jsonrpc":"2.0","id":3,"result":{}}"#, 3));
        assert!(is_response_to(br#"{"jsonrpc":"2.0","id": 3 ,"error":{"code":1,"message":"x"}}"#, 3));
        assert!(!is_response_to(br#"{"jsonrpc":"2.0","id":3,"method":"ping"}"#, 3));
        assert!(!is_response_to(br#"{"jsonrpc":"2.0","id":"3","result":{}}"#, 3));
        assert!(!is_response_to(b"not json", 3));
    }

    #[test]
    fn header_values_and_base64() {
        assert_eq!(crate::base64::encode(b""), "");
        assert_eq!(crate::base64::encode(b"f"), "Zg==");
        assert_eq!(crate::base64::encode(b"fo"), "Zm8=");
        assert_eq!(crate::base64::encode(b"foo"), "Zm9v");
        assert_eq!(crate::base64::encode(b"foobar"), "Zm9vYmFy");
        assert_eq!(header_value("get_weather"), "get_weather");
        assert_eq!(header_value("file:///a b.txt"), "file:///a b.txt");
        assert_eq!(header_value(""), "");
        assert_eq!(header_value("héllo"), "=?base64?aMOpbGxv?=");
        assert_eq!(header_value(" padded"), "=?base64?IHBhZGRlZA==?=");
        assert_eq!(header_value("line\nbreak"), "=?base64?bGluZQpicmVhaw==?=");
        assert_eq!(header_value("us west 1"), "us west 1");
        assert_eq!(header_value("\tindented"), "=?base64?CWluZGVudGVk?=");
        assert_eq!(header_value("=?base64?literal?="), "=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?=");
        assert!(header_mismatch(br#"{"jsonrpc":"2.0","id":1,"error":{"code":-32020,"message":"m"}}"#));
        assert!(!header_mismatch(br#"{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"m"}}"#));
    }

    #[test]
    fn session_gone_rules() {
        assert!(session_gone(404, b""));
        assert!(session_gone(400, br#"{"error":{"message":"Bad Request: No valid session ID provided"}}"#));
        assert!(!session_gone(400, b"missing field"));
        assert!(!session_gone(500, b"session"));
    }
}
