//! Stdio servers: spawning the child, draining its stderr, and shutting it down without
//! leaving orphans or zombies.

use std::ffi::{OsStr, OsString};
use std::fmt;
use std::future::Future;
use std::io;
use std::os::fd::{AsFd, OwnedFd};
use std::path::PathBuf;
use std::pin::Pin;
use std::process::Stdio;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use async_process::{Child, ChildStderr, ChildStdin, ChildStdout};
use futures_lite::AsyncRead;
use mcp_sansio::ServerExit;
use rustix::process::{Pid, Signal, kill_process_group};

use crate::Error;
use crate::clock::{Clock, sleep_until};
use crate::pipe::StdoutPipe;
use crate::source_waker::{SourceWaker, TaskWaker};

/// Environment variables a server inherits by default. Everything else must be passed
/// explicitly with [`ServerCommand::env`]: a server should not see the client's secrets.
pub const DEFAULT_INHERITED_ENV: &[&str] =
    &["HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER", "LANG", "LC_ALL", "LC_CTYPE", "TMPDIR", "TZ"];

/// Default wait for the server to exit after its stdin closes, and again after SIGTERM.
pub const DEFAULT_SHUTDOWN_STEP: Duration = Duration::from_secs(2);

/// How a stdio server's process ended, as [`Client::close`](crate::Client::close) reports it.
///
/// ```
/// # use mcp_smol::{EndedBy, ServerEnd};
/// fn describe(end: &ServerEnd) -> String {
///     match end.by {
///         EndedBy::Sigkill => format!("had to be killed ({end})"),
///         _ => end.to_string(),
///     }
/// }
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct ServerEnd {
    /// What ended it.
    pub by: EndedBy,
    /// Its exit status; `None` if the operating system would not tell it.
    pub exit: Option<ServerExit>,
}

/// What ended a stdio server's process (see [`ServerCommand`] for the shutdown sequence).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum EndedBy {
    /// It exited on its own before its stdin was closed (it crashed, or chose to).
    Itself,
    /// It exited once its stdin closed, within the first
    /// [`shutdown_step`](ServerCommand::shutdown_step).
    StdinClosed,
    /// It exited after SIGTERM, within the second step.
    Sigterm,
    /// It outlasted both steps: SIGKILL.
    Sigkill,
}

impl fmt::Display for ServerEnd {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.exit {
            Some(exit) => write!(f, "{exit}")?,
            None => f.write_str("ended")?,
        }
        f.write_str(match self.by {
            EndedBy::Itself => " on its own",
            EndedBy::StdinClosed => " once its stdin closed",
            EndedBy::Sigterm => " after SIGTERM",
            EndedBy::Sigkill => " after ignoring its stdin closing and SIGTERM",
        })
    }
}

/// The platform-neutral exit status of `status`; `None` when it says neither code nor signal.
pub(crate) fn server_exit(status: std::process::ExitStatus) -> Option<ServerExit> {
    use std::os::unix::process::ExitStatusExt;
    status.code().map(ServerExit::Code).or_else(|| status.signal().map(ServerExit::Signal))
}

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
/// group, waits again, then sends SIGKILL to the group; the child is always reaped. The first
/// step counts from the moment the connection closed: writing what was still queued for the
/// server comes out of it, so a whole shutdown takes at most twice the step. What the server
/// writes to its stdout meanwhile is read and dropped: its last answers (to the requests the
/// close cancelled) do not fail, so a server that would stop at a failed write still exits once
/// its stdin closes.
/// [`Client::close`](crate::Client::close) reports how the server ended ([`ServerEnd`]).
///
/// The server's exit status also ends its connection: a server that exits closes it with
/// [`CloseReason::Exited`](mcp_sansio::CloseReason::Exited), which every pending call's error
/// carries ("the server process ended: exited with status 3", "…: killed by signal 9"). A
/// server that closes its stdout and lives on closes it with
/// [`CloseReason::Eof`](mcp_sansio::CloseReason::Eof), 100 ms later.
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
    /// the moment SIGKILL needs, however much was left to write to the server).
    pub fn shutdown_step(mut self, step: Duration) -> Self {
        self.shutdown_step = step;
        self
    }

    /// The program's name, for messages.
    pub fn program(&self) -> String {
        self.program.to_string_lossy().into_owned()
    }

    /// What tells one server configuration from another, for the era cache: the program, its
    /// arguments, the working directory and the environment it gets (inherited values as they
    /// are now, and explicit ones). The environment is hashed: it may hold secrets, and the key
    /// is logged.
    pub(crate) fn identity(&self) -> String {
        use std::hash::{Hash, Hasher};
        let mut identity = self.program();
        for arg in &self.args {
            identity.push('\0');
            identity.push_str(&arg.to_string_lossy());
        }
        if let Some(cwd) = &self.cwd {
            identity.push_str("\0cwd=");
            identity.push_str(&cwd.to_string_lossy());
        }
        // The same value for the same environment within this process, which the cache
        // outlives no more.
        let mut hasher = std::collections::hash_map::DefaultHasher::new();
        self.environment().hash(&mut hasher);
        identity.push_str(&format!("\0env={:016x}", hasher.finish()));
        identity
    }

    /// The server's whole environment: the inherited variables the client has, then the
    /// explicit ones (a later value of a key replaces an earlier one), sorted by key.
    fn environment(&self) -> std::collections::BTreeMap<&OsStr, OsString> {
        let mut environment = std::collections::BTreeMap::new();
        for key in &self.inherit {
            if let Some(value) = std::env::var_os(key) {
                environment.insert(key.as_os_str(), value);
            }
        }
        for (key, value) in &self.env {
            environment.insert(key.as_os_str(), value.clone());
        }
        environment
    }

    pub(crate) fn spawn(&self) -> Result<SpawnedServer, Error> {
        let mut std_command = std::process::Command::new(&self.program);
        std_command.args(&self.args).env_clear().envs(self.environment());
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
        let output = stdout.as_fd().try_clone_to_owned().map_err(spawn_error)?;
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
            stdout: ServerStdout::new(stdout, exit).map_err(spawn_error)?,
            stderr,
            process: ServerProcess {
                child: Some(child),
                group: Pid::from_raw(i32::try_from(pid).unwrap_or(0)),
                step: self.shutdown_step,
                exit: None,
                watch: None,
                output: Some(output),
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
    pipe: StdoutPipe,
    /// Resolves when the process has exited; `None` once it has.
    exit: Option<BoxFuture>,
    /// Polls `exit` only when it woke: polling it asks the OS (`wait4`) and takes locks, which
    /// per read would add several system calls to every round trip.
    task: Arc<TaskWaker>,
    exit_news: SourceWaker,
}

impl ServerStdout {
    fn new(pipe: ChildStdout, exit: BoxFuture) -> io::Result<Self> {
        let task = Arc::new(TaskWaker::new());
        Ok(Self {
            pipe: StdoutPipe::new(pipe)?,
            exit: Some(exit),
            exit_news: SourceWaker::new(task.clone()),
            task,
        })
    }
}

impl AsyncRead for ServerStdout {
    fn poll_read(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut [u8]) -> Poll<io::Result<usize>> {
        let this = &mut *self;
        let read = this.pipe.poll_read(cx, buf);
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
            let read = this.pipe.poll_read_now(cx, buf);
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
    /// The exit status, once seen.
    exit: Option<ServerExit>,
    /// Waits for the exit, once [`poll_exit`](Self::poll_exit) asked.
    watch: Option<Pin<Box<dyn Future<Output = io::Result<std::process::ExitStatus>> + Send>>>,
    /// A second handle on the read end of the server's stdout, read (and what comes dropped)
    /// during the shutdown, after the connection let go of its own. Without it, a server's
    /// last writes (its answers to the requests the close cancelled) fail: it dies of SIGPIPE,
    /// or sees EPIPE and exits with an error, or, with a write it never sees finish, stays up.
    output: Option<OwnedFd>,
}

impl ServerProcess {
    pub(crate) fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(Child::id)
    }

    /// Each wait of the shutdown sequence.
    pub(crate) fn step(&self) -> Duration {
        self.step
    }

    /// The process's exit status: `Ready(Some)` once it exited, `Ready(None)` if it cannot be
    /// watched. Each poll asks the operating system: poll it when it matters, not every round.
    pub(crate) fn poll_exit(&mut self, cx: &mut Context<'_>) -> Poll<Option<ServerExit>> {
        if self.exit.is_some() {
            return Poll::Ready(self.exit);
        }
        let Some(child) = self.child.as_mut() else { return Poll::Ready(None) };
        let watch = self.watch.get_or_insert_with(|| Box::pin(child.status()));
        match watch.as_mut().poll(cx) {
            Poll::Pending => Poll::Pending,
            Poll::Ready(status) => {
                self.watch = None;
                self.exit = status.ok().and_then(server_exit);
                Poll::Ready(self.exit)
            }
        }
    }

    /// Notes whether the process has exited already (without waiting): call it before closing
    /// its stdin, so that the shutdown can tell an exit of its own from one the close caused.
    pub(crate) fn check_exit(&mut self) {
        if self.exit.is_none() {
            if let Some(child) = self.child.as_mut() {
                self.exit = child.try_status().ok().flatten().and_then(server_exit);
            }
        }
    }

    /// The graceful sequence, to run after the child's stdin was closed: wait, SIGTERM the
    /// group, wait, SIGKILL the group. Grandchildren left in the group are killed even when the
    /// child itself exits in time. The child stays in `self` until it is reaped, so dropping
    /// this future half-way (the driver was dropped) still kills the group. The waits are in
    /// the connection's `clock`; the first one counts from `closed_at`, when the connection
    /// closed, so that the time the driver spent flushing what was queued for the server comes
    /// out of it and the whole sequence stays within twice the step. The server's stdout is
    /// read and dropped meanwhile.
    pub(crate) async fn shutdown(mut self, clock: Arc<dyn Clock>, closed_at: Instant) -> Option<ServerEnd> {
        let output = self.output.take();
        futures_lite::future::or(self.stop(clock, closed_at), discard_output(output)).await
    }

    /// The sequence of [`shutdown`](Self::shutdown).
    async fn stop(&mut self, clock: Arc<dyn Clock>, closed_at: Instant) -> Option<ServerEnd> {
        let step = self.step;
        let group = self.group;
        let known = self.exit;
        self.watch = None;
        let child = self.child.as_mut()?;
        let pid = child.id();
        let end = match known {
            Some(exit) => ServerEnd { by: EndedBy::Itself, exit: Some(exit) },
            None => match wait_until(child, &*clock, closed_at.checked_add(step)).await {
                Some(exit) => ServerEnd { by: EndedBy::StdinClosed, exit },
                None => {
                    tracing::debug!(pid, "server still running after stdin closed: SIGTERM");
                    signal_group(group, Signal::TERM);
                    let until = clock.now().checked_add(step);
                    match wait_until(child, &*clock, until).await {
                        Some(exit) => ServerEnd { by: EndedBy::Sigterm, exit },
                        None => {
                            tracing::warn!(pid, "server ignored SIGTERM: SIGKILL");
                            signal_group(group, Signal::KILL);
                            let exit = child.status().await.ok().and_then(server_exit);
                            ServerEnd { by: EndedBy::Sigkill, exit }
                        }
                    }
                }
            },
        };
        // Always: the child may be gone while something it spawned lingers in the group. A
        // group id stays reserved while the group has members; once it is empty, the id could
        // in theory be reused between the reap and this signal (the reap is above, or when
        // `ServerStdout` saw the exit, just before its EOF closed the connection), a short
        // window that the kernel's sequential pid allocation makes practically unreachable.
        signal_group(group, Signal::KILL);
        if end.by == EndedBy::Sigkill || end.by == EndedBy::Sigterm {
            tracing::info!(pid, "server process {end}");
        } else {
            tracing::debug!(pid, "server process {end}");
        }
        self.child = None;
        self.group = None;
        Some(end)
    }
}

/// Reads the server's stdout and drops what comes, until its end; then waits for ever (the
/// shutdown sequence it runs beside ends the wait).
async fn discard_output<T>(output: Option<OwnedFd>) -> T {
    use futures_lite::AsyncReadExt;
    if let Some(Ok(mut pipe)) = output.map(|fd| async_io::Async::new(std::fs::File::from(fd))) {
        let mut buf = vec![0u8; 8 * 1024];
        loop {
            match pipe.read(&mut buf).await {
                Ok(0) => break,
                Err(e) if e.kind() != io::ErrorKind::Interrupted => break,
                // A server that writes without pause must not keep the sequence from its timers.
                _ => futures_lite::future::yield_now().await,
            }
        }
    }
    std::future::pending().await
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

/// Waits until `at` (of `clock`'s time; `None` is past the end of time) for the child to exit:
/// `Some` with its status (`None` when unreadable) if it did.
async fn wait_until(child: &mut Child, clock: &dyn Clock, at: Option<Instant>) -> Option<Option<ServerExit>> {
    let exited = async { Some(child.status().await.ok().and_then(server_exit)) };
    let timeout = async {
        match at {
            Some(at) => sleep_until(clock, at).await,
            None => std::future::pending().await,
        }
        None
    };
    futures_lite::future::or(exited, timeout).await
}

/// Longest stderr line kept; the rest of a longer line is dropped, so a server printing
/// without newlines cannot grow the client's memory.
const MAX_STDERR_LINE: usize = 16 * 1024;

/// Reads the server's stderr line by line into the sink until EOF.
pub(crate) async fn drain_stderr(mut stderr: ChildStderr, mut sink: StderrSink, pid: u32) {
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
                emit_stderr(&mut sink, pid, &line, truncated);
                line.clear();
                truncated = false;
            }
        }
    }
    if !line.is_empty() {
        emit_stderr(&mut sink, pid, &line, truncated);
    }
}

/// Hands one stderr line to the sink. A callback that panics is logged and replaced by
/// `tracing`: the pipe must still be drained, or the server would block writing to it.
fn emit_stderr(sink: &mut StderrSink, pid: u32, line: &[u8], truncated: bool) {
    let text = String::from_utf8_lossy(line);
    let text = text.trim_end_matches('\r');
    let ellipsis = if truncated { " [...]" } else { "" };
    match sink {
        StderrSink::Tracing => tracing::info!(target: "mcp_smol::stderr", pid, "{text}{ellipsis}"),
        StderrSink::Callback(f) => {
            let f = f.clone();
            let kept = crate::contain::contained("the stderr callback", || {
                if truncated { f(&format!("{text}{ellipsis}")) } else { f(text) }
            });
            if !kept {
                *sink = StderrSink::Tracing;
            }
        }
        StderrSink::Discard => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_identity_covers_program_arguments_directory_and_environment() {
        let base = || ServerCommand::new("server").args(["--flag"]);
        let identity = base().identity();
        assert_eq!(identity, base().identity(), "the same command, the same server");
        let others = [
            ServerCommand::new("other").args(["--flag"]),
            base().arg("more"),
            base().current_dir("/tmp"),
            base().env("MODE", "legacy"),
            base().env("MODE", "modern"),
            base().clear_inherited_env(),
        ];
        for (i, other) in others.iter().enumerate() {
            assert_ne!(other.identity(), identity, "command {i} is another server");
        }
        assert_ne!(others[3].identity(), others[4].identity(), "another value, another server");
        // A secret in the environment stays out of the key, which is logged.
        let secret = base().env("API_TOKEN", "s3cr3t-value").identity();
        assert!(!secret.contains("s3cr3t"), "{secret}");
        // Set twice, the last value counts, as for the process itself.
        assert_eq!(base().env("A", "1").env("A", "2").identity(), base().env("A", "2").identity());
    }

    #[test]
    fn a_server_end_says_what_ended_it_and_how() {
        let end = |by, exit| ServerEnd { by, exit }.to_string();
        assert_eq!(end(EndedBy::Itself, Some(ServerExit::Code(3))), "exited with status 3 on its own");
        assert_eq!(
            end(EndedBy::StdinClosed, Some(ServerExit::Code(0))),
            "exited with status 0 once its stdin closed"
        );
        assert_eq!(end(EndedBy::Sigterm, Some(ServerExit::Signal(15))), "killed by signal 15 after SIGTERM");
        assert_eq!(
            end(EndedBy::Sigkill, Some(ServerExit::Signal(9))),
            "killed by signal 9 after ignoring its stdin closing and SIGTERM"
        );
    }
}
