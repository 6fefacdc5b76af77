//! Boards (extension, games/README.md §10): the geometry that board games name instead of
//! computing it — compass directions and named direction sets (turned by a side's `forward`),
//! the step tables behind `forEveryStep` and `forEveryJump` bindings, cell names (`a1`), and a
//! move's notation. Everything here is fixed when the program is compiled; play only indexes it.
//!
//! The built-ins' run time on these (notation, flips, connections, lines) is `play.rs`; this
//! file is plain data below the program, which holds its [`Boards`].
//!
//! A cell is a long, its **cell number** `y * width + x` (as the tile-grid built-ins number
//! cells); y = 0 is the bottom row and x = 0 the left column, so cell 0 is named `a1`.

use crate::wgdl::program::{ActionId, ExprId};

pub(in crate::wgdl) mod play;

/// A program's board lines, resolved (see the module's opening paragraph).
#[derive(Clone, Debug, Default)]
pub struct Boards {
    /// The tables of the `forEveryStep`/`forEveryJump` bindings ([`crate::wgdl::program::BindKind::Step`]).
    pub tables: Vec<StepTable>,
    /// Per action: its `notation` lines, tried in file order (none: the default name).
    pub notations: Vec<Vec<NoteLine>>,
    /// Per grid: its `pieces` characters (value k is the k-th; empty: none declared).
    pub pieces: Vec<Vec<char>>,
    /// The grids with `start` rows and their cells' start values (cell number order).
    pub start: Vec<(u16, Vec<i64>)>,
    /// The declared parameters that size a grid (indices into
    /// [`Program::params`](crate::wgdl::program::Program::params)): changing one compiles the
    /// game again ([`Program::with_parameters`](crate::wgdl::program::Program::with_parameters)).
    pub structural: Vec<usize>,
    /// The options the program was compiled with (to compile it again with other sizes).
    pub options: crate::wgdl::CompileOptions,
    /// The action lists that `canMove(…)` calls name (a call passes its list's index as its grid).
    pub can_move: Vec<Vec<ActionId>>,
    /// The direction sets named in expressions (`board.flips(c, v, all)`), each per side (one
    /// list when it does not turn with the side): a built-in gets a set's index here.
    pub dirsets: Vec<Vec<Vec<(i32, i32)>>>,
    /// The connections `board.joins` reads, kept per state (`run/links.rs`).
    pub links: Vec<crate::wgdl::run::links::Link>,
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

/// The edges of a grid by name, as `board.joins` takes them: north is the top row (y = height
/// − 1), east the right column.
pub const EDGES: [&str; 4] = ["north", "east", "south", "west"];

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
