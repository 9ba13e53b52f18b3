//! JSON printed byte for byte as iperf3's bundled cJSON 1.7.15 prints it (`cJSON_Print`).
//!
//! Scripts parse iperf3 `-J` output, and some of them diff it or grep it line by line, so
//! wireperf prints the same bytes, not just the same data. The layout (`print_object` /
//! `print_array` in iperf3's `src/cjson.c`):
//!
//! * object: `{`, newline, then per member one TAB per nesting level, `"key":`, TAB, value,
//!   `,` unless last, newline; the closing `}` indented one level less. An empty object is
//!   `{`, newline, indent, `}`.
//! * array: inline, `[` elements joined by `, ` `]`, so objects in arrays read `[{` … `}, {`
//!   … `}]`; an empty array is `[]`. Arrays count as a nesting level for the indentation of
//!   the objects inside them.
//! * numbers: [`format_c_number`] (integers without `.0`, else the shorter of `%1.15g` and
//!   `%1.17g` that reads back); NaN and infinities print as `null`.
//! * strings: `\"`, `\\`, `\b`, `\f`, `\n`, `\r`, `\t`, other control characters as
//!   `\u00xx` (lower-case hex), everything else (UTF-8 included) raw. This is also
//!   serde_json's escaping, so the default string methods are kept.
//!
//! iperf3 then prints the text followed by a newline, which [`to_cjson_string`] includes.
//!
//! `--json-stream` (3.17+) prints each event with `cJSON_PrintUnformatted` instead: no
//! white space at all (`{"a":1,"b":[1,2]}`) but the same numbers and strings;
//! [`to_cjson_compact_string`] does that.

use crate::units::format_c_number;
use serde::Serialize;
use serde_json::ser::{Formatter, Serializer};
use std::io;

/// A `serde_json` formatter producing cJSON's formatted layout.
#[derive(Clone, Debug, Default)]
pub struct CJsonFormatter {
    /// Current nesting depth (objects and arrays), as cJSON's `output_buffer->depth`.
    depth: usize,
    /// Whether the innermost open object has printed a member (decides the newline before
    /// its `}`); reset when an object opens and set after each member value, like
    /// serde_json's own `PrettyFormatter`.
    has_value: bool,
    /// `cJSON_PrintUnformatted`: no newlines, tabs or spaces.
    compact: bool,
}

impl CJsonFormatter {
    /// The formatted layout (`cJSON_Print`, what `-J` prints).
    pub fn new() -> Self {
        Self::default()
    }

    /// The unformatted layout (`cJSON_PrintUnformatted`, one `--json-stream` line).
    pub fn compact() -> Self {
        Self { compact: true, ..Self::default() }
    }
}

fn tabs<W: ?Sized + io::Write>(w: &mut W, n: usize) -> io::Result<()> {
    for _ in 0..n {
        w.write_all(b"\t")?;
    }
    Ok(())
}

impl Formatter for CJsonFormatter {
    fn write_f64<W: ?Sized + io::Write>(&mut self, w: &mut W, value: f64) -> io::Result<()> {
        w.write_all(format_c_number(value).as_bytes())
    }

    fn write_f32<W: ?Sized + io::Write>(&mut self, w: &mut W, value: f32) -> io::Result<()> {
        // cJSON only knows doubles; a float is widened first (iperf3's interval `seconds`).
        self.write_f64(w, f64::from(value))
    }

    fn begin_array<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.depth += 1;
        w.write_all(b"[")
    }

    fn end_array<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.depth = self.depth.saturating_sub(1);
        w.write_all(b"]")
    }

    fn begin_array_value<W: ?Sized + io::Write>(&mut self, w: &mut W, first: bool) -> io::Result<()> {
        match (first, self.compact) {
            (true, _) => Ok(()),
            (false, true) => w.write_all(b","),
            (false, false) => w.write_all(b", "),
        }
    }

    fn end_array_value<W: ?Sized + io::Write>(&mut self, _w: &mut W) -> io::Result<()> {
        Ok(())
    }

    fn begin_object<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.depth += 1;
        self.has_value = false;
        w.write_all(if self.compact { b"{" } else { b"{\n" })
    }

    fn end_object<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        if self.compact {
            self.depth = self.depth.saturating_sub(1);
            return w.write_all(b"}");
        }
        if self.has_value {
            w.write_all(b"\n")?;
        }
        tabs(w, self.depth.saturating_sub(1))?;
        self.depth = self.depth.saturating_sub(1);
        w.write_all(b"}")
    }

    fn begin_object_key<W: ?Sized + io::Write>(&mut self, w: &mut W, first: bool) -> io::Result<()> {
        if self.compact {
            return if first { Ok(()) } else { w.write_all(b",") };
        }
        if !first {
            w.write_all(b",\n")?;
        }
        tabs(w, self.depth)
    }

    fn end_object_key<W: ?Sized + io::Write>(&mut self, _w: &mut W) -> io::Result<()> {
        Ok(())
    }

    fn begin_object_value<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        w.write_all(if self.compact { b":" } else { b":\t" })
    }

    fn end_object_value<W: ?Sized + io::Write>(&mut self, _w: &mut W) -> io::Result<()> {
        self.has_value = true;
        Ok(())
    }
}

/// Writes `value` in cJSON's layout (no trailing newline) to `w`.
pub fn to_cjson_writer<W: io::Write, T: ?Sized + Serialize>(w: W, value: &T) -> Result<(), serde_json::Error> {
    let mut ser = Serializer::with_formatter(w, CJsonFormatter::new());
    value.serialize(&mut ser)
}

/// `value` in cJSON's layout, without the trailing newline (what `cJSON_Print` returns; the
/// `Server JSON output:` block embeds it like this).
pub fn try_to_cjson_string<T: ?Sized + Serialize>(value: &T) -> Result<String, serde_json::Error> {
    let mut buf = Vec::new();
    to_cjson_writer(&mut buf, value)?;
    // serde_json only writes UTF-8 (strings are &str, escapes are ASCII).
    Ok(String::from_utf8(buf).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned()))
}

/// `value` as `cJSON_PrintUnformatted` prints it (no trailing newline): one `--json-stream`
/// event, e.g. `{"event":"interval","data":{…}}`.
pub fn to_cjson_compact_string<T: ?Sized + Serialize>(value: &T) -> Result<String, serde_json::Error> {
    let mut buf = Vec::new();
    let mut ser = Serializer::with_formatter(&mut buf, CJsonFormatter::compact());
    value.serialize(&mut ser)?;
    Ok(String::from_utf8(buf).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned()))
}

/// The document as iperf3 prints it for `-J`: cJSON's layout plus a trailing newline.
///
/// Serialising the `-J` schema types cannot fail (all keys are strings). For any other type
/// whose `Serialize` fails (say a map with non-string keys), the result is a one-key
/// document `{"error": <message>}` in the same layout rather than a panic.
pub fn to_cjson_string<T: ?Sized + Serialize>(value: &T) -> String {
    let mut text = match try_to_cjson_string(value) {
        Ok(text) => text,
        Err(e) => {
            let doc = serde_json::json!({ "error": e.to_string() });
            try_to_cjson_string(&doc).unwrap_or_default()
        }
    };
    text.push('\n');
    text
}

#[cfg(test)]
// Values are typed exactly as the captured samples print them.
#[allow(clippy::excessive_precision)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn error_document_layout() {
        let doc = json!({
            "start": {"connected": [], "version": "iperf 3.12", "system_info": "Linux vm"},
            "intervals": [],
            "end": {},
            "error": "unable to connect to server: Connection refused"
        });
        let expected = "{\n\t\"start\":\t{\n\t\t\"connected\":\t[],\n\t\t\"version\":\t\"iperf 3.12\",\n\t\t\"system_info\":\t\"Linux vm\"\n\t},\n\t\"intervals\":\t[],\n\t\"end\":\t{\n\t},\n\t\"error\":\t\"unable to connect to server: Connection refused\"\n}\n";
        assert_eq!(to_cjson_string(&doc), expected);
    }

    #[test]
    fn objects_inside_arrays_are_indented_by_array_depth() {
        let doc = json!({"a": [{"x": 1}, {"y": [1, 2.5, null]}], "b": [{}]});
        let expected = "{\n\t\"a\":\t[{\n\t\t\t\"x\":\t1\n\t\t}, {\n\t\t\t\"y\":\t[1, 2.5, null]\n\t\t}],\n\t\"b\":\t[{\n\t\t}]\n}";
        assert_eq!(try_to_cjson_string(&doc).unwrap(), expected);
    }

    #[test]
    fn empty_top_level_object_and_scalars() {
        assert_eq!(to_cjson_string(&json!({})), "{\n}\n");
        assert_eq!(try_to_cjson_string(&json!(true)).unwrap(), "true");
        assert_eq!(try_to_cjson_string(&json!([])).unwrap(), "[]");
        assert_eq!(try_to_cjson_string(&f64::NAN).unwrap(), "null");
        assert_eq!(try_to_cjson_string(&2.0f64).unwrap(), "2");
        assert_eq!(try_to_cjson_string(&1.0001909732818604f32).unwrap(), "1.0001909732818604");
    }

    #[test]
    fn strings_are_escaped_like_cjson() {
        let s = "q\"b\\\u{8}\u{c}\n\r\t\u{1}/é";
        assert_eq!(try_to_cjson_string(&s).unwrap(), "\"q\\\"b\\\\\\b\\f\\n\\r\\t\\u0001/é\"");
    }

    #[test]
    fn compact_layout_like_print_unformatted() {
        let doc = json!({"event": "interval", "data": {"streams": [{"start": 0.0, "x": [1, 2.5]}], "e": {}}});
        assert_eq!(
            to_cjson_compact_string(&doc).unwrap(),
            "{\"event\":\"interval\",\"data\":{\"streams\":[{\"start\":0,\"x\":[1,2.5]}],\"e\":{}}}"
        );
    }

    #[test]
    fn map_with_non_string_keys_becomes_an_error_document() {
        let mut m = std::collections::BTreeMap::new();
        m.insert(vec![1u8], 1);
        let text = to_cjson_string(&m);
        assert!(text.starts_with("{\n\t\"error\":\t\""), "{text}");
    }
}
