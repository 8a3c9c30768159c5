//! Decodes arbitrary bytes with serde_json into the typed MCP model: the results a client
//! receives (`InitializeResult`, `CallToolResult`, `ListToolsResult`, `ReadResourceResult`,
//! `GetPromptResult`, `DiscoverResult`, …), the params of server requests and notifications, the
//! building blocks with hand-written serde (`ContentBlock`, `ResourceContents`,
//! `SamplingContent`), and the JSON-RPC types that are public (`ErrorObject`, `RequestId`,
//! `ProgressToken`). The JSON-RPC envelope decoder itself is crate-private: the `feed` target
//! covers it through `ClientConnection::feed` and `feed_message`.
//!
//! Input: the first byte picks the type, the rest is the JSON text.
//!
//! Asserted, whenever the bytes decode:
//! - no panic (in decoding, encoding, or the typed helpers such as `ErrorObject::mcp_error`);
//! - encoding succeeds, and decoding the encoding again succeeds and gives an equal value
//!   (`PartialEq`), whose encoding is the same JSON again (a fixed point after one round);
//! - decoding from the encoded `serde_json::Value` (not text) gives the same value too.
#![no_main]

use std::fmt::Debug;

use libfuzzer_sys::fuzz_target;
use mcp_sansio::jsonrpc::ErrorObject;
use mcp_sansio::schema::*;
use mcp_sansio::{ProgressToken, RequestId};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

fn round_trip<T: Serialize + DeserializeOwned + PartialEq + Debug>(json: &[u8]) -> Option<T> {
    let first: T = serde_json::from_slice(json).ok()?;
    let text = serde_json::to_string(&first).expect("a decoded value encodes");
    let second: T = serde_json::from_str(&text)
        .unwrap_or_else(|e| panic!("the encoding of {first:?} does not decode: {e}\nencoding: {text}"));
    assert_eq!(first, second, "decode(encode(x)) != x\nencoding: {text}");
    let again = serde_json::to_string(&second).expect("encodes");
    assert_eq!(text, again, "the encoding is not a fixed point");
    let value: Value = serde_json::from_str(&text).expect("JSON");
    let third: T = serde_json::from_value(value)
        .unwrap_or_else(|e| panic!("the encoded Value of {first:?} does not decode: {e}\nencoding: {text}"));
    assert_eq!(first, third, "decoding from a Value differs\nencoding: {text}");
    Some(first)
}

macro_rules! types {
    ($selector:expr, $json:expr; $($ty:ty),+ $(,)?) => {{
        const NAMES: &[&str] = &[$(stringify!($ty)),+];
        let mut i = 0usize;
        let pick = usize::from($selector) % NAMES.len();
        $(
            if pick == i {
                round_trip::<$ty>($json);
            }
            i += 1;
        )+
        let _ = i;
    }};
}

fuzz_target!(|data: &[u8]| {
    let Some((&selector, json)) = data.split_first() else { return };
    // Types with helpers worth running on decoded values get their own arms first.
    match selector {
        b'E' => {
            if let Some(error) = round_trip::<ErrorObject>(json) {
                let _ = error.mcp_error();
                let _ = error.to_string();
            }
            return;
        }
        b'D' => {
            if let Some(discover) = round_trip::<DiscoverResult>(json) {
                let _ = discover.server_info();
            }
            return;
        }
        b'B' => {
            if let Some(block) = round_trip::<ContentBlock>(json) {
                let _ = (block.as_text(), block.type_name());
            }
            return;
        }
        _ => {}
    }
    types!(selector, json;
        InitializeResult,
        CallToolResult,
        ListToolsResult,
        ReadResourceResult,
        GetPromptResult,
        DiscoverResult,
        ListResourcesResult,
        ListResourceTemplatesResult,
        ListPromptsResult,
        CompleteResult,
        ServerCapabilities,
        ClientCapabilities,
        InitializeRequestParams,
        CreateMessageRequestParams,
        CreateMessageResult,
        ElicitRequestParams,
        ElicitResult,
        ListRootsResult,
        ProgressNotificationParams,
        CancelledNotificationParams,
        LoggingMessageNotificationParams,
        ResourceUpdatedNotificationParams,
        SubscriptionsAcknowledgedParams,
        ContentBlock,
        ResourceContents,
        SamplingContent,
        ErrorObject,
        RequestId,
        ProgressToken,
        Tool,
        CallToolRequestParams,
    );
});
