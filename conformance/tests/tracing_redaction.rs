//! What the client writes to `tracing`: a span per connection and per request (method, id,
//! outcome, duration), and never a header value or a tool argument above `trace` level.
//!
//! A hand-written subscriber records every span and event at every level, over stdio and over
//! Streamable HTTP (hyper) against the demo server, and over OAuth against the demo server in
//! OAuth mode: access and refresh tokens and client secrets appear at no level at all. One test
//! per binary: the subscriber is the global default, since the drivers run on smol's executor
//! threads.
#![allow(clippy::unwrap_used)]

mod common;
mod demo;

use std::fmt::Write as _;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use std::net::TcpListener;
use std::sync::Arc;

use mcp_sansio::auth::{AuthConfig, ClientInfo};
use mcp_sansio::http::HttpConfig;
use mcp_sansio::schema::Implementation;
use mcp_smol::{
    ClientApi, ClientBuilder, LoopbackRedirect, MemoryTokenStore, OAuth, ServerCommand, TokenStore,
};
use serde_json::json;
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Level, Metadata, Subscriber};

const SECRET_HEADER: &str = "Bearer s3cr3t-header-value";
const SECRET_ARGUMENT: &str = "s3cr3t-tool-argument";
const CLIENT_SECRET: &str = "s3cr3t-client-secret";

/// A browser that approves: follows the authorization URL to the loopback redirect.
fn approve(url: &str) {
    let url = url.to_owned();
    std::thread::spawn(move || {
        let (_, location, _) = common::get(&url);
        common::get(&location.expect("the authorization server redirects"));
    });
}

/// One span or event: its level, name and fields as text.
#[derive(Debug, Clone)]
struct Entry {
    level: Level,
    kind: &'static str,
    name: String,
    text: String,
}

static ENTRIES: Mutex<Vec<Entry>> = Mutex::new(Vec::new());
/// Span id → index in `ENTRIES`, so that `record` can add to a span's fields.
static SPANS: Mutex<Vec<(u64, usize)>> = Mutex::new(Vec::new());
static NEXT_ID: AtomicU64 = AtomicU64::new(1);

struct Text<'a>(&'a mut String);

impl Visit for Text<'_> {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        let _ = write!(self.0, " {}={:?}", field.name(), value);
    }
}

struct Capture;

impl Capture {
    fn push(metadata: &Metadata<'_>, kind: &'static str, text: String) -> usize {
        let mut entries = ENTRIES.lock().unwrap();
        entries.push(Entry { level: *metadata.level(), kind, name: metadata.name().to_owned(), text });
        entries.len() - 1
    }
}

impl Subscriber for Capture {
    fn enabled(&self, _: &Metadata<'_>) -> bool {
        true
    }

    fn new_span(&self, span: &Attributes<'_>) -> Id {
        let mut text = String::new();
        span.record(&mut Text(&mut text));
        let index = Self::push(span.metadata(), "span", text);
        let id = NEXT_ID.fetch_add(1, Ordering::Relaxed);
        SPANS.lock().unwrap().push((id, index));
        Id::from_u64(id)
    }

    fn record(&self, span: &Id, values: &Record<'_>) {
        let index = SPANS.lock().unwrap().iter().find(|(id, _)| *id == span.into_u64()).map(|(_, i)| *i);
        if let Some(index) = index {
            let mut entries = ENTRIES.lock().unwrap();
            values.record(&mut Text(&mut entries[index].text));
        }
    }

    fn record_follows_from(&self, _: &Id, _: &Id) {}

    fn event(&self, event: &Event<'_>) {
        let mut text = String::new();
        event.record(&mut Text(&mut text));
        Self::push(event.metadata(), "event", text);
    }

    fn enter(&self, _: &Id) {}

    fn exit(&self, _: &Id) {}
}

#[test]
fn spans_name_requests_and_connections_and_secrets_stay_at_trace() {
    tracing::subscriber::set_global_default(Capture).unwrap();
    let http = demo::DemoHttp::start();
    smol::block_on(async {
        let builder = || ClientBuilder::new(Implementation::new("redaction-test", "0.0.0"));
        let stdio = builder().spawn_stdio(&ServerCommand::new(demo::demo_path())).await.unwrap();
        stdio.call_tool("echo", json!({"message": SECRET_ARGUMENT})).await.unwrap();
        stdio.call_tool("no_such_tool", json!({"key": SECRET_ARGUMENT})).await.unwrap_err();
        stdio.close().await;

        let config = HttpConfig::new(&http.url).header("Authorization", SECRET_HEADER);
        let client = builder().spawn_http(config, mcp_hyper::HyperTransport::new()).await.unwrap();
        client.call_tool("echo", json!({"message": SECRET_ARGUMENT})).await.unwrap();
        client.close().await;
    });

    // OAuth: an authorization code flow with a step-up, then client credentials.
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let oauth_url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let options = mcp_demo_server::Options::default().with_oauth_client("svc", CLIENT_SECRET);
    std::thread::spawn(move || mcp_demo_server::serve_http(listener, options));
    let mut secrets = vec![CLIENT_SECRET.to_owned()];
    smol::block_on(async {
        let builder = || ClientBuilder::new(Implementation::new("redaction-test", "0.0.0"));
        let store = Arc::new(MemoryTokenStore::default());
        let redirect = LoopbackRedirect::bind(approve).unwrap();
        let oauth = OAuth::new(AuthConfig::authorization_code(redirect.redirect_uri()))
            .handler(redirect)
            .store(store.clone());
        let http = HttpConfig::new(oauth_url.as_str());
        let client = builder().oauth(oauth).spawn_http(http, mcp_hyper::HyperTransport::new()).await.unwrap();
        client.call_tool("admin_echo", json!({"message": "step up"})).await.unwrap();
        client.close().await;
        let tokens = store.load().and_then(|c| c.tokens).expect("tokens were stored");
        secrets.push(tokens.access_token.expose().to_owned());
        secrets.extend(tokens.refresh_token.map(|t| t.expose().to_owned()));

        let store = Arc::new(MemoryTokenStore::default());
        let oauth =
            OAuth::new(AuthConfig::client_credentials(ClientInfo::confidential("svc", CLIENT_SECRET)))
                .store(store.clone());
        let http = HttpConfig::new(oauth_url.as_str());
        let client = builder().oauth(oauth).spawn_http(http, mcp_hyper::HyperTransport::new()).await.unwrap();
        client.list_all_tools().await.unwrap();
        client.close().await;
        secrets.push(store.load().and_then(|c| c.tokens).unwrap().access_token.expose().to_owned());
    });

    let entries = ENTRIES.lock().unwrap().clone();
    for entry in &entries {
        for secret in &secrets {
            assert!(!entry.text.contains(secret.as_str()), "an OAuth credential was logged: {entry:?}");
        }
    }
    assert!(entries.iter().any(|e| e.text.contains("token obtained")), "the OAuth flow logs its steps");
    let above_trace: Vec<_> = entries.iter().filter(|e| e.level != Level::TRACE).collect();
    for entry in &above_trace {
        assert!(
            !entry.text.contains(SECRET_HEADER) && !entry.text.contains("s3cr3t-header"),
            "a header value logged above trace: {entry:?}"
        );
        assert!(!entry.text.contains(SECRET_ARGUMENT), "a tool argument logged above trace: {entry:?}");
    }
    // The test would prove nothing if the secrets never reached the logs at all: the engine
    // logs whole messages at trace.
    assert!(
        entries.iter().any(|e| e.level == Level::TRACE && e.text.contains(SECRET_ARGUMENT)),
        "the trace level should carry the messages"
    );

    let requests: Vec<_> = entries.iter().filter(|e| e.kind == "span" && e.name == "mcp_request").collect();
    let calls: Vec<_> = requests.iter().filter(|e| e.text.contains("method=\"tools/call\"")).collect();
    assert_eq!(calls.len(), 4, "{requests:#?}");
    assert!(calls.iter().all(|e| e.text.contains(" id=") && e.text.contains("duration_us=")), "{calls:#?}");
    assert_eq!(calls.iter().filter(|e| e.text.contains("outcome=\"ok\"")).count(), 3, "{calls:#?}");
    assert_eq!(calls.iter().filter(|e| e.text.contains("outcome=\"server_error\"")).count(), 1, "{calls:#?}");

    let connections: Vec<_> =
        entries.iter().filter(|e| e.kind == "span" && e.name == "mcp_connection").collect();
    assert!(
        connections.iter().any(|e| e.text.contains("pid=")),
        "a stdio connection names its pid: {connections:#?}"
    );
    let origin = http.url.trim_end_matches("/mcp");
    assert!(
        connections.iter().any(|e| e.text.contains("transport=\"http\"") && e.text.contains(origin)),
        "an HTTP connection names its origin: {connections:#?}"
    );
}
