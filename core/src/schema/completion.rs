//! Argument completion: `completion/complete`.

use std::collections::BTreeMap;

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

use super::content::{from_value, type_tag};
use super::{JsonObject, request};

/// What is being completed: a prompt's argument or a resource template's variable.
///
/// A reference of a `type` this model does not know decodes into
/// [`CompletionReference::Unknown`] and serializes back unchanged.
#[derive(Debug, Clone, PartialEq)]
pub enum CompletionReference {
    /// `"type": "ref/prompt"`: an argument of a prompt.
    Prompt {
        /// Name of the prompt.
        name: String,
        /// Human-readable display name (2025-06-18 and later).
        title: Option<String>,
    },
    /// `"type": "ref/resource"`: a variable of a resource template.
    Resource {
        /// The URI (template) of the resource.
        uri: String,
    },
    /// Any other reference, kept as it came.
    Unknown(Value),
}

impl CompletionReference {
    /// A reference to the prompt `name`.
    pub fn prompt(name: impl Into<String>) -> Self {
        CompletionReference::Prompt { name: name.into(), title: None }
    }

    /// A reference to the resource template `uri`.
    pub fn resource(uri: impl Into<String>) -> Self {
        CompletionReference::Resource { uri: uri.into() }
    }
}

/// Serialization and decoding view of the known [`CompletionReference`] variants.
#[derive(Serialize, Deserialize)]
#[serde(tag = "type")]
enum TaggedReference<'a> {
    #[serde(rename = "ref/prompt")]
    Prompt {
        name: std::borrow::Cow<'a, str>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        title: Option<std::borrow::Cow<'a, str>>,
    },
    #[serde(rename = "ref/resource")]
    Resource { uri: std::borrow::Cow<'a, str> },
}

impl Serialize for CompletionReference {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            CompletionReference::Prompt { name, title } => TaggedReference::Prompt {
                name: name.as_str().into(),
                title: title.as_deref().map(Into::into),
            }
            .serialize(serializer),
            CompletionReference::Resource { uri } => {
                TaggedReference::Resource { uri: uri.as_str().into() }.serialize(serializer)
            }
            CompletionReference::Unknown(v) => v.serialize(serializer),
        }
    }
}

impl<'de> Deserialize<'de> for CompletionReference {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = Value::deserialize(deserializer)?;
        if !matches!(type_tag(&value), Some("ref/prompt" | "ref/resource")) {
            return Ok(CompletionReference::Unknown(value));
        }
        Ok(match from_value::<TaggedReference<'static>, D::Error>(value)? {
            TaggedReference::Prompt { name, title } => CompletionReference::Prompt {
                name: name.into_owned(),
                title: title.map(std::borrow::Cow::into_owned),
            },
            TaggedReference::Resource { uri } => CompletionReference::Resource { uri: uri.into_owned() },
        })
    }
}

/// The argument being completed.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CompletionArgument {
    /// Name of the argument.
    pub name: String,
    /// What the user has typed so far.
    pub value: String,
}

/// Already-resolved context for a completion (2025-06-18 and later).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CompletionContext {
    /// Values of other arguments, by name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arguments: Option<BTreeMap<String, String>>,
}

/// Params of `completion/complete`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CompleteRequestParams {
    /// What is being completed.
    #[serde(rename = "ref")]
    pub reference: CompletionReference,
    /// The argument and its partial value.
    pub argument: CompletionArgument,
    /// Other arguments already given (2025-06-18 and later).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context: Option<CompletionContext>,
    /// Request metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
}

impl CompleteRequestParams {
    /// Params completing argument `name`, typed so far as `value`, of `reference`.
    pub fn new(reference: CompletionReference, name: impl Into<String>, value: impl Into<String>) -> Self {
        Self {
            reference,
            argument: CompletionArgument { name: name.into(), value: value.into() },
            context: None,
            meta: None,
        }
    }
}

/// The completion values offered.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Completion {
    /// Suggested values (at most 100).
    pub values: Vec<String>,
    /// Total number of options available, which may exceed `values.len()`.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "super::json_number::hint_opt"
    )]
    pub total: Option<u64>,
    /// Whether more options exist beyond `values`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub has_more: Option<bool>,
}

/// Result of `completion/complete`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CompleteResult {
    /// The completion.
    pub completion: Completion,
    /// Result metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
}

request!(
    /// `completion/complete`: asks for completion options for an argument.
    Complete, "completion/complete", CompleteRequestParams, CompleteResult
);

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::schema::Request;

    #[test]
    fn prompt_reference_params_serialize_with_ref_tag() {
        let mut params =
            CompleteRequestParams::new(CompletionReference::prompt("code_review"), "language", "py");
        params.context = Some(CompletionContext {
            arguments: Some(BTreeMap::from([("framework".to_owned(), "flask".to_owned())])),
        });
        let json = serde_json::to_value(&params).unwrap();
        assert_eq!(
            json,
            json!({
                "ref": {"type": "ref/prompt", "name": "code_review"},
                "argument": {"name": "language", "value": "py"},
                "context": {"arguments": {"framework": "flask"}}
            })
        );
        assert_eq!(serde_json::from_value::<CompleteRequestParams>(json).unwrap(), params);
        assert_eq!(Complete::METHOD, "completion/complete");
    }

    #[test]
    fn references_decode_all_known_and_unknown_types() {
        let p: CompletionReference =
            serde_json::from_value(json!({"type": "ref/prompt", "name": "n", "title": "N"})).unwrap();
        assert_eq!(p, CompletionReference::Prompt { name: "n".into(), title: Some("N".into()) });
        assert_eq!(
            serde_json::to_value(&p).unwrap(),
            json!({"type": "ref/prompt", "name": "n", "title": "N"})
        );
        // 2024-11-05 called it ResourceReference; same wire shape.
        let r: CompletionReference =
            serde_json::from_value(json!({"type": "ref/resource", "uri": "file:///{p}"})).unwrap();
        assert_eq!(r, CompletionReference::resource("file:///{p}"));
        assert_eq!(serde_json::to_value(&r).unwrap(), json!({"type": "ref/resource", "uri": "file:///{p}"}));
        let raw = json!({"type": "ref/tool", "name": "t"});
        let u: CompletionReference = serde_json::from_value(raw.clone()).unwrap();
        assert_eq!(u, CompletionReference::Unknown(raw.clone()));
        assert_eq!(serde_json::to_value(&u).unwrap(), raw);
        assert!(serde_json::from_value::<CompletionReference>(json!({"type": "ref/prompt"})).is_err());
    }

    #[test]
    fn complete_result_decodes_with_and_without_optionals() {
        let full: CompleteResult = serde_json::from_value(
            json!({"completion": {"values": ["python", "pytorch"], "total": 10, "hasMore": true}}),
        )
        .unwrap();
        assert_eq!(full.completion.values, ["python", "pytorch"]);
        assert_eq!(full.completion.total, Some(10));
        assert_eq!(full.completion.has_more, Some(true));
        let bare: CompleteResult =
            serde_json::from_value(json!({"completion": {"values": []}, "extra": 1})).unwrap();
        assert_eq!(bare.completion, Completion::default());
    }
}
