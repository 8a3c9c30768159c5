//! Deadlines as absolute instants: the one helper every machine of the engine uses to turn a
//! duration into one. A leaf module: it depends on nothing else in the crate.

use std::time::{Duration, Instant};

/// `now + duration`, saturating: a deadline past what [`Instant`] can hold is a century away.
pub(crate) fn deadline_after(now: Instant, duration: Duration) -> Instant {
    const CENTURY: Duration = Duration::from_secs(100 * 365 * 24 * 3600);
    now.checked_add(duration.min(CENTURY))
        .or_else(|| now.checked_add(Duration::from_secs(3600)))
        .unwrap_or(now)
}
