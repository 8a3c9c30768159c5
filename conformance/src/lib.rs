//! Conformance tooling for `mcp-sansio`.
//!
//! Today this crate hosts the interop tests against real peer servers (`tests/`), which
//! `.ci/interop` runs after installing the peers. The demo server lives in the sibling crate
//! `mcp-demo-server` (`conformance/demo-server`). Recorded traces, replay and server property
//! tests come with the conformance work (issue 5).
#![forbid(unsafe_code)]
#![deny(missing_docs)]
