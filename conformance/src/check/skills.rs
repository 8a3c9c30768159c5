//! The skills properties (SEP-2640), for servers that offer the extension: what `check` reads
//! of their skills, and how an entry or a file read is judged.
//!
//! - `skill-files`: a file a skill entry lists reads back (`resources/read`) with the entry's
//!   `size` and `sha256:` digest; a listed file the server cannot read breaks it too.
//! - `skill-name`: an entry's frontmatter `name` is the last segment of its skill's path.
//! - `skill-limits`: no entry lists more than 512 files, or files adding up to more than
//!   16 MiB.
//!
//! Entries are judged in every `skills/list` and `skills/get` result; files are read from the
//! entries `explore` listed.

use mcp_sansio::schema::{
    BlobResourceContents, MAX_SKILL_BYTES, MAX_SKILL_FILES, Skill, SkillResources, sha256_digest,
};
use serde_json::Value;

use super::actions::Action;
use super::{Catalog, Property};

/// Whether `property` is one of the skills properties (a report has their rows only for a
/// server that offers the extension).
pub(crate) fn is_skill_property(property: Property) -> bool {
    matches!(property, Property::SkillFiles | Property::SkillName | Property::SkillLimits)
}

/// The most skill files `check` picks its reads from.
const MAX_FILES: usize = 256;

/// A read of every file the catalog's skills list (up to [`MAX_FILES`]).
pub(crate) fn file_reads(catalog: &Catalog) -> Vec<Action> {
    let mut reads = Vec::new();
    for entry in &catalog.skills {
        let Ok(skill) = serde_json::from_value::<Skill>(entry.clone()) else { continue };
        for file in skill.files().unwrap_or_default() {
            reads.push(Action::ReadSkillFile {
                skill: skill.uri.clone(),
                uri: file.uri.clone(),
                digest: file.digest.clone(),
                size: file.size,
            });
        }
    }
    reads.truncate(MAX_FILES);
    reads
}

/// The URIs of the catalog's skills, for `skills/get`.
pub(crate) fn skill_uris(catalog: &Catalog) -> Vec<String> {
    catalog.skills.iter().filter_map(|e| e.get("uri").and_then(Value::as_str).map(str::to_owned)).collect()
}

/// The skill entries of a `skills/list` or `skills/get` result.
fn entries(method: &str, result: &Value) -> Vec<Value> {
    match method {
        "skills/list" => result.get("skills").and_then(Value::as_array).cloned().unwrap_or_default(),
        "skills/get" => result.get("skill").cloned().into_iter().collect(),
        _ => Vec::new(),
    }
}

/// Judges the entries of a `skills/list` or `skills/get` result: one verdict per entry for
/// `skill-name` and one for `skill-limits` (`None` when the entry holds).
pub(crate) fn judge_entries(method: &str, result: &Value) -> Vec<(Property, Option<String>)> {
    let mut verdicts = Vec::new();
    for entry in entries(method, result) {
        let uri = entry.get("uri").and_then(Value::as_str).unwrap_or("(no uri)").to_owned();
        // The shape is the schema's business: an entry that does not decode is not judged here.
        let Ok(skill) = serde_json::from_value::<Skill>(entry) else { continue };
        let name = skill.frontmatter.get("name");
        let name_ok = match (skill.path_name(), name.and_then(Value::as_str)) {
            (Some(segment), Some(name)) => segment == name,
            _ => false,
        };
        let shown = name.map_or_else(|| "absent".to_owned(), Value::to_string);
        verdicts.push((
            Property::SkillName,
            (!name_ok).then(|| match skill.path_name() {
                Some(segment) => format!(
                    "{method}: the skill {uri} has the frontmatter name {shown}, not {segment:?}, the last segment of its path"
                ),
                None => format!("{method}: the skill uri {uri} is not the URI of a SKILL.md (frontmatter name {shown})"),
            }),
        ));
        if let Some(SkillResources::Files(files)) = &skill.resources {
            let total = skill.total_size().unwrap_or_default();
            let verdict = if files.len() > MAX_SKILL_FILES {
                Some(format!(
                    "{method}: the skill {uri} lists {} files, more than {MAX_SKILL_FILES}",
                    files.len()
                ))
            } else if total > MAX_SKILL_BYTES {
                Some(format!(
                    "{method}: the skill {uri}'s files add up to {total} bytes, more than {MAX_SKILL_BYTES}"
                ))
            } else {
                None
            };
            verdicts.push((Property::SkillLimits, verdict));
        }
    }
    verdicts
}

/// Judges the answer to a read of a listed skill file: `None` when it holds the file once,
/// with the entry's size and digest.
pub(crate) fn judge_read(uri: &str, digest: &str, size: u64, response: &Value) -> Option<String> {
    let Some(result) = response.get("result") else {
        let error = response.get("error").map(ToString::to_string).unwrap_or_default();
        return Some(format!("resources/read of the listed skill file {uri} failed: {error}"));
    };
    let contents: Vec<&Value> = result
        .get("contents")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter(|c| c.get("uri").and_then(Value::as_str) == Some(uri))
        .collect();
    let [contents] = contents[..] else {
        return Some(format!("resources/read of {uri} holds {} contents for it, not one", contents.len()));
    };
    let bytes = if let Some(text) = contents.get("text").and_then(Value::as_str) {
        text.as_bytes().to_vec()
    } else if let Some(blob) = contents.get("blob").and_then(Value::as_str) {
        let blob = BlobResourceContents { uri: uri.to_owned(), blob: blob.to_owned(), ..Default::default() };
        match blob.decode() {
            Ok(bytes) => bytes,
            Err(e) => return Some(format!("resources/read of {uri}: the blob is not base64 ({e})")),
        }
    } else {
        return Some(format!("resources/read of {uri} has neither text nor blob"));
    };
    let actual_size = bytes.len() as u64;
    if actual_size != size {
        return Some(format!(
            "the skill file {uri} reads back as {actual_size} bytes, its entry says {size}"
        ));
    }
    let actual = sha256_digest(&bytes);
    (actual != digest)
        .then(|| format!("the skill file {uri} reads back with digest {actual}, its entry says {digest}"))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn entry(name: &str, files: Value) -> Value {
        json!({"uri": "skill://acme/refunds/SKILL.md", "frontmatter": {"name": name, "description": "d"}, "resources": files})
    }

    #[test]
    fn entries_are_judged_for_their_name_and_limits() {
        let one = json!([{"uri": "skill://acme/refunds/SKILL.md", "digest": format!("sha256:{}", "0".repeat(64)), "size": 3}]);
        let verdicts = judge_entries("skills/list", &json!({"skills": [entry("refunds", one.clone())]}));
        assert_eq!(verdicts, [(Property::SkillName, None), (Property::SkillLimits, None)]);
        let verdicts = judge_entries("skills/get", &json!({"skill": entry("refund", one)}));
        assert!(verdicts[0].1.as_deref().unwrap().contains("frontmatter name \"refund\", not \"refunds\""));
        let many: Vec<Value> = (0..513)
            .map(|i| json!({"uri": format!("skill://acme/refunds/{i}"), "digest": "x", "size": 1}))
            .collect();
        let verdicts = judge_entries("skills/list", &json!({"skills": [entry("refunds", json!(many))]}));
        assert!(verdicts[1].1.as_deref().unwrap().contains("lists 513 files"));
        let big =
            json!([{"uri": "skill://acme/refunds/SKILL.md", "digest": "x", "size": MAX_SKILL_BYTES + 1}]);
        let verdicts = judge_entries("skills/list", &json!({"skills": [entry("refunds", big)]}));
        assert!(verdicts[1].1.as_deref().unwrap().contains("16777217 bytes"));
        // A dynamic skill has no files to count.
        assert_eq!(
            judge_entries("skills/list", &json!({"skills": [entry("refunds", json!("dynamic"))]})).len(),
            1
        );
    }

    #[test]
    fn reads_are_judged_for_their_size_and_digest() {
        let uri = "skill://a/SKILL.md";
        let read = |contents: Value| json!({"result": {"contents": [contents]}});
        let digest = sha256_digest(b"abc");
        assert_eq!(judge_read(uri, &digest, 3, &read(json!({"uri": uri, "text": "abc"}))), None);
        assert_eq!(judge_read(uri, &digest, 3, &read(json!({"uri": uri, "blob": "YWJj"}))), None);
        assert!(
            judge_read(uri, &digest, 3, &read(json!({"uri": uri, "text": "abd"})))
                .unwrap()
                .contains("digest")
        );
        assert!(
            judge_read(uri, &digest, 3, &read(json!({"uri": uri, "text": "abcd"})))
                .unwrap()
                .contains("4 bytes")
        );
        assert!(judge_read(uri, &digest, 3, &read(json!({"uri": "skill://b", "text": "abc"}))).is_some());
        assert!(judge_read(uri, &digest, 3, &json!({"error": {"code": -32602, "message": "no"}})).is_some());
    }
}
