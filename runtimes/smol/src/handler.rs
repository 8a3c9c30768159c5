//! Answers to the server's requests: roots, sampling, elicitation.

use std::future::Future;
use std::pin::Pin;

use mcp_sansio::ErrorObject;
use mcp_sansio::jsonrpc::error_codes;
use mcp_sansio::schema::{
    CreateMessageRequestParams, CreateMessageResult, ElicitRequestParams, ElicitResult, ListRootsResult,
};

/// The future a handler method returns.
pub type HandlerFuture<T> = Pin<Box<dyn Future<Output = Result<T, ErrorObject>> + Send + 'static>>;

/// Answers server→client requests. Every method has a polite default, so implement only what
/// the client declares in its [`ClientCapabilities`](mcp_sansio::schema::ClientCapabilities)
/// (requests for undeclared capabilities never reach the handler: the engine refuses them).
///
/// The driver polls the returned futures itself, on whatever executor runs it; a request the
/// server cancels has its future dropped.
///
/// ```
/// use mcp_smol::{ClientHandler, HandlerFuture};
/// use mcp_smol::mcp_sansio::schema::{ListRootsResult, Root};
///
/// struct Workspace;
///
/// impl ClientHandler for Workspace {
///     fn list_roots(&self) -> HandlerFuture<ListRootsResult> {
///         let roots = vec![Root::new("file:///work").with_name("work")];
///         Box::pin(async move { Ok(ListRootsResult::new(roots)) })
///     }
/// }
/// ```
pub trait ClientHandler: Send + Sync + 'static {
    /// `roots/list`. Default: no roots.
    fn list_roots(&self) -> HandlerFuture<ListRootsResult> {
        Box::pin(async { serde_json::from_str(r#"{"roots":[]}"#).map_err(ErrorObject::internal) })
    }

    /// `sampling/createMessage`. Default: refused, as this client has no model.
    fn create_message(&self, params: CreateMessageRequestParams) -> HandlerFuture<CreateMessageResult> {
        let _ = params;
        Box::pin(async {
            Err(ErrorObject::new(error_codes::METHOD_NOT_FOUND, "sampling is not supported by this client"))
        })
    }

    /// `elicitation/create`. Default: declined, as there is no user to ask.
    fn elicit(&self, params: ElicitRequestParams) -> HandlerFuture<ElicitResult> {
        let _ = params;
        Box::pin(async { Ok(ElicitResult::decline()) })
    }
}

/// The handler used when none is given: every default.
#[derive(Debug, Clone, Copy, Default)]
pub struct DefaultHandler;

impl ClientHandler for DefaultHandler {}
