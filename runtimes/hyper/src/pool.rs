//! The connection pool: idle HTTP/1.1 connections, keyed by (scheme, host, port).
//!
//! A connection is in the pool only while nobody uses it: [`Pool::checkout`] takes it out for one
//! exchange, and the response body puts it back ([`Pool::checkin`]) once read to the end. An
//! exchange abandoned mid-way simply drops its sender, which closes the connection.
//!
//! Idle connections expire after the idle timeout: a reaper task, running only while the pool
//! holds something, drops them (and so closes them) when their time is up. It holds the pool
//! weakly, so dropping the transport closes every idle connection.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Weak};
use std::time::{Duration, Instant};

use async_io::Timer;
use bytes::Bytes;
use http_body_util::Full;
use hyper::client::conn::http1::SendRequest;
// A leaf in mcp-smol's lock order (its `locks` module lists every lock): the pump polls the
// exchanges under its core, and nothing is locked or woken under this one.
use mcp_smol::locks::{LEAF, OrderedGuard, OrderedMutex};
use tracing::debug;

use crate::quickack::QuickAck;
use crate::target::Key;

/// The sending half of one HTTP/1.1 connection.
pub(crate) type Sender = SendRequest<Full<Bytes>>;

/// An idle connection.
struct Idle {
    sender: Sender,
    ack: QuickAck,
    since: Instant,
}

#[derive(Default)]
struct State {
    idle: HashMap<Key, VecDeque<Idle>>,
    reaper_running: bool,
}

/// Idle connections by key.
pub(crate) struct Pool {
    state: OrderedMutex<State, LEAF>,
    max_idle_per_host: usize,
    idle_timeout: Duration,
}

impl Pool {
    pub(crate) fn new(max_idle_per_host: usize, idle_timeout: Duration) -> Self {
        Self { state: OrderedMutex::new(State::default()), max_idle_per_host, idle_timeout }
    }

    fn lock(&self) -> OrderedGuard<'_, State, LEAF> {
        // The state stays consistent whatever panicked while holding the lock.
        self.state.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn expired(&self, idle: &Idle, now: Instant) -> bool {
        idle.sender.is_closed() || now.saturating_duration_since(idle.since) >= self.idle_timeout
    }

    /// Takes the most recently used idle connection for `key` that is neither closed nor
    /// expired, dropping those that are.
    pub(crate) fn checkout(&self, key: &Key) -> Option<(Sender, QuickAck)> {
        let now = Instant::now();
        // Dropped after the lock: dropping a connection's sender wakes its connection task.
        let mut expired = Vec::new();
        let found = {
            let mut state = self.lock();
            let list = state.idle.get_mut(key)?;
            let mut found = None;
            while let Some(idle) = list.pop_back() {
                if self.expired(&idle, now) {
                    debug!(peer = %key, "dropping an expired or closed idle connection");
                    expired.push(idle);
                    continue;
                }
                found = Some((idle.sender, idle.ack));
                break;
            }
            if list.is_empty() {
                state.idle.remove(key);
            }
            found
        };
        drop(expired);
        found
    }

    /// Puts back a connection whose last response was read to the end.
    pub(crate) fn checkin(self: &Arc<Self>, key: Key, sender: Sender, ack: QuickAck) {
        if self.max_idle_per_host == 0 || self.idle_timeout.is_zero() || sender.is_closed() {
            return;
        }
        // Dropped after the lock (a sender dropped wakes its connection task), and the reaper
        // spawned after it (spawning schedules a task).
        let mut surplus = Vec::new();
        let start_reaper = {
            let mut state = self.lock();
            let list = state.idle.entry(key).or_default();
            list.push_back(Idle { sender, ack, since: Instant::now() });
            while list.len() > self.max_idle_per_host {
                surplus.extend(list.pop_front());
            }
            !std::mem::replace(&mut state.reaper_running, true)
        };
        drop(surplus);
        if start_reaper {
            smol::spawn(reap(Arc::downgrade(self))).detach();
        }
    }

    /// Idle connections held, all keys together.
    pub(crate) fn idle_count(&self) -> usize {
        self.lock().idle.values().map(VecDeque::len).sum()
    }

    /// Drops the expired connections; returns when the next one expires, or `None` (and marks
    /// the reaper as stopped) when the pool is empty.
    fn purge(&self) -> Option<Instant> {
        let now = Instant::now();
        // Dropped after the lock (a sender dropped wakes its connection task).
        let mut expired = Vec::new();
        let mut state = self.lock();
        state.idle.retain(|_, list| {
            let (keep, gone): (VecDeque<Idle>, VecDeque<Idle>) =
                std::mem::take(list).into_iter().partition(|idle| !self.expired(idle, now));
            *list = keep;
            expired.extend(gone);
            !list.is_empty()
        });
        // Idle entries are in check-in order: the front of each list expires first.
        let oldest = state.idle.values().filter_map(|list| list.front()).map(|idle| idle.since).min();
        // An idle timeout too large to represent never expires: nothing to wake up for.
        let next = oldest.and_then(|since| since.checked_add(self.idle_timeout));
        if next.is_none() {
            state.reaper_running = false;
        }
        drop(state);
        drop(expired);
        next
    }
}

/// Closes idle connections as they expire, for as long as the pool exists and holds some.
async fn reap(pool: Weak<Pool>) {
    loop {
        let next = match pool.upgrade() {
            Some(pool) => pool.purge(),
            None => return,
        };
        match next {
            Some(at) => {
                Timer::at(at).await;
            }
            None => return,
        }
    }
}
