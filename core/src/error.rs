//! Errors returned to the caller for misusing the API (never for peer misbehaviour).

use crate::RequestId;
use crate::event::CloseReason;

/// A command was refused; nothing was sent.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum UsageError {
    /// The handshake has not finished yet: wait for [`Event::Ready`](crate::Event::Ready).
    #[error("the connection is not ready yet (initialize handshake in progress)")]
    NotReady,
    /// The connection is closed.
    #[error("the connection is closed: {0}")]
    Closed(CloseReason),
    /// The server did not declare the capability this request needs.
    #[error("the server does not support {method}: it did not declare the `{capability}` capability")]
    CapabilityNotSupported {
        /// The request's method.
        method: String,
        /// The capability it needs, e.g. `resources.subscribe`.
        capability: &'static str,
    },
    /// The client did not declare the capability this message promises, e.g. `roots.listChanged`
    /// for [`roots_changed`](crate::ClientConnection::roots_changed).
    #[error("the client did not declare the `{capability}` capability")]
    CapabilityNotDeclared {
        /// The capability, e.g. `roots.listChanged`.
        capability: &'static str,
    },
    /// The request id is not pending (it finished, or was never sent).
    #[error("no pending request with id {0}")]
    UnknownRequest(RequestId),
    /// `respond` for a server request that is not open.
    #[error("no open server request with id {0}")]
    UnknownServerRequest(RequestId),
    /// The params are not a JSON object, or do not serialize.
    #[error("invalid params: {0}")]
    InvalidParams(String),
    /// `initialize` and `notifications/initialized` belong to the engine.
    #[error("{0} is sent by the engine itself")]
    ReservedMethod(String),
    /// The negotiated protocol version has no such method (for example `ping` on 2026-07-28).
    #[error("{method} does not exist in protocol version {version}{}", replacement_suffix(.replacement))]
    NotInVersion {
        /// The method.
        method: String,
        /// The negotiated version.
        version: crate::ProtocolVersion,
        /// What replaces it, if anything.
        replacement: Option<&'static str>,
    },
    /// The transport cannot carry this message (a notification of ours on 2026-07-28
    /// Streamable HTTP, where only requests are posted). Nothing was sent.
    #[error("{what} cannot be sent over {transport}")]
    TransportCannotCarry {
        /// The message's method.
        what: String,
        /// The transport, for the message.
        transport: &'static str,
    },
    /// This connection follows the task already (a call became it, or
    /// [`follow_task`](crate::ClientConnection::follow_task) follows it): a task has one
    /// follower, so that its result reaches one caller.
    #[error("the task {0:?} is followed already on this connection")]
    TaskFollowed(String),
}

impl UsageError {
    /// Whether the same command may succeed later: before the handshake ended
    /// ([`NotReady`](Self::NotReady)), or on a new connection after one that closed for a
    /// retriable reason. Every other refusal is a mistake in the call itself: `false`.
    pub fn is_retriable(&self) -> bool {
        match self {
            UsageError::NotReady => true,
            UsageError::Closed(reason) => reason.is_retriable(),
            _ => false,
        }
    }
}

fn replacement_suffix(replacement: &Option<&'static str>) -> String {
    replacement.map(|r| format!("; use {r}")).unwrap_or_default()
}
