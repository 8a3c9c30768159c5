//! Where outgoing messages go: the session's [`Sink`] (stdout lines for stdio, see [`Output`];
//! the standalone or a request stream for a legacy HTTP session) or the stream of one request
//! (an [`Outlet`]).

use std::fmt;
use std::io::Write;
use std::sync::{Arc, Mutex};

use serde_json::Value;

use super::exchange::Exchange;

/// The destination of the messages a session sends that are not tied to one request's stream.
pub(crate) trait Sink: Send + Sync + fmt::Debug {
    /// Sends one message. `origin` is the stream of the request whose handler sent it, when there
    /// is one (a transport may use it when it has nowhere better to send it).
    fn send(&self, message: &Value, origin: Option<&Arc<Exchange>>);
}

/// Where the messages that belong to one request go (its notifications and its response).
#[derive(Debug, Clone)]
pub(crate) enum Outlet {
    /// The session's [`Sink`] (stdio: stdout, like everything else).
    Session,
    /// The request's own response stream (HTTP).
    Stream(Arc<Exchange>),
}

impl Outlet {
    /// The request's own stream, if it has one.
    pub(crate) fn stream(&self) -> Option<&Arc<Exchange>> {
        match self {
            Self::Session => None,
            Self::Stream(exchange) => Some(exchange),
        }
    }
}

/// Writes JSON-RPC messages as single lines (`<json>\n`), one writer at a time.
///
/// Every message is serialized outside the lock, then written with one `write_all` followed by
/// a flush while holding the lock, so concurrent handlers never interleave bytes.
pub(crate) struct Output {
    sink: Mutex<Box<dyn Write + Send>>,
}

impl Output {
    /// Wraps a byte sink (normally stdout).
    pub(crate) fn new(sink: Box<dyn Write + Send>) -> Self {
        Self { sink: Mutex::new(sink) }
    }
}

impl Sink for Output {
    /// Sends one message as one line.
    ///
    /// Write errors (typically a closed pipe: the client went away) are reported on stderr and
    /// otherwise ignored; the server keeps running until its stdin reaches EOF.
    fn send(&self, message: &Value, _origin: Option<&Arc<Exchange>>) {
        let mut line = match serde_json::to_vec(message) {
            Ok(line) => line,
            Err(error) => {
                eprintln!("demo-server: cannot serialize a message: {error}");
                return;
            }
        };
        line.push(b'\n');
        let mut sink = self.sink.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Err(error) = sink.write_all(&line).and_then(|()| sink.flush()) {
            eprintln!("demo-server: cannot write to stdout: {error}");
        }
    }
}

impl fmt::Debug for Output {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Output").finish_non_exhaustive()
    }
}

/// A sink for a server whose messages all go to request streams (the shared 2026-07-28 HTTP
/// server): anything else is dropped, with a line on stderr.
#[derive(Debug)]
pub(crate) struct Discard;

impl Sink for Discard {
    fn send(&self, message: &Value, origin: Option<&Arc<Exchange>>) {
        if origin.is_some_and(|stream| stream.send(message)) {
            return;
        }
        let what = message.get("method").and_then(Value::as_str).unwrap_or("a response");
        eprintln!("demo-server: no stream to send {what} on; dropped");
    }
}
