//! Reading a [`CallToolResult`]: its text, its decoded images and audio, its resource links and
//! embedded resources, and its `structuredContent` as a type of the caller's.
//!
//! Everything here reads what the server sent and never panics on it: base64 that does not
//! decode is a [`ContentDecodeError`] naming the block, `structuredContent` that is absent or
//! does not fit the type is a [`StructuredError`].

use serde::de::DeserializeOwned;
use thiserror::Error;

pub use crate::base64::Base64Error;

use super::{
    AudioContent, BlobResourceContents, CallToolResult, ContentBlock, EmbeddedResource, ImageContent,
    ResourceContents, ResourceLink,
};

/// Binary content of a tool result (an image or an audio clip), base64-decoded.
///
/// ```
/// use mcp_sansio::schema::{CallToolResult, ContentBlock, DecodedMedia, ImageContent};
///
/// let image = ImageContent { data: "iVBORw==".into(), mime_type: "image/png".into(), ..Default::default() };
/// let result = CallToolResult::success(vec![ContentBlock::Image(image)]);
/// let decoded: DecodedMedia = result.image().unwrap().unwrap();
/// assert_eq!(decoded.mime_type, "image/png");
/// assert_eq!(decoded.data, b"\x89PNG");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct DecodedMedia {
    /// The MIME type the server gave (`image/png`, `audio/wav`, ...), unchecked.
    pub mime_type: String,
    /// The decoded bytes.
    pub data: Vec<u8>,
}

/// The binary contents of an embedded `resource` block (a `blob`), base64-decoded.
///
/// ```
/// use mcp_sansio::schema::{CallToolResult, DecodedBlob};
///
/// let result: CallToolResult = serde_json::from_value(serde_json::json!({"content": [
///     {"type": "resource", "resource": {"uri": "demo://logo", "mimeType": "image/png", "blob": "AAE="}}
/// ]})).unwrap();
/// let blob: DecodedBlob = result.embedded_blobs().next().unwrap().unwrap();
/// assert_eq!((blob.uri.as_str(), blob.mime_type.as_deref()), ("demo://logo", Some("image/png")));
/// assert_eq!(blob.data, [0, 1]);
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct DecodedBlob {
    /// The URI of the resource.
    pub uri: String,
    /// Its MIME type, if the server gave one.
    pub mime_type: Option<String>,
    /// The decoded bytes.
    pub data: Vec<u8>,
}

/// A content block of a tool result whose base64 data does not decode.
///
/// ```
/// use mcp_sansio::schema::{Base64Error, CallToolResult};
///
/// let result: CallToolResult = serde_json::from_value(serde_json::json!({"content": [
///     {"type": "text", "text": "a picture:"},
///     {"type": "image", "mimeType": "image/png", "data": "not base64!"}
/// ]})).unwrap();
/// let error = result.image().unwrap().unwrap_err();
/// assert_eq!((error.index, error.block), (1, "image"));
/// assert_eq!(error.reason, Base64Error::InvalidByte { offset: 3, byte: b' ' });
/// assert_eq!(
///     error.to_string(),
///     "content block 1 (image, image/png): invalid base64 data: \
///      byte 0x20 at offset 3 is not in the standard base64 alphabet"
/// );
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("content block {index} ({block}{}): invalid base64 data: {reason}", describe(.mime_type.as_deref()))]
pub struct ContentDecodeError {
    /// The index of the block in `content`.
    pub index: usize,
    /// The block's wire `type`: `"image"`, `"audio"` or `"resource"`.
    pub block: &'static str,
    /// The MIME type the block declares, if any.
    pub mime_type: Option<String>,
    /// Why the data does not decode.
    #[source]
    pub reason: Base64Error,
}

/// `", <mime type>"`, or nothing.
fn describe(mime_type: Option<&str>) -> String {
    mime_type.map(|mime_type| format!(", {mime_type}")).unwrap_or_default()
}

/// Why [`CallToolResult::structured`] has no value to give.
///
/// ```
/// use mcp_sansio::schema::{CallToolResult, StructuredError};
///
/// let result = CallToolResult::text("{\"count\": 1}");
/// assert!(matches!(result.structured::<serde_json::Value>(), Err(StructuredError::Missing)));
/// ```
#[derive(Debug, Error)]
pub enum StructuredError {
    /// The result has no `structuredContent` (absent or `null`). A text block holding JSON is
    /// not looked at.
    #[error("the tool result has no structuredContent")]
    Missing,
    /// `structuredContent` does not decode into the requested type.
    #[error("the tool result's structuredContent does not decode into the requested type: {0}")]
    Decode(#[source] serde_json::Error),
}

/// Decodes the base64 `data` of block `index`.
fn decode_block(
    index: usize,
    block: &'static str,
    mime_type: Option<&str>,
    data: &str,
) -> Result<Vec<u8>, ContentDecodeError> {
    crate::base64::decode(data).map_err(|reason| ContentDecodeError {
        index,
        block,
        mime_type: mime_type.map(str::to_owned),
        reason,
    })
}

impl CallToolResult {
    /// The text of every text block, in order.
    ///
    /// ```
    /// use mcp_sansio::schema::{CallToolResult, ContentBlock};
    ///
    /// let result = CallToolResult::success(vec![ContentBlock::text("a"), ContentBlock::text("b")]);
    /// assert_eq!(result.texts().collect::<Vec<_>>(), ["a", "b"]);
    /// ```
    pub fn texts(&self) -> impl Iterator<Item = &str> {
        self.content.iter().filter_map(ContentBlock::as_text)
    }

    /// The text of every text block joined with `"\n"`; `None` when there is no text block.
    ///
    /// (It is not named `text`: [`CallToolResult::text`] makes a result from a text.)
    ///
    /// ```
    /// use mcp_sansio::schema::{CallToolResult, ContentBlock};
    ///
    /// let lines = vec![ContentBlock::text("line 1"), ContentBlock::text("line 2")];
    /// let result = CallToolResult::success(lines);
    /// assert_eq!(result.joined_text().as_deref(), Some("line 1\nline 2"));
    /// assert_eq!(CallToolResult::success(vec![]).joined_text(), None);
    /// ```
    pub fn joined_text(&self) -> Option<String> {
        let mut texts = self.texts();
        let first = texts.next()?;
        Some(texts.fold(first.to_owned(), |mut joined, text| {
            joined.push('\n');
            joined.push_str(text);
            joined
        }))
    }

    /// Every image block, decoded, in order; a block whose data is not valid base64 is an
    /// `Err` naming it, and the others still decode.
    ///
    /// ```
    /// use mcp_sansio::schema::{CallToolResult, ContentBlock, ImageContent};
    ///
    /// let image = |data: &str| ContentBlock::Image(ImageContent {
    ///     data: data.into(), mime_type: "image/gif".into(), ..Default::default()
    /// });
    /// let result = CallToolResult::success(vec![image("R0lG"), image("%%%%"), image("R0lGODk=")]);
    /// let images: Vec<_> = result.images().collect();
    /// assert_eq!(images[0].as_ref().unwrap().data, b"GIF");
    /// assert_eq!(images[1].as_ref().unwrap_err().index, 1);
    /// assert_eq!(images[2].as_ref().unwrap().data, b"GIF89");
    /// ```
    pub fn images(&self) -> impl Iterator<Item = Result<DecodedMedia, ContentDecodeError>> {
        self.content.iter().enumerate().filter_map(|(index, block)| match block {
            ContentBlock::Image(image) => Some(media(index, "image", &image.mime_type, &image.data)),
            _ => None,
        })
    }

    /// The first image block, decoded; `None` when there is none.
    ///
    /// ```
    /// use mcp_sansio::schema::CallToolResult;
    ///
    /// assert!(CallToolResult::text("no picture").image().is_none());
    /// ```
    pub fn image(&self) -> Option<Result<DecodedMedia, ContentDecodeError>> {
        self.images().next()
    }

    /// Every audio block, decoded, in order; a block whose data is not valid base64 is an
    /// `Err` naming it, and the others still decode.
    ///
    /// ```
    /// use mcp_sansio::schema::{AudioContent, CallToolResult, ContentBlock};
    ///
    /// let clip = AudioContent {
    ///     data: "UklGRg==".into(),
    ///     mime_type: "audio/wav".into(),
    ///     ..Default::default()
    /// };
    /// let result = CallToolResult::success(vec![ContentBlock::text("listen"), clip.into()]);
    /// let clips: Vec<_> = result.audios().collect::<Result<_, _>>().unwrap();
    /// assert_eq!(clips[0].data, b"RIFF");
    /// ```
    pub fn audios(&self) -> impl Iterator<Item = Result<DecodedMedia, ContentDecodeError>> {
        self.content.iter().enumerate().filter_map(|(index, block)| match block {
            ContentBlock::Audio(audio) => Some(media(index, "audio", &audio.mime_type, &audio.data)),
            _ => None,
        })
    }

    /// The first audio block, decoded; `None` when there is none.
    ///
    /// ```
    /// use mcp_sansio::schema::{AudioContent, CallToolResult, ContentBlock};
    ///
    /// let clip = AudioContent {
    ///     data: "UklGRg".into(),
    ///     mime_type: "audio/wav".into(),
    ///     ..Default::default()
    /// };
    /// let result = CallToolResult::success(vec![ContentBlock::Audio(clip)]);
    /// assert_eq!(result.audio().unwrap().unwrap().mime_type, "audio/wav");
    /// ```
    pub fn audio(&self) -> Option<Result<DecodedMedia, ContentDecodeError>> {
        self.audios().next()
    }

    /// Every `resource_link` block, in order.
    ///
    /// ```
    /// use mcp_sansio::schema::CallToolResult;
    ///
    /// let result: CallToolResult = serde_json::from_value(serde_json::json!({"content": [
    ///     {"type": "resource_link", "uri": "demo://readme", "name": "readme", "mimeType": "text/markdown"}
    /// ]})).unwrap();
    /// let link = result.resource_links().next().unwrap();
    /// assert_eq!((link.uri.as_str(), link.name.as_str()), ("demo://readme", "readme"));
    /// ```
    pub fn resource_links(&self) -> impl Iterator<Item = &ResourceLink> {
        self.content.iter().filter_map(|block| match block {
            ContentBlock::ResourceLink(link) => Some(link),
            _ => None,
        })
    }

    /// Every embedded `resource` block, text or binary, in order.
    ///
    /// ```
    /// use mcp_sansio::schema::CallToolResult;
    ///
    /// let result: CallToolResult = serde_json::from_value(serde_json::json!({"content": [
    ///     {"type": "resource", "resource": {"uri": "demo://items/7", "text": "item 7"}}
    /// ]})).unwrap();
    /// let embedded = result.embedded_resources().next().unwrap();
    /// assert_eq!(embedded.resource.uri(), Some("demo://items/7"));
    /// assert_eq!(embedded.resource.as_text(), Some("item 7"));
    /// ```
    pub fn embedded_resources(&self) -> impl Iterator<Item = &EmbeddedResource> {
        self.content.iter().filter_map(|block| match block {
            ContentBlock::Resource(embedded) => Some(embedded),
            _ => None,
        })
    }

    /// Every embedded `resource` block with binary contents (`blob`), decoded, in order; text
    /// contents are left out (see [`embedded_resources`](Self::embedded_resources)). A blob that
    /// is not valid base64 is an `Err` naming its block.
    ///
    /// See [`DecodedBlob`] for an example.
    pub fn embedded_blobs(&self) -> impl Iterator<Item = Result<DecodedBlob, ContentDecodeError>> {
        self.content.iter().enumerate().filter_map(|(index, block)| match block {
            ContentBlock::Resource(EmbeddedResource { resource: ResourceContents::Blob(blob), .. }) => {
                let mime_type = blob.mime_type.as_deref();
                Some(decode_block(index, "resource", mime_type, &blob.blob).map(|data| DecodedBlob {
                    uri: blob.uri.clone(),
                    mime_type: blob.mime_type.clone(),
                    data,
                }))
            }
            _ => None,
        })
    }

    /// Decodes `structuredContent` into `T`.
    ///
    /// Strict by design: without `structuredContent` this is [`StructuredError::Missing`], even
    /// when the result's only text block holds JSON (servers written for 2025-03-26 and older
    /// answer that way; parse [`joined_text`](Self::joined_text) yourself if you want to accept
    /// it). It does not look at `isError` either: check [`failed`](Self::failed) first.
    ///
    /// ```
    /// use mcp_sansio::schema::{CallToolResult, StructuredError};
    ///
    /// #[derive(serde::Deserialize)]
    /// struct Stats { count: u64, mean: f64 }
    ///
    /// let result: CallToolResult = serde_json::from_value(serde_json::json!({
    ///     "content": [{"type": "text", "text": "{\"count\":2,\"sum\":3.0,\"mean\":1.5}"}],
    ///     "structuredContent": {"count": 2, "sum": 3.0, "mean": 1.5}
    /// })).unwrap();
    /// let stats: Stats = result.structured()?;
    /// assert_eq!((stats.count, stats.mean), (2, 1.5));
    /// # Ok::<(), StructuredError>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`StructuredError::Missing`] when the result has no `structuredContent`,
    /// [`StructuredError::Decode`] when it does not decode into `T`.
    pub fn structured<T: DeserializeOwned>(&self) -> Result<T, StructuredError> {
        let value = self.structured_content.as_ref().ok_or(StructuredError::Missing)?;
        T::deserialize(value).map_err(StructuredError::Decode)
    }
}

/// Decodes the image or audio block `index`.
fn media(
    index: usize,
    block: &'static str,
    mime_type: &str,
    data: &str,
) -> Result<DecodedMedia, ContentDecodeError> {
    let data = decode_block(index, block, Some(mime_type), data)?;
    Ok(DecodedMedia { mime_type: mime_type.to_owned(), data })
}

impl ImageContent {
    /// The image bytes (`data`, base64-decoded).
    ///
    /// ```
    /// use mcp_sansio::schema::ImageContent;
    ///
    /// let image = ImageContent {
    ///     data: "R0lGODk=".into(),
    ///     mime_type: "image/gif".into(),
    ///     ..Default::default()
    /// };
    /// assert_eq!(image.decode().unwrap(), b"GIF89");
    /// ```
    ///
    /// # Errors
    ///
    /// When `data` is not standard base64 (padded or not).
    pub fn decode(&self) -> Result<Vec<u8>, Base64Error> {
        crate::base64::decode(&self.data)
    }
}

impl AudioContent {
    /// The audio bytes (`data`, base64-decoded).
    ///
    /// ```
    /// use mcp_sansio::schema::AudioContent;
    ///
    /// let clip = AudioContent {
    ///     data: "UklGRg==".into(),
    ///     mime_type: "audio/wav".into(),
    ///     ..Default::default()
    /// };
    /// assert_eq!(clip.decode().unwrap(), b"RIFF");
    /// ```
    ///
    /// # Errors
    ///
    /// When `data` is not standard base64 (padded or not).
    pub fn decode(&self) -> Result<Vec<u8>, Base64Error> {
        crate::base64::decode(&self.data)
    }
}

impl BlobResourceContents {
    /// The resource's bytes (`blob`, base64-decoded); also for the contents of `resources/read`.
    ///
    /// ```
    /// use mcp_sansio::schema::BlobResourceContents;
    ///
    /// let blob = BlobResourceContents {
    ///     uri: "demo://logo.png".into(),
    ///     blob: "AAE".into(),
    ///     ..Default::default()
    /// };
    /// assert_eq!(blob.decode().unwrap(), [0, 1]);
    /// ```
    ///
    /// # Errors
    ///
    /// When `blob` is not standard base64 (padded or not).
    pub fn decode(&self) -> Result<Vec<u8>, Base64Error> {
        crate::base64::decode(&self.blob)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use serde::Deserialize;
    use serde_json::json;

    use super::*;

    /// A 1×1 transparent GIF (the smallest common test image), and its base64.
    const GIF: &[u8] = b"GIF89a\x01\x00\x01\x00\x80\x00\x00\x00\x00\x00\xff\xff\xff!\xf9\x04\x01\x00\
                          \x00\x00\x00,\x00\x00\x00\x00\x01\x00\x01\x00\x00\x02\x02D\x01\x00;";
    const GIF_BASE64: &str = "R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAICRAEAOw==";

    fn result(value: serde_json::Value) -> CallToolResult {
        serde_json::from_value(value).unwrap()
    }

    /// Every kind of block, as the demo server's `mixed_content` answers.
    fn mixed() -> CallToolResult {
        result(json!({"content": [
            {"type": "text", "text": "mixed"},
            {"type": "image", "data": GIF_BASE64, "mimeType": "image/gif"},
            {"type": "audio", "data": "UklGRiQAAABXQVZF", "mimeType": "audio/wav"},
            {"type": "resource_link", "uri": "demo://readme", "name": "readme", "mimeType": "text/markdown"},
            {"type": "resource", "resource": {"uri": "demo://items/7", "text": "item 7"}},
            {"type": "resource", "resource": {"uri": "demo://logo", "blob": "AAEC", "mimeType": "x/y"}},
            {"type": "hologram", "frames": 3},
            {"type": "text", "text": "done"}
        ]}))
    }

    #[test]
    fn texts_are_collected_and_joined() {
        let mixed = mixed();
        assert_eq!(mixed.texts().collect::<Vec<_>>(), ["mixed", "done"]);
        assert_eq!(mixed.joined_text().as_deref(), Some("mixed\ndone"));
        assert_eq!(CallToolResult::text("one").joined_text().as_deref(), Some("one"));
        assert_eq!(CallToolResult::text("").joined_text().as_deref(), Some(""));
        let no_text = result(json!({"content": [{"type": "image", "data": "", "mimeType": "image/png"}]}));
        assert_eq!(no_text.joined_text(), None);
        assert_eq!(no_text.texts().count(), 0);
    }

    #[test]
    fn images_and_audio_decode() {
        let mixed = mixed();
        let image = mixed.image().unwrap().unwrap();
        assert_eq!(image, DecodedMedia { mime_type: "image/gif".into(), data: GIF.to_vec() });
        assert_eq!(mixed.images().count(), 1);
        let audio = mixed.audio().unwrap().unwrap();
        assert_eq!(audio.mime_type, "audio/wav");
        assert_eq!(audio.data, b"RIFF\x24\x00\x00\x00WAVE");
        assert_eq!(mixed.audios().count(), 1);
        let text_only = CallToolResult::text("x");
        assert!(text_only.image().is_none() && text_only.audio().is_none());
    }

    #[test]
    fn bad_base64_names_the_block_and_spares_the_others() {
        let result = result(json!({"content": [
            {"type": "text", "text": "x"},
            {"type": "image", "data": "R0lG\nODlh", "mimeType": "image/gif"},
            {"type": "image", "data": "R0lGODlh", "mimeType": "image/gif"},
            {"type": "audio", "data": "UklGR", "mimeType": "audio/wav"},
            {"type": "resource", "resource": {"uri": "demo://b", "blob": "AA=A"}}
        ]}));
        let images: Vec<_> = result.images().collect();
        let error = images[0].as_ref().unwrap_err();
        assert_eq!(error.index, 1);
        assert_eq!(error.block, "image");
        assert_eq!(error.mime_type.as_deref(), Some("image/gif"));
        assert_eq!(error.reason, Base64Error::InvalidByte { offset: 4, byte: b'\n' });
        assert_eq!(images[1].as_ref().unwrap().data, b"GIF89a");
        let audio = result.audio().unwrap().unwrap_err();
        assert_eq!((audio.index, audio.reason), (3, Base64Error::InvalidLength { symbols: 5 }));
        assert_eq!(
            audio.to_string(),
            "content block 3 (audio, audio/wav): invalid base64 data: base64 text of 5 symbols is \
             truncated (one symbol over a whole group of four)"
        );
        let blob = result.embedded_blobs().next().unwrap().unwrap_err();
        assert_eq!((blob.index, blob.block, blob.mime_type.as_deref()), (4, "resource", None));
        assert_eq!(blob.reason, Base64Error::InvalidPadding { offset: 2 });
        assert!(blob.to_string().starts_with("content block 4 (resource): invalid base64 data: "));
        assert!(std::error::Error::source(&blob).is_some());
    }

    #[test]
    fn links_and_embedded_resources() {
        let mixed = mixed();
        let links: Vec<_> = mixed.resource_links().collect();
        assert_eq!(links.len(), 1);
        assert_eq!(links[0].uri, "demo://readme");
        assert_eq!(links[0].mime_type.as_deref(), Some("text/markdown"));
        let embedded: Vec<_> = mixed.embedded_resources().collect();
        assert_eq!(embedded.len(), 2);
        assert_eq!(embedded[0].resource.as_text(), Some("item 7"));
        let blobs: Vec<_> = mixed.embedded_blobs().collect::<Result<_, _>>().unwrap();
        assert_eq!(
            blobs,
            [DecodedBlob { uri: "demo://logo".into(), mime_type: Some("x/y".into()), data: vec![0, 1, 2] }]
        );
    }

    #[derive(Debug, PartialEq, Deserialize)]
    struct Stats {
        count: u64,
        sum: f64,
        mean: f64,
    }

    #[test]
    fn structured_content_decodes_into_the_callers_type() {
        let stats = result(json!({
            "content": [{"type": "text", "text": "{\"count\":4,\"sum\":12.0,\"mean\":3.0}"}],
            "structuredContent": {"count": 4, "sum": 12.0, "mean": 3.0}
        }));
        assert_eq!(stats.structured::<Stats>().unwrap(), Stats { count: 4, sum: 12.0, mean: 3.0 });
        assert_eq!(stats.structured::<serde_json::Value>().unwrap()["count"], 4);
    }

    #[test]
    fn structured_content_is_strict() {
        // A type mismatch, as the demo server's `bad_stats` answers.
        let bad = result(json!({
            "content": [{"type": "text", "text": "{\"count\":\"4\"}"}],
            "structuredContent": {"count": "4", "sum": 12.0}
        }));
        let error = bad.structured::<Stats>().unwrap_err();
        assert!(matches!(error, StructuredError::Decode(_)), "{error:?}");
        assert!(error.to_string().contains("does not decode into the requested type"), "{error}");
        // JSON in the text alone is not structured content.
        let legacy = CallToolResult::text("{\"count\":4,\"sum\":12.0,\"mean\":3.0}");
        assert!(matches!(legacy.structured::<Stats>(), Err(StructuredError::Missing)));
        let null = result(json!({"content": [], "structuredContent": null}));
        assert!(matches!(null.structured::<serde_json::Value>(), Err(StructuredError::Missing)));
        assert_eq!(StructuredError::Missing.to_string(), "the tool result has no structuredContent");
    }
}
