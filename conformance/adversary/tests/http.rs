//! The `mcp-smol` client with the `mcp-hyper` transport against hostile HTTP servers
//! (`mcp-adversary http <mode>`, a real child process).
//!
//! Every case checks the same promises: the affected request fails with a clear, typed error
//! within its deadline; the requests the server answers properly (`echo`, `ping`) succeed while
//! and after the bad one fails; the executor the client runs on is never held for long; the
//! peak memory of the case stays bounded; and once the client is closed, no file descriptor (TCP
//! sockets in the transport's pool included), thread or child process is left.
//!
//! The tests run one at a time (`common::serial`), each against its own server processes.

mod common;

use std::future::Future;
use std::time::{Duration, Instant};

use common::HttpServer as Server;
use common::Resources;
use futures_lite::future;
use mcp_hyper::HyperTransport;
use mcp_smol::ClientApi;
use mcp_smol::mcp_sansio::auth::{AuthConfig, AuthError, ClientInfo};
use mcp_smol::mcp_sansio::http::HttpConfig;
use mcp_smol::mcp_sansio::schema::{CallToolRequestParams, CallToolResult, Implementation};
use mcp_smol::mcp_sansio::{CloseReason, ProtocolVersion, RedirectRefusal, RequestError, TransportError};
use mcp_smol::{CallOptions, Client, ClientBuilder, Error, OAuth};

const MIB: usize = 1024 * 1024;

/// The per-call timeout of a call that is expected to run into it.
const SHORT: Duration = Duration::from_millis(500);
/// The per-call timeout of a call that is expected to fail on its own, well before it.
const LONG: Duration = Duration::from_secs(5);
/// How late a failure may come after its deadline (debug builds on a loaded 2-core machine).
const SLACK: Duration = Duration::from_millis(700);
/// How soon a failure that needs no deadline must come.
const PROMPT: Duration = Duration::from_secs(1);
/// How late a timer on the client's executor may fire while a hostile server does its worst
/// (the executor-freezing bug this guards against held timers for 1.3-3 s).
const LATE_LIMIT: Duration = Duration::from_millis(500);
/// Growth of the peak resident set allowed during one case.
const RSS_LIMIT: usize = 24 * MIB;

fn builder() -> ClientBuilder {
    ClientBuilder::new(Implementation::new("mcp-adversary-test", "0.0.0"))
        .configure(|config| config.with_versions(&[ProtocolVersion::V2025_11_25]))
}

async fn connect(url: &str) -> Client {
    builder().spawn_http(HttpConfig::new(url), HyperTransport::new()).await.expect("connecting")
}

async fn call(client: &Client, name: &str, timeout: Duration) -> Result<CallToolResult, Error> {
    client.call_tool_with(&CallToolRequestParams::new(name), CallOptions::default().timeout(timeout)).await
}

/// `echo` round trip; panics unless the text comes back.
async fn echo(client: &Client, message: &str) {
    let mut params = CallToolRequestParams::new("echo");
    params.arguments = serde_json::json!({"message": message}).as_object().cloned();
    let result = client
        .call_tool_with(&params, CallOptions::default().timeout(LONG))
        .await
        .unwrap_or_else(|e| panic!("echo {message:?} failed: {e}"));
    assert_eq!(result.content[0].as_text(), Some(message));
}

/// A few well-formed calls, as the unaffected traffic beside a bad one.
async fn good_traffic(client: &Client, tag: &str) {
    for i in 0..3 {
        echo(client, &format!("{tag} {i}")).await;
        client.ping().await.unwrap_or_else(|e| panic!("ping ({tag}) failed: {e}"));
    }
}

/// `echo` with message `n`, its outcome returned.
async fn call_echo(client: &Client, n: usize) -> Result<CallToolResult, Error> {
    let mut params = CallToolRequestParams::new("echo");
    params.arguments = serde_json::json!({"message": n.to_string()}).as_object().cloned();
    client.call_tool_with(&params, CallOptions::default().timeout(LONG)).await
}

async fn timed<T>(work: impl Future<Output = T>) -> (T, Duration) {
    let start = Instant::now();
    let out = work.await;
    (out, start.elapsed())
}

/// Measures how late a 10 ms timer fires on smol's global executor, where the client's driver
/// and connections run, for as long as it is alive: a task that holds the executor shows.
struct Lateness {
    worst_micros: std::sync::Arc<std::sync::atomic::AtomicU64>,
    _task: smol::Task<()>,
}

impl Lateness {
    fn start() -> Self {
        let worst_micros = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
        let worst = worst_micros.clone();
        let task = smol::spawn(async move {
            let period = Duration::from_millis(10);
            loop {
                let start = Instant::now();
                smol::Timer::after(period).await;
                let late = start.elapsed().saturating_sub(period);
                let micros = u64::try_from(late.as_micros()).unwrap_or(u64::MAX);
                worst.fetch_max(micros, std::sync::atomic::Ordering::Relaxed);
            }
        });
        Self { worst_micros, _task: task }
    }

    fn worst(&self) -> Duration {
        Duration::from_micros(self.worst_micros.load(std::sync::atomic::Ordering::Relaxed))
    }
}

/// Calls tool `bad` (with per-call timeout `timeout`) while well-formed calls run beside it,
/// then one more `echo` once it failed; returns its error and how long it took. Meanwhile the
/// executor must stay responsive.
async fn bad_call_beside_good_ones(client: &Client, bad: &str, timeout: Duration) -> (Error, Duration) {
    let lateness = Lateness::start();
    let ((result, elapsed), ()) =
        future::zip(timed(call(client, bad, timeout)), good_traffic(client, bad)).await;
    let late = lateness.worst();
    assert!(late < LATE_LIMIT, "{bad}: the executor was held for {late:?}");
    let error = match result {
        Ok(result) => panic!("{bad}: the call succeeded with {result:?}"),
        Err(error) => error,
    };
    echo(client, &format!("after {bad}")).await;
    (error, elapsed)
}

/// One session with a correct exchange, closed: starts the runtime threads that start lazily,
/// so that they are in the baseline.
async fn warm_up(url: &str) {
    let client = connect(url).await;
    echo(&client, "warm-up").await;
    client.close().await;
}

/// Warms up against `warm_url`, runs `case`, then checks the peak memory of the case and that
/// nothing leaked once it is over.
fn leak_checked<F: Future<Output = ()>>(
    name: &str,
    warm_url: &str,
    rss_limit: usize,
    case: impl FnOnce() -> F,
) {
    smol::block_on(async {
        warm_up(warm_url).await;
        let before = Resources::settled(Duration::from_millis(100), Duration::from_secs(2));
        let rss = common::rss_bytes();
        let peak_resettable = common::reset_peak_rss();
        case().await;
        let peak = if peak_resettable { common::peak_rss_bytes() } else { common::rss_bytes() };
        let growth = peak.saturating_sub(rss);
        assert!(
            growth < rss_limit,
            "{name}: resident memory grew by {} KiB (limit {} KiB)",
            growth / 1024,
            rss_limit / 1024
        );
        before.assert_nothing_leaked(name);
    });
}

/// Closes `client` while a call to `bad` (which never gets its response) is in flight: closing
/// must not wait for it, and the call fails as closed by the client.
async fn close_during(client: Client, bad: &str) {
    let pending = call(&client, bad, LONG);
    let closing = async {
        smol::Timer::after(Duration::from_millis(100)).await;
        timed(client.close()).await.1
    };
    let (result, closed_after) = future::zip(pending, closing).await;
    assert!(closed_after < PROMPT, "{bad}: closing took {closed_after:?} with the call in flight");
    match result {
        Err(Error::Request(RequestError::ConnectionClosed(CloseReason::Local))) => {}
        other => panic!("{bad}: expected the call to fail as closed, got {other:?}"),
    }
}

fn assert_timed_out(case: &str, error: &Error, elapsed: Duration, timeout: Duration) {
    assert!(error.is_timeout(), "{case}: expected a timeout, got {error:?}");
    assert!(elapsed >= timeout, "{case}: failed after {elapsed:?}, before its timeout of {timeout:?}");
    assert!(
        elapsed < timeout + SLACK,
        "{case}: failed after {elapsed:?}, long after its timeout of {timeout:?}"
    );
}

fn assert_prompt(case: &str, elapsed: Duration) {
    assert!(elapsed < PROMPT, "{case}: took {elapsed:?} to fail; it needs no deadline");
}

/// The `TransportError` of a `RequestError::Transport`, or a panic.
fn transport_error<'e>(case: &str, error: &'e Error) -> &'e TransportError {
    match error {
        Error::Request(RequestError::Transport(error)) => error,
        other => panic!("{case}: expected a transport error, got {other:?}"),
    }
}

/// The message of a `RequestError::Transport`, or a panic.
fn transport_message(case: &str, error: &Error) -> String {
    transport_error(case, error).to_string()
}

// ----- the cases -----

#[test]
fn stalled_response_head_times_out() {
    let _guard = common::serial();
    let server = Server::start("stall_headers");
    leak_checked("stall_headers", &server.url, RSS_LIMIT, || async {
        let client = connect(&server.url).await;
        let (error, elapsed) = bad_call_beside_good_ones(&client, "stall_headers", SHORT).await;
        assert_timed_out("stall_headers", &error, elapsed, SHORT);
        close_during(client, "stall_headers").await;
    });
}

#[test]
fn stalled_response_body_times_out() {
    // Half a JSON body; half an event; an event stream that only ever sends keep-alive comments
    // (which are no progress: they must not extend the call).
    let _guard = common::serial();
    let modes = ["stall_body_json", "stall_body_sse", "keep_alive_sse"];
    let servers = modes.map(Server::start);
    leak_checked("stall_body", &servers[0].url, RSS_LIMIT, || async {
        for (mode, server) in modes.into_iter().zip(&servers) {
            let client = connect(&server.url).await;
            let (error, elapsed) = bad_call_beside_good_ones(&client, mode, SHORT).await;
            assert_timed_out(mode, &error, elapsed, SHORT);
            close_during(client, mode).await;
        }
    });
}

#[test]
fn wrong_content_types_fail_the_call() {
    let _guard = common::serial();
    let modes = ["html_body", "invalid_json_body", "no_content_type"];
    let servers = modes.map(Server::start);
    leak_checked("content types", &servers[0].url, RSS_LIMIT, || async {
        for (mode, server) in modes.into_iter().zip(&servers) {
            let client = connect(&server.url).await;
            let (error, elapsed) = bad_call_beside_good_ones(&client, mode, LONG).await;
            assert_prompt(mode, elapsed);
            let message = transport_message(mode, &error);
            let expected = match mode {
                "html_body" => "\"text/html\"",
                "invalid_json_body" => "JSON body that is not the response",
                _ => "no content type",
            };
            assert!(message.contains(expected), "{mode}: unclear error {message:?}");
            // Typed, with the status.
            let typed = transport_error(mode, &error);
            match (mode, typed) {
                (
                    "html_body",
                    TransportError::UnexpectedContentType { status: 200, content_type: Some(c) },
                ) => {
                    assert_eq!(c, "text/html")
                }
                (
                    "no_content_type",
                    TransportError::UnexpectedContentType { status: 200, content_type: None },
                ) => {}
                ("invalid_json_body", TransportError::NotTheResponse { status: 200, .. }) => {}
                other => panic!("{mode}: {other:?}"),
            }
            assert_eq!(error.http_status(), Some(200), "{mode}");
            client.close().await;
        }
    });
}

#[test]
fn dropped_connections_fail_the_call() {
    let _guard = common::serial();
    let modes = ["drop_json", "drop_sse", "drop_sse_resumable"];
    let servers = modes.map(Server::start);
    leak_checked("dropped streams", &servers[0].url, RSS_LIMIT, || async {
        for (mode, server) in modes.into_iter().zip(&servers) {
            let client = connect(&server.url).await;
            let (error, elapsed) = bad_call_beside_good_ones(&client, mode, LONG).await;
            assert_prompt(mode, elapsed);
            if mode == "drop_sse_resumable" {
                // The stream carried an event id: the client asked to resume it (GET with
                // Last-Event-ID, after the server's `retry`), and the refusal is the error.
                match &error {
                    Error::Request(RequestError::HttpStatus { status: 405, .. }) => {}
                    other => panic!("{mode}: expected the refusal to resume, got {other:?}"),
                }
            } else {
                let message = transport_message(mode, &error);
                assert!(message.contains("broke"), "{mode}: unclear error {message:?}");
                let typed = transport_error(mode, &error);
                assert!(matches!(typed, TransportError::StreamBroke(_)), "{mode}: {typed:?}");
            }
            client.close().await;
        }
    });
}

#[test]
fn server_errors_fail_the_call() {
    let _guard = common::serial();
    let modes = ["status_500", "status_502", "status_503"];
    let servers = modes.map(Server::start);
    leak_checked("5xx on a call", &servers[0].url, RSS_LIMIT, || async {
        for (mode, server) in modes.into_iter().zip(&servers) {
            let client = connect(&server.url).await;
            let (error, elapsed) = bad_call_beside_good_ones(&client, mode, LONG).await;
            assert_prompt(mode, elapsed);
            let expected: u16 = mode.trim_start_matches("status_").parse().unwrap();
            match &error {
                Error::Request(RequestError::HttpStatus { status, body, error: None }) => {
                    assert_eq!(*status, expected, "{mode}");
                    assert!(body.contains("on purpose"), "{mode}: body {body:?}");
                    assert_eq!(error.http_status(), Some(expected), "{mode}");
                }
                other => panic!("{mode}: expected an HTTP status error, got {other:?}"),
            }
            client.close().await;
        }
    });
}

#[test]
fn server_errors_on_initialize_fail_the_connection() {
    let _guard = common::serial();
    let good = Server::start("none");
    let modes = ["initialize_500", "initialize_502", "initialize_503"];
    let servers = modes.map(Server::start);
    leak_checked("5xx on initialize", &good.url, RSS_LIMIT, || async {
        for (mode, server) in modes.into_iter().zip(&servers) {
            let status = mode.trim_start_matches("initialize_");
            // Pinned to 2025-11-25 (initialize at once), and with the default versions (a
            // `server/discover` probe first, then initialize).
            for (label, builder) in
                [("pinned", builder()), ("dual-era", ClientBuilder::new(Implementation::new("t", "0")))]
            {
                let case = format!("{mode} ({label})");
                let connecting = builder.spawn_http(HttpConfig::new(&server.url), HyperTransport::new());
                let (outcome, elapsed) = timed(connecting).await;
                assert_prompt(&case, elapsed);
                match outcome {
                    Err(error @ Error::Connect(CloseReason::RequestFailed { .. })) => {
                        // Typed: the status is there to read, and a 5xx is worth another try.
                        assert_eq!(
                            error.http_status().map(|s| s.to_string()).as_deref(),
                            Some(status),
                            "{case}"
                        );
                        assert!(error.is_retriable(), "{case}: {error}");
                        let message = error.to_string();
                        assert!(
                            message.contains(&format!("HTTP {status}")),
                            "{case}: unclear error {message:?}"
                        );
                    }
                    Err(other) => panic!("{case}: expected a failed handshake request, got {other:?}"),
                    Ok(_) => panic!("{case}: connected"),
                }
            }
            // The runtime is not hurt: a correct server still works.
            let client = connect(&good.url).await;
            good_traffic(&client, mode).await;
            client.close().await;
        }
    });
}

#[test]
fn temporary_and_permanent_redirects_are_followed() {
    // 307 and 308 keep the method and the body: the session sends the call again where they
    // point (here `/elsewhere` on the same server), and it succeeds.
    let _guard = common::serial();
    let modes = ["redirect_307", "redirect_308"];
    let servers = modes.map(Server::start);
    leak_checked("redirects", &servers[0].url, RSS_LIMIT, || async {
        for (mode, server) in modes.into_iter().zip(&servers) {
            let client = connect(&server.url).await;
            let lateness = Lateness::start();
            let (result, ()) = future::zip(call(&client, mode, LONG), good_traffic(&client, mode)).await;
            let result = result.unwrap_or_else(|e| panic!("{mode}: {e}"));
            assert_eq!(result.content[0].as_text(), Some("redirected"), "{mode}");
            assert!(lateness.worst() < LATE_LIMIT, "{mode}: the executor was held");
            echo(&client, &format!("after {mode}")).await;
            client.close().await;
        }
    });
}

#[test]
fn redirects_that_change_the_method_or_never_end_are_refused_by_name() {
    let _guard = common::serial();
    let modes = ["redirect_301", "redirect_302", "redirect_303", "redirect_loop"];
    let servers = modes.map(Server::start);
    leak_checked("refused redirects", &servers[0].url, RSS_LIMIT, || async {
        for (mode, server) in modes.into_iter().zip(&servers) {
            let client = connect(&server.url).await;
            let (error, elapsed) = bad_call_beside_good_ones(&client, mode, LONG).await;
            assert_prompt(mode, elapsed);
            let typed = transport_error(mode, &error).clone();
            match mode {
                "redirect_loop" => {
                    let expected = TransportError::TooManyRedirects { hops: 5, location: "/loop/6".into() };
                    assert_eq!(typed, expected, "{mode}");
                }
                _ => {
                    let status: u16 = mode.trim_start_matches("redirect_").parse().unwrap();
                    let expected = TransportError::RedirectRefused {
                        status,
                        location: "/elsewhere".into(),
                        reason: RedirectRefusal::Status,
                    };
                    assert_eq!(typed, expected, "{mode}");
                    assert_eq!(error.http_status(), Some(status));
                    let message = error.to_string();
                    assert!(
                        message.contains(&status.to_string()) && message.contains("/elsewhere"),
                        "{mode}: {message}"
                    );
                }
            }
            client.close().await;
        }
    });
}

#[test]
fn a_redirect_to_another_origin_leaves_credentials_and_custom_headers_behind() {
    // Two listeners of one process on two ports are two origins. The call is redirected from
    // the first to the second, which reports the headers it received.
    let _guard = common::serial();
    let server = Server::start("redirect_cross_origin");
    leak_checked("cross-origin redirect", &server.url, RSS_LIMIT, || async {
        let http = HttpConfig::new(&server.url)
            .header("Authorization", "Bearer adversary-token")
            .header("X-Adversary-Secret", "s3cret");
        let client = builder().spawn_http(http, HyperTransport::new()).await.expect("connecting");
        let result = call(&client, "redirect_cross_origin", LONG).await.expect("the redirect was followed");
        let report: serde_json::Value =
            serde_json::from_str(result.content[0].as_text().expect("a text report")).expect("JSON");
        assert_eq!(report["authorization"], serde_json::Value::Null, "{report}");
        assert_eq!(report["secret"], serde_json::Value::Null, "{report}");
        let headers = report["headers"].as_array().expect("header names");
        let has = |name: &str| headers.iter().any(|h| h == name);
        assert!(has("mcp-session-id") && has("mcp-protocol-version"), "the MCP headers go on: {report}");
        assert!(!has("authorization") && !has("x-adversary-secret"), "{report}");
        // Calls to the first origin go on.
        good_traffic(&client, "after the cross-origin redirect").await;
        client.close().await;
    });
}

#[test]
fn huge_response_heads_fail_with_bounded_memory() {
    let _guard = common::serial();
    let modes = ["huge_header_value", "many_headers", "endless_header"];
    let servers = modes.map(Server::start);
    // The heads are 1 MiB, about 1.5 MiB, and as long as the client reads: buffering any of them
    // whole would show.
    leak_checked("huge headers", &servers[0].url, 8 * MIB, || async {
        for (mode, server) in modes.into_iter().zip(&servers) {
            let client = connect(&server.url).await;
            let (error, elapsed) = bad_call_beside_good_ones(&client, mode, LONG).await;
            assert_prompt(mode, elapsed);
            let message = transport_message(mode, &error);
            assert!(message.contains("head is too large"), "{mode}: unclear error {message:?}");
            let typed = transport_error(mode, &error);
            assert!(matches!(typed, TransportError::HeadTooLarge { limit: Some(_) }), "{mode}: {typed:?}");
            client.close().await;
        }
    });
}

#[test]
fn server_that_never_reads_fails_the_handshake_in_time() {
    let _guard = common::serial();
    let good = Server::start("none");
    let server = Server::start("never_read");
    let handshake = Duration::from_millis(700);
    leak_checked("never_read", &good.url, RSS_LIMIT, || async {
        for (label, builder) in
            [("pinned", builder()), ("dual-era", ClientBuilder::new(Implementation::new("t", "0")))]
        {
            let case = format!("never_read ({label})");
            let connecting = builder
                .configure(|config| config.with_handshake_timeout(handshake))
                .spawn_http(HttpConfig::new(&server.url), HyperTransport::new());
            // Meanwhile, another connection to a correct server works.
            let beside = async {
                let client = connect(&good.url).await;
                good_traffic(&client, &case).await;
                client.close().await;
            };
            let ((outcome, elapsed), ()) = future::zip(timed(connecting), beside).await;
            match outcome {
                Err(Error::Connect(CloseReason::HandshakeTimeout(limit))) => assert_eq!(limit, handshake),
                Err(other) => panic!("{case}: expected a handshake timeout, got {other:?}"),
                Ok(_) => panic!("{case}: connected"),
            }
            // A dual-era client first probes with `server/discover`, which waits no longer than
            // the handshake timeout, then sends `initialize`, which gets the handshake timeout.
            let limit = if label == "pinned" { handshake } else { 2 * handshake };
            assert!(elapsed >= limit, "{case}: failed after {elapsed:?}, before the timeout");
            assert!(elapsed < limit + SLACK, "{case}: failed after {elapsed:?}, long after the timeout");
        }
    });
}

#[test]
fn stalled_event_stream_head_holds_calls_briefly() {
    // Requests wait for the head of the first stream for server-initiated messages (a server
    // may send a request-unrelated message there only), but a server that never sends that head
    // (or only with its first event) must not hold them for the whole `connect_timeout`.
    let _guard = common::serial();
    let good = Server::start("none");
    let server = Server::start("stall_get");
    leak_checked("stall_get", &good.url, RSS_LIMIT, || async {
        let client = connect(&server.url).await;
        let (errors, elapsed) = timed(async {
            // Concurrent calls, made while the head is due.
            let calls: Vec<_> = (0..4)
                .map(|n| {
                    let client = client.clone();
                    smol::spawn(async move { call_echo(&client, n).await })
                })
                .collect();
            let mut errors = Vec::new();
            for call in calls {
                errors.extend(call.await.err());
            }
            errors
        })
        .await;
        assert!(errors.is_empty(), "stall_get: {errors:?}");
        assert!(elapsed < Duration::from_secs(1) + SLACK, "stall_get: the calls took {elapsed:?}");
        // Later calls do not wait at all.
        let (_, elapsed) = timed(good_traffic(&client, "stall_get")).await;
        // Well under the 1 s gate: they no longer wait for the head (a loaded CI machine needs
        // the margin).
        assert!(elapsed < Duration::from_millis(700), "stall_get: later calls took {elapsed:?}");
        // Closing aborts the GET that is still waiting for its head.
        let (_, closed_after) = timed(client.close()).await;
        assert!(closed_after < PROMPT, "stall_get: closing took {closed_after:?}");
    });
}

#[test]
fn endless_bodies_are_cut_at_the_message_size_limit() {
    let _guard = common::serial();
    let modes = ["endless_json_body", "endless_sse_event"];
    let servers = modes.map(Server::start);
    let max = MIB;
    // The bodies never end and arrive as fast as loopback goes: buffering them would show.
    leak_checked("endless bodies", &servers[0].url, 8 * MIB, || async {
        for (mode, server) in modes.into_iter().zip(&servers) {
            let client = builder()
                .configure(|config| config.with_max_message_size(max))
                .spawn_http(HttpConfig::new(&server.url), HyperTransport::new())
                .await
                .expect("connecting");
            if mode == "endless_json_body" {
                // A JSON body is one message: cut as soon as it exceeds the limit.
                let (error, elapsed) = bad_call_beside_good_ones(&client, mode, LONG).await;
                assert_prompt(mode, elapsed);
                match &error {
                    Error::Request(RequestError::MessageTooLarge { limit }) => assert_eq!(*limit, max),
                    other => panic!("{mode}: expected MessageTooLarge, got {other:?}"),
                }
            } else {
                // An event stream may go on after an oversized event (dropped as it streams), so
                // the call waits for its deadline.
                let (error, elapsed) = bad_call_beside_good_ones(&client, mode, SHORT).await;
                assert_timed_out(mode, &error, elapsed, SHORT);
                assert!(client.stats().oversized_messages >= 1, "{mode}: {:?}", client.stats());
            }
            client.close().await;
        }
    });
}

#[test]
fn connections_closed_after_a_response_are_not_reused() {
    // The server closes the connection after answering, without `Connection: close`: the next
    // request must not be lost on it.
    let _guard = common::serial();
    let server = Server::start("close_after_response");
    leak_checked("close_after_response", &server.url, RSS_LIMIT, || async {
        let client = connect(&server.url).await;
        for i in 0..50 {
            call(&client, "close_after_response", LONG)
                .await
                .unwrap_or_else(|e| panic!("close_after_response {i}: {e}"));
            echo(&client, &format!("after {i}")).await;
        }
        client.close().await;
    });
}

#[test]
fn endless_progress_stops_at_the_total_cap() {
    // Progress resets a call's idle timeout; a server that reports progress forever and never
    // answers is stopped by the cap on the call's total time.
    let _guard = common::serial();
    let server = Server::start("endless_progress");
    leak_checked("endless_progress", &server.url, RSS_LIMIT, || async {
        let client = connect(&server.url).await;
        let reports = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let counter = reports.clone();
        let options = CallOptions::default()
            .timeout(Duration::from_millis(300))
            .max_total(Duration::from_secs(1))
            .on_progress(move |_| {
                counter.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            });
        let params = CallToolRequestParams::new("endless_progress");
        let bad = timed(client.call_tool_with(&params, options));
        let ((result, elapsed), ()) = future::zip(bad, good_traffic(&client, "endless_progress")).await;
        match result {
            Err(Error::Request(RequestError::MaxTotalExceeded(cap))) => {
                assert_eq!(cap, Duration::from_secs(1))
            }
            other => panic!("endless_progress: expected the total cap, got {other:?}"),
        }
        let cap = Duration::from_secs(1);
        assert!(elapsed >= cap && elapsed < cap + SLACK, "endless_progress: failed after {elapsed:?}");
        let reports = reports.load(std::sync::atomic::Ordering::Relaxed);
        assert!(reports >= 5, "endless_progress: only {reports} progress reports arrived");
        echo(&client, "after endless_progress").await;
        client.close().await;
    });
}

#[test]
fn repeated_failures_do_not_accumulate_sockets() {
    // Each failed exchange gives its connection up at once (closed, never pooled): a client that
    // meets the same failure again and again holds no more sockets for it while it stays open.
    let _guard = common::serial();
    let modes = [
        "stall_headers",
        "stall_body_sse",
        "drop_json",
        "status_500",
        "huge_header_value",
        "endless_header",
        "close_after_response",
    ];
    let servers = modes.map(Server::start);
    leak_checked("repeated failures", &servers[0].url, RSS_LIMIT, || async {
        for (mode, server) in modes.into_iter().zip(&servers) {
            let client = connect(&server.url).await;
            echo(&client, "first").await;
            let before = Resources::settled(Duration::from_millis(50), Duration::from_secs(1));
            for i in 0..4 {
                let _ = call(&client, mode, Duration::from_millis(80)).await;
                echo(&client, &format!("{mode} {i}")).await;
            }
            let after = Resources::settled(Duration::from_millis(50), Duration::from_secs(1));
            assert!(
                after.fds <= before.fds,
                "{mode}: sockets accumulate: before {before:?}, after {after:?}"
            );
            client.close().await;
        }
    });
}

#[test]
fn unsolicited_responses_are_not_taken_for_the_next_call() {
    // After the call's response, the server sends a second response nobody asked for, carrying
    // the next request id: a client that read it as the answer to its next request on the
    // same connection would return a forged result.
    let _guard = common::serial();
    let server = Server::start("extra_response");
    leak_checked("extra_response", &server.url, RSS_LIMIT, || async {
        let client = connect(&server.url).await;
        for i in 0..10 {
            let result = call(&client, "extra_response", LONG).await.expect("extra_response");
            assert_eq!(result.content[0].as_text(), Some("the tool's result"));
            // `echo` checks that its own text comes back, not "forged".
            echo(&client, &format!("after extra_response {i}")).await;
        }
        client.close().await;
    });
}

#[test]
fn stalled_session_end_does_not_hold_close() {
    // The server never answers the `DELETE` that ends the session: closing waits for it no longer
    // than `close_timeout`.
    let _guard = common::serial();
    let good = Server::start("none");
    let server = Server::start("stall_delete");
    let close_timeout = Duration::from_millis(300);
    leak_checked("stall_delete", &good.url, RSS_LIMIT, || async {
        let client = builder()
            .spawn_http(HttpConfig::new(&server.url).close_timeout(close_timeout), HyperTransport::new())
            .await
            .expect("connecting");
        good_traffic(&client, "stall_delete").await;
        let (_, elapsed) = timed(client.close()).await;
        assert!(
            elapsed >= close_timeout,
            "stall_delete: closed after {elapsed:?}, without waiting for DELETE"
        );
        assert!(elapsed < close_timeout + SLACK, "stall_delete: closing took {elapsed:?}");
    });
}

#[test]
fn endless_interim_responses_do_not_hold_the_executor() {
    // `100 Continue` heads without end: hyper parses them in a loop that only stops when a read
    // would block, which held smol's executor thread (and so the driver, and every other
    // connection) for as long as the server sent. The call must still fail at its deadline.
    let _guard = common::serial();
    let server = Server::start("endless_continue");
    leak_checked("endless_continue", &server.url, RSS_LIMIT, || async {
        let client = connect(&server.url).await;
        for _ in 0..2 {
            let (error, elapsed) = bad_call_beside_good_ones(&client, "endless_continue", SHORT).await;
            assert_timed_out("endless_continue", &error, elapsed, SHORT);
        }
        client.close().await;
    });
}

#[test]
fn server_request_floods_do_not_open_a_connection_each() {
    // 2000 `ping`s in one burst on a call's event stream: each answer is a POST of its own,
    // and they must not all be in flight at once (one connection each).
    let _guard = common::serial();
    let server = Server::start("request_flood");
    leak_checked("request_flood", &server.url, RSS_LIMIT, || async {
        let client = connect(&server.url).await;
        echo(&client, "before").await;
        let before = Resources::settled(Duration::from_millis(50), Duration::from_secs(1));
        let peak = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let sampler = {
            let (peak, done) = (peak.clone(), done.clone());
            std::thread::spawn(move || {
                while !done.load(std::sync::atomic::Ordering::Relaxed) {
                    peak.fetch_max(common::open_fds(), std::sync::atomic::Ordering::Relaxed);
                    std::thread::sleep(Duration::from_millis(1));
                }
            })
        };
        let lateness = Lateness::start();
        let result = call(&client, "request_flood", LONG).await.expect("request_flood");
        assert_eq!(result.content[0].as_text(), Some("the tool's result"));
        // Every ping is answered, a few at a time.
        let start = Instant::now();
        let answered = loop {
            let count = call(&client, "answers_received", LONG).await.expect("answers_received");
            let answered: usize = count.content[0].as_text().and_then(|t| t.parse().ok()).unwrap_or(0);
            if answered >= 2000 || start.elapsed() > Duration::from_secs(2) {
                break answered;
            }
            smol::Timer::after(Duration::from_millis(20)).await;
        };
        done.store(true, std::sync::atomic::Ordering::Relaxed);
        sampler.join().expect("sampler");
        assert_eq!(answered, 2000, "request_flood: not every ping was answered");
        let late = lateness.worst();
        assert!(late < LATE_LIMIT, "request_flood: the executor was held for {late:?}");
        let peak = peak.load(std::sync::atomic::Ordering::Relaxed);
        assert!(
            peak <= before.fds + 16,
            "request_flood: {peak} descriptors open at once, {} before",
            before.fds
        );
        echo(&client, "after").await;
        client.close().await;
    });
}

// ----- hostile authorization servers (`oauth_*` modes) -----

/// What an `oauth_*` server saw (`GET /adversary/stats`, a plain HTTP/1.1 request).
fn oauth_stats(url: &str) -> serde_json::Value {
    use std::io::{Read, Write};
    let authority = url.trim_start_matches("http://").split('/').next().expect("an authority");
    let mut stream = std::net::TcpStream::connect(authority).expect("connecting to the stats");
    write!(stream, "GET /adversary/stats HTTP/1.1\r\nHost: {authority}\r\nConnection: close\r\n\r\n")
        .expect("asking for the stats");
    let mut response = String::new();
    stream.read_to_string(&mut response).expect("reading the stats");
    let body = &response[response.find("\r\n\r\n").expect("a head") + 4..];
    serde_json::from_str(body).expect("JSON stats")
}

/// Connects with the client credentials grant (DPoP whenever the server offers it).
async fn connect_oauth(url: &str) -> Result<Client, Error> {
    let oauth = OAuth::new(AuthConfig::client_credentials(ClientInfo::confidential("svc", "pw")));
    builder().oauth(oauth).spawn_http(HttpConfig::new(url), HyperTransport::new()).await
}

#[test]
fn a_server_that_asks_for_a_new_dpop_nonce_with_every_refusal_gets_one_retry_per_call() {
    let _guard = common::serial();
    let warm = Server::start("none");
    let server = Server::start("oauth_dpop_nonce_churn");
    leak_checked("DPoP nonce churn", &warm.url, RSS_LIMIT, || async {
        let client = connect_oauth(&server.url).await.expect("connecting");
        let case = "oauth_dpop_nonce_churn";
        // It used to be sent again for every new nonce: some 6000 POSTs in 5 s, then a timeout.
        let (error, elapsed) = bad_call_beside_good_ones(&client, case, LONG).await;
        assert_prompt(case, elapsed);
        assert!(
            matches!(&error, Error::Request(RequestError::Unauthorized(AuthError::DpopNonceRejected { .. }))),
            "{error:?}"
        );
        assert!(!error.is_retriable(), "{error:?}");
        assert_eq!(oauth_stats(&server.url)["nonce_refusals"], 2, "sent once, then once more with the nonce");
        client.close().await;
    });
}

/// Connects to the `oauth_*` server `mode`, which must refuse the connection at once with an
/// error that `expected` accepts; `saw` checks what the servers saw.
fn refused_connection(
    mode: &'static str,
    expected: impl Fn(&Error) -> bool,
    saw: impl Fn(&serde_json::Value),
) {
    let _guard = common::serial();
    let warm = Server::start("none");
    let server = Server::start(mode);
    leak_checked(mode, &warm.url, RSS_LIMIT, || async {
        let (result, elapsed) = timed(connect_oauth(&server.url)).await;
        let error = result.expect_err("the connection fails");
        assert_prompt(mode, elapsed);
        assert!(expected(&error), "{mode}: {error:?}");
        assert!(!error.is_retriable(), "{mode}: {error:?}");
        saw(&oauth_stats(&server.url));
    });
}

#[test]
fn an_access_token_with_a_line_break_fails_the_connection_typed_and_at_once() {
    // It used to reach the Authorization header, where hyper refused it: a retriable transport
    // error, again at every try.
    let expected = |error: &Error| {
        matches!(
            error,
            Error::Connect(CloseReason::Unauthorized(AuthError::InvalidResponse { detail, .. }))
                if detail.contains("b64token")
        )
    };
    refused_connection("oauth_token_crlf", expected, |stats| {
        assert_eq!(stats["token_requests"], 1, "{stats}");
        assert_eq!(stats["authorized_mcp_requests"], 0, "the token was never sent: {stats}");
    });
}

#[test]
fn resource_metadata_without_a_resource_sends_nothing_to_the_authorization_server_it_names() {
    let expected = |error: &Error| {
        matches!(error, Error::Connect(CloseReason::Unauthorized(AuthError::ResourceMissing { .. })))
    };
    refused_connection("oauth_prm_without_resource", expected, |stats| {
        assert_eq!(stats["foreign_requests"], 0, "the other origin got nothing: {stats}");
        assert_eq!(stats["authorized_mcp_requests"], 0, "{stats}");
    });
}
