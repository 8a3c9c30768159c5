//! Per-source wakers for the driver: each I/O source the driver polls gets a waker of its own
//! that records "this source has news" before waking the driver's task. A round then polls only
//! the sources that have news, because polling an idle pipe is a system call that finds
//! nothing (`EAGAIN`) — several of them per request otherwise.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Wake, Waker};

/// Where the wakers of a connection's sources send their wake-ups: to the task polling the
/// driver, or, while a call is driving the connection itself, to that call's task.
///
/// A call waiting for its response drives the connection when it can (see
/// [`Drive`](crate::driver::Drive)): it names itself here with [`route_to_caller`]
/// (Self::route_to_caller), so that the news it waits for wakes it directly, with no hop
/// through the driver's task (a thread hop each way when the driver runs on another thread, as
/// with `spawn_stdio` under `smol::block_on`). Every source registers a waker of its own that
/// ends here ([`SourceWaker`], or [`waker`](Self::waker)), never the waker of whoever polled it,
/// so a change of route needs no source to be polled again.
#[derive(Default)]
pub(crate) struct TaskWaker(Mutex<Route>);

/// The token of a call handed the route by another ([`TaskWaker::release`]), until it takes it.
const HANDED_OVER: u64 = u64::MAX;

#[derive(Default)]
struct Route {
    /// The waker of the task polling the driver.
    task: Option<Waker>,
    /// The call driving the connection, if any: its token and its task's waker.
    caller: Option<(u64, Waker)>,
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

impl TaskWaker {
    fn route(&self) -> std::sync::MutexGuard<'_, Route> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Remembers the waker of the task now polling the driver.
    pub(crate) fn update(&self, cx: &Context<'_>) {
        let mut route = self.route();
        if !route.task.as_ref().is_some_and(|w| w.will_wake(cx.waker())) {
            route.task = Some(cx.waker().clone());
        }
    }

    // Wakers are called outside the lock: a waker may run anything, even poll its task.
    fn wake_route(&self) {
        let waker = {
            let mut route = self.route();
            if let Some((_, caller)) = &route.caller {
                let caller = caller.clone();
                route.to_caller += 1;
                Some(caller)
            } else {
                route.task.clone()
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
    /// (`Some`) if no other call drives it, or if it was handed the route
    /// ([`release`](Self::release)). The `bool` says whether the driver's task must be woken to
    /// start its watch.
    pub(crate) fn route_to_caller(&self, token: u64, waker: &Waker) -> Option<bool> {
        let mut route = self.route();
        match &mut route.caller {
            Some((t, w)) if *t == token || *t == HANDED_OVER => {
                *t = token;
                if !w.will_wake(waker) {
                    *w = waker.clone();
                }
            }
            Some(_) => return None,
            none => *none = Some((token, waker.clone())),
        }
        route.routed_since_check = true;
        let start_watch = !route.watching;
        route.watching = true;
        Some(start_watch)
    }

    /// Whether call `token` drives the connection.
    pub(crate) fn drives(&self, token: u64) -> bool {
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

    /// Call `token` stops driving the connection (it has its response, or was dropped). The
    /// route goes to `successor`, a call still waiting, if there is one (it takes the route
    /// when next polled), else to the driver's task. If a wake-up reached `token` that no
    /// round followed, the new holder is woken to follow it.
    pub(crate) fn release(&self, token: u64, successor: Option<Waker>) {
        let wake = {
            let mut route = self.route();
            if route.caller.as_ref().is_none_or(|(t, _)| *t != token) {
                return;
            }
            route.caller = successor.map(|waker| (HANDED_OVER, waker));
            if route.followed == route.to_caller {
                return;
            }
            route.followed = route.to_caller;
            match &route.caller {
                Some((_, waker)) => Some(waker.clone()),
                None => route.task.clone(),
            }
        };
        if let Some(waker) = wake {
            waker.wake();
        }
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
        self.wake_route();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        self.wake_route();
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
}

impl Wake for Flag {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        self.news.store(true, Ordering::Release);
        self.task.wake_route();
    }
}

impl SourceWaker {
    pub(crate) fn new(task: Arc<TaskWaker>) -> Self {
        let flag = Arc::new(Flag { news: AtomicBool::new(true), task });
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

    /// The route with a driver's task whose waker is `task`.
    fn route_with_task(task: &Waker) -> Arc<TaskWaker> {
        let route = Arc::new(TaskWaker::default());
        route.update(&Context::from_waker(task));
        route
    }

    #[test]
    fn wake_ups_go_to_the_call_that_drives_then_back_to_the_task() {
        let (task_count, task) = counter();
        let (call_count, call) = counter();
        let route = route_with_task(&task);
        let source = route.waker();

        source.wake_by_ref();
        assert_eq!((woken(&task_count), woken(&call_count)), (1, 0), "no call drives: the task");

        assert_eq!(route.route_to_caller(7, &call), Some(true), "the first call starts the watch");
        source.wake_by_ref();
        assert_eq!((woken(&task_count), woken(&call_count)), (1, 1), "the call drives: the call");

        // The call ran a round after its wake-up: nothing is left to follow, nobody is woken.
        route.round_started();
        route.release(7, None);
        assert_eq!((woken(&task_count), woken(&call_count)), (1, 1));
        source.wake_by_ref();
        assert_eq!(woken(&task_count), 2, "released: the task again");
    }

    #[test]
    fn a_second_call_does_not_take_the_route_and_is_handed_it() {
        let (_task_count, task) = counter();
        let (first_count, first) = counter();
        let (second_count, second) = counter();
        let route = route_with_task(&task);
        assert!(route.route_to_caller(1, &first).is_some());
        assert_eq!(route.route_to_caller(2, &second), None, "another call drives");
        assert!(route.caller_driving());

        // The first ends and hands the route to the second, which has not taken it yet.
        route.release(1, Some(second.clone()));
        route.waker().wake_by_ref();
        assert_eq!((woken(&first_count), woken(&second_count)), (0, 1));
        assert_eq!(route.route_to_caller(2, &second), Some(false), "taken; the watch runs already");
        // A release by a call that does not hold the route changes nothing.
        route.release(1, None);
        assert!(route.caller_driving());
    }

    #[test]
    fn a_wake_up_no_round_followed_is_passed_on_at_release() {
        let (task_count, task) = counter();
        let (_call_count, call) = counter();
        let route = route_with_task(&task);
        route.route_to_caller(3, &call);
        route.round_started();
        route.waker().wake_by_ref();
        // The call got its response from another driver and ends without a round.
        route.release(3, None);
        assert_eq!(woken(&task_count), 1, "the task follows the news the call left");
    }

    #[test]
    fn the_watch_takes_the_route_back_from_a_call_that_does_not_follow_its_wake_ups() {
        let (_task_count, task) = counter();
        let (_call_count, call) = counter();
        let route = route_with_task(&task);
        route.route_to_caller(5, &call);
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
