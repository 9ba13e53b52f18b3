//! Lowering the client's flags into a [`ClientRun`]: the test parameters sent to the server,
//! then where and how to connect (the engine's [`ClientConfig`], built in [`lower`]), then what
//! the run does besides the test (save, `--why`, `--tui`, `--latency`, a series).

use crate::iperf::args::IperfArgs;
use crate::iperf::auth::ClientAuth;
use crate::iperf::files::Pending;
use crate::iperf::lower_common::{Common, interval, keepalive, port, unit};
use crate::iperf::run_spec::{ClientRun, Mode, ParamError, SaveTo};
use crate::iperf::{cnum, tos};
use crate::shared::endpoint::{family, split_host};
use crate::shared::parallel;
use std::time::Duration;
use wireperf_engine::ClientConfig;
use wireperf_protocol::params::UdpOffload;
use wireperf_protocol::params::limits;
use wireperf_protocol::{IperfErrno, Protocol, TestParams};
use wireperf_report::units::{parse_rate, parse_rate_burst, parse_size};

/// iperf3's UDP rate when `-b` is not given (1 Mbit/s in binary units: 1048576 bit/s).
const UDP_DEFAULT_RATE: u64 = 1024 * 1024;

/// A warning for a fractional `-t`: iperf3 reads whole seconds (`atoi`), so `-t 1.5` runs 1 s
/// and `-t 0.5` reads as 0, "no time limit", and runs until interrupted. wireperf reads it the
/// same way (a script written for iperf3 must get the same test), but says so on stderr, where
/// no `-J` consumer looks, because a test that never ends is not what anyone typing `0.5` meant.
fn fractional_time_warning(a: &IperfArgs) -> Option<String> {
    let t = a.time.filter(|t| t.fract() != 0.0 && *t > 0.0)?;
    Some(if t < 1.0 {
        format!(
            "-t {t} reads as 0 (whole seconds, as in iperf3), which means no time limit: the test runs until \
             interrupted; give -t 1 or more, or -n/-k for a shorter test"
        )
    } else {
        format!("-t {t} reads as {} s (whole seconds, as in iperf3)", t.trunc())
    })
}

/// The test parameters: what the client sends the server in its parameter exchange.
fn test_params(a: &IperfArgs) -> Result<TestParams, ParamError> {
    let udp = a.udp;
    let mut p = TestParams { protocol: if udp { Protocol::Udp } else { Protocol::Tcp }, ..Default::default() };
    if udp {
        // iperf3's UDP defaults: 1 Mbit/s, and a block size the engine picks from the control
        // connection's MSS (len 0 = not given).
        p.len = 0;
        p.bandwidth = Some(UDP_DEFAULT_RATE);
    }
    if let Some(t) = a.time {
        if !(0.0..=f64::from(limits::MAX_TIME)).contains(&t) {
            return Err(IperfErrno::DURATION.into());
        }
        p.time = t as u32;
    }
    if let Some(n) = &a.bytes {
        p.num = unit(parse_size(n))?;
        p.time = 0;
    }
    if let Some(k) = &a.blockcount {
        p.blockcount = unit(parse_size(k))?;
        p.time = 0;
    }
    if let Some(par) = a.parallel {
        p.parallel = parallel::check(par).map_err(|_| ParamError::Iperf(IperfErrno::NUMSTREAMS))?;
    }
    if let Some(l) = &a.length {
        let len = unit(parse_size(l))?;
        if udp && !(u64::from(limits::MIN_UDP_BLOCK)..=u64::from(limits::MAX_UDP_BLOCK)).contains(&len) {
            return Err(IperfErrno::UDPBLOCKSIZE.into());
        }
        if len > u64::from(limits::MAX_TCP_BLOCK) {
            return Err(IperfErrno::BLOCKSIZE.into());
        }
        if len == 0 {
            return Err(ParamError::Msg("block size must be at least 1 byte".into()));
        }
        p.len = len as u32;
    }
    if let Some(w) = &a.window {
        let w = unit(parse_size(w))?;
        if w > u64::from(limits::MAX_WINDOW) {
            return Err(IperfErrno::BUFSIZE.into());
        }
        p.window = Some(w as u32).filter(|&w| w > 0);
    }
    if let Some(m) = a.set_mss {
        if !(0..=i64::from(limits::MAX_MSS)).contains(&m) {
            return Err(IperfErrno::MSS.into());
        }
        p.mss = Some(m as u32).filter(|&m| m > 0);
    }
    if let Some(o) = a.omit {
        if !(0.0..=f64::from(limits::MAX_OMIT)).contains(&o) {
            return Err(IperfErrno::OMIT.into());
        }
        p.omit = o as u32;
    }
    if let Some(b) = &a.bitrate {
        let (rate, burst) = unit(parse_rate_burst(b))?;
        p.bandwidth = Some(rate).filter(|&r| r > 0);
        if let Some(burst) = burst {
            if !(1..=1000).contains(&burst) {
                return Err(IperfErrno::BURST.into());
            }
            p.burst = Some(burst);
        }
    }
    if let Some(t) = &a.tos {
        p.tos = Some(tos::parse_tos(t)?).filter(|&t| t != 0);
    }
    if let Some(d) = &a.dscp {
        p.tos = Some(tos::parse_dscp(d)?).filter(|&t| t != 0);
    }
    p.nodelay = a.no_delay;
    p.reverse = a.reverse;
    p.bidirectional = a.bidir;
    p.congestion = a.congestion.clone();
    p.title = a.title.clone();
    p.extra_data = a.extra_data.clone();
    p.get_server_output = a.get_server_output;
    p.wireperf_watch = a.why;
    // Asks a wireperf server for its latency echo; a stock server ignores the key.
    p.wireperf_latency = a.latency;
    p.repeating_payload = a.repeating_payload;
    p.udp_counters_64bit = a.udp_counters_64bit;
    p.dont_fragment = a.dont_fragment;
    p.zerocopy = a.zerocopy.is_some();
    p.skip_rx_copy = a.skip_rx_copy;
    p.mptcp = a.mptcp && !udp;
    if a.gsro && udp {
        // 3.22 sends the datagram size it will use (1460 when it picks one from the MSS) and
        // a GSO buffer of whole datagrams.
        p.offload = UdpOffload::requested(p.len);
    }
    if let Some(f) = &a.fq_rate {
        p.fqrate = Some(unit(parse_rate(f))?).filter(|&r| r > 0);
    }
    if let Some(l) = &a.flowlabel {
        p.flowlabel = Some(flow_label(l)?);
    }
    Ok(p)
}

/// `-L N` as 3.22 reads it: `strtol` (decimal, `0x` hex, `0` octal; the rest of the word is
/// ignored), 1..=0xfffff.
fn flow_label(s: &str) -> Result<i32, ParamError> {
    cnum::strtol(s)
        .and_then(|(n, _)| i32::try_from(n).ok())
        .filter(|&n| (1..=limits::MAX_FLOWLABEL as i32).contains(&n))
        .ok_or(ParamError::Iperf(IperfErrno::SETFLOW))
}

/// Lowers a client's flags (`a.client` is set).
pub(super) fn lower(a: &IperfArgs, common: Common) -> Result<(Mode, Pending), ParamError> {
    let Some(host_arg) = &a.client else { return Err(IperfErrno::NOROLE.into()) };
    if a.reverse && a.bidir {
        return Err(IperfErrno::REVERSEBIDIR.into());
    }
    if a.rcv_timeout.is_some() && !a.reverse && !a.bidir {
        return Err(IperfErrno(32).into());
    }
    let ends = [a.time.is_some(), a.bytes.is_some(), a.blockcount.is_some()].iter().filter(|&&x| x).count();
    if ends > 1 {
        return Err(IperfErrno::ENDCONDITIONS.into());
    }
    let mut p = test_params(a)?;
    p.server_affinity = common.server_affinity;
    let send_mode = crate::iperf::lower_zerocopy::send_mode(a.zerocopy.as_deref())?;
    let mut pending = Pending {
        client_auth: ClientAuth::from_flags(
            a.username.as_deref(),
            a.rsa_public_key_path.as_deref(),
            a.use_pkcs1_padding,
        )?,
        ..Pending::default()
    };
    let (host, host_dev) = split_host(host_arg);
    let cport = match a.cport {
        None => None,
        Some(c) => Some(u16::try_from(c).ok().filter(|&c| c > 0).ok_or(ParamError::Iperf(IperfErrno::BADPORT))?),
    };
    if let Some(f) = &a.file {
        if p.protocol == Protocol::Udp {
            return Err(IperfErrno::UDPFILETRANSFER.into());
        }
        // iperf3: without -t/-n/-k a sending client ends the test when the file is sent.
        if !p.reverse && ends == 0 {
            pending.send_file_size = Some(f.clone());
        }
    }
    let mut cfg = ClientConfig::new(host, p);
    cfg.file = a.file.as_ref().map(std::path::PathBuf::from);
    cfg.port = port(a)?;
    cfg.family = family(a.version4, a.version6);
    cfg.bind = common.bind;
    cfg.bind_dev = common.bind_dev.or(host_dev);
    cfg.cport = cport;
    cfg.connect_timeout = a.connect_timeout.map(Duration::from_millis);
    cfg.interval = interval(a)?;
    cfg.rcv_timeout = common.rcv_timeout;
    cfg.snd_timeout = common.snd_timeout;
    cfg.cntl_ka = keepalive(a)?;
    cfg.affinity = common.affinity;
    cfg.send_mode = send_mode.unwrap_or_default();
    let repeat = crate::iperf::repeat::config(a, &cfg.params, pending.send_file_size.is_some())?;
    let run = ClientRun {
        config: Box::new(cfg),
        output: common.out,
        save: save_to(a),
        why: a.why,
        tui: a.tui,
        latency: crate::shared::latency::config(a.latency, a.latency_interval),
        repeat,
        warnings: fractional_time_warning(a).into_iter().collect(),
    };
    Ok((Mode::Client(run), pending))
}

/// `--no-save`, `--db PATH`, or the default database.
fn save_to(a: &IperfArgs) -> SaveTo {
    match (a.no_save, &a.db) {
        (true, _) => SaveTo::No,
        (false, Some(db)) => SaveTo::At(db.clone()),
        (false, None) => SaveTo::Default,
    }
}
