//! Per-source wakers for the driver: each I/O source the driver polls gets a waker of its own
//! that records "this source has news" before waking the driver's task. A round then polls only
//! the sources that have news, because polling an idle pipe is a system call that finds
//! nothing (`EAGAIN`) — several of them per request otherwise.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Wake, Waker};

/// The driver task's current waker, shared by its source wakers.
#[derive(Default)]
pub(crate) struct TaskWaker(Mutex<Option<Waker>>);

impl TaskWaker {
    /// Remembers the waker of the task now polling the driver.
    pub(crate) fn update(&self, cx: &Context<'_>) {
        let mut current = self.0.lock().unwrap_or_else(|p| p.into_inner());
        if !current.as_ref().is_some_and(|w| w.will_wake(cx.waker())) {
            *current = Some(cx.waker().clone());
        }
    }

    fn wake(&self) {
        if let Some(waker) = &*self.0.lock().unwrap_or_else(|p| p.into_inner()) {
            waker.wake_by_ref();
        }
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
        self.task.wake();
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
