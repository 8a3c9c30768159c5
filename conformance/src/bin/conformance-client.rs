//! The client the official MCP conformance runner (`@modelcontextprotocol/conformance`) drives.
//!
//! Usage: `conformance-client [options…] <server URL>`; the runner appends the URL of its
//! scenario server and names the scenario in the `MCP_CONFORMANCE_SCENARIO` environment variable.
//! Every client scenario of the suite is served by one behaviour: connect over Streamable HTTP
//! with the hyper driver, list the tools, call each with arguments made up from its input schema
//! (accepting elicitations with the schema's defaults), read resources, get prompts, and close.
//! When the runner's `MCP_CONFORMANCE_CONTEXT` names `toolCalls`, exactly those calls are made
//! instead. An argument named `schema` of type object gets another tool's input schema, verbatim
//! (for the schema-echo scenarios). The process exits by itself: 0 when everything succeeded
//! (a tool the server then refuses with a JSON-RPC error does not count as a client failure),
//! 1 otherwise, and never later than [`DEADLINE`].
//!
//! The skills scenarios (`sep-2640-client-*`, SEP-2640) get a host instead ([`skills_host`]):
//! it declares the skills extension, lists the skills and, unless the scenario is about not
//! fetching (`sep-2640-client-no-prefetch`: the host's task needs no skill), loads the first
//! one: `SKILL.md`, verified against its entry, and only then the supporting files it refers to.
//! A file that does not verify stops it with exit status 1.

use std::process::ExitCode;
use std::time::Duration;

use mcp_hyper::HyperTransport;
use mcp_sansio::ProtocolVersion;
use mcp_sansio::auth::{AuthConfig, ClientInfo, IdentityAssertion, SigningKey};
use mcp_sansio::http::{HttpConfig, HttpMethod, HttpRequest};
use mcp_sansio::schema::{
    ClientCapabilities, ElicitRequestParams, ElicitResult, Implementation, JsonObject, SKILL_MD, Skill,
};
use mcp_smol::{ClientApi, HttpTransport, OAuth, SkillError};
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

/// Arguments for a tool: a plausible value for every property of its input schema; `other` is
/// another tool's input schema, for an argument named `schema` that takes one.
fn arguments_for(schema: &JsonObject, other: Option<&JsonObject>) -> Value {
    let Some(Value::Object(properties)) = schema.get("properties") else { return json!({}) };
    let arguments: JsonObject = properties
        .iter()
        .map(|(name, property)| {
            let kind = property.get("type").and_then(Value::as_str);
            if let (Some(other), "schema", Some("object")) = (other, name.as_str(), kind) {
                return (name.clone(), Value::Object(other.clone()));
            }
            let value = property.get("default").cloned().unwrap_or_else(|| match kind {
                Some("number" | "integer") => json!(2),
                Some("boolean") => json!(true),
                Some("array") => json!([]),
                Some("object") => json!({}),
                _ => json!("test"),
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

/// The tool calls the runner asks for in `MCP_CONFORMANCE_CONTEXT` (`{"toolCalls": [{"name",
/// "arguments"}, …]}`), if any.
fn context_tool_calls() -> Option<Vec<(String, Value)>> {
    let context = context()?;
    let calls = context.get("toolCalls")?.as_array()?;
    Some(
        calls
            .iter()
            .filter_map(|call| {
                let name = call.get("name")?.as_str()?.to_owned();
                Some((name, call.get("arguments").cloned().unwrap_or_else(|| json!({}))))
            })
            .collect(),
    )
}

/// Calls a tool; only a failure of the client (transport, timeout, local refusal) is an error,
/// not the server refusing the call with a JSON-RPC error.
async fn call(client: &mcp_smol::Client, name: &str, arguments: Value) -> Result<(), String> {
    match client.call_tool(name, arguments).await {
        Ok(result) => {
            eprintln!("called {name}: is_error={:?}", result.is_error);
            Ok(())
        }
        Err(e) if e.server_error().is_some() => {
            eprintln!("the server refused {name}: {e}");
            Ok(())
        }
        Err(e) => Err(format!("calling {name}: {e}")),
    }
}

/// Where the runner's authorization server redirects (nothing listens there: the client reads
/// the redirect from the authorization endpoint's `Location`, as the official clients do).
const REDIRECT_URI: &str = "http://localhost:3000/callback";
/// The Client ID Metadata Document URL the runner expects where its server accepts URL client
/// ids.
const CLIENT_METADATA_URL: &str = "https://conformance-test.local/client-metadata.json";

/// The runner's `MCP_CONFORMANCE_CONTEXT`, if any.
fn context() -> Option<Value> {
    serde_json::from_str(&std::env::var("MCP_CONFORMANCE_CONTEXT").ok()?).ok()
}

/// The OAuth configuration for the scenario, from what the context gives:
/// - a private key: client credentials with `private_key_jwt`;
/// - an identity provider's ID token: enterprise-managed authorization (token exchange for an
///   ID-JAG, then the JWT bearer grant);
/// - a workload JWT: the JWT bearer grant with it (one attempt);
/// - a client secret: client credentials in the client-credentials scenarios, else a
///   pre-registered client;
/// - nothing: the authorization code grant with dynamic registration (or the metadata
///   document where the server takes it).
///
/// DPoP needs no configuration: the client binds its tokens when the authorization server
/// offers it.
fn oauth(transport: &HyperTransport) -> Result<OAuth, String> {
    let context = context().unwrap_or_default();
    let field = |name: &str| context.get(name).and_then(Value::as_str).map(str::to_owned);
    let scenario = std::env::var("MCP_CONFORMANCE_SCENARIO").unwrap_or_default();
    let client_id = field("client_id");
    let config = if let (Some(id), Some(pem)) = (&client_id, field("private_key_pem")) {
        let key = SigningKey::from_pkcs8_pem(&pem).map_err(|e| format!("the context's private key: {e}"))?;
        AuthConfig::client_credentials(ClientInfo::private_key_jwt(id, key))
    } else if let (Some(id), Some(id_token), Some(endpoint)) =
        (&client_id, field("idp_id_token"), field("idp_token_endpoint"))
    {
        let mut idp = IdentityAssertion::new(endpoint, id_token);
        if let Some(idp_client) = field("idp_client_id") {
            idp = idp.idp_client(ClientInfo::public(idp_client));
        }
        let client = match field("client_secret") {
            Some(secret) => ClientInfo::confidential(id, secret),
            None => ClientInfo::public(id),
        };
        AuthConfig::identity_assertion(idp, client)
    } else if let Some(assertion) = field("valid_jwt") {
        let config = AuthConfig::jwt_bearer(assertion);
        match &client_id {
            Some(id) => config.client(ClientInfo::public(id)),
            None => config,
        }
    } else {
        match (client_id, field("client_secret")) {
            (Some(id), Some(secret)) if scenario.contains("client-credentials") => {
                AuthConfig::client_credentials(ClientInfo::confidential(id, secret))
            }
            (Some(id), Some(secret)) => {
                AuthConfig::authorization_code(REDIRECT_URI).client(ClientInfo::confidential(id, secret))
            }
            _ => AuthConfig::authorization_code(REDIRECT_URI),
        }
    };
    let config = config.client_name("mcp-sansio-conformance").client_metadata_url(CLIENT_METADATA_URL);
    let transport = transport.clone();
    Ok(OAuth::new(config).handler(move |url: String| {
        let transport = transport.clone();
        async move { headless_authorization(&transport, url).await }
    }))
}

/// The browser's part, without a browser: fetches the authorization URL (the runner's server
/// approves at once) and returns where it redirects.
async fn headless_authorization(transport: &HyperTransport, url: String) -> Result<String, String> {
    let request = HttpRequest::new(HttpMethod::Get, url, Vec::new(), Vec::new());
    let response = transport.send(request).await.map_err(|e| format!("authorization request: {e}"))?;
    let location = response
        .headers
        .iter()
        .find(|(name, _)| name.eq_ignore_ascii_case("location"))
        .and_then(|(_, value)| String::from_utf8(value.clone()).ok());
    location
        .ok_or_else(|| format!("the authorization endpoint answered {} without a redirect", response.status))
}

/// The supporting files a host reads once `SKILL.md` verified: those of the entry that its text
/// names (as the model would follow its references), or, when it names none, the first one
/// listed (the task needs one).
fn supporting_files<'a>(skill: &'a Skill, skill_md: &str) -> Vec<&'a str> {
    let root = skill.root().unwrap_or_default();
    let files: Vec<&str> = skill
        .files()
        .unwrap_or_default()
        .iter()
        .filter_map(|file| file.uri.strip_prefix(root))
        .filter(|relative| *relative != SKILL_MD)
        .collect();
    let named: Vec<&str> = files.iter().copied().filter(|relative| skill_md.contains(relative)).collect();
    if named.is_empty() { files.into_iter().take(1).collect() } else { named }
}

/// The host of the skills scenarios: lists the skills; unless `scenario` is about not fetching
/// ahead of need, loads the first skill's `SKILL.md` and, only if it verifies, the supporting
/// files it names. A file that does not verify ends the run with an error (exit status 1); no
/// byte of it is used.
async fn skills_host(client: &mcp_smol::Client, scenario: &str) -> Result<(), String> {
    let skills = client.list_all_skills().await.map_err(|e| format!("listing skills: {e}"))?;
    eprintln!("listed {} skill(s): {:?}", skills.len(), skills.iter().map(|s| &s.uri).collect::<Vec<_>>());
    if scenario == "sep-2640-client-no-prefetch" {
        // The task at hand needs no skill: nothing is fetched.
        return Ok(());
    }
    let Some(skill) = skills.first() else { return Err("the server lists no skill".into()) };
    let refused = |path: &str, e: SkillError| format!("refusing {path} of {}: {e}", skill.uri);
    let skill_md = client.read_skill_file(skill, SKILL_MD).await.map_err(|e| refused(SKILL_MD, e))?;
    eprintln!("loaded {} ({} bytes, verified)", skill.uri, skill_md.len());
    let text = String::from_utf8_lossy(&skill_md);
    for path in supporting_files(skill, &text) {
        let bytes = client.read_skill_file(skill, path).await.map_err(|e| refused(path, e))?;
        eprintln!("read {path} ({} bytes, verified)", bytes.len());
    }
    Ok(())
}

async fn run(url: String) -> Result<(), String> {
    let capabilities = ClientCapabilities {
        elicitation: Some(JsonObject::from_iter([("form".to_owned(), json!({}))])),
        ..Default::default()
    };
    let scenario = std::env::var("MCP_CONFORMANCE_SCENARIO").unwrap_or_default();
    let skills = scenario.starts_with("sep-2640-client-");
    let transport = HyperTransport::new();
    let mut builder =
        ClientBuilder::new(Implementation::new("mcp-sansio-conformance", env!("CARGO_PKG_VERSION")))
            .configure(|config| config.with_capabilities(capabilities).with_versions(&versions()))
            .handler(AcceptDefaults)
            .oauth(oauth(&transport)?);
    if skills {
        builder = builder.skills();
    }
    let client =
        builder.spawn_http(HttpConfig::new(url), transport).await.map_err(|e| format!("connecting: {e}"))?;
    eprintln!(
        "connected: protocol {:?}, server {:?}",
        client.protocol_version().map(|v| v.as_str()),
        client.server_info().map(|i| i.name)
    );
    if skills {
        let outcome = skills_host(&client, &scenario).await;
        client.close().await;
        return outcome;
    }
    let has_tools = client.server_capabilities().is_some_and(|c| c.tools.is_some());
    let mut outcome = Ok(());
    if has_tools {
        match (client.list_all_tools().await, context_tool_calls()) {
            (Ok(_), Some(calls)) => {
                for (name, arguments) in calls {
                    outcome = outcome.and(call(&client, &name, arguments).await);
                }
            }
            (Ok(tools), None) => {
                for (i, tool) in tools.iter().enumerate() {
                    let other = tools.iter().enumerate().find(|&(j, _)| j != i).map(|(_, t)| &t.input_schema);
                    let arguments = arguments_for(&tool.input_schema, other);
                    outcome = outcome.and(call(&client, &tool.name, arguments).await);
                }
            }
            (Err(e), _) => outcome = Err(format!("listing tools: {e}")),
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
