//! The quickstart on tokio: start an MCP server as a child process, list its tools, call one,
//! with the connection's driver spawned as a tokio task.
//!
//! ```text
//! cargo run -p mcp-smol --example tokio                  # the bundled demo server
//! cargo run -p mcp-smol --example tokio -- npx -y @modelcontextprotocol/server-everything
//! ```
//!
//! `ClientBuilder::stdio` returns the [`Client`](mcp_smol::Client) handle and its
//! [`Driver`](mcp_smol::Driver), a plain future that any executor can run: here `tokio::spawn`.
//! The client needs none of tokio's features, not even its I/O or time drivers: the pipes and
//! timers are async-io's, with their own reactor thread. (Joining the driver with the calls in
//! one task, `tokio::join!(driver, calls)`, works as well.) Your handlers run on the driver's
//! task: spawned on tokio, it polls a `ClientHandler`'s futures in tokio's runtime, so they may
//! use tokio-based clients (an HTTP call to your model, say).
//!
//! With no arguments the example starts the demo server, linked into this same binary
//! (`--serve` runs it). With arguments, they are the command line of any stdio MCP server.

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
    run(command)
}

#[tokio::main]
async fn run(command: ServerCommand) -> Result<(), Box<dyn Error>> {
    let info = Implementation::new("mcp-sansio-tokio", env!("CARGO_PKG_VERSION"));
    let (client, driver) = ClientBuilder::new(info).stdio(&command)?;
    // Keep the driver running until the client is closed: dropping its task (or shutting the
    // runtime down first) kills the server and fails every call.
    let driver = tokio::spawn(driver);
    client.ready().await?;

    let server = client.server_info().unwrap_or_default();
    let version = client.protocol_version().map(|v| v.as_str()).unwrap_or("?");
    println!("Connected to {} {} (MCP {version}) from a tokio task", server.name, server.version);

    let tools = client.list_all_tools().await?;
    println!("\n{} tools:", tools.len());
    for tool in &tools {
        println!("  {:<28} {}", tool.name, tool.description.as_deref().unwrap_or(""));
    }

    let arguments = json!({"message": "Hello from tokio!"});
    println!("\nCalling echo {arguments}");
    let result = client.call_tool("echo", arguments).await?;
    for block in &result.content {
        match block {
            ContentBlock::Text(text) => println!("  -> {}", text.text),
            other => println!("  -> {} content", other.type_name().unwrap_or("unknown")),
        }
    }

    // close() returns once the driver has shut the server down; the task then ends.
    client.close().await;
    driver.await?;
    println!("\nClosed; the server process is gone");
    Ok(())
}

/// The server side, when this binary is started with `--serve [demo server flags]`.
fn serve_demo(flags: Vec<String>) -> Result<(), Box<dyn Error>> {
    let status = mcp_demo_server::main_with_args(flags);
    if status == std::process::ExitCode::SUCCESS { Ok(()) } else { Err("the demo server failed".into()) }
}
