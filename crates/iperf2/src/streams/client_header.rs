//! The test header a client sends first on each TCP stream (and in each UDP datagram), from
//! its configuration. A leaf of its own because the TCP client and the UDP stream both send
//! it, and the UDP stream must not import the client that starts it.

use crate::config::{ClientConfig, Mode, Proto, Stop};
use crate::wire::*;

/// The header a 2.1.8 client would send for this configuration.
pub(crate) fn client_header(cfg: &ClientConfig) -> ClientHeader {
    let mut flags = HEADER_EXTEND;
    let mut upper = 0u16;
    match cfg.mode {
        Mode::Normal => {}
        Mode::Dual => flags |= HEADER_VERSION1 | RUN_NOW,
        Mode::Tradeoff => flags |= HEADER_VERSION1,
        Mode::FullDuplex => {
            flags |= HEADER_VERSION2;
            upper |= UPPER_FULLDUPLEX;
        }
        Mode::Reverse => {
            flags |= HEADER_VERSION2;
            upper |= UPPER_REVERSE;
        }
    }
    if cfg.proto == Proto::Udp {
        flags |= HEADER_SEQNO64B;
    }
    let amount = match cfg.stop {
        Stop::Time(d) => Amount::Centis((d.as_millis() / 10).min(0x7FFF_FFFF) as u32),
        Stop::Bytes(b) => Amount::Bytes(b.min(0x7FFF_FFFF) as u32),
    };
    ClientHeader {
        flags,
        num_threads: cfg.threads as i32,
        port: cfg.listen_port.unwrap_or(cfg.port),
        buf_len: cfg.len.map_or(0, |l| l as i32),
        win_band: 0,
        amount,
        ext: Some(HeaderExt {
            upper_flags: upper,
            version_u: ClientHeader::VERSION_U,
            version_l: ClientHeader::VERSION_L,
            rate: if cfg.proto == Proto::Udp { cfg.rate } else { 0 },
            ..HeaderExt::default()
        }),
    }
}
