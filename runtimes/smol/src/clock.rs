//! [`Clock`]: where a connection gets the time and its timers (quinn's `Runtime` seam, for
//! time only).
//!
//! The engine is told the time; it never reads it. The driver reads it from the connection's
//! clock before each round, arms one clock timer at the engine's next deadline, and the
//! client's commands (sending, cancelling, closing), the list cache and the server process's
//! shutdown use the same clock. Swapping it for a manual one runs a whole connection on
//! simulated time.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Instant;

/// The time source of a connection: [`now`](Self::now) and timers. [`AsyncIoClock`] (the system's
/// monotonic clock, async-io timers) unless [`ClientBuilder::clock`](crate::ClientBuilder::clock)
/// sets another, such as a manual clock that lets a test move time instead of waiting.
///
/// The engine requires that time never goes backwards: `now` must be monotonic.
///
/// A clock that moves only when told to, and a 30 s handshake timeout that fires at once when
/// the clock is moved past it:
///
/// ```
/// use std::pin::Pin;
/// use std::sync::{Arc, Mutex};
/// use std::task::{Context, Poll, Waker};
/// use std::time::{Duration, Instant};
///
/// use mcp_smol::mcp_sansio::ProtocolVersion;
/// use mcp_smol::mcp_sansio::schema::Implementation;
/// use mcp_smol::{AsyncTimer, ClientBuilder, Clock, Error};
///
/// /// The time, and the tasks of the timers waiting for it to move.
/// #[derive(Debug, Clone)]
/// struct ManualClock(Arc<Mutex<(Instant, Vec<Waker>)>>);
///
/// impl ManualClock {
///     fn advance(&self, by: Duration) {
///         let mut inner = self.0.lock().unwrap();
///         inner.0 += by;
///         // Every waiting timer looks at its deadline again.
///         inner.1.drain(..).for_each(Waker::wake);
///     }
/// }
///
/// impl Clock for ManualClock {
///     fn now(&self) -> Instant {
///         self.0.lock().unwrap().0
///     }
///
///     fn timer(&self, at: Instant) -> Pin<Box<dyn AsyncTimer>> {
///         Box::pin(ManualTimer { clock: self.clone(), at })
///     }
/// }
///
/// #[derive(Debug)]
/// struct ManualTimer {
///     clock: ManualClock,
///     at: Instant,
/// }
///
/// impl AsyncTimer for ManualTimer {
///     fn reset(mut self: Pin<&mut Self>, at: Instant) {
///         self.at = at;
///     }
///
///     fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
///         let mut inner = self.clock.0.lock().unwrap();
///         if inner.0 >= self.at {
///             return Poll::Ready(());
///         }
///         inner.1.push(cx.waker().clone());
///         Poll::Pending
///     }
/// }
///
/// # fn main() -> std::io::Result<()> {
/// let clock = ManualClock(Arc::new(Mutex::new((Instant::now(), Vec::new()))));
/// // A server that never answers: the other end of a socket nobody reads.
/// let (ours, _server) = smol::Async::<std::os::unix::net::UnixStream>::pair()?;
/// let (reader, writer) = futures_lite::io::split(ours);
/// let (client, driver) = ClientBuilder::new(Implementation::new("my-app", "1.0.0"))
///     .configure(|c| {
///         c.with_versions(&ProtocolVersion::LEGACY).with_handshake_timeout(Duration::from_secs(30))
///     })
///     .clock(clock.clone())
///     .connect(reader, writer);
/// smol::block_on(async {
///     let driver = smol::spawn(driver);
///     clock.advance(Duration::from_secs(31));
///     assert!(matches!(client.ready().await, Err(Error::Connect(_))));
///     driver.await;
/// });
/// # Ok(()) }
/// ```
pub trait Clock: Send + Sync + fmt::Debug + 'static {
    /// The current time; never earlier than a time it returned before.
    fn now(&self) -> Instant;

    /// A timer that fires once this clock reaches `at` (at once if it has).
    fn timer(&self, at: Instant) -> Pin<Box<dyn AsyncTimer>>;
}

/// A timer of a [`Clock`] (quinn's `AsyncTimer`): armed at one instant, re-armed with
/// [`reset`](Self::reset).
pub trait AsyncTimer: Send + fmt::Debug {
    /// Moves the deadline to `at`, earlier or later, and arms the timer again if it fired.
    fn reset(self: Pin<&mut Self>, at: Instant);

    /// `Ready` once the clock reached the deadline. `Pending` otherwise, and then the task of
    /// `cx` must be woken when the clock reaches it. (Once a timer fired, the driver resets it
    /// before polling it again.)
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()>;
}

/// The default [`Clock`]: [`Instant::now`] and [`async_io::Timer`]s, which need no particular
/// executor (async-io brings its own reactor thread).
#[derive(Debug, Default, Clone, Copy)]
pub struct AsyncIoClock;

impl Clock for AsyncIoClock {
    fn now(&self) -> Instant {
        Instant::now()
    }

    fn timer(&self, at: Instant) -> Pin<Box<dyn AsyncTimer>> {
        Box::pin(IoTimer(async_io::Timer::at(at)))
    }
}

/// An async-io timer behind the [`AsyncTimer`] face (a newtype, so async-io's types stay out
/// of the public API).
#[derive(Debug)]
struct IoTimer(async_io::Timer);

impl AsyncTimer for IoTimer {
    fn reset(mut self: Pin<&mut Self>, at: Instant) {
        self.0.set_at(at);
    }

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        Pin::new(&mut self.0).poll(cx).map(drop)
    }
}

/// Resolves once `clock` reaches `at`.
pub(crate) fn sleep_until(clock: &dyn Clock, at: Instant) -> Sleep {
    Sleep(clock.timer(at))
}

/// The future of [`sleep_until`].
pub(crate) struct Sleep(Pin<Box<dyn AsyncTimer>>);

impl Future for Sleep {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        self.0.as_mut().poll(cx)
    }
}

/// Seconds since the Unix epoch: the time of day the engine is given (stored tokens' expiry, the
/// authorizer's JWTs, hosted tasks' timestamps).
pub(crate) fn unix_now() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs())
}
