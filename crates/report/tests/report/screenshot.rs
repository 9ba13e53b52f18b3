//! The report as a person sees it: Debian's headless Chromium renders the page (and a
//! standalone `--svg` chart) to PNG, and the pixels must show every series in its colour.
//!
//! Needs the Debian package `chromium`; fails with that message when it is missing.

#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use wireperf_report::svg::{overlay_charts, palette};
use wireperf_report::{render_html, render_svg};

use crate::support::runs::{input, suite_a, suite_b, upload_only};

/// Chromium gets this long to render and exit.
const TIMEOUT: Duration = Duration::from_secs(90);

/// A decoded screenshot, 8-bit RGB.
struct Shot {
    width: u32,
    height: u32,
    rgb: Vec<[u8; 3]>,
}

fn chromium() -> PathBuf {
    let found = std::env::var_os("PATH")
        .and_then(|paths| std::env::split_paths(&paths).map(|d| d.join("chromium")).find(|p| p.is_file()));
    found.unwrap_or_else(|| {
        panic!(
            "chromium not found in PATH: the report screenshot test needs Debian's `chromium` \
             package (DEBIAN_FRONTEND=noninteractive apt-get install -y chromium)"
        )
    })
}

/// Renders `file` in headless Chromium at `width`×`height` and decodes the PNG.
fn screenshot(file: &Path, width: u32, height: u32) -> Shot {
    let dir = file.parent().unwrap();
    let png_path = dir.join("shot.png");
    let profile = tempfile::tempdir().unwrap();
    let mut child = Command::new(chromium())
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--hide-scrollbars",
            "--force-device-scale-factor=1",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .arg(format!("--screenshot={}", png_path.display()))
        .arg(format!("--window-size={width},{height}"))
        .arg(format!("file://{}", file.display()))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start chromium");
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if started.elapsed() > TIMEOUT {
            let _ = child.kill();
            let _ = child.wait();
            panic!("chromium did not finish within {TIMEOUT:?}");
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    let mut stderr = String::new();
    if let Some(mut e) = child.stderr.take() {
        use std::io::Read;
        let _ = e.read_to_string(&mut stderr);
    }
    assert!(status.success() && png_path.is_file(), "chromium failed ({status}), no screenshot:\n{stderr}");
    decode(&png_path)
}

fn decode(path: &Path) -> Shot {
    let mut decoder = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(path).unwrap()));
    decoder.set_transformations(png::Transformations::normalize_to_color8());
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size().unwrap()];
    let info = reader.next_frame(&mut buf).unwrap();
    let channels = info.color_type.samples();
    assert!(channels >= 3, "unexpected PNG colour type {:?}", info.color_type);
    let rgb = buf[..info.buffer_size()].chunks_exact(channels).map(|p| [p[0], p[1], p[2]]).collect();
    Shot { width: info.width, height: info.height, rgb }
}

impl Shot {
    /// Pixels within `tol` of `hex` on every channel.
    fn count(&self, hex: &str, tol: u8) -> usize {
        let c = palette::rgb(hex).unwrap();
        self.rgb.iter().filter(|p| (0..3).all(|i| p[i].abs_diff(c[i]) <= tol)).count()
    }

    /// Distinct colours in the image (a blank or failed render has one or two).
    fn distinct(&self) -> usize {
        let mut all: Vec<[u8; 3]> = self.rgb.clone();
        all.sort_unstable();
        all.dedup();
        all.len()
    }

    /// Share of pixels that differ from the most common colour (the background).
    fn ink(&self) -> f64 {
        let mut all: Vec<[u8; 3]> = self.rgb.clone();
        all.sort_unstable();
        let mut best = 0;
        let mut run = 0;
        for (i, p) in all.iter().enumerate() {
            run = if i > 0 && all[i - 1] == *p { run + 1 } else { 1 };
            best = best.max(run);
        }
        1.0 - best as f64 / all.len() as f64
    }
}

/// Exact colours survive Chromium's rendering of flat strokes and fills; a small tolerance
/// absorbs colour-space rounding without matching neighbouring palette entries.
const TOL: u8 = 6;
/// A series must paint at least this many pixels. The legend swatches of one colour add up
/// to about 200 px on this page, so only drawn lines and bars get a colour past this.
const MIN_SERIES_PX: usize = 600;
/// A colour that no series uses may show up only as a few stray anti-aliased pixels.
const MAX_STRAY_PX: usize = 40;

fn colour_counts(shot: &Shot, colours: &[&str]) -> Vec<(String, usize)> {
    colours.iter().map(|c| (c.to_string(), shot.count(c, TOL))).collect()
}

#[test]
fn report_page_renders_every_series_in_its_colour() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("report.html");
    // One upload phase, two streams: throughput has stream 5, stream 7 and sum; the TCP
    // charts repeat the two stream colours.
    std::fs::write(&file, render_html(&input(vec![upload_only()]))).unwrap();
    let shot = screenshot(&file, 1200, 1600);
    assert_eq!((shot.width, shot.height), (1200, 1600));
    assert!(shot.distinct() > 200, "blank render: {} colours", shot.distinct());
    assert!(shot.ink() > 0.05, "mostly background: {:.3}", shot.ink());

    let drawn = colour_counts(&shot, &[palette::series(0), palette::series(1), palette::SUM]);
    for (c, n) in &drawn {
        assert!(*n >= MIN_SERIES_PX, "series colour {c}: only {n} px; all: {drawn:?}");
    }
    // The right number of series: no pixels of colours no series of this page uses.
    let mut unused: Vec<&str> = (2..palette::SERIES.len()).map(palette::series).collect();
    unused.push(palette::SUM_REVERSE);
    for (c, n) in colour_counts(&shot, &unused) {
        assert!(n <= MAX_STRAY_PX, "unused colour {c} has {n} px");
    }
}

#[test]
fn standalone_overlay_svg_renders_one_line_per_run() {
    let dir = tempfile::tempdir().unwrap();
    let runs = [suite_a(), suite_b()];
    let chart = overlay_charts(&runs).remove(0);
    let file = dir.path().join(format!("{}.svg", chart.id));
    std::fs::write(&file, render_svg(&chart)).unwrap();
    // The chart's own size (960×300): the file is what `--svg` writes.
    let shot = screenshot(&file, 960, 300);
    assert!(shot.distinct() > 50, "blank render: {} colours", shot.distinct());
    let runs_px = colour_counts(&shot, &[palette::series(0), palette::series(1)]);
    for (c, n) in &runs_px {
        assert!(*n >= MIN_SERIES_PX, "run colour {c}: only {n} px; all: {runs_px:?}");
    }
    for (c, n) in colour_counts(&shot, &[palette::series(2), palette::SUM, palette::SUM_REVERSE]) {
        assert!(n <= MAX_STRAY_PX, "colour {c} of no series has {n} px");
    }
}
