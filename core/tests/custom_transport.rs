//! A transport written outside the crate, on the connection's public API only: proof that the
//! seam `HttpSession` uses is open to anyone (a WebSocket layer, an in-memory pair, an
//! application's own HTTP stack).
//!
//! `Pipe` below is a message-oriented in-memory transport with one channel per request, the
//! shape of Streamable HTTP without the HTTP: it reads what each transmit *is* from
//! [`Transmit::kind`] (never parsing the bytes), answers a cancellation by dropping the
//! request's channel instead of sending anything, reports what it loses with
//! [`ClientConnection::handle_transport`], and lends the application
//! [`ClientConnection::commands`] that refuse notifications it cannot carry.
#![allow(clippy::unwrap_used)]

mod common;

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use common::{epoch, result_line};
use mcp_sansio::schema::{CallTool, CallToolRequestParams, Implementation};
use mcp_sansio::{
    ClientConfig, ClientConnection, CloseReason, Event, ProtocolVersion, ProtocolViolation, RequestError,
    RequestId, RequestOptions, TransmitKind, TransportError, TransportEvent, UsageError,
};
use serde_json::{Value, json};

/// One request's channel, as the server sees it.
#[derive(Debug, Clone)]
struct Channel {
    /// The id the message carried.
    wire: RequestId,
    /// The id the application knows the request by.
    call: RequestId,
    method: String,
    /// The routing name the transport would put in a header.
    name: Option<String>,
    arguments: Option<Value>,
    body: Value,
}

/// The in-memory transport: the connection on one side, open channels on the other.
struct Pipe {
    conn: ClientConnection,
    now: Instant,
    open: BTreeMap<String, Channel>,
    /// Channels dropped because the request was cancelled (no message is sent for them).
    dropped: Vec<RequestId>,
}

impl Pipe {
    fn new(versions: &[ProtocolVersion]) -> Self {
        let now = epoch();
        let config = ClientConfig::new(Implementation::new("pipe-client", "1.0.0")).with_versions(versions);
        Self { conn: ClientConnection::new(config, now), now, open: BTreeMap::new(), dropped: Vec::new() }
    }

    /// Moves the connection's transmits onto channels, by what they are.
    fn pump(&mut self) {
        while let Some(transmit) = self.conn.poll_transmit() {
            let body: Value = serde_json::from_slice(transmit.message()).unwrap();
            match transmit.kind() {
                TransmitKind::Request(request) => {
                    let channel = Channel {
                        wire: request.id(),
                        call: request.call_id(),
                        method: request.method().to_owned(),
                        name: request.name().map(str::to_owned),
                        arguments: request.tool_arguments().map(|a| serde_json::from_str(a.get()).unwrap()),
                        body,
                    };
                    self.open.insert(request.id().to_string(), channel);
                }
                TransmitKind::Cancellation { id } => {
                    // One channel per request: closing it is the cancellation.
                    self.open.remove(&id.to_string());
                    self.dropped.push(id.clone());
                }
                TransmitKind::Notification { method } => {
                    assert_eq!(method, "notifications/initialized", "{body}");
                }
                other => panic!("unexpected transmit {other:?}"),
            }
        }
    }

    /// Takes the open channel of the request with `method`.
    fn take(&mut self, method: &str) -> Channel {
        self.pump();
        let key = self.open.iter().find(|(_, c)| c.method == method).map(|(k, _)| k.clone());
        self.open.remove(&key.unwrap_or_else(|| panic!("no open {method} in {:?}", self.open))).unwrap()
    }

    /// The server answers on the request's channel.
    fn answer(&mut self, channel: &Channel, result: Value) {
        let wire = serde_json::to_value(&channel.wire).unwrap();
        self.conn.feed_message(self.now, result_line(wire, result).as_bytes());
    }

    fn events(&mut self) -> Vec<Event> {
        self.pump();
        std::iter::from_fn(|| self.conn.poll_event()).collect()
    }

    fn ready_legacy() -> Self {
        let mut pipe = Pipe::new(&[ProtocolVersion::V2025_11_25]);
        let init = pipe.take("initialize");
        pipe.answer(
            &init,
            json!({"protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
                                  "serverInfo": {"name": "pipe-server", "version": "1"}}),
        );
        assert!(matches!(pipe.events()[..], [Event::Ready { .. }]));
        pipe
    }

    fn ready_modern() -> Self {
        let mut pipe = Pipe::new(&[ProtocolVersion::V2026_07_28]);
        let discover = pipe.take("server/discover");
        assert_eq!(pipe.conn.wire_version(), Some(ProtocolVersion::V2026_07_28), "the probe's version");
        pipe.answer(
            &discover,
            json!({"resultType": "complete", "supportedVersions": ["2026-07-28"],
                                      "capabilities": {"tools": {}}, "ttlMs": 0, "cacheScope": "private",
                                      "serverInfo": {"name": "pipe-server", "version": "1"}}),
        );
        assert!(matches!(pipe.events()[..], [Event::Ready { .. }]));
        pipe
    }

    fn call(&mut self, name: &str, arguments: Value) -> RequestId {
        let mut params = CallToolRequestParams::new(name);
        params.arguments = serde_json::from_value(arguments).unwrap();
        self.conn.send::<CallTool>(self.now, &params, RequestOptions::default()).unwrap()
    }
}

fn response(events: &[Event]) -> (&RequestId, &Result<mcp_sansio::RawResult, RequestError>) {
    match events {
        [Event::Response { id, result }] => (id, result),
        other => panic!("expected one response, got {other:?}"),
    }
}

#[test]
fn a_request_travels_with_its_method_name_and_arguments_beside_the_bytes() {
    let mut pipe = Pipe::ready_modern();
    let id = pipe.call("get_weather", json!({"city": "Zürich"}));
    let channel = pipe.take("tools/call");
    assert_eq!((&channel.wire, &channel.call), (&id, &id));
    assert_eq!(channel.name.as_deref(), Some("get_weather"));
    assert_eq!(channel.arguments, Some(json!({"city": "Zürich"})));
    // What the kind says is what the bytes say.
    assert_eq!(channel.body["params"]["name"], "get_weather");
    assert!(pipe.conn.awaits(&id));
    pipe.answer(&channel, json!({"content": []}));
    let events = pipe.events();
    let (got, result) = response(&events);
    assert_eq!(got, &id);
    assert!(result.is_ok());
    assert!(!pipe.conn.awaits(&id));
}

#[test]
fn a_lost_response_resends_a_modern_request_under_a_new_id_a_bounded_number_of_times() {
    let mut pipe = Pipe::ready_modern();
    let id = pipe.call("slow", json!({}));
    let mut channel = pipe.take("tools/call");
    let mut wires = vec![channel.wire.clone()];
    for _ in 0..2 {
        let lost = TransportEvent::ResponseLost {
            id: channel.wire.clone(),
            error: RequestError::Transport("channel reset".into()),
        };
        pipe.conn.handle_transport(pipe.now, lost);
        assert!(pipe.events().is_empty(), "sent again, not failed");
        channel = pipe.take("tools/call");
        assert_eq!(channel.call, id, "the application's id stays");
        assert!(!wires.contains(&channel.wire), "a fresh wire id each time");
        assert_eq!(channel.name.as_deref(), Some("slow"), "and the same routing");
        assert!(!pipe.conn.awaits(&wires[wires.len() - 1]), "the old id is no longer awaited");
        wires.push(channel.wire.clone());
    }
    // The third loss is one too many.
    let lost = TransportEvent::ResponseLost {
        id: channel.wire.clone(),
        error: RequestError::Transport("reset".into()),
    };
    pipe.conn.handle_transport(pipe.now, lost);
    let events = pipe.events();
    let (got, result) = response(&events);
    assert_eq!(got, &id);
    assert!(
        matches!(result, Err(RequestError::Transport(why)) if *why == TransportError::Io("reset".into())),
        "{result:?}"
    );
    assert!(pipe.open.is_empty());
}

#[test]
fn a_legacy_request_is_not_resent_and_fails_with_the_transports_error() {
    let mut pipe = Pipe::ready_legacy();
    let id = pipe.call("echo", json!({}));
    let channel = pipe.take("tools/call");
    assert_eq!(channel.name, None, "routing names are a 2026-07-28 matter");
    let lost =
        TransportEvent::ResponseLost { id: channel.wire, error: RequestError::Transport("gone".into()) };
    pipe.conn.handle_transport(pipe.now, lost);
    let events = pipe.events();
    assert!(matches!(response(&events), (got, Err(RequestError::Transport(_))) if *got == id));
    assert_eq!(pipe.conn.stats().requests_failed, 1);
}

#[test]
fn a_failed_request_an_oversized_message_and_a_dead_transport() {
    let mut pipe = Pipe::ready_legacy();
    let first = pipe.call("a", json!({}));
    let second = pipe.call("b", json!({}));
    pipe.pump();
    let failed = TransportEvent::RequestFailed {
        id: first.clone(),
        error: RequestError::HttpStatus { status: 503, body: "busy".into(), error: None },
    };
    pipe.conn.handle_transport(pipe.now, failed);
    let events = pipe.events();
    assert!(
        matches!(response(&events), (got, Err(RequestError::HttpStatus { status: 503, .. })) if *got == first)
    );
    // Reports about ids that are not awaited change nothing.
    let again =
        TransportEvent::RequestFailed { id: first.clone(), error: RequestError::Transport("x".into()) };
    pipe.conn.handle_transport(pipe.now, again);
    assert!(pipe.events().is_empty());

    pipe.conn.handle_transport(pipe.now, TransportEvent::Oversized { len: 1 << 30 });
    let events = pipe.events();
    assert!(matches!(
        events[..],
        [Event::ProtocolViolation(ProtocolViolation::Oversized { len: 1073741824, id: None, .. })]
    ));
    assert_eq!(pipe.conn.stats().oversized_messages, 1);

    pipe.conn.handle_transport(pipe.now, TransportEvent::Closed { detail: "the pipe broke".into() });
    let events = pipe.events();
    assert!(
        matches!(&events[..], [Event::Response { id, result: Err(RequestError::ConnectionClosed(CloseReason::Transport(_))) }, Event::Closed(CloseReason::Transport(why))] if *id == second && why == "the pipe broke"),
        "{events:?}"
    );
}

#[test]
fn a_cancelled_request_closes_its_channel_and_the_commands_refuse_what_the_pipe_cannot_carry() {
    let mut pipe = Pipe::ready_legacy();
    let id = pipe.call("slow", json!({}));
    let channel = pipe.take("tools/call");
    pipe.open.insert(channel.wire.to_string(), channel);
    pipe.conn.commands().cancel(&id, Some("changed my mind")).unwrap();
    let events = pipe.events();
    assert!(matches!(response(&events), (got, Err(RequestError::Cancelled(_))) if *got == id));
    assert_eq!(pipe.dropped, [id]);
    assert!(pipe.open.is_empty());

    let refused = pipe.conn.commands().refuse_notifications("the pipe").notify("notifications/custom", None);
    assert_eq!(
        refused,
        Err(UsageError::TransportCannotCarry { what: "notifications/custom".into(), transport: "the pipe" })
    );
    pipe.pump();
    // The connection's own checks come first.
    let refused =
        pipe.conn.commands().refuse_notifications("the pipe").notify("notifications/initialized", None);
    assert!(matches!(refused, Err(UsageError::ReservedMethod(_))));
}

#[test]
fn time_can_stand_still_or_step_back_without_harm() {
    let mut pipe = Pipe::ready_legacy();
    let options = RequestOptions::default().timeout(Duration::from_secs(10));
    let id = pipe.conn.send::<CallTool>(pipe.now, &CallToolRequestParams::new("t"), options).unwrap();
    pipe.pump();
    let deadline = pipe.conn.poll_timeout().unwrap();
    // A clock that went back: nothing is due, nothing breaks.
    pipe.conn.handle_timeout(pipe.now - Duration::from_secs(5));
    pipe.conn.handle_timeout(pipe.now);
    assert!(pipe.events().is_empty());
    assert_eq!(pipe.conn.poll_timeout(), Some(deadline));
    pipe.conn.handle_timeout(deadline);
    let events = pipe.events();
    assert!(matches!(response(&events), (got, Err(RequestError::Timeout(_))) if *got == id));
}
