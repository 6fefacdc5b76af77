//! Tile-grid built-ins and seeded chance (extension, games/README.md §9.12–9.13): the run time of
//! falling-tile games on a `grid`. Cells hold longs; **0 is an empty cell**, any other value a
//! tile. y = 0 is the bottom row. Nothing here knows a game: runs, swaps, gravity and refills are
//! geometry, and what a run is worth is written in WGDL (`board.sumRuns(3, k, …)`).
//!
//! * A **run** is a maximal horizontal or vertical segment of at least `min` equal non-empty
//!   cells; an L or a T is two runs sharing a cell. Runs are visited rows first (bottom to top,
//!   each left to right), then columns (left to right, each bottom to top).
//! * A **swap number** `s` names the swap of cell `s / 2` (index `y * width + x`) with its right
//!   neighbour (`s` even) or its upper neighbour (`s` odd); numbers run from 0 to
//!   `2 * width * height − 1`, and those whose neighbour is off the grid swap nothing.
//! * **Chance**: a state's stream is one 64-bit word (`State::rng`, the game's seed at the
//!   start). A draw of `n` values gives `mix(rng) mod n` and adds 1 to the word (`mix` =
//!   SplitMix64's finalizer, [`crate::rng::mix`]). Refills and deals draw from it, so a game is a
//!   pure function of its seed and moves; a deal given a seed k ≠ 0 draws from a word of its own,
//!   `mix(mix(k))`. One tile is one draw: of `n`, or of the total of the tile values' weights
//!   (`Palette`; equal weights draw as none, so adding them changes no game).
//! * Connected **groups** (§9.15) are in `groups.rs`.
//!
//! The room's files: this one holds the grid's geometry ([`Geo`]) and the `do` operations
//! (`tile_do`: flips, swaps, clearing runs and groups, gravity, refills, deals); `cache.rs` the
//! per-thread results by board contents, `runs.rs` the runs, `swaps.rs` the swaps that make a
//! run, `groups.rs` connected groups, `draws.rs` the state's stream and the tile palette.
//!
//! Scratch space is thread-local: nothing is allocated per move once a thread has warmed up.
//!
//! **Results are cached by the board's contents** (per thread): the runs of a grid (read by
//! `runs`, `sumRuns`, `clearRuns`) and the set of swaps that make a run (read by `swaps`,
//! `hasSwap`, `canSwap` and legal-move generation's swap filter) are computed once per board and
//! min, and reused while the cells are the same — which is the whole rule pass after a move
//! (`runs` decides, `sumRuns` scores, `clearRuns` clears the same runs) and the move generation
//! after it (the deadlock test has listed every swap). A lookup compares the cells (a few dozen
//! words) instead of rescanning every line and every swap.
//!
//! **Swap sets by bitboards**: on a board of at most 64 cells holding at most 16 distinct tiles
//! (and `min` ≤ 8), the swap set is made at once from one 64-bit board per tile (shifted masks:
//! the cells whose j nearest cells on a side hold the tile); other boards test swap by swap in
//! O(1) each from per-cell run lengths. Both are held to the definition by tests.

use crate::wgdl::diag::Span;
use crate::wgdl::program::*;
use draws::Palette;
use std::cell::RefCell;

mod cache;
mod draws;
mod groups;
mod runs;
mod swaps;

/// Redraws allowed for one cell of a deal before it counts as impossible.
const DEAL_TRIES: u32 = 10_000;

thread_local! {
    /// Cells to clear, one flag per cell of the grid being cleared.
    static MARKS: RefCell<Vec<bool>> = const { RefCell::new(Vec::new()) };
}

/// A grid's geometry: first slot, width, height.
#[derive(Clone, Copy)]
pub(super) struct Geo {
    pub(super) base: usize,
    pub(super) w: usize,
    pub(super) h: usize,
}

impl Geo {
    pub(super) fn cells(self) -> usize {
        self.w * self.h
    }
    /// The two cells of swap number `s`, or `None` when the neighbour is off the grid.
    pub(super) fn swap_cells(self, s: usize) -> Option<(usize, usize)> {
        let (i, up) = (s / 2, s % 2 == 1);
        let (x, y) = (i % self.w, i / self.w);
        if up { (y + 1 < self.h).then_some((i, i + self.w)) } else { (x + 1 < self.w).then_some((i, i + 1)) }
    }
}

impl Program {
    pub(super) fn geo(&self, g: u16) -> Geo {
        let gi = &self.grids[g as usize];
        Geo { base: gi.base as usize, w: gi.width as usize, h: gi.height as usize }
    }

    /// Runs a `do <grid>.<op>(…)` consequence with its evaluated arguments (`this`: the object
    /// the move or rule runs for, whose side turns a side's direction set).
    pub(in crate::wgdl) fn tile_do(
        &self,
        st: &mut State,
        g: u16,
        op: TileOp,
        args: &[i64],
        span: Span,
        this: u32,
    ) -> Result<(), RuntimeError> {
        let geo = self.geo(g);
        match op {
            TileOp::Flip => {
                let n = geo.cells() as i64;
                if args[0] < 0 || args[0] >= n {
                    return Err(rt(RtKind::BadCell { grid: self.grids[g as usize].name.clone(), c: args[0], last: n - 1 }, span));
                }
                let (x, y) = (args[0] % geo.w as i64, args[0] / geo.w as i64);
                // The directions are the program's (borrowed from it), the cells the state's.
                let dirs = self.dirs_of(st, args[2], this);
                self.flip_at(st, g, x, y, args[1], dirs);
            }
            TileOp::Swap => {
                let s = self.swap_number(g, args[0], span)?;
                let Some((a, b)) = geo.swap_cells(s) else {
                    let grid = self.grids[g as usize].name.clone();
                    return Err(rt(RtKind::SwapOffGrid { grid, s: s as i64 }, span));
                };
                st.slots.swap(geo.base + a, geo.base + b);
            }
            TileOp::ClearRuns => {
                let min = args[0].max(1) as usize;
                MARKS.with(|m| -> Result<(), RuntimeError> {
                    let mut marks = m.borrow_mut();
                    marks.clear();
                    marks.resize(geo.cells(), false);
                    self.each_run(st, g, min, |first, stride, len| {
                        for k in 0..len {
                            marks[first + k * stride] = true;
                        }
                        Ok(())
                    })?;
                    for (i, &hit) in marks.iter().enumerate() {
                        if hit {
                            st.slots[geo.base + i] = 0;
                        }
                    }
                    Ok(())
                })?;
            }
            TileOp::ClearGroup => self.clear_group(st, g, args[0], args[1], span)?,
            TileOp::Fall => {
                for x in 0..geo.w {
                    let mut to = 0;
                    for y in 0..geo.h {
                        let v = st.slots[geo.base + y * geo.w + x];
                        if v != 0 {
                            st.slots[geo.base + to * geo.w + x] = v;
                            to += 1;
                        }
                    }
                    for y in to..geo.h {
                        st.slots[geo.base + y * geo.w + x] = 0;
                    }
                }
            }
            TileOp::Refill => {
                let palette = Palette::new(self.tile_count(args[0], span)?, &args[1..]);
                for x in 0..geo.w {
                    for y in 0..geo.h {
                        let i = geo.base + y * geo.w + x;
                        if st.slots[i] == 0 {
                            st.slots[i] = palette.draw(st);
                        }
                    }
                }
            }
            TileOp::Deal => {
                let palette = Palette::new(self.tile_count(args[0], span)?, args.get(3..).unwrap_or(&[]));
                // A seed k ≠ 0: a stream of the deal's own, from k alone; the game's is left alone.
                let (seed, game) = (args.get(2).copied().unwrap_or(0), st.rng);
                if seed != 0 {
                    st.rng = crate::rng::mix(crate::rng::mix(seed as u64));
                }
                let dealt = self.deal(st, g, &palette, args[1].max(1) as usize, span);
                if seed != 0 {
                    st.rng = game;
                }
                dealt?;
            }
        }
        Ok(())
    }

    /// Deals every cell of grid `g`, in index order, from the state's stream: a value of the
    /// palette, redrawn while it would complete a run of `min` with the cells to its left or below.
    fn deal(&self, st: &mut State, g: u16, palette: &Palette, min: usize, span: Span) -> Result<(), RuntimeError> {
        let geo = self.geo(g);
        for i in 0..geo.cells() {
            let (x, y) = (i % geo.w, i / geo.w);
            let mut tries = 0;
            loop {
                let c = palette.draw(st);
                let cells = &st.slots[geo.base..];
                // Would c complete a run of `min` with the cells to its left or below?
                let across = min >= 2 && x + 1 >= min && (1..min).all(|k| cells[i - k] == c);
                let down = min >= 2 && y + 1 >= min && (1..min).all(|k| cells[i - k * geo.w] == c);
                if !(across || down) {
                    st.slots[geo.base + i] = c;
                    break;
                }
                tries += 1;
                if tries >= DEAL_TRIES {
                    let grid = self.grids[g as usize].name.clone();
                    return Err(rt(RtKind::NoDeal { grid, colours: palette.values, min: min as i64 }, span));
                }
            }
        }
        Ok(())
    }

    fn tile_count(&self, n: i64, span: Span) -> Result<u64, RuntimeError> {
        if n < 1 {
            return Err(rt(RtKind::BadTileCount { n }, span));
        }
        Ok(n as u64)
    }
}
