//! Server notifications: routed to handlers ([`NotificationHandler`], closures) on the
//! driver's task, and broadcast to any number of [`Notifications`] subscriptions.
//!
//! The broadcast is one ring of at most `capacity` notifications shared by every subscriber
//! (see [`ClientBuilder::notification_capacity`](crate::ClientBuilder::notification_capacity)).
//! A subscriber that falls further behind than that is told how many it missed
//! ([`RecvError::Lagged`]) and goes on from the oldest one still held: memory stays bounded
//! however slow a subscriber is, and nobody else waits for it.

use std::collections::VecDeque;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, Waker};

use futures_lite::Stream;
use mcp_sansio::ServerNotification;
use mcp_sansio::schema::{
    ElicitationCompleteNotificationParams, LoggingMessageNotificationParams, ProgressNotificationParams,
    ResourceUpdatedNotificationParams,
};
use serde_json::value::RawValue;

use crate::locks::{self, OrderedGuard, OrderedMutex};

/// Default number of notifications the broadcast ring holds.
pub(crate) const DEFAULT_CAPACITY: usize = 1024;

/// Which list a `*/list_changed` notification is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ListKind {
    /// `notifications/tools/list_changed`.
    Tools,
    /// `notifications/resources/list_changed`.
    Resources,
    /// `notifications/prompts/list_changed`.
    Prompts,
}

impl ListKind {
    /// The list a notification says changed, if it is a `*/list_changed` notification.
    pub fn of(notification: &ServerNotification) -> Option<ListKind> {
        match notification {
            ServerNotification::ToolListChanged => Some(ListKind::Tools),
            ServerNotification::ResourceListChanged => Some(ListKind::Resources),
            ServerNotification::PromptListChanged => Some(ListKind::Prompts),
            _ => None,
        }
    }
}

/// Receives server notifications as they arrive, on the [`Driver`](crate::Driver)'s task.
///
/// Every method has an empty default; [`on_notification`](Self::on_notification) routes each
/// notification to the typed method for it. Handlers run one after the other on the driver's
/// task, with no lock of the client held: they may call the client, and one that blocks
/// delays the connection's other user code (other handlers, answers to server requests), not
/// its calls, whose responses keep arriving. Hand slow work to a channel or a task (or use a
/// [`Notifications`] subscription instead). A call may return before a handler has seen a
/// notification sent ahead of the call's response; a subscription has it by then. A handler
/// that panics is logged and dropped; the others go on.
///
/// ```
/// use mcp_smol::{ListKind, NotificationHandler};
/// use mcp_smol::mcp_sansio::schema::LoggingMessageNotificationParams;
///
/// struct Refresher;
///
/// impl NotificationHandler for Refresher {
///     fn on_list_changed(&self, list: ListKind) {
///         println!("the server's {list:?} changed");
///     }
///     fn on_log(&self, message: &LoggingMessageNotificationParams) {
///         println!("server says: {}", message.data);
///     }
/// }
/// ```
pub trait NotificationHandler: Send + Sync + 'static {
    /// Every notification. The default calls the typed method below that fits.
    fn on_notification(&self, notification: &ServerNotification) {
        match notification {
            ServerNotification::LoggingMessage(message) => self.on_log(message),
            ServerNotification::ResourceUpdated(params) => self.on_resource_updated(params),
            ServerNotification::Progress(params) => self.on_progress(params),
            ServerNotification::ElicitationComplete(params) => self.on_elicitation_complete(params),
            ServerNotification::Other { method, params } => self.on_other(method, params.as_deref()),
            other => {
                if let Some(list) = ListKind::of(other) {
                    self.on_list_changed(list);
                }
            }
        }
    }

    /// `notifications/message`: a log message (see [`ClientApi::set_log_level`](crate::ClientApi::set_log_level)).
    fn on_log(&self, message: &LoggingMessageNotificationParams) {
        let _ = message;
    }

    /// `notifications/{tools,resources,prompts}/list_changed`.
    fn on_list_changed(&self, list: ListKind) {
        let _ = list;
    }

    /// `notifications/resources/updated`: a subscribed resource changed.
    fn on_resource_updated(&self, params: &ResourceUpdatedNotificationParams) {
        let _ = params;
    }

    /// `notifications/progress` for no call in flight (a call's own progress goes to its
    /// [`CallOptions::on_progress`](crate::CallOptions::on_progress)).
    fn on_progress(&self, params: &ProgressNotificationParams) {
        let _ = params;
    }

    /// `notifications/elicitation/complete` (2025-11-25): a URL-mode elicitation finished.
    fn on_elicitation_complete(&self, params: &ElicitationCompleteNotificationParams) {
        let _ = params;
    }

    /// A notification the typed model does not name.
    fn on_other(&self, method: &str, params: Option<&RawValue>) {
        let _ = (method, params);
    }
}

/// A closure as a [`NotificationHandler`]: it sees every notification.
pub(crate) struct FnHandler<F>(pub(crate) F);

impl<F: Fn(&ServerNotification) + Send + Sync + 'static> NotificationHandler for FnHandler<F> {
    fn on_notification(&self, notification: &ServerNotification) {
        (self.0)(notification)
    }
}

/// Why [`Notifications::recv`] returned no notification.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum RecvError {
    /// The subscriber fell behind by more than the ring holds: this many notifications were
    /// lost to it. The next `recv` returns the oldest notification still held.
    #[error("the subscriber fell behind: {0} notifications missed")]
    Lagged(u64),
    /// The connection is over and every notification has been received.
    #[error("the connection is closed")]
    Closed,
}

/// The ring every subscription of one connection reads from.
pub(crate) struct Broadcast {
    ring: OrderedMutex<Ring, { locks::LEAF }>,
}

struct Ring {
    /// Sequence number of `buffer[0]`.
    first: u64,
    buffer: VecDeque<ServerNotification>,
    capacity: usize,
    receivers: usize,
    wakers: Vec<Waker>,
    closed: bool,
}

impl Broadcast {
    pub(crate) fn new(capacity: usize) -> Arc<Self> {
        let ring = Ring {
            first: 0,
            buffer: VecDeque::new(),
            capacity: capacity.max(1),
            receivers: 0,
            wakers: Vec::new(),
            closed: false,
        };
        Arc::new(Self { ring: OrderedMutex::new(ring) })
    }

    /// The ring. Its sections are a few updates that leave it whole at every step and run no
    /// user code (wakers are called after), so a poisoned lock (impossible short of a bug
    /// here) is taken as it is.
    fn lock(&self) -> OrderedGuard<'_, Ring, { locks::LEAF }> {
        self.ring.lock().unwrap_or_else(|poisoned| {
            self.ring.clear_poison();
            poisoned.into_inner()
        })
    }

    /// Publishes one notification to every subscriber (none held when nobody subscribes). The
    /// subscribers' wakers go into `wake`, to be called once every lock is released (the pump
    /// publishes under the connection's state lock, so that a notification is held before any
    /// response that came after it is delivered).
    pub(crate) fn send(&self, notification: &ServerNotification, wake: &mut Vec<Waker>) {
        let mut ring = self.lock();
        if ring.receivers == 0 || ring.closed {
            return;
        }
        if ring.buffer.len() == ring.capacity {
            ring.buffer.pop_front();
            ring.first += 1;
        }
        ring.buffer.push_back(notification.clone());
        wake.append(&mut ring.wakers);
    }

    /// Ends every subscription once it has read what is held.
    pub(crate) fn close(&self) {
        let wakers = {
            let mut ring = self.lock();
            ring.closed = true;
            std::mem::take(&mut ring.wakers)
        };
        wakers.into_iter().for_each(Waker::wake);
    }

    /// A new subscription, starting after the newest notification held.
    pub(crate) fn subscribe(self: &Arc<Self>) -> Notifications {
        let mut ring = self.lock();
        ring.receivers += 1;
        let next = ring.first + ring.buffer.len() as u64;
        drop(ring);
        Notifications { broadcast: self.clone(), next, lagged: 0 }
    }
}

/// A subscription to server notifications (log messages, list changes, resource updates, …),
/// made with [`Client::notifications`](crate::Client::notifications): it sees every
/// notification that arrives after it was made, in order, and ends when the connection is
/// over.
///
/// [`recv`](Self::recv) reports a lag ([`RecvError::Lagged`]) when the subscriber fell too far
/// behind; [`next`](Self::next) and the [`Stream`] skip it, counting the missed notifications in
/// [`lagged`](Self::lagged).
#[derive(Debug)]
pub struct Notifications {
    broadcast: Arc<Broadcast>,
    /// Sequence number of the next notification to return.
    next: u64,
    lagged: u64,
}

impl std::fmt::Debug for Broadcast {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let ring = self.lock();
        f.debug_struct("Broadcast")
            .field("held", &ring.buffer.len())
            .field("capacity", &ring.capacity)
            .field("receivers", &ring.receivers)
            .finish()
    }
}

impl Notifications {
    /// The next notification; [`RecvError::Lagged`] if some were lost to this subscriber;
    /// [`RecvError::Closed`] once the connection is over and everything was read.
    pub async fn recv(&mut self) -> Result<ServerNotification, RecvError> {
        std::future::poll_fn(|cx| self.poll_recv(cx)).await
    }

    /// The next notification, or `None` once the connection is over. Notifications lost to
    /// lag are skipped (and counted in [`lagged`](Self::lagged)).
    pub async fn next(&mut self) -> Option<ServerNotification> {
        std::future::poll_fn(|cx| self.poll_next_skipping(cx)).await
    }

    /// How many notifications this subscriber missed by falling behind, in all.
    pub fn lagged(&self) -> u64 {
        self.lagged
    }

    fn poll_recv(&mut self, cx: &mut Context<'_>) -> Poll<Result<ServerNotification, RecvError>> {
        let mut ring = self.broadcast.lock();
        if self.next < ring.first {
            let missed = ring.first - self.next;
            self.next = ring.first;
            self.lagged += missed;
            return Poll::Ready(Err(RecvError::Lagged(missed)));
        }
        let index = (self.next - ring.first) as usize;
        if let Some(notification) = ring.buffer.get(index) {
            self.next += 1;
            return Poll::Ready(Ok(notification.clone()));
        }
        if ring.closed {
            return Poll::Ready(Err(RecvError::Closed));
        }
        if !ring.wakers.iter().any(|w| w.will_wake(cx.waker())) {
            ring.wakers.push(cx.waker().clone());
        }
        Poll::Pending
    }

    fn poll_next_skipping(&mut self, cx: &mut Context<'_>) -> Poll<Option<ServerNotification>> {
        loop {
            match self.poll_recv(cx) {
                Poll::Ready(Ok(notification)) => return Poll::Ready(Some(notification)),
                Poll::Ready(Err(RecvError::Lagged(missed))) => {
                    tracing::debug!(missed, "notification subscriber fell behind");
                }
                Poll::Ready(Err(RecvError::Closed)) => return Poll::Ready(None),
                Poll::Pending => return Poll::Pending,
            }
        }
    }
}

impl Drop for Notifications {
    fn drop(&mut self) {
        let mut ring = self.broadcast.lock();
        ring.receivers -= 1;
        if ring.receivers == 0 {
            // Nobody reads what is held: let it go.
            ring.first += ring.buffer.len() as u64;
            ring.buffer.clear();
        }
    }
}

impl Stream for Notifications {
    type Item = ServerNotification;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        self.get_mut().poll_next_skipping(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn log(n: u64) -> ServerNotification {
        ServerNotification::Other { method: format!("n/{n}"), params: None }
    }

    fn method(n: &ServerNotification) -> String {
        match n {
            ServerNotification::Other { method, .. } => method.clone(),
            other => format!("{other:?}"),
        }
    }

    #[test]
    fn every_subscriber_sees_everything_in_order_and_lag_is_reported() {
        let broadcast = Broadcast::new(4);
        let mut wake = Vec::new();
        broadcast.send(&log(0), &mut wake); // nobody listens: not held
        let mut fast = broadcast.subscribe();
        let mut slow = broadcast.subscribe();
        for n in 1..=3 {
            broadcast.send(&log(n), &mut wake);
        }
        smol::block_on(async {
            for n in 1..=3 {
                assert_eq!(method(&fast.recv().await.unwrap()), format!("n/{n}"));
            }
            for n in 4..=9 {
                broadcast.send(&log(n), &mut wake);
            }
            // The ring holds 6..=9: the slow subscriber lost 1..=5.
            assert_eq!(slow.recv().await.unwrap_err(), RecvError::Lagged(5));
            assert_eq!(method(&slow.recv().await.unwrap()), "n/6");
            // `next` skips a lag and counts it.
            assert_eq!(method(&fast.next().await.unwrap()), "n/6");
            assert_eq!(fast.lagged(), 2);
            broadcast.close();
            for n in 7..=9 {
                assert_eq!(method(&slow.next().await.unwrap()), format!("n/{n}"));
            }
            assert_eq!(slow.recv().await.unwrap_err(), RecvError::Closed);
            assert!(slow.next().await.is_none());
        });
        assert!(broadcast.lock().buffer.len() <= 4);
    }

    #[test]
    fn nothing_is_held_once_every_subscriber_is_gone() {
        let broadcast = Broadcast::new(8);
        let mut wake = Vec::new();
        let first = broadcast.subscribe();
        broadcast.send(&log(1), &mut wake);
        drop(first);
        assert!(broadcast.lock().buffer.is_empty());
        broadcast.send(&log(2), &mut wake);
        assert!(broadcast.lock().buffer.is_empty());
        let mut later = broadcast.subscribe();
        broadcast.send(&log(3), &mut wake);
        assert_eq!(method(&smol::block_on(later.recv()).unwrap()), "n/3", "a new subscription starts now");
    }
}
