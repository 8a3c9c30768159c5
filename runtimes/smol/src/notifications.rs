//! [`Notifications`]: server notifications as a `Stream`.

use std::pin::Pin;
use std::task::{Context, Poll};

use futures_lite::Stream;
use mcp_sansio::ServerNotification;

/// A subscription to server notifications (log messages, list changes, resource updates, …),
/// made with [`Client::notifications`](crate::Client::notifications). Ends when the connection
/// is over.
///
/// It holds at most 1024 notifications; a subscriber that falls further behind loses the
/// newest ones (with a warning in the log) instead of growing memory without bound.
#[derive(Debug)]
pub struct Notifications {
    rx: Pin<Box<async_channel::Receiver<ServerNotification>>>,
}

impl Notifications {
    pub(crate) fn new(rx: async_channel::Receiver<ServerNotification>) -> Self {
        Self { rx: Box::pin(rx) }
    }

    /// The next notification, or `None` once the connection is over.
    pub async fn next(&mut self) -> Option<ServerNotification> {
        self.rx.recv().await.ok()
    }
}

impl Stream for Notifications {
    type Item = ServerNotification;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        self.rx.as_mut().poll_next(cx)
    }
}
