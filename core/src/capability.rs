//! Which capability a request needs, on either side.

use crate::ProtocolVersion;
use crate::schema::{ClientCapabilities, ServerCapabilities};

/// Checks that the server declared what `method` needs; `Err` names the missing capability.
///
/// Methods this table does not know (custom or newer ones) are let through: the server is the
/// authority on those and answers `-32601` if it has no such method.
pub(crate) fn check_server(
    method: &str,
    caps: &ServerCapabilities,
    version: ProtocolVersion,
) -> Result<(), &'static str> {
    let ok = match method {
        "tools/list" | "tools/call" => caps.tools.is_some(),
        "resources/list" | "resources/templates/list" | "resources/read" => caps.resources.is_some(),
        "resources/subscribe" | "resources/unsubscribe" => {
            let subscribe = caps.resources.as_ref().and_then(|r| r.subscribe).unwrap_or(false);
            if !subscribe {
                return Err("resources.subscribe");
            }
            true
        }
        "prompts/list" | "prompts/get" => caps.prompts.is_some(),
        "logging/setLevel" => caps.logging.is_some(),
        // 2024-11-05 had no `completions` capability; its servers offered completion for
        // prompts and resources without declaring it.
        "completion/complete" => {
            caps.completions.is_some()
                || (!version.has_completions_capability()
                    && (caps.prompts.is_some() || caps.resources.is_some()))
        }
        // 2026-07-28: tasks are an extension (SEP-2663), with `tasks/update` and without
        // `tasks/list` and `tasks/result`; 2025-11-25 declares them as the `tasks` capability.
        "tasks/get" | "tasks/cancel" | "tasks/update" if version.is_modern() => {
            if !caps.has_extension(crate::schema::TASKS_EXTENSION) {
                return Err("extensions/io.modelcontextprotocol/tasks");
            }
            true
        }
        "tasks/get" | "tasks/list" | "tasks/cancel" | "tasks/result" => caps.tasks.is_some(),
        _ => true,
    };
    if ok { Ok(()) } else { Err(capability_name(method)) }
}

fn capability_name(method: &str) -> &'static str {
    match method.split('/').next() {
        Some("tools") => "tools",
        Some("resources") => "resources",
        Some("prompts") => "prompts",
        Some("logging") => "logging",
        Some("completion") => "completions",
        Some("tasks") => "tasks",
        _ => "unknown",
    }
}

/// Whether the client declared what a server→client request needs.
pub(crate) fn client_declared(method: &str, caps: &ClientCapabilities) -> bool {
    match method {
        "roots/list" => caps.roots.is_some(),
        "sampling/createMessage" => caps.sampling.is_some(),
        "elicitation/create" => caps.elicitation.is_some(),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::{ListChangedCapability, ResourcesCapability};

    #[test]
    fn refuses_undeclared_and_allows_declared() {
        let v = ProtocolVersion::V2025_11_25;
        let mut caps = ServerCapabilities::default();
        assert_eq!(check_server("tools/call", &caps, v), Err("tools"));
        assert_eq!(check_server("completion/complete", &caps, v), Err("completions"));
        assert_eq!(check_server("ping", &caps, v), Ok(()));
        assert_eq!(check_server("vendor/custom", &caps, v), Ok(()));
        caps.tools = Some(ListChangedCapability::default());
        caps.resources = Some(ResourcesCapability::default());
        assert_eq!(check_server("tools/call", &caps, v), Ok(()));
        assert_eq!(check_server("resources/read", &caps, v), Ok(()));
        assert_eq!(check_server("resources/subscribe", &caps, v), Err("resources.subscribe"));
        caps.resources = Some(ResourcesCapability { subscribe: Some(true), list_changed: None });
        assert_eq!(check_server("resources/subscribe", &caps, v), Ok(()));
        // Undeclared completions: refused on new versions, allowed on 2024-11-05.
        assert!(check_server("completion/complete", &caps, v).is_err());
        assert!(check_server("completion/complete", &caps, ProtocolVersion::V2024_11_05).is_ok());
    }
}
