//! [`ClientApi`] for [`Pool`]: each request goes to one member chosen by the pool's strategy
//! (a listing's pages all to one), counted as that member's.

use std::future::Future;

use mcp_sansio::schema::{
    CallToolRequestParams, CallToolResult, ListTools, ListToolsResult, Paginated, PaginatedRequest,
    PaginatedRequestParams, Request, Tool,
};
use serde::Serialize;

use super::Pool;
use crate::Error;
use crate::api::{ClientApi, paginate_from};
use crate::arguments::{CallToolArguments, ToolCallParams};
use crate::call::CallOptions;
use crate::calls::ListToolsCall;

impl ClientApi for Pool {
    /// Sends the request to a live member chosen by the pool's [`Strategy`](crate::Strategy).
    fn request<R: Request>(
        &self,
        params: &R::Params,
        options: CallOptions,
    ) -> impl Future<Output = Result<R::Result, Error>> + Send + 'static + use<R>
    where
        R::Result: Send,
    {
        let options = self.options(options);
        let sent = self.inner.send(|client| client.send::<R>(params, options.clone()));
        async move {
            let (checkout, response) = sent?;
            checkout.finish(response.await)
        }
    }

    /// Fetches every page from one member (cursors belong to a server).
    fn list_all<R: PaginatedRequest>(
        &self,
    ) -> impl Future<Output = Result<Vec<<R::Result as Paginated>::Item>, Error>> + Send
    where
        R::Result: Send,
        <R::Result as Paginated>::Item: Send,
    {
        let first = PaginatedRequestParams::default();
        let options = self.options(CallOptions::default());
        let sent = self.inner.send(|client| Ok((client.clone(), client.send::<R>(&first, options.clone())?)));
        async move {
            let (checkout, (client, first)) = sent?;
            let page = |cursor| {
                let params = PaginatedRequestParams::with_cursor(cursor);
                client.request::<R>(&params, options.clone())
            };
            checkout.finish(paginate_from(R::METHOD, first, page, |_| {}).await)
        }
    }

    /// Sends `ping` or `server/discover`, as the chosen member's protocol version has it (see
    /// [`ClientApi::ping`](crate::ClientApi::ping)).
    fn ping(&self) -> impl Future<Output = Result<(), Error>> + Send {
        let options = self.options(CallOptions::default());
        let sent = self.inner.send(|client| client.send_ping(options.clone()));
        async move {
            let (checkout, ping) = sent?;
            checkout.finish(ping.await)
        }
    }

    /// One page, from a member chosen by the pool's [`Strategy`](crate::Strategy).
    fn list_tools(
        &self,
        cursor: Option<String>,
    ) -> impl Future<Output = Result<ListToolsResult, Error>> + Send {
        let options = self.options(CallOptions::default());
        let sent = self.inner.send(|client| client.send_list_tools(cursor.clone(), options.clone()));
        async move {
            let (checkout, page) = sent?;
            checkout.finish(page.await)
        }
    }

    /// Every page, from one member (cursors belong to a server).
    fn list_all_tools(&self) -> impl Future<Output = Result<Vec<Tool>, Error>> + Send {
        let options = self.options(CallOptions::default());
        let sent =
            self.inner.send(|client| Ok((client.clone(), client.send_list_tools(None, options.clone())?)));
        async move {
            let (checkout, (client, first)) = sent?;
            let page = |cursor| {
                client.send_list_tools(cursor, options.clone()).unwrap_or_else(ListToolsCall::refused)
            };
            checkout.finish(paginate_from(ListTools::METHOD, first, page, |_| {}).await)
        }
    }

    /// Calls the tool on a member chosen by the pool's [`Strategy`](crate::Strategy), through that member's
    /// own `tools/call` (with its output-schema check).
    fn call_tool_with<'s>(
        &'s self,
        params: &CallToolRequestParams,
        options: CallOptions,
    ) -> impl Future<Output = Result<CallToolResult, Error>> + Send + use<'s> {
        let options = self.options(options);
        let sent = self.inner.send(|client| client.send_call_tool(params, options.clone()));
        async move {
            let (checkout, call) = sent?;
            checkout.finish(call.await)
        }
    }

    /// Serializes the arguments once, into the request; arguments that are not an object are
    /// refused before any member is chosen.
    fn call_tool_with_options<A: Serialize>(
        &self,
        name: &str,
        arguments: A,
        options: CallOptions,
    ) -> impl Future<Output = Result<CallToolResult, Error>> + Send {
        let options = self.options(options);
        let sent = ToolCallParams::new(name, &arguments).map(|params| {
            self.inner.send(|client| {
                client.send_tool_call::<CallToolArguments<'_, A>>(name, &params, options.clone())
            })
        });
        async move {
            let (checkout, call) = sent??;
            checkout.finish(call.await)
        }
    }
}
