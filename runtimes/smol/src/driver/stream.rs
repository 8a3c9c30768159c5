//! The byte-stream transport of a driver (a child's stdio pipes, a socket, any
//! `AsyncRead`/`AsyncWrite` pair): bytes read go to the engine, the engine's transmits are
//! written in order, and reading pauses while the server leaves too many of our answers unread.

use std::collections::VecDeque;
use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use futures_lite::{AsyncRead, AsyncWrite};

use super::EngineView;
use crate::shared::{Engine, Shared};
use crate::source_waker::{SourceWaker, TaskWaker};

/// How long the driver tries to write what is still queued once the connection closed. A
/// server that stopped reading its stdin must not keep the shutdown waiting forever.
const FINAL_FLUSH_LIMIT: Duration = Duration::from_secs(2);

/// Most bytes of messages that are not requests (answers to the server's requests, our
/// notifications) queued unwritten before the driver stops reading from the server until they
/// are written. Every server request gets an answer, so a server sending requests without
/// reading its stdin would otherwise grow the queue without bound (an adversarial test saw
/// 5 MB/s). Queued requests of ours do not count: pausing reads for them could deadlock a
/// server that blocks writing a response while the client has much queued for it. Pausing can
/// still stall a server that writes without reading while more than this of answers waits for
/// it, which only a server with thousands of requests (or megabytes of answers) unread does.
const MAX_QUEUED_ANSWERS: usize = 4 * 1024 * 1024;

/// Size of the read buffer: one read takes at most this much.
const READ_BUFFER: usize = 64 * 1024;

pub(super) struct StreamIo {
    reader: Option<Pin<Box<dyn AsyncRead + Send>>>,
    writer: Option<Pin<Box<dyn AsyncWrite + Send>>>,
    /// Set when the reader woke the task: the reader is polled only then.
    reader_news: SourceWaker,
    read_buf: Box<[u8]>,
    /// What is queued for writing; `out[..out_pos]` was written.
    out: Vec<u8>,
    out_pos: usize,
    /// The messages in `out` that are not requests: (end offset in `out`, length), oldest
    /// first, and their total length (see [`MAX_QUEUED_ANSWERS`]).
    answer_marks: VecDeque<(usize, usize)>,
    queued_answers: usize,
    needs_flush: bool,
    /// Once the connection closed: when to stop trying to flush and shut down anyway.
    flush_until: Option<Instant>,
}

impl StreamIo {
    pub(super) fn new(
        reader: impl AsyncRead + Send + 'static,
        writer: impl AsyncWrite + Send + 'static,
        task: Arc<TaskWaker>,
    ) -> Self {
        Self {
            reader: Some(Box::pin(reader)),
            writer: Some(Box::pin(writer)),
            reader_news: SourceWaker::new(task),
            read_buf: vec![0; READ_BUFFER].into_boxed_slice(),
            out: Vec::new(),
            out_pos: 0,
            answer_marks: VecDeque::new(),
            queued_answers: 0,
            needs_flush: false,
            flush_until: None,
        }
    }

    /// Reads once, if the reader has news, and feeds what came (or the end) to the engine.
    pub(super) fn read(&mut self, shared: &Shared, now: Instant) -> bool {
        let Some(reader) = self.reader.as_mut() else { return false };
        if self.queued_answers > MAX_QUEUED_ANSWERS {
            // The server does not read what it asked for: read no more until it does (the
            // reader's news, if any, is kept for a round after a write).
            return false;
        }
        if !self.reader_news.take() {
            return false;
        }
        match reader.as_mut().poll_read(&mut self.reader_news.context(), &mut self.read_buf) {
            Poll::Pending => false,
            Poll::Ready(Ok(0)) => {
                self.reader = None;
                shared.lock().engine.feed_eof(now);
                true
            }
            Poll::Ready(Ok(n)) => {
                self.reader_news.again();
                shared.lock().engine.feed(now, &self.read_buf[..n]);
                true
            }
            Poll::Ready(Err(e)) if e.kind() == io::ErrorKind::Interrupted => {
                self.reader_news.again();
                true
            }
            Poll::Ready(Err(e)) => {
                self.reader = None;
                shared.lock().engine.transport_error(now, format!("reading from the server: {e}"));
                true
            }
        }
    }

    /// Takes the engine's transmits into the write buffer (under the lock).
    pub(super) fn collect(&mut self, engine: &mut Engine) {
        while let Some(transmit) = engine.poll_transmit() {
            self.out.extend_from_slice(transmit.bytes());
            if transmit.is_one_way() {
                self.answer_marks.push_back((self.out.len(), transmit.bytes().len()));
                self.queued_answers += transmit.bytes().len();
            }
        }
    }

    /// Writes what is queued until the writer would block, then flushes.
    pub(super) fn write(&mut self, cx: &mut Context<'_>, shared: &Shared, now: Instant) -> bool {
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
            shared.lock().engine.transport_error(now, format!("writing to the server: {e}"));
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

    /// When the driver must look again: the engine's deadline, or once the connection closed,
    /// the end of the final flush.
    pub(super) fn deadline(&mut self, engine: &EngineView, now: Instant) -> Option<Instant> {
        if engine.closed {
            Some(*self.flush_until.get_or_insert(now + FINAL_FLUSH_LIMIT))
        } else {
            engine.deadline
        }
    }

    /// The connection closed and everything queued was written (or the final flush ran out
    /// of time).
    pub(super) fn is_done(&self, engine: &EngineView, now: Instant) -> bool {
        let flushed = self.out_pos >= self.out.len() && !self.needs_flush;
        engine.closed && (flushed || self.flush_until.is_some_and(|at| at <= now))
    }
}
