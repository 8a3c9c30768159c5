//! `mcp-demo-server`: the deterministic MCP demo server over stdio, or Streamable HTTP with
//! `--http ADDR`. See `--help`.
#![forbid(unsafe_code)]

use std::process::ExitCode;

use mcp_demo_server::{self as demo_server, Command, Options, USAGE};

fn main() -> ExitCode {
    let args = std::env::args_os().skip(1).map(|arg| arg.to_string_lossy().into_owned());
    match Options::parse(args) {
        Ok(Command::Help) => {
            print!("{USAGE}");
            ExitCode::SUCCESS
        }
        Ok(Command::Run(options)) if options.http.is_some() => match demo_server::run_http(options) {
            Ok(()) => ExitCode::SUCCESS,
            Err(error) => {
                eprintln!("mcp-demo-server: {error}");
                ExitCode::FAILURE
            }
        },
        Ok(Command::Run(options)) => match demo_server::run_stdio(options) {
            Ok(()) => ExitCode::SUCCESS,
            Err(error) => {
                eprintln!("mcp-demo-server: cannot read stdin: {error}");
                ExitCode::FAILURE
            }
        },
        Err(message) => {
            eprintln!("mcp-demo-server: {message}\n\n{USAGE}");
            ExitCode::from(2)
        }
    }
}
