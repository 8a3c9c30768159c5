//! Interop with the official reference server `@modelcontextprotocol/server-everything`
//! (TypeScript SDK) over stdio.
//!
//! These tests need Node and the server, which `.ci/install-peers` installs; `.ci/interop` runs
//! them with `MCP_EVERYTHING_SERVER` pointing at the server's entry script. Plain
//! `cargo test` skips them (they are `#[ignore]`d), and running them without the variable fails
//! loudly rather than passing vacuously.

mod common;

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use common::{Handler, text, wait_for_tool};
use mcp_sansio::schema::{
    CallTool, CallToolRequestParams, CompleteRequestParams, CompletionContext, CompletionReference,
    ContentBlock, Implementation, LoggingLevel, ResourceContents,
};
use mcp_sansio::{ProtocolVersion, ServerNotification};
use mcp_smol::ClientApi;
use mcp_smol::{CallOptions, Client, ClientBuilder, ServerCommand};
use serde_json::json;

fn everything() -> ServerCommand {
    let entry = std::env::var("MCP_EVERYTHING_SERVER")
        .expect("MCP_EVERYTHING_SERVER must point at server-everything's dist/index.js: run .ci/interop");
    ServerCommand::new("node").args([entry.as_str(), "stdio"]).stderr(mcp_smol::StderrSink::Discard)
}

async fn connect() -> Client {
    let capabilities = common::capabilities();
    ClientBuilder::new(Implementation::new("mcp-sansio-interop", "0.1.0"))
        .configure(|c| c.with_capabilities(capabilities))
        .handler(Handler)
        .spawn_stdio(&everything())
        .await
        .expect("connect to server-everything")
}

#[test]
#[ignore = "needs server-everything: run .ci/interop"]
fn handshake_in_every_legacy_version() {
    smol::block_on(async {
        for version in ProtocolVersion::LEGACY {
            let client = ClientBuilder::new(Implementation::new("mcp-sansio-interop", "0.1.0"))
                .configure(|c| c.with_versions(&[*version]))
                .spawn_stdio(&everything())
                .await
                .unwrap();
            assert_eq!(client.protocol_version(), Some(*version));
            assert_eq!(client.server_info().unwrap().name, "mcp-servers/everything");
            assert!(client.instructions().is_some_and(|i| !i.is_empty()));
            client.ping().await.unwrap();
            assert!(client.close_within(Duration::from_secs(10)).await);
        }
    });
}

#[test]
#[ignore = "needs server-everything: run .ci/interop"]
fn tools_including_progress_and_structured_content() {
    smol::block_on(async {
        let client = connect().await;
        wait_for_tool(&client, "trigger-sampling-request").await;
        let tools = client.list_all_tools().await.unwrap();
        let structured = tools.iter().find(|t| t.name == "get-structured-content").unwrap();
        assert!(structured.output_schema.is_some());

        let echo = client.call_tool("echo", json!({"message": "hi"})).await.unwrap();
        assert_eq!(text(&echo), "Echo: hi");
        let sum = client.call_tool("get-sum", json!({"a": 2, "b": 3.5})).await.unwrap();
        assert_eq!(text(&sum), "The sum of 2 and 3.5 is 5.5.");
        let image = client.call_tool("get-tiny-image", json!({})).await.unwrap();
        assert!(
            image.content.iter().any(|c| matches!(c, ContentBlock::Image(i) if i.mime_type == "image/png"))
        );
        let weather =
            client.call_tool("get-structured-content", json!({"location": "Chicago"})).await.unwrap();
        let data = weather.structured_content.unwrap();
        assert!(data["temperature"].is_number() && data["conditions"].is_string(), "{data}");
        let bad = client.call_tool("echo", json!({})).await.unwrap();
        assert_eq!(bad.is_error, Some(true));

        let seen = Arc::new(Mutex::new(Vec::new()));
        let sink = seen.clone();
        let options = CallOptions::default().on_progress(move |p| sink.lock().unwrap().push(p.progress));
        let params = CallToolRequestParams::new("trigger-long-running-operation")
            .with_arguments(json!({"duration": 1, "steps": 4}).as_object().unwrap().clone());
        let done = client.call_tool_with(&params, options).await.unwrap();
        assert!(text(&done).starts_with("Long running operation completed"), "{}", text(&done));
        assert_eq!(*seen.lock().unwrap(), [1.0, 2.0, 3.0, 4.0]);
        assert!(client.close_within(Duration::from_secs(10)).await);
    });
}

#[test]
#[ignore = "needs server-everything: run .ci/interop"]
fn sampling_elicitation_and_roots_flows() {
    smol::block_on(async {
        let client = connect().await;
        wait_for_tool(&client, "trigger-elicitation-request").await;
        let sampled = client
            .call_tool("trigger-sampling-request", json!({"prompt": "say hi", "maxTokens": 20}))
            .await
            .unwrap();
        let sampled = text(&sampled);
        assert!(sampled.contains("LLM sampling result") && sampled.contains("interop-model"), "{sampled}");

        let elicited = client.call_tool("trigger-elicitation-request", json!({})).await.unwrap();
        let elicited = text(&elicited);
        assert!(elicited.contains("Ada"), "{elicited}");

        // The server asks for roots by itself after initialization; poll until it has them.
        let start = Instant::now();
        loop {
            let roots = text(&client.call_tool("get-roots-list", json!({})).await.unwrap());
            if roots.contains("file:///tmp/interop") {
                break;
            }
            assert!(start.elapsed() < Duration::from_secs(10), "roots never arrived: {roots}");
            async_io::Timer::after(Duration::from_millis(100)).await;
        }
        assert!(client.close_within(Duration::from_secs(10)).await);
    });
}

#[test]
#[ignore = "needs server-everything: run .ci/interop"]
fn resources_templates_prompts_completion_and_logging() {
    smol::block_on(async {
        let client = connect().await;
        let resources = client.list_all_resources().await.unwrap();
        assert_eq!(resources.len(), 7, "{resources:?}");
        let features = client.read_resource("demo://resource/static/document/features.md").await.unwrap();
        assert!(features.contents[0].as_text().unwrap().starts_with("# Everything Server"));
        let templates = client.list_all_resource_templates().await.unwrap();
        assert!(templates.iter().any(|t| t.uri_template == "demo://resource/dynamic/text/{resourceId}"));
        let dynamic = client.read_resource("demo://resource/dynamic/text/1").await.unwrap();
        assert!(dynamic.contents[0].as_text().unwrap().starts_with("Resource 1:"));
        let blob = client.read_resource("demo://resource/dynamic/blob/3").await.unwrap();
        assert!(matches!(&blob.contents[0], ResourceContents::Blob(b) if !b.blob.is_empty()));

        let prompts = client.list_all_prompts().await.unwrap();
        assert!(prompts.iter().any(|p| p.name == "args-prompt"));
        let weather = client.get_prompt("args-prompt", [("city", "Paris"), ("state", "TX")]).await.unwrap();
        assert_eq!(weather.messages[0].content.as_text(), Some("What's weather in Paris, TX?"));
        let embedded = client
            .get_prompt("resource-prompt", [("resourceType", "Text"), ("resourceId", "2")])
            .await
            .unwrap();
        assert!(embedded.messages.iter().any(|m| matches!(m.content, ContentBlock::Resource(_))));
        let missing = client.get_prompt("args-prompt", Vec::<(String, String)>::new()).await.unwrap_err();
        assert_eq!(missing.server_error().map(|e| e.code), Some(-32602));

        let department =
            CompleteRequestParams::new(CompletionReference::prompt("completable-prompt"), "department", "S");
        assert_eq!(client.complete(&department).await.unwrap().completion.values, ["Sales", "Support"]);
        let mut with_context =
            CompleteRequestParams::new(CompletionReference::prompt("completable-prompt"), "name", "");
        with_context.context = Some(CompletionContext {
            arguments: Some(BTreeMap::from([("department".to_owned(), "Engineering".to_owned())])),
        });
        assert_eq!(
            client.complete(&with_context).await.unwrap().completion.values,
            ["Alice", "Bob", "Charlie"]
        );

        let mut notifications = client.notifications();
        client.set_log_level(LoggingLevel::Debug).await.unwrap();
        client.subscribe("demo://resource/static/document/features.md").await.unwrap();
        let log = futures_lite::future::or(
            async {
                while let Some(n) = notifications.next().await {
                    if let ServerNotification::LoggingMessage(m) = n
                        && m.data.as_str().is_some_and(|d| d.contains("Subscribe"))
                    {
                        return Some(m);
                    }
                }
                None
            },
            async {
                async_io::Timer::after(Duration::from_secs(10)).await;
                None
            },
        )
        .await;
        assert!(log.is_some(), "no subscribe log message arrived");
        client.unsubscribe("demo://resource/static/document/features.md").await.unwrap();
        client.ping().await.unwrap();
        assert!(client.close_within(Duration::from_secs(10)).await);
    });
}

#[test]
#[ignore = "needs server-everything: run .ci/interop"]
fn a_dropped_call_is_cancelled_and_its_response_suppressed() {
    smol::block_on(async {
        let client = connect().await;
        let params = CallToolRequestParams::new("trigger-long-running-operation")
            .with_arguments(json!({"duration": 1, "steps": 2}).as_object().unwrap().clone());
        let call = client.request::<CallTool>(&params, CallOptions::default());
        async_io::Timer::after(Duration::from_millis(200)).await;
        drop(call);
        // The operation would have finished by now; the server must not have answered it.
        async_io::Timer::after(Duration::from_millis(1500)).await;
        client.ping().await.unwrap();
        let stats = client.stats();
        assert_eq!(stats.late_responses, 0, "the server answered a cancelled request: {stats:?}");
        assert_eq!(stats.invalid_messages, 0, "{stats:?}");
        assert!(client.close_within(Duration::from_secs(10)).await);
    });
}

#[test]
#[ignore = "needs server-everything: run .ci/interop"]
fn a_dual_era_client_falls_back_to_initialize() {
    smol::block_on(async {
        // The default configuration is dual-era; without the era cache it probes every time.
        let client = ClientBuilder::new(Implementation::new("mcp-sansio-interop", "0.1.0"))
            .era_cache(None)
            .spawn_stdio(&everything())
            .await
            .unwrap();
        assert_eq!(client.protocol_version(), Some(ProtocolVersion::V2025_11_25));
        // server/discover (refused), initialize, notifications/initialized.
        assert_eq!(client.stats().messages_sent, 3);
        let echo = client.call_tool("echo", json!({"message": "hi"})).await.unwrap();
        assert_eq!(text(&echo), "Echo: hi");
        assert!(client.close_within(Duration::from_secs(10)).await);
    });
}
