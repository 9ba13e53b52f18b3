//! The link that carries the traffic: which interface, what the doctor says of it, and the
//! ceiling a measurement is judged against.

use serde::Serialize;
use std::net::IpAddr;
use wireperf_doctor::goodput::shaped_goodput;
use wireperf_doctor::{InspectOptions, InterfaceReport, RateLimit, Severity};

/// Where the ceiling comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CeilingSource {
    /// The negotiated Ethernet link at its MTU.
    Link,
    /// The USB bus under the adapter.
    UsbBus,
    /// A rate-limiting qdisc (tbf, htb) on the interface.
    Shaper,
}

/// The most a direction of this link can carry.
#[derive(Clone, Debug, Serialize)]
pub struct Ceiling {
    /// TCP goodput, bit/s.
    pub tcp_bps: u64,
    /// UDP goodput, bit/s.
    pub udp_bps: u64,
    /// What sets it.
    pub source: CeilingSource,
    /// Both directions share it (half duplex, USB 2).
    pub shared_between_directions: bool,
    /// Words for the verdict: "this link", "the tbf shaper on veth0".
    pub described_as: String,
}

/// What is known about the path to the server.
#[derive(Clone, Debug, Default, Serialize)]
pub struct LinkContext {
    /// The local interface the route to the server uses.
    pub iface: Option<String>,
    /// The doctor's report of that interface (findings included).
    pub doctor: Option<InterfaceReport>,
    /// Traffic shaping on it.
    pub shaper: Option<RateLimit>,
    /// The ceiling of traffic leaving this host (upload), when one is known: the lower of
    /// link and egress shaper.
    pub ceiling: Option<Ceiling>,
    /// The ceiling of traffic arriving (download): the link alone, because a root qdisc only
    /// shapes what this host sends.
    pub download_ceiling: Option<Ceiling>,
    /// Why there is no ceiling, or other remarks.
    pub note: Option<String>,
    /// This host's interface in the shape a server shares its own in, for comparing the two
    /// ends (`ends.rs`); the `doctor` field above carries it in JSON already.
    #[serde(skip)]
    pub own_host: Option<wireperf_doctor::share::SharedHost>,
}

impl LinkContext {
    /// The ceiling for a direction (`upload` leaves this host, `download` arrives).
    pub fn ceiling_for(&self, direction: &str) -> Option<&Ceiling> {
        if direction == "download" { self.download_ceiling.as_ref() } else { self.ceiling.as_ref() }
    }

    /// Ids of the doctor's findings worse than `info`, worst first.
    pub fn serious_findings(&self) -> Vec<&'static str> {
        self.doctor
            .as_ref()
            .map(|d| d.findings.iter().filter(|f| f.severity > Severity::Info).map(|f| f.id).collect())
            .unwrap_or_default()
    }
}

/// veth, bridges, tun: no device behind the interface, so its speed is nominal.
fn is_virtual(d: &InterfaceReport) -> bool {
    matches!(d.link.bus, None | Some(wireperf_doctor::snapshot::BusKind::Virtual))
}

/// Combines the link's theoretical goodput and a shaper into the ceiling.
pub fn ceiling(doctor: Option<&InterfaceReport>, shaper: Option<&RateLimit>, iface: &str) -> Option<Ceiling> {
    // A virtual interface (veth, bridge, tun: no bus device behind it) reports a nominal
    // speed that limits nothing; only a shaper gives it a ceiling.
    let link = doctor.filter(|d| !is_virtual(d)).and_then(|d| d.link.goodput.map(|g| (g, d.link.mtu.unwrap_or(1500))));
    let mtu = doctor.and_then(|d| d.link.mtu).unwrap_or(1500);
    let from_link = link.map(|(g, _)| Ceiling {
        tcp_bps: g.tcp_bps,
        udp_bps: g.udp_bps,
        source: match g.limited_by {
            wireperf_doctor::goodput::Limit::Ethernet => CeilingSource::Link,
            wireperf_doctor::goodput::Limit::UsbBus => CeilingSource::UsbBus,
        },
        shared_between_directions: g.shared_between_directions,
        described_as: match g.limited_by {
            wireperf_doctor::goodput::Limit::Ethernet => "this link".to_string(),
            wireperf_doctor::goodput::Limit::UsbBus => "the USB bus under this adapter".to_string(),
        },
    });
    let from_shaper = shaper.map(|s| {
        let (tcp, udp) = shaped_goodput(s.rate_bps, mtu);
        Ceiling {
            tcp_bps: tcp,
            udp_bps: udp,
            source: CeilingSource::Shaper,
            shared_between_directions: false,
            described_as: format!("the {} traffic shaper on {iface}", s.kind),
        }
    });
    match (from_link, from_shaper) {
        (Some(l), Some(s)) => Some(if s.tcp_bps < l.tcp_bps { s } else { l }),
        (l, s) => l.or(s),
    }
}

/// Finds and inspects the interface that routes to `peer`.
pub fn for_peer(peer: IpAddr) -> LinkContext {
    if peer.is_loopback() {
        return LinkContext {
            iface: Some("lo".into()),
            note: Some("the server is on this host (loopback): there is no link to judge against".into()),
            ..Default::default()
        };
    }
    let Some(iface) = wireperf_doctor::interface_for(peer) else {
        return LinkContext {
            note: Some(format!("no route to {peer} found in the routing table")),
            ..Default::default()
        };
    };
    let opts = InspectOptions { interfaces: vec![iface.clone()], ..Default::default() };
    let (doctor, own_host, mut note) = match wireperf_doctor::inspect(&opts) {
        Ok(r) => {
            let own = r.interfaces.first().map(|i| wireperf_doctor::share::SharedHost::from_report(i, &r.host, false));
            (r.interfaces.into_iter().next(), own, None)
        }
        Err(e) => (None, None, Some(format!("the doctor could not inspect {iface}: {e}"))),
    };
    let shaper = wireperf_doctor::root_rate_limit(&iface).ok().flatten();
    let ceiling = ceiling(doctor.as_ref(), shaper.as_ref(), &iface);
    let download_ceiling = self::ceiling(doctor.as_ref(), None, &iface);
    let virtual_iface = doctor.as_ref().is_some_and(is_virtual);
    if note.is_none() && virtual_iface {
        note = Some(format!(
            "{iface} is a virtual interface: its reported speed is nominal, so only a traffic shaper sets a ceiling"
        ));
    } else if ceiling.is_none() && note.is_none() {
        note = Some(format!("{iface} reports no link speed and no shaper: no ceiling to judge against"));
    }
    LinkContext { iface: Some(iface), doctor, shaper, ceiling, download_ceiling, note, own_host }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_narrower_of_link_and_shaper_wins() {
        let shaper = RateLimit { kind: "tbf".into(), rate_bps: 600_000_000 };
        let c = ceiling(None, Some(&shaper), "veth0").unwrap();
        assert_eq!(c.source, CeilingSource::Shaper);
        assert!(c.described_as.contains("tbf"));
        assert!(ceiling(None, None, "x").is_none());
    }
}
