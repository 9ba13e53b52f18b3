//! The authentication token against OpenSSL: keys made by the `openssl` CLI, tokens encrypted
//! by `openssl pkeyutl` with each padding decrypt with ours, and ours decrypt with OpenSSL.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use wireperf_protocol::auth::{
    self, AuthError, CheckTime, Padding, ReplayGuard, Verifier, make_token, password_hash, plaintext,
};

/// A 2048-bit key pair written by OpenSSL into a temporary directory.
pub struct Keys {
    pub dir: tempfile::TempDir,
    pub private: PathBuf,
    pub public: PathBuf,
}

fn openssl(args: &[&str]) -> std::process::Output {
    let out = Command::new("openssl")
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("the openssl CLI is needed for these tests (Debian package openssl)");
    assert!(out.status.success(), "openssl {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    out
}

pub fn keys() -> Keys {
    let dir = tempfile::tempdir().unwrap();
    let private = dir.path().join("private.pem");
    let public = dir.path().join("public.pem");
    openssl(&["genrsa", "-out", private.to_str().unwrap(), "2048"]);
    openssl(&["rsa", "-in", private.to_str().unwrap(), "-pubout", "-out", public.to_str().unwrap()]);
    Keys { dir, private, public }
}

fn read(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap()
}

fn openssl_encrypt(k: &Keys, text: &str, pad: &str) -> String {
    let input = k.dir.path().join("plain.txt");
    std::fs::write(&input, text).unwrap();
    let out = k.dir.path().join("cipher.bin");
    openssl(&[
        "pkeyutl",
        "-encrypt",
        "-pubin",
        "-inkey",
        k.public.to_str().unwrap(),
        "-in",
        input.to_str().unwrap(),
        "-out",
        out.to_str().unwrap(),
        "-pkeyopt",
        &format!("rsa_padding_mode:{pad}"),
    ]);
    let b64 = openssl(&["base64", "-A", "-in", out.to_str().unwrap()]);
    String::from_utf8(b64.stdout).unwrap()
}

fn at(now: i64) -> CheckTime {
    CheckTime { now, arrived: now }
}

#[test]
fn openssl_tokens_in_both_paddings_verify() {
    let k = keys();
    let v = Verifier::new(auth::private_key_from_pem(&read(&k.private)).unwrap(), 10, 40);
    let users = format!("mario,{}\n", password_hash("mario", "rossi"));
    let mut guard = ReplayGuard::new();
    for (pad, want) in [("oaep", Padding::Oaep), ("pkcs1", Padding::Pkcs1v15)] {
        let token = openssl_encrypt(&k, &plaintext("mario", "rossi", 1_000), pad);
        assert_eq!(v.verify(Some(&token), &users, at(1_005), &mut guard), Ok(("mario".into(), want)));
    }
}

#[test]
fn our_tokens_decrypt_with_openssl() {
    let k = keys();
    let public = auth::public_key_from_pem(&read(&k.public)).unwrap();
    for (pad, padding) in [("oaep", Padding::Oaep), ("pkcs1", Padding::Pkcs1v15)] {
        let token = make_token(&public, "mario", "rossi", 42, padding).unwrap();
        assert!(!token.contains('\n'), "one line");
        let cipher = k.dir.path().join("ours.bin");
        std::fs::write(&cipher, base64_decode_with_openssl(&k, &token)).unwrap();
        let out = openssl(&[
            "pkeyutl",
            "-decrypt",
            "-inkey",
            k.private.to_str().unwrap(),
            "-in",
            cipher.to_str().unwrap(),
            "-pkeyopt",
            &format!("rsa_padding_mode:{pad}"),
        ]);
        assert_eq!(String::from_utf8(out.stdout).unwrap(), "user: mario\npwd:  rossi\nts:   42");
    }
}

fn base64_decode_with_openssl(k: &Keys, token: &str) -> Vec<u8> {
    let f = k.dir.path().join("token.b64");
    std::fs::write(&f, token).unwrap();
    openssl(&["base64", "-d", "-A", "-in", f.to_str().unwrap()]).stdout
}

#[test]
fn each_refusal_has_its_reason() {
    let k = keys();
    let public = auth::public_key_from_pem(&read(&k.public)).unwrap();
    let v = Verifier::new(auth::private_key_from_pem(&read(&k.private)).unwrap(), 10, 40);
    let users = format!("# users\nmario,{}\n", password_hash("mario", "rossi"));
    let mut g = ReplayGuard::new();
    let tok = |u: &str, p: &str, ts: i64| make_token(&public, u, p, ts, Padding::Oaep).unwrap();
    assert_eq!(v.verify(None, &users, at(100), &mut g), Err(AuthError::Missing));
    assert_eq!(v.verify(Some("!!!"), &users, at(100), &mut g), Err(AuthError::Base64));
    assert_eq!(v.verify(Some("AAAA"), &users, at(100), &mut g), Err(AuthError::Decrypt));
    assert_eq!(
        v.verify(Some(&tok("mario", "x", 100)), &users, at(100), &mut g),
        Err(AuthError::WrongPassword("mario".into()))
    );
    assert_eq!(
        v.verify(Some(&tok("luigi", "rossi", 100)), &users, at(100), &mut g),
        Err(AuthError::UnknownUser("luigi".into()))
    );
    assert_eq!(
        v.verify(Some(&tok("mario", "rossi", 89)), &users, at(100), &mut g),
        Err(AuthError::Skew { ts: 89, now: 100, skew: 10 })
    );
    assert!(v.verify(Some(&tok("mario", "rossi", 111)), &users, at(100), &mut g).is_err(), "future");
    // A client that waited in the queue is judged by its arrival.
    let queued = tok("mario", "rossi", 100);
    assert!(v.verify(Some(&queued), &users, CheckTime { now: 125, arrived: 101 }, &mut g).is_ok());
    // Replay: the same token again, even within the window, is refused; a fresh one is not.
    let t = tok("mario", "rossi", 100);
    assert!(v.verify(Some(&t), &users, at(100), &mut g).is_ok());
    assert_eq!(v.verify(Some(&t), &users, at(101), &mut g), Err(AuthError::Replayed("mario".into())));
    assert!(v.verify(Some(&tok("mario", "rossi", 100)), &users, at(101), &mut g).is_ok());
    // Entries expire after ts + skew + hold.
    assert_eq!(g.len(), 3);
    assert!(v.verify(Some(&tok("mario", "rossi", 200)), &users, at(200), &mut g).is_ok());
    assert_eq!(g.len(), 1);
}
