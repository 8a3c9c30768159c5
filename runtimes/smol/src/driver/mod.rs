//! [`Driver`]: the loop that moves bytes and time between a transport and the engine.

use std::collections::VecDeque;
use std::fmt;
use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Instant;

use futures_lite::{AsyncRead, AsyncWrite};
use mcp_sansio::http::{HttpAction, StreamId};
use mcp_sansio::{ErrorObject, Event, RequestId, ServerNotification, ServerRequest};
use serde::Serialize;
use serde_json::value::RawValue;

use crate::clock::AsyncTimer;
use crate::handler::{ClientHandler, HandlerFuture};
use crate::http::{BodyStream, HttpResponse, HttpTransport};
use crate::notifications::ListKind;
use crate::shared::{DriverLife, Engine, ProgressFn, Shared};
use crate::source_waker::{SourceWaker, TaskWaker};
use crate::stdio::ServerProcess;

type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send + 'static>>;

/// A handler's answer to a server request, serialized.
type Answer = BoxFuture<Result<Box<RawValue>, ErrorObject>>;

/// How many read/write rounds one poll may run before yielding to the executor, so a server
/// that floods the client cannot starve the tasks sharing its thread.
const ROUNDS_PER_POLL: usize = 32;

/// How long the driver tries to write what is still queued once the connection closed. A
/// server that stopped reading its stdin must not keep the shutdown waiting forever.
const FINAL_FLUSH_LIMIT: std::time::Duration = std::time::Duration::from_secs(2);

/// Most bytes of messages that are not requests (answers to the server's requests, our
/// notifications) queued unwritten before the driver stops reading from the server until they
/// are written. Every server request gets an answer, so a server sending requests without
/// reading its stdin would otherwise grow the queue without bound (an adversarial test saw
/// 5 MB/s). Queued requests of ours do not count: pausing reads for them could deadlock a
/// server that blocks writing a response while the client has much queued for it. Pausing can
/// still stall a server that writes without reading while more than this of answers waits for
/// it, which only a server with thousands of requests (or megabytes of answers) unread does.
const MAX_QUEUED_ANSWERS: usize = 4 * 1024 * 1024;

/// Most body chunks read from one HTTP exchange per round, so one busy stream cannot starve
/// the others.
const CHUNKS_PER_ROUND: usize = 16;

/// How long stderr is still read after the server process is gone. Past it, whatever holds
/// the pipe open escaped the process group, and the driver stops listening.
const STDERR_DRAIN_LIMIT: std::time::Duration = std::time::Duration::from_secs(1);

/// The I/O half of a connection: a future that runs until the connection is over and the
/// server process (if any) is gone.
///
/// Spawn it on any executor (it needs no particular runtime: the time and the timers come from
/// the connection's [`Clock`](crate::Clock), by default async-io's, which brings its own
/// reactor). It reads from the server, feeds the engine, writes what the engine
/// queues, fires the engine's deadlines, answers server requests through the
/// [`ClientHandler`], and delivers responses and notifications to the [`Client`](crate::Client)
/// handles. When the connection closes, it closes the server's stdin and, for a child
/// process, runs the shutdown sequence.
///
/// Dropping it before it finished (cancelling its task, shutting its executor down) kills the
/// child's process group at once, ends the [`Notifications`](crate::Notifications) streams,
/// makes [`Client::ready`](crate::Client::ready), [`close`](crate::Client::close) and
/// [`closed`](crate::Client::closed) return, and fails every pending call and every later one
/// (unsent) with [`Error::DriverGone`](crate::Error::DriverGone). Over HTTP, nothing more is
/// sent: the session is not deleted.
#[must_use = "the driver does nothing unless polled: spawn it"]
pub struct Driver {
    shared: Arc<Shared>,
    reader: Option<Pin<Box<dyn AsyncRead + Send>>>,
    writer: Option<Pin<Box<dyn AsyncWrite + Send>>>,
    read_buf: Box<[u8]>,
    out: Vec<u8>,
    out_pos: usize,
    /// The messages in `out` that are not requests: (end offset in `out`, length), oldest
    /// first, and their total length (see [`MAX_QUEUED_ANSWERS`]).
    answer_marks: VecDeque<(usize, usize)>,
    queued_answers: usize,
    needs_flush: bool,
    /// The one timer of the connection's clock, armed at `timer_at` (created at the first
    /// deadline).
    timer: Option<Pin<Box<dyn AsyncTimer>>>,
    timer_at: Option<Instant>,
    handler: Arc<dyn ClientHandler>,
    tasks: Vec<(RequestId, Answer)>,
    /// Side work that lives as long as the transport: draining the server's stderr.
    background: Vec<BoxFuture<()>>,
    /// The task polling the driver, and a waker per source that says which one has news.
    task: Arc<TaskWaker>,
    reader_news: SourceWaker,
    background_news: SourceWaker,
    process: Option<ServerProcess>,
    shutdown: Option<BoxFuture<()>>,
    /// Whether it ran to its end (and told everyone so): dropping it then is no news.
    finished: bool,
    /// After the process is gone: how long stderr may still be drained.
    drain_until: Option<Pin<Box<dyn AsyncTimer>>>,
    /// Once the connection closed: when to stop trying to flush and shut down anyway.
    flush_until: Option<Instant>,
    /// For HTTP: the transport and the exchanges in flight.
    http: Option<HttpIo>,
    /// The connection's span: every event of the driver (and of the engine, which it calls)
    /// happens inside it.
    span: tracing::Span,
    /// Buffers reused every round, so the hot path does not allocate.
    events: Vec<Event>,
    completions: Vec<(RequestId, Result<Box<RawValue>, mcp_sansio::RequestError>)>,
}

/// The HTTP side of a driver: the transport executing the session's requests, and the
/// exchanges in flight.
struct HttpIo {
    transport: Arc<dyn HttpTransport>,
    exchanges: Vec<Exchange>,
    actions: Vec<HttpAction>,
}

struct Exchange {
    id: StreamId,
    state: ExchangeState,
}

enum ExchangeState {
    Head(BoxFuture<io::Result<HttpResponse>>),
    Body(BodyStream),
}

impl fmt::Debug for Driver {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Driver")
            .field("pid", &self.process.as_ref().and_then(ServerProcess::pid))
            .field("handler_tasks", &self.tasks.len())
            .field("shutting_down", &self.shutdown.is_some())
            .finish_non_exhaustive()
    }
}

impl Driver {
    pub(crate) fn new(
        shared: Arc<Shared>,
        reader: impl AsyncRead + Send + 'static,
        writer: impl AsyncWrite + Send + 'static,
        handler: Arc<dyn ClientHandler>,
    ) -> Self {
        let mut driver = Self::idle(shared, handler);
        driver.span =
            tracing::debug_span!("mcp_connection", transport = "stream", pid = tracing::field::Empty);
        driver.reader = Some(Box::pin(reader));
        driver.writer = Some(Box::pin(writer));
        driver.read_buf = vec![0; 64 * 1024].into_boxed_slice();
        driver
    }

    /// A driver for an HTTP session: requests go through `transport`.
    pub(crate) fn http(
        shared: Arc<Shared>,
        transport: Arc<dyn HttpTransport>,
        handler: Arc<dyn ClientHandler>,
        origin: &str,
    ) -> Self {
        let mut driver = Self::idle(shared, handler);
        // The origin only: a URL's path or query may carry secrets, and headers are never logged.
        driver.span = tracing::debug_span!("mcp_connection", transport = "http", origin = %origin);
        driver.http = Some(HttpIo { transport, exchanges: Vec::new(), actions: Vec::new() });
        driver
    }

    /// A driver with no transport yet.
    fn idle(shared: Arc<Shared>, handler: Arc<dyn ClientHandler>) -> Self {
        let task = Arc::new(TaskWaker::default());
        Self {
            reader_news: SourceWaker::new(task.clone()),
            background_news: SourceWaker::new(task.clone()),
            task,
            shared,
            reader: None,
            writer: None,
            read_buf: Box::default(),
            out: Vec::new(),
            out_pos: 0,
            answer_marks: VecDeque::new(),
            queued_answers: 0,
            needs_flush: false,
            timer: None,
            timer_at: None,
            handler,
            tasks: Vec::new(),
            background: Vec::new(),
            process: None,
            shutdown: None,
            finished: false,
            drain_until: None,
            flush_until: None,
            http: None,
            span: tracing::Span::none(),
            events: Vec::new(),
            completions: Vec::new(),
        }
    }

    pub(crate) fn with_process(mut self, process: ServerProcess) -> Self {
        if let Some(pid) = process.pid() {
            self.span.record("pid", pid);
        }
        self.process = Some(process);
        self
    }

    pub(crate) fn with_background(mut self, work: impl Future<Output = ()> + Send + 'static) -> Self {
        self.background.push(Box::pin(work));
        self
    }

    /// One pass over every source of progress; `true` if anything happened.
    fn round(&mut self, cx: &mut Context<'_>) -> bool {
        let now = self.shared.clock.now();
        let mut progressed = self.read(now);
        let mut progress_calls: Vec<(ProgressFn, mcp_sansio::schema::ProgressNotificationParams)> =
            Vec::new();
        let mut new_requests = Vec::new();
        let mut notifications = Vec::new();
        progressed |= self.poll_exchanges(cx, now);
        let (deadline, closed, http_finished) = {
            let mut state = self.shared.lock();
            state.set_driver_waker(cx.waker());
            if state.engine.poll_timeout().is_some_and(|at| at <= now) {
                state.engine.handle_timeout(now);
            }
            match &mut state.engine {
                Engine::Stream(conn) => {
                    while let Some(transmit) = conn.poll_transmit() {
                        self.out.extend_from_slice(transmit.bytes());
                        if transmit.request_id().is_none() {
                            self.answer_marks.push_back((self.out.len(), transmit.bytes().len()));
                            self.queued_answers += transmit.bytes().len();
                        }
                    }
                }
                Engine::Http(session) => {
                    if let Some(http) = self.http.as_mut() {
                        while let Some(action) = session.poll_action(now) {
                            http.actions.push(action);
                        }
                    }
                }
            }
            while let Some(event) = state.engine.poll_event() {
                self.events.push(event);
            }
            for event in self.events.drain(..) {
                progressed = true;
                match event {
                    Event::Ready { protocol_version } => {
                        tracing::debug!(%protocol_version, "connection ready");
                        if let Some(era) = state.era.as_mut() {
                            era.ready(protocol_version);
                        }
                        state.wake_watchers();
                    }
                    Event::Response { id, result } => self.completions.push((id, result)),
                    Event::Progress { id, params } => {
                        if let Some(f) = state.calls.get(&id).and_then(|slot| slot.on_progress.clone()) {
                            progress_calls.push((f, params));
                        }
                    }
                    Event::Notification(notification) => {
                        log_notification(&notification);
                        notifications.push(notification);
                    }
                    Event::Request { id, request } => new_requests.push((id, request)),
                    Event::ServerRequestCancelled { id, reason } => {
                        tracing::debug!(%id, ?reason, "server cancelled its request");
                        self.tasks.retain(|(task_id, _)| *task_id != id);
                    }
                    Event::InvalidMessage(error) => tracing::warn!(%error, "invalid message from the server"),
                    Event::Closed(reason) => {
                        tracing::debug!(%reason, "connection closed");
                        if let Some(era) = state.era.as_mut() {
                            era.closed();
                        }
                        state.wake_watchers();
                    }
                    other => tracing::debug!(?other, "unhandled event"),
                }
            }
            let http_finished = match &state.engine {
                Engine::Http(session) => session.is_finished(),
                Engine::Stream(_) => false,
            };
            (state.engine.poll_timeout(), state.engine.conn().is_closed(), http_finished)
        };
        progressed |= self.start_exchanges();
        // Progress callbacks run outside the lock (they may call the client), and before the
        // responses of the same batch are delivered, so a caller has seen all the progress
        // that preceded its result.
        for (f, params) in progress_calls {
            f(&params);
        }
        // Notifications too: the cache learns of changes first, so that a handler or
        // subscriber reacting to a `list_changed` reads the new list.
        let extras = &self.shared.extras;
        for notification in notifications {
            if let Some(list) = ListKind::of(&notification) {
                extras.lists.changed(list, now);
            }
            for handler in &extras.handlers {
                handler.on_notification(&notification);
            }
            extras.broadcast.send(&notification);
        }
        if !self.completions.is_empty() {
            let mut wakers = Vec::with_capacity(self.completions.len());
            let mut state = self.shared.lock();
            for (id, result) in self.completions.drain(..) {
                if let Some(slot) = state.calls.get_mut(&id) {
                    slot.result = Some(result.map_err(Box::new));
                    wakers.extend(slot.waker.take());
                }
            }
            drop(state);
            wakers.into_iter().for_each(std::task::Waker::wake);
        }
        for (id, request) in new_requests {
            self.tasks.push((id, handler_future(self.handler.as_ref(), request)));
        }
        progressed |= self.write(cx, now);
        progressed |= self.poll_tasks(cx);
        self.poll_background();
        let is_http = self.http.is_some();
        let deadline = if closed && !is_http {
            Some(*self.flush_until.get_or_insert(now + FINAL_FLUSH_LIMIT))
        } else {
            deadline
        };
        if let Some(deadline) = deadline {
            // Re-arm only for an earlier deadline. Every new request moves the earliest
            // deadline later, and re-arming an async-io timer wakes its reactor thread
            // (a cross-thread hop per call); a timer that fires early costs one idle round,
            // after which it is armed for the engine's real next deadline.
            let timer = match &mut self.timer {
                Some(timer) => {
                    if self.timer_at.is_none_or(|armed| deadline < armed) {
                        timer.as_mut().reset(deadline);
                        self.timer_at = Some(deadline);
                    }
                    timer
                }
                None => {
                    self.timer_at = Some(deadline);
                    self.timer.insert(self.shared.clock.timer(deadline))
                }
            };
            if timer.as_mut().poll(cx).is_ready() {
                self.timer_at = None;
                progressed = true;
            }
        }
        let flushed = self.out_pos >= self.out.len() && !self.needs_flush;
        let done = if is_http {
            http_finished
        } else {
            closed && (flushed || self.flush_until.is_some_and(|at| at <= now))
        };
        if done {
            self.begin_shutdown();
            progressed = true;
        }
        progressed
    }

    /// Polls the side work (stderr draining), if it was woken since it last waited.
    fn poll_background(&mut self) {
        if !self.background.is_empty() && self.background_news.take() {
            let mut cx = self.background_news.context();
            self.background.retain_mut(|work| work.as_mut().poll(&mut cx).is_pending());
        }
    }

    fn read(&mut self, now: Instant) -> bool {
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
                if let Some(conn) = self.shared.lock().engine.stream_mut() {
                    conn.feed_eof(now);
                }
                true
            }
            Poll::Ready(Ok(n)) => {
                self.reader_news.again();
                if let Some(conn) = self.shared.lock().engine.stream_mut() {
                    conn.feed(now, &self.read_buf[..n]);
                }
                true
            }
            Poll::Ready(Err(e)) if e.kind() == io::ErrorKind::Interrupted => {
                self.reader_news.again();
                true
            }
            Poll::Ready(Err(e)) => {
                self.reader = None;
                self.shared.lock().commands().transport_error(now, format!("reading from the server: {e}"));
                true
            }
        }
    }

    fn write(&mut self, cx: &mut Context<'_>, now: Instant) -> bool {
        let Some(writer) = self.writer.as_mut() else {
            self.out.clear();
            self.out_pos = 0;
            self.answer_marks.clear();
            self.queued_answers = 0;
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
            self.out.clear();
            self.out_pos = 0;
            self.answer_marks.clear();
            self.queued_answers = 0;
            self.needs_flush = false;
            self.shared.lock().commands().transport_error(now, format!("writing to the server: {e}"));
            progressed = true;
        }
        progressed
    }

    /// Executes the session's new requests and drops the exchanges it aborted.
    fn start_exchanges(&mut self) -> bool {
        let Some(http) = self.http.as_mut() else { return false };
        let progressed = !http.actions.is_empty();
        for action in http.actions.drain(..) {
            match action {
                HttpAction::Send(request) => {
                    tracing::trace!(?request, "HTTP request");
                    let id = request.stream();
                    let state = ExchangeState::Head(http.transport.send(request));
                    http.exchanges.push(Exchange { id, state });
                }
                HttpAction::Abort(id) => http.exchanges.retain(|e| e.id != id),
                other => tracing::debug!(?other, "unhandled HTTP action"),
            }
        }
        progressed
    }

    /// Moves what the HTTP exchanges received into the session.
    fn poll_exchanges(&mut self, cx: &mut Context<'_>, now: Instant) -> bool {
        let Some(http) = self.http.as_mut() else { return false };
        let mut progressed = false;
        let mut i = 0;
        'exchanges: while i < http.exchanges.len() {
            let exchange = &mut http.exchanges[i];
            let id = exchange.id;
            if let ExchangeState::Head(future) = &mut exchange.state {
                match future.as_mut().poll(cx) {
                    Poll::Pending => {
                        i += 1;
                        continue;
                    }
                    Poll::Ready(Ok(response)) => {
                        progressed = true;
                        let HttpResponse { status, headers, body } = response;
                        let mut state = self.shared.lock();
                        if let Engine::Http(session) = &mut state.engine {
                            let headers = headers.iter().map(|(n, v)| (n.as_str(), v.as_slice()));
                            session.handle_response_head(now, id, status, headers);
                        }
                        exchange.state = ExchangeState::Body(body);
                    }
                    Poll::Ready(Err(error)) => {
                        progressed = true;
                        if let Engine::Http(session) = &mut self.shared.lock().engine {
                            session.handle_response_error(now, id, &error.to_string());
                        }
                        http.exchanges.swap_remove(i);
                        continue;
                    }
                }
            }
            let ExchangeState::Body(body) = &mut exchange.state else { unreachable!("the head arrived") };
            for _ in 0..CHUNKS_PER_ROUND {
                let item = match body.as_mut().poll_next(cx) {
                    Poll::Pending => {
                        i += 1;
                        continue 'exchanges;
                    }
                    Poll::Ready(item) => item,
                };
                progressed = true;
                let mut state = self.shared.lock();
                let Engine::Http(session) = &mut state.engine else { return progressed };
                match item {
                    Some(Ok(chunk)) => session.handle_response_body(now, id, &chunk),
                    Some(Err(error)) => {
                        session.handle_response_error(now, id, &error.to_string());
                        http.exchanges.swap_remove(i);
                        continue 'exchanges;
                    }
                    None => {
                        session.handle_response_end(now, id);
                        http.exchanges.swap_remove(i);
                        continue 'exchanges;
                    }
                }
            }
            // This one has more; the others get their turn first.
            i += 1;
        }
        progressed
    }

    fn poll_tasks(&mut self, cx: &mut Context<'_>) -> bool {
        let mut progressed = false;
        let mut i = 0;
        while i < self.tasks.len() {
            if let Poll::Ready(outcome) = self.tasks[i].1.as_mut().poll(cx) {
                let (id, _) = self.tasks.swap_remove(i);
                let mut state = self.shared.lock();
                let sent = match outcome {
                    Ok(raw) => state.commands().respond(&id, Ok(&*raw)),
                    Err(error) => state.commands().respond::<RawValue>(&id, Err(error)),
                };
                if let Err(error) = sent {
                    tracing::debug!(%id, %error, "answer to a server request not sent");
                }
                progressed = true;
            } else {
                i += 1;
            }
        }
        progressed
    }

    /// The connection is over and everything queued was written: close the transport and let
    /// the server process go.
    fn begin_shutdown(&mut self) {
        // Closing our ends tells the server to exit: EOF on its stdin, EPIPE on its stdout.
        self.writer = None;
        self.reader = None;
        self.http = None;
        self.tasks.clear();
        self.timer_at = None;
        let process = self.process.take();
        let clock = self.shared.clock.clone();
        self.shutdown = Some(Box::pin(async move {
            if let Some(process) = process {
                process.shutdown(clock).await;
            }
        }));
    }

    fn finish(&mut self) {
        // Whatever still holds the stderr pipe outlived the process group: stop listening.
        self.background.clear();
        self.finished = true;
        // Every notification stream ends once it has read what is held.
        self.shared.extras.broadcast.close();
        self.shared.lock().driver_ended(DriverLife::Finished, self.shared.clock.now());
    }
}

impl Drop for Driver {
    /// Dropped before it finished (its task was cancelled, its executor shut down): nothing
    /// will move on this connection again, so nobody may wait for it. Synchronous only.
    fn drop(&mut self) {
        if self.finished {
            return;
        }
        let _entered = self.span.enter();
        tracing::debug!("driver dropped before it finished: failing every call");
        // The process group first (dropping the process, or the shutdown holding it, sends
        // SIGKILL to the group), so whoever wakes below finds the server gone.
        self.shutdown = None;
        self.process = None;
        self.background.clear();
        self.tasks.clear();
        self.reader = None;
        self.writer = None;
        self.http = None;
        self.shared.extras.broadcast.close();
        self.shared.lock().driver_ended(DriverLife::Dropped, self.shared.clock.now());
    }
}

impl Future for Driver {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let this = self.get_mut();
        let span = this.span.clone();
        let _entered = span.enter();
        this.task.update(cx);
        for _ in 0..ROUNDS_PER_POLL {
            if this.shutdown.is_some() {
                this.poll_background();
                if this.drain_until.is_none() {
                    let shutdown = this.shutdown.as_mut().expect("checked above");
                    if shutdown.as_mut().poll(cx).is_pending() {
                        return Poll::Pending;
                    }
                    // The process group is gone; what it wrote to stderr last is still in the
                    // pipe. Read it to EOF, for a short while at most.
                    let clock = &this.shared.clock;
                    this.drain_until = Some(clock.timer(clock.now() + STDERR_DRAIN_LIMIT));
                }
                let out_of_time = this.drain_until.as_mut().is_some_and(|t| t.as_mut().poll(cx).is_ready());
                if this.background.is_empty() || out_of_time {
                    this.finish();
                    return Poll::Ready(());
                }
                return Poll::Pending;
            }
            if !this.round(cx) {
                return Poll::Pending;
            }
        }
        cx.waker().wake_by_ref();
        Poll::Pending
    }
}

fn handler_future(handler: &dyn ClientHandler, request: ServerRequest) -> Answer {
    match request {
        ServerRequest::ListRoots => raw(handler.list_roots()),
        ServerRequest::CreateMessage(params) => raw(handler.create_message(*params)),
        ServerRequest::Elicit(params) => raw(handler.elicit(*params)),
        other => {
            let error = ErrorObject::method_not_found(other.method());
            Box::pin(async move { Err(error) })
        }
    }
}

fn raw<T: Serialize + Send + 'static>(
    future: HandlerFuture<T>,
) -> BoxFuture<Result<Box<RawValue>, ErrorObject>> {
    Box::pin(async move {
        let value = future.await?;
        serde_json::value::to_raw_value(&value).map_err(ErrorObject::internal)
    })
}

/// Server log messages also go to `tracing`, so they are visible without a subscriber.
fn log_notification(notification: &ServerNotification) {
    use mcp_sansio::schema::LoggingLevel as L;
    if let ServerNotification::LoggingMessage(message) = notification {
        let logger = message.logger.as_deref().unwrap_or("");
        let data = &message.data;
        match message.level {
            L::Debug => tracing::debug!(target: "mcp_smol::server_log", logger, %data),
            L::Info | L::Notice => tracing::info!(target: "mcp_smol::server_log", logger, %data),
            L::Warning => tracing::warn!(target: "mcp_smol::server_log", logger, %data),
            _ => tracing::error!(target: "mcp_smol::server_log", logger, %data),
        }
    }
}
