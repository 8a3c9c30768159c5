//! The demo server as an example binary: `cargo test` builds it next to the test binaries,
//! and the driver tests start it as a real child process. Flags as `mcp-demo-server --help`.

use std::process::ExitCode;

fn main() -> ExitCode {
    match mcp_demo_server::Options::parse(std::env::args().skip(1)) {
        Ok(mcp_demo_server::Command::Run(options)) => match match options.http {
            Some(_) => mcp_demo_server::run_http(options),
            None => mcp_demo_server::run_stdio(options),
        } {
            Ok(()) => ExitCode::SUCCESS,
            Err(_) => ExitCode::FAILURE,
        },
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
