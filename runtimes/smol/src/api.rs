//! [`ClientApi`]: the typed MCP requests, shared by a single [`Client`](crate::Client) and a
//! [`Pool`](crate::Pool).
//!
//! Every typed method is written once, here, on top of one required method,
//! [`request`](ClientApi::request). Code that takes `&impl ClientApi` works with a client and
//! with a pool alike.
//!
//! One rule for all of them: **a method sends its request when it is called**, not when its
//! future is first polled. A refusal (not ready, closed, a capability the server lacks) is
//! known at once and its future resolves with it; dropping a future cancels what it sent. The
//! `list_all_*` helpers send the first page when called and each next page when the one before
//! it has arrived (a cursor comes from the previous page).

use std::collections::hash_map::RandomState;
use std::collections::{BTreeMap, HashSet};
use std::future::Future;
use std::hash::BuildHasher;

use mcp_sansio::schema::{
    CallTool, CallToolRequestParams, CallToolResult, Complete, CompleteRequestParams, CompleteResult,
    EmptyParams, GetPrompt, GetPromptRequestParams, GetPromptResult, ListPrompts, ListPromptsResult,
    ListResourceTemplates, ListResourceTemplatesResult, ListResources, ListResourcesResult, ListTools,
    ListToolsResult, LoggingLevel, Paginated, PaginatedRequest, PaginatedRequestParams, Ping, Prompt,
    ReadResource, ReadResourceRequestParams, ReadResourceResult, Request, Resource, ResourceTemplate,
    SetLevel, SetLevelRequestParams, Subscribe, SubscribeRequestParams, Tool, Unsubscribe,
    UnsubscribeRequestParams,
};
use serde::Serialize;

use crate::Error;
use crate::arguments::tool_params;
use crate::call::CallOptions;

/// Most pages a `list_all_*` helper fetches before giving up on a server that never stops.
pub(crate) const MAX_PAGES: usize = 10_000;

/// The typed client→server requests of MCP, for anything that can send a request: a
/// [`Client`](crate::Client) or a [`Pool`](crate::Pool).
///
/// Bring it into scope to call the methods (`use mcp_smol::ClientApi;`, or
/// `use mcp_smol::prelude::*;`).
///
/// ```no_run
/// use mcp_smol::{ClientApi, ClientBuilder, ServerCommand};
/// use mcp_smol::mcp_sansio::schema::Implementation;
///
/// // Works with a `Client` and with a `Pool`.
/// async fn tool_names(api: &impl ClientApi) -> Result<Vec<String>, mcp_smol::Error> {
///     Ok(api.list_all_tools().await?.into_iter().map(|tool| tool.name).collect())
/// }
///
/// fn main() -> Result<(), mcp_smol::Error> {
///     smol::block_on(async {
///         let client = ClientBuilder::new(Implementation::new("my-app", "1.0.0"))
///             .spawn_stdio(&ServerCommand::new("npx").args(["-y", "@modelcontextprotocol/server-everything"]))
///             .await?;
///         println!("{:?}", tool_names(&client).await?);
///         client.close().await;
///         Ok(())
///     })
/// }
/// ```
///
/// **Every method sends its request when called**, not when its future is first polled: a
/// refusal (not ready, closed, a capability the server lacks) is known at once and its future
/// resolves with it, and dropping a future cancels what it sent. The `list_all_*` helpers send
/// the first page when called and each next page when the one before it has arrived.
/// Implementors of [`request`](Self::request) and of any overridden method keep that rule.
///
/// **Options** (timeouts, progress, `_meta`) for any of these calls: make it through
/// [`Client::with_options`](crate::Client::with_options) or
/// [`Pool::with_options`](crate::Pool::with_options), a handle whose calls all use them;
/// [`request`](Self::request) and [`call_tool_with`](Self::call_tool_with) also take them
/// directly.
pub trait ClientApi: Send + Sync {
    /// Sends a typed request and decodes its result.
    ///
    /// The request is sent when this is called, not when the future is first polled. The
    /// returned future owns everything it needs (`'static`), so it can be spawned; dropping it
    /// cancels the request (`notifications/cancelled`).
    fn request<R: Request>(
        &self,
        params: &R::Params,
        options: CallOptions,
    ) -> impl Future<Output = Result<R::Result, Error>> + Send + 'static + use<Self, R>
    where
        R::Result: Send;

    /// Fetches every page of a paginated list. Stops with [`Error::Pagination`] if the server
    /// repeats a cursor (it would loop forever otherwise) or sends more than 10 000 pages.
    /// Spotting a repeat costs 16 bytes per page, however long the server's cursors are: the
    /// listing's memory follows the entries it returns.
    fn list_all<R: PaginatedRequest>(
        &self,
    ) -> impl Future<Output = Result<Vec<<R::Result as Paginated>::Item>, Error>> + Send
    where
        R::Result: Send,
        <R::Result as Paginated>::Item: Send,
    {
        let page = move |cursor| {
            let params = PaginatedRequestParams::with_cursor(cursor);
            self.request::<R>(&params, CallOptions::default())
        };
        paginate(R::METHOD, page, |_| {})
    }

    /// A health check: one round trip to the server, in every protocol version.
    ///
    /// Up to 2025-11-25 it sends `ping`. 2026-07-28 has no `ping`; there it sends
    /// `server/discover`, the one request every server must answer and the cheapest (no
    /// params, no capability needed; the answer also refreshes
    /// [`Client::server_capabilities`](crate::Client::server_capabilities) and the server's
    /// info). It always goes to the server, even while the discover result
    /// [`Client::discover`](crate::Client::discover) serves from memory is fresh.
    ///
    /// [`Client`](crate::Client) and [`Pool`](crate::Pool) choose per connection; this
    /// provided method sends `ping` (`request::<Ping>`), so an implementor of
    /// [`request`](Self::request) alone has a `ping` that its 2026-07-28 connections refuse.
    ///
    /// ```no_run
    /// # smol::block_on(async {
    /// # let client: mcp_smol::Client = unimplemented!();
    /// use std::time::Duration;
    /// use mcp_smol::prelude::*;
    ///
    /// // Fails with a timeout after 5 s without an answer, whichever era the server speaks.
    /// let quick = client.with_options(CallOptions::default().timeout(Duration::from_secs(5)));
    /// if let Err(error) = quick.ping().await {
    ///     eprintln!("the server is not answering: {error}");
    /// }
    /// # });
    /// ```
    fn ping(&self) -> impl Future<Output = Result<(), Error>> + Send {
        let sent = self.request::<Ping>(&EmptyParams::default(), CallOptions::default());
        async move { sent.await.map(drop) }
    }

    /// `tools/list`: one page.
    fn list_tools(
        &self,
        cursor: Option<String>,
    ) -> impl Future<Output = Result<ListToolsResult, Error>> + Send {
        self.request::<ListTools>(&PaginatedRequestParams::with_cursor(cursor), CallOptions::default())
    }

    /// `tools/list`: every page (each through [`list_tools`](Self::list_tools)).
    fn list_all_tools(&self) -> impl Future<Output = Result<Vec<Tool>, Error>> + Send {
        paginate(ListTools::METHOD, move |cursor| self.list_tools(cursor), |_| {})
    }

    /// `tools/call` with `arguments` of any type that serializes as a JSON object: a
    /// `json!({..})`, a `serde_json::Value` or a reference to one, a map, a
    /// `#[derive(Serialize)]` struct. `()`, `None` and `null` send no arguments; anything else
    /// (an array, a string, a number) is refused at once with
    /// [`UsageError::InvalidParams`](mcp_sansio::UsageError::InvalidParams), nothing sent.
    ///
    /// The arguments are serialized when this is called, once, straight into the request (on
    /// a [`Client`](crate::Client) and a [`Pool`](crate::Pool); this provided method calls
    /// [`call_tool_with_options`](Self::call_tool_with_options), whose provided version goes
    /// through [`call_tool_with`](Self::call_tool_with) and `serde_json::to_value`).
    ///
    /// A tool that fails reports it in the result ([`CallToolResult::is_error`]), not as an
    /// `Err`. For per-call options (timeout, progress, `_meta`), call it on
    /// [`Client::with_options`](crate::Client::with_options).
    ///
    /// ```no_run
    /// # smol::block_on(async {
    /// # let client: mcp_smol::Client = unimplemented!();
    /// use mcp_smol::prelude::*;
    /// use serde_json::json;
    ///
    /// #[derive(serde::Serialize)]
    /// struct Weather<'a> {
    ///     city: &'a str,
    ///     days: u8,
    /// }
    ///
    /// let forecast = client.call_tool("weather", Weather { city: "Paris", days: 3 }).await?;
    /// let echoed = client.call_tool("echo", json!({"message": "hi"})).await?;
    /// let image = client.call_tool("tiny_image", ()).await?;
    /// # Ok::<(), mcp_smol::Error>(()) });
    /// ```
    fn call_tool<A: Serialize>(
        &self,
        name: &str,
        arguments: A,
    ) -> impl Future<Output = Result<CallToolResult, Error>> + Send {
        // Sent now, as every method's request is; without an `async` block of its own, so the
        // future is the one `call_tool_with_options` makes.
        self.call_tool_with_options(name, arguments, CallOptions::default())
    }

    /// [`call_tool`](Self::call_tool) with per-call options (timeout, progress, `_meta`, trace
    /// context): the same arguments of any serializable type.
    ///
    /// ```no_run
    /// # smol::block_on(async {
    /// # let client: mcp_smol::Client = unimplemented!();
    /// use std::time::Duration;
    /// use mcp_smol::prelude::*;
    ///
    /// #[derive(serde::Serialize)]
    /// struct Report { year: u16 }
    ///
    /// let options = CallOptions::default().timeout(Duration::from_secs(600));
    /// let report = client.call_tool_with_options("build_report", Report { year: 2026 }, options).await?;
    /// # Ok::<(), mcp_smol::Error>(()) });
    /// ```
    fn call_tool_with_options<A: Serialize>(
        &self,
        name: &str,
        arguments: A,
        options: CallOptions,
    ) -> impl Future<Output = Result<CallToolResult, Error>> + Send {
        let call = tool_params(name, &arguments).map(|params| self.call_tool_with(&params, options));
        async move { call?.await }
    }

    /// `tools/call` with full params (arguments as a JSON object, `_meta`, a 2025-11-25 `task`)
    /// and per-call options. The future does not borrow `params`: they are sent when this is
    /// called.
    fn call_tool_with<'s>(
        &'s self,
        params: &CallToolRequestParams,
        options: CallOptions,
    ) -> impl Future<Output = Result<CallToolResult, Error>> + Send + use<'s, Self> {
        self.request::<CallTool>(params, options)
    }

    /// `resources/list`: one page.
    fn list_resources(
        &self,
        cursor: Option<String>,
    ) -> impl Future<Output = Result<ListResourcesResult, Error>> + Send {
        self.request::<ListResources>(&PaginatedRequestParams::with_cursor(cursor), CallOptions::default())
    }

    /// `resources/list`: every page.
    fn list_all_resources(&self) -> impl Future<Output = Result<Vec<Resource>, Error>> + Send {
        self.list_all::<ListResources>()
    }

    /// `resources/templates/list`: one page.
    fn list_resource_templates(
        &self,
        cursor: Option<String>,
    ) -> impl Future<Output = Result<ListResourceTemplatesResult, Error>> + Send {
        let params = PaginatedRequestParams::with_cursor(cursor);
        self.request::<ListResourceTemplates>(&params, CallOptions::default())
    }

    /// `resources/templates/list`: every page.
    fn list_all_resource_templates(
        &self,
    ) -> impl Future<Output = Result<Vec<ResourceTemplate>, Error>> + Send {
        self.list_all::<ListResourceTemplates>()
    }

    /// `resources/read`.
    fn read_resource(&self, uri: &str) -> impl Future<Output = Result<ReadResourceResult, Error>> + Send {
        self.request::<ReadResource>(&ReadResourceRequestParams::new(uri), CallOptions::default())
    }

    /// `resources/subscribe`: updates arrive as
    /// [`ServerNotification::ResourceUpdated`](mcp_sansio::ServerNotification::ResourceUpdated).
    ///
    /// On 2026-07-28, where `resources/subscribe` does not exist, the same call adds the
    /// resource to the connection's `subscriptions/listen` stream (opening one if needed), and
    /// completes when the server acknowledges the stream's new filter; nothing named
    /// `resources/subscribe` goes on the wire. If the server acknowledges without the resource,
    /// the call fails with
    /// [`RequestError::SubscriptionRefused`](mcp_sansio::RequestError::SubscriptionRefused).
    /// Either way the server must offer `resources.subscribe`.
    fn subscribe(&self, uri: &str) -> impl Future<Output = Result<(), Error>> + Send {
        let sent = self.request::<Subscribe>(&SubscribeRequestParams::new(uri), CallOptions::default());
        async move { sent.await.map(drop) }
    }

    /// `resources/unsubscribe`. On 2026-07-28 it takes the resource out of the listen stream's
    /// filter (replacing the stream, or ending it when nothing is left to listen to) and
    /// completes when the server acknowledges.
    fn unsubscribe(&self, uri: &str) -> impl Future<Output = Result<(), Error>> + Send {
        let sent = self.request::<Unsubscribe>(&UnsubscribeRequestParams::new(uri), CallOptions::default());
        async move { sent.await.map(drop) }
    }

    /// `prompts/list`: one page.
    fn list_prompts(
        &self,
        cursor: Option<String>,
    ) -> impl Future<Output = Result<ListPromptsResult, Error>> + Send {
        self.request::<ListPrompts>(&PaginatedRequestParams::with_cursor(cursor), CallOptions::default())
    }

    /// `prompts/list`: every page.
    fn list_all_prompts(&self) -> impl Future<Output = Result<Vec<Prompt>, Error>> + Send {
        self.list_all::<ListPrompts>()
    }

    /// `prompts/get` with string arguments.
    fn get_prompt<K: Into<String>, V: Into<String>>(
        &self,
        name: &str,
        arguments: impl IntoIterator<Item = (K, V)>,
    ) -> impl Future<Output = Result<GetPromptResult, Error>> + Send {
        let arguments: BTreeMap<String, String> =
            arguments.into_iter().map(|(k, v)| (k.into(), v.into())).collect();
        let mut params = GetPromptRequestParams::new(name);
        if !arguments.is_empty() {
            params = params.with_arguments(arguments);
        }
        self.request::<GetPrompt>(&params, CallOptions::default())
    }

    /// `completion/complete`: suggestions for a prompt or resource-template argument.
    fn complete(
        &self,
        params: &CompleteRequestParams,
    ) -> impl Future<Output = Result<CompleteResult, Error>> + Send {
        self.request::<Complete>(params, CallOptions::default())
    }

    /// `logging/setLevel`: the least severe level the server should send.
    fn set_log_level(&self, level: LoggingLevel) -> impl Future<Output = Result<(), Error>> + Send {
        let sent = self.request::<SetLevel>(&SetLevelRequestParams::new(level), CallOptions::default());
        async move { sent.await.map(drop) }
    }
}

/// Fetches pages with `page(cursor)` until the server sends no next cursor, showing each page
/// to `inspect` first. The first page is asked for now (the rule of [`ClientApi`]); each next
/// one when the page before it has arrived.
pub(crate) fn paginate<P, F>(
    method: &'static str,
    mut page: impl FnMut(Option<String>) -> F,
    inspect: impl FnMut(&P),
) -> impl Future<Output = Result<Vec<P::Item>, Error>>
where
    P: Paginated,
    F: Future<Output = Result<P, Error>>,
{
    let first = page(None);
    paginate_from(method, first, page, inspect)
}

/// [`paginate`] with the first page already asked for.
pub(crate) async fn paginate_from<P, F1, F>(
    method: &'static str,
    first: F1,
    mut page: impl FnMut(Option<String>) -> F,
    mut inspect: impl FnMut(&P),
) -> Result<Vec<P::Item>, Error>
where
    P: Paginated,
    F1: Future<Output = Result<P, Error>>,
    F: Future<Output = Result<P, Error>>,
{
    let mut items = Vec::new();
    let mut seen = SeenCursors::default();
    let mut result = first.await?;
    for _ in 0..MAX_PAGES {
        inspect(&result);
        let next = result.next_cursor().map(str::to_owned);
        items.extend(result.into_items());
        match next {
            None => return Ok(items),
            Some(next) if seen.insert(&next) => result = page(Some(next)).await?,
            Some(next) => {
                let reason = format!("the server returned cursor {} twice", excerpt(&next));
                return Err(Error::Pagination { method, reason });
            }
        }
    }
    Err(Error::Pagination { method, reason: format!("more than {MAX_PAGES} pages") })
}

/// The cursors a listing has followed, 16 bytes each whatever their length: a server's
/// cursors are opaque and may be megabytes, and keeping them to spot a repeat made a listing's
/// memory follow the cursors (120 cursors of 1 MiB: +127 MiB) instead of the entries.
///
/// Each cursor is kept as two 64-bit SipHash-1-3 values under one key drawn at random for the
/// listing (`RandomState`), of the cursor with two different prefixes: 128 bits of a keyed
/// pseudo-random function. A server does not know the key, so it cannot choose cursors that
/// collide; by chance, two of the at most [`MAX_PAGES`] cursors of one listing collide with
/// probability under `MAX_PAGES² / 2^129`, about 10^-31. A collision would end the listing
/// with [`Error::Pagination`] (a false "repeated cursor"), never return a wrong entry.
#[derive(Default)]
struct SeenCursors {
    key: RandomState,
    seen: HashSet<u128>,
}

impl SeenCursors {
    /// Remembers `cursor`; false when it was seen before.
    fn insert(&mut self, cursor: &str) -> bool {
        let half = |prefix: u8| u128::from(self.key.hash_one((prefix, cursor)));
        let hash = (half(0) << 64) | half(1);
        self.seen.insert(hash)
    }
}

/// A cursor as an error message may quote it: at most its first 64 characters, and its length.
fn excerpt(cursor: &str) -> String {
    match cursor.char_indices().nth(64) {
        None => format!("{cursor:?}"),
        Some((end, _)) => format!("{:?}… ({} bytes)", &cursor[..end], cursor.len()),
    }
}

#[cfg(test)]
mod tests {
    use mcp_sansio::schema::ListToolsResult;

    use super::*;

    #[test]
    fn seen_cursors_spot_a_repeat_whatever_the_length() {
        let mut seen = SeenCursors::default();
        let big = |i: usize| format!("{i}{}", "c".repeat(1 << 16));
        for i in 0..100 {
            assert!(seen.insert(&big(i)), "{i} is new");
        }
        assert!(!seen.insert(&big(42)));
        assert!(seen.insert(""));
        assert!(!seen.insert(""));
        // 16 bytes a cursor, not the cursor.
        assert_eq!(seen.seen.len(), 101);
    }

    #[test]
    fn a_repeated_cursor_ends_the_listing_with_an_excerpt_of_it() {
        let cursor = "x".repeat(1 << 20);
        let page = |cursor: Option<String>| async move {
            Ok::<_, Error>(ListToolsResult {
                tools: Vec::new(),
                next_cursor: cursor.or(Some("y".repeat(1 << 20))),
                ..Default::default()
            })
        };
        let first = page(Some(cursor.clone()));
        let Err(Error::Pagination { method, reason }) =
            smol::block_on(paginate_from::<ListToolsResult, _, _>("tools/list", first, page, |_| {}))
        else {
            panic!("a repeated cursor ends the listing")
        };
        assert_eq!(method, "tools/list");
        assert!(reason.contains(&format!("({} bytes)", 1 << 20)), "{reason}");
        assert!(reason.len() < 200, "{reason}");
    }
}
