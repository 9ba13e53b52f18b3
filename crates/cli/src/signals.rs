//! SIGINT/SIGTERM/SIGHUP set a flag the engine polls, so an interrupted test still prints its
//! partial results and tells the peer, as iperf3 does.

use std::sync::Arc;
use std::sync::atomic::AtomicBool;

/// Installs the handlers and returns the flag they set.
pub fn interrupt_flag() -> Arc<AtomicBool> {
    let flag = Arc::new(AtomicBool::new(false));
    for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM, signal_hook::consts::SIGHUP] {
        // Failure to install leaves the default action (exit), which is still correct.
        let _ = signal_hook::flag::register(sig, Arc::clone(&flag));
    }
    flag
}
