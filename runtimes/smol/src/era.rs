//! [`EraCache`]: which protocol era each server spoke, so that a dual-era client does not probe
//! a server it already knows to be legacy.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, PoisonError};

use mcp_sansio::{ClientConfig, ProtocolVersion};

/// Remembers, per server, that it speaks only the `initialize` era, so that the next dual-era
/// connection to it sends `initialize` at once instead of probing with `server/discover` (a
/// round trip, or a whole [`discover_timeout`](mcp_sansio::ClientConfig::discover_timeout)
/// against a server that stays silent).
///
/// The 2026-07-28 versioning rules call the era a property of the server, to be cached for the
/// server process (the engine does that for its connection) or the HTTP origin, and allow keeping
/// it across restarts of the same configuration provided a failed assumption leads to probing
/// again. A stdio server is known by everything that defines it: the program, its arguments,
/// its working directory and its environment (hashed: it may hold secrets), so two commands that
/// differ only in a variable are two servers; an HTTP server by its URL's origin. Only
/// dual-era connections use the cache; a connection that answers modern, or that fails its
/// handshake after skipping the probe, clears the entry.
///
/// Every [`ClientBuilder`](crate::ClientBuilder) uses [`EraCache::global`] unless given another
/// one (or none) with [`ClientBuilder::era_cache`](crate::ClientBuilder::era_cache).
///
/// ```
/// use mcp_smol::EraCache;
///
/// let cache = EraCache::new();
/// assert_eq!(cache.get("stdio:mcp-demo-server"), None);
/// ```
#[derive(Clone, Debug, Default)]
pub struct EraCache {
    known: Arc<Mutex<HashMap<String, ProtocolVersion>>>,
}

impl EraCache {
    /// An empty cache.
    pub fn new() -> Self {
        Self::default()
    }

    /// The cache shared by every builder of this process that was not given another.
    pub fn global() -> &'static EraCache {
        static GLOBAL: OnceLock<EraCache> = OnceLock::new();
        GLOBAL.get_or_init(EraCache::new)
    }

    /// The legacy version the server known as `key` negotiated last, if it is known to be
    /// legacy.
    pub fn get(&self, key: &str) -> Option<ProtocolVersion> {
        self.lock().get(key).copied()
    }

    /// Forgets what is known of `key`: the next connection probes again.
    pub fn forget(&self, key: &str) {
        self.lock().remove(key);
    }

    /// Forgets everything.
    pub fn clear(&self) {
        self.lock().clear();
    }

    fn lock(&self) -> MutexGuard<'_, HashMap<String, ProtocolVersion>> {
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

impl EraMemo {
    /// Prepares a connection to the server known as `key`: when `config` is dual-era and the
    /// cache knows the server as legacy, the connection is restricted to the legacy versions.
    /// `None` when the cache does not apply (not dual-era).
    pub(crate) fn apply(cache: EraCache, key: String, config: &mut ClientConfig) -> Option<Self> {
        let dual =
            config.versions.iter().any(|v| v.is_modern()) && config.versions.iter().any(|v| !v.is_modern());
        if !dual {
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
            self.cache.lock().insert(self.key.clone(), version);
        }
    }

    /// The connection closed (before the handshake ended, if it matters).
    pub(crate) fn closed(&mut self) {
        if self.assumed_legacy && !self.settled {
            // Perhaps no longer legacy: probe next time.
            self.cache.forget(&self.key);
        }
    }
}

#[cfg(test)]
mod tests {
    use mcp_sansio::schema::Implementation;

    use super::*;

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
        memo.closed();
        assert_eq!(cache.get("k"), None);

        // Closing after the handshake keeps what was learnt.
        let mut memo = EraMemo::apply(cache.clone(), "k".into(), &mut dual()).unwrap();
        memo.ready(ProtocolVersion::V2025_11_25);
        let mut memo = EraMemo::apply(cache.clone(), "k".into(), &mut dual()).unwrap();
        memo.ready(ProtocolVersion::V2025_11_25);
        memo.closed();
        assert_eq!(cache.get("k"), Some(ProtocolVersion::V2025_11_25));
        // A server that turned modern clears its entry; pinned configurations ignore the cache.
        let mut memo = EraMemo::apply(cache.clone(), "k".into(), &mut dual()).unwrap();
        memo.ready(ProtocolVersion::V2026_07_28);
        assert_eq!(cache.get("k"), None);
        let mut pinned = dual().with_versions(&[ProtocolVersion::V2025_11_25]);
        assert!(EraMemo::apply(cache, "k".into(), &mut pinned).is_none());
    }
}
