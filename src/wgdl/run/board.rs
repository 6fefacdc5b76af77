//! Boards (extension, games/README.md §10): the geometry that board games name instead of
//! computing it — compass directions and named direction sets (turned by a side's `forward`),
//! the step tables behind `forEveryStep` and `forEveryJump` bindings, cell names (`a1`), and a
//! move's notation. Everything here is fixed when the program is compiled; play only indexes it.
//!
//! A cell is a long, its **cell number** `y * width + x` (as the tile-grid built-ins number
//! cells); y = 0 is the bottom row and x = 0 the left column, so cell 0 is named `a1`.

use super::program::{ExprId, Program, RtKind, RuntimeError, State, rt};
use crate::wgdl::fast::Env;

/// A program's board lines, resolved (see the module's opening paragraph).
#[derive(Clone, Debug, Default)]
pub struct Boards {
    /// The tables of the `forEveryStep`/`forEveryJump` bindings ([`super::program::BindKind::Step`]).
    pub tables: Vec<StepTable>,
    /// Per action: its `notation` lines, tried in file order (none: the default name).
    pub notations: Vec<Vec<NoteLine>>,
    /// Per grid: its `pieces` characters (value k is the k-th; empty: none declared).
    pub pieces: Vec<Vec<char>>,
    /// The grids with `start` rows and their cells' start values (cell number order).
    pub start: Vec<(u16, Vec<i64>)>,
    /// The declared parameters that size a grid (indices into [`Program::params`]): changing one
    /// compiles the game again ([`Program::with_parameters`]).
    pub structural: Vec<usize>,
    /// The options the program was compiled with (to compile it again with other sizes).
    pub options: crate::wgdl::CompileOptions,
    /// The action lists that `canMove(…)` calls name (a call passes its list's index as its grid).
    pub can_move: Vec<Vec<super::program::ActionId>>,
    /// The direction sets named in expressions (`board.flips(c, v, all)`), each per side (one
    /// list when it does not turn with the side): a built-in gets a set's index here.
    pub dirsets: Vec<Vec<Vec<(i32, i32)>>>,
    /// The connections `board.joins` reads, kept per state (`run/links.rs`).
    pub links: Vec<super::links::Link>,
}

/// The eight compass directions by name, (dx, dy) with north = +y (up the board).
pub const COMPASS: [(&str, i32, i32); 8] = [
    ("north", 0, 1),
    ("northEast", 1, 1),
    ("east", 1, 0),
    ("southEast", 1, -1),
    ("south", 0, -1),
    ("southWest", -1, -1),
    ("west", -1, 0),
    ("northWest", -1, 1),
];

/// The direction sets that do not depend on a side, as (dx, dy) lists in the order their moves
/// are listed.
pub const ABSOLUTE_SETS: [(&str, &[(i32, i32)]); 5] = [
    ("orthogonal", &[(0, 1), (1, 0), (0, -1), (-1, 0)]),
    ("diagonal", &[(1, 1), (1, -1), (-1, -1), (-1, 1)]),
    ("all", &[(0, 1), (1, 1), (1, 0), (1, -1), (0, -1), (-1, -1), (-1, 0), (-1, 1)]),
    ("knight", &[(1, 2), (2, 1), (2, -1), (1, -2), (-1, -2), (-2, -1), (-2, 1), (-1, 2)]),
    // The six neighbours of a cell of a rhombus of hexagons (Hex's board): left and right, the
    // row below and above, and the two cells along the other diagonal.
    ("hex", &[(0, -1), (1, -1), (1, 0), (0, 1), (-1, 1), (-1, 0)]),
];

/// The direction sets relative to a side's `forward` direction F (L is F turned left, R right).
pub const RELATIVE_SETS: [&str; 6] = ["forward", "backward", "forwardDiagonal", "backwardDiagonal", "forwards", "sideways"];

/// Every set name a file may use, for error messages.
pub const SET_NAMES: &str = "orthogonal, diagonal, all, knight, hex, a compass direction (north, northEast, east, …), \
     or, with `forward` lines, forward, backward, forwardDiagonal, backwardDiagonal, forwards, sideways";

/// The directions of a relative set for a side facing `f`.
pub fn relative(name: &str, f: (i32, i32)) -> Option<Vec<(i32, i32)>> {
    let (fx, fy) = f;
    let l = (-fy, fx);
    let r = (fy, -fx);
    let add = |a: (i32, i32), b: (i32, i32)| (a.0 + b.0, a.1 + b.1);
    let back = (-fx, -fy);
    Some(match name {
        "forward" => vec![f],
        "backward" => vec![back],
        "forwardDiagonal" => vec![add(f, l), add(f, r)],
        "backwardDiagonal" => vec![add(back, l), add(back, r)],
        "forwards" => vec![add(f, l), f, add(f, r)],
        "sideways" => vec![l, r],
        _ => return None,
    })
}

/// The directions of an absolute set or a single compass direction.
pub fn absolute(name: &str) -> Option<Vec<(i32, i32)>> {
    if let Some((_, dirs)) = ABSOLUTE_SETS.iter().find(|(n, _)| *n == name) {
        return Some(dirs.to_vec());
    }
    COMPASS.iter().find(|(n, _, _)| *n == name).map(|&(_, dx, dy)| vec![(dx, dy)])
}

/// The moves of one `forEveryStep`/`forEveryJump` binding: for each side, the (from, over, to)
/// cells of every cell and direction whose step (or two steps) stays on the grid, from-cell by
/// from-cell in cell order, directions in the set's order. A move's bound value is its index
/// here, so it names one move in every state.
#[derive(Clone, Debug, Default)]
pub struct StepTable {
    pub grid: u16,
    /// (from, over, to); `over` is `to` for a one-cell step.
    pub moves: Vec<[u32; 3]>,
    /// Per side, the range of `moves` that side's objects bind (all sides share one range when
    /// the set does not turn with the side).
    pub sides: Vec<(u32, u32)>,
    /// Whether the binding jumps (names a cell jumped over).
    pub jump: bool,
    /// Per side, where each from-cell's moves start in `moves` (one entry a cell, and the end
    /// of the range last): the lister visits only the cells whose from test holds.
    pub starts: Vec<Vec<u32>>,
    /// Cells of the grid (`width × height`).
    pub cells: u32,
}

impl StepTable {
    /// The table of a grid `width` × `height`, for each side's directions.
    pub fn build(grid: u16, width: u32, height: u32, per_side: &[Vec<(i32, i32)>], jump: bool) -> StepTable {
        let mut t = StepTable { grid, jump, cells: width * height, ..Default::default() };
        let on = |x: i64, y: i64| x >= 0 && y >= 0 && x < width as i64 && y < height as i64;
        let mut made: Vec<(Vec<(i32, i32)>, (u32, u32), usize)> = Vec::new();
        for dirs in per_side {
            if let Some((_, range, k)) = made.iter().find(|(d, _, _)| d == dirs) {
                t.sides.push(*range);
                t.starts.push(t.starts[*k].clone());
                continue;
            }
            let lo = t.moves.len() as u32;
            let mut starts = Vec::with_capacity((width * height) as usize + 1);
            for c in 0..width * height {
                starts.push(t.moves.len() as u32);
                let (x, y) = ((c % width) as i64, (c / width) as i64);
                for &(dx, dy) in dirs {
                    let k = if jump { 2 } else { 1 };
                    let (tx, ty) = (x + k * dx as i64, y + k * dy as i64);
                    if on(tx, ty) {
                        let to = (ty * width as i64 + tx) as u32;
                        let over = if jump { ((y + dy as i64) * width as i64 + x + dx as i64) as u32 } else { to };
                        t.moves.push([c, over, to]);
                    }
                }
            }
            let range = (lo, t.moves.len() as u32);
            starts.push(range.1);
            made.push((dirs.clone(), range, t.starts.len()));
            t.starts.push(starts);
            t.sides.push(range);
        }
        t
    }

    /// The range of moves an owner of `side` binds (side 0's for a side out of range).
    pub fn range(&self, side: i64) -> (u32, u32) {
        self.sides.get(usize::try_from(side).unwrap_or(0)).or(self.sides.first()).copied().unwrap_or((0, 0))
    }

    /// Where each cell's moves start for an owner of `side` (as [`StepTable::range`] picks the side).
    pub fn starts_of(&self, side: i64) -> &[u32] {
        self.starts.get(usize::try_from(side).unwrap_or(0)).or(self.starts.first()).map_or(&[][..], |s| s.as_slice())
    }
}

/// The name of cell `c` of a grid `width` wide: column letters (a, b, …, z, aa, ab, …) then the
/// row number from 1: cell 0 is `a1`.
pub fn cell_name(c: i64, width: u32) -> String {
    if c < 0 || width == 0 {
        return format!("?{c}");
    }
    let (x, y) = (c as u64 % width as u64, c as u64 / width as u64);
    let mut col = Vec::new();
    let mut n = x + 1;
    while n > 0 {
        n -= 1;
        col.push(b'a' + (n % 26) as u8);
        n /= 26;
    }
    col.reverse();
    format!("{}{}", String::from_utf8(col).unwrap_or_default(), y + 1)
}

/// One `notation` line of an action, resolved: its parts and its condition.
#[derive(Clone, Debug)]
pub struct NoteLine {
    pub parts: Vec<NotePart>,
    pub cond: Option<ExprId>,
}

/// One part of a move's notation.
#[derive(Clone, Debug, PartialEq)]
pub enum NotePart {
    Text(String),
    /// The bound number in decimal.
    Number,
    /// The bound number as a cell of a grid `width` wide.
    Cell(u32),
    /// Part `k` (0 from, 1 over, 2 to) of a step table's move, as a cell of a grid `width` wide.
    Step {
        table: u16,
        k: u8,
        width: u32,
    },
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells_are_named_by_column_letter_and_row_number() {
        assert_eq!(cell_name(0, 8), "a1");
        assert_eq!(cell_name(7, 8), "h1");
        assert_eq!(cell_name(8, 8), "a2");
        assert_eq!(cell_name(63, 8), "h8");
        assert_eq!(cell_name(26, 30), "aa1");
        assert_eq!(cell_name(-1, 8), "?-1");
    }

    #[test]
    fn relative_sets_turn_with_the_side() {
        // Facing south (down the board), forward diagonals go south-west and south-east.
        let mut d = relative("forwardDiagonal", (0, -1)).unwrap();
        d.sort();
        assert_eq!(d, vec![(-1, -1), (1, -1)]);
        assert_eq!(relative("forwards", (0, 1)).unwrap(), vec![(-1, 1), (0, 1), (1, 1)]);
        assert!(relative("sideways", (1, 0)).unwrap().contains(&(0, 1)));
    }

    #[test]
    fn step_tables_keep_moves_on_the_board_per_side() {
        // 3 × 3, side 0 faces north, side 1 south: one step forward each.
        let t = StepTable::build(0, 3, 3, &[vec![(0, 1)], vec![(0, -1)]], false);
        let (lo, hi) = t.range(0);
        assert_eq!(hi - lo, 6, "the top row cannot step north");
        assert!(t.moves[lo as usize..hi as usize].iter().all(|m| m[2] == m[0] + 3));
        let (lo, hi) = t.range(1);
        assert!(t.moves[lo as usize..hi as usize].iter().all(|m| m[2] + 3 == m[0]));
        // A jump over the centre from each corner along the diagonals: 4 moves.
        let j = StepTable::build(0, 3, 3, &[absolute("diagonal").unwrap()], true);
        assert_eq!(j.moves.len(), 4);
        assert!(j.moves.iter().all(|m| m[1] == 4));
        // Sides with the same directions share one range.
        let s = StepTable::build(0, 3, 3, &[vec![(1, 0)], vec![(1, 0)]], false);
        assert_eq!(s.range(0), s.range(1));
    }
}

impl super::program::Program {
    /// Move `a` as its action's `notation` writes it in state `st` (the state it is played
    /// from): the first line whose condition holds. `None` when the action has no notation (or
    /// no line's condition holds, or one fails to evaluate).
    pub fn notation(&self, st: &super::program::State, a: super::program::Action) -> Option<String> {
        let lines = self.board.notations.get(a.def as usize)?;
        let ctx = super::program::Ctx { this: a.this, bound: a.bound };
        let line = lines.iter().find(|l| l.cond.is_none_or(|c| self.eval(st, c, ctx).is_ok_and(|v| v != 0)))?;
        let mut s = String::new();
        for part in &line.parts {
            match part {
                NotePart::Text(t) => s.push_str(t),
                NotePart::Number => s.push_str(&a.bound.to_string()),
                NotePart::Cell(w) => s.push_str(&cell_name(a.bound as i64, *w)),
                NotePart::Step { table, k, width } => {
                    let cell = self.board.tables.get(*table as usize)?.moves.get(a.bound as usize)?[*k as usize];
                    s.push_str(&cell_name(cell as i64, *width));
                }
            }
        }
        Some(s)
    }
}

/// The edges of a grid by name, as `board.joins` takes them: north is the top row (y = height
/// − 1), east the right column.
pub const EDGES: [&str; 4] = ["north", "east", "south", "west"];

impl Program {
    /// Cell number `c` of grid `g` as (x, y), or the error naming the grid, the number and the
    /// valid range.
    #[inline]
    pub(in crate::wgdl) fn cell_xy(&self, g: u16, c: i64, at: usize) -> Result<(i64, i64), RuntimeError> {
        let gi = &self.grids[g as usize];
        let n = gi.width as i64 * gi.height as i64;
        if c < 0 || c >= n {
            return Err(rt(RtKind::BadCell { grid: gi.name.clone(), c, last: n - 1 }, self.spans[at]));
        }
        Ok((c % gi.width as i64, c / gi.width as i64))
    }

    /// The directions of set `set` for the object `this` (its side's, for a set that turns).
    #[inline]
    pub(in crate::wgdl) fn dirs_of(&self, st: &State, set: i64, this: u32) -> &[(i32, i32)] {
        let Some(per_side) = self.board.dirsets.get(set as usize) else { return &[] };
        if per_side.len() == 1 {
            return &per_side[0];
        }
        let side = self.side_of(st, this) as usize;
        per_side.get(side).map_or(&[][..], |d| d.as_slice())
    }

    /// How many cells placing value `v` on cell (x, y) of grid `g` would flip along `dirs`: per
    /// direction, the run of cells that are neither empty nor `v`, counted when a cell holding
    /// `v` closes it (Othello's bracketing; nothing beyond the edge closes a run).
    pub(in crate::wgdl) fn flips_at(&self, st: &State, g: u16, x: i64, y: i64, v: i64, dirs: &[(i32, i32)]) -> i64 {
        dirs.iter().map(|&d| self.bracketed(st, g, x, y, v, d)).sum()
    }

    /// Sets to `v` every cell that [`Program::flips_at`] counts.
    pub(in crate::wgdl) fn flip_at(&self, st: &mut State, g: u16, x: i64, y: i64, v: i64, dirs: &[(i32, i32)]) {
        let gi = &self.grids[g as usize];
        let (w, base) = (gi.width as i64, gi.base as usize);
        for &(dx, dy) in dirs {
            for k in 1..=self.bracketed(st, g, x, y, v, (dx, dy)) {
                st.slots[base + ((y + k * dy as i64) * w + x + k * dx as i64) as usize] = v;
            }
        }
    }

    /// The run of cells neither empty nor `v` next to (x, y) along (dx, dy), when a cell holding
    /// `v` closes it; else 0.
    fn bracketed(&self, st: &State, g: u16, x: i64, y: i64, v: i64, (dx, dy): (i32, i32)) -> i64 {
        let gi = &self.grids[g as usize];
        let (w, h, base) = (gi.width as i64, gi.height as i64, gi.base as usize);
        let (dx, dy) = (dx as i64, dy as i64);
        let (mut cx, mut cy, mut run) = (x + dx, y + dy, 0);
        while cx >= 0 && cy >= 0 && cx < w && cy < h {
            match st.slots[base + (cy * w + cx) as usize] {
                c if c == v => return run,
                0 => return 0,
                _ => run += 1,
            }
            cx += dx;
            cy += dy;
        }
        0
    }

    /// Whether the cells holding `v` join edge `a` to edge `b` of grid `g`, stepping along
    /// `dirs`: read from the state's union–find forest when it has one (`run/links.rs`), else
    /// searched.
    pub(in crate::wgdl) fn joins(&self, st: &State, g: u16, v: i64, dirs: &[(i32, i32)], a: i64, b: i64) -> bool {
        match self.joins_linked(st, g, v, dirs, a, b) {
            Some(j) => j,
            None => self.joins_searched(st, g, v, dirs, a, b),
        }
    }

    /// [`Program::joins`] by a search from edge `a` (a flood fill over the cells of `v`).
    pub(in crate::wgdl) fn joins_searched(&self, st: &State, g: u16, v: i64, dirs: &[(i32, i32)], a: i64, b: i64) -> bool {
        let gi = &self.grids[g as usize];
        let (w, h, base) = (gi.width as i64, gi.height as i64, gi.base as usize);
        let cells = &st.slots[base..base + (w * h) as usize];
        let on_edge = |e: i64, x: i64, y: i64| match e {
            0 => y == h - 1,
            1 => x == w - 1,
            2 => y == 0,
            _ => x == 0,
        };
        JOIN_SCRATCH.with(|s| {
            let mut s = s.borrow_mut();
            let (seen, todo) = &mut *s;
            seen.clear();
            seen.resize((w * h) as usize, false);
            todo.clear();
            for c in 0..w * h {
                let (x, y) = (c % w, c / w);
                if cells[c as usize] == v && on_edge(a, x, y) {
                    seen[c as usize] = true;
                    todo.push(c as u32);
                }
            }
            while let Some(c) = todo.pop() {
                let (x, y) = (c as i64 % w, c as i64 / w);
                if on_edge(b, x, y) {
                    return true;
                }
                for &(dx, dy) in dirs {
                    let (nx, ny) = (x + dx as i64, y + dy as i64);
                    if nx >= 0 && ny >= 0 && nx < w && ny < h {
                        let n = (ny * w + nx) as usize;
                        if !seen[n] && cells[n] == v {
                            seen[n] = true;
                            todo.push(n as u32);
                        }
                    }
                }
            }
            false
        })
    }
}

thread_local! {
    /// Scratch space of [`Program::joins`]: reused, so a warm search allocates nothing.
    static JOIN_SCRATCH: std::cell::RefCell<(Vec<bool>, Vec<u32>)> = const { std::cell::RefCell::new((Vec::new(), Vec::new())) };
}

// The run functions of the board built-ins (their rows are in `run/builtins.rs`).

/// `board.x(c)`: the column of cell c.
pub(in crate::wgdl) fn grid_x(e: &Env, g: u16, a: &[i64], at: usize) -> Result<i64, RuntimeError> {
    Ok(e.p.cell_xy(g, a[0], at)?.0)
}

/// `board.y(c)`: the row of cell c (0 at the bottom).
pub(in crate::wgdl) fn grid_y(e: &Env, g: u16, a: &[i64], at: usize) -> Result<i64, RuntimeError> {
    Ok(e.p.cell_xy(g, a[0], at)?.1)
}

/// `board.cell(x, y)`: the number of cell (x, y), or −1 when it is off the grid.
pub(in crate::wgdl) fn grid_cell_number(e: &Env, g: u16, a: &[i64], _: usize) -> Result<i64, RuntimeError> {
    let gi = &e.p.grids[g as usize];
    let (x, y) = (a[0], a[1]);
    Ok(if x < 0 || y < 0 || x >= gi.width as i64 || y >= gi.height as i64 { -1 } else { y * gi.width as i64 + x })
}

/// `board.count(v)`: how many cells hold v.
pub(in crate::wgdl) fn grid_count(e: &Env, g: u16, a: &[i64], _: usize) -> Result<i64, RuntimeError> {
    let gi = &e.p.grids[g as usize];
    let base = gi.base as usize;
    let cells = &e.st.slots[base..base + (gi.width * gi.height) as usize];
    Ok(cells.iter().filter(|&&c| c == a[0]).count() as i64)
}

/// `board.flips(c, v, dirs)`: how many cells placing v on cell c would flip.
pub(in crate::wgdl) fn grid_flips(e: &Env, g: u16, a: &[i64], at: usize) -> Result<i64, RuntimeError> {
    let (x, y) = e.p.cell_xy(g, a[0], at)?;
    Ok(e.p.flips_at(e.st, g, x, y, a[1], e.p.dirs_of(e.st, a[2], e.this)))
}

/// `canMove(a, b, …)`: whether one of the actions (list `k` of [`Boards::can_move`]) has a move
/// for `this` whose conditions hold now.
pub(in crate::wgdl) fn can_move(e: &Env, k: u16, _: &[i64], _: usize) -> Result<i64, RuntimeError> {
    let list = e.p.board.can_move.get(k as usize).map_or(&[][..], |l| l.as_slice());
    Ok(e.p.has_move(e.st, list, e.this)? as i64)
}

/// `board.longest(c, dirs)`: the longest line of cells equal to cell c through it, along a
/// direction of the set and its opposite (Connect Four's and Gomoku's rows); 0 for an empty c.
pub(in crate::wgdl) fn grid_longest(e: &Env, g: u16, a: &[i64], at: usize) -> Result<i64, RuntimeError> {
    let (x, y) = e.p.cell_xy(g, a[0], at)?;
    let gi = &e.p.grids[g as usize];
    let (w, h, base) = (gi.width as i64, gi.height as i64, gi.base as usize);
    let cells = &e.st.slots[base..base + (w * h) as usize];
    let v = cells[(y * w + x) as usize];
    if v == 0 {
        return Ok(0);
    }
    let run = |dx: i64, dy: i64| {
        let (mut cx, mut cy, mut n) = (x + dx, y + dy, 0);
        while cx >= 0 && cy >= 0 && cx < w && cy < h && cells[(cy * w + cx) as usize] == v {
            n += 1;
            cx += dx;
            cy += dy;
        }
        n
    };
    let mut best = 1;
    for &(dx, dy) in e.p.dirs_of(e.st, a[1], e.this) {
        best = best.max(1 + run(dx as i64, dy as i64) + run(-dx as i64, -dy as i64));
    }
    Ok(best)
}

/// `board.joins(v, dirs, edgeA, edgeB)`: whether the cells of v join the two edges.
pub(in crate::wgdl) fn grid_joins(e: &Env, g: u16, a: &[i64], _: usize) -> Result<i64, RuntimeError> {
    Ok(e.p.joins(e.st, g, a[0], e.p.dirs_of(e.st, a[1], e.this), a[2], a[3]) as i64)
}
