//! A [`Scene`] drawn as one self-contained SVG (no fonts or scripts from outside): the boards
//! from left to right — a grid's tiles coloured by value with the value (or its glyph) written on
//! them (0 is empty, drawn pale; y = 0 at the bottom; a hex grid's tiles pointy-top hexagons in a
//! `<g class="hexgrid">`, each row half a tile right of the row below), a hex map pointy-top in axial coordinates
//! with its walls dark and its pieces as lettered discs in their side's colour (faded once they
//! no longer count), bars under them, each with a `<title>` tooltip — and the panel to their
//! right. Every text is escaped; colours come only from `view` lines the compiler checked.

use super::{Board, Scene};
use std::fmt::Write;

const TILE: f64 = 34.0;
const HEX: f64 = 18.0;
const LINE: f64 = 16.0;
const PANEL_W: f64 = 420.0;

/// Side colours, then a hue per tile value.
const SIDES: [&str; 6] = ["#c0392b", "#2e6fbd", "#2e8b57", "#8e44ad", "#d68910", "#16a085"];
/// Bar colours, in the order a class's bars are declared.
const BARS: [&str; 3] = ["#27ae60", "#f39c12", "#8e44ad"];

/// `&`, `<`, `>`, `"` escaped for SVG text and attributes.
pub fn escape(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            c => o.push(c),
        }
    }
    o
}

/// A stable fill for a tile value (0: empty).
fn tile_fill(v: i64) -> String {
    if v == 0 {
        return "#f4f1ea".into();
    }
    let hue = (v.unsigned_abs().wrapping_mul(137)) % 360;
    format!("hsl({hue},55%,62%)")
}

/// Draws `scene` as SVG text.
pub fn svg(scene: &Scene) -> String {
    let mut body = String::new();
    let mut x0 = 10.0;
    let mut height: f64 = 0.0;
    let top = 34.0;
    for b in &scene.boards {
        match b {
            Board::Grid(g) => {
                let _ = writeln!(body, r#"<text x="{x0}" y="{}" class="h">{}</text>"#, top - 6.0, escape(&g.name));
                // A hex grid: pointy-top hexagons TILE wide, rows 1.5 R apart, row y shifted y
                // half cells right of the bottom row (y = 0 at the bottom, as for tiles).
                let r = TILE / 3f64.sqrt();
                if g.hex {
                    let _ = writeln!(body, r#"<g class="hexgrid">"#);
                }
                for y in 0..g.height {
                    for x in 0..g.width {
                        let v = g.cells[(y * g.width + x) as usize];
                        let (cx, cy) = if g.hex {
                            (x0 + TILE / 2.0 + (x as f64 + y as f64 / 2.0) * TILE, top + r + (g.height - 1 - y) as f64 * 1.5 * r)
                        } else {
                            (x0 + x as f64 * TILE + TILE / 2.0, top + (g.height - 1 - y) as f64 * TILE + TILE / 2.0)
                        };
                        let at = usize::try_from(v).ok();
                        let fill = at.and_then(|k| g.colours.get(k)).cloned().unwrap_or_else(|| tile_fill(v));
                        let text = match at.and_then(|k| g.glyphs.get(k)) {
                            Some(t) => t.clone(),
                            None if v == 0 => String::new(),
                            None => v.to_string(),
                        };
                        let shape = if g.hex {
                            let pts: Vec<String> = (0..6)
                                .map(|k| {
                                    let a = std::f64::consts::PI / 180.0 * (60.0 * k as f64 - 30.0);
                                    format!("{:.1},{:.1}", cx + r * a.cos(), cy + r * a.sin())
                                })
                                .collect();
                            format!(r##"<polygon points="{}" fill="{}" stroke="#777"/>"##, pts.join(" "), escape(&fill))
                        } else {
                            format!(
                                r##"<rect x="{}" y="{}" width="{TILE}" height="{TILE}" fill="{}" stroke="#777"/>"##,
                                cx - TILE / 2.0,
                                cy - TILE / 2.0,
                                escape(&fill)
                            )
                        };
                        let _ = writeln!(
                            body,
                            r##"<g data-cell="{}-{x}-{y}"><title>({x}, {y}) = {v}</title>{shape}{}</g>"##,
                            escape(&g.key),
                            if text.is_empty() {
                                String::new()
                            } else {
                                format!(r#"<text x="{}" y="{}" class="c">{}</text>"#, cx, cy + 5.0, escape(&text))
                            }
                        );
                    }
                }
                let (w, h) = if g.hex {
                    let _ = writeln!(body, "</g>");
                    ((g.width as f64 + (g.height as f64 - 1.0).max(0.0) / 2.0) * TILE, 2.0 * r + (g.height as f64 - 1.0).max(0.0) * 1.5 * r)
                } else {
                    (g.width as f64 * TILE, g.height as f64 * TILE)
                };
                x0 += w + 20.0;
                height = height.max(top + h);
            }
            Board::Hex(h) => {
                let pos = |q: i32, r: i32| (HEX * 3f64.sqrt() * (q as f64 + r as f64 / 2.0), HEX * 1.5 * r as f64);
                let (mut lo_x, mut hi_x, mut lo_y, mut hi_y) = (f64::MAX, f64::MIN, f64::MAX, f64::MIN);
                for c in &h.cells {
                    let (x, y) = pos(c.q, c.r);
                    lo_x = lo_x.min(x);
                    hi_x = hi_x.max(x);
                    lo_y = lo_y.min(y);
                    hi_y = hi_y.max(y);
                }
                if h.cells.is_empty() {
                    continue;
                }
                let ox = x0 - lo_x + HEX;
                let oy = top - lo_y + HEX;
                let _ = writeln!(body, r#"<text x="{x0}" y="{}" class="h">hex map</text>"#, top - 6.0);
                for (i, c) in h.cells.iter().enumerate() {
                    let (cx, cy) = pos(c.q, c.r);
                    let pts: Vec<String> = (0..6)
                        .map(|k| {
                            let a = std::f64::consts::PI / 180.0 * (60.0 * k as f64 - 30.0);
                            format!("{:.1},{:.1}", ox + cx + HEX * a.cos(), oy + cy + HEX * a.sin())
                        })
                        .collect();
                    let fill = if c.wall { "#555" } else { "#f4f1ea" };
                    let _ = writeln!(
                        body,
                        r##"<polygon data-cell="h-{i}" points="{}" fill="{fill}" stroke="#999"><title>cell {i} ({}, {})</title></polygon>"##,
                        pts.join(" "),
                        c.q,
                        c.r
                    );
                }
                for p in &h.pieces {
                    let Some(c) = h.cells.get(p.cell) else { continue };
                    let (cx, cy) = pos(c.q, c.r);
                    let fill = p.colour.clone().unwrap_or_else(|| SIDES[p.side % SIDES.len()].to_string());
                    let mut bars = String::new();
                    for (k, (_, v, full)) in p.bars.iter().enumerate() {
                        let share = if *full > 0.0 { (v / full).clamp(0.0, 1.0) } else { 0.0 };
                        let (bx, by, bw) = (ox + cx - HEX * 0.7, oy + cy + HEX * 0.45 + 3.5 * k as f64, HEX * 1.4);
                        let _ = write!(
                            bars,
                            r##"<rect x="{bx:.1}" y="{by:.1}" width="{bw:.1}" height="3" fill="#ddd"/><rect x="{bx:.1}" y="{by:.1}" width="{:.1}" height="3" fill="{}"/>"##,
                            bw * share,
                            BARS[k % BARS.len()]
                        );
                    }
                    let bar_text: Vec<String> = p.bars.iter().map(|(n, v, full)| format!("{n} {v}/{full}")).collect();
                    let _ = writeln!(
                        body,
                        r#"<g class="piece" data-cell="h-{}"{}><title>{}: {}{}</title><circle cx="{:.1}" cy="{:.1}" r="{:.1}" fill="{}"/><text x="{:.1}" y="{:.1}" class="g">{}</text>{bars}</g>"#,
                        p.cell,
                        if p.faded { r#" opacity="0.35""# } else { "" },
                        escape(&p.label),
                        escape(&p.tooltip),
                        if bar_text.is_empty() { String::new() } else { escape(&format!(" ({})", bar_text.join(", "))) },
                        ox + cx,
                        oy + cy,
                        HEX * 0.7,
                        escape(&fill),
                        ox + cx,
                        oy + cy + 4.0,
                        escape(&p.glyph)
                    );
                }
                x0 += hi_x - lo_x + 2.0 * HEX + 20.0;
                height = height.max(top + hi_y - lo_y + 2.0 * HEX);
            }
        }
    }
    // The panel.
    let px = x0 + 10.0;
    let mut y = top;
    let mut widest: f64 = 0.0;
    let mut line = |body: &mut String, text: &str, class: &str| {
        let _ = writeln!(body, r#"<text x="{px}" y="{y}" class="{class}">{}</text>"#, escape(text));
        y += LINE;
        // About 6.7 px a character at 12 px sans-serif.
        widest = widest.max(text.chars().count() as f64 * 6.7);
    };
    let pn = &scene.panel;
    line(&mut body, &format!("status: {}", pn.status), "h");
    if let Some(m) = &pn.to_move {
        line(&mut body, &format!("to move: {m}"), "t");
    }
    line(&mut body, &pn.clock.iter().map(|(k, v)| format!("{k} {v}")).collect::<Vec<_>>().join(" · "), "t");
    if !pn.goals.is_empty() {
        line(&mut body, "goals", "h");
        for (g, done) in &pn.goals {
            line(&mut body, &format!("{} {g}", if *done { "✓" } else { "·" }), "t");
        }
    }
    if !pn.values.is_empty() {
        line(&mut body, "values", "h");
        for (k, v) in &pn.values {
            line(&mut body, &format!("{k} = {v}"), "t");
        }
    }
    if !pn.objects.is_empty() {
        line(&mut body, "objects", "h");
        for (label, class, attrs) in &pn.objects {
            let a = attrs.iter().map(|(k, v)| format!("{k} {v}")).collect::<Vec<_>>().join(", ");
            line(&mut body, &format!("{label} ({class}): {a}"), "t");
        }
    }
    if !pn.facts.is_empty() {
        line(&mut body, "facts", "h");
        for f in &pn.facts {
            line(&mut body, f, "t");
        }
    }
    let width = px + PANEL_W.max(widest + 20.0);
    let height = height.max(y) + 10.0;
    format!(
        r##"<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width:.0} {height:.0}" width="{width:.0}" height="{height:.0}" font-family="sans-serif" font-size="12">
<style>.h{{font-weight:bold}} .c{{text-anchor:middle;font-size:13px}} .g{{text-anchor:middle;fill:#fff;font-weight:bold}}</style>
<rect width="100%" height="100%" fill="#fff"/>
<text x="10" y="16" class="h">{}</text>
{body}</svg>
"##,
        escape(&scene.title)
    )
}
