//! Facts that sysfs does not have, taken from iproute2 and ethtool output.
//!
//! Live: the command is run (if installed) and its output captured for `--snapshot`.
//! `--root DIR`: the same output is read from `DIR/wireperf/IF/NAME`, so a fixture or a
//! snapshot replays it. No netlink or ioctl is used, which keeps this crate free of `unsafe`.
//!
//! | file under `DIR/wireperf/IF/` | command |
//! |---|---|
//! | `ip-link.json` | `ip -d -j link show dev IF` (max MTU) |
//! | `ethtool.txt` | `ethtool IF` (link modes, link partner) |
//! | `ethtool-i.txt` | `ethtool -i IF` (driver, version, firmware) |
//! | `ethtool-g.txt` | `ethtool -g IF` (rings) |
//! | `ethtool-c.txt` | `ethtool -c IF` (coalescing) |
//! | `tc-qdisc.json` | `tc -s -j qdisc show dev IF` (root qdisc drops) |

use std::process::Command;

use crate::link_parts::{Coalesce, Duplex, LinkModes, QdiscInfo, Rings};
use crate::root::Root;

/// Which command output to get.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cmd {
    /// `ip -d -j link show dev IF`.
    IpLink,
    /// `ethtool IF`.
    Ethtool,
    /// `ethtool -i IF`.
    EthtoolI,
    /// `ethtool -g IF`.
    EthtoolG,
    /// `ethtool -c IF`.
    EthtoolC,
    /// `tc -s -j qdisc show dev IF`.
    TcQdisc,
}

impl Cmd {
    /// Replay file name.
    pub fn file(self) -> &'static str {
        match self {
            Cmd::IpLink => "ip-link.json",
            Cmd::Ethtool => "ethtool.txt",
            Cmd::EthtoolI => "ethtool-i.txt",
            Cmd::EthtoolG => "ethtool-g.txt",
            Cmd::EthtoolC => "ethtool-c.txt",
            Cmd::TcQdisc => "tc-qdisc.json",
        }
    }

    fn argv(self, iface: &str) -> Vec<String> {
        let v: Vec<&str> = match self {
            Cmd::IpLink => vec!["ip", "-d", "-j", "link", "show", "dev", iface],
            Cmd::Ethtool => vec!["ethtool", iface],
            Cmd::EthtoolI => vec!["ethtool", "-i", iface],
            Cmd::EthtoolG => vec!["ethtool", "-g", iface],
            Cmd::EthtoolC => vec!["ethtool", "-c", iface],
            Cmd::TcQdisc => vec!["tc", "-s", "-j", "qdisc", "show", "dev", iface],
        };
        v.into_iter().map(String::from).collect()
    }
}

/// Runs a program with `LANG=C`; `None` when it is missing or fails.
pub fn run(argv: &[String]) -> Option<String> {
    let (prog, args) = argv.split_first()?;
    let out = Command::new(prog).args(args).env("LC_ALL", "C").stdin(std::process::Stdio::null()).output().ok()?;
    out.status.success().then(|| String::from_utf8_lossy(&out.stdout).into_owned())
}

/// The output of `cmd` for `iface`: run live, or read from the replay file.
pub fn output(root: &Root, iface: &str, cmd: Cmd) -> Option<String> {
    let rel = format!("wireperf/{iface}/{}", cmd.file());
    if root.is_live() {
        let text = run(&cmd.argv(iface))?;
        root.capture(&rel, &text);
        Some(text)
    } else {
        root.read_bytes(&rel).ok().map(|b| String::from_utf8_lossy(&b).into_owned())
    }
}

/// From `ip -d -j link show`: the fields sysfs lacks.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct IpLink {
    /// `max_mtu` (0 means "no limit reported", e.g. on `lo`).
    pub max_mtu: Option<u32>,
    /// `qdisc` name.
    pub qdisc: Option<String>,
}

/// Parses `ip -d -j link show` JSON.
pub fn parse_ip_link(json: &str) -> Option<IpLink> {
    let v: serde_json::Value = serde_json::from_str(json).ok()?;
    let o = v.as_array()?.first()?;
    let num = |k: &str| o.get(k).and_then(|x| x.as_u64()).and_then(|x| u32::try_from(x).ok());
    Some(IpLink {
        max_mtu: num("max_mtu").filter(|&m| m > 0),
        qdisc: o.get("qdisc").and_then(|x| x.as_str()).map(String::from),
    })
}

/// Parses `tc -s -j qdisc show dev IF`: the root qdisc's kind and drops.
pub fn parse_tc_qdisc(json: &str) -> Option<QdiscInfo> {
    let v: serde_json::Value = serde_json::from_str(json).ok()?;
    let arr = v.as_array()?;
    let q = arr.iter().find(|q| q.get("root").and_then(|r| r.as_bool()) == Some(true)).or_else(|| arr.first())?;
    // mq/multiq parents report the sum of their children's drops themselves.
    Some(QdiscInfo { kind: q.get("kind")?.as_str()?.to_string(), drops: q.get("drops").and_then(|d| d.as_u64()) })
}

/// `ethtool -i`: (driver, version, firmware-version); empty values become `None`.
pub fn parse_ethtool_i(text: &str) -> (Option<String>, Option<String>, Option<String>) {
    let get = |key: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(key))
            .map(|v| v.trim().to_string())
            .filter(|v| !v.is_empty() && v != "N/A")
    };
    (get("driver:"), get("version:"), get("firmware-version:"))
}

fn value_after(line: &str) -> Option<u32> {
    line.split(':').nth(1)?.trim().parse().ok()
}

/// `ethtool -g`: the "Pre-set maximums" and "Current hardware settings" blocks.
pub fn parse_ethtool_g(text: &str) -> Option<Rings> {
    let mut r = Rings::default();
    let mut current = false;
    let mut seen = false;
    for l in text.lines() {
        let t = l.trim();
        if t.starts_with("Pre-set maximums") {
            current = false;
            seen = true;
        } else if t.starts_with("Current hardware settings") {
            current = true;
            seen = true;
        } else if let Some(rest) = t.strip_prefix("RX:") {
            let v = value_after(&format!(":{rest}"));
            if current { r.rx = v } else { r.rx_max = v }
        } else if let Some(rest) = t.strip_prefix("TX:") {
            let v = value_after(&format!(":{rest}"));
            if current { r.tx = v } else { r.tx_max = v }
        }
    }
    (seen && (r.rx.is_some() || r.tx.is_some())).then_some(r)
}

/// `ethtool -c`: rx-usecs, tx-usecs, adaptive RX.
pub fn parse_ethtool_c(text: &str) -> Option<Coalesce> {
    let mut c = Coalesce::default();
    for l in text.lines() {
        let t = l.trim();
        if let Some(v) = t.strip_prefix("rx-usecs:") {
            c.rx_usecs = v.trim().parse().ok();
        } else if let Some(v) = t.strip_prefix("tx-usecs:") {
            c.tx_usecs = v.trim().parse().ok();
        } else if let Some(v) = t.strip_prefix("Adaptive RX:") {
            c.adaptive_rx = v.split_whitespace().next().map(|w| w == "on");
        }
    }
    (c.rx_usecs.is_some() || c.adaptive_rx.is_some()).then_some(c)
}

/// Speed in Mbit/s of a link-mode name (`2500baseT/Full` → 2500).
fn mode_speed(mode: &str) -> Option<u32> {
    let digits: String = mode.chars().take_while(|c| c.is_ascii_digit()).collect();
    if digits.is_empty() || !mode[digits.len()..].starts_with("base") {
        return None;
    }
    digits.parse().ok()
}

/// `ethtool IF`: supported and link-partner speeds, autoneg, speed, duplex.
pub fn parse_ethtool(text: &str) -> (Option<LinkModes>, Option<u32>, Option<Duplex>) {
    let mut supported: Vec<u32> = Vec::new();
    let mut partner: Option<Vec<u32>> = None;
    let mut autoneg = None;
    let (mut speed, mut duplex) = (None, None);
    // Which list a continuation line belongs to.
    let mut in_list: Option<bool> = None; // Some(true) = supported, Some(false) = partner
    let mut any_supported_line = false;
    for l in text.lines() {
        let t = l.trim();
        // Mode names never contain ':', so a line without one continues the current list.
        let (key, val) = match t.split_once(':') {
            Some((k, v)) => (Some(k.trim()), v.trim()),
            None => (None, t),
        };
        match key {
            Some("Supported link modes") => {
                in_list = Some(true);
                any_supported_line = true;
            }
            Some("Link partner advertised link modes") => {
                in_list = Some(false);
                partner = Some(Vec::new());
            }
            Some("Auto-negotiation") => {
                autoneg = Some(val == "on");
                in_list = None;
                continue;
            }
            Some("Speed") => {
                speed = val.trim_end_matches("Mb/s").parse().ok();
                in_list = None;
                continue;
            }
            Some("Duplex") => {
                duplex = Duplex::parse(val);
                in_list = None;
                continue;
            }
            Some(_) => {
                in_list = None;
                continue;
            }
            None => {}
        }
        let speeds: Vec<u32> = val.split_whitespace().filter_map(mode_speed).collect();
        match in_list {
            Some(true) => supported.extend(speeds),
            Some(false) => {
                if let Some(p) = partner.as_mut() {
                    p.extend(speeds)
                }
            }
            None => {}
        }
    }
    supported.sort_unstable();
    supported.dedup();
    if let Some(p) = partner.as_mut() {
        p.sort_unstable();
        p.dedup();
    }
    let partner = partner.filter(|p| !p.is_empty());
    let modes = any_supported_line.then_some(LinkModes { supported, partner, autoneg });
    (modes, speed, duplex)
}

#[cfg(test)]
mod tests {
    use super::*;

    const IGC: &str = "Settings for enp3s0:
\tSupported ports: [ TP ]
\tSupported link modes:   10baseT/Half 10baseT/Full
\t                        100baseT/Half 100baseT/Full
\t                        1000baseT/Full
\t                        2500baseT/Full
\tSupported pause frame use: Symmetric
\tSupports auto-negotiation: Yes
\tAdvertised link modes:  10baseT/Half 10baseT/Full
\t                        2500baseT/Full
\tLink partner advertised link modes:  100baseT/Full
\t                                     1000baseT/Full
\t                                     2500baseT/Full
\tLink partner advertised pause frame use: Symmetric
\tSpeed: 1000Mb/s
\tDuplex: Full
\tAuto-negotiation: on
\tLink detected: yes
";

    #[test]
    fn ethtool_link_modes() {
        let (m, s, d) = parse_ethtool(IGC);
        let m = m.unwrap();
        assert_eq!(m.supported, vec![10, 100, 1000, 2500]);
        assert_eq!(m.partner, Some(vec![100, 1000, 2500]));
        assert_eq!(m.autoneg, Some(true));
        assert_eq!((s, d), (Some(1000), Some(Duplex::Full)));
    }

    #[test]
    fn ethtool_cdc_ncm_not_reported() {
        let t = "Settings for usb0:\n\tSupported link modes:   Not reported\n\tSpeed: 2500Mb/s\n\tDuplex: Half\n\tAuto-negotiation: off\n";
        let (m, s, d) = parse_ethtool(t);
        let m = m.unwrap();
        assert!(m.supported.is_empty() && m.partner.is_none());
        assert_eq!((s, d), (Some(2500), Some(Duplex::Half)));
    }

    #[test]
    fn rings_and_coalesce() {
        let g = "Ring parameters for enp3s0:\nPre-set maximums:\nRX:\t\t\t4096\nRX Mini:\t\tn/a\nTX:\t\t\t4096\nCurrent hardware settings:\nRX:\t\t\t256\nTX:\t\t\t256\n";
        assert_eq!(
            parse_ethtool_g(g),
            Some(Rings { rx: Some(256), rx_max: Some(4096), tx: Some(256), tx_max: Some(4096) })
        );
        let c =
            "Coalesce parameters for enp3s0:\nAdaptive RX: off  TX: off\nrx-usecs: 3\nrx-frames: n/a\ntx-usecs: 3\n";
        assert_eq!(
            parse_ethtool_c(c),
            Some(Coalesce { rx_usecs: Some(3), tx_usecs: Some(3), adaptive_rx: Some(false) })
        );
        assert_eq!(parse_ethtool_g("garbage"), None);
    }

    #[test]
    fn ip_link_and_tc() {
        let j = r#"[{"ifname":"a0","mtu":1500,"qdisc":"htb","min_mtu":68,"max_mtu":65535}]"#;
        assert_eq!(parse_ip_link(j).unwrap().max_mtu, Some(65535));
        let lo = r#"[{"ifname":"lo","max_mtu":0}]"#;
        assert_eq!(parse_ip_link(lo).unwrap().max_mtu, None);
        let t = r#"[{"kind":"tbf","handle":"8001:","root":true,"options":{"rate":12500000},"drops":7}]"#;
        let q = parse_tc_qdisc(t).unwrap();
        assert_eq!((q.kind.as_str(), q.drops), ("tbf", Some(7)));
        assert!(parse_ip_link("not json").is_none());
    }

    #[test]
    fn ethtool_i() {
        let t = "driver: r8152\nversion: v1.12.13\nfirmware-version: rtl8156b-2 v3 10/20/23\nbus-info: usb-0000:00:14.0-1\n";
        let (d, v, f) = parse_ethtool_i(t);
        assert_eq!(d.as_deref(), Some("r8152"));
        assert_eq!(v.as_deref(), Some("v1.12.13"));
        assert_eq!(f.as_deref(), Some("rtl8156b-2 v3 10/20/23"));
        let (_, _, f) = parse_ethtool_i("driver: r8152\nfirmware-version: \n");
        assert_eq!(f, None);
    }
}
