//! Grid lines: `board.line(x, y, dx, dy)`, the length of the run of cells equal to (x, y)
//! through it along ±(dx, dy) (Connect Four's rows), in general and made per unit direction.

use crate::wgdl::program::{Program, State};

impl Program {
    pub(in crate::wgdl) fn grid_line(&self, st: &State, g: u16, args: &[i64]) -> i64 {
        let gi = &self.grids[g as usize];
        let (w, h) = (gi.width as i64, gi.height as i64);
        let (x, y, dx, dy) = (args[0], args[1], args[2], args[3]);
        if x < 0 || y < 0 || x >= w || y >= h {
            return 0;
        }
        if dx == 0 && dy == 0 {
            return 1;
        }
        let cells = &st.slots[gi.base as usize..(gi.base as i64 + w * h) as usize];
        let v = cells[(y * w + x) as usize];
        // Steps that stay on the grid from (x, y) along +(dx, dy) and along −(dx, dy).
        // (Unit steps, the usual ones, without a division.)
        let room = |p: i64, d: i64, size: i64| match d {
            0 => i64::MAX,
            1 => size - 1 - p,
            -1 => p,
            d if d > 0 => (size - 1 - p) / d,
            d => p / -d,
        };
        let ahead = room(x, dx, w).min(room(y, dy, h));
        let behind = room(x, -dx, w).min(room(y, -dy, h));
        let step = dy * w + dx;
        let at = y * w + x;
        let mut n = 1;
        let mut i = at;
        for _ in 0..ahead {
            i += step;
            if cells[i as usize] != v {
                break;
            }
            n += 1;
        }
        i = at;
        for _ in 0..behind {
            i -= step;
            if cells[i as usize] != v {
                break;
            }
            n += 1;
        }
        n
    }

    /// [`Program::grid_line`] along the constant unit direction (DX, DY) (not (0, 0)): the same
    /// count, with the direction's bounds checks and steps known when it is compiled.
    #[inline(always)]
    pub(in crate::wgdl) fn grid_line_unit<const DX: i64, const DY: i64>(&self, st: &State, g: u16, x: i64, y: i64) -> i64 {
        let gi = &self.grids[g as usize];
        let (w, h) = (gi.width as i64, gi.height as i64);
        if x < 0 || y < 0 || x >= w || y >= h {
            return 0;
        }
        let cells = &st.slots[gi.base as usize..(gi.base as i64 + w * h) as usize];
        let at = y * w + x;
        let v = cells[at as usize];
        // Steps to the edge along +(DX, DY) and −(DX, DY), then the cells one stride apart.
        let room = |d: i64, p: i64, len: i64| match d {
            0 => i64::MAX,
            1 => len - 1 - p,
            _ => p,
        };
        let ahead = room(DX, x, w).min(room(DY, y, h));
        let behind = room(-DX, x, w).min(room(-DY, y, h));
        let stride = DY * w + DX;
        let mut n = 1;
        for k in 1..=ahead {
            if cells[(at + k * stride) as usize] != v {
                break;
            }
            n += 1;
        }
        for k in 1..=behind {
            if cells[(at - k * stride) as usize] != v {
                break;
            }
            n += 1;
        }
        n
    }
}

#[cfg(test)]
mod tests {
    use rand::{RngExt, SeedableRng};

    /// The counters made for one unit direction give `grid_line`'s count at every cell and off
    /// the grid, on random boards of several shapes.
    #[test]
    fn unit_direction_lines_count_as_grid_line_does() {
        for (w, h) in [(7, 6), (1, 5), (4, 1), (3, 3), (9, 2)] {
            let src = format!("grid board {w} {h}\nclass c\nobject o is c\ninitial o\ngoal 1 false\n");
            let p = crate::wgdl::compile_str("lines.wgdl", &src).expect("compiles").program;
            let mut st = p.initial_state().expect("starts");
            let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(w * 100 + h);
            let base = p.grids[0].base as usize;
            for _ in 0..20 {
                for k in 0..(w * h) as usize {
                    st.slots[base + k] = rng.random_range(0..3);
                }
                for x in -1..=w as i64 {
                    for y in -1..=h as i64 {
                        for (dx, dy) in [(1, 0), (-1, 0), (0, 1), (0, -1), (1, 1), (-1, -1), (1, -1), (-1, 1)] {
                            let f = crate::wgdl::fast::line_fn(dx, dy).expect("a unit direction");
                            assert_eq!(
                                f(&p, &st, 0, x, y),
                                p.grid_line(&st, 0, &[x, y, dx, dy]),
                                "{w}x{h} at ({x}, {y}) along ({dx}, {dy})"
                            );
                        }
                    }
                }
            }
        }
    }
}
