//! Cell tests: the conditions of a board move that the move lister checks natively. A
//! condition such as `board[from] == this.piece`, `board[to] != this.piece`, `board[c] == 0`
//! or `(board[over] == this.foeMan) || (board[over] == this.foeKing)` compares one cell of the
//! bound move with values that are fixed for the owner; `compile/cells.rs` finds them at the
//! head of an action's conditions, and the lister (`program/moves.rs`) reads the owner's values
//! once, then tests the from cells 64 at a time into a bit mask and visits only the moves of
//! those that pass (`StepTable::starts`), each by two slot reads — no closure call, no
//! environment.
//! Only conditions that cannot fail at run time are replaced (the cell is on the grid by
//! construction, the values are literals or the owner's own attributes), so the moves listed,
//! their order and every error are the same as the interpreted conditions'.

use super::program::ObjRec;

/// At most this many conditions of an action are tested natively (more are interpreted).
pub const MAX_CELL_TESTS: usize = 4;

/// A value a cell is compared with, fixed for the owner.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub enum Val {
    /// An unused test's value (the arrays' default).
    #[default]
    Zero,
    Const(i64),
    /// `this.<attr>`: the owner's slot at this offset.
    This(u32),
    /// `this.<constant>`: the owner's description's class constant.
    ThisConst(u32),
}

/// One condition: cell `at` of the bound move (0: the bound cell of `forEveryCell`, or a step's
/// from; 1: the cell jumped over; 2: the cell stepped to) equals one of `vals` (with `ne`:
/// equals neither). A single comparison repeats its value.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct CellTest {
    pub at: u8,
    pub ne: bool,
    pub vals: [Val; 2],
}

/// The leading conditions (after the owner's) of one action that are cell tests on one grid.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct CellTests {
    /// The slot of the grid's cell 0.
    pub base: u32,
    pub tests: [CellTest; MAX_CELL_TESTS],
    /// How many tests (and so how many conditions after the owner's they replace).
    pub n: u8,
}

/// [`CellTests`] with the owner's values read: what the lister's loop compares.
#[derive(Clone, Copy, Debug)]
pub struct Resolved {
    base: usize,
    tests: [(usize, bool, i64, i64); MAX_CELL_TESTS],
    n: usize,
    /// The test on the from cell (or the bound cell) that skips a cell's moves, if any.
    from: Option<(bool, i64, i64)>,
}

impl CellTests {
    /// The tests with the values of an owner (a live object: its record `obj`, its
    /// description's class constants `consts`) read from the state's `slots`.
    #[inline]
    pub fn resolve(&self, slots: &[i64], obj: &ObjRec, consts: &[i64]) -> Resolved {
        let val = |v: Val| match v {
            Val::Zero => 0,
            Val::Const(c) => c,
            Val::This(o) => slots[(obj.base + o) as usize],
            Val::ThisConst(i) => consts[i as usize],
        };
        let mut r = Resolved { base: self.base as usize, tests: [(0, false, 0, 0); MAX_CELL_TESTS], n: 0, from: None };
        for t in &self.tests[..self.n as usize] {
            let (a, b) = (val(t.vals[0]), val(t.vals[1]));
            if t.at == 0 && r.from.is_none() {
                r.from = Some((t.ne, a, b));
            } else {
                r.tests[r.n] = (t.at as usize, t.ne, a, b);
                r.n += 1;
            }
        }
        r
    }
}

impl Resolved {
    /// The cells of `lo..hi`, in order, whose from test holds (every cell without one). The
    /// test is made 64 cells at a time into a bit mask, a loop the compiler turns into vector
    /// compares, so that cells that fail cost next to nothing.
    #[inline(always)]
    pub fn passing_cells<'a>(&'a self, slots: &'a [i64], lo: u32, hi: u32) -> FromCells<'a> {
        FromCells { r: self, slots, next: lo, hi, first: lo, mask: 0 }
    }

    /// Whether the from test is the only one.
    #[inline(always)]
    pub fn only_from(&self) -> bool {
        self.n == 0
    }

    /// Whether the other tests hold for the move's cells `[from, over, to]`.
    #[inline(always)]
    pub fn rest_hold(&self, slots: &[i64], cells: [u32; 3]) -> bool {
        self.tests[..self.n].iter().all(|&(at, ne, a, b)| {
            let v = slots[self.base + cells[at] as usize];
            (v == a || v == b) != ne
        })
    }
}

/// [`Resolved::passing_cells`]: an iterator over the cells whose from test holds.
pub struct FromCells<'a> {
    r: &'a Resolved,
    slots: &'a [i64],
    /// The first cell of the next 64 to test, and the end.
    next: u32,
    hi: u32,
    /// The first cell of the current 64, and those of them still to give.
    first: u32,
    mask: u64,
}

impl Iterator for FromCells<'_> {
    type Item = u32;

    #[inline(always)]
    fn next(&mut self) -> Option<u32> {
        while self.mask == 0 {
            if self.next >= self.hi {
                return None;
            }
            let n = (self.hi - self.next).min(64);
            self.first = self.next;
            self.next += n;
            self.mask = match self.r.from {
                None => u64::MAX >> (64 - n),
                Some((ne, a, b)) => {
                    let base = self.r.base + self.first as usize;
                    mask_of(&self.slots[base..base + n as usize], ne, a, b)
                }
            };
        }
        let c = self.first + self.mask.trailing_zeros();
        self.mask &= self.mask - 1;
        Some(c)
    }
}

/// Bit i set when cell i (of at most 64) equals a or b (with `ne`: neither). Eight cells at a
/// time: their tests as bytes 0/1, gathered into eight bits by one multiplication (byte j,
/// times 2^(56 − 7j), lands on bit 56 + j, and no two products overlap), so that the compares
/// run as vector instructions.
#[inline(always)]
fn mask_of(cells: &[i64], ne: bool, a: i64, b: i64) -> u64 {
    let test = |v: i64| ((v == a) | (v == b)) != ne;
    let mut m = 0u64;
    let mut eights = cells.chunks_exact(8);
    for (k, chunk) in eights.by_ref().enumerate() {
        let mut bytes = [0u8; 8];
        for (byte, &v) in bytes.iter_mut().zip(chunk) {
            *byte = test(v) as u8;
        }
        m |= (u64::from_le_bytes(bytes).wrapping_mul(0x0102_0408_1020_4080) >> 56) << (8 * k);
    }
    let done = cells.len() - eights.remainder().len();
    for (i, &v) in eights.remainder().iter().enumerate() {
        m |= (test(v) as u64) << (done + i);
    }
    m
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The packed mask equals the plain one, cell by cell, for every length up to 64.
    #[test]
    fn masks_match_the_cell_by_cell_test() {
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        for n in 0..=64usize {
            let cells: Vec<i64> = (0..n)
                .map(|_| {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    (x % 4) as i64
                })
                .collect();
            for (ne, a, b) in [(false, 0, 0), (true, 1, 1), (false, 2, 3), (true, 0, 3)] {
                let plain = cells.iter().enumerate().fold(0u64, |m, (i, &v)| m | ((((v == a) | (v == b)) != ne) as u64) << i);
                assert_eq!(mask_of(&cells, ne, a, b), plain, "n {n} ne {ne} a {a} b {b}");
            }
        }
    }
}
