//! The route between the calls that drive the connection, with the driver's watch switched
//! off: a call that ends, is dropped or is never polled again never leaves the connection's
//! news stranded on its task. Everything is polled by hand on this thread, with wakers that
//! count, against the demo server: what is asserted is who gets woken.

mod common;

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::task::{Context, Poll, Wake, Waker};
use std::time::{Duration, Instant};

use common::{builder, demo_server};
use mcp_smol::mcp_sansio::schema::{CallTool, CallToolRequestParams, CallToolResult};
use mcp_smol::{CallOptions, Client, Driver, Error};
use serde_json::json;

/// How long any step may take.
const LIMIT: Duration = Duration::from_secs(10);

/// A future polled by hand, with a waker that counts its wake-ups.
struct Probe<T> {
    future: Option<Pin<Box<dyn Future<Output = T> + Send>>>,
    wakes: Arc<Count>,
    /// Wake-ups already followed by a poll.
    seen: usize,
}

#[derive(Default)]
struct Count(AtomicUsize);

impl Wake for Count {
    fn wake(self: Arc<Self>) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

impl<T> Probe<T> {
    fn new(future: impl Future<Output = T> + Send + 'static) -> Self {
        Probe { future: Some(Box::pin(future)), wakes: Arc::default(), seen: 0 }
    }

    fn wakes(&self) -> usize {
        self.wakes.0.load(Ordering::SeqCst)
    }

    /// Whether it was woken since it was last polled.
    fn woken(&self) -> bool {
        self.wakes() > self.seen
    }

    fn poll(&mut self) -> Poll<T> {
        self.seen = self.wakes();
        let waker = Waker::from(self.wakes.clone());
        let future = self.future.as_mut().expect("polled after it resolved");
        let polled = future.as_mut().poll(&mut Context::from_waker(&waker));
        if polled.is_ready() {
            self.future = None;
        }
        polled
    }

    /// Polls it if it was woken.
    fn poll_if_woken(&mut self) -> Poll<T> {
        if self.woken() { self.poll() } else { Poll::Pending }
    }
}

type Call = Probe<Result<CallToolResult, Error>>;

fn call(client: &Client, tool: &str, arguments: serde_json::Value) -> Call {
    let params = CallToolRequestParams::new(tool).with_arguments(arguments.as_object().unwrap().clone());
    Probe::new(client.request::<CallTool>(&params, CallOptions::default()))
}

/// A connection whose driver is polled by hand, without its watch, made ready.
fn connect() -> (Client, Probe<()>) {
    let (client, driver): (Client, Driver) = builder().without_driver_watch().stdio(&demo_server()).unwrap();
    let mut driver = Probe::new(driver);
    let ready = {
        let client = client.clone();
        Probe::new(async move { client.ready().await })
    };
    let mut ready = ready;
    let start = Instant::now();
    assert!(driver.poll().is_pending());
    loop {
        let _ = driver.poll_if_woken();
        if let Poll::Ready(outcome) = ready.poll() {
            outcome.unwrap();
            return (client, driver);
        }
        assert!(start.elapsed() < LIMIT, "no handshake");
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// Polls `driver` when woken (and every 10 ms if `eager`, as an executor may) until `done`.
fn run_driver_until(driver: &mut Probe<()>, eager: bool, mut done: impl FnMut(&Probe<()>) -> bool) -> bool {
    let start = Instant::now();
    let mut last = Instant::now();
    while start.elapsed() < LIMIT {
        if driver.woken() || (eager && last.elapsed() >= Duration::from_millis(10)) {
            let _ = driver.poll();
            last = Instant::now();
        }
        if done(driver) {
            return true;
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    false
}

/// A drives; B waits, polled once; A ends: returns the connection with B still pending.
fn a_ends_while_b_waits(eager: bool) -> (Client, Probe<()>, Call) {
    let (client, mut driver) = connect();
    let mut a = call(&client, "sleep", json!({"ms": 30}));
    let mut b = call(&client, "sleep", json!({"ms": 300}));
    assert!(a.poll().is_pending(), "A waits, and drives");
    assert!(b.poll().is_pending(), "B waits behind it");
    let start = Instant::now();
    loop {
        if let Poll::Ready(result) = a.poll_if_woken() {
            result.unwrap();
            break;
        }
        if driver.woken() || eager {
            let _ = driver.poll();
        }
        assert!(start.elapsed() < LIMIT, "A never finished");
        std::thread::sleep(Duration::from_millis(1));
    }
    (client, driver, b)
}

/// After `finished` ended: news for a call nobody polls (C) wakes the driver's task, which
/// delivers it, and never wakes `finished`'s task again.
fn news_goes_to_the_driver<T>(client: &Client, driver: &mut Probe<()>, finished: &Probe<T>) {
    let wakes = finished.wakes();
    let driver_wakes = driver.wakes();
    let mut c = call(client, "sleep", json!({"ms": 50}));
    // C is not polled: only the driver's task can follow its answer.
    assert!(
        run_driver_until(driver, false, |driver| driver.wakes() > driver_wakes),
        "the driver was not woken"
    );
    std::thread::sleep(Duration::from_millis(150));
    let _ = driver.poll_if_woken();
    assert_eq!(finished.wakes(), wakes, "a finished call's task was woken for the connection's news");
    match c.poll() {
        Poll::Ready(result) => assert_eq!(result.unwrap().content[0].as_text(), Some("slept 50 ms")),
        Poll::Pending => panic!("C's answer was not delivered by the driver's task"),
    }
}

#[test]
fn a_successor_finished_by_the_drivers_pump_leaves_nothing_behind() {
    let (client, mut driver, mut b) = a_ends_while_b_waits(true);
    // B is not polled until its answer is in: the driver's task (polled when woken, and now
    // and then, as an executor may) delivers it; only then does B's task poll it, and B ends
    // without having pumped.
    let start = Instant::now();
    run_driver_until(&mut driver, true, |_| start.elapsed() > Duration::from_millis(500));
    match b.poll() {
        Poll::Ready(result) => assert_eq!(result.unwrap().content[0].as_text(), Some("slept 300 ms")),
        Poll::Pending => panic!("B's answer was not there"),
    }
    news_goes_to_the_driver(&client, &mut driver, &b);
}

#[test]
fn a_successor_dropped_leaves_nothing_behind() {
    let (client, mut driver, b) = a_ends_while_b_waits(false);
    let wakes = Arc::clone(&b.wakes);
    drop(b);
    let dropped = Probe::<()> { future: None, wakes, seen: 0 };
    news_goes_to_the_driver(&client, &mut driver, &dropped);
}

#[test]
fn a_successor_never_polled_again_leaves_nothing_behind() {
    let (client, mut driver, b) = a_ends_while_b_waits(false);
    // B's task runs on but never polls B again (a future set aside); B stays alive.
    news_goes_to_the_driver(&client, &mut driver, &b);
    // B's own answer arrives meanwhile and is delivered all the same.
    let before = b.wakes();
    let mut b = b;
    assert!(run_driver_until(&mut driver, false, |_| b.wakes() > before), "B's answer was not delivered");
    assert!(matches!(b.poll(), Poll::Ready(Ok(_))));
}
