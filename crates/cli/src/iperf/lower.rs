//! Lowering flags into the run they describe ("high args"), with iperf3's parameter checks.
//!
//! Errors here are parameter errors: printed as `wireperf: parameter error - <msg>` and
//! exit status 1, as iperf3 does. The messages are iperf3's where iperf3 has one.
//!
//! The lowering is pure: it reads no file and asks nothing on the terminal. What needs I/O
//! (the size of a `-F` file, the RSA keys and the password) is returned as [`Pending`] for
//! [`crate::iperf::files`] to finish. This file holds the role check and picks the role;
//! [`crate::iperf::lower_common`] the flags both roles share, [`crate::iperf::lower_client`]
//! and [`crate::iperf::lower_server`] the rest. What comes out is a
//! [`crate::iperf::run_spec::Mode`].

use crate::iperf::args::IperfArgs;
use crate::iperf::files::Pending;
use crate::iperf::lower_common::common;
use crate::iperf::roles::RoleFlags;
use crate::iperf::run_spec::{Mode, ParamError};
use wireperf_protocol::IperfErrno;

/// Why `--sctp`, `-X` and `--nstreams` are refused.
pub const SCTP_REFUSED: &str =
    "SCTP (--sctp, -X, --nstreams) is not supported by wireperf: it has TCP, MPTCP (-m) and UDP streams only";

fn refuse_unsupported(a: &IperfArgs) -> Result<(), ParamError> {
    if a.sctp || a.xbind.is_some() || a.nstreams.is_some() {
        return Err(ParamError::Refused(SCTP_REFUSED));
    }
    Ok(())
}

/// Lowers the flags into what to run, and what is left to read from files.
pub fn lower(a: &IperfArgs, roles: &RoleFlags) -> Result<(Mode, Pending), ParamError> {
    if a.version {
        return Ok((Mode::Version, Pending::default()));
    }
    match (a.server, &a.client) {
        (true, Some(_)) => return Err(IperfErrno::SERVCLIENT.into()),
        (false, None) => return Err(IperfErrno::NOROLE.into()),
        _ => {}
    }
    // The role check comes first, as in iperf3 (`-s --sctp` is "client only" there too).
    if a.server && !roles.client_only.is_empty() {
        // wireperf's series flags are named: iperf3's words would leave the user guessing.
        return Err(crate::iperf::repeat::refused_by_server(&roles.client_only)
            .unwrap_or(ParamError::Iperf(IperfErrno::CLIENTONLY)));
    }
    if !a.server && !roles.server_only.is_empty() {
        return Err(IperfErrno::SERVERONLY.into());
    }
    refuse_unsupported(a)?;
    let common = common(a)?;
    // `-A N,M` asks the server for CPU M: a client's flag (iperf3's `client_flag`).
    if a.server && common.server_affinity.is_some() {
        return Err(IperfErrno::CLIENTONLY.into());
    }
    if a.server {
        return crate::iperf::lower_server::lower(a, common);
    }
    crate::iperf::lower_client::lower(a, common)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::iperf::run_spec::{ClientRun, ServerRun};
    use wireperf_protocol::Protocol;

    fn parse(cmd: &str) -> Result<Mode, ParamError> {
        let (cli, roles) = crate::cli::parse_from(cmd.split_whitespace()).unwrap();
        lower(&cli.iperf, &roles).map(|(mode, _)| mode)
    }

    #[test]
    fn a_fractional_time_is_read_as_iperf3_reads_it_and_said_so() {
        let warn = |c: &str| match parse(c) {
            Ok(Mode::Client(run)) => run.warnings.into_iter().next(),
            other => panic!("{c}: {other:?}"),
        };
        let Ok(Mode::Client(ClientRun { config: half, .. })) = parse("wireperf -c h -t 0.5") else {
            panic!("-t 0.5 refused")
        };
        assert_eq!(half.params.time, 0, "iperf3's atoi reads -t 0.5 as 0");
        assert!(warn("wireperf -c h -t 0.5").is_some_and(|w| w.contains("runs until interrupted")));
        assert_eq!(warn("wireperf -c h -t 1.5").as_deref(), Some("-t 1.5 reads as 1 s (whole seconds, as in iperf3)"));
        assert_eq!(warn("wireperf -c h -t 2"), None);
        assert_eq!(warn("wireperf -c h -t 0"), None);
        assert_eq!(warn("wireperf -c h"), None);
    }

    #[test]
    fn iperf3_parameter_errors() {
        let msg = |c: &str| parse(c).unwrap_err().to_string();
        assert_eq!(msg("wireperf"), "must either be a client (-c) or server (-s)");
        assert_eq!(msg("wireperf -s -c h"), "cannot be both server and client");
        assert_eq!(msg("wireperf -c h -f x"), "bad format specifier (valid formats are in the set [kmgtKMGT])");
        assert_eq!(msg("wireperf -c h -P 200"), "invalid number of parallel streams (min = 1, max = 128)");
        assert_eq!(msg("wireperf -c h -R --bidir"), "cannot be both reverse and bidirectional");
        assert_eq!(msg("wireperf -c h -t 2 -n 1M"), "only one test end condition (-t, -n, -k) may be specified");
        assert_eq!(msg("wireperf -c h --sctp"), SCTP_REFUSED);
        assert_eq!(msg("wireperf -c h -P 0"), "invalid number of parallel streams (min = 1, max = 128)");
        assert_eq!(msg("wireperf -c h -M 32768"), "TCP MSS too large (maximum = 32767 bytes)");
        assert_eq!(msg("wireperf -c h -u -F Cargo.toml"), "cannot transfer file using UDP");
        assert_eq!(msg("wireperf -c h -A x"), "unable to set CPU affinity");
        assert_eq!(msg("wireperf -c h -A 1,2000"), "unable to set CPU affinity");
        assert_eq!(msg("wireperf -s -A 1,1"), "some option you are trying to set is client only");
        assert_eq!(msg("wireperf -c h -L 0"), "unable to set IPv6 flow label");
        assert_eq!(msg("wireperf -c h -L 0x100000"), "unable to set IPv6 flow label");
        assert_eq!(msg("wireperf -c h -L x"), "unable to set IPv6 flow label");
        assert_eq!(msg("wireperf -s -L 1"), "some option you are trying to set is client only");
        assert_eq!(
            msg("wireperf -c h --cntl-ka=10/5/3"),
            "control connection Keepalive period should be larger than the full retry period (interval * count)"
        );
        assert_eq!(msg("wireperf -s --gsro"), "some option you are trying to set is client only");
        assert_eq!(msg("wireperf -s --skip-rx-copy"), "some option you are trying to set is client only");
        assert_eq!(msg("wireperf -c h -u -l 8"), "block size invalid (minimum = 16 bytes, maximum = 65507 bytes)");
        assert_eq!(msg("wireperf -s -t 3"), "some option you are trying to set is client only");
    }

    #[test]
    fn affinity_and_flow_label_reach_the_parameters() {
        let client = |cmd: &str| match parse(cmd) {
            Ok(Mode::Client(ClientRun { config: c, .. })) => c,
            other => panic!("{cmd}: {other:?}"),
        };
        let c = client("wireperf -c h -A 1,0");
        assert_eq!((c.affinity, c.params.server_affinity), (Some(1), Some(0)));
        let c = client("wireperf -c h -A 0");
        assert_eq!((c.affinity, c.params.server_affinity), (Some(0), None));
        // atoi reads an empty M as 0, as in 3.22.
        assert_eq!(client("wireperf -c h -A 1,").params.server_affinity, Some(0));
        // strtol: hex, and trailing junk ignored (`-L 5x` runs in 3.22).
        assert_eq!(client("wireperf -c h -L 0x12345").params.flowlabel, Some(0x12345));
        assert_eq!(client("wireperf -c h -L 5x").params.flowlabel, Some(5));
        assert_eq!(client("wireperf -c h").params.flowlabel, None);
        let Ok(Mode::Server(ServerRun { config: s, .. })) = parse("wireperf -s -A 1") else { panic!() };
        assert_eq!(s.affinity, Some(1));
    }

    /// 3.22: the later of `-u` and `-m` sets the protocol.
    #[test]
    fn the_later_of_udp_and_mptcp_wins() {
        let params = |cmd: &str| match parse(cmd) {
            Ok(Mode::Client(ClientRun { config: c, .. })) => (c.params.protocol, c.params.mptcp),
            other => panic!("{cmd}: {other:?}"),
        };
        assert_eq!(params("wireperf -c h -u -m"), (Protocol::Tcp, true));
        assert_eq!(params("wireperf -c h --udp --mptcp"), (Protocol::Tcp, true));
        assert_eq!(params("wireperf -c h -m -u"), (Protocol::Udp, false));
        assert_eq!(params("wireperf -c h -um"), (Protocol::Tcp, true));
        assert_eq!(params("wireperf -c h -u"), (Protocol::Udp, false));
        assert_eq!(params("wireperf -c h -m"), (Protocol::Tcp, true));
    }

    #[test]
    fn sizes_and_rates_use_iperf3_bases() {
        let Ok(Mode::Client(ClientRun { config: c, .. })) = parse("wireperf -c h -n 20M -l 128K -w 1M -b 100M/10")
        else {
            panic!()
        };
        assert_eq!((c.params.num, c.params.len, c.params.window), (20 * 1024 * 1024, 131072, Some(1 << 20)));
        assert_eq!((c.params.bandwidth, c.params.burst, c.params.time), (Some(100_000_000), Some(10), 0));
    }

    #[test]
    fn udp_defaults_and_flags() {
        let Ok(Mode::Client(ClientRun { config: c, .. })) = parse("wireperf -c h -u") else { panic!() };
        let p = &c.params;
        assert_eq!((p.protocol, p.len, p.bandwidth), (Protocol::Udp, 0, Some(1_048_576)));
        let Ok(Mode::Client(ClientRun { config: c, .. })) = parse(
            "wireperf -c h -u -b 0 -l 1448 --udp-counters-64bit --dont-fragment --fq-rate 10M --repeating-payload",
        ) else {
            panic!()
        };
        let p = &c.params;
        assert_eq!((p.len, p.bandwidth, p.fqrate), (1448, None, Some(10_000_000)));
        assert!(p.udp_counters_64bit && p.dont_fragment && p.repeating_payload);
        let Ok(Mode::Client(ClientRun { config: c, .. })) = parse("wireperf -c h -u -b 200M/8") else { panic!() };
        assert_eq!((c.params.bandwidth, c.params.burst), (Some(200_000_000), Some(8)));
    }

    #[test]
    fn bind_with_device_and_dscp() {
        let Ok(Mode::Client(ClientRun { config: c, .. })) = parse("wireperf -c h -B 127.0.0.1%lo --dscp ef") else {
            panic!()
        };
        assert_eq!(c.bind_dev.as_deref(), Some("lo"));
        assert_eq!(c.params.tos, Some(46 << 2));
        let Ok(Mode::Client(ClientRun { config: c, .. })) = parse("wireperf -c h -S 0x10") else { panic!() };
        assert_eq!(c.params.tos, Some(16));
    }
}
