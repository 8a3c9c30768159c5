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

use super::pump::{Pump, Pumper, ROUNDS_PER_PUMP};
use crate::clock::Clock;
use crate::shared::{Engine, Extras, Shared};
use crate::source_waker::{PumpHere, PumpNews};

/// One connection: its [`Shared`] state (reached through `Deref`) and its [`Pump`].
pub(crate) struct Connection {
    shared: Shared,
    /// The transport side of the connection, run by whoever needs it (see `shared.rs`).
    pub(crate) pump: Pump,
}

impl Connection {
    pub(crate) fn new(engine: Engine, extras: Extras, clock: Arc<dyn Clock>) -> Arc<Self> {
        Arc::new(Self { shared: Shared::new(engine, extras, clock), pump: Pump::new() })
    }

    /// A call's request was queued: it is on the wire when this returns, unless someone is
    /// pumping (who then goes once more and writes it).
    pub(crate) fn send_now(&self) {
        self.pump.send_now(self);
    }

    /// A command changed the engine (queued output, closed the connection): the pump runs
    /// now, from this thread, unless someone is pumping (who then goes once more). Call it
    /// without holding the state's lock.
    pub(crate) fn wake(&self) {
        let _ = self.pump.run(self, ROUNDS_PER_PUMP, Pumper::Call);
    }
}

impl PumpNews for Connection {
    /// A source has news, and the connection pumps it where it lands (see
    /// [`TaskWaker`](crate::source_waker::TaskWaker)): the pump runs here, unless someone is
    /// pumping already (who then goes once more). The driver's task is woken for what is its
    /// own (see [`Pump::run`]).
    fn pump_news(&self, when: PumpHere) -> bool {
        if when == PumpHere::WhileAlone && self.lock().calls.len() > 1 {
            return false;
        }
        if super::pump::in_a_round() {
            self.pump.ask_again();
            return true;
        }
        let _ = self.pump.run(self, ROUNDS_PER_PUMP, Pumper::News);
        true
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
            client.shared.route.wake_task();
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
