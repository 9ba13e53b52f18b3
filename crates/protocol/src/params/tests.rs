use super::*;
use proptest::prelude::*;
use serde_json::{Value, json};

#[test]
fn encodes_like_a_stock_client() {
    let p = TestParams { time: 2, bandwidth: Some(20_000_000), ..Default::default() };
    assert_eq!(
        p.to_json().to_string(),
        r#"{"tcp":true,"omit":0,"time":2,"num":0,"blockcount":0,"parallel":1,"len":131072,"bandwidth":20000000,"pacing_timer":1000,"client_version":"3.22"}"#
    );
}

#[test]
fn reads_a_3_21_udp_client_message() {
    let raw = r#"{"udp":true,"omit":1,"time":1,"num":0,"blockcount":0,"parallel":2,"bidirectional":true,"len":32768,"bandwidth":1000000,"pacing_timer":1000,"gso":0,"gso_dg_size":0,"gso_bf_size":65507,"gro":0,"gro_bf_size":65507,"TOS":8,"title":"ttl","extra_data":"xd","get_server_output":1,"udp_counters_64bit":1,"repeating_payload":1,"client_version":"3.21"}"#;
    let p = TestParams::from_json(&serde_json::from_str(raw).unwrap()).unwrap();
    assert_eq!(p.protocol, Protocol::Udp);
    assert!(p.bidirectional && p.get_server_output && p.udp_counters_64bit && p.repeating_payload);
    assert_eq!((p.parallel, p.len, p.tos, p.omit), (2, 32768, Some(8), 1));
    assert_eq!(p.title.as_deref(), Some("ttl"));
}

#[test]
fn watch_extension_is_sent_only_when_asked() {
    let p = TestParams { wireperf_watch: true, ..Default::default() };
    let j = p.to_json();
    assert_eq!(j["wireperf_watch"], 1);
    assert!(TestParams::from_json(&j).unwrap().wireperf_watch);
    assert!(TestParams::default().to_json().get("wireperf_watch").is_none());
    let p = TestParams { wireperf_latency: true, ..Default::default() };
    assert_eq!(p.to_json()["wireperf_latency"], 1);
    assert!(TestParams::from_json(&p.to_json()).unwrap().wireperf_latency);
    assert!(TestParams::default().to_json().get("wireperf_latency").is_none());
}

#[test]
fn flag_presence_turns_it_on_even_when_false() {
    let v = json!({"tcp": true, "reverse": false});
    assert!(TestParams::from_json(&v).unwrap().reverse);
}

#[test]
fn hostile_values_are_refused() {
    for v in [
        json!({"tcp": true, "parallel": 100000}),
        json!({"tcp": true, "len": -5}),
        json!({"tcp": true, "window": 4_000_000_000u64}),
        json!({"udp": true, "len": 70000}),
        json!({"tcp": true, "len": 0}),
        json!({"sctp": true}),
    ] {
        assert!(TestParams::from_json(&v).is_err(), "{v}");
    }
}

/// Parameter documents captured from a stock 3.22 client (`iperf3 -d`), read as 3.22 would.
#[test]
fn reads_what_a_3_22_client_sends() {
    let gsro = r#"{"udp":true,"omit":0,"time":1,"num":0,"blockcount":0,"parallel":1,"len":32768,"bandwidth":10000000,"pacing_timer":1000,"gso":1,"gso_dg_size":32768,"gso_bf_size":32768,"gro":1,"gro_bf_size":65507,"client_version":"3.22"}"#;
    let p = TestParams::from_json(&serde_json::from_str(gsro).unwrap()).unwrap();
    assert_eq!(p.offload, UdpOffload::on(32768));
    assert_eq!(UdpOffload::requested(32768), p.offload, "what --gsro -l 32768 sends");
    let unsized_ = UdpOffload::requested(0);
    assert_eq!((unsized_.gso, unsized_.gso_dg_size, unsized_.gso_bf_size), (true, 1460, 65507));
    assert_eq!(p.to_json().to_string().replace("3.22", "x"), gsro.replace("3.22", "x"), "same keys, order, types");
    let tcp = r#"{"tcp":true,"omit":0,"time":1,"num":0,"blockcount":0,"parallel":1,"reverse":true,"mptcp":true,"len":131072,"pacing_timer":1000,"skip_rx_copy":1,"client_version":"3.22"}"#;
    let p = TestParams::from_json(&serde_json::from_str(tcp).unwrap()).unwrap();
    assert!(p.mptcp && p.skip_rx_copy && p.reverse);
    assert_eq!(p.to_json().to_string(), tcp);
    // `-A 0,1`: the server's CPU right after `omit`, as 3.22 places it.
    let pinned = r#"{"tcp":true,"omit":0,"server_affinity":1,"time":1,"num":0,"blockcount":0,"parallel":1,"len":131072,"pacing_timer":1000,"client_version":"3.22"}"#;
    let p = TestParams::from_json(&serde_json::from_str(pinned).unwrap()).unwrap();
    assert_eq!(p.server_affinity, Some(1));
    assert_eq!(p.to_json().to_string(), pinned);
    let plain_udp = TestParams { protocol: Protocol::Udp, len: 32768, ..Default::default() }.to_json();
    assert_eq!(plain_udp["gso"], json!(0), "3.22 sends the offload keys, off, with every UDP test");
    assert_eq!(plain_udp["gso_bf_size"], json!(65507));
}

/// A value of the wrong type is ignored, as 3.18+ ignore it: the setting is lost, the
/// test still runs.
#[test]
fn wrongly_typed_values_read_as_absent() {
    let p = TestParams::from_json(&json!({"tcp": true, "reverse": 1, "get_server_output": true,
        "parallel": "4", "omit": "x", "title": 5, "zerocopy": "1", "mptcp": 1}))
    .unwrap();
    assert!(!p.reverse && !p.get_server_output && !p.zerocopy && !p.mptcp);
    assert_eq!((p.parallel, p.omit, p.title), (1, 0, None));
}

#[test]
fn no_protocol_is_refused_and_sctp_is_refused_with_nosctp() {
    assert_eq!(TestParams::from_json(&json!({"time": 1})).unwrap_err(), ParamsError::NoProtocol);
    assert_eq!(TestParams::from_json(&json!({"tcp": 1})).unwrap_err(), ParamsError::NoProtocol, "not a boolean");
    assert_eq!(TestParams::from_json(&json!({"sctp": true})).unwrap_err().errno(), IperfErrno::NOSCTP);
}

/// Each 3.22 range check, at the first value past each end, with 3.22's code.
#[test]
fn range_checks_answer_with_3_22_codes() {
    let e = |v: Value| TestParams::from_json(&v).unwrap_err().errno();
    let cases: &[(&str, i64, IperfErrno)] = &[
        ("omit", 601, IperfErrno::OMIT),
        ("omit", -1, IperfErrno::OMIT),
        ("time", 86_401, IperfErrno::DURATION),
        ("num", -1, IperfErrno::RECVPARAMS),
        ("blockcount", -1, IperfErrno::RECVPARAMS),
        ("MSS", 32_768, IperfErrno::MSS),
        ("parallel", 0, IperfErrno::NUMSTREAMS),
        ("parallel", 129, IperfErrno::NUMSTREAMS),
        ("window", 512 * 1024 * 1024 + 1, IperfErrno::BUFSIZE),
        ("len", -1, IperfErrno::BLOCKSIZE),
        ("len", 1024 * 1024 + 1, IperfErrno::BLOCKSIZE),
        ("bandwidth", -1, IperfErrno::RECVPARAMS),
        ("fqrate", -1, IperfErrno::RECVPARAMS),
        ("pacing_timer", -1, IperfErrno::RECVPARAMS),
        ("burst", 0, IperfErrno::BURST),
        ("burst", 1001, IperfErrno::BURST),
        ("TOS", 256, IperfErrno::BADTOS),
        ("TOS", -1, IperfErrno::BADTOS),
        ("flowlabel", 0, IperfErrno::SETFLOW),
        ("flowlabel", 0x100000, IperfErrno::SETFLOW),
        ("server_affinity", -1, IperfErrno::AFFINITY),
        ("server_affinity", 1025, IperfErrno::AFFINITY),
        ("gro", 2, IperfErrno::RECVPARAMS),
        ("gso_bf_size", -1, IperfErrno::RECVPARAMS),
    ];
    for &(key, value, want) in cases {
        assert_eq!(e(json!({"tcp": true, key: value})), want, "{key} = {value}");
    }
    assert_eq!(e(json!({"udp": true, "len": 70000})), IperfErrno::UDPBLOCKSIZE);
    assert_eq!(e(json!({"udp": true, "len": 15})), IperfErrno::UDPBLOCKSIZE);
    for (key, value) in [("MSS", 32_767), ("parallel", 128), ("omit", 600), ("time", 86_400), ("TOS", 255)] {
        assert!(TestParams::from_json(&json!({"tcp": true, key: value})).is_ok(), "{key} = {value} is allowed");
    }
}

/// Zero burst and flow label mean "unset" and are never sent: 3.22 refuses both.
#[test]
fn zero_burst_and_flowlabel_are_not_sent() {
    let v = TestParams { burst: Some(0), flowlabel: Some(0), ..Default::default() }.to_json();
    assert!(v.get("burst").is_none() && v.get("flowlabel").is_none(), "{v}");
}

fn any_params() -> impl Strategy<Value = TestParams> {
    let shape = (
        any::<bool>(),
        0u32..=600,
        0u32..=86400,
        0u64..i64::MAX as u64,
        0u64..1 << 40,
        1u32..=128,
        any::<bool>(),
        any::<bool>(),
        proptest::option::of(1u32..=32767),
        any::<bool>(),
    );
    let sizes = (
        proptest::option::of(1u32..=512 * 1024 * 1024),
        16u32..65507,
        proptest::option::of(1u64..u64::MAX / 2),
        proptest::option::of(1u64..u64::MAX / 2),
        proptest::option::of(1u32..=1000),
        proptest::option::of(1i32..=255),
        proptest::option::of(1i32..=0xfffff),
        proptest::option::of(0u32..=1024),
    );
    let strings = (
        proptest::option::of(".{0,40}"),
        proptest::option::of(".{0,40}"),
        proptest::option::of("[a-z]{1,12}"),
        proptest::option::of("[A-Za-z0-9+/=]{1,64}"),
    );
    let flags = proptest::collection::vec(any::<bool>(), 8);
    (shape, sizes, strings, flags, any::<bool>()).prop_map(|(a, b, c, f, gsro)| {
        let protocol = if a.0 { Protocol::Udp } else { Protocol::Tcp };
        TestParams {
            protocol,
            omit: a.1,
            time: a.2,
            num: a.3,
            blockcount: a.4,
            parallel: a.5,
            reverse: a.6,
            bidirectional: a.7,
            mss: a.8,
            nodelay: a.9,
            window: b.0,
            len: b.1,
            bandwidth: b.2,
            fqrate: b.3,
            burst: b.4,
            tos: b.5,
            flowlabel: b.6,
            server_affinity: b.7,
            title: c.0,
            extra_data: c.1,
            congestion: c.2,
            authtoken: c.3,
            get_server_output: f[0],
            udp_counters_64bit: f[1],
            repeating_payload: f[2],
            zerocopy: f[3],
            dont_fragment: f[4],
            skip_rx_copy: f[5],
            mptcp: f[6],
            offload: if gsro && a.0 { UdpOffload::on(b.1) } else { UdpOffload::default() },
            client_version: "3.22".into(),
            ..Default::default()
        }
    })
}

proptest! {
    /// Every parameter document 3.22 can send reads back to the same parameters.
    #[test]
    fn round_trips(p in any_params()) {
        prop_assert_eq!(TestParams::from_json(&p.to_json()).unwrap(), p);
    }

    /// Any integer for any numeric key either reads back as sent or is refused with the
    /// code of that key's 3.22 check; it never panics or reads as something else.
    #[test]
    fn each_numeric_key_reads_back_or_is_refused_with_its_code(
        key in proptest::sample::select(vec!["omit", "time", "MSS", "parallel", "window", "burst", "TOS", "flowlabel", "server_affinity"]),
        value in -1_000_000i64..1_000_000_000,
    ) {
        let (lo, hi, code) = match key {
            "omit" => (0, 600, IperfErrno::OMIT),
            "time" => (0, 86_400, IperfErrno::DURATION),
            "MSS" => (0, 32_767, IperfErrno::MSS),
            "parallel" => (1, 128, IperfErrno::NUMSTREAMS),
            "window" => (0, 512 * 1024 * 1024, IperfErrno::BUFSIZE),
            "burst" => (1, 1000, IperfErrno::BURST),
            "TOS" => (0, 255, IperfErrno::BADTOS),
            "server_affinity" => (0, 1024, IperfErrno::AFFINITY),
            _ => (1, 0xfffff, IperfErrno::SETFLOW),
        };
        let read = TestParams::from_json(&json!({"tcp": true, key: value}));
        if (lo..=hi).contains(&value) {
            let back = read.unwrap().to_json();
            let shown = back.get(key).and_then(Value::as_i64).unwrap_or(0);
            // Zero means unset for MSS, window and TOS, and is then not sent.
            prop_assert_eq!(shown, value);
        } else {
            prop_assert_eq!(read.unwrap_err().errno(), code);
        }
    }
}
