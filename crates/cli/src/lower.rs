//! Lowering flags into engine configurations ("high args"), with iperf3's parameter checks.
//!
//! Errors here are parameter errors: printed as `wireperf: parameter error - <msg>` and
//! exit status 1, as iperf3 does. The messages are iperf3's where iperf3 has one.

use crate::args::IperfArgs;
use std::net::IpAddr;
use std::time::Duration;
use wireperf_engine::{ClientConfig, Family, ServerConfig};
use wireperf_protocol::params::limits;
use wireperf_protocol::{IperfErrno, Protocol, TestParams};
use wireperf_report::units::{parse_rate, parse_rate_burst, parse_size};
use wireperf_sys::sockopt::Keepalive;

/// A parameter error.
#[derive(Debug, thiserror::Error)]
pub enum ParamError {
    /// One of iperf3's parameter errors.
    #[error("{0}")]
    Iperf(IperfErrno),
    /// A message of our own.
    #[error("{0}")]
    Msg(String),
    /// An accepted flag whose feature is not built yet.
    #[error("{0} is not supported yet by wireperf")]
    NotYet(&'static str),
}

impl From<IperfErrno> for ParamError {
    fn from(e: IperfErrno) -> Self {
        ParamError::Iperf(e)
    }
}

/// How to print.
#[derive(Clone, Debug, Default)]
pub struct OutputOpts {
    /// `-J`.
    pub json: bool,
    /// `--json-stream`.
    pub json_stream: bool,
    /// `-V`.
    pub verbose: bool,
    /// `-f` letter; `a` = adaptive bits.
    pub format: char,
    /// `-T`.
    pub title: Option<String>,
    /// `--timestamps` format.
    pub timestamps: Option<String>,
    /// `--logfile`.
    pub logfile: Option<String>,
    /// `--forceflush`.
    pub forceflush: bool,
    /// `-d`.
    pub debug: bool,
}

/// What to run.
#[derive(Debug)]
pub enum Mode {
    /// `-c`.
    Client(Box<ClientConfig>, OutputOpts),
    /// `-s`.
    Server(Box<ServerConfig>, OutputOpts, ServerProcess),
    /// `-v`.
    Version,
}

/// Process-level server options.
#[derive(Debug, Default)]
pub struct ServerProcess {
    /// `-D`.
    pub daemon: bool,
    /// `-I`.
    pub pidfile: Option<String>,
    /// `--metrics ADDR`: serve the server's counters for Prometheus.
    pub metrics: Option<String>,
    /// `--log-format`: the operator's log records as text or JSON lines.
    pub log_format: crate::args_server::LogFormat,
}

/// iperf3's UDP rate when `-b` is not given (1 Mbit/s in binary units: 1048576 bit/s).
const UDP_DEFAULT_RATE: u64 = 1024 * 1024;

fn refuse_unsupported(a: &IperfArgs) -> Result<(), ParamError> {
    let checks: [(bool, &'static str); 4] = [
        (a.sctp, "SCTP (--sctp)"),
        (a.flowlabel.is_some(), "IPv6 flow labels (-L)"),
        (a.xbind.is_some() || a.nstreams.is_some(), "SCTP (-X/--nstreams)"),
        (a.mptcp, "MPTCP (-m)"),
    ];
    match checks.iter().find(|(on, _)| *on) {
        Some((_, what)) => Err(ParamError::NotYet(what)),
        None => Ok(()),
    }
}

fn output_opts(a: &IperfArgs) -> Result<OutputOpts, ParamError> {
    let format = match &a.format {
        None => 'a',
        Some(f) => match f.chars().next() {
            Some(c) if "kmgtKMGT".contains(c) => c,
            _ => return Err(IperfErrno::BADFORMAT.into()),
        },
    };
    Ok(OutputOpts {
        json: a.json || a.json_stream,
        json_stream: a.json_stream,
        verbose: a.verbose,
        format,
        title: a.title.clone(),
        timestamps: a.timestamps.clone(),
        logfile: a.logfile.clone(),
        forceflush: a.forceflush,
        debug: a.debug.is_some(),
    })
}

fn interval(a: &IperfArgs) -> Result<Option<Duration>, ParamError> {
    match a.interval {
        None => Ok(Some(Duration::from_secs(1))),
        Some(0.0) => Ok(None),
        Some(i) if (0.1..=60.0).contains(&i) => Ok(Some(Duration::from_secs_f64(i))),
        Some(_) => Err(IperfErrno::INTERVAL.into()),
    }
}

fn port(a: &IperfArgs) -> Result<u16, ParamError> {
    match a.port {
        None => Ok(wireperf_protocol::DEFAULT_PORT),
        Some(p) if (1..=65535).contains(&p) => Ok(p as u16),
        Some(_) => Err(IperfErrno::BADPORT.into()),
    }
}

fn family(a: &IperfArgs) -> Family {
    match (a.version4, a.version6) {
        (true, false) => Family::V4,
        (false, true) => Family::V6,
        _ => Family::Any,
    }
}

/// Splits `addr%dev` (or `%dev`) as iperf3's `-B` does.
fn bind(a: &IperfArgs) -> Result<(Option<IpAddr>, Option<String>), ParamError> {
    let Some(b) = &a.bind else { return Ok((None, None)) };
    let (addr, dev) = match b.split_once('%') {
        Some((addr, dev)) => (addr, Some(dev.to_string()).filter(|d| !d.is_empty())),
        None => (b.as_str(), None),
    };
    if addr.is_empty() {
        return Ok((None, dev));
    }
    let ip = addr
        .trim_start_matches('[')
        .trim_end_matches(']')
        .parse::<IpAddr>()
        .map_err(|_| ParamError::Msg(format!("-B needs a local IP address, not '{addr}'")))?;
    Ok((Some(ip), dev))
}

fn keepalive(a: &IperfArgs) -> Result<Option<Keepalive>, ParamError> {
    let Some(spec) = &a.cntl_ka else { return Ok(None) };
    let mut parts = spec.split('/').map(|s| {
        if s.is_empty() {
            Ok(None)
        } else {
            s.parse::<u32>().map(Some).map_err(|_| ParamError::Msg(format!("bad --cntl-ka value '{spec}'")))
        }
    });
    let mut next = || parts.next().unwrap_or(Ok(None));
    Ok(Some(Keepalive { idle_secs: next()?, interval_secs: next()?, count: next()? }))
}

fn unit<T>(r: Result<T, wireperf_report::units::UnitError>) -> Result<T, ParamError> {
    r.map_err(|e| ParamError::Msg(e.to_string()))
}

/// `-S` accepts decimal, `0x` hex and leading-zero octal, like strtol(…, 0).
fn parse_tos(s: &str) -> Result<i32, ParamError> {
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
fn parse_dscp(s: &str) -> Result<i32, ParamError> {
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

/// Lowers the flags into what to run.
pub fn lower(a: &IperfArgs) -> Result<Mode, ParamError> {
    if a.version {
        return Ok(Mode::Version);
    }
    match (a.server, &a.client) {
        (true, Some(_)) => return Err(IperfErrno::SERVCLIENT.into()),
        (false, None) => return Err(IperfErrno::NOROLE.into()),
        _ => {}
    }
    refuse_unsupported(a)?;
    let out = output_opts(a)?;
    let (bind_ip, bind_dev) = bind(a)?;
    let rcv_timeout = Duration::from_millis(a.rcv_timeout.unwrap_or(120_000));
    if a.rcv_timeout.is_some_and(|t| !(1..=86_400_000).contains(&t)) {
        return Err(IperfErrno::RCVTIMEOUT.into());
    }
    let snd_timeout = a.snd_timeout.map(Duration::from_millis);
    let affinity = match &a.affinity {
        None => None,
        Some(s) => Some(
            s.split(',')
                .next()
                .unwrap_or("")
                .parse::<usize>()
                .map_err(|_| ParamError::Msg(format!("bad -A value '{s}'")))?,
        ),
    };
    if a.server {
        let client_only = a.time.is_some()
            || a.bytes.is_some()
            || a.blockcount.is_some()
            || a.length.is_some()
            || a.parallel.is_some()
            || a.reverse
            || a.bidir
            || a.window.is_some()
            || a.congestion.is_some()
            || a.set_mss.is_some()
            || a.no_delay
            || a.bitrate.is_some()
            || a.omit.is_some()
            || a.title.is_some()
            || a.extra_data.is_some()
            || a.get_server_output
            || a.tos.is_some()
            || a.dscp.is_some()
            || a.cport.is_some()
            || a.connect_timeout.is_some()
            || a.repeating_payload
            || a.username.is_some()
            || a.rsa_public_key_path.is_some();
        if client_only {
            return Err(IperfErrno::CLIENTONLY.into());
        }
        let (bitrate_limit, window) = match &a.server_bitrate_limit {
            None => (None, 5),
            Some(s) => {
                let (rate, secs) = s.split_once('/').unwrap_or((s.as_str(), "5"));
                let secs = secs.parse::<u64>().ok().filter(|&w| (1..=3600).contains(&w)).ok_or_else(|| {
                    ParamError::Msg(format!("invalid averaging interval in --server-bitrate-limit '{s}'"))
                })?;
                (Some(unit(parse_rate(rate))?).filter(|&r| r > 0), secs)
            }
        };
        let mut cfg = ServerConfig {
            file: a.file.as_ref().map(std::path::PathBuf::from),
            port: port(a)?,
            bind: bind_ip,
            bind_dev,
            family: family(a),
            interval: interval(a)?,
            one_off: a.one_off,
            idle_timeout: a.idle_timeout.map(Duration::from_secs),
            rcv_timeout,
            snd_timeout,
            bitrate_limit,
            bitrate_limit_window: Duration::from_secs(window),
            cntl_ka: keepalive(a)?,
            affinity,
            ..Default::default()
        };
        crate::lower_server::apply(a, &mut cfg)?;
        let proc = ServerProcess {
            daemon: a.daemon,
            pidfile: a.pidfile.clone(),
            metrics: a.metrics.clone(),
            log_format: a.public.log_format.unwrap_or_default(),
        };
        return Ok(Mode::Server(Box::new(cfg), out, proc));
    }
    if a.daemon
        || a.pidfile.is_some()
        || a.one_off
        || a.server_bitrate_limit.is_some()
        || a.idle_timeout.is_some()
        || a.metrics.is_some()
        || crate::lower_server::server_only_given(a)
    {
        return Err(IperfErrno::SERVERONLY.into());
    }
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
        if par > i64::from(limits::MAX_STREAMS) {
            return Err(IperfErrno::NUMSTREAMS.into());
        }
        if par < 1 {
            return Err(ParamError::Msg("number of parallel streams must be at least 1".into()));
        }
        p.parallel = par as u32;
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
        if !(0..=9216).contains(&m) {
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
        p.tos = Some(parse_tos(t)?).filter(|&t| t != 0);
    }
    if let Some(d) = &a.dscp {
        p.tos = Some(parse_dscp(d)?).filter(|&t| t != 0);
    }
    p.nodelay = a.no_delay;
    p.reverse = a.reverse;
    p.bidirectional = a.bidir;
    p.congestion = a.congestion.clone();
    p.title = a.title.clone();
    p.extra_data = a.extra_data.clone();
    p.get_server_output = a.get_server_output;
    p.repeating_payload = a.repeating_payload;
    p.udp_counters_64bit = a.udp_counters_64bit;
    p.dont_fragment = a.dont_fragment;
    let send_mode = crate::lower_zerocopy::send_mode(a.zerocopy.as_deref())?;
    p.zerocopy = send_mode.is_some();
    p.skip_rx_copy = a.skip_rx_copy;
    if let Some(f) = &a.fq_rate {
        p.fqrate = Some(unit(parse_rate(f))?).filter(|&r| r > 0);
    }
    p.authtoken =
        crate::auth_cmd::client_token(a.username.as_deref(), a.rsa_public_key_path.as_deref(), a.use_pkcs1_padding)?;
    let (host, host_dev) = match host_arg.split_once('%') {
        // A link-local IPv6 address keeps its scope; `host%dev` otherwise binds to dev.
        Some((h, d)) if !h.contains(':') => (h.to_string(), Some(d.to_string())),
        _ => (host_arg.clone(), None),
    };
    let cport = match a.cport {
        None => None,
        Some(c) if (1..=65535).contains(&c) => Some(c as u16),
        Some(_) => return Err(IperfErrno::BADPORT.into()),
    };
    if let Some(f) = &a.file {
        if p.protocol == Protocol::Udp {
            return Err(IperfErrno::UDPFILETRANSFER.into());
        }
        // iperf3: without -t/-n/-k a sending client ends the test when the file is sent.
        if !p.reverse && ends == 0 {
            let size =
                std::fs::metadata(f).map_err(|e| ParamError::Msg(format!("unable to open -F file {f}: {e}")))?.len();
            p.num = size.max(1);
            p.time = 0;
        }
    }
    let mut cfg = ClientConfig::new(host, p);
    cfg.file = a.file.as_ref().map(std::path::PathBuf::from);
    cfg.port = port(a)?;
    cfg.family = family(a);
    cfg.bind = bind_ip;
    cfg.bind_dev = bind_dev.or(host_dev);
    cfg.cport = cport;
    cfg.connect_timeout = a.connect_timeout.map(Duration::from_millis);
    cfg.interval = interval(a)?;
    cfg.rcv_timeout = rcv_timeout;
    cfg.snd_timeout = snd_timeout;
    cfg.cntl_ka = keepalive(a)?;
    cfg.affinity = affinity;
    cfg.send_mode = send_mode.unwrap_or_default();
    Ok(Mode::Client(Box::new(cfg), out))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::args::Cli;
    use clap::Parser;

    fn parse(cmd: &str) -> Result<Mode, ParamError> {
        let cli = Cli::try_parse_from(cmd.split_whitespace()).unwrap();
        lower(&cli.iperf)
    }

    #[test]
    fn iperf3_parameter_errors() {
        let msg = |c: &str| parse(c).unwrap_err().to_string();
        assert_eq!(msg("wireperf"), "must either be a client (-c) or server (-s)");
        assert_eq!(msg("wireperf -s -c h"), "cannot be both server and client");
        assert_eq!(msg("wireperf -c h -f x"), "bad format specifier (valid formats are in the set [kmgtKMGT])");
        assert_eq!(msg("wireperf -c h -P 200"), "number of parallel streams too large (maximum = 128)");
        assert_eq!(msg("wireperf -c h -R --bidir"), "cannot be both reverse and bidirectional");
        assert_eq!(msg("wireperf -c h -t 2 -n 1M"), "only one test end condition (-t, -n, -k) may be specified");
        assert!(msg("wireperf -c h --sctp").contains("not supported yet"));
        assert_eq!(msg("wireperf -c h -u -l 8"), "block size invalid (minimum = 16 bytes, maximum = 65507 bytes)");
        assert_eq!(msg("wireperf -s -t 3"), "some option you are trying to set is client only");
    }

    #[test]
    fn sizes_and_rates_use_iperf3_bases() {
        let Ok(Mode::Client(c, _)) = parse("wireperf -c h -n 20M -l 128K -w 1M -b 100M/10") else { panic!() };
        assert_eq!((c.params.num, c.params.len, c.params.window), (20 * 1024 * 1024, 131072, Some(1 << 20)));
        assert_eq!((c.params.bandwidth, c.params.burst, c.params.time), (Some(100_000_000), Some(10), 0));
    }

    #[test]
    fn udp_defaults_and_flags() {
        let Ok(Mode::Client(c, _)) = parse("wireperf -c h -u") else { panic!() };
        let p = &c.params;
        assert_eq!((p.protocol, p.len, p.bandwidth), (Protocol::Udp, 0, Some(1_048_576)));
        let Ok(Mode::Client(c, _)) = parse(
            "wireperf -c h -u -b 0 -l 1448 --udp-counters-64bit --dont-fragment --fq-rate 10M --repeating-payload",
        ) else {
            panic!()
        };
        let p = &c.params;
        assert_eq!((p.len, p.bandwidth, p.fqrate), (1448, None, Some(10_000_000)));
        assert!(p.udp_counters_64bit && p.dont_fragment && p.repeating_payload);
        let Ok(Mode::Client(c, _)) = parse("wireperf -c h -u -b 200M/8") else { panic!() };
        assert_eq!((c.params.bandwidth, c.params.burst), (Some(200_000_000), Some(8)));
    }

    #[test]
    fn bind_with_device_and_dscp() {
        let Ok(Mode::Client(c, _)) = parse("wireperf -c h -B 127.0.0.1%lo --dscp ef") else { panic!() };
        assert_eq!(c.bind_dev.as_deref(), Some("lo"));
        assert_eq!(c.params.tos, Some(46 << 2));
        let Ok(Mode::Client(c, _)) = parse("wireperf -c h -S 0x10") else { panic!() };
        assert_eq!(c.params.tos, Some(16));
    }
}
