//! iperf3's authentication token (feature `auth`).
//!
//! The client encrypts `user: U\npwd:  P\nts:   T` with the server's RSA public key and sends it
//! base64-encoded as `authtoken` in the parameters JSON. The server decrypts it, checks the
//! timestamp against its clock, and looks `sha256("{U}P")` up in its authorized-users file.
//!
//! Padding differs by iperf3 version: 3.12–3.16 use PKCS#1 v1.5, 3.17+ use OAEP (SHA-1, MGF1
//! SHA-1, empty label) unless `--use-pkcs1-padding`. A stock server accepts only one of them;
//! [`Verifier`] tries OAEP and then PKCS#1 v1.5, so old and new clients both authenticate.
//! Every failure looks the same on the wire (SERVER_ERROR 142), so the fallback gives a
//! Bleichenbacher-style attacker no padding oracle beyond timing.
//!
//! On top of iperf3, the server refuses a token it has already accepted ([`ReplayGuard`]):
//! iperf3 tokens are bearer tokens valid for the whole skew window, so anyone who saw one on
//! the wire could reuse it. Tokens are keyed by their decoded ciphertext: RSA padding is
//! randomized, so two honest clients never send the same bytes, and nobody can re-randomize a
//! ciphertext without the private key.
//!
//! Pure code, as the rest of this crate: no clock reads and no file reads. Times are Unix
//! seconds passed in; the users file is passed in as text (iperf3 re-reads it per test).

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use rsa::pkcs1::DecodeRsaPrivateKey;
use rsa::pkcs8::{DecodePrivateKey, DecodePublicKey};
use rsa::{PrivateKey, PublicKey};
use sha2::{Digest, Sha256};
use std::collections::HashMap;

/// RSA padding of the token.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Padding {
    /// OAEP with SHA-1 (iperf3 3.17+ default).
    Oaep,
    /// PKCS#1 v1.5 (iperf3 3.12–3.16, or `--use-pkcs1-padding`).
    Pkcs1v15,
}

/// Why a token could not be made or was refused.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum AuthError {
    /// A key file could not be parsed.
    #[error("cannot read RSA key: {0}")]
    Key(String),
    /// Encryption failed (e.g. user name and password too long for the key).
    #[error("cannot encrypt the authentication token: {0}")]
    Encrypt(String),
    /// The params carried no token although the server requires one.
    #[error("no authentication token")]
    Missing,
    /// Not valid base64.
    #[error("token is not valid base64")]
    Base64,
    /// Decryption failed with every accepted padding.
    #[error("token does not decrypt with this server's key")]
    Decrypt,
    /// The plaintext is not `user: U\npwd:  P\nts:   T`.
    #[error("token plaintext is malformed")]
    Plaintext,
    /// The timestamp is outside the allowed skew.
    #[error("token timestamp {ts} is outside the allowed skew ({skew} s) of the server clock {now}")]
    Skew {
        /// The token's time.
        ts: i64,
        /// The server's time.
        now: i64,
        /// The threshold.
        skew: u64,
    },
    /// The user is not in the authorized-users file.
    #[error("unknown user '{0}'")]
    UnknownUser(String),
    /// The user is known but the password hash differs.
    #[error("wrong password for user '{0}'")]
    WrongPassword(String),
    /// This exact token was accepted before.
    #[error("replayed token for user '{0}'")]
    Replayed(String),
}

/// The plaintext iperf3 encrypts (exact spacing: one, two and three spaces).
pub fn plaintext(user: &str, password: &str, ts: i64) -> String {
    format!("user: {user}\npwd:  {password}\nts:   {ts}")
}

/// What a decoded token says.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Claims {
    /// User name.
    pub user: String,
    /// Password.
    pub password: String,
    /// Unix seconds when the client made the token.
    pub ts: i64,
}

/// Parses a token plaintext the way iperf3's `sscanf("user: %s\npwd:  %s\nts:   %ld")` does:
/// whitespace in the format matches any run of whitespace, `%s` a run of non-whitespace.
pub fn parse_plaintext(text: &[u8]) -> Result<Claims, AuthError> {
    let text = std::str::from_utf8(text).map_err(|_| AuthError::Plaintext)?;
    let mut rest = text;
    let mut field = |label: &str| -> Result<&str, AuthError> {
        let r = rest.trim_start().strip_prefix(label).ok_or(AuthError::Plaintext)?.trim_start();
        let end = r.find(char::is_whitespace).unwrap_or(r.len());
        if end == 0 {
            return Err(AuthError::Plaintext);
        }
        rest = &r[end..];
        Ok(&r[..end])
    };
    let user = field("user:")?.to_string();
    let password = field("pwd:")?.to_string();
    let ts_text = field("ts:")?;
    // %ld stops at the first non-digit; anything after it is ignored, as by sscanf.
    let digits = ts_text.char_indices().take_while(|(i, c)| c.is_ascii_digit() || (*i == 0 && *c == '-')).count();
    let ts = ts_text[..digits].parse::<i64>().map_err(|_| AuthError::Plaintext)?;
    Ok(Claims { user, password, ts })
}

/// Reads a public key: SPKI PEM (`BEGIN PUBLIC KEY`, what `openssl rsa -pubout` writes) or
/// PKCS#1 PEM (`BEGIN RSA PUBLIC KEY`).
pub fn public_key_from_pem(pem: &str) -> Result<PublicKey, AuthError> {
    PublicKey::from_public_key_pem(pem)
        .or_else(|e| rsa::pkcs1::DecodeRsaPublicKey::from_pkcs1_pem(pem).map_err(|_| e))
        .map_err(|e| AuthError::Key(e.to_string()))
}

/// Reads a private key: PKCS#8 PEM (`BEGIN PRIVATE KEY`, OpenSSL 3's `genrsa`) or PKCS#1 PEM
/// (`BEGIN RSA PRIVATE KEY`).
pub fn private_key_from_pem(pem: &str) -> Result<PrivateKey, AuthError> {
    PrivateKey::from_pkcs8_pem(pem)
        .or_else(|e| PrivateKey::from_pkcs1_pem(pem).map_err(|_| e))
        .map_err(|e| AuthError::Key(e.to_string()))
}

/// Makes the token a client sends as `authtoken`.
pub fn make_token(key: &PublicKey, user: &str, password: &str, ts: i64, padding: Padding) -> Result<String, AuthError> {
    let text = plaintext(user, password, ts);
    let enc = match padding {
        Padding::Oaep => key.oaep_encrypt::<sha1::Sha1>(text.as_bytes()),
        Padding::Pkcs1v15 => key.pkcs1v15_encrypt(text.as_bytes()),
    }
    .map_err(|e| AuthError::Encrypt(e.to_string()))?;
    Ok(STANDARD.encode(enc))
}

/// `sha256("{user}password")` in lowercase hex: the second field of an authorized-users line.
pub fn password_hash(user: &str, password: &str) -> String {
    let digest = Sha256::digest(format!("{{{user}}}{password}").as_bytes());
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

/// Looks a user up in the authorized-users file text, as iperf3 reads it: lines end at the
/// first CR or LF, empty lines, `#` lines and lines without a comma are skipped, fields are
/// split at commas, and both fields must match exactly.
pub fn check_users_file(text: &str, user: &str, password: &str) -> Result<(), AuthError> {
    let hash = password_hash(user, password);
    let mut known = false;
    for line in text.split(['\n', '\r']) {
        if line.is_empty() || line.starts_with('#') || !line.contains(',') {
            continue;
        }
        let mut fields = line.split(',');
        let (Some(u), Some(h)) = (fields.next(), fields.next()) else { continue };
        if u == user {
            if h == hash {
                return Ok(());
            }
            known = true;
        }
    }
    Err(if known { AuthError::WrongPassword(user.to_string()) } else { AuthError::UnknownUser(user.to_string()) })
}

/// Tokens accepted recently, so that none is accepted twice.
///
/// Entries are only added for tokens that passed every other check, so a client without valid
/// credentials cannot grow it; it is still capped as a last resort.
#[derive(Debug, Default)]
pub struct ReplayGuard {
    /// Ciphertext digest → Unix second after which the entry can go.
    seen: HashMap<[u8; 32], i64>,
}

/// Most tokens remembered at once (a full guard refuses new tokens rather than forget).
pub const REPLAY_CAPACITY: usize = 100_000;

impl ReplayGuard {
    /// An empty guard.
    pub fn new() -> Self {
        Self::default()
    }

    /// Tokens currently remembered.
    pub fn len(&self) -> usize {
        self.seen.len()
    }

    /// True when nothing is remembered.
    pub fn is_empty(&self) -> bool {
        self.seen.is_empty()
    }

    fn key(ciphertext: &[u8]) -> [u8; 32] {
        Sha256::digest(ciphertext).into()
    }

    fn forget_expired(&mut self, now: i64) {
        self.seen.retain(|_, until| *until >= now);
    }

    fn contains(&self, ciphertext: &[u8]) -> bool {
        self.seen.contains_key(&Self::key(ciphertext))
    }

    fn insert(&mut self, ciphertext: &[u8], until: i64) -> bool {
        if self.seen.len() >= REPLAY_CAPACITY {
            return false;
        }
        self.seen.insert(Self::key(ciphertext), until);
        true
    }
}

/// When the token is checked: `now`, and the time the control connection arrived (earlier
/// when the client waited in the server's queue; the token was made before that).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CheckTime {
    /// The server's clock now, Unix seconds.
    pub now: i64,
    /// When the control connection was accepted, Unix seconds (≤ `now`).
    pub arrived: i64,
}

/// The server side: the private key and the skew threshold.
#[derive(Debug)]
pub struct Verifier {
    key: PrivateKey,
    skew: u64,
    /// How long (seconds) a connection may wait between arrival and its check: tokens are
    /// remembered this much longer than the skew window.
    hold: u64,
}

impl Verifier {
    /// A verifier with iperf3's `--time-skew-threshold` (`skew`, default 10 s) and the longest
    /// time a connection can wait before its token is checked (`hold`: queue + control timeout).
    pub fn new(key: PrivateKey, skew: u64, hold: u64) -> Self {
        Self { key, skew, hold }
    }

    /// Decodes and decrypts a token, trying OAEP first, then PKCS#1 v1.5.
    pub fn decrypt(&self, token: &str) -> Result<(Claims, Padding, Vec<u8>), AuthError> {
        // The key size bounds a valid token; refuse absurd input before decoding it.
        if token.len() > 4 * 1024 {
            return Err(AuthError::Base64);
        }
        let ct = STANDARD.decode(token.trim()).map_err(|_| AuthError::Base64)?;
        let (plain, padding) = match self.key.oaep_decrypt::<sha1::Sha1>(&ct) {
            Ok(p) => (p, Padding::Oaep),
            Err(_) => match self.key.pkcs1v15_decrypt(&ct) {
                Ok(p) => (p, Padding::Pkcs1v15),
                Err(_) => return Err(AuthError::Decrypt),
            },
        };
        Ok((parse_plaintext(&plain)?, padding, ct))
    }

    /// Checks a token completely; on success returns the user name and the padding used, and
    /// remembers the token so that it is never accepted again.
    pub fn verify(
        &self,
        token: Option<&str>,
        users_file: &str,
        at: CheckTime,
        replay: &mut ReplayGuard,
    ) -> Result<(String, Padding), AuthError> {
        let token = token.ok_or(AuthError::Missing)?;
        let (claims, padding, ct) = self.decrypt(token)?;
        let skew = i64::try_from(self.skew).unwrap_or(i64::MAX);
        let earliest = at.arrived.min(at.now).saturating_sub(skew);
        if claims.ts < earliest || claims.ts > at.now.saturating_add(skew) {
            return Err(AuthError::Skew { ts: claims.ts, now: at.now, skew: self.skew });
        }
        replay.forget_expired(at.now);
        if replay.contains(&ct) {
            return Err(AuthError::Replayed(claims.user));
        }
        check_users_file(users_file, &claims.user, &claims.password)?;
        // A token is usable until ts + skew at arrival, and may be checked `hold` later.
        let until = claims.ts.saturating_add(skew).saturating_add(i64::try_from(self.hold).unwrap_or(i64::MAX));
        if !replay.insert(&ct, until) {
            return Err(AuthError::Replayed(claims.user));
        }
        Ok((claims.user, padding))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plaintext_has_iperf3_spacing() {
        assert_eq!(plaintext("mario", "rossi", 1795975729), "user: mario\npwd:  rossi\nts:   1795975729");
    }

    #[test]
    fn hash_matches_the_reference_line() {
        // From the iperf3 reference: mario / rossi, accepted by 3.12 and 3.21.
        assert_eq!(password_hash("mario", "rossi"), "bf7a49a846d44b454a5d11e7acfaf13d138bbe0b7483aa3e050879700572709b");
    }

    #[test]
    fn plaintext_parsing_is_sscanf_like() {
        let c = parse_plaintext(b"user: mario\npwd:  rossi\nts:   1795975729").unwrap();
        assert_eq!(c, Claims { user: "mario".into(), password: "rossi".into(), ts: 1795975729 });
        // Old clients padded with %-20s.
        let c = parse_plaintext(b"user: a                   \npwd:  b                   \nts:   5").unwrap();
        assert_eq!((c.user.as_str(), c.password.as_str(), c.ts), ("a", "b", 5));
        for bad in
            [&b""[..], b"user: \npwd:  x\nts:   1", b"user: a\npwd:  b\nts:   x", b"usr: a\npwd: b\nts: 1", b"\xff\xfe"]
        {
            assert_eq!(parse_plaintext(bad), Err(AuthError::Plaintext), "{bad:?}");
        }
    }

    #[test]
    fn users_file_rules() {
        let line = format!("mario,{}", password_hash("mario", "rossi"));
        let text = format!("# comment\n\nnocomma\r\n{line}\r\n");
        assert_eq!(check_users_file(&text, "mario", "rossi"), Ok(()));
        assert_eq!(check_users_file(&text, "mario", "x"), Err(AuthError::WrongPassword("mario".into())));
        assert_eq!(check_users_file(&text, "luigi", "rossi"), Err(AuthError::UnknownUser("luigi".into())));
        assert!(check_users_file(&format!("#{line}"), "mario", "rossi").is_err());
    }
}
