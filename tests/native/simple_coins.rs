//! Simple Coins written by hand in Rust: the native twin of `games/simple_coins.wgdl`.
//!
//! Allowed here (tests/ and benches/ only) to cross-check the interpreter move for move and to
//! give the speed ceiling for the interpreted ÷ native ratio. Moves are listed in the
//! interpreter's order: `endSession(global)` first (the global object is created first), then
//! `getCoins(coin1)` … `getCoins(coin20)`. Groups in declaration order: wait = 0, getMoney = 1.

use playforge::game::Game;
use playforge::wgdl::Status;

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ScState {
    pub coins: i64,
    pub energy: i64,
    pub sessions: i64,
    pub moves: u32,
}

/// 0 = endSession, k in 1..=20 = getCoins(coin k).
pub type ScMove = u8;

pub struct NativeSimpleCoins;

#[derive(Debug)]
pub struct Never;
impl std::fmt::Display for Never {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("never")
    }
}
impl std::error::Error for Never {}

impl Game for NativeSimpleCoins {
    type State = ScState;
    type Move = ScMove;
    type Error = Never;

    fn initial(&self) -> Result<ScState, Never> {
        Ok(ScState { coins: 0, energy: 30, sessions: 0, moves: 0 })
    }
    fn legal(&self, s: &ScState, out: &mut Vec<ScMove>) -> Result<(), Never> {
        out.clear();
        out.push(0);
        if s.energy > 0 {
            out.extend(1..=20);
        }
        Ok(())
    }
    fn apply(&self, s: &mut ScState, m: ScMove) -> Result<(), Never> {
        if m == 0 {
            s.energy = 30;
            s.sessions += 1;
        } else {
            s.coins += m as i64;
            s.energy -= 1;
        }
        s.moves += 1;
        Ok(())
    }
    fn status(&self, s: &ScState, legal: &[ScMove]) -> Status {
        if s.sessions >= 4 {
            Status::Finished
        } else if s.moves >= 100_000 {
            Status::StepLimit
        } else if legal.is_empty() {
            Status::Stuck
        } else {
            Status::Running
        }
    }
    fn to_move(&self, _: &ScState) -> usize {
        0
    }
    fn hash(&self, s: &ScState) -> u64 {
        (s.coins as u64) << 20 ^ (s.energy as u64) << 8 ^ s.sessions as u64
    }
    fn group(&self, m: ScMove) -> usize {
        if m == 0 { 0 } else { 1 }
    }
    fn group_weights(&self) -> Vec<f64> {
        vec![0.1, 0.9]
    }
}
