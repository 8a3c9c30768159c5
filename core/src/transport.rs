//! The seam between [`ClientConnection`] and a transport layer above a byte stream: the facts a
//! transport reports ([`TransportEvent`]) and the command handle it lends out ([`Commands`]).
//!
//! [`HttpSession`](crate::http::HttpSession) is built on these and on the connection's public
//! API only; a transport written outside this crate (WebSocket, an in-memory pair, an
//! application's own HTTP stack) sits on the same surface.

use std::time::Instant;

use serde::Serialize;

use crate::connection::ClientConnection;
use crate::error::UsageError;
use crate::event::RequestError;
use crate::jsonrpc::ErrorObject;
use crate::schema::{Notification, Request, RootsListChangedNotification};
use crate::{RequestId, RequestOptions};

/// What a transport learnt about the messages it carries, for
/// [`ClientConnection::handle_transport`].
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum TransportEvent {
    /// The transport cannot deliver the response to our request `id` (an HTTP error status, a
    /// connection that could not be made, a content type that cannot carry it): the request
    /// fails with `error`. For the handshake's own requests this decides the handshake: a
    /// failed `server/discover` probe means "not a 2026-07-28 server"; a failed `initialize`
    /// closes the connection.
    RequestFailed {
        /// The request's id on the wire.
        id: RequestId,
        /// Why, as the caller will see it.
        error: RequestError,
    },
    /// The stream that was to carry the response to `id` ended or broke before the response,
    /// with no way to resume it. A 2026-07-28 request is stateless, so it is sent again under
    /// a new id (a new [`Transmit`](crate::Transmit)), at most twice; any other fails with
    /// `error`.
    ResponseLost {
        /// The request's id on the wire.
        id: RequestId,
        /// Why, if it is not sent again.
        error: RequestError,
    },
    /// The transport dropped an incoming message of at least `len` bytes for exceeding
    /// [`ClientConfig::max_message_size`](crate::ClientConfig::max_message_size): counted, and
    /// reported as [`ProtocolViolation::Oversized`](crate::ProtocolViolation::Oversized) (with
    /// no id: a transport that knows which request the message answered fails it with
    /// [`RequestFailed`](Self::RequestFailed) instead, or as well).
    Oversized {
        /// The size seen before it was dropped.
        len: usize,
    },
    /// The transport holds request `id` back for something the server has no part in (the
    /// user authorizing the client in a browser): its deadline stops until
    /// [`Released`](Self::Released). Whatever holds it has a deadline of its own
    /// ([`AuthConfig::authorization_timeout`](crate::auth::AuthConfig::authorization_timeout)),
    /// so nothing waits for ever.
    Held {
        /// The request's id on the wire.
        id: RequestId,
    },
    /// Request `id` goes out again after being [`Held`](Self::Held): its deadline (idle timeout
    /// and cap) starts again from now.
    Released {
        /// The request's id on the wire.
        id: RequestId,
    },
    /// The transport is gone for good (a write failed, a session could not be re-established):
    /// the connection closes with [`CloseReason::Transport`](crate::CloseReason::Transport).
    Closed {
        /// What happened, for the close reason.
        detail: String,
    },
    /// The server does not read what the client writes: `unwritten` bytes of answers and
    /// notifications wait for it, past the transport's `limit`. A transport that keeps reading
    /// a server that writes without reading (it must: a transport that stops reading can
    /// deadlock with a server blocked on its own writes) reports this instead of holding
    /// more. The connection closes with
    /// [`CloseReason::ServerNotReading`](crate::CloseReason::ServerNotReading).
    ServerNotReading {
        /// Bytes waiting to be written.
        unwritten: usize,
        /// The transport's bound on them.
        limit: usize,
    },
}

/// The commands of a connection, lent out by a transport layer that owns it.
///
/// It has the connection's commands and nothing else: no input and no output, so that whoever
/// holds it cannot feed messages past the transport or take transmits it has not seen. Each
/// command behaves as the connection's method of the same name; the transport may refuse what
/// it cannot carry ([`UsageError::TransportCannotCarry`]).
#[derive(Debug)]
pub struct Commands<'a> {
    conn: &'a mut ClientConnection,
    /// The transport carries no notifications of ours (2026-07-28 over HTTP): refuse them.
    refuse_notifications: Option<&'static str>,
}

impl<'a> Commands<'a> {
    pub(crate) fn new(conn: &'a mut ClientConnection) -> Self {
        Commands { conn, refuse_notifications: None }
    }

    /// Makes [`notify`](Self::notify) refuse with [`UsageError::TransportCannotCarry`] naming
    /// `transport`: for a transport that carries no notifications of ours.
    pub fn refuse_notifications(mut self, transport: &'static str) -> Self {
        self.refuse_notifications = Some(transport);
        self
    }

    /// The connection, for its getters.
    pub fn connection(&self) -> &ClientConnection {
        self.conn
    }

    /// [`ClientConnection::send`].
    pub fn send<R: Request>(
        &mut self,
        now: Instant,
        params: &R::Params,
        options: RequestOptions,
    ) -> Result<RequestId, UsageError> {
        self.conn.send::<R>(now, params, options)
    }

    /// [`ClientConnection::send_serialized`].
    pub fn send_serialized(
        &mut self,
        now: Instant,
        method: &'static str,
        params: &crate::SerializedParams,
        options: RequestOptions,
    ) -> Result<RequestId, UsageError> {
        self.conn.send_serialized(now, method, params, options)
    }

    /// [`ClientConnection::send_request`].
    pub fn send_request(
        &mut self,
        now: Instant,
        method: &str,
        params: Option<&[u8]>,
        options: RequestOptions,
    ) -> Result<RequestId, UsageError> {
        self.conn.send_request(now, method, params, options)
    }

    /// [`ClientConnection::notify`], unless the transport cannot carry notifications.
    pub fn notify(&mut self, method: &str, params: Option<&[u8]>) -> Result<(), UsageError> {
        // The connection's own checks first: they say more (not ready, not in this version).
        self.conn.check_notify(method)?;
        if let Some(transport) = self.refuse_notifications {
            return Err(UsageError::TransportCannotCarry { what: method.to_owned(), transport });
        }
        self.conn.notify(method, params)
    }

    /// [`ClientConnection::roots_changed`], refused like [`notify`](Self::notify) where the
    /// transport carries no notifications and there is something to send.
    pub fn roots_changed(&mut self) -> Result<(), UsageError> {
        match self.conn.roots_change_to_send()? {
            true => self.notify(RootsListChangedNotification::METHOD, None),
            false => Ok(()),
        }
    }

    /// [`ClientConnection::respond`].
    pub fn respond<T: Serialize + ?Sized>(
        &mut self,
        id: &RequestId,
        outcome: Result<&T, ErrorObject>,
    ) -> Result<(), UsageError> {
        self.conn.respond(id, outcome)
    }

    /// [`ClientConnection::follow_task`].
    pub fn follow_task(
        &mut self,
        now: std::time::Instant,
        task_id: &str,
        options: crate::RequestOptions,
    ) -> Result<RequestId, UsageError> {
        self.conn.follow_task(now, task_id, options)
    }

    /// [`ClientConnection::cancel`].
    pub fn cancel(&mut self, id: &RequestId, reason: Option<&str>) -> Result<(), UsageError> {
        self.conn.cancel(id, reason)
    }

    /// [`ClientConnection::close`].
    pub fn close(&mut self) {
        self.conn.close()
    }

    /// [`ClientConnection::abort`]: the application's own code failed.
    pub fn abort(&mut self, detail: impl Into<String>) {
        self.conn.abort(detail)
    }
}
