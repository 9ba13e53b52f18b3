//! The buffers stream threads write from and read into, and the block they repeat.
//!
//! They are private anonymous mappings, not `Vec`s, so that a server left running gives their
//! memory back when a test ends. After the first large `free`, glibc raises its mmap threshold
//! and serves later megabyte buffers from per-thread arenas that it keeps; with 1 MiB per call
//! (see `spec::call_bytes`) a long-running server's RSS grew by about 5 MiB over a dozen
//! tests. A mapping is also page-aligned, which `sendfile`/`MSG_ZEROCOPY` prefer.
//!
//! A sender that writes with `write()` keeps only [`UNIT`] of its block in memory and sends a
//! many-block call as a `writev` of that piece repeated ([`write_repeated`]): the kernel copies
//! the same bytes, and a 1 MiB call no longer needs 1 MiB of resident memory per stream.
//! `sendfile` and `MSG_ZEROCOPY` need the whole call in one piece and keep the full buffer.

use memmap2::MmapMut;
use std::io::{self, IoSlice, Write};

/// How much of the repeated block a `write()` sender keeps: at least this, in whole blocks
/// (one default 128 KiB block), so a call of up to 1 MiB is a handful of pieces.
pub(crate) const UNIT: usize = 128 * 1024;

/// The most pieces one `writev` takes; a call that would need more is sent in part, and the
/// caller's loop sends the rest, as after any short write.
const MAX_PIECES: usize = 16;

/// How many copies of a `block`-byte block to keep for calls of `per_call` blocks: all of them
/// when the call must be one piece (`whole`: sendfile, MSG_ZEROCOPY), else enough for [`UNIT`].
pub(crate) fn copies_kept(block: usize, per_call: usize, whole: bool) -> usize {
    let per_call = per_call.max(1);
    if whole { per_call } else { UNIT.div_ceil(block.max(1)).min(per_call) }
}

/// Writes bytes `off..end` of a call made of `unit` repeated back to back (`unit` a whole
/// number of blocks): one `write` when the range lies in one copy, else one `writev` of up to
/// [`MAX_PIECES`] slices of it. Returns what the kernel took, as `write` does.
pub(crate) fn write_repeated(mut w: impl Write, unit: &[u8], off: usize, end: usize) -> io::Result<usize> {
    let u = unit.len();
    if end <= u || u == 0 {
        return w.write(unit.get(off..end.min(u)).unwrap_or_default());
    }
    let mut pieces = [IoSlice::new(&[]); MAX_PIECES];
    let (mut n, mut pos) = (0, off);
    while pos < end && n < MAX_PIECES {
        let start = pos % u;
        let len = (u - start).min(end - pos);
        pieces[n] = IoSlice::new(unit.get(start..start + len).unwrap_or_default());
        n += 1;
        pos += len;
    }
    w.write_vectored(&pieces[..n])
}

/// The most a shared worker's receive buffer holds (unless one block is larger).
///
/// It is scratch space that all the worker's streams read into and nobody reads back, and the
/// kernel's copies touch all of it, so it is resident memory in full: two receiving workers at
/// `-P 8` held 1 MiB with 512 KiB each. 256 KiB is two default blocks per `read`, and halving
/// it costs a receiving worker one more system call per 256 KiB (docs/performance.md, Memory).
pub(crate) const WORKER_RECEIVE: usize = 256 * 1024;

/// The length of a shared worker's receive buffer for streams whose calls are `call_bytes`
/// long with `block`-byte blocks: at most [`WORKER_RECEIVE`], never less than one block.
pub(crate) fn worker_receive_len(call_bytes: usize, block: usize) -> usize {
    call_bytes.min(WORKER_RECEIVE).max(block).max(1)
}

/// A zero-filled buffer of `len` bytes (at least one), unmapped when dropped.
pub(crate) fn zeroed(len: usize) -> io::Result<MmapMut> {
    MmapMut::map_anon(len.max(1))
}

/// A buffer holding `copies` back-to-back copies of `block`.
pub(crate) fn repeated(block: &[u8], copies: usize) -> io::Result<MmapMut> {
    let mut buf = zeroed(block.len().max(1) * copies.max(1))?;
    if !block.is_empty() {
        for chunk in buf.chunks_exact_mut(block.len()) {
            chunk.copy_from_slice(block);
        }
    }
    Ok(buf)
}

/// Fills a block the way iperf3 does: random bytes, or `0123456789` repeated.
pub(crate) fn payload(len: usize, repeating: bool) -> Vec<u8> {
    let mut buf = vec![0u8; len];
    if repeating {
        for (i, b) in buf.iter_mut().enumerate() {
            *b = b'0' + (i % 10) as u8;
        }
    } else if getrandom::fill(&mut buf).is_err() {
        // Content does not matter to any receiver; a fixed pattern is an acceptable fallback.
        for (i, b) in buf.iter_mut().enumerate() {
            *b = (i as u8).wrapping_mul(151);
        }
    }
    buf
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repeated_lays_copies_back_to_back() {
        let b = repeated(b"abc", 4).unwrap();
        assert_eq!(&b[..], b"abcabcabcabc");
        assert_eq!(zeroed(0).unwrap().len(), 1);
        assert!(zeroed(4096).unwrap().iter().all(|&x| x == 0));
    }

    #[test]
    fn a_kept_unit_is_whole_blocks_unless_the_call_must_be_one_piece() {
        const K: usize = 1024;
        assert_eq!(copies_kept(128 * K, 8, false), 1, "one default block");
        assert_eq!(copies_kept(128 * K, 8, true), 8, "sendfile needs the whole call");
        assert_eq!(copies_kept(1000, 1048, false), 132, "small blocks: at least UNIT");
        assert_eq!(copies_kept(1000, 3, false), 3, "never more than a call");
        assert_eq!(copies_kept(4096 * K, 1, false), 1, "a block above UNIT is kept whole");
        assert_eq!(copies_kept(0, 0, false), 1, "degenerate input does not panic");
    }

    #[test]
    fn a_shared_receive_buffer_is_at_most_256k_and_at_least_one_block() {
        const K: usize = 1024;
        assert_eq!(worker_receive_len(512 * K, 128 * K), 256 * K, "-P 8: 512 KiB calls, 256 KiB read");
        assert_eq!(worker_receive_len(128 * K, 128 * K), 128 * K, "-P 128: calls of one block");
        assert_eq!(worker_receive_len(8 * K, 8 * K), 8 * K, "small calls keep a small buffer");
        assert_eq!(worker_receive_len(1024 * K, 1024 * K), 1024 * K, "a larger block is read whole");
        assert_eq!(worker_receive_len(0, 0), 1, "degenerate input does not panic");
    }

    #[test]
    fn repeated_writes_send_the_same_bytes_as_one_big_buffer() {
        let block = b"0123456789";
        let unit = repeated(block, 3).unwrap();
        let full = repeated(block, 40).unwrap();
        assert_eq!(unit.len(), 30);
        for (off, end) in [(0, 30), (5, 25), (0, 400), (7, 399), (29, 31), (100, 100), (395, 400)] {
            let mut out = Vec::new();
            let mut pos = off;
            while pos < end {
                let n = write_repeated(&mut out, &unit, pos, end).unwrap();
                assert!(n > 0, "{off}..{end}: progress");
                pos += n;
            }
            assert_eq!(out, &full[off..end], "{off}..{end}");
        }
        // A call needing more than MAX_PIECES pieces goes out in part.
        let mut out = Vec::new();
        assert_eq!(write_repeated(&mut out, &unit, 0, 30 * (MAX_PIECES + 4)).unwrap(), 30 * MAX_PIECES);
    }
}
