//! Pagination: the cursor params of the `*/list` requests and the traits that let a driver walk
//! every page of any list.

use serde::{Deserialize, Serialize};

use super::{JsonObject, Request};

/// Params of the paginated `*/list` requests.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PaginatedRequestParams {
    /// Opaque cursor from a previous page's `nextCursor`; absent for the first page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cursor: Option<String>,
    /// Request metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
}

impl PaginatedRequestParams {
    /// Params asking for the page at `cursor` (`None` for the first page).
    pub fn with_cursor(cursor: Option<String>) -> Self {
        Self { cursor, meta: None }
    }
}

/// A page of a paginated list result.
pub trait Paginated {
    /// The listed item type.
    type Item;
    /// The cursor for the next page; `None` on the last page.
    fn next_cursor(&self) -> Option<&str>;
    /// The items on this page.
    fn into_items(self) -> Vec<Self::Item>;
}

/// A `*/list` request whose result is paginated; a driver can fetch all pages of it.
pub trait PaginatedRequest: Request<Params = PaginatedRequestParams, Result: Paginated> {}

/// Implements [`Paginated`] for a list result with an items field and `next_cursor`.
macro_rules! paginated {
    ($result:ty, $field:ident, $item:ty) => {
        impl $crate::schema::Paginated for $result {
            type Item = $item;
            fn next_cursor(&self) -> Option<&str> {
                self.next_cursor.as_deref()
            }
            fn into_items(self) -> Vec<$item> {
                self.$field
            }
        }
    };
}
pub(super) use paginated;

/// Defines a `*/list` result of 2026-07-28's shape: the page's items in `$field`, then
/// `nextCursor`, the caching hints `ttlMs` and `cacheScope`, and `_meta`; and its
/// [`Paginated`] impl. One definition, so that a field every listing gains is added once.
macro_rules! list_result {
    ($(#[$doc:meta])* $name:ident { $(#[$field_doc:meta])* $field:ident: Vec<$item:ty> }) => {
        $(#[$doc])*
        #[derive(Debug, Clone, PartialEq, Default, ::serde::Serialize, ::serde::Deserialize)]
        #[serde(rename_all = "camelCase")]
        pub struct $name {
            $(#[$field_doc])*
            pub $field: Vec<$item>,
            /// Cursor for the next page; absent on the last.
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub next_cursor: Option<String>,
            /// Caching hint in milliseconds (2026-07-28).
            #[serde(
                default,
                skip_serializing_if = "Option::is_none",
                deserialize_with = "super::json_number::hint_opt"
            )]
            pub ttl_ms: Option<u64>,
            /// Caching scope, `"public"` or `"private"` (2026-07-28).
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub cache_scope: Option<String>,
            /// Result metadata.
            #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
            pub meta: Option<$crate::schema::JsonObject>,
        }

        $crate::schema::pagination::paginated!($name, $field, $item);
    };
}
pub(super) use list_result;

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn params_serialize_cursor_only_when_present() {
        let first = PaginatedRequestParams::default();
        assert_eq!(serde_json::to_string(&first).unwrap(), "{}");
        let next = PaginatedRequestParams::with_cursor(Some("abc".into()));
        assert_eq!(serde_json::to_string(&next).unwrap(), r#"{"cursor":"abc"}"#);
        let back: PaginatedRequestParams =
            serde_json::from_str(r#"{"cursor":"abc","_meta":{"progressToken":1},"x":true}"#).unwrap();
        assert_eq!(back.cursor.as_deref(), Some("abc"));
        assert!(back.meta.unwrap().contains_key("progressToken"));
    }

    /// Decodes one page of any paginated request's result, as a driver would.
    fn page_of<R: PaginatedRequest>(json: &str) -> (Option<String>, usize) {
        let page: R::Result = serde_json::from_str(json).unwrap();
        (page.next_cursor().map(str::to_owned), page.into_items().len())
    }

    #[test]
    fn every_list_request_is_paginated() {
        use crate::schema::{ListPrompts, ListResourceTemplates, ListResources, ListTasks, ListTools};
        assert_eq!(
            page_of::<ListTools>(
                r#"{"tools":[{"name":"a","inputSchema":{"type":"object"}}],"nextCursor":"2"}"#
            ),
            (Some("2".to_owned()), 1)
        );
        assert_eq!(page_of::<ListResources>(r#"{"resources":[]}"#), (None, 0));
        assert_eq!(
            page_of::<ListResourceTemplates>(
                r#"{"resourceTemplates":[{"uriTemplate":"a://{x}","name":"x"}],"nextCursor":"n"}"#
            ),
            (Some("n".to_owned()), 1)
        );
        assert_eq!(page_of::<ListPrompts>(r#"{"prompts":[{"name":"p"},{"name":"q"}]}"#), (None, 2));
        assert_eq!(
            page_of::<ListTasks>(
                r#"{"tasks":[{"taskId":"t","status":"working","createdAt":"c","ttl":null}],"nextCursor":"x"}"#
            ),
            (Some("x".to_owned()), 1)
        );
    }
}
