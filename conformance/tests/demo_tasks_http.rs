//! The tasks extension (SEP-2663) over Streamable HTTP: the smol client against the demo server
//! `--http 127.0.0.1:0 --tasks`, whose tasks belong to its stateless 2026-07-28 side and so
//! outlive connections. A task started on one connection is resumed from its record on
//! another (after the first closed), as an application does after a restart; a plain
//! `call_tool` follows its task over HTTP too (every `tasks/*` request carries `Mcp-Name:
//! <taskId>`, which the demo server checks, and dropping the call cancels the task).

mod demo;

use std::time::{Duration, Instant};

use demo::DemoHttp;
use mcp_hyper::HyperTransport;
use mcp_sansio::ProtocolVersion;
use mcp_sansio::http::HttpConfig;
use mcp_sansio::schema::{
    CallToolRequestParams, ClientCapabilities, ElicitRequestParams, ElicitResult, Implementation,
    TASKS_EXTENSION,
};
use mcp_smol::{
    CallOptions, Client, ClientApi, ClientBuilder, ClientHandler, HandlerFuture, TaskCall, TaskRecord,
};
use mcp_surf::SurfTransport;
use serde_json::json;

struct Name;

impl ClientHandler for Name {
    fn elicit(&self, _params: ElicitRequestParams) -> HandlerFuture<ElicitResult> {
        Box::pin(async { Ok(ElicitResult::accept(json!({"name": "Lin"}).as_object().unwrap().clone())) })
    }
}

fn builder() -> ClientBuilder {
    let capabilities = ClientCapabilities { elicitation: Some(Default::default()), ..Default::default() }
        .with_extension(TASKS_EXTENSION, json!({}));
    ClientBuilder::new(Implementation::new("mcp-conformance-tasks", "0.0.0"))
        .configure(|c| c.with_capabilities(capabilities).with_versions(&[ProtocolVersion::V2026_07_28]))
        .handler(Name)
        .era_cache(None)
}

#[test]
fn a_task_started_on_one_connection_is_resumed_on_another() {
    smol::block_on(async {
        let server = DemoHttp::start_with(&["--tasks"]);
        let first: Client =
            builder().spawn_http(HttpConfig::new(server.url.clone()), HyperTransport::new()).await.unwrap();
        let params = CallToolRequestParams::new("render")
            .with_arguments(json!({"frames": 10, "frame_ms": 30}).as_object().unwrap().clone());
        let TaskCall::Started(handle) =
            first.call_tool_as_task(&params.name, &params.arguments, CallOptions::default()).await.unwrap()
        else {
            panic!("render is always a task")
        };
        let saved = serde_json::to_string(handle.record()).unwrap();
        drop(handle);
        first.close().await;

        // "After a restart": another connection (another HTTP driver, too) picks the task up.
        let record: TaskRecord = serde_json::from_str(&saved).unwrap();
        let second =
            builder().spawn_http(HttpConfig::new(server.url.clone()), SurfTransport::new()).await.unwrap();
        let result = second.resume_task(record).result().await.unwrap();
        assert_eq!(result.structured_content, Some(json!({"frames": 10, "frameMs": 30})), "{result:?}");

        // A plain call follows its task over HTTP, its question answered by the handler.
        let elicited = second.call_tool("elicit", json!({"message": "who?"})).await.unwrap();
        assert_eq!(elicited.content[0].as_text(), Some(r#"action=accept content={"name":"Lin"}"#));

        // Dropping a call cancels its task: the server logs the tasks/cancel.
        let call = second.call_tool("sleep", json!({"ms": 60_000}));
        let outcome = smol::future::or(async { Some(call.await) }, async {
            smol::Timer::after(Duration::from_millis(300)).await;
            None
        })
        .await;
        assert!(outcome.is_none(), "{outcome:?}");
        let start = Instant::now();
        while !server.stderr().contains("demo-server: tasks/cancel ")
            && start.elapsed() < Duration::from_secs(5)
        {
            smol::Timer::after(Duration::from_millis(20)).await;
        }
        assert!(server.stderr().contains("demo-server: tasks/cancel "), "{}", server.stderr());
        second.close().await;
    });
}
