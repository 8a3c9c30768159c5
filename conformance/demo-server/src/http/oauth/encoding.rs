//! The encodings OAuth needs: `application/x-www-form-urlencoded` (queries and token request
//! bodies), percent-encoding for redirect URIs, and PKCE's S256 (SHA-256, then unpadded
//! base64url).
//!
//! SHA-256 is written out here (FIPS 180-4) rather than taken from a crate, so that the demo
//! server keeps its single dependency and the shared `Cargo.lock` does not change.

use crate::assets::base64;

/// The pairs of a form-urlencoded string, in order (repeats kept, so that they can be refused).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Form(Vec<(String, String)>);

impl Form {
    /// Parses `name=value&...` (`+` is a space, `%XX` a byte, the result must be UTF-8; empty
    /// pieces are skipped and a piece without `=` has an empty value). `None` when an escape or
    /// the UTF-8 is invalid.
    pub(crate) fn parse(text: &str) -> Option<Self> {
        let mut pairs = Vec::new();
        for piece in text.split('&').filter(|piece| !piece.is_empty()) {
            let (name, value) = piece.split_once('=').unwrap_or((piece, ""));
            pairs.push((form_decode(name)?, form_decode(value)?));
        }
        Some(Self(pairs))
    }

    /// The first value of `name`.
    pub(crate) fn get(&self, name: &str) -> Option<&str> {
        self.0.iter().find(|(known, _)| known == name).map(|(_, value)| value.as_str())
    }

    /// The first value of `name`, unless it is empty (an empty parameter counts as absent, as
    /// RFC 6749 §3.1 says).
    pub(crate) fn value(&self, name: &str) -> Option<&str> {
        self.get(name).filter(|value| !value.is_empty())
    }

    /// Whether `name` occurs more than once.
    pub(crate) fn repeats(&self, name: &str) -> bool {
        self.0.iter().filter(|(known, _)| known == name).nth(1).is_some()
    }

    /// The first name that occurs more than once (RFC 6749 §3.1: parameters must not repeat).
    pub(crate) fn repeated(&self) -> Option<&str> {
        self.0.iter().enumerate().find_map(|(at, (name, _))| {
            self.0[..at].iter().any(|(earlier, _)| earlier == name).then_some(name.as_str())
        })
    }
}

/// Decodes one form-urlencoded component: `+` is a space, `%XX` a byte; `None` for a bad
/// escape or bytes that are not UTF-8.
pub(crate) fn form_decode(text: &str) -> Option<String> {
    let mut bytes = Vec::with_capacity(text.len());
    let mut rest = text.as_bytes();
    while let Some((&byte, tail)) = rest.split_first() {
        rest = tail;
        match byte {
            b'+' => bytes.push(b' '),
            b'%' => {
                let (Some(high), Some(low)) = (
                    rest.first().and_then(|digit| char::from(*digit).to_digit(16)),
                    rest.get(1).and_then(|digit| char::from(*digit).to_digit(16)),
                ) else {
                    return None;
                };
                bytes.push(u8::try_from(high * 16 + low).ok()?);
                rest = &rest[2..];
            }
            other => bytes.push(other),
        }
    }
    String::from_utf8(bytes).ok()
}

/// RFC 3986 unreserved characters (also the PKCE verifier and challenge alphabet).
fn unreserved(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'.' | b'_' | b'~')
}

/// Percent-encodes everything but the unreserved characters (for query parameter values).
pub(crate) fn percent_encode(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for byte in text.bytes() {
        if unreserved(byte) {
            out.push(char::from(byte));
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

/// Whether `text` is a valid PKCE `code_verifier` (RFC 7636 §4.1), or a challenge of the same
/// shape: 43 to 128 unreserved characters.
pub(crate) fn pkce_shaped(text: &str) -> bool {
    (43..=128).contains(&text.len()) && text.bytes().all(unreserved)
}

/// The S256 code challenge of `verifier`: `BASE64URL-ENCODE(SHA256(ASCII(verifier)))`, unpadded.
pub(crate) fn s256(verifier: &str) -> String {
    base64url(&sha256(verifier.as_bytes()))
}

/// Unpadded base64url (RFC 4648 §5).
pub(crate) fn base64url(bytes: &[u8]) -> String {
    base64(bytes)
        .trim_end_matches('=')
        .chars()
        .map(|symbol| match symbol {
            '+' => '-',
            '/' => '_',
            other => other,
        })
        .collect()
}

/// SHA-256 of `data` (RustCrypto's `sha2`, as the client uses).
pub(crate) fn sha256(data: &[u8]) -> [u8; 32] {
    use sha2::Digest;
    sha2::Sha256::digest(data).into()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hex(bytes: &[u8]) -> String {
        bytes.iter().map(|byte| format!("{byte:02x}")).collect()
    }

    #[test]
    fn sha256_vectors() {
        assert_eq!(hex(&sha256(b"")), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
        assert_eq!(hex(&sha256(b"abc")), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
        assert_eq!(
            hex(&sha256(b"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq")),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"
        );
        // Lengths around the padding boundary (55, 56 and 64 bytes) and a long input.
        assert_eq!(
            hex(&sha256(&[b'a'; 55])),
            "9f4390f8d30c2dd92ec9f095b65e2b9ae9b0a925a5258e241c9f1e910f734318"
        );
        assert_eq!(
            hex(&sha256(&[b'a'; 56])),
            "b35439a4ac6f0948b6d6f9e3c6af0f5f590ce20f1bde7090ef7970686ec6738a"
        );
        assert_eq!(
            hex(&sha256(&[b'a'; 64])),
            "ffe054fe7ae0cb6dc65c3af9b61d5209f439851db43d0ba5997337df154668eb"
        );
        assert_eq!(
            hex(&sha256(&vec![b'a'; 1_000_000])),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"
        );
    }

    #[test]
    fn s256_is_rfc7636_appendix_b() {
        let verifier = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk";
        assert!(pkce_shaped(verifier));
        assert_eq!(s256(verifier), "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM");
        assert!(!pkce_shaped("short"));
        assert!(!pkce_shaped(&"a".repeat(129)));
        assert!(!pkce_shaped(&format!("{}+", "a".repeat(43))));
    }

    #[test]
    fn forms() {
        let form = Form::parse("a=1&b=x+y%2Bz&&c&a=2&d=%C3%A9").expect("valid");
        assert_eq!(form.get("a"), Some("1"));
        assert_eq!(form.get("b"), Some("x y+z"));
        assert_eq!(form.get("c"), Some(""));
        assert_eq!(form.value("c"), None);
        assert_eq!(form.get("d"), Some("é"));
        assert_eq!(form.repeated(), Some("a"));
        assert!(form.repeats("a") && !form.repeats("b"));
        assert_eq!(Form::parse("a=1&b=2").expect("valid").repeated(), None);
        for bad in ["a=%", "a=%4", "a=%zz", "a=%ff", "%C3=1"] {
            assert_eq!(Form::parse(bad), None, "{bad}");
        }
        assert_eq!(percent_encode("a b/é~"), "a%20b%2F%C3%A9~");
        assert_eq!(form_decode(&percent_encode("x:y &z=é")).as_deref(), Some("x:y &z=é"));
    }
}
