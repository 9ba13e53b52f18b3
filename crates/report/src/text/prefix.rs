//! The `--timestamps` and `-T title` prefixes.
//!
//! iperf3 prefixes each *call* of its printing routine (`iperf_printf`), not each line: the
//! timestamp (`strftime` of the moment, default format `"%c "`) comes first, then the title
//! and two spaces (client only; the server ignores `-T`). Almost every call prints exactly
//! one line, so prefixing per line is right, and [`prefix_lines`] does that. The exceptions
//! are kept as separate calls in a [`Printed`]: the `Server output:` block (one call, many
//! lines: only its first line is prefixed), the `-V` version block (an empty call that prints
//! a lone prefix), and the `Control connection MSS` / `Setting UDP block size` lines that
//! iperf3 writes with plain `printf` (never prefixed).

use std::fmt;

/// `text` with `timestamp` then `title` + `":  "` put before every line.
///
/// An empty line gets the prefix too (`title:  ` for the blank line before `iperf Done.`).
/// A final line without a newline is prefixed as well. Pass `title = None` on the server.
pub fn prefix_lines(text: &str, timestamp: Option<&str>, title: Option<&str>) -> String {
    if timestamp.is_none() && title.is_none() {
        return text.to_string();
    }
    let prefix = make_prefix(timestamp, title);
    let mut out = String::with_capacity(text.len() + prefix.len() * 16);
    for line in text.split_inclusive('\n') {
        out.push_str(&prefix);
        out.push_str(line);
    }
    out
}

fn make_prefix(timestamp: Option<&str>, title: Option<&str>) -> String {
    let mut p = String::new();
    if let Some(ts) = timestamp {
        p.push_str(ts);
    }
    if let Some(t) = title {
        p.push_str(t);
        p.push_str(":  ");
    }
    p
}

/// How one printing call is treated by the prefixes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CallKind {
    /// Printed through `iperf_printf`: prefixed once, at its start.
    Report,
    /// Printed with plain `printf`: never prefixed.
    Raw,
}

/// Output as a sequence of iperf3 printing calls, so prefixes can be applied exactly.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Printed {
    calls: Vec<(CallKind, String)>,
}

impl Printed {
    /// Nothing printed yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Appends one `iperf_printf` call.
    pub fn report(&mut self, text: impl Into<String>) {
        self.calls.push((CallKind::Report, text.into()));
    }

    /// Appends one plain `printf` call (never prefixed).
    pub fn raw(&mut self, text: impl Into<String>) {
        self.calls.push((CallKind::Raw, text.into()));
    }

    /// Appends every call of `other`.
    pub fn extend(&mut self, other: Printed) {
        self.calls.extend(other.calls);
    }

    /// The calls, in order.
    pub fn calls(&self) -> &[(CallKind, String)] {
        &self.calls
    }

    /// The text with the prefixes iperf3 would add: each report call starts with the
    /// timestamp then `title:  `; raw calls are left alone.
    pub fn prefixed(&self, timestamp: Option<&str>, title: Option<&str>) -> String {
        let prefix = make_prefix(timestamp, title);
        let mut out = String::new();
        for (kind, text) in &self.calls {
            if *kind == CallKind::Report {
                out.push_str(&prefix);
            }
            out.push_str(text);
        }
        out
    }
}

impl fmt::Display for Printed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (_, text) in &self.calls {
            f.write_str(text)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn title_on_every_line_including_blank_ones() {
        let text = "[ ID] x\n\niperf Done.\n";
        assert_eq!(prefix_lines(text, None, Some("title")), "title:  [ ID] x\ntitle:  \ntitle:  iperf Done.\n");
    }

    #[test]
    fn timestamp_precedes_title() {
        assert_eq!(
            prefix_lines("a\n", Some("Sun Nov 29 18:00:29 2026 "), Some("t")),
            "Sun Nov 29 18:00:29 2026 t:  a\n"
        );
        assert_eq!(prefix_lines("a\nb", None, None), "a\nb");
        assert_eq!(prefix_lines("a\nb", Some("T "), None), "T a\nT b");
    }

    #[test]
    fn calls_are_prefixed_once_and_raw_calls_never() {
        let mut p = Printed::new();
        p.report("iperf 3.12\n");
        p.report("");
        p.report("Linux vm\n");
        p.raw("Control connection MSS 32768\n");
        p.report("\nServer output:\nline1\nline2\n\n");
        assert_eq!(
            p.prefixed(None, Some("t")),
            "t:  iperf 3.12\nt:  t:  Linux vm\nControl connection MSS 32768\nt:  \nServer output:\nline1\nline2\n\n"
        );
        assert_eq!(
            p.to_string(),
            "iperf 3.12\nLinux vm\nControl connection MSS 32768\n\nServer output:\nline1\nline2\n\n"
        );
    }
}
