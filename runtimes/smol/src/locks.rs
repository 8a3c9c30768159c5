//! Every lock of mcp-smol, of mcp-hyper and of the pool, in the one order they are taken, and
//! the debug-build check that holds every acquisition to it ([`OrderedMutex`]).
//!
//! # The order
//!
//! A lock is only taken while every lock the thread holds has a smaller level. Locks of the
//! same level never nest. No user code runs and no waker is called under any of them (see
//! `shared.rs`).
//!
//! | level | lock | where | taken under |
//! |---|---|---|---|
//! | 0 | a list's fetch (`ListCache::fetching`, an async mutex per list, held across the fetch's awaits) | `cache.rs` | nothing: [`check_async`] asserts that no lock is held when it is taken |
//! | 1 [`POOL`] | the pool's members (`Inner::state`) | `pool/mod.rs` | nothing; a member's status and counters are read under it, so it is above every lock of a connection |
//! | 2 [`CORE`] | the pump's core (`Pump::core`: transport, timer, process) | `driver/pump.rs` | nothing (`try_lock`ed while the connection runs) |
//! | 3 [`STATE`] | the connection's state (`Shared::state`: engine, slots, inbox) | `shared.rs` | the core |
//! | 4 [`LEAF`] | the driver task's waker (`TaskWaker::task`) | `source_waker.rs` | the core, the state |
//! | 4 [`LEAF`] | the notification broadcast's ring (`Broadcast::ring`) | `notifications.rs` | the state (the pump publishes under it) |
//! | 4 [`LEAF`] | the list cache's slots (`ListCache::slots`) | `cache.rs` | the state (a `list_changed` marks a list stale), a list's fetch |
//! | 4 [`LEAF`] | the era cache's map (`EraCache::known`) | `era.rs` | the state (the pump records the handshake's era) |
//! | 4 [`LEAF`] | the output-schema table: the tools' schemas and the validators kept (`OutputSchemas::table`) | `output_schema.rs` | nothing |
//! | 4 [`LEAF`] | the skill cache (`SkillCache::inner`) | `skills.rs` | nothing |
//! | 4 [`LEAF`] | the in-memory token store (`MemoryTokenStore::credentials`) | `auth.rs` | nothing (the driver's task saves with no lock held) |
//! | 4 [`LEAF`] | mcp-hyper's idle connections (`Pool::state`) | `mcp-hyper/src/pool.rs` | the core (the pump polls the exchanges) |
//!
//! Once-cells are not in the table: the era cache's global one makes an empty map, the
//! output-schema validator's compile a schema and mcp-hyper's build its TLS configuration, none
//! of which takes a lock.
//!
//! # The check
//!
//! In debug builds each thread keeps the levels of the [`OrderedMutex`]es it holds (a bit per
//! level), and an acquisition against the order panics before it blocks, naming both locks:
//! the whole test suite runs with it on. In release builds the guard is the standard one and
//! nothing is kept. An async lock cannot be in a thread's set (its holder moves between threads
//! at each await), so it sits at the top, level 0, and its acquisition checks that the thread
//! holds nothing ([`check_async`]).
//!
//! This module is public but hidden for mcp-hyper, whose pool lock is in the order: it is not
//! part of mcp-smol's API.

use std::fmt;
use std::ops::{Deref, DerefMut};
use std::sync::{LockResult, Mutex, MutexGuard, PoisonError, TryLockError, TryLockResult};

/// Level of the pool's mutex.
pub const POOL: u8 = 1;
/// Level of the pump's core.
pub const CORE: u8 = 2;
/// Level of a connection's state.
pub const STATE: u8 = 3;
/// Level of the leaves: locks under which no other lock is taken.
pub const LEAF: u8 = 4;

/// The name of a level, for the check's panics.
#[cfg(debug_assertions)]
fn name(level: u8) -> &'static str {
    match level {
        POOL => "the pool's mutex",
        CORE => "the pump's core",
        STATE => "a connection's state",
        LEAF => "a leaf lock",
        _ => "an unknown lock",
    }
}

/// A mutex with its place in the order (`LEVEL`): in debug builds, taking it while the thread
/// holds a lock of the same or a greater level panics. Otherwise a `std::sync::Mutex`.
pub struct OrderedMutex<T, const LEVEL: u8> {
    inner: Mutex<T>,
}

/// The guard of an [`OrderedMutex`]: the standard guard, and in debug builds the thread's note
/// that it holds the level (cleared when the guard goes).
pub struct OrderedGuard<'a, T, const LEVEL: u8> {
    // Released first, then the note (fields drop in order).
    guard: MutexGuard<'a, T>,
    #[cfg(debug_assertions)]
    _held: Held,
}

impl<T, const LEVEL: u8> OrderedMutex<T, LEVEL> {
    pub const fn new(value: T) -> Self {
        Self { inner: Mutex::new(value) }
    }

    /// [`Mutex::lock`], checked against the order first (debug builds).
    #[inline]
    pub fn lock(&self) -> LockResult<OrderedGuard<'_, T, LEVEL>> {
        #[cfg(debug_assertions)]
        let held = Held::take(LEVEL);
        let wrap = |guard| OrderedGuard {
            guard,
            #[cfg(debug_assertions)]
            _held: held,
        };
        match self.inner.lock() {
            Ok(guard) => Ok(wrap(guard)),
            Err(poisoned) => Err(PoisonError::new(wrap(poisoned.into_inner()))),
        }
    }

    /// [`Mutex::try_lock`], checked against the order first (debug builds): a `try_lock` cannot
    /// deadlock, but the order is one order.
    #[inline]
    pub fn try_lock(&self) -> TryLockResult<OrderedGuard<'_, T, LEVEL>> {
        #[cfg(debug_assertions)]
        let held = Held::take(LEVEL);
        let wrap = |guard| OrderedGuard {
            guard,
            #[cfg(debug_assertions)]
            _held: held,
        };
        match self.inner.try_lock() {
            Ok(guard) => Ok(wrap(guard)),
            // Not taken: the note goes with `held`, dropped here.
            Err(TryLockError::WouldBlock) => Err(TryLockError::WouldBlock),
            Err(TryLockError::Poisoned(poisoned)) => {
                Err(TryLockError::Poisoned(PoisonError::new(wrap(poisoned.into_inner()))))
            }
        }
    }

    /// [`Mutex::clear_poison`].
    pub fn clear_poison(&self) {
        self.inner.clear_poison();
    }
}

impl<T: Default, const LEVEL: u8> Default for OrderedMutex<T, LEVEL> {
    fn default() -> Self {
        Self::new(T::default())
    }
}

impl<T: fmt::Debug, const LEVEL: u8> fmt::Debug for OrderedMutex<T, LEVEL> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.inner.fmt(f)
    }
}

impl<T, const LEVEL: u8> Deref for OrderedGuard<'_, T, LEVEL> {
    type Target = T;

    fn deref(&self) -> &T {
        &self.guard
    }
}

impl<T, const LEVEL: u8> DerefMut for OrderedGuard<'_, T, LEVEL> {
    fn deref_mut(&mut self) -> &mut T {
        &mut self.guard
    }
}

/// Asserts (debug builds) that the thread holds no lock: for the acquisition of an async lock,
/// which is above every other (level 0). `what` names it for the panic.
#[inline]
pub fn check_async(what: &str) {
    #[cfg(debug_assertions)]
    HELD.with(|held| {
        let held = held.get();
        if held != 0 {
            panic!("lock order: {what} (an async lock, level 0) taken while holding {}", names(held));
        }
    });
    #[cfg(not(debug_assertions))]
    let _ = what;
}

#[cfg(debug_assertions)]
thread_local! {
    /// The levels of the ordered locks this thread holds, a bit each.
    static HELD: std::cell::Cell<u32> = const { std::cell::Cell::new(0) };
}

/// The names of the levels in `held`.
#[cfg(debug_assertions)]
fn names(held: u32) -> String {
    (0..32u8).filter(|level| held & (1 << level) != 0).map(name).collect::<Vec<_>>().join(", ")
}

/// This thread holds a lock of `level` (debug builds): cleared when dropped.
#[cfg(debug_assertions)]
struct Held(u8);

#[cfg(debug_assertions)]
impl Held {
    /// Notes `level` as held, after checking that the thread holds nothing of that level or
    /// below it: else it panics, before the lock is taken (so it cannot deadlock first).
    fn take(level: u8) -> Self {
        HELD.with(|held| {
            let now = held.get();
            let below = now >> level;
            if below != 0 {
                panic!(
                    "lock order: {} (level {level}) taken while holding {} (levels {:?})",
                    name(level),
                    names(now),
                    (0..32u8).filter(|l| now & (1 << l) != 0).collect::<Vec<_>>(),
                );
            }
            held.set(now | 1 << level);
        });
        Held(level)
    }
}

#[cfg(debug_assertions)]
impl Drop for Held {
    fn drop(&mut self) {
        // `try_with`: a guard may be dropped while the thread's locals are being destroyed.
        let _ = HELD.try_with(|held| held.set(held.get() & !(1 << self.0)));
    }
}

#[cfg(all(test, debug_assertions))]
mod tests {
    use super::*;

    #[test]
    fn locks_taken_in_the_order_pass_and_are_released_in_any_order() {
        let (pool, core, state, leaf) = (
            OrderedMutex::<u8, POOL>::new(0),
            OrderedMutex::<u8, CORE>::new(0),
            OrderedMutex::<u8, STATE>::new(0),
            OrderedMutex::<u8, LEAF>::new(0),
        );
        let p = pool.lock().unwrap();
        let c = core.try_lock().unwrap();
        let s = state.lock().unwrap();
        drop(c);
        let l = leaf.lock().unwrap();
        drop((p, s, l));
        // All released: the state alone, then the core again (nothing is held any more).
        drop(state.lock().unwrap());
        drop(core.lock().unwrap());
        check_async("a fetch");
    }

    #[test]
    #[should_panic(
        expected = "lock order: the pump's core (level 2) taken while holding a connection's state"
    )]
    fn the_core_taken_under_the_state_panics() {
        let (core, state) = (OrderedMutex::<(), CORE>::new(()), OrderedMutex::<(), STATE>::new(()));
        let _state = state.lock().unwrap();
        let _core = core.try_lock();
    }

    #[test]
    #[should_panic(expected = "lock order: a leaf lock (level 4) taken while holding a leaf lock")]
    fn two_leaves_never_nest() {
        let (ring, route) = (OrderedMutex::<(), LEAF>::new(()), OrderedMutex::<(), LEAF>::new(()));
        let _ring = ring.lock().unwrap();
        let _route = route.lock().unwrap();
    }

    #[test]
    #[should_panic(
        expected = "a list's fetch (an async lock, level 0) taken while holding a connection's state"
    )]
    fn an_async_lock_under_a_lock_panics() {
        let state = OrderedMutex::<(), STATE>::new(());
        let _state = state.lock().unwrap();
        check_async("a list's fetch");
    }

    #[test]
    fn a_lock_given_up_by_try_lock_is_not_noted_as_held() {
        let (core, state) = (OrderedMutex::<(), CORE>::new(()), OrderedMutex::<(), STATE>::new(()));
        let held = core.lock().unwrap();
        // Another thread finds it busy and takes nothing, and may take the state afterwards.
        std::thread::scope(|s| {
            s.spawn(|| {
                assert!(matches!(core.try_lock(), Err(TryLockError::WouldBlock)));
                drop(state.lock().unwrap());
            });
        });
        drop(held);
    }
}
