//! [`SerializedParams`]: a request's params serialized ahead of the send, for
//! [`ClientConnection::send_serialized`](crate::ClientConnection::send_serialized).

use std::borrow::Cow;

use serde::Serialize;

use crate::error::UsageError;

/// A request's params, already serialized by serde_json's compact writer: the engine sends them
/// without parsing them again ([`ClientConnection::send_serialized`]).
///
/// For a driver that must not run the params' `Serialize` impl where it sends: the send happens
/// under the driver's lock on the connection, and a `Serialize` impl is the application's code,
/// which may take any time. Serialize first, then lock and send. Only
/// [`serialize`](Self::serialize) makes one, so the bytes are always one JSON value.
///
/// ```
/// # use std::time::Instant;
/// # use mcp_sansio::{ClientConfig, ClientConnection, RequestOptions, SerializedParams, UsageError};
/// # use mcp_sansio::schema::Implementation;
/// # let mut conn = ClientConnection::new(ClientConfig::new(Implementation::new("x", "1")), Instant::now());
/// let params = SerializedParams::serialize(Vec::new(), &serde_json::json!({"name": "echo"}))?;
/// assert_eq!(params.as_bytes(), br#"{"name":"echo"}"#);
/// // Before the handshake finished, the engine refuses:
/// let refused = conn.send_serialized(Instant::now(), "tools/call", &params, RequestOptions::default());
/// assert_eq!(refused, Err(UsageError::NotReady));
/// // The buffer can be used again for the next params.
/// let buffer = params.into_buffer();
/// # Ok::<(), UsageError>(())
/// ```
///
/// [`ClientConnection::send_serialized`]: crate::ClientConnection::send_serialized
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SerializedParams {
    json: Vec<u8>,
}

impl SerializedParams {
    /// Serializes `params` into `buffer` (cleared first; pass `Vec::new()`, or a buffer from
    /// [`into_buffer`](Self::into_buffer) to reuse its allocation). A failing `Serialize` impl
    /// is [`UsageError::InvalidParams`], as [`ClientConnection::send`](crate::ClientConnection::send)
    /// has it.
    pub fn serialize<T: Serialize + ?Sized>(mut buffer: Vec<u8>, params: &T) -> Result<Self, UsageError> {
        buffer.clear();
        match serde_json::to_writer(&mut buffer, params) {
            Ok(()) => Ok(Self { json: buffer }),
            Err(error) => Err(UsageError::InvalidParams(error.to_string())),
        }
    }

    /// The JSON text.
    pub fn as_bytes(&self) -> &[u8] {
        &self.json
    }

    /// The buffer, to serialize the next params into.
    pub fn into_buffer(self) -> Vec<u8> {
        self.json
    }

    /// The params on one line. serde_json's compact writer puts no line break in what it writes
    /// itself, but a `RawValue` inside the params is written as it was given: a line break there
    /// can only be white space between tokens (inside strings it is escaped), so dropping it
    /// keeps the value and the newline framing of stdio intact.
    pub(crate) fn one_line(&self) -> Cow<'_, [u8]> {
        one_line(&self.json)
    }
}

/// `bytes` (valid JSON) on one line: see [`SerializedParams::one_line`]. Borrowed unless there
/// was a line break to drop.
pub(crate) fn one_line(bytes: &[u8]) -> Cow<'_, [u8]> {
    if memchr::memchr2(b'\n', b'\r', bytes).is_none() {
        return Cow::Borrowed(bytes);
    }
    Cow::Owned(bytes.iter().copied().filter(|b| !matches!(b, b'\n' | b'\r')).collect())
}
