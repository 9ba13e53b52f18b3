//! Flag bits of the first header word and of the extension's 16-bit "upper flags".
//!
//! The first word of every iperf 2 test header says which optional parts follow; a word with
//! none of the `VERSION1`/`VERSION2`/`EXTEND` bits is not a header at all (a 1.7/2.0.5-era
//! client, or plain payload), which is why the server must look at it before counting bytes.

/// Legacy 1.7/2.0 block present; with `RUN_NOW` it asks for `-d`, without for `-r`.
pub const HEADER_VERSION1: u32 = 0x8000_0000;
/// The 2.0.13+ extension block (version, rate, upper flags) follows the v1 block.
pub const HEADER_EXTEND: u32 = 0x4000_0000;
/// UDP: per-packet test flags are in use.
pub const HEADER_UDPTESTS: u32 = 0x2000_0000;
/// A permit key follows the header.
pub const HEADER_KEYCHECK: u32 = 0x1000_0000;
/// UDP sequence numbers are 64-bit (the upper half in the 4th word).
pub const HEADER_SEQNO64B: u32 = 0x0800_0000;
/// 2.1 tests on one socket (`--reverse`, `--full-duplex`): read the upper flags.
pub const HEADER_VERSION2: u32 = 0x0400_0000;
/// The client wants the server's ack with its version (`-X`).
pub const HEADER_V2PEERDETECT: u32 = 0x0200_0000;
/// A bounce-back test (`--bounceback`), a different header entirely.
pub const HEADER_BOUNCEBACK: u32 = 0x0080_0000;
/// The header length is carried in [`HEADER_LEN_MASK`].
pub const HEADER_LEN_BIT: u32 = 0x0001_0000;
/// Header length in bytes, shifted left by one.
pub const HEADER_LEN_MASK: u32 = 0x0000_01FE;
/// Largest header length a server accepts.
pub const MAX_HEADER_LEN: usize = 256;
/// `-d`: the server's reverse client starts at once (unset: after the forward test, `-r`).
pub const RUN_NOW: u32 = 0x0000_0001;
/// Server report: the transit (latency) extension is meaningful (`-e` server).
pub const SERVER_HEADER_EXTEND: u32 = 0x4000_0000;

/// Upper flags: UDP isochronous.
pub const UPPER_ISOCH: u16 = 0x0001;
/// Upper flags: no final UDP exchange.
pub const UPPER_NOUDPFIN: u16 = 0x0008;
/// Upper flags: `--trip-times`.
pub const UPPER_TRIPTIME: u16 = 0x0010;
/// Upper flags: rate is in packets per second.
pub const UPPER_UNITS_PPS: u16 = 0x0080;
/// Upper flags: `--reverse` (the server sends on this socket).
pub const UPPER_REVERSE: u16 = 0x0400;
/// Upper flags: `--full-duplex` (both send on this socket).
pub const UPPER_FULLDUPLEX: u16 = 0x0800;
/// Upper flags: `--txstart-time` (start time words are valid).
pub const UPPER_EPOCH_START: u16 = 0x1000;

/// Message type of the server's header ack.
pub const MSG_CLIENT_HDR_ACK: u32 = 2;
