//! What the task tests check, whatever the transport (`tests/tasks_stdio.rs`,
//! `tests/tasks_http.rs`): one scenario per `task_*` mode of `mcp-adversary` (`src/tasks.rs`),
//! each run on a client that is connected, and whose collateral `echo`, memory and leaks the
//! transport's harness checks around it. The server's `task_report` tool says what it received
//! (`tasks/cancel` per task id, refusals by their `data.limit`, ...).
#![allow(dead_code)]

use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use futures_lite::future;
use mcp_smol::mcp_sansio::schema::{
    CallToolRequestParams, CallToolResult, ClientCapabilities, ElicitRequestParams, ElicitResult,
    Implementation, TASKS_EXTENSION,
};
use mcp_smol::mcp_sansio::{ProtocolVersion, RequestError};
use mcp_smol::{CallOptions, Client, ClientApi, ClientBuilder, ClientHandler, Error, HandlerFuture};
use serde_json::{Value, json};

use crate::common::{Resources, peak_rss_bytes, reset_peak_rss, rss_bytes};

/// How soon a failure that needs no deadline must come (a debug build on a busy 2-core machine).
pub(crate) const PROMPT: Duration = Duration::from_secs(2);
/// The idle timeout of the calls: none of them should run into it.
pub(crate) const LONG: Duration = Duration::from_secs(30);
/// Growth of the peak resident set allowed during one case.
pub(crate) const RSS_LIMIT: usize = 16 << 20;
/// The default `max_open_server_requests`: the one budget of what the server asks.
const BUDGET: u64 = 256;
/// The default `TaskPolicy::max_inputs`.
const MAX_INPUTS: usize = 64;

/// Answers elicitations (accepting, with nothing), or never; counts how often it was asked.
#[derive(Clone)]
pub(crate) struct Asker {
    pub(crate) asked: Arc<AtomicUsize>,
    answers: bool,
}

impl Asker {
    pub(crate) fn new(answers: bool) -> Self {
        Self { asked: Arc::new(AtomicUsize::new(0)), answers }
    }
}

impl ClientHandler for Asker {
    fn elicit(&self, _params: ElicitRequestParams) -> HandlerFuture<ElicitResult> {
        self.asked.fetch_add(1, Ordering::SeqCst);
        if self.answers {
            Box::pin(async { Ok(ElicitResult::accept(Default::default())) })
        } else {
            Box::pin(std::future::pending())
        }
    }
}

/// The client for `mode`: 2026-07-28 with the tasks extension, or, for `task_result_flood`,
/// 2025-11-25 hosting tasks for elicitations (`tasks.requests.elicitation.create`). For
/// `task_input_burst`, `TaskPolicy::max_inputs` is lifted.
pub(crate) fn builder(mode: &str, asker: Asker) -> ClientBuilder {
    let base = ClientCapabilities::default().with_elicitation_form();
    let (capabilities, version) = if mode == "task_result_flood" {
        let mut capabilities = base;
        capabilities.tasks = json!({"requests": {"elicitation": {"create": {}}}}).as_object().cloned();
        (capabilities, ProtocolVersion::V2025_11_25)
    } else {
        (base.with_extension(TASKS_EXTENSION, json!({})), ProtocolVersion::V2026_07_28)
    };
    let burst = mode == "task_input_burst";
    ClientBuilder::new(Implementation::new("mcp-adversary-tasks", "0.0.0"))
        .configure(|c| {
            let mut c = c.with_capabilities(capabilities).with_versions(&[version]);
            if burst {
                // The bound over a task's life (64 inputs) would refuse the burst first, with
                // `TooManyTaskInputs(64)`: lifted, to show the one budget's.
                c.tasks.max_inputs = u32::MAX;
            }
            c
        })
        .handler(asker)
        .era_cache(None)
}

/// Whether the handler answers in the case of `mode` (the hosted task's must stay open).
pub(crate) fn answers(mode: &str) -> bool {
    mode != "task_result_flood"
}

pub(crate) async fn timed<T>(work: impl Future<Output = T>) -> (T, Duration) {
    let start = Instant::now();
    let out = work.await;
    (out, start.elapsed())
}

pub(crate) async fn call(client: &Client, name: &str, arguments: Value) -> Result<CallToolResult, Error> {
    let Value::Object(arguments) = arguments else { panic!("arguments must be an object") };
    let params = CallToolRequestParams::new(name).with_arguments(arguments);
    client.call_tool_with(&params, CallOptions::default().timeout(LONG)).await
}

/// The text of a result's first content block.
pub(crate) fn text(result: &CallToolResult) -> &str {
    result.content.first().and_then(|block| block.as_text()).expect("a text block")
}

/// `echo` still works, promptly.
pub(crate) async fn still_answers(client: &Client, message: &str) {
    let (result, took) = timed(call(client, "echo", json!({"message": message}))).await;
    let result = result.unwrap_or_else(|e| panic!("echo {message:?} failed: {e}"));
    assert_eq!(text(&result), message);
    assert!(took < PROMPT, "echo took {took:?}");
}

/// What the server received so far.
pub(crate) async fn report(client: &Client) -> Value {
    let result = call(client, "task_report", json!({})).await.expect("task_report succeeds");
    serde_json::from_str(text(&result)).expect("the report is JSON")
}

/// The report once `done` holds (a `tasks/cancel` or an answer may still be on its way: over
/// HTTP each is a `POST` of its own), or as it is after 5 s.
pub(crate) async fn report_once(client: &Client, done: impl Fn(&Value) -> bool) -> Value {
    let start = Instant::now();
    loop {
        let report = report(client).await;
        if done(&report) || start.elapsed() > Duration::from_secs(5) {
            return report;
        }
        smol::Timer::after(Duration::from_millis(20)).await;
    }
}

/// The report once nothing more came for 300 ms after `done` held.
async fn settled_report(client: &Client, done: impl Fn(&Value) -> bool) -> Value {
    let first = report_once(client, done).await;
    smol::Timer::after(Duration::from_millis(300)).await;
    let report = report(client).await;
    assert_eq!(report["cancels"], first["cancels"], "more tasks/cancel came: {report}");
    report
}

fn is_request_error(
    outcome: &Result<CallToolResult, Error>,
    expected: impl Fn(&RequestError) -> bool,
) -> bool {
    matches!(outcome, Err(Error::Request(error)) if expected(error))
}

/// `task_id_reuse`: a second call answered with the id of the task the first call follows
/// fails `InvalidResponse`; the first completes with its own result; the task is not cancelled.
pub(crate) async fn id_reuse(client: Client, _asked: Arc<AtomicUsize>) {
    let first = call(&client, "task_id_reuse", json!({}));
    let second = async {
        // Once the first call's answer is out (the task completes ~400 ms after it).
        report_once(&client, |r| r["calls"] == 1).await;
        smol::Timer::after(Duration::from_millis(50)).await;
        timed(call(&client, "task_id_reuse", json!({}))).await
    };
    let (first, (second, took)) = future::zip(first, second).await;
    assert!(
        is_request_error(
            &second,
            |e| matches!(e, RequestError::InvalidResponse(why) if why.contains("t-reused"))
        ),
        "the second call: {second:?}"
    );
    assert!(took < PROMPT, "the second call failed after {took:?}");
    let first = first.expect("the first call completes");
    assert_eq!(text(&first), "call 1", "the first call gets its own task's result");
    let report = settled_report(&client, |r| r["calls"] == 2).await;
    assert_eq!(report["calls"], 2, "{report}");
    assert_eq!(report["cancels"], json!({}), "the task was the first call's: not cancelled");
}

/// `task_input_flood`: one new input request per poll; the handler is asked 64 times, then the
/// call fails `TooManyTaskInputs(64)` and the task is cancelled once.
pub(crate) async fn input_flood(client: Client, asked: Arc<AtomicUsize>) {
    let (result, took) = timed(call(&client, "task_input_flood", json!({}))).await;
    assert!(
        is_request_error(&result, |e| *e == RequestError::TooManyTaskInputs(MAX_INPUTS as u32)),
        "{result:?}"
    );
    // 64 rounds at the poll floor (100 ms) and the update's round trip.
    assert!(took < Duration::from_secs(20), "the call failed after {took:?}");
    assert_eq!(
        asked.load(Ordering::SeqCst),
        MAX_INPUTS,
        "the handler was asked once per input, to the bound"
    );
    let report = settled_report(&client, |r| r["cancels"]["t-1"] == 1).await;
    assert_eq!(report["cancels"], json!({"t-1": 1}), "{report}");
    assert!(report["updates"].as_u64().is_some_and(|n| n >= 1), "{report}");
}

/// `task_input_burst`: 5 000 input requests in one poll are refused against the budget of 256;
/// the handler is not asked for them; the task is cancelled once.
pub(crate) async fn input_burst(client: Client, asked: Arc<AtomicUsize>) {
    let refused = client.stats().server_requests_refused;
    let (result, took) = timed(call(&client, "task_input_burst", json!({}))).await;
    assert!(
        is_request_error(&result, |e| *e == RequestError::ServerRequestLimit { limit: BUDGET as usize }),
        "{result:?}"
    );
    assert!(took < PROMPT, "the call failed after {took:?}");
    assert_eq!(asked.load(Ordering::SeqCst), 0, "no input request of the burst reached the handler");
    assert_eq!(client.stats().server_requests_refused - refused, 5000);
    let report = settled_report(&client, |r| r["cancels"]["t-1"] == 1).await;
    assert_eq!(report["cancels"], json!({"t-1": 1}), "{report}");
}

/// `task_escaped`: a task answer with escaped member names is followed as a task.
pub(crate) async fn escaped(client: Client, _asked: Arc<AtomicUsize>) {
    let (result, took) = timed(call(&client, "task_escaped", json!({}))).await;
    let result = result.expect("the call gets the task's result");
    assert_eq!(text(&result), "escaped task's result");
    assert!(took < PROMPT, "the call took {took:?}");
    let report = report(&client).await;
    assert_eq!(report["cancels"], json!({}), "{report}");
}

/// `task_undecodable`: a task whose status is a number fails its call at once, and is cancelled
/// by the id it could read.
pub(crate) async fn undecodable(client: Client, _asked: Arc<AtomicUsize>) {
    let (result, took) = timed(call(&client, "task_undecodable", json!({}))).await;
    assert!(is_request_error(&result, |e| matches!(e, RequestError::InvalidResponse(_))), "{result:?}");
    assert!(took < PROMPT, "the call failed after {took:?}");
    let report = settled_report(&client, |r| r["cancels"]["t-bad"] == 1).await;
    assert_eq!(report["cancels"], json!({"t-bad": 1}), "{report}");
}

/// `task_result_flood`: 1 000 `tasks/result` for a hosted task that has not ended: the task and
/// 255 waiters fill the budget of 256, the other 745 are refused at once with `-32603` and
/// `data.limit`.
pub(crate) async fn result_flood(client: Client, asked: Arc<AtomicUsize>) {
    let count = 1000;
    let refused = client.stats().server_requests_refused;
    let (result, took) = timed(call(&client, "task_result_flood", json!({"count": count}))).await;
    let result = result.expect("the call is answered after its flood");
    assert_eq!(text(&result), format!("flooded {count}"));
    assert!(took < PROMPT, "the call took {took:?}");
    let expected = count - (BUDGET - 1);
    let report = report_once(&client, |r| r["refusals"]["256"] == expected).await;
    assert_eq!(report["refusals"], json!({"256": expected}), "every refusal says the limit: {report}");
    assert_eq!(report["hosted"], json!(["client-task-0"]), "{report}");
    assert_eq!(client.stats().server_requests_refused - refused, expected);
    assert_eq!(asked.load(Ordering::SeqCst), 1, "the hosted task's elicitation reached the handler once");
}

/// The transports' harness: a warm-up connection made by `connect` (answering input), then
/// `scenario` on a fresh connection whose asker answers as `mode` wants, a collateral `echo`
/// after it, its peak memory, and nothing left behind (descriptors, threads, processes) once
/// that client is closed.
pub(crate) fn run_scenario<C, F>(
    mode: &str,
    connect: impl Fn(Asker) -> C,
    scenario: impl FnOnce(Client, Arc<AtomicUsize>) -> F,
) where
    C: Future<Output = Client>,
    F: Future<Output = ()>,
{
    smol::block_on(async {
        let client = connect(Asker::new(true)).await;
        still_answers(&client, "warm-up").await;
        client.close().await;
        // Smol's executor thread, started now if nobody started it, belongs to the baseline.
        smol::spawn(async {}).await;
    });
    let before = Resources::settled(Duration::from_millis(100), Duration::from_secs(2));
    smol::block_on(async {
        let asker = Asker::new(answers(mode));
        let client = connect(asker.clone()).await;
        let rss = rss_bytes();
        assert!(reset_peak_rss(), "the kernel refused to reset the peak RSS");
        scenario(client.clone(), asker.asked.clone()).await;
        still_answers(&client, &format!("after {mode}")).await;
        let growth = peak_rss_bytes().saturating_sub(rss);
        assert!(growth < RSS_LIMIT, "{mode}: resident memory grew by {} KiB", growth / 1024);
        client.close().await;
    });
    before.assert_nothing_leaked(mode);
}
