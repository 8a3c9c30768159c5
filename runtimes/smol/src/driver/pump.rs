//! The pump: transport ↔ engine, the engine's deadlines, responses and progress into the calls'
//! slots. Run by whoever needs it (a source's wake-up where its news lands, a call writing its
//! request, the driver's task); it never runs user code, and never waits for the core: whoever
//! finds it taken asks its holder to go once more. Inside a round it takes the state's lock for
//! short sections (see `shared.rs` for the order).

use std::sync::atomic::Ordering;
use std::sync::{Arc, TryLockError};
use std::task::{Context, Poll, Waker};
use std::time::Instant;

use mcp_sansio::{Event, ProtocolViolation};
use serde_json::value::RawValue;

#[cfg(feature = "http")]
use super::exchanges::HttpIo;
use super::stream::{EXIT_WAIT, End, StreamIo};
use super::view::EngineView;
use crate::clock::AsyncTimer;
use crate::locks::{self, OrderedGuard, OrderedMutex};
use crate::notifications::ListKind;
#[cfg(feature = "http")]
use crate::shared::HttpKey;
use crate::shared::{Engine, MAX_INBOX, Shared, State, Work};
use crate::source_waker::TaskWaker;
use crate::stdio::ServerProcess;

/// How many rounds one pump may run before it lets its task yield to the executor, so a
/// server that floods the client cannot starve the tasks sharing its thread.
pub(crate) const ROUNDS_PER_PUMP: usize = 32;

/// How many times in a row one pumper goes again for others that found the pump busy, before
/// it leaves the rest to its next poll (it then says there is [`more`](Pumped::more)).
const AGAIN_LIMIT: usize = 4;

/// The transport side of a connection, shared by everyone who may pump it.
///
/// Nobody waits for it: [`run`](Self::run) takes it if it is free; if it is not, it leaves a
/// request (`again`) that the pumper holding it honours before it lets go, so no news is lost
/// to a busy pump.
pub(crate) struct Pump {
    /// The pump's state; `None` before the driver is built and once it finished or was dropped.
    core: OrderedMutex<Option<Core>, { locks::CORE }>,
    /// Someone found the pump busy since its holder started: the holder goes once more.
    again: std::sync::atomic::AtomicBool,
    /// The last pump stopped at its budget with more to do (see [`Pump::backlog`]).
    backlog: std::sync::atomic::AtomicBool,
    /// How many requests were left to be written with others so far ([`defer`](Self::defer)),
    /// and how many of those the transport has taken: a deferred call whose request was taken
    /// by someone else's write skips its own ([`taken`](Self::taken)).
    /// (Counts wrap: compared as serial numbers, as TCP compares sequence numbers.)
    deferred: std::sync::atomic::AtomicU32,
    taken: std::sync::atomic::AtomicU32,
}

/// How many waiting calls are woken to help with a backlog (the first ones found).
const BACKLOG_HELPERS: usize = 16;

/// The lock on the pump's core.
pub(crate) type CoreGuard<'a> = OrderedGuard<'a, Option<Core>, { locks::CORE }>;

/// Who runs a pump.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Pumper {
    /// The driver's task, which dispatches after it pumps.
    Task,
    /// A call writing its request, or a command its output.
    Call,
    /// A source's wake-up, where the news landed (see [`TaskWaker`]).
    News,
}

/// What a pump did, for whoever ran it.
#[derive(Default)]
pub(crate) struct Pumped {
    /// It stopped at its budget with more to do: its task must come back.
    pub(crate) more: bool,
    /// It queued work for the driver's task (which a pumper other than that task must wake).
    pub(crate) dispatch: bool,
    /// The connection is over and its transport shut: the driver's task has the rest.
    pub(crate) over: bool,
    /// A large message was still arriving when it stopped (see [`Pump::run`]).
    pub(crate) streaming: bool,
}

impl Pump {
    pub(crate) fn new() -> Self {
        Self {
            core: OrderedMutex::new(None),
            again: std::sync::atomic::AtomicBool::new(false),
            backlog: std::sync::atomic::AtomicBool::new(false),
            deferred: std::sync::atomic::AtomicU32::new(0),
            taken: std::sync::atomic::AtomicU32::new(0),
        }
    }

    /// A request queued in the engine is left to be written with others (see `call::Write`):
    /// its number among those, for [`taken`](Self::taken). Call it after the request is queued.
    pub(crate) fn defer(&self) -> u32 {
        self.deferred.fetch_add(1, Ordering::SeqCst).wrapping_add(1)
    }

    /// Whether the transport has taken the deferred request numbered `deferred` (a write or a
    /// round took the engine's output after it was queued).
    pub(crate) fn taken(&self, deferred: u32) -> bool {
        // `taken` is at or past `deferred`, within half the counter's range.
        self.taken.load(Ordering::SeqCst).wrapping_sub(deferred) < 1 << 31
    }

    /// What [`taken`](Self::taken) may count once the engine's output is taken: every request
    /// deferred so far was queued before this is read.
    fn deferred_so_far(&self) -> u32 {
        self.deferred.load(Ordering::SeqCst)
    }

    fn took(&self, upto: u32) {
        // Only forward (a pumper that read `deferred` earlier may come after one that read it
        // later).
        let _ = self.taken.fetch_update(Ordering::SeqCst, Ordering::SeqCst, |taken| {
            (upto.wrapping_sub(taken).wrapping_sub(1) < 1 << 31).then_some(upto)
        });
    }

    /// The core, if nobody holds it. A poisoned lock (a bug in a round: no user code runs in
    /// one) closes the connection, since the transport's state may be half-updated.
    fn try_lock(&self, shared: &Shared) -> Option<CoreGuard<'_>> {
        match self.core.try_lock() {
            Ok(guard) => Some(guard),
            Err(TryLockError::WouldBlock) => None,
            Err(TryLockError::Poisoned(poisoned)) => {
                self.core.clear_poison();
                tracing::error!("mcp-smol: a panic inside the client's pump");
                shared
                    .lock()
                    .engine
                    .transport_error(shared.clock.now(), "internal error: a panic inside mcp-smol");
                Some(poisoned.into_inner())
            }
        }
    }

    /// The core, for a pumper, if nobody holds it. Whoever finds it held leaves its request in
    /// `again` first, and the holder, who clears `again` once it has the core, looks at it
    /// again ([`asked_again`](Self::asked_again)) after it lets go: so either the request is
    /// seen, or the one who made it gets the core itself.
    fn claim(&self, shared: &Shared) -> Option<CoreGuard<'_>> {
        self.again.store(true, Ordering::SeqCst);
        let guard = self.try_lock(shared)?;
        self.again.store(false, Ordering::SeqCst);
        Some(guard)
    }

    /// Asks whoever holds the core to go once more, without trying to take it: for news that
    /// lands on the thread that holds it (a source woken from inside a round).
    pub(crate) fn ask_again(&self) {
        self.again.store(true, Ordering::SeqCst);
    }

    /// Whether someone found the core held since this pumper [`claim`](Self::claim)ed it.
    fn asked_again(&self) -> bool {
        self.again.load(Ordering::SeqCst)
    }

    /// What the shutdown needs, once a pump saw the connection over, unless someone is pumping
    /// (that pumper, a call, sees it over too and wakes the driver's task).
    pub(crate) fn take_over(&self, shared: &Shared) -> Option<Over> {
        self.try_lock(shared)?.as_mut()?.over.take()
    }

    /// The core, waiting for whoever holds it: only while the driver is being built, and at its
    /// end (finished, or dropped), where the core must be had. A pump is short and runs no user
    /// code, so the wait is too.
    pub(crate) fn lock(&self) -> CoreGuard<'_> {
        self.core.lock().unwrap_or_else(|poisoned| {
            self.core.clear_poison();
            poisoned.into_inner()
        })
    }

    /// Runs the pump, up to `rounds` rounds while they progress, unless someone else is running
    /// it (then `None`: that pumper goes once more for us). The wakers its rounds gathered are
    /// called after the lock is released. A pumper other than the driver's task (`by`) wakes
    /// that task when the pump queued work for it, saw the connection over, or stopped at its
    /// budget with more to do: that task is the one that comes back.
    pub(crate) fn run(&self, shared: &Shared, rounds: usize, by: Pumper) -> Option<Pumped> {
        let pumped = match self.run_rounds(shared, rounds) {
            Rounds::Busy => return None,
            Rounds::Ran(pumped) => pumped,
        };
        if by != Pumper::Task && (pumped.dispatch || pumped.over || pumped.more) {
            shared.route.wake_task();
        }
        // Out of budget with more to read: the driver's task may be busy with user code for
        // a while, so the calls still waiting help too (their polls pump while this is set).
        self.backlog.store(pumped.more, Ordering::Release);
        if pumped.more {
            let mut wake = Vec::new();
            shared.lock().waiting_calls(BACKLOG_HELPERS, &mut wake);
            crate::shared::wake_all(&mut wake);
        } else if pumped.streaming && by == Pumper::News {
            // A large message is arriving, read where its news landed: the reactor's thread,
            // often. One waiting call is woken so that its thread comes back and waits on the
            // reactor too. Otherwise, under `block_on`, the caller gives the reactor up after
            // async-io's 500 µs and parks until the message is whole, and async-io's own thread
            // naps 50 µs or more after each wake-up while a `block_on` runs: a server blocked on
            // a full pipe then waits for nobody (issue 37: 14 % of a pinned 1 MiB call idle).
            // The woken call only polls its slot; small messages never get here.
            let mut wake = Vec::new();
            shared.lock().waiting_calls(1, &mut wake);
            crate::shared::wake_all(&mut wake);
        }
        Some(pumped)
    }

    /// Whether the last pump stopped at its budget with more to do: a waiting call's poll
    /// then pumps as well (see [`run`](Self::run)).
    pub(crate) fn backlog(&self) -> bool {
        self.backlog.load(Ordering::Acquire)
    }

    /// The rounds of [`run`](Self::run). What they gathered is returned whatever happens after
    /// the first claim: a pumper that goes again for others and then finds the pump taken
    /// leaves the new request to its taker, but still reports its own rounds (work queued
    /// for the driver's task, the connection over), which nobody else knows of.
    fn run_rounds(&self, shared: &Shared, rounds: usize) -> Rounds {
        let Some(mut guard) = self.claim(shared) else { return Rounds::Busy };
        let mut pumped = Pumped::default();
        let mut wake = Vec::new();
        for pass in 1..=AGAIN_LIMIT {
            let upto = self.deferred_so_far();
            match guard.as_mut() {
                Some(core) => in_round(|| core.pump(shared, rounds, &mut pumped, &mut wake)),
                None => return Rounds::Ran(pumped),
            }
            // A round takes the engine's output (or the connection is over, and nothing will).
            self.took(upto);
            drop(guard);
            crate::shared::wake_all(&mut wake);
            if !self.asked_again() {
                break;
            }
            if pass == AGAIN_LIMIT {
                // Others keep asking: the rest is for whoever `more` brings back (the request
                // stays in `again`).
                pumped.more = true;
                break;
            }
            guard = match self.claim(shared) {
                Some(guard) => guard,
                // Its taker goes once more for the request (see `claim`).
                None => break,
            };
        }
        Rounds::Ran(pumped)
    }

    /// A call's request was queued: it goes out now, from this thread, unless
    /// someone is pumping (then that pumper goes once more and writes it). Over a byte stream,
    /// the engine's output is taken and written until the writer would block; over HTTP, the
    /// pump runs until nothing more progresses (the exchange is started and its request
    /// written). Either way the request is on the wire when this returns.
    pub(crate) fn send_now(&self, shared: &Shared) {
        let Some(mut guard) = self.claim(shared) else { return };
        let upto = self.deferred_so_far();
        let written = match guard.as_mut() {
            Some(core) => in_round(|| core.write_now(shared)),
            None => return,
        };
        if written != Written::NeedsPump {
            self.took(upto);
        }
        drop(guard);
        // Outside the core's lock: the write failed, the driver's task reports the end.
        if written == Written::Ended {
            shared.route.wake_task();
        }
        // Over HTTP, or someone asked meanwhile: the whole pump, as any pumper would.
        if written == Written::NeedsPump || self.asked_again() {
            let _ = self.run(shared, ROUNDS_PER_PUMP, Pumper::Call);
        }
    }

    /// Installs the core (the driver, when it is built).
    pub(crate) fn install(&self, core: Core) {
        *self.lock() = Some(core);
    }
}

thread_local! {
    /// Set while this thread runs a round (it holds a pump's core).
    static IN_ROUND: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Runs `f` (a round, or a write) noted as in a round on this thread.
fn in_round<T>(f: impl FnOnce() -> T) -> T {
    /// Puts the flag back however `f` ends.
    struct Restore(bool);
    impl Drop for Restore {
        fn drop(&mut self) {
            IN_ROUND.with(|flag| flag.set(self.0));
        }
    }
    let _restore = Restore(IN_ROUND.with(|flag| flag.replace(true)));
    f()
}

/// Whether this thread is in a round: a source it polls woke synchronously. The news is then
/// the round's to follow ([`Pump::ask_again`]); taking a core again here could only fail.
pub(crate) fn in_a_round() -> bool {
    IN_ROUND.with(std::cell::Cell::get)
}

/// What [`Pump::run_rounds`] did.
enum Rounds {
    /// Someone else holds the pump, and goes once more for this pumper.
    Busy,
    Ran(Pumped),
}

/// What [`Core::write_now`] did.
#[derive(PartialEq, Eq)]
enum Written {
    /// The output is written (or waits for the writer's news).
    Done,
    /// The stream ended (a write failed): the driver's task must run a round to report it.
    Ended,
    /// Not a byte stream: a whole pump writes the output.
    NeedsPump,
}

/// The pump's state: the transport, the timer, the server process (whose exit the stream's
/// end waits for).
pub(crate) struct Core {
    pub(super) io: Io,
    /// The one timer of the connection's clock, armed at `timer_at` (made at the first
    /// deadline).
    timer: Option<std::pin::Pin<Box<dyn AsyncTimer>>>,
    timer_at: Option<Instant>,
    /// The waker every source polled in a round registers: it passes their news on
    /// ([`TaskWaker::wake`]).
    waker: Waker,
    pub(super) process: Option<ServerProcess>,
    /// Set once the connection is over: what the driver's task needs for the shutdown.
    pub(super) over: Option<Over>,
    /// The engine's events of a round, sorted in its locked section (reused: no allocation per
    /// round).
    events: Vec<Event>,
    /// The connection's span: every event of the pump (and of the engine, which it calls)
    /// happens inside it.
    pub(super) span: tracing::Span,
}

/// The connection is over: what the shutdown needs.
pub(crate) struct Over {
    pub(super) process: Option<ServerProcess>,
    /// When the pump saw the connection closed (the final flush started).
    pub(super) closed_at: Instant,
}

/// The transport side of a pump.
#[cfg_attr(not(feature = "http"), allow(clippy::large_enum_variant))]
pub(crate) enum Io {
    Stream(StreamIo),
    #[cfg(feature = "http")]
    Http(HttpIo),
    /// Shut: the connection is over.
    Closed,
}

impl Core {
    pub(super) fn new(io: Io, task: Arc<TaskWaker>, span: tracing::Span) -> Self {
        let waker = task.waker();
        Core { io, timer: None, timer_at: None, waker, process: None, over: None, events: Vec::new(), span }
    }

    /// A byte stream's fast way out for a new request: the engine's output, written until the
    /// writer would block. Other transports need a whole pump. A failed write is noted for
    /// the next round, which the driver's task is to run.
    /// The new request's deadline arms the timer here too, since no round may come before it
    /// is due.
    fn write_now(&mut self, shared: &Shared) -> Written {
        let Io::Stream(io) = &mut self.io else { return Written::NeedsPump };
        let waker = self.waker.clone();
        let cx = &mut Context::from_waker(&waker);
        let deadline = {
            let _entered = self.span.enter();
            let deadline = {
                let mut state = shared.lock();
                io.collect(&mut state.engine);
                state.engine.poll_timeout()
            };
            io.write(cx, shared.clock.now());
            if io.ended().is_some() {
                return Written::Ended;
            }
            deadline
        };
        // Due already: a round handles it.
        if self.poll_timer(cx, shared, deadline) { Written::NeedsPump } else { Written::Done }
    }

    /// Up to `rounds` rounds while they progress (none once the transport is shut).
    fn pump(&mut self, shared: &Shared, rounds: usize, pumped: &mut Pumped, wake: &mut Vec<Waker>) {
        if matches!(self.io, Io::Closed) {
            pumped.over |= self.over.is_some();
            return;
        }
        let span = self.span.clone();
        let _entered = span.enter();
        for _ in 0..rounds {
            if !self.round(shared, pumped, wake) || matches!(self.io, Io::Closed) {
                return;
            }
        }
        pumped.more = true;
    }

    /// One pass over every source of progress; `true` if anything happened. Every source is
    /// polled with the same wakers (see [`TaskWaker`]), whoever runs the round.
    fn round(&mut self, shared: &Shared, pumped: &mut Pumped, wake: &mut Vec<Waker>) -> bool {
        let waker = self.waker.clone();
        let cx = &mut Context::from_waker(&waker);
        let now = shared.clock.now();
        // Reading never waits for user code (see `MAX_INBOX`) nor for the server to read (see
        // `StreamIo::read`): a server blocked on its writes must never wait for us.
        let mut progressed = self.io.receive(cx, shared, now);
        if let Io::Stream(io) = &self.io {
            pumped.streaming = io.streaming();
        }
        progressed |= self.report_end(cx, shared, now);
        let (engine, events) = self.exchange(shared, now, pumped, wake);
        progressed |= events;
        progressed |= self.io.send(cx, now);
        // A round can be long (a large queue serialized in a debug build): the moment the close
        // was seen, from which the shutdown's first step counts, is read afresh.
        let seen = if engine.closed { shared.clock.now() } else { now };
        let deadline = self.io.deadline(&engine, seen);
        progressed |= self.poll_timer(cx, shared, deadline);
        if self.io.is_done(&engine, now) {
            self.begin_shutdown(now);
            pumped.over = true;
            progressed = true;
        }
        progressed
    }

    /// The stream ended (the server's stdout reached its end, or a read or write failed): tells
    /// the engine, with the server process's exit status when the process is seen to exit
    /// within [`EXIT_WAIT`], once everything it wrote was read. A server that closed its pipes
    /// and lives on must not hold the connection's end back: past the wait, the end is told as
    /// it came (EOF, or the failure). Without a process, at once. `true` once told.
    fn report_end(&mut self, cx: &mut Context<'_>, shared: &Shared, now: Instant) -> bool {
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
        let mut state = shared.lock();
        let conn = state.engine.stream(io.key());
        match (exit, end) {
            (Some(exit), _) => {
                if exit.success() {
                    tracing::debug!(%exit, "the server process ended");
                } else {
                    tracing::info!(%exit, "the server process ended");
                }
                conn.feed_exit(now, exit);
            }
            (_, Some(End::Failed(detail))) => conn.transport_error(detail),
            (_, _) => {
                tracing::debug!("the server closed its output");
                conn.feed_eof(now);
            }
        }
        true
    }

    /// The locked section of a round: fires the engine's due deadline, takes its output for
    /// the transport, and sorts its events (responses and progress into the calls' slots,
    /// notifications into the list cache and the broadcast, user code into the inbox). Returns
    /// what the engine looks like now, and whether there were events.
    fn exchange(
        &mut self,
        shared: &Shared,
        now: Instant,
        pumped: &mut Pumped,
        wake: &mut Vec<Waker>,
    ) -> (EngineView, bool) {
        let mut state = shared.lock();
        if state.engine.poll_timeout().is_some_and(|at| at <= now) {
            state.engine.handle_timeout(now);
        }
        self.io.collect(&mut state.engine, now);
        let queued = state.inbox.len();
        #[cfg(feature = "http")]
        if let Io::Http(io) = &self.io {
            collect_auth(&mut state, io.key(), now);
        }
        while let Some(event) = state.engine.poll_event() {
            self.events.push(event);
        }
        let any = !self.events.is_empty();
        for event in self.events.drain(..) {
            sort(event, &mut state, shared, now, wake);
        }
        if state.inbox.len() != queued {
            pumped.dispatch = true;
        }
        let engine = EngineView {
            deadline: state.engine.poll_timeout(),
            closed: state.engine.is_closed(),
            finished: state.engine.is_finished(),
        };
        (engine, any)
    }

    /// Arms the timer at `deadline` and polls it; `true` if it fired.
    fn poll_timer(&mut self, cx: &mut Context<'_>, shared: &Shared, deadline: Option<Instant>) -> bool {
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
                self.timer.insert(shared.clock.timer(deadline))
            }
        };
        if timer.as_mut().poll(cx).is_ready() {
            self.timer_at = None;
            return true;
        }
        false
    }

    /// The connection is over and everything queued was written: the transport closes (for a
    /// child, EOF on its stdin tells it to exit; the shutdown goes on reading its stdout, so its
    /// last writes do not fail) and the rest is the driver's task's.
    fn begin_shutdown(&mut self, now: Instant) {
        let mut process = self.process.take();
        // Whether it exited on its own is known only before its stdin closes.
        if let Some(process) = process.as_mut() {
            process.check_exit();
        }
        let closed_at = match &self.io {
            Io::Stream(io) => io.closed_at(),
            _ => None,
        };
        self.io = Io::Closed;
        self.timer = None;
        self.timer_at = None;
        // The first step counts from the connection's close: the final flush took its share.
        self.over = Some(Over { process, closed_at: closed_at.unwrap_or(now) });
    }
}

/// Sorts one engine event (under the state's lock): what needs no user code happens now, the
/// rest goes into the inbox. Wakers go into `wake`, to be called after the locks.
fn sort(event: Event, state: &mut State, shared: &Shared, now: Instant, wake: &mut Vec<Waker>) {
    let extras = &shared.extras;
    match event {
        Event::Response { id, result } => {
            if let Some(slot) = state.calls.get_mut(&id) {
                slot.result = Some(result.map_err(Box::new));
                wake.extend(slot.waker.take());
            }
        }
        Event::Progress { id, params } => {
            if let Some(slot) = state.calls.get_mut(&id) {
                if slot.push_progress(params) {
                    wake.extend(slot.waker.take());
                }
            }
        }
        Event::Notification(notification) => {
            log_notification(&notification);
            // The cache learns of a change first, so that whoever reacts to the notification
            // reads the new list; the broadcast has it before any response that came after it.
            if let Some(list) = ListKind::of(&notification) {
                extras.lists.changed(list, now);
            }
            extras.broadcast.send(&notification, wake);
            if extras.notification_handlers {
                queue_or_drop(state, Work::Notification(notification));
            }
        }
        Event::Request { id, request } => state.inbox.push(Work::Request(id, request)),
        Event::ServerRequestCancelled { id, reason } => {
            tracing::debug!(%id, ?reason, "server cancelled its request");
            server_cancelled(state, id);
        }
        Event::ServerRequestRefused { id, method, limit } => {
            let refused = state.engine.conn().stats().server_requests_refused;
            // The first, then one in a thousand: a flood must not flood the log too.
            if refused % 1000 == 1 {
                tracing::warn!(%id, method, limit, refused, "server request refused: too many open");
            } else {
                tracing::debug!(%id, method, limit, "server request refused: too many open");
            }
        }
        Event::UndeclaredServerRequest { id, method } => {
            // The handler may well serve it: the usual cause is a capability left undeclared.
            let declare = match method.as_str() {
                "roots/list" => "ClientCapabilities::with_roots",
                "sampling/createMessage" => "ClientCapabilities::with_sampling",
                _ => "ClientCapabilities::with_elicitation_form",
            };
            tracing::warn!(
                %id,
                method,
                "the server asked for {method}, which the client's capabilities do not declare: it was \
                 refused (-32601) without asking the handler; declare it ({declare}) if the handler serves it"
            );
        }
        Event::ProtocolViolation(violation) => {
            match &violation {
                // A late answer is the server being slow, not broken.
                ProtocolViolation::LateResponse { .. } => {
                    tracing::debug!(%violation, "protocol violation by the server")
                }
                _ => tracing::warn!(%violation, "protocol violation by the server"),
            }
            if extras.violation_hooks {
                queue_or_drop(state, Work::Violation(violation));
            }
        }
        Event::Ready { protocol_version } => {
            tracing::debug!(%protocol_version, "connection ready");
            if let Some(era) = state.era.as_mut() {
                era.ready(protocol_version);
            }
            state.take_watchers(wake);
        }
        Event::Closed(reason) => {
            tracing::debug!(%reason, "connection closed");
            let ended_on_probe = state.engine.conn().ended_on_probe();
            if let Some(era) = state.era.as_mut() {
                era.closed(ended_on_probe);
            }
            state.take_watchers(wake);
        }
        other => tracing::debug!(?other, "unhandled event"),
    }
}

/// The answer a server request cancelled by the server gets from the driver: never written
/// (the engine writes nothing for a cancelled request), it frees the request's place.
pub(super) fn cancelled_by_the_server() -> mcp_sansio::ErrorObject {
    mcp_sansio::ErrorObject::internal("cancelled by the server")
}

/// The server cancelled its request `id`. Still queued: it is taken out (the handler is never
/// asked) and the engine is told at once (it keeps a cancelled request's place among the open
/// ones until it is answered, writing nothing). Else the driver's task drops the answer in
/// progress and tells it. (Out of line: rare, and kept off the round's code.)
#[cold]
#[inline(never)]
fn server_cancelled(state: &mut State, id: mcp_sansio::RequestId) {
    let queued = state.inbox.iter().rposition(|work| matches!(work, Work::Request(r, _) if *r == id));
    match queued {
        Some(at) => {
            drop(state.inbox.remove(at));
            let _ = state.engine.respond::<RawValue>(&id, Err(cancelled_by_the_server()));
        }
        None => state.inbox.push(Work::RequestCancelled(id)),
    }
}

/// Queues a notification or a protocol violation for the driver's task, unless [`MAX_INBOX`]
/// items wait already: then it is dropped and counted, so that user code that is behind costs
/// neither memory nor reading (the first drop is a warning, then one in a thousand).
fn queue_or_drop(state: &mut State, work: Work) {
    if state.inbox.len() < MAX_INBOX {
        state.inbox.push(work);
    } else {
        dropped_for_user_code(state);
    }
}

/// A notification or violation was dropped for [`MAX_INBOX`]: counted and logged.
#[cold]
#[inline(never)]
fn dropped_for_user_code(state: &mut State) {
    state.inbox_dropped += 1;
    let dropped = state.inbox_dropped;
    if dropped % 1000 == 1 {
        tracing::warn!(
            dropped,
            waiting = MAX_INBOX,
            "the notification handlers are behind: a notification or violation for them was dropped"
        );
    } else {
        tracing::debug!(dropped, "a notification or violation for the handlers was dropped");
    }
}

/// The session's authorization events, and the credentials to save when they changed, for the
/// driver's task (the handler and the store are user code).
#[cfg(feature = "http")]
fn collect_auth(state: &mut State, key: &HttpKey, now: Instant) {
    use mcp_sansio::auth::AuthEvent;
    let State { engine, inbox, .. } = state;
    let session = engine.http(key);
    while let Some(event) = session.poll_auth_event() {
        if event == AuthEvent::CredentialsChanged {
            if let Some(credentials) = session.credentials(now, crate::auth::unix_now()) {
                inbox.push(Work::SaveCredentials(credentials));
            }
        }
        inbox.push(Work::Auth(event));
    }
}

/// Server log messages also go to `tracing`, so they are visible without a subscriber.
fn log_notification(notification: &mcp_sansio::ServerNotification) {
    use mcp_sansio::schema::LoggingLevel as L;
    if let mcp_sansio::ServerNotification::LoggingMessage(message) = notification {
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

    /// When the pump must look again without news from the transport.
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

#[cfg(test)]
mod tests {
    use std::pin::Pin;
    use std::sync::atomic::{AtomicBool, AtomicUsize};
    use std::sync::{Mutex, mpsc};
    use std::task::Wake;

    use futures_lite::AsyncRead;
    use mcp_sansio::ProtocolVersion;
    use mcp_sansio::schema::Implementation;

    use super::*;
    use crate::ClientBuilder;
    use crate::driver::Connection;

    /// The server's words, once; then nothing more, ever.
    struct Once(Option<&'static [u8]>);

    impl AsyncRead for Once {
        fn poll_read(
            mut self: Pin<&mut Self>,
            _: &mut Context<'_>,
            buf: &mut [u8],
        ) -> Poll<std::io::Result<usize>> {
            match self.0.take() {
                Some(bytes) => {
                    buf[..bytes.len()].copy_from_slice(bytes);
                    Poll::Ready(Ok(bytes.len()))
                }
                None => Poll::Pending,
            }
        }
    }

    #[derive(Default)]
    struct Count(AtomicUsize);

    impl Wake for Count {
        fn wake(self: Arc<Self>) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }

    /// A `ready()` watcher whose wake-up (called by the pumper between its rounds, after it let
    /// go of the core) has another thread take the core and keep it, then asks for a pump
    /// itself: the pumper is asked to go again and finds the core taken.
    struct TakeTheCore {
        shared: Arc<Connection>,
        taken: AtomicBool,
        release: Mutex<Option<mpsc::Sender<()>>>,
        holder: Mutex<Option<std::thread::JoinHandle<()>>>,
    }

    impl Wake for TakeTheCore {
        fn wake(self: Arc<Self>) {
            if self.taken.swap(true, Ordering::SeqCst) {
                return;
            }
            let (held_tx, held_rx) = mpsc::channel();
            let (release_tx, release_rx) = mpsc::channel::<()>();
            let shared = self.shared.clone();
            let holder = std::thread::spawn(move || {
                let core = shared.pump.lock();
                held_tx.send(()).unwrap();
                let _ = release_rx.recv();
                drop(core);
            });
            held_rx.recv().unwrap();
            assert!(
                self.shared.pump.run(&self.shared, ROUNDS_PER_PUMP, Pumper::Call).is_none(),
                "the core is taken"
            );
            *self.release.lock().unwrap() = Some(release_tx);
            *self.holder.lock().unwrap() = Some(holder);
        }
    }

    /// A pumper that goes again for someone who found the pump busy, and then finds the pump
    /// taken, still reports what its own rounds did: here a notification for a handler, which
    /// only the driver's task dispatches, so that task is woken. (It returned nothing before,
    /// and the task slept until the 100 ms watch, or for ever without it.)
    #[test]
    fn a_deferred_request_counts_as_taken_once_a_write_after_it_took_the_output_across_the_wrap() {
        let pump = Pump::new();
        for start in [0, u32::MAX - 2] {
            pump.deferred.store(start, Ordering::SeqCst);
            pump.taken.store(start, Ordering::SeqCst);
            let first = pump.defer();
            let upto = pump.deferred_so_far();
            let second = pump.defer();
            assert!(!pump.taken(first) && !pump.taken(second));
            pump.took(upto);
            assert!(pump.taken(first), "taken by the write that read the count after it");
            assert!(!pump.taken(second), "queued after that write read the count");
            // A pumper that read the count earlier, and finishes later, takes nothing back.
            pump.took(start);
            assert!(pump.taken(first));
            pump.took(pump.deferred_so_far());
            assert!(pump.taken(second));
        }
    }

    #[test]
    fn a_pumper_that_finds_the_pump_taken_on_its_way_back_still_wakes_the_task() {
        let server = br#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{"listChanged":true}},"serverInfo":{"name":"s","version":"1"}}}
{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}
"#;
        let (client, driver) = ClientBuilder::new(Implementation::new("t", "0"))
            .configure(|c| c.with_versions(&[ProtocolVersion::V2025_11_25]))
            .on_notification(|_| {})
            .connect(Once(Some(server)), futures_lite::io::sink());
        let shared = client.shared.clone();
        // The driver's task: never polled, its waker counts.
        let task = Arc::new(Count::default());
        shared.route.update(&Context::from_waker(&Waker::from(task.clone())));
        let intercept = Arc::new(TakeTheCore {
            shared: shared.clone(),
            taken: AtomicBool::new(false),
            release: Mutex::new(None),
            holder: Mutex::new(None),
        });
        let mut ready = Box::pin(client.ready());
        let waker = Waker::from(intercept.clone());
        assert!(ready.as_mut().poll(&mut Context::from_waker(&waker)).is_pending());

        let pumped = shared.pump.run(&shared, ROUNDS_PER_PUMP, Pumper::Call).expect("the pump was free");
        assert!(intercept.taken.load(Ordering::SeqCst), "the handshake's answer woke the watcher");
        assert!(pumped.dispatch, "the notification waits for the driver's task");
        assert_eq!(task.0.load(Ordering::SeqCst), 1, "the driver's task was not woken");

        drop(intercept.release.lock().unwrap().take());
        intercept.holder.lock().unwrap().take().unwrap().join().unwrap();
        drop(ready);
        drop(driver);
    }
}
