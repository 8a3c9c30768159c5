//! [`QuickAck`]: a TCP stream that acknowledges what it read at once, so that a server writing a
//! response in several small pieces without `TCP_NODELAY` does not wait out our delayed ACK.
//!
//! The stall it removes: a server writes the response head, then the body (an event-stream
//! event, say), in two small writes with Nagle's algorithm on. Nagle holds the second write until
//! the first is acknowledged. Linux delays that ACK: a connection where the client answers soon
//! after it receives (request, response, request, ...) is in "pingpong" mode, where ACKs wait to
//! ride on the client's next data, and the client sends nothing until the response is complete.
//! The delayed-ACK timer ends the standoff after 40 ms, on every response of a kept-alive
//! connection (rmcp's Streamable HTTP server in its session mode: 24 calls/s).
//!
//! `TCP_QUICKACK` sends a pending ACK at once and leaves pingpong mode, but it is not sticky: the
//! kernel goes back to pingpong mode when the client next sends. So it is set again after every
//! read that returned data: one `setsockopt` per read (about a microsecond), which sends the
//! acknowledgement the kernel was holding, if any.

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};

use futures_lite::{AsyncRead, AsyncWrite};
use smol::net::TcpStream;

/// `TcpStream`, with `TCP_QUICKACK` set again after each read that returned data.
pub(crate) struct QuickAck {
    inner: TcpStream,
}

impl QuickAck {
    pub(crate) fn new(inner: TcpStream) -> Self {
        Self { inner }
    }

    /// Acknowledges what was read, now.
    #[cfg(any(target_os = "linux", target_os = "android"))]
    fn rearm(&self) {
        // A failure (the socket closing under us) only leaves the ACK to the kernel's timer; the
        // next read reports the connection's state.
        let _ = rustix::net::sockopt::set_tcp_quickack(&self.inner, true);
    }

    /// No `TCP_QUICKACK` here (macOS and the BSDs lack it; Windows has a different, sticky
    /// option, which this crate does not set): ACKs follow the system's policy, and a server
    /// that splits small writes without `TCP_NODELAY` may stall on them.
    #[cfg(not(any(target_os = "linux", target_os = "android")))]
    fn rearm(&self) {}
}

impl AsyncRead for QuickAck {
    fn poll_read(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut [u8]) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        let poll = Pin::new(&mut this.inner).poll_read(cx, buf);
        if matches!(poll, Poll::Ready(Ok(n)) if n > 0) {
            this.rearm();
        }
        poll
    }
}

impl AsyncWrite for QuickAck {
    fn poll_write(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().inner).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().inner).poll_write_vectored(cx, bufs)
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_flush(cx)
    }

    fn poll_close(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_close(cx)
    }
}
