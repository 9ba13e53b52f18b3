//! A device driver's own statistics (what `ethtool -S IF` prints), read with the `SIOCETHTOOL`
//! ioctl in the calling process.
//!
//! `--why` reads them at the start and the end of a test on both hosts. As an `ethtool`
//! child each read cost about 1.3 ms of CPU (fork, exec, the dynamic loader, one netlink
//! exchange), which on a one-core host is CPU the test's own two seconds do not get; the three
//! ioctls here cost microseconds.
//!
//! The legacy ioctl interface is the one every kernel since 2.6 answers (ethtool's netlink
//! interface has no statistics-strings call of its own for driver counters). Three calls:
//! `ETHTOOL_GSSET_INFO` for the count, `ETHTOOL_GSTRINGS` for the names, `ETHTOOL_GSTATS` for
//! the values.

use std::io;
use std::mem::size_of;

/// `SIOCETHTOOL` (`<linux/sockios.h>`).
const SIOCETHTOOL: libc::c_ulong = 0x8946;
/// `ETHTOOL_GSTRINGS`, `ETHTOOL_GSTATS`, `ETHTOOL_GSSET_INFO` (`<linux/ethtool.h>`).
const ETHTOOL_GSTRINGS: u32 = 0x1b;
const ETHTOOL_GSTATS: u32 = 0x1d;
const ETHTOOL_GSSET_INFO: u32 = 0x37;
/// `ETH_SS_STATS`: the string set of the statistics.
const ETH_SS_STATS: u32 = 1;
/// `ETH_GSTRING_LEN`: each name's fixed width, NUL-padded.
const ETH_GSTRING_LEN: usize = 32;
/// A driver with more counters than this is not believed (the largest drivers have a few
/// thousand: per-queue counters of a many-queue NIC).
const MAX_STATS: usize = 1 << 16;
/// Room kept beyond the count the driver gave. The kernel writes as many entries as the
/// driver has *now*, not as many as the caller asked for, so a count that grew between the
/// calls (a channel count changed meanwhile) must still fit.
const SLACK: usize = 256;

/// `struct ifreq` as `SIOCETHTOOL` reads it: the name, then a pointer to the command.
#[repr(C)]
struct IfReq {
    name: [libc::c_char; libc::IFNAMSIZ],
    data: *mut libc::c_void,
    /// The rest of the union (`struct ifmap` is the largest member, 24 bytes on 64-bit).
    _pad: [u8; 16],
}

/// The driver statistics of `iface` in the driver's order: `Ok(empty)` when the driver keeps
/// none (loopback, most virtual devices), an error when the device does not exist or the
/// kernel refuses the call.
pub fn driver_stats(iface: &str) -> io::Result<Vec<(String, u64)>> {
    let fd = Fd::socket()?;
    // ETHTOOL_GSSET_INFO: u32 cmd, u32 reserved, u64 sset_mask, then one u32 per set asked.
    let mut info = [0u64; 3];
    write_u32(&mut info, 0, ETHTOOL_GSSET_INFO);
    info[1] = 1 << ETH_SS_STATS;
    match fd.ethtool(iface, info.as_mut_ptr().cast()) {
        Ok(()) => {}
        Err(e) if e.raw_os_error() == Some(libc::EOPNOTSUPP) => return Ok(Vec::new()),
        Err(e) => return Err(e),
    }
    // The kernel clears the bit of a set the driver does not have.
    if info[1] & (1 << ETH_SS_STATS) == 0 {
        return Ok(Vec::new());
    }
    let count = read_u32(&info, 16) as usize;
    if count == 0 {
        return Ok(Vec::new());
    }
    if count > MAX_STATS {
        return Err(io::Error::new(io::ErrorKind::InvalidData, format!("{iface}: {count} driver statistics")));
    }
    let room = count + SLACK;

    // ETHTOOL_GSTRINGS: u32 cmd, u32 string_set, u32 len, then len names of 32 bytes.
    let mut names = vec![0u64; (12 + room * ETH_GSTRING_LEN).div_ceil(8)];
    write_u32(&mut names, 0, ETHTOOL_GSTRINGS);
    write_u32(&mut names, 4, ETH_SS_STATS);
    write_u32(&mut names, 8, count as u32);
    fd.ethtool(iface, names.as_mut_ptr().cast())?;
    let named = (read_u32(&names, 8) as usize).min(room);

    // ETHTOOL_GSTATS: u32 cmd, u32 n_stats, then n_stats u64 values.
    let mut values = vec![0u64; 1 + room];
    write_u32(&mut values, 0, ETHTOOL_GSTATS);
    write_u32(&mut values, 4, count as u32);
    fd.ethtool(iface, values.as_mut_ptr().cast())?;
    let valued = (read_u32(&values, 4) as usize).min(room);

    // SAFETY: `names` is a live, initialised buffer of at least 12 + room * 32 bytes.
    let bytes = unsafe { std::slice::from_raw_parts(names.as_ptr().cast::<u8>(), names.len() * 8) };
    let out = (0..named.min(valued))
        .map(|i| {
            let raw = &bytes[12 + i * ETH_GSTRING_LEN..12 + (i + 1) * ETH_GSTRING_LEN];
            let end = raw.iter().position(|&b| b == 0).unwrap_or(raw.len());
            (String::from_utf8_lossy(&raw[..end]).into_owned(), values[1 + i])
        })
        .collect();
    Ok(out)
}

/// The `u32` at byte `at` of a `u64` buffer (the ethtool structs are `u32` fields in native
/// byte order; the buffers are `u64` so the `u64` values after them are aligned).
fn read_u32(buf: &[u64], at: usize) -> u32 {
    let word = buf[at / 8].to_ne_bytes();
    let o = at % 8;
    u32::from_ne_bytes([word[o], word[o + 1], word[o + 2], word[o + 3]])
}

fn write_u32(buf: &mut [u64], at: usize, v: u32) {
    let mut word = buf[at / 8].to_ne_bytes();
    let o = at % 8;
    word[o..o + 4].copy_from_slice(&v.to_ne_bytes());
    buf[at / 8] = u64::from_ne_bytes(word);
}

/// A datagram socket, the handle `SIOCETHTOOL` is issued on; closed on drop.
struct Fd(libc::c_int);

impl Fd {
    fn socket() -> io::Result<Fd> {
        // SAFETY: socket(2) takes no pointers; the result is checked.
        let fd = unsafe { libc::socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0) };
        if fd < 0 { Err(io::Error::last_os_error()) } else { Ok(Fd(fd)) }
    }

    /// One `SIOCETHTOOL` on `iface` with the command buffer at `data`, which must be large
    /// enough for everything the command writes back.
    fn ethtool(&self, iface: &str, data: *mut libc::c_void) -> io::Result<()> {
        let name = iface.as_bytes();
        if name.is_empty() || name.len() >= libc::IFNAMSIZ || name.contains(&0) {
            return Err(io::Error::new(io::ErrorKind::InvalidInput, format!("not an interface name: {iface:?}")));
        }
        let mut req = IfReq { name: [0; libc::IFNAMSIZ], data, _pad: [0; 16] };
        for (d, s) in req.name.iter_mut().zip(name) {
            *d = *s as libc::c_char;
        }
        // SAFETY: `req` is a valid ifreq with a NUL-terminated name; `data` points at a buffer
        // the callers size for the command (with SLACK for a count that grew), and it outlives
        // the call.
        let rc = unsafe { libc::ioctl(self.0, SIOCETHTOOL as _, &mut req as *mut IfReq) };
        if rc < 0 { Err(io::Error::last_os_error()) } else { Ok(()) }
    }
}

impl Drop for Fd {
    fn drop(&mut self) {
        // SAFETY: the descriptor is ours and closed once.
        unsafe { libc::close(self.0) };
    }
}

// The kernel copies a whole `struct ifreq` (40 bytes on 64-bit, 32 on 32-bit ARM): ours must
// be at least as large on every target we build for.
const _: () =
    assert!(size_of::<IfReq>() >= size_of::<libc::ifreq>(), "IfReq is smaller than the C library's struct ifreq");

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_keeps_no_driver_statistics() {
        assert_eq!(driver_stats("lo").unwrap(), Vec::new());
    }

    #[test]
    fn a_missing_device_or_a_bad_name_is_an_error_not_a_panic() {
        assert!(driver_stats("wpnosuchdev0").is_err());
        assert!(driver_stats("").is_err());
        assert!(driver_stats("a-name-far-too-long-for-ifnamsiz").is_err());
        assert!(driver_stats("nul\0in").is_err());
    }

    /// Deletes the veth pair when the test ends, passed or not.
    struct Veth(String);
    impl Drop for Veth {
        fn drop(&mut self) {
            let _ = std::process::Command::new("ip").args(["link", "del", &self.0]).status();
        }
    }

    #[test]
    fn a_veth_reads_as_ethtool_prints_it() {
        // A down veth pair in this namespace (its counters stay still), read both ways.
        let name = format!("wpet{}", std::process::id() % 100_000);
        let made = std::process::Command::new("ip")
            .args(["link", "add", &name, "type", "veth", "peer", "name", &format!("{name}p")])
            .status()
            .expect("ip runs");
        assert!(made.success(), "creating the veth pair needs root and iproute2");
        let _gone = Veth(name.clone());
        let ours = driver_stats(&name).unwrap();
        let text = std::process::Command::new("ethtool").args(["-S", &name]).output().expect("ethtool runs");
        let theirs: Vec<(String, u64)> = String::from_utf8_lossy(&text.stdout)
            .lines()
            .skip(1)
            .filter_map(|l| {
                let (k, v) = l.split_once(':')?;
                Some((k.trim().to_string(), v.trim().parse().ok()?))
            })
            .collect();
        assert!(!ours.is_empty(), "a veth keeps per-queue statistics");
        assert_eq!(ours, theirs);
    }

    #[test]
    fn the_u32_fields_land_where_the_kernel_reads_them() {
        let mut b = [0u64; 2];
        write_u32(&mut b, 4, 0xdead_beef);
        write_u32(&mut b, 8, 7);
        assert_eq!((read_u32(&b, 0), read_u32(&b, 4), read_u32(&b, 8)), (0, 0xdead_beef, 7));
    }
}
