//! W3C trace context in a request's `_meta` (SEP-414): `traceparent` and `tracestate` as root
//! keys of the request's `_meta`, so that a server's spans join the caller's trace.

use super::JsonObject;

/// `_meta` key of the W3C `traceparent` (SEP-414: a root key of the request's `_meta`).
pub const META_TRACEPARENT: &str = "traceparent";
/// `_meta` key of the W3C `tracestate`.
pub const META_TRACESTATE: &str = "tracestate";

/// A W3C trace context to send with a request, so that a server's spans join the caller's trace.
///
/// ```
/// use mcp_sansio::schema::TraceContext;
/// let ctx = TraceContext::new("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01").unwrap();
/// let meta = ctx.clone().with_state("vendor=1").to_meta();
/// assert_eq!(meta["traceparent"], "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01");
/// assert_eq!(meta["tracestate"], "vendor=1");
/// // Malformed (uppercase, all-zero trace id, wrong length) is refused, typed:
/// assert!(TraceContext::new("00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01").is_err());
/// assert!(TraceContext::new("00-00000000000000000000000000000000-00f067aa0ba902b7-01").is_err());
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TraceContext {
    traceparent: String,
    tracestate: Option<String>,
}

/// Why a `traceparent` was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("not a W3C traceparent ({why}): {value:?}")]
pub struct InvalidTraceparent {
    /// What was given.
    pub value: String,
    /// What is wrong with it.
    pub why: &'static str,
}

impl TraceContext {
    /// A trace context with this `traceparent` (`version-traceid-parentid-flags`, lowercase
    /// hex, 55 characters for version `00`), checked as the W3C recommendation says.
    pub fn new(traceparent: impl Into<String>) -> Result<Self, InvalidTraceparent> {
        let value = traceparent.into();
        let refuse = |why| Err(InvalidTraceparent { value: value.clone(), why });
        let parts: Vec<&str> = value.split('-').collect();
        let lower_hex = |s: &str| s.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b));
        let [version, trace_id, parent_id, flags] = parts[..] else { return refuse("four fields") };
        if [(version, 2), (trace_id, 32), (parent_id, 16), (flags, 2)]
            .iter()
            .any(|(field, len)| field.len() != *len || !lower_hex(field))
        {
            return refuse("fields of 2, 32, 16 and 2 lowercase hex digits");
        }
        if version == "ff" {
            return refuse("version ff is invalid");
        }
        if trace_id.bytes().all(|b| b == b'0') || parent_id.bytes().all(|b| b == b'0') {
            return refuse("an all-zero id");
        }
        Ok(TraceContext { traceparent: value, tracestate: None })
    }

    /// Adds the vendor-specific `tracestate`.
    pub fn with_state(mut self, tracestate: impl Into<String>) -> Self {
        self.tracestate = Some(tracestate.into());
        self
    }

    /// The `traceparent`.
    pub fn traceparent(&self) -> &str {
        &self.traceparent
    }

    /// The `tracestate`, if any.
    pub fn tracestate(&self) -> Option<&str> {
        self.tracestate.as_deref()
    }

    /// The `_meta` members to send.
    pub fn to_meta(&self) -> JsonObject {
        let mut meta = JsonObject::new();
        meta.insert(META_TRACEPARENT.into(), self.traceparent.clone().into());
        if let Some(state) = &self.tracestate {
            meta.insert(META_TRACESTATE.into(), state.clone().into());
        }
        meta
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn traceparents_are_checked() {
        let good = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
        assert_eq!(TraceContext::new(good).unwrap().traceparent(), good);
        for bad in [
            "",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7",
            "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",
            "00-4bf92f3577b34da6a3ce929d0e0e473-00f067aa0ba902b7-01",
        ] {
            assert!(TraceContext::new(bad).is_err(), "{bad:?}");
        }
    }
}
