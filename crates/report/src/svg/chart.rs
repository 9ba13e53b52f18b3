//! The chart model: what to draw, with no layout in it.
//!
//! [`super::series`] builds charts from test reports and [`super::draw`] turns one into SVG;
//! keeping the model between them lets tests check the data (how many series, which values)
//! apart from the drawing, and lets `--svg` and the HTML page share every chart.

use super::scale::AxisUnit;

/// How a series is drawn.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SeriesKind {
    /// A line through the middle of each sample's interval.
    Line,
    /// A bold line (sums, drawn above the streams).
    Emphasis,
    /// One bar per sample, spanning part of its interval; several bar series sit side by side.
    Bar,
}

/// One measured value over one time span.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Sample {
    /// Start of the interval, seconds since the test started.
    pub start: f64,
    /// End of the interval, seconds.
    pub end: f64,
    /// The value, in the chart's unit (bit/s, bytes, count).
    pub value: f64,
}

/// One named series.
#[derive(Clone, Debug, PartialEq)]
pub struct Series {
    /// Legend text, e.g. `stream 5`, `sum`, `run 12`.
    pub name: String,
    /// `#rrggbb` from [`super::palette`].
    pub colour: &'static str,
    /// Line, bold line or bars.
    pub kind: SeriesKind,
    /// Samples in time order.
    pub samples: Vec<Sample>,
}

/// One chart.
#[derive(Clone, Debug, PartialEq)]
pub struct Chart {
    /// Unique within a report: element ids in the page and the file name for `--svg`.
    pub id: String,
    /// Heading drawn in the chart and used as the SVG `<title>`.
    pub title: String,
    /// One sentence for screen readers (the SVG `<desc>`).
    pub description: String,
    /// Label of the vertical axis, e.g. `Throughput`.
    pub y_label: String,
    /// Unit of the values.
    pub y_unit: AxisUnit,
    /// Width of the drawing in SVG user units (the page scales it to fit).
    pub width: f64,
    /// Height in SVG user units.
    pub height: f64,
    /// Series in drawing order (later ones on top); the legend lists them in this order.
    pub series: Vec<Series>,
}

/// Size of a full-width chart.
pub const WIDE: (f64, f64) = (960.0, 300.0);

/// Size of a half-width chart (two side by side on the page).
pub const HALF: (f64, f64) = (500.0, 270.0);

impl Series {
    /// Largest value (0 when empty).
    pub fn max(&self) -> f64 {
        self.samples.iter().map(|s| s.value).fold(0.0, f64::max)
    }

    /// Time-weighted mean (plain mean when intervals have no length).
    pub fn mean(&self) -> f64 {
        let span: f64 = self.samples.iter().map(|s| s.end - s.start).sum();
        if span > 0.0 {
            self.samples.iter().map(|s| s.value * (s.end - s.start)).sum::<f64>() / span
        } else if self.samples.is_empty() {
            0.0
        } else {
            self.samples.iter().map(|s| s.value).sum::<f64>() / self.samples.len() as f64
        }
    }
}

impl Chart {
    /// Largest value over all series.
    pub fn y_max(&self) -> f64 {
        self.series.iter().map(Series::max).fold(0.0, f64::max)
    }

    /// Latest time over all series.
    pub fn x_max(&self) -> f64 {
        self.series.iter().flat_map(|s| s.samples.iter().map(|p| p.end)).fold(0.0, f64::max)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mean_is_weighted_by_time() {
        let s = Series {
            name: "s".into(),
            colour: "#000000",
            kind: SeriesKind::Line,
            samples: vec![Sample { start: 0.0, end: 1.0, value: 10.0 }, Sample { start: 1.0, end: 4.0, value: 2.0 }],
        };
        assert_eq!(s.mean(), 4.0);
        assert_eq!(s.max(), 10.0);
    }
}
