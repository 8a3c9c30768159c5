//! Turning hyper's errors into `io::Error`s that say what failed.

use std::error::Error as _;
use std::io;

use mcp_sansio::TransportError;

/// The most bytes of a response head hyper reads (its default buffer limit,
/// `8192 + 4096 * 100`); it also refuses more than 100 header fields.
pub(crate) const HEAD_LIMIT: usize = 8192 + 4096 * 100;

/// hyper's words for a response head over its limits (`Parse::TooLarge`, whose predicate needs
/// hyper's `server` feature).
const HEAD_TOO_LARGE: &str = "message head is too large";

/// Maps a hyper error to an `io::Error` whose message starts with `context` and includes the
/// whole cause chain; the kind is the underlying I/O error's when there is one. A head over
/// hyper's limits becomes [`TransportError::HeadTooLarge`], which the session reports as such.
pub(crate) fn from_hyper(context: impl std::fmt::Display, error: hyper::Error) -> io::Error {
    if error.is_parse() && error.to_string() == HEAD_TOO_LARGE {
        return io::Error::new(
            io::ErrorKind::InvalidData,
            TransportError::HeadTooLarge { limit: Some(HEAD_LIMIT) },
        );
    }
    let mut message = format!("{context}: {error}");
    let mut kind = None;
    let mut source = error.source();
    while let Some(cause) = source {
        message.push_str(": ");
        message.push_str(&cause.to_string());
        if kind.is_none() {
            kind = cause.downcast_ref::<io::Error>().map(io::Error::kind);
        }
        source = cause.source();
    }
    let kind = kind.unwrap_or(if error.is_incomplete_message() {
        io::ErrorKind::UnexpectedEof
    } else if error.is_parse() {
        io::ErrorKind::InvalidData
    } else if error.is_canceled() || error.is_closed() {
        io::ErrorKind::ConnectionAborted
    } else {
        io::ErrorKind::Other
    });
    io::Error::new(kind, message)
}

/// Adds `context` in front of an I/O error's message, keeping its kind.
pub(crate) fn with_context(context: impl std::fmt::Display, error: io::Error) -> io::Error {
    io::Error::new(error.kind(), format!("{context}: {error}"))
}
