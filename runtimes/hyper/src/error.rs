//! Turning hyper's errors into `io::Error`s that say what failed.

use std::error::Error as _;
use std::io;

/// Maps a hyper error to an `io::Error` whose message starts with `context` and includes the
/// whole cause chain; the kind is the underlying I/O error's when there is one.
pub(crate) fn from_hyper(context: impl std::fmt::Display, error: hyper::Error) -> io::Error {
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
