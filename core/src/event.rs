//! What the engine reports: [`Event`] and the types it carries.

use std::time::Duration;

use serde_json::value::RawValue;

use crate::jsonrpc::{ErrorObject, InvalidMessage};
use crate::raw_result::RawResult;
use crate::schema::{
    CancelledNotificationParams, CreateMessageRequestParams, ElicitRequestParams,
    ElicitationCompleteNotificationParams, LoggingMessageNotificationParams, ProgressNotificationParams,
    ResourceUpdatedNotificationParams,
};
use crate::transport_error::TransportError;
use crate::{ProtocolVersion, RequestId};

/// Something that happened on the connection; drained with
/// [`ClientConnection::poll_event`](crate::ClientConnection::poll_event).
#[derive(Debug)]
#[non_exhaustive]
pub enum Event {
    /// The handshake finished: requests may be sent. The server's info and capabilities are
    /// available from the connection's getters from now on.
    Ready {
        /// The negotiated version.
        protocol_version: ProtocolVersion,
    },
    /// One of the application's requests finished (sent with
    /// [`send`](crate::ClientConnection::send) or
    /// [`send_request`](crate::ClientConnection::send_request)): with the raw `result`, or an
    /// error. Every id those returned ends in exactly one of these, whatever happens (answer,
    /// timeout, cancellation, transport failure, close).
    Response {
        /// The id `send` or `send_request` returned.
        id: RequestId,
        /// The raw `result` member, or why there is none.
        result: Result<RawResult, RequestError>,
    },
    /// The server reported progress on a pending request.
    Progress {
        /// The request the progress belongs to.
        id: RequestId,
        /// The notification's params.
        params: ProgressNotificationParams,
    },
    /// A server notification (log message, list changed, resource updated, …).
    Notification(ServerNotification),
    /// The server asks the client something; answer with
    /// [`respond`](crate::ClientConnection::respond). Only capabilities the client declared
    /// reach the application; `ping` is answered by the engine.
    Request {
        /// The server's id for the request, to pass to `respond`.
        id: RequestId,
        /// What is asked.
        request: ServerRequest,
    },
    /// The server cancelled one of its own requests; a later `respond` for it writes nothing.
    ServerRequestCancelled {
        /// The server's id for the request.
        id: RequestId,
        /// The reason the server gave.
        reason: Option<String>,
    },
    /// A server request was refused unanswered by the application, because
    /// [`max_open_server_requests`](crate::ClientConfig::max_open_server_requests) of them were
    /// open already: the engine answered it with an error. Counted in
    /// [`Stats::server_requests_refused`](crate::Stats).
    ServerRequestRefused {
        /// The server's id for the request.
        id: RequestId,
        /// Its method.
        method: String,
        /// The cap that was reached.
        limit: usize,
    },
    /// The server asked for something the client did not declare (`roots/list`,
    /// `sampling/createMessage` or `elicitation/create` without the `roots`, `sampling` or
    /// `elicitation` capability): the engine answered `-32601` and the application's handler
    /// was not asked. If the application can serve it, the capability is missing from
    /// [`ClientConfig::capabilities`](crate::ClientConfig::capabilities).
    UndeclaredServerRequest {
        /// The server's id for the request.
        id: RequestId,
        /// Its method.
        method: String,
    },
    /// The server broke the protocol: a message that was invalid, too large, or a response to
    /// nothing pending. It was discarded, or failed the request it answered; the connection goes
    /// on. Counted in [`Stats`](crate::Stats) too.
    ProtocolViolation(ProtocolViolation),
    /// The connection is over: every pending request has been failed. Nothing more happens.
    Closed(CloseReason),
}

/// How the server broke the protocol, as [`Event::ProtocolViolation`] reports it.
///
/// None of them holds a copy of a large message: at most a short excerpt of its start.
///
/// ```
/// use mcp_sansio::{ProtocolViolation, RequestId};
///
/// let v = ProtocolViolation::Oversized { len: 20_000_000, limit: 16 << 20, id: Some(RequestId::Number(4)) };
/// assert_eq!(
///     v.to_string(),
///     "a message of 20000000 bytes exceeds the limit of 16777216 bytes (a response to id 4)"
/// );
/// ```
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum ProtocolViolation {
    /// Not a message the client can read (not JSON, not JSON-RPC 2.0, params that do not match
    /// the schema, an error without an id): discarded.
    #[error("{error}{}", excerpt_suffix(.excerpt))]
    Invalid {
        /// What is wrong with it.
        error: InvalidMessage,
        /// The start of the line (or HTTP message) it came in, when the error is about that:
        /// at most [`ProtocolViolation::EXCERPT_LEN`] bytes, lossily decoded.
        excerpt: Option<String>,
    },
    /// A message larger than
    /// [`ClientConfig::max_message_size`](crate::ClientConfig::max_message_size), dropped as it
    /// arrived. If it was a response whose id could be read (in its first bytes, or written
    /// last), that request failed with [`RequestError::MessageTooLarge`].
    #[error("a message of {len} bytes exceeds the limit of {limit} bytes{}", id_suffix(.id))]
    Oversized {
        /// Bytes of it seen (for a message dropped by a transport: at least this many).
        len: usize,
        /// The limit.
        limit: usize,
        /// The id of the response, when it could be read.
        id: Option<RequestId>,
    },
    /// A response with an id, but not a valid one: both `result` and `error`, neither, or an
    /// `error` that is not a JSON-RPC error object. If the id named a pending request, that
    /// request failed with [`RequestError::InvalidResponse`].
    #[error("invalid response to id {id}: {detail}")]
    InvalidResponse {
        /// The response's id.
        id: RequestId,
        /// What is wrong with it.
        detail: &'static str,
    },
    /// A response to an id the client never issued: ignored.
    #[error("a response to id {id}, which the client never issued")]
    UnknownResponse {
        /// The response's id.
        id: RequestId,
    },
    /// A response to a request that no longer waits (it timed out, was cancelled, or was
    /// answered already): ignored.
    #[error("a late response to id {id}: the request is over")]
    LateResponse {
        /// The response's id.
        id: RequestId,
    },
}

impl ProtocolViolation {
    /// The most bytes of a message an excerpt holds.
    pub const EXCERPT_LEN: usize = 64;

    /// An [`Invalid`](Self::Invalid) violation with the start of `message` as its excerpt.
    pub(crate) fn invalid_in(error: InvalidMessage, message: &[u8]) -> Self {
        let start = &message[..message.len().min(Self::EXCERPT_LEN)];
        ProtocolViolation::Invalid { error, excerpt: Some(String::from_utf8_lossy(start).into_owned()) }
    }

    /// `id` as a violation shows it: a string id longer than [`EXCERPT_LEN`](Self::EXCERPT_LEN)
    /// bytes is cut there and ends with `…` (a server may send an id of megabytes).
    pub(crate) fn shown_id(id: RequestId) -> RequestId {
        match id {
            RequestId::String(mut s) if s.len() > Self::EXCERPT_LEN => {
                let mut cut = Self::EXCERPT_LEN;
                while !s.is_char_boundary(cut) {
                    cut -= 1;
                }
                s.truncate(cut);
                s.push('…');
                RequestId::String(s)
            }
            id => id,
        }
    }
}

fn excerpt_suffix(excerpt: &Option<String>) -> String {
    excerpt.as_ref().map(|e| format!(", in {e:?}")).unwrap_or_default()
}

fn id_suffix(id: &Option<RequestId>) -> String {
    id.as_ref().map(|id| format!(" (a response to id {id})")).unwrap_or_default()
}

/// A server→client notification, typed.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum ServerNotification {
    /// `notifications/message`: a log message.
    LoggingMessage(LoggingMessageNotificationParams),
    /// `notifications/tools/list_changed`.
    ToolListChanged,
    /// `notifications/resources/list_changed`.
    ResourceListChanged,
    /// `notifications/prompts/list_changed`.
    PromptListChanged,
    /// `notifications/resources/updated`: a subscribed resource changed.
    ResourceUpdated(ResourceUpdatedNotificationParams),
    /// `notifications/elicitation/complete` (2025-11-25): a URL-mode elicitation finished.
    ElicitationComplete(ElicitationCompleteNotificationParams),
    /// `notifications/progress` whose token matches no pending request (late or foreign).
    Progress(ProgressNotificationParams),
    /// `notifications/cancelled` for a request the engine no longer knows.
    Cancelled(CancelledNotificationParams),
    /// A notification this model does not name, with its raw params.
    Other {
        /// The method.
        method: String,
        /// The raw params, if any.
        params: Option<Box<RawValue>>,
    },
}

/// A server→client request, typed.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum ServerRequest {
    /// `roots/list`: answer with a [`ListRootsResult`](crate::schema::ListRootsResult).
    ListRoots,
    /// `sampling/createMessage`: answer with a
    /// [`CreateMessageResult`](crate::schema::CreateMessageResult).
    CreateMessage(Box<CreateMessageRequestParams>),
    /// `elicitation/create`: answer with an [`ElicitResult`](crate::schema::ElicitResult).
    Elicit(Box<ElicitRequestParams>),
}

impl ServerRequest {
    /// The JSON-RPC method name.
    pub fn method(&self) -> &'static str {
        match self {
            ServerRequest::ListRoots => "roots/list",
            ServerRequest::CreateMessage(_) => "sampling/createMessage",
            ServerRequest::Elicit(_) => "elicitation/create",
        }
    }
}

/// Why a request finished without a result.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum RequestError {
    /// The server answered with a JSON-RPC error.
    #[error("server error: {0}")]
    Server(ErrorObject),
    /// No response (nor progress, when progress resets the timer) within the idle timeout.
    #[error("request timed out after {0:?} without a response")]
    Timeout(Duration),
    /// The request ran into its cap on total time, progress notwithstanding.
    #[error("request exceeded its maximum total time of {0:?}")]
    MaxTotalExceeded(Duration),
    /// Cancelled by the caller with `cancel`.
    #[error("request cancelled{}", reason_suffix(.0))]
    Cancelled(Option<String>),
    /// The connection closed while the request was pending.
    #[error("connection closed before a response: {0}")]
    ConnectionClosed(CloseReason),
    /// The server answered this request with a message the client cannot accept: a complete
    /// JSON-RPC response with this request's id that carries both `result` and `error` (or
    /// neither), or an `error` that is not a JSON-RPC error object. The call fails at once
    /// rather than waiting for its timeout; this is neither a success nor the server's own error.
    #[error("invalid response from the server: {0}")]
    InvalidResponse(String),
    /// The server's response to this request was larger than
    /// [`ClientConfig::max_message_size`](crate::ClientConfig) (its id was readable in its first
    /// bytes). The rest of the message is discarded in bounded memory.
    #[error("the server's response is larger than the limit of {limit} bytes")]
    MessageTooLarge {
        /// The limit, in bytes.
        limit: usize,
    },
    /// The HTTP server answered the request with an error status (any status outside 2xx that
    /// is not a redirect the session followed). When the body is the server's JSON-RPC error
    /// for the request, it is kept in `error`, and [`server_error`](Self::server_error) and
    /// [`mcp_error`](Self::mcp_error) find it as they find a [`Server`](Self::Server) error.
    #[error("the server answered HTTP {status}{}", status_suffix(.body, .error))]
    HttpStatus {
        /// The status code.
        status: u16,
        /// The start of the response body (at most 512 bytes, lossily decoded), for the message.
        body: String,
        /// The server's JSON-RPC error for this request, when the body was one.
        error: Option<ErrorObject>,
    },
    /// The transport lost the request: a connection error, an answer that cannot carry the
    /// response (wrong content type, not the response), a response stream that ended before
    /// the response and could not be resumed, a session the server forgot twice, a redirect
    /// not followed. [`TransportError`] says which.
    #[error("transport failed before a response: {0}")]
    Transport(TransportError),
    /// 2026-07-28 multi round-trip request: the server kept asking for input past the limit
    /// ([`ClientConfig::max_input_rounds`](crate::ClientConfig)).
    #[error("the server asked for input {0} times without completing the request")]
    TooManyInputRounds(u32),
    /// 2026-07-28 multi round-trip request: the server asked for input the client cannot give
    /// (an undeclared capability, an unknown kind, malformed params).
    #[error("the server asked for input the client cannot give: {0}")]
    InvalidInputRequest(String),
    /// 2026-07-28 multi round-trip request: the application's handler failed to produce the
    /// input the server asked for, so the request was abandoned.
    #[error("the input the server asked for could not be provided: {0}")]
    InputRefused(ErrorObject),
    /// 2026-07-28 over HTTP: the tool's `x-mcp-header` annotations are invalid, so it was left
    /// out of the tool list and is not called (one malformed tool does not block the others).
    #[error("the tool {tool:?} is not called: {reason}")]
    ToolRejected {
        /// The tool's name.
        tool: String,
        /// What is wrong with its input schema.
        reason: String,
    },
    /// The server requires authorization and the client could not obtain or use a token (no
    /// OAuth configuration, the user refused, discovery failed, the step-up limit, …).
    #[error("unauthorized: {0}")]
    Unauthorized(crate::auth::AuthError),
    /// The task this request became (the tasks extension) ended `cancelled`: by the server, or
    /// after a `tasks/cancel` from another client.
    #[error("the task {task_id:?} was cancelled{}", reason_suffix(.message))]
    TaskCancelled {
        /// The server's id of the task.
        task_id: String,
        /// The task's status message, if it had one.
        message: Option<String>,
    },
    /// Input requests of this request (multi round-trip input, or its task's) were refused:
    /// handing them to the application would have passed
    /// [`ClientConfig::max_open_server_requests`](crate::ClientConfig::max_open_server_requests),
    /// the one budget of everything the server asks of the application at once. Counted in
    /// [`Stats::server_requests_refused`](crate::Stats) and reported as
    /// [`Event::ServerRequestRefused`]; a task is cancelled.
    #[error("the server asked for more input than the client keeps open at once ({limit})")]
    ServerRequestLimit {
        /// The cap.
        limit: usize,
    },
    /// The task this request became asked for more input requests over its life than
    /// [`TaskPolicy::max_inputs`](crate::TaskPolicy::max_inputs) allows: it was cancelled.
    #[error("the task asked for input more than {0} times")]
    TooManyTaskInputs(u32),
    /// 2026-07-28: the server acknowledged the `subscriptions/listen` stream without this
    /// resource, so `resources/subscribe` has no effect.
    #[error("the server does not follow {uri:?} for this client")]
    SubscriptionRefused {
        /// The resource.
        uri: String,
    },
}

impl RequestError {
    /// Whether sending the same request again (on this connection or, for a closed one, on a
    /// new connection) may succeed: timeouts, lost transports (see
    /// [`TransportError::is_retriable`]), connections that died under the request, and HTTP
    /// statuses that mean "later" (408, 429, 500, 502, 503, 504; a `500` whose body is the
    /// server's JSON-RPC error is an answer). A server's JSON-RPC error, a cancellation and a
    /// refused input are answers, not accidents: `false`.
    ///
    /// ```
    /// use std::time::Duration;
    /// use mcp_sansio::{CloseReason, ErrorObject, RequestError};
    ///
    /// assert!(RequestError::Timeout(Duration::from_secs(30)).is_retriable());
    /// assert!(RequestError::ConnectionClosed(CloseReason::Eof).is_retriable());
    /// assert!(!RequestError::Server(ErrorObject::new(-32602, "bad arguments")).is_retriable());
    /// ```
    pub fn is_retriable(&self) -> bool {
        match self {
            RequestError::Timeout(_) | RequestError::MaxTotalExceeded(_) => true,
            RequestError::Transport(error) => error.is_retriable(),
            RequestError::ConnectionClosed(reason) => reason.is_retriable(),
            RequestError::Unauthorized(error) => error.is_retriable(),
            // A JSON-RPC error is the server's answer, unless the status says "later" (a 500
            // with a JSON-RPC error is an answer; a 503 with one is not).
            RequestError::HttpStatus { status, error: Some(_), .. } => {
                matches!(status, 408 | 429 | 502 | 503 | 504)
            }
            RequestError::HttpStatus { status, error: None, .. } => {
                matches!(status, 408 | 429 | 500 | 502 | 503 | 504)
            }
            RequestError::Server(_)
            | RequestError::Cancelled(_)
            | RequestError::TooManyInputRounds(_)
            | RequestError::ServerRequestLimit { .. }
            | RequestError::TooManyTaskInputs(_)
            | RequestError::InvalidInputRequest(_)
            | RequestError::InputRefused(_)
            | RequestError::ToolRejected { .. }
            | RequestError::SubscriptionRefused { .. }
            | RequestError::TaskCancelled { .. }
            | RequestError::InvalidResponse(_)
            | RequestError::MessageTooLarge { .. } => false,
        }
    }

    /// The server's JSON-RPC error, if that is what this is: a [`Server`](Self::Server) error,
    /// or one that came with an HTTP error status ([`HttpStatus`](Self::HttpStatus)).
    pub fn server_error(&self) -> Option<&ErrorObject> {
        match self {
            RequestError::Server(error) | RequestError::HttpStatus { error: Some(error), .. } => Some(error),
            _ => None,
        }
    }

    /// The HTTP status the failure came with, if any: an error status (with or without the
    /// server's JSON-RPC error), or a transport failure that had one (a wrong content type, a
    /// session the server forgot, a refused redirect, …). `None` for everything else, and for
    /// a JSON-RPC error that came with `200`.
    ///
    /// ```
    /// use mcp_sansio::{ErrorObject, RequestError};
    ///
    /// let refused = RequestError::HttpStatus {
    ///     status: 500,
    ///     body: String::new(),
    ///     error: Some(ErrorObject::new(-32603, "internal error")),
    /// };
    /// assert_eq!(refused.http_status(), Some(500));
    /// assert_eq!(refused.server_error().map(|e| e.code), Some(-32603));
    /// assert!(!refused.is_retriable(), "a JSON-RPC error is an answer");
    /// ```
    pub fn http_status(&self) -> Option<u16> {
        match self {
            RequestError::HttpStatus { status, .. } => Some(*status),
            RequestError::Transport(error) => error.http_status(),
            RequestError::Unauthorized(crate::auth::AuthError::NotConfigured { status }) => Some(*status),
            RequestError::ConnectionClosed(reason) => reason.http_status(),
            _ => None,
        }
    }

    /// The server's error as one of the MCP errors of 2026-07-28 (`-32020` to `-32022`), decoded.
    pub fn mcp_error(&self) -> Option<crate::jsonrpc::McpError> {
        self.server_error()?.mcp_error()
    }
}

fn status_suffix(body: &str, error: &Option<ErrorObject>) -> String {
    match error {
        Some(error) => format!(": {error}"),
        None if body.is_empty() => String::new(),
        None => format!(": {body}"),
    }
}

fn reason_suffix(reason: &Option<String>) -> String {
    reason.as_ref().map(|r| format!(": {r}")).unwrap_or_default()
}

/// Why the connection closed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum CloseReason {
    /// The server closed its end of the stream (it closed stdout, or it exited and the driver
    /// could not tell how).
    #[error("the server closed the connection")]
    Eof,
    /// The server process ended, with this status: its stream is at its end too. A driver of
    /// child processes reports it with
    /// [`feed_exit`](crate::ClientConnection::feed_exit) instead of `feed_eof`.
    #[error("the server process ended: {0}")]
    Exited(ServerExit),
    /// The application called `close`.
    #[error("closed by the client")]
    Local,
    /// The server chose a protocol version the client does not accept.
    #[error(
        "the server chose protocol version {offered:?}, which this client does not accept \
         (requested {requested}; accepted: {accepted})"
    )]
    UnsupportedVersion {
        /// What the client asked for.
        requested: ProtocolVersion,
        /// What the server answered.
        offered: String,
        /// The versions the client accepts, comma-separated.
        accepted: String,
    },
    /// The server answered `initialize` with an error.
    #[error("the server refused to initialize: {0}")]
    InitializeRefused(ErrorObject),
    /// The `initialize` result did not decode.
    #[error("invalid initialize result: {0}")]
    InvalidInitializeResult(String),
    /// No `initialize` (or `server/discover`) response within the handshake timeout.
    #[error("no initialize or discover response within {0:?}")]
    HandshakeTimeout(Duration),
    /// A keep-alive ping went unanswered: the server is presumed dead.
    #[error("keep-alive ping unanswered within {0:?}")]
    KeepAliveTimeout(Duration),
    /// The transport failed (reported by the driver with `transport_error`).
    #[error("transport error: {0}")]
    Transport(String),
    /// The server stopped reading its input: `unwritten` bytes of the client's answers and
    /// notifications waited for it, past the transport's `limit` (reported by the driver with
    /// [`TransportEvent::ServerNotReading`](crate::TransportEvent::ServerNotReading)). A
    /// client that stopped reading in turn could deadlock with a server blocked on its own
    /// writes; one that read on without this bound would grow without end.
    #[error(
        "the server stopped reading its input: {unwritten} bytes of the client's answers wait \
         unwritten, past the limit of {limit}"
    )]
    ServerNotReading {
        /// Bytes that waited to be written.
        unwritten: usize,
        /// The transport's bound on them.
        limit: usize,
    },
    /// A request the connection cannot go on without failed, and `error` says how, typed: an
    /// HTTP status ([`http_status`](Self::http_status)), a transport failure, the server's
    /// refusal.
    #[error("{request} failed: {error}")]
    RequestFailed {
        /// Which request.
        request: ConnectionRequest,
        /// How it failed.
        error: Box<RequestError>,
    },
    /// The server requires authorization and the client could not obtain or use a token.
    #[error("unauthorized: {0}")]
    Unauthorized(crate::auth::AuthError),
    /// The application closed the connection because its own code failed, as the detail says
    /// (a token store that panicked, say): see
    /// [`ClientConnection::abort`](crate::ClientConnection::abort).
    #[error("aborted by the application: {0}")]
    Aborted(String),
}

impl CloseReason {
    /// Whether a new connection may fare better: the server went away, the transport broke,
    /// or the server did not answer (or read) in time. A refusal (version, `initialize`
    /// error) or the application's own `close` would happen again: `false`.
    pub fn is_retriable(&self) -> bool {
        match self {
            CloseReason::Eof
            | CloseReason::Exited(_)
            | CloseReason::HandshakeTimeout(_)
            | CloseReason::KeepAliveTimeout(_)
            | CloseReason::ServerNotReading { .. }
            | CloseReason::Transport(_) => true,
            CloseReason::RequestFailed { error, .. } => error.is_retriable(),
            CloseReason::Unauthorized(error) => error.is_retriable(),
            CloseReason::Local
            | CloseReason::UnsupportedVersion { .. }
            | CloseReason::InitializeRefused(_)
            | CloseReason::InvalidInitializeResult(_)
            | CloseReason::Aborted(_) => false,
        }
    }

    /// The HTTP status the connection closed on, if it closed on one: an essential request
    /// answered with an error status, or a server that requires authorization the client has
    /// not configured.
    ///
    /// ```
    /// use mcp_sansio::{CloseReason, ConnectionRequest, RequestError};
    ///
    /// let not_found = RequestError::HttpStatus { status: 404, body: "Not Found".into(), error: None };
    /// let reason = CloseReason::RequestFailed { request: ConnectionRequest::Initialize, error: Box::new(not_found) };
    /// assert_eq!(reason.http_status(), Some(404));
    /// assert!(!reason.is_retriable(), "the same URL would answer 404 again");
    /// assert_eq!(reason.to_string(), "initialize failed: the server answered HTTP 404: Not Found");
    /// ```
    pub fn http_status(&self) -> Option<u16> {
        match self {
            CloseReason::RequestFailed { error, .. } => error.http_status(),
            CloseReason::Unauthorized(crate::auth::AuthError::NotConfigured { status }) => Some(*status),
            _ => None,
        }
    }
}

/// A request that a connection cannot go on without, as [`CloseReason::RequestFailed`] names
/// it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ConnectionRequest {
    /// `server/discover`, the 2026-07-28 handshake, where no `initialize` may follow it.
    Discover,
    /// `initialize`.
    Initialize,
    /// `initialize` over the 2024-11-05 HTTP+SSE transport, tried after the server refused it
    /// over Streamable HTTP.
    LegacyInitialize {
        /// The status the server refused Streamable HTTP with (400, 404 or 405).
        refused_with: u16,
    },
    /// `initialize` again, after the server forgot the HTTP session.
    Reinitialize,
    /// A keep-alive `ping`.
    KeepAlive,
}

impl std::fmt::Display for ConnectionRequest {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ConnectionRequest::Discover => f.write_str("server/discover"),
            ConnectionRequest::Initialize => f.write_str("initialize"),
            ConnectionRequest::LegacyInitialize { refused_with } => write!(
                f,
                "the server refused Streamable HTTP (HTTP {refused_with} to initialize) and the HTTP+SSE fallback"
            ),
            ConnectionRequest::Reinitialize => {
                f.write_str("re-initializing after the server forgot the session")
            }
            ConnectionRequest::KeepAlive => f.write_str("keep-alive ping"),
        }
    }
}

/// How a server process ended: its exit status, the same on every platform.
///
/// ```
/// use mcp_sansio::ServerExit;
///
/// assert_eq!(ServerExit::Code(3).to_string(), "exited with status 3");
/// assert_eq!(ServerExit::Signal(9).to_string(), "killed by signal 9");
/// assert!(ServerExit::Code(0).success());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ServerExit {
    /// It exited with this status code.
    Code(i32),
    /// A signal killed it (Unix), this one.
    Signal(i32),
}

impl ServerExit {
    /// The exit code, if it exited by itself.
    pub fn code(&self) -> Option<i32> {
        match self {
            ServerExit::Code(code) => Some(*code),
            ServerExit::Signal(_) => None,
        }
    }

    /// The signal that killed it, if one did.
    pub fn signal(&self) -> Option<i32> {
        match self {
            ServerExit::Signal(signal) => Some(*signal),
            ServerExit::Code(_) => None,
        }
    }

    /// Whether it exited with status 0.
    pub fn success(&self) -> bool {
        *self == ServerExit::Code(0)
    }
}

impl std::fmt::Display for ServerExit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ServerExit::Code(code) => write!(f, "exited with status {code}"),
            ServerExit::Signal(signal) => write!(f, "killed by signal {signal}"),
        }
    }
}
