//! Signed JWTs, as the OAuth extensions need them: [`SigningKey`] (an EC P-256 key, ES256) and
//! the compact JWS encoding (RFC 7515 §7.1) of a `private_key_jwt` client assertion (RFC 7523
//! §2.2) and of a DPoP proof (RFC 9449 §4.2).
//!
//! A JWT here is built, never parsed: the client signs, the servers verify. The encoder is a
//! few lines over RustCrypto's `p256` (ECDSA with deterministic nonces, RFC 6979, so signing
//! needs no randomness); the time and the random `jti` come from the authorizer, which has them
//! from the driver.

use std::fmt;

use serde_json::{Value, json};

use super::error::AuthError;

/// A private key that signs JWTs: EC P-256, algorithm ES256. It signs `private_key_jwt` client
/// assertions (see [`ClientInfo::private_key_jwt`](super::ClientInfo::private_key_jwt)).
///
/// `Debug` shows the algorithm and the public key's thumbprint (RFC 7638), never the key.
///
/// ```
/// use mcp_sansio::auth::{AuthError, SigningKey};
///
/// let error = SigningKey::from_pkcs8_pem("not a key").unwrap_err();
/// assert!(matches!(error, AuthError::InvalidKey(_)));
/// ```
#[derive(Clone)]
pub struct SigningKey {
    /// Boxed: a [`ClientInfo`](super::ClientInfo) that has none stays small.
    #[cfg(feature = "jwt")]
    key: Box<p256::ecdsa::SigningKey>,
    key_id: Option<String>,
}

impl SigningKey {
    /// Reads a PKCS#8 PEM private key (`-----BEGIN PRIVATE KEY-----`) for curve P-256. Anything
    /// else (another curve, RSA, a SEC1 `EC PRIVATE KEY`, garbage) fails with
    /// [`AuthError::InvalidKey`]; without the `jwt` feature, with [`AuthError::Unsupported`].
    pub fn from_pkcs8_pem(pem: &str) -> Result<Self, AuthError> {
        #[cfg(feature = "jwt")]
        {
            use p256::pkcs8::DecodePrivateKey;
            let key = p256::ecdsa::SigningKey::from_pkcs8_pem(pem.trim()).map_err(|e| {
                AuthError::InvalidKey(format!("not a PKCS#8 PEM private key for curve P-256 (ES256): {e}"))
            })?;
            Ok(SigningKey { key: Box::new(key), key_id: None })
        }
        #[cfg(not(feature = "jwt"))]
        {
            let _ = pem;
            Err(AuthError::Unsupported("signed JWTs need mcp-sansio's `jwt` feature".into()))
        }
    }

    /// Sets the `kid` header of the JWTs it signs (the id under which the authorization server
    /// knows the public key, if it needs one).
    #[must_use]
    pub fn with_key_id(mut self, key_id: impl Into<String>) -> Self {
        self.key_id = Some(key_id.into());
        self
    }

    /// The JWS algorithm: `ES256`.
    pub const fn algorithm(&self) -> &'static str {
        "ES256"
    }

    /// The public key as a JWK (RFC 7517): `{"crv","kty","x","y"}`.
    pub fn public_jwk(&self) -> Value {
        #[cfg(feature = "jwt")]
        {
            let point = self.key.verifying_key().to_encoded_point(false);
            let coordinate = |c: Option<&p256::FieldBytes>| c.map(|c| crate::base64::encode_url(c));
            json!({
                "crv": "P-256",
                "kty": "EC",
                "x": coordinate(point.x()),
                "y": coordinate(point.y()),
            })
        }
        #[cfg(not(feature = "jwt"))]
        {
            json!({})
        }
    }

    /// The JWK thumbprint of the public key (RFC 7638, SHA-256, base64url): what a DPoP-bound
    /// token's `cnf.jkt` names.
    pub fn thumbprint(&self) -> String {
        use sha2::{Digest, Sha256};
        // serde_json writes an object's members sorted and without spaces: the RFC 7638 form.
        let canonical = self.public_jwk().to_string();
        crate::base64::encode_url(&Sha256::digest(canonical.as_bytes()))
    }

    /// A key made from 32 random bytes (a DPoP key), or `None` if they are no valid P-256
    /// scalar (zero, or not below the group order: about one chance in 2^32).
    #[cfg(feature = "jwt")]
    pub(crate) fn from_random(bytes: &[u8; 32]) -> Option<Self> {
        p256::ecdsa::SigningKey::from_slice(bytes)
            .ok()
            .map(|key| SigningKey { key: Box::new(key), key_id: None })
    }

    /// The compact JWS of `claims` under `header` (to which `alg`, and `kid` if set, are added).
    pub(crate) fn sign(&self, mut header: Value, claims: &Value) -> Result<String, AuthError> {
        header["alg"] = self.algorithm().into();
        if let Some(kid) = &self.key_id {
            header["kid"] = kid.as_str().into();
        }
        let mut jws = crate::base64::encode_url(header.to_string().as_bytes());
        jws.push('.');
        jws.push_str(&crate::base64::encode_url(claims.to_string().as_bytes()));
        #[cfg(feature = "jwt")]
        {
            use p256::ecdsa::signature::Signer;
            // JWS ES256 is the fixed-size r || s (RFC 7518 §3.4), not DER.
            let signature: p256::ecdsa::Signature = self.key.sign(jws.as_bytes());
            let signature = crate::base64::encode_url(&signature.to_bytes());
            jws.push('.');
            jws.push_str(&signature);
            Ok(jws)
        }
        #[cfg(not(feature = "jwt"))]
        {
            Err(AuthError::Unsupported("signed JWTs need mcp-sansio's `jwt` feature".into()))
        }
    }

    /// The public key, to verify in tests.
    #[cfg(all(test, feature = "jwt"))]
    pub(crate) fn verifying_key(&self) -> p256::ecdsa::VerifyingKey {
        *self.key.verifying_key()
    }
}

impl PartialEq for SigningKey {
    fn eq(&self, other: &Self) -> bool {
        // Compared by the public key: equal public keys mean equal private keys.
        self.public_jwk() == other.public_jwk() && self.key_id == other.key_id
    }
}

impl Eq for SigningKey {}

impl fmt::Debug for SigningKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SigningKey")
            .field("alg", &self.algorithm())
            .field("kid", &self.key_id)
            .field("jkt", &self.thumbprint())
            .finish_non_exhaustive()
    }
}

/// `private_key_jwt` (RFC 7523 §2.2, RFC 7521 §4.2): the client's assertion for the token
/// endpoint of `audience` (the authorization server's issuer).
pub(crate) fn client_assertion(
    key: &SigningKey,
    client_id: &str,
    audience: &str,
    now_unix: u64,
    jti: &str,
) -> Result<String, AuthError> {
    let claims = json!({
        "iss": client_id,
        "sub": client_id,
        "aud": audience,
        "iat": now_unix,
        // Short-lived: the assertion is made for one request.
        "exp": now_unix.saturating_add(ASSERTION_LIFETIME),
        "jti": jti,
    });
    key.sign(json!({"typ": "JWT"}), &claims)
}

/// How long a client assertion is valid, in seconds.
pub(crate) const ASSERTION_LIFETIME: u64 = 300;

/// What a DPoP proof (RFC 9449 §4.2) binds: the request's method and URL, and with an access
/// token its hash (`ath`), with a server's nonce its nonce.
pub(crate) struct Proof<'a> {
    pub(crate) method: &'a str,
    pub(crate) url: &'a str,
    pub(crate) access_token: Option<&'a str>,
    pub(crate) nonce: Option<&'a str>,
    pub(crate) now_unix: u64,
    pub(crate) jti: &'a str,
}

impl Proof<'_> {
    /// The signed proof for the `DPoP` header.
    pub(crate) fn sign(&self, key: &SigningKey) -> Result<String, AuthError> {
        use sha2::{Digest, Sha256};
        let mut claims = json!({
            "jti": self.jti,
            "htm": self.method,
            "htu": htu(self.url),
            "iat": self.now_unix,
        });
        if let Some(token) = self.access_token {
            claims["ath"] = crate::base64::encode_url(&Sha256::digest(token.as_bytes())).into();
        }
        if let Some(nonce) = self.nonce {
            claims["nonce"] = nonce.into();
        }
        let header = json!({"typ": "dpop+jwt", "jwk": key.public_jwk()});
        key.sign(header, &claims)
    }
}

/// The `htu` of a request to `url`: the URL without query and fragment (RFC 9449 §4.2).
fn htu(url: &str) -> String {
    match url::Url::parse(url) {
        Ok(mut parsed) => {
            parsed.set_query(None);
            parsed.set_fragment(None);
            parsed.into()
        }
        Err(_) => url.split(['?', '#']).next().unwrap_or(url).to_owned(),
    }
}

#[cfg(all(test, feature = "jwt"))]
pub(crate) mod tests {
    use p256::ecdsa::signature::Verifier;

    use super::*;

    /// A fixed P-256 key in PKCS#8 PEM (generated for these tests only).
    pub(crate) const TEST_KEY_PEM: &str = "-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgXQlU+pcJPUID3HcZ
7cd/W+hx+rOMXMssfb+Rb8miAy6hRANCAASFyBZieFA+hdcal+2jKSJ2IgkncZHX
dxuUdLOvmZbHZwlyPOaD9ILhZP3xy38xEQIjd+ASjABgFxboa9oXZ0CW
-----END PRIVATE KEY-----
";

    fn decode_url(part: &str) -> Vec<u8> {
        crate::base64::decode(&part.replace('-', "+").replace('_', "/")).unwrap()
    }

    /// Checks the signature of a compact JWS with `key`'s public key; returns its header and
    /// claims.
    pub(crate) fn verify(jws: &str, key: &p256::ecdsa::VerifyingKey) -> (Value, Value) {
        let parts: Vec<&str> = jws.split('.').collect();
        assert_eq!(parts.len(), 3, "a compact JWS has three parts");
        let signature = p256::ecdsa::Signature::from_slice(&decode_url(parts[2])).unwrap();
        let signed = format!("{}.{}", parts[0], parts[1]);
        key.verify(signed.as_bytes(), &signature).expect("the signature verifies");
        (
            serde_json::from_slice(&decode_url(parts[0])).unwrap(),
            serde_json::from_slice(&decode_url(parts[1])).unwrap(),
        )
    }

    /// The public key in a DPoP proof's `jwk` header.
    pub(crate) fn jwk_key(jwk: &Value) -> p256::ecdsa::VerifyingKey {
        let mut sec1 = vec![4];
        sec1.extend(decode_url(jwk["x"].as_str().unwrap()));
        sec1.extend(decode_url(jwk["y"].as_str().unwrap()));
        p256::ecdsa::VerifyingKey::from_sec1_bytes(&sec1).unwrap()
    }

    #[test]
    fn a_client_assertion_verifies_and_names_the_client() {
        let key = SigningKey::from_pkcs8_pem(TEST_KEY_PEM).unwrap().with_key_id("k1");
        let jwt = client_assertion(&key, "svc", "https://as.example", 1_700_000_000, "j1").unwrap();
        let (header, claims) = verify(&jwt, &key.verifying_key());
        assert_eq!(header, json!({"alg": "ES256", "typ": "JWT", "kid": "k1"}));
        assert_eq!(
            claims,
            json!({"iss": "svc", "sub": "svc", "aud": "https://as.example", "iat": 1_700_000_000u64,
                   "exp": 1_700_000_300u64, "jti": "j1"})
        );
    }

    #[test]
    fn a_dpop_proof_carries_its_key_and_binds_the_request() {
        let key = SigningKey::from_random(&[7; 32]).unwrap();
        let proof = Proof {
            method: "POST",
            url: "https://mcp.example/mcp?x=1#f",
            access_token: Some("tok"),
            nonce: Some("n1"),
            now_unix: 42,
            jti: "j",
        };
        let jws = proof.sign(&key).unwrap();
        let header: Value = serde_json::from_slice(&decode_url(jws.split('.').next().unwrap())).unwrap();
        assert_eq!(header["typ"], "dpop+jwt");
        assert!(header["jwk"].get("d").is_none(), "never the private key");
        let (_, claims) = verify(&jws, &jwk_key(&header["jwk"]));
        use sha2::{Digest, Sha256};
        let ath = crate::base64::encode_url(&Sha256::digest(b"tok"));
        assert_eq!(
            claims,
            json!({"jti": "j", "htm": "POST", "htu": "https://mcp.example/mcp", "iat": 42, "ath": ath, "nonce": "n1"})
        );
    }

    #[test]
    fn the_thumbprint_is_rfc_7638() {
        // RFC 7638 §3.1 computes over the required members in lexicographic order.
        let key = SigningKey::from_random(&[7; 32]).unwrap();
        let jwk = key.public_jwk();
        let canonical = format!(
            r#"{{"crv":"P-256","kty":"EC","x":"{}","y":"{}"}}"#,
            jwk["x"].as_str().unwrap(),
            jwk["y"].as_str().unwrap()
        );
        use sha2::{Digest, Sha256};
        assert_eq!(key.thumbprint(), crate::base64::encode_url(&Sha256::digest(canonical.as_bytes())));
    }

    #[test]
    fn bad_keys_fail_typed_and_keys_never_print() {
        for pem in ["", "garbage", "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n"] {
            assert!(matches!(SigningKey::from_pkcs8_pem(pem), Err(AuthError::InvalidKey(_))), "{pem:?}");
        }
        let key = SigningKey::from_pkcs8_pem(TEST_KEY_PEM).unwrap();
        let debug = format!("{key:?}");
        assert!(debug.contains("ES256") && !debug.contains("MIGH"), "{debug}");
        assert_eq!(key, key.clone());
        assert_ne!(key, SigningKey::from_random(&[7; 32]).unwrap());
        assert!(SigningKey::from_random(&[0; 32]).is_none());
    }
}
