//! Reading the parameters as a 3.22 server does: typed keys, a wrongly typed value read as
//! absent, and each range check answered with 3.22's `i_errno`.

use super::{DEFAULT_TCP_BLKSIZE, DEFAULT_UDP_DATAGRAM, ParamsError, Protocol, TestParams, UdpOffload, limits};
use crate::IperfErrno;
use crate::json_num::{as_i64, as_u64};
use serde_json::Value;
use std::collections::HashMap;

impl TestParams {
    /// Reads a parameters object the way a 3.22 server does, range checks included.
    ///
    /// Key lookup is case-insensitive (cJSON's `GetObjectItem` is). A flag is on when its key
    /// is present with the right type (a boolean, even `false`, for `reverse`; a number for
    /// `get_server_output`); a value of the wrong type reads as absent.
    pub fn from_json(v: &Value) -> Result<Self, ParamsError> {
        let obj = v.as_object().ok_or(ParamsError::NoProtocol)?;
        let keys: HashMap<String, &Value> = obj.iter().map(|(k, v)| (k.to_ascii_lowercase(), v)).collect();
        let get = |k: &str| keys.get(k).copied();
        let boolean = |k: &str| get(k).is_some_and(Value::is_boolean);
        let number = |k: &str| get(k).filter(|v| v.is_number());
        let nonzero = |k: &str| number(k).and_then(as_i64).is_some_and(|n| n != 0);
        let string = |k: &str| get(k).and_then(Value::as_str).map(str::to_owned);
        // 3.22's check for one numeric key: None when absent (or not a number).
        let ranged = |k: &'static str, lo: i64, hi: i64, i_errno: IperfErrno| -> Result<Option<i64>, ParamsError> {
            match number(k).and_then(as_i64) {
                None => Ok(None),
                Some(x) if (lo..=hi).contains(&x) => Ok(Some(x)),
                Some(x) => Err(ParamsError::OutOfRange { key: k, value: x.to_string(), i_errno }),
            }
        };
        let small = |k: &'static str, lo: u32, hi: u32, e: IperfErrno| -> Result<Option<u32>, ParamsError> {
            Ok(ranged(k, i64::from(lo), i64::from(hi), e)?.map(|x| x as u32))
        };
        // Counts 3.22 only requires to be non-negative (IERECVPARAMS otherwise).
        let count = |k: &'static str| -> Result<Option<u64>, ParamsError> {
            ranged(k, 0, i64::MAX, IperfErrno::RECVPARAMS)?;
            Ok(number(k).and_then(as_u64))
        };
        let any = u32::MAX;

        let protocol = match (boolean("tcp"), boolean("udp"), boolean("sctp")) {
            (_, true, _) => Protocol::Udp,
            (true, _, _) => Protocol::Tcp,
            (_, _, true) => return Err(ParamsError::Sctp),
            _ => return Err(ParamsError::NoProtocol),
        };
        let off = UdpOffload::default();
        let offload = UdpOffload {
            gso: small("gso", 0, any, IperfErrno::RECVPARAMS)?.is_some_and(|g| g != 0),
            gso_dg_size: small("gso_dg_size", 0, any, IperfErrno::RECVPARAMS)?.unwrap_or(off.gso_dg_size),
            gso_bf_size: small("gso_bf_size", 0, any, IperfErrno::RECVPARAMS)?.unwrap_or(off.gso_bf_size),
            gro: small("gro", 0, 1, IperfErrno::RECVPARAMS)?.is_some_and(|g| g != 0),
            gro_bf_size: small("gro_bf_size", 0, any, IperfErrno::RECVPARAMS)?.unwrap_or(off.gro_bf_size),
        };
        let p = TestParams {
            protocol,
            omit: small("omit", 0, limits::MAX_OMIT, IperfErrno::OMIT)?.unwrap_or(0),
            time: small("time", 0, limits::MAX_TIME, IperfErrno::DURATION)?.unwrap_or(0),
            num: count("num")?.unwrap_or(0),
            blockcount: count("blockcount")?.unwrap_or(0),
            mss: small("mss", 0, limits::MAX_MSS, IperfErrno::MSS)?.filter(|&m| m != 0),
            nodelay: boolean("nodelay"),
            parallel: small("parallel", 1, limits::MAX_STREAMS, IperfErrno::NUMSTREAMS)?.unwrap_or(1),
            reverse: boolean("reverse"),
            bidirectional: boolean("bidirectional"),
            window: small("window", 0, limits::MAX_WINDOW, IperfErrno::BUFSIZE)?.filter(|&w| w != 0),
            len: small("len", 0, any, IperfErrno::BLOCKSIZE)?.unwrap_or(match protocol {
                Protocol::Tcp => DEFAULT_TCP_BLKSIZE,
                Protocol::Udp => DEFAULT_UDP_DATAGRAM,
            }),
            bandwidth: count("bandwidth")?.filter(|&b| b != 0),
            fqrate: count("fqrate")?.filter(|&b| b != 0),
            pacing_timer: small("pacing_timer", 0, any, IperfErrno::RECVPARAMS)?,
            burst: small("burst", 1, limits::MAX_BURST, IperfErrno::BURST)?,
            tos: small("tos", 0, 255, IperfErrno::BADTOS)?.map(|t| t as i32).filter(|&t| t != 0),
            flowlabel: small("flowlabel", 1, limits::MAX_FLOWLABEL, IperfErrno::SETFLOW)?.map(|f| f as i32),
            server_affinity: small("server_affinity", 0, limits::MAX_CPU, IperfErrno::AFFINITY)?,
            title: string("title"),
            extra_data: string("extra_data"),
            congestion: string("congestion"),
            congestion_used: string("congestion_used"),
            get_server_output: number("get_server_output").is_some(),
            udp_counters_64bit: number("udp_counters_64bit").is_some(),
            repeating_payload: number("repeating_payload").is_some(),
            zerocopy: nonzero("zerocopy"),
            dont_fragment: nonzero("dont_fragment"),
            authtoken: string("authtoken"),
            skip_rx_copy: nonzero("skip_rx_copy"),
            mptcp: boolean("mptcp"),
            offload,
            client_version: string("client_version").unwrap_or_default(),
            wireperf_watch: nonzero("wireperf_watch"),
            wireperf_latency: nonzero("wireperf_latency"),
        };
        let bad_len = |e| Err(ParamsError::OutOfRange { key: "len", value: p.len.to_string(), i_errno: e });
        if p.protocol == Protocol::Tcp && !(1..=limits::MAX_TCP_BLOCK).contains(&p.len) {
            return bad_len(IperfErrno::BLOCKSIZE);
        }
        // 3.22 lets a UDP length of 0 through to its default; wireperf needs a real size.
        if p.protocol == Protocol::Udp && !(limits::MIN_UDP_BLOCK..=limits::MAX_UDP_BLOCK).contains(&p.len) {
            return bad_len(IperfErrno::UDPBLOCKSIZE);
        }
        Ok(p)
    }
}
