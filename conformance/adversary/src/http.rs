//! Hostile HTTP servers, written on raw TCP so that they can break HTTP itself.

/// The HTTP modes.
pub(crate) const MODES: &[&str] = &[];

pub(crate) fn run(_mode: &str) -> i32 {
    2
}
