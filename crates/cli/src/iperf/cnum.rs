//! Numbers read the way iperf3 reads them with C's `atoi` and `strtol`.
//!
//! iperf3 parses most integer flags with `atoi`: leading blanks, an optional sign, then as many
//! digits as there are; the rest of the word is ignored and a word without digits reads as 0.
//! So `-P 2x` runs two streams and `-A 2/2` pins to core 2 (a line from iperf3's own release
//! checklist). A drop-in must accept the same lines; the range checks in the lowering then
//! refuse what iperf3 refuses (`-P 0`, `-M 40000`).

/// C's `atoi`: the leading decimal number of `s`, 0 when it has none. Saturates instead of
/// overflowing (C's behaviour there is undefined).
pub fn atoi(s: &str) -> Result<i64, String> {
    let (neg, body) = sign(s);
    Ok(digits_prefix(body, 10).map_or(0, |(n, _)| if neg { -n } else { n }))
}

/// C's `strtol(s, &end, 0)`: decimal, `0x` hex or `0` octal; `None` when no digit was read
/// (iperf3 checks `end == s` for that). Returns the number and the unread rest.
pub fn strtol(s: &str) -> Option<(i64, &str)> {
    let (neg, body) = sign(s);
    let (radix, digits) = match body.strip_prefix("0x").or_else(|| body.strip_prefix("0X")) {
        Some(h) if h.starts_with(|c: char| c.is_ascii_hexdigit()) => (16, h),
        _ if body.len() > 1 && body.starts_with('0') => (8, body),
        _ => (10, body),
    };
    let (n, rest) = digits_prefix(digits, radix)?;
    Some((if neg { -n } else { n }, rest))
}

/// Leading blanks and an optional sign, as C's number readers skip them.
fn sign(s: &str) -> (bool, &str) {
    let t = s.trim_start();
    match t.as_bytes().first() {
        Some(b'-') => (true, &t[1..]),
        Some(b'+') => (false, &t[1..]),
        _ => (false, t),
    }
}

fn digits_prefix(s: &str, radix: u32) -> Option<(i64, &str)> {
    let end = s.find(|c: char| !c.is_digit(radix)).unwrap_or(s.len());
    if end == 0 {
        return None;
    }
    let n = s[..end]
        .chars()
        .filter_map(|c| c.to_digit(radix))
        .fold(0i64, |acc, d| acc.saturating_mul(i64::from(radix)).saturating_add(i64::from(d)));
    Some((n, &s[end..]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn atoi_reads_the_leading_number_like_c() {
        for (s, n) in [("2", 2), ("2/2", 2), (" 12x", 12), ("-3", -3), ("+7", 7), ("abc", 0), ("", 0), ("0x10", 0)] {
            assert_eq!(atoi(s), Ok(n), "{s:?}");
        }
        assert_eq!(atoi("99999999999999999999999"), Ok(i64::MAX));
    }

    #[test]
    fn strtol_base_zero_like_c() {
        assert_eq!(strtol("2/2"), Some((2, "/2")));
        assert_eq!(strtol("0x1f,3"), Some((31, ",3")));
        assert_eq!(strtol("010"), Some((8, "")));
        assert_eq!(strtol("0"), Some((0, "")));
        assert_eq!(strtol("-1"), Some((-1, "")));
        assert_eq!(strtol("x"), None);
        assert_eq!(strtol(""), None);
    }
}
