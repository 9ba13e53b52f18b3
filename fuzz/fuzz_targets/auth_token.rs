//! Authentication: token plaintext parsing, the users file, and full verification of any
//! token string against a fixed key (decode, decrypt with both paddings, parse, check).
#![no_main]
use libfuzzer_sys::fuzz_target;
use std::sync::OnceLock;
use wireperf_protocol::auth::{self, CheckTime, ReplayGuard, Verifier};

/// A fixed 1024-bit test key (small, so each decryption attempt is fast; never used for real).
const KEY: &str = include_str!("../fixtures/fuzz-key.pem");

fn verifier() -> &'static Verifier {
    static V: OnceLock<Verifier> = OnceLock::new();
    V.get_or_init(|| Verifier::new(auth::private_key_from_pem(KEY).expect("fixture key"), 10, 40))
}

fuzz_target!(|data: &[u8]| {
    let _ = auth::parse_plaintext(data);
    let text = String::from_utf8_lossy(data);
    let _ = auth::check_users_file(&text, "mario", "rossi");
    let mut guard = ReplayGuard::new();
    let _ = verifier().verify(Some(&text), &text, CheckTime { now: 1_000, arrived: 990 }, &mut guard);
});
