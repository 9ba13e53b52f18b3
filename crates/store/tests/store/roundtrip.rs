//! Insert, list, get, compare, delete, export: what goes in comes back out.

use serde_json::json;
use wireperf_protocol::schema::TestReport;
use wireperf_store::{Direction, ListFilter, NewRun, RunKind, Store, StoreError, Unit};

use crate::support::fixtures::{f, n, tcp_client_report, temp_db};

fn doctor(driver: &str, speed: u32, findings: &[&str]) -> serde_json::Value {
    let findings: Vec<_> = findings.iter().map(|id| json!({"id": id, "severity": "warn"})).collect();
    json!({"schema": "wireperf-doctor", "schema_version": 1, "interfaces": [
        {"name": "enx0", "driver": driver, "speed_mbps": speed, "duplex": "full", "mtu": 1500,
         "findings": findings}]})
}

/// A copy of `r` with every rate scaled, as if the link had changed.
fn scaled(r: &TestReport, k: f64) -> TestReport {
    let mut r = r.clone();
    for s in [&mut r.end.sum_sent, &mut r.end.sum_received].into_iter().flatten() {
        s.bits_per_second *= k;
        s.bytes = (s.bytes as f64 * k) as u64;
    }
    r
}

#[test]
fn client_run_round_trips_through_insert_list_get() {
    let (text, report) = tcp_client_report();
    let doc: serde_json::Value = serde_json::from_str(&text).unwrap();
    let (_dir, path) = temp_db();
    let mut store = Store::open(&path).unwrap();
    assert!(path.exists(), "open creates the file and its parent directories");
    let mut run = NewRun::single(RunKind::Client, Some("wireperf -c 127.0.0.1 -t 1".into()), report.clone());
    run.label = Some("before driver swap".into());
    run.verdicts = Some(json!([{"phase": "upload", "verdict": "fast"}]));
    let id = store.insert_run(&run).unwrap();

    let list = store.list(&ListFilter::default()).unwrap();
    assert_eq!(list.len(), 1);
    let s = &list[0];
    assert_eq!((s.id, s.kind, s.phases.clone()), (id, RunKind::Client, vec!["upload".to_string()]));
    assert_eq!(s.label.as_deref(), Some("before driver swap"));
    assert_eq!(s.remote_host.as_deref(), Some("127.0.0.1"));
    assert_eq!(s.figures.received_bps, Some(f(&doc, "/end/sum_received/bits_per_second")));
    assert_eq!(s.time, wireperf_store::rfc3339_utc(s.time_unix));

    let d = store.get(id).unwrap();
    assert_eq!(&d.summary, s);
    assert_eq!(d.command_line.as_deref(), Some("wireperf -c 127.0.0.1 -t 1"));
    assert_eq!(d.verdicts, run.verdicts);
    assert_eq!(d.parameters, serde_json::to_value(&report.start.test_start).unwrap());
    let p = &d.phase_details[0];
    assert_eq!(p.report().unwrap(), report, "the stored document is the report");
    assert_eq!(p.figures.retransmits, Some(n(&doc, "/end/sum_sent/retransmits")));
    assert_eq!(p.sum_series(Direction::Upload).count(), report.intervals.len());
    assert_eq!(p.stream_series(report.intervals[0].streams[0].socket).count(), report.intervals.len());
}

#[test]
fn suite_run_keeps_phases_in_order_and_sums_them() {
    let (_, report) = tcp_client_report();
    let mut down = report.clone();
    if let Some(t) = down.start.test_start.as_mut() {
        t.reverse = 1;
    }
    let (_dir, path) = temp_db();
    let mut store = Store::open(&path).unwrap();
    let run = NewRun::new(RunKind::Suite, Some("wireperf suite 127.0.0.1".into()))
        .phase("upload", report.clone())
        .phase("download", down);
    let id = store.insert_run(&run).unwrap();
    let d = store.get(id).unwrap();
    let names: Vec<_> = d.phase_details.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(names, ["upload", "download"]);
    assert_eq!(d.phase("download").unwrap().download_bps, d.phase("upload").unwrap().upload_bps);
    let one = report.end.sum_received.as_ref().unwrap().bytes;
    assert_eq!(d.summary.figures.received_bytes, Some(2 * one));
    assert_eq!(d.summary.figures.direction.as_deref(), Some("upload+download"));
    assert_eq!(d.summary.phases, ["upload", "download"]);
}

#[test]
fn compare_shows_deltas_and_link_changes() {
    let (_, report) = tcp_client_report();
    let (_dir, path) = temp_db();
    let mut store = Store::open(&path).unwrap();
    let mut a = NewRun::single(RunKind::Client, None, report.clone());
    a.doctor = Some(doctor("cdc_ncm", 2500, &["generic-usb-driver", "rx-ring-small"]));
    let mut b = NewRun::single(RunKind::Client, None, scaled(&report, 2.0));
    b.doctor = Some(doctor("r8152", 2500, &["rx-ring-small", "gro-off"]));
    let (ia, ib) = (store.insert_run(&a).unwrap(), store.insert_run(&b).unwrap());
    let c = store.compare(ia, ib).unwrap();
    assert_eq!(c.phases.len(), 1);
    let m = c.phases[0].metrics.iter().find(|m| m.metric == "received_bps").unwrap();
    assert_eq!(m.unit, Unit::BitsPerSecond);
    let (va, vb) = (m.a.unwrap(), m.b.unwrap());
    assert_eq!(va, report.end.sum_received.as_ref().unwrap().bits_per_second);
    assert!((m.change_percent.unwrap() - (vb - va) / va * 100.0).abs() < 1e-9);
    assert!((m.change_percent.unwrap() - 100.0).abs() < 1e-6);
    let drv: Vec<_> = c.link.changes.iter().map(|ch| (ch.field, ch.a.as_deref(), ch.b.as_deref())).collect();
    assert_eq!(drv, [("driver", Some("cdc_ncm"), Some("r8152"))]);
    assert_eq!(c.link.findings_added, ["gro-off (enx0)"]);
    assert_eq!(c.link.findings_removed, ["generic-usb-driver (enx0)"]);

    let text = wireperf_store::render::compare(&c);
    assert!(text.contains("enx0: driver cdc_ncm -> r8152"), "{text}");
    assert!(text.contains("+100.0%"), "{text}");
    assert!(matches!(store.compare(ia, wireperf_store::RunId(999)), Err(StoreError::NotFound(_))));
}

#[test]
fn delete_removes_the_run_and_its_series_only() {
    let (_, report) = tcp_client_report();
    let (_dir, path) = temp_db();
    let mut store = Store::open(&path).unwrap();
    let keep = store.insert_run(&NewRun::single(RunKind::Client, None, report.clone())).unwrap();
    let gone = store.insert_run(&NewRun::single(RunKind::Client, None, report)).unwrap();
    store.delete(gone).unwrap();
    assert!(matches!(store.get(gone), Err(StoreError::NotFound(id)) if id == gone));
    assert!(matches!(store.delete(gone), Err(StoreError::NotFound(_))));
    let left = store.get(keep).unwrap();
    assert!(!left.phase_details[0].intervals.is_empty());
    drop(store);
    let conn = rusqlite::Connection::open(&path).unwrap();
    for table in ["phases", "intervals", "streams"] {
        let orphans: i64 =
            conn.query_row(&format!("SELECT count(*) FROM {table} WHERE run_id = ?1"), [gone.0], |r| r.get(0)).unwrap();
        assert_eq!(orphans, 0, "{table} rows of the deleted run");
    }
    // Ids are never reused: a new run does not take the deleted one's id.
    let mut store = Store::open(&path).unwrap();
    let report = left.phase_details[0].report().unwrap();
    let next = store.insert_run(&NewRun::single(RunKind::Client, None, report)).unwrap();
    assert!(next > gone);
}

#[test]
fn list_filters_by_kind_label_and_limit() {
    let (_, report) = tcp_client_report();
    let (_dir, path) = temp_db();
    let mut store = Store::open(&path).unwrap();
    let mut ids = Vec::new();
    for (kind, label) in [(RunKind::Client, None), (RunKind::Selftest, Some("lab")), (RunKind::Client, Some("lab"))] {
        let mut r = NewRun::single(kind, None, report.clone());
        r.label = label.map(str::to_string);
        ids.push(store.insert_run(&r).unwrap());
    }
    let ids_of = |f: ListFilter| store.list(&f).unwrap().into_iter().map(|r| r.id).collect::<Vec<_>>();
    assert_eq!(ids_of(ListFilter::default()), ids);
    assert_eq!(ids_of(ListFilter { kind: Some(RunKind::Client), ..Default::default() }), [ids[0], ids[2]]);
    assert_eq!(ids_of(ListFilter { label: Some("lab".into()), ..Default::default() }), [ids[1], ids[2]]);
    assert_eq!(ids_of(ListFilter { limit: Some(2), ..Default::default() }), [ids[1], ids[2]]);
}

#[test]
fn a_write_that_fails_midway_leaves_no_trace_and_earlier_runs_intact() {
    let (_, report) = tcp_client_report();
    let (_dir, path) = temp_db();
    let mut store = Store::open(&path).unwrap();
    let first = store.insert_run(&NewRun::single(RunKind::Client, None, report.clone())).unwrap();
    let before = store.get(first).unwrap();
    // A NaN rate is stored by SQLite as NULL, which the interval table refuses: the failure
    // comes after the run and phase rows were written, inside the transaction.
    let mut bad = report;
    bad.intervals[0].sum.bits_per_second = f64::NAN;
    let err = store.insert_run(&NewRun::single(RunKind::Client, None, bad)).unwrap_err();
    assert!(matches!(err, StoreError::Sqlite(_)), "{err:?}");
    assert_eq!(store.list(&ListFilter::default()).unwrap().len(), 1);
    assert_eq!(store.get(first).unwrap(), before);
    drop(store);
    let conn = rusqlite::Connection::open(&path).unwrap();
    let phases: i64 = conn.query_row("SELECT count(*) FROM phases", [], |r| r.get(0)).unwrap();
    assert_eq!(phases, 1);
}

#[test]
fn a_watched_phase_keeps_its_bottleneck_and_cpu_load() {
    let (_, report) = tcp_client_report();
    let (_dir, path) = temp_db();
    let verdicts = json!([{"direction": "client→server", "limit": "receiver-cpu", "side": "server",
        "evidence": ["CPU1 on the server was 100% busy"], "fix": [],
        "also": [{"limit": "receiver-window", "side": "server", "evidence": [], "fix": []}],
        "retransmits": {"total": 40, "spurious": 38, "real": 2}, "far_side_seen": true}]);
    let load = json!({"client": {"t": [0.0, 1.0], "cpus": [[0.0, 12.5]]}});
    let db = Some(path.as_path());
    let id =
        wireperf_store::save_client_run(db, &report, "wireperf -c h --why", Some((verdicts.clone(), load.clone())))
            .unwrap();
    let plain = wireperf_store::save_client_run(db, &report, "wireperf -c h", None).unwrap();
    let store = Store::open(&path).unwrap();
    let d = store.get(id).unwrap();
    assert_eq!(d.phase_details[0].bottleneck.as_ref(), Some(&verdicts));
    assert_eq!(d.phase_details[0].cpu_load.as_ref(), Some(&load));
    let text = wireperf_store::render::show(&d);
    assert!(
        text.contains(
            "bottleneck client→server: receiver-cpu (server), also receiver-window (server); retransmits 40 (2 real, 38 spurious)"
        ),
        "{text}"
    );
    let p = store.get(plain).unwrap();
    assert_eq!((p.phase_details[0].bottleneck.as_ref(), p.phase_details[0].cpu_load.as_ref()), (None, None));
    assert!(!wireperf_store::render::show(&p).contains("bottleneck"));
}

/// Series on both sides: each direction's change with its interval and p-value; one run a
/// side: the sentence says one run cannot tell noise from change.
#[test]
fn compare_sets_tell_a_change_from_noise() {
    let (_, report) = tcp_client_report();
    let (_dir, path) = temp_db();
    let mut store = Store::open(&path).unwrap();
    let mut insert = |k: f64| store.insert_run(&NewRun::single(RunKind::Client, None, scaled(&report, k))).unwrap();
    let a: Vec<_> = [1.0, 1.02, 0.98, 1.01].into_iter().map(&mut insert).collect();
    let b: Vec<_> = [1.5, 1.52, 1.48, 1.49].into_iter().map(&mut insert).collect();
    let same: Vec<_> = [0.99, 1.03, 0.97, 1.02].into_iter().map(&mut insert).collect();
    let c = store.compare_sets(&a, &b).unwrap();
    let d = &c.significance.directions[0];
    assert!(d.significant, "{d:?}");
    assert_eq!((d.a.n, d.b.n), (4, 4));
    let w = d.welch.unwrap();
    assert!(w.p < 0.001 && w.ci.0 > 0.0, "{w:?}");
    let text = wireperf_store::render::compare(&c);
    assert!(text.contains(&format!("A series: runs {}, {}, {}, {}", a[0], a[1], a[2], a[3])), "{text}");
    assert!(text.contains("Beyond noise? (goodput, 95 % confidence, Welch's t-test)"), "{text}");
    assert!(text.contains(" faster by 49.4 % ["), "{text}");

    let c = store.compare_sets(&a, &same).unwrap();
    let d = &c.significance.directions[0];
    assert!(!d.significant, "{d:?}");
    assert!(d.sentence.contains(": no significant change (p = 1.00; the series' noise is ±3 %)"), "{}", d.sentence);

    let c = store.compare(a[0], b[0]).unwrap();
    let text = wireperf_store::render::compare(&c);
    assert!(text.contains("+50.0 %: a single run cannot tell noise from change"), "{text}");
    assert!(matches!(store.compare_sets(&a, &[wireperf_store::RunId(999)]), Err(StoreError::NotFound(_))));
}

/// A repeat series is stored as one run (its head, with the statistics) and its rounds: `list`
/// shows the head only (with the means), `show` the rounds and the statistics table, a compare
/// of two heads uses their counted rounds (the warm-up left out), deleting the head deletes
/// the rounds, and `export` of everything keeps the rounds.
#[test]
fn a_series_is_one_run_with_its_rounds() {
    let (_, report) = tcp_client_report();
    let (_dir, path) = temp_db();
    let mut store = Store::open(&path).unwrap();
    let single = store.insert_run(&NewRun::single(RunKind::Client, None, scaled(&report, 1.0))).unwrap();
    let rounds =
        |ks: &[f64]| ks.iter().map(|&k| NewRun::single(RunKind::Client, None, scaled(&report, k))).collect::<Vec<_>>();
    let stats = |mean: f64| {
        serde_json::json!([{
            "phase": "upload", "direction": "upload",
            "throughput_bps": {"n": 3, "mean": mean, "median": mean, "sd": 1e6, "min": mean - 1e6,
                               "max": mean + 1e6, "level": 95.0, "ci": [mean - 2e6, mean + 2e6]},
            "retransmits": {"n": 3, "mean": 0.0, "median": 0.0, "sd": 0.0, "min": 0.0, "max": 0.0,
                            "level": 95.0, "ci": [0.0, 0.0]},
        }])
    };
    let head = |mean: f64| wireperf_store::NewSeries {
        kind: RunKind::Client,
        command_line: Some("wireperf -c h --repeat 4 --warmup 1".into()),
        label: None,
        warmup: 1,
        statistics: stats(mean),
        confidence: None,
    };
    // The warm-up rounds (0.2, 5.0) are far off: a compare that counted them would not say
    // "faster by 49.x %".
    let a = store.insert_series(&head(1e9), &rounds(&[0.2, 1.0, 1.02, 0.98])).unwrap();
    let b = store.insert_series(&head(1.5e9), &rounds(&[5.0, 1.5, 1.52, 1.48])).unwrap();
    assert_eq!(a.rounds.len(), 4);
    assert!(a.rounds.iter().all(|r| r.0 > a.head.0), "{a:?}");

    let listed: Vec<_> = store.list(&ListFilter::default()).unwrap();
    assert_eq!(listed.iter().map(|r| r.id).collect::<Vec<_>>(), [single, a.head, b.head]);
    let text = wireperf_store::render::list(&listed);
    assert!(text.contains("series of 4") && text.contains("means: upload 1.00 Gbit/s ±0.2%"), "{text}");
    let all = store.list(&ListFilter { members: true, ..Default::default() }).unwrap();
    assert_eq!(all.len(), 11);

    let d = store.get(a.head).unwrap();
    assert_eq!(d.members, a.rounds);
    assert!(d.phase_details.is_empty());
    let shown = wireperf_store::render::show(&d);
    let rows = format!("4 rounds (runs {}-{}, the first a warm-up left out)", a.rounds[0], a.rounds[3]);
    assert!(shown.contains(&rows), "{shown}");
    assert!(shown.contains("Statistics over the counted rounds (95% confidence interval of the mean)"), "{shown}");
    assert!(shown.contains("[998 Mbit/s, 1.00 Gbit/s] ±0.2%"), "{shown}");
    let member = wireperf_store::render::show(&store.get(a.rounds[1]).unwrap());
    assert!(member.contains(&format!("round 2 of series {}", a.head)), "{member}");

    let c = store.compare_sets(&[a.head], &[b.head]).unwrap();
    let dir = &c.significance.directions[0];
    assert_eq!((dir.a.n, dir.b.n), (3, 3), "warm-ups left out: {dir:?}");
    assert!(dir.significant && dir.sentence.contains(" faster by 50.0 % ["), "{}", dir.sentence);

    let exported = store.export(&[]).unwrap();
    assert_eq!(exported["runs"].as_array().unwrap().len(), 11);

    store.delete(a.head).unwrap();
    assert_eq!(store.list(&ListFilter { members: true, ..Default::default() }).unwrap().len(), 6);
    assert!(matches!(store.get(a.rounds[0]), Err(StoreError::NotFound(_))));
}

/// Runs stored one by one (as `-c --repeat` saves each test when it ends) grouped into a
/// series afterwards: one head listed, the rounds in order; a run cannot join two series.
#[test]
fn stored_runs_are_grouped_into_a_series() {
    let (_, report) = tcp_client_report();
    let (_dir, path) = temp_db();
    let mut store = Store::open(&path).unwrap();
    let ids: Vec<_> = [1.0, 1.1, 0.9]
        .into_iter()
        .map(|k| store.insert_run(&NewRun::single(RunKind::Client, None, scaled(&report, k))).unwrap())
        .collect();
    let head = wireperf_store::NewSeries {
        kind: RunKind::Client,
        command_line: Some("wireperf -c h --repeat 3".into()),
        label: Some("lab".into()),
        warmup: 0,
        statistics: serde_json::json!([]),
        confidence: None,
    };
    let h = store.group_series(&head, &ids).unwrap();
    let listed: Vec<_> = store.list(&ListFilter::default()).unwrap().into_iter().map(|r| r.id).collect();
    assert_eq!(listed, [h]);
    let d = store.get(h).unwrap();
    assert_eq!(d.members, ids);
    assert_eq!(d.summary.label.as_deref(), Some("lab"));
    assert_eq!(d.summary.remote_host, store.get(ids[0]).unwrap().summary.remote_host);
    assert_eq!(store.get(ids[2]).unwrap().summary.series_round, Some(3));
    assert!(matches!(store.group_series(&head, &ids[1..]), Err(StoreError::InvalidRun(_))));
    assert!(matches!(store.group_series(&head, &[wireperf_store::RunId(999)]), Err(StoreError::InvalidRun(_))));
    assert_eq!(store.list(&ListFilter { members: true, ..Default::default() }).unwrap().len(), 4, "nothing half-done");
}
