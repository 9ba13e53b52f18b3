//! The engine's data-path tuning ([`EngineTuning`]) from the environment: the settings for
//! diagnosis and measuring that iperf3 has no flag for. The engine reads no environment; the
//! iperf3-mode lowering fills the client's or server's config from here once, as it finishes
//! the config (`iperf::files`). The variables are documented in docs/performance.md
//! ("Environment variables") and on `EngineTuning`'s fields.
//!
//! An unreadable value is not an error: it gives the default, as it always did (these are
//! switches for diagnosis, and a typo must not stop a server).

use wireperf_engine::{EngineTuning, NotsentMark, StreamWorkers, TestHooks};

/// `WIREPERF_UDP_OFFLOAD=off` (or `0`, `no`, `false`) turns UDP GSO and GRO off.
pub const UDP_OFFLOAD_ENV: &str = "WIREPERF_UDP_OFFLOAD";
/// `WIREPERF_NOTSENT_LOWAT=off` never sets the host-local unsent-queue mark; a number of bytes
/// sets that mark instead of the one chosen per test.
pub const NOTSENT_LOWAT_ENV: &str = "WIREPERF_NOTSENT_LOWAT";
/// `WIREPERF_STREAM_WORKERS=N` sets the shared workers per direction; `0` or `off` gives every
/// stream a thread of its own.
pub const STREAM_WORKERS_ENV: &str = "WIREPERF_STREAM_WORKERS";

/// The tuning this process's environment asks for (with the test hooks a `test-hooks` build of
/// the engine has).
pub fn from_env() -> EngineTuning {
    let mut tuning = from_vars(|name| std::env::var(name).ok());
    tuning.hooks = TestHooks::from_vars(|name| std::env::var_os(name).is_some());
    tuning
}

/// The tuning the variables `var` looks up ask for.
fn from_vars(var: impl Fn(&str) -> Option<String>) -> EngineTuning {
    EngineTuning {
        udp_offload: offload_allowed(var(UDP_OFFLOAD_ENV).as_deref()),
        notsent_lowat: notsent_mark_from(var(NOTSENT_LOWAT_ENV).as_deref()),
        stream_workers: workers_from(var(STREAM_WORKERS_ENV).as_deref()),
        hooks: TestHooks::default(),
    }
}

/// Whether GSO/GRO may be used: anything but `off`/`0`/`no`/`false` allows them.
fn offload_allowed(setting: Option<&str>) -> bool {
    !setting.is_some_and(switched_off)
}

/// Whether a tuning variable's value turns its feature off (`off`, `0`, `no`, `false`).
fn switched_off(setting: &str) -> bool {
    matches!(setting.trim(), "off" | "0" | "no" | "false")
}

/// The unsent-queue mark asked for; unreadable values give the default (chosen per test).
fn notsent_mark_from(setting: Option<&str>) -> NotsentMark {
    match setting.map(str::trim) {
        Some(s) if switched_off(s) => NotsentMark::Off,
        None | Some("") => NotsentMark::Auto,
        Some(n) => n.parse().ok().filter(|&n: &usize| n > 0).map_or(NotsentMark::Auto, NotsentMark::Bytes),
    }
}

/// The shared workers asked for: a positive number, `0`/`off` for none, else one per CPU.
fn workers_from(setting: Option<&str>) -> StreamWorkers {
    match setting.map(str::trim) {
        None | Some("") => StreamWorkers::PerCpu,
        Some("off") => StreamWorkers::Off,
        // Not a number: the default, as for any unreadable tuning variable.
        Some(s) => match s.parse::<usize>() {
            Ok(0) => StreamWorkers::Off,
            Ok(n) => StreamWorkers::Fixed(n),
            Err(_) => StreamWorkers::PerCpu,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_unsent_setting_turns_the_mark_off_or_sets_another() {
        assert_eq!(notsent_mark_from(None), NotsentMark::Auto);
        for off in ["off", "0", "no", " off "] {
            assert_eq!(notsent_mark_from(Some(off)), NotsentMark::Off, "{off}");
        }
        assert_eq!(notsent_mark_from(Some("131072")), NotsentMark::Bytes(131_072));
        assert_eq!(notsent_mark_from(Some("junk")), NotsentMark::Auto);
    }

    #[test]
    fn offload_is_on_unless_the_environment_turns_it_off() {
        assert!(offload_allowed(None));
        assert!(offload_allowed(Some("on")));
        assert!(offload_allowed(Some("")));
        for off in ["off", "0", "no", "false", " off "] {
            assert!(!offload_allowed(Some(off)), "{off:?}");
        }
    }

    #[test]
    fn one_worker_per_cpu_unless_the_environment_says_otherwise() {
        assert_eq!(workers_from(None), StreamWorkers::PerCpu);
        assert_eq!(workers_from(Some("")), StreamWorkers::PerCpu);
        assert_eq!(workers_from(Some("3")), StreamWorkers::Fixed(3));
        assert_eq!(workers_from(Some(" 1 ")), StreamWorkers::Fixed(1));
        for off in ["0", "off", " off "] {
            assert_eq!(workers_from(Some(off)), StreamWorkers::Off, "{off:?}: a thread per stream");
        }
        for bad in ["-1", "many"] {
            assert_eq!(workers_from(Some(bad)), StreamWorkers::PerCpu, "{bad:?}");
        }
    }

    #[test]
    fn no_variable_set_is_the_engine_default() {
        assert_eq!(from_vars(|_| None), EngineTuning::default());
        let set = from_vars(|name| Some(if name == STREAM_WORKERS_ENV { "2" } else { "off" }.to_string()));
        assert_eq!(
            (set.udp_offload, set.notsent_lowat, set.stream_workers),
            (false, NotsentMark::Off, StreamWorkers::Fixed(2))
        );
    }
}
