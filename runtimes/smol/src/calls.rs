//! The futures of the calls that do more than decode their response: [`PingCall`] (a
//! `server/discover` answer renews what the client keeps of the server), [`ListToolsCall`] (a
//! tool listing teaches the output-schema validator) and [`ToolCall`] (a result checked against
//! its tool's `outputSchema`). The methods of [`Client`](crate::Client) that send them are in
//! `client.rs`.

use std::future::Future;
use std::sync::Arc;
use std::task::Poll;

use mcp_sansio::schema::{CallTool, CallToolResult, ListTools, ListToolsResult, Ping, Request};

use crate::Error;
use crate::call::Decode;
use crate::driver::Connection;
#[cfg(feature = "output-schema")]
use crate::output_schema::OutputSchemas;

/// A health check on its way: `ping`, or `server/discover` on 2026-07-28, whose answer also
/// renews what the client keeps of the server.
pub(crate) struct PingCall {
    call: Decode<serde::de::IgnoredAny>,
    rediscover: Option<Arc<Connection>>,
}

impl PingCall {
    /// A health check sent: `rediscover` is the connection whose kept session a
    /// `server/discover` answer renews (`None` for `ping`).
    pub(crate) fn sent(call: Decode<serde::de::IgnoredAny>, rediscover: Option<Arc<Connection>>) -> Self {
        PingCall { call, rediscover }
    }

    pub(crate) fn refused(error: Error) -> Self {
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
    /// A page sent on `shared`, whose output-schema validator (if on) learns from it.
    pub(crate) fn sent(page: Decode<ListToolsResult>, shared: &Arc<Connection>) -> Self {
        #[cfg(not(feature = "output-schema"))]
        let _ = shared;
        ListToolsCall {
            page,
            #[cfg(feature = "output-schema")]
            learn: shared.extras.output_schemas.clone().map(|schemas| (schemas, shared.clone())),
        }
    }

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
    pub(crate) fn refused(error: Error) -> Self {
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
