//! Skills end to end (SEP-2640): the demo server as a real child process (`--skills`, and each
//! `--skill-bug`), over stdio and over Streamable HTTP. An honest skill's `SKILL.md` and then its
//! `references/FORMS.md` are read (the positive control the official runner lacks); every planted
//! mistake is refused with its typed error and no bytes; nothing is fetched at connect or when
//! listing, which the server's own log of the files it served shows (`demo-server: read skill
//! file <uri>` on its stderr).

mod common;

use std::io::{BufRead, BufReader, Read};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::{builder, demo_server, demo_server_path, wait_until};
use mcp_smol::mcp_sansio::ProtocolVersion;
use mcp_smol::mcp_sansio::http::HttpConfig;
use mcp_smol::{Client, ClientApi, ClientBuilder, Skill, SkillCache, SkillError, SkillVerifyError};

const PDF: &str = "skill://pdf-processing/SKILL.md";
const FORMS: &str = "skill://pdf-processing/references/FORMS.md";
const REFUNDS: &str = "skill://acme/billing/refunds/SKILL.md";

/// The lines the server wrote to stderr, as they come.
type Log = Arc<Mutex<Vec<String>>>;

/// The files the server says it served, in order.
fn reads(log: &Log) -> Vec<String> {
    let log = log.lock().unwrap();
    log.iter()
        .filter_map(|line| line.strip_prefix("demo-server: read skill file ").map(str::to_owned))
        .collect()
}

/// Waits until the server has logged `n` reads (its stderr comes on a pipe of its own), then
/// returns them all.
fn reads_after(log: &Log, n: usize) -> Vec<String> {
    wait_until(Duration::from_secs(5), || reads(log).len() >= n);
    // Anything more would come at once with them: give it a moment to show.
    std::thread::sleep(Duration::from_millis(50));
    reads(log)
}

/// The demo server over stdio with `args`, the client declaring the skills extension.
async fn connect(args: &[&str], client: ClientBuilder) -> (Client, Log) {
    let log: Log = Arc::default();
    let sink = Arc::clone(&log);
    let command = demo_server().args(args).stderr_to(move |line| sink.lock().unwrap().push(line.to_owned()));
    let client = client.spawn_stdio(&command).await.expect("connect");
    (client, log)
}

async fn skills_server(args: &[&str]) -> (Client, Log) {
    connect(args, builder().skills()).await
}

fn verify_error(result: Result<bytes::Bytes, SkillError>) -> SkillVerifyError {
    match result {
        Err(SkillError::Verify(error)) => error,
        Ok(bytes) => panic!("expected a refusal, got {} bytes", bytes.len()),
        Err(other) => panic!("expected a verification error, got {other:?}"),
    }
}

/// The host's way with an honest skill: list, load `SKILL.md`, and only once it verified, read
/// the file it points to.
async fn load_pdf_skill_and_its_forms(client: &Client) -> (Skill, String) {
    let skills = client.list_all_skills().await.expect("list");
    let skill = skills.into_iter().find(|s| s.uri == PDF).expect("pdf-processing is listed");
    let instructions = client.read_skill_file(&skill, "SKILL.md").await.expect("SKILL.md verifies");
    let instructions = String::from_utf8(instructions.to_vec()).unwrap();
    assert!(instructions.contains("read `references/FORMS.md` first"), "{instructions}");
    let forms = client.read_skill_file(&skill, "references/FORMS.md").await.expect("FORMS.md verifies");
    (skill, String::from_utf8(forms.to_vec()).unwrap())
}

#[test]
fn an_honest_skill_is_read_only_when_needed_and_only_verified() {
    smol::block_on(async {
        // One skill per page: listing takes two requests.
        let (client, log) = skills_server(&["--skills", "--page-size", "1"]).await;
        assert!(client.offers_skills());
        let listed = client.list_all_skills().await.unwrap();
        assert_eq!(listed.iter().map(|s| s.uri.as_str()).collect::<Vec<_>>(), [PDF, REFUNDS]);
        assert_eq!(client.get_skill(REFUNDS).await.unwrap(), listed[1]);
        let (_, forms) = load_pdf_skill_and_its_forms(&client).await;
        assert!(forms.starts_with("# Forms\n"), "{forms}");
        // The other skill: a folded description and a flow list in its frontmatter.
        let refunds = client.read_skill_file(&listed[1], "SKILL.md").await.unwrap();
        assert!(refunds.starts_with(b"---\nname: refunds\n"));
        let email = REFUNDS.replace("SKILL.md", "examples/email.md");
        assert!(client.read_skill_file(&listed[1], &email).await.unwrap().starts_with(b"Dear customer"));
        // Exactly what was asked for, in that order: nothing at connect, nothing when listing.
        assert_eq!(
            reads_after(&log, 4),
            [PDF, FORMS, REFUNDS, "skill://acme/billing/refunds/examples/email.md"],
            "the server served these files"
        );
        client.close().await;
    });
}

#[test]
fn connecting_and_listing_fetch_no_file() {
    smol::block_on(async {
        let (client, log) = skills_server(&["--skills"]).await;
        let requests = client.stats().requests_tracked;
        client.list_all_skills().await.unwrap();
        client.get_skill(PDF).await.unwrap();
        assert_eq!(client.stats().requests_tracked, requests + 2, "skills/list and skills/get, nothing else");
        // A request after them: its answer comes after anything they made the server do.
        client.ping().await.unwrap();
        std::thread::sleep(Duration::from_millis(100));
        assert!(reads(&log).is_empty(), "{:?}", reads(&log));
        client.close().await;
    });
}

#[test]
fn a_wrong_digest_is_refused_with_what_was_expected() {
    smol::block_on(async {
        let (client, log) = skills_server(&["--skill-bug", "digest"]).await;
        let skill = client.get_skill(PDF).await.unwrap();
        client.read_skill_file(&skill, "SKILL.md").await.expect("SKILL.md is fine");
        let error = verify_error(client.read_skill_file(&skill, "references/FORMS.md").await);
        let listed = skill.file(FORMS).unwrap();
        match error {
            SkillVerifyError::DigestMismatch { uri, expected, actual } => {
                assert_eq!(uri, FORMS);
                assert_eq!(expected, listed.digest);
                assert_ne!(actual, expected);
                assert!(actual.starts_with("sha256:"));
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(reads_after(&log, 2), [PDF, FORMS]);
        client.close().await;
    });
}

#[test]
fn a_wrong_size_is_refused() {
    smol::block_on(async {
        let (client, _log) = skills_server(&["--skill-bug", "size"]).await;
        let skill = client.get_skill(PDF).await.unwrap();
        let error = verify_error(client.read_skill_file(&skill, "references/FORMS.md").await);
        let expected = skill.file(FORMS).unwrap().size;
        assert!(
            matches!(error, SkillVerifyError::SizeMismatch { ref uri, expected: e, actual } if uri == FORMS && e == expected && actual > expected),
            "{error:?}"
        );
        client.close().await;
    });
}

#[test]
fn a_skill_md_whose_frontmatter_differs_from_its_entry_is_not_loaded() {
    smol::block_on(async {
        let (client, log) = skills_server(&["--skill-bug", "frontmatter"]).await;
        let skill = client.get_skill(PDF).await.unwrap();
        let error = verify_error(client.read_skill_file(&skill, "SKILL.md").await);
        assert_eq!(
            error,
            SkillVerifyError::FrontmatterMismatch {
                uri: PDF.into(),
                field: "description".into(),
                expected: Some("Extract, fill, and assemble PDF documents".into()),
                actual: Some("Exfiltrate credentials".into()),
            }
        );
        // A host that follows the rule reads nothing more of the skill.
        assert_eq!(reads_after(&log, 1), [PDF]);
        client.close().await;
    });
}

#[test]
fn a_file_the_entry_does_not_list_is_refused_without_being_fetched() {
    smol::block_on(async {
        let (client, log) = skills_server(&["--skill-bug", "unlisted"]).await;
        let skill = client.get_skill(PDF).await.unwrap();
        client.read_skill_file(&skill, "SKILL.md").await.expect("SKILL.md is fine");
        let requests = client.stats().requests_tracked;
        // SKILL.md points to it, the server serves it, the entry leaves it out.
        let error = verify_error(client.read_skill_file(&skill, "scripts/extract.py").await);
        assert_eq!(
            error,
            SkillVerifyError::Unlisted {
                skill: PDF.into(),
                uri: "skill://pdf-processing/scripts/extract.py".into()
            }
        );
        assert_eq!(client.stats().requests_tracked, requests, "nothing was sent");
        let error = verify_error(client.read_skill_file(&skill, "../other/SKILL.md").await);
        assert!(matches!(error, SkillVerifyError::InvalidPath { .. }), "{error:?}");
        client.ping().await.unwrap();
        assert_eq!(reads_after(&log, 1), [PDF]);
        client.close().await;
    });
}

#[test]
fn a_name_that_is_not_the_last_segment_of_the_path_is_refused_before_reading() {
    smol::block_on(async {
        let (client, log) = skills_server(&["--skill-bug", "name"]).await;
        let skill = client.get_skill(REFUNDS).await.unwrap();
        let error = verify_error(client.read_skill_file(&skill, "SKILL.md").await);
        assert_eq!(
            error,
            SkillVerifyError::NameMismatch {
                uri: REFUNDS.into(),
                expected: "refunds".into(),
                actual: Some("refund".into())
            }
        );
        client.ping().await.unwrap();
        assert!(reads(&log).is_empty());
        client.close().await;
    });
}

#[test]
fn skills_over_the_limits_are_refused_from_their_entry() {
    smol::block_on(async {
        let (client, log) = skills_server(&["--skill-bug", "limits"]).await;
        let skills = client.list_all_skills().await.unwrap();
        assert_eq!(skills.len(), 4);
        let requests = client.stats().requests_tracked;
        let many = skills.iter().find(|s| s.uri == "skill://demo/too-many/SKILL.md").unwrap();
        let error = verify_error(client.read_skill_file(many, "SKILL.md").await);
        assert_eq!(error, SkillVerifyError::TooManyFiles { uri: many.uri.clone(), count: 513, limit: 512 });
        let large = skills.iter().find(|s| s.uri == "skill://demo/too-large/SKILL.md").unwrap();
        let error = verify_error(client.read_skill_file(large, "SKILL.md").await);
        assert_eq!(
            error,
            SkillVerifyError::TooLarge {
                uri: large.uri.clone(),
                total: 16 * 1024 * 1024 + 2,
                limit: 16 * 1024 * 1024
            }
        );
        assert_eq!(client.stats().requests_tracked, requests, "nothing was sent");
        // The skills within the limits are still fine.
        load_pdf_skill_and_its_forms(&client).await;
        assert_eq!(reads_after(&log, 2), [PDF, FORMS]);
        client.close().await;
    });
}

#[test]
fn without_the_extension_on_both_sides_nothing_is_sent() {
    smol::block_on(async {
        let (client, _log) = skills_server(&[]).await;
        assert!(!client.offers_skills());
        let requests = client.stats().requests_tracked;
        assert!(matches!(client.list_skills(None).await, Err(SkillError::NotOffered)));
        assert!(matches!(client.get_skill(PDF).await, Err(SkillError::NotOffered)));
        assert_eq!(client.stats().requests_tracked, requests);
        client.close().await;

        let (client, _log) = connect(&["--skills"], builder()).await;
        assert!(client.offers_skills());
        assert!(matches!(client.list_all_skills().await, Err(SkillError::NotDeclared)));
        client.close().await;
    });
}

#[test]
fn an_unknown_skill_is_the_servers_invalid_params() {
    smol::block_on(async {
        let (client, _log) = skills_server(&["--skills"]).await;
        match client.get_skill("skill://nope/SKILL.md").await {
            Err(SkillError::Request(error)) => assert_eq!(error.code(), Some(-32602), "{error}"),
            other => panic!("{other:?}"),
        }
        client.close().await;
    });
}

#[test]
fn a_cache_serves_verified_files_again_without_fetching() {
    smol::block_on(async {
        let (client, log) = skills_server(&["--skills"]).await;
        let cache = SkillCache::new();
        let demo = cache.for_server("demo");
        let skill = client.get_skill(PDF).await.unwrap();
        let first = client.read_skill_file_cached(&demo, &skill, "SKILL.md").await.unwrap();
        let again = client.read_skill_file_cached(&demo, &skill, "SKILL.md").await.unwrap();
        assert_eq!(first, again);
        let stats = cache.stats();
        assert_eq!((stats.hits, stats.misses, stats.files), (1, 1, 1));
        // Another server's cache has nothing of it.
        let other = cache.for_server("other");
        client.read_skill_file_cached(&other, &skill, "SKILL.md").await.unwrap();
        assert_eq!(cache.stats().misses, 2);
        client.ping().await.unwrap();
        assert_eq!(reads_after(&log, 2), [PDF, PDF], "one fetch per server label");
        client.close().await;

        // A cached file is checked against the entry it is read for: a changed frontmatter with
        // the same digest is still refused.
        let (client, _log) = skills_server(&["--skills"]).await;
        let mut changed = skill.clone();
        changed.frontmatter.insert("license".into(), "MIT".into());
        let error = verify_error(client.read_skill_file_cached(&demo, &changed, "SKILL.md").await);
        assert!(
            matches!(error, SkillVerifyError::FrontmatterMismatch { ref field, .. } if field == "license")
        );
        assert_eq!(cache.stats().hits, 2);
        client.close().await;
    });
}

/// `mcp-demo-server --http 127.0.0.1:0 ARGS`, killed when dropped.
struct HttpServer {
    child: Child,
    url: String,
    log: Log,
}

impl HttpServer {
    fn start(args: &[&str]) -> Self {
        let mut child = Command::new(demo_server_path())
            .args(["--http", "127.0.0.1:0"])
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start the demo server");
        let mut url = String::new();
        BufReader::new(child.stdout.take().unwrap()).read_line(&mut url).expect("the endpoint URL");
        let log: Log = Arc::default();
        let sink = Arc::clone(&log);
        let mut stderr = BufReader::new(child.stderr.take().unwrap());
        std::thread::spawn(move || {
            let mut text = String::new();
            while stderr.read_line(&mut text).is_ok_and(|n| n > 0) {
                sink.lock().unwrap().push(text.trim_end().to_owned());
                text.clear();
            }
            let _ = stderr.read_to_string(&mut text);
        });
        HttpServer { child, url: url.trim().to_owned(), log }
    }

    async fn client(&self, versions: &[ProtocolVersion]) -> Client {
        ClientBuilder::new(mcp_smol::mcp_sansio::schema::Implementation::new("skills-http", "0"))
            .configure(|c| c.with_versions(versions))
            .skills()
            .spawn_http(HttpConfig::new(&self.url), mcp_hyper::HyperTransport::new())
            .await
            .expect("connect over HTTP")
    }
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn over_http_in_both_eras() {
    smol::block_on(async {
        for versions in [&[ProtocolVersion::V2026_07_28][..], &[ProtocolVersion::V2025_11_25][..]] {
            let server = HttpServer::start(&["--skills"]);
            let client = server.client(versions).await;
            assert_eq!(client.protocol_version(), Some(versions[0]));
            let (_, forms) = load_pdf_skill_and_its_forms(&client).await;
            assert!(forms.starts_with("# Forms\n"));
            assert_eq!(reads_after(&server.log, 2), [PDF, FORMS], "{versions:?}");
            client.close().await;

            let server = HttpServer::start(&["--skill-bug", "digest"]);
            let client = server.client(versions).await;
            let skill = client.get_skill(PDF).await.unwrap();
            let error = verify_error(client.read_skill_file(&skill, FORMS).await);
            assert!(
                matches!(error, SkillVerifyError::DigestMismatch { ref uri, .. } if uri == FORMS),
                "{error:?}"
            );
            client.close().await;
        }
    });
}
