//! Connected groups on a tile grid (games/README.md §9.15), the reads `board.group`,
//! `board.groupLead`, `board.groups`, `board.groupDistinct` and the consequence
//! `do board.clearGroup`. A **group** is a 4-connected set of non-empty cells, two orthogonal
//! neighbours `a`, `b` being connected when `|a − b| ≤ tol`; its **leader** is its lowest cell
//! index. Groups are found by flood fill over a thread-local visit stamp per cell, so nothing is
//! allocated per move once a thread has warmed up. The grid's geometry and the other tile
//! built-ins are in `tiles/mod.rs`.

use super::Geo;
use crate::wgdl::diag::Span;
use crate::wgdl::program::*;
use std::cell::RefCell;

thread_local! {
    /// Flood-fill scratch for connected groups.
    static FILL: RefCell<Fill> = const { RefCell::new(Fill { seen: Vec::new(), stamp: 0, cells: Vec::new(), values: Vec::new() }) };
}

/// Flood-fill scratch: a cell has been reached in the current search when its `seen` entry
/// equals `stamp` (a new stamp forgets every cell without clearing), `cells` holds the cells
/// reached (grid-relative indices, also the work queue), `values` the tiles of a group while
/// counting distinct ones.
struct Fill {
    seen: Vec<u32>,
    stamp: u32,
    cells: Vec<u32>,
    values: Vec<i64>,
}

/// Whether a tile `a` and a neighbour `b` are connected under tolerance `tol`: `b` is a tile and
/// `|a − b| ≤ tol` (a negative `tol` connects nothing).
#[inline]
fn joins(a: i64, b: i64, tol: i64) -> bool {
    b != 0 && tol >= 0 && a.abs_diff(b) <= tol as u64
}

impl Fill {
    /// A new search over `n` cells: no cell is reached yet.
    fn begin(&mut self, n: usize) {
        if self.seen.len() < n {
            self.seen.resize(n, 0);
        }
        self.stamp = self.stamp.wrapping_add(1);
        if self.stamp == 0 {
            self.seen.fill(0);
            self.stamp = 1;
        }
        self.cells.clear();
    }

    /// A new search holding the group of cell `c` in `cells` (empty when `c` is empty).
    fn group_of(&mut self, geo: Geo, grid: &[i64], c: usize, tol: i64) {
        self.begin(geo.cells());
        if grid[c] != 0 {
            self.flood(geo, grid, c, tol, 0);
        }
    }

    /// Floods the group of tile `c` (not yet reached in this search), appending its cells to
    /// `cells`; returns the group's size, or `None` as soon as it reaches a cell below index
    /// `lowest` (pass 0 to fill the whole group).
    fn flood(&mut self, geo: Geo, grid: &[i64], c: usize, tol: i64, lowest: usize) -> Option<usize> {
        let start = self.cells.len();
        self.seen[c] = self.stamp;
        self.cells.push(c as u32);
        let mut head = start;
        while head < self.cells.len() {
            let i = self.cells[head] as usize;
            head += 1;
            let (x, y, a) = (i % geo.w, i / geo.w, grid[i]);
            let near =
                [(x > 0).then(|| i - 1), (x + 1 < geo.w).then(|| i + 1), (y > 0).then(|| i - geo.w), (y + 1 < geo.h).then(|| i + geo.w)];
            for j in near.into_iter().flatten() {
                if self.seen[j] != self.stamp && joins(a, grid[j], tol) {
                    if j < lowest {
                        return None;
                    }
                    self.seen[j] = self.stamp;
                    self.cells.push(j as u32);
                }
            }
        }
        Some(self.cells.len() - start)
    }
}

impl Program {
    /// A cell index of grid `g`, or a runtime error naming the valid range.
    fn cell_index(&self, g: u16, c: i64, span: Span) -> Result<usize, RuntimeError> {
        let cells = self.geo(g).cells();
        if c < 0 || c as usize >= cells {
            let grid = self.grids[g as usize].name.clone();
            return Err(rt(RtKind::BadCell { grid, c, last: cells as i64 - 1 }, span));
        }
        Ok(c as usize)
    }

    /// Calls `f` with the grid's cells and the scratch holding the cells of `c`'s group (empty
    /// when `c` is empty).
    fn with_group<R>(
        &self,
        st: &State,
        g: u16,
        c: i64,
        tol: i64,
        span: Span,
        f: impl FnOnce(&[i64], &mut Fill) -> R,
    ) -> Result<R, RuntimeError> {
        let c = self.cell_index(g, c, span)?;
        let geo = self.geo(g);
        let grid = &st.slots[geo.base..geo.base + geo.cells()];
        Ok(FILL.with(|fill| {
            let mut fill = fill.borrow_mut();
            fill.group_of(geo, grid, c, tol);
            f(grid, &mut fill)
        }))
    }

    /// `board.group(c, tol)`: the size of cell `c`'s group (0 if `c` is empty).
    pub(in crate::wgdl) fn tile_group(&self, st: &State, g: u16, c: i64, tol: i64, span: Span) -> Result<i64, RuntimeError> {
        self.with_group(st, g, c, tol, span, |_, fill| fill.cells.len() as i64)
    }

    /// `board.groupDistinct(c, tol)`: how many distinct tile values `c`'s group holds.
    pub(in crate::wgdl) fn tile_group_distinct(&self, st: &State, g: u16, c: i64, tol: i64, span: Span) -> Result<i64, RuntimeError> {
        self.with_group(st, g, c, tol, span, |grid, fill| {
            if fill.cells.len() <= 1 || tol == 0 {
                return fill.cells.len().min(1) as i64;
            }
            let Fill { cells, values, .. } = fill;
            values.clear();
            values.extend(cells.iter().map(|&i| grid[i as usize]));
            values.sort_unstable();
            values.dedup();
            values.len() as i64
        })
    }

    /// `board.groupLead(c, tol, min)`: `c` is a tile, the lowest cell of its group, and the group
    /// has ≥ `min` cells.
    pub(in crate::wgdl) fn tile_group_lead(
        &self,
        st: &State,
        g: u16,
        c: i64,
        tol: i64,
        min: i64,
        span: Span,
    ) -> Result<bool, RuntimeError> {
        let c = self.cell_index(g, c, span)?;
        let geo = self.geo(g);
        let grid = &st.slots[geo.base..geo.base + geo.cells()];
        let (x, y, a) = (c % geo.w, c / geo.w, grid[c]);
        // Not a tile, or joined to its left or lower neighbour: not a leader (no fill needed).
        if a == 0 || (x > 0 && joins(a, grid[c - 1], tol)) || (y > 0 && joins(a, grid[c - geo.w], tol)) {
            return Ok(false);
        }
        Ok(FILL.with(|fill| {
            let mut fill = fill.borrow_mut();
            fill.begin(geo.cells());
            fill.flood(geo, grid, c, tol, c).is_some_and(|n| n as i64 >= min)
        }))
    }

    /// `board.groups(tol, min)`: how many groups have ≥ `min` cells.
    pub(in crate::wgdl) fn tile_groups(&self, st: &State, g: u16, tol: i64, min: i64) -> i64 {
        let geo = self.geo(g);
        let grid = &st.slots[geo.base..geo.base + geo.cells()];
        FILL.with(|fill| {
            let mut fill = fill.borrow_mut();
            fill.begin(geo.cells());
            let mut n = 0;
            for c in 0..geo.cells() {
                if grid[c] != 0 && fill.seen[c] != fill.stamp {
                    fill.cells.clear();
                    let size = fill.flood(geo, grid, c, tol, 0).unwrap_or(0);
                    n += (size as i64 >= min) as i64;
                }
            }
            n
        })
    }

    /// `do board.clearGroup(c, tol)`: empties every cell of `c`'s group (nothing when `c` is
    /// empty: not an error).
    pub(super) fn clear_group(&self, st: &mut State, g: u16, c: i64, tol: i64, span: Span) -> Result<(), RuntimeError> {
        let geo = self.geo(g);
        let c = self.cell_index(g, c, span)?;
        FILL.with(|fill| {
            let mut fill = fill.borrow_mut();
            fill.group_of(geo, &st.slots[geo.base..geo.base + geo.cells()], c, tol);
            for &i in &fill.cells {
                st.slots[geo.base + i as usize] = 0;
            }
        });
        Ok(())
    }
}
