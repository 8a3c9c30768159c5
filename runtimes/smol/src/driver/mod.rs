//! [`Driver`]: the loop that moves bytes and time between a transport and the engine.
//!
//! One round (`Driver::round`) is quinn's `ConnectionDriver` shape: receive what the transport
//! has into the engine; under the lock, fire the engine's due deadline, collect its output and
//! sort its events; deliver the events outside the lock; send the output; poll the handler's
//! answers; arm the timer at the next deadline; shut down once the connection is over. The
//! transports are [`stream::StreamIo`] (byte streams) and [`exchanges::HttpIo`] (HTTP), each
//! with its own receive, collect and send steps.

#[cfg(feature = "http")]
pub(crate) mod authorize;
mod events;
#[cfg(feature = "http")]
mod exchanges;
mod stream;

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard, TryLockError};
use std::task::{Context, Poll, Waker};
use std::time::{Duration, Instant};

use futures_lite::{AsyncRead, AsyncWrite};

#[cfg(feature = "http")]
use self::authorize::AuthIo;
use self::events::{Answers, Batch};
#[cfg(feature = "http")]
use self::exchanges::HttpIo;
use self::stream::{EXIT_WAIT, End, StreamIo};
use crate::clock::AsyncTimer;
use crate::handler::ClientHandler;
#[cfg(feature = "http")]
use crate::http::HttpTransport;
use crate::shared::{DriverLife, Engine, Shared};
use crate::source_waker::{Check, SourceWaker, TaskWaker};
use crate::stdio::{ServerEnd, ServerProcess};

type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send + 'static>>;

/// How many rounds one poll may run before yielding to the executor, so a server that floods
/// the client cannot starve the tasks sharing its thread.
const ROUNDS_PER_POLL: usize = 32;

/// How long stderr is still read after the server process is gone. Past it, whatever holds
/// the pipe open escaped the process group, and the driver stops listening.
const STDERR_DRAIN_LIMIT: Duration = Duration::from_secs(1);

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
/// It is not alone in driving the connection: a call waiting for its response runs the same
/// rounds itself whenever it can, so that the response wakes the call directly,
/// without a hop through the driver's task. The driver stays the one that runs the connection
/// when no call is waiting, shuts the server down, and takes over from a call that is woken
/// for news but not polled (its watch, every 100 ms while calls drive).
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
    /// The watch on the calls that drive the connection, while there are any.
    watch: Option<Pin<Box<dyn AsyncTimer>>>,
}

/// How often the driver's task checks that a call driving the connection follows its
/// wake-ups (see [`TaskWaker::check`]): a call whose future is not polled once woken holds the
/// connection's news back for one to two periods at most.
pub(crate) const WATCH_PERIOD: Duration = Duration::from_millis(100);

/// The connection's rounds, shared by the driver's task and the calls waiting for responses:
/// whoever holds [`core`](Self::core) runs them. The driver's task waits for the lock (a round
/// is short); a call only takes it when it is free, and never blocks on it.
pub(crate) struct Drive {
    /// The driver's state; `None` once the driver finished or was dropped.
    core: Mutex<Option<Core>>,
    /// Where the wake-ups of the connection's sources go.
    pub(crate) route: Arc<TaskWaker>,
}

/// The driver's state: the transport, the timer, the handler's answers, the server process.
pub(crate) struct Core {
    shared: Arc<Shared>,
    io: Io,
    phase: Phase,
    /// The one timer of the connection's clock, armed at `timer_at` (made at the first
    /// deadline).
    timer: Option<Pin<Box<dyn AsyncTimer>>>,
    timer_at: Option<Instant>,
    answers: Answers,
    batch: Batch,
    background: Background,
    /// Where the sources' wake-ups go (the driver's task, or a call driving), shared by the
    /// wakers of the sources that say which one has news.
    task: Arc<TaskWaker>,
    /// The waker every source polled in a round registers: it wakes through `task`.
    waker: Waker,
    process: Option<ServerProcess>,
    /// OAuth, over HTTP when configured.
    #[cfg(feature = "http")]
    auth: Option<AuthIo>,
    /// The connection's span: every event of the driver (and of the engine, which it calls)
    /// happens inside it.
    span: tracing::Span,
}

/// The transport side of a driver.
#[cfg_attr(not(feature = "http"), allow(clippy::large_enum_variant))]
enum Io {
    Stream(StreamIo),
    #[cfg(feature = "http")]
    Http(HttpIo),
    /// Shut: the connection is over.
    Closed,
}

/// Where the driver is in its life.
enum Phase {
    /// Moving messages, round after round.
    Running,
    /// The connection is over and the transport closed: the server process is shut down.
    ShuttingDown(BoxFuture<Option<ServerEnd>>),
    /// The process is gone; what it wrote to stderr last is still read, until this timer.
    Draining(Pin<Box<dyn AsyncTimer>>),
    /// Over, and everyone was told.
    Finished,
}

/// What the engine said in a round's locked section.
struct EngineView {
    /// When the engine must look at the time again.
    deadline: Option<Instant>,
    /// The connection closed.
    closed: bool,
    /// Nothing is left to do, not even the HTTP session's last exchanges.
    #[cfg_attr(not(feature = "http"), allow(dead_code))]
    finished: bool,
}

/// Side work that lives as long as the transport (draining the server's stderr), polled only
/// when it woke the task.
struct Background {
    work: Vec<BoxFuture<()>>,
    news: SourceWaker,
}

impl fmt::Debug for Driver {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Without waiting: a round may hold the core, on this thread even.
        let core = self.shared.drive.core.try_lock().ok();
        let mut d = f.debug_struct("Driver");
        if let Some(core) = core.as_ref().and_then(|core| core.as_ref()) {
            d.field("pid", &core.process.as_ref().and_then(ServerProcess::pid))
                .field("handler_tasks", &core.answers.len())
                .field("shutting_down", &!matches!(core.phase, Phase::Running));
        }
        d.finish_non_exhaustive()
    }
}

impl Drive {
    pub(crate) fn new() -> Self {
        Self { core: Mutex::new(None), route: Arc::new(TaskWaker::default()) }
    }

    /// The core, waiting for whoever holds it. A panic in a round cannot leave it in a state
    /// worse than stopping would, so poisoning is ignored (as for the connection's state).
    fn lock(&self) -> MutexGuard<'_, Option<Core>> {
        self.core.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// The core if nobody holds it and the connection is running.
    fn try_running(&self) -> Option<MutexGuard<'_, Option<Core>>> {
        let guard = match self.core.try_lock() {
            Ok(guard) => guard,
            Err(TryLockError::Poisoned(poisoned)) => poisoned.into_inner(),
            Err(TryLockError::WouldBlock) => return None,
        };
        guard.as_ref().is_some_and(|core| matches!(core.phase, Phase::Running)).then_some(guard)
    }

    /// A call was made: if it is the only call in flight (`alone`) and nobody drives, its
    /// request is written on the caller's own thread (a byte stream), or a round starts its
    /// exchange (HTTP). Otherwise whoever drives is woken, and writes it with every other
    /// request queued by then: calls made together (a burst, or calls in flight while one of
    /// them drives) go out in one write, where one write per call would wake the server once
    /// per request.
    pub(crate) fn send(&self, shared: &Shared, alone: bool) {
        let ours = if alone && !self.route.caller_driving() { self.try_running() } else { None };
        match ours {
            Some(mut guard) => {
                if let Some(core) = guard.as_mut() {
                    core.send();
                }
            }
            None => shared.lock().wake_driver(),
        }
    }

    /// Call `token`, polled with `cx` and still waiting for its response, drives the
    /// connection if nobody else is: it runs the rounds, and the news it waits for wakes it.
    pub(crate) fn drive_for(&self, token: u64, cx: &Context<'_>) {
        // The route first, without the lock: a call that will not drive must not hold the
        // rounds even for a moment, or the call that drives could find them held, give up its
        // turn and lose the wake-up it came for.
        match self.route.route_to_caller(token, cx.waker()) {
            // Another call drives: it delivers this one's response.
            None => return,
            // The driver's task starts its watch on the calls.
            Some(true) => self.route.wake_task(),
            Some(false) => {}
        }
        let mut guard = match self.core.try_lock() {
            Ok(guard) => guard,
            Err(TryLockError::Poisoned(poisoned)) => poisoned.into_inner(),
            Err(TryLockError::WouldBlock) => {
                // Held for a moment (the driver's task in a round, a call writing its
                // request): this call may have been woken for news no round will follow, so
                // it looks again after the other tasks had their turn.
                cx.waker().wake_by_ref();
                return;
            }
        };
        let Some(core) = guard.as_mut().filter(|core| matches!(core.phase, Phase::Running)) else {
            // Over: the driver's task has the rest.
            drop(guard);
            self.route.release(token, None);
            return;
        };
        let _entered = core.span.clone().entered();
        let mut rounds = 0;
        while matches!(core.phase, Phase::Running) && core.round() {
            rounds += 1;
            if rounds == ROUNDS_PER_POLL {
                // More to do: come back after the other tasks had their turn.
                cx.waker().wake_by_ref();
                break;
            }
        }
        if !matches!(core.phase, Phase::Running) {
            // The shutdown is the driver's task's to run.
            self.route.wake_task();
        }
    }

    /// Call `token` stops driving the connection, handing it to `successor` if there is one
    /// (see [`TaskWaker::release`]).
    pub(crate) fn release(&self, token: u64, successor: Option<Waker>) {
        self.route.release(token, successor);
    }
}

impl Driver {
    /// A driver for a byte-stream connection.
    pub(crate) fn new(
        shared: Arc<Shared>,
        reader: impl AsyncRead + Send + 'static,
        writer: impl AsyncWrite + Send + 'static,
        handler: Arc<dyn ClientHandler>,
    ) -> Self {
        let task = shared.drive.route.clone();
        let io = Io::Stream(StreamIo::new(reader, writer, task.clone()));
        let span = tracing::debug_span!("mcp_connection", transport = "stream", pid = tracing::field::Empty);
        Self::with_io(shared, io, task, handler, span)
    }

    /// A driver for an HTTP session: requests go through `transport`.
    #[cfg(feature = "http")]
    pub(crate) fn http(
        shared: Arc<Shared>,
        transport: Arc<dyn HttpTransport>,
        handler: Arc<dyn ClientHandler>,
        origin: &str,
        auth: Option<AuthIo>,
    ) -> Self {
        // The origin only: a URL's path or query may carry secrets, and headers are never logged.
        let span = tracing::debug_span!("mcp_connection", transport = "http", origin = %origin);
        let task = shared.drive.route.clone();
        let driver = Self::with_io(shared, Io::Http(HttpIo::new(transport)), task, handler, span);
        driver.core(|core| core.auth = auth);
        driver
    }

    fn with_io(
        shared: Arc<Shared>,
        io: Io,
        task: Arc<TaskWaker>,
        handler: Arc<dyn ClientHandler>,
        span: tracing::Span,
    ) -> Self {
        let waker = task.waker();
        let core = Core {
            shared: shared.clone(),
            io,
            phase: Phase::Running,
            timer: None,
            timer_at: None,
            answers: Answers::new(handler),
            batch: Batch::default(),
            background: Background { work: Vec::new(), news: SourceWaker::new(task.clone()) },
            task,
            waker,
            process: None,
            #[cfg(feature = "http")]
            auth: None,
            span,
        };
        *shared.drive.lock() = Some(core);
        Self { shared, watch: None }
    }

    /// Changes the core (still being built).
    fn core(&self, f: impl FnOnce(&mut Core)) {
        if let Some(core) = self.shared.drive.lock().as_mut() {
            f(core);
        }
    }

    pub(crate) fn with_process(self, process: ServerProcess) -> Self {
        self.core(|core| {
            if let Some(pid) = process.pid() {
                core.span.record("pid", pid);
            }
            if let Io::Stream(io) = &mut core.io {
                // The final flush comes out of the first shutdown step.
                io.set_flush_limit(process.step());
            }
            core.process = Some(process);
        });
        self
    }

    pub(crate) fn with_background(self, work: impl Future<Output = ()> + Send + 'static) -> Self {
        self.core(|core| core.background.work.push(Box::pin(work)));
        self
    }

    /// The watch on the calls driving the connection (see [`WATCH_PERIOD`]): armed while
    /// there are any, it takes the route back from a call that does not follow its wake-ups.
    fn poll_watch(&mut self, cx: &mut Context<'_>) {
        let route = &self.shared.drive.route;
        loop {
            let Some(watch) = self.watch.as_mut() else {
                if !route.watching() {
                    return;
                }
                let clock = &self.shared.clock;
                self.watch = Some(clock.timer(clock.now() + WATCH_PERIOD));
                continue;
            };
            if watch.as_mut().poll(cx).is_pending() {
                return;
            }
            match route.check() {
                Check::Idle => {
                    self.watch = None;
                    return;
                }
                Check::Callers => {}
                Check::TakenBack => {
                    tracing::debug!("a call driving the connection was not polled: the driver takes over");
                    // The rounds are the task's again: poll once more.
                    cx.waker().wake_by_ref();
                }
            }
            let clock = &self.shared.clock;
            watch.as_mut().reset(clock.now() + WATCH_PERIOD);
        }
    }
}

impl Core {
    /// A call was made: its request goes out now, from the caller's thread.
    fn send(&mut self) {
        let _entered = self.span.clone().entered();
        match &mut self.io {
            Io::Stream(io) => {
                let now = self.shared.clock.now();
                io.collect(&mut self.shared.lock().engine);
                let waker = self.waker.clone();
                io.write(&mut Context::from_waker(&waker), now);
                if io.ended().is_some() {
                    // The write failed: a round tells the engine.
                    self.task.wake_task();
                }
            }
            #[cfg(feature = "http")]
            Io::Http(_) => {
                self.round();
            }
            Io::Closed => {}
        }
    }

    /// One pass over every source of progress; `true` if anything happened. Every source is
    /// polled with the route's waker, whoever runs the round.
    fn round(&mut self) -> bool {
        self.task.round_started();
        let waker = self.waker.clone();
        let cx = &mut Context::from_waker(&waker);
        let now = self.shared.clock.now();
        let mut progressed = self.io.receive(cx, &self.shared, now);
        progressed |= self.report_end(cx, now);
        let (engine, events) = self.exchange(cx, now);
        progressed |= events;
        self.batch.deliver(&self.shared, now, &mut self.answers);
        #[cfg(feature = "http")]
        if let Some(auth) = self.auth.as_mut() {
            progressed |= auth.poll(cx, &self.shared, now);
        }
        progressed |= self.io.send(cx, now);
        progressed |= self.answers.poll(cx, &self.shared);
        self.background.poll();
        // A round can be long (a large queue serialized in a debug build): the moment the close
        // was seen, from which the shutdown's first step counts, is read afresh.
        let seen = if engine.closed { self.shared.clock.now() } else { now };
        let deadline = self.io.deadline(&engine, seen);
        progressed |= self.poll_timer(cx, deadline);
        if self.io.is_done(&engine, now) {
            self.begin_shutdown(now);
            progressed = true;
        }
        progressed
    }

    /// The stream ended (the server's stdout reached its end, or a read or write failed): tells
    /// the engine, with the server process's exit status when the process is seen to exit
    /// within [`EXIT_WAIT`], once everything it wrote was read. A server that closed its pipes
    /// and lives on must not hold the connection's end back: past the wait, the end is told as
    /// it came (EOF, or the failure). Without a process, at once. `true` once told.
    fn report_end(&mut self, cx: &mut Context<'_>, now: Instant) -> bool {
        let Io::Stream(io) = &mut self.io else { return false };
        let Some(since) = io.ended() else { return false };
        let exit = match self.process.as_mut() {
            None => None,
            Some(process) => {
                // Asked only once the reader is done: until then it watches the exit itself (the
                // OS handle holds one waker, and two watchers would keep waking each other).
                let exit = if io.read_all() { process.poll_exit(cx) } else { Poll::Pending };
                let settled = exit.is_ready();
                // Otherwise the timer is armed at the end of the wait (`StreamIo::deadline`).
                if !settled && now < since + EXIT_WAIT {
                    return false;
                }
                match exit {
                    Poll::Ready(exit) => exit,
                    Poll::Pending => None,
                }
            }
        };
        let end = io.take_end();
        let mut state = self.shared.lock();
        match (exit, end, state.engine.stream_mut()) {
            (Some(exit), _, Some(conn)) => {
                if exit.success() {
                    tracing::debug!(%exit, "the server process ended");
                } else {
                    tracing::info!(%exit, "the server process ended");
                }
                conn.feed_exit(now, exit);
            }
            (_, Some(End::Failed(detail)), _) => state.engine.transport_error(now, detail),
            (_, _, _) => {
                tracing::debug!("the server closed its output");
                state.engine.feed_eof(now);
            }
        }
        true
    }

    /// The locked section of a round: fires the engine's due deadline, takes its output for
    /// the transport and its events into the batch. Returns what the engine looks like now,
    /// and whether there were events.
    fn exchange(&mut self, cx: &Context<'_>, now: Instant) -> (EngineView, bool) {
        let mut state = self.shared.lock();
        state.set_driver_waker(cx.waker());
        if state.engine.poll_timeout().is_some_and(|at| at <= now) {
            state.engine.handle_timeout(now);
        }
        self.io.collect(&mut state.engine, now);
        #[cfg(feature = "http")]
        if let Some(auth) = self.auth.as_mut() {
            auth.collect(&mut state.engine, now);
        }
        let events = self.batch.take(&mut state, &mut self.answers);
        let engine = EngineView {
            deadline: state.engine.poll_timeout(),
            closed: state.engine.is_closed(),
            finished: state.engine.is_finished(),
        };
        (engine, events)
    }

    /// Arms the timer at `deadline` and polls it; `true` if it fired.
    fn poll_timer(&mut self, cx: &mut Context<'_>, deadline: Option<Instant>) -> bool {
        let Some(deadline) = deadline else { return false };
        let timer = match &mut self.timer {
            Some(timer) => {
                // Re-arm only for an earlier deadline. Every new request moves the earliest
                // deadline later, and re-arming an async-io timer wakes its reactor thread
                // (a cross-thread hop per call); a timer that fires early costs one idle
                // round, after which it is armed for the engine's real next deadline.
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
            return true;
        }
        false
    }

    /// The connection is over and everything queued was written: close the transport and let
    /// the server process go.
    fn begin_shutdown(&mut self, now: Instant) {
        let mut process = self.process.take();
        // Whether it exited on its own is known only before its stdin closes.
        if let Some(process) = process.as_mut() {
            process.check_exit();
        }
        let closed_at = match &self.io {
            Io::Stream(io) => io.closed_at(),
            #[cfg(feature = "http")]
            Io::Http(_) => None,
            Io::Closed => None,
        };
        // Closing our ends tells the server to exit: EOF on its stdin, EPIPE on its stdout.
        self.io = Io::Closed;
        // The shutdown is the driver's task's to run: no call drives any more.
        self.task.route_to_task();
        self.answers.clear();
        self.timer = None;
        self.timer_at = None;
        let clock = self.shared.clock.clone();
        self.phase = Phase::ShuttingDown(Box::pin(async move {
            // The first step counts from the connection's close: the final flush took its share.
            process?.shutdown(clock, closed_at.unwrap_or(now)).await
        }));
    }

    /// Shuts the server process down, then drains its stderr: `Ready` once all is over.
    fn poll_shutdown(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        self.background.poll();
        if let Phase::ShuttingDown(shutdown) = &mut self.phase {
            let Poll::Ready(end) = shutdown.as_mut().poll(cx) else { return Poll::Pending };
            if end.is_some() {
                self.shared.lock().server_end = end;
            }
            // The process group is gone; what it wrote to stderr last is still in the pipe.
            // Read it to EOF, for a short while at most.
            let clock = &self.shared.clock;
            self.phase = Phase::Draining(clock.timer(clock.now() + STDERR_DRAIN_LIMIT));
        }
        let out_of_time = match &mut self.phase {
            Phase::Draining(limit) => limit.as_mut().poll(cx).is_ready(),
            _ => true,
        };
        if self.background.work.is_empty() || out_of_time {
            self.finish();
            return Poll::Ready(());
        }
        Poll::Pending
    }

    fn finish(&mut self) {
        // Whatever still holds the stderr pipe outlived the process group: stop listening.
        self.background.work.clear();
        self.phase = Phase::Finished;
        // Every notification stream ends once it has read what is held.
        self.shared.extras.broadcast.close();
        self.shared.lock().driver_ended(DriverLife::Finished, self.shared.clock.now());
    }
}

impl Drop for Driver {
    /// Dropped before it finished: the core goes with it (see `Core`'s `Drop`).
    fn drop(&mut self) {
        let core = self.shared.drive.lock().take();
        drop(core);
    }
}

impl Drop for Core {
    /// Dropped before it finished (its task was cancelled, its executor shut down): nothing
    /// will move on this connection again, so nobody may wait for it. Synchronous only.
    fn drop(&mut self) {
        if matches!(self.phase, Phase::Finished) {
            return;
        }
        let _entered = self.span.enter();
        tracing::debug!("driver dropped before it finished: failing every call");
        // The process group first (dropping the process, or the shutdown holding it, sends
        // SIGKILL to the group), so whoever wakes below finds the server gone.
        self.phase = Phase::Finished;
        self.process = None;
        self.background.work.clear();
        self.answers.clear();
        self.io = Io::Closed;
        self.shared.extras.broadcast.close();
        self.shared.lock().driver_ended(DriverLife::Dropped, self.shared.clock.now());
    }
}

impl Future for Driver {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let this = self.get_mut();
        this.shared.drive.route.update(cx);
        let mut guard = this.shared.drive.lock();
        let Some(core) = guard.as_mut() else { return Poll::Ready(()) };
        if core.poll_task(cx).is_ready() {
            // Over: the core goes (and with it its handle on the shared state).
            let core = guard.take();
            drop(guard);
            drop(core);
            return Poll::Ready(());
        }
        drop(guard);
        this.poll_watch(cx);
        Poll::Pending
    }
}

impl Core {
    /// The driver's task's poll: rounds while the connection runs, then the shutdown.
    fn poll_task(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        let span = self.span.clone();
        let _entered = span.enter();
        for _ in 0..ROUNDS_PER_POLL {
            match self.phase {
                Phase::Running => {
                    if !self.round() {
                        return Poll::Pending;
                    }
                }
                Phase::ShuttingDown(_) | Phase::Draining(_) => return self.poll_shutdown(cx),
                Phase::Finished => return Poll::Ready(()),
            }
        }
        cx.waker().wake_by_ref();
        Poll::Pending
    }
}

impl Io {
    /// Moves what the transport received into the engine.
    #[cfg_attr(not(feature = "http"), allow(unused_variables))]
    fn receive(&mut self, cx: &mut Context<'_>, shared: &Shared, now: Instant) -> bool {
        match self {
            Io::Stream(io) => io.read(shared, now),
            #[cfg(feature = "http")]
            Io::Http(io) => io.receive(cx, shared, now),
            Io::Closed => false,
        }
    }

    /// Takes the engine's output (under the lock).
    #[cfg_attr(not(feature = "http"), allow(unused_variables))]
    fn collect(&mut self, engine: &mut Engine, now: Instant) {
        match self {
            Io::Stream(io) => io.collect(engine),
            #[cfg(feature = "http")]
            Io::Http(io) => io.collect(engine, now),
            Io::Closed => {}
        }
    }

    /// Sends what was collected: writes the bytes, or starts the exchanges.
    fn send(&mut self, cx: &mut Context<'_>, now: Instant) -> bool {
        match self {
            Io::Stream(io) => io.write(cx, now),
            #[cfg(feature = "http")]
            Io::Http(io) => io.send(),
            Io::Closed => false,
        }
    }

    /// When the driver must look again without news from the transport.
    fn deadline(&mut self, engine: &EngineView, now: Instant) -> Option<Instant> {
        match self {
            Io::Stream(io) => io.deadline(engine, now),
            #[cfg(feature = "http")]
            Io::Http(_) => engine.deadline,
            Io::Closed => engine.deadline,
        }
    }

    /// Whether the connection is over for this transport: time to shut down.
    fn is_done(&self, engine: &EngineView, now: Instant) -> bool {
        match self {
            Io::Stream(io) => io.is_done(engine, now),
            #[cfg(feature = "http")]
            Io::Http(_) => engine.finished,
            Io::Closed => false,
        }
    }
}

impl Background {
    /// Polls the side work, if it was woken since it last waited.
    fn poll(&mut self) {
        if !self.work.is_empty() && self.news.take() {
            let mut cx = self.news.context();
            self.work.retain_mut(|work| work.as_mut().poll(&mut cx).is_pending());
        }
    }
}
