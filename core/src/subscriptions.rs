//! 2026-07-28 `subscriptions/listen`: the state behind the notifications that the `initialize`
//! era sent unasked (list changes) or after `resources/subscribe` (resource updates).
//!
//! A modern server sends them only on a listen stream that asked for them. The connection keeps
//! one such stream open while there is anything to listen to: the list changes the server offers
//! and the resources the application subscribed to. Changing the resources replaces the stream
//! with one asking for the new set; the old one stays until the new one is acknowledged, so no
//! notification falls between them. `resources/subscribe` and `resources/unsubscribe` complete
//! when the stream that includes the change is acknowledged.

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use crate::schema::SubscriptionFilter;

/// The first delay before listening again after the server ended a stream; doubled per stream
/// ended in a row without an acknowledgement, up to [`MAX_DELAY`].
const FIRST_DELAY: Duration = Duration::from_secs(1);
const MAX_DELAY: Duration = Duration::from_secs(30);

/// One `subscriptions/listen` request.
#[derive(Debug)]
pub(crate) struct Stream {
    /// The request's id: the `subscriptionId` of its notifications.
    pub(crate) id: i64,
    /// What it asked for.
    pub(crate) asked: SubscriptionFilter,
    /// What the server agreed to, once acknowledged.
    pub(crate) honoured: Option<SubscriptionFilter>,
}

/// A `resources/subscribe` (or `unsubscribe`) call waiting for an acknowledgement.
#[derive(Debug)]
pub(crate) struct Waiting {
    /// The call's request id.
    pub(crate) id: i64,
    pub(crate) uri: String,
    pub(crate) subscribe: bool,
}

/// The listen state of a modern connection.
#[derive(Debug, Default)]
pub(crate) struct Listen {
    /// The resources the application subscribed to.
    pub(crate) resources: BTreeSet<String>,
    /// The newest stream.
    pub(crate) current: Option<Stream>,
    /// The acknowledged stream that `current` replaces, until `current` is acknowledged.
    pub(crate) previous: Option<i64>,
    pub(crate) waiting: Vec<Waiting>,
    /// When to listen again after the server ended the stream.
    pub(crate) again_at: Option<Instant>,
    /// Streams ended in a row without an acknowledgement.
    pub(crate) failures: u32,
    /// The server refused to listen (an error answer): not tried again until the application
    /// subscribes to something.
    pub(crate) refused: bool,
}

impl Listen {
    /// Whether `id` is one of the live listen streams (so a notification tagged with it is
    /// delivered).
    pub(crate) fn owns(&self, id: i64) -> bool {
        self.current.as_ref().is_some_and(|s| s.id == id) || self.previous == Some(id)
    }

    /// The stream ended (by the server, or broken): schedules listening again.
    pub(crate) fn ended(&mut self, now: Instant, id: i64) {
        if self.previous == Some(id) {
            self.previous = None;
            return;
        }
        if self.current.as_ref().is_some_and(|s| s.id == id) {
            self.current = None;
            self.again_at = Some(now + delay(self.failures));
            self.failures += 1;
        }
    }

    /// The acknowledged filter of the current stream, if any.
    pub(crate) fn honoured(&self) -> Option<&SubscriptionFilter> {
        self.current.as_ref().and_then(|s| s.honoured.as_ref())
    }
}

/// How long to wait before listening again after `failures` streams ended in a row without an
/// acknowledgement.
fn delay(failures: u32) -> Duration {
    let factor = 2u32.saturating_pow(failures.min(16));
    FIRST_DELAY.saturating_mul(factor).min(MAX_DELAY)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_delay_doubles_from_one_second_to_thirty() {
        let secs: Vec<u64> = (0..7).chain([40]).map(|f| delay(f).as_secs()).collect();
        assert_eq!(secs, [1, 2, 4, 8, 16, 30, 30, 30]);
    }
}
