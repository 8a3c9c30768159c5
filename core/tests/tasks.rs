//! The tasks extension (SEP-2663, 2026-07-28) on simulated time: a `tools/call` answered with
//! a task is followed by the engine (polls within the policy's floor and cap, input requests
//! asked once and answered with `tasks/update`, the end as the call's result or error),
//! cancelled with `tasks/cancel`, bounded by the task's own deadlines, and resumed by id.
#![allow(clippy::unwrap_used)]

mod common;

use std::time::Duration;

use common::tasks::*;
use common::{Harness, config, notification_line, result_line};
use mcp_sansio::schema::{
    CallTool, CallToolRequestParams, ClientCapabilities, ElicitResult, TASKS_EXTENSION, TaskSnapshot,
};
use mcp_sansio::{
    Event, ProtocolVersion, RequestError, RequestId, RequestOptions, ServerRequest, TaskMode, TaskPolicy,
    UsageError,
};
use serde_json::{Value, json};

#[test]
fn a_call_that_becomes_a_task_is_polled_at_the_suggested_interval_and_ends_with_its_result() {
    let mut h = ready(task_config(), true);
    let (id, wire) = call(&mut h, RequestOptions::default());
    // The request declared the extension in its per-request capabilities.
    h.server(&created(wire, Some(2000)));
    assert!(h.events().is_empty(), "a task is not the call's end");
    assert!(h.conn.is_pending(&id));
    // No poll before the interval; one at it.
    let (sent, after) = next_send(&mut h, 10 * MS, Duration::from_secs(10));
    assert_eq!(after, Duration::from_secs(2), "{sent:?}");
    assert_eq!(sent.len(), 1);
    assert_eq!(sent[0]["method"], "tasks/get");
    assert_eq!(sent[0]["params"]["taskId"], "t-1");
    assert_eq!(sent[0]["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"], "2026-07-28");
    let poll = sent[0]["id"].as_i64().unwrap();
    // Still working, and the server now suggests a shorter interval.
    h.server(&got(poll, task("working", json!({"pollIntervalMs": 500, "statusMessage": "half way"}))));
    let (sent, after) = next_send(&mut h, 10 * MS, Duration::from_secs(10));
    assert_eq!(after, Duration::from_millis(500));
    let poll = sent[0]["id"].as_i64().unwrap();
    h.server(&got(
        poll,
        task(
            "completed",
            json!({"result": {"content": [{"type": "text", "text": "done"}], "isError": false}}),
        ),
    ));
    let (got_id, result) = only_response(&mut h);
    assert_eq!(got_id, id, "the call keeps its id");
    let result: Value = serde_json::from_str(&result.unwrap()).unwrap();
    assert_eq!(result["content"][0]["text"], "done");
    assert!(!h.conn.is_pending(&id));
    // Nothing more: no poll after the end.
    h.advance(Duration::from_secs(60));
    assert!(h.sent().is_empty());
}

#[test]
fn poll_intervals_are_kept_between_the_floor_and_the_cap() {
    for (suggested, expected) in
        [(Some(0), 100 * MS), (Some(3_600_000), Duration::from_secs(30)), (None, Duration::from_secs(1))]
    {
        let mut h = ready(task_config(), true);
        let (_, wire) = call(&mut h, RequestOptions::default());
        h.server(&created(wire, suggested));
        let (_, after) = next_send(&mut h, 10 * MS, Duration::from_secs(60));
        assert_eq!(after, expected, "suggested {suggested:?}");
    }
    assert_eq!(TaskPolicy::default().interval(Some(250)), 250 * MS);
}

#[test]
fn input_requests_are_asked_once_and_answered_with_tasks_update() {
    let mut h = ready(task_config(), true);
    let (id, wire) = call(&mut h, RequestOptions::default());
    h.server(&created(wire, Some(100)));
    let elicit = json!({"name": {"method": "elicitation/create", "params": {"mode": "form", "message": "Name?",
        "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}}}}});
    let (sent, _) = next_send(&mut h, 10 * MS, Duration::from_secs(1));
    h.server(&got(
        sent[0]["id"].as_i64().unwrap(),
        task("input_required", json!({"inputRequests": elicit.clone()})),
    ));
    let events = h.events();
    let [Event::Request { id: input, request: ServerRequest::Elicit(_) }] = &events[..] else {
        panic!("{events:?}")
    };
    // The user takes a while; the server repeats the same key in later polls: not asked again.
    for _ in 0..3 {
        let (sent, _) = next_send(&mut h, 10 * MS, Duration::from_secs(1));
        assert_eq!(sent[0]["method"], "tasks/get");
        h.server(&got(
            sent[0]["id"].as_i64().unwrap(),
            task("input_required", json!({"inputRequests": elicit.clone()})),
        ));
        assert!(h.events().is_empty(), "a key already asked is never asked twice");
    }
    let content = json!({"name": "Ada"}).as_object().cloned().unwrap();
    h.conn.respond(input, Ok(&ElicitResult::accept(content))).unwrap();
    let sent = h.sent();
    assert_eq!(sent.len(), 1, "{sent:?}");
    assert_eq!(sent[0]["method"], "tasks/update");
    assert_eq!(sent[0]["params"]["taskId"], "t-1");
    assert_eq!(sent[0]["params"]["inputResponses"]["name"]["content"]["name"], "Ada");
    h.server(&result_line(sent[0]["id"].as_i64().unwrap(), json!({"resultType": "complete"})));
    // A poll soon after the update; the task ends failed: the call gets the task's error.
    let (sent, after) = next_send(&mut h, 10 * MS, Duration::from_secs(1));
    assert!(after <= 100 * MS, "{after:?}");
    h.server(&got(
        sent[0]["id"].as_i64().unwrap(),
        task("failed", json!({"error": {"code": -32603, "message": "the tool broke"}})),
    ));
    let (got_id, result) = only_response(&mut h);
    assert_eq!(got_id, id);
    let Err(RequestError::Server(error)) = result else { panic!("{result:?}") };
    assert_eq!(error.message, "the tool broke");
}

#[test]
fn cancelling_the_call_sends_tasks_cancel_and_not_notifications_cancelled() {
    let mut h = ready(task_config(), true);
    let (id, wire) = call(&mut h, RequestOptions::default());
    h.server(&created(wire, Some(1000)));
    h.conn.cancel(&id, Some("user gave up")).unwrap();
    let sent = h.sent();
    assert_eq!(sent.len(), 1, "{sent:?}");
    assert_eq!(sent[0]["method"], "tasks/cancel");
    assert_eq!(sent[0]["params"]["taskId"], "t-1");
    let (_, result) = only_response(&mut h);
    assert!(matches!(result, Err(RequestError::Cancelled(_))), "{result:?}");
    // The acknowledgement is the engine's; no poll follows.
    h.server(&result_line(sent[0]["id"].as_i64().unwrap(), json!({})));
    assert!(h.events().is_empty());
    h.advance(Duration::from_secs(60));
    assert!(h.sent().is_empty());
}

#[test]
fn a_task_cancelled_by_the_server_ends_the_call_typed() {
    let mut h = ready(task_config(), true);
    let (_, wire) = call(&mut h, RequestOptions::default());
    h.server(&created(wire, Some(100)));
    let (sent, _) = next_send(&mut h, 10 * MS, Duration::from_secs(1));
    h.server(&got(
        sent[0]["id"].as_i64().unwrap(),
        task("cancelled", json!({"statusMessage": "operator stop"})),
    ));
    let (_, result) = only_response(&mut h);
    assert_eq!(
        result,
        Err(RequestError::TaskCancelled { task_id: "t-1".into(), message: Some("operator stop".into()) })
    );
}

#[test]
fn a_task_without_change_times_out_by_its_own_deadline_and_is_cancelled() {
    let mut policy = TaskPolicy::default();
    policy.timeout = Duration::from_secs(5);
    let mut config = task_config().with_request_timeout(Duration::from_secs(2));
    config.tasks = policy;
    let mut h = ready(config, true);
    let (id, wire) = call(&mut h, RequestOptions::default());
    h.server(&created(wire, Some(1000)));
    // The task changes every second for 20 s: the task deadline (5 s) and the request timeout
    // (2 s) do not end it.
    for second in 0..20 {
        let (sent, _) = next_send(&mut h, 10 * MS, Duration::from_secs(2));
        h.server(&got(
            sent[0]["id"].as_i64().unwrap(),
            task("working", json!({"statusMessage": format!("{second}")})),
        ));
    }
    assert!(h.conn.is_pending(&id));
    // Then it stops changing: 5 s later the call times out and the task is cancelled.
    let start = h.elapsed();
    let mut cancelled = false;
    loop {
        let (sent, _) = next_send(&mut h, 10 * MS, Duration::from_secs(2));
        if let Some(get) = sent.iter().find(|m| m["method"] == "tasks/get") {
            h.server(&got(get["id"].as_i64().unwrap(), task("working", json!({"statusMessage": "19"}))));
        }
        cancelled |= sent.iter().any(|m| m["method"] == "tasks/cancel");
        let events = h.events();
        if !events.is_empty() {
            let [Event::Response { id: got_id, result: Err(RequestError::Timeout(t)) }] = &events[..] else {
                panic!("{events:?}")
            };
            assert_eq!((got_id, *t), (&id, Duration::from_secs(5)));
            break;
        }
    }
    cancelled |= h.sent().iter().any(|m| m["method"] == "tasks/cancel");
    assert!(cancelled, "the task is cancelled when its call times out");
    let waited = h.elapsed() - start;
    assert!(waited >= Duration::from_secs(4) && waited <= Duration::from_secs(6), "{waited:?}");
}

#[test]
fn a_silent_server_fails_a_poll_by_the_request_timeout() {
    let mut h = ready(task_config().with_request_timeout(Duration::from_secs(3)), true);
    let (id, wire) = call(&mut h, RequestOptions::default());
    h.server(&created(wire, Some(100)));
    let (sent, _) = next_send(&mut h, 10 * MS, Duration::from_secs(1));
    assert_eq!(sent[0]["method"], "tasks/get");
    h.advance(Duration::from_secs(3));
    let (got_id, result) = only_response(&mut h);
    assert_eq!((got_id, result), (id, Err(RequestError::Timeout(Duration::from_secs(3)))));
}

#[test]
fn a_task_answer_without_the_extension_declared_or_malformed_fails_at_once() {
    // Not declared: invalid, whatever the server offers.
    let mut h = ready(config().with_versions(&[ProtocolVersion::V2026_07_28]), true);
    let (_, wire) = call(&mut h, RequestOptions::default());
    h.server(&created(wire, None));
    let (_, result) = only_response(&mut h);
    assert!(
        matches!(&result, Err(RequestError::InvalidResponse(why)) if why.contains("tasks extension")),
        "{result:?}"
    );
    // The task refused is cancelled, once: its id is readable.
    let sent = h.sent();
    assert_eq!(sent.len(), 1, "{sent:?}");
    assert_eq!(
        (sent[0]["method"].as_str(), sent[0]["params"]["taskId"].as_str()),
        (Some("tasks/cancel"), Some("t-1"))
    );

    // Completed without a result: the task is given up (cancelled), the call fails typed.
    let mut h = ready(task_config(), true);
    let (_, wire) = call(&mut h, RequestOptions::default());
    h.server(&created(wire, Some(100)));
    let (sent, _) = next_send(&mut h, 10 * MS, Duration::from_secs(1));
    h.server(&got(sent[0]["id"].as_i64().unwrap(), task("completed", json!({}))));
    let (_, result) = only_response(&mut h);
    assert!(
        matches!(&result, Err(RequestError::InvalidResponse(why)) if why.contains("result")),
        "{result:?}"
    );
    assert_eq!(h.sent()[0]["method"], "tasks/cancel");
}

#[test]
fn a_handle_call_returns_the_task_and_follow_task_resumes_it_by_id() {
    let mut h = ready(task_config(), true);
    let (id, wire) = call(&mut h, RequestOptions::default().task_mode(TaskMode::Return));
    h.server(&created(wire, Some(5000)));
    let (got_id, result) = only_response(&mut h);
    assert_eq!(got_id, id);
    let snapshot: TaskSnapshot = serde_json::from_str(&result.unwrap()).unwrap();
    assert_eq!((snapshot.task_id.as_str(), snapshot.result_type.as_deref()), ("t-1", Some("task")));
    h.advance(Duration::from_secs(30));
    assert!(h.sent().is_empty(), "a returned task is not polled");

    // Later (another process, say): follow it by id. The first poll goes out at once.
    let follow = h.conn.follow_task(h.now, "t-1", RequestOptions::default()).unwrap();
    h.advance(Duration::ZERO);
    let sent = h.sent();
    assert_eq!((sent.len(), &sent[0]["method"]), (1, &json!("tasks/get")));
    h.server(&got(sent[0]["id"].as_i64().unwrap(), task("completed", json!({"result": {"content": []}}))));
    let (got_id, result) = only_response(&mut h);
    assert_eq!(got_id, follow);
    assert_eq!(result.unwrap(), r#"{"content":[]}"#);

    // Cancelling a follow stops following; it does not cancel the task.
    let follow = h.conn.follow_task(h.now, "t-1", RequestOptions::default()).unwrap();
    h.conn.cancel(&follow, None).unwrap();
    assert!(h.sent().iter().all(|m| m["method"] != "tasks/cancel"));
}

#[test]
fn follow_task_is_refused_at_once_where_tasks_cannot_be() {
    let mut h = ready(task_config(), false);
    let refused = h.conn.follow_task(h.now, "t-1", RequestOptions::default());
    assert!(matches!(refused, Err(UsageError::CapabilityNotSupported { .. })), "{refused:?}");
    let mut h = ready(config().with_versions(&[ProtocolVersion::V2026_07_28]), true);
    assert!(h.conn.follow_task(h.now, "t-1", RequestOptions::default()).is_err());
}

#[test]
fn task_requests_are_routed_by_the_task_id() {
    let mut h = ready(task_config(), true);
    let (_, wire) = call(&mut h, RequestOptions::default());
    h.server(&created(wire, Some(100)));
    h.advance(Duration::from_millis(100));
    let transmit = h.conn.poll_transmit().unwrap();
    let request = transmit.as_request().unwrap();
    assert_eq!((request.method(), request.name()), ("tasks/get", Some("t-1")));
}

#[test]
fn task_notifications_end_the_call_without_a_poll_and_the_listen_stream_asks_for_them() {
    let mut config = task_config();
    config.tasks.listen = true;
    let mut h = Harness::new(config);
    h.sent();
    h.server(&result_line(
        0,
        json!({"resultType": "complete", "supportedVersions": ["2026-07-28"],
               "capabilities": {"tools": {"listChanged": true}, "extensions": {TASKS_EXTENSION: {}}}}),
    ));
    h.events();
    let listen = h.sent();
    assert_eq!(listen[0]["method"], "subscriptions/listen");
    let (id, wire) = call(&mut h, RequestOptions::default());
    h.server(&created(wire, Some(10_000)));
    // The stream is replaced by one that also asks for the task's notifications.
    let sent = h.sent();
    let relisten = sent.iter().find(|m| m["method"] == "subscriptions/listen").expect("a new listen stream");
    assert_eq!(relisten["params"]["notifications"]["taskIds"], json!(["t-1"]));
    let done = task("completed", json!({"result": {"content": [{"type": "text", "text": "pushed"}]}}));
    h.server(&notification_line("notifications/tasks", done));
    let (got_id, result) = only_response(&mut h);
    assert_eq!(got_id, id);
    assert!(result.unwrap().contains("pushed"));
}

// ----- 2025-11-25 (SEP-1686, experimental) -----

#[test]
fn an_experimental_task_is_polled_then_its_result_fetched_once_with_tasks_result() {
    let mut h = legacy_ready(true);
    let (id, wire) = augmented_call(&mut h, TaskMode::Follow).unwrap();
    h.server(&result_line(wire, json!({"task": legacy_task("working")})));
    assert!(h.events().is_empty());
    let (sent, after) = next_send(&mut h, 10 * MS, Duration::from_secs(5));
    assert_eq!((after, &sent[0]["method"]), (300 * MS, &json!("tasks/get")), "pollInterval is honoured");
    assert!(sent[0]["params"].get("_meta").is_none(), "2025-11-25 requests carry no per-request _meta");
    h.server(&result_line(sent[0]["id"].as_i64().unwrap(), legacy_task("completed")));
    let sent = h.sent();
    assert_eq!(
        (sent.len(), &sent[0]["method"], &sent[0]["params"]["taskId"]),
        (1, &json!("tasks/result"), &json!("old-1"))
    );
    // No more polls while tasks/result is out.
    h.advance(Duration::from_secs(2));
    assert!(h.sent().is_empty());
    let result = json!({"content": [{"type": "text", "text": "sunny"}],
        "_meta": {"io.modelcontextprotocol/related-task": {"taskId": "old-1"}}});
    h.server(&result_line(sent[0]["id"].as_i64().unwrap(), result));
    let (got_id, result) = only_response(&mut h);
    assert_eq!(got_id, id);
    assert!(result.unwrap().contains("sunny"));
}

#[test]
fn an_experimental_task_needing_input_blocks_on_tasks_result_while_the_server_asks() {
    let mut h = legacy_ready(true);
    let (id, wire) = augmented_call(&mut h, TaskMode::Follow).unwrap();
    h.server(&result_line(wire, json!({"task": legacy_task("input_required")})));
    let sent = h.sent();
    assert_eq!(
        sent[0]["method"], "tasks/result",
        "input_required: tasks/result at once, for the server's requests"
    );
    // The server asks on its own, tagged with the task; the application answers as usual.
    let ask = json!({"mode": "form", "message": "Name?", "requestedSchema": {"type": "object", "properties": {}},
        "_meta": {"io.modelcontextprotocol/related-task": {"taskId": "old-1"}}});
    h.server(&common::request_line("s-1", "elicitation/create", ask));
    let events = h.events();
    let [Event::Request { id: asked, request: ServerRequest::Elicit(_) }] = &events[..] else {
        panic!("{events:?}")
    };
    h.conn.respond(asked, Ok(&ElicitResult::accept(Default::default()))).unwrap();
    assert_eq!(h.sent()[0]["id"], "s-1");
    // A long wait is fine: tasks/result has the task's deadline, not the request timeout.
    h.advance(Duration::from_secs(120));
    assert!(h.conn.is_pending(&id));
    h.server(&result_line(sent[0]["id"].as_i64().unwrap(), json!({"content": []})));
    let (got_id, result) = only_response(&mut h);
    assert_eq!((got_id, result.unwrap()), (id, r#"{"content":[]}"#.to_owned()));
}

#[test]
fn experimental_tasks_are_refused_where_the_server_did_not_offer_them_and_status_notifications_count() {
    let mut h = legacy_ready(false);
    let refused = augmented_call(&mut h, TaskMode::Follow);
    assert!(
        matches!(
            refused,
            Err(UsageError::CapabilityNotSupported { capability: "tasks.requests.tools.call", .. })
        ),
        "{refused:?}"
    );
    assert!(h.sent().is_empty(), "nothing was sent");

    let mut h = legacy_ready(true);
    let (id, wire) = augmented_call(&mut h, TaskMode::Follow).unwrap();
    h.server(&result_line(wire, json!({"task": legacy_task("working")})));
    let mut cancelled = legacy_task("cancelled");
    cancelled["statusMessage"] = json!("stopped by the operator");
    h.server(&notification_line("notifications/tasks/status", cancelled));
    let (got_id, result) = only_response(&mut h);
    assert_eq!(got_id, id);
    assert!(matches!(result, Err(RequestError::TaskCancelled { .. })), "{result:?}");

    // Return mode: the call ends with the created task, not followed.
    let (_, wire) = augmented_call(&mut h, TaskMode::Return).unwrap();
    h.server(&result_line(wire, json!({"task": legacy_task("working")})));
    let (_, result) = only_response(&mut h);
    assert!(result.unwrap().contains("\"old-1\""));
    h.advance(Duration::from_secs(5));
    assert!(h.sent().is_empty());
}

// ----- the client as a task receiver (2025-11-25) -----

#[test]
fn the_client_hosts_a_task_for_a_server_request_and_answers_the_servers_polls() {
    let caps = ClientCapabilities::default().with_sampling().with_hosted_tasks();
    let mut h = Harness::new(config().with_versions(&[ProtocolVersion::V2025_11_25]).with_capabilities(caps));
    h.conn.set_wall_clock(h.now, 1_795_777_200);
    let init = h.sent();
    assert_eq!(
        init[0]["params"]["capabilities"]["tasks"]["requests"]["sampling"],
        json!({"createMessage": {}})
    );
    assert!(init[0]["params"]["capabilities"]["tasks"]["requests"].get("elicitation").is_none());
    h.ready_with(&common::init_result("2025-11-25", json!({"tools": {}})));

    let sampling = json!({"task": {"ttl": 60000}, "maxTokens": 5,
        "messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}]});
    h.server(&common::request_line("s-1", "sampling/createMessage", sampling.clone()));
    // The task, at once; the request to the application under the task's own id.
    let created = h.sent();
    assert_eq!(created[0]["id"], "s-1");
    let task = &created[0]["result"]["task"];
    assert_eq!(
        (&task["taskId"], &task["status"], &task["ttl"]),
        (&json!("client-task-0"), &json!("working"), &json!(60000))
    );
    assert_eq!(task["createdAt"], "2026-11-27T11:00:00Z");
    let events = h.events();
    let [Event::Request { id: asked, request: ServerRequest::CreateMessage(_) }] = &events[..] else {
        panic!("{events:?}")
    };
    assert_eq!(asked, &RequestId::String("task/client-task-0".into()));

    // The server polls, then waits on tasks/result until the application answers.
    h.server(&common::request_line("s-2", "tasks/get", json!({"taskId": "client-task-0"})));
    assert_eq!(h.sent()[0]["result"]["status"], "working");
    h.server(&common::request_line("s-3", "tasks/result", json!({"taskId": "client-task-0"})));
    assert!(h.sent().is_empty(), "tasks/result waits for the end");
    h.advance(Duration::from_secs(2));
    let answer = json!({"role": "assistant", "content": {"type": "text", "text": "yo"}, "model": "m"});
    h.conn.respond(asked, Ok(&answer)).unwrap();
    let sent = h.sent();
    assert_eq!((sent.len(), &sent[0]["id"]), (1, &json!("s-3")));
    assert_eq!(sent[0]["result"]["model"], "m");
    assert_eq!(sent[0]["result"]["_meta"]["io.modelcontextprotocol/related-task"]["taskId"], "client-task-0");
    h.server(&common::request_line("s-4", "tasks/get", json!({"taskId": "client-task-0"})));
    let got = h.sent();
    assert_eq!(
        (&got[0]["result"]["status"], &got[0]["result"]["lastUpdatedAt"]),
        (&json!("completed"), &json!("2026-11-27T11:00:02Z"))
    );
    h.server(&common::request_line("s-5", "tasks/list", json!({})));
    assert_eq!(h.sent()[0]["result"]["tasks"].as_array().unwrap().len(), 1);

    // Unknown ids and cancelling an ended task are errors; cancelling a running one tells the
    // application, whose late answer is accepted and changes nothing.
    h.server(&common::request_line("s-6", "tasks/get", json!({"taskId": "client-task-9"})));
    assert_eq!(h.sent()[0]["error"]["code"], -32602);
    h.server(&common::request_line("s-7", "tasks/cancel", json!({"taskId": "client-task-0"})));
    assert_eq!(h.sent()[0]["error"]["code"], -32602);
    h.server(&common::request_line("s-8", "sampling/createMessage", sampling));
    h.sent();
    let events = h.events();
    let [Event::Request { id: second, .. }] = &events[..] else { panic!("{events:?}") };
    h.server(&common::request_line("s-9", "tasks/cancel", json!({"taskId": "client-task-1"})));
    assert_eq!(h.sent()[0]["result"]["status"], "cancelled");
    let events = h.events();
    assert!(matches!(&events[..], [Event::ServerRequestCancelled { id, .. }] if id == second), "{events:?}");
    h.conn.respond(second, Ok(&answer)).unwrap();
    assert!(h.sent().is_empty());

    // A request that does not ask for a task is answered as always.
    h.server(&common::request_line(
        "s-10",
        "sampling/createMessage",
        json!({"maxTokens": 5, "messages": []}),
    ));
    assert!(h.sent().is_empty());
    let events = h.events();
    assert!(
        matches!(&events[..], [Event::Request { id, .. }] if *id == RequestId::String("s-10".into())),
        "{events:?}"
    );
}

#[test]
fn a_task_of_the_extension_on_a_2025_11_25_session_is_an_invalid_response() {
    let mut h = legacy_ready(true);
    let id = h
        .conn
        .send::<CallTool>(h.now, &CallToolRequestParams::new("slow"), RequestOptions::default())
        .unwrap();
    let wire = h.sent()[0]["id"].as_i64().unwrap();
    h.server(&created(wire, Some(100)));
    let (got_id, result) = only_response(&mut h);
    assert_eq!(got_id, id);
    assert!(
        matches!(&result, Err(RequestError::InvalidResponse(why)) if why.contains("2025-11-25")),
        "{result:?}"
    );
    // The task refused is cancelled once, and nothing is followed.
    let sent = h.sent();
    assert_eq!(sent.len(), 1, "{sent:?}");
    assert_eq!(sent[0]["method"], "tasks/cancel");
    h.advance(Duration::from_secs(1));
    assert!(h.sent().is_empty(), "nothing is followed");
}

#[test]
fn closing_ends_the_listen_stream_first() {
    let mut h = Harness::new(task_config());
    h.sent();
    h.server(&result_line(
        0,
        json!({"resultType": "complete", "supportedVersions": ["2026-07-28"],
               "capabilities": {"tools": {"listChanged": true}}}),
    ));
    h.events();
    let listen = h.sent();
    assert_eq!(listen[0]["method"], "subscriptions/listen");
    h.conn.close();
    let sent = h.sent();
    assert_eq!(sent.len(), 1, "{sent:?}");
    assert_eq!(sent[0]["method"], "notifications/cancelled");
    assert_eq!(sent[0]["params"]["requestId"], listen[0]["id"]);
}
