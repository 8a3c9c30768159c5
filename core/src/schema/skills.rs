//! Skills (SEP-2640, the [`SKILLS_EXTENSION`](super::SKILLS_EXTENSION)): directories of files
//! (a `SKILL.md` and its supporting files) that a server serves as resources, listed with
//! `skills/list` and fetched one entry at a time with `skills/get`.
//!
//! An entry ([`Skill`]) names the skill's `SKILL.md` (`uri`), copies its YAML `frontmatter` as
//! JSON, and lists every file of the skill with the `sha256:` digest and the size of its bytes
//! ([`SkillFile`]). A host reads a file with `resources/read` and must not use it before it
//! checked it against the entry: [`Skill::verify`] does that, and [`Skill::verify_read`] also
//! takes the bytes out of the `resources/read` result. Every mismatch is a
//! [`SkillVerifyError`] naming the file and what was expected; no bytes come with it.
//!
//! What is checked, in this order:
//!
//! 1. the entry itself ([`Skill::check`]): its `uri` ends in `/SKILL.md` and the segment before
//!    it is the frontmatter's `name`; `resources` is a list (a `"dynamic"` skill has no digests
//!    and is refused); every listed file is under the skill's directory, once, with a
//!    well-formed digest; `SKILL.md` is listed; and the skill keeps the spec's limits,
//!    [`MAX_SKILL_FILES`] files and [`MAX_SKILL_BYTES`] bytes in all, counted from the entry
//!    before anything is fetched;
//! 2. the file asked for is listed (a file the entry does not list is refused before it is
//!    read: [`Skill::resolve`]);
//! 3. the bytes: their length, then their digest;
//! 4. for `SKILL.md`, its YAML frontmatter ([`parse_frontmatter`]) field by field against the
//!    entry's `frontmatter`.
//!
//! The digest checks need SHA-256: the `skills` feature (on by default) brings it. Without it,
//! the model, [`Skill::check`], [`Skill::resolve`] and the frontmatter reader are still here.
//!
//! Nothing here fetches: a driver lists and reads when its caller needs a file, never ahead of
//! need, as the SEP requires (`mcp-smol`'s `Client::read_skill_file` is such a driver).

use std::collections::BTreeSet;

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

use super::pagination::list_result;
use super::{JsonObject, PaginatedRequest, PaginatedRequestParams, request};
#[cfg(feature = "skills")]
use super::{ReadResourceResult, ResourceContents};

mod frontmatter;

pub use frontmatter::{FrontmatterError, MAX_DEPTH as MAX_FRONTMATTER_DEPTH, parse_frontmatter};

/// The most files one skill may list (`SKILL.md` included): the spec's limit, which hosts must
/// support; larger skills are refused ([`SkillVerifyError::TooManyFiles`]).
pub const MAX_SKILL_FILES: usize = 512;

/// The most bytes one skill's files may add up to (16 MiB, the sum of their `size`): the spec's
/// limit, which hosts must support; larger skills are refused ([`SkillVerifyError::TooLarge`]).
pub const MAX_SKILL_BYTES: u64 = 16 * 1024 * 1024;

/// The largest message a `resources/read` of one skill file within the limits can take
/// (97 MiB), derived from [`MAX_SKILL_BYTES`]: a file of 16 MiB is 21.4 MiB as a base64 blob,
/// and up to 6 times its size as text (JSON writes a control character as `\u00XX`, and
/// Python's `json` every character past ASCII as one or two `\uXXXX`), plus 1 MiB for the rest
/// of the message (the URI, the MIME type, `_meta`).
///
/// [`ClientConfig::max_message_size`](crate::ClientConfig::max_message_size) defaults to
/// 16 MiB, which a file past 12 MiB as a blob does not fit in: a host that reads skills raises
/// it to this (mcp-smol's `ClientBuilder::skills` does, unless it was set otherwise).
pub const MAX_SKILL_READ_MESSAGE_BYTES: usize = 6 * MAX_SKILL_BYTES as usize + 1024 * 1024;

/// The name of a skill's entry file, the last segment of every skill's `uri`.
pub const SKILL_MD: &str = "SKILL.md";

/// The `resources` marker of a skill generated on the fly, which has no digests.
pub const DYNAMIC_RESOURCES: &str = "dynamic";

/// One file of a skill: its resource URI, the `sha256:` digest of its bytes and their length.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SkillFile {
    /// The file's resource URI (read with `resources/read`).
    pub uri: String,
    /// `sha256:` and 64 lowercase hexadecimal digits.
    pub digest: String,
    /// The length of the file's bytes: an integer in any JSON form (`1024.0` too); a fraction,
    /// a negative number or one past `u64` is refused (`json_number::exact`), which makes the
    /// entry's `resources` invalid.
    #[serde(deserialize_with = "super::json_number::exact")]
    pub size: u64,
}

/// A skill entry's `resources`: its files, or the `"dynamic"` marker. Anything else is kept as
/// it came, so that one malformed entry does not fail a whole listing; such an entry is refused
/// when used ([`SkillVerifyError::MissingResources`]).
#[derive(Debug, Clone, PartialEq)]
pub enum SkillResources {
    /// Every file of the skill.
    Files(Vec<SkillFile>),
    /// `"dynamic"`: generated content, no digests.
    Dynamic,
    /// Neither: kept as it came.
    Invalid(Value),
}

impl Serialize for SkillResources {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            SkillResources::Files(files) => files.serialize(serializer),
            SkillResources::Dynamic => serializer.serialize_str(DYNAMIC_RESOURCES),
            SkillResources::Invalid(value) => value.serialize(serializer),
        }
    }
}

impl<'de> Deserialize<'de> for SkillResources {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = Value::deserialize(deserializer)?;
        Ok(match value {
            Value::String(marker) if marker == DYNAMIC_RESOURCES => SkillResources::Dynamic,
            Value::Array(_) => match serde_json::from_value(value.clone()) {
                Ok(files) => SkillResources::Files(files),
                Err(_) => SkillResources::Invalid(value),
            },
            other => SkillResources::Invalid(other),
        })
    }
}

/// A skill entry, as `skills/list` lists it and `skills/get` returns it.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Skill {
    /// The resource URI of the skill's `SKILL.md`; the skill is known by it (with the server).
    pub uri: String,
    /// The `SKILL.md`'s YAML frontmatter as JSON, every field the author wrote (`name` and
    /// `description` at least).
    #[serde(default)]
    pub frontmatter: JsonObject,
    /// The skill's files, or `"dynamic"` (`None` when absent, which makes the entry invalid).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resources: Option<SkillResources>,
    /// Entry metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
}

list_result! {
    /// Result of `skills/list`.
    ListSkillsResult {
        /// The skills on this page (a listing may be partial: a skill absent from it may still be
        /// served, and found with `skills/get`).
        skills: Vec<Skill>
    }
}

/// Params of `skills/get`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GetSkillRequestParams {
    /// The URI of the skill's `SKILL.md`.
    pub uri: String,
    /// Request metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
}

impl GetSkillRequestParams {
    /// Params asking for the skill whose `SKILL.md` is `uri`.
    pub fn new(uri: impl Into<String>) -> Self {
        Self { uri: uri.into(), meta: None }
    }
}

/// Result of `skills/get`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GetSkillResult {
    /// The skill's entry.
    pub skill: Skill,
    /// Caching hint in milliseconds, if the server gives one.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "super::json_number::hint_opt"
    )]
    pub ttl_ms: Option<u64>,
    /// Caching scope, if the server gives one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_scope: Option<String>,
    /// Result metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
}

request!(
    /// `skills/list`: the skills the server serves, one page at a time (skills extension).
    ListSkills, "skills/list", PaginatedRequestParams, ListSkillsResult
);
impl PaginatedRequest for ListSkills {}

request!(
    /// `skills/get`: one skill's entry, by the URI of its `SKILL.md` (skills extension).
    GetSkill, "skills/get", GetSkillRequestParams, GetSkillResult
);

/// Why a skill entry, or a file read for it, is refused. Each names the URI concerned and, for
/// a mismatch, what the entry promised and what came.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum SkillVerifyError {
    /// The entry's `uri` does not end in `/SKILL.md` (or has a query or fragment).
    #[error("{uri} is not the URI of a SKILL.md")]
    NotASkillUri {
        /// The entry's `uri`.
        uri: String,
    },
    /// The last segment of the skill's path is not the frontmatter's `name`.
    #[error("{uri}: the skill's path ends in {expected:?}, its frontmatter name is {}", shown(.actual.as_ref()))]
    NameMismatch {
        /// The entry's `uri`.
        uri: String,
        /// The last segment of the skill's path (percent-decoded).
        expected: String,
        /// The frontmatter's `name`, if any.
        actual: Option<Value>,
    },
    /// The entry has no `resources`, or they are neither a list of files nor `"dynamic"`.
    #[error("{uri}: the entry has no valid `resources`")]
    MissingResources {
        /// The entry's `uri`.
        uri: String,
    },
    /// The skill is `"dynamic"`: it has no digests, so nothing of it can be verified.
    #[error("{uri}: a dynamic skill has no digests and cannot be verified")]
    Dynamic {
        /// The entry's `uri`.
        uri: String,
    },
    /// The entry does not list its own `SKILL.md`.
    #[error("{uri}: the entry does not list its own SKILL.md")]
    SkillMdNotListed {
        /// The entry's `uri`.
        uri: String,
    },
    /// A file is listed twice.
    #[error("{uri} is listed twice")]
    DuplicateFile {
        /// The file.
        uri: String,
    },
    /// A listed file is not under the skill's directory.
    #[error("{uri} is not a file of the skill {skill}")]
    OutsideSkill {
        /// The skill's `uri`.
        skill: String,
        /// The file.
        uri: String,
    },
    /// A digest is not `sha256:` and 64 lowercase hexadecimal digits.
    #[error("{uri}: malformed digest {digest:?}")]
    MalformedDigest {
        /// The file.
        uri: String,
        /// The digest as listed.
        digest: String,
    },
    /// The skill lists more files than [`MAX_SKILL_FILES`].
    #[error("{uri}: the skill lists {count} files, more than {limit}")]
    TooManyFiles {
        /// The skill's `uri`.
        uri: String,
        /// How many it lists.
        count: usize,
        /// The limit.
        limit: usize,
    },
    /// The skill's files add up to more than [`MAX_SKILL_BYTES`].
    #[error("{uri}: the skill's files add up to {total} bytes, more than {limit}")]
    TooLarge {
        /// The skill's `uri`.
        uri: String,
        /// Their total size (saturating).
        total: u64,
        /// The limit.
        limit: u64,
    },
    /// A path within the skill that cannot name one of its files.
    #[error("{path:?} is not a path within a skill: {reason}")]
    InvalidPath {
        /// The path asked for.
        path: String,
        /// Why not.
        reason: &'static str,
    },
    /// The file is not listed in the entry: the skill changed, or never had it.
    #[error("{uri} is not listed in the entry of {skill}")]
    Unlisted {
        /// The skill's `uri`.
        skill: String,
        /// The file.
        uri: String,
    },
    /// The file's length differs from the entry's `size`.
    #[error("{uri} is {actual} bytes, the entry says {expected}")]
    SizeMismatch {
        /// The file.
        uri: String,
        /// The entry's `size`.
        expected: u64,
        /// The length read.
        actual: u64,
    },
    /// The file's digest differs from the entry's.
    #[error("{uri} has digest {actual}, the entry says {expected}")]
    DigestMismatch {
        /// The file.
        uri: String,
        /// The entry's digest.
        expected: String,
        /// The digest of the bytes read.
        actual: String,
    },
    /// The `SKILL.md`'s frontmatter cannot be read.
    #[error("{uri}: {source}")]
    Frontmatter {
        /// The `SKILL.md`.
        uri: String,
        /// Why.
        source: FrontmatterError,
    },
    /// A field of the `SKILL.md`'s frontmatter differs from the entry's `frontmatter`.
    #[error("{uri}: frontmatter field {field:?} is {} in the file, {} in the entry", shown(.actual.as_ref()), shown(.expected.as_ref()))]
    FrontmatterMismatch {
        /// The `SKILL.md`.
        uri: String,
        /// The first field (in key order) that differs.
        field: String,
        /// Its value in the entry, if there.
        expected: Option<Value>,
        /// Its value in the file, if there.
        actual: Option<Value>,
    },
    /// The `resources/read` result holds no contents for the file.
    #[error("the resources/read result holds no contents for {uri}")]
    NoContent {
        /// The file.
        uri: String,
    },
    /// The `resources/read` result holds the file more than once.
    #[error("the resources/read result holds {count} contents for {uri}")]
    AmbiguousContent {
        /// The file.
        uri: String,
        /// How many.
        count: usize,
    },
    /// The contents are neither text nor a blob, or the blob is not base64.
    #[error("the contents of {uri} are neither text nor a valid base64 blob")]
    BadContent {
        /// The file.
        uri: String,
    },
}

/// A JSON value for a message, or `absent`.
fn shown(value: Option<&Value>) -> String {
    value.map_or_else(|| "absent".to_owned(), Value::to_string)
}

/// Whether `digest` is `sha256:` and 64 lowercase hexadecimal digits.
///
/// ```
/// use mcp_sansio::schema::is_sha256_digest;
///
/// assert!(is_sha256_digest(&format!("sha256:{}", "0f".repeat(32))));
/// assert!(!is_sha256_digest(&format!("sha256:{}", "0F".repeat(32))));
/// ```
pub fn is_sha256_digest(digest: &str) -> bool {
    digest
        .strip_prefix("sha256:")
        .is_some_and(|hex| hex.len() == 64 && hex.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')))
}

/// The `sha256:` digest of `bytes`, as skill entries write it.
///
/// ```
/// use mcp_sansio::schema::sha256_digest;
///
/// assert_eq!(
///     sha256_digest(b"abc"),
///     "sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
/// );
/// ```
#[cfg(feature = "skills")]
pub fn sha256_digest(bytes: &[u8]) -> String {
    use sha2::Digest as _;
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let hash = sha2::Sha256::digest(bytes);
    let mut digest = String::with_capacity(7 + 64);
    digest.push_str("sha256:");
    for byte in hash {
        digest.push(char::from(HEX[usize::from(byte >> 4)]));
        digest.push(char::from(HEX[usize::from(byte & 0xf)]));
    }
    digest
}

/// Percent-decodes a URI segment; `None` when it is not valid percent-encoded UTF-8.
fn percent_decode(segment: &str) -> Option<String> {
    let bytes = segment.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = std::str::from_utf8(bytes.get(i + 1..i + 3)?).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

/// Why `relative` (a path under a skill's directory) names no file of it, if it does not.
fn bad_relative_path(relative: &str) -> Option<&'static str> {
    if relative.is_empty() {
        return Some("it is empty");
    }
    if relative.contains(['?', '#', '\\']) {
        return Some("it has a query, a fragment or a backslash");
    }
    for segment in relative.split('/') {
        let decoded = percent_decode(segment);
        match decoded.as_deref() {
            None => return Some("it is not valid percent-encoded UTF-8"),
            Some("") => return Some("it has an empty segment"),
            Some("." | "..") => return Some("it has a `.` or `..` segment"),
            Some(s) if s.contains('/') => return Some("it has an encoded `/`"),
            Some(_) => {}
        }
    }
    None
}

/// Field-by-field equality of JSON values, numbers compared by value (`2` and `2.0` are equal,
/// as they are to a YAML reader).
fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => {
            if let (Some(x), Some(y)) = (x.as_i64(), y.as_i64()) {
                x == y
            } else if let (Some(x), Some(y)) = (x.as_u64(), y.as_u64()) {
                x == y
            } else {
                (x.is_f64() || y.is_f64()) && x.as_f64() == y.as_f64()
            }
        }
        (Value::Array(x), Value::Array(y)) => x.len() == y.len() && x.iter().zip(y).all(|(x, y)| same(x, y)),
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| same(v, w)))
        }
        _ => a == b,
    }
}

impl Skill {
    /// The frontmatter's `name`, if it is a string.
    pub fn name(&self) -> Option<&str> {
        self.frontmatter.get("name").and_then(Value::as_str)
    }

    /// The frontmatter's `description`, if it is a string.
    pub fn description(&self) -> Option<&str> {
        self.frontmatter.get("description").and_then(Value::as_str)
    }

    /// The skill's directory, as a URI prefix ending in `/`: `uri` without `SKILL.md`. `None`
    /// when `uri` is not a `SKILL.md`'s.
    pub fn root(&self) -> Option<&str> {
        if self.uri.contains(['?', '#']) {
            return None;
        }
        let root = self.uri.strip_suffix(SKILL_MD)?;
        // `skill://SKILL.md` has no skill path at all.
        let path = root.strip_suffix('/')?;
        let name = path.rsplit('/').next()?;
        (!name.is_empty() && !path.ends_with(':')).then_some(root)
    }

    /// The last segment of the skill's path, percent-decoded: what the frontmatter's `name`
    /// must be.
    pub fn path_name(&self) -> Option<String> {
        let root = self.root()?;
        percent_decode(root.strip_suffix('/')?.rsplit('/').next()?)
    }

    /// The listed files, when `resources` is a list.
    pub fn files(&self) -> Option<&[SkillFile]> {
        match &self.resources {
            Some(SkillResources::Files(files)) => Some(files),
            _ => None,
        }
    }

    /// The listed file with this URI.
    pub fn file(&self, uri: &str) -> Option<&SkillFile> {
        self.files()?.iter().find(|file| file.uri == uri)
    }

    /// The sum of the listed files' sizes (saturating), when `resources` is a list.
    pub fn total_size(&self) -> Option<u64> {
        Some(self.files()?.iter().fold(0_u64, |total, file| total.saturating_add(file.size)))
    }

    /// Checks the entry on its own, before any file is read, and returns its files: its `uri`
    /// ends in `/SKILL.md` and the segment before it is the frontmatter's `name`; `resources` is
    /// a list (not `"dynamic"`); every file is under the skill's directory, once, with a
    /// well-formed digest; `SKILL.md` is listed; at most [`MAX_SKILL_FILES`] files and
    /// [`MAX_SKILL_BYTES`] bytes in all.
    ///
    /// ```
    /// use mcp_sansio::schema::{Skill, SkillVerifyError};
    ///
    /// let entry: Skill = serde_json::from_value(serde_json::json!({
    ///     "uri": "skill://acme/refunds/SKILL.md",
    ///     "frontmatter": {"name": "billing", "description": "Refunds"},
    ///     "resources": "dynamic",
    /// })).unwrap();
    /// assert!(matches!(entry.check(), Err(SkillVerifyError::NameMismatch { .. })));
    /// ```
    ///
    /// # Errors
    ///
    /// The first thing wrong with the entry.
    pub fn check(&self) -> Result<&[SkillFile], SkillVerifyError> {
        let uri = || self.uri.clone();
        let root = self.root().ok_or_else(|| SkillVerifyError::NotASkillUri { uri: uri() })?;
        let expected = self.path_name().unwrap_or_default();
        let actual = self.frontmatter.get("name");
        if actual.and_then(Value::as_str) != Some(expected.as_str()) {
            return Err(SkillVerifyError::NameMismatch { uri: uri(), expected, actual: actual.cloned() });
        }
        let files = match &self.resources {
            Some(SkillResources::Files(files)) => files,
            Some(SkillResources::Dynamic) => return Err(SkillVerifyError::Dynamic { uri: uri() }),
            Some(SkillResources::Invalid(_)) | None => {
                return Err(SkillVerifyError::MissingResources { uri: uri() });
            }
        };
        if files.len() > MAX_SKILL_FILES {
            return Err(SkillVerifyError::TooManyFiles {
                uri: uri(),
                count: files.len(),
                limit: MAX_SKILL_FILES,
            });
        }
        let mut seen = BTreeSet::new();
        for file in files {
            let outside = || SkillVerifyError::OutsideSkill { skill: uri(), uri: file.uri.clone() };
            let relative = file.uri.strip_prefix(root).ok_or_else(outside)?;
            if bad_relative_path(relative).is_some() {
                return Err(outside());
            }
            if !seen.insert(file.uri.as_str()) {
                return Err(SkillVerifyError::DuplicateFile { uri: file.uri.clone() });
            }
            if !is_sha256_digest(&file.digest) {
                return Err(SkillVerifyError::MalformedDigest {
                    uri: file.uri.clone(),
                    digest: file.digest.clone(),
                });
            }
        }
        if !seen.contains(self.uri.as_str()) {
            return Err(SkillVerifyError::SkillMdNotListed { uri: uri() });
        }
        let total = self.total_size().unwrap_or_default();
        if total > MAX_SKILL_BYTES {
            return Err(SkillVerifyError::TooLarge { uri: uri(), total, limit: MAX_SKILL_BYTES });
        }
        Ok(files)
    }

    /// The listed file that `path` names, checking the entry first ([`check`](Self::check)).
    ///
    /// `path` is relative to the skill's directory (`references/FORMS.md`, or `SKILL.md`), as a
    /// `SKILL.md` refers to its files, or a full URI. A file the entry does not list is refused
    /// here, before anything is read: the entry is complete, so an unlisted file is not part of
    /// the skill the user approved.
    ///
    /// ```
    /// use mcp_sansio::schema::{Skill, SkillVerifyError};
    ///
    /// let digest = format!("sha256:{}", "0".repeat(64));
    /// let entry: Skill = serde_json::from_value(serde_json::json!({
    ///     "uri": "skill://pdf-processing/SKILL.md",
    ///     "frontmatter": {"name": "pdf-processing", "description": "PDFs"},
    ///     "resources": [
    ///         {"uri": "skill://pdf-processing/SKILL.md", "digest": digest, "size": 10},
    ///         {"uri": "skill://pdf-processing/references/FORMS.md", "digest": digest, "size": 5},
    ///     ],
    /// })).unwrap();
    /// assert_eq!(entry.resolve("references/FORMS.md").unwrap().size, 5);
    /// assert!(matches!(entry.resolve("scripts/run.sh"), Err(SkillVerifyError::Unlisted { .. })));
    /// assert!(matches!(entry.resolve("../other/SKILL.md"), Err(SkillVerifyError::InvalidPath { .. })));
    /// ```
    ///
    /// # Errors
    ///
    /// What is wrong with the entry, an invalid path, or [`SkillVerifyError::Unlisted`].
    pub fn resolve(&self, path: &str) -> Result<&SkillFile, SkillVerifyError> {
        let files = self.check()?;
        if let Some(file) = files.iter().find(|file| file.uri == path) {
            return Ok(file);
        }
        let root = self.root().unwrap_or_default();
        let uri = if let Some(relative) = path.strip_prefix(root) {
            if let Some(reason) = bad_relative_path(relative) {
                return Err(SkillVerifyError::InvalidPath { path: path.to_owned(), reason });
            }
            path.to_owned()
        } else if path.contains("://") || path.starts_with('/') {
            return Err(SkillVerifyError::InvalidPath {
                path: path.to_owned(),
                reason: "it is not under the skill's directory",
            });
        } else {
            if let Some(reason) = bad_relative_path(path) {
                return Err(SkillVerifyError::InvalidPath { path: path.to_owned(), reason });
            }
            format!("{root}{path}")
        };
        files
            .iter()
            .find(|file| file.uri == uri)
            .ok_or_else(|| SkillVerifyError::Unlisted { skill: self.uri.clone(), uri })
    }

    /// Compares a `SKILL.md`'s frontmatter with the entry's, field by field.
    ///
    /// # Errors
    ///
    /// [`SkillVerifyError::Frontmatter`] when the file's frontmatter cannot be read,
    /// [`SkillVerifyError::FrontmatterMismatch`] for the first field (in key order) that
    /// differs, is missing on one side, or is extra on the other.
    pub fn compare_frontmatter(&self, skill_md: &[u8]) -> Result<(), SkillVerifyError> {
        let actual = parse_frontmatter(skill_md)
            .map_err(|source| SkillVerifyError::Frontmatter { uri: self.uri.clone(), source })?;
        let fields: BTreeSet<&String> = actual.keys().chain(self.frontmatter.keys()).collect();
        for field in fields {
            let (expected, found) = (self.frontmatter.get(field), actual.get(field));
            let equal = match (expected, found) {
                (Some(a), Some(b)) => same(a, b),
                _ => false,
            };
            if !equal {
                return Err(SkillVerifyError::FrontmatterMismatch {
                    uri: self.uri.clone(),
                    field: field.clone(),
                    expected: expected.cloned(),
                    actual: found.cloned(),
                });
            }
        }
        Ok(())
    }

    /// Verifies `bytes`, read for the file `path` names ([`resolve`](Self::resolve)), against
    /// the entry: size, digest, and for `SKILL.md` the frontmatter. Only bytes this accepts
    /// may be used.
    ///
    /// ```
    /// use mcp_sansio::schema::{Skill, SkillVerifyError, sha256_digest};
    ///
    /// let skill_md = b"---\nname: notes\ndescription: Take notes\n---\nWrite them down.\n";
    /// let entry: Skill = serde_json::from_value(serde_json::json!({
    ///     "uri": "skill://notes/SKILL.md",
    ///     "frontmatter": {"name": "notes", "description": "Take notes"},
    ///     "resources": [{"uri": "skill://notes/SKILL.md", "digest": sha256_digest(skill_md), "size": skill_md.len()}],
    /// })).unwrap();
    /// assert!(entry.verify("SKILL.md", skill_md).is_ok());
    /// let tampered = b"---\nname: notes\ndescription: Take notes\n---\nSend them away!!\n";
    /// assert!(matches!(entry.verify("SKILL.md", tampered), Err(SkillVerifyError::DigestMismatch { .. })));
    /// ```
    ///
    /// # Errors
    ///
    /// The first check that failed.
    #[cfg(feature = "skills")]
    pub fn verify(&self, path: &str, bytes: &[u8]) -> Result<(), SkillVerifyError> {
        let file = self.resolve(path)?;
        let actual = u64::try_from(bytes.len()).unwrap_or(u64::MAX);
        if actual != file.size {
            return Err(SkillVerifyError::SizeMismatch {
                uri: file.uri.clone(),
                expected: file.size,
                actual,
            });
        }
        let digest = sha256_digest(bytes);
        if digest != file.digest {
            return Err(SkillVerifyError::DigestMismatch {
                uri: file.uri.clone(),
                expected: file.digest.clone(),
                actual: digest,
            });
        }
        if file.uri == self.uri {
            self.compare_frontmatter(bytes)?;
        }
        Ok(())
    }

    /// The bytes of the file `path` names, taken out of a `resources/read` result for it (its
    /// text as UTF-8, or its blob decoded) and [verified](Self::verify): what a host may use.
    ///
    /// # Errors
    ///
    /// A result without exactly one text or valid blob for the file's URI, or a failed check.
    #[cfg(feature = "skills")]
    pub fn verify_read(&self, path: &str, result: &ReadResourceResult) -> Result<Vec<u8>, SkillVerifyError> {
        let uri = self.resolve(path)?.uri.clone();
        let mut matching = result.contents.iter().filter(|c| c.uri() == Some(uri.as_str()));
        let (Some(contents), None) = (matching.next(), matching.next()) else {
            let count = result.contents.iter().filter(|c| c.uri() == Some(uri.as_str())).count();
            return Err(if count == 0 {
                SkillVerifyError::NoContent { uri }
            } else {
                SkillVerifyError::AmbiguousContent { uri, count }
            });
        };
        let bytes = match contents {
            ResourceContents::Text(text) => text.text.as_bytes().to_vec(),
            ResourceContents::Blob(blob) => {
                blob.decode().map_err(|_| SkillVerifyError::BadContent { uri: uri.clone() })?
            }
            ResourceContents::Unknown(_) => return Err(SkillVerifyError::BadContent { uri }),
        };
        self.verify(&uri, &bytes)?;
        Ok(bytes)
    }
}

#[cfg(test)]
mod tests;
