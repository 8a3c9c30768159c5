//! The read end of a server process's stdout: read first, and waited on without a read that
//! is known to fail.
//!
//! `async_io::Async`'s own `poll_read` reads until the pipe says `EAGAIN` and only then asks
//! the reactor to watch it. A pipe's `read` returns what the pipe holds, up to the buffer's
//! length, so a read that returns less than the buffer emptied the pipe: the read after it
//! would fail with `EAGAIN`. [`StdoutPipe`] skips that read and asks the reactor at once. The
//! reactor's interest is level-triggered, so bytes the server writes between the two are not
//! missed: the reactor reports the pipe readable at its next turn.
//!
//! That is one system call fewer per wait: per round trip of a sequential call, and per chunk
//! of a result too large for the pipe. On Linux the pipe is also made larger
//! ([`PIPE_CAPACITY`]), so that a 64 KiB result is one chunk. See `docs/performance.md`.

use std::fs::File;
use std::io::{self, Read};
use std::os::fd::OwnedFd;
use std::task::{Context, Poll, ready};

use async_io::Async;
use async_process::ChildStdout;

/// A server's stdout, non-blocking, registered with async-io's reactor.
pub(crate) struct StdoutPipe {
    io: Async<File>,
    /// The last read returned less than its buffer: the pipe was empty after it.
    drained: bool,
    /// Holds one of the process's enlarged pipes while the pipe lives.
    _enlarged: Option<Enlarged>,
}

/// What a server's stdout pipe may hold (Linux; elsewhere the system's default). A 64 KiB
/// result and its framing fit, so the server writes it in one go and the client wakes once for
/// it: with the default 64 KiB the two take turns, a wake-up per chunk (measured: four context
/// switches per 64 KiB result instead of two; see `docs/performance.md`). The kernel gives a
/// pipe's pages as they are written, so an idle pipe costs no more.
pub(crate) const PIPE_CAPACITY: usize = 256 * 1024;

/// How many pipes of this process are enlarged at once, at most. Linux counts every pipe's
/// capacity against its user (`/proc/sys/fs/pipe-user-pages-soft`, 64 MiB by default), and a
/// user past it gets small pipes everywhere: 64 pipes take at most 12 MiB more of that.
pub(crate) const ENLARGED_AT_MOST: usize = 64;

/// The count of this process's enlarged pipes.
static ENLARGED: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// One of the process's enlarged pipes (counted while it lives).
struct Enlarged;

impl Enlarged {
    /// Enlarges the pipe to [`PIPE_CAPACITY`] if fewer than [`ENLARGED_AT_MOST`] are; a pipe the
    /// system refuses to enlarge keeps its size.
    fn try_for(fd: &OwnedFd) -> Option<Self> {
        use std::sync::atomic::Ordering;
        if !cfg!(target_os = "linux") {
            return None;
        }
        if ENLARGED.fetch_add(1, Ordering::Relaxed) >= ENLARGED_AT_MOST {
            ENLARGED.fetch_sub(1, Ordering::Relaxed);
            return None;
        }
        // Held from here: dropped (uncounted) if the system refuses.
        let enlarged = Enlarged;
        #[cfg(target_os = "linux")]
        if let Err(error) = rustix::pipe::fcntl_setpipe_size(fd, PIPE_CAPACITY) {
            tracing::debug!(%error, "the server's stdout pipe keeps its size");
            return None;
        }
        #[cfg(not(target_os = "linux"))]
        let _ = fd;
        Some(enlarged)
    }
}

impl Drop for Enlarged {
    fn drop(&mut self) {
        ENLARGED.fetch_sub(1, std::sync::atomic::Ordering::Relaxed);
    }
}

impl StdoutPipe {
    pub(crate) fn new(pipe: ChildStdout) -> io::Result<Self> {
        let fd = OwnedFd::try_from(pipe)?;
        let enlarged = Enlarged::try_for(&fd);
        Ok(Self { io: Async::new(File::from(fd))?, drained: false, _enlarged: enlarged })
    }

    /// Reads what the pipe holds (`Ok(0)` at its end). After a read that emptied it, waits for
    /// the reactor to report it readable before reading again.
    pub(crate) fn poll_read(&mut self, cx: &mut Context<'_>, buf: &mut [u8]) -> Poll<io::Result<usize>> {
        if self.drained {
            ready!(self.io.poll_readable(cx))?;
            self.drained = false;
        }
        self.poll_read_now(cx, buf)
    }

    /// Reads now, whether or not the last read emptied the pipe (before reporting the end of a
    /// process that may have written its last bytes since).
    pub(crate) fn poll_read_now(&mut self, cx: &mut Context<'_>, buf: &mut [u8]) -> Poll<io::Result<usize>> {
        loop {
            match self.io.get_ref().read(buf) {
                Ok(n) => {
                    self.drained = n > 0 && n < buf.len();
                    return Poll::Ready(Ok(n));
                }
                Err(error) if error.kind() == io::ErrorKind::Interrupted => {}
                Err(error) if error.kind() == io::ErrorKind::WouldBlock => {
                    self.drained = false;
                    ready!(self.io.poll_readable(cx))?;
                }
                Err(error) => return Poll::Ready(Err(error)),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::process::Stdio;
    use std::task::Waker;

    use super::*;

    /// A child that writes what it reads on its stdin (`cat`), with both pipes.
    fn cat() -> (async_process::Child, async_process::ChildStdin, StdoutPipe) {
        // Not among the pipes another test counts.
        let _alone = ENLARGING.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let mut child = async_process::Command::new("cat")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .expect("cat");
        let stdin = child.stdin.take().expect("stdin");
        let mut stdout = StdoutPipe::new(child.stdout.take().expect("stdout")).expect("pipe");
        drop(stdout._enlarged.take());
        (child, stdin, stdout)
    }

    fn read(pipe: &mut StdoutPipe, buf: &mut [u8]) -> io::Result<usize> {
        futures_lite::future::block_on(std::future::poll_fn(|cx| pipe.poll_read(cx, buf)))
    }

    #[test]
    fn bytes_written_after_a_read_that_emptied_the_pipe_are_read() {
        let (mut child, mut stdin, mut pipe) = cat();
        let mut buf = [0u8; 64];
        futures_lite::future::block_on(futures_lite::AsyncWriteExt::write_all(&mut stdin, b"one\n")).unwrap();
        assert_eq!(read(&mut pipe, &mut buf).unwrap(), 4);
        assert!(pipe.drained, "a short read empties a pipe");
        // Written while nobody watches the pipe: the reactor's level-triggered interest sees them.
        futures_lite::future::block_on(futures_lite::AsyncWriteExt::write_all(&mut stdin, b"two\n")).unwrap();
        std::thread::sleep(std::time::Duration::from_millis(20));
        assert_eq!(read(&mut pipe, &mut buf).unwrap(), 4);
        assert_eq!(&buf[..4], b"two\n");
        drop(stdin);
        assert_eq!(read(&mut pipe, &mut buf).unwrap(), 0, "the end of the pipe");
        let _ = child.kill();
    }

    #[test]
    fn a_full_read_reads_again_without_waiting() {
        let (mut child, mut stdin, mut pipe) = cat();
        futures_lite::future::block_on(futures_lite::AsyncWriteExt::write_all(&mut stdin, &[b'x'; 100]))
            .unwrap();
        std::thread::sleep(std::time::Duration::from_millis(20));
        let mut small = [0u8; 60];
        assert_eq!(read(&mut pipe, &mut small).unwrap(), 60);
        assert!(!pipe.drained, "a full read may have left bytes behind");
        // Polled with a waker that does nothing: the rest is there, so no wait is needed.
        let mut cx = Context::from_waker(Waker::noop());
        assert!(matches!(pipe.poll_read(&mut cx, &mut small), Poll::Ready(Ok(40))));
        let _ = child.kill();
    }

    #[test]
    fn the_read_before_the_end_reads_even_after_a_read_that_emptied_the_pipe() {
        let (mut child, mut stdin, mut pipe) = cat();
        let mut buf = [0u8; 64];
        futures_lite::future::block_on(futures_lite::AsyncWriteExt::write_all(&mut stdin, b"a\n")).unwrap();
        assert_eq!(read(&mut pipe, &mut buf).unwrap(), 2);
        futures_lite::future::block_on(futures_lite::AsyncWriteExt::write_all(&mut stdin, b"b\n")).unwrap();
        std::thread::sleep(std::time::Duration::from_millis(20));
        let mut cx = Context::from_waker(Waker::noop());
        assert!(matches!(pipe.poll_read_now(&mut cx, &mut buf), Poll::Ready(Ok(2))));
        let _ = child.kill();
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_servers_stdout_pipe_holds_a_64_kib_result_and_its_framing() {
        let (mut child, _stdin, pipe) = cat();
        let size = rustix::pipe::fcntl_getpipe_size(pipe.io.get_ref()).expect("F_GETPIPE_SZ");
        assert!(size >= PIPE_CAPACITY, "{size} bytes");
        let _ = child.kill();
    }

    /// Taken while a test counts the process's enlarged pipes, and by [`cat`] (which gives its
    /// pipe's count back, the pipe staying enlarged); no other test of this crate spawns.
    static ENLARGING: std::sync::Mutex<()> = std::sync::Mutex::new(());

    #[cfg(target_os = "linux")]
    #[test]
    fn no_more_than_the_bound_of_pipes_are_enlarged_at_once() {
        let _alone = ENLARGING.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let pipes: Vec<_> = (0..ENLARGED_AT_MOST + 6).map(|_| rustix::pipe::pipe().expect("pipe")).collect();
        let enlarged: Vec<_> = pipes.iter().filter_map(|(read, _)| Enlarged::try_for(read)).collect();
        assert_eq!(enlarged.len(), ENLARGED_AT_MOST);
        assert_eq!(ENLARGED.load(std::sync::atomic::Ordering::Relaxed), ENLARGED_AT_MOST);
        let last = rustix::pipe::fcntl_getpipe_size(&pipes[ENLARGED_AT_MOST].0).expect("F_GETPIPE_SZ");
        assert!(last < PIPE_CAPACITY, "the pipe past the bound keeps its size ({last} bytes)");
        drop(enlarged);
        // Given back: a pipe is enlarged again.
        assert!(Enlarged::try_for(&pipes[0].0).is_some());
        assert_eq!(ENLARGED.load(std::sync::atomic::Ordering::Relaxed), 0);
    }
}
