//! How a TCP stream takes bytes off the wire: `read()`, or with `--skip-rx-copy` a
//! `recv(MSG_TRUNC)` that discards the bytes in the kernel without copying them. One call,
//! shared by the stream thread's loop (`tcp`) and the shared worker's receivers.

use std::io;
use std::net::TcpStream;
use wireperf_sys::zerocopy as zc;

/// One receive call: `read()` into `buf`, or with `skip` a `recv(MSG_TRUNC)` that discards up
/// to `buf.len()` bytes in the kernel.
pub(crate) fn receive(sock: &TcpStream, buf: &mut [u8], skip: bool) -> io::Result<usize> {
    if skip { zc::recv_discard(sock, buf) } else { io::Read::read(&mut &*sock, buf) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stream::send_path::tests::pair;
    use std::io::Write;

    #[test]
    fn receive_with_skip_counts_the_same_bytes() {
        let (mut tx, rx) = pair();
        let w = std::thread::spawn(move || tx.write_all(&vec![7u8; 1_000_000]).unwrap());
        let mut buf = vec![0u8; 131_072];
        let mut total = 0;
        loop {
            match receive(&rx, &mut buf, true).unwrap() {
                0 => break,
                n => total += n,
            }
        }
        w.join().unwrap();
        assert_eq!(total, 1_000_000);
        assert!(buf.iter().all(|&b| b == 0), "MSG_TRUNC must not copy into the buffer");
    }
}
