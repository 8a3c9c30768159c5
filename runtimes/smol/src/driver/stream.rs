//! The byte-stream transport of a driver (a child's stdio pipes, a socket, any
//! `AsyncRead`/`AsyncWrite` pair): bytes read go to the engine, the engine's transmits are
//! written in order. Reading never stops for the server: a server that leaves too many of our
//! answers unread closes the connection instead (see [`MAX_QUEUED_ANSWERS`]).

use std::collections::VecDeque;
use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use futures_lite::{AsyncRead, AsyncWrite};
use mcp_sansio::TransportEvent;

use super::view::EngineView;
use crate::shared::{Engine, Shared, StreamKey};
use crate::source_waker::{SourceWaker, TaskWaker};

/// How long the driver tries to write what is still queued once the connection closed, when
/// no server process sets it (a process's first shutdown step does: the flush comes out of
/// it). A server that stopped reading its stdin must not keep the shutdown waiting forever.
const FINAL_FLUSH_LIMIT: Duration = Duration::from_secs(2);

/// How long after the server's stdout ended (or a write to it failed) the driver waits for the
/// server process to exit, so that the connection closes with its exit status. A process that
/// exits has closed its pipes a moment before: this is only reached by a server that closed
/// them and lives on, whose end it delays.
pub(super) const EXIT_WAIT: Duration = Duration::from_millis(100);

/// How the stream ended, as the engine will be told unless the server's exit status says more.
pub(super) enum End {
    /// The reader reached its end.
    Eof,
    /// Reading or writing failed: the detail for the close reason.
    Failed(String),
}

/// Most bytes of messages that are not requests (answers to the server's requests, our
/// notifications) that may wait unwritten behind the one being written; past it the connection
/// closes with [`CloseReason::ServerNotReading`](mcp_sansio::CloseReason::ServerNotReading).
/// Every server request gets an answer, so a server that sends requests without reading its
/// stdin would otherwise grow the queue without bound (an adversarial test saw 5 MB/s). The
/// answer being written does not count, so that one answer larger than this (a sampling result
/// with a large image) goes through the pipe a piece at a time to a server that reads it; it
/// was, in its first version, taken for a server that stopped reading.
///
/// The client never stops reading to hold the queue back: it used to, past 4 MiB, and a
/// server that writes everything before it reads (as a single-threaded one does) then blocked
/// writing to a client blocked waiting for it to read, for good (issue 35). Reading on and
/// closing past this bound ends that in a typed error instead, with memory bounded. A server
/// that reads while it writes, however slowly, stays far below: the adversary's 400 000
/// elicitations from a server reading concurrently peaked at 0.5 to 2.2 MiB unwritten (debug
/// builds). Queued requests of ours do not count: they are the application's, not the
/// server's doing.
const MAX_QUEUED_ANSWERS: usize = 8 * 1024 * 1024;

/// How much of the write queue may have been written while the rest waits before the written
/// part is dropped from the queue's front (a move of what is left, so not for every write).
const COMPACT_AT: usize = 64 * 1024;

/// Size of the read buffer: one read takes at most this much.
const READ_BUFFER: usize = 64 * 1024;

thread_local! {
    /// The read buffer of the streams read on this thread: what a read brings is fed to the
    /// engine before the read returns, so one buffer per thread serves every connection, and
    /// an idle connection holds none (a hundred stdio servers took 6.4 MiB of read buffers).
    static READ_SCRATCH: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// Runs `read` with this thread's read buffer ([`READ_BUFFER`] bytes), or with a buffer of its
/// own if a read on this thread is already using it.
fn with_read_buffer<T>(read: impl FnOnce(&mut [u8]) -> T) -> T {
    READ_SCRATCH.with(|scratch| match scratch.try_borrow_mut() {
        Ok(mut buffer) => {
            if buffer.len() < READ_BUFFER {
                // Zeroed by the allocator (fresh memory is not touched until a read fills it).
                *buffer = vec![0; READ_BUFFER];
            }
            read(&mut buffer)
        }
        Err(_) => read(&mut vec![0; READ_BUFFER]),
    })
}

pub(super) struct StreamIo {
    /// Reaches the engine's bare connection (see [`Engine::stream`]).
    key: StreamKey,
    reader: Option<Pin<Box<dyn AsyncRead + Send>>>,
    writer: Option<Pin<Box<dyn AsyncWrite + Send>>>,
    /// Set when the reader woke the task: the reader is polled only then.
    reader_news: SourceWaker,
    /// What is queued for writing; `out[..out_pos]` was written.
    out: Vec<u8>,
    out_pos: usize,
    /// The messages in `out` that are not requests: (end offset in `out`, length), oldest
    /// first, and their total length (see [`MAX_QUEUED_ANSWERS`]).
    answer_marks: VecDeque<(usize, usize)>,
    queued_answers: usize,
    needs_flush: bool,
    /// How long the final flush may take.
    flush_limit: Duration,
    /// When the driver saw the connection closed (the final flush started).
    closed_at: Option<Instant>,
    /// The stream's first end (and when), while the engine has not been told.
    ended: Option<(Instant, End)>,
    /// The engine was told of the end.
    end_reported: bool,
    /// After the last read, the engine held at least [`STREAMING`] bytes of a message not yet
    /// complete: a large message is arriving (see `Pumped::streaming`).
    streaming: bool,
}

/// A message this far in and not complete is a large one still arriving.
const STREAMING: usize = 64 * 1024;

impl StreamIo {
    pub(super) fn new(
        key: StreamKey,
        reader: impl AsyncRead + Send + 'static,
        writer: impl AsyncWrite + Send + 'static,
        task: Arc<TaskWaker>,
    ) -> Self {
        Self {
            key,
            reader: Some(Box::pin(reader)),
            writer: Some(Box::pin(writer)),
            reader_news: SourceWaker::new(task),
            out: Vec::new(),
            out_pos: 0,
            answer_marks: VecDeque::new(),
            queued_answers: 0,
            needs_flush: false,
            flush_limit: FINAL_FLUSH_LIMIT,
            closed_at: None,
            streaming: false,
            ended: None,
            end_reported: false,
        }
    }

    /// The key to the engine's bare connection.
    pub(super) fn key(&self) -> &StreamKey {
        &self.key
    }

    /// Sets how long the final flush may take.
    pub(super) fn set_flush_limit(&mut self, limit: Duration) {
        self.flush_limit = limit;
    }

    /// When the driver saw the connection closed, if it did.
    pub(super) fn closed_at(&self) -> Option<Instant> {
        self.closed_at
    }

    /// When the stream ended (its reader reached its end, or a read or write failed), if the
    /// engine has not been told yet: the driver tells it, with the server's exit status when it
    /// can, after [`take_end`](Self::take_end).
    pub(super) fn ended(&self) -> Option<Instant> {
        self.ended.as_ref().map(|(at, _)| *at)
    }

    /// Whether everything the server wrote was read (the reader is at its end, or failed).
    pub(super) fn read_all(&self) -> bool {
        self.reader.is_none()
    }

    /// How the stream ended, for the engine, which is told now.
    pub(super) fn take_end(&mut self) -> Option<End> {
        self.end_reported = true;
        self.ended.take().map(|(_, end)| end)
    }

    /// Notes the stream's end, unless an earlier one is known.
    fn end(&mut self, now: Instant, end: End) {
        if !self.end_reported && self.ended.is_none() {
            self.ended = Some((now, end));
        }
    }

    /// Reads once, if the reader has news, and feeds what came to the engine; the end is noted
    /// for the driver ([`ended`](Self::ended)). Past [`MAX_QUEUED_ANSWERS`] of answers waiting
    /// for the server, closes the connection instead (reading stops with it).
    pub(super) fn read(&mut self, shared: &Shared, now: Instant) -> bool {
        // (Once the reader is done, the stream's end tells the engine how it ended instead.)
        if self.queued_answers > MAX_QUEUED_ANSWERS
            && self.reader.is_some()
            && self.server_not_reading(shared, now)
        {
            return true;
        }
        let Some(reader) = self.reader.as_mut() else { return false };
        if !self.reader_news.take() {
            return false;
        }
        let key = &self.key;
        let streaming = &mut self.streaming;
        let read = with_read_buffer(|buffer| {
            let read = reader.as_mut().poll_read(&mut self.reader_news.context(), buffer);
            if let Poll::Ready(Ok(n)) = read {
                // Fed before the buffer goes back to the thread.
                if n > 0 {
                    let mut state = shared.lock();
                    let conn = state.engine.stream(key);
                    conn.feed(now, &buffer[..n]);
                    *streaming = conn.buffered_bytes() >= STREAMING;
                }
            }
            read
        });
        match read {
            Poll::Pending => false,
            Poll::Ready(Ok(0)) => {
                self.reader = None;
                self.end(now, End::Eof);
                true
            }
            Poll::Ready(Ok(_)) => {
                self.reader_news.again();
                true
            }
            Poll::Ready(Err(e)) if e.kind() == io::ErrorKind::Interrupted => {
                self.reader_news.again();
                true
            }
            Poll::Ready(Err(e)) => {
                self.reader = None;
                self.end(now, End::Failed(format!("reading from the server: {e}")));
                true
            }
        }
    }

    /// Whether a large message was still arriving after the last read.
    pub(super) fn streaming(&self) -> bool {
        self.streaming
    }

    /// Past [`MAX_QUEUED_ANSWERS`] of answers behind the one being written, the server does
    /// not read what it asked for: the connection closes, typed, and what waits for the server
    /// is dropped (nothing will read it; the shutdown goes on at once). `true` if it closed.
    #[cold]
    fn server_not_reading(&mut self, shared: &Shared, now: Instant) -> bool {
        let unwritten = self.queued_answers;
        let being_written = self.answer_marks.front().map_or(0, |&(_, len)| len);
        if unwritten - being_written <= MAX_QUEUED_ANSWERS {
            return false;
        }
        tracing::warn!(
            unwritten,
            limit = MAX_QUEUED_ANSWERS,
            "the server stopped reading its input: closing the connection"
        );
        shared
            .lock()
            .engine
            .stream(&self.key)
            .handle_transport(now, TransportEvent::ServerNotReading { unwritten, limit: MAX_QUEUED_ANSWERS });
        self.discard_output();
        true
    }

    /// Takes the engine's transmits into the write buffer (under the lock).
    pub(super) fn collect(&mut self, engine: &mut Engine) {
        let conn = engine.stream(&self.key);
        while let Some(transmit) = conn.poll_transmit() {
            self.out.extend_from_slice(transmit.bytes());
            if transmit.is_one_way() {
                self.answer_marks.push_back((self.out.len(), transmit.bytes().len()));
                self.queued_answers += transmit.bytes().len();
            }
        }
    }

    /// Writes what is queued until the writer would block, then flushes.
    pub(super) fn write(&mut self, cx: &mut Context<'_>, now: Instant) -> bool {
        let Some(writer) = self.writer.as_mut() else {
            self.discard_output();
            return false;
        };
        let mut progressed = false;
        let mut failure = None;
        while self.out_pos < self.out.len() {
            match writer.as_mut().poll_write(cx, &self.out[self.out_pos..]) {
                Poll::Pending => break,
                Poll::Ready(Ok(0)) => {
                    failure = Some(io::Error::from(io::ErrorKind::WriteZero));
                    break;
                }
                Poll::Ready(Ok(n)) => {
                    self.out_pos += n;
                    self.needs_flush = true;
                    progressed = true;
                }
                Poll::Ready(Err(e)) if e.kind() == io::ErrorKind::Interrupted => {}
                Poll::Ready(Err(e)) => {
                    failure = Some(e);
                    break;
                }
            }
        }
        // What was written no longer counts against MAX_QUEUED_ANSWERS.
        while let Some(&(end, len)) = self.answer_marks.front() {
            if end > self.out_pos {
                break;
            }
            self.answer_marks.pop_front();
            self.queued_answers -= len;
        }
        if failure.is_none() && self.out_pos < self.out.len() && self.out_pos >= COMPACT_AT {
            // A reader that never quite catches up would otherwise keep every byte ever written
            // in `out`: what was written goes, what is left moves to the front.
            self.out.drain(..self.out_pos);
            for (end, _) in &mut self.answer_marks {
                *end -= self.out_pos;
            }
            self.out_pos = 0;
        }
        if failure.is_none() && self.out_pos >= self.out.len() {
            self.out.clear();
            self.out_pos = 0;
            if self.needs_flush {
                match writer.as_mut().poll_flush(cx) {
                    Poll::Pending => {}
                    Poll::Ready(Ok(())) => self.needs_flush = false,
                    Poll::Ready(Err(e)) => failure = Some(e),
                }
            }
        }
        if let Some(e) = failure {
            self.writer = None;
            self.discard_output();
            // Told to the engine with the reader's end: a server that exited made this write
            // fail (EPIPE) while its last words may still wait in the pipe.
            self.end(now, End::Failed(format!("writing to the server: {e}")));
            progressed = true;
        }
        progressed
    }

    /// Nothing will write the queue any more: forget it.
    fn discard_output(&mut self) {
        self.out.clear();
        self.out_pos = 0;
        self.answer_marks.clear();
        self.queued_answers = 0;
        self.needs_flush = false;
    }

    /// When the driver must look again: the engine's deadline (or the end of the wait for the
    /// server's exit after its stdout ended), or once the connection closed, the end of the
    /// final flush.
    pub(super) fn deadline(&mut self, engine: &EngineView, now: Instant) -> Option<Instant> {
        if engine.closed {
            self.closed_at.get_or_insert(now);
            self.flush_until()
        } else {
            let exit_wait = self.ended().map(|at| at + EXIT_WAIT);
            [engine.deadline, exit_wait].into_iter().flatten().min()
        }
    }

    /// The connection closed and everything queued was written (or the final flush ran out
    /// of time).
    pub(super) fn is_done(&self, engine: &EngineView, now: Instant) -> bool {
        let flushed = self.out_pos >= self.out.len() && !self.needs_flush;
        let out_of_time = self.flush_until().is_some_and(|at| at <= now);
        engine.closed && (flushed || out_of_time)
    }

    /// When the final flush gives up (`None` before the connection closed, or for a limit
    /// past the end of time).
    fn flush_until(&self) -> Option<Instant> {
        self.closed_at?.checked_add(self.flush_limit)
    }
}
