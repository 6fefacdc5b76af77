//! Swaps on a tile grid: swap number `s` exchanges cell `s / 2` with its right (`s` even) or
//! upper (`s` odd) neighbour (the module doc of `tiles/`). Which swaps make a run is found once
//! per board and min (`cache.rs`): all at once by bitboards on small boards with few tiles,
//! else swap by swap from per-cell run lengths; `board.swaps`, `hasSwap`, `canSwap` and
//! legal-move generation's swap filter read it. Tests hold both ways to the definition.

use super::Geo;
use super::cache::{CACHE, SwapSet};
use crate::wgdl::diag::Span;
use crate::wgdl::program::*;

/// Most distinct tiles a board may hold for the bitboard swap set (more: swap by swap).
const BITBOARD_TILES: usize = 16;

/// Longest run (`min`) the bitboard swap set handles (longer: swap by swap).
const BITBOARD_REACH: usize = 8;

impl Program {
    /// Calls `f` with the set of swaps of grid `g` that make a run of ≥ `min` (a bit per swap
    /// number), from the cache when the board is the one last asked about. `f` gets a copy (it
    /// may ask the cache itself).
    pub(in crate::wgdl) fn with_swap_set<R>(&self, st: &State, g: u16, min: i64, f: impl FnOnce(&[u64]) -> R) -> R {
        // Boards of up to 256 cells are copied onto the stack.
        const WORDS: usize = 8;
        let geo = self.geo(g);
        let words = (2 * geo.cells()).div_ceil(64);
        let mut small = [0u64; WORDS];
        let mut large = Vec::new();
        self.with_swaps(st, g, min, usize::MAX, |set| {
            if words <= WORDS {
                small[..words].copy_from_slice(&set.bits);
            } else {
                large.clone_from(&set.bits);
            }
        });
        f(if words <= WORDS { &small[..words] } else { &large })
    }

    /// Runs `f` on the cached swap set of the board, tested up to the first swap that makes a
    /// run when `stop_after` is 1, or completely (`usize::MAX`).
    fn with_swaps<R>(&self, st: &State, g: u16, min: i64, stop_after: usize, f: impl FnOnce(&SwapSet) -> R) -> R {
        let geo = self.geo(g);
        let min = min.max(1) as usize;
        let cells = &st.slots[geo.base..geo.base + geo.cells()];
        CACHE.with(|c| {
            let mut c = c.borrow_mut();
            let sw = &mut c.swaps;
            if !sw.hit(g, min, cells) {
                sw.value.bits.clear();
                sw.value.bits.resize((2 * geo.cells()).div_ceil(64), 0);
                sw.value.done = 0;
                sw.store(g, min, cells);
            }
            // Boards of up to 64 cells with few distinct tiles: every swap at once, by bitboards.
            if sw.value.done == 0 && Self::swap_set_bitboard(geo, cells, min, &mut sw.value.bits) {
                sw.value.done = 2 * geo.cells();
            }
            // One found already is enough to stop at the first.
            if !(stop_after == 1 && sw.value.bits.iter().any(|&b| b != 0)) {
                Self::swap_set(geo, cells, min, &mut sw.value, stop_after);
            }
            f(&sw.value)
        })
    }

    /// Whether `s` is a swap number of grid `g`.
    pub(in crate::wgdl) fn swap_in_range(&self, g: u16, s: i64) -> bool {
        s >= 0 && (s as usize) < 2 * self.geo(g).cells()
    }

    pub(super) fn swap_number(&self, g: u16, s: i64, op_span: Span) -> Result<usize, RuntimeError> {
        if !self.swap_in_range(g, s) {
            let grid = self.grids[g as usize].name.clone();
            return Err(rt(RtKind::BadSwap { grid, s, last: 2 * self.geo(g).cells() as i64 - 1 }, op_span));
        }
        Ok(s as usize)
    }

    /// `board.canSwap(s, min)`: swap `s` exists and, made, puts one of its two cells in a run of
    /// ≥ `min`.
    pub(in crate::wgdl) fn tile_can_swap(&self, st: &State, g: u16, s: i64, min: i64, op_span: Span) -> Result<bool, RuntimeError> {
        let s = self.swap_number(g, s, op_span)?;
        Ok(self.tile_swap_ok(st, g, s, min))
    }

    /// Tests the swaps from `set.done` on (cells visited by (x, y): no division per swap),
    /// setting the bit of each that makes a run of ≥ `min`, until `stop_after` more have been
    /// found or all are tested.
    fn swap_set(geo: Geo, cells: &[i64], min: usize, set: &mut SwapSet, stop_after: usize) {
        let (w, h, n) = (geo.w, geo.h, 2 * geo.cells());
        if set.done >= n || stop_after == 0 {
            return;
        }
        if set.done == 0 {
            Self::run_lengths(geo, cells, &mut set.lens);
        }
        let lens = &set.lens;
        const L: usize = 0;
        const R: usize = 1;
        const D: usize = 2;
        const U: usize = 3;
        // Tile v put at cell i = (x, y): the equal cells in a row beside it, on every side but
        // the partner's (whose cell now holds the other tile), from the lengths of the unchanged
        // neighbours' own rows.
        #[inline(always)]
        fn run_at(
            cells: &[i64],
            lens: &[[u16; 4]],
            (w, h, min): (usize, usize, usize),
            i: usize,
            (x, y): (usize, usize),
            v: i64,
            partner: usize,
        ) -> bool {
            if v == 0 {
                return false;
            }
            let side = |dir: usize, ok: bool, j: usize| if dir != partner && ok && cells[j] == v { lens[j][dir] as usize } else { 0 };
            let across = 1 + side(L, x > 0, i.wrapping_sub(1)) + side(R, x + 1 < w, i + 1);
            across >= min || 1 + side(D, y > 0, i.wrapping_sub(w)) + side(U, y + 1 < h, i + w) >= min
        }
        let dims = (w, h, min);
        let run_at = |i: usize, x: usize, y: usize, v: i64, partner: usize| run_at(cells, lens, dims, i, (x, y), v, partner);
        // A run through cell i of the board as it is.
        let run_here =
            |i: usize| cells[i] != 0 && ((lens[i][L] + lens[i][R] - 1) as usize >= min || (lens[i][D] + lens[i][U] - 1) as usize >= min);
        let mut found = 0;
        let first = set.done / 2;
        let (mut x, mut y) = (first % w, first / w);
        let mut a = first;
        while a < geo.cells() {
            let ca = cells[a];
            for up in [false, true] {
                let s = 2 * a + up as usize;
                if s < set.done {
                    continue;
                }
                let b = if up { (y + 1 < h).then_some(a + w) } else { (x + 1 < w).then_some(a + 1) };
                let run = b.is_some_and(|b| {
                    let cb = cells[b];
                    if ca == cb {
                        run_here(a) || run_here(b)
                    } else if up {
                        run_at(a, x, y, cb, U) || run_at(b, x, y + 1, ca, D)
                    } else {
                        run_at(a, x, y, cb, R) || run_at(b, x + 1, y, ca, L)
                    }
                });
                set.done = s + 1;
                if run {
                    set.bits[s / 64] |= 1 << (s % 64);
                    found += 1;
                    if found == stop_after {
                        return;
                    }
                }
            }
            a += 1;
            x += 1;
            if x == w {
                x = 0;
                y += 1;
            }
        }
    }

    /// The whole swap set of a board of at most 64 cells holding at most [`BITBOARD_TILES`]
    /// distinct tiles, for `min` up to [`BITBOARD_REACH`], computed with one bitboard per tile
    /// (bit `y * w + x`); `false` (and `bits` untouched) for other boards, which
    /// [`Program::swap_set`] tests swap by swap. The
    /// same set as `swap_set` by construction and by test: a tile `v` put at a cell makes a run
    /// when the `min − 1` cells on one side, or `j` on one side and `min − 1 − j` on the other,
    /// hold `v` — except on the partner's side, whose cell then holds the other tile; a swap of
    /// two equal tiles changes nothing and counts when a run already passes through one of them.
    fn swap_set_bitboard(geo: Geo, cells: &[i64], min: usize, bits: &mut [u64]) -> bool {
        let (w, h, n) = (geo.w, geo.h, geo.cells());
        if n > 64 || n == 0 {
            return false;
        }
        // The distinct tiles and their bitboards; `zero` holds the empty cells.
        let mut tiles = [0i64; BITBOARD_TILES];
        let mut boards = [0u64; BITBOARD_TILES];
        let mut k = 0;
        let mut zero = 0u64;
        for (i, &v) in cells.iter().enumerate() {
            if v == 0 {
                zero |= 1 << i;
                continue;
            }
            match tiles[..k].iter().position(|&t| t == v) {
                Some(t) => boards[t] |= 1 << i,
                None if k < BITBOARD_TILES => {
                    tiles[k] = v;
                    boards[k] = 1 << i;
                    k += 1;
                }
                None => return false,
            }
        }
        let m = min.max(1) - 1;
        if m >= w.max(h) {
            // No line is long enough for a run.
            bits.fill(0);
            return true;
        }
        if m >= BITBOARD_REACH {
            return false;
        }
        let shl = |x: u64, s: usize| x.checked_shl(s as u32).unwrap_or(0);
        let shr = |x: u64, s: usize| x.checked_shr(s as u32).unwrap_or(0);
        let all = if n == 64 { u64::MAX } else { (1u64 << n) - 1 };
        let (mut first_col, mut last_col) = (0u64, 0u64);
        for y in 0..h {
            first_col |= 1 << (y * w);
            last_col |= 1 << (y * w + w - 1);
        }
        let (not_first, not_last) = (all & !first_col, all & !last_col);
        // Per tile: `lines[d][j]` = cells whose j nearest cells in direction d (left, right,
        // below, above) all hold the tile (j = 0: every cell).
        let mut in_run = 0u64;
        // Swap to the right / above: the tile of the partner put here, or this tile put there.
        let (mut right, mut up) = (0u64, 0u64);
        for &b in &boards[..k] {
            let near = [shl(b, 1) & not_first, shr(b, 1) & not_last, shl(b, w) & all, shr(b, w)];
            let mut lines = [[0u64; BITBOARD_REACH]; 4];
            for d in 0..4 {
                lines[d][0] = all;
                for j in 1..=m {
                    let prev = lines[d][j - 1];
                    let moved = match d {
                        0 => shl(prev, 1),
                        1 => shr(prev, 1),
                        2 => shl(prev, w),
                        _ => shr(prev, w),
                    };
                    lines[d][j] = near[d] & moved & all;
                }
            }
            let (mut across, mut along) = (0u64, 0u64);
            for j in 0..=m {
                across |= lines[0][j] & lines[1][m - j];
                along |= lines[2][j] & lines[3][m - j];
            }
            in_run |= b & (across | along);
            right |= ((lines[0][m] | along) & shr(b, 1)) | (b & shr(lines[1][m] | along, 1));
            up |= ((lines[2][m] | across) & shr(b, w)) | (b & shr(lines[3][m] | across, w));
        }
        // Equal neighbours (empty ones too): the swap changes nothing.
        let (mut eq_right, mut eq_up) = (zero & shr(zero, 1), zero & shr(zero, w));
        for &b in &boards[..k] {
            eq_right |= b & shr(b, 1);
            eq_up |= b & shr(b, w);
        }
        let right = not_last & ((!eq_right & right) | (eq_right & (in_run | shr(in_run, 1))));
        let up = shr(all, w) & ((!eq_up & up) | (eq_up & (in_run | shr(in_run, w))));
        // Swap number 2a is cell a's swap to the right, 2a + 1 its swap upwards.
        fn spread(x: u32) -> u64 {
            let mut x = x as u64;
            x = (x | x << 16) & 0x0000_FFFF_0000_FFFF;
            x = (x | x << 8) & 0x00FF_00FF_00FF_00FF;
            x = (x | x << 4) & 0x0F0F_0F0F_0F0F_0F0F;
            x = (x | x << 2) & 0x3333_3333_3333_3333;
            (x | x << 1) & 0x5555_5555_5555_5555
        }
        bits.fill(0);
        for (half, word) in bits.iter_mut().enumerate().take(2) {
            let (r, u) = ((right >> (32 * half)) as u32, (up >> (32 * half)) as u32);
            *word = spread(r) | spread(u) << 1;
        }
        true
    }

    /// For every cell, the equal cells in a row ending at it (itself counted) from the left,
    /// the right, below and above.
    fn run_lengths(geo: Geo, cells: &[i64], lens: &mut Vec<[u16; 4]>) {
        let (w, h) = (geo.w, geo.h);
        lens.clear();
        lens.resize(w * h, [1; 4]);
        for y in 0..h {
            for x in 1..w {
                let i = y * w + x;
                if cells[i] == cells[i - 1] {
                    lens[i][0] = lens[i - 1][0] + 1;
                }
            }
            for x in (0..w - 1).rev() {
                let i = y * w + x;
                if cells[i] == cells[i + 1] {
                    lens[i][1] = lens[i + 1][1] + 1;
                }
            }
        }
        for x in 0..w {
            for y in 1..h {
                let i = y * w + x;
                if cells[i] == cells[i - w] {
                    lens[i][2] = lens[i - w][2] + 1;
                }
            }
            for y in (0..h - 1).rev() {
                let i = y * w + x;
                if cells[i] == cells[i + w] {
                    lens[i][3] = lens[i + w][3] + 1;
                }
            }
        }
    }

    /// `canSwap(s, min)` for a swap number in range.
    #[inline]
    pub(in crate::wgdl) fn tile_swap_ok(&self, st: &State, g: u16, s: usize, min: i64) -> bool {
        self.with_swaps(st, g, min, usize::MAX, |set| set.bits[s / 64] >> (s % 64) & 1 == 1)
    }

    /// `board.swaps(min)`: how many swaps would make a run of ≥ `min` (match-3's legal moves).
    pub(in crate::wgdl) fn tile_swaps(&self, st: &State, g: u16, min: i64) -> i64 {
        self.with_swaps(st, g, min, usize::MAX, |set| set.bits.iter().map(|b| b.count_ones() as i64).sum())
    }

    /// `board.hasSwap(min)`: whether some swap would make a run of ≥ `min` (tested up to the
    /// first; move generation later goes on from there).
    pub(in crate::wgdl) fn tile_has_swap(&self, st: &State, g: u16, min: i64) -> bool {
        self.with_swaps(st, g, min, 1, |set| set.bits.iter().any(|&b| b != 0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Whether a run of ≥ `min` equal non-empty cells passes through cell `i`, reading cells
    /// through `cell` (which may show the grid with a swap applied): the definition the tests
    /// hold the swap set to.
    fn run_through(geo: Geo, i: usize, min: usize, cell: impl Fn(usize) -> i64) -> bool {
        let c = cell(i);
        if c == 0 {
            return false;
        }
        let (x, y) = (i % geo.w, i / geo.w);
        let mut n = 1;
        let mut k = x;
        while k > 0 && cell(i - (x - k) - 1) == c {
            n += 1;
            k -= 1;
        }
        k = x + 1;
        while k < geo.w && cell(i + (k - x)) == c {
            n += 1;
            k += 1;
        }
        if n >= min {
            return true;
        }
        n = 1;
        k = y;
        while k > 0 && cell(i - (y - k + 1) * geo.w) == c {
            n += 1;
            k -= 1;
        }
        k = y + 1;
        while k < geo.h && cell(i + (k - y) * geo.w) == c {
            n += 1;
            k += 1;
        }
        n >= min
    }

    /// The definition: make the swap on a copy, look for a run through either cell.
    fn naive(geo: Geo, cells: &[i64], min: usize, s: usize) -> bool {
        let Some((a, b)) = geo.swap_cells(s) else { return false };
        let mut c = cells.to_vec();
        c.swap(a, b);
        run_through(geo, a, min, |j| c[j]) || run_through(geo, b, min, |j| c[j])
    }

    #[test]
    fn bitboard_swap_sets_match_the_definition_on_random_boards() {
        let mut r = 987u64;
        let mut used = 0;
        for (w, h) in [(7, 7), (8, 8), (5, 3), (1, 6), (6, 1), (9, 2), (64, 1), (1, 64), (4, 16), (9, 7)] {
            let geo = Geo { base: 0, w, h };
            for tiles in [1i64, 2, 3, 6, 9, 20] {
                for _ in 0..60 {
                    // Empty cells and negative tiles too.
                    let cells: Vec<i64> = (0..w * h)
                        .map(|_| {
                            r = crate::rng::mix(r.wrapping_add(1));
                            (r % (tiles as u64 + 1)) as i64 - (tiles / 3)
                        })
                        .collect();
                    for min in 0..=10 {
                        let n = 2 * w * h;
                        let mut bits = vec![u64::MAX; n.div_ceil(64)];
                        if !Program::swap_set_bitboard(geo, &cells, min, &mut bits) {
                            assert!(w * h > 64 || min > BITBOARD_REACH || tiles >= BITBOARD_TILES as i64, "{w}x{h} min {min}");
                            continue;
                        }
                        used += 1;
                        for s in 0..n {
                            assert_eq!(bits[s / 64] >> (s % 64) & 1 == 1, naive(geo, &cells, min.max(1), s), "{w}x{h} min {min} swap {s}");
                        }
                    }
                }
            }
        }
        assert!(used > 10_000, "the bitboard path ran {used} times");
    }

    #[test]
    fn swap_sets_match_the_definition_on_random_boards() {
        let mut r = 12345u64;
        for (w, h) in [(7, 7), (5, 3), (1, 6), (9, 2)] {
            let geo = Geo { base: 0, w, h };
            for _ in 0..300 {
                let cells: Vec<i64> = (0..w * h)
                    .map(|_| {
                        r = crate::rng::mix(r.wrapping_add(1));
                        (r % 4) as i64
                    })
                    .collect();
                for min in 1..=4 {
                    let n = 2 * w * h;
                    let mut set = SwapSet { bits: vec![0; n.div_ceil(64)], done: 0, lens: Vec::new() };
                    // First the prefix up to one swap, then the rest, as hasSwap and move
                    // generation ask for them.
                    Program::swap_set(geo, &cells, min, &mut set, 1);
                    Program::swap_set(geo, &cells, min, &mut set, usize::MAX);
                    assert_eq!(set.done, n);
                    for s in 0..n {
                        assert_eq!(set.bits[s / 64] >> (s % 64) & 1 == 1, naive(geo, &cells, min, s), "{w}x{h} min {min} swap {s}");
                    }
                }
            }
        }
    }
}
