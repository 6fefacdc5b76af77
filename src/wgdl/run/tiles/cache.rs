//! Tile results cached by the board's contents, per thread (the module doc of `tiles/`): the
//! runs of the last board asked about and its swaps that make a run, each valid for one grid,
//! `min` and the cells it was made from.

use std::cell::RefCell;

thread_local! {
    /// Tile results by board contents (see the module doc).
    pub(super) static CACHE: RefCell<TileCache> = const { RefCell::new(TileCache::new()) };
}

/// One cached result: for which grid, min and cells it holds.
pub(super) struct Cached<T> {
    pub(super) valid: bool,
    pub(super) grid: u16,
    pub(super) min: usize,
    pub(super) cells: Vec<i64>,
    pub(super) value: T,
}

impl<T> Cached<T> {
    const fn new(value: T) -> Cached<T> {
        Cached { valid: false, grid: 0, min: 0, cells: Vec::new(), value }
    }

    /// Whether this holds the result for `grid`, `min` and these cells.
    #[inline]
    pub(super) fn hit(&self, grid: u16, min: usize, cells: &[i64]) -> bool {
        self.valid && self.grid == grid && self.min == min && self.cells == cells
    }

    /// Marks the result as being for `grid`, `min` and these cells (the value set by the caller).
    pub(super) fn store(&mut self, grid: u16, min: usize, cells: &[i64]) {
        self.valid = true;
        self.grid = grid;
        self.min = min;
        self.cells.clear();
        self.cells.extend_from_slice(cells);
    }
}

/// The per-thread cache: the runs (first cell, stride, length) and the swap set (a bit per swap
/// number) of the last board asked about.
pub(super) struct TileCache {
    pub(super) runs: Cached<Vec<(u32, u32, u32)>>,
    pub(super) swaps: Cached<SwapSet>,
}

impl TileCache {
    const fn new() -> TileCache {
        TileCache { runs: Cached::new(Vec::new()), swaps: Cached::new(SwapSet { bits: Vec::new(), done: 0, lens: Vec::new() }) }
    }
}

/// The swaps that make a run, as far as they have been tested: swap numbers below `done`
/// (`hasSwap` stops at the first; move generation needs them all).
pub(super) struct SwapSet {
    pub(super) bits: Vec<u64>,
    pub(super) done: usize,
    /// Per cell, how many equal cells in a row end at it, counting it: from the left, from the
    /// right, from below, from above (made when the first swap is tested).
    pub(super) lens: Vec<[u16; 4]>,
}
