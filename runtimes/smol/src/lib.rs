//! Drive the [`mcp_sansio`] MCP client engine from async Rust: on smol, or on any executor.
//!
//! - [`Client`]: a cheap `Clone + Send + Sync` handle to one connection. Every
//!   client→server request is a method of [`ClientApi`] (tools, resources and templates,
//!   subscriptions, prompts, completion, logging level, a [`ping`](ClientApi::ping) health check
//!   that works in every protocol version, pagination helpers such as
//!   [`list_all_tools`](ClientApi::list_all_tools)), with per-call timeouts, progress and `_meta`
//!   ([`CallOptions`], for any call through [`Client::with_options`]) and **cancel-on-drop**:
//!   dropping a call's future sends `notifications/cancelled`. Tool arguments are anything
//!   `Serialize` that makes a JSON object.
//! - [`Driver`]: the connection's own task. It runs on any executor; the `spawn_*`
//!   constructors put it on a thread of its own. Over a stdio child's pipes the response is read
//!   where the reactor's wake-up lands and wakes its call there, with no hop through the
//!   driver's task, and nobody's progress waits on a call's future being polled: the simple
//!   `smol::block_on` +
//!   [`spawn_stdio`](ClientBuilder::spawn_stdio) shape is the fast one. Your code (notification
//!   handlers, the [`ClientHandler`]'s futures, the OAuth handler) runs on the driver's task
//!   only, never under a lock of the client, and a panic in it is contained; a call's progress
//!   callback runs on the call's own task. Dropped early, the driver fails every call with
//!   [`Error::DriverGone`] rather than strand it.
//! - [`Clock`]: where a connection gets the time and its timers ([`AsyncIoClock`] by default);
//!   a manual clock runs a connection on simulated time ([`ClientBuilder::clock`]).
//! - Transports: any [`AsyncRead`](futures_lite::AsyncRead)/[`AsyncWrite`](futures_lite::AsyncWrite)
//!   pair ([`ClientBuilder::connect`]), stdio child processes ([`ServerCommand`]: environment
//!   allow-list, stderr always drained, own process group, and a shutdown that closes stdin, then
//!   sends SIGTERM, then SIGKILL to the group, so no orphan or zombie is left behind, even when
//!   the [`Client`] is dropped without [`close`](Client::close)), and HTTP through an
//!   [`HttpTransport`] (`mcp-hyper`, `mcp-surf`; the `http` feature). The crate builds on
//!   Unix only: stdio children are stopped through their process group with signals
//!   (rustix), which Windows does not have. It is tested on Linux.
//! - Server requests (roots, sampling, elicitation) go to a [`ClientHandler`] with polite
//!   defaults. Server notifications go to [`NotificationHandler`]s and closures
//!   ([`ClientBuilder::on_notification`]) and to any number of [`Notifications`] subscriptions,
//!   a bounded broadcast that reports lag ([`RecvError::Lagged`]).
//! - [`Client::tools`], [`Client::resources`], [`Client::prompts`]: a list cache refreshed after
//!   `list_changed` (debounced), honouring the server's `ttlMs` ([`ListCacheConfig`]).
//! - Tool results: the helpers of
//!   [`CallToolResult`](mcp_sansio::schema::CallToolResult) (text, decoded images and audio,
//!   resources, `structuredContent` into your type), and with the `output-schema` feature (off
//!   by default) validation against the tool's `outputSchema` (`ClientBuilder::validate_output`,
//!   `OutputSchemas`).
//! - [`Pool`]: several connections behind the same [`ClientApi`], round-robin, random or
//!   least-busy, with members added and removed at run time and dead ones restarted.
//! - Skills (the `skills` feature): a server's skills listed, and their files read only when
//!   needed and returned only once verified against their entry ([`Client::read_skill_file`],
//!   [`SkillError`]).
//! - Observability: [`Client::stats`] (requests tracked, completed, failed, timed out,
//!   cancelled; messages, bytes, parse errors), `tracing` spans per connection
//!   (`mcp_connection`) and per request (`mcp_request`: method, id, outcome, duration), and
//!   never a header value or a tool argument above `trace`. Errors say whether trying again may
//!   help ([`Error::is_retriable`]), whether the connection is over ([`Error::is_closed`]), and
//!   keep the server's JSON-RPC code ([`Error::code`]).
//!
//! # Cargo features
//!
//! With none (the default) the crate is the stdio and byte-stream client. A minimal stdio
//! client's cold release build then compiles 53 crates instead of 113, in two thirds of the CPU
//! time, for a binary 29 % smaller (`docs/performance.md`, "Build time and size against
//! rmcp").
//! - `http`: MCP over HTTP ([`ClientBuilder::connect_http`], [`ClientBuilder::spawn_http`],
//!   [`HttpTransport`]) and OAuth ([`ClientBuilder::oauth`], [`OAuth`], [`LoopbackRedirect`]),
//!   with mcp-sansio's `http` feature (url, sha2) and getrandom. `mcp-hyper` and `mcp-surf` turn
//!   it on, so an HTTP client built on them has it; a transport of your own turns it on itself.
//! - `jwt` (implies `http`): signed JWTs for OAuth, `private_key_jwt` client authentication and
//!   DPoP, with p256. Without it those configurations fail with
//!   [`AuthError::Unsupported`](mcp_sansio::auth::AuthError::Unsupported) and DPoP is never used.
//!   On through the default features of `mcp-hyper` and `mcp-surf`.
//! - `output-schema`: validation of tool results against the tools' `outputSchema`, with the
//!   jsonschema crate (see above).
//! - `skills`: the skills extension (SEP-2640): [`Client::list_skills`],
//!   [`Client::get_skill`], and [`Client::read_skill_file`], which returns a skill's file only
//!   once its size, `sha256:` digest and (for `SKILL.md`) frontmatter match the skill's entry;
//!   an optional [`SkillCache`]. With mcp-sansio's `skills` feature (sha2).
//!
//! The guide for application developers is `docs/guide.md` in the repository; each crate's
//! `examples/` has a runnable program per feature.
//!
//! [`prelude`] has the names most programs use; [`VERSION`], [`LATEST_PROTOCOL_VERSION`] and
//! [`SUPPORTED_PROTOCOL_VERSIONS`] say which versions these are.
//!
//! ```no_run
//! use mcp_smol::prelude::*;
//!
//! fn main() -> Result<(), mcp_smol::Error> {
//!     smol::block_on(async {
//!         let client = ClientBuilder::new(Implementation::new("quickstart", "0.1.0"))
//!             .spawn_stdio(&ServerCommand::new("npx").args(["-y", "@modelcontextprotocol/server-everything"]))
//!             .await?;
//!         let result = client.call_tool("echo", serde_json::json!({"message": "hi"})).await?;
//!         println!("{:?}", result.content[0].as_text());
//!         client.close().await;
//!         Ok(())
//!     })
//! }
//! ```
#![forbid(unsafe_code)]
#![deny(missing_docs)]
#![cfg_attr(docsrs, feature(doc_cfg))]
// Some docs link to the HTTP client and OAuth, which only the `http` feature builds.
// And to the skills methods, which only the `skills` feature builds.
#![cfg_attr(any(not(feature = "http"), not(feature = "skills")), allow(rustdoc::broken_intra_doc_links))]

mod api;
mod apps;
mod arguments;
#[cfg(feature = "http")]
mod auth;
mod builder;
mod cache;
mod call;
mod calls;
mod client;
mod clock;
mod contain;
mod driver;
mod era;
mod error;
mod handler;
#[cfg(feature = "http")]
pub mod http;
#[doc(hidden)]
pub mod locks;
#[cfg(feature = "http")]
mod loopback;
mod notifications;
#[cfg(feature = "output-schema")]
mod output_schema;
mod pipe;
mod pool;
mod shared;
#[cfg(feature = "skills")]
mod skills;
mod source_waker;
mod stdio;
mod tasks;

pub use api::ClientApi;
pub use apps::{AppUi, AppUiError};
#[cfg(feature = "http")]
pub use auth::{AuthFuture, AuthorizationHandler, MemoryTokenStore, OAuth, OsRandom, TokenStore};
pub use builder::ClientBuilder;
pub use cache::{CacheInfo, ListCacheConfig};
pub use call::CallOptions;
pub use client::Client;
pub use clock::{AsyncIoClock, AsyncTimer, Clock};
pub use driver::Driver;
pub use era::EraCache;
pub use error::Error;
pub use handler::{ClientHandler, DefaultHandler, HandlerFuture};
#[cfg(feature = "http")]
pub use http::{HttpResponse, HttpTransport};
#[cfg(feature = "http")]
pub use loopback::LoopbackRedirect;
/// The skills model, from the engine: an entry, its files, and why one does not verify.
#[cfg(feature = "skills")]
#[doc(no_inline)]
pub use mcp_sansio::schema::{
    FrontmatterError, ListSkillsResult, Skill, SkillFile, SkillResources, SkillVerifyError,
};
pub use notifications::{ListKind, NotificationHandler, Notifications, RecvError};
#[cfg(feature = "output-schema")]
pub use output_schema::{OutputSchemaError, OutputSchemas, SchemaViolation};
pub use pool::{MemberId, MemberInfo, MemberStatus, Pool, PoolBuilder, PoolStats, Strategy};
#[cfg(feature = "skills")]
pub use skills::{DEFAULT_SKILL_CACHE_BYTES, ServerSkillCache, SkillCache, SkillCacheStats, SkillError};
pub use stdio::{
    DEFAULT_INHERITED_ENV, DEFAULT_SHUTDOWN_STEP, EndedBy, ServerCommand, ServerEnd, StderrSink,
};
pub use tasks::{TaskCall, TaskHandle, TaskRecord};

pub use mcp_sansio;

/// This crate's version (`CARGO_PKG_VERSION`), e.g. for a client's
/// [`Implementation`](mcp_sansio::schema::Implementation) or a diagnostic report.
///
/// ```
/// assert_eq!(mcp_smol::VERSION, env!("CARGO_PKG_VERSION"));
/// ```
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// This crate's README (its page on crates.io), compiled as a doc test so that it stays true.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;

/// The newest MCP version the client speaks (a dual-era client offers it first).
///
/// ```
/// use mcp_smol::mcp_sansio::ProtocolVersion;
///
/// assert_eq!(mcp_smol::LATEST_PROTOCOL_VERSION, ProtocolVersion::V2026_07_28);
/// assert_eq!(mcp_smol::LATEST_PROTOCOL_VERSION.as_str(), "2026-07-28");
/// ```
pub const LATEST_PROTOCOL_VERSION: mcp_sansio::ProtocolVersion =
    SUPPORTED_PROTOCOL_VERSIONS[SUPPORTED_PROTOCOL_VERSIONS.len() - 1];

/// Every MCP version the client speaks, oldest first: 2024-11-05, 2025-03-26, 2025-06-18,
/// 2025-11-25 (the `initialize` era) and 2026-07-28. By default a client accepts them all
/// ([`ClientConfig::with_versions`](mcp_sansio::ClientConfig::with_versions) narrows them).
///
/// ```
/// use mcp_smol::mcp_sansio::ProtocolVersion;
///
/// assert!(mcp_smol::SUPPORTED_PROTOCOL_VERSIONS.contains(&ProtocolVersion::V2024_11_05));
/// ```
pub const SUPPORTED_PROTOCOL_VERSIONS: &[mcp_sansio::ProtocolVersion] = mcp_sansio::ProtocolVersion::ALL;

/// The names most programs need: `use mcp_smol::prelude::*;`.
///
/// The client and its builder, the typed calls ([`ClientApi`]) and their
/// options, the error, pools, stdio and HTTP set-up, notification and server-request handling,
/// and the engine's types that come up in every program:
/// [`Implementation`](crate::prelude::Implementation) (who the client is),
/// [`ClientConfig`](crate::prelude::ClientConfig), [`ProtocolVersion`](crate::prelude::ProtocolVersion),
/// [`Status`](crate::prelude::Status), [`ServerNotification`](crate::prelude::ServerNotification),
/// and the tool types ([`Tool`](crate::prelude::Tool),
/// [`CallToolRequestParams`](crate::prelude::CallToolRequestParams),
/// [`CallToolResult`](crate::prelude::CallToolResult), [`ContentBlock`](crate::prelude::ContentBlock)).
///
/// ```no_run
/// use mcp_smol::prelude::*;
///
/// fn main() -> Result<(), Error> {
///     smol::block_on(async {
///         let client = ClientBuilder::new(Implementation::new("my-app", "1.0.0"))
///             .spawn_stdio(&ServerCommand::new("npx").args(["-y", "@modelcontextprotocol/server-everything"]))
///             .await?;
///         let tools: Vec<Tool> = client.list_all_tools().await?;
///         let result: CallToolResult = client.call_tool("echo", serde_json::json!({"message": "hi"})).await?;
///         let version: Option<ProtocolVersion> = client.protocol_version();
///         println!("{} tools, MCP {version:?}: {:?}", tools.len(), result.joined_text());
///         client.close().await;
///         Ok(())
///     })
/// }
/// ```
///
/// A host's handler and capabilities need nothing else either:
///
/// ```
/// use mcp_smol::prelude::*;
///
/// struct Host;
///
/// impl ClientHandler for Host {
///     fn list_roots(&self) -> HandlerFuture<ListRootsResult> {
///         Box::pin(async { Ok(ListRootsResult::new(vec![Root::new("file:///work")])) })
///     }
///     fn elicit(&self, params: ElicitRequestParams) -> HandlerFuture<ElicitResult> {
///         let _ = params;
///         let mut content = JsonObject::new();
///         content.insert("name".into(), "Ada".into());
///         Box::pin(async move { Ok(ElicitResult::accept(content)) })
///     }
///     fn create_message(&self, params: CreateMessageRequestParams) -> HandlerFuture<CreateMessageResult> {
///         let _ = params;
///         Box::pin(async { Err(ErrorObject::internal("no model here")) })
///     }
/// }
///
/// let builder = ClientBuilder::new(Implementation::new("host", "1.0"))
///     .capabilities(|c| c.with_roots(false).with_elicitation_form())
///     .handler(Host);
/// ```
///
/// The errors the guide has you match on are here too:
///
/// ```
/// use mcp_smol::prelude::*;
///
/// fn explain(error: &Error) -> &'static str {
///     match error {
///         Error::Connect(CloseReason::Exited(ServerExit::Code(_))) => "the server exited: check its command line",
///         Error::Usage(UsageError::NotReady) => "too early",
///         Error::Request(RequestError::Timeout(_)) => "too slow",
///         _ => "something else",
///     }
/// }
/// assert_eq!(explain(&Error::Connect(CloseReason::Exited(ServerExit::Code(1)))), "the server exited: check its command line");
/// ```
pub mod prelude {
    #[cfg(feature = "http")]
    #[doc(no_inline)]
    pub use crate::mcp_sansio::http::HttpConfig;
    #[doc(no_inline)]
    pub use crate::mcp_sansio::schema::{
        CallToolRequestParams, CallToolResult, ClientCapabilities, ContentBlock, CreateMessageRequestParams,
        CreateMessageResult, ElicitRequestParams, ElicitResult, Implementation, JsonObject, ListRootsResult,
        LoggingLevel, Root, SamplingContent, TASKS_EXTENSION, Tool,
    };
    #[doc(no_inline)]
    pub use crate::mcp_sansio::{
        ClientConfig, CloseReason, ErrorObject, McpError, ProtocolVersion, RequestError, RequestId,
        ServerExit, ServerNotification, Status, UsageError,
    };
    pub use crate::{
        CallOptions, Client, ClientApi, ClientBuilder, ClientHandler, Error, HandlerFuture, ListKind,
        NotificationHandler, Pool, ServerCommand, Strategy, TaskCall, TaskHandle, TaskRecord,
    };
    #[cfg(feature = "http")]
    pub use crate::{LoopbackRedirect, OAuth};
}
