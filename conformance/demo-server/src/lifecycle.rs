//! `initialize`: protocol version negotiation, capabilities and server info (shared with the
//! 2026-07-28 `server/discover`).

use serde_json::{Map, Value, json};

use super::jsonrpc::RpcError;
use super::options::Options;
use super::skills;

/// The protocol versions this server speaks, oldest first.
pub(crate) const SUPPORTED_VERSIONS: [&str; 4] = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"];

/// The version answered when the client asks for one this server does not support.
pub(crate) const LATEST_VERSION: &str = "2025-11-25";

/// The server name reported in `serverInfo`.
pub(crate) const SERVER_NAME: &str = "mcp-demo-server";

/// The version to answer for a requested one: an echo if supported, else [`LATEST_VERSION`].
pub(crate) fn negotiate(requested: &str) -> &'static str {
    SUPPORTED_VERSIONS.iter().copied().find(|known| *known == requested).unwrap_or(LATEST_VERSION)
}

/// The guidance for the model, in the `initialize` and `server/discover` results.
pub(crate) const INSTRUCTIONS: &str = "A deterministic demo server: try the `echo` tool, the \
                                       `demo://readme` resource or the `greeting` prompt.";

/// The server's identity (`Implementation`): `serverInfo` of `initialize`, and
/// `_meta["io.modelcontextprotocol/serverInfo"]` of 2026-07-28 results.
pub(crate) fn server_info() -> Value {
    json!({
        "name": SERVER_NAME,
        "title": "MCP demo server",
        "version": env!("CARGO_PKG_VERSION"),
    })
}

/// The server capabilities announced in the `initialize` and `server/discover` results (with
/// `--skills`, the skills extension too).
pub(crate) fn capabilities(options: &Options) -> Value {
    let mut capabilities = json!({
        "tools": { "listChanged": true },
        "resources": { "subscribe": true, "listChanged": true },
        "prompts": { "listChanged": true },
        "logging": {},
        "completions": {},
    });
    if options.skills {
        capabilities["extensions"] = json!({ skills::EXTENSION: {} });
    }
    capabilities
}

/// `initialize {protocolVersion, capabilities, clientInfo}` → the `InitializeResult`.
pub(crate) fn initialize(params: &Map<String, Value>, options: &Options) -> Result<Value, RpcError> {
    let requested = params
        .get("protocolVersion")
        .and_then(Value::as_str)
        .ok_or_else(|| RpcError::invalid_params("initialize needs a string `protocolVersion`"))?;
    Ok(json!({
        "protocolVersion": negotiate(requested),
        "capabilities": capabilities(options),
        "serverInfo": server_info(),
        "instructions": INSTRUCTIONS,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn echoes_supported_versions_and_falls_back_to_latest() {
        for version in SUPPORTED_VERSIONS {
            assert_eq!(negotiate(version), version);
        }
        assert_eq!(negotiate("1999-01-01"), LATEST_VERSION);
        assert_eq!(negotiate(""), LATEST_VERSION);
    }

    #[test]
    fn requires_a_protocol_version() {
        assert!(initialize(&Map::new(), &Options::default()).is_err());
        let params = json!({"protocolVersion": "2025-03-26"}).as_object().cloned().expect("object");
        let result = initialize(&params, &Options::default()).expect("initialize");
        assert_eq!(result["protocolVersion"], "2025-03-26");
        assert_eq!(result["serverInfo"]["name"], SERVER_NAME);
    }

    #[test]
    fn initialize_result_keeps_its_identity_and_instructions() {
        let params = json!({"protocolVersion": "2025-11-25"}).as_object().cloned().expect("object");
        let result = initialize(&params, &Options::default()).expect("initialize");
        assert_eq!(
            result["serverInfo"],
            json!({"name": "mcp-demo-server", "title": "MCP demo server", "version": env!("CARGO_PKG_VERSION")})
        );
        assert_eq!(
            result["instructions"],
            "A deterministic demo server: try the `echo` tool, the `demo://readme` resource or the \
             `greeting` prompt."
        );
        assert!(result.get("resultType").is_none());
        assert!(result["capabilities"].get("extensions").is_none());
        let skills = Options { skills: true, ..Options::default() };
        let result = initialize(&params, &skills).expect("initialize");
        assert_eq!(result["capabilities"]["extensions"], json!({"io.modelcontextprotocol/skills": {}}));
    }
}
