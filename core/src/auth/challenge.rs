//! `WWW-Authenticate` (RFC 9110 §11.6.1): the `Bearer` (or `DPoP`, RFC 9449 §7.1) challenge of
//! a 401 or 403, with the parameters the MCP authorization spec reads: `resource_metadata`
//! (RFC 9728 §5.1), `scope` and `error` (RFC 6750 §3).

/// A `Bearer` challenge from `WWW-Authenticate` (or a `DPoP` one: the same parameters, see
/// [`parse_scheme`](Self::parse_scheme)).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BearerChallenge {
    /// `error`: `invalid_token`, `insufficient_scope`, `invalid_request`, …
    pub error: Option<String>,
    /// `error_description`.
    pub error_description: Option<String>,
    /// `scope`: what the resource needs, space-separated.
    pub scope: Option<String>,
    /// `resource_metadata`: the URL of the Protected Resource Metadata.
    pub resource_metadata: Option<String>,
}

impl BearerChallenge {
    /// The `Bearer` challenge among those of one `WWW-Authenticate` value, if there is one.
    /// Malformed input gives `None` or the parameters that could be read; it never panics.
    ///
    /// ```
    /// use mcp_sansio::auth::BearerChallenge;
    ///
    /// let header = r#"Basic realm="x", Bearer error="insufficient_scope", scope="a b",
    ///     resource_metadata="https://mcp.example/.well-known/oauth-protected-resource""#;
    /// let challenge = BearerChallenge::parse(header).unwrap();
    /// assert_eq!(challenge.error.as_deref(), Some("insufficient_scope"));
    /// assert_eq!(challenge.scope.as_deref(), Some("a b"));
    /// ```
    pub fn parse(header: &str) -> Option<Self> {
        Self::parse_scheme(header, "Bearer")
    }

    /// The challenge of authentication scheme `scheme` (`"DPoP"`, compared without case), if
    /// there is one; as [`parse`](Self::parse) otherwise.
    ///
    /// ```
    /// use mcp_sansio::auth::BearerChallenge;
    ///
    /// let header = r#"DPoP error="use_dpop_nonce", resource_metadata="https://mcp.example/prm""#;
    /// let challenge = BearerChallenge::parse_scheme(header, "DPoP").unwrap();
    /// assert_eq!(challenge.error.as_deref(), Some("use_dpop_nonce"));
    /// assert_eq!(BearerChallenge::parse(header), None);
    /// ```
    pub fn parse_scheme(header: &str, scheme: &str) -> Option<Self> {
        let mut lexer = Lexer { rest: header };
        let mut found: Option<BearerChallenge> = None;
        let mut in_bearer = false;
        loop {
            lexer.skip_separators();
            let Some(token) = lexer.token() else {
                // Not a token: skip one character and go on (tolerant of junk).
                if lexer.bump() {
                    continue;
                }
                break;
            };
            lexer.skip_spaces();
            if lexer.peek() == Some('=') && !lexer.rest.starts_with("==") {
                lexer.bump();
                lexer.skip_spaces();
                let value = lexer.value();
                if let (true, Some(challenge)) = (in_bearer, found.as_mut()) {
                    let slot = match token.to_ascii_lowercase().as_str() {
                        "error" => &mut challenge.error,
                        "error_description" => &mut challenge.error_description,
                        "scope" => &mut challenge.scope,
                        "resource_metadata" => &mut challenge.resource_metadata,
                        _ => continue,
                    };
                    if slot.is_none() {
                        *slot = Some(value);
                    }
                }
            } else {
                // A new challenge: its scheme, then maybe a token68 or parameters.
                if found.is_some() && in_bearer {
                    break;
                }
                in_bearer = token.eq_ignore_ascii_case(scheme);
                if in_bearer {
                    found = Some(BearerChallenge::default());
                }
            }
        }
        found
    }
}

struct Lexer<'a> {
    rest: &'a str,
}

impl<'a> Lexer<'a> {
    fn peek(&self) -> Option<char> {
        self.rest.chars().next()
    }

    fn bump(&mut self) -> bool {
        let mut chars = self.rest.chars();
        let bumped = chars.next().is_some();
        self.rest = chars.as_str();
        bumped
    }

    fn skip_spaces(&mut self) {
        self.rest = self.rest.trim_start_matches([' ', '\t', '\r', '\n']);
    }

    fn skip_separators(&mut self) {
        self.rest = self.rest.trim_start_matches([' ', '\t', '\r', '\n', ',']);
    }

    /// An RFC 9110 token (with `/` and `=` allowed at its end, for token68 values).
    fn token(&mut self) -> Option<&'a str> {
        let end = self
            .rest
            .find(|c: char| !(c.is_ascii_alphanumeric() || "!#$%&'*+-.^_`|~".contains(c)))
            .unwrap_or(self.rest.len());
        if end == 0 {
            return None;
        }
        let (token, rest) = self.rest.split_at(end);
        self.rest = rest;
        Some(token)
    }

    /// A parameter value: a quoted string (with `\` escapes) or a token.
    fn value(&mut self) -> String {
        if let Some(quoted) = self.rest.strip_prefix('"') {
            let mut value = String::new();
            let mut chars = quoted.char_indices();
            while let Some((i, c)) = chars.next() {
                match c {
                    '"' => {
                        self.rest = &quoted[i + 1..];
                        return value;
                    }
                    '\\' => {
                        if let Some((_, escaped)) = chars.next() {
                            value.push(escaped);
                        }
                    }
                    c => value.push(c),
                }
            }
            // Unterminated: take the rest.
            self.rest = "";
            value
        } else {
            let end = self.rest.find([',', ' ', '\t']).unwrap_or(self.rest.len());
            let (value, rest) = self.rest.split_at(end);
            self.rest = rest;
            value.to_owned()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_bearer_parameters() {
        let c = BearerChallenge::parse(
            r#"Bearer resource_metadata="http://h/.well-known/oauth-protected-resource/mcp", scope="a b""#,
        )
        .unwrap();
        assert_eq!(c.resource_metadata.as_deref(), Some("http://h/.well-known/oauth-protected-resource/mcp"));
        assert_eq!(c.scope.as_deref(), Some("a b"));
        assert_eq!(c.error, None);
        let c = BearerChallenge::parse(r#"bearer error=invalid_token, error_description="a \"b\"""#).unwrap();
        assert_eq!(c.error.as_deref(), Some("invalid_token"));
        assert_eq!(c.error_description.as_deref(), Some(r#"a "b""#));
    }

    #[test]
    fn finds_bearer_among_other_schemes() {
        let c = BearerChallenge::parse(r#"Basic realm="r", DPoP algs="ES256", Bearer scope="x", Other a=b"#)
            .unwrap();
        assert_eq!(c.scope.as_deref(), Some("x"));
        assert_eq!(BearerChallenge::parse(r#"Basic realm="r""#), None);
        assert_eq!(BearerChallenge::parse("Bearer"), Some(BearerChallenge::default()));
        assert_eq!(BearerChallenge::parse("Negotiate abc==, Bearer").unwrap(), BearerChallenge::default());
    }

    #[test]
    fn reads_the_dpop_challenge() {
        let header = r#"Bearer scope="b", DPoP algs="ES256 PS256", error="use_dpop_nonce", resource_metadata="https://h/prm""#;
        let c = BearerChallenge::parse_scheme(header, "dpop").unwrap();
        assert_eq!(c.error.as_deref(), Some("use_dpop_nonce"));
        assert_eq!(c.resource_metadata.as_deref(), Some("https://h/prm"));
        assert_eq!(c.scope, None);
        assert_eq!(BearerChallenge::parse(header).unwrap().scope.as_deref(), Some("b"));
    }

    #[test]
    fn never_panics_on_junk() {
        for junk in
            ["", "=", "\"", "Bearer scope=\"unterminated", "Bearer ,,,=,\"\\", "Bearer é=ü", "\u{0}\u{7f}"]
        {
            let _ = BearerChallenge::parse(junk);
        }
    }

    proptest::proptest! {
        #[test]
        fn parses_any_string_without_panicking(s in ".*") {
            let _ = BearerChallenge::parse(&s);
        }
    }
}
