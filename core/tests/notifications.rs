//! Server notifications surfaced typed: progress, log messages, list changes, resource updates,
//! cancellation, elicitation completion, and unknown ones with their raw params.
#![allow(clippy::unwrap_used)]

mod common;

use common::{Harness, notification_line, num, progress_line};
use mcp_sansio::schema::LoggingLevel;
use mcp_sansio::{
    Event, InvalidMessage, ProgressToken, ProtocolViolation, RequestId, RequestOptions, ServerNotification,
};
use serde_json::json;

fn one_notification(h: &mut Harness) -> ServerNotification {
    let mut events = h.events();
    assert_eq!(events.len(), 1, "{events:?}");
    match events.pop() {
        Some(Event::Notification(n)) => n,
        other => panic!("{other:?}"),
    }
}

#[test]
fn progress_for_a_pending_request_is_an_event_of_that_request() {
    let mut h = Harness::ready_default("2025-11-25");
    let id = h
        .conn
        .send_request(
            h.now,
            "tools/call",
            Some(br#"{"name":"x"}"#),
            RequestOptions::default().with_progress(),
        )
        .unwrap();
    h.sent();
    h.server(&notification_line(
        "notifications/progress",
        json!({"progressToken": num(&id), "progress": 3, "total": 10, "message": "three"}),
    ));
    let events = h.events();
    let [Event::Progress { id: got, params }] = events.as_slice() else { panic!("{events:?}") };
    assert_eq!(got, &id);
    assert_eq!(params.progress_token, ProgressToken::Number(num(&id)));
    assert_eq!((params.progress, params.total, params.message.as_deref()), (3.0, Some(10.0), Some("three")));
    assert!(h.sent().is_empty());
}

#[test]
fn stray_progress_is_a_plain_notification() {
    let mut h = Harness::ready_default("2025-11-25");
    let id = h.conn.send_request(h.now, "vendor/x", None, RequestOptions::default().with_progress()).unwrap();
    h.sent();
    // A token of no pending request, a string token, and the initialize request's id.
    for token in [json!(99), json!("tok"), json!(0)] {
        h.server(&progress_line(token.clone(), 1.0));
        match one_notification(&mut h) {
            ServerNotification::Progress(p) => {
                assert_eq!(serde_json::to_value(&p.progress_token).unwrap(), token)
            }
            other => panic!("{other:?}"),
        }
    }
    // After the request finished, its token is stray too.
    h.server(&common::result_line(num(&id), json!({})));
    h.events();
    h.server(&progress_line(num(&id), 2.0));
    assert!(matches!(one_notification(&mut h), ServerNotification::Progress(_)));
}

#[test]
fn log_messages_are_typed() {
    let mut h = Harness::ready_default("2025-11-25");
    h.server(&notification_line(
        "notifications/message",
        json!({"level": "warning", "logger": "db", "data": {"msg": "slow query", "ms": 1200}}),
    ));
    let ServerNotification::LoggingMessage(p) = one_notification(&mut h) else { panic!() };
    assert_eq!(p.level, LoggingLevel::Warning);
    assert_eq!(p.logger.as_deref(), Some("db"));
    assert_eq!(p.data, json!({"msg": "slow query", "ms": 1200}));
}

#[test]
fn list_changed_and_resource_updated() {
    let mut h = Harness::ready_default("2025-11-25");
    h.server(r#"{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}"#);
    assert!(matches!(one_notification(&mut h), ServerNotification::ToolListChanged));
    h.server(r#"{"jsonrpc":"2.0","method":"notifications/resources/list_changed","params":{}}"#);
    assert!(matches!(one_notification(&mut h), ServerNotification::ResourceListChanged));
    h.server(r#"{"jsonrpc":"2.0","method":"notifications/prompts/list_changed","params":{"_meta":{"k":1}}}"#);
    assert!(matches!(one_notification(&mut h), ServerNotification::PromptListChanged));
    h.server(&notification_line("notifications/resources/updated", json!({"uri": "file:///a.txt"})));
    let ServerNotification::ResourceUpdated(p) = one_notification(&mut h) else { panic!() };
    assert_eq!(p.uri, "file:///a.txt");
    assert!(h.sent().is_empty());
}

#[test]
fn cancelled_for_no_open_server_request_is_a_notification() {
    let mut h = Harness::ready_default("2025-11-25");
    h.server(&notification_line("notifications/cancelled", json!({"requestId": 12, "reason": "gone"})));
    let ServerNotification::Cancelled(p) = one_notification(&mut h) else { panic!() };
    assert_eq!((p.request_id, p.reason.as_deref()), (Some(RequestId::Number(12)), Some("gone")));
}

#[test]
fn elicitation_complete() {
    let mut h = Harness::ready_default("2025-11-25");
    h.server(&notification_line("notifications/elicitation/complete", json!({"elicitationId": "el-7"})));
    let ServerNotification::ElicitationComplete(p) = one_notification(&mut h) else { panic!() };
    assert_eq!(p.elicitation_id, "el-7");
}

#[test]
fn unknown_notifications_keep_their_raw_params() {
    let mut h = Harness::ready_default("2025-11-25");
    h.server(r#"{"jsonrpc":"2.0","method":"notifications/vendor/thing","params":{"b": [1, 2],"a":"x"}}"#);
    let ServerNotification::Other { method, params } = one_notification(&mut h) else { panic!() };
    assert_eq!(method, "notifications/vendor/thing");
    assert_eq!(params.unwrap().get(), r#"{"b": [1, 2],"a":"x"}"#, "exactly as received");
    h.server(r#"{"jsonrpc":"2.0","method":"notifications/tasks/status_unknown"}"#);
    let ServerNotification::Other { params, .. } = one_notification(&mut h) else { panic!() };
    assert!(params.is_none());
}

#[test]
fn known_notifications_with_invalid_params_are_invalid_messages() {
    let mut h = Harness::ready_default("2025-11-25");
    let bad = [
        ("notifications/message", json!({"data": "no level"})),
        ("notifications/message", json!({"level": "loud", "data": 1})),
        ("notifications/progress", json!({"progress": 1})),
        ("notifications/resources/updated", json!({})),
        ("notifications/elicitation/complete", json!({"elicitationId": 5})),
    ];
    for (method, params) in &bad {
        h.server(&notification_line(method, params.clone()));
        let events = h.events();
        assert!(
            matches!(
                events.as_slice(),
                [Event::ProtocolViolation(ProtocolViolation::Invalid { error: InvalidMessage::Params { method: m, .. }, .. })]
                    if m == method
            ),
            "{method} {params}: {events:?}"
        );
    }
    assert_eq!(h.conn.stats().invalid_messages, bad.len() as u64);
    assert!(h.sent().is_empty(), "notifications are never answered");
    assert!(!h.conn.is_closed());
}
