//! Streamable HTTP at the wire level, against the workspace's demo server (`--http`, a child
//! process killed by PID at the end):
//! - [`HttpPeer`] in the `initialize` era (2025-11-25: a session, the GET stream, `DELETE`) and
//!   in 2026-07-28 (stateless, with the `Mcp-Method` / `Mcp-Name` headers it adds itself);
//! - [`RecordingProxy`] in front of the demo server, driven by the real client (`mcp_smol` over
//!   `mcp_hyper`) in both eras, and the trace it writes;
//! - a client that goes away mid-stream closes the proxy's upstream stream.

mod demo;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use demo::DemoHttp;
use mcp_conformance::http_peer::HttpPeer;
use mcp_conformance::peer::Incoming;
use mcp_conformance::record_http::RecordingProxy;
use mcp_conformance::trace::{
    Direction, HttpMeta, Payload, ServerIdentity, Trace, TraceEntry, TraceHeader, TraceWriter, Transport,
};
use mcp_hyper::HyperTransport;
use mcp_sansio::ProtocolVersion;
use mcp_sansio::http::HttpConfig;
use mcp_sansio::schema::{CallToolRequestParams, Implementation};
use mcp_smol::ClientApi;
use mcp_smol::{CallOptions, ClientBuilder};
use serde_json::{Value, json};

const MODERN_META: &str = "io.modelcontextprotocol/protocolVersion";
const CAPABILITIES_META: &str = "io.modelcontextprotocol/clientCapabilities";

/// The session ids the demo server reported opening so far.
fn sessions(demo: &DemoHttp) -> Vec<String> {
    demo.stderr()
        .lines()
        .filter_map(|line| line.strip_prefix("demo-server: session ")?.split_once(" opened"))
        .map(|(id, _)| id.to_owned())
        .collect()
}

/// The session ids, once the server reported at least `count` (waiting at most 5 s: its stderr
/// is read by another thread).
fn sessions_at_least(demo: &DemoHttp, count: usize) -> Vec<String> {
    let start = Instant::now();
    loop {
        let found = sessions(demo);
        if found.len() >= count || start.elapsed() > Duration::from_secs(5) {
            return found;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// The next thing that arrives, within 10 s.
async fn next(incoming: &async_channel::Receiver<Incoming>) -> Incoming {
    futures_lite::future::or(async { incoming.recv().await.ok() }, async {
        async_io::Timer::after(Duration::from_secs(10)).await;
        None
    })
    .await
    .expect("something within 10 s")
}

/// Nothing arrives within `wait`.
async fn quiet(incoming: &async_channel::Receiver<Incoming>, wait: Duration) {
    let got = futures_lite::future::or(async { incoming.recv().await.ok() }, async {
        async_io::Timer::after(wait).await;
        None
    })
    .await;
    assert!(got.is_none(), "unexpected {got:?}");
}

/// The next message, parsed, with its exchange.
async fn message(incoming: &async_channel::Receiver<Incoming>) -> (Value, HttpMeta) {
    match next(incoming).await {
        Incoming::Message { bytes, http: Some(meta) } => {
            let value = serde_json::from_slice(&bytes)
                .unwrap_or_else(|e| panic!("not JSON ({e}): {}", String::from_utf8_lossy(&bytes)));
            (value, meta)
        }
        other => panic!("expected a message, got {other:?}"),
    }
}

fn meta(method: &str, exchange: u64, status: u16, content_type: Option<&str>) -> HttpMeta {
    HttpMeta {
        method: method.to_owned(),
        exchange,
        status: Some(status),
        content_type: content_type.map(str::to_owned),
        headers: Vec::new(),
    }
}

const JSON: Option<&str> = Some("application/json");
const SSE: Option<&str> = Some("text/event-stream");

fn request(id: u64, method: &str, params: Value) -> Vec<u8> {
    serde_json::to_vec(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})).unwrap()
}

fn initialize(id: u64) -> Vec<u8> {
    request(
        id,
        "initialize",
        json!({
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "http-wire", "version": "0.0.0"},
        }),
    )
}

fn text_of(result: &Value) -> &str {
    result.pointer("/result/content/0/text").and_then(Value::as_str).unwrap_or_default()
}

#[test]
fn http_peer_speaks_the_initialize_era() {
    let demo = DemoHttp::start();
    smol::block_on(async {
        let mut peer = HttpPeer::new(&demo.url, Vec::new()).unwrap();
        let incoming = peer.incoming();

        // initialize: a JSON response, which gives the session and the version.
        peer.send(&initialize(1), &[]).await.unwrap();
        let (init, http) = message(&incoming).await;
        assert_eq!(http, meta("POST", 1, 200, JSON));
        assert_eq!(init["id"], 1);
        assert_eq!(init["result"]["protocolVersion"], "2025-11-25");
        assert_eq!(init["result"]["serverInfo"]["name"], "mcp-demo-server");
        let session = peer.session_id().expect("a session id");
        assert_eq!(sessions_at_least(&demo, 1), std::slice::from_ref(&session));
        assert_eq!(peer.protocol_version().as_deref(), Some("2025-11-25"));

        // A notification: 202 without a body.
        peer.send(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#, &[]).await.unwrap();
        match next(&incoming).await {
            Incoming::Empty(http) => assert_eq!(http, meta("POST", 2, 202, None)),
            other => panic!("expected a 202, got {other:?}"),
        }

        peer.send(&request(2, "tools/list", json!({})), &[]).await.unwrap();
        let (list, http) = message(&incoming).await;
        assert_eq!(http, meta("POST", 3, 200, JSON));
        let tools = list["result"]["tools"].as_array().expect("tools");
        assert!(tools.iter().any(|tool| tool["name"] == "echo"), "{list}");

        peer.send(&request(3, "tools/call", json!({"name": "echo", "arguments": {"message": "hi"}})), &[])
            .await
            .unwrap();
        let (echo, http) = message(&incoming).await;
        assert_eq!((echo["id"].clone(), text_of(&echo), http), (json!(3), "hi", meta("POST", 4, 200, JSON)));

        // Progress makes the response an event stream: one message per event, same exchange.
        let params = json!({"name": "long_running", "arguments": {"steps": 2, "step_ms": 5}, "_meta": {"progressToken": "p"}});
        peer.send(&request(4, "tools/call", params), &[]).await.unwrap();
        for progress in [1, 2] {
            let (note, http) = message(&incoming).await;
            assert_eq!(http, meta("POST", 5, 200, SSE));
            assert_eq!(note["method"], "notifications/progress", "{note}");
            assert_eq!(note["params"]["progress"], progress, "{note}");
        }
        let (done, http) = message(&incoming).await;
        assert_eq!((done["id"].clone(), http), (json!(4), meta("POST", 5, 200, SSE)));
        assert!(done["result"].is_object(), "{done}");

        // An unknown method: a JSON-RPC error, status 200 in a session.
        peer.send(&request(5, "no/such_method", json!({})), &[]).await.unwrap();
        let (unknown, http) = message(&incoming).await;
        assert_eq!((unknown["id"].clone(), unknown["error"]["code"].clone()), (json!(5), json!(-32601)));
        assert_eq!(http, meta("POST", 6, 200, JSON));

        // Malformed JSON: 400 with a parse error (id null).
        peer.send(br#"{"jsonrpc": "2.0", "id": 6, "method""#, &[]).await.unwrap();
        let (parse, http) = message(&incoming).await;
        assert_eq!(http, meta("POST", 7, 400, JSON));
        assert_eq!((parse["id"].clone(), parse["error"]["code"].clone()), (Value::Null, json!(-32700)));

        // An id without a method is taken for a response (to no request of the server's): 202.
        peer.send(br#"{"jsonrpc":"2.0","id":7}"#, &[]).await.unwrap();
        match next(&incoming).await {
            Incoming::Empty(http) => assert_eq!(http, meta("POST", 8, 202, None)),
            other => panic!("expected a 202, got {other:?}"),
        }

        // The standalone GET stream opens (nothing arrives on it yet) ...
        peer.open_stream().await.unwrap();
        quiet(&incoming, Duration::from_millis(300)).await;
        assert_eq!(peer.exchanges(), 9);

        // ... and shutting down closes it, then sends DELETE (200, no body).
        peer.shutdown().await;
        match next(&incoming).await {
            Incoming::Empty(http) => assert_eq!(http, meta("DELETE", 10, 200, None)),
            other => panic!("expected the answer to DELETE, got {other:?}"),
        }
        quiet(&incoming, Duration::from_millis(200)).await;

        // The session is gone.
        let headers = vec![("Mcp-Session-Id".to_owned(), session)];
        let mut late = HttpPeer::new(&demo.url, headers).unwrap();
        let incoming = late.incoming();
        late.send(&request(8, "tools/list", json!({})), &[]).await.unwrap();
        let (gone, http) = message(&incoming).await;
        assert_eq!(http, meta("POST", 1, 404, JSON));
        assert_eq!(gone["error"]["code"], -32001, "{gone}");
        late.shutdown().await;
    });
}

/// The `_meta` of a 2026-07-28 request.
fn modern_meta() -> Value {
    json!({MODERN_META: "2026-07-28", CAPABILITIES_META: {}})
}

#[test]
fn http_peer_speaks_2026_07_28_with_its_headers() {
    let demo = DemoHttp::start();
    smol::block_on(async {
        let mut peer = HttpPeer::new(&demo.url, Vec::new()).unwrap();
        let incoming = peer.incoming();

        peer.send(&request(1, "server/discover", json!({"_meta": modern_meta()})), &[]).await.unwrap();
        let (discover, http) = message(&incoming).await;
        assert_eq!(http, meta("POST", 1, 200, JSON));
        let versions = discover["result"]["supportedVersions"].as_array().expect("versions");
        assert!(versions.contains(&json!("2026-07-28")), "{discover}");
        assert_eq!((peer.session_id(), peer.protocol_version()), (None, None), "stateless");

        // Mcp-Method and Mcp-Name come from the body.
        let call = json!({"name": "echo", "arguments": {"message": "modern"}, "_meta": modern_meta()});
        peer.send(&request(2, "tools/call", call.clone()), &[]).await.unwrap();
        let (echo, http) = message(&incoming).await;
        assert_eq!((text_of(&echo), http), ("modern", meta("POST", 2, 200, JSON)));

        peer.send(
            &request(3, "resources/read", json!({"uri": "demo://readme", "_meta": modern_meta()})),
            &[],
        )
        .await
        .unwrap();
        let (read, http) = message(&incoming).await;
        assert_eq!(http.status, Some(200));
        assert_eq!(read["result"]["contents"][0]["uri"], "demo://readme", "{read}");

        // Headers the caller gives win: a wrong Mcp-Name is refused as a mismatch.
        let wrong = [("Mcp-Name".to_owned(), "add".to_owned())];
        peer.send(&request(4, "tools/call", call), &wrong).await.unwrap();
        let (mismatch, http) = message(&incoming).await;
        assert_eq!(http, meta("POST", 4, 400, JSON));
        assert_eq!(mismatch["error"]["code"], -32020, "{mismatch}");

        // Mcp-Param-* headers are the caller's to give (here a non-ASCII value, Base64-wrapped).
        let weather =
            json!({"name": "weather", "arguments": {"region": "Zürich", "days": 2}, "_meta": modern_meta()});
        let params = [
            ("Mcp-Param-Region".to_owned(), "=?base64?WsO8cmljaA==?=".to_owned()),
            ("Mcp-Param-Days".to_owned(), "2".to_owned()),
        ];
        peer.send(&request(5, "tools/call", weather), &params).await.unwrap();
        let (forecast, http) = message(&incoming).await;
        assert_eq!(http.status, Some(200), "{forecast}");
        assert_eq!(text_of(&forecast), "forecast for Zürich: 2 days, metric=true");

        // An unknown method is 404 in this era.
        peer.send(&request(6, "no/such_method", json!({"_meta": modern_meta()})), &[]).await.unwrap();
        let (unknown, http) = message(&incoming).await;
        assert_eq!((unknown["error"]["code"].clone(), http), (json!(-32601), meta("POST", 6, 404, JSON)));

        // A modern notification: 202.
        let note = json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 99, "_meta": modern_meta()}});
        peer.send(&serde_json::to_vec(&note).unwrap(), &[]).await.unwrap();
        match next(&incoming).await {
            Incoming::Empty(http) => assert_eq!(http, meta("POST", 7, 202, None)),
            other => panic!("expected a 202, got {other:?}"),
        }

        // No session: shutting down sends nothing.
        peer.shutdown().await;
        quiet(&incoming, Duration::from_millis(200)).await;
        assert!(sessions(&demo).is_empty());
    });
}

#[test]
fn a_connection_failure_is_closed() {
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    smol::block_on(async {
        let mut peer = HttpPeer::new(&format!("http://127.0.0.1:{port}/mcp"), Vec::new()).unwrap();
        let incoming = peer.incoming();
        peer.send(&initialize(1), &[]).await.unwrap();
        assert!(matches!(next(&incoming).await, Incoming::Closed(reason) if reason.contains("exchange 1")));
        peer.shutdown().await;
    });
    assert!(HttpPeer::new("ftp://example.com/mcp", Vec::new()).is_err());
}

static TRACES: AtomicUsize = AtomicUsize::new(0);

/// Runs the real client through a recording proxy in front of a fresh demo server; returns the
/// trace, its text and the demo server's session ids (once it reported `sessions` of them).
fn record(versions: &[ProtocolVersion], sessions: usize) -> (Trace, String, Vec<String>) {
    let demo = DemoHttp::start();
    let path = std::env::temp_dir().join(format!(
        "mcp-http-wire-{}-{}.jsonl",
        std::process::id(),
        TRACES.fetch_add(1, Ordering::Relaxed)
    ));
    let identity = ServerIdentity { url: Some(demo.url.clone()), ..Default::default() };
    let header = TraceHeader::new(Transport::Http, identity, "http_wire test");
    let writer = Arc::new(Mutex::new(TraceWriter::create(&path, header).unwrap()));
    smol::block_on(async {
        let listen = "127.0.0.1:0".parse().unwrap();
        let proxy = RecordingProxy::start(listen, demo.url.clone(), Arc::clone(&writer)).await.unwrap();
        assert!(proxy.url().starts_with("http://127.0.0.1:") && proxy.url().ends_with("/mcp"));
        let client = ClientBuilder::new(Implementation::new("http-wire", "0.0.0"))
            .configure(|c| c.with_versions(versions))
            .era_cache(None)
            .spawn_http(HttpConfig::new(proxy.url()), HyperTransport::new())
            .await
            .expect("connect through the proxy");
        let tools = client.list_all_tools().await.unwrap();
        assert!(tools.iter().any(|tool| tool.name == "long_running"));
        let echo = client.call_tool("echo", json!({"message": "through the proxy"})).await.unwrap();
        assert_eq!(echo.content[0].as_text(), Some("through the proxy"));
        let seen = Arc::new(Mutex::new(0));
        let sink = Arc::clone(&seen);
        let params = CallToolRequestParams::new("long_running")
            .with_arguments(json!({"steps": 3, "step_ms": 5}).as_object().unwrap().clone());
        let options = CallOptions::default().on_progress(move |_| *sink.lock().unwrap() += 1);
        client.call_tool_with(&params, options).await.unwrap();
        assert_eq!(*seen.lock().unwrap(), 3);
        client.close().await;
        assert!(proxy.take_write_error().is_none());
        proxy.stop().await;
    });
    assert_eq!(Arc::strong_count(&writer), 1, "the proxy let go of the writer");
    writer.lock().unwrap().finish().unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    let trace = Trace::read(&path).unwrap();
    let _ = std::fs::remove_file(&path);
    (trace, text, sessions_at_least(&demo, sessions))
}

fn method_of(entry: &TraceEntry) -> Option<String> {
    entry.value()?.get("method")?.as_str().map(str::to_owned)
}

fn http(entry: &TraceEntry) -> &HttpMeta {
    entry.http.as_ref().expect("HTTP entries")
}

/// What every HTTP trace must hold: exchanges numbered in order, each opened by one client
/// entry and answered by at least one server entry that comes after it; no session id or
/// credential anywhere.
fn check_exchanges(trace: &Trace, text: &str, sessions: &[String]) {
    let mut opened = 0;
    let mut answered = std::collections::BTreeSet::new();
    for entry in &trace.entries {
        let http = http(entry);
        match entry.dir {
            Direction::Client => {
                assert_eq!(http.exchange, opened + 1, "exchanges open in order: {entry:?}");
                opened = http.exchange;
                assert_eq!((http.status.as_ref(), http.content_type.as_ref()), (None, None));
                if http.method != "POST" {
                    assert_eq!(entry.payload, Payload::None);
                }
            }
            Direction::Server => {
                assert!(http.exchange <= opened, "a response before its request: {entry:?}");
                assert!(http.status.is_some(), "{entry:?}");
                answered.insert(http.exchange);
            }
        }
    }
    assert_eq!(answered.len() as u64, opened, "every exchange has a server entry");
    assert!(!text.to_ascii_lowercase().contains("mcp-session-id"), "{text}");
    assert!(!sessions.is_empty() || trace.header.protocol_version.as_deref() != Some("2025-11-25"));
    for session in sessions {
        assert!(!text.contains(session.as_str()), "the session id {session} leaked: {text}");
    }
}

/// The server entries of the exchange of the client request `method`.
fn answers<'a>(trace: &'a Trace, method: &str) -> (&'a TraceEntry, Vec<&'a TraceEntry>) {
    let request = trace
        .entries
        .iter()
        .find(|e| e.dir == Direction::Client && method_of(e).as_deref() == Some(method))
        .unwrap_or_else(|| panic!("no {method} in the trace"));
    let exchange = http(request).exchange;
    let answers =
        trace.entries.iter().filter(|e| e.dir == Direction::Server && http(e).exchange == exchange).collect();
    (request, answers)
}

#[test]
fn the_proxy_records_the_initialize_era() {
    let (trace, text, sessions) = record(&[ProtocolVersion::V2025_11_25], 1);
    assert_eq!(sessions.len(), 1, "one session");
    assert_eq!(trace.header.transport, Transport::Http);
    assert_eq!(trace.header.protocol_version.as_deref(), Some("2025-11-25"));
    assert_eq!(trace.header.server.name.as_deref(), Some("mcp-demo-server"));
    check_exchanges(&trace, &text, &sessions);

    // initialize opens the recording: exchange 1, its JSON answer right after.
    let first = &trace.entries[0];
    assert_eq!(
        (first.dir, method_of(first).as_deref(), http(first).exchange),
        (Direction::Client, Some("initialize"), 1)
    );
    let second = &trace.entries[1];
    assert_eq!(second.dir, Direction::Server);
    assert_eq!(http(second), &meta("POST", 1, 200, JSON));
    assert!(second.value().unwrap()["result"]["protocolVersion"] == "2025-11-25");

    // notifications/initialized: 202, no message.
    let (note, answer) = answers(&trace, "notifications/initialized");
    assert_eq!(answer.len(), 1);
    assert_eq!((answer[0].payload.clone(), http(answer[0]).status), (Payload::None, Some(202)));
    let version = ("mcp-protocol-version".to_owned(), "2025-11-25".to_owned());
    assert_eq!(http(note).headers, std::slice::from_ref(&version));

    // tools/list, then tools/call: request and response, in order.
    let (list, answer) = answers(&trace, "tools/list");
    assert_eq!(http(list).headers, [version]);
    assert_eq!(answer.len(), 1);
    assert_eq!(answer[0].value().unwrap()["id"], list.value().unwrap()["id"]);
    let calls: Vec<&TraceEntry> = trace
        .entries
        .iter()
        .filter(|e| e.dir == Direction::Client && method_of(e).as_deref() == Some("tools/call"))
        .collect();
    assert_eq!(calls.len(), 2);
    let progress_call = calls[1];
    assert_eq!(progress_call.value().unwrap()["params"]["name"], "long_running");
    let exchange = http(progress_call).exchange;
    let streamed: Vec<&TraceEntry> =
        trace.entries.iter().filter(|e| e.dir == Direction::Server && http(e).exchange == exchange).collect();
    let methods: Vec<Option<String>> = streamed.iter().map(|e| method_of(e)).collect();
    let progress = Some("notifications/progress".to_owned());
    assert_eq!(methods, [progress.clone(), progress.clone(), progress, None], "{streamed:?}");
    assert!(streamed.iter().all(|e| http(e) == &meta("POST", exchange, 200, SSE)));
    assert_eq!(streamed[3].value().unwrap()["id"], progress_call.value().unwrap()["id"]);

    // The client's standalone GET stream and the DELETE that ends the session.
    let gets: Vec<&TraceEntry> = trace.entries.iter().filter(|e| http(e).method == "GET").collect();
    assert!(gets.iter().any(|e| e.dir == Direction::Client), "{text}");
    let deletes: Vec<&TraceEntry> = trace.entries.iter().filter(|e| http(e).method == "DELETE").collect();
    assert_eq!(deletes.len(), 2, "{text}");
    assert_eq!((deletes[0].dir, deletes[1].dir), (Direction::Client, Direction::Server));
    assert_eq!(http(deletes[1]).status, Some(200));
}

#[test]
fn the_proxy_records_2026_07_28() {
    let (trace, text, sessions) = record(ProtocolVersion::DUAL_ERA, 0);
    assert!(sessions.is_empty(), "stateless: {sessions:?}");
    assert_eq!(trace.header.protocol_version.as_deref(), Some("2026-07-28"));
    check_exchanges(&trace, &text, &sessions);
    assert!(trace.entries.iter().all(|e| http(e).method == "POST"), "{text}");

    // The request headers mirror the body.
    let (call, answer) = answers(&trace, "tools/call");
    let headers = &http(call).headers;
    for (name, value) in
        [("mcp-protocol-version", "2026-07-28"), ("mcp-method", "tools/call"), ("mcp-name", "echo")]
    {
        assert!(headers.contains(&(name.to_owned(), value.to_owned())), "{name} in {headers:?}");
    }
    assert_eq!(answer.len(), 1);
    assert_eq!(http(answer[0]), &meta("POST", http(call).exchange, 200, JSON));
}

#[test]
fn a_client_leaving_mid_stream_closes_the_upstream_stream() {
    let demo = DemoHttp::start();
    let path = std::env::temp_dir().join(format!("mcp-http-wire-{}-leave.jsonl", std::process::id()));
    let header = TraceHeader::new(Transport::Http, ServerIdentity::default(), "http_wire test");
    let writer = Arc::new(Mutex::new(TraceWriter::create(&path, header).unwrap()));
    smol::block_on(async {
        let proxy =
            RecordingProxy::start("127.0.0.1:0".parse().unwrap(), demo.url.clone(), Arc::clone(&writer))
                .await
                .unwrap();
        let mut first = HttpPeer::new(&proxy.url(), Vec::new()).unwrap();
        let incoming = first.incoming();
        first.send(&initialize(1), &[]).await.unwrap();
        message(&incoming).await;
        let session = first.session_id().expect("the session id passes through the proxy");
        first.open_stream().await.unwrap();

        // While the first GET stream is open, a second one is refused ...
        let get_again = async |expected: u16| -> bool {
            let headers = vec![("Mcp-Session-Id".to_owned(), session.clone())];
            let mut other = HttpPeer::new(&proxy.url(), headers).unwrap();
            let incoming = other.incoming();
            other.open_stream().await.unwrap();
            let got = futures_lite::future::or(async { incoming.recv().await.ok() }, async {
                async_io::Timer::after(Duration::from_secs(1)).await;
                None
            })
            .await;
            match got {
                Some(Incoming::Message { http: Some(http), .. }) => http.status == Some(expected),
                // An open stream sends nothing.
                None => expected == 200,
                _ => false,
            }
        };
        assert!(get_again(409).await, "a second GET stream is refused while the first is open");

        // ... and once its client goes away (dropped, no DELETE), the proxy closes the upstream
        // stream, so the server accepts a new one.
        drop(first);
        let start = Instant::now();
        while !get_again(200).await {
            assert!(start.elapsed() < Duration::from_secs(5), "the upstream GET stream stayed open");
        }
        assert!(proxy.take_write_error().is_none());
        proxy.stop().await;
    });
    assert_eq!(Arc::strong_count(&writer), 1, "the proxy let go of the writer");
    writer.lock().unwrap().finish().unwrap();
    let trace = Trace::read(&path).unwrap();
    let _ = std::fs::remove_file(&path);
    // The stream that was cut short still has its server entry (no message on it); the refused
    // one has its error.
    let gets: Vec<&TraceEntry> =
        trace.entries.iter().filter(|e| e.dir == Direction::Server && http(e).method == "GET").collect();
    assert!(gets.iter().any(|e| e.payload == Payload::None && http(e).status == Some(200)), "{gets:?}");
    assert!(gets.iter().any(|e| e.value().is_some() && http(e).status == Some(409)), "{gets:?}");
}
