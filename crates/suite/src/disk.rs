//! Sequential disk speed of a directory: is the disk slower than the network?
//!
//! The scp/Samba case: a file copy is as fast as the slower of disk and network. The test file
//! is written and read with `O_DIRECT` so the page cache does not flatter the disk; where the
//! filesystem refuses direct I/O (tmpfs), writes fall back to buffered I/O plus `fsync` and the
//! read figure is reported as unavailable rather than as a cached number.

use serde::Serialize;
use std::fs::{File, OpenOptions};
use std::io::{self, Read, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// Chunk size of each read and write: large enough to be sequential for any device.
const CHUNK: usize = 1024 * 1024;
/// Direct I/O needs buffers aligned to the logical block size; 4 KiB covers every disk.
const ALIGN: usize = 4096;

/// Disk figures of one directory.
#[derive(Clone, Debug, Serialize)]
pub struct DiskResult {
    /// The directory.
    pub path: PathBuf,
    /// Bytes written and read.
    pub bytes: u64,
    /// Sequential write, bytes/s (after `fsync`).
    pub write_bytes_per_sec: f64,
    /// Sequential read, bytes/s (`None` when only cached reads were possible).
    pub read_bytes_per_sec: Option<f64>,
    /// Whether `O_DIRECT` was used.
    pub direct_io: bool,
}

/// Why the disk check failed.
#[derive(Debug, thiserror::Error)]
pub enum DiskError {
    /// I/O on the test file failed.
    #[error("disk check in {path}: {err}")]
    Io {
        /// The test file.
        path: PathBuf,
        /// The error.
        err: io::Error,
    },
}

/// An aligned window into a heap buffer, without unsafe: over-allocate and start at the first
/// aligned byte.
fn aligned(buf: &mut Vec<u8>) -> &mut [u8] {
    buf.resize(CHUNK + ALIGN, 0xa5);
    let off = buf.as_ptr().align_offset(ALIGN).min(ALIGN);
    &mut buf[off..off + CHUNK]
}

fn open_write(path: &Path, direct: bool) -> io::Result<File> {
    let mut o = OpenOptions::new();
    o.write(true).create(true).truncate(true);
    if direct {
        o.custom_flags(libc::O_DIRECT);
    }
    o.open(path)
}

/// Writes then reads `bytes` (rounded up to whole MiB) in `dir`, and removes the file.
pub fn measure(dir: &Path, bytes: u64) -> Result<DiskResult, DiskError> {
    let path = dir.join(format!(".wireperf-disk-test-{}", std::process::id()));
    let io_err = |err| DiskError::Io { path: path.clone(), err };
    let chunks = bytes.div_ceil(CHUNK as u64).max(1);
    let mut backing = Vec::new();
    let buf = aligned(&mut backing);

    let (mut f, direct) = match open_write(&path, true) {
        Ok(f) => (f, true),
        Err(e) if e.raw_os_error() == Some(libc::EINVAL) => (open_write(&path, false).map_err(io_err)?, false),
        Err(e) => return Err(io_err(e)),
    };
    let result = (|| {
        let t = Instant::now();
        for _ in 0..chunks {
            f.write_all(buf)?;
        }
        f.sync_all()?;
        let write = (chunks * CHUNK as u64) as f64 / t.elapsed().as_secs_f64();
        drop(f);
        let read = if direct {
            let mut r = OpenOptions::new().read(true).custom_flags(libc::O_DIRECT).open(&path)?;
            let t = Instant::now();
            let mut total = 0u64;
            loop {
                let n = r.read(buf)?;
                if n == 0 {
                    break;
                }
                total += n as u64;
            }
            Some(total as f64 / t.elapsed().as_secs_f64())
        } else {
            None
        };
        Ok::<_, io::Error>((write, read))
    })();
    let _ = std::fs::remove_file(&path);
    let (write, read) = result.map_err(io_err)?;
    Ok(DiskResult {
        path: dir.to_path_buf(),
        bytes: chunks * CHUNK as u64,
        write_bytes_per_sec: write,
        read_bytes_per_sec: read,
        direct_io: direct,
    })
}

/// "your disk (145 MB/s) is slower than your network (294 MB/s)" when it is.
pub fn compare_with_network(d: &DiskResult, network_bps: f64) -> Option<String> {
    let net = network_bps / 8.0;
    let disk = d.read_bytes_per_sec.map_or(d.write_bytes_per_sec, |r| r.min(d.write_bytes_per_sec));
    (net > 0.0 && disk < net).then(|| {
        format!(
            "your disk ({:.0} MB/s) is slower than your network ({:.0} MB/s): file copies to or from {} will run at disk speed",
            disk / 1e6,
            net / 1e6,
            d.path.display()
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn measures_a_temp_dir_and_cleans_up() {
        let dir = tempfile::tempdir().unwrap();
        let r = measure(dir.path(), 8 * 1024 * 1024).unwrap();
        assert_eq!(r.bytes, 8 * 1024 * 1024);
        assert!(r.write_bytes_per_sec > 0.0);
        assert_eq!(r.direct_io, r.read_bytes_per_sec.is_some());
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0, "test file removed");
    }

    #[test]
    fn disk_slower_than_network_sentence() {
        let d = DiskResult {
            path: "/srv".into(),
            bytes: 1,
            write_bytes_per_sec: 145e6,
            read_bytes_per_sec: Some(300e6),
            direct_io: true,
        };
        let s = compare_with_network(&d, 294e6 * 8.0).unwrap();
        assert!(s.starts_with("your disk (145 MB/s) is slower than your network (294 MB/s)"), "{s}");
        assert!(compare_with_network(&d, 100e6 * 8.0).is_none());
    }

    #[test]
    fn missing_directory_is_an_error() {
        assert!(measure(Path::new("/nonexistent/wireperf"), 1).is_err());
    }
}
