//! `-c HOST[%dev]`, `-B ADDR[%dev]` and `-4`/`-6`, read the way iperf3 reads them.

use std::net::IpAddr;
use wireperf_engine::Family;

/// `-4` / `-6`: both or neither mean "any family", as in iperf3.
pub fn family(v4: bool, v6: bool) -> Family {
    match (v4, v6) {
        (true, false) => Family::V4,
        (false, true) => Family::V6,
        _ => Family::Any,
    }
}

/// Splits `-c host%dev` into the host and the device to bind to. A link-local IPv6 address
/// (`fe80::1%eth0`) keeps its `%scope`: the resolver needs it.
pub fn split_host(arg: &str) -> (String, Option<String>) {
    match arg.split_once('%') {
        Some((h, d)) if !h.contains(':') => (h.to_string(), Some(d.to_string())),
        _ => (arg.to_string(), None),
    }
}

/// Splits `-B addr%dev` (or `%dev`, or `[v6addr]`) into a local address and a device; the error
/// is the message to show.
pub fn split_bind(b: &str) -> Result<(Option<IpAddr>, Option<String>), String> {
    let (addr, dev) = match b.split_once('%') {
        Some((addr, dev)) => (addr, Some(dev.to_string()).filter(|d| !d.is_empty())),
        None => (b, None),
    };
    if addr.is_empty() {
        return Ok((None, dev));
    }
    let ip = addr
        .trim_start_matches('[')
        .trim_end_matches(']')
        .parse::<IpAddr>()
        .map_err(|_| format!("-B needs a local IP address, not '{addr}'"))?;
    Ok((Some(ip), dev))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_device_and_link_local_scope() {
        assert_eq!(split_host("h%eth0"), ("h".into(), Some("eth0".into())));
        assert_eq!(split_host("fe80::1%eth0"), ("fe80::1%eth0".into(), None));
        assert_eq!(split_host("h"), ("h".into(), None));
    }

    #[test]
    fn bind_address_and_device() {
        assert_eq!(split_bind("127.0.0.1%lo").unwrap(), (Some([127, 0, 0, 1].into()), Some("lo".into())));
        assert_eq!(split_bind("%lo").unwrap(), (None, Some("lo".into())));
        assert_eq!(split_bind("[::1]").unwrap().0, Some("::1".parse().unwrap()));
        assert_eq!(split_bind("nohost").unwrap_err(), "-B needs a local IP address, not 'nohost'");
    }

    #[test]
    fn family_flags() {
        assert_eq!(family(true, false), Family::V4);
        assert_eq!(family(false, true), Family::V6);
        assert_eq!(family(true, true), Family::Any);
    }
}
