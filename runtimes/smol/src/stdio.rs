//! Stdio servers: spawning the child, draining its stderr, and shutting it down without
//! leaving orphans or zombies.

use std::ffi::{OsStr, OsString};
use std::fmt;
use std::future::Future;
use std::io;
use std::path::PathBuf;
use std::pin::Pin;
use std::process::Stdio;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use async_process::{Child, ChildStderr, ChildStdin, ChildStdout};
use futures_lite::AsyncRead;
use rustix::process::{Pid, Signal, kill_process_group};

use crate::Error;
use crate::clock::{Clock, sleep_until};
use crate::source_waker::{SourceWaker, TaskWaker};

/// Environment variables a server inherits by default. Everything else must be passed
/// explicitly with [`ServerCommand::env`]: a server should not see the client's secrets.
pub const DEFAULT_INHERITED_ENV: &[&str] =
    &["HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER", "LANG", "LC_ALL", "LC_CTYPE", "TMPDIR", "TZ"];

/// Default wait for the server to exit after its stdin closes, and again after SIGTERM.
pub const DEFAULT_SHUTDOWN_STEP: Duration = Duration::from_secs(2);

/// Where the server's stderr lines go. It is always drained: a server blocked on a full stderr
/// pipe would stop answering.
#[derive(Clone, Default)]
pub enum StderrSink {
    /// Each line becomes a `tracing` event at INFO level, target `mcp_smol::stderr`.
    #[default]
    Tracing,
    /// Each line is passed to the callback (without its newline).
    Callback(Arc<dyn Fn(&str) + Send + Sync>),
    /// Lines are read and dropped.
    Discard,
}

impl fmt::Debug for StderrSink {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StderrSink::Tracing => f.write_str("Tracing"),
            StderrSink::Callback(_) => f.write_str("Callback(..)"),
            StderrSink::Discard => f.write_str("Discard"),
        }
    }
}

/// How to start a stdio MCP server.
///
/// The child runs in a process group of its own, so that shutdown reaches whatever it spawned.
/// Shutdown closes its stdin, waits [`shutdown_step`](Self::shutdown_step), sends SIGTERM to the
/// group, waits again, then sends SIGKILL to the group; the child is always reaped.
///
/// ```
/// use mcp_smol::ServerCommand;
///
/// let command = ServerCommand::new("npx")
///     .args(["-y", "@modelcontextprotocol/server-everything"])
///     .env("API_TOKEN", "secret")
///     .stderr_to(|line| eprintln!("server: {line}"));
/// ```
#[derive(Debug, Clone)]
pub struct ServerCommand {
    program: OsString,
    args: Vec<OsString>,
    env: Vec<(OsString, OsString)>,
    inherit: Vec<OsString>,
    cwd: Option<PathBuf>,
    stderr: StderrSink,
    shutdown_step: Duration,
}

impl ServerCommand {
    /// A command running `program` (looked up in `PATH`).
    pub fn new(program: impl AsRef<OsStr>) -> Self {
        Self {
            program: program.as_ref().to_owned(),
            args: Vec::new(),
            env: Vec::new(),
            inherit: DEFAULT_INHERITED_ENV.iter().map(OsString::from).collect(),
            cwd: None,
            stderr: StderrSink::default(),
            shutdown_step: DEFAULT_SHUTDOWN_STEP,
        }
    }

    /// Adds one argument.
    pub fn arg(mut self, arg: impl AsRef<OsStr>) -> Self {
        self.args.push(arg.as_ref().to_owned());
        self
    }

    /// Adds arguments.
    pub fn args<I: IntoIterator<Item = S>, S: AsRef<OsStr>>(mut self, args: I) -> Self {
        self.args.extend(args.into_iter().map(|a| a.as_ref().to_owned()));
        self
    }

    /// Sets an environment variable for the server.
    pub fn env(mut self, key: impl AsRef<OsStr>, value: impl AsRef<OsStr>) -> Self {
        self.env.push((key.as_ref().to_owned(), value.as_ref().to_owned()));
        self
    }

    /// Also passes the client's value of `key` through, if set.
    pub fn inherit_env(mut self, key: impl AsRef<OsStr>) -> Self {
        self.inherit.push(key.as_ref().to_owned());
        self
    }

    /// Passes nothing from the client's environment but what [`env`](Self::env) sets.
    pub fn clear_inherited_env(mut self) -> Self {
        self.inherit.clear();
        self
    }

    /// Runs the server in `dir`.
    pub fn current_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.cwd = Some(dir.into());
        self
    }

    /// Sends the server's stderr lines to `f`.
    pub fn stderr_to(mut self, f: impl Fn(&str) + Send + Sync + 'static) -> Self {
        self.stderr = StderrSink::Callback(Arc::new(f));
        self
    }

    /// Chooses where the server's stderr lines go.
    pub fn stderr(mut self, sink: StderrSink) -> Self {
        self.stderr = sink;
        self
    }

    /// Sets each wait of the shutdown sequence (the longest shutdown takes twice this, plus
    /// the moment SIGKILL needs).
    pub fn shutdown_step(mut self, step: Duration) -> Self {
        self.shutdown_step = step;
        self
    }

    /// The program's name, for messages.
    pub fn program(&self) -> String {
        self.program.to_string_lossy().into_owned()
    }

    /// What tells one server configuration from another: the program, its arguments and the
    /// working directory (for the era cache).
    pub(crate) fn identity(&self) -> String {
        let mut identity = self.program();
        for arg in &self.args {
            identity.push('\0');
            identity.push_str(&arg.to_string_lossy());
        }
        if let Some(cwd) = &self.cwd {
            identity.push_str("\0cwd=");
            identity.push_str(&cwd.to_string_lossy());
        }
        identity
    }

    pub(crate) fn spawn(&self) -> Result<SpawnedServer, Error> {
        let mut std_command = std::process::Command::new(&self.program);
        std_command.args(&self.args).env_clear();
        for key in &self.inherit {
            if let Some(value) = std::env::var_os(key) {
                std_command.env(key, value);
            }
        }
        std_command.envs(self.env.iter().map(|(k, v)| (k, v)));
        if let Some(cwd) = &self.cwd {
            std_command.current_dir(cwd);
        }
        std::os::unix::process::CommandExt::process_group(&mut std_command, 0);
        let mut command = async_process::Command::from(std_command);
        command.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped()).kill_on_drop(true);
        let spawn_error = |source| Error::Spawn { program: self.program(), source };
        let mut child = command.spawn().map_err(spawn_error)?;
        let missing = || spawn_error(std::io::Error::other("a stdio pipe was not created"));
        let stdin = child.stdin.take().ok_or_else(missing)?;
        let stdout = child.stdout.take().ok_or_else(missing)?;
        let stderr = child.stderr.take().ok_or_else(missing)?;
        let pid = child.id();
        tracing::debug!(pid, program = %self.program(), "server process started");
        let status = child.status();
        let exit: BoxFuture = Box::pin(async move {
            // If the exit cannot be watched, the stdout pipe's own EOF is all there is.
            if status.await.is_err() {
                std::future::pending::<()>().await;
            }
        });
        Ok(SpawnedServer {
            stdin,
            stdout: ServerStdout::new(stdout, exit),
            stderr,
            process: ServerProcess {
                child: Some(child),
                group: Pid::from_raw(i32::try_from(pid).unwrap_or(0)),
                step: self.shutdown_step,
            },
            stderr_sink: self.stderr.clone(),
        })
    }
}

pub(crate) struct SpawnedServer {
    pub(crate) stdin: ChildStdin,
    pub(crate) stdout: ServerStdout,
    pub(crate) stderr: ChildStderr,
    pub(crate) process: ServerProcess,
    pub(crate) stderr_sink: StderrSink,
}

type BoxFuture = Pin<Box<dyn Future<Output = ()> + Send>>;

/// The server's stdout, which also ends when the server process exits.
///
/// A pipe reaches EOF only once every process holding its write end has closed it, and the
/// server's children inherit it: without this, a server that exits (or crashes) while a process
/// it started lives on would leave its pending requests waiting for their timeouts, and the
/// connection looking ready. Everything the server wrote before it exited is in the pipe by
/// then, so it is still read; the first read after the exit that would wait reports EOF.
pub(crate) struct ServerStdout {
    pipe: ChildStdout,
    /// Resolves when the process has exited; `None` once it has.
    exit: Option<BoxFuture>,
    /// Polls `exit` only when it woke: polling it asks the OS (`wait4`) and takes locks, which
    /// per read would add several system calls to every round trip.
    task: Arc<TaskWaker>,
    exit_news: SourceWaker,
}

impl ServerStdout {
    fn new(pipe: ChildStdout, exit: BoxFuture) -> Self {
        let task = Arc::new(TaskWaker::default());
        Self { pipe, exit: Some(exit), exit_news: SourceWaker::new(task.clone()), task }
    }
}

impl AsyncRead for ServerStdout {
    fn poll_read(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut [u8]) -> Poll<io::Result<usize>> {
        let this = &mut *self;
        let read = Pin::new(&mut this.pipe).poll_read(cx, buf);
        if read.is_ready() {
            return read;
        }
        if let Some(exit) = this.exit.as_mut() {
            this.task.update(cx);
            if !this.exit_news.take() || exit.as_mut().poll(&mut this.exit_news.context()).is_pending() {
                return Poll::Pending;
            }
            this.exit = None;
            // The process may have written its last bytes between the read above and its
            // exit: read once more before reporting the end.
            let read = Pin::new(&mut this.pipe).poll_read(cx, buf);
            if read.is_ready() {
                return read;
            }
        }
        Poll::Ready(Ok(0))
    }
}

/// The child process and its group. Dropping it kills the whole group at once (synchronously:
/// a signal, no async work), which is the last resort when the driver never ran its shutdown.
pub(crate) struct ServerProcess {
    child: Option<Child>,
    group: Option<Pid>,
    step: Duration,
}

impl ServerProcess {
    pub(crate) fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(Child::id)
    }

    /// The graceful sequence, to run after the child's stdin was closed: wait, SIGTERM the
    /// group, wait, SIGKILL the group. Grandchildren left in the group are killed even when the
    /// child itself exits in time. The child stays in `self` until it is reaped, so dropping
    /// this future half-way (the driver was dropped) still kills the group. The waits are in
    /// the connection's `clock`.
    pub(crate) async fn shutdown(mut self, clock: Arc<dyn Clock>) {
        let step = self.step;
        let group = self.group;
        let Some(child) = self.child.as_mut() else { return };
        let mut exited = wait_for(child, &*clock, step).await;
        if !exited {
            tracing::debug!(pid = child.id(), "server still running after stdin closed: SIGTERM");
            signal_group(group, Signal::TERM);
            exited = wait_for(child, &*clock, step).await;
        }
        if !exited {
            tracing::warn!(pid = child.id(), "server ignored SIGTERM: SIGKILL");
        }
        // Always: the child may be gone while something it spawned lingers in the group. A
        // group id stays reserved while the group has members; once it is empty, the id could
        // in theory be reused between the reap and this signal (the reap is above, or when
        // `ServerStdout` saw the exit, just before its EOF closed the connection), a short
        // window that the kernel's sequential pid allocation makes practically unreachable.
        signal_group(group, Signal::KILL);
        if !exited {
            let _ = child.status().await;
        }
        self.child = None;
        self.group = None;
    }
}

fn signal_group(group: Option<Pid>, signal: Signal) {
    if let Some(group) = group {
        // ESRCH (nobody left in the group) is the expected, good outcome.
        let _ = kill_process_group(group, signal);
    }
}

impl Drop for ServerProcess {
    fn drop(&mut self) {
        // The driver never finished its shutdown (it was dropped): kill the group now. The
        // child's own Drop (kill_on_drop) hands it to async-process's reaper, so no zombie stays.
        if self.child.is_some() {
            signal_group(self.group, Signal::KILL);
        }
    }
}

/// Waits up to `limit` (of `clock`'s time) for the child to exit; `true` if it did.
async fn wait_for(child: &mut Child, clock: &dyn Clock, limit: Duration) -> bool {
    let exited = async { child.status().await.is_ok() };
    let timeout = async {
        match clock.now().checked_add(limit) {
            Some(at) => sleep_until(clock, at).await,
            None => std::future::pending().await,
        }
        false
    };
    futures_lite::future::or(exited, timeout).await
}

/// Longest stderr line kept; the rest of a longer line is dropped, so a server printing
/// without newlines cannot grow the client's memory.
const MAX_STDERR_LINE: usize = 16 * 1024;

/// Reads the server's stderr line by line into the sink until EOF.
pub(crate) async fn drain_stderr(mut stderr: ChildStderr, sink: StderrSink, pid: u32) {
    use futures_lite::AsyncReadExt;
    let mut buf = vec![0u8; 8 * 1024];
    let mut line = Vec::new();
    let mut truncated = false;
    loop {
        let n = match stderr.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        for piece in buf[..n].split_inclusive(|&b| b == b'\n') {
            let (body, ends) = match piece.strip_suffix(b"\n") {
                Some(body) => (body, true),
                None => (piece, false),
            };
            let room = MAX_STDERR_LINE.saturating_sub(line.len());
            truncated |= body.len() > room;
            line.extend_from_slice(&body[..body.len().min(room)]);
            if ends {
                emit_stderr(&sink, pid, &line, truncated);
                line.clear();
                truncated = false;
            }
        }
    }
    if !line.is_empty() {
        emit_stderr(&sink, pid, &line, truncated);
    }
}

fn emit_stderr(sink: &StderrSink, pid: u32, line: &[u8], truncated: bool) {
    let text = String::from_utf8_lossy(line);
    let text = text.trim_end_matches('\r');
    let ellipsis = if truncated { " [...]" } else { "" };
    match sink {
        StderrSink::Tracing => tracing::info!(target: "mcp_smol::stderr", pid, "{text}{ellipsis}"),
        StderrSink::Callback(f) if truncated => f(&format!("{text}{ellipsis}")),
        StderrSink::Callback(f) => f(text),
        StderrSink::Discard => {}
    }
}
