//! Connect Four written by hand in Rust: the native twin of `games/connect_four.wgdl`.
//!
//! Allowed here (tests/ and benches/ only) to cross-check the interpreter move for move (perft
//! counts and seeded random games) and to give the speed ceiling for the interpreted ÷ native
//! ratio. A move is a column 0..=6; moves are listed in ascending column order, full columns
//! left out, as the interpreter lists `drop(player, col)`. Red (side 0) moves first. The game
//! ends on four in a row (`Won(side)`, no legal moves afterwards) or after 42 moves (`Draw`);
//! a four made by the 42nd move is a win, as the `winner` lines come before the `draw` line.
//! Bitboards: bit `col * 7 + row`, row 6 of each column is an always-empty sentinel.

use playforge::game::Game;
use playforge::wgdl::Status;

pub const WIDTH: usize = 7;
pub const HEIGHT: usize = 6;
/// Bits per column: the six rows and the sentinel above them.
const H1: usize = HEIGHT + 1;
/// The bottom cell of every column.
const BOTTOM: u64 = {
    let mut b = 0u64;
    let mut c = 0;
    while c < WIDTH {
        b |= 1 << (c * H1);
        c += 1;
    }
    b
};

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct C4State {
    /// Each side's discs.
    pub discs: [u64; 2],
    /// Both sides' discs.
    pub mask: u64,
    /// Discs dropped so far; the side to move is `moves & 1`.
    pub moves: u8,
    /// 0 running, 1 draw, 2 + k side k won (as the interpreter's `State::outcome`).
    pub outcome: u8,
}

/// The column to drop into, 0..=6.
pub type C4Move = u8;

pub struct NativeConnectFour;

#[derive(Debug)]
pub struct Never;
impl std::fmt::Display for Never {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("never")
    }
}
impl std::error::Error for Never {}

/// Whether `b` holds four in a row in any direction.
#[inline]
pub fn has_four(b: u64) -> bool {
    // Shifts: 1 = up a column, H1 = across a row, H1 + 1 = up-right, H1 - 1 = down-right.
    for s in [1, H1, H1 + 1, H1 - 1] {
        let m = b & (b >> s);
        if m & (m >> (2 * s)) != 0 {
            return true;
        }
    }
    false
}

/// The readable name of a move as the interpreter writes it: `drop(red, 3)`.
#[allow(dead_code)]
pub fn move_name(s: &C4State, m: C4Move) -> String {
    format!("drop({}, {m})", ["red", "yellow"][(s.moves & 1) as usize])
}

impl Game for NativeConnectFour {
    type State = C4State;
    type Move = C4Move;
    type Error = Never;

    fn initial(&self) -> Result<C4State, Never> {
        Ok(C4State { discs: [0, 0], mask: 0, moves: 0, outcome: 0 })
    }
    fn legal(&self, s: &C4State, out: &mut Vec<C4Move>) -> Result<(), Never> {
        out.clear();
        if s.outcome == 0 {
            for c in 0..WIDTH {
                if s.mask & (1 << (c * H1 + HEIGHT - 1)) == 0 {
                    out.push(c as u8);
                }
            }
        }
        Ok(())
    }
    fn apply(&self, s: &mut C4State, m: C4Move) -> Result<(), Never> {
        let side = (s.moves & 1) as usize;
        let col = m as usize;
        let column = ((1u64 << HEIGHT) - 1) << (col * H1);
        let bit = (s.mask + (1 << (col * H1))) & column;
        debug_assert!(bit != 0, "column {col} is full");
        s.discs[side] |= bit;
        s.mask |= bit;
        s.moves += 1;
        if has_four(s.discs[side]) {
            s.outcome = 2 + side as u8;
        } else if s.moves as usize == WIDTH * HEIGHT {
            s.outcome = 1;
        }
        Ok(())
    }
    fn status(&self, s: &C4State, legal: &[C4Move]) -> Status {
        match s.outcome {
            1 => Status::Draw,
            k if k >= 2 => Status::Won(k - 2),
            _ if legal.is_empty() => Status::Stuck,
            _ => Status::Running,
        }
    }
    fn to_move(&self, s: &C4State) -> usize {
        (s.moves & 1) as usize
    }
    fn hash(&self, s: &C4State) -> u64 {
        // `discs[0] + mask + BOTTOM` is unique per position (the classic key); mix it a little.
        (s.discs[0] + s.mask + BOTTOM).wrapping_mul(0x9E37_79B9_7F4A_7C15)
    }
}

/// Perft: the number of move sequences of exactly `depth` moves from `state`, counting only
/// those where the game had not ended before the last move (a finished game with depth left
/// contributes 0). Generic over [`Game`], so it counts the interpreter and the twin alike.
#[allow(dead_code)]
pub fn perft<G: Game>(game: &G, state: &G::State, depth: u32) -> u64 {
    if depth == 0 {
        return 1;
    }
    let mut legal = Vec::new();
    game.legal(state, &mut legal).expect("legal moves");
    if game.status(state, &legal) != Status::Running {
        return 0;
    }
    if depth == 1 {
        return legal.len() as u64;
    }
    legal
        .iter()
        .map(|&m| {
            let mut next = state.clone();
            game.apply(&mut next, m).expect("apply");
            perft(game, &next, depth - 1)
        })
        .sum()
}

/// No goals: the whole game is one search (two-player MCTS).
impl playforge::search::mcts::Goals for NativeConnectFour {
    fn goals_reached(&self, _s: &C4State) -> usize {
        0
    }
    fn n_goals(&self) -> usize {
        0
    }
}
