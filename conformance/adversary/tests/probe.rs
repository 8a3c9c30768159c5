//! The default (dual-era) client against legacy servers that answer its `server/discover` probe
//! badly (`mcp-adversary stdio|http probe_*`, see `src/probe.rs`), over stdio and over HTTP with
//! mcp-hyper and mcp-surf.
//!
//! Each case connects with one probe and one `initialize` (two starts of the server for one
//! that exits on the probe), settles on 2025-11-25 within about a second (the stalling cases
//! within their discover timeout and a second), works, and a second connection with the same
//! era cache sends no probe. A test that would settle on the wrong era, wait for a timeout or
//! fail the connection fails here.

mod common;

use common::HttpServer as Server;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use mcp_smol::mcp_sansio::http::HttpConfig;
use mcp_smol::mcp_sansio::schema::{CallToolRequestParams, Implementation};
use mcp_smol::mcp_sansio::{CloseReason, ProtocolVersion};
use mcp_smol::{
    CallOptions, Client, ClientApi, ClientBuilder, EraCache, Error, HttpTransport, ServerCommand,
};

/// How soon a connection must be made when nothing needs waiting out.
const PROMPT: Duration = Duration::from_millis(1500);
/// The discover timeout of the cases where the probe gets no usable answer at all.
const DISCOVER_TIMEOUT: Duration = Duration::from_millis(500);

/// A dual-era builder (the default versions) with its own era cache.
fn builder(cache: &EraCache, discover_timeout: Option<Duration>) -> ClientBuilder {
    let builder = ClientBuilder::new(Implementation::new("mcp-adversary-probe-tests", "0.0.0"))
        .era_cache(Some(cache.clone()));
    match discover_timeout {
        Some(timeout) => builder.configure(|c| c.with_discover_timeout(timeout)),
        None => builder,
    }
}

async fn echo(client: &Client, case: &str) {
    let mut params = CallToolRequestParams::new("echo");
    params.arguments = serde_json::json!({"message": case}).as_object().cloned();
    let result = client
        .call_tool_with(&params, CallOptions::default().timeout(Duration::from_secs(5)))
        .await
        .unwrap_or_else(|e| panic!("{case}: echo failed: {e}"));
    assert_eq!(result.content[0].as_text(), Some(case));
}

fn assert_legacy(case: &str, client: &Client, took: Duration, limit: Duration) {
    assert_eq!(client.protocol_version(), Some(ProtocolVersion::V2025_11_25), "{case}");
    assert!(took < limit, "{case}: connecting took {took:?} (limit {limit:?})");
}

// ----- stdio -----

/// What a stdio probe server wrote on stderr about its handshakes, over every start.
#[derive(Clone, Default)]
struct Handshakes(Arc<Mutex<Vec<String>>>);

impl Handshakes {
    fn count(&self, what: &str) -> usize {
        self.0.lock().unwrap().iter().filter(|line| line.ends_with(what)).count()
    }

    /// `(starts, probes, initializes)` once the counts stop changing (stderr is read apart).
    fn settled(&self) -> (usize, usize, usize) {
        let read =
            || (self.count("started"), self.count("got server/discover"), self.count("got initialize"));
        let mut last = read();
        let start = Instant::now();
        loop {
            std::thread::sleep(Duration::from_millis(100));
            let now = read();
            if now == last || start.elapsed() > Duration::from_secs(3) {
                return now;
            }
            last = now;
        }
    }

    fn clear(&self) {
        self.0.lock().unwrap().clear();
    }
}

fn stdio_case(mode: &str, discover_timeout: Option<Duration>, starts: usize) {
    let _guard = common::serial();
    let handshakes = Handshakes::default();
    let lines = handshakes.clone();
    let command = ServerCommand::new(common::adversary_path())
        .args(["stdio", mode])
        .shutdown_step(Duration::from_millis(300))
        .stderr_to(move |line| lines.0.lock().unwrap().push(line.to_owned()));
    let cache = EraCache::new();
    let limit = discover_timeout.map_or(PROMPT, |timeout| timeout + PROMPT);
    smol::block_on(async {
        let start = Instant::now();
        let client = builder(&cache, discover_timeout)
            .spawn_stdio(&command)
            .await
            .unwrap_or_else(|e| panic!("{mode}: connecting failed: {e}"));
        assert_legacy(mode, &client, start.elapsed(), limit);
        echo(&client, mode).await;
        client.close().await;
        assert_eq!(handshakes.settled(), (starts, 1, 1), "{mode}: (starts, probes, initializes)");

        // The era is remembered: no probe (and one start) the second time.
        handshakes.clear();
        let start = Instant::now();
        let client =
            builder(&cache, discover_timeout).spawn_stdio(&command).await.expect("second connection");
        assert_legacy(&format!("{mode} (again)"), &client, start.elapsed(), PROMPT);
        echo(&client, mode).await;
        client.close().await;
        assert_eq!(handshakes.settled(), (1, 0, 1), "{mode} (again): (starts, probes, initializes)");
    });
}

#[test]
fn stdio_a_result_without_supported_versions() {
    stdio_case("probe_no_versions", None, 1);
}

#[test]
fn stdio_an_empty_result() {
    stdio_case("probe_empty_result", None, 1);
}

#[test]
fn stdio_a_server_that_exits_on_the_probe_is_started_again() {
    stdio_case("probe_exit", None, 2);
}

#[test]
fn stdio_a_parse_error_with_a_null_id() {
    stdio_case("probe_parse_error", None, 1);
}

#[test]
fn stdio_an_invalid_request_error_with_a_null_id() {
    stdio_case("probe_null_id", None, 1);
}

#[test]
fn stdio_a_banner_line_before_anything() {
    stdio_case("probe_banner", None, 1);
}

#[test]
fn stdio_a_stalled_probe_waits_for_the_discover_timeout_only() {
    stdio_case("probe_stall", Some(DISCOVER_TIMEOUT), 1);
}

#[test]
fn stdio_an_answer_with_another_id_is_no_answer() {
    stdio_case("probe_wrong_id", Some(DISCOVER_TIMEOUT), 1);
}

#[test]
fn stdio_a_server_that_exits_on_initialize_too_fails_as_before() {
    // `false` ends at once, whatever it is sent: started twice, then the failure it always was,
    // not retriable (a wrong command line).
    let _guard = common::serial();
    let cache = EraCache::new();
    let command = ServerCommand::new("false").shutdown_step(Duration::from_millis(300));
    smol::block_on(async {
        let start = Instant::now();
        let outcome = builder(&cache, None).spawn_stdio(&command).await;
        assert!(start.elapsed() < PROMPT, "took {:?}", start.elapsed());
        match outcome {
            Err(error @ Error::Connect(CloseReason::Exited(_) | CloseReason::Eof)) => {
                assert!(!error.is_retriable(), "{error}");
            }
            Err(other) => panic!("expected the server's exit, got {other:?}"),
            Ok(_) => panic!("connected to `false`"),
        }
    });
}

// ----- HTTP -----

/// `(probes, initializes)` the server got so far, asked of it on `client`.
async fn handshakes(client: &Client) -> (u64, u64) {
    let result = client
        .call_tool_with(&CallToolRequestParams::new("handshakes"), CallOptions::default())
        .await
        .expect("the handshakes tool");
    let text = result.content[0].as_text().expect("a text").to_owned();
    let numbers: Vec<u64> = text.split(' ').filter_map(|w| w.parse().ok()).collect();
    (numbers[0], numbers[1])
}

fn http_case<T: HttpTransport>(transport: fn() -> T, mode: &str, discover_timeout: Option<Duration>) {
    let _guard = common::serial();
    let server = Server::start(mode);
    let cache = EraCache::new();
    let limit = discover_timeout.map_or(PROMPT, |timeout| timeout + PROMPT);
    smol::block_on(async {
        let start = Instant::now();
        let client = builder(&cache, discover_timeout)
            .spawn_http(HttpConfig::new(&server.url), transport())
            .await
            .unwrap_or_else(|e| panic!("{mode}: connecting failed: {e}"));
        assert_legacy(mode, &client, start.elapsed(), limit);
        echo(&client, mode).await;
        assert_eq!(handshakes(&client).await, (1, 1), "{mode}: (probes, initializes)");
        client.close().await;

        let start = Instant::now();
        let client = builder(&cache, discover_timeout)
            .spawn_http(HttpConfig::new(&server.url), transport())
            .await
            .expect("second connection");
        assert_legacy(&format!("{mode} (again)"), &client, start.elapsed(), PROMPT);
        assert_eq!(handshakes(&client).await, (1, 2), "{mode} (again): no second probe");
        client.close().await;
    });
}

macro_rules! http_cases {
    ($($name:ident: $mode:literal $(, $timeout:expr)?;)*) => {
        mod hyper {
            use super::*;
            $(
                #[test]
                fn $name() {
                    http_case(mcp_hyper::HyperTransport::new, $mode, None $(.or(Some($timeout)))?);
                }
            )*
        }
        mod surf {
            use super::*;
            $(
                #[test]
                fn $name() {
                    http_case(mcp_surf::SurfTransport::new, $mode, None $(.or(Some($timeout)))?);
                }
            )*
        }
    };
}

http_cases! {
    a_result_without_supported_versions: "probe_no_versions";
    an_empty_result: "probe_empty_result";
    a_401_without_a_challenge_on_the_probe: "probe_401";
    a_parse_error_with_a_null_id_in_a_400: "probe_parse_error";
    an_error_with_a_null_id_in_a_200: "probe_null_id";
    an_empty_200: "probe_empty_200";
    a_204: "probe_204";
    a_202: "probe_202";
    a_403: "probe_403";
    a_405: "probe_405";
    a_500: "probe_500";
    an_html_page: "probe_html";
    a_stalled_probe_waits_for_the_discover_timeout_only: "probe_stall", DISCOVER_TIMEOUT;
    an_answer_with_another_id: "probe_wrong_id";
}
