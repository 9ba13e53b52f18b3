//! Escaping text for HTML and SVG (both XML-ish: the same five characters).

/// `s` safe inside element content and double- or single-quoted attribute values.
pub fn xml(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            // Control characters are not allowed in XML 1.0 text; a stray one from a
            // hostname or finding would make a standalone SVG unreadable.
            c if c.is_control() && c != '\n' && c != '\t' => out.push('\u{fffd}'),
            c => out.push(c),
        }
    }
    out
}

/// A lower-case `[a-z0-9-]` slug for element ids and file names (`Run 12 / upload` →
/// `run-12-upload`); empty input gives `x`.
pub fn slug(s: &str) -> String {
    let mut out = String::new();
    for c in s.chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c.to_ascii_lowercase());
        } else if !out.ends_with('-') && !out.is_empty() {
            out.push('-');
        }
    }
    let trimmed = out.trim_end_matches('-');
    if trimmed.is_empty() { "x".to_string() } else { trimmed.to_string() }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_markup() {
        assert_eq!(xml(r#"<a href="x">&'"#), "&lt;a href=&quot;x&quot;&gt;&amp;&#39;");
        assert_eq!(xml("a\u{1}b"), "a\u{fffd}b");
    }

    #[test]
    fn slugs() {
        assert_eq!(slug("Run 12 / upload"), "run-12-upload");
        assert_eq!(slug("--"), "x");
        assert_eq!(slug("bidir ↑"), "bidir");
    }
}
