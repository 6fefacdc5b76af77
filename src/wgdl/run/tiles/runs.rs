//! Runs on a tile grid: maximal horizontal or vertical segments of at least `min` equal
//! non-empty cells, rows first, then columns (the module doc of `tiles/`), found once per board
//! and min (`cache.rs`); `board.runs` and `board.sumRuns` read them, `clearRuns` clears them.

use super::Geo;
use super::cache::CACHE;
use crate::wgdl::program::*;

impl Program {
    /// Calls `f(first cell, stride, length)` for every run of ≥ `min` (see the module doc for
    /// the order), from the cache when the board is the one last asked about.
    pub(super) fn each_run(
        &self,
        st: &State,
        g: u16,
        min: usize,
        mut f: impl FnMut(usize, usize, usize) -> Result<(), RuntimeError>,
    ) -> Result<(), RuntimeError> {
        let geo = self.geo(g);
        let cells = &st.slots[geo.base..geo.base + geo.cells()];
        let runs = CACHE.with(|c| {
            let mut c = c.borrow_mut();
            let r = &mut c.runs;
            if !r.hit(g, min, cells) {
                r.value.clear();
                Self::scan_runs(geo, cells, min, &mut r.value);
                r.store(g, min, cells);
            }
            // Taken out for the calls (which may ask the cache themselves: it is invalid
            // meanwhile), put back after unless they stored another board.
            r.valid = false;
            std::mem::take(&mut r.value)
        });
        let mut result = Ok(());
        for &(first, stride, len) in &runs {
            result = f(first as usize, stride as usize, len as usize);
            if result.is_err() {
                break;
            }
        }
        CACHE.with(|c| {
            let mut c = c.borrow_mut();
            let r = &mut c.runs;
            if !r.valid && r.grid == g && r.min == min {
                r.value = runs;
                r.valid = true;
            }
        });
        result
    }

    /// Every run of ≥ `min` as (first cell, stride, length), rows first, then columns.
    fn scan_runs(geo: Geo, cells: &[i64], min: usize, out: &mut Vec<(u32, u32, u32)>) {
        let min = min.max(1);
        // One line: `count` cells from `start`, `stride` apart (positions advance by addition).
        let mut line = |start: usize, stride: usize, count: usize| {
            let mut from = start;
            let mut v = cells[start];
            let mut len = 1;
            let mut at = start;
            for _ in 1..count {
                at += stride;
                let c = cells[at];
                if c == v {
                    len += 1;
                    continue;
                }
                if len >= min && v != 0 {
                    out.push((from as u32, stride as u32, len as u32));
                }
                (from, v, len) = (at, c, 1);
            }
            if len >= min && v != 0 {
                out.push((from as u32, stride as u32, len as u32));
            }
        };
        for y in 0..geo.h {
            line(y * geo.w, 1, geo.w);
        }
        for x in 0..geo.w {
            line(x, geo.w, geo.h);
        }
    }

    /// `board.runs(min)`: how many runs of ≥ `min` there are.
    pub(in crate::wgdl) fn tile_runs(&self, st: &State, g: u16, min: i64) -> i64 {
        let mut n = 0;
        let _ = self.each_run(st, g, min.max(1) as usize, |_, _, _| {
            n += 1;
            Ok(())
        });
        n
    }

    /// `board.sumRuns(min, k, expr)`: the sum of `expr` over the runs, `k` bound to each run's
    /// length (the aggregate's code is `agg.expr`, compiled with a number binding).
    pub(in crate::wgdl) fn tile_sum_runs(&self, st: &State, g: u16, min: i64, agg: &AggInfo, this: u32) -> Result<i64, RuntimeError> {
        let (mut sum_l, mut sum_d) = (0i64, 0f64);
        self.each_run(st, g, min.max(1) as usize, |_, _, len| {
            let v = self.eval(st, agg.expr, Ctx { this, bound: len as u32 })?;
            if agg.double {
                sum_d += f64::from_bits(v as u64);
            } else {
                sum_l = sum_l.wrapping_add(v);
            }
            Ok(())
        })?;
        Ok(if agg.double { sum_d.to_bits() as i64 } else { sum_l })
    }
}
