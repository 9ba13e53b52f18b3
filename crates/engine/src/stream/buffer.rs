//! The buffers stream threads write from and read into, and the block they repeat.
//!
//! They are private anonymous mappings, not `Vec`s, so that a server left running gives their
//! memory back when a test ends. After the first large `free`, glibc raises its mmap threshold
//! and serves later megabyte buffers from per-thread arenas that it keeps; with 1 MiB per call
//! (see `spec::call_bytes`) a long-running server's RSS grew by about 5 MiB over a dozen
//! tests. A mapping is also page-aligned, which `sendfile`/`MSG_ZEROCOPY` prefer.

use memmap2::MmapMut;
use std::io;

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
}
