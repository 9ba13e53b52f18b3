//! wireperf-sys: safe wrappers around the Linux syscalls the wireperf engine needs.
//!
//! This is the only crate in the workspace that may contain `unsafe` code. Every other crate
//! reaches the kernel through the safe functions here, so the whole unsafe surface of wireperf
//! can be audited in one place. All wrappers return [`std::io::Error`] (the errno the kernel
//! gave) and never panic.
//!
//! # Layout
//!
//! - [`mod@tcp_info`]: `getsockopt(TCP_INFO)` into a plain [`TcpInfo`] (cwnd, rtt, retransmits, …),
//!   the per-interval numbers iperf3 prints; tolerant of older kernels' shorter struct.
//! - [`rusage`]: process, per-thread and children's CPU times (`getrusage`) and [`CpuSampler`], which
//!   computes `cpu_util_total/user/system` the way iperf3 does.
//! - [`sockopt`]: socket options behind iperf3 flags: congestion control (`-C`), MSS (`-M`),
//!   buffers (`-w`), TOS/TCLASS (`-S`), bind to device, user timeout, keepalive (`--cntl-ka`),
//!   `TCP_NODELAY` (`-N`), pacing (`--fq-rate`), don't-fragment, `SO_RXQ_OVFL`, receive
//!   timestamps (`SO_TIMESTAMPNS`).
//! - [`flowlabel`]: IPv6 flow labels (`-L`): the label lease (`IPV6_FLOWLABEL_MGR`),
//!   `IPV6_FLOWINFO_SEND`, and the labelled address to connect to.
//! - [`drop_counter`]: `recvmsg` that also returns the `SO_RXQ_OVFL` drop counter of a UDP socket.
//! - [`ethtool`]: a driver's own statistics (`ethtool -S`) by `SIOCETHTOOL` ioctl, without
//!   an `ethtool` child.
//! - [`mod@uname`]: the `system_info` line iperf3 prints (`uname(2)`).
//! - [`time`]: local-time `strftime` for `--timestamps`.
//! - [`daemon`]: `daemon(3)` for `-D`.
//! - [`affinity`]: pin the calling thread to a CPU (`-A`, `sched_setaffinity`), for good or
//!   until a [`Pinned`] guard is dropped.
//! - [`clock`]: `CLOCK_MONOTONIC` as a value (iperf3's UDP timestamps), its offset from
//!   `CLOCK_REALTIME` (the kernel's receive timestamps) and the thread's timer slack (precise
//!   pacing sleeps).
//! - [`udp_batch`]: `sendmmsg`/`recvmmsg`: many equal-size datagrams per syscall, each received
//!   one with its kernel receive time.
//! - [`udp_gso`]: UDP GSO send (`UDP_SEGMENT`) and GRO receive (`UDP_GRO`), with a capability
//!   probe and [`udp_gso::UdpSender`], which falls back to `sendmmsg` when the route refuses GSO.
//! - [`zerocopy`]: `sendfile` from a `memfd` block, `MSG_ZEROCOPY` with error-queue completion
//!   reaping, and `recv(MSG_TRUNC)` (discard without copying): `-Z` and `--skip-rx-copy`.
//! - [`netdev`]: the device that holds a local address and its root qdisc's kind and backlog
//!   (one `RTM_GETADDR` and one `RTM_GETQDISC` netlink dump): is a path host-local, is a queue
//!   standing here?
//! - [`stdout`]: standard output that ends quietly when its reader goes away (`| head`,
//!   `| grep -q`): no panic, a hook that ends the run.
//! - [`tty`]: wait for a key on the stdin terminal, and notice when it hung up.
//! - [`malloc`]: the C allocator's arena limit (`M_ARENA_MAX`): fewer resident heap pages
//!   with many threads.
//! - `raw` (private): the generic `getsockopt`/`setsockopt` helpers everything above uses.
//! - `cmsg` (private): aligned control-message buffers, a bounds-checked cmsg walker and the
//!   receive-timestamp reader.
//!
//! Linux only: the workspace targets Linux (see DESIGN.md), and every wrapper here is a Linux
//! syscall or socket option.

// The workspace denies `unsafe_code`; this crate is the one sanctioned exception, because safe
// wrappers over libc syscalls cannot be written without it. Every `unsafe` block carries a
// `// SAFETY:` comment explaining why its preconditions hold.
#![allow(unsafe_code)]
#![deny(unsafe_op_in_unsafe_fn)]

pub mod affinity;
pub mod clock;
mod cmsg;
pub mod daemon;
pub mod drop_counter;
pub mod ethtool;
pub mod flowlabel;
pub mod malloc;
pub mod netdev;
mod raw;
pub mod rusage;
pub mod sockopt;
pub mod stdout;
pub mod tcp_info;
pub mod time;
pub mod tty;
pub mod udp_batch;
pub mod udp_gso;
pub mod uname;
pub mod zerocopy;

#[cfg(test)]
mod testutil;

pub use affinity::{Pinned, current_tid, set_task_cpus, set_thread_affinity, set_thread_cpus, thread_affinity};
pub use drop_counter::recv_with_drop_counter;
pub use rusage::{
    CpuSampler, CpuTimes, CpuUtil, children_cpu_times, process_cpu_times, thread_cpu_clock, thread_cpu_times,
};
pub use tcp_info::{TcpInfo, tcp_info};
pub use uname::{Uname, system_info, uname};
