//! A strict decoder of standard base64 (RFC 4648 §4), for the binary payloads of the model
//! (image and audio data, blob resources), and the two encoders the engine needs: standard
//! base64 with padding (2026-07-28 header values, HTTP Basic credentials) and base64url without
//! padding (RFC 4648 §5: PKCE, `state`, JWTs).
//!
//! What is accepted: the standard alphabet (`A-Z a-z 0-9 + /`), with its `=` padding or without
//! it. What is refused, each with its own [`Base64Error`]: any other byte (white space and line
//! breaks included, and the URL-safe `-` and `_`), padding anywhere but at the very end or of
//! the wrong length, a length no encoding can have (a lone symbol in the last group), and
//! non-zero unused bits in the last symbol (so every byte string has exactly one accepted
//! padded encoding, as RFC 4648 §3.5 allows a decoder to demand).

use thiserror::Error;

/// Why a text is not valid standard base64 (RFC 4648 §4).
///
/// Offsets count bytes from the start of the text.
///
/// ```
/// use mcp_sansio::schema::{Base64Error, ImageContent};
///
/// let image = ImageContent { data: "aGk=".into(), mime_type: "image/png".into(), ..Default::default() };
/// assert_eq!(image.decode().unwrap(), b"hi");
/// let wrapped = ImageContent { data: "aG\nk=".into(), ..image };
/// assert_eq!(wrapped.decode(), Err(Base64Error::InvalidByte { offset: 2, byte: b'\n' }));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
pub enum Base64Error {
    /// A byte outside the standard alphabet (white space, a URL-safe symbol, any other byte).
    #[error("byte {byte:#04x} at offset {offset} is not in the standard base64 alphabet")]
    InvalidByte {
        /// Where it is.
        offset: usize,
        /// The byte.
        byte: u8,
    },
    /// `=` before the end, more than two of them, or padding that does not complete the last
    /// group of four.
    #[error("misplaced base64 padding at offset {offset}")]
    InvalidPadding {
        /// Where the first `=` of the offending run is.
        offset: usize,
    },
    /// The symbols (without padding) leave one lone symbol in the last group: no encoding is
    /// that long.
    #[error("base64 text of {symbols} symbols is truncated (one symbol over a whole group of four)")]
    InvalidLength {
        /// How many symbols there are, padding left out.
        symbols: usize,
    },
    /// The last symbol has bits set that no decoded byte uses: not the canonical encoding.
    #[error("the last base64 symbol, at offset {offset}, has non-zero unused bits")]
    NonCanonical {
        /// Where the last symbol is.
        offset: usize,
    },
}

/// Marks bytes that are not in the alphabet in [`DECODE`].
const INVALID: u8 = 0xff;

/// The value of each byte as a base64 symbol, or [`INVALID`].
const DECODE: [u8; 256] = {
    let alphabet = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut table = [INVALID; 256];
    let mut value = 0;
    while value < alphabet.len() {
        table[alphabet[value] as usize] = value as u8;
        value += 1;
    }
    table
};

// The encoders serve HTTP and OAuth only.
#[cfg(feature = "http")]
const STANDARD: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
#[cfg(feature = "http")]
const URL_SAFE: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

#[cfg(feature = "http")]
fn encode_with(bytes: &[u8], alphabet: &[u8; 64], pad: bool) -> String {
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let n = chunk.iter().enumerate().fold(0u32, |n, (i, &b)| n | u32::from(b) << (16 - 8 * i));
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(char::from(alphabet[(n >> (18 - 6 * i)) as usize & 63]));
            } else if pad {
                out.push('=');
            }
        }
    }
    out
}

/// Standard base64 with padding (RFC 4648 §4).
#[cfg(feature = "http")]
pub(crate) fn encode(bytes: &[u8]) -> String {
    encode_with(bytes, STANDARD, true)
}

/// base64url without padding (RFC 4648 §5, as PKCE and JWTs use it).
#[cfg(feature = "http")]
pub(crate) fn encode_url(bytes: &[u8]) -> String {
    encode_with(bytes, URL_SAFE, false)
}

/// The bits of `group` (up to four symbols, the first at `offset`), the first symbol highest.
fn group_bits(offset: usize, group: &[u8]) -> Result<u32, Base64Error> {
    let mut bits = 0_u32;
    for (at, byte) in group.iter().enumerate() {
        let value = match DECODE[usize::from(*byte)] {
            INVALID if *byte == b'=' => return Err(Base64Error::InvalidPadding { offset: offset + at }),
            INVALID => return Err(Base64Error::InvalidByte { offset: offset + at, byte: *byte }),
            value => u32::from(value),
        };
        bits = (bits << 6) | value;
    }
    Ok(bits)
}

/// Decodes standard base64 (RFC 4648 §4), padded or unpadded; see the module docs for what is
/// refused. A byte outside the alphabet is reported before any padding or length problem.
pub(crate) fn decode(text: &str) -> Result<Vec<u8>, Base64Error> {
    let text = text.as_bytes();
    let padding = text.iter().rev().take_while(|byte| **byte == b'=').count();
    let symbols = text.len() - padding;
    let mut out = Vec::with_capacity(symbols / 4 * 3 + 2);
    let mut groups = text[..symbols].chunks_exact(4);
    for (index, group) in (&mut groups).enumerate() {
        let bits = group_bits(index * 4, group)?;
        out.extend_from_slice(&bits.to_be_bytes()[1..]);
    }
    let tail = groups.remainder();
    let offset = symbols - tail.len();
    let bits = group_bits(offset, tail)?;
    match (tail.len(), padding) {
        // Unpadded, or padding that completes the last group of four (`xx==`, `xxx=`).
        (_, 0) | (2, 2) | (3, 1) => {}
        (1, 1 | 2) => return Err(Base64Error::InvalidLength { symbols }),
        _ => return Err(Base64Error::InvalidPadding { offset: symbols }),
    }
    match tail.len() {
        0 => {}
        1 => return Err(Base64Error::InvalidLength { symbols }),
        kept_plus_one => {
            // Two symbols carry one byte (4 spare bits), three carry two (2 spare bits).
            let spare = 6 * kept_plus_one % 8;
            if bits & ((1 << spare) - 1) != 0 {
                return Err(Base64Error::NonCanonical { offset: symbols - 1 });
            }
            let bytes = (bits >> spare).to_be_bytes();
            out.extend_from_slice(&bytes[4 - (kept_plus_one - 1)..]);
        }
    }
    Ok(out)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    /// The test vectors of RFC 4648 §10.
    const VECTORS: [(&str, &str); 7] = [
        ("", ""),
        ("f", "Zg=="),
        ("fo", "Zm8="),
        ("foo", "Zm9v"),
        ("foob", "Zm9vYg=="),
        ("fooba", "Zm9vYmE="),
        ("foobar", "Zm9vYmFy"),
    ];

    #[test]
    fn decodes_the_rfc_4648_vectors_padded_and_unpadded() {
        for (plain, encoded) in VECTORS {
            assert_eq!(decode(encoded).unwrap(), plain.as_bytes(), "{encoded}");
            let unpadded = encoded.trim_end_matches('=');
            assert_eq!(decode(unpadded).unwrap(), plain.as_bytes(), "{unpadded}");
        }
    }

    #[test]
    fn decodes_every_byte_and_the_whole_alphabet() {
        let all: Vec<u8> = (0..=255).collect();
        // Every byte value, 0 to 255, in order: "AAECAwQF…", and the alphabet in order.
        let encoded = concat!(
            "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8gISIjJCUmJygpKissLS4vMDEyMzQ1Njc4OTo7PD0+P0BBQkNE",
            "RUZHSElKS0xNTk9QUVJTVFVWV1hZWltcXV5fYGFiY2RlZmdoaWprbG1ub3BxcnN0dXZ3eHl6e3x9fn+AgYKDhIWGh4iJ",
            "iouMjY6PkJGSk5SVlpeYmZqbnJ2en6ChoqOkpaanqKmqq6ytrq+wsbKztLW2t7i5uru8vb6/wMHCw8TFxsfIycrLzM3O",
            "z9DR0tPU1dbX2Nna29zd3t/g4eLj5OXm5+jp6uvs7e7v8PHy8/T19vf4+fr7/P3+/w=="
        );
        assert_eq!(decode(encoded).unwrap(), all);
        let alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
        let decoded = decode(alphabet).unwrap();
        assert_eq!(decoded.len(), 48);
        assert_eq!(&decoded[..3], &[0x00, 0x10, 0x83]);
        assert_eq!(&decoded[45..], &[0xf3, 0xdf, 0xbf]);
    }

    #[test]
    fn refuses_bytes_outside_the_alphabet() {
        let cases = [
            ("Zm9v Zg==", 4, b' '),
            ("Zm9v\nZg==", 4, b'\n'),
            ("Zm9vYg\r\n", 6, b'\r'),
            ("Zm9-", 3, b'-'),
            ("Zm9_", 3, b'_'),
            ("Zm9v!A==", 4, b'!'),
            ("é", 0, 0xc3),
            ("Zm9v\0", 4, 0),
        ];
        for (text, offset, byte) in cases {
            assert_eq!(decode(text), Err(Base64Error::InvalidByte { offset, byte }), "{text:?}");
        }
    }

    #[test]
    fn refuses_misplaced_padding_and_impossible_lengths() {
        let padding = [("=", 0), ("==", 0), ("Zg=", 2), ("Z===", 1), ("Zm9v===", 4)];
        for (text, offset) in padding {
            assert_eq!(decode(text), Err(Base64Error::InvalidPadding { offset }), "{text:?}");
        }
        // `=` inside the text is refused where it stands.
        assert_eq!(decode("Zg==Zg=="), Err(Base64Error::InvalidPadding { offset: 2 }));
        assert_eq!(decode("=Zm9"), Err(Base64Error::InvalidPadding { offset: 0 }));
        for (text, symbols) in [("Z", 1), ("Zm9vY", 5), ("Zm9vY=", 5), ("Zm9vY==", 5)] {
            assert_eq!(decode(text), Err(Base64Error::InvalidLength { symbols }), "{text:?}");
        }
    }

    #[test]
    fn refuses_non_canonical_last_symbols() {
        assert_eq!(decode("Zh=="), Err(Base64Error::NonCanonical { offset: 1 }));
        assert_eq!(decode("Zh"), Err(Base64Error::NonCanonical { offset: 1 }));
        assert_eq!(decode("Zm9="), Err(Base64Error::NonCanonical { offset: 2 }));
        assert_eq!(decode("Zm8="), Ok(b"fo".to_vec()));
    }

    #[test]
    fn errors_explain_themselves() {
        let message = Base64Error::InvalidByte { offset: 4, byte: b' ' }.to_string();
        assert_eq!(message, "byte 0x20 at offset 4 is not in the standard base64 alphabet");
        assert!(Base64Error::InvalidLength { symbols: 5 }.to_string().contains("5 symbols"));
    }

    #[test]
    #[cfg(feature = "http")]
    fn encodes_url_safe_without_padding() {
        assert_eq!(encode_url(b""), "");
        assert_eq!(encode_url(b"f"), "Zg");
        assert_eq!(encode_url(b"fo"), "Zm8");
        assert_eq!(encode_url(&[0xfb, 0xff]), "-_8");
        assert_eq!(encode(&[0xfb, 0xff]), "+/8=");
        for len in 0..40 {
            let bytes: Vec<u8> = (0..len).map(|i| (i * 37 + 11) as u8).collect();
            assert_eq!(decode(&encode(&bytes)).unwrap(), bytes);
        }
    }
}
