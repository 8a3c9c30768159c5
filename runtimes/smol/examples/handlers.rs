//! Server→client traffic: a `ClientHandler` answering the server's requests (roots, sampling,
//! elicitation), and the three ways to receive server notifications (a `NotificationHandler`,
//! an `on_notification` closure, a `notifications()` subscriber task).
//!
//! ```text
//! cargo run -p mcp-smol --example handlers                  # the bundled demo server
//! cargo run -p mcp-smol --example handlers -- my-server --flag
//! ```
//!
//! With no arguments the example starts the demo server, which is linked into this same binary
//! (`--serve` runs it), so one command runs both ends with nothing to install. With arguments,
//! they are the command line of any stdio MCP server; the steps call demo tools (`list_roots`,
//! `sample`, `elicit`, `notify_changes`, `log`) and skip those the server does not have.
//!
//! The session runs twice: pinned to the `initialize` era (2025-11-25), where the server sends
//! real `roots/list`, `sampling/createMessage` and `elicitation/create` requests and
//! notifications whenever it likes; and with the default dual-era client, which speaks
//! 2026-07-28 to the demo server: there the same questions come back as `input_required`
//! results of the tool call, and the engine hands them to the very same handler, and the
//! list-changed notifications come through the `subscriptions/listen` stream the client keeps.

use std::error::Error;

use mcp_smol::mcp_sansio::schema::{
    CreateMessageRequestParams, CreateMessageResult, ElicitRequestParams, ElicitResult, Implementation,
    JsonObject, ListRootsResult, LoggingLevel, LoggingMessageNotificationParams, Root, SamplingContent,
};
use mcp_smol::mcp_sansio::{ProtocolVersion, ServerNotification};
use mcp_smol::{
    ClientApi, ClientBuilder, ClientHandler, HandlerFuture, ListKind, NotificationHandler, ServerCommand,
};
use serde_json::json;

/// Answers the server's questions, as an application with a workspace, a model and a user would.
struct App;

impl ClientHandler for App {
    fn list_roots(&self) -> HandlerFuture<ListRootsResult> {
        println!("    [handler] roots/list: offering file:///work/project and file:///tmp");
        let roots = vec![Root::new("file:///work/project").with_name("project"), Root::new("file:///tmp")];
        Box::pin(async move { Ok(ListRootsResult::new(roots)) })
    }

    fn create_message(&self, params: CreateMessageRequestParams) -> HandlerFuture<CreateMessageResult> {
        let prompt: String = params
            .messages
            .iter()
            .flat_map(|message| message.content.blocks())
            .filter_map(|block| block.as_text())
            .collect();
        println!("    [handler] sampling/createMessage: prompt {prompt:?}, answering with a canned reply");
        // A real client would ask its model here (and may take its time: the driver keeps
        // serving other messages while this future is pending).
        let reply = format!("a canned answer to {prompt:?}");
        Box::pin(async move {
            Ok(CreateMessageResult::new("canned-model", SamplingContent::text(reply))
                .with_stop_reason("endTurn"))
        })
    }

    fn elicit(&self, params: ElicitRequestParams) -> HandlerFuture<ElicitResult> {
        println!("    [handler] elicitation/create: {:?}, accepting with name = \"Ada\"", params.message);
        let mut content = JsonObject::new();
        content.insert("name".into(), json!("Ada"));
        Box::pin(async move { Ok(ElicitResult::accept(content)) })
    }
}

/// A typed notification handler: one method per kind of notification.
struct Watcher;

impl NotificationHandler for Watcher {
    fn on_log(&self, message: &LoggingMessageNotificationParams) {
        println!("    [NotificationHandler] log {:?}: {}", message.level, message.data);
    }

    fn on_list_changed(&self, list: ListKind) {
        println!("    [NotificationHandler] the {list:?} list changed");
    }
}

/// Roots, sampling and elicitation: the capabilities the handler serves. Undeclared ones never
/// reach a handler (the engine answers them with -32601 itself).
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
        println!("== The initialize era (pinned) ==");
        session(&command, Some(ProtocolVersion::LEGACY)).await?;
        println!("\n== The default (dual-era) client ==");
        session(&command, None).await
    })
}

async fn session(
    command: &ServerCommand,
    versions: Option<&[ProtocolVersion]>,
) -> Result<(), Box<dyn Error>> {
    let client = ClientBuilder::new(Implementation::new("handlers-example", env!("CARGO_PKG_VERSION")))
        // What the App below serves: the engine refuses the server's requests for anything else.
        .capabilities(|c| c.with_roots(true).with_sampling().with_elicitation_form())
        .configure(|config| match versions {
            Some(versions) => config.with_versions(versions),
            None => config,
        })
        .handler(App)
        .notification_handler(Watcher)
        .on_notification(|notification| {
            if let ServerNotification::LoggingMessage(message) = notification {
                println!("    [on_notification] a log message at {:?}", message.level);
            } else if let Some(list) = ListKind::of(notification) {
                println!("    [on_notification] {list:?} changed");
            }
        })
        .spawn_stdio(command)
        .await?;
    let version = client.protocol_version().map(|v| v.as_str()).unwrap_or("?");
    let server = client.server_info().unwrap_or_default();
    println!("Connected to {} {} (MCP {version})", server.name, server.version);

    // A subscriber task: sees every notification from now on, in order, until the connection
    // ends. Subscribe before making the calls whose notifications you want.
    let mut notifications = client.notifications();
    let subscriber = smol::spawn(async move {
        let mut seen = 0;
        while let Some(notification) = notifications.next().await {
            seen += 1;
            let what = match &notification {
                ServerNotification::LoggingMessage(message) => format!("log: {}", message.data),
                other => match ListKind::of(other) {
                    Some(list) => format!("{list:?} list changed"),
                    None => format!("{other:?}"),
                },
            };
            println!("    [subscriber] {what}");
        }
        seen
    });

    // The least severe level the server should send (over 2026-07-28, it goes into each
    // request's `_meta`).
    client.set_log_level(LoggingLevel::Debug).await?;

    let tools = client.tools().await?;
    let steps = [
        ("list_roots", json!({})),
        ("sample", json!({"prompt": "What is the capital of France?"})),
        ("elicit", json!({"message": "Who are you?"})),
        ("notify_changes", json!({})),
        ("log", json!({"level": "warning", "message": "disk almost full"})),
    ];
    for (name, arguments) in steps {
        if !tools.iter().any(|tool| tool.name == name) {
            println!("\n(the server has no {name} tool: skipped)");
            continue;
        }
        println!("\nCalling {name} {arguments}");
        let result = client.call_tool(name, arguments).await?;
        let text: Vec<&str> = result.content.iter().filter_map(|block| block.as_text()).collect();
        let failed = if result.is_error == Some(true) { " (tool error)" } else { "" };
        println!("  -> {}{failed}", text.join(" "));
    }

    client.close().await;
    // The subscription ends with the connection, after everything that arrived was read.
    let seen = subscriber.await;
    println!("\nClosed; the subscriber saw {seen} notifications");
    Ok(())
}

/// The server side, when this binary is started with `--serve [demo server flags]`.
fn serve_demo(flags: Vec<String>) -> Result<(), Box<dyn Error>> {
    let status = mcp_demo_server::main_with_args(flags);
    if status == std::process::ExitCode::SUCCESS { Ok(()) } else { Err("the demo server failed".into()) }
}
