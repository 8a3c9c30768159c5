//! `mcp-demo-server`: the deterministic MCP demo server over stdio, or Streamable HTTP with
//! `--http ADDR`. See `--help`.
#![forbid(unsafe_code)]

fn main() -> std::process::ExitCode {
    mcp_demo_server::main_with_args(std::env::args_os().skip(1).map(|arg| arg.to_string_lossy().into_owned()))
}
