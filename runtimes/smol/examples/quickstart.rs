//! Quickstart: start an MCP server as a child process, list its tools, call one.
//!
//! ```text
//! cargo run --example quickstart                     # the bundled demo server
//! cargo run --example quickstart -- npx -y @modelcontextprotocol/server-everything
//! ```
//!
//! With no arguments the example starts the demo server, which is linked into this same
//! binary (`--serve` runs it), so that one command runs both ends with nothing to install.
//! With arguments, they are the command line of any stdio MCP server.

use std::error::Error;

use mcp_smol::ClientApi;
use mcp_smol::mcp_sansio::schema::{ContentBlock, Implementation};
use mcp_smol::{ClientBuilder, ServerCommand};
use serde_json::json;

fn main() -> Result<(), Box<dyn Error>> {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("--serve") {
        return serve_demo(args.split_off(1));
    }
    let command = if args.is_empty() {
        ServerCommand::new(std::env::current_exe()?).arg("--serve")
    } else {
        ServerCommand::new(&args[0]).args(&args[1..])
    };

    smol::block_on(async {
        let client =
            ClientBuilder::new(Implementation::new("mcp-sansio-quickstart", env!("CARGO_PKG_VERSION")))
                .spawn_stdio(&command)
                .await?;
        let server = client.server_info().unwrap_or_default();
        let version = client.protocol_version().map(|v| v.as_str()).unwrap_or("?");
        println!("Connected to {} {} (MCP {version})", server.name, server.version);

        let tools = client.list_all_tools().await?;
        println!("\n{} tools:", tools.len());
        for tool in &tools {
            println!("  {:<28} {}", tool.name, tool.description.as_deref().unwrap_or(""));
        }

        let arguments = json!({"message": "Hello from mcp-sansio!"});
        println!("\nCalling echo {arguments}");
        let result = client.call_tool("echo", arguments).await?;
        for block in &result.content {
            match block {
                ContentBlock::Text(text) => println!("  -> {}", text.text),
                other => println!("  -> {} content", other.type_name().unwrap_or("unknown")),
            }
        }

        client.close().await;
        Ok(())
    })
}

/// The server side, when this binary is started with `--serve [demo server flags]`.
fn serve_demo(flags: Vec<String>) -> Result<(), Box<dyn Error>> {
    let status = mcp_demo_server::main_with_args(flags);
    if status == std::process::ExitCode::SUCCESS { Ok(()) } else { Err("the demo server failed".into()) }
}
