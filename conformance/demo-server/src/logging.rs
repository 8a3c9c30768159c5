//! MCP log levels (RFC 5424 severities) and the `logging/setLevel` method.

use std::sync::atomic::{AtomicU8, Ordering};

use serde_json::{Map, Value, json};

use super::jsonrpc::RpcError;

/// The MCP log levels, least severe first.
pub(crate) const LEVELS: [&str; 8] =
    ["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"];

/// The rank of a level name in [`LEVELS`], or `None` for an unknown name.
pub(crate) fn rank(level: &str) -> Option<u8> {
    LEVELS.iter().position(|known| *known == level).and_then(|rank| u8::try_from(rank).ok())
}

/// The minimum level the client wants to receive (default `info`).
#[derive(Debug)]
pub(crate) struct LogFilter {
    minimum: AtomicU8,
}

impl Default for LogFilter {
    fn default() -> Self {
        Self { minimum: AtomicU8::new(1) }
    }
}

impl LogFilter {
    /// Whether a message at `level` (a rank from [`rank`]) passes the filter.
    pub(crate) fn allows(&self, level: u8) -> bool {
        level >= self.minimum.load(Ordering::Relaxed)
    }

    /// `logging/setLevel {level}` → `{}`.
    pub(crate) fn set_level(&self, params: &Map<String, Value>) -> Result<Value, RpcError> {
        let level = params
            .get("level")
            .and_then(Value::as_str)
            .ok_or_else(|| RpcError::invalid_params("logging/setLevel needs a string `level`"))?;
        let rank = rank(level).ok_or_else(|| {
            RpcError::invalid_params(format!(
                "unknown log level {level:?}; expected one of {}",
                LEVELS.join(", ")
            ))
        })?;
        self.minimum.store(rank, Ordering::Relaxed);
        Ok(json!({}))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn filters_by_severity() {
        let filter = LogFilter::default();
        let rank = |level| rank(level).expect("known level");
        let params = |level: &str| json!({ "level": level }).as_object().cloned().expect("object");
        assert!(!filter.allows(rank("debug")));
        assert!(filter.allows(rank("info")));
        assert_eq!(filter.set_level(&params("error")), Ok(json!({})));
        assert!(!filter.allows(rank("warning")));
        assert!(filter.allows(rank("emergency")));
        assert!(filter.set_level(&params("loud")).is_err());
    }
}
