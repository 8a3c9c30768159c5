//! Cursor-based pagination of list results (`--page-size`).
//!
//! A cursor is the decimal offset of the first item of the next page. It is opaque to clients;
//! anything that is not an offset produced by this server is rejected with `-32602`.

use serde_json::{Map, Value};

use super::jsonrpc::RpcError;

/// Builds a list result `{<key>: [...], nextCursor?}` from `items` for the request `params`.
///
/// `page_size == 0` returns everything in one page. The cursor is read from `params.cursor`.
pub(crate) fn paginate(
    key: &str,
    items: Vec<Value>,
    page_size: usize,
    params: &Map<String, Value>,
) -> Result<Value, RpcError> {
    let offset = match params.get("cursor") {
        None | Some(Value::Null) => 0,
        Some(Value::String(cursor)) => parse_cursor(cursor, items.len())?,
        Some(other) => return Err(RpcError::invalid_params(format!("invalid cursor {other}"))),
    };
    let total = items.len();
    let end = if page_size == 0 { total } else { total.min(offset.saturating_add(page_size)) };
    let page: Vec<Value> = items.into_iter().skip(offset).take(end - offset).collect();
    let mut result = Map::new();
    result.insert(key.to_owned(), Value::Array(page));
    if end < total {
        result.insert("nextCursor".to_owned(), Value::String(end.to_string()));
    }
    Ok(Value::Object(result))
}

/// Parses a cursor: a decimal offset strictly inside the list.
fn parse_cursor(cursor: &str, len: usize) -> Result<usize, RpcError> {
    match cursor.parse::<usize>() {
        Ok(offset) if offset < len && cursor == offset.to_string() => Ok(offset),
        _ => Err(RpcError::invalid_params(format!("invalid cursor {cursor:?}"))),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn items(n: usize) -> Vec<Value> {
        (0..n).map(|i| json!(i)).collect()
    }

    fn params(cursor: Value) -> Map<String, Value> {
        json!({ "cursor": cursor }).as_object().cloned().expect("object")
    }

    #[test]
    fn walks_all_pages() {
        let first = paginate("tools", items(5), 2, &Map::new()).expect("first page");
        assert_eq!(first, json!({"tools": [0, 1], "nextCursor": "2"}));
        let second = paginate("tools", items(5), 2, &params(json!("2"))).expect("second page");
        assert_eq!(second, json!({"tools": [2, 3], "nextCursor": "4"}));
        let last = paginate("tools", items(5), 2, &params(json!("4"))).expect("last page");
        assert_eq!(last, json!({"tools": [4]}));
    }

    #[test]
    fn zero_page_size_returns_everything() {
        let all = paginate("prompts", items(3), 0, &params(Value::Null)).expect("one page");
        assert_eq!(all, json!({"prompts": [0, 1, 2]}));
        let empty = paginate("prompts", Vec::new(), 4, &Map::new()).expect("empty list");
        assert_eq!(empty, json!({"prompts": []}));
    }

    #[test]
    fn rejects_foreign_cursors() {
        for cursor in [json!("5"), json!("x"), json!("-1"), json!("01"), json!(2), json!("")] {
            assert!(paginate("tools", items(5), 2, &params(cursor)).is_err());
        }
    }
}
