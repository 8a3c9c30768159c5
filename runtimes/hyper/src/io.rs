//! hyper's I/O traits over a connection's stream, without zeroing hyper's read buffer on every
//! read.
//!
//! hyper hands a reader the unfilled part of its read buffer as uninitialized memory (8 KiB at
//! first, growing to some 400 KiB for large bodies). `futures_io::AsyncRead` reads only into
//! initialized bytes, and writing into hyper's buffer directly takes `unsafe` code, which this
//! crate forbids. smol-hyper's `FuturesIo` (used before) zeroes all of the unfilled part on
//! every read, the reads that find nothing included: on a sequential call to a local server
//! that was 37 % of the client's instructions (callgrind: 41 000 of 109 000 per call, from 5.5
//! reads per call, most of them `Pending`).
//!
//! [`HyperIo`] reads into a buffer of the thread's instead, zeroed once when the thread first
//! reads, and hands hyper what came with `put_slice`: a read that finds nothing costs nothing,
//! and one that brings `n` bytes copies `n` bytes. One buffer per thread, not per connection:
//! an idle connection holds none of it.

use std::cell::RefCell;
use std::io;
use std::pin::Pin;
use std::task::{Context, Poll, ready};

use futures_lite::{AsyncRead, AsyncWrite};
use hyper::rt::ReadBufCursor;

/// The most bytes one read brings: the run after which a connection's task yields
/// (`coop.rs`), which hyper's buffer reaches only for large bodies (it starts at 8 KiB).
pub(crate) const READ_AT_MOST: usize = 64 * 1024;

thread_local! {
    /// Where this thread's reads land before hyper's buffer.
    static SCRATCH: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
}

/// `S` as hyper reads and writes it.
pub(crate) struct HyperIo<S> {
    inner: S,
}

impl<S> HyperIo<S> {
    pub(crate) fn new(inner: S) -> Self {
        Self { inner }
    }
}

impl<S: AsyncRead + Unpin> hyper::rt::Read for HyperIo<S> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        mut buf: ReadBufCursor<'_>,
    ) -> Poll<io::Result<()>> {
        let len = buf.remaining().min(READ_AT_MOST);
        let inner = Pin::new(&mut self.get_mut().inner);
        SCRATCH.with(|scratch| {
            // A read inside a read on this thread (none of this crate's streams does that)
            // would find the buffer taken: it gets one of its own.
            let mut own = Vec::new();
            let mut taken = scratch.try_borrow_mut();
            let scratch = match taken.as_mut() {
                Ok(scratch) => &mut **scratch,
                Err(_) => &mut own,
            };
            if scratch.len() < len {
                // Zeroed by the allocator (fresh memory is not touched until a read fills it).
                *scratch = vec![0; READ_AT_MOST];
            }
            let n = ready!(inner.poll_read(cx, &mut scratch[..len]))?;
            buf.put_slice(&scratch[..n]);
            Poll::Ready(Ok(()))
        })
    }
}

impl<S: AsyncWrite + Unpin> hyper::rt::Write for HyperIo<S> {
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

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_close(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What hyper sees of `HyperIo` over `source`, read to the end.
    async fn read_all(source: &[u8]) -> Vec<u8> {
        let mut io = HyperIo::new(source);
        let mut all = Vec::new();
        loop {
            let mut storage = [std::mem::MaybeUninit::<u8>::uninit(); 50_000];
            let mut buf = hyper::rt::ReadBuf::uninit(&mut storage);
            std::future::poll_fn(|cx| hyper::rt::Read::poll_read(Pin::new(&mut io), cx, buf.unfilled()))
                .await
                .unwrap();
            if buf.filled().is_empty() {
                return all;
            }
            assert!(buf.filled().len() <= READ_AT_MOST);
            all.extend_from_slice(buf.filled());
        }
    }

    #[test]
    fn what_comes_reaches_hyper_whole_and_in_order() {
        let source: Vec<u8> = (0..100_000u32).map(|n| (n % 251) as u8).collect();
        assert_eq!(smol::block_on(read_all(&source)), source);
        assert_eq!(smol::block_on(read_all(b"")), b"");
    }

    /// A stream that never has anything.
    struct Silent;

    impl AsyncRead for Silent {
        fn poll_read(self: Pin<&mut Self>, _: &mut Context<'_>, _: &mut [u8]) -> Poll<io::Result<usize>> {
            Poll::Pending
        }
    }

    #[test]
    fn a_read_that_finds_nothing_gives_hyper_nothing() {
        let mut io = HyperIo::new(Silent);
        let mut storage = [std::mem::MaybeUninit::<u8>::uninit(); 64];
        let mut buf = hyper::rt::ReadBuf::uninit(&mut storage);
        let mut cx = Context::from_waker(std::task::Waker::noop());
        assert!(hyper::rt::Read::poll_read(Pin::new(&mut io), &mut cx, buf.unfilled()).is_pending());
        assert!(buf.filled().is_empty());
    }
}
