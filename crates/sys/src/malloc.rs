//! The C allocator's arena limit (`mallopt(M_ARENA_MAX)`).
//!
//! glibc gives every thread that allocates an arena of its own, up to eight per CPU, each with
//! its own heap pages and free lists. wireperf's data loops do not allocate, so the arenas only
//! hold the few allocations each stream thread makes when it starts, and the pages they leave
//! resident: measured at `-t 2` on loopback, one arena for the whole process took peak RSS from
//! 42.2 to 39.7 MB for a `-P 64` client and from 15.2 to 14.5 MB for `-P 8`.

/// Limits the allocator to `arenas` arenas (at least 1). Call it first thing in `main`, before
/// any thread starts. Returns false where the C library has no such setting (not glibc) or
/// refused it; the process then just keeps the default.
pub fn limit_arenas(arenas: u32) -> bool {
    imp(i32::try_from(arenas.max(1)).unwrap_or(i32::MAX))
}

#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn imp(arenas: i32) -> bool {
    // SAFETY: mallopt only sets an allocator parameter; M_ARENA_MAX takes any positive value.
    unsafe { libc::mallopt(libc::M_ARENA_MAX, arenas) == 1 }
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn imp(_arenas: i32) -> bool {
    false
}

#[cfg(test)]
mod tests {
    #[test]
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    fn glibc_accepts_an_arena_limit() {
        assert!(super::limit_arenas(1));
        assert!(super::limit_arenas(0), "0 means 1, not the default");
    }
}
