//! Where a request goes: the URL split into the pool key (scheme, host, port), the `Host`
//! header and the origin-form request target.

use std::fmt;
use std::io;

use hyper::Uri;
use hyper::http::uri::PathAndQuery;

/// The two schemes spoken.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Scheme {
    Http,
    Https,
}

impl Scheme {
    fn default_port(self) -> u16 {
        match self {
            Scheme::Http => 80,
            Scheme::Https => 443,
        }
    }
}

/// Identifies the connections that can serve a request: same scheme, host and port.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct Key {
    pub(crate) scheme: Scheme,
    /// The host, lowercase, without the brackets of an IPv6 literal.
    pub(crate) host: String,
    pub(crate) port: u16,
}

impl fmt::Display for Key {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.host.contains(':') {
            write!(f, "[{}]:{}", self.host, self.port)
        } else {
            write!(f, "{}:{}", self.host, self.port)
        }
    }
}

/// A parsed request URL.
#[derive(Debug, Clone)]
pub(crate) struct Target {
    pub(crate) key: Key,
    /// The `Host` header: the host as written, with the port unless it is the scheme's default.
    pub(crate) host_header: String,
    /// The origin-form request target (`/path?query`).
    pub(crate) uri: Uri,
}

impl Target {
    /// Parses an absolute `http` or `https` URL; anything else is `InvalidInput`.
    pub(crate) fn parse(url: &str) -> io::Result<Self> {
        let invalid = |why: String| io::Error::new(io::ErrorKind::InvalidInput, why);
        let uri: Uri = url.parse().map_err(|e| invalid(format!("invalid URL {url:?}: {e}")))?;
        let scheme = match uri.scheme_str() {
            Some(s) if s.eq_ignore_ascii_case("http") => Scheme::Http,
            Some(s) if s.eq_ignore_ascii_case("https") => Scheme::Https,
            Some(s) => return Err(invalid(format!("invalid URL {url:?}: unsupported scheme {s:?}"))),
            None => return Err(invalid(format!("invalid URL {url:?}: not an absolute http(s) URL"))),
        };
        let host = match uri.host() {
            Some(host) if !host.is_empty() => host,
            _ => return Err(invalid(format!("invalid URL {url:?}: no host"))),
        };
        let port = uri.port_u16().unwrap_or_else(|| scheme.default_port());
        let host_header = match uri.port_u16() {
            Some(port) if port != scheme.default_port() => format!("{host}:{port}"),
            _ => host.to_owned(),
        };
        let bare_host = host.trim_start_matches('[').trim_end_matches(']').to_ascii_lowercase();
        let path = match uri.path_and_query() {
            Some(pq) if pq.as_str().starts_with('/') => pq.clone(),
            Some(pq) => format!("/{}", pq.as_str())
                .parse::<PathAndQuery>()
                .map_err(|e| invalid(format!("invalid URL {url:?}: {e}")))?,
            None => PathAndQuery::from_static("/"),
        };
        Ok(Self { key: Key { scheme, host: bare_host, port }, host_header, uri: Uri::from(path) })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_host_port_and_path() {
        let t = Target::parse("http://127.0.0.1:8080/mcp?x=1").unwrap();
        assert_eq!(t.key, Key { scheme: Scheme::Http, host: "127.0.0.1".into(), port: 8080 });
        assert_eq!(t.host_header, "127.0.0.1:8080");
        assert_eq!(t.uri, "/mcp?x=1");
        assert_eq!(t.key.to_string(), "127.0.0.1:8080");
    }

    #[test]
    fn default_ports_and_empty_path() {
        let t = Target::parse("https://Example.COM").unwrap();
        assert_eq!(t.key, Key { scheme: Scheme::Https, host: "example.com".into(), port: 443 });
        assert_eq!(t.host_header, "Example.COM");
        assert_eq!(t.uri, "/");
        let t = Target::parse("http://example.com:80/a").unwrap();
        assert_eq!(t.host_header, "example.com");
    }

    #[test]
    fn ipv6_literal() {
        let t = Target::parse("http://[::1]:3000/mcp").unwrap();
        assert_eq!(t.key.host, "::1");
        assert_eq!(t.host_header, "[::1]:3000");
        assert_eq!(t.key.to_string(), "[::1]:3000");
    }

    #[test]
    fn rejects_what_is_not_http() {
        for url in ["not a url", "/relative", "ftp://example.com/", "http:///path", ""] {
            let err = Target::parse(url).unwrap_err();
            assert_eq!(err.kind(), io::ErrorKind::InvalidInput, "{url}");
        }
    }
}
