//! Catching the panics of user code where it runs: [`contained`] for callbacks, and
//! [`panic_message`] for whoever reports a panic another way.
//!
//! A leaf: it imports nothing from the crate, so every module that runs user code (the driver's
//! dispatch, a call's progress and `on_sent` callbacks, the stderr drain) can use it without
//! depending on another.

use std::any::Any;
use std::panic::{AssertUnwindSafe, catch_unwind};

/// Runs a callback, catching its panic: `true` if it returned (keep it), `false` if it panicked
/// (logged; drop it).
pub(crate) fn contained(what: &str, f: impl FnOnce()) -> bool {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(()) => true,
        Err(panic) => {
            tracing::error!(panic = panic_message(&*panic), "{what} panicked: it is dropped");
            false
        }
    }
}

/// What a panic said, if it said it with a string.
pub(crate) fn panic_message(panic: &(dyn Any + Send)) -> &str {
    match panic.downcast_ref::<&'static str>() {
        Some(message) => message,
        None => panic.downcast_ref::<String>().map_or("(no message)", String::as_str),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_panic_is_caught_and_its_message_read() {
        assert!(contained("a quiet callback", || {}));
        assert!(!contained("a callback", || panic!("boom")));
        let caught = catch_unwind(|| panic!("{} {}", "formatted", 1)).unwrap_err();
        assert_eq!(panic_message(&*caught), "formatted 1");
        let caught = catch_unwind(|| std::panic::panic_any(7)).unwrap_err();
        assert_eq!(panic_message(&*caught), "(no message)");
    }
}
