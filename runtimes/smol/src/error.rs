//! The driver's error type.

use mcp_sansio::{CloseReason, ErrorObject, RequestError, UsageError};

/// Why a call or a connection attempt failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The engine refused the call before sending anything (not ready, closed, capability the
    /// server did not declare, invalid params).
    #[error(transparent)]
    Usage(#[from] UsageError),
    /// The request was sent and failed: server error, timeout, cancellation, connection closed.
    #[error(transparent)]
    Request(#[from] RequestError),
    /// The server's result did not match the schema of the method.
    #[error("invalid result for {method}: {source}")]
    Decode {
        /// The method called.
        method: &'static str,
        /// What serde said.
        source: serde_json::Error,
    },
    /// Starting the server process failed.
    #[error("could not start the server process {program:?}: {source}")]
    Spawn {
        /// The program that was to be run.
        program: String,
        /// The operating system's error.
        source: std::io::Error,
    },
    /// A `list_all_*` helper stopped: the server repeated a cursor (it would never end) or
    /// returned more pages than the helper fetches.
    #[error("{method}: stopped paginating: {reason}")]
    Pagination {
        /// The list method.
        method: &'static str,
        /// What went wrong.
        reason: String,
    },
    /// The connection closed before or during the handshake.
    #[error("connection failed: {0}")]
    Connect(CloseReason),
    /// A [`Pool`](crate::Pool) had no live member for the request: it has none, or each one is
    /// being restarted.
    #[error("{}", no_member_message(*.members))]
    NoLiveMember {
        /// How many members the pool has (live or not).
        members: usize,
    },
    /// The connection's [`Driver`](crate::Driver) was dropped before it finished (its task was
    /// cancelled, or its executor shut down): nothing moves on this connection any more. Every
    /// call that was waiting fails with this, and so does every later one, at once and
    /// without sending anything. Retriable: a new connection (with a running driver) may
    /// succeed.
    #[error("the connection's driver was dropped before it finished")]
    DriverGone,
    /// A tool's result does not match the tool's `outputSchema` (only with
    /// [`ClientBuilder::validate_output`](crate::ClientBuilder::validate_output)).
    #[cfg(feature = "output-schema")]
    #[error(transparent)]
    OutputSchema(#[from] crate::OutputSchemaError),
    /// A tool result's `structuredContent` is missing or does not decode into the type asked
    /// for ([`CallToolResult::structured`](mcp_sansio::schema::CallToolResult::structured)), so
    /// that `result.structured::<T>()?` works in a function returning this error:
    ///
    /// ```
    /// use mcp_smol::Error;
    /// use mcp_smol::mcp_sansio::schema::CallToolResult;
    ///
    /// #[derive(serde::Deserialize)]
    /// struct Sum { sum: f64 }
    ///
    /// fn sum_of(result: &CallToolResult) -> Result<f64, Error> {
    ///     Ok(result.structured::<Sum>()?.sum)
    /// }
    /// let result: CallToolResult =
    ///     serde_json::from_str(r#"{"content": [], "structuredContent": {"sum": 5.5}}"#).unwrap();
    /// assert_eq!(sum_of(&result).unwrap(), 5.5);
    /// let empty: CallToolResult = serde_json::from_str(r#"{"content": []}"#).unwrap();
    /// assert!(matches!(sum_of(&empty), Err(Error::Structured(_))));
    /// ```
    #[error(transparent)]
    Structured(#[from] mcp_sansio::schema::StructuredError),
    /// A tool's MCP App could not be read ([`Client::read_app_ui`](crate::Client::read_app_ui)).
    #[error(transparent)]
    AppUi(#[from] crate::AppUiError),
}

impl Error {
    /// The JSON-RPC error the server answered with, if that is what this is (also when it
    /// came with an HTTP error status: see [`http_status`](Self::http_status)).
    pub fn server_error(&self) -> Option<&ErrorObject> {
        match self {
            Error::Request(e) => e.server_error(),
            _ => None,
        }
    }

    /// The HTTP status the failure came with, if any: an error status (also when its body
    /// was the server's JSON-RPC error, which [`server_error`](Self::server_error) returns),
    /// an answer with a content type that cannot carry the response, a session the server
    /// forgot, a redirect not followed; and for a connection that failed to start, the status
    /// its `initialize` (or `server/discover`) got. `None` for everything else.
    ///
    /// ```
    /// use mcp_smol::Error;
    /// use mcp_smol::mcp_sansio::{RequestError, TransportError};
    ///
    /// let refused = Error::from(RequestError::HttpStatus { status: 503, body: "busy".into(), error: None });
    /// assert_eq!(refused.http_status(), Some(503));
    /// let html = TransportError::UnexpectedContentType { status: 200, content_type: Some("text/html".into()) };
    /// assert_eq!(Error::from(RequestError::Transport(html)).http_status(), Some(200));
    /// ```
    pub fn http_status(&self) -> Option<u16> {
        match self {
            Error::Request(e) => e.http_status(),
            Error::Connect(reason) => reason.http_status(),
            _ => None,
        }
    }

    /// The server's error as one of the MCP errors (`-32042` URL elicitation required,
    /// 2026-07-28's `-32020` header mismatch, `-32021` missing client capability, `-32022`
    /// unsupported version), decoded.
    pub fn mcp_error(&self) -> Option<mcp_sansio::McpError> {
        self.server_error()?.mcp_error()
    }

    /// `-32042` (URL elicitation required): the URL-mode elicitations the user must complete
    /// before the request can succeed. [`is_retriable`](Self::is_retriable) says `false`, as
    /// the same request fails the same way until the user has acted: show each `url` (and
    /// `message`), wait for the user (or for `notifications/elicitation/complete` with the
    /// `elicitationId`), then send the request again.
    ///
    /// ```
    /// use mcp_smol::Error;
    /// use mcp_smol::mcp_sansio::{ErrorObject, RequestError};
    ///
    /// let answer: ErrorObject = serde_json::from_value(serde_json::json!({
    ///     "code": -32042, "message": "Authorization required",
    ///     "data": {"elicitations": [{"mode": "url", "elicitationId": "e1",
    ///         "url": "https://example.com/connect", "message": "Connect your account"}]}
    /// })).unwrap();
    /// let error = Error::from(RequestError::Server(answer));
    /// let pending = error.url_elicitations().unwrap();
    /// assert_eq!(pending[0].url.as_deref(), Some("https://example.com/connect"));
    /// assert!(!error.is_retriable());
    /// ```
    pub fn url_elicitations(&self) -> Option<Vec<mcp_sansio::schema::ElicitRequestParams>> {
        match self.mcp_error()? {
            mcp_sansio::McpError::UrlElicitationRequired { elicitations } => Some(elicitations),
            _ => None,
        }
    }

    /// The JSON-RPC error code the server answered with (`-32602` invalid params, `-32002`
    /// resource not found, …), if this is a server's error.
    pub fn code(&self) -> Option<i64> {
        self.server_error().map(|e| e.code)
    }

    /// Whether trying again may succeed: a timeout, a lost transport, a connection that died or
    /// whose driver was dropped (retry on a new one), an HTTP status that means "later", a call
    /// made before the handshake ended. A server's answer, a decode failure or a misuse would
    /// fail the same way again: `false`. A [`Pool`](crate::Pool) uses this to decide whether a member is dead.
    ///
    /// ```
    /// use std::time::Duration;
    /// use mcp_smol::Error;
    /// use mcp_smol::mcp_sansio::{CloseReason, ErrorObject, RequestError, ServerExit};
    ///
    /// assert!(Error::from(RequestError::Timeout(Duration::from_secs(1))).is_retriable());
    /// assert!(!Error::from(RequestError::Server(ErrorObject::new(-32602, "bad"))).is_retriable());
    /// // A stdio server that ended before the handshake: a wrong command line, most likely.
    /// assert!(!Error::Connect(CloseReason::Exited(ServerExit::Code(1))).is_retriable());
    /// // The same server ending later: a new connection may work.
    /// let closed = RequestError::ConnectionClosed(CloseReason::Exited(ServerExit::Code(1)));
    /// assert!(Error::from(closed).is_retriable());
    /// ```
    pub fn is_retriable(&self) -> bool {
        match self {
            Error::Usage(e) => e.is_retriable(),
            Error::Request(e) => e.is_retriable(),
            // A server that ends before its handshake is done (`false`, a missing script, a
            // wrong argument) is almost always a wrong command line: it would end again, and a
            // host that retries on this flag would loop. (The same server ending after the
            // handshake closes calls with a retriable `ConnectionClosed`.)
            Error::Connect(CloseReason::Eof | CloseReason::Exited(_)) => false,
            Error::Connect(reason) => reason.is_retriable(),
            // Members being restarted may be back soon; an empty pool stays empty.
            Error::NoLiveMember { members } => *members > 0,
            Error::DriverGone => true,
            Error::Decode { .. }
            | Error::Spawn { .. }
            | Error::Pagination { .. }
            | Error::AppUi(_)
            | Error::Structured(_) => false,
            #[cfg(feature = "output-schema")]
            Error::OutputSchema(_) => false,
        }
    }

    /// Whether the request timed out (idle timeout or cap on total time).
    pub fn is_timeout(&self) -> bool {
        matches!(self, Error::Request(RequestError::Timeout(_) | RequestError::MaxTotalExceeded(_)))
    }

    /// Whether the connection is over, however the call learnt it: a call made after it closed
    /// ([`UsageError::Closed`], nothing sent; also a closed [`Pool`](crate::Pool)), a call in
    /// flight when it closed ([`RequestError::ConnectionClosed`]), a connection that closed
    /// before or during its handshake ([`Error::Connect`]), or one whose driver was dropped
    /// ([`Error::DriverGone`]). The reason, where there is one, is a
    /// [`CloseReason`](mcp_sansio::CloseReason). Calls on this connection will not succeed
    /// again: make a new one, or let a [`Pool`](crate::Pool) restart it.
    ///
    /// ```
    /// use mcp_smol::Error;
    /// use mcp_smol::mcp_sansio::{CloseReason, RequestError, UsageError};
    ///
    /// assert!(Error::from(UsageError::Closed(CloseReason::Local)).is_closed());
    /// assert!(Error::from(RequestError::ConnectionClosed(CloseReason::Eof)).is_closed());
    /// assert!(Error::Connect(CloseReason::Eof).is_closed());
    /// assert!(Error::DriverGone.is_closed());
    /// assert!(!Error::from(UsageError::NotReady).is_closed());
    /// ```
    pub fn is_closed(&self) -> bool {
        matches!(
            self,
            Error::Usage(UsageError::Closed(_))
                | Error::Request(RequestError::ConnectionClosed(_))
                | Error::Connect(_)
                | Error::DriverGone
        )
    }
}

fn no_member_message(members: usize) -> String {
    match members {
        0 => "the pool has no member".to_owned(),
        n => format!("none of the pool's {n} members is live (each is being restarted)"),
    }
}
