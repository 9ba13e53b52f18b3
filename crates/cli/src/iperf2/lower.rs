//! Lowering `--iperf2` flags into the iperf 2 engine's [`Test`].

use crate::iperf2::args::Iperf2Args;
use std::time::Duration;
use wireperf_iperf2::config::*;
use wireperf_iperf2::run::Test;
use wireperf_iperf2::units::{BadNumber, parse_binary};

/// Why the flags cannot run.
#[derive(Debug, thiserror::Error)]
pub enum ArgError {
    /// Neither -s nor -c.
    #[error("must specify a client (-c HOST) or a server (-s)")]
    NoRole,
    /// A size or rate that does not parse.
    #[error(transparent)]
    Number(#[from] BadNumber),
    /// -y other than C.
    #[error("unknown report style '{0}' (only C is supported)")]
    Style(String),
    /// Invalid combination.
    #[error("{0}")]
    Conflict(&'static str),
}

fn size(s: &Option<String>) -> Result<Option<usize>, ArgError> {
    Ok(match s {
        Some(v) => Some(parse_binary(v)? as usize),
        None => None,
    })
}

/// Lowers flags into an engine config.
pub fn lower(a: &Iperf2Args) -> Result<Test, ArgError> {
    if let Some(st) = &a.reportstyle
        && !st.eq_ignore_ascii_case("c")
    {
        return Err(ArgError::Style(st.clone()));
    }
    let proto = if a.udp { Proto::Udp } else { Proto::Tcp };
    if a.server {
        return Ok(Test::Server(ServerConfig {
            port: a.port,
            bind: a.bind.clone(),
            proto,
            interval: a.interval,
            len: size(&a.len)?,
            window: size(&a.window)?,
            enhanced: a.enhanced,
            max_tests: a.parallel,
        }));
    }
    let host = a.client.clone().ok_or(ArgError::NoRole)?;
    let modes = [a.dualtest, a.tradeoff, a.full_duplex, a.reverse].iter().filter(|b| **b).count();
    if modes > 1 {
        return Err(ArgError::Conflict("choose one of -d, -r, --full-duplex, -R"));
    }
    let mode = if a.dualtest {
        Mode::Dual
    } else if a.tradeoff {
        Mode::Tradeoff
    } else if a.full_duplex {
        Mode::FullDuplex
    } else if a.reverse {
        Mode::Reverse
    } else {
        Mode::Normal
    };
    if proto == Proto::Udp && mode != Mode::Normal {
        return Err(ArgError::Conflict("UDP supports plain client-to-server tests only in iperf 2 mode"));
    }
    let stop = match &a.num {
        Some(n) => Stop::Bytes(parse_binary(n)?),
        None => Stop::Time(Duration::from_secs_f64(a.time.unwrap_or(10.0).max(0.0))),
    };
    let rate = match &a.bandwidth {
        Some(b) => parse_binary(b)?,
        None => DEFAULT_UDP_RATE,
    };
    Ok(Test::Client(ClientConfig {
        host,
        port: a.port,
        listen_port: a.listenport,
        proto,
        mode,
        threads: a.parallel.unwrap_or(1).max(1),
        stop,
        interval: a.interval,
        len: size(&a.len)?,
        rate,
        window: size(&a.window)?,
        enhanced: a.enhanced,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::iperf2::args::Top;
    use clap::Parser;

    #[test]
    fn lowers_a_dual_test() {
        let t = Top::try_parse_from(["x", "-c", "h", "-d", "-L", "6001", "-t", "2"]).unwrap();
        let Ok(Test::Client(c)) = lower(&t.args) else { panic!("not a client") };
        assert_eq!(c.mode, Mode::Dual);
        assert_eq!(c.listen_port, Some(6001));
        assert_eq!(c.port, 5001);
    }
}
