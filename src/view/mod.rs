//! A view of any WGDL state, derived from the description alone (issue 43, its first piece):
//! the program's tile grids and hex map drawn as boards — grid cells as coloured tiles with
//! their numbers, hex occupants as glyphs on their cells, coloured by side — and everything else
//! as a panel: status and who moves, the clock, goals, the game's values and every live object
//! with its attributes. [`scene`] builds the picture as data, [`svg::svg`] draws it; nothing here
//! names a game. (Not yet: `view` hints in WGDL, GDL facts, an occupant's `while` condition —
//! every live occupant is drawn.)

pub mod svg;

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
    pub width: u32,
    pub height: u32,
    pub cells: Vec<i64>,
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

/// An object on a board cell: its glyph, its side (colour), its label and attributes (a tooltip).
#[derive(Clone, Debug)]
pub struct Piece {
    pub cell: usize,
    pub glyph: String,
    pub side: usize,
    pub label: String,
    pub tooltip: String,
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
}

/// The scene of state `st` of `p`.
pub fn scene(p: &Program, st: &State, title: &str) -> Scene {
    let mut boards = Vec::new();
    for g in &p.grids {
        let n = (g.width * g.height) as usize;
        let base = g.base as usize;
        let cells = st.slots.get(base..base + n).map_or_else(|| vec![0; n], |s| s.to_vec());
        boards.push(Board::Grid(GridBoard { name: g.name.clone(), width: g.width, height: g.height, cells }));
    }
    let labels: Vec<String> = (0..st.objects.len() as u32).map(|i| p.object_label(st, i)).collect();
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
    if let Some(h) = &p.hex {
        let cells = (0..h.len()).map(|c| HexCell { q: h.q[c], r: h.r[c], wall: h.wall[c] }).collect();
        let mut pieces = Vec::new();
        if let Some(occ) = &p.occupants {
            for (i, o) in st.objects.iter().enumerate() {
                if !o.alive || !p.is_sub(o.class, occ.class) {
                    continue;
                }
                let cell = st.slots.get(o.base as usize + occ.pos as usize).copied().unwrap_or(-1);
                let side = st.slots.get(o.base as usize + occ.side as usize).copied().unwrap_or(0);
                if cell < 0 || cell as usize >= h.len() {
                    continue;
                }
                let side_name = p.players.get(side.max(0) as usize).map_or("?", |s| s.as_str());
                let glyph = side_name.chars().next().unwrap_or('?').to_uppercase().to_string();
                let tooltip = attrs_of(i).iter().map(|(k, v)| format!("{k} {v}")).collect::<Vec<_>>().join(", ");
                pieces.push(Piece { cell: cell as usize, glyph, side: side.max(0) as usize, label: labels[i].clone(), tooltip });
            }
        }
        boards.push(Board::Hex(HexBoard { cells, pieces }));
    }
    let mut legal = Vec::new();
    let status = match p.legal_actions(st, &mut legal) {
        Ok(()) => format!("{:?}", p.status(st, &legal)),
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
        .filter(|(_, o)| o.alive)
        .map(|(i, o)| (labels[i].clone(), p.classes[o.class as usize].name.clone(), attrs_of(i)))
        .collect();
    Scene { title: title.to_string(), boards, panel: Panel { status, to_move, clock, goals, values, objects } }
}

/// The SVG of state `st` of `p` (see [`scene`] and [`svg::svg`]).
pub fn render_svg(p: &Program, st: &State, title: &str) -> String {
    svg::svg(&scene(p, st, title))
}
