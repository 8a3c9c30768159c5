//! The API as applications reach for it, against the demo server in real child processes:
//! per-call options on every typed call (`with_options`, on a client and on a pool), tool
//! arguments of any serializable type, `ping` as a health check in both eras, the prelude and
//! the version constants, what a client still tells about its server once the connection is
//! over, and `Error::is_closed` for every way of learning that it is.
#![allow(clippy::unwrap_used)]

mod common;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use common::{builder, default_builder, demo_server, wait_until};
use mcp_smol::mcp_sansio::{RequestError, UsageError};
// Everything else this file names comes from the prelude.
use mcp_smol::prelude::*;
use serde::Serialize;
use serde_json::json;

/// Sends `signal` (`STOP`, `CONT`, `KILL`) to our own server process, by its pid.
fn signal(pid: u32, signal: &str) {
    let status = std::process::Command::new("kill").arg(format!("-{signal}")).arg(pid.to_string()).status();
    assert!(status.unwrap().success(), "kill -{signal} {pid}");
}

/// A builder pinned to 2026-07-28, where `ping` does not exist.
fn modern_builder() -> ClientBuilder {
    default_builder().era_cache(None).configure(|c| c.with_versions(&[ProtocolVersion::V2026_07_28]))
}

fn text(result: &CallToolResult) -> &str {
    result.content[0].as_text().unwrap()
}

#[test]
fn the_prelude_and_the_version_constants_name_what_programs_use() {
    // The names of the README's and the examples' programs, all from the prelude.
    let info: Implementation = Implementation::new("my-app", mcp_smol::VERSION);
    let _config: ClientConfig = ClientConfig::new(info);
    let _params: CallToolRequestParams = CallToolRequestParams::new("echo");
    let _tools: Vec<Tool> = Vec::new();
    let _content: Option<ContentBlock> = None;
    let _http: HttpConfig = HttpConfig::new("http://127.0.0.1:1/mcp");
    let _strategy = Strategy::LeastBusy;
    let _kind: Option<ListKind> = None;
    let _notification: Option<ServerNotification> = None;
    let _status: Option<Status> = None;

    assert_eq!(mcp_smol::VERSION, env!("CARGO_PKG_VERSION"));
    assert_eq!(mcp_smol::LATEST_PROTOCOL_VERSION, ProtocolVersion::V2026_07_28);
    assert_eq!(mcp_smol::SUPPORTED_PROTOCOL_VERSIONS, ProtocolVersion::ALL);
    assert_eq!(mcp_smol::SUPPORTED_PROTOCOL_VERSIONS.last(), Some(&mcp_smol::LATEST_PROTOCOL_VERSION));
}

#[test]
fn ping_is_a_round_trip_in_both_eras() {
    smol::block_on(async {
        for (builder, version) in
            [(builder(), ProtocolVersion::V2025_11_25), (modern_builder(), ProtocolVersion::V2026_07_28)]
        {
            let client = builder.spawn_stdio(&demo_server()).await.unwrap();
            assert_eq!(client.protocol_version(), Some(version));
            for _ in 0..2 {
                let sent = client.stats().messages_sent;
                client.ping().await.unwrap_or_else(|e| panic!("ping on {version}: {e}"));
                assert!(client.stats().messages_sent > sent, "{version}: a request went to the server");
            }
            // A server that stopped answering fails the health check (a deadline, not a hang).
            let pid = client.server_pid().unwrap();
            signal(pid, "STOP");
            let quick = client.with_options(CallOptions::default().timeout(Duration::from_millis(200)));
            let stopped = quick.ping().await;
            signal(pid, "CONT");
            assert!(stopped.as_ref().is_err_and(Error::is_timeout), "{version}: {stopped:?}");
            client.ping().await.unwrap();
            client.close().await;
        }
    });
}

#[test]
fn a_pool_pings_members_of_either_era() {
    smol::block_on(async {
        let pool = Pool::default();
        pool.add_stdio(builder, &demo_server()).await.unwrap();
        pool.add_stdio(modern_builder, &demo_server()).await.unwrap();
        for _ in 0..4 {
            pool.ping().await.unwrap();
        }
        assert_eq!(pool.stats().failed, 0);
        pool.close().await;
    });
}

#[test]
fn with_options_applies_to_every_typed_call_of_that_handle() {
    smol::block_on(async {
        let client = builder().spawn_stdio(&demo_server()).await.unwrap();
        let pid = client.server_pid().unwrap();
        let quick = client.with_options(CallOptions::default().timeout(Duration::from_millis(200)));

        // A stopped server answers nothing: each call of `quick` fails at its 200 ms, where the
        // connection's default would wait 60 s.
        signal(pid, "STOP");
        let started = Instant::now();
        let listed = quick.list_tools(None).await;
        let all = quick.list_all_resources().await;
        let read = quick.read_resource("demo://readme").await;
        let called = quick.call_tool("echo", json!({"message": "late"})).await;
        let prompt = quick.get_prompt("greeting", [("name", "Ada")]).await;
        let elapsed = started.elapsed();
        signal(pid, "CONT");
        assert!(listed.as_ref().is_err_and(Error::is_timeout), "{listed:?}");
        assert!(all.as_ref().is_err_and(Error::is_timeout), "{all:?}");
        assert!(read.as_ref().is_err_and(Error::is_timeout), "{read:?}");
        assert!(called.as_ref().is_err_and(Error::is_timeout), "{called:?}");
        assert!(prompt.as_ref().is_err_and(Error::is_timeout), "{prompt:?}");
        assert!(elapsed < Duration::from_secs(5), "five calls took {elapsed:?}");

        // The handle it came from keeps the connection's defaults, and the same connection.
        assert!(!client.list_tools(None).await.unwrap().tools.is_empty());
        assert_eq!(quick.server_pid(), Some(pid));

        // A call's own options win over the handle's.
        let mut sleep = CallToolRequestParams::new("sleep");
        sleep.arguments = json!({"ms": 400}).as_object().cloned();
        let patient = CallOptions::default().timeout(Duration::from_secs(10));
        assert_eq!(text(&quick.call_tool_with(&sleep, patient).await.unwrap()), "slept 400 ms");
        let timed_out = quick.call_tool_with(&sleep, CallOptions::default()).await.unwrap_err();
        assert!(timed_out.is_timeout(), "{timed_out:?}");
        // The same with arguments of any serializable type, as `call_tool` takes them.
        #[derive(serde::Serialize)]
        struct Sleep {
            ms: u64,
        }
        let patient = CallOptions::default().timeout(Duration::from_secs(10));
        let slept = quick.call_tool_with_options("sleep", Sleep { ms: 400 }, patient).await.unwrap();
        assert_eq!(text(&slept), "slept 400 ms");
        let timed_out =
            quick.call_tool_with_options("sleep", Sleep { ms: 400 }, CallOptions::default()).await;
        assert!(timed_out.unwrap_err().is_timeout());
        let not_an_object = quick.call_tool_with_options("sleep", 400, CallOptions::default()).await;
        assert!(matches!(not_an_object, Err(mcp_smol::Error::Usage(_))), "{not_an_object:?}");

        // Progress through `call_tool`, which takes no options of its own.
        let seen = Arc::new(AtomicUsize::new(0));
        let counter = seen.clone();
        let watched = client.with_options(CallOptions::default().on_progress(move |_| {
            counter.fetch_add(1, Ordering::SeqCst);
        }));
        watched.call_tool("long_running", json!({"steps": 3, "step_ms": 1})).await.unwrap();
        assert_eq!(seen.load(Ordering::SeqCst), 3, "one callback per progress notification");
        drop((quick, watched));
        client.close().await;
    });
}

#[test]
fn a_pool_with_options_applies_them_to_its_members_calls() {
    smol::block_on(async {
        let pool = Pool::default();
        pool.add_stdio(builder, &demo_server()).await.unwrap();
        let pid = pool.members()[0].server_pid.unwrap();
        let quick = pool.with_options(CallOptions::default().timeout(Duration::from_millis(200)));
        signal(pid, "STOP");
        let started = Instant::now();
        let listed = quick.list_all_tools().await;
        let page = quick.list_tools(None).await;
        let called = quick.call_tool("echo", json!({"message": "late"})).await;
        let in_transaction = quick.transaction(|client| async move { client.ping().await }).await;
        let elapsed = started.elapsed();
        signal(pid, "CONT");
        for result in [listed.map(drop), page.map(drop), called.map(drop), in_transaction] {
            assert!(result.as_ref().is_err_and(Error::is_timeout), "{result:?}");
        }
        assert!(elapsed < Duration::from_secs(5), "four calls took {elapsed:?}");
        assert!(pool.list_all_tools().await.is_ok(), "the pool it came from keeps the defaults");
        pool.close().await;
    });
}

#[derive(Serialize)]
struct Echo<'a> {
    message: &'a str,
}

/// The reason `call` was refused, checking that it was refused when made.
async fn refusal(
    client: &Client,
    call: impl std::future::Future<Output = Result<CallToolResult, Error>>,
) -> String {
    assert_eq!(client.pending_requests(), 0, "refused when made, nothing pending");
    match call.await {
        Err(Error::Usage(UsageError::InvalidParams(reason))) => reason,
        other => panic!("{other:?}"),
    }
}

#[test]
fn call_tool_takes_any_serializable_arguments() {
    smol::block_on(async {
        let client = builder().spawn_stdio(&demo_server()).await.unwrap();
        // A struct, a borrowed `Value`, a map, and the `json!` of the README.
        let typed = client.call_tool("echo", Echo { message: "typed" }).await.unwrap();
        assert_eq!(text(&typed), "typed");
        let value = json!({"a": 2, "b": 3});
        assert_eq!(text(&client.call_tool("add", &value).await.unwrap()), "5");
        let map: BTreeMap<&str, &str> = [("message", "mapped")].into();
        assert_eq!(text(&client.call_tool("echo", &map).await.unwrap()), "mapped");
        assert_eq!(text(&client.call_tool("echo", json!({"message": "json"})).await.unwrap()), "json");
        // Nothing: `()`, `None` and `null` send no arguments.
        let none: Option<Echo<'_>> = None;
        for image in [
            client.call_tool("tiny_image", ()).await,
            client.call_tool("tiny_image", none).await,
            client.call_tool("tiny_image", json!(null)).await,
        ] {
            assert!(image.unwrap().image().is_some());
        }
        // Anything but an object is refused at once, with nothing sent.
        let sent = client.stats().messages_sent;
        let refused = [
            refusal(&client, client.call_tool("echo", [1, 2])).await,
            refusal(&client, client.call_tool("echo", "text")).await,
            refusal(&client, client.call_tool("echo", json!(42))).await,
        ];
        assert!(refused.iter().all(|e| e.contains("must be a JSON object")), "{refused:?}");
        assert_eq!(client.stats().messages_sent, sent);

        // A pool takes them too.
        let pool = Pool::default();
        pool.add(move || {
            let client = client.clone();
            async move { Ok(client) }
        })
        .await
        .unwrap();
        assert_eq!(text(&pool.call_tool("echo", Echo { message: "pooled" }).await.unwrap()), "pooled");
        let refused = pool.call_tool("echo", [1]).await.unwrap_err();
        assert!(matches!(refused, Error::Usage(UsageError::InvalidParams(_))), "{refused:?}");
        assert_eq!(pool.stats().requests, 1, "a refused argument never reached a member");
        pool.close().await;
    });
}

#[test]
fn the_server_stays_known_after_the_connection_ends() {
    smol::block_on(async {
        for builder in [builder(), modern_builder()] {
            // Closed by the application.
            let client = builder.spawn_stdio(&demo_server()).await.unwrap();
            let version = client.protocol_version().unwrap();
            let info = client.server_info().unwrap();
            let capabilities = client.server_capabilities().unwrap();
            let instructions = client.instructions();
            client.close().await;
            assert!(matches!(client.status(), Status::Closed(_)));
            assert_eq!(client.protocol_version(), Some(version));
            assert_eq!(client.server_info(), Some(info.clone()));
            assert_eq!(client.server_capabilities(), Some(capabilities));
            assert_eq!(client.instructions(), instructions);
        }
        // Ended by the server: killed.
        let client = builder().spawn_stdio(&demo_server()).await.unwrap();
        signal(client.server_pid().unwrap(), "KILL");
        assert!(wait_until(Duration::from_secs(5), || matches!(client.status(), Status::Closed(_))));
        assert_eq!(client.protocol_version(), Some(ProtocolVersion::V2025_11_25));
        assert_eq!(client.server_info().unwrap().name, "mcp-demo-server");
        client.close().await;
    });
}

#[test]
fn is_closed_says_the_connection_is_over_whichever_way_it_was_learnt() {
    smol::block_on(async {
        // A call in flight when the server dies: RequestError::ConnectionClosed.
        let client = builder().spawn_stdio(&demo_server()).await.unwrap();
        let call = client.call_tool("sleep", json!({"ms": 10_000}));
        signal(client.server_pid().unwrap(), "KILL");
        let died = call.await.unwrap_err();
        assert!(matches!(died, Error::Request(RequestError::ConnectionClosed(_))), "{died:?}");
        assert!(died.is_closed());
        // A call made after that: UsageError::Closed, nothing sent.
        let later = client.ping().await.unwrap_err();
        assert!(matches!(later, Error::Usage(UsageError::Closed(_))), "{later:?}");
        assert!(later.is_closed());
        client.close().await;

        // A server that exits before the handshake: Error::Connect.
        let exits = ServerCommand::new("/bin/sh").args(["-c", "exit 3"]);
        let failed = builder().spawn_stdio(&exits).await.unwrap_err();
        assert!(matches!(failed, Error::Connect(_)), "{failed:?}");
        assert!(failed.is_closed());

        // A driver dropped before it finished: Error::DriverGone.
        let (client, driver) = builder().stdio(&demo_server()).unwrap();
        drop(driver);
        let gone = client.ping().await.unwrap_err();
        assert!(matches!(gone, Error::DriverGone), "{gone:?}");
        assert!(gone.is_closed());

        // A timeout and a server's error answer leave the connection open.
        let client = builder().spawn_stdio(&demo_server()).await.unwrap();
        let slow = CallOptions::default().timeout(Duration::from_millis(50));
        let mut sleep = CallToolRequestParams::new("sleep");
        sleep.arguments = json!({"ms": 2000}).as_object().cloned();
        let timeout = client.call_tool_with(&sleep, slow).await.unwrap_err();
        assert!(timeout.is_timeout() && !timeout.is_closed(), "{timeout:?}");
        let answer = client.get_prompt("no_such_prompt", [("a", "b")]).await.unwrap_err();
        assert!(answer.code().is_some() && !answer.is_closed(), "{answer:?}");
        client.close().await;
    });
}

#[test]
fn a_tool_calls_future_stays_as_small_as_the_call() {
    smol::block_on(async {
        let client = builder().spawn_stdio(&demo_server()).await.unwrap();
        let value = client.call_tool("echo", json!({"message": "size"}));
        let typed = client.call_tool("echo", Echo { message: "size" });
        let viewed = client.with_options(CallOptions::default().timeout(Duration::from_secs(5)));
        let through_view = viewed.call_tool("echo", json!({"message": "size"}));
        let sizes = [size_of_val(&value), size_of_val(&typed), size_of_val(&through_view)];
        eprintln!("call_tool future sizes: {sizes:?}");
        // docs/performance.md: 104 bytes (a plain state machine around the response); the
        // arguments' type must not make it any larger.
        assert!(sizes.iter().all(|&size| size <= 128), "{sizes:?}");
        for result in [value.await, typed.await, through_view.await] {
            assert_eq!(text(&result.unwrap()), "size");
        }
        client.close().await;
    });
}
