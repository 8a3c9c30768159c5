//! Configuration of a connection and of one request.

use std::time::Duration;

use crate::ProtocolVersion;
use crate::schema::{ClientCapabilities, Implementation, JsonObject};

/// Default idle timeout of a request: how long it may go without a response *or a progress
/// notification*.
///
/// Why 60 s and reset-on-progress: a fixed 60 s deadline killed legitimate long tools in the
/// TypeScript SDK (its issue #245), while no deadline at all let requests hang forever on a stuck
/// server (the Python SDK). A server that reports progress keeps its request alive up to
/// [`DEFAULT_MAX_TOTAL`]; a server that goes silent for a minute is treated as stuck.
pub const DEFAULT_REQUEST_TIMEOUT: Duration = Duration::from_secs(60);

/// Default cap on a request's total time, however much progress it reports: 30 minutes.
pub const DEFAULT_MAX_TOTAL: Duration = Duration::from_secs(30 * 60);

/// Default time the `initialize` handshake may take. Generous, because first runs of
/// `npx`/`uvx` servers download packages before they answer.
pub const DEFAULT_HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(60);

/// Default maximum size of one incoming message (16 MiB, as rmcp).
pub const DEFAULT_MAX_MESSAGE_SIZE: usize = 16 * 1024 * 1024;

/// Default cap on the server's requests open at once (see
/// [`ClientConfig::max_open_server_requests`]).
pub const DEFAULT_MAX_OPEN_SERVER_REQUESTS: usize = 256;

/// Settings for a [`ClientConnection`](crate::ClientConnection).
///
/// ```
/// use std::time::Duration;
/// use mcp_sansio::{ClientConfig, ProtocolVersion};
/// use mcp_sansio::schema::Implementation;
///
/// let config = ClientConfig::new(Implementation::new("my-app", "1.0.0"))
///     .with_request_timeout(Duration::from_secs(30))
///     .with_versions(&[ProtocolVersion::V2025_06_18]); // pin one version
/// assert_eq!(config.versions, [ProtocolVersion::V2025_06_18]);
/// ```
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ClientConfig {
    /// Who the client is (`clientInfo`).
    pub client_info: Implementation,
    /// What the client supports. Declaring `roots`, `sampling` or `elicitation` means the
    /// application answers those server requests (see [`Event::Request`](crate::Event::Request));
    /// undeclared ones are refused by the engine with `-32601`.
    pub capabilities: ClientCapabilities,
    /// Versions the client accepts. It asks for the newest of them (the spec has the client
    /// send the latest version it supports), whatever their order here;
    /// [`with_versions`](Self::with_versions) keeps them newest first.
    ///
    /// The era follows from them: both (dual-era, [`ProtocolVersion::DUAL_ERA`], the default) →
    /// probe with `server/discover`, and fall back to `initialize` (with the newest legacy
    /// version) when the server answers with anything but a discover result or a recognised
    /// modern error, or not within `discover_timeout`; only `initialize`-era versions (e.g.
    /// [`ProtocolVersion::LEGACY`]) → `initialize` with the newest, no probe; only 2026-07-28 →
    /// `server/discover`, no fallback.
    pub versions: Vec<ProtocolVersion>,
    /// Idle timeout of a request (reset by progress notifications unless disabled per request).
    pub request_timeout: Duration,
    /// Cap on a request's total time.
    pub max_total: Duration,
    /// Deadline for the `initialize` response.
    pub handshake_timeout: Duration,
    /// If set, a `ping` is sent after this much time without any message from the server; an
    /// unanswered ping (within `request_timeout`) closes the connection as dead.
    pub keep_alive: Option<Duration>,
    /// Maximum size of one incoming message in bytes; longer ones are dropped unread.
    pub max_message_size: usize,
    /// How long a dual-era client waits for the `server/discover` probe before it takes the
    /// server for a legacy one and sends `initialize` (default 10 s; never longer than
    /// `handshake_timeout`, so a silent server fails the handshake within twice that).
    pub discover_timeout: Duration,
    /// How many times a 2026-07-28 server may answer one request with `input_required` before
    /// the request fails (default 16).
    pub max_input_rounds: u32,
    /// 2026-07-28: keep a `subscriptions/listen` stream open for the list-changed
    /// notifications the server offers, as the `initialize` era sends them unasked (default
    /// `true`). Resource subscriptions open one regardless.
    pub listen_for_list_changes: bool,
    /// How many of the server's requests (sampling, elicitation, roots) may wait for the
    /// application's answer at once (default [`DEFAULT_MAX_OPEN_SERVER_REQUESTS`], 256). Past
    /// it, a new one is answered at once with a JSON-RPC internal error (`-32603`, `data.limit`
    /// saying the cap), counted in [`Stats::server_requests_refused`](crate::Stats) and
    /// reported as [`Event::ServerRequestRefused`](crate::Event::ServerRequestRefused): a
    /// server that floods the client with requests its application does not answer cannot
    /// grow the client's memory. `ping` is answered by the engine and never counts.
    pub max_open_server_requests: usize,
    /// How the engine follows tasks (the tasks extension, 2026-07-28): poll intervals, the
    /// task's own timeouts. See [`TaskPolicy`].
    pub tasks: TaskPolicy,
}

/// How the engine follows a task that a call became (the tasks extension, SEP-2663).
///
/// A task is polled with `tasks/get` every `pollIntervalMs` the server suggests, kept within
/// [`poll_floor`](Self::poll_floor) and [`poll_cap`](Self::poll_cap). Its deadline is its own,
/// not the request's: [`timeout`](Self::timeout) without any change of the task (status,
/// status message, last update), and [`max_total`](Self::max_total) in all. Each `tasks/get`,
/// `tasks/update` and `tasks/cancel` is a request with the usual request timeout, for silence.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct TaskPolicy {
    /// Never poll more often than this, whatever the server suggests (default 100 ms: a server
    /// saying `0` must not make the client spin).
    pub poll_floor: Duration,
    /// Never wait longer than this between polls (default 30 s: a server suggesting an hour
    /// must not hide its task's end for an hour).
    pub poll_cap: Duration,
    /// The interval when the server suggests none (default 1 s).
    pub poll_default: Duration,
    /// How long a task may go without any change before its call fails with a timeout and the
    /// task is cancelled (default 10 minutes). Waiting for the application's answer to an
    /// input request counts as no change.
    pub timeout: Duration,
    /// Cap on a task's total time, from its creation (default 24 hours).
    pub max_total: Duration,
    /// 2026-07-28: ask the server, on the `subscriptions/listen` stream, for
    /// `notifications/tasks` about the tasks being followed (default `false`: each task that
    /// starts or ends replaces the stream, which costs an HTTP server a new stream per task).
    /// While the server agrees to send them, polls slow down to [`poll_cap`](Self::poll_cap), a
    /// backstop. A `notifications/tasks` about a followed task counts either way.
    pub listen: bool,
    /// How many input requests (distinct keys of `inputRequests`) one task may hand to the
    /// application over its whole life (default [`DEFAULT_MAX_TASK_INPUTS`], 64). A task that
    /// asks for more is cancelled (`tasks/cancel`) and its call fails with
    /// [`RequestError::TooManyTaskInputs`](crate::RequestError::TooManyTaskInputs): a server that
    /// adds a key per poll cannot keep the user answering until the task's deadline.
    pub max_inputs: u32,
}

/// Default of [`TaskPolicy::max_inputs`]: input requests one task may make over its life.
/// (The C# SDK's client gives up after 60 polls in `input_required`; ours counts the requests
/// the user is asked, which is what a hostile server spends of the user's attention.)
pub const DEFAULT_MAX_TASK_INPUTS: u32 = 64;

impl Default for TaskPolicy {
    fn default() -> Self {
        TaskPolicy {
            poll_floor: Duration::from_millis(100),
            poll_cap: Duration::from_secs(30),
            poll_default: Duration::from_secs(1),
            timeout: Duration::from_secs(10 * 60),
            max_total: Duration::from_secs(24 * 60 * 60),
            listen: false,
            max_inputs: DEFAULT_MAX_TASK_INPUTS,
        }
    }
}

impl TaskPolicy {
    /// The interval to wait before the next poll, given the server's suggestion.
    pub fn interval(&self, suggested_ms: Option<u64>) -> Duration {
        let floor = self.poll_floor.min(self.poll_cap);
        suggested_ms.map_or(self.poll_default, Duration::from_millis).clamp(floor, self.poll_cap)
    }
}

/// What a call does when the server answers it with a task (the tasks extension, 2026-07-28).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum TaskMode {
    /// The engine follows the task (polls, hands its input requests to the application, sends
    /// the answers) and the call ends with the task's result or error, as if no task had been
    /// made (the default). Cancelling the call sends `tasks/cancel`.
    #[default]
    Follow,
    /// The call ends as soon as the task exists, with the task itself (a
    /// [`TaskSnapshot`](crate::schema::TaskSnapshot) with `resultType: "task"`), for an
    /// application that keeps a handle and follows the task when it likes
    /// ([`Commands::follow_task`](crate::Commands::follow_task)).
    Return,
}

impl ClientConfig {
    /// A configuration with the defaults and no client capabilities.
    pub fn new(client_info: Implementation) -> Self {
        Self {
            client_info,
            capabilities: ClientCapabilities::default(),
            versions: ProtocolVersion::DUAL_ERA.to_vec(),
            request_timeout: DEFAULT_REQUEST_TIMEOUT,
            max_total: DEFAULT_MAX_TOTAL,
            handshake_timeout: DEFAULT_HANDSHAKE_TIMEOUT,
            keep_alive: None,
            max_message_size: DEFAULT_MAX_MESSAGE_SIZE,
            discover_timeout: Duration::from_secs(10),
            max_input_rounds: 16,
            listen_for_list_changes: true,
            max_open_server_requests: DEFAULT_MAX_OPEN_SERVER_REQUESTS,
            tasks: TaskPolicy::default(),
        }
    }

    /// Sets the client capabilities, replacing every one declared before (to add to them, use
    /// [`update_capabilities`](Self::update_capabilities)).
    pub fn with_capabilities(mut self, capabilities: ClientCapabilities) -> Self {
        self.capabilities = capabilities;
        self
    }

    /// Changes the client capabilities in place: `f` gets the ones declared so far, so calls
    /// stack.
    ///
    /// ```
    /// use mcp_sansio::ClientConfig;
    /// use mcp_sansio::schema::Implementation;
    ///
    /// let config = ClientConfig::new(Implementation::new("host", "1.0"))
    ///     .update_capabilities(|c| c.with_roots(false))
    ///     .update_capabilities(|c| c.with_sampling());
    /// assert_eq!(config.capabilities.declared(), ["sampling", "roots"]);
    /// ```
    pub fn update_capabilities(mut self, f: impl FnOnce(ClientCapabilities) -> ClientCapabilities) -> Self {
        self.capabilities = f(std::mem::take(&mut self.capabilities));
        self
    }

    /// Whether a 2026-07-28 connection listens for list changes (see
    /// [`listen_for_list_changes`](Self::listen_for_list_changes)).
    pub fn with_listen_for_list_changes(mut self, listen: bool) -> Self {
        self.listen_for_list_changes = listen;
        self
    }

    /// Sets the accepted versions, in any order: the client asks for the newest of them, and
    /// accepts any of them in the server's answer. An empty slice keeps the default.
    ///
    /// [`ProtocolVersion::LEGACY`] pins the `initialize` era and asks for its newest version
    /// (it used to ask for the first one given, and `LEGACY` is oldest first: 2024-11-05).
    ///
    /// ```
    /// use std::time::Instant;
    /// use mcp_sansio::{ClientConfig, ClientConnection, ProtocolVersion};
    /// use mcp_sansio::schema::Implementation;
    ///
    /// let config = ClientConfig::new(Implementation::new("app", "1.0")).with_versions(ProtocolVersion::LEGACY);
    /// assert_eq!(config.versions[0], ProtocolVersion::V2025_11_25);
    /// let mut conn = ClientConnection::new(config, Instant::now());
    /// let initialize = conn.poll_transmit().unwrap();
    /// let text = std::str::from_utf8(initialize.bytes()).unwrap();
    /// assert!(text.contains(r#""method":"initialize""#) && text.contains(r#""protocolVersion":"2025-11-25""#));
    /// ```
    pub fn with_versions(mut self, versions: &[ProtocolVersion]) -> Self {
        if !versions.is_empty() {
            let mut versions = versions.to_vec();
            versions.sort_unstable_by(|a, b| b.cmp(a));
            versions.dedup();
            self.versions = versions;
        }
        self
    }

    /// Sets the default idle timeout of requests.
    pub fn with_request_timeout(mut self, timeout: Duration) -> Self {
        self.request_timeout = timeout;
        self
    }

    /// Sets the default cap on a request's total time.
    pub fn with_max_total(mut self, max_total: Duration) -> Self {
        self.max_total = max_total;
        self
    }

    /// Sets the handshake deadline.
    pub fn with_handshake_timeout(mut self, timeout: Duration) -> Self {
        self.handshake_timeout = timeout;
        self
    }

    /// Enables keep-alive pings after `interval` of silence from the server.
    pub fn with_keep_alive(mut self, interval: Duration) -> Self {
        self.keep_alive = Some(interval);
        self
    }

    /// Sets how long the dual-era `server/discover` probe waits before falling back to `initialize`.
    pub fn with_discover_timeout(mut self, timeout: Duration) -> Self {
        self.discover_timeout = timeout;
        self
    }

    /// Sets how many `input_required` rounds one request may take.
    pub fn with_max_input_rounds(mut self, rounds: u32) -> Self {
        self.max_input_rounds = rounds;
        self
    }

    /// Sets how many server requests may wait for the application's answer at once (see
    /// [`max_open_server_requests`](Self::max_open_server_requests)).
    pub fn with_max_open_server_requests(mut self, open: usize) -> Self {
        self.max_open_server_requests = open;
        self
    }

    /// Sets how the engine follows tasks (see [`TaskPolicy`]).
    pub fn with_tasks(mut self, policy: TaskPolicy) -> Self {
        self.tasks = policy;
        self
    }

    /// Sets the maximum incoming message size.
    pub fn with_max_message_size(mut self, bytes: usize) -> Self {
        self.max_message_size = bytes;
        self
    }
}

/// Per-request settings; every `None` falls back to the connection's [`ClientConfig`].
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct RequestOptions {
    /// Idle timeout for this request.
    pub timeout: Option<Duration>,
    /// Cap on this request's total time.
    pub max_total: Option<Duration>,
    /// Whether a progress notification resets the idle timeout (default: yes).
    pub reset_on_progress: Option<bool>,
    /// Ask the server for progress notifications: the engine adds `_meta.progressToken` and
    /// reports them as [`Event::Progress`](crate::Event::Progress).
    pub progress: bool,
    /// Extra `_meta` members to send with the request.
    pub meta: Option<JsonObject>,
    /// What happens when the server answers with a task (2026-07-28, tasks extension).
    pub task: TaskMode,
    /// The deadlines and polling of a task this request becomes, instead of
    /// [`ClientConfig::tasks`]. Setting it also says that the task's own deadlines apply once
    /// the request is a task, whatever [`timeout`](Self::timeout) and
    /// [`max_total`](Self::max_total) say: those bound the request until it becomes a task.
    /// Without it, an explicit `timeout` or `max_total` bounds the whole call, task included
    /// (see [`TaskPolicy`]).
    ///
    /// Boxed: every request's options are moved through a few calls on the way out, and a
    /// policy inline would double what each move copies, for an option few requests set.
    pub task_policy: Option<Box<TaskPolicy>>,
}

impl RequestOptions {
    /// Sets the idle timeout.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }

    /// Sets the cap on total time.
    pub fn max_total(mut self, max_total: Duration) -> Self {
        self.max_total = Some(max_total);
        self
    }

    /// Chooses whether progress resets the idle timeout.
    pub fn reset_on_progress(mut self, reset: bool) -> Self {
        self.reset_on_progress = Some(reset);
        self
    }

    /// Requests progress notifications.
    pub fn with_progress(mut self) -> Self {
        self.progress = true;
        self
    }

    /// Adds `_meta` members.
    pub fn meta(mut self, meta: JsonObject) -> Self {
        self.meta = Some(meta);
        self
    }

    /// Chooses what happens when the server answers with a task (see [`TaskMode`]).
    pub fn task_mode(mut self, mode: TaskMode) -> Self {
        self.task = mode;
        self
    }

    /// Follows a task this request becomes with `policy` (see
    /// [`task_policy`](Self::task_policy)): its deadlines replace the request's own once the
    /// server answers with a task.
    pub fn task_policy(mut self, policy: TaskPolicy) -> Self {
        self.task_policy = Some(Box::new(policy));
        self
    }
}
