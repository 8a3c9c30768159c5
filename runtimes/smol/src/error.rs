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
}

impl Error {
    /// The JSON-RPC error the server answered with, if that is what this is.
    pub fn server_error(&self) -> Option<&ErrorObject> {
        match self {
            Error::Request(RequestError::Server(e)) => Some(e),
            _ => None,
        }
    }

    /// The server's error as one of the MCP errors of 2026-07-28 (`-32020` header mismatch,
    /// `-32021` missing client capability, `-32022` unsupported version), decoded.
    pub fn mcp_error(&self) -> Option<mcp_sansio::McpError> {
        self.server_error()?.mcp_error()
    }

    /// Whether the request timed out (idle timeout or cap on total time).
    pub fn is_timeout(&self) -> bool {
        matches!(self, Error::Request(RequestError::Timeout(_) | RequestError::MaxTotalExceeded(_)))
    }
}
