//! Discovery documents and where to look for them: Protected Resource Metadata (RFC 9728) and
//! Authorization Server Metadata (RFC 8414, and OpenID Connect Discovery).

use serde::Deserialize;
use url::Url;

/// Protected Resource Metadata (RFC 9728 §2): what the MCP server says of itself.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[non_exhaustive]
pub struct ResourceMetadata {
    /// The resource identifier: the MCP server's canonical URI.
    #[serde(default)]
    pub resource: Option<String>,
    /// Issuer URLs of the authorization servers it trusts.
    #[serde(default)]
    pub authorization_servers: Vec<String>,
    /// Scopes the resource knows.
    #[serde(default)]
    pub scopes_supported: Option<Vec<String>>,
    /// Whether the resource accepts only DPoP-bound tokens (RFC 9728 §2).
    #[serde(default)]
    pub dpop_bound_access_tokens_required: bool,
}

/// Authorization Server Metadata (RFC 8414 §2, OpenID Connect Discovery): the fields a client
/// reads.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[non_exhaustive]
pub struct ServerMetadata {
    /// The issuer identifier.
    pub issuer: String,
    /// Where the user authorizes.
    #[serde(default)]
    pub authorization_endpoint: Option<String>,
    /// Where tokens come from.
    #[serde(default)]
    pub token_endpoint: Option<String>,
    /// Dynamic client registration (RFC 7591).
    #[serde(default)]
    pub registration_endpoint: Option<String>,
    /// Scopes the server knows.
    #[serde(default)]
    pub scopes_supported: Option<Vec<String>>,
    /// Grant types (`authorization_code`, `refresh_token`, `client_credentials`, …).
    #[serde(default)]
    pub grant_types_supported: Option<Vec<String>>,
    /// PKCE methods; a client refuses a server that does not list `S256`.
    #[serde(default)]
    pub code_challenge_methods_supported: Option<Vec<String>>,
    /// Client authentication methods at the token endpoint.
    #[serde(default)]
    pub token_endpoint_auth_methods_supported: Option<Vec<String>>,
    /// Whether URL client ids (Client ID Metadata Documents) are accepted.
    #[serde(default)]
    pub client_id_metadata_document_supported: bool,
    /// Whether authorization responses carry `iss` (RFC 9207).
    #[serde(default)]
    pub authorization_response_iss_parameter_supported: bool,
    /// The JWS algorithms of DPoP proofs the server accepts (RFC 9449 §5.1).
    #[serde(default)]
    pub dpop_signing_alg_values_supported: Option<Vec<String>>,
}

impl ServerMetadata {
    /// The 2025-03-26 fallback when a server publishes no metadata: `/authorize`, `/token` and
    /// `/register` at the authorization base URL (the MCP server's origin).
    pub(crate) fn fallback(base: &Url) -> Self {
        let at = |path: &str| base.join(path).ok().map(String::from);
        ServerMetadata {
            issuer: origin_of(base),
            authorization_endpoint: at("/authorize"),
            token_endpoint: at("/token"),
            registration_endpoint: at("/register"),
            // The 2025-03-26 spec requires PKCE S256 of every server.
            code_challenge_methods_supported: Some(vec!["S256".to_owned()]),
            ..ServerMetadata::default()
        }
    }

    pub(crate) fn supports_scope(&self, scope: &str) -> bool {
        self.scopes_supported.as_ref().is_some_and(|s| s.iter().any(|x| x == scope))
    }
}

/// `scheme://host[:port]` of `url`, without a trailing slash.
pub(crate) fn origin_of(url: &Url) -> String {
    url.origin().ascii_serialization()
}

/// Where to look for the resource metadata of the MCP server at `server`: the URL from
/// `WWW-Authenticate` first, then the path-based well-known URI, then the root one (RFC 9728
/// §3.1; the MCP spec's order).
pub(crate) fn resource_metadata_urls(server: &Url, from_header: Option<&str>) -> Vec<Url> {
    let mut urls = Vec::with_capacity(3);
    if let Some(url) = from_header.and_then(|h| server.join(h).ok()) {
        urls.push(url);
    }
    let path = server.path().trim_end_matches('/');
    if !path.is_empty() {
        if let Ok(url) = server.join(&format!("/.well-known/oauth-protected-resource{path}")) {
            urls.push(url);
        }
    }
    if let Ok(url) = server.join("/.well-known/oauth-protected-resource") {
        urls.push(url);
    }
    dedup(urls)
}

/// Where to look for the metadata of the authorization server `issuer` (RFC 8414 §3.1 with the
/// path inserted, then OpenID Connect Discovery with the path inserted and appended; the MCP
/// spec's order).
pub(crate) fn server_metadata_urls(issuer: &Url) -> Vec<Url> {
    let path = issuer.path().trim_end_matches('/');
    let at = |p: String| issuer.join(&p).ok();
    let candidates = if path.is_empty() {
        vec![
            at("/.well-known/oauth-authorization-server".into()),
            at("/.well-known/openid-configuration".into()),
        ]
    } else {
        vec![
            at(format!("/.well-known/oauth-authorization-server{path}")),
            at(format!("/.well-known/openid-configuration{path}")),
            at(format!("{path}/.well-known/openid-configuration")),
        ]
    };
    dedup(candidates.into_iter().flatten().collect())
}

fn dedup(urls: Vec<Url>) -> Vec<Url> {
    let mut out: Vec<Url> = Vec::with_capacity(urls.len());
    for url in urls {
        if !out.contains(&url) {
            out.push(url);
        }
    }
    out
}

/// The canonical form of a resource or issuer identifier for comparison: parsed (so the scheme
/// and host are lowercased and a default port dropped), without fragment, and without a
/// trailing slash on the path (`https://h/` and `https://h` name the same thing).
pub(crate) fn canonical(url: &str) -> Option<String> {
    let mut url = Url::parse(url).ok()?;
    url.set_fragment(None);
    let s = String::from(url);
    Some(match s.strip_suffix('/') {
        Some(trimmed) if !trimmed.ends_with('/') => trimmed.to_owned(),
        _ => s,
    })
}

/// Whether the resource metadata's `resource` names the MCP server at `server`: the same URL,
/// or a prefix of its path on the same origin (a resource that covers several endpoints).
pub(crate) fn resource_matches(resource: &str, server: &Url) -> bool {
    let (Some(resource), Some(server)) = (canonical(resource), canonical(server.as_str())) else {
        return false;
    };
    if resource == server {
        return true;
    }
    let (Ok(r), Ok(s)) = (Url::parse(&resource), Url::parse(&server)) else { return false };
    r.origin() == s.origin()
        && r.query().is_none()
        && (r.path() == "/"
            || s.path().strip_prefix(r.path()).is_some_and(|rest| rest.is_empty() || rest.starts_with('/')))
}

/// Whether `url` may carry credentials: `https`, or `http` to a loopback address.
pub(crate) fn is_secure(url: &Url) -> bool {
    match url.scheme() {
        "https" => true,
        "http" => match url.host() {
            Some(url::Host::Domain(d)) => d.eq_ignore_ascii_case("localhost"),
            Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
            Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
            None => false,
        },
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn url(s: &str) -> Url {
        Url::parse(s).unwrap()
    }

    fn strings(urls: Vec<Url>) -> Vec<String> {
        urls.into_iter().map(String::from).collect()
    }

    #[test]
    fn resource_metadata_candidates_in_order() {
        assert_eq!(
            strings(resource_metadata_urls(&url("http://h:1/mcp"), Some("http://h:1/custom/prm"))),
            [
                "http://h:1/custom/prm",
                "http://h:1/.well-known/oauth-protected-resource/mcp",
                "http://h:1/.well-known/oauth-protected-resource"
            ]
        );
        assert_eq!(
            strings(resource_metadata_urls(&url("https://h/"), None)),
            ["https://h/.well-known/oauth-protected-resource"]
        );
    }

    #[test]
    fn server_metadata_candidates_in_order() {
        assert_eq!(
            strings(server_metadata_urls(&url("https://as.example/tenant1"))),
            [
                "https://as.example/.well-known/oauth-authorization-server/tenant1",
                "https://as.example/.well-known/openid-configuration/tenant1",
                "https://as.example/tenant1/.well-known/openid-configuration"
            ]
        );
        assert_eq!(
            strings(server_metadata_urls(&url("https://as.example"))),
            [
                "https://as.example/.well-known/oauth-authorization-server",
                "https://as.example/.well-known/openid-configuration"
            ]
        );
    }

    #[test]
    fn resources_match_by_canonical_uri_or_path_prefix() {
        let server = url("https://mcp.example/mcp");
        assert!(resource_matches("https://mcp.example/mcp", &server));
        assert!(resource_matches("HTTPS://MCP.example:443/mcp/", &server));
        assert!(resource_matches("https://mcp.example", &server));
        assert!(resource_matches("https://mcp.example/", &server));
        assert!(!resource_matches("https://mcp.example/other", &server));
        assert!(!resource_matches("https://mcp.example/mc", &server));
        assert!(!resource_matches("https://evil.example/mcp", &server));
        assert!(!resource_matches("not a url", &server));
    }

    #[test]
    fn credentials_only_over_https_or_loopback() {
        assert!(is_secure(&url("https://x.example/")));
        assert!(is_secure(&url("http://127.0.0.1:9/")));
        assert!(is_secure(&url("http://[::1]:9/")));
        assert!(is_secure(&url("http://localhost:9/")));
        assert!(!is_secure(&url("http://x.example/")));
        assert!(!is_secure(&url("http://10.0.0.1/")));
    }
}
