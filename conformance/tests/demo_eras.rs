//! One driver test-suite against the workspace's demo server, in both protocol eras (the
//! `initialize` era, pinned to 2025-11-25, and 2026-07-28 reached by the default dual-era
//! probe), over stdio and over Streamable HTTP with both HTTP drivers: six runs of the same
//! calls. Where the outcome differs, it is because the protocol changed (no `ping` in 2026-07-28,
//! an unknown resource is `-32602` instead of `-32002`); how the client gets there differs a lot
//! more (server→client requests or multi round-trip input, the GET stream or
//! `subscriptions/listen`, `notifications/cancelled` or a closed stream, `Mcp-Param-*` headers).

mod common;
mod demo;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::{Handler, ROOT, capabilities, text};
use demo::{DemoHttp, demo_path};
use mcp_hyper::HyperTransport;
use mcp_sansio::http::HttpConfig;
use mcp_sansio::schema::{
    CallToolRequestParams, CompleteRequestParams, CompletionReference, ContentBlock, EmptyParams,
    Implementation, LoggingLevel, Ping, ResourceContents,
};
use mcp_sansio::{CloseReason, ProtocolVersion, RequestError, ServerNotification, Status, UsageError};
use mcp_smol::ClientApi;
use mcp_smol::{CallOptions, Client, ClientBuilder, Error, ServerCommand};
use mcp_surf::SurfTransport;
use serde_json::{Value, json};

#[derive(Debug, Clone, Copy, PartialEq)]
enum Wire {
    Stdio,
    Hyper,
    Surf,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Era {
    Legacy,
    Modern,
}

async fn connect(wire: Wire, era: Era) -> (Client, Option<DemoHttp>) {
    let versions = match era {
        Era::Legacy => vec![ProtocolVersion::V2025_11_25],
        Era::Modern => ProtocolVersion::DUAL_ERA.to_vec(),
    };
    let builder = ClientBuilder::new(Implementation::new("mcp-conformance-eras", "0.0.0"))
        .configure(|c| c.with_capabilities(capabilities()).with_versions(&versions))
        .handler(Handler)
        .era_cache(None);
    match wire {
        Wire::Stdio => {
            let command = ServerCommand::new(demo_path()).shutdown_step(Duration::from_millis(500));
            (builder.spawn_stdio(&command).await.expect("connect over stdio"), None)
        }
        Wire::Hyper | Wire::Surf => {
            let peer = DemoHttp::start();
            let http = HttpConfig::new(peer.url.clone());
            let client = match wire {
                Wire::Hyper => builder.spawn_http(http, HyperTransport::new()).await,
                _ => builder.spawn_http(http, SurfTransport::new()).await,
            };
            (client.expect("connect over HTTP"), Some(peer))
        }
    }
}

/// The next notification, within 10 s.
async fn next_notification(notifications: &mut mcp_smol::Notifications) -> ServerNotification {
    futures_lite::future::or(notifications.next(), async {
        async_io::Timer::after(Duration::from_secs(10)).await;
        None
    })
    .await
    .expect("a notification within 10 s")
}

async fn suite(wire: Wire, era: Era) {
    let (client, _peer) = connect(wire, era).await;
    let expected =
        if era == Era::Legacy { ProtocolVersion::V2025_11_25 } else { ProtocolVersion::V2026_07_28 };
    assert_eq!(client.protocol_version(), Some(expected));
    assert_eq!(client.server_info().unwrap().name, "mcp-demo-server");
    // The health check works in both eras (`server/discover` on 2026-07-28, which has no
    // `ping`); `ping` itself is refused there.
    client.ping().await.unwrap();
    if era == Era::Modern {
        let error =
            client.request::<Ping>(&EmptyParams::default(), CallOptions::default()).await.unwrap_err();
        assert!(matches!(error, Error::Usage(UsageError::NotInVersion { .. })), "{error}");
    }

    // Tools, including one whose arguments travel in Mcp-Param-* headers over modern HTTP.
    let tools = client.list_all_tools().await.unwrap();
    let names: Vec<_> = tools.iter().map(|t| t.name.as_str()).collect();
    for expected in ["echo", "add", "long_running", "tiny_image", "get_stats", "weather"] {
        assert!(names.contains(&expected), "{expected} missing from {names:?}");
    }
    let echo = client.call_tool("echo", json!({"message": "hi there"})).await.unwrap();
    assert_eq!(text(&echo), "hi there");
    assert_eq!(text(&client.call_tool("add", json!({"a": 2, "b": 3})).await.unwrap()), "5");
    let weather = client.call_tool("weather", json!({"region": " Zürich", "days": 3})).await.unwrap();
    assert_eq!(text(&weather), "forecast for  Zürich: 3 days, metric=true");
    let image = client.call_tool("tiny_image", json!({})).await.unwrap();
    assert!(image.content.iter().any(|c| matches!(c, ContentBlock::Image(i) if i.mime_type == "image/png")));
    let stats = client.call_tool("get_stats", json!({"numbers": [1, 2, 3]})).await.unwrap();
    assert_eq!(stats.structured_content, Some(json!({"count": 3, "sum": 6.0, "mean": 2.0})));
    assert_eq!(client.call_tool("fail", json!({})).await.unwrap().is_error, Some(true));
    let unknown = client.call_tool("no_such_tool", json!({})).await.unwrap_err();
    assert_eq!(unknown.server_error().map(|e| e.code), Some(-32602));

    // Server→client requests (legacy) or multi round-trip input (modern): one handler.
    let sampled = client.call_tool("sample", json!({"prompt": "hi"})).await.unwrap();
    assert_eq!(text(&sampled), "sampled: reply to hi");
    let elicited = client.call_tool("elicit", json!({"message": "who?"})).await.unwrap();
    assert!(text(&elicited).starts_with("action=accept"), "{elicited:?}");
    assert_eq!(text(&client.call_tool("list_roots", json!({})).await.unwrap()), ROOT);

    // Progress.
    let seen = Arc::new(Mutex::new(0));
    let sink = seen.clone();
    let params = CallToolRequestParams::new("long_running")
        .with_arguments(json!({"steps": 3, "step_ms": 5}).as_object().unwrap().clone());
    let options = CallOptions::default().on_progress(move |_| *sink.lock().unwrap() += 1);
    client.call_tool_with(&params, options).await.unwrap();
    assert_eq!(*seen.lock().unwrap(), 3);

    // Resources, prompts, completion.
    let resources = client.list_all_resources().await.unwrap();
    assert!(resources.iter().any(|r| r.uri == "demo://readme"));
    let templates = client.list_all_resource_templates().await.unwrap();
    assert_eq!(templates[0].uri_template, "demo://items/{id}");
    assert_eq!(client.read_resource("demo://items/42").await.unwrap().contents[0].as_text(), Some("item 42"));
    let logo = client.read_resource("demo://logo.png").await.unwrap();
    assert!(matches!(&logo.contents[0], ResourceContents::Blob(b) if !b.blob.is_empty()));
    let missing = client.read_resource("demo://nope").await.unwrap_err();
    let code = if era == Era::Legacy { -32002 } else { -32602 };
    assert_eq!(missing.server_error().map(|e| e.code), Some(code), "{missing}");
    let greeting = client.get_prompt("greeting", [("name", "Ada")]).await.unwrap();
    assert_eq!(greeting.messages[0].content.as_text(), Some("Hello, Ada!"));
    let reference = CompletionReference::prompt("code_review");
    let completion = client.complete(&CompleteRequestParams::new(reference, "language", "ru")).await.unwrap();
    assert_eq!(completion.completion.values, ["rust", "ruby"]);

    // Log level, list changes and a resource subscription, on one notification stream.
    let mut notifications = client.notifications();
    client.set_log_level(LoggingLevel::Warning).await.unwrap();
    let filtered = client.call_tool("log", json!({"level": "info", "message": "quiet"})).await.unwrap();
    assert_eq!(text(&filtered), "filtered");
    client.call_tool("log", json!({"level": "error", "message": "loud"})).await.unwrap();
    let first = next_notification(&mut notifications).await;
    assert!(matches!(&first, ServerNotification::LoggingMessage(m) if m.data == json!("loud")), "{first:?}");
    client.subscribe("demo://readme").await.unwrap();
    assert_eq!(text(&client.call_tool("notify_changes", json!({})).await.unwrap()), "notified");
    let mut changes = Vec::new();
    while changes.len() < 4 {
        changes.push(match next_notification(&mut notifications).await {
            ServerNotification::ToolListChanged => "tools".to_owned(),
            ServerNotification::PromptListChanged => "prompts".to_owned(),
            ServerNotification::ResourceListChanged => "resources".to_owned(),
            ServerNotification::ResourceUpdated(u) => format!("updated {}", u.uri),
            other => panic!("unexpected {other:?}"),
        });
    }
    changes.sort();
    assert_eq!(changes, ["prompts", "resources", "tools", "updated demo://readme"]);
    client.unsubscribe("demo://readme").await.unwrap();

    // A call past its deadline fails, and the server hears of it (notifications/cancelled, or
    // the closed stream over modern HTTP).
    let params =
        CallToolRequestParams::new("sleep").with_arguments(json!({"ms": 5000}).as_object().unwrap().clone());
    let slow =
        client.call_tool_with(&params, CallOptions::default().timeout(Duration::from_millis(200))).await;
    assert!(matches!(slow, Err(Error::Request(RequestError::Timeout(_)))), "{slow:?}");
    let mut heard = Value::Null;
    for _ in 0..100 {
        let cancelled = client.call_tool("cancelled_requests", json!({})).await.unwrap();
        heard = serde_json::from_str(&text(&cancelled)).unwrap();
        if heard.as_array().is_some_and(|ids| !ids.is_empty()) {
            break;
        }
        async_io::Timer::after(Duration::from_millis(20)).await;
    }
    assert!(
        heard.as_array().is_some_and(|ids| !ids.is_empty()),
        "the server never heard of the cancellation"
    );

    // A notification of ours: posted or written in every case but 2026-07-28 over HTTP, which
    // carries only requests; there it is refused at once, typed, instead of vanishing.
    let notified = client.notify("notifications/custom", None);
    match (wire, era) {
        (Wire::Hyper | Wire::Surf, Era::Modern) => assert!(
            matches!(&notified, Err(Error::Usage(UsageError::TransportCannotCarry { what, .. })) if what == "notifications/custom"),
            "{notified:?}"
        ),
        _ => assert!(notified.is_ok(), "{notified:?}"),
    }

    client.close().await;
    assert!(matches!(client.status(), Status::Closed(CloseReason::Local)));
}

#[test]
fn stdio_legacy() {
    smol::block_on(suite(Wire::Stdio, Era::Legacy));
}

#[test]
fn stdio_modern() {
    smol::block_on(suite(Wire::Stdio, Era::Modern));
}

#[test]
fn hyper_legacy() {
    smol::block_on(suite(Wire::Hyper, Era::Legacy));
}

#[test]
fn hyper_modern() {
    smol::block_on(suite(Wire::Hyper, Era::Modern));
}

#[test]
fn surf_legacy() {
    smol::block_on(suite(Wire::Surf, Era::Legacy));
}

#[test]
fn surf_modern() {
    smol::block_on(suite(Wire::Surf, Era::Modern));
}
