//! The demo server as an example binary: `cargo test` builds it next to the test binaries,
//! and the driver tests start it as a real child process. Flags as `mcp-demo-server --help`.

fn main() -> std::process::ExitCode {
    mcp_demo_server::main_with_args(std::env::args().skip(1))
}
