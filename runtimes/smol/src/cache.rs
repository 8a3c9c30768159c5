//! The list cache: tools, resources and prompts, fetched once and refreshed when the server
//! says they changed (`*/list_changed`, debounced) or when its `ttlMs` runs out.
//!
//! Used through [`Client::tools`](crate::Client::tools), [`Client::resources`](crate::Client::resources)
//! and [`Client::prompts`](crate::Client::prompts). Each connection has its own cache, so a
//! result the server marks `cacheScope: "private"` is never shared with another authorization
//! context; nothing is shared across connections.

use std::sync::Arc;
use std::time::{Duration, Instant};

use mcp_sansio::schema::{ListPromptsResult, ListResourcesResult, ListToolsResult, Prompt, Resource, Tool};

use crate::clock::{Clock, sleep_until};
use crate::locks::{self, OrderedGuard, OrderedMutex};
use crate::notifications::ListKind;

/// How the list cache behaves. The defaults suit most applications.
///
/// ```
/// use std::time::Duration;
/// use mcp_smol::ListCacheConfig;
///
/// let config = ListCacheConfig::default().debounce(Duration::from_millis(200)).max_age(Some(Duration::from_secs(600)));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ListCacheConfig {
    pub(crate) debounce: Duration,
    pub(crate) max_age: Option<Duration>,
}

impl Default for ListCacheConfig {
    fn default() -> Self {
        Self { debounce: Duration::from_millis(50), max_age: None }
    }
}

impl ListCacheConfig {
    /// After a `list_changed`, how long to wait for more of them before fetching again, so a
    /// burst of changes costs one fetch (default 50 ms).
    pub fn debounce(mut self, debounce: Duration) -> Self {
        self.debounce = debounce;
        self
    }

    /// The longest a list stays fresh when the server gives no `ttlMs` (default: until the
    /// server says it changed). A server's `ttlMs` always wins.
    pub fn max_age(mut self, max_age: Option<Duration>) -> Self {
        self.max_age = max_age;
        self
    }
}

/// What the cache holds for one list, for monitoring and tests.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct CacheInfo {
    /// How many times the list was fetched from the server.
    pub fetches: u64,
    /// How many `list_changed` notifications arrived for it.
    pub changes: u64,
    /// Items held (0 before the first fetch).
    pub items: usize,
    /// Whether the held list can be served without asking the server.
    pub fresh: bool,
    /// The server's `ttlMs` of the last fetch (the shortest over its pages), if it sent one.
    pub ttl: Option<Duration>,
    /// The server's `cacheScope` of the last fetch (`"public"` or `"private"`), if it sent one.
    pub scope: Option<String>,
}

/// A page of a cacheable list.
pub(crate) trait CacheablePage {
    fn cache_hints(&self) -> (Option<u64>, Option<&str>);
}

macro_rules! cacheable {
    ($($page:ty),*) => {$(
        impl CacheablePage for $page {
            fn cache_hints(&self) -> (Option<u64>, Option<&str>) {
                (self.ttl_ms, self.cache_scope.as_deref())
            }
        }
    )*};
}
cacheable!(ListToolsResult, ListResourcesResult, ListPromptsResult);

/// One cached list.
pub(crate) struct Slot<T> {
    items: Option<Arc<[T]>>,
    fetched_at: Option<Instant>,
    ttl: Option<Duration>,
    scope: Option<String>,
    /// Bumped by every `list_changed`; the list is stale while `seen != changes`.
    changes: u64,
    seen: u64,
    changed_at: Option<Instant>,
    fetches: u64,
}

impl<T> Default for Slot<T> {
    fn default() -> Self {
        Self {
            items: None,
            fetched_at: None,
            ttl: None,
            scope: None,
            changes: 0,
            seen: 0,
            changed_at: None,
            fetches: 0,
        }
    }
}

impl<T> Slot<T> {
    fn mark_changed(&mut self, now: Instant) {
        self.changes += 1;
        self.changed_at = Some(now);
    }

    fn fresh(&self, now: Instant, max_age: Option<Duration>) -> Option<Arc<[T]>> {
        let items = self.items.as_ref()?;
        let fetched_at = self.fetched_at?;
        let age = now.saturating_duration_since(fetched_at);
        let expired = match self.ttl.or(max_age) {
            Some(limit) => age >= limit,
            None => false,
        };
        (self.seen == self.changes && !expired).then(|| items.clone())
    }

    fn info(&self, now: Instant, max_age: Option<Duration>) -> CacheInfo {
        CacheInfo {
            fetches: self.fetches,
            changes: self.changes,
            items: self.items.as_ref().map_or(0, |items| items.len()),
            fresh: self.fresh(now, max_age).is_some(),
            ttl: self.ttl,
            scope: self.scope.clone(),
        }
    }
}

#[derive(Default)]
pub(crate) struct Slots {
    tools: Slot<Tool>,
    resources: Slot<Resource>,
    prompts: Slot<Prompt>,
}

/// The cache of one connection.
pub(crate) struct ListCache {
    config: ListCacheConfig,
    /// The connection's clock: freshness and the debounce are measured in its time.
    clock: Arc<dyn Clock>,
    slots: OrderedMutex<Slots, { locks::LEAF }>,
    /// One fetch at a time per list: concurrent readers of a stale list share one fetch. Held
    /// across the fetch's awaits, so it is above every other lock (level 0 in `locks.rs`).
    fetching: [smol::lock::Mutex<()>; 3],
}

/// Picks one list's slot out of the cache.
pub(crate) trait Cached: Sized {
    fn slot(slots: &mut Slots) -> &mut Slot<Self>;
    const KIND: ListKind;
}

impl Cached for Tool {
    fn slot(slots: &mut Slots) -> &mut Slot<Self> {
        &mut slots.tools
    }
    const KIND: ListKind = ListKind::Tools;
}

impl Cached for Resource {
    fn slot(slots: &mut Slots) -> &mut Slot<Self> {
        &mut slots.resources
    }
    const KIND: ListKind = ListKind::Resources;
}

impl Cached for Prompt {
    fn slot(slots: &mut Slots) -> &mut Slot<Self> {
        &mut slots.prompts
    }
    const KIND: ListKind = ListKind::Prompts;
}

fn index(kind: ListKind) -> usize {
    match kind {
        ListKind::Tools => 0,
        ListKind::Resources => 1,
        ListKind::Prompts => 2,
    }
}

impl ListCache {
    pub(crate) fn new(config: ListCacheConfig, clock: Arc<dyn Clock>) -> Self {
        Self { config, clock, slots: OrderedMutex::default(), fetching: Default::default() }
    }

    fn lock(&self) -> OrderedGuard<'_, Slots, { locks::LEAF }> {
        self.slots.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// The server said `kind` changed.
    pub(crate) fn changed(&self, kind: ListKind, now: Instant) {
        let mut slots = self.lock();
        match kind {
            ListKind::Tools => slots.tools.mark_changed(now),
            ListKind::Resources => slots.resources.mark_changed(now),
            ListKind::Prompts => slots.prompts.mark_changed(now),
        }
    }

    pub(crate) fn info(&self, kind: ListKind) -> CacheInfo {
        let now = self.clock.now();
        let max_age = self.config.max_age;
        let mut slots = self.lock();
        match kind {
            ListKind::Tools => Tool::slot(&mut slots).info(now, max_age),
            ListKind::Resources => Resource::slot(&mut slots).info(now, max_age),
            ListKind::Prompts => Prompt::slot(&mut slots).info(now, max_age),
        }
    }

    /// The cached list, or a fresh one from `fetch` (every page, with the pages' cache hints).
    pub(crate) async fn get<T, F, Fut>(&self, fetch: F) -> Result<Arc<[T]>, crate::Error>
    where
        T: Cached,
        F: FnOnce() -> Fut,
        Fut: std::future::Future<Output = Result<(Vec<T>, Option<u64>, Option<String>), crate::Error>>,
    {
        let max_age = self.config.max_age;
        if let Some(items) = T::slot(&mut self.lock()).fresh(self.clock.now(), max_age) {
            return Ok(items);
        }
        // Above every lock (level 0 in `locks.rs`): held across the fetch, which makes calls.
        locks::check_async("a list's fetch");
        let _single = self.fetching[index(T::KIND)].lock().await;
        // Wait out a burst of `list_changed` notifications.
        loop {
            let quiet_at = T::slot(&mut self.lock()).changed_at.map(|at| at + self.config.debounce);
            match quiet_at {
                Some(at) if at > self.clock.now() => sleep_until(&*self.clock, at).await,
                _ => break,
            }
        }
        let seen = {
            let mut slots = self.lock();
            let slot = T::slot(&mut slots);
            // Someone else refreshed it while this caller waited for the fetch lock.
            if let Some(items) = slot.fresh(self.clock.now(), max_age) {
                return Ok(items);
            }
            slot.changes
        };
        let started = self.clock.now();
        let (items, ttl_ms, scope) = fetch().await?;
        let items: Arc<[T]> = items.into();
        let mut slots = self.lock();
        let slot = T::slot(&mut slots);
        slot.items = Some(items.clone());
        slot.fetched_at = Some(started);
        slot.ttl = ttl_ms.map(Duration::from_millis);
        slot.scope = scope;
        // A change announced during the fetch leaves the list stale.
        slot.seen = seen;
        slot.fetches += 1;
        tracing::debug!(list = ?T::KIND, items = items.len(), ?ttl_ms, "list cache refreshed");
        Ok(items)
    }
}

/// Folds the cache hints of one page into those of the whole list: the shortest `ttlMs`, and
/// `private` if any page says so.
pub(crate) fn fold_hints(page: &impl CacheablePage, ttl_ms: &mut Option<u64>, scope: &mut Option<String>) {
    let (page_ttl, page_scope) = page.cache_hints();
    if let Some(page_ttl) = page_ttl {
        *ttl_ms = Some(ttl_ms.map_or(page_ttl, |ttl| ttl.min(page_ttl)));
    }
    if let (Some(page_scope), None | Some("public")) = (page_scope, scope.as_deref()) {
        *scope = Some(page_scope.to_owned());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clock::AsyncIoClock;

    fn tools(names: &[&str]) -> Vec<Tool> {
        names
            .iter()
            .map(|name| {
                serde_json::from_value(serde_json::json!({"name": name, "inputSchema": {"type": "object"}}))
                    .unwrap()
            })
            .collect()
    }

    #[test]
    fn serves_until_changed_then_refetches_once_per_burst() {
        let cache = ListCache::new(
            ListCacheConfig::default().debounce(Duration::from_millis(20)),
            Arc::new(AsyncIoClock),
        );
        let fetches = std::cell::Cell::new(0);
        let fetch = |names: &'static [&'static str]| {
            fetches.set(fetches.get() + 1);
            async move { Ok((tools(names), None, None)) }
        };
        smol::block_on(async {
            let first = cache.get(|| fetch(&["a"])).await.unwrap();
            let again = cache.get(|| fetch(&["never"])).await.unwrap();
            assert_eq!((first.len(), again[0].name.as_str(), fetches.get()), (1, "a", 1));
            for _ in 0..3 {
                cache.changed(ListKind::Tools, Instant::now());
            }
            assert!(!cache.info(ListKind::Tools).fresh);
            let waited = Instant::now();
            let after = cache.get(|| fetch(&["a", "b"])).await.unwrap();
            assert!(waited.elapsed() >= Duration::from_millis(15), "the refresh waits out the burst");
            assert_eq!((after.len(), fetches.get()), (2, 2), "three changes, one fetch");
            let info = cache.info(ListKind::Tools);
            assert_eq!((info.fetches, info.changes, info.items, info.fresh), (2, 3, 2, true));
            // Another list is untouched.
            assert_eq!(cache.info(ListKind::Prompts), CacheInfo::default());
        });
    }

    #[test]
    fn honours_ttl_zero_positive_and_scope() {
        let cache = ListCache::new(ListCacheConfig::default(), Arc::new(AsyncIoClock));
        smol::block_on(async {
            cache.get(|| async { Ok((tools(&["a"]), Some(0), Some("private".into()))) }).await.unwrap();
            let info = cache.info(ListKind::Tools);
            assert_eq!(
                (info.fresh, info.ttl, info.scope.as_deref()),
                (false, Some(Duration::ZERO), Some("private"))
            );
            let refetched = cache.get(|| async { Ok((tools(&["b"]), Some(60_000), None)) }).await.unwrap();
            assert_eq!(refetched[0].name, "b", "ttlMs 0 is stale at once");
            assert!(cache.info(ListKind::Tools).fresh, "ttlMs 60000 is fresh");
            let short = ListCache::new(
                ListCacheConfig::default().max_age(Some(Duration::from_millis(1))),
                Arc::new(AsyncIoClock),
            );
            short.get(|| async { Ok((tools(&["a"]), None, None)) }).await.unwrap();
            std::thread::sleep(Duration::from_millis(5));
            assert!(!short.info(ListKind::Tools).fresh, "max_age applies without ttlMs");
        });
    }

    #[test]
    fn a_failed_fetch_keeps_nothing_and_a_change_during_a_fetch_keeps_the_list_stale() {
        let cache =
            ListCache::new(ListCacheConfig::default().debounce(Duration::ZERO), Arc::new(AsyncIoClock));
        smol::block_on(async {
            let failed = cache
                .get::<Tool, _, _>(|| async {
                    Err(crate::Error::Pagination { method: "tools/list", reason: "x".into() })
                })
                .await;
            assert!(failed.is_err());
            assert_eq!(cache.info(ListKind::Tools).fetches, 0);
            cache
                .get(|| async {
                    cache.changed(ListKind::Tools, Instant::now());
                    Ok((tools(&["a"]), None, None))
                })
                .await
                .unwrap();
            assert!(!cache.info(ListKind::Tools).fresh);
        });
    }

    #[test]
    fn hints_fold_to_the_shortest_ttl_and_the_narrowest_scope() {
        let page = |ttl: Option<u64>, scope: Option<&str>| ListToolsResult {
            ttl_ms: ttl,
            cache_scope: scope.map(str::to_owned),
            ..ListToolsResult::default()
        };
        let (mut ttl, mut scope) = (None, None);
        fold_hints(&page(Some(5000), Some("public")), &mut ttl, &mut scope);
        fold_hints(&page(None, None), &mut ttl, &mut scope);
        fold_hints(&page(Some(100), Some("private")), &mut ttl, &mut scope);
        fold_hints(&page(Some(900), Some("public")), &mut ttl, &mut scope);
        assert_eq!((ttl, scope.as_deref()), (Some(100), Some("private")));
    }
}
