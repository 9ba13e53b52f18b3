//! Link rules: link-down, R2 half-duplex, speed-below-capability, R14 link-flaps, R9 mtu-locked.

use super::parts::{Ctx, Outcome, Severity, finding, fix, flap_evidence};
use crate::adapters;
use crate::snapshot::Duplex;

const GENERIC: &[&str] = &["cdc_ncm", "cdc_ether"];

/// The interface has no link (or is administratively down).
pub fn link_down(ctx: &Ctx) -> Outcome {
    let l = ctx.link;
    let n = &l.name;
    if l.admin_up == Some(false) {
        return finding(
            "link-down",
            Severity::Info,
            "The interface is administratively down, so nothing about its link can be measured.",
            vec![format!("flags of {n} lack IFF_UP; operstate {}", l.operstate.as_deref().unwrap_or("not reported"))],
            fix(
                &[format!("sudo ip link set {n} up")],
                &[format!("cat /sys/class/net/{n}/operstate   # up")],
                false,
                &[],
            ),
        );
    }
    let down_state = matches!(l.operstate.as_deref(), Some("down" | "lowerlayerdown" | "notpresent"));
    if down_state || l.carrier == Some(false) {
        return finding(
            "link-down",
            Severity::Crit,
            "The interface is up but has no carrier: no cable, a dead peer port, or autonegotiation failing.",
            vec![format!(
                "operstate {}, carrier {}",
                l.operstate.as_deref().unwrap_or("not reported"),
                l.carrier.map(|c| if c { "1" } else { "0" }).unwrap_or("not reported")
            )],
            fix(
                &[
                    "# check the cable and the switch port; try another port or cable".into(),
                    format!("sudo ethtool -s {n} autoneg on"),
                ],
                &[format!("cat /sys/class/net/{n}/carrier   # 1")],
                false,
                &[],
            ),
        );
    }
    if l.operstate.is_none() {
        return Outcome::NotChecked("operstate not reported".into());
    }
    Outcome::Passed
}

/// R2: half duplex. Cosmetic on cdc_ncm/cdc_ether (CDC defines no duplex), a mismatch on a PHY.
pub fn half_duplex(ctx: &Ctx) -> Outcome {
    let l = ctx.link;
    if !l.link_up() {
        return Outcome::Passed;
    }
    let Some(d) = l.duplex else {
        return Outcome::NotChecked("duplex not reported".into());
    };
    let generic = l.driver.as_deref().is_some_and(|d| GENERIC.contains(&d));
    let n = &l.name;
    if generic && d != Duplex::Full {
        return finding(
            "half-duplex",
            Severity::Info,
            format!(
                "\"{}\" duplex is cosmetic here: {} does not know the duplex; it points to the generic-driver problem.",
                d.as_str(),
                l.driver.as_deref().unwrap_or("")
            ),
            vec![format!("duplex = {} with driver {}", d.as_str(), l.driver.as_deref().unwrap_or(""))],
            fix(
                &["# nothing to fix by itself; see generic-usb-driver".into()],
                &[format!("cat /sys/class/net/{n}/duplex   # full once the vendor driver runs it")],
                false,
                &[],
            ),
        );
    }
    if d != Duplex::Half {
        return Outcome::Passed;
    }
    let mut ev = vec![format!("duplex = half with driver {}", l.driver.as_deref().unwrap_or("?"))];
    for c in ["collisions", "tx_window_errors"] {
        if let Some(v) = l.stats.get(c).filter(|&&v| v > 0) {
            ev.push(format!("statistics/{c} = {v}"));
        }
    }
    let mut notes = vec!["Set the switch port to autonegotiate too: a forced peer is the usual cause."];
    if l.driver.as_deref() == Some("r8152") {
        notes.push("r8152 forces only 10/100/1000; to pin 2.5G keep autoneg on and restrict the advertisement: ethtool -s IF autoneg on advertise 0x80000000002f");
    }
    finding(
        "half-duplex",
        Severity::Crit,
        "The link negotiated half duplex: a duplex mismatch with the peer that causes collisions and retransmits.",
        ev,
        fix(
            &[format!("sudo ethtool -s {n} autoneg on")],
            &[
                format!("cat /sys/class/net/{n}/duplex   # full"),
                format!("cat /sys/class/net/{n}/statistics/collisions   # stays flat"),
            ],
            true,
            &notes,
        ),
    )
}

/// The negotiated speed is below the best speed both ends advertise.
pub fn speed_below_capability(ctx: &Ctx) -> Outcome {
    let l = ctx.link;
    if !l.link_up() {
        return Outcome::Passed;
    }
    let Some(speed) = l.speed_mbps else {
        return Outcome::NotChecked("link speed not reported".into());
    };
    let Some(m) = l.link_modes.as_ref().filter(|m| !m.supported.is_empty()) else {
        return Outcome::NotChecked("supported link modes not reported".into());
    };
    let Some(partner) = &m.partner else {
        return Outcome::NotChecked("link partner's advertised modes not reported".into());
    };
    let Some(best) = m.supported.iter().rev().find(|s| partner.contains(s)).copied() else {
        return Outcome::Passed;
    };
    if speed >= best {
        return Outcome::Passed;
    }
    let n = &l.name;
    finding(
        "speed-below-capability",
        Severity::Warn,
        format!(
            "The link runs at {speed} Mbit/s although both ends support {best} Mbit/s: usually a cable or a marginal link that fell back."
        ),
        vec![
            format!("negotiated {speed} Mbit/s"),
            format!("this NIC supports {:?} Mbit/s, the link partner advertises {:?} Mbit/s", m.supported, partner),
        ],
        fix(
            &[
                format!("sudo ethtool -s {n} autoneg on"),
                "# replace the cable (Cat5e or better for 2.5G/5G, Cat6a for 10G), try another switch port".into(),
            ],
            &[format!("cat /sys/class/net/{n}/speed   # {best}")],
            true,
            &[],
        ),
    )
}

/// R14: link flaps (kernel log down/up, or many carrier changes).
pub fn link_flaps(ctx: &Ctx) -> Outcome {
    let l = ctx.link;
    let ev = flap_evidence(ctx);
    if ev.is_empty() {
        if !ctx.log_available() && l.carrier_changes.is_none() {
            return Outcome::NotChecked("neither the kernel log nor carrier_changes is available".into());
        }
        return Outcome::Passed;
    }
    let n = &l.name;
    let mut cmds = vec![format!("sudo ethtool --set-eee {n} eee off")];
    if l.usb.is_some() {
        cmds.push(
            "# on USB adapters also check usb-protocol-errors: a flaky USB link looks like a flapping Ethernet link"
                .into(),
        );
    }
    finding(
        "link-flaps",
        Severity::Warn,
        "The link goes down and up again; every flap stalls transfers for seconds.",
        ev,
        fix(
            &cmds,
            &[format!("ethtool --show-eee {n}"), format!("cat /sys/class/net/{n}/carrier_changes   # stays constant")],
            true,
            &["Energy-Efficient Ethernet is the usual cause on Intel I225/I226 (igc)."],
        ),
    )
}

/// R9: the MTU cannot be raised (cdc_ncm max MTU ≈1504, or below what the user wants).
pub fn mtu_locked(ctx: &Ctx) -> Outcome {
    let l = ctx.link;
    let generic = l.driver.as_deref().is_some_and(|d| GENERIC.contains(&d));
    let want = ctx.opts.want_mtu;
    if !generic && want.is_none() {
        return Outcome::Passed;
    }
    let Some(max) = l.max_mtu else {
        return Outcome::NotChecked("maximum MTU not reported (needs ip -d link)".into());
    };
    let unlock = l.chip.as_ref().and_then(|c| adapters::r8152_max_mtu(&c.name).filter(|_| c.best_driver == "r8152"));
    let n = &l.name;
    let severity = match want {
        Some(w) if w > max => Severity::Warn,
        Some(_) => return Outcome::Passed,
        None if generic && max < 9000 && unlock.is_some_and(|u| u > max) => Severity::Info,
        None => return Outcome::Passed,
    };
    let mut ev = vec![format!("max MTU {max} ({})", l.max_mtu_source.as_deref().unwrap_or("?"))];
    if let Some(w) = want {
        ev.push(format!("wanted MTU {w}"));
    }
    if let Some(u) = unlock {
        ev.push(format!("{} allows up to {u} under r8152", l.chip.as_ref().map(|c| c.name.as_str()).unwrap_or("")));
    }
    let target = want.unwrap_or(9000);
    let cmds = if generic {
        vec!["# fix generic-usb-driver first".into(), format!("sudo ip link set {n} mtu {target}")]
    } else {
        vec![format!("# this driver cannot do MTU {target}; the largest is {max}")]
    };
    finding(
        "mtu-locked",
        severity,
        format!("Jumbo frames are impossible on this interface now: its maximum MTU is {max}."),
        ev,
        fix(
            &cmds,
            &[
                format!("ip link show {n}   # mtu {target}"),
                format!("ping -M do -s {} PEER", target.saturating_sub(28)),
            ],
            false,
            &["Every host and switch on the segment needs the same MTU."],
        ),
    )
}
