//! SIGINT/SIGTERM/SIGHUP set a flag the engine polls, so an interrupted test still prints its
//! partial results and tells the peer, as iperf3 does. A closed stdout (the reader of
//! `wireperf … | head` went away) raises the same flag: the run ends as on Ctrl-C, quietly.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};

/// The process's one interrupt flag: every run polls the same one, so the stdout hook can
/// raise it without knowing which run is going on.
static FLAG: OnceLock<Arc<AtomicBool>> = OnceLock::new();

/// Installs the handlers (once) and returns the flag they set.
pub fn interrupt_flag() -> Arc<AtomicBool> {
    let flag = FLAG.get_or_init(|| {
        let flag = Arc::new(AtomicBool::new(false));
        for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM, signal_hook::consts::SIGHUP] {
            // Failure to install leaves the default action (exit), which is still correct.
            let _ = signal_hook::flag::register(sig, Arc::clone(&flag));
        }
        flag
    });
    Arc::clone(flag)
}

/// Ends whatever runs, as a signal would: the stdout hook (`wireperf_sys::stdout`).
pub fn raise() {
    interrupt_flag().store(true, Ordering::Relaxed);
}
