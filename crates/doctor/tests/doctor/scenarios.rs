//! One fixture per failure mode; each asserts the exact set of finding ids.

use crate::support::fixture::{Host, Netdev, PciNic, Tree, UsbNic};
use crate::support::{ids, inspect_root, set};
use wireperf_doctor::rules::{Action, Severity};
use wireperf_doctor::{Report, RuleOptions};

/// link-facts §7.4: cdc_ncm on an RTL8156 (device names adjusted to this fixture's port 2-1).
const CDC_NCM_LOG: &str = "\
[785962.929944] usb 1-1: New USB device found, idVendor=0bda, idProduct=8156, bcdDevice=30.00
[785963.017072] cdc_ncm 2-1:2.0: setting rx_max = 16384
[785963.017682] cdc_ncm 2-1:2.0 usb0: register 'cdc_ncm' at usb-0000:00:14.0-1, CDC NCM, 00:24:27:88:08:15
[786139.600992] cdc_ncm 2-1:2.0 enx00e04c680001: network connection: connected
[786139.632997] cdc_ncm 2-1:2.0 enx00e04c680001: 2500 mbit/s downlink 2500 mbit/s uplink
";

/// Scenario A (link-facts §7.2): RTL8156B on cdc_ncm, "2500/half", USB 3, kernel 6.1.52.
pub fn scenario_a() -> (Tree, UsbNic) {
    let t = Tree::new();
    Host {
        kernel: "6.1.52",
        usb_drivers: &["usb", "cdc_ncm", "cdc_ether"],
        softnet: "0558881c 00000312 000001a0 00000000\n00000001 00000000 00000000 00000000\n",
        ..Host::default()
    }
    .write(&t);
    let nic = UsbNic {
        net: Netdev { duplex: Some("half"), rps: "0", stats: vec![("rx_dropped", "1234")], ..Netdev::default() },
        driver: "cdc_ncm",
        device_driver: "usb",
        config: 2,
        iface_class: "02",
        ..UsbNic::default()
    };
    nic.write(&t);
    t.file("sys/module/cdc_ncm/taint", "\n").kernel_log(CDC_NCM_LOG);
    (t, nic)
}

/// The same adapter fixed: r8152 in vendor config 1, firmware loaded, RPS on, kernel 6.8.
pub fn healthy_r8152() -> (Tree, UsbNic) {
    let t = Tree::new();
    Host::default().write(&t);
    let nic = UsbNic::default();
    nic.write(&t);
    let n = nic.net.name;
    t.cmd(n, "ip-link.json", &format!(r#"[{{"ifname":"{n}","mtu":1500,"qdisc":"fq_codel","min_mtu":68,"max_mtu":16362}}]"#))
        .cmd(n, "ethtool-i.txt", "driver: r8152\nversion: v1.12.13\nfirmware-version: rtl8156b-2 v3 10/20/23\nbus-info: usb-0000:00:14.0-1\n")
        .file("lib/firmware/rtl_nic/rtl8156b-2.fw", [0u8; 16])
        .file("sys/module/r8152/version", "v1.12.13\n")
        .kernel_log("[ 3175.006183] r8152 2-1:1.0: load rtl8156b-2 v3 10/20/23 successfully\n[ 3175.113164] r8152 2-1:1.0 eth1: v1.12.13\n");
    (t, nic)
}

fn only(r: &Report) -> &wireperf_doctor::InterfaceReport {
    &r.interfaces[0]
}

fn finding<'a>(r: &'a Report, id: &str) -> &'a wireperf_doctor::Finding {
    only(r).findings.iter().find(|f| f.id == id).unwrap_or_else(|| panic!("no finding {id}"))
}

#[test]
fn rtl8156b_on_cdc_ncm_half_duplex_usb3() {
    let (t, _) = scenario_a();
    let r = inspect_root(t.root(), RuleOptions::default());
    assert_eq!(ids(&r), set(&["generic-usb-driver", "half-duplex", "rps-off", "mtu-locked"]));
    let i = only(&r);
    let chip = i.link.chip.as_ref().expect("chip");
    assert_eq!((chip.name.as_str(), chip.variant.as_deref()), ("RTL8156B", Some("RTL8156BG")));
    assert_eq!(i.link.max_mtu, Some(1504), "wMaxSegmentSize 1518 − 14");
    assert_eq!(i.link.usb.as_ref().and_then(|u| u.vendor_configuration), Some(1));
    let g = i.link.goodput.expect("goodput");
    assert_eq!(g.tcp_bps / 10_000_000, 235);
    // Worst first; R1 on a 6.1 kernel without cfgselector is the udev-rule sub-case (R1b).
    assert_eq!(i.findings[0].id, "generic-usb-driver");
    let r1 = finding(&r, "generic-usb-driver");
    assert_eq!(r1.severity, Severity::Crit);
    assert!(r1.fix.drops_link);
    assert!(r1.fix.commands.iter().any(|c| c.contains("50-usb-realtek-net.rules")), "{:?}", r1.fix.commands);
    assert_eq!(finding(&r, "half-duplex").severity, Severity::Info);
    // The softnet drops/squeezes on a 2.5G link make RPS critical.
    assert_eq!(finding(&r, "rps-off").severity, Severity::Crit);
    assert_eq!(
        finding(&r, "rps-off").apply,
        vec![Action::WriteFile {
            path: "sys/class/net/enx00e04c680001/queues/rx-0/rps_cpus".into(),
            value: "f".into()
        }]
    );
    // Rules lacking data say so.
    let nc: Vec<&str> = i.not_checked.iter().map(|n| n.id).collect();
    assert!(
        nc.contains(&"small-rings") && nc.contains(&"coalescing") && nc.contains(&"speed-below-capability"),
        "{nc:?}"
    );
}

#[test]
fn rtl8156b_r1a_on_new_kernel_suggests_modprobe() {
    let (t, _) = scenario_a();
    t.file("proc/sys/kernel/osrelease", "6.8.0\n");
    let r = inspect_root(t.root(), RuleOptions::default());
    let r1 = finding(&r, "generic-usb-driver");
    assert_eq!(r1.fix.commands, vec!["sudo modprobe r8152".to_string()]);
}

#[test]
fn rtl8157_on_cdc_ncm_before_7_1_must_not_switch() {
    let t = Tree::new();
    Host { kernel: "6.12.0", ..Host::default() }.write(&t);
    UsbNic {
        net: Netdev { speed: Some("5000"), duplex: Some("half"), ..Netdev::default() },
        driver: "cdc_ncm",
        device_driver: "usb",
        pid: "8157",
        bcd: "3000",
        config: 2,
        iface_class: "02",
        usb_speed: "10000",
        ..UsbNic::default()
    }
    .write(&t);
    let r = inspect_root(t.root(), RuleOptions::default());
    assert_eq!(ids(&r), set(&["generic-usb-driver", "half-duplex"]));
    let r1 = finding(&r, "generic-usb-driver");
    assert!(r1.fix.commands[0].contains("do NOT switch"), "{:?}", r1.fix.commands);
}

#[test]
fn rtl8156b_fixed_on_r8152_has_no_findings() {
    let (t, _) = healthy_r8152();
    let r = inspect_root(t.root(), RuleOptions::default());
    assert_eq!(ids(&r), set(&[]));
    let i = only(&r);
    let chip = i.link.chip.as_ref().expect("chip");
    assert_eq!(chip.name, "RTL8156B");
    assert!(chip.identified_by.contains("16362"), "{}", chip.identified_by);
    assert_eq!(i.link.firmware_file_found.as_deref(), Some("lib/firmware/rtl_nic/rtl8156b-2.fw"));
}

#[test]
fn rtl8156b_on_usb2_port() {
    let (t, _) = healthy_r8152();
    let t2 = Tree::new();
    drop(t);
    Host::default().write(&t2);
    let nic = UsbNic { usb_speed: "480", usb_version: " 2.10", ..UsbNic::default() };
    nic.write(&t2);
    t2.cmd(
        nic.net.name,
        "ethtool-i.txt",
        "driver: r8152\nversion: v1.12.13\nfirmware-version: rtl8156b-2 v3 10/20/23\n",
    )
    .kernel_log("[ 1342.926119] usb 1-1: new high-speed USB device number 3 using xhci_hcd\n");
    let r = inspect_root(t2.root(), RuleOptions::default());
    assert_eq!(ids(&r), set(&["usb2-link"]));
    let f = finding(&r, "usb2-link");
    assert!(f.evidence.iter().any(|e| e.contains("high-speed")), "{:?}", f.evidence);
    let g = only(&r).link.goodput.expect("goodput");
    assert_eq!(g.limited_by, wireperf_doctor::goodput::Limit::UsbBus);
    assert!(g.tcp_bps < 426_000_000);
}

#[test]
fn rtl8156b_firmware_missing() {
    let t = Tree::new();
    Host::default().write(&t);
    UsbNic::default().write(&t);
    t.kernel_log(
        "[    5.101010] r8152 2-1:1.0: Direct firmware load for rtl_nic/rtl8156b-2.fw failed with error -2\n\
         [    5.101020] r8152 2-1:1.0: unable to load firmware patch rtl_nic/rtl8156b-2.fw (-2)\n",
    );
    let r = inspect_root(t.root(), RuleOptions::default());
    assert_eq!(ids(&r), set(&["firmware-missing"]));
    assert!(finding(&r, "firmware-missing").fix.commands[0].contains("firmware-realtek"));
}

#[test]
fn firmware_absent_without_drvinfo_is_not_checked() {
    let t = Tree::new();
    Host::default().write(&t);
    UsbNic::default().write(&t);
    t.kernel_log("[ 1.0] usb 2-1: new SuperSpeed USB device number 2 using xhci_hcd\n");
    let r = inspect_root(t.root(), RuleOptions::default());
    assert_eq!(ids(&r), set(&[]));
    assert!(only(&r).not_checked.iter().any(|n| n.id == "firmware-missing"));
}

#[test]
fn tx_status_71_usb_protocol_errors() {
    let (t, nic) = healthy_r8152();
    t.file(format!("sys/class/net/{}/statistics/tx_errors", nic.net.name), "37\n").kernel_log(
        "[307241.049964] r8152 2-1:1.0 eth2: Tx status -71\n\
         [307302.048223] r8152 2-1:1.0 eth2: Tx status -71\n\
         [  812.000001] usb 2-1: Failed to read 4 bytes at 0xe610/0x0100 (-71)\n",
    );
    let r = inspect_root(t.root(), RuleOptions::default());
    // power/control is `auto` on an erroring adapter, so autosuspend is flagged too (R17).
    assert_eq!(ids(&r), set(&["usb-protocol-errors", "usb-autosuspend"]));
    let f = finding(&r, "usb-protocol-errors");
    assert_eq!(f.severity, Severity::Crit);
    assert!(f.evidence.iter().any(|e| e.contains("tx_errors = 37")), "{:?}", f.evidence);
    assert!(f.evidence[0].starts_with("3 USB protocol error"), "{:?}", f.evidence);
}

#[test]
fn intel_i225_igc_four_queues_has_no_findings() {
    let t = Tree::new();
    Host::default().write(&t);
    PciNic::default().write(&t);
    t.kernel_log("[    2.000000] igc 0000:03:00.0 enp3s0: NIC Link is Up 2500 Mbps Full Duplex, Flow Control: RX/TX\n");
    let r = inspect_root(t.root(), RuleOptions::default());
    assert_eq!(ids(&r), set(&[]));
    let i = only(&r);
    assert_eq!(i.link.chip.as_ref().map(|c| c.name.as_str()), Some("I225-V"));
    assert_eq!((i.link.queues.rx, i.link.max_mtu), (4, Some(9216)));
    assert_eq!(i.link.rings.as_ref().and_then(|r| r.rx_max), Some(4096));
    assert!(i.not_checked.iter().all(|n| n.id == "socket-buffers"), "{:?}", i.not_checked);
}

#[test]
fn aqc111u_5g_on_usb3_gen1() {
    let t = Tree::new();
    Host::default().write(&t);
    UsbNic {
        net: Netdev { speed: Some("5000"), ..Netdev::default() },
        driver: "aqc111",
        device_driver: "usb",
        vid: "2eca",
        pid: "c101",
        bcd: "0101",
        product: "QNAP QNA-UC5G1T",
        ..UsbNic::default()
    }
    .write(&t);
    let r = inspect_root(t.root(), RuleOptions::default());
    assert_eq!(ids(&r), set(&["usb-bus-limit"]));
    assert!(finding(&r, "usb-bus-limit").fix.commands[0].contains("no fix"));
    assert_eq!(only(&r).link.chip.as_ref().map(|c| c.name.as_str()), Some("AQC111U"));
}

#[test]
fn half_duplex_on_a_phy_driver_is_critical() {
    let t = Tree::new();
    Host::default().write(&t);
    UsbNic {
        net: Netdev { duplex: Some("half"), stats: vec![("collisions", "12")], ..Netdev::default() },
        power_control: "on",
        ..UsbNic::default()
    }
    .write(&t);
    let r = inspect_root(t.root(), RuleOptions::default());
    assert_eq!(ids(&r), set(&["half-duplex"]));
    assert_eq!(finding(&r, "half-duplex").severity, Severity::Crit);
}

#[test]
fn link_down_reports_speed_not_reported() {
    let t = Tree::new();
    Host::default().write(&t);
    PciNic {
        net: Netdev {
            name: "enp3s0",
            queues: 4,
            rps: "0",
            operstate: "down",
            carrier: "0",
            speed: None,
            duplex: None,
            ..Netdev::default()
        },
        ..PciNic::default()
    }
    .write(&t);
    // ethtool also has nothing to say about a down link.
    t.cmd("enp3s0", "ethtool.txt", "Settings for enp3s0:\n\tSupported link modes:   1000baseT/Full\n\tSpeed: Unknown!\n\tDuplex: Unknown! (255)\n\tLink detected: no\n");
    let r = inspect_root(t.root(), RuleOptions::default());
    assert_eq!(ids(&r), set(&["link-down"]));
    let i = only(&r);
    assert_eq!(i.link.speed_mbps, None);
    let text = wireperf_doctor::render::render(&r);
    assert!(text.contains("speed not reported"), "{text}");
}

#[test]
fn speed_below_what_both_ends_support() {
    let t = Tree::new();
    Host::default().write(&t);
    PciNic {
        net: Netdev { name: "enp3s0", queues: 4, rps: "0", speed: Some("1000"), ..Netdev::default() },
        ..PciNic::default()
    }
    .write(&t);
    let r = inspect_root(t.root(), RuleOptions::default());
    assert_eq!(ids(&r), set(&["speed-below-capability"]));
    // A partner that only does 1G is not a finding.
    let t = Tree::new();
    Host::default().write(&t);
    PciNic {
        net: Netdev { name: "enp3s0", queues: 4, rps: "0", speed: Some("1000"), ..Netdev::default() },
        partner_max: 1000,
        ..PciNic::default()
    }
    .write(&t);
    assert_eq!(ids(&inspect_root(t.root(), RuleOptions::default())), set(&[]));
}

#[test]
fn igc_link_flaps_from_kernel_log() {
    let t = Tree::new();
    Host::default().write(&t);
    PciNic::default().write(&t);
    t.kernel_log(
        "[58437.485179] igc 0000:03:00.0 eth1: NIC Link is Down\n\
         [58440.469028] igc 0000:03:00.0 eth1: NIC Link is Up 2500 Mbps Full Duplex, Flow Control: RX/TX\n",
    );
    let r = inspect_root(t.root(), RuleOptions::default());
    assert_eq!(ids(&r), set(&["link-flaps"]));
    assert!(finding(&r, "link-flaps").fix.commands[0].contains("--set-eee enp3s0 eee off"));
}

#[test]
fn r8152_tx_timeouts() {
    let (t, _) = healthy_r8152();
    t.kernel_log("[ 9.1] r8152 2-1:1.0 enx00e04c680001: Tx timeout\n[ 9.2] r8152 2-1:1.0 enx00e04c680001: NETDEV WATCHDOG: CPU: 3: transmit queue 0 timed out 5008 ms\n");
    let r = inspect_root(t.root(), RuleOptions::default());
    assert_eq!(ids(&r), set(&["tx-timeouts"]));
}

#[test]
fn realtek_out_of_tree_driver_with_sg_disabled() {
    let (t, nic) = healthy_r8152();
    t.file("sys/module/r8152/taint", "O\n")
        .file("sys/module/r8152/version", "v2.21.4 (2025/10/28)\n")
        .file(format!("sys/class/net/{}/rtl_adv/sg_en", nic.net.name), "disable\n");
    let r = inspect_root(t.root(), RuleOptions::default());
    assert_eq!(ids(&r), set(&["vendor-driver"]));
    assert_eq!(finding(&r, "vendor-driver").severity, Severity::Warn);
}

#[test]
fn small_rings_with_rx_drops() {
    let t = Tree::new();
    Host::default().write(&t);
    PciNic {
        net: Netdev {
            name: "enp3s0",
            queues: 4,
            rps: "0",
            stats: vec![("rx_missed_errors", "500")],
            ..Netdev::default()
        },
        ..PciNic::default()
    }
    .write(&t);
    let r = inspect_root(t.root(), RuleOptions::default());
    assert_eq!(ids(&r), set(&["small-rings"]));
    assert_eq!(finding(&r, "small-rings").apply, vec![Action::SetRxRing { iface: "enp3s0".into(), rx: 1024 }]);
}

#[test]
fn coalescing_off_on_igc() {
    let t = Tree::new();
    Host::default().write(&t);
    PciNic { rx_usecs: 0, ..PciNic::default() }.write(&t);
    assert_eq!(ids(&inspect_root(t.root(), RuleOptions::default())), set(&["coalescing"]));
}

#[test]
fn short_txqueuelen() {
    let t = Tree::new();
    Host::default().write(&t);
    PciNic {
        net: Netdev { name: "enp3s0", queues: 4, rps: "0", tx_queue_len: "100", ..Netdev::default() },
        ..PciNic::default()
    }
    .write(&t);
    let r = inspect_root(t.root(), RuleOptions::default());
    assert_eq!(ids(&r), set(&["txqueuelen"]));
    assert_eq!(finding(&r, "txqueuelen").severity, Severity::Info);
}

#[test]
fn socket_buffers_only_with_an_rtt() {
    let t = Tree::new();
    Host::default().write(&t);
    PciNic::default().write(&t);
    // 2.35 Gbit/s × 50 ms = 14.7 MB > tcp_rmem max 6 MiB and tcp_wmem max 4 MiB.
    let r = inspect_root(t.root(), RuleOptions { rtt_ms: Some(50.0), want_mtu: None });
    assert_eq!(ids(&r), set(&["socket-buffers"]));
    let f = finding(&r, "socket-buffers");
    assert!(
        f.apply.iter().any(|a| matches!(a, Action::WriteFile { path, .. } if path == "proc/sys/net/ipv4/tcp_rmem"))
    );
    // The remedies' fix: 4 × 14.7 MB rounds up to 64 MiB; rmem_max/wmem_max are not touched
    // (autotuning never reads them).
    assert_eq!(
        f.fix.commands,
        [
            "sudo sysctl -w net.ipv4.tcp_rmem='4096 131072 67108864'",
            "sudo sysctl -w net.ipv4.tcp_wmem='4096 16384 67108864'"
        ]
    );
    assert!(f.apply.iter().all(|a| !matches!(a, Action::WriteFile { path, .. } if path.contains("net/core"))));
    // LAN RTT: nothing to say.
    let r = inspect_root(t.root(), RuleOptions { rtt_ms: Some(0.3), want_mtu: None });
    assert_eq!(ids(&r), set(&[]));
}

#[test]
fn wanted_mtu_above_device_maximum() {
    let t = Tree::new();
    Host::default().write(&t);
    PciNic::default().write(&t);
    let r = inspect_root(t.root(), RuleOptions { rtt_ms: None, want_mtu: Some(16000) });
    assert_eq!(ids(&r), set(&["mtu-locked"]));
    assert_eq!(finding(&r, "mtu-locked").severity, Severity::Warn);
}

#[test]
fn json_document_has_the_documented_fields() {
    let (t, _) = scenario_a();
    let r = inspect_root(t.root(), RuleOptions::default());
    let v = wireperf_doctor::json::to_value(&r).expect("json");
    assert_eq!(v["schema_version"], 1);
    let i = &v["interfaces"][0];
    assert_eq!(i["name"], "enx00e04c680001");
    assert_eq!(i["driver"], "cdc_ncm");
    assert_eq!(i["chip"], "RTL8156B");
    assert_eq!(i["speed_mbps"], 2500);
    assert_eq!(i["duplex"], "half");
    assert_eq!(i["mtu"], 1500);
    assert_eq!(i["max_mtu"], 1504);
    let u = &i["usb"];
    assert_eq!((u["link_speed_mbps"].as_u64(), u["version"].as_str()), (Some(5000), Some("3.20")));
    assert_eq!(
        (u["vendor_id"].as_str(), u["product_id"].as_str(), u["bcd_device"].as_str()),
        (Some("0bda"), Some("8156"), Some("3104"))
    );
    assert_eq!(u["product"], "USB 10/100/1G/2.5G LAN");
    let f = &i["findings"][0];
    assert_eq!((f["id"].as_str(), f["severity"].as_str()), (Some("generic-usb-driver"), Some("crit")));
    assert!(
        f["summary"].is_string()
            && f["evidence"].is_array()
            && f["fix"]["commands"].is_array()
            && f["fix"]["verify"].is_array()
    );
    assert!(i["not_checked"].as_array().is_some_and(|a| !a.is_empty()));
}

#[test]
fn text_output_lists_facts_findings_and_not_checked() {
    let (t, _) = scenario_a();
    let text = wireperf_doctor::render::render(&inspect_root(t.root(), RuleOptions::default()));
    for want in [
        "enx00e04c680001",
        "cdc_ncm",
        "USB 3.20 at 5000 Mbit/s",
        "0bda:8156 bcdDevice 31.04",
        "RTL8156B (RTL8156BG)",
        "2500 Mbit/s, duplex half",
        "1500 (max 1504",
        "rings       not reported",
        "TCP 2.35 Gbits/sec",
        "CRIT generic-usb-driver",
        "not checked",
    ] {
        assert!(text.contains(want), "missing {want:?} in:\n{text}");
    }
    // Worst first: crit before info.
    assert!(text.find("CRIT generic-usb-driver") < text.find("INFO half-duplex"));
}

#[test]
fn kernel_log_file_option_and_kmsg_records() {
    let t = Tree::new();
    Host::default().write(&t);
    UsbNic::default().write(&t);
    let log = t.root().join("kmsg.txt");
    std::fs::write(&log, "4,412,5101010,-;r8152 2-1:1.0: Direct firmware load for rtl_nic/rtl8156b-2.fw failed with error -2\n SUBSYSTEM=usb\n DEVICE=+usb:2-1:1.0\n").expect("write");
    let opts = wireperf_doctor::InspectOptions {
        root: Some(t.root().to_path_buf()),
        kernel_log: wireperf_doctor::KernelLogSource::File(log),
        ..Default::default()
    };
    let r = wireperf_doctor::inspect(&opts).expect("inspect");
    assert_eq!(ids(&r), set(&["firmware-missing"]));
}

#[test]
fn no_kernel_log_means_log_rules_not_checked() {
    let (t, _) = healthy_r8152();
    std::fs::remove_file(t.root().join("wireperf/kernel.log")).expect("rm");
    let r = inspect_root(t.root(), RuleOptions::default());
    let nc: Vec<&str> = only(&r).not_checked.iter().map(|n| n.id).collect();
    assert!(nc.contains(&"usb-protocol-errors") && nc.contains(&"tx-timeouts"), "{nc:?}");
    assert!(!r.host.kernel_log.available);
}

#[test]
fn named_interface_must_exist_and_garbage_does_not_panic() {
    let (t, _) = scenario_a();
    let opts = wireperf_doctor::InspectOptions {
        root: Some(t.root().to_path_buf()),
        interfaces: vec!["nope0".into()],
        ..Default::default()
    };
    assert!(matches!(wireperf_doctor::inspect(&opts), Err(wireperf_doctor::Error::NoSuchInterface { .. })));
    // Garbage everywhere: still a report, no panic.
    let n = "enx00e04c680001";
    for f in [
        "speed",
        "mtu",
        "duplex",
        "carrier_changes",
        "flags",
        "queues/rx-0/rps_cpus",
        "device/../descriptors",
        "device/../speed",
    ] {
        t.file(format!("sys/class/net/{n}/{f}"), [0xffu8, 0x00, b'x', b'\n']);
    }
    t.file("proc/net/softnet_stat", "zz\n")
        .file("sys/devices/system/cpu/online", "9-1\n")
        .kernel_log("\u{0}[\n[1] : \nusb : :\n");
    let r = inspect_root(t.root(), RuleOptions::default());
    assert_eq!(r.interfaces.len(), 1);
    let bad_root = tempfile::tempdir().expect("tmp");
    let opts = wireperf_doctor::InspectOptions { root: Some(bad_root.path().to_path_buf()), ..Default::default() };
    assert!(matches!(wireperf_doctor::inspect(&opts), Err(wireperf_doctor::Error::BadRoot(_))));
}

/// Prints scenario A's text and JSON output (pasted into docs/doctor.md). Run with
/// `cargo test -p wireperf-doctor --test doctor example_output -- --ignored --nocapture`.
#[test]
#[ignore]
fn example_output() {
    let (t, _) = scenario_a();
    let r = inspect_root(t.root(), RuleOptions::default());
    println!("{}", wireperf_doctor::render::render(&r));
    println!("{}", wireperf_doctor::json::to_string(&r).expect("json"));
}
