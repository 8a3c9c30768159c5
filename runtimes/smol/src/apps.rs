//! MCP Apps (SEP-1865): a tool's interactive HTML, read and checked. The host's iframe bridge
//! (postMessage, the sandbox itself) is the host's; this reads what it needs, typed.

use crate::mcp_sansio::schema::{MCP_APP_MIME_TYPE, ResourceContents, Tool, UI_SCHEME, UiMeta};
use crate::{Client, ClientApi, Error};

/// A tool's MCP App: its `ui://` resource, read and checked.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct AppUi {
    /// The resource's `ui://` URI.
    pub uri: String,
    /// The HTML to render in the host's sandbox.
    pub html: String,
    /// The tool's `_meta.ui` (its visibility, say).
    pub tool: UiMeta,
    /// The resource's `_meta.ui`: the sandbox it asks for (CSP origins, permissions, domain);
    /// empty when it asks for nothing.
    pub resource: UiMeta,
}

/// Why a tool's MCP App could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum AppUiError {
    /// The tool has no `_meta.ui.resourceUri`.
    #[error("the tool {tool:?} has no MCP App (no _meta.ui.resourceUri)")]
    NoApp {
        /// The tool.
        tool: String,
    },
    /// The tool's or the resource's `_meta.ui` does not decode.
    #[error("malformed MCP Apps metadata of {of:?}: {detail}")]
    Malformed {
        /// The tool or resource.
        of: String,
        /// What is wrong.
        detail: String,
    },
    /// The resource is not a `ui://` URI.
    #[error("the MCP App resource {uri:?} is not a ui:// URI")]
    NotUiScheme {
        /// The URI.
        uri: String,
    },
    /// The server's contents for the resource are not `text/html;profile=mcp-app` text.
    #[error("the MCP App resource {uri:?} is {found:?}, not text of type text/html;profile=mcp-app")]
    WrongMimeType {
        /// The URI.
        uri: String,
        /// The MIME type the server gave (`None`: none, or not text).
        found: Option<String>,
    },
}

impl Client {
    /// Reads `tool`'s MCP App: its `_meta.ui.resourceUri`, which must be a `ui://` URI, read
    /// with `resources/read`, whose contents must be text of MIME type
    /// `text/html;profile=mcp-app`. Anything else is an [`AppUiError`], and no HTML is
    /// returned.
    ///
    /// ```no_run
    /// # async fn run(client: mcp_smol::Client) -> Result<(), mcp_smol::Error> {
    /// use mcp_smol::ClientApi;
    /// for tool in client.list_all_tools().await? {
    ///     if tool.ui().is_some() {
    ///         let app = client.read_app_ui(&tool).await?;
    ///         println!("{}: {} bytes of HTML, CSP {:?}", tool.name, app.html.len(), app.resource.csp);
    ///     }
    /// }
    /// # Ok(()) }
    /// ```
    pub async fn read_app_ui(&self, tool: &Tool) -> Result<AppUi, Error> {
        let malformed = |of: &str, detail| AppUiError::Malformed { of: of.to_owned(), detail };
        let tool_ui = match tool.ui() {
            None => return Err(AppUiError::NoApp { tool: tool.name.clone() }.into()),
            Some(ui) => ui.map_err(|detail| malformed(&tool.name, detail))?,
        };
        let Some(uri) = tool_ui.resource_uri.clone() else {
            return Err(AppUiError::NoApp { tool: tool.name.clone() }.into());
        };
        if !uri.starts_with(UI_SCHEME) {
            return Err(AppUiError::NotUiScheme { uri }.into());
        }
        let read = self.read_resource(&uri).await?;
        let html = read.contents.iter().find(|contents| {
            matches!(contents, ResourceContents::Text(text) if text.mime_type.as_deref() == Some(MCP_APP_MIME_TYPE))
        });
        let Some(contents @ ResourceContents::Text(text)) = html else {
            let found = read.contents.first().and_then(|c| match c {
                ResourceContents::Text(text) => text.mime_type.clone(),
                _ => None,
            });
            return Err(AppUiError::WrongMimeType { uri, found }.into());
        };
        let resource =
            contents.ui().transpose().map_err(|detail| malformed(&uri, detail))?.unwrap_or_default();
        Ok(AppUi { uri, html: text.text.clone(), tool: tool_ui, resource })
    }
}
