//! [`EngineView`]: what a round of the pump saw of the engine, for the transports' steps (a
//! module of its own so that the pump and the transports import it, not each other).

use std::time::Instant;

/// What the engine said in a round's locked section.
pub(super) struct EngineView {
    /// When the engine must look at the time again.
    pub(super) deadline: Option<Instant>,
    /// The connection closed.
    pub(super) closed: bool,
    /// Nothing is left to do, not even the HTTP session's last exchanges.
    #[cfg_attr(not(feature = "http"), allow(dead_code))]
    pub(super) finished: bool,
}
