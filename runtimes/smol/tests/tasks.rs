//! The tasks extension (SEP-2663, 2026-07-28) end to end over stdio: the smol client, declaring
//! the extension on a 2026-07-28-only connection, against the demo server with `--tasks` (whose
//! tools that run on their own thread answer with a task, and whose `render` is a task only).
//! `call_tool` follows a task and returns its result; a task's question goes to the
//! `ClientHandler` once; dropping a call cancels its task on the server; a task handle's record
//! is resumed. The conformance crate's `demo_tasks_http.rs` resumes a record on a new
//! connection to the demo server over HTTP.

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use common::{all_capabilities, default_builder, demo_server};
use mcp_smol::mcp_sansio::schema::{
    CallToolRequestParams, ClientCapabilities, ElicitRequestParams, ElicitResult, TASKS_EXTENSION, TaskStatus,
};
use mcp_smol::mcp_sansio::{ProtocolVersion, RequestError};
use mcp_smol::{CallOptions, Client, ClientApi, ClientHandler, Error, HandlerFuture, TaskCall, TaskRecord};
use serde_json::json;

/// Answers every elicitation with a name, counting them; the answer takes a while, as a user
/// does, so that the task is `input_required` on several polls meanwhile.
#[derive(Clone, Default)]
struct Asked(Arc<AtomicUsize>);

impl ClientHandler for Asked {
    fn elicit(&self, _params: ElicitRequestParams) -> HandlerFuture<ElicitResult> {
        self.0.fetch_add(1, Ordering::SeqCst);
        Box::pin(async {
            smol::Timer::after(Duration::from_millis(200)).await;
            Ok(ElicitResult::accept(json!({"name": "Ada"}).as_object().unwrap().clone()))
        })
    }
}

fn with_tasks() -> ClientCapabilities {
    all_capabilities().with_extension(TASKS_EXTENSION, json!({}))
}

async fn connect(capabilities: ClientCapabilities, handler: Asked) -> Client {
    default_builder()
        .configure(|c| c.with_capabilities(capabilities).with_versions(&[ProtocolVersion::V2026_07_28]))
        .handler(handler)
        .spawn_stdio(&demo_server().args(["--tasks"]))
        .await
        .unwrap()
}

/// The ids the demo server's `tasks/cancel` named so far.
async fn cancelled_tasks(client: &Client) -> Vec<String> {
    let result = client.call_tool("cancelled_tasks", json!({})).await.unwrap();
    serde_json::from_str(result.content[0].as_text().unwrap()).unwrap()
}

#[test]
fn call_tool_follows_a_task_to_its_result() {
    smol::block_on(async {
        let client = connect(with_tasks(), Asked::default()).await;
        assert!(client.server_capabilities().unwrap().has_extension(TASKS_EXTENSION));
        // `render` runs only as a task: the call polls it and returns its result.
        let sent = client.stats().messages_sent;
        let rendered = client.call_tool("render", json!({"frames": 3, "frame_ms": 20})).await.unwrap();
        assert_eq!(rendered.structured_content, Some(json!({"frames": 3, "frameMs": 20})), "{rendered:?}");
        assert!(client.stats().messages_sent >= sent + 2, "the call and at least one tasks/get");
        // A tool that answers at once without the extension is a task with it, as transparently.
        let slept = client.call_tool("sleep", json!({"ms": 30})).await.unwrap();
        assert_eq!(slept.content[0].as_text(), Some("slept 30 ms"));
        // A task that fails ends the call with the server's error.
        let failed = client.call_tool("render", json!({"frames": 1, "fail": true})).await.unwrap_err();
        let Error::Request(RequestError::Server(error)) = &failed else { panic!("{failed:?}") };
        assert_eq!(error.code, -32000, "{failed}");
        client.close().await;

        // Without the extension, the task-only tool is -32021 naming it.
        let client = connect(all_capabilities(), Asked::default()).await;
        let refused = client.call_tool("render", json!({"frames": 1})).await.unwrap_err();
        let Error::Request(RequestError::Server(error)) = &refused else { panic!("{refused:?}") };
        assert!(error.mcp_error().is_some_and(|e| e.requires_extension(TASKS_EXTENSION)), "{refused}");
        client.close().await;
    });
}

#[test]
fn a_task_asks_the_handler_once() {
    smol::block_on(async {
        let asked = Asked::default();
        let client = connect(with_tasks(), asked.clone()).await;
        // The task is `input_required` on every poll until `tasks/update` answers it.
        let sent = client.stats().messages_sent;
        let elicited = client.call_tool("elicit", json!({"message": "who?"})).await.unwrap();
        // The call, its tasks/update, and more than one tasks/get while the user was asked.
        assert!(client.stats().messages_sent >= sent + 4, "{}", client.stats().messages_sent - sent);
        let text = elicited.content[0].as_text().unwrap();
        assert_eq!(text, r#"action=accept content={"name":"Ada"}"#);
        assert_eq!(asked.0.load(Ordering::SeqCst), 1, "asked once");
        client.close().await;
    });
}

#[test]
fn dropping_a_call_cancels_its_task() {
    smol::block_on(async {
        let client = connect(with_tasks(), Asked::default()).await;
        assert!(cancelled_tasks(&client).await.is_empty());
        let call = client.call_tool("sleep", json!({"ms": 60_000}));
        // The call runs for a while (its task made, polled), then is dropped.
        let outcome = smol::future::or(async { Some(call.await) }, async {
            smol::Timer::after(Duration::from_millis(300)).await;
            None
        })
        .await;
        assert!(outcome.is_none(), "a minute's sleep did not end: {outcome:?}");
        let start = Instant::now();
        let cancelled = loop {
            let cancelled = cancelled_tasks(&client).await;
            if !cancelled.is_empty() || start.elapsed() > Duration::from_secs(5) {
                break cancelled;
            }
            smol::Timer::after(Duration::from_millis(20)).await;
        };
        assert_eq!(cancelled.len(), 1, "one tasks/cancel: {cancelled:?}");
        client.close().await;
    });
}

#[test]
fn a_task_handle_is_resumed_from_its_record() {
    smol::block_on(async {
        let client = connect(with_tasks(), Asked::default()).await;
        let params = CallToolRequestParams::new("render")
            .with_arguments(json!({"frames": 5, "frame_ms": 20}).as_object().unwrap().clone());
        let TaskCall::Started(handle) =
            client.call_tool_as_task(&params, CallOptions::default()).await.unwrap()
        else {
            panic!("render is always a task")
        };
        assert_eq!(handle.status(), Some(&TaskStatus::Working));
        let saved = serde_json::to_string(handle.record()).unwrap();
        drop(handle);
        let record: TaskRecord = serde_json::from_str(&saved).unwrap();
        let mut resumed = client.resume_task(record.clone());
        assert_eq!(resumed.status(), None, "nothing sent yet");
        let polled = resumed.poll().await.unwrap();
        assert_eq!(polled.task_id, record.task_id);
        let result = resumed.result().await.unwrap();
        assert_eq!(result.structured_content, Some(json!({"frames": 5, "frameMs": 20})));
        // Done: the task stays completed, and a cancel now is acknowledged and changes nothing.
        resumed.cancel().await.unwrap();
        assert_eq!(resumed.poll().await.unwrap().status, TaskStatus::Completed);
        client.close().await;
    });
}
