//! A live server at the wire level: send any bytes as one message, receive whatever comes back.
//!
//! `replay` and `check` speak to servers through this, not through the engine, because they
//! must be able to send what a correct client never would (malformed JSON, unknown methods,
//! recorded ids) and see exactly what the server answers.

use std::io;
use std::process::Stdio;
use std::time::Duration;

use async_process::{Child, ChildStdin, Command};
use futures_lite::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, io::BufReader};

use crate::http_peer::HttpPeer;
use crate::trace::HttpMeta;

/// Something a live server sent, or its end.
#[derive(Debug, Clone)]
pub enum Incoming {
    /// One message: a JSON text, or a line that was not JSON. Over HTTP, with the exchange
    /// that carried it.
    Message {
        /// The bytes of the message (no trailing newline).
        bytes: Vec<u8>,
        /// The HTTP exchange (HTTP only).
        http: Option<HttpMeta>,
    },
    /// Over HTTP: an exchange that ended without a message (`202 Accepted`, or an error status
    /// without a JSON-RPC body).
    Empty(HttpMeta),
    /// The server is gone: its stdout closed (with how it exited, when known), or over HTTP an
    /// exchange failed at the connection level. Nothing more will arrive on stdio.
    Closed(String),
}

/// How to reach the server under test.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// A server started as a child process speaking newline-delimited JSON on stdio.
    Stdio {
        /// The program and its arguments.
        command: Vec<String>,
    },
    /// A Streamable HTTP endpoint.
    Http {
        /// The MCP endpoint URL.
        url: String,
        /// Extra headers for every request (for example `Authorization`).
        headers: Vec<(String, String)>,
    },
}

impl Target {
    /// A stdio target from a command line.
    pub fn stdio<S: Into<String>>(command: impl IntoIterator<Item = S>) -> Self {
        Target::Stdio { command: command.into_iter().map(Into::into).collect() }
    }

    /// An HTTP target.
    pub fn http(url: impl Into<String>) -> Self {
        Target::Http { url: url.into(), headers: Vec::new() }
    }

    /// What a trace header calls this server.
    pub fn identity(&self) -> crate::trace::ServerIdentity {
        match self {
            Target::Stdio { command } => {
                crate::trace::ServerIdentity { command: Some(command.clone()), ..Default::default() }
            }
            Target::Http { url, .. } => {
                crate::trace::ServerIdentity { url: Some(url.clone()), ..Default::default() }
            }
        }
    }

    /// The transport.
    pub fn transport(&self) -> crate::trace::Transport {
        match self {
            Target::Stdio { .. } => crate::trace::Transport::Stdio,
            Target::Http { .. } => crate::trace::Transport::Http,
        }
    }
}

/// A connection to a live server.
#[derive(Debug)]
pub enum LivePeer {
    /// A child process.
    Stdio(StdioPeer),
    /// An HTTP endpoint.
    Http(HttpPeer),
}

impl LivePeer {
    /// Starts (stdio) or prepares (HTTP) a connection to `target`.
    pub async fn connect(target: &Target) -> io::Result<Self> {
        match target {
            Target::Stdio { command } => Ok(LivePeer::Stdio(StdioPeer::spawn(command)?)),
            Target::Http { url, headers } => Ok(LivePeer::Http(HttpPeer::new(url, headers.clone())?)),
        }
    }

    /// Sends one message. Over HTTP `headers` are added to the `POST` (recorded `Mcp-*`
    /// headers); over stdio they are ignored.
    pub async fn send(&mut self, bytes: &[u8], headers: &[(String, String)]) -> io::Result<()> {
        match self {
            LivePeer::Stdio(peer) => peer.send(bytes).await,
            LivePeer::Http(peer) => peer.send(bytes, headers).await,
        }
    }

    /// Opens the server-message stream (an HTTP `GET`); nothing to do over stdio.
    pub async fn open_stream(&mut self) -> io::Result<()> {
        match self {
            LivePeer::Stdio(_) => Ok(()),
            LivePeer::Http(peer) => peer.open_stream().await,
        }
    }

    /// The number of the HTTP exchange the last [`send`](Self::send) started; `None` over
    /// stdio.
    pub fn last_exchange(&self) -> Option<u64> {
        match self {
            LivePeer::Stdio(_) => None,
            LivePeer::Http(peer) => Some(peer.exchanges()),
        }
    }

    /// The next thing the server sent, waiting at most `timeout`; `None` when nothing came.
    pub async fn recv(&mut self, timeout: Duration) -> Option<Incoming> {
        let incoming = match self {
            LivePeer::Stdio(peer) => peer.incoming.clone(),
            LivePeer::Http(peer) => peer.incoming(),
        };
        futures_lite::future::or(async { incoming.recv().await.ok() }, async {
            async_io::Timer::after(timeout).await;
            None
        })
        .await
    }

    /// Ends the connection: closes a child's stdin, then kills it if it has not exited within
    /// `grace`; over HTTP ends the session (`DELETE`) and drops open streams.
    pub async fn shutdown(self, grace: Duration) {
        match self {
            LivePeer::Stdio(peer) => peer.shutdown(grace).await,
            LivePeer::Http(peer) => peer.shutdown().await,
        }
    }

    /// The stderr a stdio server wrote so far (at most the last 64 KiB); empty over HTTP.
    pub fn stderr_tail(&self) -> String {
        match self {
            LivePeer::Stdio(peer) => peer.stderr_tail(),
            LivePeer::Http(_) => String::new(),
        }
    }
}

/// A server child process: lines to its stdin, lines from its stdout.
#[derive(Debug)]
pub struct StdioPeer {
    child: Child,
    stdin: Option<ChildStdin>,
    incoming: async_channel::Receiver<Incoming>,
    stderr: std::sync::Arc<std::sync::Mutex<Vec<u8>>>,
    tasks: Vec<smol::Task<()>>,
}

const STDERR_KEEP: usize = 64 * 1024;

impl StdioPeer {
    /// Starts `command` with piped stdio.
    pub fn spawn(command: &[String]) -> io::Result<Self> {
        let (program, args) = command
            .split_first()
            .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "empty server command"))?;
        let mut child = Command::new(program)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .map_err(|e| io::Error::new(e.kind(), format!("cannot start {program}: {e}")))?;
        let stdin = child.stdin.take();
        let stdout = child.stdout.take().expect("piped stdout");
        let stderr = child.stderr.take().expect("piped stderr");
        let (tx, incoming) = async_channel::unbounded();
        let reader = smol::spawn(async move {
            let mut lines = BufReader::new(stdout);
            let mut line = Vec::new();
            loop {
                line.clear();
                match lines.read_until(b'\n', &mut line).await {
                    Ok(0) => {
                        let _ = tx.send(Incoming::Closed("the server closed its stdout".into())).await;
                        break;
                    }
                    Ok(_) => {
                        while line.last().is_some_and(|b| *b == b'\n' || *b == b'\r') {
                            line.pop();
                        }
                        if line.iter().all(u8::is_ascii_whitespace) {
                            continue;
                        }
                        if tx.send(Incoming::Message { bytes: line.clone(), http: None }).await.is_err() {
                            break;
                        }
                    }
                    Err(e) => {
                        let _ = tx
                            .send(Incoming::Closed(format!("reading the server's stdout failed: {e}")))
                            .await;
                        break;
                    }
                }
            }
        });
        let kept = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let sink = kept.clone();
        let drain = smol::spawn(async move {
            let mut stderr = stderr;
            let mut buf = [0u8; 4096];
            while let Ok(n) = stderr.read(&mut buf).await {
                if n == 0 {
                    break;
                }
                let mut kept = sink.lock().unwrap_or_else(|e| e.into_inner());
                kept.extend_from_slice(&buf[..n]);
                if kept.len() > STDERR_KEEP {
                    let cut = kept.len() - STDERR_KEEP;
                    kept.drain(..cut);
                }
            }
        });
        Ok(Self { child, stdin, incoming, stderr: kept, tasks: vec![reader, drain] })
    }

    /// Writes `bytes` and a newline.
    pub async fn send(&mut self, bytes: &[u8]) -> io::Result<()> {
        let stdin = self
            .stdin
            .as_mut()
            .ok_or_else(|| io::Error::new(io::ErrorKind::BrokenPipe, "stdin is closed"))?;
        let mut line = Vec::with_capacity(bytes.len() + 1);
        line.extend_from_slice(bytes);
        line.push(b'\n');
        stdin.write_all(&line).await?;
        stdin.flush().await
    }

    /// The child's process id.
    pub fn id(&self) -> u32 {
        self.child.id()
    }

    /// How the child exited, if it has.
    pub fn exit_status(&mut self) -> Option<std::process::ExitStatus> {
        self.child.try_status().ok().flatten()
    }

    fn stderr_tail(&self) -> String {
        String::from_utf8_lossy(&self.stderr.lock().unwrap_or_else(|e| e.into_inner())).into_owned()
    }

    /// Closes stdin, waits up to `grace` for the child to exit, then kills it and reaps it.
    pub async fn shutdown(mut self, grace: Duration) {
        drop(self.stdin.take());
        let exited = futures_lite::future::or(async { self.child.status().await.ok() }, async {
            async_io::Timer::after(grace).await;
            None
        })
        .await;
        if exited.is_none() {
            let _ = self.child.kill();
            let _ = self.child.status().await;
        }
        for task in self.tasks.drain(..) {
            task.cancel().await;
        }
    }
}
