//! [`Client`]: the cheap, cloneable handle applications call, and its [`ClientApi`] impl.
//! (The builder is in `builder.rs`; the futures of the calls that do more than decode a
//! response, in `calls.rs`.)

use std::future::{Future, poll_fn};
use std::sync::Arc;
use std::task::Poll;
use std::time::{Duration, Instant};

use mcp_sansio::schema::{
    CallTool, CallToolRequestParams, CallToolResult, Discover, DiscoverResult, EmptyParams, Implementation,
    ListPrompts, ListResources, ListTools, ListToolsResult, Paginated, PaginatedRequest,
    PaginatedRequestParams, Ping, Prompt, Request, Resource, ServerCapabilities, Tool,
};
use mcp_sansio::{ClientConnection, Commands, ProtocolVersion, Status, UsageError};
use serde::Serialize;

use crate::Error;
use crate::api::{ClientApi, paginate};
use crate::arguments::{CallToolArguments, ToolCallParams, recycle, serialize_params};
use crate::cache::{CacheInfo, CacheablePage, fold_hints};
use crate::call::{CallOptions, Decode, ResponseFuture, Write};
use crate::calls::{ListToolsCall, PingCall, ToolCall};
use crate::clock::sleep_until;
use crate::driver::Connection;
use crate::notifications::{ListKind, Notifications};
use crate::shared::{DriverLife, Slot};
use crate::stdio::{EndedBy, ServerEnd};

/// A handle to one MCP connection: cheap to clone, `Send + Sync`, usable from any task.
///
/// Every call is checked by the engine first (readiness, server capabilities) and fails with
/// [`Error::Usage`] without sending anything when refused. Every call has a deadline (see
/// [`CallOptions`]). **Dropping a call's future cancels the request**: the server receives
/// `notifications/cancelled`. When the last handle is dropped, the connection closes and the
/// server process is shut down by the driver. If the [`Driver`](crate::Driver) is dropped instead, every call
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
    pub(crate) fn from_shared(shared: Arc<Connection>) -> Self {
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
        let alone = state.calls.len() == 1;
        drop(state);
        let on_sent = options.on_sent.map(|on_sent| (on_sent, id.clone()));
        let write = if alone {
            // On the wire when this returns, unless someone is pumping (who then writes it).
            self.shared.send_now();
            Write::Done
        } else {
            // Written with the others made in this turn of the executor (see `Write`).
            Write::AfterOthers(self.shared.pump.defer())
        };
        // From here the call's future owns its slot: whatever happens next (a panic included),
        // dropping it cancels the request and frees the slot.
        let response = ResponseFuture::new(self.shared.clone(), id, method, options.on_progress, write);
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
    /// [`ServerCommand`](crate::ServerCommand) for the shutdown sequence: what was still queued for the server is
    /// written within the first step, and the whole takes at most twice
    /// [`shutdown_step`](crate::ServerCommand::shutdown_step)).
    ///
    /// Returns how the server process ended ([`ServerEnd`]: on its own, once its stdin closed,
    /// on SIGTERM or by SIGKILL, with its exit status), the same on every call; `None` for a
    /// connection without a process (HTTP, [`ClientBuilder::connect`](crate::ClientBuilder::connect)) or when the driver was
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

impl Client {
    /// `tools/list`, one page, sent now: the engine's refusal at once, or the future of the
    /// page, which also teaches the output-schema validator (if on) the tools' `outputSchema`s.
    pub(crate) fn send_list_tools(
        &self,
        cursor: Option<String>,
        options: CallOptions,
    ) -> Result<ListToolsCall, Error> {
        let page = self.send::<ListTools>(&PaginatedRequestParams::with_cursor(cursor), options)?;
        Ok(ListToolsCall::sent(page, &self.shared))
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
            Ok(PingCall::sent(call, Some(self.shared.clone())))
        } else {
            Ok(PingCall::sent(self.send_as::<Ping, _>(&EmptyParams::default(), options)?, None))
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
