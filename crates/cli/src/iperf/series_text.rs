//! The text of a client series (`-c HOST --repeat N`): the line before each test and the
//! statistics block after the last, laid out and worded as the suite's
//! (`crate::suite::render::render_series`) so the two modes read alike; the client's test has
//! one phase, so its rows are named by direction alone.

use crate::iperf::series_summary::{Series, Stopped};
use wireperf_suite::series::RepeatConfig;

fn plural(n: usize, word: &str) -> String {
    format!("{n} {word}{}", if n == 1 { "" } else { "s" })
}

/// The line before test `i` (from 0): `test 2 of 5`, `test 1 of at most 10 (warm-up, not
/// counted)`; a blank line parts it from the test before.
pub fn header(i: usize, r: &RepeatConfig) -> String {
    let cap = if r.width_pct.is_some() { format!("at most {}", r.rounds) } else { r.rounds.to_string() };
    let warm = if i < r.warmup { " (warm-up, not counted)" } else { "" };
    format!("{}test {} of {cap}{warm}\n", if i == 0 { "" } else { "\n" }, i + 1)
}

/// The statistics per direction, the confidence target's outcome, why the series stopped, and
/// the saved runs.
pub fn render(s: &Series, r: &RepeatConfig) -> String {
    let mut out = String::new();
    if s.statistics.is_empty() {
        out.push_str(&format!(
            "\nno statistics: {} completed before the series stopped, fewer than 2\n",
            plural(s.counted, "counted test")
        ));
    } else {
        out.push_str(&format!(
            "\nstatistics over {}{}, {}% confidence interval of the mean:\n",
            plural(s.counted, "test"),
            match s.warmup {
                0 => String::new(),
                w => format!(" ({} left out)", plural(w, "warm-up test")),
            },
            r.level
        ));
        out.push_str(&format!(
            "  {:<9} {:>14} {:>14} {:>14} {:>31}  {}\n",
            "direction", "median", "mean", "stdev", "min - max", "confidence interval"
        ));
    }
    for st in &s.statistics {
        let [median, mean, sd, range, ci] = st.throughput_cells("test");
        out.push_str(&format!("  {:<9} {median:>14} {mean:>14} {sd:>14} {range:>31}  {ci}\n", st.direction));
        let extra = st.side_figures();
        out.push_str(&format!("  {:<9} {extra}\n", ""));
    }
    if let Some(c) = &s.confidence {
        let widest = c.widest.as_ref().map_or(String::new(), |(n, p)| format!("; the widest: {n} ±{p:.1}%"));
        let counted = plural(c.counted_rounds, "counted test");
        let (level, half) = (c.level, c.width_pct / 2.0);
        if c.met {
            out.push_str(&format!(
                "confidence: every direction's {level}% interval within ±{half}% of its mean after {counted}{widest}\n"
            ));
        } else {
            let when = if s.stopped.is_some() { "(the series stopped early)" } else { "the cap" };
            out.push_str(&format!(
                "confidence: NOT reached: not every {level}% interval within ±{half}% of its mean after {counted}, \
                 {when}{widest}\n"
            ));
        }
    }
    match &s.stopped {
        None => {}
        Some(Stopped::Failed(n)) => {
            out.push_str(&format!("stopped: test {n} of {} failed; no further test was run\n", r.rounds))
        }
        Some(Stopped::Interrupted(n)) => {
            out.push_str(&format!("interrupted after {}; no further test was run\n", plural(*n, "test")))
        }
    }
    let ids: Vec<String> = s.saved.iter().map(|i| format!("#{i}")).collect();
    match (s.saved_series, s.saved.as_slice()) {
        (Some(head), _) => {
            out.push_str(&format!("saved as series #{head} (tests {}; wireperf history show {head})\n", ids.join(", ")))
        }
        (None, [.., last]) => out.push_str(&format!(
            "saved as run{} {} (wireperf history show {last})\n",
            if s.saved.len() == 1 { "" } else { "s" },
            ids.join(", ")
        )),
        (None, []) => {}
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn repeat(rounds: usize, warmup: usize, width_pct: Option<f64>) -> RepeatConfig {
        RepeatConfig { rounds, warmup, level: 95.0, width_pct }
    }

    #[test]
    fn headers_count_the_tests_and_mark_the_warm_up() {
        assert_eq!(header(0, &repeat(3, 1, None)), "test 1 of 3 (warm-up, not counted)\n");
        assert_eq!(header(1, &repeat(3, 1, None)), "\ntest 2 of 3\n");
        assert_eq!(header(0, &repeat(10, 0, Some(5.0))), "test 1 of at most 10\n");
    }

    #[test]
    fn a_stopped_series_without_two_counted_tests_says_so() {
        let s = Series {
            warmup: 0,
            counted: 0,
            statistics: Vec::new(),
            confidence: None,
            stopped: Some(Stopped::Failed(1)),
            saved: vec![4],
            saved_series: None,
        };
        assert_eq!(
            render(&s, &repeat(3, 0, None)),
            "\nno statistics: 0 counted tests completed before the series stopped, fewer than 2\n\
             stopped: test 1 of 3 failed; no further test was run\n\
             saved as run #4 (wireperf history show 4)\n"
        );
    }
}
