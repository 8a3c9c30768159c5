//! Nobody's progress waits on a call's future being polled: a call polled once and then set
//! aside (kept alive, its task woken, the future never polled again, as `select!` on `&mut fut`
//! does once another branch wins) holds back neither the other calls nor the dispatch of
//! notifications and server requests. There is no timer behind this (the driver's 100 ms
//! watch is gone): over a stdio child's pipes the news is pumped where it lands, and elsewhere
//! it goes to the driver's task. And the other way round: a call waiting on a large result is
//! woken while the result streams in, so that its thread keeps a hand on the reactor.

mod common;

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use common::{all_capabilities, builder, demo_server, sh_server, xs};
use mcp_smol::mcp_sansio::schema::{CallTool, CallToolRequestParams, CallToolResult, ListRootsResult, Root};
use mcp_smol::{CallOptions, Client, ClientApi, ClientHandler, Driver, Error, HandlerFuture};
use serde_json::json;

/// Sequential calls made past the one set aside.
const CALLS: usize = 1_000;
/// The longest any of them may take: the watch that used to cover this ran every 100 ms.
const SLOWEST: Duration = Duration::from_millis(100);
/// How long any step may take at all.
const LIMIT: Duration = Duration::from_secs(30);

async fn within<T>(future: impl Future<Output = T>) -> T {
    futures_lite::future::or(future, async {
        async_io::Timer::after(LIMIT).await;
        panic!("nothing for {LIMIT:?}: the connection is stuck");
    })
    .await
}

type Stuck = Pin<Box<dyn Future<Output = Result<CallToolResult, Error>> + Send>>;

/// A call to the demo server's `sleep` for ten minutes, polled once (so it registered its
/// waker and everything a waiting call does) and handed back, to be kept and never polled.
async fn set_aside(client: &Client) -> Stuck {
    let sleep = CallToolRequestParams::new("sleep")
        .with_arguments(json!({"ms": 600_000}).as_object().unwrap().clone());
    let mut stuck: Stuck = Box::pin(client.request::<CallTool>(&sleep, CallOptions::default()));
    assert!(futures_lite::future::poll_once(stuck.as_mut()).await.is_none(), "a ten-minute sleep answered");
    stuck
}

/// `CALLS` sequential echoes; the slowest one's time.
async fn sequential_echoes(client: &Client) -> Duration {
    let mut slowest = Duration::ZERO;
    for i in 0..CALLS {
        let message = format!("call {i}");
        let started = Instant::now();
        let echo = within(client.call_tool("echo", json!({ "message": message }))).await.unwrap();
        slowest = slowest.max(started.elapsed());
        assert_eq!(echo.content[0].as_text(), Some(message.as_str()));
    }
    slowest
}

fn assert_prompt(slowest: Duration, what: &str) {
    assert!(slowest < SLOWEST, "{what}: the slowest of {CALLS} calls took {slowest:?}");
}

#[test]
fn a_call_set_aside_holds_back_no_other_call() {
    smol::block_on(async {
        let client = within(builder().spawn_stdio(&demo_server())).await.unwrap();
        let stuck = set_aside(&client).await;
        let slowest = sequential_echoes(&client).await;
        assert_prompt(slowest, "driver on its own thread");
        assert_eq!(client.pending_requests(), 1, "the one set aside still waits");
        drop(stuck);
        within(client.close()).await;
    });
}

/// The same with the driver a task of the same executor as the calls, and the call set aside
/// on a task of its own that then sleeps (its future kept, never polled again).
#[test]
fn a_call_set_aside_on_another_task_holds_back_no_other_call() {
    let executor = Arc::new(smol::Executor::new());
    smol::block_on(executor.run(async {
        let (client, driver): (Client, Driver) = builder().stdio(&demo_server()).unwrap();
        executor.spawn(driver).detach();
        within(client.ready()).await.unwrap();
        let keeper = {
            let client = client.clone();
            executor.spawn(async move {
                let stuck = set_aside(&client).await;
                async_io::Timer::after(Duration::from_secs(3600)).await;
                drop(stuck);
            })
        };
        // Let the keeper poll its call once.
        while client.pending_requests() == 0 {
            smol::future::yield_now().await;
        }
        let slowest = sequential_echoes(&client).await;
        assert_prompt(slowest, "driver and calls on one executor");
        drop(keeper);
        within(client.close()).await;
    }));
}

/// Roots for the demo server's `list_roots` tool, counted.
#[derive(Clone, Default)]
struct Roots(Arc<AtomicUsize>);

impl ClientHandler for Roots {
    fn list_roots(&self) -> HandlerFuture<ListRootsResult> {
        self.0.fetch_add(1, Ordering::SeqCst);
        Box::pin(async { Ok(ListRootsResult::new(vec![Root::new("file:///work")])) })
    }
}

/// With a call set aside, a server request (the `list_roots` tool asks for the roots) is
/// dispatched to the handler and answered, and log notifications reach a notification handler,
/// each between sequential calls, none of them waiting on the call set aside.
#[test]
fn a_call_set_aside_holds_back_no_dispatch() {
    smol::block_on(async {
        let roots = Roots::default();
        let logged = Arc::new(AtomicUsize::new(0));
        let seen = logged.clone();
        let client = within(
            builder()
                .configure(|c| c.with_capabilities(all_capabilities()))
                .handler(roots.clone())
                .on_notification(move |n| {
                    if matches!(n, mcp_smol::mcp_sansio::ServerNotification::LoggingMessage(_)) {
                        seen.fetch_add(1, Ordering::SeqCst);
                    }
                })
                .spawn_stdio(&demo_server()),
        )
        .await
        .unwrap();
        client.set_log_level(mcp_smol::mcp_sansio::schema::LoggingLevel::Debug).await.unwrap();
        let stuck = set_aside(&client).await;
        let mut slowest = Duration::ZERO;
        for i in 0..CALLS / 10 {
            let started = Instant::now();
            let listed = within(client.call_tool("list_roots", json!({}))).await.unwrap();
            assert_eq!(listed.content[0].as_text(), Some("file:///work"));
            within(client.call_tool("log", json!({"level": "info", "message": format!("line {i}")})))
                .await
                .unwrap();
            slowest = slowest.max(started.elapsed());
        }
        assert_eq!(roots.0.load(Ordering::SeqCst), CALLS / 10, "every roots request reached the handler");
        // The notification handler runs on the driver's task: its last call may still be on
        // its way when the tool's answer is in.
        let last = Instant::now();
        while logged.load(Ordering::SeqCst) < CALLS / 10 && last.elapsed() < SLOWEST {
            async_io::Timer::after(Duration::from_millis(1)).await;
        }
        assert_eq!(logged.load(Ordering::SeqCst), CALLS / 10, "every log line reached the handler");
        assert_prompt(slowest, "server requests and notifications");
        drop(stuck);
        within(client.close()).await;
    });
}

/// Counts the polls of the future it wraps.
struct Polls<F> {
    inner: Pin<Box<F>>,
    polls: Arc<AtomicUsize>,
}

impl<F: Future> Future for Polls<F> {
    type Output = F::Output;

    fn poll(mut self: Pin<&mut Self>, cx: &mut std::task::Context<'_>) -> std::task::Poll<F::Output> {
        self.polls.fetch_add(1, Ordering::Relaxed);
        self.inner.as_mut().poll(cx)
    }
}

/// Pieces of the large result below, and their size: 1 MiB in all.
const PIECES: usize = 8;
const PIECE: usize = 128 * 1024;

/// A call waiting on a large result is woken while the result streams in, so that under
/// `block_on` its thread keeps waiting on the reactor instead of parking until the result is
/// whole (then, on one CPU, the server sat blocked on a full pipe while async-io's thread
/// napped: issue 37). The server writes the result in pieces 50 ms apart, so the client has read
/// all there is each time and waits with a part of the message: without the wake the call is
/// polled only when it starts and when its answer is whole.
#[test]
fn a_call_waiting_on_a_large_result_is_woken_while_it_streams_in() {
    let answer = format!(
        r#"printf '{{"jsonrpc":"2.0","id":%s,"result":{{"content":[{{"type":"text","text":"' "$id"
      for _ in $(seq {PIECES}); do {}; sleep 0.05; done
      printf '"}}]}}}}\n'"#,
        xs(PIECE)
    );
    smol::block_on(async {
        let client = within(builder().spawn_stdio(&sh_server("", &answer))).await.unwrap();
        let polls = Arc::new(AtomicUsize::new(0));
        let call = Polls {
            inner: Box::pin(
                client.call_tool_with(&CallToolRequestParams::new("large"), CallOptions::default()),
            ),
            polls: polls.clone(),
        };
        let result = within(call).await.unwrap();
        assert_eq!(result.content[0].as_text().map(str::len), Some(PIECES * PIECE));
        let polls = polls.load(Ordering::Relaxed);
        assert!(polls >= PIECES / 2, "the call was polled {polls} times while {PIECES} pieces came");
        within(client.close()).await;
    });
}
