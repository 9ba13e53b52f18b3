//! iperf 2's on-the-wire structures, sans I/O: every type encodes to and decodes from byte
//! slices, so the engine and the fuzzers share one parser and tests need no sockets.
//!
//! All integers are big-endian 32-bit words (a few 16-bit halves), as iperf 2 packs its
//! structs to 4-byte alignment and converts each field with `htonl`/`htons`.

mod ack;
mod flags;
mod header;
mod server_report;
mod udp;

pub use ack::{ACK_LEN, ClientAck};
pub use flags::*;
pub use header::{Amount, ClientHeader, EXT_LEN, HeaderExt, HeaderLen, TCP_EXT_HEADER_LEN, UDP_EXT_HEADER_LEN, V1_LEN};
pub use server_report::{SERVER_REPORT_LEN, SecUsec, ServerReport};
pub use udp::{UDP_HDR_LEN, UdpHeader};

/// Why a peer's bytes could not be decoded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WireError {
    /// Fewer bytes than the structure needs.
    #[error("iperf2 {what}: need {need} bytes, got {got}")]
    Short {
        /// The structure being read.
        what: &'static str,
        /// Bytes needed.
        need: usize,
        /// Bytes available.
        got: usize,
    },
    /// The header announces a length outside what iperf 2 allows.
    #[error("iperf2 test header announces {0} bytes (at most 256 are allowed)")]
    HeaderTooLong(usize),
}

/// Reads the big-endian u32 at `off`; callers check the length first.
pub(crate) fn be32(b: &[u8], off: usize) -> u32 {
    let mut w = [0u8; 4];
    w.copy_from_slice(&b[off..off + 4]);
    u32::from_be_bytes(w)
}

/// Reads the big-endian u16 at `off`.
pub(crate) fn be16(b: &[u8], off: usize) -> u16 {
    u16::from_be_bytes([b[off], b[off + 1]])
}

/// Fails with [`WireError::Short`] when `b` is shorter than `need`.
pub(crate) fn need(what: &'static str, b: &[u8], need: usize) -> Result<(), WireError> {
    if b.len() < need { Err(WireError::Short { what, need, got: b.len() }) } else { Ok(()) }
}
