//! Which member takes a request: the live members chosen by the pool's [`Strategy`], each
//! counted busy while it has the request ([`Checkout`]); a request a closing member refused
//! before sending anything goes once to another member.

use std::sync::Arc;
use std::sync::atomic::Ordering;

use mcp_sansio::{CloseReason, UsageError};

use super::{Inner, MemberCounters, MemberId, MemberStatus, PoolCounters, State, Strategy};
use crate::Error;
use crate::client::Client;
use crate::locks::{self, OrderedGuard};

impl Inner {
    pub(super) fn lock(&self) -> OrderedGuard<'_, State, { locks::POOL }> {
        // Every section under this lock leaves the state consistent, so poisoning is ignored.
        self.state.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Checks out a live member other than `exclude`, chosen by the strategy; it counts as busy
    /// until the checkout is dropped.
    pub(super) fn checkout(&self, exclude: Option<MemberId>) -> Result<Checkout, Error> {
        let mut state = self.lock();
        if state.closed {
            return Err(pool_closed());
        }
        let live: Vec<usize> = (state.members.iter().enumerate())
            .filter(|(_, m)| Some(m.id) != exclude && m.status() == MemberStatus::Live)
            .map(|(index, _)| index)
            .collect();
        if live.is_empty() {
            return Err(Error::NoLiveMember { members: state.members.len() });
        }
        let turn = state.cursor;
        state.cursor = state.cursor.wrapping_add(1);
        let chosen = match self.config.strategy {
            Strategy::RoundRobin => live[turn % live.len()],
            Strategy::Random => live[(self.random() % live.len() as u64) as usize],
            Strategy::LeastBusy => {
                let busy = |index: usize| state.members[index].counters.in_flight.load(Ordering::Relaxed);
                let start = turn % live.len();
                let mut best = live[start];
                for k in 1..live.len() {
                    let index = live[(start + k) % live.len()];
                    if busy(index) < busy(best) {
                        best = index;
                    }
                }
                best
            }
        };
        let member = &state.members[chosen];
        let client =
            member.client.clone().ok_or_else(|| Error::NoLiveMember { members: state.members.len() })?;
        member.counters.in_flight.fetch_add(1, Ordering::Relaxed);
        Ok(Checkout { id: member.id, client, member: member.counters.clone(), pool: self.counters.clone() })
    }

    /// Sends through a chosen member at once with `send`, and once more through another
    /// member if the first refused before sending anything (it was closing). The checkout
    /// counts the request when it is finished.
    pub(super) fn send<F>(
        &self,
        mut send: impl FnMut(&Client) -> Result<F, Error>,
    ) -> Result<(Checkout, F), Error> {
        let first = self.checkout(None).or_else(|error| self.refused(error))?;
        let refusal = match send(&first.client) {
            Ok(response) => return Ok((first, response)),
            Err(error) if not_sent(&error) => error,
            Err(error) => return first.finish(Err(error)),
        };
        let id = first.id;
        // A refused attempt is not counted; the member is free again.
        drop(first);
        let Ok(other) = self.checkout(Some(id)) else { return self.refused(refusal) };
        self.counters.retried.fetch_add(1, Ordering::Relaxed);
        match send(&other.client) {
            Ok(response) => Ok((other, response)),
            Err(error) => other.finish(Err(error)),
        }
    }

    /// Counts a request that found no member.
    pub(super) fn refused<T>(&self, error: Error) -> Result<T, Error> {
        self.counters.requests.fetch_add(1, Ordering::Relaxed);
        self.counters.failed.fetch_add(1, Ordering::Relaxed);
        Err(error)
    }

    /// A splitmix64 step: good enough to spread requests, no crate needed.
    pub(super) fn random(&self) -> u64 {
        let mut z =
            self.rng.fetch_add(0x9E37_79B9_7F4A_7C15, Ordering::Relaxed).wrapping_add(0x9E37_79B9_7F4A_7C15);
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
}

/// One member checked out for a request or a transaction: it counts as busy until dropped.
pub(super) struct Checkout {
    pub(super) id: MemberId,
    pub(super) client: Client,
    pub(super) member: Arc<MemberCounters>,
    pool: Arc<PoolCounters>,
}

impl Checkout {
    /// Counts a finished request.
    pub(super) fn finish<T>(self, result: Result<T, Error>) -> Result<T, Error> {
        self.member.requests.fetch_add(1, Ordering::Relaxed);
        self.pool.requests.fetch_add(1, Ordering::Relaxed);
        if result.is_err() {
            self.member.failed.fetch_add(1, Ordering::Relaxed);
            self.pool.failed.fetch_add(1, Ordering::Relaxed);
        }
        result
    }
}

impl Drop for Checkout {
    fn drop(&mut self) {
        self.member.in_flight.fetch_sub(1, Ordering::Relaxed);
    }
}

/// Whether the error is a refusal of a member that is closing, not ready, or whose driver is
/// gone: nothing reached the server, so another member may take the request.
pub(super) fn not_sent(error: &Error) -> bool {
    matches!(error, Error::Usage(UsageError::Closed(_) | UsageError::NotReady) | Error::DriverGone)
}

pub(super) fn pool_closed() -> Error {
    Error::Usage(UsageError::Closed(CloseReason::Local))
}

#[cfg(test)]
mod tests {
    use futures_lite::future;
    use mcp_sansio::Status;

    use super::*;
    use crate::ClientBuilder;
    use crate::pool::{MemberInfo, Pool};

    /// A client whose engine finished its handshake but that is never driven: a live member
    /// that sends nothing anywhere.
    fn live_client() -> Client {
        let builder = ClientBuilder::new(mcp_sansio::schema::Implementation::new("t", "0"))
            .configure(|c| c.with_versions(&[mcp_sansio::ProtocolVersion::V2025_11_25]));
        // The driver is never run: the engine is fed by hand below. It is kept (leaked), so the
        // client stays a live connection: dropping a driver ends its connection.
        let (client, driver) = builder.connect(futures_lite::io::empty(), futures_lite::io::sink());
        std::mem::forget(driver);
        let answer = br#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"s","version":"1"}}}
"#;
        let now = client.shared.clock.now();
        client.shared.lock().engine.stream_for_tests().feed(now, answer);
        assert_eq!(client.status(), Status::Ready);
        client
    }

    fn pool_of(members: usize) -> (Pool, Vec<MemberId>) {
        let pool = Pool::new(Strategy::RoundRobin);
        let ids = smol::block_on(async {
            let mut ids = Vec::new();
            for _ in 0..members {
                ids.push(pool.add(|| async { Ok(live_client()) }).await.unwrap());
            }
            ids
        });
        (pool, ids)
    }

    fn counters(pool: &Pool, id: MemberId) -> MemberInfo {
        pool.members().into_iter().find(|m| m.id == id).unwrap()
    }

    #[test]
    fn a_refusal_goes_to_another_member_and_the_refused_attempt_is_not_counted() {
        let (pool, ids) = pool_of(2);
        let mut tried = Vec::new();
        let sent = pool.inner.send(|client| {
            tried.push(client.clone());
            if tried.len() == 1 { Err(Error::Usage(UsageError::NotReady)) } else { Ok(future::ready(7)) }
        });
        let (checkout, response) = sent.unwrap();
        assert_eq!(tried.len(), 2);
        let refused = if checkout.id == ids[0] { ids[1] } else { ids[0] };
        assert_eq!((counters(&pool, refused).in_flight, counters(&pool, refused).requests), (0, 0));
        assert_eq!(counters(&pool, checkout.id).in_flight, 1, "the checkout holds its member");
        let answered = checkout.id;
        assert!(matches!(checkout.finish(Ok(smol::block_on(response))), Ok(7)));
        assert_eq!((counters(&pool, answered).in_flight, counters(&pool, answered).requests), (0, 1));
        assert_eq!(pool.stats().retried, 1);
    }

    #[test]
    fn a_refusal_is_an_error_when_no_retry_is_left() {
        let (pool, ids) = pool_of(1);
        let sent = pool
            .inner
            .send(|_| Err::<future::Ready<u32>, _>(Error::Usage(UsageError::Closed(CloseReason::Eof))));
        assert!(matches!(sent, Err(Error::Usage(UsageError::Closed(_)))));
        let stats = pool.stats();
        assert_eq!((stats.requests, stats.failed, stats.retried), (1, 1, 0));
        assert_eq!(counters(&pool, ids[0]).in_flight, 0);
    }

    #[test]
    fn random_picks_spread() {
        let pool = Pool::new(Strategy::Random);
        let mut counts = [0u32; 4];
        for _ in 0..4000 {
            counts[(pool.inner.random() % 4) as usize] += 1;
        }
        assert!(counts.iter().all(|&n| (800..1200).contains(&n)), "{counts:?}");
    }
}
