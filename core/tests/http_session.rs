//! The Streamable HTTP session (and the HTTP+SSE fallback) on simulated time: a scripted server
//! answers the `HttpRequest`s the session produces, in any chunking, and the tests check both
//! what goes on the wire and what the application sees.
#![allow(clippy::unwrap_used)]

mod common;

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use common::{config, epoch, full_server_capabilities, init_result, notification_line, num, result_line};
use mcp_sansio::http::{HttpAction, HttpConfig, HttpMethod, HttpRequest, HttpSession, StreamId};
use mcp_sansio::schema::{ListTools, PaginatedRequestParams};
use mcp_sansio::{
    ClientConfig, CloseReason, ConnectionRequest, Event, RedirectRefusal, RequestError, RequestId,
    RequestOptions, Status, TransportError,
};
use serde_json::{Value, json};

const URL: &str = "http://127.0.0.1:8931/mcp";
const S: Duration = Duration::from_secs(1);

/// A session and a scripted server's view of it.
struct Net {
    session: HttpSession,
    now: Instant,
    sent: VecDeque<HttpRequest>,
    aborted: Vec<StreamId>,
}

impl Net {
    fn new(http: HttpConfig) -> Self {
        Self::with_config(http, config())
    }

    fn with_config(http: HttpConfig, config: ClientConfig) -> Self {
        let now = epoch();
        Self { session: HttpSession::new(http, config, now), now, sent: VecDeque::new(), aborted: Vec::new() }
    }

    fn pump(&mut self) {
        while let Some(action) = self.session.poll_action(self.now) {
            match action {
                HttpAction::Send(request) => self.sent.push_back(request),
                HttpAction::Abort(id) => self.aborted.push(id),
                other => panic!("unexpected action {other:?}"),
            }
        }
    }

    /// The next request the session sent.
    fn next(&mut self) -> HttpRequest {
        self.pump();
        self.sent.pop_front().expect("the session should have sent a request")
    }

    fn nothing_sent(&mut self) -> bool {
        self.pump();
        self.sent.is_empty()
    }

    fn head(&mut self, req: &HttpRequest, status: u16, content_type: &str, session: Option<&str>) {
        let mut headers: Vec<(&str, &[u8])> = vec![("Content-Type", content_type.as_bytes())];
        if let Some(session) = session {
            headers.push(("mcp-session-id", session.as_bytes()));
        }
        self.session.handle_response_head(self.now, req.stream(), status, headers);
    }

    fn body(&mut self, req: &HttpRequest, chunk: &str) {
        self.session.handle_response_body(self.now, req.stream(), chunk.as_bytes());
    }

    fn end(&mut self, req: &HttpRequest) {
        self.session.handle_response_end(self.now, req.stream());
    }

    /// A whole response in one go.
    fn reply(&mut self, req: &HttpRequest, status: u16, content_type: &str, body: &str) {
        self.head(req, status, content_type, None);
        self.body(req, body);
        self.end(req);
    }

    fn advance(&mut self, by: Duration) {
        self.now += by;
        if self.session.poll_timeout().is_some_and(|at| at <= self.now) {
            self.session.handle_timeout(self.now);
        }
    }

    fn events(&mut self) -> Vec<Event> {
        self.pump();
        std::iter::from_fn(|| self.session.poll_event()).collect()
    }

    fn list_tools(&mut self) -> RequestId {
        let params = PaginatedRequestParams::default();
        let id =
            self.session.commands().send::<ListTools>(self.now, &params, RequestOptions::default()).unwrap();
        self.pump();
        id
    }

    /// Runs the handshake: `initialize` answered with JSON and session `s1`, the `initialized`
    /// notification answered 202, and the GET stream answered 405 (none) unless `keep_get`.
    fn ready(http: HttpConfig) -> Self {
        Self::ready_with(http, config())
    }

    /// [`ready`](Self::ready) with a client configuration of the test's own.
    fn ready_with(http: HttpConfig, config: ClientConfig) -> Self {
        let mut net = Self::with_config(http, config);
        let init = net.next();
        net.head(&init, 200, "application/json", Some("s1"));
        net.body(&init, &init_result("2025-11-25", full_server_capabilities()));
        net.end(&init);
        let notice = net.next();
        assert_eq!(method_of(&notice), "notifications/initialized");
        net.reply(&notice, 202, "", "");
        assert!(matches!(net.events()[..], [Event::Ready { .. }]));
        net
    }
}

fn json_of(req: &HttpRequest) -> Value {
    serde_json::from_slice(req.body()).unwrap()
}

fn method_of(req: &HttpRequest) -> String {
    json_of(req)["method"].as_str().unwrap_or_default().to_owned()
}

fn id_of(req: &HttpRequest) -> Value {
    json_of(req)["id"].clone()
}

fn responses(events: &[Event]) -> Vec<(RequestId, Result<Value, RequestError>)> {
    events
        .iter()
        .filter_map(|e| match e {
            Event::Response { id, result } => Some((
                id.clone(),
                result.as_ref().map(|r| serde_json::from_str(r.get()).unwrap()).map_err(Clone::clone),
            )),
            _ => None,
        })
        .collect()
}

fn sse(event: Option<&str>, id: Option<&str>, data: &str) -> String {
    let mut out = String::new();
    if let Some(event) = event {
        out += &format!("event: {event}\n");
    }
    if let Some(id) = id {
        out += &format!("id: {id}\n");
    }
    out + &format!("data: {data}\n\n")
}

#[test]
fn handshake_headers_and_session_id() {
    let mut net = Net::new(HttpConfig::new(URL).header("Authorization", "Bearer sekrit"));
    let init = net.next();
    assert_eq!(init.method(), HttpMethod::Post);
    assert_eq!(init.url(), URL);
    assert_eq!(method_of(&init), "initialize");
    assert_eq!(init.header("accept"), Some("application/json, text/event-stream"));
    assert_eq!(init.header("content-type"), Some("application/json"));
    assert_eq!(init.header("authorization"), Some("Bearer sekrit"));
    assert_eq!(init.header("mcp-session-id"), None);
    assert_eq!(init.header("mcp-protocol-version"), None, "not before the version is negotiated");
    // Credentials never reach debug output (and so never a log line).
    let printed = format!("{init:?} {:?}", HttpConfig::new(URL).header("Authorization", "Bearer sekrit"));
    assert!(!printed.contains("sekrit"), "{printed}");
    assert!(printed.contains("authorization") || printed.contains("Authorization"));

    net.head(&init, 200, "application/json; charset=utf-8", Some("s-123"));
    // The body in two pieces.
    let body = init_result("2025-11-25", full_server_capabilities());
    net.body(&init, &body[..10]);
    net.body(&init, &body[10..]);
    net.end(&init);
    assert!(matches!(net.events()[..], [Event::Ready { .. }]));
    assert_eq!(net.session.session_id(), Some("s-123"));

    let notice = net.next();
    assert_eq!(method_of(&notice), "notifications/initialized");
    assert_eq!(notice.header("mcp-session-id"), Some("s-123"));
    assert_eq!(notice.header("mcp-protocol-version"), Some("2025-11-25"));
    assert_eq!(notice.header("authorization"), Some("Bearer sekrit"));
    let get = net.next();
    assert_eq!(get.method(), HttpMethod::Get);
    assert_eq!(get.header("accept"), Some("text/event-stream"));
    assert_eq!(get.header("mcp-session-id"), Some("s-123"));
    assert_eq!(get.header("authorization"), Some("Bearer sekrit"));
    assert!(get.body().is_empty());
    // 202 for a notification: nothing more happens.
    net.reply(&notice, 202, "", "");
    assert!(net.nothing_sent());
    assert!(net.events().is_empty());
}

#[test]
fn protocol_version_header_only_from_2025_06_18() {
    let mut net = Net::new(HttpConfig::new(URL));
    let init = net.next();
    net.head(&init, 200, "application/json", Some("s1"));
    net.body(&init, &init_result("2025-03-26", full_server_capabilities()));
    net.end(&init);
    let notice = net.next();
    assert_eq!(notice.header("mcp-protocol-version"), None);
}

#[test]
fn json_and_sse_responses_chunked_byte_by_byte() {
    let mut net = Net::ready(HttpConfig::new(URL).standalone_stream(false));
    let id = net.list_tools();
    let post = net.next();
    assert_eq!(post.header("mcp-session-id"), Some("s1"));
    assert_eq!(id_of(&post), json!(1));
    net.head(&post, 200, "text/event-stream", None);
    let stream = format!(
        ": comment\r\n{}{}",
        sse(None, None, &notification_line("notifications/message", json!({"level": "info", "data": "hi"}))),
        sse(Some("message"), None, &result_line(1, json!({"tools": []})))
    );
    for byte in stream.as_bytes() {
        net.session.handle_response_body(net.now, post.stream(), std::slice::from_ref(byte));
    }
    let events = net.events();
    assert!(matches!(events[0], Event::Notification(_)), "{events:?}");
    assert_eq!(responses(&events), vec![(id, Ok(json!({"tools": []})))]);
    // The rest of the stream is read to its end (so the connection can be reused), not aborted.
    net.end(&post);
    assert!(net.aborted.is_empty());
    assert_eq!(net.session.streams_in_flight(), 0);

    // The same over a JSON body.
    let id = net.list_tools();
    let post = net.next();
    net.reply(
        &post,
        200,
        "application/json",
        &result_line(2, json!({"tools": [{"name": "x", "inputSchema": {"type": "object"}}]})),
    );
    let events = net.events();
    assert_eq!(responses(&events)[0].0, id);
    assert!(responses(&events)[0].1.is_ok());
}

#[test]
fn post_stream_ending_without_the_response_fails_at_once() {
    let mut net = Net::ready(HttpConfig::new(URL).standalone_stream(false));
    let id = net.list_tools();
    let post = net.next();
    net.head(&post, 200, "text/event-stream", None);
    net.body(
        &post,
        &sse(None, None, &notification_line("notifications/message", json!({"level": "info", "data": 1}))),
    );
    net.end(&post);
    // No waiting for the 60 s request timeout: no event id means nothing to resume.
    let events = net.events();
    let (got, result) = responses(&events).remove(0);
    assert_eq!(got, id);
    let error = result.unwrap_err();
    assert!(matches!(error, RequestError::Transport(_)), "{error:?}");
    assert!(error.to_string().contains("without the response"), "{error}");

    // A connection that breaks mid-body fails the same way, with the driver's reason.
    let id = net.list_tools();
    let post = net.next();
    net.head(&post, 200, "text/event-stream", None);
    net.session.handle_response_error(net.now, post.stream(), "connection reset by peer");
    let (got, result) = responses(&net.events()).remove(0);
    assert_eq!(got, id);
    assert!(result.unwrap_err().to_string().contains("connection reset by peer"));

    // A JSON body without the response, too.
    let id = net.list_tools();
    let post = net.next();
    net.reply(
        &post,
        200,
        "application/json",
        &notification_line("notifications/tools/list_changed", json!({})),
    );
    let (got, result) = responses(&net.events()).remove(0);
    assert_eq!(got, id);
    assert!(result.is_err());
}

#[test]
fn resumes_with_last_event_id_after_the_retry_delay() {
    let mut net = Net::ready(HttpConfig::new(URL).standalone_stream(false));
    let id = net.list_tools();
    let post = net.next();
    net.head(&post, 200, "text/event-stream", None);
    // The priming event: an id, a retry delay, empty data.
    net.body(&post, "id: ev-1\nretry: 500\ndata: \n\n");
    net.end(&post);
    assert!(net.events().is_empty(), "the request stays pending");
    assert_eq!(net.session.poll_timeout(), Some(net.now + Duration::from_millis(500)));
    net.advance(Duration::from_millis(499));
    assert!(net.nothing_sent(), "not before the server's retry delay");
    net.advance(Duration::from_millis(1));
    let get = net.next();
    assert_eq!(get.method(), HttpMethod::Get);
    assert_eq!(get.header("last-event-id"), Some("ev-1"));
    assert_eq!(get.header("mcp-session-id"), Some("s1"));
    net.head(&get, 200, "text/event-stream", None);
    net.body(&get, &sse(Some("message"), Some("ev-2"), &result_line(1, json!({"tools": []}))));
    assert_eq!(responses(&net.events()), vec![(id, Ok(json!({"tools": []})))]);
}

#[test]
fn graceful_closes_do_not_reset_the_retry_counter() {
    let http = HttpConfig::new(URL).standalone_stream(false).max_reconnects(3);
    let mut net = Net::ready(http);
    let id = net.list_tools();
    let post = net.next();
    net.head(&post, 200, "text/event-stream", None);
    net.body(&post, "id: a\nretry: 100\ndata: \n\n");
    net.end(&post);
    let mut gets = 0;
    for _ in 0..10 {
        net.advance(Duration::from_millis(100));
        net.pump();
        let Some(get) = net.sent.pop_front() else { break };
        gets += 1;
        // Each resumption is accepted, primes, and is closed gracefully at once.
        net.head(&get, 200, "text/event-stream", None);
        net.body(&get, &format!("id: a{gets}\ndata: \n\n"));
        net.end(&get);
    }
    assert_eq!(gets, 3, "max_reconnects bounds resumptions even when every close is graceful");
    let (got, result) = responses(&net.events()).remove(0);
    assert_eq!(got, id);
    assert!(result.unwrap_err().to_string().contains("in a row"));
}

#[test]
fn a_message_resets_the_retry_counter_and_permanent_errors_stop_resumption() {
    let http = HttpConfig::new(URL).standalone_stream(false).max_reconnects(2);
    let mut net = Net::ready(http);
    let id = net.list_tools();
    let post = net.next();
    net.head(&post, 200, "text/event-stream", None);
    net.body(&post, "id: a\nretry: 10\ndata: \n\n");
    net.end(&post);
    for round in 0..4 {
        net.advance(Duration::from_millis(10));
        let get = net.next();
        net.head(&get, 200, "text/event-stream", None);
        // A progress-free but real message each time: progress was made, so the counter restarts.
        net.body(
            &get,
            &sse(
                None,
                Some(&format!("b{round}")),
                &notification_line("notifications/message", json!({"level": "debug", "data": round})),
            ),
        );
        net.end(&get);
    }
    assert!(responses(&net.events()).is_empty(), "still pending after 4 productive resumptions");
    net.advance(Duration::from_millis(10));
    let get = net.next();
    assert_eq!(get.header("last-event-id"), Some("b3"));
    net.reply(&get, 405, "text/plain", "Method Not Allowed");
    let (got, result) = responses(&net.events()).remove(0);
    assert_eq!(got, id);
    assert_eq!(
        result.unwrap_err(),
        RequestError::HttpStatus { status: 405, body: "Method Not Allowed".into(), error: None }
    );
    assert!(net.session.poll_timeout().is_none_or(|at| at > net.now + Duration::from_secs(59)));
}

#[test]
fn standalone_stream_is_never_doubled_and_405_turns_it_off() {
    // 405: the server offers none, and it is never asked again.
    let mut net = Net::ready(HttpConfig::new(URL));
    let get = net.next();
    assert_eq!(get.method(), HttpMethod::Get);
    net.reply(&get, 405, "", "");
    for _ in 0..5 {
        net.advance(Duration::from_secs(60));
        net.list_tools();
        let post = net.next();
        assert_eq!(post.method(), HttpMethod::Post);
        net.reply(&post, 200, "application/json", &result_line(id_of(&post), json!({"tools": []})));
    }
    assert!(net.nothing_sent());

    // A stream that ends is re-opened after its retry delay, one at a time.
    let mut net = Net::ready(HttpConfig::new(URL));
    let get = net.next();
    net.head(&get, 200, "text/event-stream", None);
    net.body(&get, "id: g1\nretry: 2000\ndata: \n\n");
    net.body(&get, &sse(None, None, &notification_line("notifications/tools/list_changed", json!({}))));
    assert!(matches!(net.events()[..], [Event::Notification(_)]));
    net.list_tools();
    let post = net.next();
    assert_eq!(post.method(), HttpMethod::Post, "no second GET while one is open");
    assert!(net.nothing_sent());
    net.end(&get);
    net.advance(Duration::from_millis(1999));
    assert!(net.nothing_sent());
    net.advance(Duration::from_millis(1));
    let again = net.next();
    assert_eq!(again.method(), HttpMethod::Get);
    assert_eq!(again.header("last-event-id"), Some("g1"));
    assert!(net.nothing_sent());
}

#[test]
fn standalone_stream_head_timeout_reconnects_with_backoff() {
    let http = HttpConfig::new(URL)
        .connect_timeout(Duration::from_secs(5))
        .reconnect_delay(Duration::from_secs(1), Duration::from_secs(4));
    let mut net = Net::ready(http);
    let get = net.next();
    net.advance(Duration::from_secs(5));
    net.pump();
    assert!(net.aborted.contains(&get.stream()), "a GET with no headers in time is aborted");
    net.advance(Duration::from_secs(1));
    let retry = net.next();
    assert_eq!(retry.method(), HttpMethod::Get);
    // Second failure: the delay doubles.
    net.reply(&retry, 503, "text/plain", "busy");
    net.advance(Duration::from_millis(1999));
    assert!(net.nothing_sent());
    net.advance(Duration::from_millis(1));
    assert_eq!(net.next().method(), HttpMethod::Get);
}

#[test]
fn session_expiry_reinitializes_and_retries_once() {
    for (status, body) in [
        (404, ""),
        (
            400,
            r#"{"jsonrpc":"2.0","error":{"code":-32000,"message":"Bad Request: No valid session ID provided"},"id":null}"#,
        ),
    ] {
        let mut net = Net::ready(HttpConfig::new(URL).standalone_stream(false));
        let id = net.list_tools();
        let post = net.next();
        net.reply(&post, status, "application/json", body);
        // A new initialize, without the dead session's id, with the same params.
        let init = net.next();
        assert_eq!(method_of(&init), "initialize", "after HTTP {status}");
        assert_eq!(init.header("mcp-session-id"), None);
        assert!(net.events().is_empty(), "transparent to the application");
        // Requests sent meanwhile wait for the new session.
        let second = net.list_tools();
        assert!(net.nothing_sent());
        net.head(&init, 200, "text/event-stream", Some("s2"));
        net.body(&init, &sse(None, None, &init_result("2025-11-25", full_server_capabilities())));
        net.end(&init);
        let notice = net.next();
        assert_eq!(method_of(&notice), "notifications/initialized");
        assert_eq!(notice.header("mcp-session-id"), Some("s2"));
        assert!(net.nothing_sent(), "requests wait until the server took `initialized`");
        net.reply(&notice, 202, "", "");
        let retried = net.next();
        assert_eq!(id_of(&retried), json!(1), "the affected request, re-sent with its id");
        assert_eq!(retried.header("mcp-session-id"), Some("s2"));
        let held = net.next();
        assert_eq!(id_of(&held), json!(2));
        net.reply(&retried, 200, "application/json", &result_line(1, json!({"tools": []})));
        net.reply(&held, 200, "application/json", &result_line(2, json!({"tools": []})));
        let got: Vec<_> = responses(&net.events()).into_iter().map(|(id, r)| (id, r.is_ok())).collect();
        assert_eq!(got, vec![(id, true), (second, true)]);
        assert_eq!(net.session.connection().status(), Status::Ready);
    }
}

#[test]
fn a_request_is_retried_only_once_after_expiry() {
    let mut net = Net::ready(HttpConfig::new(URL).standalone_stream(false));
    let id = net.list_tools();
    let post = net.next();
    net.reply(&post, 404, "", "");
    let init = net.next();
    net.head(&init, 200, "application/json", Some("s2"));
    net.body(&init, &init_result("2025-11-25", full_server_capabilities()));
    net.end(&init);
    let notice = net.next();
    net.reply(&notice, 202, "", "");
    let retried = net.next();
    net.reply(&retried, 404, "", "");
    let events = net.events();
    let (got, result) = responses(&events).remove(0);
    assert_eq!(got, id);
    let error = result.unwrap_err();
    assert_eq!(error, RequestError::Transport(TransportError::SessionExpired { status: 404 }));
    assert_eq!(error.http_status(), Some(404));
    assert!(error.to_string().contains("again"), "{error}");
    // No new initialize at once: a server that forgets every session would be re-initialized
    // in a loop. Hours later, still nothing.
    assert!(net.nothing_sent(), "{:?}", net.sent);
    net.advance(Duration::from_secs(3 * 3600));
    assert!(net.nothing_sent(), "{:?}", net.sent);
    // A notification does not start it: it waits.
    net.session.commands().notify("notifications/custom", None).unwrap();
    assert!(net.nothing_sent(), "{:?}", net.sent);
    // The next request starts the new session, then goes.
    let next = net.list_tools();
    let init = net.next();
    assert_eq!(method_of(&init), "initialize");
    assert_eq!(init.header("mcp-session-id"), None);
    assert!(net.nothing_sent(), "the request waits for the new session");
    net.head(&init, 200, "application/json", Some("s3"));
    net.body(&init, &init_result("2025-11-25", full_server_capabilities()));
    net.end(&init);
    let notice = net.next();
    assert_eq!(notice.header("mcp-session-id"), Some("s3"));
    net.reply(&notice, 202, "", "");
    let waited = net.next();
    assert_eq!(
        (method_of(&waited).as_str(), waited.header("mcp-session-id")),
        ("notifications/custom", Some("s3"))
    );
    net.reply(&waited, 202, "", "");
    let post = net.next();
    assert_eq!(id_of(&post), json!(2));
    assert_eq!(post.header("mcp-session-id"), Some("s3"));
    net.reply(&post, 200, "application/json", &result_line(2, json!({"tools": []})));
    assert_eq!(responses(&net.events()), vec![(next, Ok(json!({"tools": []})))]);
}

#[test]
fn failed_reinitialization_closes_the_connection() {
    let mut net = Net::ready(HttpConfig::new(URL).standalone_stream(false));
    let id = net.list_tools();
    let post = net.next();
    net.reply(&post, 404, "", "");
    let init = net.next();
    net.reply(&init, 200, "application/json", &init_result("2025-03-26", full_server_capabilities()));
    let events = net.events();
    assert_eq!(responses(&events)[0].0, id);
    assert!(
        matches!(
            events.last(),
            Some(Event::Closed(CloseReason::RequestFailed { request: ConnectionRequest::Reinitialize, error }))
                if matches!(&**error, RequestError::InvalidResponse(why) if why.contains("2025-03-26"))
        ),
        "{events:?}"
    );
}

#[test]
fn error_statuses_become_per_request_errors() {
    let mut net = Net::ready(HttpConfig::new(URL).standalone_stream(false));
    let a = net.list_tools();
    let b = net.list_tools();
    let pa = net.next();
    let pb = net.next();
    let long = "x".repeat(5000);
    net.reply(&pa, 500, "text/plain", &format!("database on fire {long}"));
    // A JSON-RPC error for the request says more than the status.
    net.reply(
        &pb,
        400,
        "application/json",
        &json!({"jsonrpc": "2.0", "id": 2, "error": {"code": -32602, "message": "bad cursor"}}).to_string(),
    );
    let got = responses(&net.events());
    assert_eq!(got[0].0, a);
    match &got[0].1 {
        Err(RequestError::HttpStatus { status: 500, body, error: None }) => {
            assert!(body.starts_with("database on fire"));
            assert!(body.len() <= 512, "the excerpt is bounded");
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(got[1].0, b);
    // Both the status and the server's error are kept.
    let error = got[1].1.as_ref().unwrap_err();
    assert!(
        matches!(error, RequestError::HttpStatus { status: 400, error: Some(e), .. } if e.code == -32602),
        "{error:?}"
    );
    assert_eq!(error.http_status(), Some(400));
    assert_eq!(error.server_error().map(|e| e.code), Some(-32602));
    assert!(!error.is_retriable(), "a JSON-RPC error is the server's answer");
    assert_eq!(net.session.connection().status(), Status::Ready, "the connection goes on");
}

#[test]
fn connection_failures_fail_only_the_request() {
    let mut net = Net::ready(HttpConfig::new(URL).standalone_stream(false));
    let id = net.list_tools();
    let post = net.next();
    net.session.handle_response_error(net.now, post.stream(), "connection refused");
    let (got, result) = responses(&net.events()).remove(0);
    assert_eq!(got, id);
    assert_eq!(result.unwrap_err(), RequestError::Transport("connection refused".into()));
    assert_eq!(net.session.connection().status(), Status::Ready);
}

#[test]
fn initialize_failing_closes_with_the_reason() {
    let mut net = Net::new(HttpConfig::new(URL).legacy_fallback(false));
    let init = net.next();
    net.reply(&init, 404, "text/plain", "no such endpoint");
    let events = net.events();
    assert!(
        matches!(
            events.last(),
            Some(Event::Closed(reason @ CloseReason::RequestFailed { request: ConnectionRequest::Initialize, error }))
                if matches!(&**error, RequestError::HttpStatus { status: 404, body, .. } if body == "no such endpoint")
                    && reason.http_status() == Some(404) && !reason.is_retriable()
        ),
        "{events:?}"
    );
    net.pump();
    assert!(net.session.is_finished(), "no session, no DELETE");

    let mut net = Net::new(HttpConfig::new(URL));
    let init = net.next();
    net.session.handle_response_error(net.now, init.stream(), "connection refused");
    assert!(matches!(
        net.events().last(),
        Some(Event::Closed(reason @ CloseReason::RequestFailed { request: ConnectionRequest::Initialize, error }))
            if **error == RequestError::Transport(TransportError::Io("connection refused".into()))
                && reason.is_retriable() && reason.http_status().is_none()
    ));
}

#[test]
fn timed_out_requests_abort_their_stream() {
    let mut net = Net::ready(HttpConfig::new(URL).standalone_stream(false));
    let params = PaginatedRequestParams::default();
    let options = RequestOptions::default().timeout(Duration::from_secs(2));
    let id = net.session.commands().send::<ListTools>(net.now, &params, options).unwrap();
    let post = net.next();
    net.head(&post, 200, "text/event-stream", None);
    net.advance(Duration::from_secs(2));
    let events = net.events();
    assert!(matches!(&responses(&events)[0], (got, Err(RequestError::Timeout(_))) if *got == id));
    assert!(net.aborted.contains(&post.stream()));
    // The cancellation notice is posted.
    let cancel = net.next();
    assert_eq!(method_of(&cancel), "notifications/cancelled");
    // Late bytes for the aborted stream are ignored.
    net.body(&post, &sse(None, None, &result_line(1, json!({"tools": []}))));
    assert!(net.events().is_empty());
}

#[test]
fn close_sends_delete_and_finishes() {
    let mut net = Net::ready(HttpConfig::new(URL).header("Authorization", "Bearer t"));
    let get = net.next();
    net.head(&get, 200, "text/event-stream", None);
    let id = net.list_tools();
    let post = net.next();
    net.session.commands().close();
    let delete = net.next();
    assert_eq!(delete.method(), HttpMethod::Delete);
    assert_eq!(delete.header("mcp-session-id"), Some("s1"));
    assert_eq!(delete.header("authorization"), Some("Bearer t"));
    assert!(net.aborted.contains(&get.stream()) && net.aborted.contains(&post.stream()));
    let events = net.events();
    assert!(
        matches!(&responses(&events)[0], (got, Err(RequestError::ConnectionClosed(CloseReason::Local))) if *got == id)
    );
    assert!(!net.session.is_finished(), "waits for the DELETE");
    net.head(&delete, 200, "", None);
    net.pump();
    assert!(net.session.is_finished());

    // A server that never answers the DELETE does not hold the close up beyond close_timeout.
    let mut net =
        Net::ready(HttpConfig::new(URL).standalone_stream(false).close_timeout(Duration::from_secs(3)));
    net.session.commands().close();
    let _delete = net.next();
    net.advance(Duration::from_secs(3));
    net.pump();
    assert!(net.session.is_finished());
}

#[test]
fn legacy_http_sse_fallback() {
    for refusal in [400, 404, 405] {
        let mut net = Net::new(HttpConfig::new("http://127.0.0.1:8931/sse").header("X-Api-Key", "k"));
        let post = net.next();
        net.reply(&post, refusal, "text/plain", "Cannot POST /sse");
        let get = net.next();
        assert_eq!(get.method(), HttpMethod::Get);
        assert_eq!(get.url(), "http://127.0.0.1:8931/sse");
        assert_eq!(get.header("accept"), Some("text/event-stream"));
        assert_eq!(get.header("x-api-key"), Some("k"));
        net.head(&get, 200, "text/event-stream", None);
        assert!(net.nothing_sent(), "nothing is posted before the endpoint is known");
        net.body(&get, "event: endpoint\ndata: /message?sessionId=abc\n\n");
        let init = net.next();
        assert_eq!(init.url(), "http://127.0.0.1:8931/message?sessionId=abc");
        assert_eq!(method_of(&init), "initialize");
        assert_eq!(init.header("x-api-key"), Some("k"));
        assert_eq!(init.header("mcp-session-id"), None);
        net.reply(&init, 202, "text/plain", "Accepted");
        net.body(&get, &sse(Some("message"), None, &init_result("2024-11-05", full_server_capabilities())));
        assert!(matches!(net.events()[..], [Event::Ready { .. }]));
        assert!(net.session.is_legacy());
        let notice = net.next();
        assert_eq!(method_of(&notice), "notifications/initialized");
        assert_eq!(notice.url(), "http://127.0.0.1:8931/message?sessionId=abc");
        net.reply(&notice, 202, "", "");
        let id = net.list_tools();
        let post = net.next();
        net.reply(&post, 202, "", "");
        net.body(&get, &sse(Some("message"), None, &result_line(1, json!({"tools": []}))));
        assert_eq!(responses(&net.events()), vec![(id, Ok(json!({"tools": []})))]);
        // No standalone GET and no DELETE in this transport; the stream ending ends the connection.
        assert!(net.nothing_sent());
        net.end(&get);
        assert!(matches!(net.events().last(), Some(Event::Closed(CloseReason::Transport(_)))));
        net.pump();
        assert!(net.session.is_finished());
    }
}

#[test]
fn legacy_fallback_refuses_a_cross_origin_endpoint_and_reports_both_failures() {
    let mut net = Net::new(HttpConfig::new(URL).header("Authorization", "Bearer t"));
    let post = net.next();
    net.reply(&post, 405, "", "");
    let get = net.next();
    net.head(&get, 200, "text/event-stream", None);
    net.body(&get, "event: endpoint\ndata: http://evil.example/steal\n\n");
    assert!(net.nothing_sent(), "credentials are never posted to another origin");
    assert!(
        matches!(net.events().last(), Some(Event::Closed(CloseReason::Transport(why))) if why.contains("origin"))
    );

    let mut net = Net::new(HttpConfig::new(URL));
    let post = net.next();
    net.reply(&post, 404, "", "");
    let get = net.next();
    net.reply(&get, 404, "text/plain", "Not Found");
    let events = net.events();
    assert!(
        matches!(
            events.last(),
            Some(Event::Closed(reason @ CloseReason::RequestFailed {
                request: ConnectionRequest::LegacyInitialize { refused_with: 404 },
                error,
            })) if matches!(&**error, RequestError::HttpStatus { status: 404, body, .. } if body == "Not Found")
                && reason.to_string().contains("HTTP 404 to initialize")
                && reason.http_status() == Some(404)
        ),
        "{events:?}"
    );
}

#[test]
fn oversized_json_body_fails_the_request() {
    let mut net =
        Net::with_config(HttpConfig::new(URL).standalone_stream(false), config().with_max_message_size(1024));
    let init = net.next();
    net.head(&init, 200, "application/json", Some("s1"));
    net.body(&init, &init_result("2025-11-25", full_server_capabilities()));
    net.end(&init);
    let notice = net.next();
    net.reply(&notice, 202, "", "");
    let id = net.list_tools();
    let post = net.next();
    net.head(&post, 200, "application/json", None);
    net.body(&post, &"x".repeat(600));
    net.body(&post, &"x".repeat(600));
    net.pump();
    assert!(net.aborted.contains(&post.stream()));
    let events = net.events();
    assert!(events.iter().any(|e| matches!(e, Event::ProtocolViolation(_))));
    // A JSON body is the request's one message: the request fails at once, typed.
    assert!(
        matches!(&responses(&events)[0], (got, Err(RequestError::MessageTooLarge { limit: 1024 })) if *got == id),
        "{events:?}"
    );
    assert_eq!(net.session.connection().stats().oversized_messages, 1);
}

#[test]
fn large_results_over_json_and_sse_bodies_whatever_the_declared_length() {
    let mut net = Net::ready(HttpConfig::new(URL).standalone_stream(false));
    let text = "lorem \"ipsum\"\n".repeat(20_000);
    let result = json!({"tools": [], "note": text});
    // A declared length: honest, absurd (the body's room is not taken from it), or short of
    // the body (it grows as it comes).
    for declared in [None, Some(usize::MAX.to_string()), Some("10".to_owned()), Some("x".to_owned())] {
        let id = net.list_tools();
        let post = net.next();
        let line = result_line(num(&id), result.clone());
        let length = declared.unwrap_or_else(|| line.len().to_string());
        let headers: Vec<(&str, &[u8])> =
            vec![("Content-Type", b"application/json"), ("Content-Length", length.as_bytes())];
        net.session.handle_response_head(net.now, post.stream(), 200, headers);
        for piece in line.as_bytes().chunks(7000) {
            net.session.handle_response_body(net.now, post.stream(), piece);
        }
        net.end(&post);
        assert_eq!(responses(&net.events()), vec![(id, Ok(result.clone()))], "declared {length}");
    }
    // An event-stream event whose data line comes in many pieces.
    let id = net.list_tools();
    let post = net.next();
    net.head(&post, 200, "text/event-stream", None);
    let stream = sse(Some("message"), None, &result_line(num(&id), result.clone()));
    for piece in stream.as_bytes().chunks(5000) {
        net.session.handle_response_body(net.now, post.stream(), piece);
    }
    net.end(&post);
    assert_eq!(responses(&net.events()), vec![(id, Ok(result))]);
}

#[test]
fn server_requests_on_a_post_stream_are_answered_by_post() {
    let config = config().with_capabilities(mcp_sansio::schema::ClientCapabilities {
        roots: Some(Default::default()),
        ..Default::default()
    });
    let mut net = Net::ready_with(HttpConfig::new(URL).standalone_stream(false), config);
    net.list_tools();
    let post = net.next();
    net.head(&post, 200, "text/event-stream", None);
    net.body(
        &post,
        &sse(None, None, &json!({"jsonrpc": "2.0", "id": "srv-1", "method": "roots/list"}).to_string()),
    );
    let events = net.events();
    let Some(Event::Request { id, .. }) = events.last() else { panic!("{events:?}") };
    net.session.commands().respond(id, Ok(&json!({"roots": []}))).unwrap();
    let answer = net.next();
    assert_eq!(answer.method(), HttpMethod::Post);
    assert_eq!(id_of(&answer), json!("srv-1"));
    assert_eq!(answer.header("mcp-session-id"), Some("s1"));
    net.reply(&answer, 202, "", "");
    assert!(net.events().is_empty());
}

proptest::proptest! {
    /// However a response body is split into chunks, the session delivers the same messages.
    #[test]
    fn response_bodies_decode_the_same_at_any_split(cuts in proptest::collection::vec(0usize..2000, 0..12), crlf: bool) {
        let mut net = Net::ready(HttpConfig::new(URL).standalone_stream(false));
        let id = net.list_tools();
        let post = net.next();
        net.head(&post, 200, "text/event-stream", None);
        let mut body = format!(
            "id: p\nretry: 10\ndata: \n\n: keep-alive\n\n{}{}{}",
            sse(None, Some("1"), &notification_line("notifications/message", json!({"level": "info", "data": "a\nb"}))),
            sse(Some("message"), Some("2"), &notification_line("notifications/progress", json!({"progressToken": 1, "progress": 1}))),
            sse(None, Some("3"), &result_line(1, json!({"tools": [], "nextCursor": "c"}))),
        );
        if crlf {
            body = body.replace('\n', "\r\n");
        }
        let mut cuts: Vec<usize> = cuts.into_iter().map(|c| c % (body.len() + 1)).collect();
        cuts.sort_unstable();
        let mut start = 0;
        for cut in cuts.into_iter().chain([body.len()]) {
            net.session.handle_response_body(net.now, post.stream(), &body.as_bytes()[start..cut]);
            start = cut;
        }
        net.end(&post);
        let events = net.events();
        proptest::prop_assert_eq!(events.len(), 3, "{:?}", events);
        proptest::prop_assert!(matches!(events[0], Event::Notification(_)));
        let progress = matches!(events[1], Event::Progress { .. });
        proptest::prop_assert!(progress);
        proptest::prop_assert_eq!(responses(&events), vec![(id, Ok(json!({"tools": [], "nextCursor": "c"})))]);
        proptest::prop_assert!(net.nothing_sent());
    }
}

#[test]
fn requests_wait_for_the_standalone_stream_head() {
    // A server may send a request-unrelated message (an elicitation from inside a tool) on the
    // GET stream only; requests therefore wait until that stream is open (or refused).
    let mut net = Net::ready(HttpConfig::new(URL));
    let get = net.next();
    assert_eq!(get.method(), HttpMethod::Get);
    let id = net.list_tools();
    assert!(net.nothing_sent(), "held until the GET stream's head");
    net.head(&get, 200, "text/event-stream", None);
    let post = net.next();
    assert_eq!(id_of(&post), json!(1));
    net.reply(&post, 200, "application/json", &result_line(1, json!({"tools": []})));
    assert_eq!(responses(&net.events())[0].0, id);

    // A GET that fails (or is refused) releases them too.
    let mut net = Net::ready(HttpConfig::new(URL));
    let get = net.next();
    net.list_tools();
    net.session.handle_response_error(net.now, get.stream(), "connection reset");
    assert_eq!(net.next().method(), HttpMethod::Post);
    // And one that never answers holds them for connect_timeout at most.
    let mut net = Net::ready(HttpConfig::new(URL).connect_timeout(Duration::from_secs(2)));
    let _get = net.next();
    net.list_tools();
    net.advance(Duration::from_secs(2));
    assert_eq!(net.next().method(), HttpMethod::Post);
    // And for one second at most when connect_timeout is longer (a server that sends the head
    // with its first event must not hold every call for 30 s); the GET keeps waiting.
    let mut net = Net::ready(HttpConfig::new(URL));
    let get = net.next();
    net.list_tools();
    net.advance(Duration::from_millis(999));
    assert!(net.nothing_sent(), "held for a second");
    net.advance(Duration::from_millis(1));
    let post = net.next();
    assert_eq!(post.method(), HttpMethod::Post);
    assert!(!net.aborted.contains(&get.stream()), "the GET was not given up");
}

#[test]
fn answers_to_a_burst_of_server_requests_go_a_few_at_a_time() {
    // Each POST takes a connection of its own: 20 pings in one burst must not make 20 at once.
    let mut net = Net::ready(HttpConfig::new(URL).standalone_stream(false));
    net.list_tools();
    let post = net.next();
    net.head(&post, 200, "text/event-stream", None);
    let pings: String = (0..20)
        .map(|n| sse(None, None, &json!({"jsonrpc": "2.0", "id": n, "method": "ping"}).to_string()))
        .collect();
    net.body(&post, &pings);
    net.pump();
    let mut answers: Vec<HttpRequest> = net.sent.drain(..).collect();
    assert_eq!(answers.len(), 8, "at most 8 in flight");
    let mut answered = Vec::new();
    while let Some(answer) = answers.pop() {
        answered.push(id_of(&answer));
        // Each one done lets one more go.
        net.reply(&answer, 202, "", "");
        net.pump();
        answers.extend(net.sent.drain(..));
        assert!(answers.len() <= 8);
    }
    answered.sort_by_key(|id| id.as_i64());
    assert_eq!(answered, (0..20).map(|n| json!(n)).collect::<Vec<_>>(), "every ping answered once");
}

#[test]
fn answers_the_server_never_takes_are_bounded_and_close_the_connection_typed() {
    // A server that asks without end over an event stream and finishes none of the POSTs that
    // answer (it takes the connections and never replies): the answers waiting their turn stop
    // at the bound and the connection closes typed, instead of holding them all.
    let limit = 2_000;
    let mut net = Net::ready(HttpConfig::new(URL).standalone_stream(false).max_queued_answers(limit));
    let id = net.list_tools();
    let post = net.next();
    net.head(&post, 200, "text/event-stream", None);
    let pings: String = (0..500)
        .map(|n| sse(None, None, &json!({"jsonrpc": "2.0", "id": n, "method": "ping"}).to_string()))
        .collect();
    net.body(&post, &pings);
    let events = net.events();
    let in_flight: Vec<HttpRequest> = net.sent.drain(..).collect();
    assert_eq!(in_flight.iter().filter(|r| r.method() == HttpMethod::Post).count(), 8, "8 POSTs in flight");
    let closed = events.iter().find_map(|e| match e {
        Event::Closed(CloseReason::ServerNotReading { unwritten, limit: l }) => Some((*unwritten, *l)),
        _ => None,
    });
    let (unwritten, l) = closed.unwrap_or_else(|| panic!("closed typed: {events:?}"));
    assert_eq!(l, limit);
    assert!(unwritten > limit && unwritten < limit + 100, "{unwritten} bytes");
    assert!(
        responses(&events).iter().any(|(r, outcome)| *r == id
            && matches!(outcome, Err(RequestError::ConnectionClosed(CloseReason::ServerNotReading { .. })))),
        "the call in flight fails with it: {events:?}"
    );
    // Every exchange is given up, and nothing more is posted.
    for request in in_flight.iter().filter(|r| r.method() == HttpMethod::Post) {
        assert!(net.aborted.contains(&request.stream()), "{request:?} aborted");
    }
    assert!(net.aborted.contains(&post.stream()));
    assert_eq!(in_flight.iter().filter(|r| r.method() == HttpMethod::Delete).count(), 1, "the session ends");
    assert!(net.nothing_sent(), "nothing more is posted");
}

fn modern_config() -> ClientConfig {
    config()
        .with_versions(&[mcp_sansio::ProtocolVersion::V2026_07_28, mcp_sansio::ProtocolVersion::V2025_11_25])
}

fn discover_json(id: i64) -> String {
    result_line(
        id,
        json!({"resultType": "complete", "supportedVersions": ["2026-07-28"], "capabilities": {"tools": {}, "resources": {}},
               "ttlMs": 0, "cacheScope": "private", "serverInfo": {"name": "modern", "version": "1"}}),
    )
}

#[test]
fn modern_requests_carry_version_method_and_name_headers_and_no_session() {
    let mut net = Net::with_config(HttpConfig::new(URL), modern_config());
    let probe = net.next();
    assert_eq!(method_of(&probe), "server/discover");
    assert_eq!(probe.header("mcp-protocol-version"), Some("2026-07-28"));
    assert_eq!(probe.header("mcp-method"), Some("server/discover"));
    assert_eq!(probe.header("mcp-name"), None);
    net.head(&probe, 200, "application/json", Some("ignored-session"));
    net.body(&probe, &discover_json(0));
    net.end(&probe);
    assert!(matches!(net.events()[..], [Event::Ready { .. }]));
    assert_eq!(net.session.connection().server_info().unwrap().name, "modern");
    assert!(net.nothing_sent(), "no initialized notification and no GET stream");
    assert_eq!(net.session.session_id(), None);

    let params = mcp_sansio::schema::CallToolRequestParams::new("get_wéather");
    net.session
        .commands()
        .send::<mcp_sansio::schema::CallTool>(net.now, &params, RequestOptions::default())
        .unwrap();
    let call = net.next();
    assert_eq!(call.header("mcp-method"), Some("tools/call"));
    assert_eq!(call.header("mcp-name"), Some("=?base64?Z2V0X3fDqWF0aGVy?="));
    assert_eq!(call.header("mcp-protocol-version"), Some("2026-07-28"));
    assert_eq!(call.header("mcp-session-id"), None);
    let read = mcp_sansio::schema::ReadResourceRequestParams::new("file:///a b.txt");
    net.session
        .commands()
        .send::<mcp_sansio::schema::ReadResource>(net.now, &read, RequestOptions::default())
        .unwrap();
    assert_eq!(net.next().header("mcp-name"), Some("file:///a b.txt"));
    net.session.commands().close();
    net.pump();
    assert!(net.nothing_sent(), "no DELETE without a session");
    assert!(net.session.is_finished());
}

#[test]
fn modern_version_refusal_in_a_400_is_retried_not_a_fallback() {
    let mut net = Net::with_config(HttpConfig::new(URL), modern_config());
    let probe = net.next();
    let refusal = json!({"jsonrpc": "2.0", "id": 0, "error": {"code": -32022, "message": "Unsupported protocol version",
                         "data": {"supported": ["2026-07-28"], "requested": "2026-07-28"}}});
    net.reply(&probe, 400, "application/json", &refusal.to_string());
    let again = net.next();
    assert_eq!(method_of(&again), "server/discover");
    assert_eq!(id_of(&again), json!(1));
    assert_eq!(again.header("mcp-protocol-version"), Some("2026-07-28"));
    net.reply(&again, 200, "application/json", &discover_json(1));
    assert!(matches!(net.events()[..], [Event::Ready { .. }]));
}

#[test]
fn a_legacy_http_server_gets_initialize_after_the_modern_probe() {
    for (status, body) in [
        (404, ""),
        (400, "Bad Request"),
        (200, r#"{"jsonrpc":"2.0","id":0,"error":{"code":-32601,"message":"nope"}}"#),
    ] {
        let mut net = Net::with_config(HttpConfig::new(URL), modern_config());
        let probe = net.next();
        net.reply(&probe, status, "application/json", body);
        let init = net.next();
        assert_eq!(method_of(&init), "initialize", "after {status} {body:?}");
        assert_eq!(init.header("mcp-method"), None, "legacy requests carry no Mcp-Method");
        assert_eq!(init.header("mcp-protocol-version"), None);
        net.head(&init, 200, "application/json", Some("s1"));
        net.body(
            &init,
            &init_result("2025-11-25", full_server_capabilities()).replace("\"id\":0", "\"id\":1"),
        );
        net.end(&init);
        assert!(matches!(net.events()[..], [Event::Ready { .. }]));
        assert_eq!(method_of(&net.next()), "notifications/initialized");
        assert_eq!(net.next().method(), HttpMethod::Get, "the legacy GET stream");
    }
}

#[test]
fn an_input_required_round_over_http_ends_its_stream_cleanly_and_retries_with_headers() {
    let capabilities: mcp_sansio::schema::ClientCapabilities =
        serde_json::from_value(json!({"elicitation": {"form": {}}})).unwrap();
    let mut net = Net::with_config(HttpConfig::new(URL), modern_config().with_capabilities(capabilities));
    let probe = net.next();
    net.reply(&probe, 200, "application/json", &discover_json(0));
    net.events();
    let params = mcp_sansio::schema::CallToolRequestParams::new("confirm_me");
    let id = net
        .session
        .commands()
        .send::<mcp_sansio::schema::CallTool>(net.now, &params, RequestOptions::default())
        .unwrap();
    let first = net.next();
    let round = json!({"resultType": "input_required", "requestState": "st",
                       "inputRequests": {"ok": {"method": "elicitation/create", "params": {"message": "sure?", "requestedSchema": {"type": "object", "properties": {}}}}}});
    net.reply(&first, 200, "application/json", &result_line(1, round));
    let events = net.events();
    let [Event::Request { id: input, .. }] = &events[..] else { panic!("{events:?}") };
    assert!(net.aborted.is_empty());
    net.session.commands().respond(input, Ok(&json!({"action": "accept", "content": {}}))).unwrap();
    let retry = net.next();
    assert_eq!(id_of(&retry), json!(2));
    assert_eq!(retry.header("mcp-name"), Some("confirm_me"));
    assert_eq!(json_of(&retry)["params"]["requestState"], "st");
    net.reply(
        &retry,
        200,
        "application/json",
        &result_line(2, json!({"resultType": "complete", "content": []})),
    );
    assert!(matches!(&net.events()[..], [Event::Response { id: got, result: Ok(_) }] if *got == id));
}

#[test]
fn session_expiry_after_the_dual_era_fallback_reinitializes_with_the_fallback_initialize() {
    // The probe took id 0, so `initialize` is id 1: re-initialization must recognise its answer.
    let mut net = Net::with_config(HttpConfig::new(URL).standalone_stream(false), modern_config());
    let probe = net.next();
    net.reply(&probe, 404, "", "");
    let init = net.next();
    let init_result_1 = init_result("2025-11-25", full_server_capabilities()).replace("\"id\":0", "\"id\":1");
    net.head(&init, 200, "application/json", Some("s1"));
    net.body(&init, &init_result_1);
    net.end(&init);
    net.events();
    let notice = net.next();
    net.reply(&notice, 202, "", "");
    let id = net.list_tools();
    let post = net.next();
    net.reply(&post, 404, "", "");
    let again = net.next();
    assert_eq!(method_of(&again), "initialize");
    assert_eq!(id_of(&again), json!(1));
    net.head(&again, 200, "application/json", Some("s2"));
    net.body(&again, &init_result_1);
    net.end(&again);
    let notice = net.next();
    assert_eq!(method_of(&notice), "notifications/initialized");
    net.reply(&notice, 202, "", "");
    let retried = net.next();
    assert_eq!(retried.header("mcp-session-id"), Some("s2"));
    net.reply(&retried, 200, "application/json", &result_line(2, json!({"tools": []})));
    assert_eq!(responses(&net.events()), vec![(id, Ok(json!({"tools": []})))]);
}

/// A modern session past its `server/discover`.
fn modern_ready() -> Net {
    let mut net = Net::with_config(HttpConfig::new(URL), modern_config());
    let probe = net.next();
    net.reply(&probe, 200, "application/json", &discover_json(0));
    net.events();
    net
}

fn call_tool(net: &mut Net, name: &str, arguments: Value) -> RequestId {
    let mut params = mcp_sansio::schema::CallToolRequestParams::new(name);
    params.arguments = serde_json::from_value(arguments).unwrap();
    net.session
        .commands()
        .send::<mcp_sansio::schema::CallTool>(net.now, &params, RequestOptions::default())
        .unwrap()
}

fn annotated_tools() -> Value {
    json!({"resultType": "complete", "ttlMs": 0, "cacheScope": "private", "tools": [
        {"name": "weather", "inputSchema": {"type": "object", "properties": {
            "region": {"type": "string", "x-mcp-header": "Region"},
            "days": {"type": "integer", "x-mcp-header": "Days"},
            "metric": {"type": "boolean", "x-mcp-header": "Metric"},
            "note": {"type": "string"}}}},
        {"name": "broken", "inputSchema": {"type": "object", "properties": {
            "score": {"type": "number", "x-mcp-header": "Score"}}}},
    ]})
}

#[test]
fn tool_calls_carry_mcp_param_headers_and_invalid_tools_are_excluded() {
    let mut net = modern_ready();
    let list = net.list_tools();
    let req = net.next();
    assert_eq!(req.header("mcp-method"), Some("tools/list"));
    net.reply(&req, 200, "application/json", &result_line(1, annotated_tools()));
    let events = net.events();
    let [(id, Ok(result))] = &responses(&events)[..] else { panic!("{events:?}") };
    assert_eq!(*id, list);
    let names: Vec<_> = result["tools"].as_array().unwrap().iter().map(|t| t["name"].clone()).collect();
    assert_eq!(names, [json!("weather")], "the tool with an invalid annotation is left out");
    assert_eq!(result["ttlMs"], 0, "the rest of the result is kept");

    call_tool(&mut net, "weather", json!({"region": "Hello, 世界", "days": 3, "metric": false, "note": "n"}));
    let call = net.next();
    assert_eq!(call.header("mcp-param-region"), Some("=?base64?SGVsbG8sIOS4lueVjA==?="));
    assert_eq!(call.header("mcp-param-days"), Some("3"));
    assert_eq!(call.header("mcp-param-metric"), Some("false"));
    assert_eq!(call.header("mcp-param-note"), None, "not annotated");
    call_tool(&mut net, "weather", json!({"region": null, "days": 1}));
    let sparse = net.next();
    assert_eq!((sparse.header("mcp-param-region"), sparse.header("mcp-param-days")), (None, Some("1")));

    // The excluded tool is refused locally, without a request.
    let refused = call_tool(&mut net, "broken", json!({"score": 1.5}));
    assert!(net.nothing_sent());
    let events = net.events();
    let [(id, Err(RequestError::ToolRejected { tool, reason }))] = &responses(&events)[..] else {
        panic!("{events:?}")
    };
    assert_eq!((id, tool.as_str()), (&refused, "broken"));
    assert!(reason.contains("Score"), "{reason}");
}

#[test]
fn a_header_mismatch_refreshes_the_tool_list_and_resends_the_call_once() {
    let mut net = modern_ready();
    // Called before any tools/list: the session cannot know the headers yet.
    let id = call_tool(&mut net, "weather", json!({"region": "eu", "days": 2}));
    let call = net.next();
    assert_eq!(call.header("mcp-param-region"), None);
    let mismatch = |id: Value| {
        json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32020, "message": "Missing Mcp-Param-Region"}})
            .to_string()
    };
    net.reply(&call, 400, "application/json", &mismatch(json!(1)));
    assert!(net.events().is_empty(), "not failed yet");
    // Page 1 of the refresh, then page 2.
    let page = net.next();
    assert_eq!(page.header("mcp-method"), Some("tools/list"));
    let page_json = json_of(&page);
    assert_eq!(page_json["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"], "2026-07-28");
    let mut first = json!({"resultType": "complete", "ttlMs": 0, "cacheScope": "private", "tools": [], "nextCursor": "p2"});
    first["tools"] = json!([{"name": "other", "inputSchema": {"type": "object"}}]);
    net.reply(&page, 200, "text/event-stream", &sse(None, None, &result_line_raw(&page_json["id"], first)));
    let page2 = net.next();
    assert_eq!(json_of(&page2)["params"]["cursor"], "p2");
    let page2_id = json_of(&page2)["id"].clone();
    net.reply(&page2, 200, "application/json", &result_line_raw(&page2_id, annotated_tools()));
    assert!(net.events().is_empty(), "the refresh is not the application's business");
    let again = net.next();
    assert_eq!(id_of(&again), json!(1), "the refused request is sent again as it was");
    assert_eq!(again.header("mcp-param-region"), Some("eu"));
    assert_eq!(again.header("mcp-param-days"), Some("2"));
    // A second mismatch is the server's final word.
    net.reply(&again, 400, "application/json", &mismatch(json!(1)));
    let events = net.events();
    let [(got, Err(error @ RequestError::HttpStatus { status: 400, .. }))] = &responses(&events)[..] else {
        panic!("{events:?}")
    };
    assert_eq!((got, error.server_error().map(|e| e.code)), (&id, Some(-32020)));
    assert!(error.mcp_error().is_some(), "decoded as the server's error");
    assert!(net.nothing_sent());
}

/// A server whose tool list never ends (a new cursor on every page) gets at most 100 pages
/// fetched after a `-32020`; then the refusal stands, at once, not at the call's deadline.
#[test]
fn a_refresh_after_a_header_mismatch_fetches_a_bounded_number_of_pages() {
    let mut net = modern_ready();
    let id = call_tool(&mut net, "weather", json!({"region": "eu"}));
    let call = net.next();
    let mismatch =
        json!({"jsonrpc": "2.0", "id": 1, "error": {"code": -32020, "message": "Missing Mcp-Param-Region"}});
    net.reply(&call, 400, "application/json", &mismatch.to_string());
    let mut pages = 0;
    loop {
        let events = net.events();
        if let [(got, Err(RequestError::HttpStatus { status: 400, .. }))] = &responses(&events)[..] {
            assert_eq!(got, &id);
            break;
        }
        assert!(events.is_empty(), "{events:?}");
        let page = net.next();
        assert_eq!(page.header("mcp-method"), Some("tools/list"));
        pages += 1;
        assert!(pages <= 100, "more than 100 pages");
        let page_id = json_of(&page)["id"].clone();
        let next =
            json!({"resultType": "complete", "ttlMs": 0, "tools": [], "nextCursor": format!("p{pages}")});
        net.reply(&page, 200, "application/json", &result_line_raw(&page_id, next));
    }
    assert_eq!(pages, 100);
    assert!(net.nothing_sent());
}

fn result_line_raw(id: &Value, result: Value) -> String {
    json!({"jsonrpc": "2.0", "id": id, "result": result}).to_string()
}

#[test]
fn listen_streams_over_http_are_aborted_not_cancelled_and_reopened_when_they_break() {
    let mut net = Net::with_config(HttpConfig::new(URL), modern_config());
    let probe = net.next();
    let discover = result_line(
        0,
        json!({"resultType": "complete", "supportedVersions": ["2026-07-28"], "ttlMs": 0, "cacheScope": "private",
               "capabilities": {"tools": {"listChanged": true}, "resources": {"subscribe": true}}}),
    );
    net.reply(&probe, 200, "application/json", &discover);
    net.events();
    let listen = net.next();
    assert_eq!(listen.header("mcp-method"), Some("subscriptions/listen"));
    let first = id_of(&listen);
    // The head of a listen stream is due within the connect timeout, like a GET stream's.
    net.head(&listen, 200, "text/event-stream", None);
    let ack = json!({"jsonrpc": "2.0", "method": "notifications/subscriptions/acknowledged",
                     "params": {"notifications": {"toolsListChanged": true}, "_meta": {"io.modelcontextprotocol/subscriptionId": first}}});
    net.body(&listen, &sse(None, None, &ack.to_string()));
    net.body(&listen, ": keep-alive\n\n");
    let changed = json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed",
                         "params": {"_meta": {"io.modelcontextprotocol/subscriptionId": first}}});
    net.body(&listen, &sse(None, None, &changed.to_string()));
    assert!(matches!(
        net.events()[..],
        [Event::Notification(mcp_sansio::ServerNotification::ToolListChanged)]
    ));
    // Hours without traffic: a listen stream has no deadline.
    net.advance(Duration::from_secs(3 * 3600));
    assert!(net.nothing_sent() && net.aborted.is_empty());

    // Subscribing replaces it; once the new one is acknowledged the old stream is aborted, and
    // no notifications/cancelled is posted.
    let params = json!({"uri": "demo://a"}).to_string();
    let sub = net
        .session
        .commands()
        .send_request(net.now, "resources/subscribe", Some(params.as_bytes()), RequestOptions::default())
        .unwrap();
    let second = net.next();
    let ack = json!({"jsonrpc": "2.0", "method": "notifications/subscriptions/acknowledged",
                     "params": {"notifications": {"toolsListChanged": true, "resourceSubscriptions": ["demo://a"]},
                                "_meta": {"io.modelcontextprotocol/subscriptionId": id_of(&second)}}});
    net.head(&second, 200, "text/event-stream", None);
    net.body(&second, &sse(None, None, &ack.to_string()));
    let events = net.events();
    assert!(matches!(&responses(&events)[..], [(id, Ok(_))] if *id == sub), "{events:?}");
    assert_eq!(net.aborted, [listen.stream()]);
    assert!(net.nothing_sent(), "no notifications/cancelled over HTTP");

    // The stream breaks: listened to again after a second.
    net.session.handle_response_error(net.now, second.stream(), "connection reset");
    assert!(net.events().is_empty());
    net.advance(Duration::from_millis(999));
    assert!(net.nothing_sent());
    net.advance(Duration::from_millis(1));
    let third = net.next();
    assert_eq!(json_of(&third)["params"]["notifications"]["resourceSubscriptions"], json!(["demo://a"]));
    // No head within the connect timeout: aborted, and tried again later.
    net.advance(Duration::from_secs(30));
    net.pump();
    assert!(net.aborted.contains(&third.stream()));
    // Two failures in a row without an acknowledgement: the delay doubles.
    net.advance(Duration::from_millis(1999));
    assert!(net.nothing_sent());
    net.advance(Duration::from_millis(1));
    assert_eq!(net.next().header("mcp-method"), Some("subscriptions/listen"));
}

#[test]
fn a_broken_modern_response_stream_reissues_the_request_under_a_new_id_a_bounded_number_of_times() {
    let mut net = modern_ready();
    let id = call_tool(&mut net, "slow", json!({"n": 1}));
    let first = net.next();
    assert_eq!(id_of(&first), json!(1));
    let progress = json!({"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": "x"}});
    net.head(&first, 200, "text/event-stream", None);
    net.body(&first, &sse(None, None, &progress.to_string()));
    net.session.handle_response_error(net.now, first.stream(), "connection reset");
    net.events();
    let second = net.next();
    assert_eq!(id_of(&second), json!(2), "a new id");
    assert_eq!(json_of(&second)["params"], json_of(&first)["params"], "the same request");
    assert_eq!(second.header("mcp-name"), Some("slow"));
    // A stream that ends without the response is as broken.
    net.head(&second, 200, "text/event-stream", None);
    net.end(&second);
    let third = net.next();
    assert_eq!(id_of(&third), json!(3));
    // A late answer under an old id is not taken for the request.
    net.reply(&first, 200, "application/json", &result_line(1, json!({"content": []})));
    assert!(responses(&net.events()).is_empty());
    net.head(&third, 200, "text/event-stream", None);
    net.end(&third);
    let events = net.events();
    let [(got, Err(RequestError::Transport(TransportError::StreamEnded)))] = &responses(&events)[..] else {
        panic!("{events:?}")
    };
    assert_eq!(*got, id);
    assert!(net.nothing_sent(), "two re-issues at most");
}

#[test]
fn cancelling_a_modern_request_aborts_its_stream_and_posts_nothing() {
    let mut net = modern_ready();
    let id = call_tool(&mut net, "slow", json!({}));
    let call = net.next();
    net.head(&call, 200, "text/event-stream", None);
    net.session.commands().cancel(&id, Some("no longer needed")).unwrap();
    net.pump();
    assert_eq!(net.aborted, [call.stream()]);
    assert!(net.nothing_sent(), "no notifications/cancelled over HTTP in 2026-07-28");
    assert!(matches!(&responses(&net.events())[..], [(got, Err(RequestError::Cancelled(_)))] if *got == id));
}

#[test]
fn the_servers_retry_is_clamped_to_the_max_reconnect_delay() {
    // A server asking for a one-hour `retry` must not hold the request that long: the
    // configured ceiling (here 2 s) wins.
    let http =
        HttpConfig::new(URL).standalone_stream(false).reconnect_delay(Duration::from_millis(100), 2 * S);
    let mut net = Net::ready(http);
    let id = net.list_tools();
    let post = net.next();
    net.head(&post, 200, "text/event-stream", None);
    net.body(&post, "id: ev-1\nretry: 3600000\ndata: \n\n");
    net.end(&post);
    assert_eq!(net.session.poll_timeout(), Some(net.now + 2 * S));
    net.advance(2 * S);
    let get = net.next();
    assert_eq!((get.method(), get.header("last-event-id")), (HttpMethod::Get, Some("ev-1")));
    net.head(&get, 200, "text/event-stream", None);
    net.body(&get, &sse(Some("message"), Some("ev-2"), &result_line(1, json!({"tools": []}))));
    assert_eq!(responses(&net.events()), vec![(id, Ok(json!({"tools": []})))]);
}

#[test]
fn a_reinitialization_that_never_answers_closes_after_the_handshake_timeout() {
    let config = config().with_handshake_timeout(5 * S).with_request_timeout(3600 * S);
    let mut net = Net::ready_with(HttpConfig::new(URL).standalone_stream(false), config);
    let id = net.list_tools();
    let post = net.next();
    net.reply(&post, 404, "", "");
    let reinit = net.next();
    assert_eq!(method_of(&reinit), "initialize");
    // The server takes the request, sends a head, and then nothing.
    net.head(&reinit, 200, "text/event-stream", Some("s2"));
    net.advance(5 * S - Duration::from_millis(1));
    assert!(net.events().is_empty(), "within the handshake timeout");
    net.advance(Duration::from_millis(1));
    let events = net.events();
    assert_eq!(responses(&events)[0].0, id);
    assert!(
        matches!(
            events.last(),
            Some(Event::Closed(CloseReason::RequestFailed { request: ConnectionRequest::Reinitialize, error }))
                if **error == RequestError::Transport(TransportError::StreamBroke(Box::new(TransportError::NoResponse(5 * S))))
        ),
        "{events:?}"
    );
    assert!(net.aborted.contains(&reinit.stream()));
}

#[test]
fn notifications_cannot_be_sent_over_modern_http_and_say_so() {
    let mut net = modern_ready();
    let refused = net.session.commands().notify("notifications/custom", None);
    assert!(
        matches!(&refused, Err(mcp_sansio::UsageError::TransportCannotCarry { what, .. }) if what == "notifications/custom"),
        "{refused:?}"
    );
    assert!(net.nothing_sent());
    // A version that has no such notification at all says that first.
    let refused = net.session.commands().notify("notifications/roots/list_changed", None);
    assert!(matches!(refused, Err(mcp_sansio::UsageError::NotInVersion { .. })), "{refused:?}");
    // Over legacy Streamable HTTP, notifications are posted.
    let mut legacy = Net::ready(HttpConfig::new(URL).standalone_stream(false));
    legacy.session.commands().notify("notifications/custom", Some(b"{\"a\":1}")).unwrap();
    let post = legacy.next();
    assert_eq!(method_of(&post), "notifications/custom");
}

// ----- typed transport failures -----

#[test]
fn transport_failures_are_typed_and_keep_their_status() {
    let mut net = Net::ready(HttpConfig::new(URL).standalone_stream(false));
    let fail_with = |net: &mut Net, answer: &dyn Fn(&mut Net, &HttpRequest)| {
        let id = net.list_tools();
        let post = net.next();
        answer(net, &post);
        let (got, result) = responses(&net.events()).remove(0);
        assert_eq!(got, id);
        result.unwrap_err()
    };
    // A success status whose content type cannot carry the response.
    let error = fail_with(&mut net, &|net, post| net.reply(post, 200, "text/html", "<html></html>"));
    assert_eq!(
        error,
        RequestError::Transport(TransportError::UnexpectedContentType {
            status: 200,
            content_type: Some("text/html".into())
        })
    );
    assert_eq!(error.http_status(), Some(200));
    assert!(error.to_string().contains("\"text/html\""), "{error}");
    assert!(!error.is_retriable(), "the same request would get the same page");
    let error = fail_with(&mut net, &|net, post| net.reply(post, 200, "", ""));
    assert_eq!(
        error,
        RequestError::Transport(TransportError::UnexpectedContentType { status: 200, content_type: None })
    );
    assert!(error.to_string().contains("no content type"), "{error}");
    // A JSON body that is not the response.
    let error =
        fail_with(&mut net, &|net, post| net.reply(post, 200, "application/json", "this is {not JSON"));
    assert_eq!(
        error,
        RequestError::Transport(TransportError::NotTheResponse {
            status: 200,
            excerpt: "this is {not JSON".into()
        })
    );
    // The stream ended, or broke, before the response.
    let error = fail_with(&mut net, &|net, post| net.reply(post, 200, "text/event-stream", ": nothing\n\n"));
    assert_eq!(error, RequestError::Transport(TransportError::StreamEnded));
    assert_eq!(error.http_status(), None);
    assert!(error.is_retriable(), "a stream that ended early may not next time");
    let error = fail_with(&mut net, &|net, post| {
        net.head(post, 200, "application/json", None);
        net.body(post, "{\"jsonrpc\":");
        net.session.handle_response_error(net.now, post.stream(), "connection reset by peer");
    });
    assert_eq!(
        error,
        RequestError::Transport(TransportError::StreamBroke(Box::new(TransportError::Io(
            "connection reset by peer".into()
        ))))
    );
    // What the driver's HTTP client said, typed.
    let error = fail_with(&mut net, &|net, post| {
        net.session.handle_response_error(
            net.now,
            post.stream(),
            TransportError::HeadTooLarge { limit: Some(4096) },
        )
    });
    assert_eq!(error, RequestError::Transport(TransportError::HeadTooLarge { limit: Some(4096) }));
    assert!(error.to_string().contains("head is too large") && error.to_string().contains("4096"), "{error}");
    assert!(!error.is_retriable(), "the same request would get the same head");
    // An error status keeps its status, with or without a JSON-RPC error.
    let error = fail_with(&mut net, &|net, post| net.reply(post, 503, "text/plain", "busy"));
    assert_eq!(error, RequestError::HttpStatus { status: 503, body: "busy".into(), error: None });
    assert!(error.is_retriable());
    let error = fail_with(&mut net, &|net, post| {
        let body = json!({"jsonrpc": "2.0", "id": id_of(post), "error": {"code": -32603, "message": "boom"}});
        net.reply(post, 500, "application/json", &body.to_string())
    });
    assert_eq!(error.http_status(), Some(500));
    assert_eq!(error.server_error().map(|e| e.code), Some(-32603));
    assert!(!error.is_retriable(), "a 500 carrying a JSON-RPC error is the server's answer");
    assert!(error.to_string().contains("500") && error.to_string().contains("boom"), "{error}");
    let error = fail_with(&mut net, &|net, post| {
        let body =
            json!({"jsonrpc": "2.0", "id": id_of(post), "error": {"code": -32000, "message": "overloaded"}});
        net.reply(post, 503, "application/json", &body.to_string())
    });
    assert!(error.is_retriable(), "a 503 says later, whatever its body");
    assert_eq!(net.session.connection().status(), Status::Ready);
}

// ----- redirects -----

/// A redirect answer.
fn redirect(net: &mut Net, req: &HttpRequest, status: u16, location: Option<&str>) {
    let mut headers: Vec<(&str, &[u8])> = vec![("Content-Type", b"text/plain")];
    if let Some(location) = location {
        headers.push(("Location", location.as_bytes()));
    }
    net.session.handle_response_head(net.now, req.stream(), status, headers);
}

#[test]
fn temporary_and_permanent_redirects_are_followed_with_the_same_request() {
    for status in [307, 308] {
        let http = HttpConfig::new(URL).standalone_stream(false).header("X-Api-Key", "k1");
        let mut net = Net::ready(http);
        let id = net.list_tools();
        let post = net.next();
        redirect(&mut net, &post, status, Some("/moved?x=1"));
        let again = net.next();
        assert!(net.aborted.contains(&post.stream()), "the redirect's body is not read");
        assert_eq!(again.url(), "http://127.0.0.1:8931/moved?x=1");
        assert_eq!(again.method(), HttpMethod::Post);
        assert_eq!(again.body(), post.body(), "the same body, the same id");
        let names = |r: &HttpRequest| {
            r.headers().map(|(n, v)| (n.to_ascii_lowercase(), v.to_owned())).collect::<Vec<_>>()
        };
        assert_eq!(names(&again), names(&post), "the same headers on the same origin");
        assert_eq!(again.header("x-api-key"), Some("k1"));
        net.reply(&again, 200, "application/json", &result_line(1, json!({"tools": []})));
        assert_eq!(responses(&net.events()), vec![(id, Ok(json!({"tools": []})))]);
        // The next request starts at the configured URL again.
        net.list_tools();
        assert_eq!(net.next().url(), URL, "HTTP {status}");
    }
}

#[test]
fn a_redirect_to_another_origin_carries_no_custom_headers_nor_credentials() {
    let http = HttpConfig::new(URL)
        .standalone_stream(false)
        .header("Authorization", "Bearer sekrit")
        .header("X-Api-Key", "k1");
    let mut net = Net::ready(http);
    let id = net.list_tools();
    let post = net.next();
    redirect(&mut net, &post, 307, Some("http://127.0.0.1:9999/mcp"));
    let moved = net.next();
    assert_eq!(moved.url(), "http://127.0.0.1:9999/mcp");
    assert_eq!(moved.header("authorization"), None);
    assert_eq!(moved.header("x-api-key"), None);
    // The MCP headers go on: the request is the same.
    assert_eq!(moved.header("mcp-session-id"), Some("s1"));
    assert_eq!(moved.header("mcp-protocol-version"), Some("2025-11-25"));
    assert_eq!(moved.header("content-type"), Some("application/json"));
    assert_eq!(moved.header("accept"), Some("application/json, text/event-stream"));
    assert_eq!(moved.body(), post.body());
    // Back to the first origin from there: what was left behind stays behind.
    redirect(&mut net, &moved, 308, Some("http://127.0.0.1:8931/mcp2"));
    let back = net.next();
    assert_eq!(back.url(), "http://127.0.0.1:8931/mcp2");
    assert_eq!((back.header("authorization"), back.header("x-api-key")), (None, None));
    // A 401 from there is not the MCP server's challenge.
    net.reply(&back, 401, "text/plain", "who are you");
    let (got, result) = responses(&net.events()).remove(0);
    assert_eq!(got, id);
    assert!(matches!(result, Err(RequestError::HttpStatus { status: 401, .. })), "{result:?}");
}

#[test]
fn an_oauth_token_follows_a_redirect_on_the_same_origin_only() {
    use mcp_sansio::auth::{AuthConfig, Authorizer, ClientInfo, Credentials};
    const MCP: &str = "https://mcp.test/mcp";
    let now = epoch();
    let mut authorizer = Authorizer::new(
        MCP,
        AuthConfig::client_credentials(ClientInfo::confidential("id", "secret")),
        Box::new(|buf: &mut [u8]| buf.fill(7)),
    );
    let credentials: Credentials =
        serde_json::from_value(json!({"tokens": {"access_token": "tok-1", "token_type": "Bearer"}})).unwrap();
    authorizer.restore(now, 1_000_000, credentials);
    let session = HttpSession::new(HttpConfig::new(MCP).standalone_stream(false), config(), now)
        .with_authorizer(authorizer);
    let mut net = Net { session, now, sent: VecDeque::new(), aborted: Vec::new() };
    let init = net.next();
    assert_eq!(init.header("authorization"), Some("Bearer tok-1"));
    redirect(&mut net, &init, 307, Some("/v2/mcp"));
    let same = net.next();
    assert_eq!(same.url(), "https://mcp.test/v2/mcp");
    assert_eq!(same.header("authorization"), Some("Bearer tok-1"), "the same origin");
    redirect(&mut net, &same, 307, Some("https://elsewhere.test/mcp"));
    let foreign = net.next();
    assert_eq!(foreign.url(), "https://elsewhere.test/mcp");
    assert_eq!(foreign.header("authorization"), None, "never to another origin");
    net.head(&foreign, 200, "application/json", Some("s9"));
    net.body(&foreign, &init_result("2025-11-25", full_server_capabilities()));
    net.end(&foreign);
    assert!(matches!(net.events()[..], [Event::Ready { .. }]));
    assert_eq!(net.session.session_id(), Some("s9"), "the redirected initialize's session");
}

#[test]
fn refused_redirects_name_their_status_and_location() {
    let mut net = Net::ready(HttpConfig::new(URL).standalone_stream(false));
    for (status, location, reason) in [
        (301, Some("/a"), RedirectRefusal::Status),
        (302, Some("/b"), RedirectRefusal::Status),
        (303, Some("/c"), RedirectRefusal::Status),
        (300, Some("/d"), RedirectRefusal::Status),
        (307, None, RedirectRefusal::InvalidLocation),
        (308, Some("ftp://x.test/"), RedirectRefusal::InvalidLocation),
    ] {
        let id = net.list_tools();
        let post = net.next();
        redirect(&mut net, &post, status, location);
        let (got, result) = responses(&net.events()).remove(0);
        assert_eq!(got, id);
        let error = result.unwrap_err();
        let expected =
            TransportError::RedirectRefused { status, location: location.unwrap_or("").to_owned(), reason };
        assert_eq!(error, RequestError::Transport(expected), "HTTP {status}");
        assert_eq!(error.http_status(), Some(status));
        let text = error.to_string();
        assert!(text.contains(&status.to_string()) && text.contains(location.unwrap_or("")), "{text}");
        assert!(net.nothing_sent(), "HTTP {status}: not followed");
        assert!(net.aborted.contains(&post.stream()));
    }
    assert_eq!(net.session.connection().status(), Status::Ready);
}

#[test]
fn https_is_never_redirected_to_http() {
    let mut net = Net::ready(HttpConfig::new("https://mcp.test/mcp").standalone_stream(false));
    let id = net.list_tools();
    let post = net.next();
    redirect(&mut net, &post, 308, Some("http://mcp.test/mcp"));
    assert!(net.nothing_sent());
    let (got, result) = responses(&net.events()).remove(0);
    assert_eq!(got, id);
    assert_eq!(
        result.unwrap_err(),
        RequestError::Transport(TransportError::RedirectRefused {
            status: 308,
            location: "http://mcp.test/mcp".into(),
            reason: RedirectRefusal::Downgrade
        })
    );
}

#[test]
fn redirects_are_bounded_and_can_be_turned_off() {
    let mut net = Net::ready(HttpConfig::new(URL).standalone_stream(false).max_redirects(2));
    let id = net.list_tools();
    let mut post = net.next();
    for hop in 1..=2 {
        redirect(&mut net, &post, 307, Some(&format!("/hop{hop}")));
        post = net.next();
        assert_eq!(post.url(), format!("http://127.0.0.1:8931/hop{hop}"));
    }
    redirect(&mut net, &post, 307, Some("/hop3"));
    assert!(net.nothing_sent());
    let (got, result) = responses(&net.events()).remove(0);
    assert_eq!(got, id);
    assert_eq!(
        result.unwrap_err(),
        RequestError::Transport(TransportError::TooManyRedirects { hops: 2, location: "/hop3".into() })
    );

    let mut net = Net::ready(HttpConfig::new(URL).standalone_stream(false).max_redirects(0));
    let id = net.list_tools();
    let post = net.next();
    redirect(&mut net, &post, 307, Some("/elsewhere"));
    assert!(net.nothing_sent());
    let (got, result) = responses(&net.events()).remove(0);
    assert_eq!(got, id);
    assert!(
        matches!(
            result,
            Err(RequestError::Transport(TransportError::RedirectRefused {
                status: 307,
                reason: RedirectRefusal::Disabled,
                ..
            }))
        ),
        "{result:?}"
    );
}

#[test]
fn every_exchange_of_the_session_follows_redirects() {
    // The handshake, the notification and the stream for server-initiated messages.
    let mut net = Net::new(HttpConfig::new(URL));
    let init = net.next();
    redirect(&mut net, &init, 307, Some("/real"));
    let init = net.next();
    assert_eq!((init.url(), method_of(&init).as_str()), ("http://127.0.0.1:8931/real", "initialize"));
    net.head(&init, 200, "application/json", Some("s1"));
    net.body(&init, &init_result("2025-11-25", full_server_capabilities()));
    net.end(&init);
    assert!(matches!(net.events()[..], [Event::Ready { .. }]));
    let notice = net.next();
    let get = net.next();
    assert_eq!(get.method(), HttpMethod::Get);
    redirect(&mut net, &notice, 308, Some("/real"));
    let notice = net.next();
    assert_eq!(method_of(&notice), "notifications/initialized");
    assert_eq!(notice.url(), "http://127.0.0.1:8931/real");
    net.reply(&notice, 202, "", "");
    // Requests wait for the redirected GET's head, as for the first one's.
    redirect(&mut net, &get, 307, Some("/real"));
    let get = net.next();
    assert_eq!((get.method(), get.url()), (HttpMethod::Get, "http://127.0.0.1:8931/real"));
    net.list_tools();
    assert!(net.nothing_sent(), "the request waits for the stream's head");
    net.head(&get, 200, "text/event-stream", None);
    assert_eq!(net.next().url(), URL);
}

#[test]
fn a_401_without_a_challenge_on_the_probe_falls_back_and_one_on_initialize_is_unauthorized() {
    // A legacy server behind a gateway refuses the unknown `server/discover` with a bare 401:
    // no reason to authorize yet. It used to fail the connection as unauthorized.
    let mut net = Net::with_config(HttpConfig::new(URL), modern_config());
    let probe = net.next();
    net.reply(&probe, 401, "text/plain", "Unauthorized");
    let init = net.next();
    assert_eq!(method_of(&init), "initialize");
    net.head(&init, 200, "application/json", Some("s1"));
    net.body(&init, &init_result("2025-11-25", full_server_capabilities()).replace("\"id\":0", "\"id\":1"));
    net.end(&init);
    assert!(matches!(net.events()[..], [Event::Ready { .. }]));

    // The same 401 to `initialize` too: that one is a demand, and no OAuth is configured.
    let mut net = Net::with_config(HttpConfig::new(URL), modern_config());
    let probe = net.next();
    net.reply(&probe, 401, "text/plain", "Unauthorized");
    let init = net.next();
    net.reply(&init, 401, "text/plain", "Unauthorized");
    let events = net.events();
    assert!(
        matches!(
            &events[..],
            [Event::Closed(CloseReason::Unauthorized(mcp_sansio::auth::AuthError::NotConfigured {
                status: 401
            }))]
        ),
        "{events:?}"
    );
}

#[test]
fn a_401_with_a_bearer_challenge_on_the_probe_is_an_authorization_demand() {
    for challenge in [&b"Bearer resource_metadata=\"http://127.0.0.1:8931/prm\""[..], b"DPoP algs=\"ES256\""]
    {
        let mut net = Net::with_config(HttpConfig::new(URL), modern_config());
        let probe = net.next();
        let headers: Vec<(&str, &[u8])> =
            vec![("Content-Type", b"text/plain"), ("WWW-Authenticate", challenge)];
        net.session.handle_response_head(net.now, probe.stream(), 401, headers);
        net.end(&probe);
        let events = net.events();
        assert!(
            matches!(&events[..], [Event::Closed(CloseReason::Unauthorized(_))]),
            "{}: {events:?}",
            String::from_utf8_lossy(challenge)
        );
        assert!(net.nothing_sent(), "no initialize");
    }
}

#[test]
fn an_error_status_whose_body_is_an_error_without_an_id_keeps_the_error() {
    // The exchange carried one request: the server's JSON-RPC error in its body is that
    // request's, even with `id: null` (the guide says `code()` and `server_error()` find it).
    let mut net = Net::with_config(HttpConfig::new(URL), modern_config());
    let probe = net.next();
    net.reply(&probe, 200, "application/json", &discover_json(0));
    net.events();
    let id = net.list_tools();
    let call = net.next();
    let body = r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32001,"message":"Session not found"}}"#;
    net.reply(&call, 404, "application/json", body);
    let events = net.events();
    let error = events
        .iter()
        .find_map(|e| match e {
            Event::Response { id: got, result: Err(error) } if *got == id => Some(error.clone()),
            _ => None,
        })
        .unwrap_or_else(|| panic!("{events:?}"));
    assert_eq!(error.http_status(), Some(404));
    assert_eq!(error.server_error().map(|e| e.code), Some(-32001));
    assert_eq!(error.server_error().map(|e| e.message.as_str()), Some("Session not found"));

    // The probe refused that way is a legacy server: initialize at once; a -32022 that way is
    // the modern refusal it is.
    let mut net = Net::with_config(HttpConfig::new(URL), modern_config());
    let probe = net.next();
    net.reply(
        &probe,
        400,
        "application/json",
        r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}"#,
    );
    assert_eq!(method_of(&net.next()), "initialize");
    let mut net = Net::with_config(HttpConfig::new(URL), modern_config());
    let probe = net.next();
    let refusal = json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32022, "message": "Unsupported",
                         "data": {"supported": ["2026-07-28"]}}});
    net.reply(&probe, 400, "application/json", &refusal.to_string());
    assert_eq!(method_of(&net.next()), "server/discover");
}
