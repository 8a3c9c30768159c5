//! MCP protocol versions.

use std::fmt;
use std::str::FromStr;

/// A protocol version this crate speaks.
///
/// Ordered by date: `a < b` means `a` is older.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum ProtocolVersion {
    /// 2024-11-05: the first public version.
    V2024_11_05,
    /// 2025-03-26: Streamable HTTP, batches, audio, tool annotations, completions capability.
    V2025_03_26,
    /// 2025-06-18: no batches, structured tool output, elicitation, `MCP-Protocol-Version` header.
    V2025_06_18,
    /// 2025-11-25: icons, URL elicitation, sampling with tools, tasks, SSE polling.
    V2025_11_25,
    /// 2026-07-28: the modern, stateless era: no `initialize`; every request carries its
    /// version, capabilities and client info in `_meta`; `server/discover`; multi round-trip
    /// requests.
    V2026_07_28,
}

impl ProtocolVersion {
    /// Every version of the `initialize` era, oldest first.
    /// [`ClientConfig::with_versions`](crate::ClientConfig::with_versions)`(ProtocolVersion::LEGACY)`
    /// pins the `initialize` era, asking for its newest version (order does not matter there).
    pub const LEGACY: &'static [ProtocolVersion] = &[
        ProtocolVersion::V2024_11_05,
        ProtocolVersion::V2025_03_26,
        ProtocolVersion::V2025_06_18,
        ProtocolVersion::V2025_11_25,
    ];

    /// The newest version of the `initialize` era.
    pub const LATEST_LEGACY: ProtocolVersion = ProtocolVersion::V2025_11_25;

    /// Every version of the modern (stateless, per-request `_meta`) era, oldest first.
    pub const MODERN: &'static [ProtocolVersion] = &[ProtocolVersion::V2026_07_28];

    /// Every version this crate speaks, oldest first.
    pub const ALL: &'static [ProtocolVersion] = &[
        ProtocolVersion::V2024_11_05,
        ProtocolVersion::V2025_03_26,
        ProtocolVersion::V2025_06_18,
        ProtocolVersion::V2025_11_25,
        ProtocolVersion::V2026_07_28,
    ];

    /// Every version, in order of preference (newest first) for a dual-era client: pass it to
    /// [`ClientConfig::with_versions`](crate::ClientConfig::with_versions) to probe for
    /// 2026-07-28 and fall back to the newest `initialize`-era version.
    pub const DUAL_ERA: &'static [ProtocolVersion] = &[
        ProtocolVersion::V2026_07_28,
        ProtocolVersion::V2025_11_25,
        ProtocolVersion::V2025_06_18,
        ProtocolVersion::V2025_03_26,
        ProtocolVersion::V2024_11_05,
    ];

    /// Whether this version belongs to the modern era (no `initialize` handshake).
    pub fn is_modern(self) -> bool {
        self >= ProtocolVersion::V2026_07_28
    }

    /// The version string on the wire, e.g. `"2025-06-18"`.
    pub const fn as_str(self) -> &'static str {
        match self {
            ProtocolVersion::V2024_11_05 => "2024-11-05",
            ProtocolVersion::V2025_03_26 => "2025-03-26",
            ProtocolVersion::V2025_06_18 => "2025-06-18",
            ProtocolVersion::V2025_11_25 => "2025-11-25",
            ProtocolVersion::V2026_07_28 => "2026-07-28",
        }
    }

    /// Whether servers of this version declare `completion/complete` with a `completions`
    /// capability (added in 2025-03-26; a 2024-11-05 server may offer it undeclared).
    pub fn has_completions_capability(self) -> bool {
        self >= ProtocolVersion::V2025_03_26
    }
}

impl fmt::Display for ProtocolVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A version string that is not one this crate speaks.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unsupported MCP protocol version {0:?}")]
pub struct UnknownVersion(pub String);

impl FromStr for ProtocolVersion {
    type Err = UnknownVersion;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        ProtocolVersion::ALL
            .iter()
            .copied()
            .find(|v| v.as_str() == s)
            .ok_or_else(|| UnknownVersion(s.to_owned()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_and_orders() {
        for v in ProtocolVersion::ALL {
            assert_eq!(v.as_str().parse::<ProtocolVersion>().unwrap(), *v);
        }
        assert!(ProtocolVersion::V2024_11_05 < ProtocolVersion::V2025_11_25);
        assert!("2026-13-01".parse::<ProtocolVersion>().is_err());
        assert!(!ProtocolVersion::V2024_11_05.has_completions_capability());
        assert!(ProtocolVersion::V2026_07_28.is_modern() && !ProtocolVersion::LATEST_LEGACY.is_modern());
        assert!(ProtocolVersion::LEGACY.iter().chain(ProtocolVersion::MODERN).eq(ProtocolVersion::ALL));
    }
}
