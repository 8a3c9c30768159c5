//! [`Client`]: the cheap, cloneable handle applications call, and [`ClientBuilder`].

use std::future::{Future, poll_fn};
use std::sync::Arc;
use std::task::Poll;
use std::time::{Duration, Instant};

use futures_lite::{AsyncRead, AsyncWrite};
#[cfg(feature = "http")]
use mcp_sansio::auth::Authorizer;
#[cfg(feature = "http")]
use mcp_sansio::http::{HttpConfig, HttpSession};
use mcp_sansio::schema::{
    CallTool, CallToolRequestParams, CallToolResult, ClientCapabilities, Discover, DiscoverResult,
    EmptyParams, Implementation, ListPrompts, ListResources, ListTools, ListToolsResult, Paginated,
    PaginatedRequest, PaginatedRequestParams, Ping, Prompt, Request, Resource, ServerCapabilities, Tool,
};
use mcp_sansio::{
    ClientConfig, ClientConnection, Commands, ProtocolVersion, ProtocolViolation, ServerNotification, Status,
    UsageError,
};
use serde::Serialize;

use crate::Error;
use crate::api::{ClientApi, paginate};
use crate::arguments::{CallToolArguments, ToolCallParams, recycle, serialize_params};
#[cfg(feature = "http")]
use crate::auth::{OAuth, OsRandom, unix_now};
use crate::cache::{CacheInfo, CacheablePage, ListCache, ListCacheConfig, fold_hints};
use crate::call::{CallOptions, Decode, ResponseFuture};
use crate::clock::{AsyncIoClock, Clock, sleep_until};
#[cfg(feature = "http")]
use crate::driver::authorize::AuthIo;
use crate::driver::{Connection, Driver, UserCode};
use crate::era::{EraCache, EraMemo};
use crate::handler::{ClientHandler, DefaultHandler};
#[cfg(feature = "http")]
use crate::http::HttpTransport;
use crate::notifications::{
    Broadcast, DEFAULT_CAPACITY, FnHandler, ListKind, NotificationHandler, Notifications,
};
#[cfg(feature = "output-schema")]
use crate::output_schema::OutputSchemas;
use crate::shared::{DriverLife, Engine, Extras, Slot, ViolationFn};

/// Runs `driver` on a thread of its own, named `mcp-driver`, until the connection is over.
///
/// That thread parks between wake-ups and never runs async-io's reactor: while a call waits
/// for its response in `smol::block_on`, that thread polls the server's pipe and is woken by
/// it directly, rather than through a thread that holds the reactor for everyone. It is where
/// the connection's user code runs (notification handlers, the [`ClientHandler`]'s futures, the
/// OAuth handler and token store): in no executor's runtime. A handler future that needs one
/// (a tokio-based HTTP client, say) should run on that runtime and hand its outcome back
/// through a channel, or the connection be made with [`ClientBuilder::stdio`] (or `connect*`)
/// and the [`Driver`] spawned on that runtime.
fn spawn_driver(driver: Driver) {
    let spawned = std::thread::Builder::new()
        .name("mcp-driver".to_owned())
        .spawn(move || futures_lite::future::block_on(driver));
    // On failure the driver was dropped with the closure: every call fails with
    // `Error::DriverGone`, the server process is killed.
    if let Err(error) = spawned {
        tracing::error!(%error, "could not start the driver's thread");
    }
}
use crate::stdio::{EndedBy, ServerCommand, ServerEnd, drain_stderr};

/// How the [`EraCache`] knows a stdio server.
fn era_key(command: &ServerCommand) -> String {
    format!("stdio:{}", command.identity())
}

/// Builds a [`Client`]: configuration, the server-request handler, and the transport.
///
/// ```no_run
/// use mcp_smol::{ClientApi, ClientBuilder, ServerCommand};
/// use mcp_smol::mcp_sansio::schema::Implementation;
///
/// fn main() -> Result<(), mcp_smol::Error> {
///     smol::block_on(async {
///         let client = ClientBuilder::new(Implementation::new("my-app", "1.0.0"))
///             .spawn_stdio(&ServerCommand::new("npx").args(["-y", "@modelcontextprotocol/server-everything"]))
///             .await?;
///         for tool in client.list_all_tools().await? {
///             println!("{}", tool.name);
///         }
///         client.close().await;
///         Ok(())
///     })
/// }
/// ```
#[derive(Clone)]
pub struct ClientBuilder {
    config: ClientConfig,
    handler: Arc<dyn ClientHandler>,
    era_cache: Option<EraCache>,
    notification_handlers: Vec<Arc<dyn NotificationHandler>>,
    violation_hooks: Vec<ViolationFn>,
    notification_capacity: usize,
    list_cache: ListCacheConfig,
    clock: Arc<dyn Clock>,
    /// Whether the driver keeps its watch on calls that drive the connection.
    driver_watch: bool,
    trace: Option<crate::shared::TraceHook>,
    #[cfg(feature = "http")]
    oauth: Option<OAuth>,
    #[cfg(feature = "output-schema")]
    validate_output: bool,
}

impl ClientBuilder {
    /// A builder with the engine's defaults and the [`DefaultHandler`].
    pub fn new(client_info: Implementation) -> Self {
        Self::with_config(ClientConfig::new(client_info))
    }

    /// A builder with a full engine configuration.
    pub fn with_config(config: ClientConfig) -> Self {
        Self {
            config,
            handler: Arc::new(DefaultHandler),
            era_cache: Some(EraCache::global().clone()),
            notification_handlers: Vec::new(),
            violation_hooks: Vec::new(),
            notification_capacity: DEFAULT_CAPACITY,
            list_cache: ListCacheConfig::default(),
            clock: Arc::new(AsyncIoClock),
            driver_watch: true,
            trace: None,
            #[cfg(feature = "http")]
            oauth: None,
            #[cfg(feature = "output-schema")]
            validate_output: false,
        }
    }

    /// Changes the engine configuration in place.
    pub fn configure(mut self, f: impl FnOnce(ClientConfig) -> ClientConfig) -> Self {
        self.config = f(self.config);
        self
    }

    /// Adds to the capabilities the client declares: `f` gets the ones declared so far (by
    /// earlier calls, [`skills`](Self::skills) or [`configure`](Self::configure)), so calls
    /// stack. `configure(|c| c.with_capabilities(..))` instead replaces them all.
    ///
    /// ```
    /// use mcp_smol::prelude::*;
    ///
    /// let builder = ClientBuilder::new(Implementation::new("host", "1.0"))
    ///     .capabilities(|c| c.with_roots(false))          // for the handler's list_roots
    ///     .capabilities(|c| c.with_elicitation_form());   // for its elicit
    /// assert_eq!(builder.config().capabilities.declared(), ["elicitation.form", "roots"]);
    /// ```
    pub fn capabilities(self, f: impl FnOnce(ClientCapabilities) -> ClientCapabilities) -> Self {
        self.configure(|config| config.update_capabilities(f))
    }

    /// The engine configuration as built so far.
    pub fn config(&self) -> &ClientConfig {
        &self.config
    }

    /// Sets the handler for server requests (roots, sampling, elicitation). Remember to
    /// declare the matching capabilities in the configuration.
    pub fn handler(mut self, handler: impl ClientHandler) -> Self {
        self.handler = Arc::new(handler);
        self
    }

    /// Which [`EraCache`] remembers the servers known to be legacy, so that a dual-era
    /// connection skips the `server/discover` probe for them: [`EraCache::global`] by default,
    /// `None` to probe every time.
    pub fn era_cache(mut self, cache: Option<EraCache>) -> Self {
        self.era_cache = cache;
        self
    }

    /// Adds a handler for server notifications; several may be added, and each sees every
    /// notification, in the order added. Handlers run on the [`Driver`]'s task, never under a
    /// lock of the client, and never on a task waiting for a call: a handler that blocks
    /// delays the connection's other handlers, not its calls. They may call the client. A call
    /// can return before a handler has seen a notification the server sent before the call's
    /// response (a [`Notifications`] subscription has it by then). A handler that panics is
    /// logged and dropped; the others go on.
    pub fn notification_handler(mut self, handler: impl NotificationHandler) -> Self {
        self.notification_handlers.push(Arc::new(handler));
        self
    }

    /// Adds a closure that sees every server notification (see
    /// [`notification_handler`](Self::notification_handler)).
    ///
    /// ```
    /// use mcp_smol::{ClientBuilder, ListKind};
    /// use mcp_smol::mcp_sansio::schema::Implementation;
    ///
    /// let builder = ClientBuilder::new(Implementation::new("my-app", "1.0.0")).on_notification(|n| {
    ///     if ListKind::of(n) == Some(ListKind::Tools) {
    ///         println!("the tools changed");
    ///     }
    /// });
    /// ```
    pub fn on_notification(self, f: impl Fn(&ServerNotification) + Send + Sync + 'static) -> Self {
        self.notification_handler(FnHandler(f))
    }

    /// Adds a callback that sees every way the server breaks the protocol on this connection: a
    /// line that is not JSON (a server printing to its stdout), an invalid message, one larger
    /// than [`max_message_size`](mcp_sansio::ClientConfig::max_message_size), a response to an
    /// id that was never issued or to a request that is over. The connection goes on; when the
    /// message answered a call, that call has failed with a typed error already (see
    /// [`ProtocolViolation`]). [`Client::stats`] counts them too.
    ///
    /// Several may be added; each sees every violation, in the order added. They run on the
    /// [`Driver`]'s task, as notification handlers do (a call can return before its hook
    /// ran; one that panics is dropped). With none, violations are only logged (`tracing`).
    ///
    /// ```
    /// use std::sync::Arc;
    /// use std::sync::atomic::{AtomicU64, Ordering};
    /// use mcp_smol::ClientBuilder;
    /// use mcp_smol::mcp_sansio::ProtocolViolation;
    /// use mcp_smol::mcp_sansio::schema::Implementation;
    ///
    /// let oversized = Arc::new(AtomicU64::new(0));
    /// let seen = oversized.clone();
    /// let builder = ClientBuilder::new(Implementation::new("my-app", "1.0.0")).on_protocol_violation(
    ///     move |violation| {
    ///         if let ProtocolViolation::Oversized { .. } = violation {
    ///             seen.fetch_add(1, Ordering::Relaxed);
    ///         }
    ///         eprintln!("the server broke the protocol: {violation}");
    ///     },
    /// );
    /// ```
    pub fn on_protocol_violation(mut self, f: impl Fn(&ProtocolViolation) + Send + Sync + 'static) -> Self {
        self.violation_hooks.push(Arc::new(f));
        self
    }

    /// How many notifications the broadcast to [`Client::notifications`] subscribers holds
    /// (default 1024): a subscriber that falls further behind is told how many it missed
    /// ([`RecvError::Lagged`](crate::RecvError::Lagged)).
    pub fn notification_capacity(mut self, capacity: usize) -> Self {
        self.notification_capacity = capacity.max(1);
        self
    }

    /// How the list cache behind [`Client::tools`], [`Client::resources`] and
    /// [`Client::prompts`] behaves.
    pub fn list_cache(mut self, config: ListCacheConfig) -> Self {
        self.list_cache = config;
        self
    }

    /// Checks every tool result's `structuredContent` against the tool's `outputSchema`
    /// (default: off). A result that does not match fails with [`Error::OutputSchema`]. The
    /// schemas come from the tool listings (the first call lists the tools if nothing has);
    /// each is compiled once and cached.
    #[cfg(feature = "output-schema")]
    pub fn validate_output(mut self, validate: bool) -> Self {
        self.validate_output = validate;
        self
    }

    /// Where the connection gets the time and its timers: [`AsyncIoClock`] by default. The
    /// driver, the deadlines of calls, the list cache and the server process's shutdown all
    /// follow it, so a manual clock runs the connection on simulated time (see [`Clock`] for
    /// one, with an example).
    pub fn clock(mut self, clock: impl Clock) -> Self {
        self.clock = Arc::new(clock);
        self
    }

    /// Authorizes with OAuth 2.1 when an HTTP server requires it (the MCP authorization spec):
    /// discovery, client registration, the user's authorization through the
    /// [`AuthorizationHandler`](crate::AuthorizationHandler), tokens and their refresh, all
    /// handled by the connection; requests that hit a 401 wait for the token and are sent again
    /// once. Over stdio it has no effect. See [`OAuth`].
    #[cfg(feature = "http")]
    pub fn oauth(mut self, oauth: OAuth) -> Self {
        self.oauth = Some(oauth);
        self
    }

    /// Fills each call's W3C trace context (`traceparent`, `tracestate` in `_meta`, SEP-414)
    /// from the application's tracing: `f` runs when a call is made, on the caller's thread
    /// (before any of the client's locks), and returns the context of the caller's current
    /// span, or `None` to send none. A call whose own `_meta` has a `traceparent` (see
    /// [`CallOptions::trace`]) keeps it. Off by default: nothing is added.
    ///
    /// ```
    /// use mcp_smol::ClientBuilder;
    /// use mcp_smol::mcp_sansio::schema::{Implementation, TraceContext};
    ///
    /// let builder = ClientBuilder::new(Implementation::new("traced", "1.0")).trace_context(|| {
    ///     // With OpenTelemetry, format the current span's context here.
    ///     TraceContext::new("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01").ok()
    /// });
    /// ```
    pub fn trace_context(
        mut self,
        f: impl Fn() -> Option<mcp_sansio::schema::TraceContext> + Send + Sync + 'static,
    ) -> Self {
        self.trace = Some(Arc::new(f));
        self
    }

    /// Switches off the driver's watch on the calls that drive the connection (on by default).
    ///
    /// The watch takes the connection back from a call that asked to drive it and whose future
    /// is then set aside unpolled while its task runs on (polled once in a `select`, then
    /// kept): without it, the connection's news would wait for that future. For tests of the
    /// driver, which must hold without the watch; applications keep it.
    #[doc(hidden)]
    pub fn without_driver_watch(mut self) -> Self {
        self.driver_watch = false;
        self
    }

    fn extras(&mut self) -> Extras {
        Extras {
            broadcast: Broadcast::new(self.notification_capacity),
            notification_handlers: !self.notification_handlers.is_empty(),
            violation_hooks: !self.violation_hooks.is_empty(),
            lists: ListCache::new(self.list_cache, self.clock.clone()),
            trace: self.trace.clone(),
            #[cfg(feature = "output-schema")]
            output_schemas: self.validate_output.then(OutputSchemas::new),
            #[cfg(feature = "output-schema")]
            tools_listed: std::sync::atomic::AtomicBool::new(false),
        }
    }

    /// The user code the driver runs.
    fn user_code(&mut self) -> UserCode {
        UserCode {
            handler: self.handler.clone(),
            notification_handlers: std::mem::take(&mut self.notification_handlers),
            violation_hooks: std::mem::take(&mut self.violation_hooks),
            watch: self.driver_watch,
        }
    }

    /// Applies the era cache for the server known as `key`.
    fn remember_era(&mut self, key: String) -> Option<EraMemo> {
        EraMemo::apply(self.era_cache.clone()?, key, &mut self.config)
    }

    /// Connects over any byte streams: returns the handle and the [`Driver`] to spawn on an
    /// executor. Wait for the handshake with [`Client::ready`]. (There is no telling which
    /// server is at the other end, so the era cache does not apply.)
    pub fn connect(
        mut self,
        reader: impl AsyncRead + Send + 'static,
        writer: impl AsyncWrite + Send + 'static,
    ) -> (Client, Driver) {
        let extras = self.extras();
        let code = self.user_code();
        let now = self.clock.now();
        let mut conn = ClientConnection::new(self.config, now);
        // Hosted tasks' timestamps need the time of day; the engine reads no clock.
        conn.set_wall_clock(now, crate::clock::unix_now());
        let (engine, key) = Engine::stream_engine(conn);
        let shared = Connection::new(engine, extras, self.clock, code.watch);
        let driver = Driver::new(shared.clone(), key, reader, writer, code);
        (Client::from_shared(shared), driver)
    }

    /// Starts a stdio server process: returns the handle and the [`Driver`] to spawn on an
    /// executor. Wait for the handshake with [`Client::ready`].
    ///
    /// A stdio server that exits (or closes its stdout) on the dual-era `server/discover` probe
    /// fails here with [`Error::Connect`], and the [`EraCache`] remembers it as legacy: the next
    /// connection to it sends `initialize` at once. ([`spawn_stdio`](Self::spawn_stdio) starts
    /// it again by itself.)
    pub fn stdio(mut self, command: &ServerCommand) -> Result<(Client, Driver), Error> {
        let era = self.remember_era(era_key(command));
        let server = command.spawn()?;
        let pid = server.process.pid();
        let (client, driver) = self.connect(server.stdout, server.stdin);
        {
            let mut state = client.shared.lock();
            state.server_pid = pid;
            state.era = era;
        }
        let pump = drain_stderr(server.stderr, server.stderr_sink, pid.unwrap_or(0));
        Ok((client, driver.with_process(server.process).with_background(pump)))
    }

    /// Starts a stdio server, runs its driver on a thread of its own, and waits for the
    /// handshake.
    ///
    /// The thread, `mcp-driver`, parks between wake-ups and never holds async-io's reactor, so
    /// the reactor stays with the thread that waits for a call. Your handlers run there, in no
    /// executor's runtime (see [`Driver`]): make the connection with [`stdio`](Self::stdio) and
    /// spawn the driver yourself if they need one.
    ///
    /// **A server that exits on the probe.** With the default versions (both eras) the client
    /// first probes with `server/discover`. Some legacy servers exit on a method they do not
    /// know. Such a server is started again, once, and sent `initialize` at once; the command
    /// is then remembered as legacy in the [`EraCache`] (for an hour), so later connections
    /// start it once. The cost is that second start. Pinning the versions
    /// (`configure(|c| c.with_versions(ProtocolVersion::LEGACY))`) sends `initialize` first and avoids it. A
    /// server that exits on `initialize` too fails as any other.
    pub async fn spawn_stdio(self, command: &ServerCommand) -> Result<Client, Error> {
        let again = crate::era::dual_era(&self.config).then(|| self.clone());
        let (client, driver) = self.stdio(command)?;
        spawn_driver(driver);
        let error = match client.ready().await {
            Ok(()) => return Ok(client),
            Err(error) => error,
        };
        let ended_on_probe = client.shared.lock().engine.conn().ended_on_probe();
        let Some(mut again) = again.filter(|_| ended_on_probe) else { return Err(error) };
        // Reaps the first process (it has exited; its group is killed).
        client.close().await;
        tracing::info!(%error, "the server ended on the server/discover probe: starting it again with initialize");
        again.config.versions.retain(|v| !v.is_modern());
        let cache = again.era_cache.clone();
        let (client, driver) = again.stdio(command)?;
        spawn_driver(driver);
        let outcome = client.ready().await;
        if let Some(cache) = cache {
            match (&outcome, client.protocol_version()) {
                (Ok(()), Some(version)) => cache.remember(&era_key(command), version),
                _ => cache.forget(&era_key(command)),
            }
        }
        outcome.map(|()| client)
    }

    /// Connects to an MCP server over HTTP (Streamable HTTP, falling back to the 2024-11-05
    /// HTTP+SSE transport): returns the handle and the [`Driver`] to spawn on an executor. Wait
    /// for the handshake with [`Client::ready`].
    ///
    /// `transport` executes the HTTP requests: `mcp_hyper::HyperTransport` (recommended) or
    /// `mcp_surf::SurfTransport`. The URL, custom headers (such as `Authorization`, never
    /// logged), timeouts, the reconnection policy and how many redirects a request follows
    /// ([`HttpConfig::max_redirects`]: `307` and `308`, never with your headers to another
    /// origin) are in `http`.
    #[cfg(feature = "http")]
    pub fn connect_http(mut self, http: HttpConfig, transport: impl HttpTransport) -> (Client, Driver) {
        // For the connection's span: the origin without any `user:password@`.
        let origin = http.origin().map_or_else(
            || "unknown origin".to_owned(),
            |origin| match origin.split_once("://") {
                Some((scheme, authority)) => {
                    format!("{scheme}://{}", authority.rsplit_once('@').map_or(authority, |(_, host)| host))
                }
                None => origin,
            },
        );
        let era =
            self.remember_era(format!("http:{}", http.origin().unwrap_or_else(|| http.url().to_owned())));
        let extras = self.extras();
        let code = self.user_code();
        let now = self.clock.now();
        let mut auth_code = None;
        let mut session = HttpSession::new(http, self.config, now);
        session.set_wall_clock(now, unix_now());
        if let Some(oauth) = self.oauth {
            let url = session.url().to_owned();
            let mut authorizer = Authorizer::new(&url, oauth.config, Box::new(OsRandom));
            // Signed JWTs (client assertions, DPoP proofs) need the time of day.
            authorizer.set_wall_clock(now, unix_now());
            if let Some(credentials) = oauth.store.load() {
                authorizer.restore(now, unix_now(), credentials);
            }
            session = session.with_authorizer(authorizer);
            auth_code = Some((oauth.handler, oauth.store));
        }
        let (engine, key) = Engine::http_engine(session);
        let auth = auth_code.map(|(handler, store)| AuthIo::new(handler, store, key.clone()));
        let shared = Connection::new(engine, extras, self.clock, code.watch);
        shared.lock().era = era;
        let driver = Driver::http(shared.clone(), key, Arc::new(transport), code, &origin, auth);
        (Client::from_shared(shared), driver)
    }

    /// Connects over HTTP, runs the driver on a thread of its own (as
    /// [`spawn_stdio`](Self::spawn_stdio) does), and waits for the handshake.
    ///
    /// ```no_run
    /// # smol::block_on(async {
    /// # fn transport() -> impl mcp_smol::HttpTransport { unimplemented!() as std::sync::Arc<dyn mcp_smol::HttpTransport> }
    /// use mcp_smol::mcp_sansio::http::HttpConfig;
    /// use mcp_smol::mcp_sansio::schema::Implementation;
    /// use mcp_smol::{ClientApi, ClientBuilder};
    ///
    /// let http = HttpConfig::new("http://127.0.0.1:3000/mcp").header("Authorization", "Bearer t");
    /// // `transport()` stands for `mcp_hyper::HyperTransport::new()`.
    /// let client = ClientBuilder::new(Implementation::new("my-app", "1.0.0")).spawn_http(http, transport()).await?;
    /// println!("{:?}", client.list_all_tools().await?);
    /// client.close().await;
    /// # Ok::<(), mcp_smol::Error>(()) });
    /// ```
    #[cfg(feature = "http")]
    pub async fn spawn_http(self, http: HttpConfig, transport: impl HttpTransport) -> Result<Client, Error> {
        let (client, driver) = self.connect_http(http, transport);
        spawn_driver(driver);
        client.ready().await?;
        Ok(client)
    }

    /// Connects over byte streams, runs the driver on a thread of its own (as
    /// [`spawn_stdio`](Self::spawn_stdio) does), and waits for the handshake.
    pub async fn spawn_connect(
        self,
        reader: impl AsyncRead + Send + 'static,
        writer: impl AsyncWrite + Send + 'static,
    ) -> Result<Client, Error> {
        let (client, driver) = self.connect(reader, writer);
        spawn_driver(driver);
        client.ready().await?;
        Ok(client)
    }
}

/// A handle to one MCP connection: cheap to clone, `Send + Sync`, usable from any task.
///
/// Every call is checked by the engine first (readiness, server capabilities) and fails with
/// [`Error::Usage`] without sending anything when refused. Every call has a deadline (see
/// [`CallOptions`]). **Dropping a call's future cancels the request**: the server receives
/// `notifications/cancelled`. When the last handle is dropped, the connection closes and the
/// server process is shut down by the driver. If the [`Driver`] is dropped instead, every call
/// fails with [`Error::DriverGone`].
///
/// A handle may carry options for every call made through it ([`with_options`](Self::with_options)).
pub struct Client {
    pub(crate) shared: Arc<Connection>,
    /// Options for every call of this handle, under the call's own ([`Client::with_options`]).
    defaults: Option<Arc<CallOptions>>,
}

impl Clone for Client {
    fn clone(&self) -> Self {
        let mut client = Client::from_shared(self.shared.clone());
        client.defaults = self.defaults.clone();
        client
    }
}

impl Drop for Client {
    fn drop(&mut self) {
        let mut state = self.shared.lock();
        state.handles -= 1;
        if state.handles == 0 && !state.engine.conn().is_closed() {
            state.commands().close();
            drop(state);
            self.shared.wake();
        }
    }
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client").field("status", &self.status()).finish_non_exhaustive()
    }
}

impl Client {
    fn from_shared(shared: Arc<Connection>) -> Self {
        shared.lock().handles += 1;
        Self { shared, defaults: None }
    }

    /// Another handle to the same connection whose calls all use `options`: every typed method of
    /// [`ClientApi`] ([`call_tool`](ClientApi::call_tool), [`list_tools`](ClientApi::list_tools),
    /// [`read_resource`](ClientApi::read_resource), [`ping`](ClientApi::ping), the `list_all_*`
    /// pages, …), [`request_raw`](Self::request_raw), [`discover`](Self::discover) and the fetches
    /// of the list cache. A call's own options ([`call_tool_with`](ClientApi::call_tool_with),
    /// `request::<R>`) win where they set something; `_meta` members are merged. On a handle that
    /// has options already, `options` go over them.
    ///
    /// It is a [`Client`] like any other: cheap, `Clone`, and it counts as a handle (the
    /// connection stays open while it lives).
    ///
    /// ```no_run
    /// # smol::block_on(async {
    /// # let client: mcp_smol::Client = unimplemented!();
    /// use std::time::Duration;
    /// use mcp_smol::prelude::*;
    ///
    /// let patient = client.with_options(CallOptions::default().timeout(Duration::from_secs(600)));
    /// let report = patient.call_tool("build_report", serde_json::json!({"year": 2025})).await?;
    /// let tools = patient.list_all_tools().await?;
    /// # Ok::<(), mcp_smol::Error>(()) });
    /// ```
    pub fn with_options(&self, options: CallOptions) -> Client {
        let mut client = self.clone();
        client.defaults = Some(Arc::new(self.options(options)));
        client
    }

    /// The options a call is made with: its own, over this handle's.
    pub(crate) fn options(&self, options: CallOptions) -> CallOptions {
        match &self.defaults {
            Some(defaults) => options.over(defaults),
            None => options,
        }
    }

    /// Waits for the handshake: `Ok` once ready, [`Error::Connect`] if the connection closed
    /// first (the server exited, refused, or chose a version the client does not accept),
    /// [`Error::DriverGone`] if the driver was dropped.
    pub async fn ready(&self) -> Result<(), Error> {
        poll_fn(|cx| {
            let mut state = self.shared.lock();
            if state.driver_dropped() {
                return Poll::Ready(Err(Error::DriverGone));
            }
            let conn = state.engine.conn();
            match conn.status() {
                Status::Ready => Poll::Ready(Ok(())),
                // The handshake's answer and the server's end may be handled in one poll of
                // the driver: a completed handshake is ready, and what follows fails as closed.
                Status::Closed(_) if conn.handshake_completed() => Poll::Ready(Ok(())),
                Status::Closed(reason) => Poll::Ready(Err(Error::Connect(reason))),
                _ => {
                    state.watch(cx.waker());
                    Poll::Pending
                }
            }
        })
        .await
    }

    // ----- generic requests -----

    /// Sends a typed request and decodes its result.
    ///
    /// The request is sent when this is called, not when the future is first polled. The
    /// returned future owns everything it needs (`'static`), so it can be spawned; dropping it
    /// cancels the request. (The same as [`ClientApi::request`], callable without the trait.)
    pub fn request<R: Request>(
        &self,
        params: &R::Params,
        options: CallOptions,
    ) -> impl Future<Output = Result<R::Result, Error>> + Send + 'static + use<R>
    where
        R::Result: Send,
    {
        Decode::from_result(self.send::<R>(params, options), R::METHOD)
    }

    /// Sends a typed request: the engine's refusal at once (nothing was sent), or the future
    /// of the decoded result.
    pub(crate) fn send<R: Request>(
        &self,
        params: &R::Params,
        options: CallOptions,
    ) -> Result<Decode<R::Result>, Error>
    where
        R::Result: Send,
    {
        self.send_as::<R, R::Result>(params, options)
    }

    /// [`send`](Self::send), with the result decoded as `T` instead of the method's own type.
    pub(crate) fn send_as<R: Request, T>(
        &self,
        params: &R::Params,
        options: CallOptions,
    ) -> Result<Decode<T>, Error> {
        // The params' `Serialize` impl is the application's code: it runs here, before the lock.
        let params = serialize_params(params)?;
        let response = self.start(R::METHOD, options, |conn, now, options| {
            conn.send_serialized(now, R::METHOD, &params, options)
        });
        recycle(params);
        Ok(Decode::sent(response?, R::METHOD))
    }

    /// Sends a request with raw JSON params and returns the raw JSON result (for methods the
    /// typed model does not cover).
    pub fn request_raw(
        &self,
        method: &str,
        params: Option<&serde_json::value::RawValue>,
        options: CallOptions,
    ) -> impl Future<Output = Result<Box<serde_json::value::RawValue>, Error>> + Send + 'static + use<> {
        let params = params.map(|p| p.get().as_bytes());
        let started =
            self.start(method, options, |conn, now, options| conn.send_request(now, method, params, options));
        async move { started?.await.map(|raw| raw.to_raw_value()) }
    }

    /// Sends a notification to the server. For `notifications/roots/list_changed`, use
    /// [`roots_changed`](Self::roots_changed).
    pub fn notify(&self, method: &str, params: Option<&serde_json::value::RawValue>) -> Result<(), Error> {
        self.queue_notification(|commands| commands.notify(method, params.map(|p| p.get().as_bytes())))
    }

    /// Tells the server that the roots your handler's `list_roots` returns have changed, so
    /// that it asks again: `notifications/roots/list_changed` in the `initialize` era. On
    /// 2026-07-28 nothing is sent and it succeeds: the server asks for roots within each
    /// request that needs them. Declare that you send it, with
    /// `ClientCapabilities::with_roots(true)`; otherwise it fails with
    /// [`UsageError::CapabilityNotDeclared`](mcp_sansio::UsageError::CapabilityNotDeclared).
    ///
    /// ```no_run
    /// use mcp_smol::prelude::*;
    ///
    /// # async fn run(command: ServerCommand, handler: impl ClientHandler) -> Result<(), Error> {
    /// let client = ClientBuilder::new(Implementation::new("host", "1.0"))
    ///     .capabilities(|c| c.with_roots(true))
    ///     .handler(handler)
    ///     .spawn_stdio(&command)
    ///     .await?;
    /// // ... the user opened another folder, which `list_roots` now returns:
    /// client.roots_changed()?;
    /// # Ok(()) }
    /// ```
    pub fn roots_changed(&self) -> Result<(), Error> {
        self.queue_notification(|commands| commands.roots_changed())
    }

    /// Runs `notify` on the engine's commands and wakes the driver to write what it queued.
    fn queue_notification(
        &self,
        notify: impl FnOnce(&mut Commands<'_>) -> Result<(), mcp_sansio::UsageError>,
    ) -> Result<(), Error> {
        let mut state = self.shared.lock();
        if state.driver_dropped() {
            return Err(Error::DriverGone);
        }
        notify(&mut state.commands())?;
        drop(state);
        self.shared.wake();
        Ok(())
    }

    pub(crate) fn start(
        &self,
        method: &str,
        options: CallOptions,
        send: impl FnOnce(
            &mut Commands<'_>,
            Instant,
            mcp_sansio::RequestOptions,
        ) -> Result<mcp_sansio::RequestId, UsageError>,
    ) -> Result<ResponseFuture, Error> {
        let mut options = self.options(options);
        // The application's code, on the caller's thread, before any lock.
        if let Some(hook) = &self.shared.extras.trace {
            let meta = options.request.meta.get_or_insert_with(Default::default);
            if !meta.contains_key(mcp_sansio::schema::META_TRACEPARENT) {
                if let Some(context) = hook() {
                    meta.extend(context.to_meta());
                }
            }
            if meta.is_empty() {
                options.request.meta = None;
            }
        }
        let now = self.shared.clock.now();
        let mut state = self.shared.lock();
        // Nothing would ever write it, nor answer it.
        if state.driver_dropped() {
            return Err(Error::DriverGone);
        }
        let id = send(&mut state.commands(), now, options.request)?;
        state.calls.insert(id.clone(), Slot::new(options.on_progress.is_some()));
        let next = state.writer_for_new_call(&self.shared.route);
        drop(state);
        let on_sent = options.on_sent.map(|on_sent| (on_sent, id.clone()));
        // From here the call's future owns its slot: whatever happens next (a panic included),
        // dropping it cancels the request and frees the slot.
        let response = ResponseFuture::new(self.shared.clone(), id, method, options.on_progress);
        self.shared.sent(next);
        if let Some((on_sent, id)) = on_sent {
            // The application's code, outside every lock. A panic in it is logged; the call goes on.
            crate::contain::contained("an on_sent callback", || on_sent(&id));
        }
        Ok(response)
    }

    // ----- state -----

    /// Server notifications from now on, as a [`Stream`](futures_lite::Stream). Each call makes an
    /// independent subscription; subscribe before making the calls whose notifications you want.
    pub fn notifications(&self) -> Notifications {
        self.shared.extras.broadcast.subscribe()
    }

    // ----- cached lists -----

    /// Every tool, from the list cache: fetched (all pages) on first use, then served from
    /// memory until the server says the list changed (`notifications/tools/list_changed`,
    /// debounced) or its `ttlMs` runs out. Concurrent callers share one fetch.
    pub async fn tools(&self) -> Result<Arc<[Tool]>, Error> {
        // Through `list_tools`, so the output-schema validator learns the schemas too.
        self.shared.extras.lists.get(|| fetch_list(ListTools::METHOD, |cursor| self.list_tools(cursor))).await
    }

    /// Every resource, from the list cache (see [`tools`](Self::tools)).
    pub async fn resources(&self) -> Result<Arc<[Resource]>, Error> {
        self.shared
            .extras
            .lists
            .get(|| fetch_list(ListResources::METHOD, |cursor| self.list_page::<ListResources>(cursor)))
            .await
    }

    /// Every prompt, from the list cache (see [`tools`](Self::tools)).
    pub async fn prompts(&self) -> Result<Arc<[Prompt]>, Error> {
        self.shared
            .extras
            .lists
            .get(|| fetch_list(ListPrompts::METHOD, |cursor| self.list_page::<ListPrompts>(cursor)))
            .await
    }

    /// What the list cache holds for one list: fetches, changes seen, freshness, the server's
    /// cache hints.
    pub fn cache_info(&self, list: ListKind) -> CacheInfo {
        self.shared.extras.lists.info(list)
    }

    fn list_page<R: PaginatedRequest>(
        &self,
        cursor: Option<String>,
    ) -> impl Future<Output = Result<R::Result, Error>> + Send + 'static + use<R>
    where
        R::Result: Send,
    {
        self.request::<R>(&PaginatedRequestParams::with_cursor(cursor), CallOptions::default())
    }

    /// The server's `server/discover` result (2026-07-28): the one the connection has while
    /// its `ttlMs` lasts, else asked for again, which also refreshes the server's capabilities,
    /// info and instructions. On an `initialize`-era connection it fails with
    /// [`Error::Usage`]: the method does not exist there.
    pub async fn discover(&self) -> Result<DiscoverResult, Error> {
        {
            let now = self.shared.clock.now();
            let state = self.shared.lock();
            let conn = state.engine.conn();
            if conn.discover_is_fresh(now) {
                if let Some(discover) = conn.discover_result() {
                    return Ok(discover.clone());
                }
            }
        }
        let discover = self.request::<Discover>(&EmptyParams::default(), CallOptions::default()).await?;
        self.shared.lock().remember_session();
        Ok(discover)
    }

    /// The server's `serverInfo`, once ready; after the connection ended, the last one it had.
    pub fn server_info(&self) -> Option<Implementation> {
        self.shared.lock().about_server(|conn| conn.server_info().cloned(), |kept| kept.server_info.clone())
    }

    /// The server's capabilities, once ready; after the connection ended, the last ones it had.
    pub fn server_capabilities(&self) -> Option<ServerCapabilities> {
        let state = self.shared.lock();
        state.about_server(|conn| conn.server_capabilities().cloned(), |kept| Some(kept.capabilities.clone()))
    }

    /// The server's `instructions`, if any (also after the connection ended).
    pub fn instructions(&self) -> Option<String> {
        let state = self.shared.lock();
        state.about_server(|conn| conn.instructions().map(str::to_owned), |kept| kept.instructions.clone())
    }

    /// Forgets the operations that failed for want of scope (an HTTP server whose step-up did
    /// not get the scope): their next call goes to the server again, and may ask the user
    /// again. Without this, such an operation fails at once with
    /// [`AuthError::ScopeRefusedRecently`](mcp_sansio::auth::AuthError::ScopeRefusedRecently)
    /// for [`SCOPE_REFUSAL_MEMORY`](mcp_sansio::http::SCOPE_REFUSAL_MEMORY) (10 minutes). Nothing
    /// to forget on stdio.
    #[cfg(feature = "http")]
    pub fn forget_scope_refusals(&self) {
        self.shared.lock().engine.forget_scope_refusals();
    }

    /// The negotiated protocol version, once ready; after the connection ended, the one it
    /// had (the [`status`](Self::status) says whether it is still open).
    pub fn protocol_version(&self) -> Option<ProtocolVersion> {
        self.shared.lock().about_server(ClientConnection::protocol_version, |kept| Some(kept.version))
    }

    /// Where the connection is in its life.
    ///
    /// A stdio server that closed its stdout without exiting at once closes the connection
    /// with [`CloseReason::Eof`](mcp_sansio::CloseReason::Eof); once the driver's shutdown saw
    /// the process exit by itself (not on a signal of the client's), the status says how:
    /// [`CloseReason::Exited`](mcp_sansio::CloseReason::Exited).
    pub fn status(&self) -> Status {
        let state = self.shared.lock();
        match (state.engine.conn().status(), state.server_end) {
            (
                Status::Closed(mcp_sansio::CloseReason::Eof),
                Some(ServerEnd { by: EndedBy::Itself | EndedBy::StdinClosed, exit: Some(exit) }),
            ) => Status::Closed(mcp_sansio::CloseReason::Exited(exit)),
            (status, _) => status,
        }
    }

    /// Counters of this connection: requests tracked, completed, failed, timed out and
    /// cancelled; messages and bytes received; parse errors, invalid, late and unknown
    /// messages. The engine keeps them ([`ClientConnection::stats`]); this is a copy.
    pub fn stats(&self) -> mcp_sansio::Stats {
        self.shared.lock().engine.conn().stats()
    }

    /// How many of this handle's calls (and its clones') await their response now.
    pub fn pending_requests(&self) -> usize {
        self.shared.lock().calls.len()
    }

    /// The server process id, for stdio servers.
    pub fn server_pid(&self) -> Option<u32> {
        self.shared.lock().server_pid
    }

    /// Closes the connection (pending calls fail with
    /// [`CloseReason::Local`](mcp_sansio::CloseReason::Local)) and waits until the driver has
    /// finished: the transport is closed and a server process is gone, however stubborn (see
    /// [`ServerCommand`] for the shutdown sequence: what was still queued for the server is
    /// written within the first step, and the whole takes at most twice
    /// [`shutdown_step`](ServerCommand::shutdown_step)).
    ///
    /// Returns how the server process ended ([`ServerEnd`]: on its own, once its stdin closed,
    /// on SIGTERM or by SIGKILL, with its exit status), the same on every call; `None` for a
    /// connection without a process (HTTP, [`ClientBuilder::connect`]) or when the driver was
    /// dropped before its shutdown ended.
    ///
    /// This waits for the driver, so the driver must be running (or dropped: then this
    /// returns at once).
    pub async fn close(&self) -> Option<ServerEnd> {
        {
            self.shared.lock().commands().close();
            self.shared.wake();
        }
        self.closed().await;
        self.shared.lock().server_end
    }

    /// Waits until the driver has finished (or was dropped), without closing anything.
    pub async fn closed(&self) {
        poll_fn(|cx| {
            let mut state = self.shared.lock();
            if state.driver != DriverLife::Running {
                Poll::Ready(())
            } else {
                state.watch(cx.waker());
                Poll::Pending
            }
        })
        .await
    }

    /// Like [`close`](Self::close), but gives up waiting after `limit`; `true` if the driver
    /// finished in time.
    pub async fn close_within(&self, limit: Duration) -> bool {
        let closed = async {
            self.close().await;
            true
        };
        let clock = &*self.shared.clock;
        let timeout = async {
            // A limit past the end of time never comes.
            match clock.now().checked_add(limit) {
                Some(at) => sleep_until(clock, at).await,
                None => std::future::pending().await,
            }
            false
        };
        futures_lite::future::or(closed, timeout).await
    }
}

impl ClientApi for Client {
    fn request<R: Request>(
        &self,
        params: &R::Params,
        options: CallOptions,
    ) -> impl Future<Output = Result<R::Result, Error>> + Send + 'static + use<R>
    where
        R::Result: Send,
    {
        Client::request::<R>(self, params, options)
    }

    /// `ping` up to 2025-11-25, `server/discover` on 2026-07-28 (see [`ClientApi::ping`]).
    fn ping(&self) -> impl Future<Output = Result<(), Error>> + Send {
        self.send_ping(CallOptions::default()).unwrap_or_else(PingCall::refused)
    }

    /// Also teaches the output-schema validator (if on) the tools' `outputSchema`s.
    fn list_tools(
        &self,
        cursor: Option<String>,
    ) -> impl Future<Output = Result<ListToolsResult, Error>> + Send {
        self.send_list_tools(cursor, CallOptions::default()).unwrap_or_else(ListToolsCall::refused)
    }

    /// Also checks the result against the tool's `outputSchema`, when
    /// `ClientBuilder::validate_output` is on (`output-schema` feature).
    fn call_tool_with<'s>(
        &'s self,
        params: &CallToolRequestParams,
        options: CallOptions,
    ) -> impl Future<Output = Result<CallToolResult, Error>> + Send + use<'s> {
        self.send_call_tool(params, options).unwrap_or_else(ToolCall::refused)
    }

    /// Serializes the arguments once, into the request (no `serde_json::to_value`).
    fn call_tool<A: Serialize>(
        &self,
        name: &str,
        arguments: A,
    ) -> impl Future<Output = Result<CallToolResult, Error>> + Send {
        // Without an `async` block around the call: this is the shape the README shows, and its
        // future stays as small as the call itself.
        self.call_tool_with_options(name, arguments, CallOptions::default())
    }

    /// Serializes the arguments once, into the request (no `serde_json::to_value`).
    fn call_tool_with_options<A: Serialize>(
        &self,
        name: &str,
        arguments: A,
        options: CallOptions,
    ) -> impl Future<Output = Result<CallToolResult, Error>> + Send {
        ToolCallParams::new(name, &arguments)
            .and_then(|params| self.send_tool_call::<CallToolArguments<'_, A>>(name, &params, options))
            .unwrap_or_else(ToolCall::refused)
    }
}

/// A health check on its way: `ping`, or `server/discover` on 2026-07-28, whose answer also
/// renews what the client keeps of the server.
pub(crate) struct PingCall {
    call: Decode<serde::de::IgnoredAny>,
    rediscover: Option<Arc<Connection>>,
}

impl PingCall {
    fn refused(error: Error) -> Self {
        PingCall { call: Decode::refused(error, Ping::METHOD), rediscover: None }
    }
}

impl Future for PingCall {
    type Output = Result<(), Error>;

    fn poll(self: std::pin::Pin<&mut Self>, cx: &mut std::task::Context<'_>) -> Poll<Self::Output> {
        let this = self.get_mut();
        let answer = std::task::ready!(std::pin::Pin::new(&mut this.call).poll(cx));
        if let (Ok(_), Some(shared)) = (&answer, this.rediscover.take()) {
            shared.lock().remember_session();
        }
        Poll::Ready(answer.map(drop))
    }
}

/// A `tools/list` page on its way, which teaches the output-schema validator (if on) the
/// tools' `outputSchema`s when it arrives.
pub(crate) struct ListToolsCall {
    page: Decode<ListToolsResult>,
    #[cfg(feature = "output-schema")]
    learn: Option<(OutputSchemas, Arc<Connection>)>,
}

impl ListToolsCall {
    /// A page refused before anything was sent.
    pub(crate) fn refused(error: Error) -> Self {
        ListToolsCall {
            page: Decode::refused(error, ListTools::METHOD),
            #[cfg(feature = "output-schema")]
            learn: None,
        }
    }
}

impl Future for ListToolsCall {
    type Output = Result<ListToolsResult, Error>;

    fn poll(self: std::pin::Pin<&mut Self>, cx: &mut std::task::Context<'_>) -> Poll<Self::Output> {
        let this = self.get_mut();
        let page = std::task::ready!(std::pin::Pin::new(&mut this.page).poll(cx));
        #[cfg(feature = "output-schema")]
        if let (Ok(page), Some((schemas, shared))) = (&page, this.learn.take()) {
            schemas.remember(&page.tools);
            shared.extras.tools_listed.store(true, std::sync::atomic::Ordering::Relaxed);
        }
        Poll::Ready(page)
    }
}

/// A `tools/call` on its way: plain (the default), or checked against the tool's
/// `outputSchema` (boxed: the check may list the tools first, a large future, and only
/// connections that validate pay for it).
pub(crate) enum ToolCall {
    Plain(Decode<CallToolResult>),
    #[cfg(feature = "output-schema")]
    Checked(std::pin::Pin<Box<dyn Future<Output = Result<CallToolResult, Error>> + Send>>),
}

impl ToolCall {
    fn refused(error: Error) -> Self {
        ToolCall::Plain(Decode::refused(error, CallTool::METHOD))
    }
}

impl Future for ToolCall {
    type Output = Result<CallToolResult, Error>;

    fn poll(self: std::pin::Pin<&mut Self>, cx: &mut std::task::Context<'_>) -> Poll<Self::Output> {
        match self.get_mut() {
            ToolCall::Plain(call) => std::pin::Pin::new(call).poll(cx),
            #[cfg(feature = "output-schema")]
            ToolCall::Checked(call) => call.as_mut().poll(cx),
        }
    }
}

impl Client {
    /// `tools/list`, one page, sent now: the engine's refusal at once, or the future of the
    /// page, which also teaches the output-schema validator (if on) the tools' `outputSchema`s.
    pub(crate) fn send_list_tools(
        &self,
        cursor: Option<String>,
        options: CallOptions,
    ) -> Result<ListToolsCall, Error> {
        let page = self.send::<ListTools>(&PaginatedRequestParams::with_cursor(cursor), options)?;
        Ok(ListToolsCall {
            page,
            #[cfg(feature = "output-schema")]
            learn: self.shared.extras.output_schemas.clone().map(|schemas| (schemas, self.shared.clone())),
        })
    }

    /// `tools/call`, sent now: the engine's refusal at once, or the future of the result,
    /// checked against the tool's `outputSchema` when [`ClientBuilder::validate_output`] is on.
    pub(crate) fn send_call_tool(
        &self,
        params: &CallToolRequestParams,
        options: CallOptions,
    ) -> Result<ToolCall, Error> {
        self.send_tool_call::<CallTool>(&params.name, params, options)
    }

    /// [`send_call_tool`](Self::send_call_tool) of tool `name` with params of any shape, such
    /// as [`ToolCallParams`] borrowing the caller's arguments.
    pub(crate) fn send_tool_call<R: Request<Result = CallToolResult>>(
        &self,
        name: &str,
        params: &R::Params,
        options: CallOptions,
    ) -> Result<ToolCall, Error> {
        let call = self.send::<R>(params, options)?;
        Ok(self.checked_tool_call(name, call))
    }

    /// Checks tool `name`'s result against its `outputSchema` when
    /// [`ClientBuilder::validate_output`] is on (listing the tools first if nothing did).
    pub(crate) async fn check_output(
        &self,
        #[cfg_attr(not(feature = "output-schema"), allow(unused_variables))] name: &str,
        #[cfg_attr(not(feature = "output-schema"), allow(unused_variables))] result: &CallToolResult,
    ) -> Result<(), Error> {
        #[cfg(feature = "output-schema")]
        if let Some(schemas) = self.shared.extras.output_schemas.clone() {
            if !self.shared.extras.tools_listed.load(std::sync::atomic::Ordering::Relaxed) {
                // Nothing listed the tools yet on this connection: the cached list does.
                self.tools().await?;
            }
            schemas.check(name, result)?;
        }
        Ok(())
    }

    /// A tool call's result on its way, checked against tool `name`'s `outputSchema` when
    /// [`ClientBuilder::validate_output`] is on (a call, or a task the call became).
    pub(crate) fn checked_tool_call(
        &self,
        #[cfg_attr(not(feature = "output-schema"), allow(unused_variables))] name: &str,
        call: Decode<CallToolResult>,
    ) -> ToolCall {
        #[cfg(feature = "output-schema")]
        if self.shared.extras.output_schemas.is_some() {
            let (tool, client) = (name.to_owned(), self.clone());
            return ToolCall::Checked(Box::pin(async move {
                let result = call.await?;
                client.check_output(&tool, &result).await?;
                Ok(result)
            }));
        }
        ToolCall::Plain(call)
    }
}

impl Client {
    /// The health check, sent now: `ping`, or `server/discover` on a 2026-07-28 connection
    /// (which has no `ping`). Its answer is not decoded, only awaited.
    pub(crate) fn send_ping(&self, options: CallOptions) -> Result<PingCall, Error> {
        let version = self.shared.lock().engine.conn().protocol_version();
        if version.is_some_and(ProtocolVersion::is_modern) {
            let call = self.send_as::<Discover, _>(&EmptyParams::default(), options)?;
            Ok(PingCall { call, rediscover: Some(self.shared.clone()) })
        } else {
            Ok(PingCall {
                call: self.send_as::<Ping, _>(&EmptyParams::default(), options)?,
                rediscover: None,
            })
        }
    }
}

/// Every item of a list, with its folded cache hints (`ttlMs`, `cacheScope`).
type ListFetch<T> = Result<(Vec<T>, Option<u64>, Option<String>), Error>;

/// Fetches every page of a cacheable list with `page`, folding the pages' cache hints.
async fn fetch_list<P, F>(method: &'static str, page: impl FnMut(Option<String>) -> F) -> ListFetch<P::Item>
where
    P: Paginated + CacheablePage,
    F: Future<Output = Result<P, Error>>,
{
    let (mut ttl, mut scope) = (None, None);
    let items = paginate(method, page, |page| fold_hints(page, &mut ttl, &mut scope)).await?;
    Ok((items, ttl, scope))
}
