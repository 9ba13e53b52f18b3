//! CPU pinning for `-A n` (`--affinity`).
//!
//! iperf3 calls `sched_setaffinity(0, …)` once in its main thread before creating stream threads;
//! on Linux pid 0 means "the calling thread", and threads created afterwards inherit the mask.
//! The engine can do the same (pin the session thread early) or pin each stream thread itself.

use std::io;
use std::mem::{MaybeUninit, size_of};

/// Highest CPU number + 1 that a `cpu_set_t` can hold (`CPU_SETSIZE`, 1024 with glibc).
pub const MAX_CPUS: usize = libc::CPU_SETSIZE as usize;

/// Pins the calling thread to CPU `cpu` (`sched_setaffinity(0, {cpu})`).
///
/// Errors: `InvalidInput` if `cpu >= MAX_CPUS`; `EINVAL` from the kernel if the CPU is offline,
/// absent, or outside this process's cpuset.
pub fn set_thread_affinity(cpu: usize) -> io::Result<()> {
    set_thread_cpus(&[cpu])
}

/// Lets the calling thread run on exactly `cpus` (`sched_setaffinity(0, cpus)`); errors as
/// [`set_thread_affinity`] (an empty list is the kernel's `EINVAL`).
pub fn set_thread_cpus(cpus: &[usize]) -> io::Result<()> {
    set_task_cpus(0, cpus)
}

/// The calling thread's kernel id (`gettid`), for [`set_task_cpus`] from another thread.
pub fn current_tid() -> i32 {
    // SAFETY: gettid takes no arguments and cannot fail.
    unsafe { libc::gettid() }
}

/// [`set_thread_cpus`] for the thread `tid` of this process (0 = the calling thread): pins a
/// thread that is blocked elsewhere (say in a `read`) from the thread that decides.
pub fn set_task_cpus(tid: i32, cpus: &[usize]) -> io::Result<()> {
    if let Some(&cpu) = cpus.iter().find(|&&c| c >= MAX_CPUS) {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("CPU {cpu} is beyond the {MAX_CPUS} CPUs a cpu_set_t can name"),
        ));
    }
    let set = MaybeUninit::<libc::cpu_set_t>::zeroed();
    // SAFETY: a zeroed cpu_set_t is the empty set (CPU_ZERO); it is plain integers.
    let mut set = unsafe { set.assume_init() };
    for &cpu in cpus {
        // SAFETY: CPU_SET only writes a bit inside `set`; `cpu < CPU_SETSIZE` was checked
        // above, so the bit index is in bounds.
        unsafe { libc::CPU_SET(cpu, &mut set) };
    }
    // SAFETY: `set` is a valid cpu_set_t of the size passed; `tid` 0 is the calling thread,
    // any other value a thread id the kernel checks.
    let rc = unsafe { libc::sched_setaffinity(tid, size_of::<libc::cpu_set_t>(), &set) };
    if rc == 0 { Ok(()) } else { Err(io::Error::last_os_error()) }
}

/// The calling thread pinned to one CPU until this value is dropped, which gives the thread
/// back the CPUs it had before. iperf3 pins its process for a test (`-A`, and a server for the
/// client's `-A N,M`) and unpins after it; Linux iperf3 then allows every CPU, this restores
/// the mask saved before, so a `taskset` the user gave is kept.
#[derive(Debug)]
#[must_use = "the thread is unpinned when this is dropped"]
pub struct Pinned {
    saved: Vec<usize>,
    /// Not `Send`: the mask must be restored by the thread that was pinned.
    _thread: std::marker::PhantomData<*const ()>,
}

impl Pinned {
    /// Pins the calling thread to `cpu`, remembering its mask. Threads it creates meanwhile
    /// inherit the pin. Errors as [`set_thread_affinity`], with the mask unchanged.
    pub fn to(cpu: usize) -> io::Result<Pinned> {
        let saved = thread_affinity()?;
        set_thread_affinity(cpu)?;
        Ok(Pinned { saved, _thread: std::marker::PhantomData })
    }
}

impl Drop for Pinned {
    fn drop(&mut self) {
        // Nothing to report to: a thread that cannot widen its mask again keeps the pin.
        let _ = set_thread_cpus(&self.saved);
    }
}

/// The CPUs the calling thread may run on (`sched_getaffinity(0)`), in ascending order.
/// Useful to restore a mask, and to tell a user which CPUs `-A` accepts.
pub fn thread_affinity() -> io::Result<Vec<usize>> {
    let mut set = MaybeUninit::<libc::cpu_set_t>::zeroed();
    // SAFETY: `set` is a writable cpu_set_t of the size passed; pid 0 is the calling thread.
    let rc = unsafe { libc::sched_getaffinity(0, size_of::<libc::cpu_set_t>(), set.as_mut_ptr()) };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: sched_getaffinity succeeded and filled the set (which started zeroed).
    let set = unsafe { set.assume_init() };
    // SAFETY: CPU_ISSET only reads a bit of `set`; every `c < CPU_SETSIZE` is in bounds.
    Ok((0..MAX_CPUS).filter(|&c| unsafe { libc::CPU_ISSET(c, &set) }).collect())
}

/// The CPU the calling thread is running on right now (`sched_getcpu`).
pub fn current_cpu() -> io::Result<usize> {
    // SAFETY: sched_getcpu takes no arguments and only returns a value or -1.
    let rc = unsafe { libc::sched_getcpu() };
    usize::try_from(rc).map_err(|_| io::Error::last_os_error())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pin_to_each_allowed_cpu_in_a_fresh_thread() {
        // Run in a spawned thread so the test harness thread keeps its mask.
        std::thread::spawn(|| {
            let allowed = thread_affinity().unwrap();
            assert!(!allowed.is_empty());
            for &cpu in &allowed {
                set_thread_affinity(cpu).unwrap();
                assert_eq!(thread_affinity().unwrap(), vec![cpu]);
                // The scheduler migrates us off other CPUs before the call returns.
                assert_eq!(current_cpu().unwrap(), cpu);
            }
        })
        .join()
        .unwrap();
    }

    #[test]
    fn threads_inherit_the_mask() {
        std::thread::spawn(|| {
            let first = thread_affinity().unwrap()[0];
            set_thread_affinity(first).unwrap();
            let child = std::thread::spawn(thread_affinity).join().unwrap().unwrap();
            assert_eq!(child, vec![first]);
        })
        .join()
        .unwrap();
    }

    #[test]
    fn pinned_restores_the_saved_mask() {
        std::thread::spawn(|| {
            let before = thread_affinity().unwrap();
            let last = *before.last().unwrap();
            {
                let _pin = Pinned::to(last).unwrap();
                assert_eq!(thread_affinity().unwrap(), vec![last]);
                let child = std::thread::spawn(thread_affinity).join().unwrap().unwrap();
                assert_eq!(child, vec![last], "a thread made while pinned inherits the pin");
            }
            assert_eq!(thread_affinity().unwrap(), before);
            assert!(Pinned::to(MAX_CPUS - 1).is_err());
            assert_eq!(thread_affinity().unwrap(), before, "a failed pin leaves the mask");
        })
        .join()
        .unwrap();
    }

    #[test]
    fn another_thread_is_pinned_by_its_id() {
        let cpu = *thread_affinity().unwrap().last().unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        let (go, wait) = std::sync::mpsc::channel::<()>();
        let t = std::thread::spawn(move || {
            tx.send(current_tid()).unwrap();
            wait.recv().unwrap();
            thread_affinity().unwrap()
        });
        set_task_cpus(rx.recv().unwrap(), &[cpu]).unwrap();
        go.send(()).unwrap();
        assert_eq!(t.join().unwrap(), vec![cpu]);
    }

    #[test]
    fn out_of_range_cpus_are_errors() {
        std::thread::spawn(|| {
            let before = thread_affinity().unwrap();
            let e = set_thread_affinity(MAX_CPUS).unwrap_err();
            assert_eq!(e.kind(), io::ErrorKind::InvalidInput);
            // CPU 1023 does not exist on a test machine: the kernel refuses (EINVAL).
            let e = set_thread_affinity(MAX_CPUS - 1).unwrap_err();
            assert_eq!(e.raw_os_error(), Some(libc::EINVAL));
            assert_eq!(thread_affinity().unwrap(), before, "mask unchanged on error");
        })
        .join()
        .unwrap();
    }
}
