//! [`Client`]: the cheap, cloneable handle applications call, and [`ClientBuilder`].

use std::collections::{BTreeMap, HashSet};
use std::future::{Future, poll_fn};
use std::sync::Arc;
use std::task::Poll;
use std::time::{Duration, Instant};

use futures_lite::{AsyncRead, AsyncWrite};
use mcp_sansio::http::{HttpConfig, HttpSession};
use mcp_sansio::schema::{
    CallTool, CallToolRequestParams, CallToolResult, Complete, CompleteRequestParams, CompleteResult,
    Discover, DiscoverResult, EmptyParams, GetPrompt, GetPromptRequestParams, GetPromptResult,
    Implementation, ListPrompts, ListPromptsResult, ListResourceTemplates, ListResourceTemplatesResult,
    ListResources, ListResourcesResult, ListTools, ListToolsResult, LoggingLevel, Paginated,
    PaginatedRequest, PaginatedRequestParams, Ping, Prompt, ReadResource, ReadResourceRequestParams,
    ReadResourceResult, Request, Resource, ResourceTemplate, ServerCapabilities, SetLevel,
    SetLevelRequestParams, Subscribe, SubscribeRequestParams, Tool, Unsubscribe, UnsubscribeRequestParams,
};
use mcp_sansio::{ClientConfig, ClientConnection, ProtocolVersion, Status, UsageError};

use crate::Error;
use crate::call::{CallOptions, ResponseFuture};
use crate::driver::Driver;
use crate::era::{EraCache, EraMemo};
use crate::handler::{ClientHandler, DefaultHandler};
use crate::http::HttpTransport;
use crate::notifications::Notifications;
use crate::shared::{Engine, Shared, Slot};
use crate::stdio::{ServerCommand, drain_stderr};

/// Most pages a `list_all_*` helper fetches before giving up on a server that never stops.
const MAX_PAGES: usize = 10_000;

/// Capacity of each notification subscription; a subscriber that falls this far behind loses
/// notifications (with a warning) rather than growing memory without bound.
const NOTIFICATION_BUFFER: usize = 1024;

/// Builds a [`Client`]: configuration, the server-request handler, and the transport.
///
/// ```no_run
/// # smol::block_on(async {
/// use mcp_smol::{ClientBuilder, ServerCommand};
/// use mcp_sansio::schema::Implementation;
///
/// let client = ClientBuilder::new(Implementation::new("my-app", "1.0.0"))
///     .spawn_stdio(&ServerCommand::new("mcp-demo-server"))
///     .await?;
/// for tool in client.list_all_tools().await? {
///     println!("{}", tool.name);
/// }
/// client.close().await;
/// # Ok::<(), mcp_smol::Error>(()) });
/// ```
pub struct ClientBuilder {
    config: ClientConfig,
    handler: Arc<dyn ClientHandler>,
    era_cache: Option<EraCache>,
}

impl ClientBuilder {
    /// A builder with the engine's defaults and the [`DefaultHandler`].
    pub fn new(client_info: Implementation) -> Self {
        Self::with_config(ClientConfig::new(client_info))
    }

    /// A builder with a full engine configuration.
    pub fn with_config(config: ClientConfig) -> Self {
        Self { config, handler: Arc::new(DefaultHandler), era_cache: Some(EraCache::global().clone()) }
    }

    /// Changes the engine configuration in place.
    pub fn configure(mut self, f: impl FnOnce(ClientConfig) -> ClientConfig) -> Self {
        self.config = f(self.config);
        self
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

    /// Applies the era cache for the server known as `key`.
    fn remember_era(&mut self, key: String) -> Option<EraMemo> {
        EraMemo::apply(self.era_cache.clone()?, key, &mut self.config)
    }

    /// Connects over any byte streams: returns the handle and the [`Driver`] to spawn on an
    /// executor. Wait for the handshake with [`Client::ready`]. (There is no telling which
    /// server is at the other end, so the era cache does not apply.)
    pub fn connect(
        self,
        reader: impl AsyncRead + Send + 'static,
        writer: impl AsyncWrite + Send + 'static,
    ) -> (Client, Driver) {
        let shared = Shared::new(Engine::Stream(ClientConnection::new(self.config, Instant::now())));
        let driver = Driver::new(shared.clone(), reader, writer, self.handler);
        (Client::from_shared(shared), driver)
    }

    /// Starts a stdio server process: returns the handle and the [`Driver`] to spawn on an
    /// executor. Wait for the handshake with [`Client::ready`].
    pub fn stdio(mut self, command: &ServerCommand) -> Result<(Client, Driver), Error> {
        let era = self.remember_era(format!("stdio:{}", command.identity()));
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

    /// Starts a stdio server, runs its driver on smol's global executor, and waits for the
    /// handshake.
    pub async fn spawn_stdio(self, command: &ServerCommand) -> Result<Client, Error> {
        let (client, driver) = self.stdio(command)?;
        smol::spawn(driver).detach();
        client.ready().await?;
        Ok(client)
    }

    /// Connects to an MCP server over HTTP (Streamable HTTP, falling back to the 2024-11-05
    /// HTTP+SSE transport): returns the handle and the [`Driver`] to spawn on an executor. Wait
    /// for the handshake with [`Client::ready`].
    ///
    /// `transport` executes the HTTP requests: `mcp_hyper::HyperTransport` (recommended) or
    /// `mcp_surf::SurfTransport`. The URL, custom headers (such as `Authorization`, never
    /// logged), timeouts and the reconnection policy are in `http`.
    pub fn connect_http(mut self, http: HttpConfig, transport: impl HttpTransport) -> (Client, Driver) {
        let era =
            self.remember_era(format!("http:{}", http.origin().unwrap_or_else(|| http.url().to_owned())));
        let session = HttpSession::new(http, self.config, Instant::now());
        let shared = Shared::new(Engine::Http(session));
        shared.lock().era = era;
        let driver = Driver::http(shared.clone(), Arc::new(transport), self.handler);
        (Client::from_shared(shared), driver)
    }

    /// Connects over HTTP, runs the driver on smol's global executor, and waits for the
    /// handshake.
    ///
    /// ```no_run
    /// # smol::block_on(async {
    /// # fn transport() -> impl mcp_smol::HttpTransport { unimplemented!() as std::sync::Arc<dyn mcp_smol::HttpTransport> }
    /// use mcp_sansio::http::HttpConfig;
    /// use mcp_sansio::schema::Implementation;
    /// use mcp_smol::ClientBuilder;
    ///
    /// let http = HttpConfig::new("http://127.0.0.1:3000/mcp").header("Authorization", "Bearer t");
    /// // `transport()` stands for `mcp_hyper::HyperTransport::new()`.
    /// let client = ClientBuilder::new(Implementation::new("my-app", "1.0.0")).spawn_http(http, transport()).await?;
    /// println!("{:?}", client.list_all_tools().await?);
    /// client.close().await;
    /// # Ok::<(), mcp_smol::Error>(()) });
    /// ```
    pub async fn spawn_http(self, http: HttpConfig, transport: impl HttpTransport) -> Result<Client, Error> {
        let (client, driver) = self.connect_http(http, transport);
        smol::spawn(driver).detach();
        client.ready().await?;
        Ok(client)
    }

    /// Connects over byte streams, runs the driver on smol's global executor, and waits for
    /// the handshake.
    pub async fn spawn_connect(
        self,
        reader: impl AsyncRead + Send + 'static,
        writer: impl AsyncWrite + Send + 'static,
    ) -> Result<Client, Error> {
        let (client, driver) = self.connect(reader, writer);
        smol::spawn(driver).detach();
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
/// server process is shut down by the driver.
pub struct Client {
    shared: Arc<Shared>,
}

impl Clone for Client {
    fn clone(&self) -> Self {
        Client::from_shared(self.shared.clone())
    }
}

impl Drop for Client {
    fn drop(&mut self) {
        let mut state = self.shared.lock();
        state.handles -= 1;
        if state.handles == 0 && !state.conn().is_closed() {
            state.conn().close(Instant::now());
            state.wake_driver();
        }
    }
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client").field("status", &self.status()).finish_non_exhaustive()
    }
}

impl Client {
    fn from_shared(shared: Arc<Shared>) -> Self {
        shared.lock().handles += 1;
        Self { shared }
    }

    /// Waits for the handshake: `Ok` once ready, [`Error::Connect`] if the connection closed
    /// first (the server exited, refused, or chose a version the client does not accept).
    pub async fn ready(&self) -> Result<(), Error> {
        poll_fn(|cx| {
            let mut state = self.shared.lock();
            match state.conn().status() {
                Status::Ready => Poll::Ready(Ok(())),
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
    /// The request is sent when this is called, not when the future is first polled (unlike
    /// the `async fn` helpers below). The returned future owns everything it needs
    /// (`'static`), so it can be spawned; dropping it cancels the request.
    pub fn request<R: Request>(
        &self,
        params: &R::Params,
        options: CallOptions,
    ) -> impl Future<Output = Result<R::Result, Error>> + Send + 'static + use<R>
    where
        R::Result: Send,
    {
        let started = self.start(options, |conn, now, options| conn.send::<R>(now, params, options));
        async move {
            let raw = started?.await?;
            serde_json::from_str(raw.get()).map_err(|source| Error::Decode { method: R::METHOD, source })
        }
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
            self.start(options, |conn, now, options| conn.send_request(now, method, params, options));
        async move { Ok(started?.await?) }
    }

    /// Sends a notification to the server (e.g. `notifications/roots/list_changed`).
    pub fn notify(&self, method: &str, params: Option<&serde_json::value::RawValue>) -> Result<(), Error> {
        let mut state = self.shared.lock();
        state.conn().notify(method, params.map(|p| p.get().as_bytes()))?;
        state.wake_driver();
        Ok(())
    }

    fn start(
        &self,
        options: CallOptions,
        send: impl FnOnce(
            &mut ClientConnection,
            Instant,
            mcp_sansio::RequestOptions,
        ) -> Result<mcp_sansio::RequestId, UsageError>,
    ) -> Result<ResponseFuture, Error> {
        let mut state = self.shared.lock();
        let id = send(state.conn(), Instant::now(), options.request)?;
        state.calls.insert(id.clone(), Slot { waker: None, result: None, on_progress: options.on_progress });
        state.wake_driver();
        drop(state);
        Ok(ResponseFuture::new(self.shared.clone(), id))
    }

    /// Fetches every page of a paginated list. Stops with an error if the server repeats a
    /// cursor (it would loop forever otherwise).
    pub async fn list_all<R: PaginatedRequest>(&self) -> Result<Vec<<R::Result as Paginated>::Item>, Error>
    where
        R::Result: Send,
    {
        let mut items = Vec::new();
        let mut seen = HashSet::new();
        let mut cursor = None;
        for _ in 0..MAX_PAGES {
            let params = PaginatedRequestParams { cursor, ..Default::default() };
            let page = self.request::<R>(&params, CallOptions::default()).await?;
            let next = page.next_cursor().map(str::to_owned);
            items.extend(page.into_items());
            match next {
                None => return Ok(items),
                Some(next) if seen.insert(next.clone()) => cursor = Some(next),
                Some(next) => {
                    let reason = format!("the server returned cursor {next:?} twice");
                    return Err(Error::Pagination { method: R::METHOD, reason });
                }
            }
        }
        Err(Error::Pagination { method: R::METHOD, reason: format!("more than {MAX_PAGES} pages") })
    }

    // ----- typed methods -----

    /// `ping`: checks that the server answers.
    pub async fn ping(&self) -> Result<(), Error> {
        self.request::<Ping>(&EmptyParams::default(), CallOptions::default()).await.map(drop)
    }

    /// `tools/list`: one page.
    pub async fn list_tools(&self, cursor: Option<String>) -> Result<ListToolsResult, Error> {
        self.request::<ListTools>(&PaginatedRequestParams::with_cursor(cursor), CallOptions::default()).await
    }

    /// `tools/list`: every page.
    pub async fn list_all_tools(&self) -> Result<Vec<Tool>, Error> {
        self.list_all::<ListTools>().await
    }

    /// `tools/call` with JSON arguments (an object, or `null` for none).
    ///
    /// A tool that fails reports it in the result (`is_error`), not as an `Err`.
    pub async fn call_tool(&self, name: &str, arguments: serde_json::Value) -> Result<CallToolResult, Error> {
        let mut params = CallToolRequestParams::new(name);
        params.arguments = match arguments {
            serde_json::Value::Object(map) => Some(map),
            serde_json::Value::Null => None,
            _ => return Err(UsageError::InvalidParams("tool arguments must be a JSON object".into()).into()),
        };
        self.call_tool_with(&params, CallOptions::default()).await
    }

    /// `tools/call` with full params and per-call options (timeout, progress, `_meta`).
    pub async fn call_tool_with(
        &self,
        params: &CallToolRequestParams,
        options: CallOptions,
    ) -> Result<CallToolResult, Error> {
        self.request::<CallTool>(params, options).await
    }

    /// `resources/list`: one page.
    pub async fn list_resources(&self, cursor: Option<String>) -> Result<ListResourcesResult, Error> {
        self.request::<ListResources>(&PaginatedRequestParams::with_cursor(cursor), CallOptions::default())
            .await
    }

    /// `resources/list`: every page.
    pub async fn list_all_resources(&self) -> Result<Vec<Resource>, Error> {
        self.list_all::<ListResources>().await
    }

    /// `resources/templates/list`: one page.
    pub async fn list_resource_templates(
        &self,
        cursor: Option<String>,
    ) -> Result<ListResourceTemplatesResult, Error> {
        let params = PaginatedRequestParams::with_cursor(cursor);
        self.request::<ListResourceTemplates>(&params, CallOptions::default()).await
    }

    /// `resources/templates/list`: every page.
    pub async fn list_all_resource_templates(&self) -> Result<Vec<ResourceTemplate>, Error> {
        self.list_all::<ListResourceTemplates>().await
    }

    /// `resources/read`.
    pub async fn read_resource(&self, uri: &str) -> Result<ReadResourceResult, Error> {
        self.request::<ReadResource>(&ReadResourceRequestParams::new(uri), CallOptions::default()).await
    }

    /// `resources/subscribe`: updates arrive as
    /// [`ServerNotification::ResourceUpdated`](mcp_sansio::ServerNotification::ResourceUpdated).
    pub async fn subscribe(&self, uri: &str) -> Result<(), Error> {
        self.request::<Subscribe>(&SubscribeRequestParams::new(uri), CallOptions::default()).await.map(drop)
    }

    /// `resources/unsubscribe`.
    pub async fn unsubscribe(&self, uri: &str) -> Result<(), Error> {
        self.request::<Unsubscribe>(&UnsubscribeRequestParams::new(uri), CallOptions::default())
            .await
            .map(drop)
    }

    /// `prompts/list`: one page.
    pub async fn list_prompts(&self, cursor: Option<String>) -> Result<ListPromptsResult, Error> {
        self.request::<ListPrompts>(&PaginatedRequestParams::with_cursor(cursor), CallOptions::default())
            .await
    }

    /// `prompts/list`: every page.
    pub async fn list_all_prompts(&self) -> Result<Vec<Prompt>, Error> {
        self.list_all::<ListPrompts>().await
    }

    /// `prompts/get` with string arguments.
    pub async fn get_prompt<K: Into<String>, V: Into<String>>(
        &self,
        name: &str,
        arguments: impl IntoIterator<Item = (K, V)>,
    ) -> Result<GetPromptResult, Error> {
        let arguments: BTreeMap<String, String> =
            arguments.into_iter().map(|(k, v)| (k.into(), v.into())).collect();
        let mut params = GetPromptRequestParams::new(name);
        if !arguments.is_empty() {
            params = params.with_arguments(arguments);
        }
        self.request::<GetPrompt>(&params, CallOptions::default()).await
    }

    /// `completion/complete`: suggestions for a prompt or resource-template argument.
    pub async fn complete(&self, params: &CompleteRequestParams) -> Result<CompleteResult, Error> {
        self.request::<Complete>(params, CallOptions::default()).await
    }

    /// `logging/setLevel`: the least severe level the server should send.
    pub async fn set_log_level(&self, level: LoggingLevel) -> Result<(), Error> {
        self.request::<SetLevel>(&SetLevelRequestParams::new(level), CallOptions::default()).await.map(drop)
    }

    // ----- state -----

    /// Server notifications from now on, as a `Stream`. Each call makes an independent
    /// subscription; subscribe before making the calls whose notifications you want.
    pub fn notifications(&self) -> Notifications {
        let (tx, rx) = async_channel::bounded(NOTIFICATION_BUFFER);
        self.shared.lock().subscribers.push(tx);
        Notifications::new(rx)
    }

    /// The server's `server/discover` result (2026-07-28): the one the connection has while
    /// its `ttlMs` lasts, else asked for again, which also refreshes the server's capabilities,
    /// info and instructions. On an `initialize`-era connection it fails with
    /// [`Error::Usage`]: the method does not exist there.
    pub async fn discover(&self) -> Result<DiscoverResult, Error> {
        {
            let mut state = self.shared.lock();
            let conn = state.conn();
            if conn.discover_is_fresh(Instant::now()) {
                if let Some(discover) = conn.discover_result() {
                    return Ok(discover.clone());
                }
            }
        }
        self.request::<Discover>(&EmptyParams::default(), CallOptions::default()).await
    }

    /// The server's `serverInfo`, once ready.
    pub fn server_info(&self) -> Option<Implementation> {
        self.shared.lock().conn().server_info().cloned()
    }

    /// The server's capabilities, once ready.
    pub fn server_capabilities(&self) -> Option<ServerCapabilities> {
        self.shared.lock().conn().server_capabilities().cloned()
    }

    /// The server's `instructions`, if any.
    pub fn instructions(&self) -> Option<String> {
        self.shared.lock().conn().instructions().map(str::to_owned)
    }

    /// The negotiated protocol version, once ready.
    pub fn protocol_version(&self) -> Option<ProtocolVersion> {
        self.shared.lock().conn().protocol_version()
    }

    /// Where the connection is in its life.
    pub fn status(&self) -> Status {
        self.shared.lock().conn().status()
    }

    /// Counters of what the engine saw (invalid messages, late responses, …).
    pub fn stats(&self) -> mcp_sansio::Stats {
        self.shared.lock().conn().stats()
    }

    /// The server process id, for stdio servers.
    pub fn server_pid(&self) -> Option<u32> {
        self.shared.lock().server_pid
    }

    /// Closes the connection (pending calls fail with
    /// [`CloseReason::Local`](mcp_sansio::CloseReason::Local)) and waits until the driver has
    /// finished: the transport is closed and a server process is gone, however stubborn (see
    /// [`ServerCommand`] for the shutdown sequence).
    ///
    /// This waits for the driver, so the driver must be running.
    pub async fn close(&self) {
        {
            let mut state = self.shared.lock();
            state.conn().close(Instant::now());
            state.wake_driver();
        }
        self.closed().await;
    }

    /// Waits until the driver has finished, without closing anything.
    pub async fn closed(&self) {
        poll_fn(|cx| {
            let mut state = self.shared.lock();
            if state.driver_done {
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
        let timeout = async {
            async_io::Timer::after(limit).await;
            false
        };
        futures_lite::future::or(closed, timeout).await
    }
}
