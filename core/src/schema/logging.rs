//! Logging: `logging/setLevel` and the levels of `notifications/message`.

use std::fmt;

use serde::{Deserialize, Serialize};

use super::{EmptyResult, JsonObject, request};

/// Severity of a log message (RFC 5424 levels), ordered from least to most severe.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LoggingLevel {
    /// Detailed debugging information.
    Debug,
    /// Informational messages.
    Info,
    /// Normal but significant events.
    Notice,
    /// Warning conditions.
    Warning,
    /// Error conditions.
    Error,
    /// Critical conditions.
    Critical,
    /// Action must be taken immediately.
    Alert,
    /// The system is unusable.
    Emergency,
}

impl LoggingLevel {
    /// The wire name of the level.
    pub fn as_str(self) -> &'static str {
        match self {
            LoggingLevel::Debug => "debug",
            LoggingLevel::Info => "info",
            LoggingLevel::Notice => "notice",
            LoggingLevel::Warning => "warning",
            LoggingLevel::Error => "error",
            LoggingLevel::Critical => "critical",
            LoggingLevel::Alert => "alert",
            LoggingLevel::Emergency => "emergency",
        }
    }
}

impl fmt::Display for LoggingLevel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Params of `logging/setLevel`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SetLevelRequestParams {
    /// The minimum level the server should send.
    pub level: LoggingLevel,
    /// Request metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
}

impl SetLevelRequestParams {
    /// Params setting the minimum level to `level`.
    pub fn new(level: LoggingLevel) -> Self {
        Self { level, meta: None }
    }
}

/// Params of `notifications/message`: a log message from the server.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LoggingMessageNotificationParams {
    /// Severity.
    pub level: LoggingLevel,
    /// Name of the logger.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub logger: Option<String>,
    /// The message: any JSON value.
    pub data: serde_json::Value,
    /// Notification metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
}

request!(
    /// `logging/setLevel`: sets the minimum level of log messages the server sends.
    SetLevel, "logging/setLevel", SetLevelRequestParams, EmptyResult
);

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::schema::Request;

    const ALL: [LoggingLevel; 8] = [
        LoggingLevel::Debug,
        LoggingLevel::Info,
        LoggingLevel::Notice,
        LoggingLevel::Warning,
        LoggingLevel::Error,
        LoggingLevel::Critical,
        LoggingLevel::Alert,
        LoggingLevel::Emergency,
    ];

    #[test]
    fn levels_are_lowercase_and_ordered() {
        for pair in ALL.windows(2) {
            assert!(pair[0] < pair[1], "{} < {}", pair[0], pair[1]);
        }
        for level in ALL {
            let json = serde_json::to_value(level).unwrap();
            assert_eq!(json, json!(level.as_str()));
            assert_eq!(serde_json::from_value::<LoggingLevel>(json).unwrap(), level);
        }
        assert!(serde_json::from_value::<LoggingLevel>(json!("WARN")).is_err());
    }

    #[test]
    fn set_level_params() {
        assert_eq!(SetLevel::METHOD, "logging/setLevel");
        assert_eq!(
            serde_json::to_value(SetLevelRequestParams::new(LoggingLevel::Warning)).unwrap(),
            json!({"level": "warning"})
        );
    }

    #[test]
    fn log_message_with_structured_data() {
        let raw = json!({"level": "error", "logger": "database",
            "data": {"error": "Connection failed", "details": {"host": "localhost"}}});
        let params: LoggingMessageNotificationParams = serde_json::from_value(raw.clone()).unwrap();
        assert_eq!(params.level, LoggingLevel::Error);
        assert_eq!(params.logger.as_deref(), Some("database"));
        assert_eq!(params.data["details"]["host"], "localhost");
        assert_eq!(serde_json::to_value(&params).unwrap(), raw);
        let bare: LoggingMessageNotificationParams =
            serde_json::from_value(json!({"level": "info", "data": "text"})).unwrap();
        assert_eq!(bare.data, json!("text"));
        assert!(
            serde_json::from_value::<LoggingMessageNotificationParams>(json!({"level": "info"})).is_err()
        );
    }
}
