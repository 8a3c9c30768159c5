//! `completion/complete`: argument completion for the `code_review` prompt and item template.

use serde_json::{Map, Value, json};

use super::jsonrpc::RpcError;
use super::resources::ITEM_TEMPLATE;

/// Completion candidates for `code_review`'s `language` argument.
const LANGUAGES: [&str; 6] = ["rust", "ruby", "python", "go", "javascript", "typescript"];

/// Completion candidates for the `id` of `demo://items/{id}`.
const ITEM_IDS: [&str; 4] = ["1", "2", "3", "42"];

/// `completion/complete {ref, argument: {name, value}}` → `{completion: {values, total, hasMore}}`.
///
/// Unknown references or arguments complete to nothing.
pub(crate) fn complete(params: &Map<String, Value>) -> Result<Value, RpcError> {
    let reference = params
        .get("ref")
        .and_then(Value::as_object)
        .ok_or_else(|| RpcError::invalid_params("completion/complete needs an object `ref`"))?;
    let argument = params
        .get("argument")
        .and_then(Value::as_object)
        .ok_or_else(|| RpcError::invalid_params("completion/complete needs an object `argument`"))?;
    let (Some(name), Some(prefix)) =
        (argument.get("name").and_then(Value::as_str), argument.get("value").and_then(Value::as_str))
    else {
        return Err(RpcError::invalid_params("argument needs string `name` and `value`"));
    };
    let field = |key: &str| reference.get(key).and_then(Value::as_str);
    let candidates: &[&str] = match (field("type"), name) {
        (Some("ref/prompt"), "language") if field("name") == Some("code_review") => &LANGUAGES,
        (Some("ref/resource"), "id") if field("uri") == Some(ITEM_TEMPLATE) => &ITEM_IDS,
        _ => &[],
    };
    let values: Vec<&str> =
        candidates.iter().copied().filter(|candidate| candidate.starts_with(prefix)).collect();
    Ok(json!({
        "completion": { "values": values, "total": values.len(), "hasMore": false },
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn complete_json(value: Value) -> Value {
        complete(value.as_object().expect("object")).expect("complete")
    }

    #[test]
    fn completes_languages_and_item_ids() {
        let languages = complete_json(json!({
            "ref": {"type": "ref/prompt", "name": "code_review"},
            "argument": {"name": "language", "value": "r"}
        }));
        assert_eq!(
            languages,
            json!({"completion": {"values": ["rust", "ruby"], "total": 2, "hasMore": false}})
        );
        let ids = complete_json(json!({
            "ref": {"type": "ref/resource", "uri": "demo://items/{id}"},
            "argument": {"name": "id", "value": "4"}
        }));
        assert_eq!(ids["completion"]["values"], json!(["42"]));
        let other = complete_json(json!({
            "ref": {"type": "ref/prompt", "name": "greeting"},
            "argument": {"name": "name", "value": ""}
        }));
        assert_eq!(other["completion"]["values"], json!([]));
    }

    #[test]
    fn rejects_malformed_params() {
        assert!(complete(&Map::new()).is_err());
    }
}
