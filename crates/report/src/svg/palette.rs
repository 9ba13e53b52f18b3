//! Stable series colours.
//!
//! A stream keeps its colour in every chart of a phase (throughput, retransmits, cwnd) and a
//! run keeps its colour in every comparison chart, so a reader can follow one line across
//! charts. Colours are picked by position, never by hashing a name, so the output is the same
//! bytes for the same input. The stream colours are strong hues that stay apart for readers
//! with the common colour-vision deficiencies when paired in order (blue/orange first); sums
//! are near-black and slate so they read as "the total" above the coloured streams. None of
//! these exact values is used by the page's text or badges, which lets the screenshot test
//! count a series' pixels by colour.

/// Colours for streams (and for runs in comparison charts), in order of use.
pub const SERIES: [&str; 8] = [
    "#2563eb", // blue
    "#ea580c", // orange
    "#059669", // green
    "#c026d3", // magenta
    "#0891b2", // cyan
    "#ca8a04", // ochre
    "#7c3aed", // violet
    "#be123c", // crimson
];

/// The sum of the first direction (all streams of upload, or of download with `-R`).
pub const SUM: &str = "#111827";

/// `--bidir`: the sum of the reverse direction.
pub const SUM_REVERSE: &str = "#57534e";

/// The colour of the `index`th stream or run (wraps after [`SERIES`] is used up).
pub fn series(index: usize) -> &'static str {
    SERIES[index % SERIES.len()]
}

/// `#rrggbb` as bytes (for tests that look for a colour in a screenshot).
pub fn rgb(hex: &str) -> Option<[u8; 3]> {
    let h = hex.strip_prefix('#')?;
    if h.len() != 6 {
        return None;
    }
    let byte = |i: usize| u8::from_str_radix(h.get(i..i + 2)?, 16).ok();
    Some([byte(0)?, byte(2)?, byte(4)?])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn colours_wrap_and_parse() {
        assert_eq!(series(0), series(SERIES.len()));
        assert_eq!(rgb("#2563eb"), Some([0x25, 0x63, 0xeb]));
        assert_eq!(rgb("2563eb"), None);
    }

    #[test]
    fn all_colours_are_distinct() {
        let mut all: Vec<&str> = SERIES.to_vec();
        all.push(SUM);
        all.push(SUM_REVERSE);
        let n = all.len();
        all.sort_unstable();
        all.dedup();
        assert_eq!(all.len(), n);
    }
}
