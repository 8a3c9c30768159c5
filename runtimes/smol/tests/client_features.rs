//! The application conveniences of the client, against the demo server in a real child process:
//! notification routing (handlers, closures, a bounded broadcast that reports lag), the list
//! cache refreshed on `list_changed`, tool-result helpers, output-schema validation, and the
//! request statistics.
#![allow(clippy::unwrap_used)]

mod common;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::{builder, demo_server, wait_until};
use mcp_smol::mcp_sansio::schema::LoggingMessageNotificationParams;
use mcp_smol::{CallOptions, ClientApi, Error, ListCacheConfig, ListKind, NotificationHandler, RecvError};
use serde_json::json;

/// Counts list changes per kind and keeps log messages.
#[derive(Default)]
struct Recorder {
    lists: Mutex<Vec<ListKind>>,
    logs: Mutex<Vec<String>>,
}

struct Shared(Arc<Recorder>);

impl NotificationHandler for Shared {
    fn on_list_changed(&self, list: ListKind) {
        self.0.lists.lock().unwrap().push(list);
    }
    fn on_log(&self, message: &LoggingMessageNotificationParams) {
        self.0.logs.lock().unwrap().push(message.data.to_string());
    }
}

#[test]
fn handlers_and_closures_see_every_notification_in_order() {
    smol::block_on(async {
        let recorder = Arc::new(Recorder::default());
        let seen = Arc::new(AtomicUsize::new(0));
        let counter = seen.clone();
        let client = builder()
            .notification_handler(Shared(recorder.clone()))
            .on_notification(move |_| {
                counter.fetch_add(1, Ordering::SeqCst);
            })
            .spawn_stdio(&demo_server())
            .await
            .unwrap();
        client.call_tool("notify_changes", json!({})).await.unwrap();
        client.call_tool("log", json!({"level": "warning", "message": "disk almost full"})).await.unwrap();
        // Handlers run on the driver's task, which a call does not wait for: they have all
        // four soon after, in order.
        assert!(
            wait_until(Duration::from_secs(5), || seen.load(Ordering::SeqCst) >= 4),
            "the closure saw {} notifications",
            seen.load(Ordering::SeqCst)
        );
        assert_eq!(
            *recorder.lists.lock().unwrap(),
            [ListKind::Tools, ListKind::Resources, ListKind::Prompts]
        );
        assert_eq!(recorder.logs.lock().unwrap().len(), 1, "{:?}", recorder.logs.lock().unwrap());
        assert!(recorder.logs.lock().unwrap()[0].contains("disk almost full"));
        assert_eq!(seen.load(Ordering::SeqCst), 4, "the closure sees all four notifications");
        client.close().await;
    });
}

#[test]
fn broadcast_subscribers_each_get_everything_and_a_slow_one_is_told_it_lagged() {
    smol::block_on(async {
        let client = builder().notification_capacity(4).spawn_stdio(&demo_server()).await.unwrap();
        let mut fast = client.notifications();
        let mut slow = client.notifications();
        // Each call sends three list_changed notifications; `fast` keeps up, `slow` reads nothing.
        let mut fast_got = 0;
        for _ in 0..4 {
            client.call_tool("notify_changes", json!({})).await.unwrap();
            for _ in 0..3 {
                let n = fast.recv().await.unwrap();
                assert!(ListKind::of(&n).is_some(), "{n:?}");
                fast_got += 1;
            }
        }
        assert_eq!((fast_got, fast.lagged()), (12, 0));
        // The ring held the last 4 of the 12: the slow subscriber is told it missed 8.
        assert_eq!(slow.recv().await.unwrap_err(), RecvError::Lagged(8));
        let mut slow_got = 0;
        while let Ok(Some(n)) = futures_lite::future::or(async { Ok(slow.next().await) }, async {
            async_io::Timer::after(Duration::from_millis(300)).await;
            Err(())
        })
        .await
        {
            assert!(ListKind::of(&n).is_some());
            slow_got += 1;
        }
        assert_eq!((slow_got, slow.lagged()), (4, 8), "what was missed plus what was read is everything");
        client.close().await;
        assert_eq!(fast.recv().await.unwrap_err(), RecvError::Closed, "the stream ends with the connection");
        assert!(slow.next().await.is_none());
    });
}

#[test]
fn the_tool_cache_is_refreshed_after_list_changed_and_serves_from_memory_otherwise() {
    smol::block_on(async {
        let client = builder()
            .list_cache(ListCacheConfig::default().debounce(Duration::from_millis(30)))
            .spawn_stdio(&demo_server())
            .await
            .unwrap();
        let first = client.tools().await.unwrap();
        let again = client.tools().await.unwrap();
        assert!(Arc::ptr_eq(&first, &again), "the second read is served from memory");
        assert_eq!(client.cache_info(ListKind::Tools).fetches, 1);
        let sent_before = client.stats().requests_tracked;

        // The server adds a tool and says so.
        let added = client.call_tool("add_tool", json!({"name": "fresh_tool"})).await.unwrap();
        assert_eq!(added.is_error, None, "{added:?}");
        let info = client.cache_info(ListKind::Tools);
        assert!(!info.fresh && info.changes == 1, "the list_changed arrived before the result: {info:?}");
        let refreshed = client.tools().await.unwrap();
        assert_eq!(refreshed.len(), first.len() + 1);
        assert_eq!(refreshed.last().unwrap().name, "fresh_tool");
        assert_eq!(client.cache_info(ListKind::Tools).fetches, 2);
        // One add_tool call and one tools/list: nothing else was asked.
        assert_eq!(client.stats().requests_tracked - sent_before, 2);

        // A burst of changes (notify_changes sends one per list) costs one fetch each.
        client.call_tool("notify_changes", json!({})).await.unwrap();
        client.call_tool("notify_changes", json!({})).await.unwrap();
        let (tools, prompts) = futures_lite::future::zip(client.tools(), client.prompts()).await;
        assert_eq!(tools.unwrap().len(), refreshed.len());
        assert!(!prompts.unwrap().is_empty());
        assert_eq!(client.cache_info(ListKind::Tools).fetches, 3, "two changes, one refresh");
        assert_eq!(client.cache_info(ListKind::Prompts).fetches, 1);
        client.close().await;
    });
}

#[test]
fn output_schema_validation_accepts_conforming_results_and_rejects_the_rest() {
    smol::block_on(async {
        let client = builder().validate_output(true).spawn_stdio(&demo_server()).await.unwrap();
        // Nothing listed the tools yet: the first call lists them (once) to learn the schemas.
        let good = client.call_tool("get_stats", json!({"numbers": [1, 2, 3]})).await.unwrap();
        assert_eq!(client.cache_info(ListKind::Tools).fetches, 1);
        #[derive(serde::Deserialize, Debug, PartialEq)]
        struct Stats {
            count: u64,
            sum: f64,
            mean: f64,
        }
        assert_eq!(good.structured::<Stats>().unwrap(), Stats { count: 3, sum: 6.0, mean: 2.0 });

        let bad = client.call_tool("bad_stats", json!({"numbers": [1, 2, 3]})).await.unwrap_err();
        let Error::OutputSchema(error) = &bad else { panic!("{bad:?}") };
        assert_eq!(error.tool(), "bad_stats");
        let message = bad.to_string();
        assert!(message.contains("bad_stats") && message.contains("count"), "{message}");
        assert!(!bad.is_retriable(), "the server would answer the same way again");
        // Tools without an outputSchema are not checked; tool errors are not checked.
        client.call_tool("echo", json!({"message": "hi"})).await.unwrap();
        assert_eq!(client.call_tool("fail", json!({})).await.unwrap().is_error, Some(true));
        assert_eq!(client.cache_info(ListKind::Tools).fetches, 1, "the schemas are learnt once");
        client.close().await;

        // Without validation, the same result passes through, and decoding it fails typed.
        let lax = builder().spawn_stdio(&demo_server()).await.unwrap();
        let result = lax.call_tool("bad_stats", json!({"numbers": [1, 2, 3]})).await.unwrap();
        assert!(result.structured::<Stats>().is_err());
        lax.close().await;
    });
}

#[test]
fn tool_result_helpers_decode_every_kind_of_content() {
    smol::block_on(async {
        let client = builder().spawn_stdio(&demo_server()).await.unwrap();
        let result = client.call_tool("mixed_content", json!({})).await.unwrap();
        assert_eq!(result.joined_text().as_deref(), Some("mixed"));
        let image = result.image().unwrap().unwrap();
        assert_eq!(image.mime_type, "image/png");
        assert_eq!(&image.data[..8], b"\x89PNG\r\n\x1a\n", "the bytes are decoded from base64");
        let audio = result.audio().unwrap().unwrap();
        assert!(audio.mime_type.starts_with("audio/"));
        assert_eq!(&audio.data[..4], b"RIFF");
        let links: Vec<_> = result.resource_links().map(|link| link.uri.as_str()).collect();
        assert_eq!(links, ["demo://readme"]);
        let embedded: Vec<_> = result.embedded_resources().collect();
        assert_eq!(embedded.len(), 1);
        assert_eq!(embedded[0].resource.as_text(), Some("item 7"));
        client.close().await;
    });
}

#[test]
fn statistics_count_every_outcome() {
    smol::block_on(async {
        let client = builder().spawn_stdio(&demo_server()).await.unwrap();
        let before = client.stats();
        client.call_tool("echo", json!({"message": "hi"})).await.unwrap();
        client.ping().await.unwrap();
        // An unknown prompt is a JSON-RPC error answer.
        let failed = client.get_prompt("no_such_prompt", [("a", "b")]).await.unwrap_err();
        assert!(failed.code().is_some() && !failed.is_retriable(), "{failed:?}");
        let slow = CallOptions::default().timeout(Duration::from_millis(50));
        let mut params = mcp_smol::mcp_sansio::schema::CallToolRequestParams::new("sleep");
        params.arguments = json!({"ms": 2000}).as_object().cloned();
        let timed_out = client.call_tool_with(&params, slow).await.unwrap_err();
        assert!(timed_out.is_timeout() && timed_out.is_retriable(), "{timed_out:?}");
        // Dropping a call cancels it.
        let dropped = client.call_tool("sleep", json!({"ms": 2000}));
        futures_lite::future::poll_once(Box::pin(dropped)).await;
        assert_eq!(client.pending_requests(), 0);

        let stats = client.stats();
        let delta = |f: fn(&mcp_smol::mcp_sansio::Stats) -> u64| f(&stats) - f(&before);
        assert_eq!(delta(|s| s.requests_tracked), 5, "{stats:?}");
        assert_eq!(delta(|s| s.requests_completed), 2, "{stats:?}");
        assert_eq!(delta(|s| s.requests_failed), 1, "{stats:?}");
        assert_eq!(delta(|s| s.requests_timed_out), 1, "{stats:?}");
        assert_eq!(delta(|s| s.requests_cancelled), 1, "{stats:?}");
        assert!(delta(|s| s.messages_received) >= 3 && delta(|s| s.bytes_received) > 100, "{stats:?}");
        assert_eq!(stats.parse_errors, 0);
        client.close().await;
        let closed = client.call_tool("echo", json!({"message": "late"})).await.unwrap_err();
        assert!(
            matches!(&closed, Error::Usage(_)) && !closed.is_retriable(),
            "a local close is final: {closed:?}"
        );
    });
}

/// Asserts that `call` sent its request before being polled (the client has one call pending
/// right after the method returned), then awaits it.
async fn sent_when_called<T>(
    client: &mcp_smol::Client,
    what: &str,
    call: impl std::future::Future<Output = T>,
) -> T {
    assert_eq!(client.pending_requests(), 1, "{what} must send when called, not when first polled");
    call.await
}

#[test]
fn every_client_api_method_sends_its_request_when_called() {
    smol::block_on(async {
        let client = builder().spawn_stdio(&demo_server().args(["--page-size", "3"])).await.unwrap();
        let r =
            sent_when_called(&client, "call_tool", client.call_tool("echo", json!({"message": "x"}))).await;
        assert_eq!(r.unwrap().content[0].as_text(), Some("x"));
        let params = mcp_smol::mcp_sansio::schema::CallToolRequestParams::new("add");
        let call = client.call_tool_with(&params, CallOptions::default());
        drop(params);
        sent_when_called(&client, "call_tool_with", call).await.ok();
        sent_when_called(&client, "list_tools", client.list_tools(None)).await.unwrap();
        let all = sent_when_called(&client, "list_all_tools", client.list_all_tools()).await.unwrap();
        assert!(all.len() > 3, "every page");
        sent_when_called(&client, "list_all_resources", client.list_all_resources()).await.unwrap();
        sent_when_called(&client, "list_all_prompts", client.list_all_prompts()).await.unwrap();
        sent_when_called(&client, "ping", client.ping()).await.unwrap();
        // A refusal is known at once too: the future resolves with it, nothing is pending.
        let refused = client.call_tool("echo", json!([1, 2]));
        assert_eq!(client.pending_requests(), 0);
        assert!(matches!(refused.await, Err(Error::Usage(_))));
        client.close().await;
    });
}
