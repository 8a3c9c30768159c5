//! Typed access to tool arguments; every mismatch is a `-32602` error naming the argument.

use serde_json::{Map, Value};

use super::jsonrpc::RpcError;

/// A required string argument.
pub(crate) fn required_str<'a>(args: &'a Map<String, Value>, name: &str) -> Result<&'a str, RpcError> {
    args.get(name)
        .and_then(Value::as_str)
        .ok_or_else(|| RpcError::invalid_params(format!("argument `{name}` must be a string")))
}

/// A required number argument (the JSON value itself, to keep integers exact).
pub(crate) fn required_number<'a>(args: &'a Map<String, Value>, name: &str) -> Result<&'a Value, RpcError> {
    args.get(name)
        .filter(|value| value.is_number())
        .ok_or_else(|| RpcError::invalid_params(format!("argument `{name}` must be a number")))
}

/// A required array argument.
pub(crate) fn required_array<'a>(args: &'a Map<String, Value>, name: &str) -> Result<&'a [Value], RpcError> {
    args.get(name)
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .ok_or_else(|| RpcError::invalid_params(format!("argument `{name}` must be an array")))
}

/// A non-negative integer no greater than `max` (integral floats such as `5.0` are accepted).
fn as_bounded_u64(value: &Value, name: &str, max: u64) -> Result<u64, RpcError> {
    let integer = value.as_u64().or_else(|| {
        let float = value.as_f64()?;
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss, reason = "range checked")]
        (float.fract() == 0.0 && (0.0..=9.0e15).contains(&float)).then_some(float as u64)
    });
    match integer {
        Some(integer) if integer <= max => Ok(integer),
        _ => {
            Err(RpcError::invalid_params(format!("argument `{name}` must be an integer between 0 and {max}")))
        }
    }
}

/// A required non-negative integer argument no greater than `max`.
pub(crate) fn required_u64(args: &Map<String, Value>, name: &str, max: u64) -> Result<u64, RpcError> {
    let value =
        args.get(name).ok_or_else(|| RpcError::invalid_params(format!("missing argument `{name}`")))?;
    as_bounded_u64(value, name, max)
}

/// An optional non-negative integer argument no greater than `max`, `default` when absent.
pub(crate) fn optional_u64(
    args: &Map<String, Value>,
    name: &str,
    default: u64,
    max: u64,
) -> Result<u64, RpcError> {
    match args.get(name) {
        None | Some(Value::Null) => Ok(default),
        Some(value) => as_bounded_u64(value, name, max),
    }
}

/// An optional boolean argument, `default` when absent or `null`.
pub(crate) fn optional_bool(args: &Map<String, Value>, name: &str, default: bool) -> Result<bool, RpcError> {
    match args.get(name) {
        None | Some(Value::Null) => Ok(default),
        Some(Value::Bool(flag)) => Ok(*flag),
        Some(_) => Err(RpcError::invalid_params(format!("argument `{name}` must be a boolean"))),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn args(value: Value) -> Map<String, Value> {
        value.as_object().cloned().expect("object")
    }

    #[test]
    fn reads_integers() {
        let args = args(json!({"a": 5, "b": 5.0, "c": -1, "d": 2.5, "e": "5", "f": 11}));
        assert_eq!(required_u64(&args, "a", 10).ok(), Some(5));
        assert_eq!(required_u64(&args, "b", 10).ok(), Some(5));
        for bad in ["c", "d", "e", "f", "missing"] {
            assert!(required_u64(&args, bad, 10).is_err(), "{bad}");
        }
        assert_eq!(optional_u64(&args, "missing", 7, 10).ok(), Some(7));
        assert!(optional_u64(&args, "e", 7, 10).is_err());
    }

    #[test]
    fn reads_booleans() {
        let args = args(json!({"t": true, "f": false, "n": null, "s": "true"}));
        assert_eq!(optional_bool(&args, "t", false).ok(), Some(true));
        assert_eq!(optional_bool(&args, "f", true).ok(), Some(false));
        assert_eq!(optional_bool(&args, "n", true).ok(), Some(true));
        assert_eq!(optional_bool(&args, "missing", false).ok(), Some(false));
        assert!(optional_bool(&args, "s", true).is_err());
    }

    #[test]
    fn reads_strings_numbers_and_arrays() {
        let args = args(json!({"s": "x", "n": 1.5, "v": [1]}));
        assert_eq!(required_str(&args, "s").ok(), Some("x"));
        assert!(required_str(&args, "n").is_err());
        assert!(required_number(&args, "n").is_ok());
        assert!(required_number(&args, "s").is_err());
        assert_eq!(required_array(&args, "v").map(<[Value]>::len).ok(), Some(1));
        assert!(required_array(&args, "s").is_err());
    }
}
