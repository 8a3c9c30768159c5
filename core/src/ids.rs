//! Identifiers that travel on the wire: JSON-RPC request ids and progress tokens.

use std::fmt;

use serde::{Deserialize, Serialize};

/// Declares an "integer or string" wire identifier with its conversions and display.
macro_rules! integer_or_string {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
        #[serde(untagged)]
        pub enum $name {
            /// An integer.
            Number(i64),
            /// A string.
            String(String),
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                match self {
                    $name::Number(n) => write!(f, "{n}"),
                    $name::String(s) => write!(f, "{s:?}"),
                }
            }
        }

        impl From<i64> for $name {
            fn from(n: i64) -> Self {
                $name::Number(n)
            }
        }

        impl From<String> for $name {
            fn from(s: String) -> Self {
                $name::String(s)
            }
        }

        impl From<&str> for $name {
            fn from(s: &str) -> Self {
                $name::String(s.to_owned())
            }
        }
    };
}

integer_or_string!(
    /// A JSON-RPC request id: an integer or a string (the spec forbids `null` for MCP).
    ///
    /// Ids the engine allocates are always integers, counting up from 0; ids chosen by the server
    /// (for server→client requests) may be either and are echoed back exactly.
    RequestId
);

integer_or_string!(
    /// A progress token (`_meta.progressToken`): an integer or a string chosen by the requester.
    ProgressToken
);

/// A hasher for maps keyed by ids the engine issues (request ids, its own call ids): they come
/// in sequence and are never chosen by a peer, so a multiplication by an odd constant spreads
/// them over the buckets at a fraction of SipHash's cost. Not for keys a peer chooses.
#[derive(Debug, Default, Clone, Copy)]
pub struct IdHasher(u64);

impl std::hash::Hasher for IdHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &byte in bytes {
            self.0 = (self.0.rotate_left(8) ^ u64::from(byte)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        }
    }

    fn write_i64(&mut self, n: i64) {
        self.0 =
            (self.0.rotate_left(8) ^ u64::from_ne_bytes(n.to_ne_bytes())).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }

    fn write_isize(&mut self, n: isize) {
        self.write_i64(n as i64);
    }
}
