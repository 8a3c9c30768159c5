//! The demo server as an example binary of this crate, so that `cargo test` builds it next to
//! the tests that start it as a child process (over stdio, or with `--http`). Flags as
//! `mcp-demo-server --help`.

fn main() -> std::process::ExitCode {
    mcp_demo_server::main_with_args(std::env::args().skip(1))
}
