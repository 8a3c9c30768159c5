//! The demo server as an example binary of this crate, so that `cargo test` builds it next to
//! the tests that start it as a child process (over stdio, or with `--http`). Flags as
//! `mcp-demo-server --help`.

use std::process::ExitCode;

fn main() -> ExitCode {
    match mcp_demo_server::Options::parse(std::env::args().skip(1)) {
        Ok(mcp_demo_server::Command::Run(options)) => {
            let served = match options.http {
                Some(_) => mcp_demo_server::run_http(options),
                None => mcp_demo_server::run_stdio(options),
            };
            match served {
                Ok(()) => ExitCode::SUCCESS,
                Err(error) => {
                    eprintln!("demo_peer: {error}");
                    ExitCode::FAILURE
                }
            }
        }
        Ok(mcp_demo_server::Command::Help) => {
            print!("{}", mcp_demo_server::USAGE);
            ExitCode::SUCCESS
        }
        Err(message) => {
            eprintln!("{message}");
            ExitCode::from(2)
        }
    }
}
