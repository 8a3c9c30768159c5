//! Comparing a live message with a recorded one: exact by default, with a rules file for what
//! legitimately varies, and a readable list of differences.
//!
//! A rules file is plain text, one rule per line; `#` starts a comment:
//!
//! ```text
//! # the server's version changes with every release
//! ignore    /result/serverInfo/version      in initialize
//! # random content: same type, any value
//! type      /result/content/*/data          in tools/call
//! # order of the list is not specified
//! unordered /result/tools
//! # log messages come and go with timing
//! optional  notifications/message
//! ```
//!
//! - `ignore POINTER` — the value there is not compared (it may also be missing on either side).
//! - `type POINTER` — only the JSON type is compared (string, number, …).
//! - `unordered POINTER` — the array there is compared as a multiset.
//! - `optional METHOD` — server notifications and requests with this method need not appear,
//!   and extra ones are allowed.
//!
//! A pointer is a JSON Pointer (RFC 6901) into the whole message, where a `*` segment matches
//! any key or index. `in METHOD` limits a rule to messages of that method (for a response: the
//! method of the request it answers); `*` at the end of a method matches a prefix
//! (`notifications/*`). Request ids are always mapped between the recording and the live session
//! and need no rule.

use std::fmt;

use serde_json::Value;

use crate::json_schema::type_name;

/// What a rule does at its pointer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    /// Not compared.
    Ignore,
    /// Only the JSON type is compared.
    Type,
    /// Arrays compared as multisets.
    Unordered,
}

/// One `ignore`/`type`/`unordered` rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rule {
    /// What it does.
    pub action: Action,
    /// The pointer's segments (`*` matches anything).
    pub path: Vec<String>,
    /// The method it is limited to.
    pub scope: Option<String>,
}

/// A parsed rules file.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Rules {
    /// The field rules, in file order.
    pub rules: Vec<Rule>,
    /// The methods marked `optional`.
    pub optional: Vec<String>,
}

impl Rules {
    /// Parses a rules file; an error names the line.
    pub fn parse(text: &str) -> Result<Self, String> {
        let mut rules = Rules::default();
        for (n, line) in text.lines().enumerate() {
            let line = line.split('#').next().unwrap_or("").trim();
            if line.is_empty() {
                continue;
            }
            let words: Vec<&str> = line.split_whitespace().collect();
            let at = |why: &str| format!("rules line {}: {why}: {line}", n + 1);
            let (verb, target, scope) = match words.as_slice() {
                [verb, target] => (*verb, *target, None),
                [verb, target, "in", method] => (*verb, *target, Some((*method).to_owned())),
                _ => return Err(at("expected `ACTION TARGET [in METHOD]`")),
            };
            let action = match verb {
                "ignore" => Action::Ignore,
                "type" => Action::Type,
                "unordered" => Action::Unordered,
                "optional" if scope.is_none() => {
                    rules.optional.push(target.to_owned());
                    continue;
                }
                "optional" => return Err(at("`optional` takes a method and no `in`")),
                _ => return Err(at("unknown action (ignore, type, unordered, optional)")),
            };
            let path = parse_pointer(target).ok_or_else(|| at("the target must be a JSON Pointer (/a/b)"))?;
            rules.rules.push(Rule { action, path, scope });
        }
        Ok(rules)
    }

    /// Adds `other`'s rules after these.
    pub fn extend(&mut self, other: Rules) {
        self.rules.extend(other.rules);
        self.optional.extend(other.optional);
    }

    /// Reads a rules file.
    pub fn read(path: impl AsRef<std::path::Path>) -> Result<Self, String> {
        let path = path.as_ref();
        let text =
            std::fs::read_to_string(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        Self::parse(&text)
    }

    /// Whether server messages with `method` are optional.
    pub fn is_optional(&self, method: &str) -> bool {
        self.optional.iter().any(|pattern| method_matches(pattern, method))
    }

    /// The differences between `expected` and `actual`, for a message about `method`.
    pub fn compare(&self, method: Option<&str>, expected: &Value, actual: &Value) -> Vec<Difference> {
        let active: Vec<&Rule> = self
            .rules
            .iter()
            .filter(|rule| match (&rule.scope, method) {
                (None, _) => true,
                (Some(scope), Some(method)) => method_matches(scope, method),
                (Some(_), None) => false,
            })
            .collect();
        let mut out = Vec::new();
        let mut path = Vec::new();
        diff(&active, &mut path, Some(expected), Some(actual), &mut out);
        out
    }
}

fn method_matches(pattern: &str, method: &str) -> bool {
    match pattern.strip_suffix('*') {
        Some(prefix) => method.starts_with(prefix),
        None => pattern == method,
    }
}

fn parse_pointer(text: &str) -> Option<Vec<String>> {
    if text.is_empty() {
        return Some(Vec::new());
    }
    let rest = text.strip_prefix('/')?;
    Some(rest.split('/').map(|s| s.replace("~1", "/").replace("~0", "~")).collect())
}

/// One difference between a recorded and a live message.
#[derive(Debug, Clone, PartialEq)]
pub struct Difference {
    /// Where: a JSON Pointer into the message.
    pub pointer: String,
    /// The recorded value (`None`: absent in the recording).
    pub expected: Option<Value>,
    /// The live value (`None`: absent in the live message).
    pub actual: Option<Value>,
    /// When only the types were compared, or arrays as multisets: what differed.
    pub note: Option<String>,
}

impl fmt::Display for Difference {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let at = if self.pointer.is_empty() { "(the message)" } else { &self.pointer };
        match (&self.expected, &self.actual, &self.note) {
            (_, _, Some(note)) => write!(f, "{at}: {note}"),
            (Some(e), Some(a), None) => write!(f, "{at}: expected {}, found {}", short(e), short(a)),
            (Some(e), None, None) => write!(f, "{at}: missing (expected {})", short(e)),
            (None, Some(a), None) => write!(f, "{at}: unexpected (found {})", short(a)),
            (None, None, None) => write!(f, "{at}: differs"),
        }
    }
}

/// A value for a message, cut to about 160 characters.
pub fn short(value: &Value) -> String {
    let text = value.to_string();
    if text.chars().count() <= 160 {
        return text;
    }
    let cut: String = text.chars().take(150).collect();
    format!("{cut}… ({} bytes)", text.len())
}

fn matches_path(rule: &[String], path: &[String]) -> bool {
    rule.len() == path.len() && rule.iter().zip(path).all(|(r, p)| r == "*" || r == p)
}

fn rule_at(rules: &[&Rule], path: &[String], action: Action) -> bool {
    rules.iter().any(|rule| rule.action == action && matches_path(&rule.path, path))
}

fn pointer(path: &[String]) -> String {
    path.iter().map(|s| format!("/{}", s.replace('~', "~0").replace('/', "~1"))).collect()
}

fn diff(
    rules: &[&Rule],
    path: &mut Vec<String>,
    expected: Option<&Value>,
    actual: Option<&Value>,
    out: &mut Vec<Difference>,
) {
    if rule_at(rules, path, Action::Ignore) {
        return;
    }
    let (expected, actual) = match (expected, actual) {
        (None, None) => return,
        (Some(e), Some(a)) => (e, a),
        (e, a) => {
            out.push(Difference {
                pointer: pointer(path),
                expected: e.cloned(),
                actual: a.cloned(),
                note: None,
            });
            return;
        }
    };
    if rule_at(rules, path, Action::Type) {
        if type_name(expected) != type_name(actual) {
            out.push(Difference {
                pointer: pointer(path),
                expected: Some(expected.clone()),
                actual: Some(actual.clone()),
                note: Some(format!("expected a {}, found {}", type_name(expected), short(actual))),
            });
        }
        return;
    }
    match (expected, actual) {
        (Value::Object(e), Value::Object(a)) => {
            for key in e.keys().chain(a.keys().filter(|k| !e.contains_key(*k))) {
                path.push(key.clone());
                diff(rules, path, e.get(key), a.get(key), out);
                path.pop();
            }
        }
        (Value::Array(e), Value::Array(a)) if rule_at(rules, path, Action::Unordered) => {
            let mut unused: Vec<&Value> = a.iter().collect();
            let mut missing = Vec::new();
            for (i, item) in e.iter().enumerate() {
                path.push(i.to_string());
                let found = unused.iter().position(|candidate| {
                    let mut scratch = Vec::new();
                    diff(rules, path, Some(item), Some(candidate), &mut scratch);
                    scratch.is_empty()
                });
                path.pop();
                match found {
                    Some(at) => {
                        unused.remove(at);
                    }
                    None => missing.push(item),
                }
            }
            if !missing.is_empty() || !unused.is_empty() {
                let list = |items: &[&Value]| items.iter().map(|v| short(v)).collect::<Vec<_>>().join(", ");
                out.push(Difference {
                    pointer: pointer(path),
                    expected: Some(expected.clone()),
                    actual: Some(actual.clone()),
                    note: Some(format!(
                        "as a set: missing [{}], unexpected [{}]",
                        list(&missing),
                        list(&unused)
                    )),
                });
            }
        }
        (Value::Array(e), Value::Array(a)) => {
            for i in 0..e.len().max(a.len()) {
                path.push(i.to_string());
                diff(rules, path, e.get(i), a.get(i), out);
                path.pop();
            }
        }
        (Value::Number(e), Value::Number(a)) if e.as_f64() == a.as_f64() => {}
        (e, a) if e == a => {}
        (e, a) => out.push(Difference {
            pointer: pointer(path),
            expected: Some(e.clone()),
            actual: Some(a.clone()),
            note: None,
        }),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn exact_by_default_with_readable_differences() {
        let rules = Rules::default();
        let expected =
            json!({"id":1,"result":{"content":[{"type":"text","text":"Echo: hi"}],"isError":false}});
        let actual = json!({"id":1,"result":{"content":[{"type":"text","text":"Echo: ho"}],"extra":3}});
        let diffs = rules.compare(Some("tools/call"), &expected, &actual);
        let text: Vec<String> = diffs.iter().map(ToString::to_string).collect();
        assert_eq!(
            text,
            [
                r#"/result/content/0/text: expected "Echo: hi", found "Echo: ho""#,
                "/result/isError: missing (expected false)",
                "/result/extra: unexpected (found 3)",
            ]
        );
        assert!(rules.compare(None, &json!({"a":[1,2.0]}), &json!({"a":[1.0,2]})).is_empty());
    }

    #[test]
    fn rules_ignore_compare_types_and_sets_within_their_scope() {
        let rules = Rules::parse(
            "# comment\nignore /result/serverInfo/version in initialize\ntype /result/content/*/data\n\
             unordered /result/tools   # any order\noptional notifications/message\n",
        )
        .unwrap();
        let e = json!({"result":{"serverInfo":{"name":"s","version":"1"}}});
        let a = json!({"result":{"serverInfo":{"name":"s","version":"2"}}});
        assert!(rules.compare(Some("initialize"), &e, &a).is_empty());
        assert_eq!(rules.compare(Some("tools/list"), &e, &a).len(), 1, "the rule is scoped to initialize");

        let e = json!({"result":{"content":[{"data":"AAAA"},{"data":"BBBB"}]}});
        assert!(
            rules.compare(None, &e, &json!({"result":{"content":[{"data":"x"},{"data":"y"}]}})).is_empty()
        );
        let wrong = rules.compare(None, &e, &json!({"result":{"content":[{"data":1},{"data":"y"}]}}));
        assert_eq!(wrong[0].to_string(), "/result/content/0/data: expected a string, found 1");

        let e = json!({"result":{"tools":[{"name":"a"},{"name":"b"}]}});
        assert!(rules.compare(None, &e, &json!({"result":{"tools":[{"name":"b"},{"name":"a"}]}})).is_empty());
        let wrong = rules.compare(None, &e, &json!({"result":{"tools":[{"name":"b"},{"name":"c"}]}}));
        assert_eq!(
            wrong[0].to_string(),
            r#"/result/tools: as a set: missing [{"name":"a"}], unexpected [{"name":"c"}]"#
        );

        assert!(rules.is_optional("notifications/message"));
        assert!(!rules.is_optional("notifications/progress"));
        assert!(Rules::parse("optional notifications/*").unwrap().is_optional("notifications/progress"));
    }

    #[test]
    fn bad_rules_name_their_line() {
        assert_eq!(
            Rules::parse("ignore result.x").unwrap_err(),
            "rules line 1: the target must be a JSON Pointer (/a/b): ignore result.x"
        );
        assert!(Rules::parse("\nsquash /a").unwrap_err().starts_with("rules line 2: unknown action"));
        assert!(Rules::parse("ignore /a in").is_err());
    }
}
