//! [`Transmit`]: one outgoing message, with what it is beside its bytes, so that no transport
//! parses what the engine wrote.

use std::borrow::Cow;

use serde_json::value::RawValue;

use crate::RequestId;

/// One whole outgoing message, framed for a byte stream (it ends in `\n`), and what it is.
///
/// A stdio driver writes [`bytes`](Self::bytes); an HTTP layer posts [`message`](Self::message)
/// and reads the request's method and routing name from [`kind`](Self::kind) (the 2026-07-28
/// `Mcp-Method`, `Mcp-Name` and `Mcp-Param-*` headers are made from them).
#[derive(Debug, Clone, PartialEq, Eq)]
#[must_use = "a transmit must be written to the transport"]
pub struct Transmit {
    bytes: Vec<u8>,
    kind: TransmitKind,
}

/// What an outgoing message is.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum TransmitKind {
    /// A request of ours: a response with this id is awaited.
    Request(OutgoingRequest),
    /// A notification of ours (other than a cancellation).
    Notification {
        /// Its method.
        method: Cow<'static, str>,
    },
    /// `notifications/cancelled` for our request that went out with this id: on a transport
    /// where each request has a stream of its own, closing that stream says the same.
    Cancellation {
        /// The id the cancelled request had on the wire.
        id: RequestId,
    },
    /// An answer (result or error) to the server's request with this id.
    Response {
        /// The server's request id.
        id: RequestId,
    },
}

/// A request of ours, as a transport needs to know it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutgoingRequest {
    id: i64,
    call: i64,
    method: Cow<'static, str>,
    route: Option<Box<Route>>,
}

/// What a 2026-07-28 request acts on, for routing headers: the name of `tools/call` and
/// `prompts/get`, the uri of `resources/read`, and a tool call's arguments.
#[derive(Debug, Clone)]
pub(crate) struct Route {
    pub(crate) name: String,
    pub(crate) arguments: Option<Box<RawValue>>,
}

impl PartialEq for Route {
    fn eq(&self, other: &Self) -> bool {
        self.name == other.name
            && self.arguments.as_ref().map(|a| a.get()) == other.arguments.as_ref().map(|a| a.get())
    }
}

impl Eq for Route {}

impl OutgoingRequest {
    /// The request's id on the wire (a re-sent request has a new one each time).
    pub fn id(&self) -> RequestId {
        RequestId::Number(self.id)
    }

    /// The id the request's [`Event::Response`](crate::Event::Response) will carry: the id
    /// `send` returned. The same as [`id`](Self::id) unless the request was sent again.
    pub fn call_id(&self) -> RequestId {
        RequestId::Number(self.call)
    }

    /// The method.
    pub fn method(&self) -> &str {
        &self.method
    }

    /// The name the request acts on (`Mcp-Name`): a tool's or prompt's name, a resource's uri.
    /// Set on 2026-07-28 connections for `tools/call`, `prompts/get` and `resources/read`.
    pub fn name(&self) -> Option<&str> {
        self.route.as_ref().map(|r| r.name.as_str())
    }

    /// A 2026-07-28 `tools/call`'s arguments, for its `Mcp-Param-*` headers.
    pub fn tool_arguments(&self) -> Option<&RawValue> {
        self.route.as_ref().and_then(|r| r.arguments.as_deref())
    }
}

impl Transmit {
    pub(crate) fn new(bytes: Vec<u8>, kind: TransmitKind) -> Self {
        Transmit { bytes, kind }
    }

    pub(crate) fn request(
        bytes: Vec<u8>,
        id: i64,
        call: i64,
        method: Cow<'static, str>,
        route: Option<Box<Route>>,
    ) -> Self {
        Transmit { bytes, kind: TransmitKind::Request(OutgoingRequest { id, call, method, route }) }
    }

    /// The framed bytes, newline included: what a stdio driver writes.
    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// The JSON message without the newline: what an HTTP driver sends as a body.
    pub fn message(&self) -> &[u8] {
        self.bytes.strip_suffix(b"\n").unwrap_or(&self.bytes)
    }

    /// Takes the framed bytes.
    pub fn into_bytes(self) -> Vec<u8> {
        self.bytes
    }

    /// Takes the message (without the newline) and what it is.
    pub fn into_parts(self) -> (Vec<u8>, TransmitKind) {
        let mut bytes = self.bytes;
        if bytes.last() == Some(&b'\n') {
            bytes.pop();
        }
        (bytes, self.kind)
    }

    /// What the message is.
    pub fn kind(&self) -> &TransmitKind {
        &self.kind
    }

    /// The request, when the message is one of ours (its response is awaited).
    pub fn as_request(&self) -> Option<&OutgoingRequest> {
        match &self.kind {
            TransmitKind::Request(request) => Some(request),
            _ => None,
        }
    }

    /// The request id, when the message is a request (its response is awaited); `None` for
    /// notifications and for answers to the server's requests.
    pub fn request_id(&self) -> Option<RequestId> {
        self.as_request().map(OutgoingRequest::id)
    }

    /// Whether the message is not a request of ours: a notification, a cancellation or an
    /// answer, which no response follows.
    pub fn is_one_way(&self) -> bool {
        !matches!(self.kind, TransmitKind::Request(_))
    }
}
