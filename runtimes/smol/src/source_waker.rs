//! Where the connection's wake-ups go ([`TaskWaker`], the route), and per-source wakers
//! ([`SourceWaker`]).
//!
//! Each I/O source a pump polls gets a waker of its own that records "this source has news"
//! before waking whoever the route names. A pump then polls only the sources that have news,
//! because polling an idle pipe is a system call that finds nothing (`EAGAIN`), several of them
//! per request otherwise.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Wake, Waker};

use crate::locks::{self, OrderedGuard, OrderedMutex};

/// Tells apart the calls that may drive the connection: each [`ResponseFuture`]
/// (crate::call::ResponseFuture) has its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct CallToken(pub(crate) u64);

/// Where the wakers of a connection's sources send their wake-ups: to the driver's task, or,
/// while a call is driving the connection itself, to that call's task.
///
/// A call waiting for its response drives the connection when nobody else does (see
/// [`Pump`](crate::driver::Pump)): it names itself here with
/// [`route_to_caller`](Self::route_to_caller), so that the news it waits for wakes it directly,
/// with no hop through the driver's task. Every source registers a waker of its own that ends
/// here ([`SourceWaker`], or [`waker`](Self::waker)), never the waker of whoever polled it, so
/// a change of route needs no source to be polled again.
///
/// The route names a call only from the moment that call asked for it in its own poll, and
/// only until it ends: [`release`](Self::release) by the same token gives it back to the
/// driver's task. An ending call does not hand the route to another one; it wakes one that
/// still waits ([`ResponseFuture`](crate::call::ResponseFuture)), which takes the route in its
/// next poll. So a call that is never polled again, ends without driving, or is dropped never
/// holds the route, and the driver's task follows the news meanwhile. The one case left for
/// the driver's watch ([`check`](Self::check)) is a call that took the route and is then set
/// aside unpolled while its task is woken.
///
/// Lock order: the route's mutex is taken last (after the pump's and the state's); nothing is
/// locked or woken while it is held.
pub(crate) struct TaskWaker {
    route: OrderedMutex<Route, { locks::LEAF }>,
    /// Whether the driver's task keeps a watch on the calls that drive (see [`check`](Self::check)).
    watch: bool,
}

#[derive(Default)]
struct Route {
    /// The waker of the task polling the driver.
    task: Option<Waker>,
    /// The call driving the connection, if any: its token and its task's waker.
    caller: Option<(CallToken, Waker)>,
    /// Wake-ups sent to a caller so far, and how many of them a round has followed (a round
    /// looks at every source that has news, so each round start follows all before it).
    to_caller: u64,
    followed: u64,
    /// `to_caller` at the last check of the driver's watch ([`Check`]).
    to_caller_at_check: u64,
    /// A caller was routed to since the last check.
    routed_since_check: bool,
    /// The driver's task keeps a watch on the callers (see [`Check`]).
    watching: bool,
}

/// What the driver's watch found (see [`TaskWaker::check`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Check {
    /// No call drives the connection, nor did one since the last check: the watch can stop.
    Idle,
    /// Calls drive it and follow their wake-ups: keep watching.
    Callers,
    /// The call driving it was woken and has run no round since the last check (its future is
    /// not being polled, however its task was woken): the driver's task took the route back
    /// and must run the rounds.
    TakenBack,
}

/// What [`TaskWaker::release`] found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Released {
    /// The call did not hold the route: nothing changed.
    NotHeld,
    /// The call holds the route and a wake-up reached it that no round followed: it keeps the
    /// route, to pump once more before it lets go.
    Unfollowed,
    /// The route is the driver's task's again; no wake-up was left unfollowed.
    Clean,
    /// The route is the driver's task's again, and a wake-up that reached the call was not
    /// followed by a round: the task was woken to follow it.
    TaskWoken,
}

impl TaskWaker {
    /// A route to the driver's task; `watch`: whether the driver keeps a watch on the calls
    /// that drive (see [`check`](Self::check)).
    pub(crate) fn new(watch: bool) -> Self {
        Self { route: OrderedMutex::new(Route::default()), watch }
    }

    /// The route's state. Every section under it is a few assignments that leave it whole at
    /// any point and call nothing that could panic, so a poisoned lock (impossible short of a
    /// bug here) is taken as it is.
    fn route(&self) -> OrderedGuard<'_, Route, { locks::LEAF }> {
        self.route.lock().unwrap_or_else(|poisoned| {
            self.route.clear_poison();
            poisoned.into_inner()
        })
    }

    /// Remembers the waker of the task now polling the driver.
    pub(crate) fn update(&self, cx: &Context<'_>) {
        let mut route = self.route();
        if !route.task.as_ref().is_some_and(|w| w.will_wake(cx.waker())) {
            route.task = Some(cx.waker().clone());
        }
    }

    /// Wakes whoever the route names: the call driving, else the driver's task. Wakers are
    /// called outside the lock: a waker may run anything, even poll its task.
    pub(crate) fn wake(&self) {
        let waker = {
            let mut route = self.route();
            match &route.caller {
                Some((_, caller)) => {
                    let caller = caller.clone();
                    route.to_caller += 1;
                    Some(caller)
                }
                None => route.task.clone(),
            }
        };
        if let Some(waker) = waker {
            waker.wake();
        }
    }

    /// Wakes the driver's task, whatever the route.
    pub(crate) fn wake_task(&self) {
        let task = self.route().task.clone();
        if let Some(task) = task {
            task.wake();
        }
    }

    /// A waker that wakes whoever the route names, for the sources a round polls directly.
    pub(crate) fn waker(self: &Arc<Self>) -> Waker {
        Waker::from(self.clone())
    }

    /// Call `token` asks to drive the connection, its task woken with `waker`: granted
    /// (`Some`) if no other call drives it. The `bool` says whether the driver's task must be
    /// woken to start its watch.
    pub(crate) fn route_to_caller(&self, token: CallToken, waker: &Waker) -> Option<bool> {
        let mut route = self.route();
        match &mut route.caller {
            Some((t, w)) if *t == token => {
                if !w.will_wake(waker) {
                    *w = waker.clone();
                }
            }
            Some(_) => return None,
            none => *none = Some((token, waker.clone())),
        }
        route.routed_since_check = true;
        let start_watch = self.watch && !route.watching;
        route.watching |= self.watch;
        Some(start_watch)
    }

    /// Whether call `token` holds the route.
    pub(crate) fn held_by(&self, token: CallToken) -> bool {
        self.route().caller.as_ref().is_some_and(|(t, _)| *t == token)
    }

    /// Whether a call drives the connection.
    pub(crate) fn caller_driving(&self) -> bool {
        self.route().caller.is_some()
    }

    /// Whether the driver's task keeps a watch on the calls driving (see [`check`](Self::check)).
    pub(crate) fn watching(&self) -> bool {
        self.route().watching
    }

    /// A round starts: every wake-up so far is followed.
    pub(crate) fn round_started(&self) {
        let mut route = self.route();
        route.followed = route.to_caller;
    }

    /// Call `token` stops driving the connection (it has its response, or was dropped): the
    /// route is the driver's task's again. If a wake-up reached the call that no round
    /// followed, then: with `follow`, nothing changes and [`Released::Unfollowed`] says the
    /// call should pump once more first; without, the task is woken to follow it. Nothing
    /// happens if `token` does not hold the route.
    pub(crate) fn release(&self, token: CallToken, follow: bool) -> Released {
        let task = {
            let mut route = self.route();
            if route.caller.as_ref().is_none_or(|(t, _)| *t != token) {
                return Released::NotHeld;
            }
            if route.followed == route.to_caller {
                route.caller = None;
                return Released::Clean;
            }
            if follow {
                return Released::Unfollowed;
            }
            route.caller = None;
            route.followed = route.to_caller;
            route.task.clone()
        };
        if let Some(task) = task {
            task.wake();
        }
        Released::TaskWoken
    }

    /// Wake-ups go to the driver's task again, whoever drove (the connection is shutting down).
    pub(crate) fn route_to_task(&self) {
        let mut route = self.route();
        route.caller = None;
        route.followed = route.to_caller;
    }

    /// The driver's watch, every [`WATCH_PERIOD`](crate::driver::WATCH_PERIOD) while calls
    /// drive the connection: a call woken for news that runs no round for a whole period
    /// loses the route to the driver's task, so no news waits on a future nobody polls.
    pub(crate) fn check(&self) -> Check {
        let mut route = self.route();
        // A wake-up that had reached the call by the last check, and no round since.
        let stalled = route.caller.is_some() && route.followed < route.to_caller_at_check;
        route.to_caller_at_check = route.to_caller;
        if stalled {
            route.caller = None;
            route.followed = route.to_caller;
            return Check::TakenBack;
        }
        if route.caller.is_none() && !route.routed_since_check {
            route.watching = false;
            return Check::Idle;
        }
        route.routed_since_check = false;
        Check::Callers
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
    /// Wakes the driver's task whatever the route (a source only that task polls).
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
    /// A source any pump polls: its news wakes whoever the route names.
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

    /// The route with a driver's task whose waker is `task`, and the watch on.
    fn route_with_task(task: &Waker) -> Arc<TaskWaker> {
        let route = Arc::new(TaskWaker::new(true));
        route.update(&Context::from_waker(task));
        route
    }

    const A: CallToken = CallToken(1);
    const B: CallToken = CallToken(2);

    #[test]
    fn wake_ups_go_to_the_call_that_drives_then_back_to_the_task() {
        let (task_count, task) = counter();
        let (call_count, call) = counter();
        let route = route_with_task(&task);
        let source = route.waker();

        source.wake_by_ref();
        assert_eq!((woken(&task_count), woken(&call_count)), (1, 0), "no call drives: the task");

        assert_eq!(route.route_to_caller(A, &call), Some(true), "the first call starts the watch");
        source.wake_by_ref();
        assert_eq!((woken(&task_count), woken(&call_count)), (1, 1), "the call drives: the call");
        assert_eq!(route.release(A, true), Released::Unfollowed, "a wake-up no round followed");
        assert!(route.held_by(A));

        // The call ran a round after its wake-up: nothing is left to follow, nobody is woken.
        route.round_started();
        assert_eq!(route.release(A, true), Released::Clean);
        assert_eq!((woken(&task_count), woken(&call_count)), (1, 1));
        source.wake_by_ref();
        assert_eq!(woken(&task_count), 2, "released: the task again");
    }

    #[test]
    fn only_the_call_holding_the_route_releases_it() {
        let (_task_count, task) = counter();
        let (_first_count, first) = counter();
        let (_second_count, second) = counter();
        let route = route_with_task(&task);
        assert!(route.route_to_caller(A, &first).is_some());
        assert_eq!(route.route_to_caller(B, &second), None, "another call drives");
        assert_eq!(route.release(B, false), Released::NotHeld, "B never held it");
        assert!(route.caller_driving());
        assert_eq!(route.release(A, false), Released::Clean);
        assert!(!route.caller_driving());
        assert_eq!(route.route_to_caller(B, &second), Some(false), "free again; the watch runs already");
    }

    #[test]
    fn a_wake_up_no_round_followed_goes_to_the_task_at_release() {
        let (task_count, task) = counter();
        let (_call_count, call) = counter();
        let route = route_with_task(&task);
        route.route_to_caller(A, &call);
        route.round_started();
        route.waker().wake_by_ref();
        // The call got its response from another pump and is dropped without a round.
        assert_eq!(route.release(A, false), Released::TaskWoken);
        assert_eq!(woken(&task_count), 1, "the task follows the news the call left");
    }

    #[test]
    fn without_the_watch_no_call_starts_it() {
        let route = Arc::new(TaskWaker::new(false));
        let (_call_count, call) = counter();
        assert_eq!(route.route_to_caller(A, &call), Some(false));
        assert!(!route.watching());
    }

    #[test]
    fn the_watch_takes_the_route_back_from_a_call_that_does_not_follow_its_wake_ups() {
        let (_task_count, task) = counter();
        let (_call_count, call) = counter();
        let route = route_with_task(&task);
        route.route_to_caller(A, &call);
        route.round_started();
        assert_eq!(route.check(), Check::Callers);
        // Woken, and a round follows before the next check: all is well.
        route.waker().wake_by_ref();
        route.round_started();
        assert_eq!(route.check(), Check::Callers);
        // Woken, and no round for a whole period.
        route.waker().wake_by_ref();
        assert_eq!(route.check(), Check::Callers, "less than a period may have passed");
        assert_eq!(route.check(), Check::TakenBack);
        assert!(!route.caller_driving());
        // No call drives and none asked since: the watch stops.
        assert_eq!(route.check(), Check::Idle);
        assert!(!route.watching());
    }
}
