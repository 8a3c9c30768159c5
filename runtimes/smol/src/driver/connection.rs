//! [`Connection`]: one connection as its handles, calls and driver hold it, the [`Shared`] state
//! and the [`Pump`] side by side.
//!
//! They are two parts so that the modules stay in layers: `shared.rs` (the state, the engine,
//! the calls' slots) knows nothing of the driver, the driver (the pump and dispatch) works on
//! `&Shared`, and only this type, at the driver's level, owns both. The pump's core holds no
//! reference to either (it is lent `&Shared`), so dropping the last handle, call and driver
//! frees the connection.

use std::ops::Deref;
use std::sync::Arc;

use super::pump::Pump;
use crate::clock::Clock;
use crate::shared::{Engine, Extras, NextWriter, Shared};

/// One connection: its [`Shared`] state (reached through `Deref`) and its [`Pump`].
pub(crate) struct Connection {
    shared: Shared,
    /// The transport side of the connection, run by whoever needs it (see `shared.rs`).
    pub(crate) pump: Pump,
}

impl Connection {
    pub(crate) fn new(engine: Engine, extras: Extras, clock: Arc<dyn Clock>, watch: bool) -> Arc<Self> {
        Arc::new(Self { shared: Shared::new(engine, extras, clock, watch), pump: Pump::new() })
    }

    /// A call was made (its request queued); `next` says who writes it (see
    /// [`State::writer_for_new_call`](crate::shared::State::writer_for_new_call)).
    pub(crate) fn sent(&self, next: NextWriter) {
        match next {
            NextWriter::ThisThread => self.pump.send_now(self),
            NextWriter::Route => self.wake(),
        }
    }
}

impl Deref for Connection {
    type Target = Shared;

    fn deref(&self) -> &Shared {
        &self.shared
    }
}
