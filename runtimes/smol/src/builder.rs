//! [`ClientBuilder`]: configuration, user code and transport of a new connection, and the
//! `spawn_*` helpers that run its driver on a thread of its own.

use std::sync::Arc;

use futures_lite::{AsyncRead, AsyncWrite};
#[cfg(feature = "http")]
use mcp_sansio::auth::Authorizer;
#[cfg(feature = "http")]
use mcp_sansio::http::{HttpConfig, HttpSession};
use mcp_sansio::schema::{ClientCapabilities, Implementation};
use mcp_sansio::{ClientConfig, ClientConnection, ProtocolViolation, ServerNotification};

use crate::Error;
#[cfg(feature = "http")]
use crate::auth::{OAuth, OsRandom, unix_now};
use crate::cache::{ListCache, ListCacheConfig};
use crate::client::Client;
use crate::clock::{AsyncIoClock, Clock};
#[cfg(feature = "http")]
use crate::driver::authorize::AuthIo;
use crate::driver::{Connection, Driver, UserCode};
use crate::era::{EraCache, EraMemo};
use crate::handler::{ClientHandler, DefaultHandler};
#[cfg(feature = "http")]
use crate::http::HttpTransport;
use crate::notifications::{Broadcast, DEFAULT_CAPACITY, FnHandler, NotificationHandler};
#[cfg(feature = "output-schema")]
use crate::output_schema::OutputSchemas;
use crate::shared::{Engine, Extras, ViolationFn};
use crate::source_waker::PumpHere;
use crate::stdio::{ServerCommand, drain_stderr};

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
    /// The clock is the crate's own ([`AsyncIoClock`]), not one given to [`clock`](Self::clock).
    own_clock: bool,
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
            own_clock: true,
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
    /// response (a [`Notifications`](crate::Notifications) subscription has it by then). A handler that panics is
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
    /// one, with an example). The [`EraCache`], shared between builders, ages its entries on a
    /// clock of its own ([`EraCache::with_clock`]).
    ///
    /// A clock of your own is a source the crate does not control (its timers may wake under
    /// a lock of their own), so its connection's news always goes through the driver's task
    /// (see [`Driver`]): a hop per response over stdio that the default clock does not cost.
    pub fn clock(mut self, clock: impl Clock) -> Self {
        self.clock = Arc::new(clock);
        self.own_clock = false;
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
    /// [`CallOptions::trace`](crate::CallOptions::trace)) keeps it. Off by default: nothing is added.
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
        let shared = Connection::new(engine, extras, self.clock);
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
        let own_clock = self.own_clock;
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
        let driver = driver.with_process(server.process).with_background(pump);
        // The child's pipes and the process are the crate's own sources; the timers are too
        // unless the clock is the application's.
        Ok((client, if own_clock { driver.pump_where_news_lands(PumpHere::Always) } else { driver }))
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
        let shared = Connection::new(engine, extras, self.clock);
        shared.lock().era = era;
        let inline = self.own_clock && transport.wakes_outside_its_locks();
        let driver = Driver::http(shared.clone(), key, Arc::new(transport), code, &origin, auth);
        (
            Client::from_shared(shared),
            if inline { driver.pump_where_news_lands(PumpHere::WhileAlone) } else { driver },
        )
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
