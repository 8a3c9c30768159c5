//! `HyperTransport` against a real HTTP/1.1 server on 127.0.0.1: requests arrive intact,
//! connections are reused only when they should be, bodies stream, failures are prompt.

mod server;

use std::future::Future;
use std::io;
use std::time::{Duration, Instant};

use async_io::Timer;
use futures_lite::StreamExt;
use mcp_hyper::HyperTransport;
use mcp_sansio::ClientConfig;
use mcp_sansio::http::{HttpAction, HttpConfig, HttpRequest, HttpSession};
use mcp_sansio::schema::Implementation;
use mcp_smol::{HttpResponse, HttpTransport};
use server::TestServer;

/// The longest any step may take: a hang fails the test instead of blocking it.
const LIMIT: Duration = Duration::from_secs(2);

/// Runs `future`, failing if it takes longer than [`LIMIT`].
async fn within<T>(future: impl Future<Output = T>) -> T {
    futures_lite::future::or(async { Some(future.await) }, async {
        Timer::after(LIMIT).await;
        None
    })
    .await
    .expect("timed out")
}

/// A request as the session builds them: its first one, the `initialize` POST to `url`, with
/// `headers` added.
fn request(url: &str, headers: &[(&str, &str)]) -> HttpRequest {
    let mut http = HttpConfig::new(url);
    for (name, value) in headers {
        http = http.header(*name, *value);
    }
    let now = Instant::now();
    let mut session =
        HttpSession::new(http, ClientConfig::new(Implementation::new("mcp-hyper-test", "0.0.0")), now);
    match session.poll_action(now) {
        Some(HttpAction::Send(request)) => request,
        other => panic!("expected a request, got {other:?}"),
    }
}

/// The whole body, chunk by chunk.
async fn chunks(response: &mut HttpResponse) -> Vec<Vec<u8>> {
    let mut chunks = Vec::new();
    while let Some(chunk) = response.body.next().await {
        chunks.push(chunk.expect("body chunk").to_vec());
    }
    chunks
}

async fn body(response: &mut HttpResponse) -> Vec<u8> {
    chunks(response).await.concat()
}

async fn send(transport: &HyperTransport, url: &str) -> io::Result<HttpResponse> {
    within(transport.send(request(url, &[]))).await
}

fn header<'r>(response: &'r HttpResponse, name: &str) -> Option<&'r [u8]> {
    response.headers.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_slice())
}

#[test]
fn post_with_headers_and_body_arrives_intact() {
    smol::block_on(async {
        let server = TestServer::start();
        let transport = HyperTransport::new();
        let req = request(
            &server.url("/echo"),
            &[("X-Custom", "custom value"), ("Authorization", "Bearer s3cret")],
        );
        let sent_body = req.body().to_vec();
        assert!(!sent_body.is_empty());

        let mut response = within(transport.send(req)).await.unwrap();
        assert_eq!(response.status, 201);
        assert_eq!(header(&response, "x-reply"), Some(&b"yes"[..]));
        assert!(response.headers.iter().all(|(name, _)| *name == name.to_ascii_lowercase()));
        assert_eq!(within(body(&mut response)).await, sent_body, "echoed body");

        let recorded = server.requests();
        assert_eq!(recorded.len(), 1);
        let r = &recorded[0];
        assert_eq!(r.method, "POST");
        assert_eq!(r.path, "/echo");
        assert_eq!(r.body, sent_body);
        assert_eq!(r.header("x-custom"), Some(&b"custom value"[..]));
        assert_eq!(r.header("authorization"), Some(&b"Bearer s3cret"[..]));
        assert_eq!(r.header("content-type"), Some(&b"application/json"[..]));
        assert_eq!(r.header("host"), Some(server.addr.to_string().as_bytes()));
        let accept = String::from_utf8(r.header("accept").unwrap().to_vec()).unwrap();
        assert!(accept.contains("application/json") && accept.contains("text/event-stream"), "{accept}");
    });
}

#[test]
fn sequential_requests_reuse_one_connection() {
    smol::block_on(async {
        let server = TestServer::start();
        let transport = HyperTransport::new();
        for path in ["/fixed", "/stream", "/echo", "/fixed", "/empty"] {
            let mut response = send(&transport, &server.url(path)).await.unwrap();
            within(body(&mut response)).await;
        }
        assert_eq!(server.requests().len(), 5);
        assert_eq!(server.accepted(), 1, "server-side connections");
        assert_eq!(transport.connections_opened(), 1);
        assert_eq!(transport.idle_connections(), 1);
        // Clones share the pool.
        let clone = transport.clone();
        let mut response = send(&clone, &server.url("/fixed")).await.unwrap();
        assert_eq!(within(body(&mut response)).await, b"hello");
        assert_eq!(server.accepted(), 1);
        assert_eq!(transport.connections_opened(), 1);
    });
}

#[test]
fn concurrent_streams_use_one_connection_each() {
    smol::block_on(async {
        let server = TestServer::start();
        let transport = HyperTransport::new();
        let (mut a, mut b) = futures_lite::future::zip(
            send(&transport, &server.url("/stream")),
            send(&transport, &server.url("/stream")),
        )
        .await;
        let (a, b) = (a.as_mut().unwrap(), b.as_mut().unwrap());
        let (body_a, body_b) = within(futures_lite::future::zip(body(a), body(b))).await;
        assert_eq!(body_a, b"chunk0\nchunk1\nchunk2\nchunk3\n");
        assert_eq!(body_b, body_a);
        assert_eq!(server.accepted(), 2);
        assert_eq!(transport.connections_opened(), 2);
        assert_eq!(transport.idle_connections(), 2);

        // Both went back to the pool: two more requests at once open nothing new.
        let (mut c, mut d) = futures_lite::future::zip(
            send(&transport, &server.url("/fixed")),
            send(&transport, &server.url("/fixed")),
        )
        .await;
        let (c, d) = (c.as_mut().unwrap(), d.as_mut().unwrap());
        assert_eq!(
            within(futures_lite::future::zip(body(c), body(d))).await,
            (b"hello".to_vec(), b"hello".to_vec())
        );
        assert_eq!(server.accepted(), 2);
        assert_eq!(transport.connections_opened(), 2);
    });
}

#[test]
fn streamed_body_arrives_in_chunks_before_the_end() {
    smol::block_on(async {
        let server = TestServer::start();
        let transport = HyperTransport::new();
        let mut response = send(&transport, &server.url("/stream")).await.unwrap();
        let start = Instant::now();
        let mut arrivals = Vec::new();
        while let Some(chunk) = within(response.body.next()).await {
            arrivals.push((start.elapsed(), chunk.unwrap()));
        }
        let end = start.elapsed();
        let data: Vec<u8> = arrivals.iter().flat_map(|(_, c)| c.to_vec()).collect();
        assert_eq!(data, b"chunk0\nchunk1\nchunk2\nchunk3\n");
        assert!(arrivals.len() >= 3, "several chunks, got {}", arrivals.len());
        // The server needs 300 ms for the whole body: the first chunk must not wait for it.
        let first = arrivals[0].0;
        assert!(end >= Duration::from_millis(250), "whole body in {end:?}");
        assert!(first + Duration::from_millis(200) <= end, "first chunk at {first:?}, end at {end:?}");
    });
}

#[test]
fn dropped_body_closes_its_connection() {
    smol::block_on(async {
        let server = TestServer::start();
        let transport = HyperTransport::new();
        let mut response = send(&transport, &server.url("/forever")).await.unwrap();
        let first = within(response.body.next()).await.unwrap().unwrap();
        assert!(first.starts_with(b"tick"));
        drop(response);
        assert_eq!(transport.idle_connections(), 0, "an abandoned connection is not pooled");

        // The abandoned connection is closed, not left streaming into the void.
        assert!(server.wait_closed(1).await, "the server should see the connection close");

        let mut response = send(&transport, &server.url("/fixed")).await.unwrap();
        assert_eq!(response.status, 200);
        assert_eq!(within(body(&mut response)).await, b"hello");
        assert_eq!(server.accepted(), 2);
        assert_eq!(transport.connections_opened(), 2);
    });
}

#[test]
fn dropped_request_future_closes_its_connection() {
    smol::block_on(async {
        let server = TestServer::start();
        let transport = HyperTransport::new();
        // Warm the pool, then abandon a request on the pooled connection before its head.
        let mut response = send(&transport, &server.url("/fixed")).await.unwrap();
        within(body(&mut response)).await;
        let pending = transport.send(request(&server.url("/slow-head"), &[]));
        let gave_up = futures_lite::future::or(async { Some(pending.await) }, async {
            Timer::after(Duration::from_millis(100)).await;
            None
        })
        .await;
        assert!(gave_up.is_none());
        assert_eq!(transport.idle_connections(), 0);

        let mut response = send(&transport, &server.url("/fixed")).await.unwrap();
        assert_eq!(within(body(&mut response)).await, b"hello");
        assert_eq!(transport.connections_opened(), 2);
        assert_eq!(server.accepted(), 2);
    });
}

#[test]
fn empty_response_returns_its_connection_at_once() {
    smol::block_on(async {
        let server = TestServer::start();
        let transport = HyperTransport::new();
        let response = send(&transport, &server.url("/empty")).await.unwrap();
        assert_eq!(response.status, 204);
        // Nothing to read: the connection is back before the body is even looked at.
        assert_eq!(transport.idle_connections(), 1);
        drop(response);
        let mut response = send(&transport, &server.url("/fixed")).await.unwrap();
        assert_eq!(within(body(&mut response)).await, b"hello");
        assert_eq!(transport.connections_opened(), 1);
        assert_eq!(server.accepted(), 1);
    });
}

#[test]
fn idle_connections_expire() {
    smol::block_on(async {
        let server = TestServer::start();
        let transport = HyperTransport::builder().idle_timeout(Duration::from_millis(100)).build();
        let mut response = send(&transport, &server.url("/fixed")).await.unwrap();
        within(body(&mut response)).await;
        assert_eq!(transport.idle_connections(), 1);
        // The reaper closes it without another request coming.
        assert!(server.wait_closed(1).await, "the idle connection should be closed");
        assert_eq!(transport.idle_connections(), 0);
        let mut response = send(&transport, &server.url("/fixed")).await.unwrap();
        assert_eq!(within(body(&mut response)).await, b"hello");
        assert_eq!(transport.connections_opened(), 2);
    });
}

#[test]
fn max_idle_zero_disables_reuse() {
    smol::block_on(async {
        let server = TestServer::start();
        let transport = HyperTransport::builder().max_idle_per_host(0).build();
        for _ in 0..3 {
            let mut response = send(&transport, &server.url("/fixed")).await.unwrap();
            assert_eq!(within(body(&mut response)).await, b"hello");
        }
        assert_eq!(transport.connections_opened(), 3);
        assert_eq!(server.accepted(), 3);
        assert!(server.wait_closed(3).await, "unpooled connections are closed");
    });
}

#[test]
fn connection_refused_fails_promptly() {
    smol::block_on(async {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        drop(listener);
        let transport = HyperTransport::new();
        let start = Instant::now();
        let error = send(&transport, &format!("http://{addr}/mcp")).await.expect_err("an error");
        assert!(start.elapsed() < Duration::from_secs(1));
        assert_eq!(error.kind(), io::ErrorKind::ConnectionRefused, "{error}");
        let message = error.to_string();
        assert!(message.starts_with(&format!("connecting to {addr}: ")), "{message}");
        assert_eq!(transport.connections_opened(), 0);
    });
}

#[test]
fn https_to_a_plain_http_server_fails_instead_of_hanging() {
    smol::block_on(async {
        let server = TestServer::start();
        let transport = HyperTransport::new();
        let url = format!("https://{}/mcp", server.addr);
        let error = send(&transport, &url).await.expect_err("an error");
        let message = error.to_string();
        assert!(message.starts_with(&format!("TLS handshake with {}: ", server.addr)), "{message}");
        assert_eq!(transport.connections_opened(), 0);
    });
}

#[test]
fn invalid_url_is_invalid_input() {
    smol::block_on(async {
        let transport = HyperTransport::new();
        for url in ["ftp://127.0.0.1/mcp", "not a url"] {
            let error = send(&transport, url).await.expect_err("an error");
            assert_eq!(error.kind(), io::ErrorKind::InvalidInput, "{url}: {error}");
        }
    });
}

#[test]
fn debug_output_has_no_secrets() {
    let transport = HyperTransport::new();
    let text = format!("{transport:?}");
    assert!(text.contains("connections_opened"), "{text}");
}

/// A raw HTTP/1.1 server on 127.0.0.1 that answers every request on one connection with
/// `response` and closes it; returns its base URL. (The hyper test server cannot write what
/// these tests need: heads over hyper's limits, redirects with nothing behind them.)
fn raw_server(response: Vec<u8>) -> String {
    use std::io::{Read, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { return };
            let response = response.clone();
            std::thread::spawn(move || {
                // Reads the request head (and the small body) before answering.
                let mut buf = [0; 64 * 1024];
                let _ = stream.read(&mut buf);
                let _ = stream.write_all(&response);
            });
        }
    });
    url
}

#[test]
fn redirects_are_not_followed() {
    // The session decides which redirects to follow and what goes along: the transport hands
    // it the 307 as it came.
    smol::block_on(async {
        let url = raw_server(
            b"HTTP/1.1 307 Temporary Redirect\r\nLocation: /elsewhere\r\nContent-Length: 0\r\n\r\n".to_vec(),
        );
        let transport = HyperTransport::new();
        let response = send(&transport, &format!("{url}/mcp")).await.unwrap();
        assert_eq!(response.status, 307);
        assert_eq!(header(&response, "location"), Some(&b"/elsewhere"[..]));
    });
}

#[test]
fn a_response_head_over_hypers_limit_is_a_typed_error() {
    smol::block_on(async {
        let huge = format!("HTTP/1.1 200 OK\r\nX-Huge: {}\r\nContent-Length: 0\r\n\r\n", "a".repeat(1 << 20));
        let url = raw_server(huge.into_bytes());
        let transport = HyperTransport::new();
        let error = match send(&transport, &format!("{url}/mcp")).await {
            Ok(response) => panic!("a 1 MiB header was accepted: {}", response.status),
            Err(error) => error,
        };
        let typed = mcp_smol::http::transport_error(&error);
        assert_eq!(
            typed,
            mcp_sansio::TransportError::HeadTooLarge { limit: Some(8192 + 4096 * 100) },
            "{error}"
        );
        assert!(error.to_string().contains("head is too large"), "{error}");
    });
}

/// A raw keep-alive HTTP/1.1 server on 127.0.0.1 that answers every request with an event
/// stream of known length written in two pieces, the response's first `first(head length)`
/// bytes and then the rest, with `TCP_NODELAY` off (as rmcp's Streamable HTTP server does in its
/// session mode, where the first piece is the head); returns its base URL. Nagle's algorithm
/// holds the second piece until the client acknowledges the first.
fn split_writes_server(first: fn(head: usize) -> usize) -> String {
    use std::io::{Read, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { return };
            stream.set_nodelay(false).unwrap();
            std::thread::spawn(move || {
                let event = "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":0,\"result\":{}}\n\n";
                let head = format!(
                    "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncontent-length: {}\r\n\r\n",
                    event.len()
                );
                let response = format!("{head}{event}").into_bytes();
                let (one, two) = response.split_at(first(head.len()));
                let mut pending = Vec::new();
                let mut buf = [0; 16 * 1024];
                loop {
                    // One whole request (head and Content-Length body) before answering.
                    let request_len = loop {
                        if let Some(end) = pending.windows(4).position(|w| w == b"\r\n\r\n") {
                            let head = String::from_utf8_lossy(&pending[..end]).to_ascii_lowercase();
                            let body = head
                                .lines()
                                .find_map(|line| line.strip_prefix("content-length:"))
                                .map_or(0, |n| n.trim().parse::<usize>().unwrap());
                            if pending.len() >= end + 4 + body {
                                break end + 4 + body;
                            }
                        }
                        match stream.read(&mut buf) {
                            Ok(0) | Err(_) => return,
                            Ok(n) => pending.extend_from_slice(&buf[..n]),
                        }
                    };
                    pending.drain(..request_len);
                    if stream.write_all(one).is_err() || stream.write_all(two).is_err() {
                        return;
                    }
                }
            });
        }
    });
    url
}

/// 50 calls to a [`split_writes_server`] on one kept-alive connection take well under 50 x 40 ms.
///
/// Each response's second piece waits for the client's ACK of the first. Linux delays that ACK
/// by 40 ms on a connection where requests and responses alternate, unless the client asks for
/// a quick ACK, which the transport does when a head arrives alone and when a body waits for
/// more: without that, 50 calls take 2 s, five times the bound.
fn calls_do_not_wait_for_delayed_acks(first: fn(head: usize) -> usize) {
    const CALLS: u32 = 50;
    const BOUND: Duration = Duration::from_millis(400);
    smol::block_on(async {
        let url = format!("{}/mcp", split_writes_server(first));
        let transport = HyperTransport::new();
        let start = Instant::now();
        for _ in 0..CALLS {
            let mut response = send(&transport, &url).await.unwrap();
            assert_eq!(response.status, 200);
            assert!(within(body(&mut response)).await.starts_with(b"event: message\n"));
        }
        let elapsed = start.elapsed();
        assert_eq!(transport.connections_opened(), 1, "one kept-alive connection");
        if cfg!(any(target_os = "linux", target_os = "android")) {
            assert!(elapsed < BOUND, "{CALLS} calls took {elapsed:?}, {:?} each", elapsed / CALLS);
        }
    });
}

#[test]
fn a_head_written_alone_without_nodelay_does_not_wait_for_a_delayed_ack() {
    calls_do_not_wait_for_delayed_acks(|head| head);
}

#[test]
fn a_body_written_in_two_pieces_without_nodelay_does_not_wait_for_a_delayed_ack() {
    // The head and the event's first bytes, then the rest: the first read does not end with a
    // head, and the body waits.
    calls_do_not_wait_for_delayed_acks(|head| head + 10);
}
