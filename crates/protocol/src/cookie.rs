//! The session cookie.
//!
//! A stock client sends 36 characters from the lower-case base32 alphabet followed by a NUL as
//! the first bytes of the control connection and again on every TCP data connection. The server
//! uses it to tell which test a data connection belongs to. It is not a secret or a UUID.

use std::fmt;

/// Bytes of a cookie on the wire, including the trailing NUL.
pub const COOKIE_SIZE: usize = 37;

const ALPHABET: &[u8; 32] = b"abcdefghijklmnopqrstuvwxyz234567";

/// A 37-byte iperf3 session cookie (36 printable characters + NUL).
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Cookie([u8; COOKIE_SIZE]);

impl Cookie {
    /// Draws a fresh cookie from the OS random source, the way iperf3 does.
    ///
    /// `byte % 32` over a uniform byte is unbiased because 256 is a multiple of 32.
    pub fn random() -> Self {
        let mut raw = [0u8; COOKIE_SIZE];
        // If the OS cannot give randomness we still need a usable cookie; a time-seeded
        // fallback is enough because the cookie only separates concurrent tests.
        if getrandom::fill(&mut raw).is_err() {
            let seed =
                std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos()).unwrap_or(0);
            for (i, b) in raw.iter_mut().enumerate() {
                *b = (seed >> ((i % 16) * 8)) as u8 ^ (i as u8).wrapping_mul(97);
            }
        }
        Self::from_entropy(raw)
    }

    /// Builds a cookie from 37 arbitrary bytes (deterministic; used by tests).
    pub fn from_entropy(raw: [u8; COOKIE_SIZE]) -> Self {
        let mut c = [0u8; COOKIE_SIZE];
        for i in 0..COOKIE_SIZE - 1 {
            c[i] = ALPHABET[(raw[i] % 32) as usize];
        }
        Self(c)
    }

    /// Takes the cookie exactly as it arrived on the wire. Any bytes are accepted: a stock
    /// server does not validate the control cookie either, it only compares data cookies.
    pub fn from_wire(bytes: [u8; COOKIE_SIZE]) -> Self {
        Self(bytes)
    }

    /// The 37 bytes to put on the wire.
    pub fn as_bytes(&self) -> &[u8; COOKIE_SIZE] {
        &self.0
    }

    /// The printable part, for `-V` output and the `-J` `cookie` key (up to the first NUL,
    /// non-printable bytes replaced so a hostile cookie cannot corrupt a terminal).
    pub fn as_display(&self) -> String {
        self.0.iter().take_while(|&&b| b != 0).map(|&b| if b.is_ascii_graphic() { b as char } else { '?' }).collect()
    }

    /// Compares two cookies the way iperf3 3.12 does (`strcmp`: up to the first NUL).
    pub fn matches(&self, other: &Cookie) -> bool {
        let a = self.0.iter().position(|&b| b == 0).unwrap_or(COOKIE_SIZE);
        let b = other.0.iter().position(|&b| b == 0).unwrap_or(COOKIE_SIZE);
        self.0[..a] == other.0[..b]
    }
}

impl fmt::Debug for Cookie {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Cookie({})", self.as_display())
    }
}

impl fmt::Display for Cookie {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.as_display())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn random_cookie_has_iperf3_shape() {
        let c = Cookie::random();
        let b = c.as_bytes();
        assert_eq!(b[36], 0);
        assert!(b[..36].iter().all(|x| ALPHABET.contains(x)));
        assert_eq!(c.as_display().len(), 36);
    }

    #[test]
    fn two_random_cookies_differ() {
        assert_ne!(Cookie::random(), Cookie::random());
    }

    #[test]
    fn match_stops_at_nul_like_strcmp() {
        let a = Cookie::from_entropy([1; 37]);
        let mut raw = *a.as_bytes();
        raw[36] = 0;
        assert!(a.matches(&Cookie::from_wire(raw)));
        raw[3] = b'z';
        assert!(!a.matches(&Cookie::from_wire(raw)));
    }

    #[test]
    fn display_sanitises_hostile_bytes() {
        let mut raw = [b'a'; 37];
        raw[2] = 0x1b;
        raw[36] = 0;
        assert_eq!(&Cookie::from_wire(raw).as_display()[..3], "aa?");
    }
}
