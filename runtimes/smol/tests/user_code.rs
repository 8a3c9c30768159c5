//! Where user code runs and what it may do: handlers, hooks and callbacks never run on a task
//! waiting for a call, a handler that blocks does not hold another call's response back, and a
//! panic in any of them stays where it happened (README's shape: `spawn_stdio` under
//! `smol::block_on`, against the demo server).

mod common;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use common::{all_capabilities, builder, demo_server, wait_until};
use mcp_smol::mcp_sansio::ServerNotification;
use mcp_smol::mcp_sansio::schema::{
    CreateMessageRequestParams, CreateMessageResult, ElicitRequestParams, ElicitResult, ListRootsResult, Root,
};
use mcp_smol::{CallOptions, ClientApi, ClientHandler, HandlerFuture, NotificationHandler};
use serde_json::json;

/// How long a step may take on a loaded machine before the test calls it stranded.
const LIMIT: Duration = Duration::from_secs(5);

#[test]
fn a_blocking_notification_handler_does_not_delay_another_calls_response() {
    let handled = Arc::new(AtomicUsize::new(0));
    let seen = handled.clone();
    smol::block_on(async {
        let client = builder()
            .on_notification(move |_| {
                // A handler that blocks its thread, as a careless one would.
                std::thread::sleep(Duration::from_secs(1));
                seen.fetch_add(1, Ordering::SeqCst);
            })
            .spawn_stdio(&demo_server())
            .await
            .unwrap();
        let start = Instant::now();
        // The log call's notification reaches the blocking handler; the sleep call waits for
        // its response meanwhile, and both responses come while the handler still blocks.
        let log = client.call_tool("log", json!({"level": "error", "message": "disk full"}));
        let other = async {
            let result = client.call_tool("sleep", json!({"ms": 100})).await.unwrap();
            assert_eq!(result.content[0].as_text(), Some("slept 100 ms"));
            start.elapsed()
        };
        let (log, other) = futures_lite::future::zip(log, other).await;
        log.unwrap();
        let both = start.elapsed();
        assert!(other < Duration::from_millis(700), "the other call's response took {other:?}");
        assert!(both < Duration::from_millis(700), "the log call took {both:?}");
        assert!(wait_until(LIMIT, || handled.load(Ordering::SeqCst) == 1), "the handler never ran");
        client.close().await;
    });
}

/// A handler whose elicitation method panics, and whose sampling future panics when polled.
struct Panicking {
    /// The threads the handler's code ran on.
    threads: Arc<Mutex<Vec<String>>>,
}

fn thread_name() -> String {
    std::thread::current().name().unwrap_or("(unnamed)").to_owned()
}

impl ClientHandler for Panicking {
    fn list_roots(&self) -> HandlerFuture<ListRootsResult> {
        let threads = self.threads.clone();
        threads.lock().unwrap().push(thread_name());
        Box::pin(async move {
            // Waits once, so the future is polled twice.
            async_io::Timer::after(Duration::from_millis(10)).await;
            threads.lock().unwrap().push(thread_name());
            Ok(ListRootsResult::new(vec![Root::new("file:///work")]))
        })
    }

    fn create_message(&self, _: CreateMessageRequestParams) -> HandlerFuture<CreateMessageResult> {
        Box::pin(async { panic!("the sampling future panicked") })
    }

    fn elicit(&self, _: ElicitRequestParams) -> HandlerFuture<ElicitResult> {
        panic!("the elicitation handler panicked")
    }
}

#[test]
fn a_panicking_handler_answers_its_request_with_an_internal_error_and_runs_on_the_drivers_task() {
    let threads = Arc::new(Mutex::new(Vec::new()));
    smol::block_on(async {
        let client = builder()
            .configure(|c| c.with_capabilities(all_capabilities()))
            .handler(Panicking { threads: threads.clone() })
            .spawn_stdio(&demo_server())
            .await
            .unwrap();
        let sampled = client.call_tool("sample", json!({"prompt": "hi"})).await.unwrap();
        assert_eq!(sampled.is_error, Some(true));
        let text = sampled.content[0].as_text().unwrap();
        assert!(text.starts_with("sampling failed: Internal error"), "{text}");
        let elicited = client.call_tool("elicit", json!({"message": "who?"})).await.unwrap();
        let text = elicited.content[0].as_text().unwrap();
        assert!(text.starts_with("elicitation failed: Internal error"), "{text}");
        // The connection goes on, the handler too.
        let roots = client.call_tool("list_roots", json!({})).await.unwrap();
        assert_eq!(roots.content[0].as_text(), Some("file:///work"));
        client.close().await;
    });
    // The handler and its future ran on the driver's thread, never on this one (which waited
    // for the calls, and drove the connection meanwhile).
    assert_eq!(*threads.lock().unwrap(), ["mcp-driver", "mcp-driver"]);
}

/// A notification handler that panics every time, and counts its calls.
struct Bomb(Arc<AtomicUsize>);

impl NotificationHandler for Bomb {
    fn on_notification(&self, _: &ServerNotification) {
        self.0.fetch_add(1, Ordering::SeqCst);
        panic!("the notification handler panicked");
    }
}

#[test]
fn a_panicking_notification_handler_is_dropped_and_the_others_go_on() {
    let bomb = Arc::new(AtomicUsize::new(0));
    let counted = Arc::new(AtomicUsize::new(0));
    let count = counted.clone();
    smol::block_on(async {
        let client = builder()
            .notification_handler(Bomb(bomb.clone()))
            .on_notification(move |_| {
                count.fetch_add(1, Ordering::SeqCst);
            })
            .spawn_stdio(&demo_server())
            .await
            .unwrap();
        // Three list_changed notifications per call.
        client.call_tool("notify_changes", json!({})).await.unwrap();
        client.call_tool("notify_changes", json!({})).await.unwrap();
        assert!(wait_until(LIMIT, || counted.load(Ordering::SeqCst) == 6), "{counted:?}");
        client.ping().await.unwrap();
        client.close().await;
    });
    assert_eq!(bomb.load(Ordering::SeqCst), 1, "the panicking handler is called once, then dropped");
}

#[test]
fn a_panicking_progress_callback_is_dropped_and_its_call_goes_on() {
    let calls = Arc::new(AtomicUsize::new(0));
    let count = calls.clone();
    let thread = Arc::new(Mutex::new(None));
    let on = thread.clone();
    smol::block_on(async {
        let client = builder().spawn_stdio(&demo_server()).await.unwrap();
        let options = CallOptions::default().on_progress(move |_| {
            *on.lock().unwrap() = Some(thread_name());
            count.fetch_add(1, Ordering::SeqCst);
            panic!("the progress callback panicked");
        });
        let params = mcp_smol::mcp_sansio::schema::CallToolRequestParams::new("long_running")
            .with_arguments(json!({"steps": 3, "step_ms": 20}).as_object().unwrap().clone());
        let result =
            client.request::<mcp_smol::mcp_sansio::schema::CallTool>(&params, options).await.unwrap();
        assert_ne!(result.is_error, Some(true));
        client.close().await;
    });
    assert_eq!(calls.load(Ordering::SeqCst), 1, "called once, then dropped");
    // The callback ran on the task that awaited the call: this thread.
    assert_eq!(thread.lock().unwrap().as_deref(), Some(thread_name().as_str()));
}

#[test]
fn a_panicking_stderr_callback_is_replaced_and_the_pipe_still_drained() {
    let lines = Arc::new(AtomicUsize::new(0));
    let count = lines.clone();
    smol::block_on(async {
        let command = demo_server().stderr_to(move |_| {
            count.fetch_add(1, Ordering::SeqCst);
            panic!("the stderr callback panicked");
        });
        let client = builder().spawn_stdio(&command).await.unwrap();
        // 1 MiB of stderr: more than a pipe holds, so the server blocks unless it is drained.
        let burst = client.call_tool("stderr_burst", json!({"bytes": 1 << 20}));
        let result = futures_lite::future::or(async { Some(burst.await) }, async {
            async_io::Timer::after(LIMIT).await;
            None
        })
        .await;
        result.expect("the server blocked on its stderr").unwrap();
        client.close().await;
    });
    assert_eq!(lines.load(Ordering::SeqCst), 1, "called once, then replaced by tracing");
}

/// Tool arguments whose `Serialize` impl blocks its thread for a second once it is serializing
/// for real (the shape check before it, which stops at the map, passes at once).
struct SlowArguments {
    /// Set when the slow part starts.
    started: Arc<AtomicUsize>,
}

impl serde::Serialize for SlowArguments {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map = serializer.serialize_map(Some(1))?;
        self.started.fetch_add(1, Ordering::SeqCst);
        std::thread::sleep(Duration::from_secs(1));
        map.serialize_entry("message", "slow")?;
        map.end()
    }
}

#[test]
fn a_slow_serialize_of_tool_arguments_does_not_hold_another_call_back() {
    smol::block_on(async {
        let client = builder().spawn_stdio(&demo_server()).await.unwrap();
        let started = Arc::new(AtomicUsize::new(0));
        let slow = std::thread::spawn({
            let (client, started) = (client.clone(), started.clone());
            move || smol::block_on(client.call_tool("echo", SlowArguments { started }))
        });
        assert!(
            wait_until(LIMIT, || started.load(Ordering::SeqCst) == 1),
            "the slow serialize never started"
        );
        // The other thread is inside the arguments' `Serialize` now, for a second.
        let start = Instant::now();
        let fast = client.call_tool("echo", json!({"message": "fast"})).await.unwrap();
        let took = start.elapsed();
        assert_eq!(fast.content[0].as_text(), Some("fast"));
        assert!(took < Duration::from_millis(500), "a call waited {took:?} for another's arguments");
        let slow = slow.join().unwrap().unwrap();
        assert_eq!(slow.content[0].as_text(), Some("slow"));
        assert_eq!(client.pending_requests(), 0);
        client.close().await;
    });
}

#[test]
fn a_panicking_on_sent_callback_is_contained_and_its_call_completes() {
    smol::block_on(async {
        let client = builder().spawn_stdio(&demo_server()).await.unwrap();
        let called = Arc::new(AtomicUsize::new(0));
        let count = called.clone();
        let options = CallOptions::default().on_sent(move |_| {
            count.fetch_add(1, Ordering::SeqCst);
            panic!("the on_sent callback panicked");
        });
        let result =
            client.call_tool_with_options("echo", json!({"message": "sent"}), options).await.unwrap();
        assert_eq!(result.content[0].as_text(), Some("sent"));
        assert_eq!(called.load(Ordering::SeqCst), 1);
        assert_eq!(client.pending_requests(), 0, "the call's slot is gone");
        // The connection is still usable, and so is a handle whose every call panics in on_sent.
        let always = client.with_options(CallOptions::default().on_sent(|_| panic!("again")));
        let again = always.call_tool("echo", json!({"message": "again"})).await.unwrap();
        assert_eq!(again.content[0].as_text(), Some("again"));
        client.ping().await.unwrap();
        assert_eq!(client.pending_requests(), 0);
        assert_eq!(client.stats().requests_cancelled, 0, "nothing was orphaned or cancelled");
        client.close().await;
    });
}
