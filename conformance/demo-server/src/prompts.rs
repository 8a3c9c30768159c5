//! Prompts: `greeting` and `code_review`.

use serde_json::{Map, Value, json};

use super::jsonrpc::RpcError;

/// One declared prompt argument.
struct PromptArgument {
    name: &'static str,
    description: &'static str,
    required: bool,
}

/// A prompt template.
struct Prompt {
    name: &'static str,
    title: &'static str,
    description: &'static str,
    arguments: &'static [PromptArgument],
}

/// The prompts, in listing order.
const PROMPTS: [Prompt; 2] = [
    Prompt {
        name: "greeting",
        title: "Greeting",
        description: "Greets someone by name.",
        arguments: &[PromptArgument { name: "name", description: "Who to greet.", required: true }],
    },
    Prompt {
        name: "code_review",
        title: "Code review",
        description: "Asks for a review of a piece of code.",
        arguments: &[
            PromptArgument { name: "code", description: "The code to review.", required: true },
            PromptArgument {
                name: "language",
                description: "The programming language (completable).",
                required: false,
            },
        ],
    },
];

/// The entries of `prompts/list`, in order.
pub(crate) fn list() -> Vec<Value> {
    PROMPTS
        .iter()
        .map(|prompt| {
            let arguments: Vec<Value> = prompt
                .arguments
                .iter()
                .map(|argument| {
                    json!({
                        "name": argument.name,
                        "description": argument.description,
                        "required": argument.required,
                    })
                })
                .collect();
            json!({
                "name": prompt.name,
                "title": prompt.title,
                "description": prompt.description,
                "arguments": arguments,
            })
        })
        .collect()
}

/// `prompts/get {name, arguments?}` → `{description, messages}`.
///
/// An unknown prompt, a missing required argument or a non-string argument is `-32602`.
pub(crate) fn get(params: &Map<String, Value>) -> Result<Value, RpcError> {
    let name = params
        .get("name")
        .and_then(Value::as_str)
        .ok_or_else(|| RpcError::invalid_params("prompts/get needs a string `name`"))?;
    let prompt = PROMPTS
        .iter()
        .find(|prompt| prompt.name == name)
        .ok_or_else(|| RpcError::invalid_params(format!("unknown prompt {name:?}")))?;
    let empty = Map::new();
    let arguments = match params.get("arguments") {
        None | Some(Value::Null) => &empty,
        Some(Value::Object(arguments)) => arguments,
        Some(_) => return Err(RpcError::invalid_params("prompt arguments must be an object")),
    };
    let argument = |argument_name: &str| -> Result<Option<&str>, RpcError> {
        match arguments.get(argument_name) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(value)) => Ok(Some(value)),
            Some(_) => Err(RpcError::invalid_params(format!("argument {argument_name:?} must be a string"))),
        }
    };
    for declared in prompt.arguments.iter().filter(|declared| declared.required) {
        if argument(declared.name)?.is_none() {
            return Err(RpcError::invalid_params(format!(
                "prompt {name:?} requires the argument {:?}",
                declared.name
            )));
        }
    }
    let text = match prompt.name {
        "greeting" => format!("Hello, {}!", argument("name")?.unwrap_or_default()),
        _ => {
            let code = argument("code")?.unwrap_or_default();
            match argument("language")? {
                Some(language) => {
                    format!("Please review this {language} code:\n\n```{language}\n{code}\n```")
                }
                None => format!("Please review this code:\n\n```\n{code}\n```"),
            }
        }
    };
    Ok(json!({
        "description": prompt.description,
        "messages": [{ "role": "user", "content": { "type": "text", "text": text } }],
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(value: Value) -> Map<String, Value> {
        value.as_object().cloned().expect("object")
    }

    #[test]
    fn renders_prompts() {
        let greeting = get(&params(json!({"name": "greeting", "arguments": {"name": "Ada"}}))).expect("ok");
        assert_eq!(greeting["messages"][0]["content"]["text"], "Hello, Ada!");
        assert_eq!(greeting["messages"][0]["role"], "user");
        let review = get(&params(json!({
            "name": "code_review",
            "arguments": {"code": "fn main() {}", "language": "rust"}
        })))
        .expect("ok");
        let text = review["messages"][0]["content"]["text"].as_str().expect("text");
        assert!(text.contains("rust") && text.contains("fn main() {}"));
    }

    #[test]
    fn rejects_bad_requests() {
        for bad in [
            json!({"name": "greeting"}),
            json!({"name": "greeting", "arguments": {"name": 3}}),
            json!({"name": "code_review", "arguments": {"language": "go"}}),
            json!({"name": "nope"}),
            json!({}),
        ] {
            let error = get(&params(bad)).expect_err("invalid");
            assert_eq!(error.code, super::super::jsonrpc::INVALID_PARAMS);
        }
    }
}
