//! Interop: 2025-11-25 experimental tasks (SEP-1686) against server-everything (TypeScript SDK),
//! whose `simulate-research-query` is a task tool: it works through four stages, and, when
//! `ambiguous`, asks the client for a clarification (an elicitation tied to the task) while
//! the client waits on `tasks/result`.
//!
//! Needs Node and the server (`.ci/install-peers`); `.ci/interop` runs these with
//! `MCP_EVERYTHING_SERVER` set. Plain `cargo test` skips them.

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use common::{Handler, text, wait_for_tool};
use mcp_sansio::schema::{
    CallToolRequestParams, CreateMessageRequestParams, CreateMessageResult, ElicitRequestParams,
    ElicitResult, Implementation, ListRootsResult, TaskStatus,
};
use mcp_smol::{
    CallOptions, Client, ClientApi, ClientBuilder, ClientHandler, HandlerFuture, ServerCommand, TaskCall,
    TaskRecord,
};
use serde_json::json;

fn everything() -> ServerCommand {
    let entry = std::env::var("MCP_EVERYTHING_SERVER")
        .expect("MCP_EVERYTHING_SERVER must point at server-everything's dist/index.js: run .ci/interop");
    ServerCommand::new("node").args([entry.as_str(), "stdio"]).stderr(mcp_smol::StderrSink::Discard)
}

/// Counts the elicitations, and answers them with an interpretation.
struct Clarifier(Arc<AtomicUsize>);

impl ClientHandler for Clarifier {
    fn list_roots(&self) -> HandlerFuture<ListRootsResult> {
        Handler.list_roots()
    }

    fn create_message(&self, params: CreateMessageRequestParams) -> HandlerFuture<CreateMessageResult> {
        Handler.create_message(params)
    }

    fn elicit(&self, _params: ElicitRequestParams) -> HandlerFuture<ElicitResult> {
        self.0.fetch_add(1, Ordering::SeqCst);
        let content = json!({"interpretation": "the programming language"});
        Box::pin(async move { Ok(ElicitResult::accept(content.as_object().cloned().unwrap_or_default())) })
    }
}

async fn connect(elicitations: Arc<AtomicUsize>) -> Client {
    let client = ClientBuilder::new(Implementation::new("mcp-sansio-interop", "0.1.0"))
        .configure(|c| c.with_capabilities(common::capabilities()))
        .handler(Clarifier(elicitations))
        .spawn_stdio(&everything())
        .await
        .expect("connect to server-everything");
    wait_for_tool(&client, "simulate-research-query").await;
    client
}

fn research(topic: &str, ambiguous: bool) -> CallToolRequestParams {
    let arguments = json!({"topic": topic, "ambiguous": ambiguous});
    CallToolRequestParams::new("simulate-research-query")
        .with_arguments(arguments.as_object().cloned().unwrap())
}

#[test]
#[ignore = "needs server-everything: run .ci/interop"]
fn a_task_tool_runs_as_a_task_and_its_handle_waits_for_the_report() {
    smol::block_on(async {
        let client = connect(Arc::default()).await;
        let started =
            client.call_tool_as_task(&research("rust", false), CallOptions::default()).await.unwrap();
        let TaskCall::Started(handle) = started else {
            panic!("server-everything makes a task of this tool")
        };
        assert_eq!(handle.status(), Some(&TaskStatus::Working));
        // The server lists it among its tasks, and a poll sees it.
        let listed = client.list_tasks(None).await.unwrap();
        assert!(listed.tasks.iter().any(|t| t.task_id == handle.id()), "{listed:?}");
        let mut polled = handle.clone();
        let now = polled.poll().await.unwrap();
        assert_eq!(now.task_id, handle.id());
        // The record survives JSON; a handle made from it waits for the same task's report.
        let saved = serde_json::to_string(handle.record()).unwrap();
        let record: TaskRecord = serde_json::from_str(&saved).unwrap();
        let report = client.resume_task(record).result().await.unwrap();
        assert!(text(&report).contains("# Research Report: rust"), "{}", text(&report));
        assert!(client.close_within(Duration::from_secs(10)).await);
    });
}

#[test]
#[ignore = "needs server-everything: run .ci/interop"]
fn a_task_that_needs_input_asks_the_handler_once_while_the_client_waits_on_tasks_result() {
    smol::block_on(async {
        let elicitations = Arc::new(AtomicUsize::new(0));
        let client = connect(elicitations.clone()).await;
        let report = client
            .call_tool_as_task(&research("python", true), CallOptions::default())
            .await
            .unwrap()
            .result()
            .await;
        let report = report.unwrap();
        assert_eq!(elicitations.load(Ordering::SeqCst), 1);
        assert!(text(&report).contains("the programming language"), "{}", text(&report));
        // A tool without task support is a plain call, even through call_tool_as_task.
        let echo = client.call_tool_as_task(
            &CallToolRequestParams::new("echo")
                .with_arguments(json!({"message": "hi"}).as_object().cloned().unwrap()),
            CallOptions::default(),
        );
        let TaskCall::Finished(echo) = echo.await.unwrap() else { panic!("echo is no task tool") };
        assert_eq!(text(&echo), "Echo: hi");
        assert!(client.close_within(Duration::from_secs(10)).await);
    });
}

/// The client as a task receiver: server-everything asks for a task-augmented sampling or
/// elicitation, polls `tasks/get`, then fetches `tasks/result`.
#[test]
#[ignore = "needs server-everything: run .ci/interop"]
fn the_client_hosts_the_servers_sampling_and_elicitation_as_tasks() {
    smol::block_on(async {
        let elicitations = Arc::new(AtomicUsize::new(0));
        let client = ClientBuilder::new(Implementation::new("mcp-sansio-interop", "0.1.0"))
            .configure(|c| c.with_capabilities(common::capabilities().with_hosted_tasks()))
            .handler(Clarifier(elicitations.clone()))
            .spawn_stdio(&everything())
            .await
            .expect("connect to server-everything");
        // server-everything registers these only for a client that hosts such tasks.
        wait_for_tool(&client, "trigger-sampling-request-async").await;
        wait_for_tool(&client, "trigger-elicitation-request-async").await;

        let sampled =
            client.call_tool("trigger-sampling-request-async", json!({"prompt": "hello"})).await.unwrap();
        let sampled = text(&sampled);
        assert!(sampled.starts_with("[COMPLETED]"), "{sampled}");
        assert!(sampled.contains("Task created: client-task-"), "{sampled}");
        assert!(
            sampled.contains("reply to"),
            "the handler's answer came back through tasks/result: {sampled}"
        );

        let elicited = client.call_tool("trigger-elicitation-request-async", json!({})).await.unwrap();
        let elicited = text(&elicited);
        assert!(elicited.contains("COMPLETED") || elicited.contains("completed"), "{elicited}");
        assert_eq!(elicitations.load(Ordering::SeqCst), 1);
        assert!(client.close_within(Duration::from_secs(10)).await);
    });
}
