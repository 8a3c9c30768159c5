//! Task servers that bend the rules (issue 34's findings), on simulated time: ids reused across
//! calls, input without end, floods of input requests and `tasks/result` waiters, escaped member
//! names, tasks that do not decode, silent polls, and deadlines the server would lift. Each test
//! names the finding it holds to.
#![allow(clippy::unwrap_used)]

mod common;

use std::time::Duration;

use common::tasks::*;
use common::{Harness, notification_line, request_line, result_line};
use mcp_sansio::schema::{
    CallTool, CallToolRequestParams, ClientCapabilities, ElicitResult, TASKS_EXTENSION,
};
use mcp_sansio::{
    Event, ProtocolVersion, RequestError, RequestId, RequestOptions, ServerRequest, TaskMode, TaskPolicy,
    UsageError,
};
use serde_json::{Value, json};

fn methods(sent: &[Value]) -> Vec<&str> {
    sent.iter().map(|m| m["method"].as_str().unwrap_or("(response)")).collect()
}

fn elicit(key: &str) -> Value {
    json!({key: {"method": "elicitation/create", "params": {"mode": "form", "message": "?",
        "requestedSchema": {"type": "object", "properties": {}}}}})
}

/// Finding: a server that answers two calls with the same task id got the first call's result
/// delivered to the second caller as its own.
#[test]
fn a_second_task_under_a_followed_id_fails_its_call_and_the_first_goes_on() {
    let mut h = ready(task_config(), true);
    let (first, wire1) = call(&mut h, RequestOptions::default());
    h.server(&created(wire1, Some(1000)));
    let (second, wire2) = call(&mut h, RequestOptions::default());
    h.server(&created(wire2, Some(1000)));
    let (got_id, result) = only_response(&mut h);
    assert_eq!(got_id, second);
    assert!(matches!(&result, Err(RequestError::InvalidResponse(why)) if why.contains("t-1")), "{result:?}");
    // Not cancelled: the task is the first call's.
    assert!(h.sent().is_empty());
    let (sent, _) = next_send(&mut h, 10 * MS, Duration::from_secs(2));
    assert_eq!(methods(&sent), ["tasks/get"]);
    h.server(&got(sent[0]["id"].as_i64().unwrap(), task("completed", json!({"result": {"content": []}}))));
    let (got_id, result) = only_response(&mut h);
    assert_eq!(got_id, first);
    assert_eq!(result.unwrap(), r#"{"content":[]}"#);
}

/// Finding: `call_tool_as_task` (a returned task) handed out two handles for one id, and
/// `follow_task` followed an id a call follows already.
#[test]
fn a_returned_task_id_is_owned_too_and_follow_task_refuses_a_followed_id() {
    let mut h = legacy_ready(true);
    let (_, wire) = augmented_call(&mut h, TaskMode::Return).unwrap();
    h.server(&result_line(wire, json!({"task": legacy_task("working")})));
    let (_, result) = only_response(&mut h);
    assert!(result.unwrap().contains("old-1"), "the task is the call's result");
    let (second, wire) = augmented_call(&mut h, TaskMode::Return).unwrap();
    h.server(&result_line(wire, json!({"task": legacy_task("working")})));
    let (got_id, result) = only_response(&mut h);
    assert_eq!(got_id, second);
    assert!(matches!(result, Err(RequestError::InvalidResponse(_))), "{result:?}");
    // The owner of a returned task follows it; a second follower is refused at once.
    let follow = h.conn.follow_task(h.now, "old-1", RequestOptions::default()).unwrap();
    assert!(h.conn.is_pending(&follow));
    let again = h.conn.follow_task(h.now, "old-1", RequestOptions::default());
    assert_eq!(again, Err(UsageError::TaskFollowed("old-1".into())));
}

/// Finding: a server adding one new `inputRequests` key per poll had the handler asked ten
/// times a second until the task's deadline.
#[test]
fn a_task_asking_for_input_without_end_is_cancelled_past_its_bound() {
    let mut policy = TaskPolicy::default();
    policy.max_inputs = 3;
    let mut h = ready(task_config(), true);
    let (id, wire) = call(&mut h, RequestOptions::default().task_policy(policy));
    h.server(&created(wire, Some(100)));
    for n in 0..3 {
        let (sent, _) = next_send(&mut h, 10 * MS, Duration::from_secs(1));
        assert_eq!(methods(&sent), ["tasks/get"], "round {n}");
        h.server(&got(
            sent[0]["id"].as_i64().unwrap(),
            task("input_required", json!({"inputRequests": elicit(&format!("k{n}"))})),
        ));
        let events = h.events();
        let [Event::Request { id: input, .. }] = &events[..] else { panic!("{events:?}") };
        h.conn.respond(input, Ok(&ElicitResult::accept(Default::default()))).unwrap();
        let update = h.sent();
        assert_eq!(methods(&update), ["tasks/update"]);
        h.server(&result_line(update[0]["id"].as_i64().unwrap(), json!({"resultType": "complete"})));
    }
    let (sent, _) = next_send(&mut h, 10 * MS, Duration::from_secs(1));
    h.server(&got(
        sent[0]["id"].as_i64().unwrap(),
        task("input_required", json!({"inputRequests": elicit("k3")})),
    ));
    let events = h.events();
    let [Event::Response { id: got, result: Err(RequestError::TooManyTaskInputs(3)) }] = &events[..] else {
        panic!("{events:?}")
    };
    assert_eq!(got, &id);
    assert_eq!(methods(&h.sent()), ["tasks/cancel"]);
}

/// Finding: thousands of keys in one `tasks/get` opened thousands of handler futures at once;
/// `max_open_server_requests` counted wire requests only.
#[test]
fn a_flood_of_task_input_requests_is_refused_against_the_one_budget() {
    let mut h = ready(task_config().with_max_open_server_requests(16), true);
    // The bound over the task's life is lifted, to show the budget's.
    let mut policy = TaskPolicy::default();
    policy.max_inputs = u32::MAX;
    let (id, wire) = call(&mut h, RequestOptions::default().task_policy(policy));
    h.server(&created(wire, Some(100)));
    let (sent, _) = next_send(&mut h, 10 * MS, Duration::from_secs(1));
    let mut requests = serde_json::Map::new();
    for n in 0..5000 {
        requests.extend(elicit(&format!("k{n}")).as_object().unwrap().clone());
    }
    h.server(&got(
        sent[0]["id"].as_i64().unwrap(),
        task("input_required", json!({"inputRequests": requests})),
    ));
    let events = h.events();
    assert_eq!(
        events.len(),
        2,
        "one refusal and the call's end, no request handed out: {:?}",
        &events[..2.min(events.len())]
    );
    assert!(matches!(&events[0], Event::ServerRequestRefused { limit: 16, .. }), "{:?}", events[0]);
    let Event::Response { id: got, result: Err(RequestError::ServerRequestLimit { limit: 16 }) } = &events[1]
    else {
        panic!("{:?}", events[1])
    };
    assert_eq!(got, &id);
    assert_eq!(h.conn.stats().server_requests_refused, 5000);
    assert_eq!(methods(&h.sent()), ["tasks/cancel"]);
}

/// Finding: the same bypass for 2026-07-28 multi round-trip input.
#[test]
fn a_flood_of_multi_round_trip_input_requests_is_refused_against_the_one_budget() {
    let mut h = ready(task_config().with_max_open_server_requests(8), true);
    // Five wire requests open, then a round asking four more: past the cap of eight.
    for n in 0..5 {
        let ask =
            json!({"mode": "form", "message": "?", "requestedSchema": {"type": "object", "properties": {}}});
        h.server(&request_line(format!("s{n}"), "elicitation/create", ask));
    }
    assert_eq!(h.events().len(), 5);
    let (id, wire) = call(&mut h, RequestOptions::default());
    let mut requests = serde_json::Map::new();
    for n in 0..4 {
        requests.extend(elicit(&format!("k{n}")).as_object().unwrap().clone());
    }
    h.server(&result_line(wire, json!({"resultType": "input_required", "inputRequests": requests})));
    let events = h.events();
    assert!(matches!(&events[0], Event::ServerRequestRefused { limit: 8, .. }), "{events:?}");
    assert!(
        matches!(&events[1], Event::Response { id: got, result: Err(RequestError::ServerRequestLimit { limit: 8 }) } if *got == id),
        "{events:?}"
    );
    assert_eq!(events.len(), 2);
    assert_eq!(h.conn.stats().server_requests_refused, 4);
}

/// Finding: a `resultType` written with escapes (`"result\u0054ype"`, `"\u0074ask"`) was decoded
/// as a tool result: the task was never followed nor cancelled.
#[test]
fn escaped_member_names_decide_as_the_plain_ones() {
    let mut h = ready(task_config(), true);
    let (id, wire) = call(&mut h, RequestOptions::default());
    let line = format!(
        r#"{{"jsonrpc":"2.0","id":{wire},"result":{{"result\u0054ype":"t\u0061sk","taskId":"t-1","status":"working","createdAt":"x","lastUpdatedAt":"x","ttlMs":null,"pollIntervalMs":100}}}}"#
    );
    h.server(&line);
    assert!(h.events().is_empty(), "a task is not the call's end");
    assert!(h.conn.is_pending(&id));
    let (sent, _) = next_send(&mut h, 10 * MS, Duration::from_secs(1));
    assert_eq!(methods(&sent), ["tasks/get"]);

    // Multi round-trip input with an escaped value.
    let (_, wire) = call(&mut h, RequestOptions::default());
    let line = format!(
        r#"{{"jsonrpc":"2.0","id":{wire},"result":{{"resultType":"input\u005frequired","inputRequests":{}}}}}"#,
        elicit("name")
    );
    h.server(&line);
    let events = h.events();
    assert!(matches!(&events[..], [Event::Request { request: ServerRequest::Elicit(_), .. }]), "{events:?}");

    // 2025-11-25: params asking for a task under an escaped name are checked like plain ones.
    let mut h = legacy_ready(false);
    let params = br#"{"name":"slow","arguments":{},"\u0074ask":{"ttl":1000}}"#;
    let refused = h.conn.send_request(h.now, "tools/call", Some(params), RequestOptions::default());
    assert!(matches!(refused, Err(UsageError::CapabilityNotSupported { .. })), "{refused:?}");
}

/// Finding: a task answer that does not decode was refused with `InvalidResponse` and no
/// `tasks/cancel`, although its `taskId` was readable.
#[test]
fn an_undecodable_task_with_a_readable_id_is_cancelled() {
    let mut h = ready(task_config(), true);
    let (_, wire) = call(&mut h, RequestOptions::default());
    h.server(&result_line(wire, json!({"resultType": "task", "taskId": "t-9", "status": 42})));
    let (_, result) = only_response(&mut h);
    assert!(matches!(result, Err(RequestError::InvalidResponse(_))), "{result:?}");
    let sent = h.sent();
    assert_eq!(methods(&sent), ["tasks/cancel"]);
    assert_eq!(sent[0]["params"]["taskId"], "t-9");
    // The same for a 2025-11-25 `CreateTaskResult`.
    let mut h = legacy_ready(true);
    let (_, wire) = augmented_call(&mut h, TaskMode::Follow).unwrap();
    h.server(&result_line(wire, json!({"task": {"taskId": "old-9", "status": []}})));
    let (_, result) = only_response(&mut h);
    assert!(matches!(result, Err(RequestError::InvalidResponse(_))), "{result:?}");
    let sent = h.sent();
    assert_eq!((methods(&sent), &sent[0]["params"]["taskId"]), (vec!["tasks/cancel"], &json!("old-9")));
}

/// A refused task is cancelled only where the session has a `tasks/cancel`: a 2025-11-25 server
/// that declares no `tasks.cancel` answering with a task of the extension gets none (rmcp 3.11
/// does this; `conformance/tests/rmcp_tasks.rs` holds it against the real server).
#[test]
fn a_refused_task_is_not_cancelled_where_the_session_has_no_tasks_cancel() {
    let mut h = legacy_ready(false);
    let id = h
        .conn
        .send::<CallTool>(h.now, &CallToolRequestParams::new("slow"), RequestOptions::default())
        .unwrap();
    let wire = h.sent()[0]["id"].as_i64().unwrap();
    h.server(&created(wire, Some(100)));
    let (got_id, result) = only_response(&mut h);
    assert_eq!(got_id, id);
    assert!(matches!(result, Err(RequestError::InvalidResponse(_))), "{result:?}");
    assert!(h.sent().is_empty(), "no tasks/cancel: the server has none");
}

/// Finding: a task whose poll timed out was given up without `tasks/cancel`.
#[test]
fn a_task_whose_poll_times_out_is_cancelled() {
    let mut h = ready(task_config().with_request_timeout(Duration::from_secs(2)), true);
    let (id, wire) = call(&mut h, RequestOptions::default());
    h.server(&created(wire, Some(100)));
    let (sent, _) = next_send(&mut h, 10 * MS, Duration::from_secs(1));
    assert_eq!(methods(&sent), ["tasks/get"]);
    let (sent, after) = next_send(&mut h, 10 * MS, Duration::from_secs(5));
    assert!(after <= Duration::from_secs(2) + 20 * MS, "{after:?}");
    assert_eq!(methods(&sent), ["tasks/cancel"]);
    let (got_id, result) = only_response(&mut h);
    assert_eq!(got_id, id);
    assert!(matches!(result, Err(RequestError::Timeout(_))), "{result:?}");
}

/// Finding: a call made with `max_total` of 3 s still waited at 10 s once the server answered
/// with a task (the task's policy replaced the call's deadline).
#[test]
fn the_callers_deadline_bounds_a_call_that_became_a_task() {
    let mut h = ready(task_config(), true);
    let (id, wire) = call(&mut h, RequestOptions::default().max_total(Duration::from_secs(3)));
    h.advance(Duration::from_secs(1));
    h.server(&created(wire, Some(100)));
    let mut ended = None;
    let mut all_sent = Vec::new();
    for _ in 0..100 {
        h.advance(100 * MS);
        let sent = h.sent();
        all_sent.extend(sent.iter().cloned());
        for poll in sent.into_iter().filter(|m| m["method"] == "tasks/get") {
            h.server(&got(
                poll["id"].as_i64().unwrap(),
                task("working", json!({"statusMessage": h.elapsed().as_millis().to_string()})),
            ));
        }
        if let Some(event) = h.events().into_iter().find(|e| matches!(e, Event::Response { .. })) {
            ended = Some((h.elapsed(), event));
            break;
        }
    }
    let (at, event) = ended.expect("the call ends");
    assert!(at <= Duration::from_millis(3100), "ended at {at:?}, not 3 s after the call");
    assert!(
        matches!(&event, Event::Response { id: got, result: Err(RequestError::MaxTotalExceeded(_)) } if *got == id),
        "{event:?}"
    );
    all_sent.extend(h.sent());
    assert!(methods(&all_sent).contains(&"tasks/cancel"), "{all_sent:?}");

    // A per-call task policy says the task's own deadlines apply: the call goes on past 3 s.
    let mut h = ready(task_config(), true);
    let options =
        RequestOptions::default().max_total(Duration::from_secs(3)).task_policy(TaskPolicy::default());
    let (id, wire) = call(&mut h, options);
    h.server(&created(wire, Some(1000)));
    for _ in 0..10 {
        let (sent, _) = next_send(&mut h, 100 * MS, Duration::from_secs(2));
        h.server(&got(sent[0]["id"].as_i64().unwrap(), task("working", json!({}))));
    }
    assert!(h.elapsed() > Duration::from_secs(9));
    assert!(h.conn.is_pending(&id));
}

/// Finding: `pollIntervalMs: 250.0` (JSON has one number type; Python writes floats so) was
/// refused, and the whole task lost over a hint.
#[test]
fn a_poll_interval_written_as_a_float_is_a_poll_interval() {
    for written in ["250.0", "2.5e2", "250"] {
        let mut h = ready(task_config(), true);
        let (id, wire) = call(&mut h, RequestOptions::default());
        let line = format!(
            r#"{{"jsonrpc":"2.0","id":{wire},"result":{{"resultType":"task","taskId":"t-1","status":"working","createdAt":"x","lastUpdatedAt":"x","ttlMs":6.0e4,"pollIntervalMs":{written}}}}}"#
        );
        h.server(&line);
        assert!(h.events().is_empty(), "{written}: the task is followed");
        let (sent, after) = next_send(&mut h, 10 * MS, Duration::from_secs(2));
        assert_eq!((methods(&sent), after), (vec!["tasks/get"], 250 * MS), "{written}");
        assert!(h.conn.is_pending(&id));
    }
}

/// The review: "one poll at a time" was not enforced; an update answered while a poll was out
/// scheduled a second one.
#[test]
fn a_task_never_has_two_polls_out() {
    let mut h = ready(task_config(), true);
    let (_, wire) = call(&mut h, RequestOptions::default());
    h.server(&created(wire, Some(100)));
    let (sent, _) = next_send(&mut h, 10 * MS, Duration::from_secs(1));
    h.server(&got(
        sent[0]["id"].as_i64().unwrap(),
        task("input_required", json!({"inputRequests": elicit("name")})),
    ));
    let events = h.events();
    let [Event::Request { id: input, .. }] = &events[..] else { panic!("{events:?}") };
    // A poll goes out while the user answers, and stays unanswered.
    let (sent, _) = next_send(&mut h, 10 * MS, Duration::from_secs(1));
    assert_eq!(methods(&sent), ["tasks/get"]);
    let slow_poll = sent[0]["id"].as_i64().unwrap();
    h.conn.respond(input, Ok(&ElicitResult::accept(Default::default()))).unwrap();
    let update = h.sent();
    assert_eq!(methods(&update), ["tasks/update"]);
    h.server(&result_line(update[0]["id"].as_i64().unwrap(), json!({"resultType": "complete"})));
    // A notification says working: still no second poll while the first is out.
    h.server(&notification_line("notifications/tasks", task("working", json!({}))));
    h.advance(Duration::from_millis(900));
    assert!(h.sent().is_empty(), "a second poll went out while one was");
    h.server(&got(slow_poll, task("working", json!({}))));
    let (sent, _) = next_send(&mut h, 10 * MS, Duration::from_secs(1));
    assert_eq!(methods(&sent), ["tasks/get"]);
}

// ----- hosted tasks (2025-11-25) -----

fn hosting(max_open: usize) -> Harness {
    let mut caps = ClientCapabilities::default().with_elicitation_form();
    caps.tasks = json!({"requests": {"elicitation": {"create": {}}}}).as_object().cloned();
    let config = common::config()
        .with_versions(&[ProtocolVersion::V2025_11_25])
        .with_capabilities(caps)
        .with_max_open_server_requests(max_open);
    let mut h = Harness::new(config);
    h.conn.set_wall_clock(h.now, 1_795_777_200);
    h.sent();
    h.ready_with(&common::init_result("2025-11-25", json!({"tools": {}})));
    h
}

fn hosted_elicitation(h: &mut Harness, id: &str) -> RequestId {
    let ask = json!({"mode": "form", "message": "?", "requestedSchema": {"type": "object", "properties": {}},
        "task": {"ttl": 60000}});
    h.server(&request_line(id, "elicitation/create", ask));
    let created = h.sent();
    assert!(created[0]["result"]["task"]["taskId"].is_string(), "{created:?}");
    let events = h.events();
    let [Event::Request { id, .. }] = &events[..] else { panic!("{events:?}") };
    id.clone()
}

/// Finding: every `tasks/result` for a hosted task that had not ended waited without limit
/// (10 000 of them cost +81 MiB), and refusals carried no `data.limit` and were not counted.
#[test]
fn tasks_result_waiters_are_capped_and_refusals_say_the_limit() {
    let mut h = hosting(8);
    hosted_elicitation(&mut h, "e-1");
    for n in 0..100 {
        h.server(&request_line(format!("r{n}"), "tasks/result", json!({"taskId": "client-task-0"})));
    }
    let answers = h.sent();
    // One hosted task open: seven waiters fit the budget of eight, the other 93 are refused.
    assert_eq!(answers.len(), 93, "{:?}", &answers[..1]);
    for answer in &answers {
        assert_eq!(answer["error"]["code"], -32603);
        assert_eq!(answer["error"]["data"]["limit"], 8);
    }
    assert_eq!(h.conn.stats().server_requests_refused, 93);
    let refused =
        h.events().iter().filter(|e| matches!(e, Event::ServerRequestRefused { limit: 8, .. })).count();
    assert_eq!(refused, 93);
}

/// Finding: the application's id of a hosted task's request (`task/client-task-N`) could be the
/// id of a request of the server's.
#[test]
fn hosted_task_ids_never_clash_with_the_servers_request_ids() {
    let mut h = hosting(16);
    // The server holds a request open under the id the first hosted task would take.
    let ask =
        json!({"mode": "form", "message": "?", "requestedSchema": {"type": "object", "properties": {}}});
    h.server(&request_line("task/client-task-0", "elicitation/create", ask));
    let events = h.events();
    let [Event::Request { id: wire_request, .. }] = &events[..] else { panic!("{events:?}") };
    let hosted = hosted_elicitation(&mut h, "e-1");
    assert_ne!(&hosted, wire_request);
    // Each answer goes where it belongs.
    h.conn.respond(wire_request, Ok(&ElicitResult::decline())).unwrap();
    let sent = h.sent();
    assert_eq!(sent[0]["id"], "task/client-task-0");
    assert_eq!(sent[0]["result"]["action"], "decline");
    h.conn.respond(&hosted, Ok(&ElicitResult::accept(Default::default()))).unwrap();
    h.server(&request_line("r-1", "tasks/get", json!({"taskId": "client-task-0"})));
    assert_eq!(h.sent()[0]["result"]["status"], "completed");
}

#[test]
fn a_call_not_asking_for_a_task_costs_no_follow() {
    // Sanity: the call of an ordinary tool never goes through the follows.
    let mut h = ready(task_config(), true);
    let id = h
        .conn
        .send::<CallTool>(h.now, &CallToolRequestParams::new("echo"), RequestOptions::default())
        .unwrap();
    let wire = h.sent()[0]["id"].as_i64().unwrap();
    h.server(&result_line(wire, json!({"resultType": "complete", "content": [], "note": "\"task\""})));
    let (got_id, result) = only_response(&mut h);
    assert_eq!(got_id, id);
    assert!(result.is_ok());
    let _ = TASKS_EXTENSION;
}
