//! Where the connection's wake-ups go ([`TaskWaker`]), and per-source wakers ([`SourceWaker`]).
//!
//! Each I/O source a pump polls gets a waker of its own that records "this source has news"
//! before it passes the wake-up on. A pump then polls only the sources that have news, because
//! polling an idle pipe is a system call that finds nothing (`EAGAIN`), several of them per
//! request otherwise.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock, Weak};
use std::task::{Context, Wake, Waker};

use crate::locks::{self, OrderedGuard, OrderedMutex};

/// What pumps a connection's news where it lands (the connection, `driver::Connection`; a
/// trait so that this module stays below the driver's).
pub(crate) trait PumpNews: Send + Sync {
    /// Runs the pump here, unless someone is pumping already (who then goes once more):
    /// `true`. `false` if `when` says not now (the news is then the driver's task's).
    fn pump_news(&self, when: PumpHere) -> bool;
}

/// When news is pumped where it lands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum PumpHere {
    /// Always (a stdio child's own sources).
    Always,
    /// While at most one call waits (an HTTP transport's news: with many in flight the
    /// responses land on several of its connection tasks at once, which would take turns at
    /// the pump; the driver's task takes them together).
    WhileAlone,
}

/// Where the wake-ups of a connection's sources go.
///
/// By default, to the driver's task, which pumps and dispatches (quinn's shape: the I/O wakes
/// the connection's task, the task wakes the callers). For a connection whose sources are all
/// the crate's own (a stdio child's pipes, the process's exit, the clock's timer:
/// [`pump_where_news_lands`](Self::pump_where_news_lands)), the news is pumped right where it
/// lands instead: the wake-up runs the pump, which sorts each response into its call's slot and
/// wakes that call, and wakes the driver's task only for work that is its own (user code to
/// dispatch, the end of the connection, a pump's budget run out). A response then costs one
/// wake-up, of the call that waits for it, and nobody's progress waits on any future being
/// polled: whoever holds a call's future can set it aside, and every other call and the
/// dispatch go on.
///
/// The wakers a pump registers with those sources are only ever woken by their I/O (async-io's
/// reactor, the process reaper) or synchronously from inside a round, where the pump is busy:
/// the wake-up then asks the round to go once more (`Pump::claim`) and returns. Neither holds
/// a lock of this crate, so the pump's locks are taken in their order from a wake-up too.
/// Foreign sources (an `HttpTransport`'s futures, the byte streams given to
/// [`ClientBuilder::connect`](crate::ClientBuilder::connect)) may wake under locks of their own
/// that a pump would take again by polling them: their news goes to the driver's task.
///
/// Lock order: the task's waker is taken last, alone; no waker is called while it is held.
pub(crate) struct TaskWaker {
    task: OrderedMutex<Option<Waker>, { locks::LEAF }>,
    /// Set once, for a connection whose news is pumped where it lands.
    pump_here: OnceLock<(Weak<dyn PumpNews>, PumpHere)>,
}

impl TaskWaker {
    /// Wake-ups go to the task that polls last (see [`update`](Self::update)).
    pub(crate) fn new() -> Self {
        Self { task: OrderedMutex::new(None), pump_here: OnceLock::new() }
    }

    /// The task's waker. Every section under it is an assignment or a clone, so a poisoned lock
    /// (impossible short of a bug here) is taken as it is.
    fn task(&self) -> OrderedGuard<'_, Option<Waker>, { locks::LEAF }> {
        self.task.lock().unwrap_or_else(|poisoned| {
            self.task.clear_poison();
            poisoned.into_inner()
        })
    }

    /// From now on, news is pumped where it lands (see the type's docs): for connections whose
    /// sources are all the crate's own.
    pub(crate) fn pump_where_news_lands(&self, connection: Weak<dyn PumpNews>, when: PumpHere) {
        let _ = self.pump_here.set((connection, when));
    }

    /// Remembers the waker of the task now polling.
    pub(crate) fn update(&self, cx: &Context<'_>) {
        let mut task = self.task();
        if !task.as_ref().is_some_and(|w| w.will_wake(cx.waker())) {
            *task = Some(cx.waker().clone());
        }
    }

    /// A source has news: pumped here, or the task woken to pump it. Call it without holding
    /// any lock of the connection.
    pub(crate) fn wake(&self) {
        if let Some((connection, when)) = self.pump_here.get() {
            if defer(connection, *when, || self.task().clone()) {
                return;
            }
            if connection.upgrade().is_some_and(|connection| connection.pump_news(*when)) {
                return;
            }
        }
        self.wake_task();
    }

    /// Wakes the task, whatever becomes of the news.
    pub(crate) fn wake_task(&self) {
        let task = self.task().clone();
        if let Some(task) = task {
            task.wake();
        }
    }

    /// A waker for the sources a round polls directly: it passes their news on
    /// ([`wake`](Self::wake)).
    pub(crate) fn waker(self: &Arc<Self>) -> Waker {
        Waker::from(self.clone())
    }
}

impl Wake for TaskWaker {
    fn wake(self: Arc<Self>) {
        TaskWaker::wake(&self);
    }

    fn wake_by_ref(self: &Arc<Self>) {
        TaskWaker::wake(self);
    }
}

/// One source's waker and its "has news" flag. The flag starts set: a source is polled at
/// least once before it is known to be idle.
pub(crate) struct SourceWaker {
    flag: Arc<Flag>,
    waker: Waker,
}

struct Flag {
    news: AtomicBool,
    task: Arc<TaskWaker>,
    /// Wakes the driver's task, never pumps (a source only that task polls).
    task_only: bool,
}

impl Wake for Flag {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        self.news.store(true, Ordering::Release);
        if self.task_only { self.task.wake_task() } else { TaskWaker::wake(&self.task) }
    }
}

impl SourceWaker {
    /// A source any pump polls: its news goes where the connection's news goes
    /// ([`TaskWaker::wake`]).
    pub(crate) fn new(task: Arc<TaskWaker>) -> Self {
        Self::with(task, false)
    }

    /// A source only the driver's task polls (a handler's future): its news wakes that task.
    pub(crate) fn for_task(task: Arc<TaskWaker>) -> Self {
        Self::with(task, true)
    }

    fn with(task: Arc<TaskWaker>, task_only: bool) -> Self {
        let flag = Arc::new(Flag { news: AtomicBool::new(true), task, task_only });
        let waker = Waker::from(flag.clone());
        Self { flag, waker }
    }

    /// Whether the source may have news, clearing the mark: poll it only if this is `true`,
    /// and call [`again`](Self::again) if the poll made progress (there may be more).
    pub(crate) fn take(&self) -> bool {
        self.flag.news.swap(false, Ordering::Acquire)
    }

    /// Marks the source to be polled again in the next round.
    pub(crate) fn again(&self) {
        self.flag.news.store(true, Ordering::Release);
    }

    /// A context that wakes through this source.
    pub(crate) fn context(&self) -> Context<'_> {
        Context::from_waker(&self.waker)
    }
}

/// A pump held back until a transport's task finished its poll (see [`defer_pumps`]): the
/// connection, and the task to wake if it does not pump.
#[cfg_attr(not(feature = "http"), allow(dead_code))]
struct Deferred {
    connection: Weak<dyn PumpNews>,
    when: PumpHere,
    task: Option<Waker>,
}

thread_local! {
    /// `Some` while this thread runs [`defer_pumps`]: the pumps held back meanwhile.
    static DEFERRED: std::cell::RefCell<Option<Vec<Deferred>>> = const { std::cell::RefCell::new(None) };
}

/// Holds the pump back if this thread is inside [`defer_pumps`]; `true` if it did.
fn defer(connection: &Weak<dyn PumpNews>, when: PumpHere, task: impl FnOnce() -> Option<Waker>) -> bool {
    DEFERRED.with(|deferred| {
        let Ok(mut deferred) = deferred.try_borrow_mut() else { return false };
        let Some(held) = deferred.as_mut() else { return false };
        // One pump per connection takes all its news.
        if !held.iter().any(|d| Weak::ptr_eq(&d.connection, connection)) {
            held.push(Deferred { connection: connection.clone(), when, task: task() });
        }
        true
    })
}

/// Runs `poll`, a poll of an HTTP transport's own task (a connection's, say), and only then
/// the pumps its wake-ups asked for. See [`crate::http::defer_pumps`].
#[cfg_attr(not(feature = "http"), allow(dead_code))]
pub(crate) fn defer_pumps<T>(poll: impl FnOnce() -> T) -> T {
    let outer = DEFERRED.with(|deferred| {
        let mut deferred = deferred.borrow_mut();
        let outer = deferred.is_some();
        if !outer {
            *deferred = Some(Vec::new());
        }
        outer
    });
    if outer {
        // Inside another one: that one runs the pumps.
        return poll();
    }
    /// Takes the held pumps back out however `poll` ends.
    struct Take;
    impl Drop for Take {
        fn drop(&mut self) {
            let held = DEFERRED.with(|deferred| deferred.borrow_mut().take()).unwrap_or_default();
            for Deferred { connection, when, task } in held {
                let pumped = connection.upgrade().is_some_and(|connection| connection.pump_news(when));
                if !pumped {
                    if let Some(task) = task {
                        task.wake();
                    }
                }
            }
        }
    }
    let _take = Take;
    poll()
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::AtomicUsize;

    use super::*;

    /// A waker that counts its wake-ups.
    #[derive(Default)]
    struct Count(AtomicUsize);

    impl Wake for Count {
        fn wake(self: Arc<Self>) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }

    fn counter() -> (Arc<Count>, Waker) {
        let count = Arc::new(Count::default());
        (count.clone(), Waker::from(count))
    }

    fn woken(count: &Count) -> usize {
        count.0.load(Ordering::SeqCst)
    }

    #[test]
    fn news_wakes_the_task_that_polled_last() {
        let (first_count, first) = counter();
        let (second_count, second) = counter();
        let task = Arc::new(TaskWaker::new());
        let source = SourceWaker::new(task.clone());
        assert!(source.take(), "a new source is polled once before it is known idle");
        assert!(!source.take());
        task.update(&Context::from_waker(&first));
        source.context().waker().wake_by_ref();
        assert_eq!((woken(&first_count), woken(&second_count)), (1, 0));
        assert!(source.take(), "the wake-up marked the source");
        task.update(&Context::from_waker(&second));
        task.waker().wake_by_ref();
        assert_eq!((woken(&first_count), woken(&second_count)), (1, 1));
    }

    struct Nothing;

    impl PumpNews for Nothing {
        fn pump_news(&self, _: PumpHere) -> bool {
            unreachable!("there is no connection");
        }
    }

    #[test]
    fn news_for_a_connection_gone_wakes_the_task() {
        let (count, waker) = counter();
        let task = Arc::new(TaskWaker::new());
        task.update(&Context::from_waker(&waker));
        // Pumped where it lands, for a connection that no longer exists: nothing to pump.
        task.pump_where_news_lands(Weak::<Nothing>::new(), PumpHere::Always);
        task.wake();
        assert_eq!(woken(&count), 1);
    }

    /// A connection that counts its pumps, and pumps only if `pumps` says so.
    struct Pumps {
        count: AtomicUsize,
        pumps: bool,
    }

    impl PumpNews for Pumps {
        fn pump_news(&self, _: PumpHere) -> bool {
            self.count.fetch_add(1, Ordering::SeqCst);
            self.pumps
        }
    }

    #[test]
    fn news_inside_a_deferring_poll_is_pumped_once_after_it() {
        let connection = Arc::new(Pumps { count: AtomicUsize::new(0), pumps: true });
        let task = Arc::new(TaskWaker::new());
        let weak: Weak<dyn PumpNews> = Arc::downgrade(&connection) as Weak<dyn PumpNews>;
        task.pump_where_news_lands(weak, PumpHere::WhileAlone);
        let inside = defer_pumps(|| {
            task.as_ref().wake();
            task.as_ref().wake();
            // Nested: the outer one pumps.
            defer_pumps(|| task.as_ref().wake());
            connection.count.load(Ordering::SeqCst)
        });
        assert_eq!(inside, 0, "nothing pumped during the poll");
        assert_eq!(connection.count.load(Ordering::SeqCst), 1, "one pump after it, for all the news");
        task.as_ref().wake();
        assert_eq!(connection.count.load(Ordering::SeqCst), 2, "outside, news is pumped where it lands");
    }

    #[test]
    fn news_held_back_that_no_pump_takes_wakes_the_task() {
        let (count, waker) = counter();
        let connection = Arc::new(Pumps { count: AtomicUsize::new(0), pumps: false });
        let task = Arc::new(TaskWaker::new());
        task.update(&Context::from_waker(&waker));
        let weak: Weak<dyn PumpNews> = Arc::downgrade(&connection) as Weak<dyn PumpNews>;
        task.pump_where_news_lands(weak, PumpHere::WhileAlone);
        defer_pumps(|| task.as_ref().wake());
        assert_eq!(woken(&count), 1);
        // A poll that panics still lets the news out.
        let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            defer_pumps(|| {
                task.as_ref().wake();
                panic!("the transport's task panicked");
            })
        }));
        assert!(caught.is_err());
        assert_eq!(woken(&count), 2);
    }
}
