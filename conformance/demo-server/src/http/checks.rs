//! Request header checks: the `Origin` allow-list, and the 2026-07-28 request metadata headers
//! that mirror the body (`MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name`, `Mcp-Param-*`).

use serde_json::{Map, Value};

use super::wire::Request;
use crate::assets::base64_decode;
use crate::jsonrpc::{HEADER_MISMATCH, RpcError};
use crate::modern::META_PROTOCOL_VERSION;
use crate::tools;

/// Whether a request with this `Origin` may be served: only pages served from this machine
/// (`localhost`, `127.0.0.1`, `[::1]`, any scheme and port), as a DNS-rebinding guard.
pub(crate) fn origin_allowed(origin: &[u8]) -> bool {
    let Ok(origin) = std::str::from_utf8(origin) else { return false };
    let Some((_, rest)) = origin.split_once("://") else { return false };
    let host = if rest.starts_with('[') {
        rest.split_inclusive(']').next().unwrap_or_default()
    } else {
        rest.split([':', '/']).next().unwrap_or_default()
    };
    ["localhost", "127.0.0.1", "[::1]"].iter().any(|allowed| host.eq_ignore_ascii_case(allowed))
}

/// The text of a header value: `=?base64?<standard Base64>?=` (markers case-sensitive) is
/// decoded, anything else is taken as it is. `None` when the Base64 (or the UTF-8 it carries, or
/// a raw value) is invalid.
pub(crate) fn header_value(raw: &[u8]) -> Option<String> {
    let wrapped = raw.strip_prefix(b"=?base64?").and_then(|inner| inner.strip_suffix(b"?="));
    let bytes = match wrapped {
        Some(encoded) => base64_decode(std::str::from_utf8(encoded).ok()?)?,
        None => raw.to_vec(),
    };
    String::from_utf8(bytes).ok()
}

fn mismatch(message: String) -> RpcError {
    RpcError::new(HEADER_MISMATCH, format!("Header mismatch: {message}"))
}

/// The decoded value of the single header `name` that must mirror `what` (a description of the
/// body value, for messages).
fn required(request: &Request, name: &str, what: &str) -> Result<String, RpcError> {
    let mut values = request.all(name);
    let (Some(raw), None) = (values.next(), values.next()) else {
        let problem = if request.header(name).is_some() { "more than one" } else { "no" };
        return Err(mismatch(format!("{problem} {name} header; it must mirror {what}")));
    };
    header_value(raw).ok_or_else(|| {
        mismatch(format!("the {name} header is not valid text (nor valid =?base64?...?= Base64 of UTF-8)"))
    })
}

/// Checks one mirrored header against the body's value.
fn expect(request: &Request, name: &str, what: &str, body: &str) -> Result<(), RpcError> {
    let header = required(request, name, what)?;
    if header == body {
        return Ok(());
    }
    Err(mismatch(format!("{name} header {header:?} does not match {what} {body:?}")))
}

/// The standard headers of a 2026-07-28 request (spec: Streamable HTTP, "Request Metadata"),
/// then the `Mcp-Param-*` headers of a `tools/call` whose tool annotates arguments with
/// `x-mcp-header`. Values that are missing from the body are not checked here (the request
/// itself is then invalid, which the server reports).
pub(crate) fn modern_headers(
    request: &Request,
    method: &str,
    params: &Map<String, Value>,
) -> Result<(), RpcError> {
    let meta = params.get("_meta").and_then(Value::as_object);
    if let Some(version) = meta.and_then(|meta| meta.get(META_PROTOCOL_VERSION)).and_then(Value::as_str) {
        let what = format!("params._meta[\"{META_PROTOCOL_VERSION}\"]");
        expect(request, "MCP-Protocol-Version", &what, version)?;
    }
    expect(request, "Mcp-Method", "the body's method", method)?;
    let name = match method {
        "tools/call" | "prompts/get" => Some(("params.name", params.get("name"))),
        "resources/read" => Some(("params.uri", params.get("uri"))),
        "tasks/get" | "tasks/update" | "tasks/cancel" => Some(("params.taskId", params.get("taskId"))),
        _ => None,
    };
    if let Some((what, Some(Value::String(value)))) = name {
        expect(request, "Mcp-Name", what, value)?;
    }
    if method == "tools/call" {
        param_headers(request, params)?;
    }
    Ok(())
}

/// `Mcp-Param-<Name>` for every annotated argument present and not `null`.
fn param_headers(request: &Request, params: &Map<String, Value>) -> Result<(), RpcError> {
    let Some(tool) = params.get("name").and_then(Value::as_str) else { return Ok(()) };
    let Some(arguments) = params.get("arguments").and_then(Value::as_object) else { return Ok(()) };
    for (argument, header) in tools::header_params(tool) {
        let Some(value) = arguments.get(&argument).filter(|value| !value.is_null()) else { continue };
        let name = format!("Mcp-Param-{header}");
        let what = format!("arguments.{argument}");
        let text = required(request, &name, &what)?;
        if !param_matches(value, &text) {
            return Err(mismatch(format!("{name} header {text:?} does not match {what} {value}")));
        }
    }
    Ok(())
}

/// A decimal integer: an optional `-` and ASCII digits (leading zeros allowed).
fn integer(text: &str) -> Option<i128> {
    let digits = text.strip_prefix('-').unwrap_or(text);
    if digits.is_empty() || digits.len() > 30 || !digits.bytes().all(|byte| byte.is_ascii_digit()) {
        return None;
    }
    text.parse().ok()
}

/// Whether a header mirrors an argument: strings exactly, integers numerically (`-?[0-9]+`, so
/// `007` matches 7 but `7.0`, `+7` and ` 7` do not), other numbers as equal floating-point
/// values, booleans as `true` / `false`. Arrays and objects never match.
fn param_matches(argument: &Value, header: &str) -> bool {
    match argument {
        Value::String(text) => text == header,
        Value::Bool(flag) => header == if *flag { "true" } else { "false" },
        Value::Number(number) => {
            let exact = number.as_i64().map(i128::from).or_else(|| number.as_u64().map(i128::from));
            match exact {
                Some(exact) => integer(header) == Some(exact),
                None => header.parse::<f64>().ok().zip(number.as_f64()).is_some_and(|(a, b)| a == b),
            }
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn request(headers: &[(&str, &str)]) -> Request {
        Request {
            method: "POST".into(),
            target: "/mcp".into(),
            http10: false,
            headers: headers
                .iter()
                .map(|(name, value)| (name.to_ascii_lowercase(), value.as_bytes().to_vec()))
                .collect(),
            body: Vec::new(),
        }
    }

    fn params(value: Value) -> Map<String, Value> {
        value.as_object().cloned().expect("object")
    }

    #[test]
    fn origins() {
        for good in
            ["http://localhost", "http://127.0.0.1:8080", "https://LOCALHOST:1/x", "http://[::1]:3000"]
        {
            assert!(origin_allowed(good.as_bytes()), "{good}");
        }
        for bad in [
            "null",
            "http://evil.example",
            "http://localhost.evil.example",
            "http://127.0.0.2",
            "localhost",
            "",
        ] {
            assert!(!origin_allowed(bad.as_bytes()), "{bad}");
        }
    }

    #[test]
    fn header_values() {
        assert_eq!(header_value(b"plain").as_deref(), Some("plain"));
        assert_eq!(header_value(b"=?base64?aMOpbGxv?=").as_deref(), Some("héllo"));
        assert_eq!(header_value(b"=?base64?@@@@?="), None);
        assert_eq!(header_value(b"=?base64?/w==?="), None, "not UTF-8");
        assert_eq!(header_value(b"=?BASE64?aMOpbGxv?=").as_deref(), Some("=?BASE64?aMOpbGxv?="));
    }

    #[test]
    fn params_compare_by_type() {
        assert!(param_matches(&json!("x y"), "x y"));
        assert!(
            param_matches(&json!(7), "7")
                && param_matches(&json!(7), "007")
                && param_matches(&json!(-3), "-3")
        );
        for bad in ["7.0", "+7", "", "0x7", "8", "seven"] {
            assert!(!param_matches(&json!(7), bad), "{bad}");
        }
        assert!(param_matches(&json!(2.5), "2.5") && !param_matches(&json!(2.5), "2.6"));
        assert!(param_matches(&json!(true), "true") && !param_matches(&json!(true), "True"));
        assert!(!param_matches(&json!([1]), "[1]"));
    }

    #[test]
    fn modern_headers_mirror_the_body() {
        let body = params(json!({
            "name": "weather",
            "arguments": {"region": "Zürich", "days": 3, "metric": null},
            "_meta": {META_PROTOCOL_VERSION: "2026-07-28"},
        }));
        let good = [
            ("MCP-Protocol-Version", "2026-07-28"),
            ("Mcp-Method", "tools/call"),
            ("Mcp-Name", "weather"),
            ("mcp-param-region", "=?base64?WsO8cmljaA==?="),
            ("Mcp-Param-Days", "3"),
        ];
        assert_eq!(modern_headers(&request(&good), "tools/call", &body), Ok(()));
        for skip in 0..good.len() {
            let headers: Vec<_> =
                good.iter().enumerate().filter(|(at, _)| *at != skip).map(|(_, h)| *h).collect();
            let error = modern_headers(&request(&headers), "tools/call", &body).expect_err("missing header");
            assert_eq!(error.code, HEADER_MISMATCH);
            assert!(
                error.message.contains(good[skip].0) || error.message.contains("Mcp-Param"),
                "{}",
                error.message
            );
        }
        let mut doubled = good.to_vec();
        doubled.push(("Mcp-Method", "tools/call"));
        assert!(modern_headers(&request(&doubled), "tools/call", &body).is_err());
        let listed = params(json!({"_meta": {META_PROTOCOL_VERSION: "2026-07-28"}}));
        let headers =
            [("MCP-Protocol-Version", "2026-07-28"), ("Mcp-Method", "tools/list"), ("Mcp-Name", "x")];
        assert_eq!(modern_headers(&request(&headers), "tools/list", &listed), Ok(()));
        let read = params(json!({"uri": "demo://readme"}));
        let headers = [("Mcp-Method", "resources/read"), ("Mcp-Name", "demo://other")];
        assert!(modern_headers(&request(&headers), "resources/read", &read).is_err());
    }
}
