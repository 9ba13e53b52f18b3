//! `-S` / `--dscp` values: iperf3's TOS byte spellings and the DSCP names.

use crate::iperf::run_spec::ParamError;
use wireperf_protocol::IperfErrno;

/// `-S` accepts decimal, `0x` hex and leading-zero octal, like strtol(…, 0).
pub fn parse_tos(s: &str) -> Result<i32, ParamError> {
    let v = if let Some(h) = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        i64::from_str_radix(h, 16)
    } else if s.len() > 1 && s.starts_with('0') {
        i64::from_str_radix(&s[1..], 8)
    } else {
        s.parse::<i64>()
    };
    match v {
        Ok(v) if (0..=255).contains(&v) => Ok(v as i32),
        _ => Err(IperfErrno::BADTOS.into()),
    }
}

/// `--dscp` accepts 0..63 or the usual names; the TOS byte is DSCP << 2.
pub fn parse_dscp(s: &str) -> Result<i32, ParamError> {
    let named = [
        ("cs0", 0),
        ("cs1", 8),
        ("cs2", 16),
        ("cs3", 24),
        ("cs4", 32),
        ("cs5", 40),
        ("cs6", 48),
        ("cs7", 56),
        ("af11", 10),
        ("af12", 12),
        ("af13", 14),
        ("af21", 18),
        ("af22", 20),
        ("af23", 22),
        ("af31", 26),
        ("af32", 28),
        ("af33", 30),
        ("af41", 34),
        ("af42", 36),
        ("af43", 38),
        ("ef", 46),
        ("va", 44),
        ("le", 1),
    ];
    let lower = s.to_ascii_lowercase();
    let v = match named.iter().find(|(n, _)| *n == lower) {
        Some((_, v)) => *v,
        None => match parse_tos(s) {
            Ok(v) if v < 64 => v,
            _ => return Err(ParamError::Msg(format!("bad DSCP value '{s}' (0-63 or a name such as ef, af11, cs1)"))),
        },
    };
    Ok(v << 2)
}
