//! [`Driver`]: the connection's own task. It pumps when no call does, dispatches the user code
//! (handlers, hooks, the OAuth handler and token store), and shuts the server down at the end.
//!
//! The split, the locks and their order are described in `shared.rs`. The pump
//! ([`pump::Pump`]) is a sequence of rounds in quinn's `ConnectionDriver` shape: receive what
//! the transport has into the engine; under the state's lock, fire the engine's due deadline,
//! collect its output and sort its events; send the output; arm the timer at the next
//! deadline; shut the transport once the connection is over. The transports are
//! [`stream::StreamIo`] (byte streams) and [`exchanges::HttpIo`] (HTTP), each with its own
//! receive, collect and send steps. Dispatch is [`dispatch::Dispatch`].

#[cfg(feature = "http")]
pub(crate) mod authorize;
mod connection;
mod dispatch;
#[cfg(feature = "http")]
mod exchanges;
mod pump;
mod stream;
mod view;

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use futures_lite::{AsyncRead, AsyncWrite};

#[cfg(feature = "http")]
use self::authorize::AuthIo;
pub(crate) use self::connection::Connection;
use self::dispatch::Dispatch;
#[cfg(feature = "http")]
use self::exchanges::HttpIo;
use self::pump::{Core, Io, Over};
pub(crate) use self::pump::{Pumper, ROUNDS_PER_PUMP};
use self::stream::StreamIo;
use crate::clock::AsyncTimer;
use crate::handler::ClientHandler;
#[cfg(feature = "http")]
use crate::http::HttpTransport;
use crate::notifications::NotificationHandler;
#[cfg(feature = "http")]
use crate::shared::HttpKey;
use crate::shared::{DriverLife, StreamKey, ViolationFn, wake_all};
use crate::stdio::{ServerEnd, ServerProcess};

type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send + 'static>>;

/// How many times one poll of the driver pumps and dispatches before it yields to the
/// executor, so a server that floods the client cannot starve the tasks sharing its thread.
const PASSES_PER_POLL: usize = 8;

/// How long stderr is still read after the server process is gone. Past it, whatever holds
/// the pipe open escaped the process group, and the driver stops listening.
const STDERR_DRAIN_LIMIT: Duration = Duration::from_secs(1);

/// The I/O half of a connection: a future that runs until the connection is over and the
/// server process (if any) is gone.
///
/// Spawn it on any executor (it needs no particular runtime: the time and the timers come from
/// the connection's [`Clock`](crate::Clock), by default async-io's, which brings its own
/// reactor). The `spawn_*` constructors of [`ClientBuilder`](crate::ClientBuilder) run it on a
/// thread of its own.
///
/// **Its task is where your code runs**: notification handlers, protocol-violation hooks, the
/// [`ClientHandler`]'s futures for server requests (polled with this task's context, so in
/// this executor's runtime), the OAuth handler and the token store. A call's own progress
/// callback is the one exception: it runs on the call's task, before the call returns. Code
/// that blocks this task delays the other user code of the connection, not its calls.
///
/// It is not alone in moving the connection's bytes: a call writes its own request, and over
/// a stdio child's pipes the news is pumped where it lands (the reactor's wake-up reads the
/// response, puts it in the call's slot and wakes the call), so a response costs one wake-up,
/// with no hop through the driver's task. The driver pumps what reaches it, and answers the
/// server's requests; it never waits for a call, nor does anyone's progress wait on a call's
/// future being polled.
///
/// Dropping it before it finished (cancelling its task, shutting its executor down) kills the
/// child's process group at once, ends the [`Notifications`](crate::Notifications) streams,
/// makes [`Client::ready`](crate::Client::ready), [`close`](crate::Client::close) and
/// [`closed`](crate::Client::closed) return, and fails every pending call and every later one
/// (unsent) with [`Error::DriverGone`](crate::Error::DriverGone). Over HTTP, nothing more is
/// sent: the session is not deleted.
#[must_use = "the driver does nothing unless polled: spawn it"]
pub struct Driver {
    shared: Arc<Connection>,
    dispatch: Dispatch,
    phase: Phase,
    /// Side work that lives as long as the transport (draining the server's stderr).
    background: Vec<BoxFuture<()>>,
    /// The connection's span.
    span: tracing::Span,
}

/// Where the driver is in its life.
enum Phase {
    /// Moving messages.
    Running,
    /// The connection is over and the transport closed: the server process is shut down.
    ShuttingDown(BoxFuture<Option<ServerEnd>>),
    /// The process is gone; what it wrote to stderr last is still read, until this timer.
    Draining(Pin<Box<dyn AsyncTimer>>),
    /// Over, and everyone was told.
    Finished,
}

impl fmt::Debug for Driver {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Driver")
            .field("handler_tasks", &self.dispatch.open_answers())
            .field("shutting_down", &!matches!(self.phase, Phase::Running))
            .finish_non_exhaustive()
    }
}

/// The user code a driver runs, fixed by the builder.
pub(crate) struct UserCode {
    pub(crate) handler: Arc<dyn ClientHandler>,
    pub(crate) notification_handlers: Vec<Arc<dyn NotificationHandler>>,
    pub(crate) violation_hooks: Vec<ViolationFn>,
}

impl Driver {
    /// A driver for a byte-stream connection.
    pub(crate) fn new(
        shared: Arc<Connection>,
        key: StreamKey,
        reader: impl AsyncRead + Send + 'static,
        writer: impl AsyncWrite + Send + 'static,
        code: UserCode,
    ) -> Self {
        let io = Io::Stream(StreamIo::new(key, reader, writer, shared.route.clone()));
        let span = tracing::debug_span!("mcp_connection", transport = "stream", pid = tracing::field::Empty);
        Self::with_io(shared, io, code, span)
    }

    /// A driver for an HTTP session: requests go through `transport`.
    #[cfg(feature = "http")]
    pub(crate) fn http(
        shared: Arc<Connection>,
        key: HttpKey,
        transport: Arc<dyn HttpTransport>,
        code: UserCode,
        origin: &str,
        auth: Option<AuthIo>,
    ) -> Self {
        // The origin only: a URL's path or query may carry secrets, and headers are never logged.
        let span = tracing::debug_span!("mcp_connection", transport = "http", origin = %origin);
        let mut driver = Self::with_io(shared, Io::Http(HttpIo::new(key, transport)), code, span);
        driver.dispatch.auth = auth;
        driver
    }

    fn with_io(shared: Arc<Connection>, io: Io, code: UserCode, span: tracing::Span) -> Self {
        let route = shared.route.clone();
        shared.pump.install(Core::new(io, route.clone(), span.clone()));
        let dispatch = Dispatch::new(code.handler, code.notification_handlers, code.violation_hooks, route);
        Self { shared, dispatch, phase: Phase::Running, background: Vec::new(), span }
    }

    /// Every source of the pump is the crate's own (a stdio child's pipes and process, the
    /// default clock's timers): news is pumped where it lands (see
    /// [`TaskWaker`](crate::source_waker::TaskWaker)).
    pub(crate) fn pump_where_news_lands(self, when: crate::source_waker::PumpHere) -> Self {
        let connection = Arc::downgrade(&self.shared);
        let connection: std::sync::Weak<dyn crate::source_waker::PumpNews> = connection;
        self.shared.route.pump_where_news_lands(connection, when);
        self
    }

    pub(crate) fn with_process(self, process: ServerProcess) -> Self {
        if let Some(core) = self.shared.pump.lock().as_mut() {
            if let Some(pid) = process.pid() {
                core.span.record("pid", pid);
            }
            if let Io::Stream(io) = &mut core.io {
                // The final flush comes out of the first shutdown step.
                io.set_flush_limit(process.step());
            }
            core.process = Some(process);
        }
        self
    }

    pub(crate) fn with_background(mut self, work: impl Future<Output = ()> + Send + 'static) -> Self {
        self.background.push(Box::pin(work));
        self
    }

    /// Pumps and dispatches until neither has more to do (or the poll's budget ran out).
    fn run(&mut self, cx: &mut Context<'_>) {
        for _ in 0..PASSES_PER_POLL {
            // Busy (`None`): a call is pumping, and goes once more for this task.
            let pumped =
                self.shared.pump.run(&self.shared, ROUNDS_PER_PUMP, Pumper::Task).unwrap_or_default();
            let dispatched = self.dispatch.run(cx, &self.shared);
            if let Some(over) = self.take_over(pumped.over) {
                self.begin_shutdown(over);
                return;
            }
            if pumped.more {
                break;
            }
            if !dispatched.pump {
                return;
            }
        }
        // More to do: come back after the other tasks had their turn.
        cx.waker().wake_by_ref();
    }

    /// What the shutdown needs, once the pump saw the connection over (`over`: a pump said
    /// so; a call's pump says so to this task by waking it).
    fn take_over(&self, over: bool) -> Option<Over> {
        if !over {
            return None;
        }
        self.shared.pump.take_over(&self.shared)
    }

    /// The connection is over and the transport shut: shut the server process down.
    fn begin_shutdown(&mut self, over: Over) {
        self.dispatch.clear();
        let clock = self.shared.clock.clone();
        let Over { process, closed_at } = over;
        self.phase = Phase::ShuttingDown(Box::pin(async move { process?.shutdown(clock, closed_at).await }));
    }

    /// Shuts the server process down, then drains its stderr: `Ready` once all is over.
    fn poll_shutdown(&mut self, cx: &mut Context<'_>) -> Poll<()> {
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
        if self.background.is_empty() || out_of_time {
            self.finish(DriverLife::Finished);
            return Poll::Ready(());
        }
        Poll::Pending
    }

    /// Over (finished, or dropped before): every notification stream ends once it has read
    /// what is held, and every waiting task is woken.
    fn finish(&mut self, how: DriverLife) {
        // Whatever still holds the stderr pipe outlived the process group: stop listening.
        self.background.clear();
        self.dispatch.clear();
        self.phase = Phase::Finished;
        self.shared.extras.broadcast.close();
        let mut wake = Vec::new();
        self.shared.lock().driver_ended(how, self.shared.clock.now(), &mut wake);
        wake_all(&mut wake);
    }

    /// Polls the side work (stderr).
    fn poll_background(&mut self, cx: &mut Context<'_>) {
        self.background.retain_mut(|work| work.as_mut().poll(cx).is_pending());
    }
}

impl Drop for Driver {
    /// Dropped before it finished (its task was cancelled, its executor shut down): nothing
    /// will move on this connection again, so nobody may wait for it. Synchronous only.
    fn drop(&mut self) {
        if matches!(self.phase, Phase::Finished) {
            return;
        }
        let span = self.span.clone();
        let _entered = span.enter();
        tracing::debug!("driver dropped before it finished: failing every call");
        // The process group first (dropping the process, or the shutdown holding it, sends
        // SIGKILL to the group), so whoever wakes below finds the server gone.
        self.phase = Phase::Finished;
        let core = self.shared.pump.lock().take();
        drop(core);
        self.finish(DriverLife::Dropped);
    }
}

impl Future for Driver {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let this = self.get_mut();
        this.shared.route.update(cx);
        let span = this.span.clone();
        let _entered = span.enter();
        if matches!(this.phase, Phase::Running) {
            this.run(cx);
        }
        this.poll_background(cx);
        match this.phase {
            Phase::Running => {}
            Phase::ShuttingDown(_) | Phase::Draining(_) => {
                if this.poll_shutdown(cx).is_ready() {
                    // Over: the pump's core goes (and with it the transport), dropped after its
                    // lock (an HTTP exchange dropped may wake a connection's task).
                    let core = this.shared.pump.lock().take();
                    drop(core);
                    return Poll::Ready(());
                }
                return Poll::Pending;
            }
            Phase::Finished => return Poll::Ready(()),
        }
        Poll::Pending
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use mcp_sansio::schema::Implementation;

    use crate::ClientBuilder;

    #[test]
    fn the_connection_is_owned_by_the_handles_and_the_driver_only() {
        let (client, driver) = ClientBuilder::new(Implementation::new("t", "0"))
            .connect(futures_lite::io::empty(), futures_lite::io::sink());
        // One reference for the handle, one for the driver: the pump's core holds none (it is
        // lent `&Shared`), so there is no cycle for a drop to break.
        assert_eq!(Arc::strong_count(&client.shared), 2);
        let weak = Arc::downgrade(&client.shared);
        drop(driver);
        assert_eq!(weak.strong_count(), 1);
        drop(client);
        assert!(weak.upgrade().is_none(), "the connection outlived its handle and its driver");
    }
}
