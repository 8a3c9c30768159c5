//! Tests of the skills model and its verification: one per [`SkillVerifyError`] at least.
#![allow(clippy::unwrap_used)]

use serde_json::{Value, json};

use super::*;
use crate::schema::{Paginated, Request};

const ROOT: &str = "skill://pdf-processing/";
const SKILL_URI: &str = "skill://pdf-processing/SKILL.md";
const FORMS_URI: &str = "skill://pdf-processing/references/FORMS.md";
const SKILL_MD: &str =
    "---\nname: pdf-processing\ndescription: Extract, fill, and assemble PDF documents\n---\n\nSkill body.\n";
const FORMS_MD: &str = "Supporting content.\n";

fn digest_of(bytes: &[u8]) -> String {
    #[cfg(feature = "skills")]
    return sha256_digest(bytes);
    #[cfg(not(feature = "skills"))]
    return format!("sha256:{}", format!("{:02x}", bytes.len() % 256).repeat(32));
}

fn file(uri: &str, bytes: &str) -> Value {
    json!({"uri": uri, "digest": digest_of(bytes.as_bytes()), "size": bytes.len()})
}

/// The entry of the skill the official runner's scenarios serve: honest, two files.
fn entry_json() -> Value {
    json!({
        "uri": SKILL_URI,
        "frontmatter": {"name": "pdf-processing", "description": "Extract, fill, and assemble PDF documents"},
        "resources": [file(SKILL_URI, SKILL_MD), file(FORMS_URI, FORMS_MD)],
    })
}

fn entry() -> Skill {
    serde_json::from_value(entry_json()).unwrap()
}

fn with(change: impl FnOnce(&mut Value)) -> Skill {
    let mut value = entry_json();
    change(&mut value);
    serde_json::from_value(value).unwrap()
}

#[test]
fn entries_decode_and_round_trip() {
    let page = json!({
        "skills": [
            entry_json(),
            {"uri": "skill://gen/SKILL.md", "frontmatter": {"name": "gen", "description": "d"}, "resources": "dynamic"},
            {"uri": "skill://odd/SKILL.md", "frontmatter": {"name": "odd"}, "resources": 42},
            {"uri": "skill://short/SKILL.md", "frontmatter": {"name": "short"},
             "resources": [{"uri": "skill://short/SKILL.md", "digest": "sha256:00"}]},
            {"uri": "skill://none/SKILL.md", "frontmatter": {"name": "none"}, "_meta": {"k": 1}},
        ],
        "nextCursor": "2",
        "ttlMs": 0,
        "cacheScope": "private",
    });
    let result: ListSkillsResult = serde_json::from_value(page.clone()).unwrap();
    assert_eq!(serde_json::to_value(&result).unwrap(), page, "kept as it came");
    assert_eq!(result.next_cursor(), Some("2"));
    let skills = result.into_items();
    assert_eq!(skills[0].files().unwrap().len(), 2);
    assert_eq!(skills[0].name(), Some("pdf-processing"));
    assert_eq!(skills[0].description(), Some("Extract, fill, and assemble PDF documents"));
    assert_eq!(skills[0].root(), Some(ROOT));
    assert_eq!(skills[1].resources, Some(SkillResources::Dynamic));
    assert_eq!(skills[2].resources, Some(SkillResources::Invalid(json!(42))));
    assert!(matches!(skills[3].resources, Some(SkillResources::Invalid(_))), "a file without size");
    assert_eq!(skills[4].resources, None);
    assert_eq!(ListSkills::METHOD, "skills/list");
    assert_eq!(GetSkill::METHOD, "skills/get");
    assert_eq!(
        serde_json::to_value(GetSkillRequestParams::new(SKILL_URI)).unwrap(),
        json!({"uri": SKILL_URI})
    );
    let got: GetSkillResult =
        serde_json::from_value(json!({"resultType": "complete", "skill": entry_json()})).unwrap();
    assert_eq!(got.skill, entry());
}

#[test]
fn an_honest_entry_checks_and_resolves() {
    let skill = entry();
    assert_eq!(skill.check().unwrap().len(), 2);
    assert_eq!(skill.resolve("SKILL.md").unwrap().uri, SKILL_URI);
    assert_eq!(skill.resolve("references/FORMS.md").unwrap().uri, FORMS_URI);
    assert_eq!(skill.resolve(FORMS_URI).unwrap().uri, FORMS_URI);
    assert_eq!(skill.total_size(), Some((SKILL_MD.len() + FORMS_MD.len()) as u64));
}

#[test]
fn not_a_skill_uri() {
    for uri in [
        "skill://pdf-processing/README.md",
        "skill://SKILL.md",
        "skill:///SKILL.md",
        "skill://x/SKILL.md?v=1",
    ] {
        let skill = with(|v| v["uri"] = json!(uri));
        assert_eq!(skill.check(), Err(SkillVerifyError::NotASkillUri { uri: uri.into() }), "{uri}");
    }
}

#[test]
fn the_name_must_be_the_last_segment_of_the_path() {
    let renamed = with(|v| v["frontmatter"]["name"] = json!("billing"));
    assert_eq!(
        renamed.check(),
        Err(SkillVerifyError::NameMismatch {
            uri: SKILL_URI.into(),
            expected: "pdf-processing".into(),
            actual: Some(json!("billing")),
        })
    );
    let nameless = with(|v| drop(v["frontmatter"].as_object_mut().unwrap().remove("name")));
    assert!(matches!(nameless.check(), Err(SkillVerifyError::NameMismatch { actual: None, .. })));
    let numeric = with(|v| v["frontmatter"]["name"] = json!(7));
    assert!(matches!(numeric.check(), Err(SkillVerifyError::NameMismatch { actual: Some(_), .. })));
    // A prefix, and a percent-encoded name.
    let nested: Skill = serde_json::from_value(json!({
        "uri": "skill://acme/billing/r%C3%A9sum%C3%A9/SKILL.md",
        "frontmatter": {"name": "résumé", "description": "d"},
        "resources": [file("skill://acme/billing/r%C3%A9sum%C3%A9/SKILL.md", "x")],
    }))
    .unwrap();
    assert_eq!(nested.path_name().as_deref(), Some("résumé"));
    assert!(nested.check().is_ok());
}

#[test]
fn resources_must_be_a_list_of_files() {
    for resources in [None, Some(json!(42)), Some(json!([{"uri": SKILL_URI}])), Some(json!("static"))] {
        let skill = with(|v| match &resources {
            Some(r) => v["resources"] = r.clone(),
            None => drop(v.as_object_mut().unwrap().remove("resources")),
        });
        assert_eq!(
            skill.check(),
            Err(SkillVerifyError::MissingResources { uri: SKILL_URI.into() }),
            "{resources:?}"
        );
    }
    let dynamic = with(|v| v["resources"] = json!("dynamic"));
    assert_eq!(dynamic.check(), Err(SkillVerifyError::Dynamic { uri: SKILL_URI.into() }));
}

#[test]
fn the_entry_lists_its_skill_md_once_and_nothing_outside() {
    let without = with(|v| v["resources"] = json!([file(FORMS_URI, FORMS_MD)]));
    assert_eq!(without.check(), Err(SkillVerifyError::SkillMdNotListed { uri: SKILL_URI.into() }));
    let twice = with(|v| v["resources"].as_array_mut().unwrap().push(file(FORMS_URI, FORMS_MD)));
    assert_eq!(twice.check(), Err(SkillVerifyError::DuplicateFile { uri: FORMS_URI.into() }));
    for outside in [
        "skill://pdf-processing-evil/x.md",
        "skill://other/SKILL.md",
        "skill://pdf-processing/../other/SKILL.md",
        "skill://pdf-processing/a/%2e%2E/b",
        "skill://pdf-processing/a//b",
        "skill://pdf-processing/a%2Fb",
        "skill://pdf-processing/a?x=1",
        "skill://pdf-processing/",
    ] {
        let skill = with(|v| v["resources"].as_array_mut().unwrap().push(file(outside, "x")));
        assert_eq!(
            skill.check(),
            Err(SkillVerifyError::OutsideSkill { skill: SKILL_URI.into(), uri: outside.into() }),
            "{outside}"
        );
    }
}

#[test]
fn digests_are_sha256_in_lowercase_hex() {
    for digest in ["sha256:abc", "md5:00", &format!("sha256:{}", "A".repeat(64)), &"a".repeat(64)] {
        let skill = with(|v| v["resources"][1]["digest"] = json!(digest));
        assert_eq!(
            skill.check(),
            Err(SkillVerifyError::MalformedDigest { uri: FORMS_URI.into(), digest: digest.into() }),
            "{digest}"
        );
    }
}

#[test]
fn the_limits_are_counted_from_the_entry() {
    let files = |n: usize| {
        let mut list = vec![file(SKILL_URI, SKILL_MD)];
        list.extend((1..n).map(|i| file(&format!("{ROOT}f{i}.md"), "x")));
        list
    };
    assert!(with(|v| v["resources"] = json!(files(MAX_SKILL_FILES))).check().is_ok());
    assert_eq!(
        with(|v| v["resources"] = json!(files(MAX_SKILL_FILES + 1))).check(),
        Err(SkillVerifyError::TooManyFiles { uri: SKILL_URI.into(), count: 513, limit: 512 })
    );
    let forms_size = MAX_SKILL_BYTES - SKILL_MD.len() as u64;
    assert!(with(|v| v["resources"][1]["size"] = json!(forms_size)).check().is_ok());
    assert_eq!(
        with(|v| v["resources"][1]["size"] = json!(forms_size + 1)).check(),
        Err(SkillVerifyError::TooLarge {
            uri: SKILL_URI.into(),
            total: MAX_SKILL_BYTES + 1,
            limit: MAX_SKILL_BYTES
        })
    );
    // Sizes that would overflow a sum saturate, and are still too large.
    assert!(matches!(
        with(|v| v["resources"][1]["size"] = json!(u64::MAX)).check(),
        Err(SkillVerifyError::TooLarge { total: u64::MAX, .. })
    ));
}

#[test]
fn paths_name_listed_files_only() {
    let skill = entry();
    assert_eq!(
        skill.resolve("references/SECRET.md"),
        Err(SkillVerifyError::Unlisted {
            skill: SKILL_URI.into(),
            uri: format!("{ROOT}references/SECRET.md")
        })
    );
    assert!(matches!(
        skill.resolve("skill://pdf-processing/scripts/x.py"),
        Err(SkillVerifyError::Unlisted { .. })
    ));
    for path in [
        "",
        "../other/SKILL.md",
        "references/../SKILL.md",
        "/etc/passwd",
        "a//b",
        "x?y",
        "skill://other/SKILL.md",
    ] {
        assert!(matches!(skill.resolve(path), Err(SkillVerifyError::InvalidPath { .. })), "{path:?}");
    }
    // An entry that fails its own check resolves nothing.
    let dynamic = with(|v| v["resources"] = json!("dynamic"));
    assert!(matches!(dynamic.resolve("SKILL.md"), Err(SkillVerifyError::Dynamic { .. })));
}

#[test]
fn frontmatter_is_compared_field_by_field() {
    let skill = entry();
    assert_eq!(skill.compare_frontmatter(SKILL_MD.as_bytes()), Ok(()));
    let drifted = SKILL_MD.replace("Extract, fill, and assemble PDF documents", "Exfiltrate credentials");
    assert_eq!(
        skill.compare_frontmatter(drifted.as_bytes()),
        Err(SkillVerifyError::FrontmatterMismatch {
            uri: SKILL_URI.into(),
            field: "description".into(),
            expected: Some(json!("Extract, fill, and assemble PDF documents")),
            actual: Some(json!("Exfiltrate credentials")),
        })
    );
    let extra = SKILL_MD.replace("---\n\n", "allowed-tools: Bash\n---\n\n");
    assert!(matches!(
        skill.compare_frontmatter(extra.as_bytes()),
        Err(SkillVerifyError::FrontmatterMismatch { ref field, expected: None, actual: Some(_), .. }) if field == "allowed-tools"
    ));
    let fewer = with(|v| v["frontmatter"]["license"] = json!("MIT"));
    assert!(matches!(
        fewer.compare_frontmatter(SKILL_MD.as_bytes()),
        Err(SkillVerifyError::FrontmatterMismatch { ref field, expected: Some(_), actual: None, .. }) if field == "license"
    ));
    // Numbers by value, nested objects by content.
    let versioned = with(|v| v["frontmatter"]["metadata"] = json!({"version": 2, "tags": ["a", 1.5]}));
    let file = SKILL_MD.replace("---\n\n", "metadata:\n  tags: [a, 1.50]\n  version: 2.0\n---\n\n");
    assert_eq!(versioned.compare_frontmatter(file.as_bytes()), Ok(()));
    assert!(matches!(
        skill.compare_frontmatter(b"no frontmatter"),
        Err(SkillVerifyError::Frontmatter { source: FrontmatterError::Missing, .. })
    ));
}

#[cfg(feature = "skills")]
mod verification {
    use super::*;
    use crate::schema::{BlobResourceContents, ReadResourceResult, TextResourceContents};

    fn read_result(contents: Value) -> ReadResourceResult {
        serde_json::from_value(json!({"contents": contents})).unwrap()
    }

    #[test]
    fn honest_files_verify() {
        let skill = entry();
        assert_eq!(skill.verify("SKILL.md", SKILL_MD.as_bytes()), Ok(()));
        assert_eq!(skill.verify("references/FORMS.md", FORMS_MD.as_bytes()), Ok(()));
        let text = read_result(json!([{"uri": FORMS_URI, "mimeType": "text/markdown", "text": FORMS_MD}]));
        assert_eq!(skill.verify_read("references/FORMS.md", &text).unwrap(), FORMS_MD.as_bytes());
        let blob = ReadResourceResult {
            contents: vec![ResourceContents::Blob(BlobResourceContents {
                uri: SKILL_URI.into(),
                blob: "LS0tCm5hbWU6IHBkZi1wcm9jZXNzaW5nCmRlc2NyaXB0aW9uOiBFeHRyYWN0LCBmaWxsLCBhbmQgYXNzZW1ibGUgUERGIGRvY3VtZW50cwotLS0KClNraWxsIGJvZHkuCg==".into(),
                ..Default::default()
            })],
            ..Default::default()
        };
        assert_eq!(skill.verify_read("SKILL.md", &blob).unwrap(), SKILL_MD.as_bytes());
    }

    /// The official runner's `sep-2640-client-verify-digest`: same length, other bytes.
    #[test]
    fn a_wrong_digest() {
        let tampered = SKILL_MD.replace("Skill body.", "Evil body!!");
        assert_eq!(
            entry().verify(SKILL_URI, tampered.as_bytes()),
            Err(SkillVerifyError::DigestMismatch {
                uri: SKILL_URI.into(),
                expected: digest_of(SKILL_MD.as_bytes()),
                actual: digest_of(tampered.as_bytes()),
            })
        );
    }

    /// `sep-2640-client-verify-size`: bytes the entry did not account for, found before hashing.
    #[test]
    fn a_wrong_size() {
        let padded = format!("{SKILL_MD}extra bytes the entry did not account for\n");
        assert_eq!(
            entry().verify("SKILL.md", padded.as_bytes()),
            Err(SkillVerifyError::SizeMismatch {
                uri: SKILL_URI.into(),
                expected: SKILL_MD.len() as u64,
                actual: padded.len() as u64,
            })
        );
    }

    /// `sep-2640-client-verify-frontmatter`: the entry's digest matches the file, whose
    /// frontmatter says something else.
    #[test]
    fn a_frontmatter_that_differs_from_the_entry() {
        let drifted = SKILL_MD.replace("Extract, fill, and assemble PDF documents", "Exfiltrate credentials");
        let skill = with(|v| v["resources"][0] = file(SKILL_URI, &drifted));
        assert!(matches!(
            skill.verify("SKILL.md", drifted.as_bytes()),
            Err(SkillVerifyError::FrontmatterMismatch { ref field, .. }) if field == "description"
        ));
        // A supporting file's text is not frontmatter.
        assert_eq!(skill.verify("references/FORMS.md", FORMS_MD.as_bytes()), Ok(()));
    }

    #[test]
    fn an_unreadable_frontmatter() {
        let broken = "---\nname: pdf-processing\ndescription: a: b\n---\n";
        let skill = with(|v| v["resources"][0] = file(SKILL_URI, broken));
        assert!(matches!(
            skill.verify("SKILL.md", broken.as_bytes()),
            Err(SkillVerifyError::Frontmatter { source: FrontmatterError::Syntax { line: 3, .. }, .. })
        ));
    }

    #[test]
    fn an_unlisted_file_is_refused_whatever_its_bytes() {
        assert!(matches!(entry().verify("references/OTHER.md", b""), Err(SkillVerifyError::Unlisted { .. })));
    }

    #[test]
    fn read_results_must_hold_the_file_once() {
        let skill = entry();
        let text = |uri: &str| json!({"uri": uri, "text": FORMS_MD});
        assert_eq!(
            skill.verify_read(FORMS_URI, &read_result(json!([text(SKILL_URI)]))),
            Err(SkillVerifyError::NoContent { uri: FORMS_URI.into() })
        );
        assert_eq!(
            skill.verify_read(FORMS_URI, &read_result(json!([text(FORMS_URI), text(FORMS_URI)]))),
            Err(SkillVerifyError::AmbiguousContent { uri: FORMS_URI.into(), count: 2 })
        );
        assert_eq!(
            skill.verify_read(FORMS_URI, &read_result(json!([{"uri": FORMS_URI, "blob": "not base64!"}]))),
            Err(SkillVerifyError::BadContent { uri: FORMS_URI.into() })
        );
        assert_eq!(
            skill.verify_read(FORMS_URI, &read_result(json!([{"uri": FORMS_URI}]))),
            Err(SkillVerifyError::BadContent { uri: FORMS_URI.into() })
        );
        // The wrong bytes in a well-formed result.
        let other = ReadResourceResult {
            contents: vec![ResourceContents::Text(TextResourceContents {
                uri: FORMS_URI.into(),
                text: "Supporting content!\n".into(),
                ..Default::default()
            })],
            ..Default::default()
        };
        assert!(matches!(skill.verify_read(FORMS_URI, &other), Err(SkillVerifyError::DigestMismatch { .. })));
    }

    #[test]
    fn errors_name_what_was_expected() {
        let error = SkillVerifyError::SizeMismatch { uri: FORMS_URI.into(), expected: 20, actual: 21 };
        assert_eq!(error.to_string(), format!("{FORMS_URI} is 21 bytes, the entry says 20"));
        let error = SkillVerifyError::FrontmatterMismatch {
            uri: SKILL_URI.into(),
            field: "license".into(),
            expected: Some(json!("MIT")),
            actual: None,
        };
        assert_eq!(
            error.to_string(),
            format!("{SKILL_URI}: frontmatter field \"license\" is absent in the file, \"MIT\" in the entry")
        );
    }
}
