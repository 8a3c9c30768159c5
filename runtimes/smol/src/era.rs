//! [`EraCache`]: which protocol era each server spoke, so that a dual-era client does not probe
//! a server it already knows to be legacy.

use std::collections::HashMap;
use std::sync::{Arc, OnceLock, PoisonError};
use std::time::{Duration, Instant};

use mcp_sansio::{ClientConfig, ProtocolVersion};

use crate::clock::{AsyncIoClock, Clock};
use crate::locks::{self, OrderedGuard, OrderedMutex};

/// Remembers, per server, that it speaks only the `initialize` era, so that the next dual-era
/// connection to it sends `initialize` at once instead of probing with `server/discover` (a
/// round trip, a whole [`discover_timeout`](mcp_sansio::ClientConfig::discover_timeout)
/// against a server that stays silent, or a second start of a stdio server that exits on the
/// probe).
///
/// The 2026-07-28 versioning rules call the era a property of the server, to be cached for the
/// server process (the engine does that for its connection) or the HTTP origin, and allow keeping
/// it across restarts of the same configuration provided a failed assumption leads to probing
/// again. A stdio server is known by everything that defines it: the program, its arguments,
/// its working directory and its environment (hashed: it may hold secrets), so two commands that
/// differ only in a variable are two servers; an HTTP server by its URL's origin. Only
/// dual-era connections use the cache.
///
/// **What makes an entry.** A dual-era connection that settles on an `initialize`-era version,
/// whatever the probe got: `-32601`, any other error, an error without an id, a result without
/// `supportedVersions`, an HTTP status, a page of HTML, silence (the table is in
/// `docs/robustness.md`). A stdio server that exits (or closes its stdout) on the probe is
/// remembered at once, so that the next start sends `initialize` (`spawn_stdio` starts it
/// again at once, itself).
///
/// **When an entry goes.** After [`DEFAULT_TTL`](Self::DEFAULT_TTL) (one hour; see
/// [`with_ttl`](Self::with_ttl)), so that a server upgraded to 2026-07-28 is found within the
/// hour; at once when a connection that skipped the probe fails its handshake (perhaps the
/// server is no longer legacy), or turns out modern; and with [`forget`](Self::forget) and
/// [`clear`](Self::clear). Nothing is kept across processes. The hour is on the cache's own
/// [`Clock`] ([`AsyncIoClock`] unless [`with_clock`](Self::with_clock) says otherwise): a
/// cache is shared by builders, which may each have another clock.
///
/// Every [`ClientBuilder`](crate::ClientBuilder) uses [`EraCache::global`] unless given another
/// one (or none) with [`ClientBuilder::era_cache`](crate::ClientBuilder::era_cache).
///
/// ```
/// use std::time::Duration;
/// use mcp_smol::EraCache;
///
/// let cache = EraCache::new();
/// assert_eq!(cache.get("stdio:mcp-demo-server"), None);
/// assert_eq!(cache.ttl(), Duration::from_secs(3600));
/// ```
#[derive(Clone, Debug)]
pub struct EraCache {
    /// Per server: the legacy version it spoke, and when (on `clock`) that was learnt.
    known: Arc<OrderedMutex<HashMap<String, (ProtocolVersion, Instant)>, { locks::LEAF }>>,
    ttl: Duration,
    clock: Arc<dyn Clock>,
}

impl Default for EraCache {
    fn default() -> Self {
        Self::with_ttl(Self::DEFAULT_TTL)
    }
}

impl EraCache {
    /// How long an entry lasts by default: one hour. Probing a legacy server again costs a
    /// round trip (or a second start of a stdio server that exits on the probe) once an hour;
    /// a server upgraded to 2026-07-28 is found within the hour.
    pub const DEFAULT_TTL: Duration = Duration::from_secs(3600);

    /// An empty cache whose entries last [`DEFAULT_TTL`](Self::DEFAULT_TTL).
    pub fn new() -> Self {
        Self::default()
    }

    /// An empty cache whose entries last `ttl` (`Duration::ZERO` keeps nothing).
    pub fn with_ttl(ttl: Duration) -> Self {
        Self { known: Arc::default(), ttl, clock: Arc::new(AsyncIoClock) }
    }

    /// This cache, its entries aged by `clock` instead of [`AsyncIoClock`]: the clock of a
    /// [`ClientBuilder::clock`](crate::ClientBuilder::clock) running on simulated time, for
    /// one. Its clones share the clock.
    ///
    /// ```
    /// use mcp_smol::{AsyncIoClock, EraCache};
    ///
    /// let cache = EraCache::new().with_clock(AsyncIoClock);
    /// assert_eq!(cache.get("stdio:mcp-demo-server"), None);
    /// ```
    pub fn with_clock(mut self, clock: impl Clock) -> Self {
        self.clock = Arc::new(clock);
        self
    }

    /// How long an entry lasts.
    pub fn ttl(&self) -> Duration {
        self.ttl
    }

    /// The cache shared by every builder of this process that was not given another.
    pub fn global() -> &'static EraCache {
        static GLOBAL: OnceLock<EraCache> = OnceLock::new();
        GLOBAL.get_or_init(EraCache::new)
    }

    /// The legacy version the server known as `key` negotiated last (or the newest legacy
    /// version, for a stdio server that exited on the probe), if it is known to be legacy and
    /// the entry has not expired.
    pub fn get(&self, key: &str) -> Option<ProtocolVersion> {
        let mut known = self.lock();
        match known.get(key) {
            Some(&(version, since)) if self.clock.now().saturating_duration_since(since) < self.ttl => {
                Some(version)
            }
            Some(_) => {
                known.remove(key);
                None
            }
            None => None,
        }
    }

    /// Forgets what is known of `key`: the next connection probes again.
    pub fn forget(&self, key: &str) {
        self.lock().remove(key);
    }

    /// Forgets everything.
    pub fn clear(&self) {
        self.lock().clear();
    }

    /// Remembers `key` as legacy, speaking `version`.
    pub(crate) fn remember(&self, key: &str, version: ProtocolVersion) {
        let now = self.clock.now();
        self.lock().insert(key.to_owned(), (version, now));
    }

    fn lock(&self) -> OrderedGuard<'_, HashMap<String, (ProtocolVersion, Instant)>, { locks::LEAF }> {
        self.known.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// One connection's use of the cache.
#[derive(Debug)]
pub(crate) struct EraMemo {
    cache: EraCache,
    key: String,
    /// The probe was skipped because the cache said legacy.
    assumed_legacy: bool,
    /// The handshake ended.
    settled: bool,
}

/// Whether `config` accepts both eras (probes with `server/discover`, falls back to
/// `initialize`): the connections the era cache is for.
pub(crate) fn dual_era(config: &ClientConfig) -> bool {
    config.versions.iter().any(|v| v.is_modern()) && config.versions.iter().any(|v| !v.is_modern())
}

impl EraMemo {
    /// Prepares a connection to the server known as `key`: when `config` is dual-era and the
    /// cache knows the server as legacy, the connection is restricted to the legacy versions.
    /// `None` when the cache does not apply (not dual-era).
    pub(crate) fn apply(cache: EraCache, key: String, config: &mut ClientConfig) -> Option<Self> {
        if !dual_era(config) {
            return None;
        }
        let assumed_legacy = cache.get(&key).is_some();
        if assumed_legacy {
            tracing::debug!(%key, "known as a legacy server: no server/discover probe");
            config.versions.retain(|v| !v.is_modern());
        }
        Some(Self { cache, key, assumed_legacy, settled: false })
    }

    /// The handshake ended with `version`.
    pub(crate) fn ready(&mut self, version: ProtocolVersion) {
        self.settled = true;
        if version.is_modern() {
            self.cache.forget(&self.key);
        } else {
            self.cache.remember(&self.key, version);
        }
    }

    /// The connection closed (before the handshake ended, if it matters); `ended_on_probe`:
    /// the server closed its stream or exited while the probe was out (see
    /// [`ClientConnection::ended_on_probe`](mcp_sansio::ClientConnection::ended_on_probe)).
    pub(crate) fn closed(&mut self, ended_on_probe: bool) {
        if self.settled {
            return;
        }
        if ended_on_probe {
            // A legacy server that exits on a method it does not know: `initialize` next time.
            self.cache.remember(&self.key, ProtocolVersion::LATEST_LEGACY);
        } else if self.assumed_legacy {
            // Perhaps no longer legacy: probe next time.
            self.cache.forget(&self.key);
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use mcp_sansio::schema::Implementation;

    use super::*;
    use crate::clock::AsyncTimer;

    /// A clock that moves only when told.
    #[derive(Clone, Debug)]
    struct Stepped(Arc<Mutex<Instant>>);

    impl Default for Stepped {
        fn default() -> Self {
            Self(Arc::new(Mutex::new(Instant::now())))
        }
    }

    impl Stepped {
        fn advance(&self, by: Duration) {
            *self.0.lock().unwrap() += by;
        }
    }

    impl Clock for Stepped {
        fn now(&self) -> Instant {
            *self.0.lock().unwrap()
        }

        fn timer(&self, at: Instant) -> std::pin::Pin<Box<dyn AsyncTimer>> {
            // The cache sets no timer; a real one is enough for the trait.
            AsyncIoClock.timer(at)
        }
    }

    #[test]
    fn legacy_servers_are_remembered_and_a_failed_assumption_is_forgotten() {
        let cache = EraCache::new();
        let dual =
            || ClientConfig::new(Implementation::new("t", "1")).with_versions(ProtocolVersion::DUAL_ERA);
        let mut config = dual();
        let mut memo = EraMemo::apply(cache.clone(), "k".into(), &mut config).unwrap();
        assert_eq!(config.versions, ProtocolVersion::DUAL_ERA, "unknown: probe");
        memo.ready(ProtocolVersion::V2025_06_18);
        assert_eq!(cache.get("k"), Some(ProtocolVersion::V2025_06_18));

        let mut config = dual();
        let mut memo = EraMemo::apply(cache.clone(), "k".into(), &mut config).unwrap();
        assert!(config.versions.iter().all(|v| !v.is_modern()), "known legacy: no probe");
        memo.closed(false);
        assert_eq!(cache.get("k"), None);

        // Closing after the handshake keeps what was learnt.
        let mut memo = EraMemo::apply(cache.clone(), "k".into(), &mut dual()).unwrap();
        memo.ready(ProtocolVersion::V2025_11_25);
        let mut memo = EraMemo::apply(cache.clone(), "k".into(), &mut dual()).unwrap();
        memo.ready(ProtocolVersion::V2025_11_25);
        memo.closed(false);
        assert_eq!(cache.get("k"), Some(ProtocolVersion::V2025_11_25));
        // A server that turned modern clears its entry; pinned configurations ignore the cache.
        let mut memo = EraMemo::apply(cache.clone(), "k".into(), &mut dual()).unwrap();
        memo.ready(ProtocolVersion::V2026_07_28);
        assert_eq!(cache.get("k"), None);
        let mut pinned = dual().with_versions(&[ProtocolVersion::V2025_11_25]);
        assert!(EraMemo::apply(cache, "k".into(), &mut pinned).is_none());
    }

    #[test]
    fn a_server_that_died_on_the_probe_is_remembered_and_entries_expire() {
        let cache = EraCache::new();
        let dual =
            || ClientConfig::new(Implementation::new("t", "1")).with_versions(ProtocolVersion::DUAL_ERA);
        let mut memo = EraMemo::apply(cache.clone(), "k".into(), &mut dual()).unwrap();
        memo.closed(true);
        assert_eq!(cache.get("k"), Some(ProtocolVersion::LATEST_LEGACY));
        // The next start sends initialize; if it dies on that too, the entry goes.
        let mut config = dual();
        let mut memo = EraMemo::apply(cache.clone(), "k".into(), &mut config).unwrap();
        assert!(config.versions.iter().all(|v| !v.is_modern()));
        memo.closed(false);
        assert_eq!(cache.get("k"), None);

        let clock = Stepped::default();
        let short = EraCache::with_ttl(Duration::from_secs(60)).with_clock(clock.clone());
        EraMemo::apply(short.clone(), "k".into(), &mut dual()).unwrap().ready(ProtocolVersion::V2025_06_18);
        clock.advance(Duration::from_secs(59));
        assert_eq!(short.get("k"), Some(ProtocolVersion::V2025_06_18), "59 s on the cache's clock");
        clock.advance(Duration::from_secs(1));
        assert_eq!(short.get("k"), None, "expired at 60 s on the cache's clock, not the wall's");
        let mut config = dual();
        EraMemo::apply(short, "k".into(), &mut config).unwrap();
        assert_eq!(config.versions, ProtocolVersion::DUAL_ERA, "expired: probe again");
    }
}
