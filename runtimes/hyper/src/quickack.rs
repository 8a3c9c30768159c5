//! Acknowledging at once what a connection received while its response is incomplete, so that a
//! server writing a response in several small pieces without `TCP_NODELAY` does not wait out our
//! delayed ACK.
//!
//! The stall: a server writes the response head, then the body (an event-stream event, say), in
//! two small writes with Nagle's algorithm on. Nagle holds the second write until the first is
//! acknowledged. Linux delays that ACK: on a connection where the client sends soon after it
//! receives (request, response, request, ...), it is in "pingpong" mode, where ACKs wait to ride
//! on the client's next data, and the client sends nothing until the response is complete. The
//! delayed-ACK timer ends the standoff after 40 ms, on every response of a kept-alive connection
//! (rmcp's Streamable HTTP server in its session mode: 24 calls/s).
//!
//! Setting `TCP_QUICKACK` sends the pending ACK at once; clearing it right after goes back to
//! delayed ACKs, so that the rest of the response is acknowledged by the next request rather
//! than by a packet of its own. This is done:
//!
//! - by [`QuickAck::now`] when the response body is polled and hyper has nothing for it: the
//!   client is waiting for the server, which may be waiting for this ACK. This covers every
//!   split of a body, but only once hyper's task went to sleep on the socket, so the rest of the
//!   response then costs a reactor round (waking that task again);
//! - by [`Stream`] right after a read whose bytes end where a response head ends (a blank line),
//!   which is how the split above arrives: the ACK leaves before hyper reads on, and the body is
//!   usually there when it does. Over TLS the bytes are encrypted and only the first way works.
//!
//! Not after every read: a response that arrives whole (the usual case) then never waits, and
//! its ACK still rides on the next request. Acknowledging after every read sent 3 TCP segments
//! per sequential call to a local server instead of 2; this sends 2, and 4 for a split response
//! (request, head, ACK, body), the least it can be. A server that splits the response head
//! itself is not covered; the ones seen write it whole.

use std::io;
use std::pin::Pin;
use std::sync::{Arc, Weak};
use std::task::{Context, Poll};

use async_io::Async;
use futures_lite::{AsyncRead, AsyncWrite};
use smol::net::TcpStream;

/// Acknowledges at once what a connection received. It holds the socket weakly: the socket
/// closes when the connection's task drops its stream, whatever handles remain, and the handle
/// then does nothing.
#[derive(Clone, Debug)]
pub(crate) struct QuickAck {
    socket: Weak<Async<std::net::TcpStream>>,
}

impl QuickAck {
    /// Sends the ACK the kernel may be holding back for this connection, now.
    pub(crate) fn now(&self) {
        if let Some(socket) = self.socket.upgrade() {
            quick_ack(&*socket);
        }
    }
}

/// Sends the ACK the kernel may be holding back for `socket`, now.
#[cfg(any(target_os = "linux", target_os = "android"))]
fn quick_ack(socket: &impl std::os::fd::AsFd) {
    use rustix::net::sockopt::set_tcp_quickack;
    // A failure (the socket closing meanwhile) only leaves the ACK to the kernel's timer.
    let _ = set_tcp_quickack(socket, true);
    // Back to delayed ACKs: the rest of the response is then acknowledged by the next request
    // rather than by a packet of its own.
    let _ = set_tcp_quickack(socket, false);
}

/// No `TCP_QUICKACK` here (macOS and the BSDs lack it; Windows has a different, sticky option,
/// which this crate does not set): ACKs follow the system's policy, and a server that splits a
/// response in small writes without `TCP_NODELAY` may stall on them.
#[cfg(not(any(target_os = "linux", target_os = "android")))]
fn quick_ack<S>(_: &S) {}

/// Whether `data`, the bytes one read returned, ends with the blank line that ends a response
/// head. A chunked body's last chunk (`0`, then a blank line) is not one. A body that happens to
/// end this way only costs an early ACK.
fn ends_a_head(data: &[u8]) -> bool {
    data.ends_with(b"\r\n\r\n") && !data.ends_with(b"\r\n0\r\n\r\n") && data != b"0\r\n\r\n"
}

/// A connection's TCP stream, as hyper (or TLS) reads and writes it, acknowledging a response
/// head that arrived alone at once.
pub(crate) struct Stream {
    tcp: TcpStream,
}

impl Stream {
    /// The stream, and the handle that acknowledges what it received.
    pub(crate) fn new(tcp: TcpStream) -> (Self, QuickAck) {
        // The stream's own shared socket (a clone of the stream shares it).
        let socket: Arc<Async<std::net::TcpStream>> = tcp.clone().into();
        (Self { tcp }, QuickAck { socket: Arc::downgrade(&socket) })
    }
}

impl AsyncRead for Stream {
    fn poll_read(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut [u8]) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        let poll = Pin::new(&mut this.tcp).poll_read(cx, buf);
        if let Poll::Ready(Ok(n)) = poll {
            if buf.get(..n).is_some_and(ends_a_head) {
                quick_ack(&this.tcp);
            }
        }
        poll
    }
}

impl AsyncWrite for Stream {
    fn poll_write(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().tcp).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().tcp).poll_write_vectored(cx, bufs)
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().tcp).poll_flush(cx)
    }

    fn poll_close(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().tcp).poll_close(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::ends_a_head;

    #[test]
    fn a_head_that_arrived_alone_is_recognised() {
        assert!(ends_a_head(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n\r\n"));
        assert!(ends_a_head(b"\r\n\r\n"));
        // A whole response, a body's middle, a chunked body's end.
        assert!(!ends_a_head(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\n{}"));
        assert!(!ends_a_head(b"event: message\ndata: {}\n\n"));
        assert!(!ends_a_head(b"5\r\nhello\r\n0\r\n\r\n"));
        assert!(!ends_a_head(b"0\r\n\r\n"));
        assert!(!ends_a_head(b""));
    }
}
