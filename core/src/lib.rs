//! mcp-sansio (crate docs are written with the engine).
#![forbid(unsafe_code)]
#![deny(missing_docs)]
#![cfg_attr(not(test), warn(clippy::unwrap_used, clippy::expect_used, clippy::panic))]

mod ids;
pub mod schema;

pub use ids::{ProgressToken, RequestId};
