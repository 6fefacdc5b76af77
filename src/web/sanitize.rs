//! An SVG file of a run folder, made safe to put inside a page: rebuilt from an allow-list of
//! drawing elements and attributes, so that what a chart draws survives (shapes, text, colours,
//! transforms) and nothing else does — no script, no event handler, no link, no foreign object,
//! no style sheet, no reference outside the document. A file that does not read as plain markup
//! (a processing instruction past the prologue, an unterminated tag or quote) is refused whole
//! rather than repaired. Charts playforge writes (plotters' SVG backend) pass unchanged in what
//! they show; a planted `<script>` or `onload=` is dropped.

use super::html::escape;
use std::fmt::Write;

/// Elements kept (with their content).
const ELEMENTS: &[&str] = &[
    "svg",
    "g",
    "rect",
    "line",
    "polyline",
    "polygon",
    "path",
    "circle",
    "ellipse",
    "text",
    "tspan",
    "title",
    "desc",
    "defs",
    "clipPath",
    "linearGradient",
    "radialGradient",
    "stop",
];
/// Elements dropped with everything inside them (the rest of the unknown ones lose only their tags).
const DROPPED_WHOLE: &[&str] = &["script", "style", "foreignObject", "iframe", "object", "embed", "a", "use", "image", "animate", "set"];
/// Attributes kept, on any kept element.
const ATTRIBUTES: &[&str] = &[
    "x",
    "y",
    "x1",
    "y1",
    "x2",
    "y2",
    "cx",
    "cy",
    "r",
    "rx",
    "ry",
    "dx",
    "dy",
    "width",
    "height",
    "viewBox",
    "points",
    "d",
    "fill",
    "fill-opacity",
    "fill-rule",
    "stroke",
    "stroke-width",
    "stroke-opacity",
    "stroke-dasharray",
    "stroke-linecap",
    "stroke-linejoin",
    "opacity",
    "transform",
    "font-family",
    "font-size",
    "font-weight",
    "font-style",
    "text-anchor",
    "dominant-baseline",
    "alignment-baseline",
    "class",
    "id",
    "clip-path",
    "offset",
    "stop-color",
    "stop-opacity",
    "version",
    "preserveAspectRatio",
    "xmlns",
    "gradientUnits",
    "rotate",
];

/// `text` as a safe `<svg>…</svg>`, or `None` if it is not plain SVG markup.
pub fn svg(text: &str) -> Option<String> {
    let start = text.find("<svg")?;
    let mut out = String::with_capacity(text.len());
    let mut rest = &text[start..];
    // Open kept elements (to close what is left open) and how deep a dropped subtree goes.
    let mut open: Vec<&str> = Vec::new();
    let mut dropping: Option<(&str, usize)> = None;
    while !rest.is_empty() {
        let Some(lt) = rest.find('<') else {
            if dropping.is_none() {
                out.push_str(&text_of(rest));
            }
            break;
        };
        if dropping.is_none() {
            out.push_str(&text_of(&rest[..lt]));
        }
        rest = &rest[lt..];
        if let Some(r) = rest.strip_prefix("<!--") {
            rest = &r[r.find("-->")? + 3..];
            continue;
        }
        if rest.starts_with("<!") || rest.starts_with("<?") {
            return None;
        }
        let end = tag_end(rest)?;
        let tag = &rest[1..end];
        rest = &rest[end + 1..];
        if let Some(name) = tag.strip_prefix('/') {
            let name = name.trim();
            match &mut dropping {
                Some((n, depth)) if *n == name => {
                    *depth -= 1;
                    if *depth == 0 {
                        dropping = None;
                    }
                }
                Some(_) => {}
                None => {
                    if open.last() == Some(&name) {
                        open.pop();
                        let _ = write!(out, "</{name}>");
                    }
                }
            }
            continue;
        }
        let closed = tag.ends_with('/');
        let tag = tag.trim_end_matches('/');
        let name = tag.split(|c: char| c.is_whitespace()).next().unwrap_or("");
        if let Some((n, depth)) = &mut dropping {
            if *n == name && !closed {
                *depth += 1;
            }
            continue;
        }
        if DROPPED_WHOLE.iter().any(|d| d.eq_ignore_ascii_case(name)) {
            if !closed {
                dropping = Some((name, 1));
            }
            continue;
        }
        if !ELEMENTS.contains(&name) {
            continue;
        }
        let _ = write!(out, "<{name}");
        for (k, v) in attributes(&tag[name.len()..])? {
            if ATTRIBUTES.contains(&k) && value_ok(k, v) {
                let _ = write!(out, " {k}=\"{}\"", escape(&unescape(v)));
            }
        }
        if closed {
            out.push_str("/>");
        } else {
            out.push('>');
            open.push(name);
        }
    }
    for name in open.iter().rev() {
        let _ = write!(out, "</{name}>");
    }
    out.starts_with("<svg").then_some(out)
}

/// Where the tag opening `s` ends (its `>`, outside quotes).
fn tag_end(s: &str) -> Option<usize> {
    let mut quote = None;
    for (i, c) in s.char_indices().skip(1) {
        match (quote, c) {
            (None, '"' | '\'') => quote = Some(c),
            (Some(q), c) if c == q => quote = None,
            (None, '>') => return Some(i),
            (None, '<') => return None,
            _ => {}
        }
    }
    None
}

/// `name="value"` pairs of a tag's attribute text (single or double quotes).
fn attributes(mut s: &str) -> Option<Vec<(&str, &str)>> {
    let mut v = Vec::new();
    loop {
        s = s.trim_start();
        if s.is_empty() {
            return Some(v);
        }
        let eq = s.find('=')?;
        let name = s[..eq].trim();
        let after = s[eq + 1..].trim_start();
        let q = after.chars().next().filter(|c| *c == '"' || *c == '\'')?;
        let close = after[1..].find(q)?;
        v.push((name, &after[1..1 + close]));
        s = &after[close + 2..];
    }
}

/// A value that can fetch or run nothing: no `url(` but a reference within the document, no
/// `javascript:`, no CSS escape (`u\rl(` reads as `url(`), and the SVG namespace only.
fn value_ok(name: &str, v: &str) -> bool {
    let low = unescape(v).to_ascii_lowercase();
    if name == "xmlns" {
        return low == "http://www.w3.org/2000/svg";
    }
    if low.contains('\\') || low.contains("javascript:") || low.contains("expression(") {
        return false;
    }
    let mut rest = low.as_str();
    while let Some(i) = rest.find("url(") {
        rest = &rest[i + 4..];
        if !rest.trim_start().trim_start_matches(['"', '\'']).starts_with('#') {
            return false;
        }
    }
    true
}

/// Character data as safe text: entities read, then `&`, `<`, `>` written back escaped.
fn text_of(s: &str) -> String {
    escape(&unescape(s))
}

/// The five predefined entities and numeric references read (others left as written).
fn unescape(s: &str) -> String {
    if !s.contains('&') {
        return s.to_string();
    }
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(i) = rest.find('&') {
        out.push_str(&rest[..i]);
        rest = &rest[i..];
        let semi = rest.find(';').filter(|&j| j <= 10);
        let ch = semi.and_then(|j| match &rest[1..j] {
            "amp" => Some('&'),
            "lt" => Some('<'),
            "gt" => Some('>'),
            "quot" => Some('"'),
            "apos" => Some('\''),
            e => match e.strip_prefix("#x").or_else(|| e.strip_prefix("#X")) {
                Some(h) => u32::from_str_radix(h, 16).ok().and_then(char::from_u32),
                None => e.strip_prefix('#').and_then(|d| d.parse().ok()).and_then(char::from_u32),
            },
        });
        match (ch, semi) {
            (Some(c), Some(j)) => {
                out.push(c);
                rest = &rest[j + 1..];
            }
            _ => {
                out.push('&');
                rest = &rest[1..];
            }
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::svg;

    #[test]
    fn drawing_survives_and_scripts_do_not() {
        let chart = r##"<?xml version="1.0"?><svg width="10" height="10" viewBox="0 0 10 10" xmlns="http://www.w3.org/2000/svg"><rect x="0" y="0" width="10" height="10" fill="#FFFFFF" opacity="1"/><text x="1" y="2" font-size="9" fill="#000">F &lt; 0.5 &amp; ok</text><polyline fill="none" stroke="#0000FF" points="0,0 5,5"/></svg>"##;
        let clean = svg(chart).unwrap();
        assert!(clean.starts_with("<svg width=\"10\""), "{clean}");
        assert!(clean.contains("F &lt; 0.5 &amp; ok") && clean.contains("points=\"0,0 5,5\""), "{clean}");
        let evil = r##"<svg xmlns="http://www.w3.org/2000/svg" onload="alert(1)"><script>alert(2)</script><rect onclick="x()" fill="url(https://evil/x)" width="1"/><a href="javascript:alert(3)"><text>t</text></a><foreignObject><div><script>alert(4)</script></div></foreignObject><style>*{}</style><use href="#x"/><text>&lt;script&gt;</text></svg>"##;
        let clean = svg(evil).unwrap();
        for bad in ["alert", "onload", "onclick", "script>", "href", "https://evil", "foreignObject", "style"] {
            assert!(!clean.contains(bad), "{bad} in {clean}");
        }
        assert!(clean.contains("<rect width=\"1\"/>") && clean.contains("<text>&lt;script&gt;</text>"), "{clean}");
        // A CSS escape spelling `url(` is no reference within the document.
        let css = svg(r#"<svg><rect fill="u\rl(https://evil/x#p)" stroke="url(#g)"/></svg>"#).unwrap();
        assert_eq!(css, r#"<svg><rect stroke="url(#g)"/></svg>"#);
    }

    #[test]
    fn what_is_not_plain_markup_is_refused() {
        assert_eq!(svg("no svg here"), None);
        assert_eq!(svg("<svg><rect width=\"1></svg>"), None);
        assert_eq!(svg("<svg><!DOCTYPE x [<!ENTITY e 'x'>]><text>&e;</text></svg>"), None);
        // An unclosed element is closed; an open script drops the rest.
        assert_eq!(svg("<svg><g><rect/>").as_deref(), Some("<svg><g><rect/></g></svg>"));
        assert_eq!(svg("<svg><script>alert(1)").as_deref(), Some("<svg></svg>"));
        // Nested scripts: the outer one closes the drop.
        let s = svg("<svg><script><script></script>x</script><text>k</text></svg>").unwrap();
        assert_eq!(s, "<svg><text>k</text></svg>");
    }
}
