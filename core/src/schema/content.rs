//! Content: the blocks tools and prompts return (text, image, audio, resource links, embedded
//! resources), resource contents, roles and annotations.
//!
//! [`ContentBlock`] and [`ResourceContents`] decode variants this model does not know into a
//! catch-all `Unknown(serde_json::Value)` that re-serializes unchanged.

use serde::de::{self, DeserializeOwned};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

use super::{Icon, JsonObject};

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
    #[serde(default, skip_serializing_if = "Option::is_none")]
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
        let value = Value::deserialize(deserializer)?;
        if value.get("text").is_some() {
            from_value(value).map(ResourceContents::Text)
        } else if value.get("blob").is_some() {
            from_value(value).map(ResourceContents::Blob)
        } else {
            Ok(ResourceContents::Unknown(value))
        }
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
        /// Which variant the `type` tag names, read before the value is moved.
        enum Kind {
            Text,
            Image,
            Audio,
            ResourceLink,
            Resource,
            Unknown,
        }
        let value = Value::deserialize(deserializer)?;
        let kind = match type_tag(&value) {
            Some("text") => Kind::Text,
            Some("image") => Kind::Image,
            Some("audio") => Kind::Audio,
            Some("resource_link") => Kind::ResourceLink,
            Some("resource") => Kind::Resource,
            _ => Kind::Unknown,
        };
        match kind {
            Kind::Text => from_value(value).map(ContentBlock::Text),
            Kind::Image => from_value(value).map(ContentBlock::Image),
            Kind::Audio => from_value(value).map(ContentBlock::Audio),
            Kind::ResourceLink => from_value(value).map(ContentBlock::ResourceLink),
            Kind::Resource => from_value(value).map(ContentBlock::Resource),
            Kind::Unknown => Ok(ContentBlock::Unknown(value)),
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
}
