//! Hostile skills servers (SEP-2640): the `skills_*` modes, over stdio and HTTP alike.
//!
//! A skills mode is the mode's usual server (tools `echo`, `ping`) that also offers the skills
//! extension (`extensions: {"io.modelcontextprotocol/skills": {}}`) and resources, and answers
//! `skills/list`, `skills/get`, `resources/list` and `resources/read` as below. Every answer is
//! written here as JSON text, so that a mode can write what a `Value` cannot (escaped keys).
//!
//! | mode | misbehaviour |
//! |---|---|
//! | `skills_huge_cursors` | `skills/list` gives 120 pages of one skill each, every `nextCursor` a distinct 1 MiB string; `resources/list` does the same, but its 60th page gives the 30th page's cursor again |
//! | `skills_escaped_keys` | every member name of its `skills/list`, `skills/get` and `resources/read` answers is written with JSON escapes (`"\u0073kills"`, `"\u0075ri"`, `"\u0074ext"`, ...), and each result carries an escaped `"\u0074ask"` member too; the skill `alpha` is otherwise honest |
//! | `skills_big_file` | the skill `big` is at the spec's limit: its `SKILL.md` and `data.bin`, 16 MiB in all, the binary file read as a base64 blob (21.3 MiB of JSON) |
//! | `skills_mismatch` | skills broken one way each: `size` (the bytes served are longer than the entry says), `digest` (same length, other bytes), `frontmatter` (the file's description is not the entry's), `too-large` (the entry lists 17 MiB), `fractional` (a `size` of `10.5`), `other-contents` (`resources/read` answers with another URI's contents), `float-size` (an honest skill whose `size` is written `N.0`); `skills/get` of `skill://wrong/SKILL.md` answers with the entry of `alpha` |

use std::sync::OnceLock;

use serde_json::{Value, json};
use sha2::{Digest, Sha256};

/// The skills modes.
pub(crate) const MODES: &[&str] =
    &["skills_huge_cursors", "skills_escaped_keys", "skills_big_file", "skills_mismatch"];

/// The extension's identifier.
const EXTENSION: &str = "io.modelcontextprotocol/skills";

/// `skills_huge_cursors`: pages, and the length of each cursor.
const PAGES: usize = 120;
const CURSOR_BYTES: usize = 1 << 20;
/// The `resources/list` page whose cursor repeats an earlier one, and that earlier page.
const REPEAT_AT: usize = 60;
const REPEATED: usize = 30;

/// The spec's limit on one skill's files, in bytes.
const MAX_SKILL_BYTES: usize = 16 * 1024 * 1024;

/// Adds the skills extension and resources to an `initialize` result's capabilities, in a
/// skills mode.
pub(crate) fn declare(mode: &str, initialize_result: &mut Value) {
    if MODES.contains(&mode) {
        initialize_result["capabilities"]["resources"] = json!({});
        initialize_result["capabilities"]["extensions"] = json!({ EXTENSION: {} });
    }
}

/// The whole JSON-RPC response (one line of JSON text) to request `id`, when a skills mode
/// answers `method` itself; `None` for what the mode's usual server answers.
pub(crate) fn answer(mode: &str, id: &Value, method: &str, params: &Value) -> Option<String> {
    if !MODES.contains(&mode) {
        return None;
    }
    let cursor = params.get("cursor").and_then(Value::as_str);
    let uri = params.get("uri").and_then(Value::as_str).unwrap_or_default();
    let result = match (mode, method) {
        ("skills_huge_cursors", "skills/list") => huge_cursor_page(cursor, false),
        ("skills_huge_cursors", "resources/list") => huge_cursor_page(cursor, true),
        ("skills_escaped_keys", "skills/list" | "skills/get" | "resources/read") => {
            return Some(escaped(id, method));
        }
        (_, "skills/list") => {
            let entries: Vec<Value> = catalog(mode).iter().map(SkillDef::entry).collect();
            json!({"skills": entries}).to_string()
        }
        (_, "skills/get") => {
            let asked = if uri == "skill://wrong/SKILL.md" { "skill://alpha/SKILL.md" } else { uri };
            match catalog(mode).iter().find(|skill| skill.uri() == asked) {
                Some(skill) => json!({"skill": skill.entry()}).to_string(),
                None => return Some(error(id, -32602, "no such skill")),
            }
        }
        (_, "resources/read") => match read(mode, uri) {
            Some(result) => result,
            None => return Some(error(id, -32002, "resource not found")),
        },
        (_, "resources/list") => json!({"resources": []}).to_string(),
        _ => return None,
    };
    Some(format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{result}}}"#))
}

fn error(id: &Value, code: i64, message: &str) -> String {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}}).to_string()
}

/// A page of `skills_huge_cursors`: the page the cursor names (its digits before the first
/// `x`), one entry, and the next page's cursor.
fn huge_cursor_page(cursor: Option<&str>, resources: bool) -> String {
    let page: usize = cursor.and_then(|c| c.split('x').next()?.parse().ok()).unwrap_or(0);
    let next = match page + 1 {
        next if next >= PAGES => None,
        next if resources && next == REPEAT_AT => Some(huge_cursor(REPEATED)),
        next => Some(huge_cursor(next)),
    };
    let mut result = if resources {
        json!({"resources": [{"uri": format!("file:///r{page}"), "name": format!("r{page}")}]})
    } else {
        let name = format!("s{page}");
        let skill = SkillDef::honest(&name, "A skill on one page");
        json!({"skills": [skill.entry()]})
    };
    if let Some(next) = next {
        result["nextCursor"] = Value::String(next);
    }
    result.to_string()
}

/// The 1 MiB cursor of page `page`: distinct for each page.
fn huge_cursor(page: usize) -> String {
    let mut cursor = page.to_string();
    cursor.extend(std::iter::repeat_n('x', CURSOR_BYTES - cursor.len()));
    cursor
}

/// One file of a skill: its path in the skill, its bytes, and what the entry says of them.
struct FileDef {
    path: &'static str,
    bytes: Vec<u8>,
    /// The entry's `size`, written as this JSON text.
    listed_size: String,
    listed_digest: String,
    /// Served as a base64 blob, not as text.
    blob: bool,
}

struct SkillDef {
    name: String,
    description: &'static str,
    files: Vec<FileDef>,
}

impl SkillDef {
    /// A skill with one `SKILL.md` whose frontmatter is the entry's, listed truthfully.
    fn honest(name: &str, description: &'static str) -> Self {
        let text = format!("---\nname: {name}\ndescription: {description}\n---\nUse it.\n");
        SkillDef {
            name: name.to_owned(),
            description,
            files: vec![FileDef::honest("SKILL.md", text.into_bytes())],
        }
    }

    fn uri(&self) -> String {
        format!("skill://{}/SKILL.md", self.name)
    }

    fn file_uri(&self, path: &str) -> String {
        format!("skill://{}/{path}", self.name)
    }

    fn entry(&self) -> Value {
        let files: Vec<String> = self
            .files
            .iter()
            .map(|file| {
                format!(
                    r#"{{"uri":{},"digest":"{}","size":{}}}"#,
                    json!(self.file_uri(file.path)),
                    file.listed_digest,
                    file.listed_size
                )
            })
            .collect();
        let resources: Value = serde_json::from_str(&format!("[{}]", files.join(","))).unwrap_or_default();
        json!({
            "uri": self.uri(),
            "frontmatter": {"name": self.name, "description": self.description},
            "resources": resources,
        })
    }
}

impl FileDef {
    fn honest(path: &'static str, bytes: Vec<u8>) -> Self {
        let (listed_size, listed_digest) = (bytes.len().to_string(), digest(&bytes));
        FileDef { path, bytes, listed_size, listed_digest, blob: false }
    }
}

fn digest(bytes: &[u8]) -> String {
    let hash = Sha256::digest(bytes);
    let hex: String = hash.iter().map(|b| format!("{b:02x}")).collect();
    format!("sha256:{hex}")
}

/// The skills of a mode (but `skills_huge_cursors` and `skills_escaped_keys`), made once: a
/// process serves one mode, and the 16 MiB file is worth making only once.
fn catalog(mode: &str) -> &'static [SkillDef] {
    static CATALOG: OnceLock<Vec<SkillDef>> = OnceLock::new();
    CATALOG.get_or_init(|| make_catalog(mode))
}

fn make_catalog(mode: &str) -> Vec<SkillDef> {
    match mode {
        "skills_big_file" => {
            let mut skill = SkillDef::honest("big", "A skill at the limit");
            let room = MAX_SKILL_BYTES - skill.files[0].bytes.len();
            let mut data = FileDef::honest("data.bin", noise(room));
            data.blob = true;
            skill.files.push(data);
            vec![skill]
        }
        "skills_mismatch" => {
            let mut size = SkillDef::honest("size", "Longer than it says");
            size.files[0].listed_size = (size.files[0].bytes.len() - 1).to_string();
            let mut digest_skill = SkillDef::honest("digest", "Other bytes");
            digest_skill.files[0].listed_digest = digest(b"something else");
            let mut frontmatter = SkillDef::honest("frontmatter", "What the entry says");
            let text = "---\nname: frontmatter\ndescription: Something else entirely\n---\nUse it.\n";
            frontmatter.files[0] = FileDef::honest("SKILL.md", text.as_bytes().to_vec());
            let mut too_large = SkillDef::honest("too-large", "Past 16 MiB");
            let mut huge = FileDef::honest("data.bin", Vec::new());
            huge.listed_size = (17 * 1024 * 1024).to_string();
            too_large.files.push(huge);
            let mut fractional = SkillDef::honest("fractional", "A size of 10.5");
            fractional.files[0].listed_size = "10.5".to_owned();
            let other_contents = SkillDef::honest("other-contents", "Answered with another file");
            let mut float_size = SkillDef::honest("float-size", "Sizes written as floats");
            float_size.files[0].listed_size = format!("{}.0", float_size.files[0].bytes.len());
            vec![
                SkillDef::honest("alpha", "An honest skill"),
                size,
                digest_skill,
                frontmatter,
                too_large,
                fractional,
                other_contents,
                float_size,
            ]
        }
        _ => Vec::new(),
    }
}

/// A `resources/read` result for `uri` in a catalog mode.
fn read(mode: &str, uri: &str) -> Option<String> {
    for skill in catalog(mode) {
        for file in &skill.files {
            if skill.file_uri(file.path) != uri {
                continue;
            }
            let served =
                if skill.name == "other-contents" { skill.file_uri("OTHER.md") } else { uri.to_owned() };
            let contents = if file.blob {
                json!({"uri": served, "mimeType": "application/octet-stream", "blob": base64(&file.bytes)})
            } else {
                let text = String::from_utf8_lossy(&file.bytes).into_owned();
                json!({"uri": served, "mimeType": "text/markdown", "text": text})
            };
            return Some(json!({"contents": [contents]}).to_string());
        }
    }
    None
}

/// `skills_escaped_keys`: the answer to `method`, every member name escaped.
fn escaped(id: &Value, method: &str) -> String {
    let skill = SkillDef::honest("alpha", "An honest skill");
    let file = &skill.files[0];
    let entry = format!(
        r#"{{"\u0075ri":"{uri}","\u0066rontmatter":{{"\u006eame":"alpha","d\u0065scription":"An honest skill"}},"\u0072esources":[{{"\u0075ri":"{uri}","\u0064igest":"{digest}","\u0073ize":{size}}}]}}"#,
        uri = skill.uri(),
        digest = file.listed_digest,
        size = file.bytes.len(),
    );
    let result = match method {
        "skills/list" => {
            format!(r#"{{"\u0073kills":[{entry}],"\u0074ask":{{"taskId":"t1","status":"working"}}}}"#)
        }
        "skills/get" => {
            format!(r#"{{"\u0073kill":{entry},"\u0074ask":{{"taskId":"t2","status":"working"}}}}"#)
        }
        _ => {
            let text = json!(String::from_utf8_lossy(&file.bytes));
            format!(
                r#"{{"\u0063ontents":[{{"\u0075ri":"{}","\u006dimeType":"text/markdown","\u0074ext":{text}}}],"\u0074ask":{{"taskId":"t3","status":"working"}}}}"#,
                skill.uri()
            )
        }
    };
    format!(r#"{{"\u006asonrpc":"2.0","\u0069d":{id},"\u0072esult":{result}}}"#)
}

/// `n` bytes that look random (xorshift), so that nothing about them is regular.
fn noise(n: usize) -> Vec<u8> {
    let mut state = 0x9E37_79B9_7F4A_7C15_u64;
    (0..n)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 32) as u8
        })
        .collect()
}

/// Standard base64 with padding.
fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [chunk[0], chunk.get(1).copied().unwrap_or(0), chunk.get(2).copied().unwrap_or(0)];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(char::from(ALPHABET[(n >> (18 - 6 * i)) as usize & 63]));
            } else {
                out.push('=');
            }
        }
    }
    out
}
