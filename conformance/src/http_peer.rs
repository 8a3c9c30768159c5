//! A live Streamable HTTP server at the wire level (see [`crate::peer`]).

use std::io;

use crate::peer::Incoming;

/// A Streamable HTTP endpoint: each message is `POST`ed; what comes back (a JSON body or an
/// event stream) arrives on [`incoming`](Self::incoming).
#[derive(Debug)]
pub struct HttpPeer {
    incoming: async_channel::Receiver<Incoming>,
}

impl HttpPeer {
    /// A peer for the endpoint `url`, sending `headers` with every request.
    pub fn new(url: &str, headers: Vec<(String, String)>) -> io::Result<Self> {
        let _ = (url, headers);
        Err(io::Error::other("HTTP peers are not built yet"))
    }

    /// `POST`s one message.
    pub async fn send(&mut self, bytes: &[u8], headers: &[(String, String)]) -> io::Result<()> {
        let _ = (bytes, headers);
        Err(io::Error::other("HTTP peers are not built yet"))
    }

    /// Where responses arrive.
    pub fn incoming(&self) -> async_channel::Receiver<Incoming> {
        self.incoming.clone()
    }

    /// Ends the session.
    pub async fn shutdown(self) {}
}
