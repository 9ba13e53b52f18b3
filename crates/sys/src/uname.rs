//! `uname(2)`: the `system_info` line iperf3 prints in verbose text output and in the `-J`
//! `start.system_info` key.
//!
//! iperf3 builds it as `"%s %s %s %s %s"` of `sysname nodename release version machine`
//! (`iperf_util.c: get_system_info`), e.g.
//! `Linux vm 6.18.44-fc-v509 #1 SMP PREEMPT_DYNAMIC @0 x86_64`. Unlike `uname -a` there is no
//! trailing `GNU/Linux`.

use std::ffi::CStr;
use std::io;
use std::mem::MaybeUninit;

/// The five fields of `struct utsname`, decoded lossily as UTF-8.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Uname {
    /// Operating system name, e.g. `Linux`.
    pub sysname: String,
    /// Network node (host) name.
    pub nodename: String,
    /// Kernel release, e.g. `6.18.44-fc-v509`.
    pub release: String,
    /// Kernel version/build string, e.g. `#1 SMP PREEMPT_DYNAMIC @0`.
    pub version: String,
    /// Hardware name, e.g. `x86_64`.
    pub machine: String,
}

impl Uname {
    /// The iperf3 `system_info` line: `"{sysname} {nodename} {release} {version} {machine}"`.
    pub fn system_info(&self) -> String {
        format!("{} {} {} {} {}", self.sysname, self.nodename, self.release, self.version, self.machine)
    }
}

/// Calls `uname(2)`.
pub fn uname() -> io::Result<Uname> {
    let mut uts = MaybeUninit::<libc::utsname>::zeroed();
    // SAFETY: `uts` is a valid, writable `utsname`.
    let rc = unsafe { libc::uname(uts.as_mut_ptr()) };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: uname succeeded and filled the struct (which started zeroed; all char arrays).
    let uts = unsafe { uts.assume_init() };
    Ok(Uname {
        sysname: field(&uts.sysname),
        nodename: field(&uts.nodename),
        release: field(&uts.release),
        version: field(&uts.version),
        machine: field(&uts.machine),
    })
}

/// The iperf3 `system_info` line for this machine. `uname(2)` cannot fail with a valid buffer;
/// should it ever, this returns an empty string (iperf3 would print its zeroed buffer, also
/// empty) rather than failing the test run over a cosmetic line.
pub fn system_info() -> String {
    uname().map(|u| u.system_info()).unwrap_or_default()
}

/// Decodes one NUL-terminated `c_char` array; a missing terminator takes the whole array.
fn field(chars: &[libc::c_char]) -> String {
    let bytes: Vec<u8> = chars.iter().map(|&c| c.to_ne_bytes()[0]).collect();
    match CStr::from_bytes_until_nul(&bytes) {
        Ok(s) => s.to_string_lossy().into_owned(),
        Err(_) => String::from_utf8_lossy(&bytes).into_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_uname_command() {
        let ours = system_info();
        assert!(ours.starts_with("Linux "), "{ours}");
        // `uname -s -n -r -v -m` prints the same five fields, space-separated, in this order.
        match std::process::Command::new("uname").arg("-snrvm").output() {
            Ok(out) if out.status.success() => {
                let theirs = String::from_utf8_lossy(&out.stdout).trim_end().to_string();
                assert_eq!(ours, theirs);
            }
            _ => eprintln!("uname(1) not available; compared nothing"),
        }
    }

    #[test]
    fn fields_are_non_empty_and_joined_in_order() {
        let u = uname().unwrap();
        for f in [&u.sysname, &u.release, &u.version, &u.machine] {
            assert!(!f.is_empty());
        }
        let line = u.system_info();
        assert_eq!(line.split(' ').next(), Some(u.sysname.as_str()));
        assert!(line.ends_with(&u.machine));
    }

    #[test]
    fn field_without_terminator_is_taken_whole() {
        let raw: Vec<libc::c_char> = b"abc".iter().map(|&b| b as libc::c_char).collect();
        assert_eq!(field(&raw), "abc");
        let raw: Vec<libc::c_char> = b"ab\0zz".iter().map(|&b| b as libc::c_char).collect();
        assert_eq!(field(&raw), "ab");
    }
}
