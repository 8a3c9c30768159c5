//! Server→client requests (roots, sampling, elicitation) answered through a `ClientHandler`,
//! and the driver over a plain socket pair instead of a child process.

mod common;

use std::os::unix::net::UnixStream;
use std::sync::Arc;

use async_io::Async;
use common::{all_capabilities, builder, demo_server};
use mcp_smol::ClientApi;
use mcp_smol::mcp_sansio::schema::{
    CreateMessageRequestParams, CreateMessageResult, ElicitRequestParams, ElicitResult, ListRootsResult,
    Root, SamplingContent,
};
use mcp_smol::{ClientHandler, HandlerFuture};
use serde_json::json;

struct Scripted;

impl ClientHandler for Scripted {
    fn list_roots(&self) -> HandlerFuture<ListRootsResult> {
        let roots = vec![Root::new("file:///work").with_name("work"), Root::new("file:///tmp")];
        Box::pin(async move { Ok(ListRootsResult::new(roots)) })
    }

    fn create_message(&self, params: CreateMessageRequestParams) -> HandlerFuture<CreateMessageResult> {
        let prompt = params.messages[0].content.blocks()[0].as_text().unwrap_or("").to_owned();
        Box::pin(async move {
            // A handler may take its time: the driver keeps serving while it waits.
            async_io::Timer::after(std::time::Duration::from_millis(20)).await;
            Ok(CreateMessageResult::new("test-model", SamplingContent::text(format!("echo of {prompt}"))))
        })
    }

    fn elicit(&self, params: ElicitRequestParams) -> HandlerFuture<ElicitResult> {
        assert!(params.requested_schema.is_some());
        Box::pin(async { Ok(ElicitResult::accept(json!({"name": "Ada"}).as_object().unwrap().clone())) })
    }
}

#[test]
fn a_handler_answers_roots_sampling_and_elicitation() {
    smol::block_on(async {
        let client = builder()
            .configure(|c| c.with_capabilities(all_capabilities()))
            .handler(Scripted)
            .spawn_stdio(&demo_server())
            .await
            .unwrap();
        let roots = client.call_tool("list_roots", json!({})).await.unwrap();
        assert_eq!(roots.content[0].as_text(), Some("file:///work,file:///tmp"));
        let sampled = client.call_tool("sample", json!({"prompt": "hello"})).await.unwrap();
        assert_eq!(sampled.content[0].as_text(), Some("sampled: echo of hello"));
        let elicited = client.call_tool("elicit", json!({"message": "who?"})).await.unwrap();
        assert_eq!(elicited.content[0].as_text(), Some(r#"action=accept content={"name":"Ada"}"#));
        client.close().await;
    });
}

#[test]
fn default_handler_refuses_politely_and_undeclared_capabilities_get_method_not_found() {
    smol::block_on(async {
        // Declared capabilities with the default handler: empty roots, sampling refused,
        // elicitation declined.
        let declared = builder()
            .configure(|c| c.with_capabilities(all_capabilities()))
            .spawn_stdio(&demo_server())
            .await
            .unwrap();
        let roots = declared.call_tool("list_roots", json!({})).await.unwrap();
        assert_eq!(roots.content[0].as_text(), Some(""));
        let sampled = declared.call_tool("sample", json!({"prompt": "x"})).await.unwrap();
        assert_eq!(sampled.is_error, Some(true));
        assert!(sampled.content[0].as_text().unwrap().contains("sampling is not supported"), "{sampled:?}");
        let elicited = declared.call_tool("elicit", json!({"message": "x"})).await.unwrap();
        assert!(elicited.content[0].as_text().unwrap().starts_with("action=decline"));
        declared.close().await;

        // No capabilities declared: the engine answers -32601 itself.
        let bare = builder().spawn_stdio(&demo_server()).await.unwrap();
        let sampled = bare.call_tool("sample", json!({"prompt": "x"})).await.unwrap();
        assert_eq!(sampled.is_error, Some(true));
        assert!(
            sampled.content[0].as_text().unwrap().contains("Method not found: sampling/createMessage"),
            "{sampled:?}"
        );
        // The host learns it without a log subscriber: its stats count the refusal.
        assert_eq!(bare.stats().server_requests_undeclared, 1);
        assert_eq!(declared.stats().server_requests_undeclared, 0);
        bare.close().await;
    });
}

#[test]
fn the_driver_runs_over_any_async_read_write_pair_without_an_executor() {
    let (client_end, server_end) = UnixStream::pair().unwrap();
    let server_reader = std::io::BufReader::new(server_end.try_clone().unwrap());
    let server = std::thread::spawn(move || {
        let options = match mcp_demo_server::Options::parse(Vec::<String>::new()).unwrap() {
            mcp_demo_server::Command::Run(options) => options,
            mcp_demo_server::Command::Help => unreachable!(),
        };
        mcp_demo_server::serve(server_reader, Box::new(server_end), options)
    });
    let stream = Arc::new(Async::new(client_end).unwrap());
    let (reader, writer) = (ArcIo(stream.clone()), ArcIo(stream));
    // No executor at all: one thread polls the driver and the application side together.
    let (client, driver) = builder().connect(reader, writer);
    let app = async {
        client.ready().await.unwrap();
        let echo = client.call_tool("echo", json!({"message": "over a socket"})).await.unwrap();
        assert_eq!(echo.content[0].as_text(), Some("over a socket"));
        client.close().await;
    };
    futures_lite::future::block_on(futures_lite::future::zip(driver, app));
    // Closing our end is EOF for the server, which returns.
    server.join().unwrap().unwrap();
}

/// Reads and writes through a shared `Async<UnixStream>` (both halves of one socket).
struct ArcIo(Arc<Async<UnixStream>>);

impl futures_lite::AsyncRead for ArcIo {
    fn poll_read(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &mut [u8],
    ) -> std::task::Poll<std::io::Result<usize>> {
        std::pin::Pin::new(&mut &*self.0).poll_read(cx, buf)
    }
}

impl futures_lite::AsyncWrite for ArcIo {
    fn poll_write(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &[u8],
    ) -> std::task::Poll<std::io::Result<usize>> {
        std::pin::Pin::new(&mut &*self.0).poll_write(cx, buf)
    }

    fn poll_flush(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::pin::Pin::new(&mut &*self.0).poll_flush(cx)
    }

    fn poll_close(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        // Shut down only the write direction: the server sees EOF.
        let _ = self.0.get_ref().shutdown(std::net::Shutdown::Write);
        std::pin::Pin::new(&mut &*self.0).poll_close(cx)
    }
}

/// `roots_changed` against the real server process: written in the `initialize` era, nothing to
/// write on 2026-07-28, and refused at once by a client that never said it would send it. A ping
/// after it is answered only once the notification before it was written.
#[test]
fn roots_changed_is_written_in_the_initialize_era_only() {
    smol::block_on(async {
        for (label, builder, expected) in
            [("initialize era", builder(), 2), ("2026-07-28", common::default_builder(), 1)]
        {
            let client = builder
                .capabilities(|c| c.with_roots(true))
                .handler(Scripted)
                .spawn_stdio(&demo_server())
                .await
                .unwrap();
            let before = client.stats().messages_sent;
            client.roots_changed().unwrap();
            client.ping().await.unwrap();
            assert_eq!(
                client.stats().messages_sent - before,
                expected,
                "{label}: the notification, then the ping"
            );
            // The server still asks for roots, and gets them.
            let roots = client.call_tool("list_roots", json!({})).await.unwrap();
            assert_eq!(roots.content[0].as_text(), Some("file:///work,file:///tmp"), "{label}");
            client.close().await;
        }

        let undeclared = builder().handler(Scripted).spawn_stdio(&demo_server()).await.unwrap();
        let refused = undeclared.roots_changed().unwrap_err();
        assert!(
            matches!(
                refused,
                mcp_smol::Error::Usage(mcp_smol::mcp_sansio::UsageError::CapabilityNotDeclared {
                    capability: "roots.listChanged"
                })
            ),
            "{refused:?}"
        );
        undeclared.close().await;
    });
}

/// Records the elicitations it is asked by their message; answers only `"answer me"`, the
/// others never.
#[derive(Default)]
struct Recording {
    asked: Arc<std::sync::Mutex<Vec<String>>>,
}

impl ClientHandler for Recording {
    fn elicit(&self, params: ElicitRequestParams) -> HandlerFuture<ElicitResult> {
        self.asked.lock().unwrap().push(params.message.clone());
        if params.message == "answer me" {
            return Box::pin(async { Ok(ElicitResult::accept(serde_json::Map::new())) });
        }
        Box::pin(std::future::pending())
    }
}

/// A scripted server on the other end of `stream`: after the handshake, a notification (the
/// client's handler blocks on it); at the first `ping`, an elicitation then its cancellation,
/// then the pong; at the second, `pairs` more elicitations each cancelled at once, one that
/// asks to be answered, then the pong. Returns the ids of the responses it read, each with
/// whether it was an error.
fn cancelling_server(stream: UnixStream, pairs: usize) -> Vec<(String, bool)> {
    use std::io::{BufRead, Write};
    let mut writer = stream.try_clone().unwrap();
    let mut send = move |message: serde_json::Value| {
        let mut line = serde_json::to_vec(&message).unwrap();
        line.push(b'\n');
        writer.write_all(&line).unwrap();
    };
    let elicit = |id: &str, message: &str| {
        json!({"jsonrpc": "2.0", "id": id, "method": "elicitation/create",
               "params": {"message": message, "requestedSchema": {"type": "object", "properties": {}}}})
    };
    let cancel = |id: &str| json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": id}});
    let mut responses = Vec::new();
    let mut pings = 0;
    for line in std::io::BufReader::new(stream).lines() {
        let Ok(line) = line else { break };
        let message: serde_json::Value = serde_json::from_str(&line).unwrap();
        let id = message.get("id").cloned();
        match message.get("method").and_then(serde_json::Value::as_str) {
            None => {
                responses.push((id.unwrap().as_str().unwrap().to_owned(), message.get("error").is_some()))
            }
            Some("initialize") => send(json!({"jsonrpc": "2.0", "id": id, "result": {
                "protocolVersion": message["params"]["protocolVersion"],
                "capabilities": {},
                "serverInfo": {"name": "cancelling", "version": "0"},
            }})),
            Some("notifications/initialized") => {
                send(json!({"jsonrpc": "2.0", "method": "notifications/message",
                "params": {"level": "info", "data": "hold the driver's task"}}))
            }
            Some("ping") => {
                pings += 1;
                if pings == 1 {
                    send(elicit("queued", "queued"));
                    send(cancel("queued"));
                } else if pings == 2 {
                    for i in 0..pairs {
                        let id = format!("c{i}");
                        send(elicit(&id, "cancelled"));
                        send(cancel(&id));
                    }
                    send(elicit("last", "answer me"));
                }
                send(json!({"jsonrpc": "2.0", "id": id, "result": {}}));
            }
            Some(_) => {}
        }
    }
    responses
}

/// A server request the server cancels is never answered, and frees its place among the
/// `max_open_server_requests` (256) the engine lets the server have open: the driver dropped a
/// cancelled request's handler future without telling the engine, which kept the place, so
/// after 256 cancellations every server request was refused (`-32603`, `data.limit`). And a
/// request cancelled while it still waits for the driver's task (here blocked in a
/// notification handler) is taken out of the queue: the handler is never asked.
#[test]
fn cancelled_server_requests_free_their_place_and_never_reach_a_busy_handler() {
    const PAIRS: usize = 300;
    let (client_end, server_end) = UnixStream::pair().unwrap();
    let server = std::thread::spawn(move || cancelling_server(server_end, PAIRS));
    let stream = Arc::new(Async::new(client_end).unwrap());
    let (reader, writer) = (ArcIo(stream.clone()), ArcIo(stream));
    let gate = Arc::new((std::sync::Mutex::new(false), std::sync::Condvar::new()));
    let entered = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let (held, inside) = (gate.clone(), entered.clone());
    let handler = Recording::default();
    let asked = handler.asked.clone();
    let (client, driver) = builder()
        .configure(|c| c.with_capabilities(all_capabilities()))
        .handler(handler)
        .on_notification(move |_| {
            inside.store(true, std::sync::atomic::Ordering::SeqCst);
            let (open, changed) = &*held;
            let open = open.lock().unwrap();
            let _ = changed.wait_timeout_while(open, std::time::Duration::from_secs(30), |open| !*open);
        })
        .connect(reader, writer);
    let driver = std::thread::spawn(move || futures_lite::future::block_on(driver));
    smol::block_on(async {
        client.ready().await.unwrap();
        let limit = std::time::Duration::from_secs(10);
        assert!(common::wait_until(limit, || entered.load(std::sync::atomic::Ordering::SeqCst)));
        // The driver's task blocks in the notification handler: this call pumps, and reads the
        // elicitation and its cancellation before its pong.
        client.ping().await.unwrap();
        {
            let (open, changed) = &*gate;
            *open.lock().unwrap() = true;
            changed.notify_all();
        }
        client.ping().await.unwrap();
        assert!(
            common::wait_until(limit, || asked.lock().unwrap().iter().any(|m| m == "answer me")),
            "the last elicitation never reached the handler: {} refused",
            client.stats().server_requests_refused
        );
        // The answer to "last" is written by the next pump at the latest.
        client.ping().await.unwrap();
        assert_eq!(client.stats().server_requests_refused, 0, "cancelled requests kept their places");
        client.close().await;
    });
    driver.join().unwrap();
    let responses = server.join().unwrap();
    let asked = asked.lock().unwrap().clone();
    assert!(!asked.iter().any(|m| m == "queued"), "the handler was asked a request cancelled in the queue");
    assert_eq!(responses, vec![("last".to_owned(), false)], "only the last request is answered");
}

/// Answers every sampling request with a text of `len` bytes.
struct BigSample {
    len: usize,
}

impl ClientHandler for BigSample {
    fn create_message(&self, _: CreateMessageRequestParams) -> HandlerFuture<CreateMessageResult> {
        let text = "x".repeat(self.len);
        Box::pin(async move { Ok(CreateMessageResult::new("test-model", SamplingContent::text(text))) })
    }
}

/// One answer larger than the 8 MiB of answers the driver lets wait unwritten (a sampling
/// result with a large image, say), to a server that reads it: it takes many writes to go
/// through the pipe, and the server reading it is not a server that stopped reading. Only the
/// answers queued behind the one being written count against the bound.
#[test]
fn one_answer_larger_than_the_bound_reaches_a_server_that_reads_it() {
    const LEN: usize = 10 << 20;
    smol::block_on(async {
        let client = builder()
            .configure(|c| c.with_capabilities(all_capabilities()))
            .handler(BigSample { len: LEN })
            .spawn_stdio(&demo_server())
            .await
            .unwrap();
        let sampled = client.call_tool("sample", json!({"prompt": "a picture"})).await.unwrap();
        let text = sampled.content[0].as_text().unwrap();
        assert_eq!(text.len(), "sampled: ".len() + LEN);
        client.ping().await.unwrap();
        client.close().await;
    });
}
