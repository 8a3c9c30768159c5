//! `_meta` and params helpers: splicing `_meta` into outgoing params, checking params are one
//! line of JSON, decoding incoming params, and what a 2026-07-28 request routes on.

use serde_json::value::RawValue;

use crate::error::UsageError;
use crate::json_scan::JsonText;
use crate::jsonrpc::InvalidMessage;
use crate::schema;
use crate::transmit::Route;

/// A method name to keep beside a transmit: the MCP methods as static strings (no allocation
/// per request on the hot path), anything else copied.
pub(super) fn method_name(method: &str) -> std::borrow::Cow<'static, str> {
    const KNOWN: &[&str] = &[
        "tools/call",
        "tools/list",
        "resources/read",
        "resources/list",
        "resources/templates/list",
        "resources/subscribe",
        "resources/unsubscribe",
        "prompts/get",
        "prompts/list",
        "completion/complete",
        "logging/setLevel",
        "ping",
        "server/discover",
        "subscriptions/listen",
        "tasks/get",
        "tasks/result",
        "tasks/list",
        "tasks/cancel",
        "tasks/update",
    ];
    match KNOWN.iter().find(|known| **known == method) {
        Some(known) => std::borrow::Cow::Borrowed(known),
        None => std::borrow::Cow::Owned(method.to_owned()),
    }
}

/// What a 2026-07-28 request of `method` acts on (`Mcp-Name`, and a tool call's arguments for
/// `Mcp-Param-*`), read once from the params the connection itself wrote.
pub(super) fn route_of(method: &str, params: &[u8]) -> Option<Route> {
    #[derive(serde::Deserialize)]
    struct Params<'a> {
        #[serde(borrow, default)]
        name: Option<std::borrow::Cow<'a, str>>,
        #[serde(borrow, default)]
        uri: Option<std::borrow::Cow<'a, str>>,
        #[serde(borrow, default)]
        arguments: Option<&'a RawValue>,
        #[serde(borrow, default, rename = "taskId")]
        task_id: Option<std::borrow::Cow<'a, str>>,
    }
    if !matches!(
        method,
        "tools/call" | "prompts/get" | "resources/read" | "tasks/get" | "tasks/update" | "tasks/cancel"
    ) {
        return None;
    }
    let params = serde_json::from_slice::<Params<'_>>(params).ok()?;
    match method {
        "tools/call" => Some(Route {
            name: params.name?.into_owned(),
            arguments: params.arguments.map(RawValue::to_owned),
        }),
        "prompts/get" => Some(Route { name: params.name?.into_owned(), arguments: None }),
        // The tasks extension: load balancers route a task's requests by its id.
        "tasks/get" | "tasks/update" | "tasks/cancel" => {
            Some(Route { name: params.task_id?.into_owned(), arguments: None })
        }
        _ => Some(Route { name: params.uri?.into_owned(), arguments: None }),
    }
}

pub(super) fn empty_object() -> &'static RawValue {
    // A constant, valid JSON text.
    const EMPTY: &str = "{}";
    match serde_json::from_str::<&RawValue>(EMPTY) {
        Ok(raw) => raw,
        Err(_) => unreachable!("\"{{}}\" is valid JSON"),
    }
}

pub(super) fn decode_params<T: serde::de::DeserializeOwned>(
    method: &str,
    params: Option<JsonText<'_>>,
) -> Result<T, InvalidMessage> {
    let text = params.map_or("{}", JsonText::get);
    serde_json::from_str(text).map_err(|e| {
        // serde quotes the offending value whole, and a server may send megabytes of it.
        let mut detail = e.to_string();
        if detail.len() > MAX_DETAIL {
            let mut cut = MAX_DETAIL;
            while !detail.is_char_boundary(cut) {
                cut -= 1;
            }
            detail.truncate(cut);
            detail.push('…');
        }
        InvalidMessage::Params { method: method.to_owned(), detail }
    })
}

/// The most bytes of serde's explanation an invalid params error keeps.
const MAX_DETAIL: usize = 256;

/// Checks that `bytes` hold one JSON value, so that nothing malformed is ever written.
fn check_json(bytes: &[u8]) -> Result<(), UsageError> {
    // JSON text is UTF-8; skipping a string's contents would not check that.
    let text =
        std::str::from_utf8(bytes).map_err(|e| UsageError::InvalidParams(format!("not UTF-8: {e}")))?;
    serde_json::from_str::<serde::de::IgnoredAny>(text)
        .map(|_| ())
        .map_err(|e| UsageError::InvalidParams(e.to_string()))
}

/// Checks that `bytes` is JSON and returns it on one line: a raw line break in valid JSON can
/// only be white space between tokens (inside strings it is escaped), so dropping it keeps the
/// value and the newline framing of stdio intact. Borrowed unless there was one to drop.
pub(super) fn one_line_json(bytes: &[u8]) -> Result<std::borrow::Cow<'_, [u8]>, UsageError> {
    check_json(bytes)?;
    Ok(crate::params::one_line(bytes))
}

/// Returns the params to send, with `_meta.progressToken` and extra `_meta` members merged in.
///
/// Without anything to merge the params go out as given. Merging splices text when the params
/// cannot already hold a `_meta` member, and only otherwise parses them.
pub(super) fn with_meta<'a>(
    params: Option<&'a [u8]>,
    progress: Option<i64>,
    extra: Option<&schema::JsonObject>,
) -> Result<Option<std::borrow::Cow<'a, [u8]>>, UsageError> {
    use std::borrow::Cow;
    if progress.is_none() && extra.is_none_or(|m| m.is_empty()) {
        return Ok(params.map(Cow::Borrowed));
    }
    let mut meta = extra.cloned().unwrap_or_default();
    if let Some(token) = progress {
        meta.insert("progressToken".into(), token.into());
    }
    let params = params.unwrap_or(b"{}");
    let body = params.trim_ascii();
    if body.first() != Some(&b'{') {
        return Err(UsageError::InvalidParams("params must be a JSON object to carry _meta".into()));
    }
    let contains_meta = params.windows(7).any(|w| w == b"\"_meta\"");
    if !contains_meta {
        let rest = body[1..].trim_ascii_start();
        let mut out = Vec::with_capacity(params.len() + 64);
        out.extend_from_slice(b"{\"_meta\":");
        let _ = serde_json::to_writer(&mut out, &meta);
        if rest.first() != Some(&b'}') {
            out.push(b',');
        }
        out.extend_from_slice(rest);
        return Ok(Some(Cow::Owned(out)));
    }
    let mut object: schema::JsonObject =
        serde_json::from_slice(params).map_err(|e| UsageError::InvalidParams(e.to_string()))?;
    match object.entry("_meta").or_insert_with(|| serde_json::Value::Object(Default::default())) {
        serde_json::Value::Object(existing) => existing.extend(meta),
        _ => return Err(UsageError::InvalidParams("params._meta must be an object".into())),
    }
    serde_json::to_vec(&object)
        .map(|v| Some(Cow::Owned(v)))
        .map_err(|e| UsageError::InvalidParams(e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn meta_is_spliced_or_merged() {
        let got = |p: Option<&[u8]>, t, e: Option<&schema::JsonObject>| {
            with_meta(p, t, e).unwrap().map(|c| String::from_utf8(c.into_owned()).unwrap())
        };
        assert_eq!(got(Some(b"{\"a\":1}"), None, None).as_deref(), Some("{\"a\":1}"));
        assert_eq!(got(None, None, None), None);
        assert_eq!(
            got(Some(b"{\"a\":1}"), Some(4), None).as_deref(),
            Some("{\"_meta\":{\"progressToken\":4},\"a\":1}")
        );
        assert_eq!(got(Some(b" { } "), Some(4), None).as_deref(), Some("{\"_meta\":{\"progressToken\":4}}"));
        assert_eq!(got(None, Some(4), None).as_deref(), Some("{\"_meta\":{\"progressToken\":4}}"));
        let mut extra = schema::JsonObject::new();
        extra.insert("trace".into(), "x".into());
        let merged = got(Some(b"{\"_meta\":{\"k\":true},\"a\":1}"), Some(2), Some(&extra)).unwrap();
        let v: serde_json::Value = serde_json::from_str(&merged).unwrap();
        assert_eq!(v, serde_json::json!({"_meta": {"k": true, "progressToken": 2, "trace": "x"}, "a": 1}));
        assert!(with_meta(Some(b"[1]"), Some(1), None).is_err());
    }

    #[test]
    fn routes_are_read_from_the_params() {
        let call = route_of("tools/call", br#"{"name":"t","arguments":{"a":1},"_meta":{}}"#).unwrap();
        assert_eq!((call.name.as_str(), call.arguments.as_ref().map(|a| a.get())), ("t", Some(r#"{"a":1}"#)));
        assert_eq!(route_of("resources/read", br#"{"uri":"demo://x"}"#).unwrap().name, "demo://x");
        assert_eq!(route_of("prompts/get", br#"{"name":"p"}"#).unwrap().name, "p");
        assert!(route_of("tools/list", br#"{"name":"t"}"#).is_none());
        assert!(route_of("tools/call", br#"{}"#).is_none());
    }
}
