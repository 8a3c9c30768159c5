//! MCP 2026-07-28 end to end over stdio: the smol client, in dual-era mode, against the demo
//! server (which speaks both eras): discovery without `initialize` and its cached result,
//! multi round-trip input answered by the same `ClientHandler` as legacy server requests, the
//! log level carried in `_meta`, removed methods refused locally, subscriptions, and the era
//! cache. The conformance crate's `demo_eras.rs` runs the full typed-call suite in both eras
//! over every transport.

mod common;

use common::{all_capabilities, builder, default_builder, demo_server};
use mcp_smol::ClientApi;
use mcp_smol::mcp_sansio::schema::{
    CreateMessageRequestParams, CreateMessageResult, ElicitRequestParams, ElicitResult, EmptyParams,
    ListRootsResult, LoggingLevel, Ping, Root, SamplingContent,
};
use mcp_smol::mcp_sansio::{ProtocolVersion, ServerNotification, UsageError};
use mcp_smol::{CallOptions, ClientHandler, EraCache, Error, HandlerFuture};
use serde_json::json;

struct Answers;

impl ClientHandler for Answers {
    fn list_roots(&self) -> HandlerFuture<ListRootsResult> {
        Box::pin(async { Ok(ListRootsResult::new(vec![Root::new("file:///modern")])) })
    }

    fn create_message(&self, params: CreateMessageRequestParams) -> HandlerFuture<CreateMessageResult> {
        let prompt = params.messages[0].content.blocks()[0].as_text().unwrap_or("").to_owned();
        Box::pin(
            async move { Ok(CreateMessageResult::new("m", SamplingContent::text(format!("re: {prompt}")))) },
        )
    }

    fn elicit(&self, _params: ElicitRequestParams) -> HandlerFuture<ElicitResult> {
        Box::pin(async { Ok(ElicitResult::accept(json!({"name": "Grace"}).as_object().unwrap().clone())) })
    }
}

#[test]
fn a_dual_era_client_speaks_2026_07_28_to_a_modern_server() {
    smol::block_on(async {
        let client = builder()
            .configure(|c| c.with_capabilities(all_capabilities()).with_versions(ProtocolVersion::DUAL_ERA))
            .handler(Answers)
            .spawn_stdio(&demo_server())
            .await
            .unwrap();
        assert_eq!(client.protocol_version(), Some(ProtocolVersion::V2026_07_28));
        assert_eq!(client.server_info().unwrap().name, "mcp-demo-server");

        let echo = client.call_tool("echo", json!({"message": "modern"})).await.unwrap();
        assert_eq!(echo.content[0].as_text(), Some("modern"));
        assert!(!client.list_all_tools().await.unwrap().is_empty());

        // Multi round-trip input and progress are in the conformance crate's `demo_eras.rs`,
        // with the other transports; the elicitation here shows this handler is the one asked.
        let elicited = client.call_tool("elicit", json!({"message": "who?"})).await.unwrap();
        assert!(elicited.content[0].as_text().unwrap().contains("Grace"), "{elicited:?}");

        // Log messages only once a level is set, and it travels in _meta (no setLevel RPC).
        let mut notifications = client.notifications();
        client.call_tool("log", json!({"level": "warning", "message": "quiet"})).await.unwrap();
        client.set_log_level(LoggingLevel::Info).await.unwrap();
        client.call_tool("log", json!({"level": "warning", "message": "loud"})).await.unwrap();
        let first = notifications.next().await.unwrap();
        let ServerNotification::LoggingMessage(message) = first else { panic!("{first:?}") };
        assert_eq!(message.data, json!("loud"), "the message sent before the level was set never came");

        // The discover result, cached for its ttlMs (the demo server says 60 s): no request.
        let sent = client.stats().messages_sent;
        let discover = client.discover().await.unwrap();
        assert!(discover.supported_versions.iter().any(|v| v == "2026-07-28"));
        assert_eq!(client.stats().messages_sent, sent);

        // Removed methods fail locally, with nothing sent; `ping()`, the health check, sends
        // `server/discover` instead.
        let ping = client.request::<Ping>(&EmptyParams::default(), CallOptions::default()).await.unwrap_err();
        assert!(matches!(ping, Error::Usage(UsageError::NotInVersion { .. })), "{ping}");
        assert_eq!(client.stats().messages_sent, sent);
        client.ping().await.unwrap();
        assert_eq!(client.stats().messages_sent, sent + 1);
        client.close().await;
    });
}

#[test]
fn the_default_client_is_dual_era_and_remembers_legacy_servers() {
    smol::block_on(async {
        let cache = EraCache::new();
        let client =
            default_builder().era_cache(Some(cache.clone())).spawn_stdio(&demo_server()).await.unwrap();
        assert_eq!(client.protocol_version(), Some(ProtocolVersion::V2026_07_28));
        client.close().await;

        // A legacy server: probed once (server/discover refused, then initialize and
        // initialized), then known, so the next connection sends initialize at once.
        let legacy = demo_server().args(["--legacy-only"]);
        let mut sent = Vec::new();
        for _ in 0..2 {
            let client = default_builder().era_cache(Some(cache.clone())).spawn_stdio(&legacy).await.unwrap();
            assert_eq!(client.protocol_version(), Some(ProtocolVersion::V2025_11_25));
            client.ping().await.unwrap();
            sent.push(client.stats().messages_sent);
            assert!(
                matches!(client.discover().await, Err(Error::Usage(_))),
                "no server/discover in this era"
            );
            client.close().await;
        }
        assert_eq!(sent, [4, 3], "probe, initialize, initialized, ping; then no probe");
        assert!(cache.get("stdio:missing").is_none());

        // Without a cache every connection probes.
        let client = default_builder().era_cache(None).spawn_stdio(&legacy).await.unwrap();
        assert_eq!(client.stats().messages_sent, 3);
        client.close().await;
    });
}

/// The notifications `notify_changes` causes, as the client's notification stream shows them,
/// after subscribing to `demo://readme`: the same in both eras (in 2026-07-28 they travel on the
/// `subscriptions/listen` stream the engine keeps). This is what `ClientApi::subscribe`'s doc
/// promises for 2026-07-28: the demo server answers `resources/subscribe` and
/// `resources/unsubscribe` on a modern request with `-32601`, so the calls succeed only because
/// neither goes on the wire there.
async fn notified_after_subscribing(versions: &[ProtocolVersion]) -> Vec<String> {
    let client =
        builder().configure(|c| c.with_versions(versions)).spawn_stdio(&demo_server()).await.unwrap();
    let mut notifications = client.notifications();
    client.subscribe("demo://readme").await.unwrap();
    let called = client.call_tool("notify_changes", json!({})).await.unwrap();
    assert_eq!(called.content[0].as_text(), Some("notified"));
    let mut seen = Vec::new();
    while seen.len() < 4 {
        let next = futures_lite::future::or(notifications.next(), async {
            async_io::Timer::after(std::time::Duration::from_secs(10)).await;
            None
        });
        match next.await {
            Some(ServerNotification::ToolListChanged) => seen.push("tools".to_owned()),
            Some(ServerNotification::PromptListChanged) => seen.push("prompts".to_owned()),
            Some(ServerNotification::ResourceListChanged) => seen.push("resources".to_owned()),
            Some(ServerNotification::ResourceUpdated(p)) => seen.push(format!("updated {}", p.uri)),
            Some(other) => panic!("unexpected {other:?}"),
            None => panic!("only {seen:?} within 10 s ({versions:?})"),
        }
    }
    // Unsubscribed, the resource is no longer reported.
    client.unsubscribe("demo://readme").await.unwrap();
    client.close().await;
    seen.sort();
    seen
}

#[test]
fn subscriptions_reach_the_same_notification_stream_in_both_eras() {
    smol::block_on(async {
        let legacy = notified_after_subscribing(&[ProtocolVersion::V2025_11_25]).await;
        let modern = notified_after_subscribing(ProtocolVersion::DUAL_ERA).await;
        assert_eq!(legacy, ["prompts", "resources", "tools", "updated demo://readme"]);
        assert_eq!(modern, legacy);
    });
}
