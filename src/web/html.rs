//! The HTML pieces the report and the web app share: one page shell with its stylesheet inline
//! (no fonts, scripts or styles from anywhere else), text escaped, a CSV file as a table, and
//! the small part of Markdown our own `.md` outputs use (headings, pipe tables, code fences,
//! paragraphs, `**bold**` and `` `code` ``) as HTML.

pub use crate::view::svg::escape;

/// The stylesheet of every page.
pub const STYLE: &str = r#"
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:0;color:#222;background:#fafafa}
header{background:#2c3e50;color:#fff;padding:14px 24px}
header h1{margin:0;font-size:20px} header p{margin:4px 0 0;color:#cfd8dc;font-size:13px}
header a{color:#fff}
nav{padding:8px 24px;background:#eceff1;font-size:13px;position:sticky;top:0;z-index:2}
nav a{margin-right:14px;color:#2c3e50}
main{padding:8px 24px 40px;max-width:1500px}
section{margin:18px 0;padding:12px 16px;background:#fff;border:1px solid #e0e0e0;border-radius:6px}
h2{font-size:17px;margin:4px 0 10px} h3{font-size:15px;margin:14px 0 6px}
table{border-collapse:collapse;font-size:13px;margin:6px 0}
th,td{border:1px solid #ddd;padding:3px 8px;text-align:left;vertical-align:top}
th{background:#f2f2f2} tr:nth-child(even) td{background:#fbfbfb}
td.n{text-align:right;font-variant-numeric:tabular-nums}
pre{background:#f6f8fa;padding:10px;overflow:auto;font-size:12px;max-height:420px;border:1px solid #eee}
code{background:#f1f1f1;padding:0 3px}
details{margin:6px 0} summary{cursor:pointer;font-weight:600}
.chart svg,.chart img{max-width:100%;height:auto;border:1px solid #eee}
.board{overflow:auto;flex:1 1 420px;min-width:280px} .board svg{max-width:100%;height:auto}
.muted{color:#777;font-size:13px}
.moves{font-family:monospace;font-size:12px;max-height:360px;overflow:auto;border:1px solid #eee;padding:4px;min-width:220px}
.moves div{padding:1px 4px;cursor:pointer} .moves div.on{background:#ffe082}
.row{display:flex;gap:14px;align-items:flex-start;flex-wrap:wrap}
button{font-size:13px;padding:4px 10px;margin:2px;cursor:pointer}
button.move{font-family:monospace}
.err{color:#b00020;font-weight:600}
"#;

/// The policy every page carries (opened from disk too): its own inline script and styles,
/// images only as data or from its own server, nothing fetched, no form sent anywhere.
const CSP: &str =
    "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src 'self' data:; base-uri 'none'; form-action 'none'";

/// A whole page: `title` in the header, `sub` under it (HTML), then `nav` links and `body`.
pub fn page(title: &str, sub: &str, nav: &[(String, String)], body: &str, script: &str) -> String {
    let links: String = nav.iter().map(|(id, name)| format!(r##"<a href="#{}">{}</a>"##, escape(id), escape(name))).collect();
    let nav = if nav.is_empty() { String::new() } else { format!("<nav>{links}</nav>") };
    let script = if script.is_empty() { String::new() } else { format!("<script>{script}</script>") };
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
<meta http-equiv=\"Content-Security-Policy\" content=\"{CSP}\">\
<title>{}</title><style>{STYLE}</style></head>\n<body><header><h1>{}</h1><p>{sub}</p></header>{nav}<main>\n{body}</main>{script}</body></html>\n",
        escape(title),
        escape(title)
    )
}

/// A section with an anchor.
pub fn section(id: &str, title: &str, inner: &str) -> String {
    format!("<section id=\"{}\"><h2>{}</h2>\n{inner}</section>\n", escape(id), escape(title))
}

/// Whether a cell reads as a number (right-aligned).
fn numeric(s: &str) -> bool {
    let t = s.trim();
    !t.is_empty() && t.parse::<f64>().is_ok()
}

/// Rows as an HTML table (the first row the header); at most `max_rows` body rows, then a note.
pub fn table(rows: &[Vec<String>], max_rows: usize) -> String {
    let Some((head, body)) = rows.split_first() else { return String::new() };
    let mut s = String::from("<table><tr>");
    for h in head {
        s.push_str(&format!("<th>{}</th>", inline(h)));
    }
    s.push_str("</tr>\n");
    for r in body.iter().take(max_rows) {
        s.push_str("<tr>");
        for c in r {
            let class = if numeric(c) { " class=\"n\"" } else { "" };
            s.push_str(&format!("<td{class}>{}</td>", inline(c)));
        }
        s.push_str("</tr>\n");
    }
    s.push_str("</table>\n");
    if body.len() > max_rows {
        s.push_str(&format!("<p class=\"muted\">… {} more rows in the file.</p>\n", body.len() - max_rows));
    }
    s
}

/// A CSV text as rows (a malformed file: its text as one cell, so that nothing is hidden).
pub fn csv_rows(text: &str) -> Vec<Vec<String>> {
    let mut r = csv::ReaderBuilder::new().has_headers(false).flexible(true).from_reader(text.as_bytes());
    let mut rows = Vec::new();
    for rec in r.records() {
        match rec {
            Ok(rec) => rows.push(rec.iter().map(String::from).collect()),
            Err(e) => {
                rows.push(vec![format!("(unreadable CSV: {e})")]);
                break;
            }
        }
    }
    rows
}

/// `**bold**` and `` `code` `` inside escaped text.
pub fn inline(text: &str) -> String {
    let e = escape(text);
    let mut out = String::with_capacity(e.len());
    let mut rest = e.as_str();
    loop {
        let b = rest.find("**");
        let c = rest.find('`');
        match (b, c) {
            (Some(i), c) if c.is_none_or(|c| i < c) => match rest[i + 2..].find("**") {
                Some(j) => {
                    out.push_str(&rest[..i]);
                    out.push_str(&format!("<b>{}</b>", &rest[i + 2..i + 2 + j]));
                    rest = &rest[i + 4 + j..];
                }
                None => {
                    out.push_str(rest);
                    break;
                }
            },
            (_, Some(i)) => match rest[i + 1..].find('`') {
                Some(j) => {
                    out.push_str(&rest[..i]);
                    out.push_str(&format!("<code>{}</code>", &rest[i + 1..i + 1 + j]));
                    rest = &rest[i + 2 + j..];
                }
                None => {
                    out.push_str(rest);
                    break;
                }
            },
            _ => {
                out.push_str(rest);
                break;
            }
        }
    }
    out
}

/// The Markdown our outputs write, as HTML.
pub fn markdown(md: &str) -> String {
    let mut out = String::new();
    let lines: Vec<&str> = md.lines().collect();
    let mut i = 0;
    let mut para: Vec<&str> = Vec::new();
    let flush = |out: &mut String, para: &mut Vec<&str>| {
        if !para.is_empty() {
            out.push_str(&format!("<p>{}</p>\n", inline(&para.join(" "))));
            para.clear();
        }
    };
    while i < lines.len() {
        let l = lines[i];
        let t = l.trim_start();
        if t.starts_with("```") {
            flush(&mut out, &mut para);
            let mut code = Vec::new();
            i += 1;
            while i < lines.len() && !lines[i].trim_start().starts_with("```") {
                code.push(lines[i]);
                i += 1;
            }
            out.push_str(&format!("<pre>{}</pre>\n", escape(&code.join("\n"))));
        } else if t.starts_with('|') {
            flush(&mut out, &mut para);
            let mut rows = Vec::new();
            while i < lines.len() && lines[i].trim_start().starts_with('|') {
                let row = lines[i].trim().trim_start_matches('|').trim_end_matches('|');
                let cells: Vec<String> = row.split('|').map(|c| c.trim().to_string()).collect();
                let separator = cells.iter().all(|c| !c.is_empty() && c.chars().all(|ch| matches!(ch, '-' | ':' | ' ')));
                if !separator {
                    rows.push(cells);
                }
                i += 1;
            }
            out.push_str(&table(&rows, usize::MAX));
            continue;
        } else if let Some(h) = t.strip_prefix('#') {
            flush(&mut out, &mut para);
            let level = 1 + h.chars().take_while(|&c| c == '#').count();
            let text = h.trim_start_matches('#').trim();
            let tag = (level + 1).min(6);
            out.push_str(&format!("<h{tag}>{}</h{tag}>\n", inline(text)));
        } else if t.is_empty() {
            flush(&mut out, &mut para);
        } else if let Some(item) = t.strip_prefix("- ") {
            flush(&mut out, &mut para);
            out.push_str(&format!("<div>• {}</div>\n", inline(item)));
        } else {
            para.push(t);
        }
        i += 1;
    }
    flush(&mut out, &mut para);
    out
}

/// A relative path as it goes in an `href`: every byte but letters, digits, `-._~/` percent-encoded
/// (so that no name reads as a scheme, a query or a fragment).
pub fn url_path(p: &str) -> String {
    let mut s = String::with_capacity(p.len());
    for b in p.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~/".contains(&b) {
            s.push(b as char);
        } else {
            s.push_str(&format!("%{b:02X}"));
        }
    }
    s
}

/// JSON for a `<script type="application/json">` block: no `<` at all, so nothing in it can
/// close the element or open a comment.
pub fn script_json(v: &serde_json::Value) -> String {
    // `<` never appears but inside JSON strings, where `\u003c` reads the same: no `</script>`
    // and no `<!--` can change how the page parses the block.
    serde_json::to_string(v).unwrap_or_else(|_| "null".into()).replace('<', "\\u003c")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markdown_tables_headings_and_inline_marks_become_html_with_text_escaped() {
        let md = "# Title <x>\n\nSome **bold** and `code`.\n\n| a | b |\n|---|---:|\n| 1 | <2> |\n\n```\nx < y\n```\n";
        let h = markdown(md);
        assert!(h.contains("<h2>Title &lt;x&gt;</h2>"), "{h}");
        assert!(h.contains("<b>bold</b>") && h.contains("<code>code</code>"), "{h}");
        assert!(h.contains("<th>a</th>") && h.contains("<td class=\"n\">1</td>") && h.contains("<td>&lt;2&gt;</td>"), "{h}");
        assert!(!h.contains("---"), "the separator row is dropped: {h}");
        assert!(h.contains("<pre>x &lt; y</pre>"), "{h}");
    }

    #[test]
    fn json_in_a_script_block_cannot_close_it() {
        let v = serde_json::json!({"svg": "<svg></svg></script>"});
        assert!(!script_json(&v).contains("</"));
    }

    #[test]
    fn a_long_table_is_cut_with_a_note() {
        let rows: Vec<Vec<String>> = (0..10).map(|i| vec![i.to_string()]).collect();
        let t = table(&rows, 3);
        assert_eq!(t.matches("<td").count(), 3);
        assert!(t.contains("6 more rows"));
    }
}
