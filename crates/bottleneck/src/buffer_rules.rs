//! The buffer rules: `receiver-window` and `sender-buffer`, from the sender's TCP_INFO
//! "limited-by" times and, for a send buffer TCP_INFO does not see, from the sender's
//! `tcp_wmem` maximum against the bytes in flight. Their fixes are the doctor's one remedy
//! per cause ([`wireperf_doctor::remedy`]), sized for what the test had in flight.

use crate::diagnosis::{Direction, Hosts, Limit, Side, ids, limit, pct};
use wireperf_doctor::goodput::format_bps;
use wireperf_doctor::remedy::{self, Remedy};

/// A TCP sender limited for at least this share of its busy time names that limit.
pub(crate) const LIMITED_SHARE: f64 = 0.2;

/// `receiver-window`, `sender-buffer`: the sender's TCP_INFO says what it waited for. The fix
/// is the doctor's remedy for that host's buffer (its own `tcp_rmem`/`tcp_wmem` when it was
/// watched), sized for what the test had in flight.
pub(crate) fn tcp_limited(dir: &Direction, hosts: Hosts<'_>, found: &mut Vec<Limit>) {
    let (sender, receiver) = dir.sender_receiver();
    let Some(busy) = dir.busy_us.filter(|b| *b > 0) else { return };
    let (snd, rcv) = (sender.as_str(), receiver.as_str());
    let need = in_flight(dir);
    let current =
        |side: Side, key: &str| hosts.of(side).and_then(|s| s.facts.sysctls.get(key)).and_then(|v| remedy::triple(v));
    let cases = [
        (
            dir.rwnd_limited_us,
            ids::RECEIVER_WINDOW,
            receiver,
            format!("the {snd} waited for the {rcv}'s TCP receive window"),
            "rwnd_limited",
            remedy::receive_buffer(current(receiver, "net.ipv4.tcp_rmem"), need),
            ("ask for a larger window: -w 4M", "or ask for a larger window: -w 4M"),
        ),
        (
            dir.sndbuf_limited_us,
            ids::SENDER_BUFFER,
            sender,
            format!("the {snd} waited for its own send buffer"),
            "sndbuf_limited",
            remedy::send_buffer(current(sender, "net.ipv4.tcp_wmem"), need),
            ("ask for a larger send buffer: -w 4M", "or a larger send buffer: -w 4M"),
        ),
    ];
    for (us, id, side, what, field, buffer, flag) in cases {
        let Some(us) = us else { continue };
        let share = us as f64 / busy as f64;
        if share < LIMITED_SHARE {
            continue;
        }
        let mut fix = buffer_fix(side, buffer.as_ref(), flag);
        fix.push(format!("verify: rerun with --why; {field} should fall below 20%"));
        found.push(limit(
            id,
            side,
            0.5 + share.min(1.0) / 2.0,
            vec![format!(
                "{what} {} of its busy time (TCP_INFO {field} {:.2} s of {:.2} s)",
                pct(share),
                us as f64 / 1e6,
                busy as f64 / 1e6
            )],
            fix,
        ));
    }
    small_send_buffer(dir, hosts, need, found);
}

/// A send buffer smaller than what the test keeps in flight: autotuning is capped by the
/// sender's `tcp_wmem` maximum, and the kernel lets a socket past it only by the one packet
/// it is building, so a tiny maximum paces the sender. TCP_INFO's `sndbuf_limited` may never
/// see it: a sender waiting for buffer space in `poll` (behind its unsent mark) rather than
/// inside `sendmsg` is not counted as limited. Judged from the socket's own figures instead:
/// the maximum against the bytes in flight (rate × round trip); a buffer under twice that
/// cannot hold the flight and the next write, which autotuning always keeps room for.
fn small_send_buffer(dir: &Direction, hosts: Hosts<'_>, need: Option<u64>, found: &mut Vec<Limit>) {
    if found.iter().any(|l| l.limit == ids::SENDER_BUFFER) {
        return;
    }
    let (sender, _) = dir.sender_receiver();
    let Some(wmem) =
        hosts.of(sender).and_then(|s| s.facts.sysctls.get("net.ipv4.tcp_wmem")).and_then(|v| remedy::triple(v))
    else {
        return;
    };
    let Some(need) = need.filter(|n| *n > 0) else { return };
    if wmem[2] >= 2 * need {
        return;
    }
    let snd = sender.as_str();
    let rtt_us = dir.round_trips.tcp_mean_rtt_us.or(dir.round_trips.tcp_min_rtt_us).unwrap_or(0);
    let mut fix = buffer_fix(
        sender,
        remedy::send_buffer(Some(wmem), Some(need)).as_ref(),
        ("ask for a larger send buffer: -w 4M", "or a larger send buffer: -w 4M"),
    );
    fix.push(format!("verify: sysctl net.ipv4.tcp_wmem on the {snd}; rerun with --why"));
    // Below what is in flight: the buffer is at the kernel's floor and certainly the pace;
    // below twice it, likely.
    let strength = if wmem[2] < need { 0.7 } else { 0.5 };
    found.push(limit(
        ids::SENDER_BUFFER,
        sender,
        strength,
        vec![format!(
            "the {snd}'s send buffer may grow to {} bytes (net.ipv4.tcp_wmem max), under twice the {:.1} kB the test had in flight ({} × {rtt_us} µs)",
            wmem[2],
            need as f64 / 1e3,
            format_bps(dir.bits_per_second as u64)
        )],
        fix,
    ));
}

/// What the test had in flight: its rate × the sender's mean round trip (its minimum when
/// the mean was not reported), `None` when neither was.
fn in_flight(dir: &Direction) -> Option<u64> {
    let rtt = dir.round_trips.tcp_mean_rtt_us.or(dir.round_trips.tcp_min_rtt_us)?;
    remedy::in_flight(dir.bits_per_second, rtt as f64 / 1e3)
}

/// The fix lines for a buffer limit on `side`: the remedy's command there, then the `-w`
/// flag; only the flag (`flag.0`) when the buffer is large enough already.
fn buffer_fix(side: Side, buffer: Option<&Remedy>, flag: (&str, &str)) -> Vec<String> {
    match buffer.and_then(|r| r.commands.first()) {
        Some(command) => vec![format!("on the {}: {command}", side.as_str()), flag.1.to_string()],
        None => vec![flag.0.to_string()],
    }
}
