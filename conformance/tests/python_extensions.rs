//! Interop with the Python SDK peer (`conformance/peers/python_server.py`, PyPI `mcp`) for two
//! small extensions of metadata: W3C trace context in a call's `_meta` (SEP-414), read back by
//! the server; and MCP Apps (SEP-1865), a tool's `ui://` resource read and checked.
//!
//! Needs the Python SDK (`.ci/install-peers`); `.ci/interop` runs these with `MCP_PYTHON_PATH`
//! set. Plain `cargo test` skips them.

use std::time::Duration;

use mcp_sansio::schema::{Implementation, TraceContext};
use mcp_smol::{AppUiError, CallOptions, Client, ClientApi, ClientBuilder, Error, ServerCommand};
use serde_json::json;

const PARENT: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
const OTHER: &str = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";

fn python() -> ServerCommand {
    let pythonpath = std::env::var("MCP_PYTHON_PATH")
        .expect("MCP_PYTHON_PATH must point at the Python SDK's install dir: run .ci/interop");
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/peers/python_server.py");
    ServerCommand::new("python3")
        .args([script, "--transport", "stdio"])
        .env("PYTHONPATH", pythonpath)
        .stderr(mcp_smol::StderrSink::Discard)
}

async fn connect(builder: ClientBuilder) -> Client {
    builder.spawn_stdio(&python()).await.expect("connect to the Python peer")
}

fn text(result: &mcp_sansio::schema::CallToolResult) -> String {
    result.joined_text().unwrap_or_default()
}

#[test]
#[ignore = "needs the Python SDK: run .ci/interop"]
fn a_trace_context_reaches_the_server_from_the_hook_or_the_call() {
    smol::block_on(async {
        let builder = ClientBuilder::new(Implementation::new("mcp-sansio-interop", "0.1.0"))
            .trace_context(|| Some(TraceContext::new(PARENT).unwrap().with_state("vendor=1")));
        let client = connect(builder).await;
        let seen = client.call_tool("trace_context", json!({})).await.unwrap();
        assert_eq!(text(&seen), format!("traceparent={PARENT} tracestate=vendor=1"));
        // A call's own context wins over the hook.
        let own = TraceContext::new(OTHER).unwrap();
        let params = mcp_sansio::schema::CallToolRequestParams::new("trace_context");
        let seen = client.call_tool_with(&params, CallOptions::default().trace(&own)).await.unwrap();
        assert_eq!(text(&seen), format!("traceparent={OTHER} tracestate=None"));
        assert!(client.close_within(Duration::from_secs(10)).await);

        // Without a hook, nothing is added.
        let client = connect(ClientBuilder::new(Implementation::new("mcp-sansio-interop", "0.1.0"))).await;
        let seen = client.call_tool("trace_context", json!({})).await.unwrap();
        assert_eq!(text(&seen), "traceparent=None tracestate=None");
        assert!(client.close_within(Duration::from_secs(10)).await);
    });
}

#[test]
#[ignore = "needs the Python SDK: run .ci/interop"]
fn an_app_tools_ui_resource_is_read_and_its_mime_type_checked() {
    smol::block_on(async {
        let client = connect(ClientBuilder::new(Implementation::new("mcp-sansio-interop", "0.1.0"))).await;
        let tools = client.list_all_tools().await.unwrap();
        let find = |name: &str| tools.iter().find(|t| t.name == name).unwrap().clone();

        let chart = find("chart");
        let ui = chart.ui().unwrap().unwrap();
        assert_eq!(ui.resource_uri.as_deref(), Some("ui://charts/bar"));
        assert_eq!(ui.visibility.as_deref(), Some(&["model".to_owned(), "app".to_owned()][..]));
        let app = client.read_app_ui(&chart).await.unwrap();
        assert!(app.html.contains("id=chart"), "{}", app.html);
        assert_eq!(app.resource.csp.unwrap().connect_domains, ["https://api.example.com"]);
        assert!(app.resource.permissions.unwrap().contains_key("clipboardWrite"));
        assert_eq!(app.resource.prefers_border, Some(true));

        let plain = client.read_app_ui(&find("plain_chart")).await;
        assert!(
            matches!(&plain, Err(Error::AppUi(AppUiError::WrongMimeType { found: Some(m), .. })) if m == "text/html"),
            "{plain:?}"
        );
        let none = client.read_app_ui(&find("echo")).await;
        assert!(matches!(none, Err(Error::AppUi(AppUiError::NoApp { .. }))), "{none:?}");
        assert!(client.close_within(Duration::from_secs(10)).await);
    });
}
