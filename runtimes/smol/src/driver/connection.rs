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

#[cfg(all(test, debug_assertions))]
mod tests {
    use mcp_sansio::schema::Implementation;

    use crate::ClientBuilder;

    #[test]
    fn the_connections_own_locks_are_held_to_their_order() {
        let (client, _driver) = ClientBuilder::new(Implementation::new("t", "0"))
            .connect(futures_lite::io::empty(), futures_lite::io::sink());
        // In the order: the core, then the state, then a leaf (the route).
        {
            let _core = client.shared.pump.lock();
            let _state = client.shared.lock();
            assert!(!client.shared.route.caller_driving());
        }
        // Against it: the core under the state.
        let inverted = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            let _state = client.shared.lock();
            let _core = client.shared.pump.lock();
        }));
        let panic = inverted.expect_err("the core was taken under the state");
        let message = crate::contain::panic_message(&*panic);
        assert!(
            message.starts_with("lock order: the pump's core (level 2) taken while holding"),
            "{message}"
        );
        // The panic left nothing held: the state's lock was released as it unwound, poisoned,
        // which closes the connection as any bug inside the crate would.
        assert_eq!(client.pending_requests(), 0);
        assert!(matches!(client.status(), mcp_sansio::Status::Closed(_)), "{:?}", client.status());
    }
}
