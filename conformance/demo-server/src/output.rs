//! The outgoing half of the stdio transport: whole JSON lines behind a mutex.

use std::io::Write;
use std::sync::Mutex;

use serde_json::Value;

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

    /// Sends one message as one line.
    ///
    /// Write errors (typically a closed pipe: the client went away) are reported on stderr and
    /// otherwise ignored; the server keeps running until its stdin reaches EOF.
    pub(crate) fn send(&self, message: &Value) {
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

impl std::fmt::Debug for Output {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Output").finish_non_exhaustive()
    }
}
