//! [`Cooperative`]: an I/O wrapper that makes a connection's task give the executor back now and
//! then, however fast the server sends.
//!
//! hyper's HTTP/1.1 client parses `1xx` interim responses in a loop that reads from the
//! connection until a final head arrives, and only returns `Pending` when a read does (its reads
//! grow up to some 400 KiB). A server that sends `100 Continue` heads without end kept the task in
//! that loop for as long as it sent: on smol's global executor (one thread by default) no other
//! task ran meanwhile, so the driver could not fire the call's deadline (a 500 ms call failed
//! after 2 to 5 s, or never while the server kept sending) and every other connection of the
//! process stood still. Giving up the thread after a run of ready reads or bytes bounds that
//! loop, as hyper's own dispatcher does for its other loops.

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};

use futures_lite::{AsyncRead, AsyncWrite};

/// How many reads in a row may complete at once before the task yields.
const READS_BEFORE_YIELD: u32 = 32;

/// How many bytes may be read in a row before the task yields: parsing this much takes about a
/// millisecond even in a debug build, and a fast body costs one extra task poll per this many
/// bytes.
const BYTES_BEFORE_YIELD: usize = 64 * 1024;

/// `S`, but each run of [`READS_BEFORE_YIELD`] ready reads or [`BYTES_BEFORE_YIELD`] bytes ends
/// with one `Pending` (the task woken first, so it is polled again once the others had their
/// turn). No read returns more than the bytes left in the run.
pub(crate) struct Cooperative<S> {
    inner: S,
    ready_reads: u32,
    ready_bytes: usize,
}

impl<S> Cooperative<S> {
    pub(crate) fn new(inner: S) -> Self {
        Self { inner, ready_reads: 0, ready_bytes: 0 }
    }
}

impl<S: AsyncRead + Unpin> AsyncRead for Cooperative<S> {
    fn poll_read(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut [u8]) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        if this.ready_reads >= READS_BEFORE_YIELD || this.ready_bytes >= BYTES_BEFORE_YIELD {
            this.ready_reads = 0;
            this.ready_bytes = 0;
            cx.waker().wake_by_ref();
            return Poll::Pending;
        }
        // One read of hyper's (up to some 400 KiB) would be as long a run on its own.
        let room = buf.len().min(BYTES_BEFORE_YIELD - this.ready_bytes);
        let poll = Pin::new(&mut this.inner).poll_read(cx, &mut buf[..room]);
        match &poll {
            Poll::Ready(result) => {
                this.ready_reads += 1;
                this.ready_bytes += result.as_ref().map_or(0, |n| *n);
            }
            Poll::Pending => {
                this.ready_reads = 0;
                this.ready_bytes = 0;
            }
        }
        poll
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for Cooperative<S> {
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

#[cfg(test)]
mod tests {
    use super::*;
    use futures_lite::AsyncReadExt;

    #[test]
    fn yields_after_a_run_of_ready_reads_or_bytes() {
        // A reader that is always ready: every READS_BEFORE_YIELD small reads, one Pending (with
        // a wake-up), then reads go on.
        let mut reader = Cooperative::new(futures_lite::io::repeat(b'x'));
        let waker = std::task::Waker::noop();
        let mut cx = Context::from_waker(waker);
        let mut buf = [0; 4];
        for round in 0..3 {
            for _ in 0..READS_BEFORE_YIELD {
                let poll = Pin::new(&mut reader).poll_read(&mut cx, &mut buf);
                assert!(matches!(poll, Poll::Ready(Ok(4))), "round {round}");
            }
            assert!(Pin::new(&mut reader).poll_read(&mut cx, &mut buf).is_pending(), "round {round}");
        }
        // Large reads: after BYTES_BEFORE_YIELD bytes, however large the buffer.
        let mut big = vec![0; BYTES_BEFORE_YIELD * 4];
        let poll = Pin::new(&mut reader).poll_read(&mut cx, &mut big);
        assert!(matches!(poll, Poll::Ready(Ok(n)) if n == BYTES_BEFORE_YIELD), "{poll:?}");
        assert!(Pin::new(&mut reader).poll_read(&mut cx, &mut big).is_pending());
        // Driven by an executor, the yields are invisible.
        let mut all = Vec::new();
        smol::block_on(Cooperative::new(futures_lite::io::repeat(b'y')).take(1000).read_to_end(&mut all))
            .unwrap();
        assert_eq!(all.len(), 1000);
    }
}
