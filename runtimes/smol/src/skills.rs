//! Skills (SEP-2640, the `io.modelcontextprotocol/skills` extension): listing a server's
//! skills, and reading a skill's files only once they verify against its entry.
//!
//! A skill is a `SKILL.md` and its supporting files, served as resources. `skills/list` and
//! `skills/get` give each skill's entry ([`Skill`]): its frontmatter, and every file with the
//! `sha256:` digest and size of its bytes. [`Client::read_skill_file`] reads one file with
//! `resources/read` and returns its bytes only after checking them against the entry (the
//! entry itself, the file being listed, its size, its digest, and for `SKILL.md` its
//! frontmatter, field by field); anything else is a [`SkillError`] and no bytes.
//!
//! Nothing is fetched ahead of need: connecting and listing fetch no file; a file is read when
//! [`Client::read_skill_file`] asks for it (or not at all, when an optional [`SkillCache`]
//! holds a verified copy).

use std::collections::HashMap;
use std::sync::{Arc, PoisonError};

use bytes::Bytes;
use mcp_sansio::DEFAULT_MAX_MESSAGE_SIZE;
use mcp_sansio::schema::{
    GetSkill, GetSkillRequestParams, ListSkills, ListSkillsResult, MAX_SKILL_READ_MESSAGE_BYTES,
    PaginatedRequestParams, Request, SKILLS_EXTENSION, Skill, SkillVerifyError,
};

use crate::api::{ClientApi, paginate};
use crate::locks::{self, OrderedGuard, OrderedMutex};
use crate::{CallOptions, Client, ClientBuilder, Error};

/// Why a skill could not be listed, fetched or read. A refused file comes with no bytes.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SkillError {
    /// The client's capabilities do not declare the skills extension: declare it with
    /// [`ClientBuilder::skills`]. Nothing was sent.
    #[error("the client does not declare the skills extension (see ClientBuilder::skills)")]
    NotDeclared,
    /// The server does not offer the skills extension. Nothing was sent.
    #[error("the server does not offer the skills extension")]
    NotOffered,
    /// `skills/get` answered with another skill than the one asked for.
    #[error("skills/get for {asked} answered with the skill {got}")]
    WrongSkill {
        /// The URI asked for.
        asked: String,
        /// The URI of the entry that came.
        got: String,
    },
    /// The request failed (the server's error, a timeout, a closed connection, ...).
    #[error(transparent)]
    Request(#[from] Error),
    /// The entry, or the file read for it, does not verify.
    #[error(transparent)]
    Verify(#[from] SkillVerifyError),
}

impl SkillError {
    /// The verification failure, if that is what this is.
    pub fn verify_error(&self) -> Option<&SkillVerifyError> {
        match self {
            SkillError::Verify(e) => Some(e),
            _ => None,
        }
    }
}

impl ClientBuilder {
    /// Declares the skills extension (`io.modelcontextprotocol/skills`) in the client's
    /// capabilities, which [`Client::list_skills`] and the other skill methods need.
    ///
    /// It also raises [`max_message_size`](mcp_sansio::ClientConfig::max_message_size) from its
    /// default (16 MiB) to [`MAX_SKILL_READ_MESSAGE_BYTES`] (97 MiB), so that every file within
    /// the skill limits (16 MiB) can be read, as a base64 blob or as text however the server
    /// escapes it; a limit set to anything else, before or after, is kept.
    ///
    /// ```
    /// use mcp_smol::prelude::*;
    /// use mcp_smol::mcp_sansio::schema::MAX_SKILL_READ_MESSAGE_BYTES;
    ///
    /// let builder = ClientBuilder::new(Implementation::new("host", "1.0")).skills();
    /// assert_eq!(builder.config().max_message_size, MAX_SKILL_READ_MESSAGE_BYTES);
    /// let builder = ClientBuilder::new(Implementation::new("host", "1.0"))
    ///     .configure(|c| c.with_max_message_size(1 << 20))
    ///     .skills();
    /// assert_eq!(builder.config().max_message_size, 1 << 20);
    /// ```
    pub fn skills(self) -> Self {
        self.capabilities(|caps| caps.with_extension(SKILLS_EXTENSION, serde_json::json!({}))).configure(
            |config| {
                if config.max_message_size == DEFAULT_MAX_MESSAGE_SIZE {
                    config.with_max_message_size(MAX_SKILL_READ_MESSAGE_BYTES)
                } else {
                    config
                }
            },
        )
    }
}

/// Skills (SEP-2640, the `skills` feature): listing a server's skills, fetching an entry, and
/// reading a skill's files, each returned only once it verifies against the entry ([`Skill`]:
/// the frontmatter, and every file with the `sha256:` digest and size of its bytes). Nothing is
/// fetched ahead of need: connecting and listing read no file. A refusal is a [`SkillError`].
///
/// ```no_run
/// use mcp_smol::prelude::*;
/// use mcp_smol::SkillError;
///
/// fn main() -> Result<(), SkillError> {
///     smol::block_on(async {
///         let client = ClientBuilder::new(Implementation::new("my-host", "1.0.0"))
///             .skills()
///             // Any server that offers skills: here this repository's demo server, after
///             // `cargo build -p mcp-demo-server`.
///             .spawn_stdio(&ServerCommand::new("target/debug/mcp-demo-server").arg("--skills"))
///             .await?;
///         for skill in client.list_all_skills().await? {
///             println!("{}: {}", skill.name().unwrap_or("?"), skill.description().unwrap_or(""));
///         }
///         let skill = client.get_skill("skill://pdf-processing/SKILL.md").await?;
///         // Read when needed, and only verified.
///         let instructions = client.read_skill_file(&skill, "SKILL.md").await?;
///         let forms = client.read_skill_file(&skill, "references/FORMS.md").await?;
///         println!("{} + {} bytes", instructions.len(), forms.len());
///         client.close().await;
///         Ok(())
///     })
/// }
/// ```
impl Client {
    /// Whether the server offers the skills extension (`false` before the handshake ended).
    pub fn offers_skills(&self) -> bool {
        self.server_capabilities().is_some_and(|caps| caps.has_extension(SKILLS_EXTENSION))
    }

    /// Waits for the handshake, then refuses when either side lacks the extension.
    async fn skills_usable(&self) -> Result<(), SkillError> {
        self.ready().await?;
        let declared = self.shared.lock().engine.conn().config().capabilities.has_extension(SKILLS_EXTENSION);
        if !declared {
            return Err(SkillError::NotDeclared);
        }
        if !self.offers_skills() {
            return Err(SkillError::NotOffered);
        }
        Ok(())
    }

    /// `skills/list`: one page of entries (`cursor` from the previous page's `next_cursor`).
    /// Reads no file.
    ///
    /// # Errors
    ///
    /// [`SkillError::NotDeclared`] or [`SkillError::NotOffered`] before anything is sent, or
    /// the request's failure.
    pub async fn list_skills(&self, cursor: Option<String>) -> Result<ListSkillsResult, SkillError> {
        self.skills_usable().await?;
        let params = PaginatedRequestParams::with_cursor(cursor);
        Ok(self.request::<ListSkills>(&params, CallOptions::default()).await?)
    }

    /// `skills/list`: every page. Reads no file.
    ///
    /// Bounded as the other `list_all_*` helpers are: it stops with
    /// [`Error::Pagination`](crate::Error::Pagination) (in [`SkillError::Request`]) when the
    /// server repeats a cursor, or after 10 000 pages. A listing may be partial, so a skill
    /// missing from it may still be served: ask for it with [`get_skill`](Self::get_skill).
    ///
    /// # Errors
    ///
    /// As [`list_skills`](Self::list_skills), for any page.
    pub async fn list_all_skills(&self) -> Result<Vec<Skill>, SkillError> {
        self.skills_usable().await?;
        let page = |cursor| {
            let params = PaginatedRequestParams::with_cursor(cursor);
            self.request::<ListSkills>(&params, CallOptions::default())
        };
        Ok(paginate(ListSkills::METHOD, page, |_| {}).await?)
    }

    /// `skills/get`: the entry of the skill whose `SKILL.md` is `uri`, listed or not. Reads no
    /// file.
    ///
    /// # Errors
    ///
    /// As [`list_skills`](Self::list_skills) (a URI that is no skill's is the server's
    /// `-32602`), and [`SkillError::WrongSkill`] for an entry of another skill.
    pub async fn get_skill(&self, uri: &str) -> Result<Skill, SkillError> {
        self.skills_usable().await?;
        let result =
            self.request::<GetSkill>(&GetSkillRequestParams::new(uri), CallOptions::default()).await?;
        if result.skill.uri != uri {
            return Err(SkillError::WrongSkill { asked: uri.to_owned(), got: result.skill.uri });
        }
        Ok(result.skill)
    }

    /// Reads the file `path` of `skill` and returns its bytes once they verify against the
    /// entry. `path` is relative to the skill's directory (`SKILL.md`,
    /// `references/FORMS.md`), or the file's URI.
    ///
    /// Before anything is sent, the entry is checked (its name, its files, the spec's limits
    /// of 512 files and 16 MiB) and the file must be listed in it. Then `resources/read`
    /// fetches it (text or blob), and its size, its digest and, for `SKILL.md`, its
    /// frontmatter are compared with the entry. Keep the entry you loaded the skill from and
    /// read its supporting files against that one: a file that changed since is refused, and
    /// [`get_skill`](Self::get_skill) gives the current entry.
    ///
    /// # Errors
    ///
    /// [`SkillError::Verify`] with what did not match (the entry, an unlisted file, a size, a
    /// digest, a frontmatter field), [`SkillError::NotDeclared`] or
    /// [`SkillError::NotOffered`], or the request's failure.
    pub async fn read_skill_file(&self, skill: &Skill, path: &str) -> Result<Bytes, SkillError> {
        self.read_skill(None, skill, path).await
    }

    /// [`read_skill_file`](Self::read_skill_file) through `cache`: a file whose verified bytes
    /// it holds for the same server, URI and digest is not fetched again (it is verified
    /// again, against this entry); a file fetched is kept there once verified.
    ///
    /// # Errors
    ///
    /// As [`read_skill_file`](Self::read_skill_file).
    pub async fn read_skill_file_cached(
        &self,
        cache: &ServerSkillCache,
        skill: &Skill,
        path: &str,
    ) -> Result<Bytes, SkillError> {
        self.read_skill(Some(cache), skill, path).await
    }

    async fn read_skill(
        &self,
        cache: Option<&ServerSkillCache>,
        skill: &Skill,
        path: &str,
    ) -> Result<Bytes, SkillError> {
        self.skills_usable().await?;
        let file = skill.resolve(path)?;
        if let Some(bytes) = cache.and_then(|cache| cache.get(&file.uri, &file.digest)) {
            skill.verify(&file.uri, &bytes)?;
            return Ok(bytes);
        }
        let uri = file.uri.clone();
        let result = self.read_resource(&uri).await?;
        let bytes = Bytes::from(skill.verify_read(&uri, &result)?);
        if let Some(cache) = cache {
            cache.put(&uri, &file.digest, bytes.clone());
        }
        Ok(bytes)
    }
}

/// The default byte budget of a [`SkillCache`]: 64 MiB, four skills at the spec's limit.
pub const DEFAULT_SKILL_CACHE_BYTES: usize = 64 * 1024 * 1024;

/// Verified skill files in memory, keyed by (server, URI, digest), shared by any number of
/// connections ([`Client::read_skill_file_cached`]).
///
/// The server is a label **you** give each server ([`for_server`](Self::for_server)), not the
/// name it reports about itself: two servers may serve the same `skill://` URI, and a server
/// must not be able to pass for another. The digest in the key means a changed file is simply
/// a miss. The cache holds at most its byte budget, evicting the least recently used files
/// first; a file larger than the budget is not kept. It is cheap to clone (a handle).
///
/// ```
/// use mcp_smol::SkillCache;
///
/// let cache = SkillCache::with_budget(16 * 1024 * 1024);
/// let github = cache.for_server("github");
/// let local = cache.for_server("local-tools");
/// assert_eq!(cache.stats().files, 0);
/// # let _ = (github, local);
/// ```
#[derive(Debug, Clone)]
pub struct SkillCache {
    inner: Arc<OrderedMutex<CacheInner, { locks::LEAF }>>,
}

/// What a [`SkillCache`] holds and has done, for monitoring and tests.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct SkillCacheStats {
    /// Reads served from the cache.
    pub hits: u64,
    /// Reads that had to fetch.
    pub misses: u64,
    /// Files held.
    pub files: usize,
    /// Bytes held.
    pub bytes: usize,
}

#[derive(Debug)]
struct CacheInner {
    budget: usize,
    files: HashMap<(Arc<str>, String, String), (Bytes, u64)>,
    clock: u64,
    stats: SkillCacheStats,
}

impl Default for SkillCache {
    fn default() -> Self {
        Self::with_budget(DEFAULT_SKILL_CACHE_BYTES)
    }
}

impl SkillCache {
    /// An empty cache with the default budget ([`DEFAULT_SKILL_CACHE_BYTES`]).
    pub fn new() -> Self {
        Self::default()
    }

    /// An empty cache holding at most `bytes` bytes of files.
    pub fn with_budget(bytes: usize) -> Self {
        let inner =
            CacheInner { budget: bytes, files: HashMap::new(), clock: 0, stats: SkillCacheStats::default() };
        SkillCache { inner: Arc::new(OrderedMutex::new(inner)) }
    }

    /// This cache, for the server you call `server` (your own label for it).
    pub fn for_server(&self, server: impl Into<String>) -> ServerSkillCache {
        ServerSkillCache { cache: self.clone(), server: Arc::from(server.into()) }
    }

    /// What the cache holds and has done.
    pub fn stats(&self) -> SkillCacheStats {
        self.lock().stats
    }

    /// Forgets every file.
    pub fn clear(&self) {
        let mut inner = self.lock();
        inner.files.clear();
        inner.stats.files = 0;
        inner.stats.bytes = 0;
    }

    fn lock(&self) -> OrderedGuard<'_, CacheInner, { locks::LEAF }> {
        // Nothing here can panic half-way through an update.
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// A [`SkillCache`] for one server (see [`SkillCache::for_server`]).
#[derive(Debug, Clone)]
pub struct ServerSkillCache {
    cache: SkillCache,
    server: Arc<str>,
}

impl ServerSkillCache {
    /// The label of the server.
    pub fn server(&self) -> &str {
        &self.server
    }

    fn get(&self, uri: &str, digest: &str) -> Option<Bytes> {
        let mut inner = self.cache.lock();
        inner.clock += 1;
        let now = inner.clock;
        let key = (self.server.clone(), uri.to_owned(), digest.to_owned());
        let found = inner.files.get_mut(&key).map(|(bytes, used)| {
            *used = now;
            bytes.clone()
        });
        match found {
            Some(_) => inner.stats.hits += 1,
            None => inner.stats.misses += 1,
        }
        found
    }

    fn put(&self, uri: &str, digest: &str, bytes: Bytes) {
        let mut inner = self.cache.lock();
        if bytes.len() > inner.budget {
            return;
        }
        inner.clock += 1;
        let now = inner.clock;
        let key = (self.server.clone(), uri.to_owned(), digest.to_owned());
        let added = bytes.len();
        if let Some((old, _)) = inner.files.insert(key, (bytes, now)) {
            inner.stats.bytes -= old.len();
            inner.stats.files -= 1;
        }
        inner.stats.bytes += added;
        inner.stats.files += 1;
        while inner.stats.bytes > inner.budget {
            let Some(oldest) =
                inner.files.iter().min_by_key(|(_, (_, used))| *used).map(|(key, _)| key.clone())
            else {
                break;
            };
            if let Some((evicted, _)) = inner.files.remove(&oldest) {
                inner.stats.bytes -= evicted.len();
                inner.stats.files -= 1;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cache_keys_on_server_uri_and_digest_and_keeps_its_budget() {
        let cache = SkillCache::with_budget(10);
        let a = cache.for_server("a");
        let b = cache.for_server("b");
        a.put("skill://x/SKILL.md", "sha256:1", Bytes::from_static(b"12345"));
        assert_eq!(a.get("skill://x/SKILL.md", "sha256:1").as_deref(), Some(&b"12345"[..]));
        assert_eq!(b.get("skill://x/SKILL.md", "sha256:1"), None, "another server's file");
        assert_eq!(a.get("skill://x/SKILL.md", "sha256:2"), None, "another digest");
        a.put("skill://x/b.md", "sha256:3", Bytes::from_static(b"1234"));
        // Over budget: the least recently used goes.
        a.put("skill://x/c.md", "sha256:4", Bytes::from_static(b"12"));
        assert_eq!(a.get("skill://x/SKILL.md", "sha256:1"), None);
        assert!(a.get("skill://x/c.md", "sha256:4").is_some());
        a.put("skill://x/huge.md", "sha256:5", Bytes::from(vec![0; 11]));
        assert_eq!(a.get("skill://x/huge.md", "sha256:5"), None, "larger than the budget");
        let stats = cache.stats();
        assert_eq!((stats.files, stats.bytes), (2, 6));
        assert_eq!((stats.hits, stats.misses), (2, 4));
        cache.clear();
        assert_eq!(cache.stats().files, 0);
    }
}
