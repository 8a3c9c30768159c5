//! A real HTTP/1.1 server for the tests: hyper's server on smol, on 127.0.0.1:0, counting the
//! connections it accepts and sees closed, and recording every request.
//!
//! Routes (any method):
//! - `/echo`: 201, `x-reply: yes`, the request body back;
//! - `/fixed`: 200, `hello` with a `Content-Length`;
//! - `/empty`: 204, no body;
//! - `/stream`: 200, chunked, `chunk0\n`..`chunk3\n`, 100 ms apart;
//! - `/forever`: 200, chunked, a chunk every 20 ms until the client goes away;
//! - `/slow-head`: the response head after 1 s.

use std::convert::Infallible;
use std::net::{SocketAddr, TcpListener};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_io::{Async, Timer};
use bytes::Bytes;
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full, StreamBody};
use hyper::body::{Frame, Incoming};
use hyper::service::service_fn;
use hyper::{Request, Response};
use smol_hyper::rt::FuturesIo;

/// A request as the server received it.
#[derive(Debug, Clone)]
pub(crate) struct Recorded {
    pub(crate) method: String,
    pub(crate) path: String,
    /// Lowercase names, in order.
    pub(crate) headers: Vec<(String, Vec<u8>)>,
    pub(crate) body: Vec<u8>,
}

impl Recorded {
    pub(crate) fn header(&self, name: &str) -> Option<&[u8]> {
        self.headers.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_slice())
    }
}

#[derive(Default)]
struct Shared {
    accepted: AtomicUsize,
    closed: AtomicUsize,
    requests: Mutex<Vec<Recorded>>,
}

pub(crate) struct TestServer {
    pub(crate) addr: SocketAddr,
    shared: Arc<Shared>,
    _accept: smol::Task<()>,
}

impl TestServer {
    pub(crate) fn start() -> Self {
        let listener = Async::<TcpListener>::bind(([127, 0, 0, 1], 0)).expect("bind");
        let addr = listener.get_ref().local_addr().expect("local addr");
        let shared = Arc::new(Shared::default());
        let accept = smol::spawn({
            let shared = Arc::clone(&shared);
            async move {
                loop {
                    let Ok((stream, _)) = listener.accept().await else { return };
                    shared.accepted.fetch_add(1, Ordering::SeqCst);
                    let shared = Arc::clone(&shared);
                    smol::spawn(async move {
                        let service = service_fn(|req| handle(req, Arc::clone(&shared)));
                        let _ = hyper::server::conn::http1::Builder::new()
                            .serve_connection(FuturesIo::new(stream), service)
                            .await;
                        shared.closed.fetch_add(1, Ordering::SeqCst);
                    })
                    .detach();
                }
            }
        });
        Self { addr, shared, _accept: accept }
    }

    pub(crate) fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    /// Connections accepted so far.
    pub(crate) fn accepted(&self) -> usize {
        self.shared.accepted.load(Ordering::SeqCst)
    }

    /// Connections that ended so far.
    pub(crate) fn closed(&self) -> usize {
        self.shared.closed.load(Ordering::SeqCst)
    }

    /// Waits up to 1 s for `closed()` to reach `n`; returns whether it did.
    pub(crate) async fn wait_closed(&self, n: usize) -> bool {
        for _ in 0..100 {
            if self.closed() >= n {
                return true;
            }
            Timer::after(Duration::from_millis(10)).await;
        }
        self.closed() >= n
    }

    pub(crate) fn requests(&self) -> Vec<Recorded> {
        self.shared.requests.lock().unwrap().clone()
    }
}

type Body = BoxBody<Bytes, Infallible>;

fn full(data: impl Into<Bytes>) -> Body {
    Full::new(data.into()).boxed()
}

/// Chunks from `next(i)` for i = 0, 1, … until it returns `None`, `gap` apart.
fn chunked(gap: Duration, next: fn(usize) -> Option<String>) -> Body {
    let stream = futures_lite::stream::unfold(0usize, move |i| async move {
        if i > 0 {
            Timer::after(gap).await;
        }
        next(i).map(|chunk| (Ok::<_, Infallible>(Frame::data(Bytes::from(chunk))), i + 1))
    });
    StreamBody::new(stream).boxed()
}

async fn handle(req: Request<Incoming>, shared: Arc<Shared>) -> Result<Response<Body>, Infallible> {
    let (parts, body) = req.into_parts();
    let body = body.collect().await.map(|b| b.to_bytes().to_vec()).unwrap_or_default();
    let path = parts.uri.path().to_owned();
    shared.requests.lock().unwrap().push(Recorded {
        method: parts.method.as_str().to_owned(),
        path: path.clone(),
        headers: parts.headers.iter().map(|(n, v)| (n.as_str().to_owned(), v.as_bytes().to_vec())).collect(),
        body: body.clone(),
    });
    let response = match path.as_str() {
        "/echo" => Response::builder().status(201).header("x-reply", "yes").body(full(body)),
        "/fixed" => Response::builder().header("content-type", "text/plain").body(full("hello")),
        "/empty" => Response::builder().status(204).body(full(Bytes::new())),
        "/stream" => Response::builder()
            .body(chunked(Duration::from_millis(100), |i| (i < 4).then(|| format!("chunk{i}\n")))),
        "/forever" => {
            Response::builder().body(chunked(Duration::from_millis(20), |i| Some(format!("tick{i}\n"))))
        }
        "/slow-head" => {
            Timer::after(Duration::from_secs(1)).await;
            Response::builder().body(full("late"))
        }
        _ => Response::builder().status(404).body(full("not found")),
    };
    Ok(response.expect("valid response"))
}
