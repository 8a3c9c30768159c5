//! Content: the blocks tools and prompts return (text, image, audio, resource links, embedded
//! resources), resource contents, roles and annotations.
//!
//! [`ContentBlock`] and [`ResourceContents`] decode variants this model does not know into a
//! catch-all `Unknown(serde_json::Value)` that re-serializes unchanged. Known variants are read
//! in one pass, straight into their structs (see `tagged.rs`).

use serde::de::{self, DeserializeOwned};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

use super::{Icon, JsonObject, tagged};

/// Decodes `T` from an owned JSON value (moving its strings), mapping the error into `E`.
pub(super) fn from_value<T: DeserializeOwned, E: de::Error>(value: Value) -> Result<T, E> {
    serde_json::from_value(value).map_err(E::custom)
}

/// The `type` member of a JSON object, if present and a string.
pub(super) fn type_tag(value: &Value) -> Option<&str> {
    value.get("type").and_then(Value::as_str)
}

/// The sender or recipient of a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// The user.
    User,
    /// The assistant (the model).
    Assistant,
}

/// Hints for the client on how to use or display an object.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Annotations {
    /// Who the object is intended for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub audience: Option<Vec<Role>>,
    /// Importance from 0 (least) to 1 (most).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub priority: Option<f64>,
    /// ISO 8601 timestamp of the last modification (2025-06-18 and later).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_modified: Option<String>,
}

/// Text given to or produced by a model.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TextContent {
    /// The text.
    pub text: String,
    /// Display hints.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Annotations>,
    /// Content metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
}

impl TextContent {
    /// Text content without annotations.
    pub fn new(text: impl Into<String>) -> Self {
        Self { text: text.into(), ..Self::default() }
    }
}

/// An image given to or produced by a model.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ImageContent {
    /// Base64-encoded image data.
    pub data: String,
    /// MIME type of the image.
    pub mime_type: String,
    /// Display hints.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Annotations>,
    /// Content metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
}

/// Audio given to or produced by a model (2025-03-26 and later).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AudioContent {
    /// Base64-encoded audio data.
    pub data: String,
    /// MIME type of the audio.
    pub mime_type: String,
    /// Display hints.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Annotations>,
    /// Content metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
}

/// A link to a resource the server can read (2025-06-18 and later); not necessarily listed.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourceLink {
    /// URI of the resource.
    pub uri: String,
    /// Programmatic name.
    pub name: String,
    /// Human-readable display name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What the resource is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// MIME type, if known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// Size in bytes of the raw content, if known.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "super::json_number::hint_opt"
    )]
    pub size: Option<u64>,
    /// Display hints.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Annotations>,
    /// Icons for user interfaces (2025-11-25 and later).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub icons: Option<Vec<Icon>>,
    /// Content metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
}

/// The contents of a resource, embedded in a prompt or tool result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EmbeddedResource {
    /// The resource's contents.
    pub resource: ResourceContents,
    /// Display hints.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Annotations>,
    /// Content metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
}

/// Text contents of a resource.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TextResourceContents {
    /// URI of the resource.
    pub uri: String,
    /// MIME type, if known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// The text.
    pub text: String,
    /// Contents metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
}

/// Binary contents of a resource.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BlobResourceContents {
    /// URI of the resource.
    pub uri: String,
    /// MIME type, if known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// Base64-encoded data.
    pub blob: String,
    /// Contents metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
}

/// The contents of a resource: text or binary, told apart by a `text` or `blob` member.
#[derive(Debug, Clone, PartialEq)]
pub enum ResourceContents {
    /// Text contents (a `text` member).
    Text(TextResourceContents),
    /// Binary contents (a `blob` member).
    Blob(BlobResourceContents),
    /// Contents with neither member, kept as they came.
    Unknown(Value),
}

impl ResourceContents {
    /// The URI of the resource, if known.
    pub fn uri(&self) -> Option<&str> {
        match self {
            ResourceContents::Text(t) => Some(&t.uri),
            ResourceContents::Blob(b) => Some(&b.uri),
            ResourceContents::Unknown(v) => v.get("uri").and_then(Value::as_str),
        }
    }

    /// The text, for text contents.
    pub fn as_text(&self) -> Option<&str> {
        match self {
            ResourceContents::Text(t) => Some(&t.text),
            _ => None,
        }
    }
}

impl Serialize for ResourceContents {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            ResourceContents::Text(t) => t.serialize(serializer),
            ResourceContents::Blob(b) => b.serialize(serializer),
            ResourceContents::Unknown(v) => v.serialize(serializer),
        }
    }
}

impl<'de> Deserialize<'de> for ResourceContents {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        tagged::deserialize(deserializer)
    }
}

impl tagged::Object for ResourceContents {
    const EXPECTING: &'static str = "resource contents";

    /// A `text` member makes text contents, whatever else is there: from there on the members
    /// go straight into [`TextResourceContents`]. Without one, a `blob` member (which may come
    /// before a `text`) is only known at the end, so the members are kept as values till then.
    fn from_map<'de, A: de::MapAccess<'de>>(mut map: A) -> Result<Self, A::Error> {
        let mut before = Vec::new();
        while let Some(key) = map.next_key_seed(tagged::KeySeed)? {
            if key.as_str() == "text" {
                return tagged::from_members(before, Some("text"), map).map(ResourceContents::Text);
            }
            before.push((key.into_string(), map.next_value::<Value>()?));
        }
        if before.iter().any(|(key, _)| key == "blob") {
            tagged::from_values(before).map(ResourceContents::Blob)
        } else {
            Ok(ResourceContents::Unknown(Value::Object(before.into_iter().collect())))
        }
    }

    fn unknown(value: Value) -> Self {
        ResourceContents::Unknown(value)
    }
}

/// A block of content in a tool result or prompt message, tagged on the wire by `type`.
///
/// A block whose `type` this model does not know (a newer protocol's, or a vendor's) decodes
/// into [`ContentBlock::Unknown`] and serializes back unchanged.
#[derive(Debug, Clone, PartialEq)]
pub enum ContentBlock {
    /// `"type": "text"`.
    Text(TextContent),
    /// `"type": "image"`.
    Image(ImageContent),
    /// `"type": "audio"` (2025-03-26 and later).
    Audio(AudioContent),
    /// `"type": "resource_link"` (2025-06-18 and later).
    ResourceLink(ResourceLink),
    /// `"type": "resource"`.
    Resource(EmbeddedResource),
    /// Any other block, kept as it came.
    Unknown(Value),
}

impl ContentBlock {
    /// A text block.
    ///
    /// ```
    /// use mcp_sansio::schema::ContentBlock;
    /// assert_eq!(ContentBlock::text("hi").as_text(), Some("hi"));
    /// ```
    pub fn text(text: impl Into<String>) -> Self {
        ContentBlock::Text(TextContent::new(text))
    }

    /// The text of a text block.
    pub fn as_text(&self) -> Option<&str> {
        match self {
            ContentBlock::Text(t) => Some(&t.text),
            _ => None,
        }
    }

    /// The wire `type` of the block (for an unknown block, its `type` member if a string).
    pub fn type_name(&self) -> Option<&str> {
        match self {
            ContentBlock::Text(_) => Some("text"),
            ContentBlock::Image(_) => Some("image"),
            ContentBlock::Audio(_) => Some("audio"),
            ContentBlock::ResourceLink(_) => Some("resource_link"),
            ContentBlock::Resource(_) => Some("resource"),
            ContentBlock::Unknown(v) => type_tag(v),
        }
    }
}

impl From<TextContent> for ContentBlock {
    fn from(c: TextContent) -> Self {
        ContentBlock::Text(c)
    }
}

impl From<ImageContent> for ContentBlock {
    fn from(c: ImageContent) -> Self {
        ContentBlock::Image(c)
    }
}

impl From<AudioContent> for ContentBlock {
    fn from(c: AudioContent) -> Self {
        ContentBlock::Audio(c)
    }
}

impl From<ResourceLink> for ContentBlock {
    fn from(c: ResourceLink) -> Self {
        ContentBlock::ResourceLink(c)
    }
}

impl From<EmbeddedResource> for ContentBlock {
    fn from(c: EmbeddedResource) -> Self {
        ContentBlock::Resource(c)
    }
}

/// Serialization view of the known [`ContentBlock`] variants: writes the `type` tag first,
/// then the struct's members, without buffering.
#[derive(Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum TaggedContentBlock<'a> {
    Text(&'a TextContent),
    Image(&'a ImageContent),
    Audio(&'a AudioContent),
    ResourceLink(&'a ResourceLink),
    Resource(&'a EmbeddedResource),
}

impl Serialize for ContentBlock {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            ContentBlock::Text(c) => TaggedContentBlock::Text(c).serialize(serializer),
            ContentBlock::Image(c) => TaggedContentBlock::Image(c).serialize(serializer),
            ContentBlock::Audio(c) => TaggedContentBlock::Audio(c).serialize(serializer),
            ContentBlock::ResourceLink(c) => TaggedContentBlock::ResourceLink(c).serialize(serializer),
            ContentBlock::Resource(c) => TaggedContentBlock::Resource(c).serialize(serializer),
            ContentBlock::Unknown(v) => v.serialize(serializer),
        }
    }
}

impl<'de> Deserialize<'de> for ContentBlock {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        tagged::deserialize(deserializer)
    }
}

/// The variants of [`ContentBlock`] a `type` names.
pub(super) enum BlockKind {
    Text,
    Image,
    Audio,
    ResourceLink,
    Resource,
}

impl tagged::Object for ContentBlock {
    const EXPECTING: &'static str = "a content block";

    fn from_map<'de, A: de::MapAccess<'de>>(map: A) -> Result<Self, A::Error> {
        tagged::tagged_from_map(map)
    }

    fn unknown(value: Value) -> Self {
        ContentBlock::Unknown(value)
    }
}

impl tagged::Tagged for ContentBlock {
    type Kind = BlockKind;
    const TAG: &'static str = "type";

    fn kind(tag: &str) -> Option<BlockKind> {
        Some(match tag {
            "text" => BlockKind::Text,
            "image" => BlockKind::Image,
            "audio" => BlockKind::Audio,
            "resource_link" => BlockKind::ResourceLink,
            "resource" => BlockKind::Resource,
            _ => return None,
        })
    }

    fn known<'de, D: Deserializer<'de>>(kind: BlockKind, members: D) -> Result<Self, D::Error> {
        match kind {
            BlockKind::Text => TextContent::deserialize(members).map(ContentBlock::Text),
            BlockKind::Image => ImageContent::deserialize(members).map(ContentBlock::Image),
            BlockKind::Audio => AudioContent::deserialize(members).map(ContentBlock::Audio),
            BlockKind::ResourceLink => ResourceLink::deserialize(members).map(ContentBlock::ResourceLink),
            BlockKind::Resource => EmbeddedResource::deserialize(members).map(ContentBlock::Resource),
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn text_block_round_trips_with_tag() {
        let block = ContentBlock::text("hello");
        let json = serde_json::to_value(&block).unwrap();
        assert_eq!(json, json!({"type": "text", "text": "hello"}));
        let back: ContentBlock = serde_json::from_value(json).unwrap();
        assert_eq!(back, block);
        assert_eq!(back.as_text(), Some("hello"));
    }

    #[test]
    fn every_known_block_decodes_and_keeps_its_tag() {
        let blocks = json!([
            {"type": "text", "text": "t", "annotations": {"audience": ["user"], "priority": 0.5,
                "lastModified": "2025-01-12T15:00:58Z"}},
            {"type": "image", "data": "aGk=", "mimeType": "image/png"},
            {"type": "audio", "data": "aGk=", "mimeType": "audio/wav", "_meta": {"k": 1}},
            {"type": "resource_link", "uri": "file:///a.rs", "name": "a.rs", "size": 12,
                "icons": [{"src": "https://x/i.png"}]},
            {"type": "resource", "resource": {"uri": "file:///b", "text": "body"}},
            {"type": "resource", "resource": {"uri": "file:///c", "blob": "AAE=", "mimeType": "x/y"}}
        ]);
        let decoded: Vec<ContentBlock> = serde_json::from_value(blocks.clone()).unwrap();
        assert!(matches!(&decoded[0], ContentBlock::Text(t)
            if t.annotations.as_ref().unwrap().audience == Some(vec![Role::User])));
        assert!(matches!(&decoded[1], ContentBlock::Image(i) if i.mime_type == "image/png"));
        assert!(matches!(&decoded[2], ContentBlock::Audio(a) if a.meta.is_some()));
        assert!(matches!(&decoded[3], ContentBlock::ResourceLink(l) if l.size == Some(12)));
        assert!(matches!(&decoded[4], ContentBlock::Resource(EmbeddedResource {
            resource: ResourceContents::Text(t), .. }) if t.text == "body"));
        assert!(matches!(&decoded[5], ContentBlock::Resource(EmbeddedResource {
            resource: ResourceContents::Blob(b), .. }) if b.blob == "AAE="));
        let names: Vec<_> = decoded.iter().map(|b| b.type_name().unwrap()).collect();
        assert_eq!(names, ["text", "image", "audio", "resource_link", "resource", "resource"]);
        assert_eq!(serde_json::to_value(&decoded).unwrap(), blocks);
    }

    #[test]
    fn unknown_block_type_is_kept_and_reserialized() {
        let raw = json!({"type": "hologram", "frames": [1, 2, 3]});
        let block: ContentBlock = serde_json::from_value(raw.clone()).unwrap();
        assert_eq!(block, ContentBlock::Unknown(raw.clone()));
        assert_eq!(block.type_name(), Some("hologram"));
        assert_eq!(block.as_text(), None);
        assert_eq!(serde_json::to_value(&block).unwrap(), raw);
    }

    #[test]
    fn unknown_fields_are_tolerated() {
        let block: ContentBlock =
            serde_json::from_str(r#"{"type":"text","text":"x","futureField":{"a":1}}"#).unwrap();
        assert_eq!(block.as_text(), Some("x"));
    }

    #[test]
    fn known_type_with_missing_required_member_is_an_error() {
        assert!(serde_json::from_str::<ContentBlock>(r#"{"type":"image","data":"x"}"#).is_err());
        assert!(serde_json::from_str::<ContentBlock>(r#"{"type":"text"}"#).is_err());
    }

    #[test]
    fn resource_contents_discriminated_by_member() {
        let text: ResourceContents =
            serde_json::from_str(r#"{"uri":"a://1","text":"hi","mimeType":"text/plain"}"#).unwrap();
        assert_eq!(text.as_text(), Some("hi"));
        assert_eq!(text.uri(), Some("a://1"));
        let blob: ResourceContents = serde_json::from_str(r#"{"uri":"a://2","blob":"AA=="}"#).unwrap();
        assert!(matches!(blob, ResourceContents::Blob(ref b) if b.blob == "AA=="));
        assert_eq!(blob.uri(), Some("a://2"));
        let odd: ResourceContents = serde_json::from_str(r#"{"uri":"a://3","stream":"s"}"#).unwrap();
        assert!(matches!(odd, ResourceContents::Unknown(_)));
        assert_eq!(odd.uri(), Some("a://3"));
        assert_eq!(serde_json::to_value(&odd).unwrap(), serde_json::json!({"uri":"a://3","stream":"s"}));
        assert_eq!(
            serde_json::to_value(&text).unwrap(),
            serde_json::json!({"uri":"a://1","text":"hi","mimeType":"text/plain"})
        );
    }

    #[test]
    fn role_is_lowercase() {
        assert_eq!(serde_json::to_value(Role::Assistant).unwrap(), json!("assistant"));
        assert_eq!(serde_json::from_value::<Role>(json!("user")).unwrap(), Role::User);
        assert!(serde_json::from_value::<Role>(json!("User")).is_err());
    }

    /// A block from its JSON text, as a tool result brings it.
    fn block(text: &str) -> Result<ContentBlock, serde_json::Error> {
        serde_json::from_str(text)
    }

    #[test]
    fn the_type_may_come_anywhere() {
        let expected = ContentBlock::Image(ImageContent {
            data: "aGk=".into(),
            mime_type: "image/png".into(),
            meta: Some(json!({"k": 1}).as_object().unwrap().clone()),
            ..Default::default()
        });
        for text in [
            r#"{"type":"image","data":"aGk=","mimeType":"image/png","_meta":{"k":1}}"#,
            r#"{"data":"aGk=","type":"image","mimeType":"image/png","_meta":{"k":1}}"#,
            r#"{"data":"aGk=","mimeType":"image/png","_meta":{"k":1},"type":"image"}"#,
            r#"{"_meta":{"k":1},"extra":[1,{"type":"text"}],"mimeType":"image/png","data":"aGk=","type":"image"}"#,
            r#" { "mimeType" : "image/png" , "type" : "image" , "data" : "aGk=" , "_meta" : { "k" : 1 } } "#,
        ] {
            assert_eq!(block(text).unwrap(), expected, "{text}");
            // From a `Value` too (the members then come as owned strings).
            let value: Value = serde_json::from_str(text).unwrap();
            assert_eq!(serde_json::from_value::<ContentBlock>(value.clone()).unwrap(), expected, "{text}");
            assert_eq!(ContentBlock::deserialize(&value).unwrap(), expected, "{text}");
        }
        // Escaped names and tags are read as what they stand for.
        assert_eq!(block(r#"{"\u0074ype":"te\u0078t","t\u0065xt":"hi"}"#).unwrap(), ContentBlock::text("hi"));
        assert_eq!(block(r#"{"text":"hi","type":"text"}"#).unwrap(), ContentBlock::text("hi"));
    }

    #[test]
    fn an_embedded_resource_is_told_apart_wherever_its_text_or_blob_is() {
        let text = |t: &str| serde_json::from_str::<ResourceContents>(t).unwrap();
        for order in [
            r#"{"uri":"a://1","mimeType":"text/plain","text":"hi"}"#,
            r#"{"text":"hi","uri":"a://1","mimeType":"text/plain"}"#,
            r#"{"mimeType":"text/plain","text":"hi","x":{"blob":1},"uri":"a://1"}"#,
            // `text` wins over `blob`, before or after it; the other is an unknown member then.
            r#"{"uri":"a://1","blob":"AA==","mimeType":"text/plain","text":"hi"}"#,
            r#"{"uri":"a://1","text":"hi","blob":"AA==","mimeType":"text/plain"}"#,
        ] {
            let expected = TextResourceContents {
                uri: "a://1".into(),
                mime_type: Some("text/plain".into()),
                text: "hi".into(),
                meta: None,
            };
            assert_eq!(text(order), ResourceContents::Text(expected), "{order}");
        }
        for order in [r#"{"uri":"a://2","blob":"AA=="}"#, r#"{"blob":"AA==","uri":"a://2"}"#] {
            let expected =
                BlobResourceContents { uri: "a://2".into(), blob: "AA==".into(), ..Default::default() };
            assert_eq!(text(order), ResourceContents::Blob(expected), "{order}");
        }
        // Neither: kept whole, whatever the members hold.
        assert_eq!(
            text(r#"{"uri":5,"stream":"s"}"#),
            ResourceContents::Unknown(json!({"uri": 5, "stream": "s"}))
        );
        assert_eq!(text("[1]"), ResourceContents::Unknown(json!([1])));
        // Either, malformed: an error as for any struct.
        for bad in
            [r#"{"uri":"a","text":5}"#, r#"{"text":"t"}"#, r#"{"blob":"AA==","uri":7}"#, r#"{"blob":"x"}"#]
        {
            assert!(serde_json::from_str::<ResourceContents>(bad).is_err(), "{bad}");
        }
        // Contents that are not an object are unknown contents, as before.
        assert!(
            matches!(block(r#"{"type":"resource","resource":"x"}"#).unwrap(), ContentBlock::Resource(EmbeddedResource {
            resource: ResourceContents::Unknown(Value::String(s)), .. }) if s == "x")
        );
        let resource = r#"{"resource":{"text":"body","uri":"file:///b"},"type":"resource"}"#;
        assert!(matches!(block(resource).unwrap(), ContentBlock::Resource(EmbeddedResource {
            resource: ResourceContents::Text(t), .. }) if t.text == "body" && t.uri == "file:///b"));
    }

    #[test]
    fn unknown_blocks_are_kept_whole_wherever_the_type_is() {
        let expected = json!({"type": "hologram", "frames": [1, 2, 3], "size": "big", "text": 5});
        for text in [
            r#"{"type":"hologram","frames":[1,2,3],"size":"big","text":5}"#,
            r#"{"frames":[1,2,3],"size":"big","text":5,"type":"hologram"}"#,
            r#"{"frames":[1,2,3],"type":"hologram","size":"big","text":5}"#,
        ] {
            let got = block(text).unwrap();
            assert_eq!(got, ContentBlock::Unknown(expected.clone()), "{text}");
            assert_eq!(got.type_name(), Some("hologram"));
            assert_eq!(serde_json::to_value(&got).unwrap(), expected);
        }
        // A tag that is not a string, no tag, or not an object at all: unknown too.
        for (text, value) in [
            (r#"{"type":7,"text":"x"}"#, json!({"type": 7, "text": "x"})),
            (r#"{"type":null,"text":"x"}"#, json!({"type": null, "text": "x"})),
            (r#"{"type":{"name":"text"},"text":"x"}"#, json!({"type": {"name": "text"}, "text": "x"})),
            (r#"{"type":["text"],"text":"x"}"#, json!({"type": ["text"], "text": "x"})),
            (r#"{"type":true}"#, json!({"type": true})),
            (r#"{"type":-1.5}"#, json!({"type": -1.5})),
            (r#"{"text":"x"}"#, json!({"text": "x"})),
            ("{}", json!({})),
            (r#""just text""#, json!("just text")),
            ("42", json!(42)),
            ("null", Value::Null),
            (r#"[{"type":"text","text":"x"}]"#, json!([{"type": "text", "text": "x"}])),
        ] {
            let got = block(text).unwrap();
            assert_eq!(got, ContentBlock::Unknown(value), "{text}");
            assert_eq!(got.type_name(), None, "{text}");
        }
        // A tag's case matters.
        assert!(matches!(block(r#"{"type":"Text","text":"x"}"#).unwrap(), ContentBlock::Unknown(_)));
    }

    #[test]
    fn duplicate_members() {
        // Two tags: an error, whichever they are and wherever.
        for text in [
            r#"{"type":"text","text":"x","type":"text"}"#,
            r#"{"type":"text","text":"x","type":"image"}"#,
            r#"{"text":"x","type":"hologram","type":"text"}"#,
            r#"{"type":"hologram","type":"hologram"}"#,
        ] {
            let error = block(text).unwrap_err();
            assert!(error.to_string().contains("duplicate field `type`"), "{text}: {error}");
        }
        // A known block's member twice: serde's error, as for any struct of the model.
        for text in [
            r#"{"type":"text","text":"a","text":"b"}"#,
            r#"{"text":"a","type":"text","text":"b"}"#,
            r#"{"text":"a","text":"b","type":"text"}"#,
        ] {
            let error = block(text).unwrap_err();
            assert!(error.to_string().contains("duplicate field `text`"), "{text}: {error}");
        }
        // An unknown block keeps the last of a repeated member, as a JSON object value does.
        assert_eq!(
            block(r#"{"a":1,"type":"hologram","a":2}"#).unwrap(),
            ContentBlock::Unknown(json!({"type": "hologram", "a": 2}))
        );
        // Unknown members of a known block may repeat: they are skipped.
        assert_eq!(
            block(r#"{"x":1,"type":"text","x":2,"text":"t","x":3}"#).unwrap(),
            ContentBlock::text("t")
        );
    }

    #[test]
    fn malformed_blocks_are_errors_never_panics() {
        for (text, says) in [
            (r#"{"type":"text","text":5}"#, "invalid type: integer `5`, expected a string"),
            (r#"{"text":5,"type":"text"}"#, "invalid type: integer `5`, expected a string"),
            (r#"{"type":"text"}"#, "missing field `text`"),
            (r#"{"type":"image","data":"x"}"#, "missing field `mimeType`"),
            (r#"{"mimeType":"image/png","type":"image"}"#, "missing field `data`"),
            (r#"{"type":"resource_link","uri":"a","name":"n","size":"big"}"#, "expected a number"),
            (r#"{"type":"resource"}"#, "missing field `resource`"),
            (r#"{"type":"text","text":"x","annotations":{"priority":"high"}}"#, "invalid type"),
            (r#"{"annotations":5,"type":"text","text":"x"}"#, "invalid type"),
            (r#"{"type":"text","text":"x""#, "EOF"),
            (r#"{"type":"text","text":"x",}"#, "trailing comma"),
            (r#"{"type":"text" "text":"x"}"#, "expected `,` or `}`"),
            (r#"{"text":"x" "type":"text"}"#, "expected `,` or `}`"),
            (r#"{"type":"text","text":"\ud800"}"#, "escape"),
            (r#"{"type":"#, "EOF"),
            (r#"{"type""#, "EOF"),
            (r#"{"#, "EOF"),
        ] {
            let Err(error) = block(text) else { panic!("{text} decoded") };
            assert!(error.to_string().contains(says), "{text}: {error}");
        }
        // Within a result, the whole result fails with the block's error.
        let result = serde_json::from_str::<super::super::CallToolResult>(
            r#"{"content":[{"type":"text","text":"ok"},{"type":"image","data":"x"}]}"#,
        );
        assert!(result.unwrap_err().to_string().contains("missing field `mimeType`"));
    }

    /// How blocks decoded before `tagged.rs`: the whole object as a `Value`, then the variant
    /// its `type` names from that value.
    fn through_value(value: Value) -> Result<ContentBlock, serde_json::Error> {
        fn resource(value: Value) -> Result<ResourceContents, serde_json::Error> {
            if value.get("text").is_some() {
                serde_json::from_value(value).map(ResourceContents::Text)
            } else if value.get("blob").is_some() {
                serde_json::from_value(value).map(ResourceContents::Blob)
            } else {
                Ok(ResourceContents::Unknown(value))
            }
        }
        match value.get("type").and_then(Value::as_str) {
            Some("text") => serde_json::from_value(value).map(ContentBlock::Text),
            Some("image") => serde_json::from_value(value).map(ContentBlock::Image),
            Some("audio") => serde_json::from_value(value).map(ContentBlock::Audio),
            Some("resource_link") => serde_json::from_value(value).map(ContentBlock::ResourceLink),
            Some("resource") => {
                #[derive(Deserialize)]
                struct Embedded {
                    resource: Value,
                    #[serde(default)]
                    annotations: Option<Annotations>,
                    #[serde(rename = "_meta", default)]
                    meta: Option<JsonObject>,
                }
                let Embedded { resource: contents, annotations, meta } = serde_json::from_value(value)?;
                let resource = resource(contents)?;
                Ok(ContentBlock::Resource(EmbeddedResource { resource, annotations, meta }))
            }
            _ => Ok(ContentBlock::Unknown(value)),
        }
    }

    /// A member of a generated block: a name the model knows or not, and a value of any shape.
    // `prop_oneof!` shares its strategies in an `Arc`: test code only.
    #[allow(clippy::disallowed_types)]
    fn member() -> impl proptest::strategy::Strategy<Value = (String, Value)> {
        use proptest::prelude::*;
        let name = prop_oneof![
            Just("type"),
            Just("text"),
            Just("data"),
            Just("mimeType"),
            Just("uri"),
            Just("name"),
            Just("size"),
            Just("annotations"),
            Just("_meta"),
            Just("resource"),
            Just("blob"),
            Just("icons"),
            Just("title"),
            Just("other"),
        ];
        let value = prop_oneof![
            prop_oneof![
                Just("text"),
                Just("image"),
                Just("audio"),
                Just("resource_link"),
                Just("resource"),
                Just("hologram"),
                Just("x://y"),
                Just("aGk="),
            ]
            .prop_map(|s| json!(s)),
            any::<u8>().prop_map(|n| json!(n)),
            Just(json!(-3)),
            Just(json!(null)),
            Just(json!(true)),
            Just(json!({"uri": "a://1", "text": "t"})),
            Just(json!({"uri": "a://2", "blob": "AA=="})),
            Just(json!({"blob": "AA==", "text": "t", "uri": "a://3"})),
            Just(json!({"uri": "a://4"})),
            Just(json!({"audience": ["user"], "priority": 0.5})),
            Just(json!({"k": [1, 2]})),
            Just(json!([{"src": "https://x/i.png"}])),
            Just(json!([])),
        ];
        (name.prop_map(str::to_owned), value)
    }

    proptest::proptest! {
        /// Any object with distinct members, in any order, decodes as it did through `Value`:
        /// the same block, or an error where there was one.
        #[test]
        fn one_pass_decodes_as_through_value(members in proptest::collection::vec(member(), 0..8)) {
            let mut seen = std::collections::BTreeSet::new();
            let members: Vec<_> = members.into_iter().filter(|(name, _)| seen.insert(name.clone())).collect();
            let text = format!(
                "{{{}}}",
                members.iter().map(|(k, v)| format!("{}:{v}", json!(k))).collect::<Vec<_>>().join(",")
            );
            let value: Value = serde_json::from_str(&text).unwrap();
            let old = through_value(value.clone());
            let new = block(&text);
            match (&old, &new) {
                (Ok(old), Ok(new)) => proptest::prop_assert_eq!(old, new, "{}", text),
                (Err(_), Err(_)) => {}
                _ => proptest::prop_assert!(false, "{text}: through a value {old:?}, in one pass {new:?}"),
            }
            let from_value = serde_json::from_value::<ContentBlock>(value);
            proptest::prop_assert_eq!(from_value.ok(), new.ok(), "{}", text);
        }
    }
}
