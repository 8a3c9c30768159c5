//! MCP over Streamable HTTP with custom headers (an `Authorization` token and an extra header),
//! through `HyperTransport`.
//!
//! ```text
//! cargo run -p mcp-hyper --example http_headers                                # the bundled demo server
//! cargo run -p mcp-hyper --example http_headers -- http://127.0.0.1:3000/mcp   # any MCP endpoint
//! ```
//!
//! With no arguments the example starts the demo server over HTTP: it is linked into this same
//! binary (`--serve-http` runs it on 127.0.0.1 with a free port and prints its URL), so one
//! command runs both ends with nothing to install. With an argument, it connects to that URL
//! instead.
//!
//! The headers go with every request the session makes; their values are never logged, and
//! `HttpConfig`'s `Debug` shows only their names (as printed below).

use std::error::Error;
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};

use mcp_hyper::HyperTransport;
use mcp_smol::mcp_sansio::http::HttpConfig;
use mcp_smol::mcp_sansio::schema::Implementation;
use mcp_smol::{ClientApi, ClientBuilder};
use serde_json::json;

fn main() -> Result<(), Box<dyn Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("--serve-http") {
        return serve_demo_http(args[1..].to_vec());
    }
    // The server: the given URL, or the demo server started here (killed at the end).
    let (url, mut server) = match args.first() {
        Some(url) => (url.clone(), None),
        None => {
            let (url, child) = start_demo_server()?;
            println!("Started the demo server as process {} at {url}", child.id());
            (url, Some(child))
        }
    };

    let outcome = smol::block_on(session(&url));

    if let Some(child) = &mut server {
        // The HTTP demo server serves until killed.
        println!("Killing the demo server (process {})", child.id());
        child.kill()?;
        child.wait()?;
    }
    outcome
}

async fn session(url: &str) -> Result<(), Box<dyn Error>> {
    let http = HttpConfig::new(url)
        .header("Authorization", "Bearer example-token")
        .header("X-Request-Source", "example");
    // Debug output names the headers but never shows their values.
    println!("HTTP configuration: {http:?}");

    let transport = HyperTransport::new();
    let client = ClientBuilder::new(Implementation::new("http-headers-example", env!("CARGO_PKG_VERSION")))
        .spawn_http(http, transport.clone())
        .await?;
    let server = client.server_info().unwrap_or_default();
    let version = client.protocol_version().map(|v| v.as_str()).unwrap_or("?");
    println!("Connected to {} {} (MCP {version})", server.name, server.version);
    if let Some(instructions) = client.instructions() {
        println!("Server instructions: {instructions}");
    }

    let tools = client.tools().await?;
    println!("\n{} tools, the first ones:", tools.len());
    for tool in tools.iter().take(5) {
        println!("  {:<16} {}", tool.name, tool.description.as_deref().unwrap_or(""));
    }

    for (name, arguments) in
        [("echo", json!({"message": "hello over HTTP"})), ("add", json!({"a": 2, "b": 3}))]
    {
        if !tools.iter().any(|tool| tool.name == name) {
            println!("\n(the server has no {name} tool: skipped)");
            continue;
        }
        println!("\nCalling {name} {arguments}");
        let result = client.call_tool(name, arguments).await?;
        let text: Vec<&str> = result.content.iter().filter_map(|block| block.as_text()).collect();
        println!("  -> {}", text.join(" "));
    }

    let stats = client.stats();
    println!(
        "\nStats: {} requests ({} completed, {} failed), {} messages sent, {} received ({} bytes); \
         {} HTTP connection(s) opened",
        stats.requests_tracked,
        stats.requests_completed,
        stats.requests_failed,
        stats.messages_sent,
        stats.messages_received,
        stats.bytes_received,
        transport.connections_opened()
    );

    // Ends the session (a legacy session gets its DELETE) and waits for the driver.
    client.close().await;
    println!("Closed");
    Ok(())
}

/// Starts this binary with `--serve-http` and reads the URL it prints.
fn start_demo_server() -> Result<(String, Child), Box<dyn Error>> {
    let mut child = Command::new(std::env::current_exe()?)
        .arg("--serve-http")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()?;
    let stdout = child.stdout.take().ok_or("no stdout pipe")?;
    let mut url = String::new();
    BufReader::new(stdout).read_line(&mut url)?;
    let url = url.trim().to_owned();
    if !url.starts_with("http://") {
        child.kill()?;
        child.wait()?;
        return Err(format!("the demo server did not print its URL (got {url:?})").into());
    }
    Ok((url, child))
}

/// The server side, when this binary is started with `--serve-http [demo server flags]`:
/// Streamable HTTP on a free port of 127.0.0.1; the URL is printed as the first line.
fn serve_demo_http(flags: Vec<String>) -> Result<(), Box<dyn Error>> {
    let args = ["--http".to_owned(), "127.0.0.1:0".to_owned()].into_iter().chain(flags);
    let status = mcp_demo_server::main_with_args(args);
    if status == std::process::ExitCode::SUCCESS { Ok(()) } else { Err("the demo server failed".into()) }
}
