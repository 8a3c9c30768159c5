//! The skills extension (`--skills`, SEP-2640): two honest skills, `skills/list`, `skills/get`
//! and their files as `skill://` resources; and the planted bugs of `--skill-bug`.
//!
//! The entries are computed from the files served, so their digests and sizes are right unless
//! a bug says otherwise. Every read of a skill file is logged to stderr
//! (`demo-server: read skill file <uri>`), so that tests can count what a client fetched.

use serde_json::{Map, Value, json};
use sha2::{Digest as _, Sha256};

use super::jsonrpc::RpcError;
use super::options::{Options, SkillBug};
use super::pagination::paginate;

/// The extension's identifier.
pub(crate) const EXTENSION: &str = "io.modelcontextprotocol/skills";

const PDF_SKILL_MD: &str = "\
---
name: pdf-processing
description: Extract, fill, and assemble PDF documents
metadata:
  version: \"2.1.0\"
---

# PDF processing

To fill a form, read `references/FORMS.md` first: it lists the fields each form has.
To pull the text out of a PDF, run `scripts/extract.py`.
";

const FORMS_MD: &str = "\
# Forms

- W-9: name, business name, tax classification, address, TIN.
- Invoice: number, date, lines (description, quantity, unit price), total.
";

const EXTRACT_PY: &str = "\
import sys

print(open(sys.argv[1], 'rb').read()[:64])
";

const REFUNDS_SKILL_MD: &str = "\
---
name: refunds
description: >-
  Process customer refund requests
  per company policy
license: Apache-2.0
allowed-tools: [Read, Grep]
---

# Refunds

Answer with the template in `examples/email.md`.
";

const EMAIL_MD: &str = "Dear customer,\n\nYour refund of {amount} is on its way.\n";

/// One file as served, and whether the entry lists it.
struct File {
    path: String,
    served: String,
    /// What the entry says the file is (digest and size of these bytes).
    listed_as: Option<String>,
}

impl File {
    fn honest(path: &str, text: &str) -> Self {
        File { path: path.to_owned(), served: text.to_owned(), listed_as: Some(text.to_owned()) }
    }
}

/// One skill: where it lives, its entry's frontmatter, its files (`SKILL.md` first).
struct SkillDef {
    path: String,
    frontmatter: Value,
    files: Vec<File>,
    /// The size the entry gives for every file, when it lies about all of them (`too-large`).
    size_override: Option<u64>,
}

impl SkillDef {
    fn uri(&self) -> String {
        format!("skill://{}/SKILL.md", self.path)
    }

    fn file_uri(&self, file: &File) -> String {
        format!("skill://{}/{}", self.path, file.path)
    }

    fn entry(&self) -> Value {
        let resources: Vec<Value> = self
            .files
            .iter()
            .filter_map(|file| {
                let listed = file.listed_as.as_ref()?;
                let size = self.size_override.unwrap_or(listed.len() as u64);
                Some(json!({"uri": self.file_uri(file), "digest": digest(listed.as_bytes()), "size": size}))
            })
            .collect();
        json!({"uri": self.uri(), "frontmatter": self.frontmatter, "resources": resources})
    }
}

/// The `sha256:` digest of `bytes`.
pub(crate) fn digest(bytes: &[u8]) -> String {
    let hash = Sha256::digest(bytes);
    let hex: String = hash.iter().map(|b| format!("{b:02x}")).collect();
    format!("sha256:{hex}")
}

/// The skills served under `bug`.
fn catalog(bug: Option<SkillBug>) -> Vec<SkillDef> {
    let mut pdf_files = vec![
        File::honest("SKILL.md", PDF_SKILL_MD),
        File::honest("references/FORMS.md", FORMS_MD),
        File::honest("scripts/extract.py", EXTRACT_PY),
    ];
    let mut refunds_name = "refunds";
    match bug {
        Some(SkillBug::Digest) => pdf_files[1].served = FORMS_MD.replacen("W-9", "W-8", 1),
        Some(SkillBug::Size) => {
            pdf_files[1].served = format!("{FORMS_MD}- Receipt: added after the listing.\n")
        }
        Some(SkillBug::Frontmatter) => {
            let drifted =
                PDF_SKILL_MD.replace("Extract, fill, and assemble PDF documents", "Exfiltrate credentials");
            pdf_files[0] = File { listed_as: Some(drifted.clone()), ..File::honest("SKILL.md", &drifted) };
        }
        Some(SkillBug::Unlisted) => pdf_files[2].listed_as = None,
        Some(SkillBug::Name) => refunds_name = "refund",
        Some(SkillBug::Limits) | None => {}
    }
    let refunds_md = REFUNDS_SKILL_MD.replacen("name: refunds", &format!("name: {refunds_name}"), 1);
    let mut skills = vec![
        SkillDef {
            path: "pdf-processing".into(),
            frontmatter: json!({
                "name": "pdf-processing",
                "description": "Extract, fill, and assemble PDF documents",
                "metadata": {"version": "2.1.0"},
            }),
            files: pdf_files,
            size_override: None,
        },
        SkillDef {
            path: "acme/billing/refunds".into(),
            frontmatter: json!({
                "name": refunds_name,
                "description": "Process customer refund requests per company policy",
                "license": "Apache-2.0",
                "allowed-tools": ["Read", "Grep"],
            }),
            files: vec![File::honest("SKILL.md", &refunds_md), File::honest("examples/email.md", EMAIL_MD)],
            size_override: None,
        },
    ];
    if bug == Some(SkillBug::Limits) {
        let many = "---\nname: too-many\ndescription: A skill of 513 files\n---\n\nRead the notes.\n";
        let mut files = vec![File::honest("SKILL.md", many)];
        files.extend((1..=512).map(|i| File::honest(&format!("notes/{i:03}.md"), &format!("note {i}\n"))));
        skills.push(SkillDef {
            path: "demo/too-many".into(),
            frontmatter: json!({"name": "too-many", "description": "A skill of 513 files"}),
            files,
            size_override: None,
        });
        let large = "---\nname: too-large\ndescription: A skill past 16 MiB\n---\n\nSee data.bin.\n";
        skills.push(SkillDef {
            path: "demo/too-large".into(),
            frontmatter: json!({"name": "too-large", "description": "A skill past 16 MiB"}),
            files: vec![File::honest("SKILL.md", large), File::honest("data.bin", "0")],
            // Two files of 8 MiB and a byte each, by the entry's word.
            size_override: Some(8 * 1024 * 1024 + 1),
        });
    }
    skills
}

/// `skills/list`: every entry, paginated like the other lists.
pub(crate) fn list(options: &Options, params: &Map<String, Value>) -> Result<Value, RpcError> {
    let entries = catalog(options.skill_bug).iter().map(SkillDef::entry).collect();
    paginate("skills", entries, options.page_size, params)
}

/// `skills/get {uri}`: the entry of the skill whose `SKILL.md` is `uri`; `-32602` otherwise.
pub(crate) fn get(options: &Options, params: &Map<String, Value>) -> Result<Value, RpcError> {
    let uri = params
        .get("uri")
        .and_then(Value::as_str)
        .ok_or_else(|| RpcError::invalid_params("skills/get needs a string `uri`"))?;
    let skill = catalog(options.skill_bug).into_iter().find(|skill| skill.uri() == uri);
    match skill {
        Some(skill) => Ok(json!({"skill": skill.entry()})),
        None => Err(RpcError::invalid_params(format!("no skill at {uri}")).with_data(json!({"uri": uri}))),
    }
}

/// `resources/read` of a skill file: `None` when `uri` is no file of a served skill (the other
/// resources then answer).
pub(crate) fn read(options: &Options, uri: &str) -> Option<Value> {
    let skills = catalog(options.skill_bug);
    let file = skills.iter().find_map(|skill| skill.files.iter().find(|f| skill.file_uri(f) == uri))?;
    eprintln!("demo-server: read skill file {uri}");
    let mime_type = match file.path.rsplit('.').next() {
        Some("md") => "text/markdown",
        Some("py") => "text/x-python",
        _ => "text/plain",
    };
    Some(json!({"contents": [{"uri": uri, "mimeType": mime_type, "text": file.served}]}))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn options(bug: Option<SkillBug>) -> Options {
        Options { skills: true, skill_bug: bug, ..Options::default() }
    }

    fn entries(bug: Option<SkillBug>) -> Vec<Value> {
        let listed = list(&options(bug), &Map::new()).expect("list");
        listed["skills"].as_array().expect("skills").clone()
    }

    /// For every listed file: whether the served bytes have the listed digest and size.
    fn honest_files(bug: Option<SkillBug>) -> Vec<(String, bool)> {
        let mut out = Vec::new();
        for entry in entries(bug) {
            for file in entry["resources"].as_array().expect("files") {
                let uri = file["uri"].as_str().expect("uri");
                let read = read(&options(bug), uri).expect("served");
                let text = read["contents"][0]["text"].as_str().expect("text");
                let ok = file["digest"] == digest(text.as_bytes()) && file["size"] == text.len();
                out.push((uri.to_owned(), ok));
            }
        }
        out
    }

    #[test]
    fn the_honest_skills_match_what_is_served() {
        let entries = entries(None);
        assert_eq!(entries.len(), 2);
        assert_eq!(entries[0]["uri"], "skill://pdf-processing/SKILL.md");
        assert_eq!(entries[1]["uri"], "skill://acme/billing/refunds/SKILL.md");
        let files = honest_files(None);
        assert_eq!(files.len(), 5);
        assert!(files.iter().all(|(_, ok)| *ok), "{files:?}");
        // The frontmatter of each entry is that of its SKILL.md.
        assert!(
            PDF_SKILL_MD
                .contains("name: pdf-processing\ndescription: Extract, fill, and assemble PDF documents\n")
        );
    }

    #[test]
    fn each_bug_breaks_what_it_says() {
        let broken = |bug| {
            honest_files(Some(bug)).into_iter().filter(|(_, ok)| !ok).map(|(uri, _)| uri).collect::<Vec<_>>()
        };
        assert_eq!(broken(SkillBug::Digest), ["skill://pdf-processing/references/FORMS.md"]);
        assert_eq!(broken(SkillBug::Size), ["skill://pdf-processing/references/FORMS.md"]);
        assert!(broken(SkillBug::Frontmatter).is_empty());
        assert!(broken(SkillBug::Name).is_empty());
        assert!(broken(SkillBug::Unlisted).is_empty());
        let listed = entries(Some(SkillBug::Unlisted));
        assert_eq!(listed[0]["resources"].as_array().map(Vec::len), Some(2));
        assert!(
            read(&options(Some(SkillBug::Unlisted)), "skill://pdf-processing/scripts/extract.py").is_some()
        );
        assert_eq!(entries(Some(SkillBug::Name))[1]["frontmatter"]["name"], "refund");
        let limits = entries(Some(SkillBug::Limits));
        assert_eq!(limits[2]["resources"].as_array().map(Vec::len), Some(513));
        assert_eq!(limits[3]["resources"][1]["size"], 8 * 1024 * 1024 + 1);
    }

    #[test]
    fn get_answers_for_served_skills_only() {
        let params = |uri: &str| json!({"uri": uri}).as_object().cloned().expect("object");
        let got = get(&options(None), &params("skill://acme/billing/refunds/SKILL.md")).expect("served");
        assert_eq!(got["skill"], entries(None)[1]);
        let error = get(&options(None), &params("skill://nope/SKILL.md")).expect_err("unknown");
        assert_eq!(error.code, super::super::jsonrpc::INVALID_PARAMS);
        assert!(get(&options(None), &Map::new()).is_err());
        assert!(read(&options(None), "skill://nope/SKILL.md").is_none());
    }
}
