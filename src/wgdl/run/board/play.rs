//! The board built-ins at run time: a move's notation, a cell's (x, y), a side's direction
//! set, Othello's flips, connections between edges (`board.joins`: read from the state's
//! union–find forests, `run/links.rs`, else searched), and the run functions of the grid
//! built-ins whose rows are in `run/builtins.rs`. What they read of the board's geometry is
//! `mod.rs`.

use super::{NotePart, cell_name};
use crate::wgdl::program::Env;
use crate::wgdl::program::{Action, Ctx, Program, RtKind, RuntimeError, State, rt};

impl Program {
    /// Move `a` as its action's `notation` writes it in state `st` (the state it is played
    /// from): the first line whose condition holds. `None` when the action has no notation (or
    /// no line's condition holds, or one fails to evaluate).
    pub fn notation(&self, st: &State, a: Action) -> Option<String> {
        let lines = self.board.notations.get(a.def as usize)?;
        let ctx = Ctx { this: a.this, bound: a.bound };
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

    /// Brings every link's forest up to date with the state's cells (`run/links.rs`). Called
    /// after each move; allocates nothing.
    pub(in crate::wgdl) fn sync_links(&self, st: &mut State) {
        for l in &self.board.links {
            let base = self.grids[l.grid as usize].base as usize;
            l.sync(&st.slots[base..base + l.n], &mut st.links[l.off..l.off + l.words()]);
        }
    }

    /// `board.joins(v, dirs, a, b)` from the state's forest of grid `g` along `dirs`: `None`
    /// when there is none to read (no such link, v = 0, or a state whose cells are not those
    /// the forest was made from) — the caller searches instead.
    #[inline]
    pub(in crate::wgdl) fn joins_linked(&self, st: &State, g: u16, v: i64, dirs: &[(i32, i32)], a: i64, b: i64) -> Option<bool> {
        let l = self.board.links.iter().find(|l| l.grid == g && l.dirs == dirs)?;
        let base = self.grids[g as usize].base as usize;
        l.joins(&st.slots[base..base + l.n], st.links.get(l.off..l.off + l.words())?, v, a, b)
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
