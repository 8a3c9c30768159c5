//! A member's life after its first connection: one supervisor task per member waits for its
//! connection to end, then restarts it through its connector with backoff (in the pool's
//! clock), or has it removed. The task holds the pool weakly: dropping the last [`Pool`]
//! handle ends it.
//!
//! [`Pool`]: super::Pool

use std::sync::{Arc, Weak};
use std::time::Duration;

use futures_lite::future;
use mcp_sansio::Status;

use super::{Config, ConnectFn, Inner, MemberId, STABLE_AFTER};
use crate::Error;
use crate::client::Client;
use crate::clock::sleep_until;

impl Inner {
    /// The connection of member `id` (generation `generation`) ended. Returns what the
    /// supervisor needs to restart it, or `None` if it is not to be restarted (and is removed).
    pub(super) fn member_lost(&self, id: MemberId, generation: u64) -> Option<(Arc<ConnectFn>, u32)> {
        let mut state = self.lock();
        let index = state.members.iter().position(|m| m.id == id && m.generation == generation)?;
        let member = &mut state.members[index];
        let client = member.client.take()?;
        let pid = client.server_pid();
        let reason = match client.status() {
            Status::Closed(reason) => reason.to_string(),
            _ => String::from("driver ended"),
        };
        let stable = STABLE_AFTER.max(self.config.backoff_max);
        if self.clock.now().saturating_duration_since(member.connected_at) >= stable {
            member.attempts = 0;
        }
        let plan = (member.connect.clone(), member.attempts);
        state.deaths += 1;
        if !self.config.restart || state.closed {
            // Dropped after the lock: dropping a member closes its supervisor's channel, which
            // wakes that task (and drops the connector, the application's closure).
            let removed = state.members.remove(index);
            state.lost += 1;
            drop(state);
            drop(removed);
            tracing::info!(member = %id, pid = ?pid, %reason, "pool member lost its connection; removed");
            return None;
        }
        drop(state);
        tracing::info!(member = %id, pid = ?pid, %reason, "pool member lost its connection; restarting");
        Some(plan)
    }

    /// Installs the new connection of a restarted member; its new generation, or `None` if the
    /// member is gone (removed, pool closed).
    pub(super) fn member_restarted(&self, id: MemberId, client: &Client, attempts: u32) -> Option<u64> {
        let mut state = self.lock();
        if state.closed {
            return None;
        }
        let member = state.members.iter_mut().find(|m| m.id == id)?;
        // `None` (the death took it), but a handle dropped under the lock would wake its driver.
        let old = member.client.replace(client.clone());
        member.generation += 1;
        member.connected_at = self.clock.now();
        member.attempts = attempts;
        member.restarts += 1;
        let generation = member.generation;
        state.restarts += 1;
        drop(state);
        drop(old);
        tracing::info!(member = %id, pid = ?client.server_pid(), attempts, "pool member restarted");
        Some(generation)
    }

    /// Removes a member whose restart attempts all failed.
    pub(super) fn give_up(&self, id: MemberId, attempts: u32) {
        let mut state = self.lock();
        let Some(index) = state.members.iter().position(|m| m.id == id) else { return };
        let removed = state.members.remove(index);
        state.lost += 1;
        drop(state);
        // After the lock (see `member_lost`).
        drop(removed);
        tracing::warn!(member = %id, attempts, "pool member removed: every restart attempt failed");
    }
}

/// Makes a connection with `connect` and waits for its handshake.
pub(super) async fn connect_once(connect: &Arc<ConnectFn>) -> Result<Client, Error> {
    let client = connect().await?;
    client.ready().await?;
    Ok(client)
}

/// Resolves with `true` when the member's stop channel closes (it was removed, or the pool was
/// closed or dropped).
async fn stopped(stop: &async_channel::Receiver<()>) -> bool {
    let _ = stop.recv().await;
    true
}

/// The life of one member, after its first connection: wait for the connection to end, then
/// restart it (or have it removed), until the member is removed or the pool goes away.
pub(super) async fn supervise(
    pool: Weak<Inner>,
    id: MemberId,
    mut generation: u64,
    mut client: Client,
    stop: async_channel::Receiver<()>,
) {
    loop {
        let ended = future::or(
            async {
                client.closed().await;
                false
            },
            stopped(&stop),
        )
        .await;
        // Our handle must not keep the connection open once the pool has let go of it.
        drop(client);
        if ended {
            return;
        }
        let Some(inner) = pool.upgrade() else { return };
        let config = inner.config;
        let Some((connect, attempts)) = inner.member_lost(id, generation) else { return };
        drop(inner);
        match restart(&pool, id, &config, &connect, attempts, &stop).await {
            Some((new_client, new_generation)) => {
                client = new_client;
                generation = new_generation;
            }
            None => return,
        }
    }
}

/// Reconnects member `id` with backoff; its new connection and generation, or `None` if it
/// was removed (every attempt failed, or the application removed it, or the pool went away).
async fn restart(
    pool: &Weak<Inner>,
    id: MemberId,
    config: &Config,
    connect: &Arc<ConnectFn>,
    mut attempts: u32,
    stop: &async_channel::Receiver<()>,
) -> Option<(Client, u64)> {
    loop {
        if attempts >= config.max_restart_attempts {
            pool.upgrade()?.give_up(id, attempts);
            return None;
        }
        let delay = backoff(config, attempts);
        let clock = pool.upgrade()?.clock.clone();
        let wait = async {
            // A delay past the end of time never ends (the backoff is capped: it does not come).
            match clock.now().checked_add(delay) {
                Some(at) => sleep_until(&*clock, at).await,
                None => std::future::pending().await,
            }
            false
        };
        if future::or(wait, stopped(stop)).await {
            return None;
        }
        attempts += 1;
        let attempt = async { Some(connect_once(connect).await) };
        let outcome = future::or(attempt, async {
            stopped(stop).await;
            None
        })
        .await?;
        // Dropping a new client here (the pool is gone) closes its connection.
        let inner = pool.upgrade()?;
        match outcome {
            Ok(client) => {
                let generation = inner.member_restarted(id, &client, attempts)?;
                return Some((client, generation));
            }
            Err(error) => {
                tracing::debug!(member = %id, attempt = attempts, %error, "pool member restart failed");
            }
        }
    }
}

/// The wait before restart attempt `attempts` (counting from 0): doubling, capped.
fn backoff(config: &Config, attempts: u32) -> Duration {
    let factor = 2u32.saturating_pow(attempts);
    config.backoff_initial.saturating_mul(factor).min(config.backoff_max)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::PoolBuilder;

    #[test]
    fn backoff_doubles_up_to_its_cap() {
        let config = PoolBuilder::default().config;
        let waits: Vec<u128> = (0..8).map(|n| backoff(&config, n).as_millis()).collect();
        assert_eq!(waits, [100, 200, 400, 800, 1600, 3200, 5000, 5000]);
        assert_eq!(backoff(&config, u32::MAX), Duration::from_secs(5));
    }
}
