//! Pool: three MCP servers behind one handle, with the typed API of a single client.
//!
//! ```text
//! cargo run --example pool                     # three copies of the bundled demo server
//! cargo run --example pool -- npx -y @modelcontextprotocol/server-everything
//! ```
//!
//! With no arguments the example starts the demo server, which is linked into this same
//! binary (`--serve` runs it). With arguments, they are the command line of any stdio MCP
//! server with an `echo` tool. The example calls tools through the pool, runs a transaction,
//! crashes one member on purpose (demo server only) to show it restarted, and prints the
//! pool's statistics.

use std::error::Error;
use std::time::{Duration, Instant};

use mcp_smol::mcp_sansio::schema::Implementation;
use mcp_smol::{ClientApi, ClientBuilder, MemberStatus, Pool, ServerCommand, Strategy};
use serde_json::json;

fn main() -> Result<(), Box<dyn Error>> {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("--serve") {
        return serve_demo(args.split_off(1));
    }
    let demo = args.is_empty();
    let command = if demo {
        ServerCommand::new(std::env::current_exe()?).arg("--serve")
    } else {
        ServerCommand::new(&args[0]).args(&args[1..])
    };
    let builder = || ClientBuilder::new(Implementation::new("mcp-sansio-pool", env!("CARGO_PKG_VERSION")));

    smol::block_on(async {
        let pool = Pool::new(Strategy::LeastBusy);
        for _ in 0..3 {
            let id = pool.add_stdio(builder, &command).await?;
            println!("added member {id} (pid {:?})", pool.client(id).and_then(|c| c.server_pid()));
        }

        // Twelve concurrent calls, spread over the members.
        let calls: Vec<_> = (0..12)
            .map(|i| {
                let pool = pool.clone();
                smol::spawn(
                    async move { pool.call_tool("echo", json!({ "message": format!("call {i}") })).await },
                )
            })
            .collect();
        for call in calls {
            let result = call.await?;
            println!("  -> {}", result.content.first().and_then(|block| block.as_text()).unwrap_or("?"));
        }

        // Several calls on one server.
        let (pid, tools) = pool
            .transaction(|client| async move {
                let tools = client.list_all_tools().await?;
                client.call_tool("echo", json!({ "message": "same server" })).await?;
                Ok::<_, mcp_smol::Error>((client.server_pid(), tools.len()))
            })
            .await?;
        println!("transaction on pid {pid:?}: {tools} tools");

        if demo {
            // The demo server's `crash` tool makes it exit at once: the pool restarts it.
            let crashed =
                pool.transaction(|client| async move { client.call_tool("crash", json!({})).await }).await;
            println!("crash: {}", crashed.map_or_else(|e| e.to_string(), |_| "answered?".into()));
            let start = Instant::now();
            while pool.stats().restarts == 0 && start.elapsed() < Duration::from_secs(10) {
                async_io::Timer::after(Duration::from_millis(20)).await;
            }
            let mut fine = 0;
            for i in 0..6 {
                fine +=
                    usize::from(pool.call_tool("echo", json!({ "message": format!("{i}") })).await.is_ok());
            }
            println!("after the crash: {fine} of 6 calls fine");
        }

        let stats = pool.stats();
        println!(
            "\n{} live, {} requests ({} failed), {} transactions, {} deaths, {} restarts",
            stats.live, stats.requests, stats.failed, stats.transactions, stats.deaths, stats.restarts
        );
        for member in &stats.members {
            let status = if member.status == MemberStatus::Live { "live" } else { "down" };
            println!(
                "  member {} {status:<4} pid {:<8} {:>3} requests {:>2} failed {} restarts",
                member.id,
                member.server_pid.map_or("-".to_owned(), |pid| pid.to_string()),
                member.requests,
                member.failed,
                member.restarts,
            );
        }

        pool.close().await;
        Ok(())
    })
}

/// The server side, when this binary is started with `--serve [demo server flags]`.
fn serve_demo(flags: Vec<String>) -> Result<(), Box<dyn Error>> {
    let status = mcp_demo_server::main_with_args(flags);
    if status == std::process::ExitCode::SUCCESS { Ok(()) } else { Err("the demo server failed".into()) }
}
