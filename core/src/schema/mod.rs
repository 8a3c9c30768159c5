//! The typed MCP model: serde types for every request, result, notification and content block
//! of the protocol versions this crate speaks, as one superset model.
//!
//! Conventions, the same in every file of this module:
//! - Field names are Rust `snake_case`, renamed to the wire's `camelCase` with serde.
//! - Every optional field is `Option<_>` with `#[serde(default, skip_serializing_if = "Option::is_none")]`,
//!   so that a message from any protocol version decodes, and nothing absent is written.
//! - Unknown fields are tolerated (never `deny_unknown_fields`); `_meta` is kept where the schema has it.
//! - Integers a server gives (sizes, totals, time-to-live and polling hints, `maxTokens`) are read
//!   as JSON numbers in any form (`250`, `250.0`, `2.5e2`), not only as JSON integers: a hint
//!   clamps the rest, an exact count refuses it ([`json_number`]).
//! - Enums whose set of variants grows across versions (content blocks, for example) decode an
//!   unknown variant into a catch-all instead of failing.
//!
//! Each client→server request implements [`Request`], which ties the method name to its params
//! and result types; the drivers use it to offer typed calls over the engine's raw messages.

use serde::Serialize;
use serde::de::DeserializeOwned;

mod apps;
mod completion;
mod content;
mod discover;
mod elicitation;
mod extensions;
pub mod json_number;
mod lifecycle;
mod logging;
mod notifications;
mod pagination;
mod prompts;
mod resources;
mod roots;
mod sampling;
mod skills;
mod tagged;
mod task_extension;
pub(crate) mod task_peek;
mod tasks;
mod tool_result;
mod tools;
mod trace;

pub use apps::*;
pub use completion::*;
pub use content::*;
pub use discover::*;
pub use elicitation::*;
pub use extensions::*;
pub use lifecycle::*;
pub use logging::*;
pub use notifications::*;
pub use pagination::*;
pub use prompts::*;
pub use resources::*;
pub use roots::*;
pub use sampling::*;
pub use skills::*;
pub use task_extension::*;
pub use task_peek::TaskRequest;
pub use tasks::*;
pub use tool_result::*;
pub use tools::*;
pub use trace::*;

/// A JSON object with arbitrary members (`_meta`, `experimental`, free-form arguments).
pub type JsonObject = serde_json::Map<String, serde_json::Value>;

/// A request the client sends to a server, typed: its method name, params and result.
///
/// ```
/// use mcp_sansio::schema::{CallTool, Request};
/// assert_eq!(CallTool::METHOD, "tools/call");
/// ```
pub trait Request {
    /// The JSON-RPC method name.
    const METHOD: &'static str;
    /// The `params` member; `()`-like empty structs serialize to `{}`.
    type Params: Serialize;
    /// What a successful response's `result` decodes into (owned data).
    type Result: DeserializeOwned + 'static;
}

/// A notification (no response expected), typed: its method name and params.
pub trait Notification {
    /// The JSON-RPC method name.
    const METHOD: &'static str;
    /// The `params` member.
    type Params: Serialize + DeserializeOwned;
}

/// Declares a zero-sized marker type implementing [`Request`].
macro_rules! request {
    ($(#[$doc:meta])* $name:ident, $method:literal, $params:ty, $result:ty) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub struct $name;
        impl $crate::schema::Request for $name {
            const METHOD: &'static str = $method;
            type Params = $params;
            type Result = $result;
        }
    };
}

/// Declares a zero-sized marker type implementing [`Notification`].
macro_rules! notification {
    ($(#[$doc:meta])* $name:ident, $method:literal, $params:ty) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub struct $name;
        impl $crate::schema::Notification for $name {
            const METHOD: &'static str = $method;
            type Params = $params;
        }
    };
}
pub(crate) use notification;
pub(crate) use request;
