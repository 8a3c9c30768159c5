//! Drive the [`mcp_sansio`] MCP client engine from async Rust: on smol, or on any executor.
//!
//! - [`Client`]: a cheap `Clone + Send + Sync` handle with typed methods for every
//!   client→server request (tools, resources and templates, subscriptions, prompts,
//!   completion, logging level, ping), pagination helpers (`list_all_tools`, …), per-call
//!   timeouts, progress and `_meta` ([`CallOptions`]), and **cancel-on-drop**: dropping a
//!   call's future sends `notifications/cancelled`.
//! - [`Driver`]: the future that moves bytes between the transport and the engine. It runs
//!   on any executor; the `spawn_*` constructors put it on smol's global executor.
//! - Transports: any `AsyncRead`/`AsyncWrite` pair ([`ClientBuilder::connect`]) and stdio child
//!   processes ([`ServerCommand`]): environment allow-list, stderr always drained, own process
//!   group, and a shutdown that closes stdin, then sends SIGTERM, then SIGKILL to the group, so
//!   no orphan or zombie is left behind, even when the [`Client`] is dropped without `close`.
//! - Server requests (roots, sampling, elicitation) go to a [`ClientHandler`] with polite
//!   defaults; server notifications arrive on a [`Notifications`] stream.
//!
//! ```no_run
//! use mcp_smol::{ClientBuilder, ServerCommand};
//! use mcp_sansio::schema::Implementation;
//!
//! smol::block_on(async {
//!     let client = ClientBuilder::new(Implementation::new("quickstart", "0.1.0"))
//!         .spawn_stdio(&ServerCommand::new("mcp-demo-server"))
//!         .await?;
//!     let result = client.call_tool("echo", serde_json::json!({"message": "hi"})).await?;
//!     println!("{:?}", result.content[0].as_text());
//!     client.close().await;
//!     Ok::<(), mcp_smol::Error>(())
//! })
//! # .unwrap();
//! ```
#![forbid(unsafe_code)]
#![deny(missing_docs)]

mod call;
mod client;
mod driver;
mod era;
mod error;
mod handler;
pub mod http;
mod notifications;
mod shared;
mod source_waker;
mod stdio;

pub use call::CallOptions;
pub use client::{Client, ClientBuilder};
pub use driver::Driver;
pub use era::EraCache;
pub use error::Error;
pub use handler::{ClientHandler, DefaultHandler, HandlerFuture};
pub use http::{HttpResponse, HttpTransport};
pub use notifications::Notifications;
pub use stdio::{DEFAULT_INHERITED_ENV, DEFAULT_SHUTDOWN_STEP, ServerCommand, StderrSink};

pub use mcp_sansio;
