//! The `mcp-smol` client against hostile skills servers (`mcp-adversary stdio|http skills_*`,
//! real child processes; HTTP through `mcp-hyper`), each behaviour over both transports.
//!
//! The usual promises: the affected request fails with a typed error at once (none of these
//! waits for a timeout), `echo` and `ping` still work after it, the peak memory of the case is
//! bounded, and once the client is closed no descriptor, thread or child process is left.

mod common;

use std::future::Future;
use std::time::{Duration, Instant};

use common::HttpServer;
use common::{Resources, peak_rss_bytes, reset_peak_rss, rss_bytes};
use mcp_hyper::HyperTransport;
use mcp_smol::mcp_sansio::http::HttpConfig;
use mcp_smol::mcp_sansio::schema::{
    CallToolRequestParams, Implementation, MAX_SKILL_BYTES, Skill, SkillVerifyError,
};
use mcp_smol::mcp_sansio::{ProtocolVersion, RequestError};
use mcp_smol::{CallOptions, Client, ClientApi, ClientBuilder, Error, ServerCommand, SkillError};

const MIB: usize = 1 << 20;

/// How long a failure that is due at once may take (a debug build on a busy 2-core machine).
const PROMPT: Duration = Duration::from_secs(2);

#[derive(Clone, Copy, Debug)]
enum Transport {
    Stdio,
    Http,
}

/// A client that declares skills, with every other setting at its default, pinned to the
/// `initialize` era (the adversary's).
fn builder() -> ClientBuilder {
    let legacy: Vec<_> = ProtocolVersion::LEGACY.iter().rev().copied().collect();
    ClientBuilder::new(Implementation::new("mcp-adversary-skills-tests", "0.0.0"))
        .configure(|c| c.with_versions(&legacy))
        .skills()
}

async fn connect(transport: Transport, mode: &str, server: &mut Option<HttpServer>) -> Client {
    match transport {
        Transport::Stdio => {
            let command = ServerCommand::new(common::adversary_path())
                .args(["stdio", mode])
                .shutdown_step(Duration::from_millis(300));
            builder().spawn_stdio(&command).await.expect("the handshake succeeds")
        }
        Transport::Http => {
            let started = server.insert(HttpServer::start(mode));
            builder()
                .spawn_http(HttpConfig::new(&started.url), HyperTransport::new())
                .await
                .expect("the handshake succeeds")
        }
    }
}

/// `echo` and `ping` still work, promptly.
async fn still_answers(client: &Client, tag: &str) {
    let mut params = CallToolRequestParams::new("echo");
    params.arguments = serde_json::json!({"message": tag}).as_object().cloned();
    let start = Instant::now();
    let result = client
        .call_tool_with(&params, CallOptions::default().timeout(Duration::from_secs(5)))
        .await
        .unwrap_or_else(|e| panic!("echo after {tag} failed: {e}"));
    assert_eq!(result.content[0].as_text(), Some(tag));
    client.ping().await.unwrap_or_else(|e| panic!("ping after {tag} failed: {e}"));
    assert!(start.elapsed() < PROMPT, "echo and ping after {tag} took {:?}", start.elapsed());
}

/// Runs `body` against `mode` over `transport` after a warm-up connection, then checks the
/// case's peak memory growth (under `rss_limit`) and that nothing leaked once it is over.
fn case<F: Future<Output = ()>>(
    transport: Transport,
    mode: &str,
    rss_limit: usize,
    body: impl FnOnce(Client) -> F,
) {
    let _guard = common::serial();
    let name = format!("{mode} over {transport:?}");
    smol::block_on(async {
        let mut warm = None;
        let client = connect(transport, mode, &mut warm).await;
        still_answers(&client, "warm-up").await;
        client.close().await;
        smol::spawn(async {}).await;
        drop(warm);
        let before = Resources::settled(Duration::from_millis(100), Duration::from_secs(2));
        let rss = rss_bytes();
        let resettable = reset_peak_rss();
        let mut server = None;
        let client = connect(transport, mode, &mut server).await;
        body(client).await;
        let peak = if resettable { peak_rss_bytes() } else { rss_bytes() };
        let growth = peak.saturating_sub(rss);
        eprintln!("{name}: peak RSS growth {} KiB", growth / 1024);
        assert!(growth < rss_limit, "{name}: resident memory grew by {} MiB", growth / MIB);
        drop(server);
        before.assert_nothing_leaked(&name);
    });
}

/// 120 pages with a distinct cursor of 1 MiB each: the listing returns its 120 skills and its
/// memory follows them, not the cursors (it kept every cursor before: +127 MiB); a listing whose
/// 60th cursor repeats the 30th still ends with `Error::Pagination`, quoting the cursor in part.
fn huge_cursors(transport: Transport) {
    case(transport, "skills_huge_cursors", 48 * MIB, |client| async move {
        let base = rss_bytes();
        let skills = client.list_all_skills().await.expect("120 pages of skills");
        assert_eq!(skills.len(), 120);
        assert_eq!(skills[119].name(), Some("s119"));
        // Measured here too, before the second listing: this one's memory alone.
        let growth = peak_rss_bytes().saturating_sub(base);
        assert!(growth < 48 * MIB, "120 cursors of 1 MiB cost {} MiB", growth / MIB);
        let start = Instant::now();
        match client.list_all_resources().await {
            Err(Error::Pagination { method: "resources/list", reason }) => {
                assert!(reason.contains("twice") && reason.contains(&format!("({MIB} bytes)")), "{reason}");
                assert!(reason.len() < 256, "the error quotes {} bytes", reason.len());
            }
            other => panic!("expected a repeated cursor, got {other:?}"),
        }
        assert!(start.elapsed() < Duration::from_secs(30), "the listing took {:?}", start.elapsed());
        still_answers(&client, "huge cursors").await;
        client.close().await;
    });
}

#[test]
fn huge_distinct_cursors_cost_no_memory_and_a_repeat_is_caught_over_stdio() {
    huge_cursors(Transport::Stdio);
}

#[test]
fn huge_distinct_cursors_cost_no_memory_and_a_repeat_is_caught_over_http() {
    huge_cursors(Transport::Http);
}

/// Every member name of the skill answers escaped (`"\u0073kills"`, `"\u0075ri"`, ...): the
/// client reads the same entry as from plain names, verifies the file and returns it (a
/// decision made on bytes instead of parsed JSON would see no skills, no contents).
fn escaped_keys(transport: Transport) {
    case(transport, "skills_escaped_keys", 16 * MIB, |client| async move {
        let skills = client.list_all_skills().await.expect("the listing");
        assert_eq!(skills.len(), 1);
        assert_eq!((skills[0].name(), skills[0].description()), (Some("alpha"), Some("An honest skill")));
        let skill = client.get_skill("skill://alpha/SKILL.md").await.expect("skills/get");
        assert_eq!(skill, skills[0]);
        let bytes = client.read_skill_file(&skill, "SKILL.md").await.expect("the file verifies");
        assert!(bytes.starts_with(b"---\nname: alpha\n"));
        still_answers(&client, "escaped keys").await;
        client.close().await;
    });
}

#[test]
fn escaped_member_names_read_as_plain_ones_over_stdio() {
    escaped_keys(Transport::Stdio);
}

#[test]
fn escaped_member_names_read_as_plain_ones_over_http() {
    escaped_keys(Transport::Http);
}

/// A binary skill file at the spec's limit (16 MiB in all, 21.3 MiB of base64) is read and
/// verified with the default configuration of a client that declares skills. It failed with
/// `MessageTooLarge` before: the default message limit was 16 MiB.
fn big_file(transport: Transport) {
    case(transport, "skills_big_file", 320 * MIB, |client| async move {
        let skill = client.get_skill("skill://big/SKILL.md").await.expect("skills/get");
        assert_eq!(skill.total_size(), Some(MAX_SKILL_BYTES));
        let size = skill.file("skill://big/data.bin").expect("listed").size;
        let bytes = client.read_skill_file(&skill, "data.bin").await.expect("the file at the limit is read");
        assert_eq!(u64::try_from(bytes.len()).ok(), Some(size));
        drop(bytes);
        still_answers(&client, "big file").await;
        client.close().await;
    });
}

#[test]
fn a_binary_skill_file_at_the_limit_is_read_with_the_defaults_over_stdio() {
    big_file(Transport::Stdio);
}

#[test]
fn a_binary_skill_file_at_the_limit_is_read_with_the_defaults_over_http() {
    big_file(Transport::Http);
}

/// Each broken skill is refused with the typed error that names what is wrong, at once, and
/// the honest ones beside them are read.
fn mismatches(transport: Transport) {
    case(transport, "skills_mismatch", 24 * MIB, |client| async move {
        let skills = client.list_all_skills().await.expect("the listing");
        let skill = |name: &str| -> Skill {
            skills
                .iter()
                .find(|s| s.name() == Some(name))
                .cloned()
                .unwrap_or_else(|| panic!("{name} is listed"))
        };
        let refusal = |name: &'static str, path: &'static str| {
            let skill = skill(name);
            let client = &client;
            async move {
                let start = Instant::now();
                let outcome = client.read_skill_file(&skill, path).await;
                assert!(start.elapsed() < PROMPT, "{name}: the refusal took {:?}", start.elapsed());
                match outcome {
                    Err(SkillError::Verify(error)) => error,
                    other => panic!("{name}: expected a verification error, got {other:?}"),
                }
            }
        };
        client.read_skill_file(&skill("alpha"), "SKILL.md").await.expect("the honest skill");
        // `size: N.0` is the integer N (it made the entry invalid before).
        client.read_skill_file(&skill("float-size"), "SKILL.md").await.expect("a size written as a float");
        assert!(matches!(refusal("size", "SKILL.md").await, SkillVerifyError::SizeMismatch { .. }));
        assert!(matches!(refusal("digest", "SKILL.md").await, SkillVerifyError::DigestMismatch { .. }));
        match refusal("frontmatter", "SKILL.md").await {
            SkillVerifyError::FrontmatterMismatch { field, .. } => assert_eq!(field, "description"),
            other => panic!("expected a frontmatter mismatch, got {other:?}"),
        }
        assert!(matches!(refusal("too-large", "SKILL.md").await, SkillVerifyError::TooLarge { .. }));
        assert!(matches!(refusal("fractional", "SKILL.md").await, SkillVerifyError::MissingResources { .. }));
        assert!(matches!(refusal("other-contents", "SKILL.md").await, SkillVerifyError::NoContent { .. }));
        match client.get_skill("skill://wrong/SKILL.md").await {
            Err(SkillError::WrongSkill { asked, got }) => {
                assert_eq!(
                    (asked.as_str(), got.as_str()),
                    ("skill://wrong/SKILL.md", "skill://alpha/SKILL.md")
                );
            }
            other => panic!("expected another skill's entry to be refused, got {other:?}"),
        }
        still_answers(&client, "mismatches").await;
        client.close().await;
    });
}

#[test]
fn broken_skills_are_refused_by_name_over_stdio() {
    mismatches(Transport::Stdio);
}

#[test]
fn broken_skills_are_refused_by_name_over_http() {
    mismatches(Transport::Http);
}

/// Not a mode of its own: the same server with the message limit set back to 16 MiB shows what
/// the default was, so that the test above is known to need the derived limit.
#[test]
fn with_a_16_mib_message_limit_the_file_at_the_limit_is_too_large() {
    let _guard = common::serial();
    smol::block_on(async {
        let command = ServerCommand::new(common::adversary_path()).args(["stdio", "skills_big_file"]);
        let client = builder()
            .configure(|c| c.with_max_message_size(16 * MIB))
            .spawn_stdio(&command)
            .await
            .expect("the handshake succeeds");
        let skill = client.get_skill("skill://big/SKILL.md").await.expect("skills/get");
        match client.read_skill_file(&skill, "data.bin").await {
            Err(SkillError::Request(Error::Request(RequestError::MessageTooLarge { limit }))) => {
                assert_eq!(limit, 16 * MIB);
            }
            other => panic!("expected MessageTooLarge, got {other:?}"),
        }
        client.close().await;
    });
}
