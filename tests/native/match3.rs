//! Match-3 written by hand in Rust: the native reference the WGDL match-3 will be checked
//! against move for move, and the speed ceiling for the interpreted ÷ native ratio (tests/ and
//! benches/ only). These are the design decisions the WGDL side copies, literally:
//!
//! - Board: `width × height` cells (default 7×7, each side 3..=16), cell (x, y) with y = 0 the
//!   bottom row at index `y * width + x`. Colours are `0..colours` (default 6, at least 3 so the
//!   start-board redraw always has a colour left); [`EMPTY`] (255) marks a cleared cell and only
//!   exists during resolution.
//! - Chance: one word `rng` (= `mix(seed)` at the start); a draw in `0..n` is
//!   `mix(rng) % n`, then `rng += 1` (wrapping), with `mix` = `playforge::rng::mix`.
//! - Start board (and every regeneration): cells in index order, each drawn and redrawn while it
//!   would complete a run of 3 with (x−1, y), (x−2, y) or with (x, y−1), (x, y−2); so it has no run.
//! - Moves: swap two orthogonal neighbours; a move is `(a, b)`, cell indices, `a < b`. Candidates
//!   in order: for each cell index upward, its right neighbour, then its upper neighbour. Legal iff
//!   after the swap a horizontal or vertical run of ≥ 3 equal colours passes through a or b.
//! - Resolution: swap, multiplier m = 1, then repeat: find every maximal horizontal and every
//!   maximal vertical segment of ≥ 3 equal non-empty colours (none: stop); a run of length k scores
//!   k·(10k − 10)·m (60, 120, 200, 300 … for k = 3, 4, 5, 6; an L or T is two runs and its shared
//!   cell counts in both); clear the union of the runs' cells; gravity: in each column the
//!   remaining cells fall to the bottom in order; refill column by column (x upward), each empty
//!   cell bottom to top, with a plain draw (no anti-run rule); m += 1. Then `moves += 1`.
//! - End: over after `max_moves` moves (default 20). While not over, after the start fill and at
//!   the end of every `apply`, a board without a legal move is regenerated (start-board rule, from
//!   the stream) until one exists; that is not a move. [`Match3::from_cells`] takes the given board
//!   as it is (no start check), but its moves follow the same rule.
//! - Measures: `score`, and [`Match3::legal_count`]; a game's "moves metric" is the mean of
//!   `legal_count` before each of its moves.
//!
//! Points are always multiples of 20 (k(k − 1) is even), and every move makes at least one 3-run,
//! so a full 20-move game scores at least 1200.

use playforge::game::Game;
use playforge::rng::mix;
use playforge::wgdl::Status;

/// A cleared cell, during resolution only.
pub const EMPTY: u8 = 255;
/// The largest board side: boards fit in a fixed `[u8; 256]` and cell indices in a `u8`.
pub const MAX_SIDE: usize = 16;
const MAX_CELLS: usize = MAX_SIDE * MAX_SIDE;

/// A swap of cells `a < b` (indices `y * width + x`), horizontal (`b = a + 1`) or vertical
/// (`b = a + width`).
pub type M3Move = (u8, u8);

/// Points of one run of length `k` at multiplier `m`: k·(10k − 10)·m.
pub fn run_points(k: u64, m: u64) -> u64 {
    k * (10 * k - 10) * m
}

/// A match-3 game in progress.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Match3 {
    pub width: usize,
    pub height: usize,
    pub colours: u8,
    /// Cell colours at `y * width + x`; cells past `width * height` stay [`EMPTY`].
    board: [u8; MAX_CELLS],
    /// The chance stream's counter.
    pub rng: u64,
    pub score: u64,
    pub moves: u32,
    pub max_moves: u32,
}

impl Match3 {
    /// A new game: the start board drawn from `seed`, regenerated until a move exists.
    pub fn new(width: usize, height: usize, colours: u8, seed: u64, max_moves: u32) -> Match3 {
        let mut g = Match3::empty(width, height, colours, mix(seed), max_moves);
        g.fill();
        g.ensure_move();
        g
    }

    /// The default game: 7×7, 6 colours, 20 moves.
    pub fn standard(seed: u64) -> Match3 {
        Match3::new(7, 7, 6, seed, 20)
    }

    /// A game from a given board (rows bottom first, `width * height` colours), taken as it is.
    pub fn from_cells(width: usize, height: usize, colours: u8, cells: &[u8], rng: u64, max_moves: u32) -> Match3 {
        let mut g = Match3::empty(width, height, colours, rng, max_moves);
        assert_eq!(cells.len(), width * height, "cells for a {width}×{height} board");
        assert!(cells.iter().all(|&c| c < colours), "every cell a colour below {colours}");
        g.board[..cells.len()].copy_from_slice(cells);
        g
    }

    fn empty(width: usize, height: usize, colours: u8, rng: u64, max_moves: u32) -> Match3 {
        assert!((3..=MAX_SIDE).contains(&width) && (3..=MAX_SIDE).contains(&height), "board {width}×{height}");
        assert!((3..EMPTY).contains(&colours), "colours {colours}");
        Match3 { width, height, colours, board: [EMPTY; MAX_CELLS], rng, score: 0, moves: 0, max_moves }
    }

    /// The cells, `width * height` of them, at `y * width + x`.
    pub fn cells(&self) -> &[u8] {
        &self.board[..self.width * self.height]
    }

    pub fn is_over(&self) -> bool {
        self.moves >= self.max_moves
    }

    /// The next draw from the chance stream, in `0..n`.
    pub fn draw(&mut self, n: u64) -> u64 {
        let v = mix(self.rng);
        self.rng = self.rng.wrapping_add(1);
        v % n
    }

    /// (Re)draws the whole board with the start-board rule: no cell completes a run of 3 with the
    /// two cells to its left or the two below it.
    fn fill(&mut self) {
        let w = self.width;
        for y in 0..self.height {
            for x in 0..w {
                let i = y * w + x;
                loop {
                    let c = self.draw(self.colours as u64) as u8;
                    let across = x >= 2 && self.board[i - 1] == c && self.board[i - 2] == c;
                    let down = y >= 2 && self.board[i - w] == c && self.board[i - 2 * w] == c;
                    if !(across || down) {
                        self.board[i] = c;
                        break;
                    }
                }
            }
        }
    }

    /// The deadlock rule: while the game is not over and no move is legal, regenerate.
    fn ensure_move(&mut self) {
        while !self.is_over() && !self.has_legal_move() {
            self.fill();
        }
    }

    /// The candidate swaps in order (right neighbour, then upper neighbour, per cell index),
    /// legal or not, to `f`; stops early when `f` returns false.
    fn candidates(&self, mut f: impl FnMut(usize, usize) -> bool) {
        let w = self.width;
        for y in 0..self.height {
            for x in 0..w {
                let i = y * w + x;
                if x + 1 < w && !f(i, i + 1) {
                    return;
                }
                if y + 1 < self.height && !f(i, i + w) {
                    return;
                }
            }
        }
    }

    /// Whether a run of ≥ 3 equal non-empty colours passes through cell `i` of `board`.
    fn run_through(&self, board: &[u8; MAX_CELLS], i: usize) -> bool {
        let (w, h) = (self.width, self.height);
        let c = board[i];
        if c == EMPTY {
            return false;
        }
        let (x, y) = (i % w, i / w);
        let mut across = 1;
        let mut k = x;
        while k > 0 && board[y * w + k - 1] == c {
            across += 1;
            k -= 1;
        }
        k = x + 1;
        while k < w && board[y * w + k] == c {
            across += 1;
            k += 1;
        }
        if across >= 3 {
            return true;
        }
        let mut up = 1;
        k = y;
        while k > 0 && board[(k - 1) * w + x] == c {
            up += 1;
            k -= 1;
        }
        k = y + 1;
        while k < h && board[k * w + x] == c {
            up += 1;
            k += 1;
        }
        up >= 3
    }

    /// Calls `f` with every legal move in order; stops early when `f` returns false.
    fn each_legal(&self, mut f: impl FnMut(M3Move) -> bool) {
        let mut b = self.board;
        self.candidates(|i, j| {
            b.swap(i, j);
            let legal = self.run_through(&b, i) || self.run_through(&b, j);
            b.swap(i, j);
            !legal || f((i as u8, j as u8))
        });
    }

    /// The legal moves, in candidate order (`out` cleared first).
    pub fn legal_moves(&self, out: &mut Vec<M3Move>) {
        out.clear();
        self.each_legal(|m| {
            out.push(m);
            true
        });
    }

    /// The number of legal swaps now.
    pub fn legal_count(&self) -> usize {
        let mut n = 0;
        self.each_legal(|_| {
            n += 1;
            true
        });
        n
    }

    pub fn has_legal_move(&self) -> bool {
        let mut any = false;
        self.each_legal(|_| {
            any = true;
            false
        });
        any
    }

    /// Whether the board holds any run of ≥ 3 (never, between moves, once resolved).
    pub fn has_run(&self) -> bool {
        (0..self.width * self.height).any(|i| self.run_through(&self.board, i))
    }

    /// Swaps two cells (the first half of a move; exposed for step-by-step tests).
    pub fn swap(&mut self, a: usize, b: usize) {
        self.board.swap(a, b);
    }

    /// One resolution step at multiplier `m`: scores every maximal run, clears them, lets the
    /// columns fall and refills from the stream. Returns the points, 0 (and changes nothing) when
    /// there is no run.
    pub fn step(&mut self, m: u64) -> u64 {
        let (w, h) = (self.width, self.height);
        let mut clear = [false; MAX_CELLS];
        let mut points = 0;
        // The maximal runs of one line: `count` cells from `start`, `stride` apart (rows first,
        // then columns). A segment ends where the colour changes or the line ends.
        let mut segment = |board: &[u8; MAX_CELLS], start: usize, stride: usize, count: usize| {
            let mut run_start = 0;
            for k in 1..=count {
                let same = k < count && board[start + k * stride] == board[start + run_start * stride];
                if same {
                    continue;
                }
                let len = k - run_start;
                if len >= 3 && board[start + run_start * stride] != EMPTY {
                    points += run_points(len as u64, m);
                    for j in run_start..k {
                        clear[start + j * stride] = true;
                    }
                }
                run_start = k;
            }
        };
        for y in 0..h {
            segment(&self.board, y * w, 1, w);
        }
        for x in 0..w {
            segment(&self.board, x, w, h);
        }
        if points == 0 {
            return 0;
        }
        // Clear and let every column fall, keeping order.
        for x in 0..w {
            let mut to = 0;
            for y in 0..h {
                let i = y * w + x;
                if !clear[i] {
                    self.board[to * w + x] = self.board[i];
                    to += 1;
                }
            }
            for y in to..h {
                self.board[y * w + x] = EMPTY;
            }
        }
        // Refill: column by column, each column bottom to top.
        for x in 0..w {
            for y in 0..h {
                let i = y * w + x;
                if self.board[i] == EMPTY {
                    self.board[i] = self.draw(self.colours as u64) as u8;
                }
            }
        }
        points
    }

    /// Plays a move: swap, resolve the cascade, count the move, then the deadlock rule. Returns
    /// the move's points.
    pub fn apply(&mut self, (a, b): M3Move) -> u64 {
        debug_assert!(!self.is_over(), "the game is over");
        self.swap(a as usize, b as usize);
        let mut total = 0;
        let mut m = 1;
        loop {
            let p = self.step(m);
            if p == 0 {
                break;
            }
            total += p;
            m += 1;
        }
        self.score += total;
        self.moves += 1;
        self.ensure_move();
        total
    }

    /// A stable hash of the cells, score, moves and stream.
    pub fn hash(&self) -> u64 {
        let mut h = mix(self.score ^ ((self.moves as u64) << 48));
        h = mix(h ^ self.rng);
        for chunk in self.cells().chunks(8) {
            let mut word = [0u8; 8];
            word[..chunk.len()].copy_from_slice(chunk);
            h = mix(h ^ u64::from_le_bytes(word));
        }
        h
    }
}

/// Match-3 as a [`Game`] for searchers: one player, one action group, `Finished` after
/// `max_moves` moves.
#[derive(Clone, Debug)]
pub struct NativeMatch3 {
    pub colours: u8,
    pub width: usize,
    pub height: usize,
    pub max_moves: u32,
    pub seed: u64,
}

impl NativeMatch3 {
    /// The default game (7×7, 6 colours, 20 moves) on `seed`.
    pub fn standard(seed: u64) -> NativeMatch3 {
        NativeMatch3 { colours: 6, width: 7, height: 7, max_moves: 20, seed }
    }
}

impl Game for NativeMatch3 {
    type State = Match3;
    type Move = M3Move;
    type Error = std::convert::Infallible;

    fn initial(&self) -> Result<Match3, Self::Error> {
        Ok(Match3::new(self.width, self.height, self.colours, self.seed, self.max_moves))
    }
    fn legal(&self, s: &Match3, out: &mut Vec<M3Move>) -> Result<(), Self::Error> {
        if s.is_over() {
            out.clear();
        } else {
            s.legal_moves(out);
        }
        Ok(())
    }
    fn apply(&self, s: &mut Match3, mv: M3Move) -> Result<(), Self::Error> {
        s.apply(mv);
        Ok(())
    }
    fn status(&self, s: &Match3, legal: &[M3Move]) -> Status {
        if s.is_over() {
            Status::Finished
        } else if legal.is_empty() {
            // Unreachable by the deadlock rule, except on a crafted board.
            Status::Stuck
        } else {
            Status::Running
        }
    }
    fn to_move(&self, _: &Match3) -> usize {
        0
    }
    fn hash(&self, s: &Match3) -> u64 {
        s.hash()
    }
}

impl playforge::search::mcts::Goals for NativeMatch3 {
    fn goals_reached(&self, s: &Match3) -> usize {
        s.is_over() as usize
    }
    fn n_goals(&self) -> usize {
        1
    }
}
