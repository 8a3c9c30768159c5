//! Integer fields read as JSON numbers, for `#[serde(deserialize_with = "...")]`.
//!
//! JSON has one number type, and servers write integers as they please: Python's `json` writes
//! `250.0` for a float that holds 250, JavaScript may send `2.5e2`, and a `u64` field of serde
//! refuses both, losing the whole message (a whole task, for a polling hint). These functions
//! accept an **integral number in any JSON form** (`250`, `250.0`, `2.5e2`, `-0`) and decide
//! what the rest becomes, per kind of field:
//!
//! | kind | integral, in range | fractional | negative | past the type's range | not a number |
//! |---|---|---|---|---|---|
//! | a hint ([`hint`], [`hint_opt`], [`signed_hint_opt`]): a polling interval, a time to live, a size or a total the server only informs of | the value | rounded up (`0.5` → 1) | 0 (`signed_hint_opt`: kept) | the type's maximum (minimum) | refused |
//! | an exact count ([`exact`], [`exact_opt`]): a size that is checked, a limit the client obeys | the value | refused | refused | refused | refused |
//!
//! A refusal is a serde error naming what came and what was expected (`invalid value: floating
//! point `2.5`, expected a non-negative integer`), which the message's decoder reports as it
//! reports any other. A hint is never worth refusing a message over, so none of its numbers is;
//! an exact count is what the client relies on, so no guess is made there. `null` is `None` for
//! the `_opt` forms, as an absent member is (with `#[serde(default)]`).
//!
//! ```
//! use serde::Deserialize;
//!
//! #[derive(Deserialize)]
//! struct Poll {
//!     #[serde(default, deserialize_with = "mcp_sansio::schema::json_number::hint_opt")]
//!     interval_ms: Option<u64>,
//!     #[serde(deserialize_with = "mcp_sansio::schema::json_number::exact")]
//!     size: u64,
//! }
//!
//! let poll: Poll = serde_json::from_str(r#"{"interval_ms": 2.5e2, "size": 1024.0}"#).unwrap();
//! assert_eq!((poll.interval_ms, poll.size), (Some(250), 1024));
//! let poll: Poll = serde_json::from_str(r#"{"interval_ms": -5, "size": 1}"#).unwrap();
//! assert_eq!(poll.interval_ms, Some(0));
//! assert!(serde_json::from_str::<Poll>(r#"{"size": 2.5}"#).is_err());
//! ```

use std::fmt;

use serde::de::{self, Deserializer, Unexpected, Visitor};

/// A JSON number as serde hands it over: serde_json gives integers that fit as `u64` or `i64`,
/// and everything else (a fraction, an exponent, an integer past 64 bits) as `f64`.
#[derive(Debug, Clone, Copy)]
enum Number {
    Unsigned(u64),
    Signed(i64),
    Float(f64),
}

impl<'de> de::Deserialize<'de> for Number {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct NumberVisitor;
        impl Visitor<'_> for NumberVisitor {
            type Value = Number;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a number")
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Number, E> {
                Ok(Number::Unsigned(v))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Number, E> {
                Ok(Number::Signed(v))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Number, E> {
                Ok(Number::Float(v))
            }
        }
        deserializer.deserialize_any(NumberVisitor)
    }
}

impl Number {
    /// As a hint into `[min, max]`: fractions rounded up, the rest clamped (NaN, which JSON
    /// cannot hold, becomes `min`).
    fn clamped(self, min: i128, max: i128) -> i128 {
        let value = match self {
            Number::Unsigned(v) => i128::from(v),
            Number::Signed(v) => i128::from(v),
            // `as` saturates, and both bounds are within i128.
            Number::Float(v) if v.is_nan() => min,
            Number::Float(v) => v.ceil() as i128,
        };
        value.clamp(min, max)
    }

    /// As a `u64` exactly, or the error saying why not.
    fn exact<E: de::Error>(self) -> Result<u64, E> {
        const EXPECTED: &str = "a non-negative integer";
        match self {
            Number::Unsigned(v) => Ok(v),
            Number::Signed(v) => Err(E::invalid_value(Unexpected::Signed(v), &EXPECTED)),
            // 2^64 is the first float past u64 (u64::MAX itself is no float).
            Number::Float(v) if v.fract() == 0.0 && (0.0..18_446_744_073_709_551_616.0).contains(&v) => {
                Ok(v as u64)
            }
            Number::Float(v) => Err(E::invalid_value(Unexpected::Float(v), &EXPECTED)),
        }
    }
}

/// A `u64` hint: any number; a fraction rounded up, a negative 0, past `u64` its maximum.
///
/// # Errors
///
/// When the value is not a number.
pub fn hint<'de, D: Deserializer<'de>>(deserializer: D) -> Result<u64, D::Error> {
    let number: Number = de::Deserialize::deserialize(deserializer)?;
    Ok(u64::try_from(number.clamped(0, i128::from(u64::MAX))).unwrap_or(u64::MAX))
}

/// An `Option<u64>` hint: `null` is `None`, a number is read as [`hint`] reads it.
///
/// # Errors
///
/// When the value is neither `null` nor a number.
pub fn hint_opt<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<u64>, D::Error> {
    let number: Option<Number> = de::Deserialize::deserialize(deserializer)?;
    Ok(number.map(|n| u64::try_from(n.clamped(0, i128::from(u64::MAX))).unwrap_or(u64::MAX)))
}

/// An `Option<i64>` hint whose sign the field's reader interprets itself (`server/discover`'s
/// `ttlMs`: negative means 0): `null` is `None`; a fraction rounded up, past `i64` its bound.
///
/// # Errors
///
/// When the value is neither `null` nor a number.
pub fn signed_hint_opt<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<i64>, D::Error> {
    let number: Option<Number> = de::Deserialize::deserialize(deserializer)?;
    let clamp = |n: Number| i64::try_from(n.clamped(i128::from(i64::MIN), i128::from(i64::MAX)));
    Ok(number.map(|n| clamp(n).unwrap_or_default()))
}

/// An exact `u64`: an integral number in any form (`1024`, `1024.0`, `1.024e3`); a fraction, a
/// negative number or one past `u64` is refused.
///
/// # Errors
///
/// When the value is not a non-negative integer within `u64`.
pub fn exact<'de, D: Deserializer<'de>>(deserializer: D) -> Result<u64, D::Error> {
    let number: Number = de::Deserialize::deserialize(deserializer)?;
    number.exact()
}

/// An exact `Option<u64>`: `null` is `None`, a number is read as [`exact`] reads it.
///
/// # Errors
///
/// When the value is neither `null` nor a non-negative integer within `u64`.
pub fn exact_opt<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<u64>, D::Error> {
    let number: Option<Number> = de::Deserialize::deserialize(deserializer)?;
    number.map(Number::exact).transpose()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use serde::Deserialize;
    use serde_json::json;

    #[derive(Debug, Deserialize)]
    struct Fields {
        #[serde(default, deserialize_with = "super::hint_opt")]
        hint: Option<u64>,
        #[serde(default, deserialize_with = "super::signed_hint_opt")]
        signed: Option<i64>,
        #[serde(default, deserialize_with = "super::exact_opt")]
        exact: Option<u64>,
    }

    fn hint(text: &str) -> Option<u64> {
        serde_json::from_str::<Fields>(&format!(r#"{{"hint": {text}}}"#)).unwrap().hint
    }

    fn signed(text: &str) -> Option<i64> {
        serde_json::from_str::<Fields>(&format!(r#"{{"signed": {text}}}"#)).unwrap().signed
    }

    fn exact(text: &str) -> Result<Option<u64>, serde_json::Error> {
        serde_json::from_str::<Fields>(&format!(r#"{{"exact": {text}}}"#)).map(|f| f.exact)
    }

    #[test]
    fn an_integral_number_is_read_in_any_form() {
        for text in ["250", "250.0", "2.5e2", "2.50E+2", "25000e-2", "250.000000000"] {
            assert_eq!(hint(text), Some(250), "{text}");
            assert_eq!(signed(text), Some(250), "{text}");
            assert_eq!(exact(text).unwrap(), Some(250), "{text}");
        }
        for text in ["0", "-0", "0.0", "-0.0", "0e10"] {
            assert_eq!(hint(text), Some(0), "{text}");
            assert_eq!(exact(text).unwrap(), Some(0), "{text}");
        }
        assert_eq!(hint("18446744073709551615"), Some(u64::MAX));
        assert_eq!(exact("18446744073709551615").unwrap(), Some(u64::MAX));
        assert_eq!(exact("9007199254740992.0").unwrap(), Some(1 << 53));
        assert_eq!(signed("-9223372036854775808"), Some(i64::MIN));
    }

    #[test]
    fn null_and_absent_are_none() {
        let fields: Fields =
            serde_json::from_value(json!({"hint": null, "signed": null, "exact": null})).unwrap();
        assert_eq!((fields.hint, fields.signed, fields.exact), (None, None, None));
        let fields: Fields = serde_json::from_value(json!({})).unwrap();
        assert_eq!((fields.hint, fields.signed, fields.exact), (None, None, None));
    }

    #[test]
    fn a_hint_clamps_what_is_not_an_integer_in_range() {
        // Fractions rounded up: an interval never shorter than asked for.
        assert_eq!(hint("0.5"), Some(1));
        assert_eq!(hint("249.001"), Some(250));
        assert_eq!(hint("1e-300"), Some(1));
        // Negatives: 0.
        assert_eq!(hint("-1"), Some(0));
        assert_eq!(hint("-2.5e2"), Some(0));
        assert_eq!(hint("-9223372036854775808"), Some(0));
        // Past u64: its maximum.
        assert_eq!(hint("18446744073709551616"), Some(u64::MAX));
        assert_eq!(hint("1e300"), Some(u64::MAX));
        // The signed hint keeps its sign and clamps to i64.
        assert_eq!(signed("-1.5"), Some(-1));
        assert_eq!(signed("-1e300"), Some(i64::MIN));
        assert_eq!(signed("1e300"), Some(i64::MAX));
        assert_eq!(signed("3600000.0"), Some(3_600_000));
    }

    #[test]
    fn an_exact_count_refuses_what_is_not_an_integer_in_range() {
        for text in ["2.5", "-1", "-1.0", "18446744073709551616", "1e300", "0.1"] {
            let error = exact(text).unwrap_err().to_string();
            assert!(error.contains("expected a non-negative integer"), "{text}: {error}");
        }
    }

    #[test]
    fn what_is_not_a_number_is_refused_by_every_kind() {
        for field in ["hint", "signed", "exact"] {
            for value in [json!("250"), json!(true), json!([250]), json!({"ms": 250})] {
                let error = serde_json::from_value::<Fields>(json!({ field: value })).unwrap_err();
                assert!(error.to_string().contains("expected a number"), "{field} {value}: {error}");
            }
        }
    }

    /// The fields this module serves, read from what Python (`250.0`) and JavaScript (`2.5e2`)
    /// servers write. Each of these messages was refused before, losing a whole task or listing
    /// over a hint.
    #[test]
    fn the_models_fields_read_numbers_in_any_form() {
        use crate::schema::{
            CreateMessageRequestParams, DiscoverResult, ListSkillsResult, ListToolsResult, SkillFile, Task,
            TaskMetadata, TaskSnapshot,
        };

        let task: Task = serde_json::from_value(json!({
            "taskId": "t", "status": "working", "createdAt": "2026-01-01T00:00:00Z",
            "ttl": 6e4, "pollInterval": 250.0,
        }))
        .unwrap();
        assert_eq!((task.ttl, task.poll_interval), (Some(60_000), Some(250)));
        let meta: TaskMetadata = serde_json::from_value(json!({"ttl": 1000.0})).unwrap();
        assert_eq!(meta.ttl, Some(1000));
        // 2026-07-28, and its 2025-11-25 aliases.
        for (ttl, poll) in [("ttlMs", "pollIntervalMs"), ("ttl", "pollInterval")] {
            let snapshot: TaskSnapshot = serde_json::from_value(json!({
                "taskId": "t", "status": "working", ttl: 2.5e2, poll: 250.0,
            }))
            .unwrap();
            assert_eq!((snapshot.ttl_ms, snapshot.poll_interval_ms), (Some(250), Some(250)), "{ttl}");
        }
        let snapshot: TaskSnapshot = serde_json::from_value(
            json!({"taskId": "t", "status": "working", "ttlMs": null, "pollIntervalMs": -3}),
        )
        .unwrap();
        assert_eq!((snapshot.ttl_ms, snapshot.poll_interval_ms), (None, Some(0)));
        let discover: DiscoverResult = serde_json::from_value(json!({"ttlMs": 3600000.0})).unwrap();
        assert_eq!(discover.ttl_ms, Some(3_600_000));
        let tools: ListToolsResult = serde_json::from_value(json!({"tools": [], "ttlMs": 1e3})).unwrap();
        assert_eq!(tools.ttl_ms, Some(1000));
        let skills: ListSkillsResult = serde_json::from_value(json!({"skills": [], "ttlMs": 0.5})).unwrap();
        assert_eq!(skills.ttl_ms, Some(1));
        let digest = format!("sha256:{}", "0".repeat(64));
        let file: SkillFile =
            serde_json::from_value(json!({"uri": "skill://a/SKILL.md", "digest": digest, "size": 1024.0}))
                .unwrap();
        assert_eq!(file.size, 1024);
        assert!(
            serde_json::from_value::<SkillFile>(json!({"uri": "u", "digest": digest, "size": 10.5})).is_err()
        );
        let sampling: CreateMessageRequestParams =
            serde_json::from_value(json!({"messages": [], "maxTokens": 1000.0})).unwrap();
        assert_eq!(sampling.max_tokens, 1000);
    }
}
