//! OAuth 2.1 for MCP servers that require it: only [`AuthError`] here, because this build has
//! no `http` feature (mcp-sansio's `http` brings the HTTP session and the OAuth `Authorizer`).

#[path = "error.rs"]
mod error;

pub use error::AuthError;
