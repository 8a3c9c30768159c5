//! The little URL handling the HTTP transports need: an origin, and resolving the legacy
//! transport's `endpoint` reference against the URL it came from.
//!
//! A full URL parser is not needed: the client only ever resolves one reference (the `endpoint`
//! event of a 2024-11-05 server) and compares origins to refuse a cross-origin endpoint.

/// The `scheme://authority` part of an absolute `http`/`https` URL, lowercased; `None` for
/// anything else.
pub(crate) fn origin(url: &str) -> Option<String> {
    let (scheme, rest) = url.split_once("://")?;
    let scheme = scheme.to_ascii_lowercase();
    if scheme != "http" && scheme != "https" {
        return None;
    }
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let authority = &rest[..end];
    if authority.is_empty() {
        return None;
    }
    let authority = authority.to_ascii_lowercase();
    // The default port is the same origin as no port.
    let authority = match (scheme.as_str(), authority.strip_suffix(":80"), authority.strip_suffix(":443")) {
        ("http", Some(host), _) | ("https", _, Some(host)) => host.to_owned(),
        _ => authority,
    };
    Some(format!("{scheme}://{authority}"))
}

/// Resolves `reference` (absolute, scheme-relative, absolute-path or relative-path) against the
/// absolute URL `base`.
pub(crate) fn resolve(base: &str, reference: &str) -> Option<String> {
    let reference = reference.trim();
    if reference.contains("://") {
        return origin(reference).map(|_| reference.to_owned());
    }
    let (scheme, rest) = base.split_once("://")?;
    if let Some(rest_ref) = reference.strip_prefix("//") {
        return Some(format!("{scheme}://{rest_ref}"));
    }
    let authority_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let root = &base[..scheme.len() + 3 + authority_end];
    if reference.starts_with('/') {
        return Some(format!("{root}{reference}"));
    }
    // A relative path replaces the last segment of the base path (query and fragment dropped).
    let path = &rest[authority_end..];
    let path = &path[..path.find(['?', '#']).unwrap_or(path.len())];
    let dir = &path[..path.rfind('/').map_or(0, |i| i + 1)];
    let dir = if dir.is_empty() { "/" } else { dir };
    if reference.starts_with('?') {
        return Some(format!("{root}{path}{reference}"));
    }
    Some(format!("{root}{dir}{reference}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn origins() {
        assert_eq!(origin("http://127.0.0.1:3000/mcp").as_deref(), Some("http://127.0.0.1:3000"));
        assert_eq!(origin("HTTPS://Example.com:443/x?y").as_deref(), Some("https://example.com"));
        assert_eq!(origin("http://example.com:80").as_deref(), Some("http://example.com"));
        assert_eq!(origin("ftp://example.com/"), None);
        assert_eq!(origin("/relative"), None);
        assert_eq!(origin("http:///nohost"), None);
    }

    #[test]
    fn resolves_every_reference_kind() {
        let base = "http://127.0.0.1:3001/sse?x=1";
        assert_eq!(
            resolve(base, "/message?sessionId=a").unwrap(),
            "http://127.0.0.1:3001/message?sessionId=a"
        );
        assert_eq!(resolve(base, "message?s=1").unwrap(), "http://127.0.0.1:3001/message?s=1");
        assert_eq!(resolve("http://h/a/b/sse", "msg").unwrap(), "http://h/a/b/msg");
        assert_eq!(resolve("http://h", "msg").unwrap(), "http://h/msg");
        assert_eq!(resolve(base, "?s=2").unwrap(), "http://127.0.0.1:3001/sse?s=2");
        assert_eq!(resolve(base, "//other:1/m").unwrap(), "http://other:1/m");
        assert_eq!(resolve(base, "https://x.test/m").unwrap(), "https://x.test/m");
        assert_eq!(resolve(base, "javascript://x"), None);
        assert_eq!(resolve("not a url", "/m"), None);
    }
}
