//! A small HTTP/1.1 server on 127.0.0.1, hand-written over `std::net`, one thread per
//! connection, with keep-alive. It counts accepted connections, records every request, and
//! notes when the client closed a connection.
//!
//! Routes (by path):
//! - `/echo`: 201, the request body back with `Content-Length`, and some headers.
//! - `/fixed`: 200, `hello` with `Content-Length`.
//! - `/stream`: 200, chunked, five chunks 100 ms apart.
//! - `/slow-stream`: 200, chunked, a chunk, three seconds of silence, a last chunk.
//! - `/endless`: 200, chunked, a chunk every 20 ms until the client goes away.
//! - `/idle`: 200, chunked, a chunk, then silence for [`IDLE_PAUSE`], then a chunk every 20 ms
//!   until the client goes away.
//! - `/late-head`: nothing for [`LATE_HEAD_DELAY`], then like `/endless`.
//! - `/redirect`: 302 to `/fixed`.
//! - `/redirect-307`: 307 to `/fixed` (which keeps the method and body, if followed).
//! - `/huge-head`: 200 with one header of 1 MiB (over libcurl's limits on a response head).
//! - `/bad-header`: 200 with a header value that is not ASCII.
//! - `/truncated`: 200, chunked, one chunk, then the connection is closed mid-body.

use std::io::{self, BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

/// How long `/idle` stays silent after its first chunk.
pub(crate) const IDLE_PAUSE: Duration = Duration::from_millis(600);

/// How long `/late-head` waits before its response head.
pub(crate) const LATE_HEAD_DELAY: Duration = Duration::from_millis(400);

/// A request as the server read it.
#[derive(Debug, Clone)]
pub(crate) struct Recorded {
    /// Which accepted connection (0, 1, …) it arrived on.
    pub(crate) connection: usize,
    pub(crate) method: String,
    pub(crate) path: String,
    /// Names lowercase.
    pub(crate) headers: Vec<(String, Vec<u8>)>,
    pub(crate) body: Vec<u8>,
}

impl Recorded {
    pub(crate) fn header(&self, name: &str) -> Option<&[u8]> {
        self.headers.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_slice())
    }
}

#[derive(Default)]
struct State {
    accepted: AtomicUsize,
    requests: Mutex<Vec<Recorded>>,
    /// (connection, when the server saw that the client had closed it).
    closed: Mutex<Vec<(usize, Instant)>>,
    /// When each streaming route wrote its chunks: (path, instants).
    writes: Mutex<Vec<(String, Vec<Instant>)>>,
}

pub(crate) struct TestServer {
    pub(crate) addr: SocketAddr,
    state: Arc<State>,
}

impl TestServer {
    pub(crate) fn start() -> TestServer {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        let addr = listener.local_addr().unwrap();
        let state = Arc::new(State::default());
        let accept_state = state.clone();
        thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(stream) = stream else { return };
                let connection = accept_state.accepted.fetch_add(1, Ordering::SeqCst);
                let state = accept_state.clone();
                thread::spawn(move || serve(&state, connection, stream));
            }
        });
        TestServer { addr, state }
    }

    pub(crate) fn url(&self, path: &str) -> String {
        format!("http://{}{}", self.addr, path)
    }

    /// How many connections the server accepted.
    pub(crate) fn accepted(&self) -> usize {
        self.state.accepted.load(Ordering::SeqCst)
    }

    pub(crate) fn requests(&self) -> Vec<Recorded> {
        self.state.requests.lock().unwrap().clone()
    }

    /// When the client closed `connection`, if it did.
    pub(crate) fn closed_at(&self, connection: usize) -> Option<Instant> {
        self.state.closed.lock().unwrap().iter().find(|(c, _)| *c == connection).map(|(_, at)| *at)
    }

    /// When the streaming response to `path` wrote each chunk (the first response to it).
    pub(crate) fn writes(&self, path: &str) -> Vec<Instant> {
        let writes = self.state.writes.lock().unwrap();
        writes.iter().find(|(p, _)| p == path).map(|(_, w)| w.clone()).unwrap_or_default()
    }

    /// Waits (up to `limit`) until the client closed `connection`.
    pub(crate) fn wait_closed(&self, connection: usize, limit: Duration) -> Option<Instant> {
        let deadline = Instant::now() + limit;
        loop {
            if let Some(at) = self.closed_at(connection) {
                return Some(at);
            }
            if Instant::now() >= deadline {
                return None;
            }
            thread::sleep(Duration::from_millis(5));
        }
    }
}

/// What to do with the connection after a response.
enum After {
    KeepAlive,
    Close,
}

fn serve(state: &State, connection: usize, stream: TcpStream) {
    let mut writer = stream.try_clone().unwrap();
    let mut reader = BufReader::new(stream);
    loop {
        let request = match read_request(&mut reader, connection) {
            Ok(Some(request)) => request,
            Ok(None) | Err(_) => {
                state.closed.lock().unwrap().push((connection, Instant::now()));
                return;
            }
        };
        let path = request.path.clone();
        let body = request.body.clone();
        state.requests.lock().unwrap().push(request);
        match respond(state, &path, &body, &mut writer) {
            Ok(After::KeepAlive) => {}
            Ok(After::Close) => return,
            Err(_) => {
                // A write failed: the client went away.
                state.closed.lock().unwrap().push((connection, Instant::now()));
                return;
            }
        }
    }
}

/// Reads one request; `None` on a clean end of the connection.
fn read_request(reader: &mut BufReader<TcpStream>, connection: usize) -> io::Result<Option<Recorded>> {
    let mut line = String::new();
    if reader.read_line(&mut line)? == 0 {
        return Ok(None);
    }
    let mut parts = line.split_whitespace();
    let method = parts.next().unwrap_or_default().to_owned();
    let path = parts.next().unwrap_or_default().to_owned();
    let mut headers = Vec::new();
    loop {
        let mut raw = Vec::new();
        if reader.read_until(b'\n', &mut raw)? == 0 {
            return Err(io::ErrorKind::UnexpectedEof.into());
        }
        while raw.last().is_some_and(|b| *b == b'\n' || *b == b'\r') {
            raw.pop();
        }
        if raw.is_empty() {
            break;
        }
        let colon = raw.iter().position(|b| *b == b':').expect("header line without a colon");
        let name = String::from_utf8_lossy(&raw[..colon]).to_ascii_lowercase();
        let value = raw[colon + 1..].trim_ascii().to_vec();
        headers.push((name, value));
    }
    let length = headers
        .iter()
        .find(|(n, _)| n == "content-length")
        .map(|(_, v)| std::str::from_utf8(v).unwrap().parse::<usize>().unwrap())
        .unwrap_or(0);
    let mut body = vec![0; length];
    reader.read_exact(&mut body)?;
    Ok(Some(Recorded { connection, method, path, headers, body }))
}

fn respond(state: &State, path: &str, body: &[u8], out: &mut TcpStream) -> io::Result<After> {
    match path {
        "/echo" => {
            let head = format!(
                "HTTP/1.1 201 Created\r\nContent-Type: application/json\r\nX-Reply: yes\r\n\
                 Mcp-Session-Id: session-1\r\nX-Multi: one\r\nX-Multi: two\r\nContent-Length: {}\r\n\r\n",
                body.len()
            );
            out.write_all(head.as_bytes())?;
            out.write_all(body)?;
            Ok(After::KeepAlive)
        }
        "/fixed" => {
            out.write_all(b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 5\r\n\r\nhello")?;
            Ok(After::KeepAlive)
        }
        "/stream" => {
            stream_head(out)?;
            let mut writes = Vec::new();
            for i in 0..5 {
                if i > 0 {
                    thread::sleep(Duration::from_millis(100));
                }
                chunk(out, format!("chunk-{i}\n").as_bytes())?;
                writes.push(Instant::now());
            }
            // Recorded before the body ends, so that a client that read it all sees them.
            state.writes.lock().unwrap().push((path.to_owned(), writes));
            out.write_all(b"0\r\n\r\n")?;
            Ok(After::KeepAlive)
        }
        "/slow-stream" => {
            stream_head(out)?;
            chunk(out, b"first\n")?;
            thread::sleep(Duration::from_secs(3));
            chunk(out, b"last\n")?;
            out.write_all(b"0\r\n\r\n")?;
            Ok(After::KeepAlive)
        }
        "/endless" => {
            stream_head(out)?;
            endless(out)
        }
        "/idle" => {
            stream_head(out)?;
            chunk(out, b"first\n")?;
            thread::sleep(IDLE_PAUSE);
            state.writes.lock().unwrap().push((path.to_owned(), vec![Instant::now()]));
            endless(out)
        }
        "/late-head" => {
            thread::sleep(LATE_HEAD_DELAY);
            state.writes.lock().unwrap().push((path.to_owned(), vec![Instant::now()]));
            stream_head(out)?;
            endless(out)
        }
        "/redirect" => {
            out.write_all(b"HTTP/1.1 302 Found\r\nLocation: /fixed\r\nContent-Length: 0\r\n\r\n")?;
            Ok(After::KeepAlive)
        }
        "/redirect-307" => {
            out.write_all(
                b"HTTP/1.1 307 Temporary Redirect\r\nLocation: /fixed\r\nContent-Length: 0\r\n\r\n",
            )?;
            Ok(After::KeepAlive)
        }
        "/huge-head" => {
            // The client gives up reading: the write may fail, which ends the connection.
            let head =
                format!("HTTP/1.1 200 OK\r\nX-Huge: {}\r\nContent-Length: 0\r\n\r\n", "a".repeat(1 << 20));
            let _ = out.write_all(head.as_bytes());
            Ok(After::Close)
        }
        "/bad-header" => {
            out.write_all(b"HTTP/1.1 200 OK\r\nX-Bad: caf\xe9\r\nContent-Length: 0\r\n\r\n")?;
            Ok(After::KeepAlive)
        }
        "/truncated" => {
            stream_head(out)?;
            chunk(out, b"partial\n")?;
            out.flush()?;
            thread::sleep(Duration::from_millis(50));
            out.shutdown(std::net::Shutdown::Both)?;
            Ok(After::Close)
        }
        _ => {
            out.write_all(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n")?;
            Ok(After::KeepAlive)
        }
    }
}

fn stream_head(out: &mut TcpStream) -> io::Result<()> {
    out.write_all(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n")
}

fn chunk(out: &mut TcpStream, data: &[u8]) -> io::Result<()> {
    out.write_all(format!("{:x}\r\n", data.len()).as_bytes())?;
    out.write_all(data)?;
    out.write_all(b"\r\n")?;
    out.flush()
}

/// A chunk every 20 ms until a write fails (the client went away), for at most 10 seconds.
fn endless(out: &mut TcpStream) -> io::Result<After> {
    for i in 0..500 {
        chunk(out, format!("tick-{i}\n").as_bytes())?;
        thread::sleep(Duration::from_millis(20));
    }
    Ok(After::Close)
}
