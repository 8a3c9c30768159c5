//! Interop with a server built on rmcp 3.11.0 (`conformance/peers/rmcp-server`): the skills
//! extension (SEP-2640) as rmcp's `SkillCatalog` serves it from `skills/` (one skill,
//! `expense-report`, with `references/FORMS.md`), over stdio and Streamable HTTP, in both eras.
//! The client lists the skill, loads its `SKILL.md` verified (size, digest, and the frontmatter
//! rmcp rendered as JSON, compared with our own reading of the YAML), then the file it names,
//! and checks the bytes against the files in the repository. (rmcp reads a skill's files once,
//! when it starts: a file changed on disk afterwards is not served, so a stale entry cannot be
//! provoked here; the demo server's `--skill-bug` modes cover the refusals.)
//!
//! `.ci/interop` runs them with `MCP_RMCP_SERVER` set to the peer's binary (`.ci/install-peers`
//! builds it); plain `cargo test` skips them (`#[ignore]`).

mod rmcp;

use std::path::{Path, PathBuf};

use mcp_sansio::ProtocolVersion;
use mcp_sansio::http::HttpConfig;
use mcp_sansio::schema::Implementation;
use mcp_smol::{Client, ClientBuilder, ServerCommand};
use rmcp::{HttpPeer, peer_binary};

const SKILL: &str = "skill://expense-report/SKILL.md";

/// The peer's own skills directory, in the repository.
fn skills_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("peers/rmcp-server/skills")
}

fn builder(versions: &[ProtocolVersion]) -> ClientBuilder {
    ClientBuilder::new(Implementation::new("mcp-sansio-rmcp-skills", "0.1.0"))
        .configure(|c| c.with_versions(versions))
        .era_cache(None)
        .skills()
}

/// The host's way with the skill: list, load `SKILL.md`, then the file it names; each checked
/// against the repository's copy too.
async fn load_expense_report(client: &Client, dir: &Path) {
    assert!(client.offers_skills(), "{:?}", client.server_capabilities());
    let skills = client.list_all_skills().await.expect("skills/list");
    let skill = skills.into_iter().find(|s| s.uri == SKILL).expect("expense-report is listed");
    assert_eq!(skill.name(), Some("expense-report"));
    assert_eq!(client.get_skill(SKILL).await.expect("skills/get"), skill);
    let skill_md = client.read_skill_file(&skill, "SKILL.md").await.expect("SKILL.md verifies");
    assert_eq!(skill_md, std::fs::read(dir.join("expense-report/SKILL.md")).unwrap());
    assert!(String::from_utf8_lossy(&skill_md).contains("`references/FORMS.md`"));
    let forms = client.read_skill_file(&skill, "references/FORMS.md").await.expect("FORMS.md verifies");
    assert_eq!(forms, std::fs::read(dir.join("expense-report/references/FORMS.md")).unwrap());
}

#[test]
#[ignore = "needs the rmcp peer: run .ci/interop"]
fn stdio_skills_load_verified_in_both_eras() {
    smol::block_on(async {
        for versions in [&[ProtocolVersion::V2026_07_28][..], &[ProtocolVersion::V2025_11_25][..]] {
            let command = ServerCommand::new(peer_binary());
            let client = builder(versions).spawn_stdio(&command).await.expect("connect to the rmcp peer");
            assert_eq!(client.protocol_version(), Some(versions[0]));
            load_expense_report(&client, &skills_dir()).await;
            client.close().await;
        }
    });
}

#[test]
#[ignore = "needs the rmcp peer: run .ci/interop"]
fn http_skills_load_verified_in_both_eras() {
    smol::block_on(async {
        for versions in [&[ProtocolVersion::V2026_07_28][..], &[ProtocolVersion::V2025_11_25][..]] {
            let peer = HttpPeer::start(&[]);
            let client = builder(versions)
                .spawn_http(HttpConfig::new(&peer.url), mcp_hyper::HyperTransport::new())
                .await
                .expect("connect to the rmcp peer over HTTP");
            load_expense_report(&client, &skills_dir()).await;
            client.close().await;
        }
    });
}
