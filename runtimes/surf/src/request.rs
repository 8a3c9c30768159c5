//! Turning the session's [`HttpRequest`] into a surf request, refusing what the backend would
//! panic on.
//!
//! surf 2 and http-client 6 `unwrap` and `expect` on header names and values they cannot
//! represent (a name that is not a token, a value with a control or non-ASCII byte). Those are
//! checked here first and refused with an `InvalidInput` error, naming the header but never
//! printing its value.

use std::io;

use mcp_sansio::http::HttpRequest;
use surf::http::{Method, Url};

use crate::error::invalid_request;

/// Converts `request` into a surf request.
pub(crate) fn to_surf(request: HttpRequest) -> io::Result<surf::Request> {
    let method: Method =
        request.method().as_str().parse().map_err(|_| {
            invalid_request(format!("HTTP method {} is not supported by surf", request.method()))
        })?;
    let url = Url::parse(request.url())
        .map_err(|error| invalid_request(format!("invalid request URL: {error}")))?;
    if !matches!(url.scheme(), "http" | "https") {
        // libcurl speaks many protocols (file, ftp, ...): only HTTP is wanted here.
        return Err(invalid_request(format!(
            "unsupported URL scheme {:?}: only http and https",
            url.scheme()
        )));
    }

    let mut surf_request = surf::Request::new(method, url);
    // http-client's isahc glue sends only the first value of a repeated header name: repeated
    // names are joined into one comma-separated value, as RFC 9110 allows for list headers.
    let mut headers: Vec<(&str, String)> = Vec::with_capacity(request.headers().len());
    for (name, value) in request.headers() {
        if !is_token(name) {
            return Err(invalid_request(format!("invalid request header name {name:?}")));
        }
        if !is_field_value(value) {
            return Err(invalid_request(format!(
                "request header {name:?} has a value with a control or non-ASCII character"
            )));
        }
        match headers.iter_mut().find(|(seen, _)| seen.eq_ignore_ascii_case(name)) {
            Some((_, joined)) => {
                joined.push_str(", ");
                joined.push_str(value);
            }
            None => headers.push((name, value.to_owned())),
        }
    }
    for (name, value) in headers {
        // Both checked above: these conversions cannot fail.
        surf_request.insert_header(name, value.as_str());
    }

    let body = request.into_body();
    if !body.is_empty() {
        // After the headers: surf sets `Content-Type` from the body only when it is absent.
        surf_request.set_body(body);
    }
    Ok(surf_request)
}

/// An RFC 9110 token: what a header name must be.
fn is_token(name: &str) -> bool {
    !name.is_empty()
        && name.bytes().all(|byte| byte.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&byte))
}

/// A header value that every layer below accepts: visible ASCII, spaces and tabs.
fn is_field_value(value: &str) -> bool {
    value.bytes().all(|byte| byte == b'\t' || (b' '..=b'~').contains(&byte))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens() {
        assert!(is_token("Mcp-Session-Id"));
        assert!(is_token("x_custom.1"));
        assert!(!is_token(""));
        assert!(!is_token("bad name"));
        assert!(!is_token("bad:name"));
        assert!(!is_token("nämé"));
    }

    #[test]
    fn field_values() {
        assert!(is_field_value("Bearer abc.def"));
        assert!(is_field_value(""));
        assert!(is_field_value("a\tb"));
        assert!(!is_field_value("a\r\nInjected: yes"));
        assert!(!is_field_value("caf\u{e9}"));
        assert!(!is_field_value("nul\0"));
    }
}
