//! A view of any game state, derived from the description alone: a WGDL program's tile grids and
//! hex map drawn as boards — grid cells as coloured tiles with their numbers (or the glyphs a
//! `view` line gives; a grid marked `view <grid> hex` as hexagons in rows offset by half a cell),
//! hex occupants as discs on their cells in their side's colour, faded once their `while`
//! condition fails — and everything else as a panel: status and who moves, the clock, goals, the
//! game's values and every live object with its attributes. The WGDL `view` lines
//! (`Program::views`) add labels, bars, glyphs and colours, or leave a class or grid out. A GDL
//! state arrives as its true facts (plain text, so this layer names no reasoner): a relation
//! whose first two arguments are integers becomes a grid ([`facts_scene`]), every fact is
//! listed. [`scene`] builds the picture as data, [`svg::svg`] draws it; nothing here names a
//! game.

pub mod svg;
pub mod text;

use crate::wgdl::program::{AttrRef, BarFull};
use crate::wgdl::{Program, State, Ty};

/// What a state looks like: boards and a panel.
#[derive(Clone, Debug, Default)]
pub struct Scene {
    pub title: String,
    pub boards: Vec<Board>,
    pub panel: Panel,
}

#[derive(Clone, Debug)]
pub enum Board {
    Grid(GridBoard),
    Hex(HexBoard),
}

/// A tile grid: `cells[y * width + x]`, y = 0 at the bottom (the grids' own convention).
#[derive(Clone, Debug)]
pub struct GridBoard {
    pub name: String,
    /// The board's key in cell ids (`data-cell="<key>-<x>-<y>"`): `g<k>` for the program's
    /// k-th grid, `f<n>` for a grid made from GDL facts.
    pub key: String,
    pub width: u32,
    pub height: u32,
    pub cells: Vec<i64>,
    /// What value k shows (`glyphs[k]`; past the end, or empty: the number).
    pub glyphs: Vec<String>,
    /// The fill of value k (past the end, or empty: a hue per value, 0 pale).
    pub colours: Vec<String>,
    /// Drawn as a rhombus of hexagons (`view <grid> hex`): row y sits y half cells to the right
    /// of the bottom row, so that the `hex` direction set's six neighbours touch the cell.
    pub hex: bool,
}

/// A hex map: its cells in the map's numbering and the pieces standing on them.
#[derive(Clone, Debug)]
pub struct HexBoard {
    pub cells: Vec<HexCell>,
    pub pieces: Vec<Piece>,
}

#[derive(Clone, Copy, Debug)]
pub struct HexCell {
    pub q: i32,
    pub r: i32,
    pub wall: bool,
}

/// An object on a board cell: its glyph, its side (colour, unless its class names one), its
/// label and attributes (a tooltip), bars (name, value, full), and whether it still counts.
#[derive(Clone, Debug)]
pub struct Piece {
    pub cell: usize,
    pub glyph: String,
    pub side: usize,
    pub colour: Option<String>,
    pub label: String,
    pub tooltip: String,
    pub bars: Vec<(String, f64, f64)>,
    pub faded: bool,
}

/// Everything that is not a board.
#[derive(Clone, Debug, Default)]
pub struct Panel {
    pub status: String,
    pub to_move: Option<String>,
    /// (name, value): time, sessions, moves, turns, round.
    pub clock: Vec<(String, String)>,
    /// (goal text, reached).
    pub goals: Vec<(String, bool)>,
    /// The game's values (`game.<path>`), as `named_values` gives them.
    pub values: Vec<(String, String)>,
    /// Live objects: (label, class, attributes).
    pub objects: Vec<(String, String, Vec<(String, String)>)>,
    /// A GDL state's true facts.
    pub facts: Vec<String>,
}

/// An object's label: its `view … label` attribute where it has one, else `object_label`.
fn label_of(p: &Program, st: &State, i: u32, base: &str) -> String {
    let o = &st.objects[i as usize];
    match p.views.classes.get(o.class as usize).and_then(|v| v.label) {
        Some(a) => match p.attr_value(st, i, a) {
            Some((v, ty)) => p.show(ty, v),
            None => base.to_string(),
        },
        None => base.to_string(),
    }
}

/// The scene of state `st` of `p`.
pub fn scene(p: &Program, st: &State, title: &str) -> Scene {
    let mut boards = Vec::new();
    for (k, g) in p.grids.iter().enumerate() {
        let view = p.views.grids.get(k).cloned().unwrap_or_default();
        if view.hide {
            continue;
        }
        let n = (g.width * g.height) as usize;
        let base = g.base as usize;
        let cells = st.slots.get(base..base + n).map_or_else(|| vec![0; n], |s| s.to_vec());
        boards.push(Board::Grid(GridBoard {
            name: g.name.clone(),
            key: format!("g{k}"),
            width: g.width,
            height: g.height,
            cells,
            glyphs: view.glyphs,
            colours: view.colours,
            hex: view.hex,
        }));
    }
    let names: Vec<String> = (0..st.objects.len() as u32).map(|i| p.object_label(st, i)).collect();
    let labels: Vec<String> = (0..st.objects.len() as u32).map(|i| label_of(p, st, i, &names[i as usize])).collect();
    let attrs_of = |i: usize| -> Vec<(String, String)> {
        let o = &st.objects[i];
        p.classes[o.class as usize]
            .attrs
            .iter()
            .enumerate()
            .map(|(k, a)| {
                let v = st.slots.get(o.base as usize + k).copied().unwrap_or(0);
                let shown = match a.ty {
                    Ty::Obj(_) if v >= 0 && (v as usize) < labels.len() => labels[v as usize].clone(),
                    ty => p.show(ty, v),
                };
                (a.name.clone(), shown)
            })
            .collect()
    };
    let attr_name = |class: u32, a: AttrRef| -> String {
        let c = &p.classes[class as usize];
        match a {
            AttrRef::Inst(k, _) => c.attrs.get(k as usize).map_or("?".into(), |x| x.name.clone()),
            AttrRef::Const(k, _) => c.consts.get(k as usize).map_or("?".into(), |x| x.name.clone()),
        }
    };
    if let Some(h) = &p.hex {
        let cells = (0..h.len()).map(|c| HexCell { q: h.q[c], r: h.r[c], wall: h.wall[c] }).collect();
        let mut pieces = Vec::new();
        if let Some(occ) = &p.occupants {
            // Where the `while` condition cannot be evaluated, every live occupant counts.
            let counting = p.counting_occupants(st).ok();
            for (i, o) in st.objects.iter().enumerate() {
                if !o.alive || !p.is_sub(o.class, occ.class) {
                    continue;
                }
                let cell = st.slots.get(o.base as usize + occ.pos as usize).copied().unwrap_or(-1);
                let side = st.slots.get(o.base as usize + occ.side as usize).copied().unwrap_or(0);
                if cell < 0 || cell as usize >= h.len() {
                    continue;
                }
                let view = p.views.classes.get(o.class as usize).cloned().unwrap_or_default();
                let side_name = p.players.get(side.max(0) as usize).map_or("?", |s| s.as_str());
                let glyph = view.glyph.clone().unwrap_or_else(|| side_name.chars().next().unwrap_or('?').to_uppercase().to_string());
                let tooltip = attrs_of(i).iter().map(|(k, v)| format!("{k} {v}")).collect::<Vec<_>>().join(", ");
                let number = |a: AttrRef| p.attr_value(st, i as u32, a).and_then(|(v, ty)| Program::number(ty, v));
                let bars = view
                    .bars
                    .iter()
                    .filter_map(|&(a, full)| {
                        let full = match full {
                            BarFull::Number(v) => v,
                            BarFull::Attr(m) => number(m)?,
                        };
                        Some((attr_name(o.class as u32, a), number(a)?, full))
                    })
                    .collect();
                let faded = counting.as_ref().is_some_and(|c| !c.contains(&(i as u32)));
                pieces.push(Piece {
                    cell: cell as usize,
                    glyph,
                    side: side.max(0) as usize,
                    colour: view.colour,
                    label: labels[i].clone(),
                    tooltip,
                    bars,
                    faded,
                });
            }
        }
        boards.push(Board::Hex(HexBoard { cells, pieces }));
    }
    let mut legal = Vec::new();
    let status = match p.legal_actions(st, &mut legal) {
        Ok(()) => match p.status(st, &legal) {
            crate::wgdl::Status::Won(k) => format!("{} won", p.players.get(k as usize).map_or("?", |s| s.as_str())),
            s => format!("{s:?}"),
        },
        Err(e) => format!("error: {}", e.render(p)),
    };
    let to_move = (p.players.len() > 1).then(|| p.players.get(st.to_move as usize).cloned().unwrap_or_default());
    let clock = vec![
        ("time".to_string(), st.clock.to_string()),
        ("sessions".to_string(), st.sessions.to_string()),
        ("moves".to_string(), st.moves.to_string()),
        ("turns".to_string(), st.turns.to_string()),
        ("round".to_string(), st.round.to_string()),
    ];
    let goals = p.goals.iter().enumerate().map(|(k, g)| (g.text.clone(), k < st.goal as usize)).collect();
    let values = p
        .named_values(st)
        .into_iter()
        .filter(|(name, _, _)| name.starts_with("game.") && name != "game.time" && name != "game.sessionsFinished")
        .map(|(name, ty, v)| (name, p.show(ty, v)))
        .collect();
    let objects = st
        .objects
        .iter()
        .enumerate()
        .filter(|(_, o)| o.alive && !p.views.classes.get(o.class as usize).is_some_and(|v| v.hide))
        .map(|(i, o)| {
            let label = if labels[i] == names[i] { names[i].clone() } else { format!("{} ({})", labels[i], names[i]) };
            (label, p.classes[o.class as usize].name.clone(), attrs_of(i))
        })
        .collect();
    Scene { title: title.to_string(), boards, panel: Panel { status, to_move, clock, goals, values, objects, facts: Vec::new() } }
}

/// What a GDL state shows beyond its facts: its status, who moves, the move count.
#[derive(Clone, Debug, Default)]
pub struct FactsInfo {
    pub status: String,
    pub to_move: Option<String>,
    pub moves: u32,
}

/// Splits a KIF fact `(rel a b c)` into its words (nested terms kept whole); an atom is one word.
pub fn fact_words(fact: &str) -> Vec<String> {
    let t = fact.trim();
    let Some(inner) = t.strip_prefix('(').and_then(|x| x.strip_suffix(')')) else { return vec![t.to_string()] };
    let mut words = Vec::new();
    let (mut depth, mut cur) = (0i32, String::new());
    for c in inner.chars() {
        match c {
            '(' => {
                depth += 1;
                cur.push(c);
            }
            ')' => {
                depth -= 1;
                cur.push(c);
            }
            c if c.is_whitespace() && depth == 0 => {
                if !cur.is_empty() {
                    words.push(std::mem::take(&mut cur));
                }
            }
            c => cur.push(c),
        }
    }
    if !cur.is_empty() {
        words.push(cur);
    }
    words
}

/// The largest side of a grid made from facts; a relation spanning more is left to the panel.
const MAX_FACT_GRID: i64 = 64;

/// The scene of a GDL state given as its true facts. A relation (other than the reserved ones)
/// whose facts all have at least two arguments, the first two integers, becomes a grid: the
/// first integer is the column, the second the row, the lowest row at the bottom (WGDL's
/// convention), spanning the smallest to the largest index seen. A cell holds the rest of its
/// fact's words (a presence mark when there are none); the blank marks `b`, `blank` and `empty`
/// leave it empty. Every fact is also listed in the panel.
pub fn facts_scene(title: &str, facts: &[String], info: &FactsInfo) -> Scene {
    use std::collections::BTreeMap;
    // relation → [(x, y, rest)], or None once a fact does not fit.
    let mut rels: BTreeMap<String, Option<Vec<(i64, i64, String)>>> = BTreeMap::new();
    for f in facts {
        let w = fact_words(f);
        let Some((rel, args)) = w.split_first() else { continue };
        if rel.starts_with('(') {
            continue;
        }
        let entry = rels.entry(rel.clone()).or_insert_with(|| Some(Vec::new()));
        let fits = match (args.first().map(|a| a.parse::<i64>()), args.get(1).map(|a| a.parse::<i64>())) {
            (Some(Ok(x)), Some(Ok(y))) => Some((x, y, args[2..].join(" "))),
            _ => None,
        };
        match (entry.as_mut(), fits) {
            (Some(v), Some(c)) => v.push(c),
            _ => *entry = None,
        }
    }
    let mut boards = Vec::new();
    for (rel, cells) in rels {
        let Some(cells) = cells.filter(|c| !c.is_empty()) else { continue };
        let (x0, x1) = (cells.iter().map(|c| c.0).min().unwrap_or(0), cells.iter().map(|c| c.0).max().unwrap_or(0));
        let (y0, y1) = (cells.iter().map(|c| c.1).min().unwrap_or(0), cells.iter().map(|c| c.1).max().unwrap_or(0));
        if x1 - x0 >= MAX_FACT_GRID || y1 - y0 >= MAX_FACT_GRID {
            continue;
        }
        let (width, height) = ((x1 - x0 + 1) as u32, (y1 - y0 + 1) as u32);
        // Values: 0 empty, then each distinct content in sorted order.
        let mut kinds: Vec<String> = cells.iter().map(|c| c.2.clone()).filter(|k| !matches!(k.as_str(), "b" | "blank" | "empty")).collect();
        kinds.sort();
        kinds.dedup();
        let mut grid = vec![0i64; (width * height) as usize];
        for (x, y, k) in &cells {
            let v = kinds.iter().position(|q| q == k).map_or(0, |i| i as i64 + 1);
            grid[((y - y0) as u32 * width + (x - x0) as u32) as usize] = v;
        }
        let mut glyphs = vec![String::new()];
        glyphs.extend(kinds.iter().map(|k| if k.is_empty() { "●".to_string() } else { k.chars().take(4).collect() }));
        let key = format!("f{}", boards.len());
        boards.push(Board::Grid(GridBoard { name: rel, key, width, height, cells: grid, glyphs, colours: Vec::new(), hex: false }));
    }
    let panel = Panel {
        status: info.status.clone(),
        to_move: info.to_move.clone(),
        clock: vec![("moves".to_string(), info.moves.to_string())],
        facts: facts.to_vec(),
        ..Panel::default()
    };
    Scene { title: title.to_string(), boards, panel }
}

/// The SVG of state `st` of `p` (see [`scene`] and [`svg::svg`]).
pub fn render_svg(p: &Program, st: &State, title: &str) -> String {
    svg::svg(&scene(p, st, title))
}
