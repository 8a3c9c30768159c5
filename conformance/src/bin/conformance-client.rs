//! The client the official MCP conformance runner (`@modelcontextprotocol/conformance`) drives.
//!
//! Usage: `conformance-client [options…] <server URL>`; the runner appends the URL of its
//! scenario server and names the scenario in the `MCP_CONFORMANCE_SCENARIO` environment variable.
//! Every client scenario of the suite is served by one behaviour: connect over Streamable HTTP
//! with the hyper driver, list the tools, call each with arguments made up from its input schema
//! (accepting elicitations with the schema's defaults), and close. The process exits by itself:
//! 0 when everything succeeded, 1 otherwise, and never later than [`DEADLINE`].

use std::process::ExitCode;
use std::time::Duration;

use mcp_hyper::HyperTransport;
use mcp_sansio::ProtocolVersion;
use mcp_sansio::http::HttpConfig;
use mcp_sansio::schema::{ClientCapabilities, ElicitRequestParams, ElicitResult, Implementation, JsonObject};
use mcp_smol::{ClientBuilder, ClientHandler, HandlerFuture};
use serde_json::{Value, json};

/// The runner gives a client 30 s; finish before it gives up.
const DEADLINE: Duration = Duration::from_secs(25);

/// Accepts every elicitation, filling each field with its schema's default (SEP-1034).
struct AcceptDefaults;

impl ClientHandler for AcceptDefaults {
    fn elicit(&self, params: ElicitRequestParams) -> HandlerFuture<ElicitResult> {
        let content = params.requested_schema.as_ref().map(defaults_of).unwrap_or_default();
        Box::pin(async move { Ok(ElicitResult::accept(content)) })
    }
}

/// The `default` of every property of an object schema that has one.
fn defaults_of(schema: &JsonObject) -> JsonObject {
    let Some(Value::Object(properties)) = schema.get("properties") else { return JsonObject::new() };
    properties
        .iter()
        .filter_map(|(name, property)| Some((name.clone(), property.get("default")?.clone())))
        .collect()
}

/// Arguments for a tool: a plausible value for every property of its input schema.
fn arguments_for(schema: &JsonObject) -> Value {
    let Some(Value::Object(properties)) = schema.get("properties") else { return json!({}) };
    let arguments: JsonObject = properties
        .iter()
        .map(|(name, property)| {
            let value = property.get("default").cloned().unwrap_or_else(|| {
                match property.get("type").and_then(Value::as_str) {
                    Some("number" | "integer") => json!(2),
                    Some("boolean") => json!(true),
                    Some("array") => json!([]),
                    Some("object") => json!({}),
                    _ => json!("test"),
                }
            });
            (name.clone(), value)
        })
        .collect();
    Value::Object(arguments)
}

/// The versions to offer: the runner names the protocol version of the scenario in
/// `MCP_CONFORMANCE_PROTOCOL_VERSION`; 2026-07-28 makes the client dual-era (modern first).
fn versions() -> Vec<ProtocolVersion> {
    let wanted = std::env::var("MCP_CONFORMANCE_PROTOCOL_VERSION").ok().and_then(|v| v.parse().ok());
    match wanted {
        Some(ProtocolVersion::V2026_07_28) => ProtocolVersion::DUAL_ERA.to_vec(),
        _ => ProtocolVersion::LEGACY.iter().rev().copied().collect(),
    }
}

async fn run(url: String) -> Result<(), String> {
    let capabilities = ClientCapabilities {
        elicitation: Some(JsonObject::from_iter([("form".to_owned(), json!({}))])),
        ..Default::default()
    };
    let client = ClientBuilder::new(Implementation::new("mcp-sansio-conformance", env!("CARGO_PKG_VERSION")))
        .configure(|config| config.with_capabilities(capabilities).with_versions(&versions()))
        .handler(AcceptDefaults)
        .spawn_http(HttpConfig::new(url), HyperTransport::new())
        .await
        .map_err(|e| format!("connecting: {e}"))?;
    eprintln!(
        "connected: protocol {:?}, server {:?}",
        client.protocol_version().map(|v| v.as_str()),
        client.server_info().map(|i| i.name)
    );
    let has_tools = client.server_capabilities().is_some_and(|c| c.tools.is_some());
    let mut outcome = Ok(());
    if has_tools {
        match client.list_all_tools().await {
            Ok(tools) => {
                for tool in tools {
                    let arguments = arguments_for(&tool.input_schema);
                    match client.call_tool(&tool.name, arguments).await {
                        Ok(result) => eprintln!("called {}: is_error={:?}", tool.name, result.is_error),
                        Err(e) => outcome = Err(format!("calling {}: {e}", tool.name)),
                    }
                }
            }
            Err(e) => outcome = Err(format!("listing tools: {e}")),
        }
    }
    // Exercise the methods that name a target too (resources/read, prompts/get).
    if client.server_capabilities().is_some_and(|c| c.resources.is_some()) {
        match client.list_all_resources().await {
            Ok(resources) => {
                for resource in resources.iter().take(4) {
                    if let Err(e) = client.read_resource(&resource.uri).await {
                        eprintln!("reading {}: {e}", resource.uri);
                    }
                }
            }
            Err(e) => eprintln!("listing resources: {e}"),
        }
    }
    if client.server_capabilities().is_some_and(|c| c.prompts.is_some()) {
        match client.list_all_prompts().await {
            Ok(prompts) => {
                for prompt in prompts.iter().take(4) {
                    if let Err(e) = client.get_prompt(&prompt.name, Vec::<(String, String)>::new()).await {
                        eprintln!("getting {}: {e}", prompt.name);
                    }
                }
            }
            Err(e) => eprintln!("listing prompts: {e}"),
        }
    }
    client.close().await;
    outcome
}

fn main() -> ExitCode {
    let Some(url) = std::env::args().skip(1).next_back() else {
        eprintln!("usage: conformance-client <server URL>");
        return ExitCode::from(2);
    };
    let scenario = std::env::var("MCP_CONFORMANCE_SCENARIO").unwrap_or_default();
    eprintln!("scenario {scenario:?} against {url}");
    let outcome = smol::block_on(futures_lite::future::or(run(url), async {
        async_io::Timer::after(DEADLINE).await;
        Err(format!("gave up after {DEADLINE:?}"))
    }));
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("conformance-client: {e}");
            ExitCode::FAILURE
        }
    }
}
