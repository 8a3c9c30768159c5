//! Embedded binary and text assets, and the tiny base64 encoder they need (plus the decoder the
//! HTTP transport needs for `=?base64?...?=` header values).

/// A real, valid 4×4 RGB PNG (98 bytes): signature, IHDR, one zlib IDAT and IEND, with correct
/// CRCs. Used by the `tiny_image` tool and the `demo://logo.png` resource.
pub(crate) const TINY_PNG: [u8; 98] = [
    0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, //
    0x49, 0x48, 0x44, 0x52, 0x00, 0x00, 0x00, 0x04, 0x00, 0x00, 0x00, 0x04, //
    0x08, 0x02, 0x00, 0x00, 0x00, 0x26, 0x93, 0x09, 0x29, 0x00, 0x00, 0x00, //
    0x29, 0x49, 0x44, 0x41, 0x54, 0x78, 0xda, 0x0d, 0xc7, 0x31, 0x01, 0x00, //
    0x00, 0x0c, 0xc2, 0x30, 0x84, 0x21, 0x0c, 0x61, 0x15, 0x51, 0x59, 0x5b, //
    0xbe, 0x24, 0xb1, 0x71, 0x91, 0x98, 0xd4, 0xd6, 0x55, 0xfa, 0x99, 0x9d, //
    0x9b, 0xec, 0x83, 0xc5, 0x21, 0x78, 0x17, 0xf2, 0x17, 0xc1, 0x59, 0xa8, //
    0x0b, 0x3a, 0x00, 0x00, 0x00, 0x00, 0x49, 0x45, 0x4e, 0x44, 0xae, 0x42, //
    0x60, 0x82,
];

/// The Markdown text of `demo://readme`.
pub(crate) const README_MD: &str = "\
# mcp-demo-server

A deterministic MCP server used by the mcp-sansio quickstart, tests, examples and benches.

- Tools: echo, add, long_running, sleep, tiny_image, get_stats, fail, crash, sample, elicit,
  list_roots, log, notify_changes, cancelled_requests, stderr_burst, weather.
- Resources: demo://readme, demo://config.json, demo://logo.png and the template
  demo://items/{id}.
- Prompts: greeting, code_review.
";

/// The JSON text of `demo://config.json`.
pub(crate) const CONFIG_JSON: &str = r#"{"name":"mcp-demo-server","features":["tools","resources","prompts","logging","completions"],"deterministic":true}"#;

/// The standard base64 alphabet (RFC 4648 §4).
const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// Standard base64 (RFC 4648, with padding) of `bytes`.
pub(crate) fn base64(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b0 = chunk[0];
        let b1 = chunk.get(1).copied().unwrap_or(0);
        let b2 = chunk.get(2).copied().unwrap_or(0);
        let sextets = [b0 >> 2, ((b0 & 0x03) << 4) | (b1 >> 4), ((b1 & 0x0f) << 2) | (b2 >> 6), b2 & 0x3f];
        let emitted = chunk.len() + 1;
        for (index, sextet) in sextets.into_iter().enumerate() {
            if index < emitted {
                out.push(char::from(ALPHABET[usize::from(sextet)]));
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// Decodes standard base64 with padding (RFC 4648 §4): the length is a multiple of 4, `=` only
/// as the last one or two characters, and the unused bits of the last symbol are zero (so every
/// byte string has exactly one accepted encoding). `None` for anything else.
pub(crate) fn base64_decode(text: &str) -> Option<Vec<u8>> {
    let text = text.as_bytes();
    if text.len() % 4 != 0 {
        return None;
    }
    let sextet =
        |byte: u8| ALPHABET.iter().position(|known| *known == byte).and_then(|at| u8::try_from(at).ok());
    let mut out = Vec::with_capacity(text.len() / 4 * 3);
    for (index, quad) in text.chunks(4).enumerate() {
        let last = index + 1 == text.len() / 4;
        let padding = quad.iter().rev().take_while(|byte| **byte == b'=').count();
        if padding > 2 || (padding > 0 && !last) {
            return None;
        }
        let mut values = [0_u8; 4];
        for (slot, byte) in values.iter_mut().zip(&quad[..4 - padding]) {
            *slot = sextet(*byte)?;
        }
        let bytes = [
            (values[0] << 2) | (values[1] >> 4),
            (values[1] << 4) | (values[2] >> 2),
            (values[2] << 6) | values[3],
        ];
        let kept = 3 - padding;
        // Non-canonical: bits that no kept byte uses must be zero.
        let spare = match padding {
            1 => values[2] & 0x03,
            2 => values[1] & 0x0f,
            _ => 0,
        };
        if spare != 0 {
            return None;
        }
        out.extend_from_slice(&bytes[..kept]);
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_matches_rfc4648_vectors() {
        let vectors = [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg=="),
            ("fooba", "Zm9vYmE="),
            ("foobar", "Zm9vYmFy"),
        ];
        for (plain, encoded) in vectors {
            assert_eq!(base64(plain.as_bytes()), encoded);
            assert_eq!(base64_decode(encoded).as_deref(), Some(plain.as_bytes()));
        }
    }

    #[test]
    fn base64_decoder_rejects_malformed_text() {
        assert_eq!(base64_decode("aMOpbGxv").as_deref(), Some("héllo".as_bytes()));
        assert_eq!(base64_decode(&base64(&TINY_PNG)).as_deref(), Some(&TINY_PNG[..]));
        for bad in ["Zg", "Zg=", "Z===", "Zg==Zg==", "Zh==", "Zm9=", "Zm9v!A==", "Zm 9v", "=Zm9"] {
            assert_eq!(base64_decode(bad), None, "{bad}");
        }
    }

    #[test]
    fn tiny_png_is_a_png() {
        assert_eq!(&TINY_PNG[..8], b"\x89PNG\r\n\x1a\n");
        assert_eq!(&TINY_PNG[12..16], b"IHDR");
        assert_eq!(&TINY_PNG[TINY_PNG.len() - 8..TINY_PNG.len() - 4], b"IEND");
        assert_eq!(
            base64(&TINY_PNG),
            "iVBORw0KGgoAAAANSUhEUgAAAAQAAAAECAIAAAAmkwkpAAAAKUlEQVR42g3HMQEAAAzCMIQhDGEVUVlbviSxcZGY1NZV+pmdm+yDxSF4F/IXwVmoCzoAAAAASUVORK5CYII="
        );
    }

    #[test]
    fn config_is_valid_json() {
        assert!(serde_json::from_str::<serde_json::Value>(CONFIG_JSON).is_ok());
    }
}
