//! Nested Monte Carlo Search (Cazenave 2009, the thesis's Alg. 2.1) with the same playout policy
//! (action groups) and the same sub-game ends as MCTS.
//!
//! Level 0 is one playout. At level ℓ, every legal move is tried with a level ℓ−1 search; the
//! best sequence seen so far is memorized and followed whenever the current step's best is
//! worse. No tree is built. Budgets count playouts as iterations; when the budget runs out the
//! search returns the best found so far.

use super::mcts::{Budget, Evaluator, MctsConfig, SubGame, is_terminal};
use crate::game::Goals;
use crate::game::{Game, pick_grouped};
use crate::rng::Rng;
use rand::RngExt;
use std::time::{Duration, Instant};

pub struct Nmcs<'a, G: Game, E> {
    pub game: &'a G,
    pub eval: &'a E,
    pub cfg: &'a MctsConfig,
    pub sub: SubGame,
    pub budget: Budget,
    pub start: Instant,
    pub playouts: u64,
}

pub struct Found<S, M> {
    pub value: f64,
    pub seq: Vec<M>,
    pub state: S,
}

impl<G: Game + Goals, E: Evaluator<G::State>> Nmcs<'_, G, E> {
    pub fn out_of_budget(&self) -> bool {
        match self.budget {
            Budget::Iterations(n) => self.playouts >= n,
            Budget::Millis(ms) => self.start.elapsed() >= Duration::from_millis(ms),
        }
    }

    fn playout(&mut self, mut st: G::State, rng: &mut Rng) -> Result<Found<G::State, G::Move>, G::Error> {
        self.playouts += 1;
        let mut legal = Vec::new();
        let mut seq = Vec::new();
        loop {
            self.game.legal(&st, &mut legal)?;
            if is_terminal(self.game, &st, &legal, self.sub) || seq.len() as u32 >= self.cfg.max_playout_moves {
                break;
            }
            let m = match &self.cfg.group_weights {
                Some(w) => pick_grouped(self.game, &legal, w, rng),
                None => legal[rng.random_range(0..legal.len())],
            };
            self.game.apply(&mut st, m)?;
            seq.push(m);
        }
        Ok(Found { value: self.eval.value(&st, 0), seq, state: st })
    }

    /// A level-`level` search from `st`.
    pub fn run(&mut self, level: u32, st: G::State, rng: &mut Rng) -> Result<Found<G::State, G::Move>, G::Error> {
        if level == 0 {
            return self.playout(st, rng);
        }
        let mut best: Option<Found<G::State, G::Move>> = None;
        let mut played: Vec<G::Move> = Vec::new();
        let mut cur = st;
        let mut legal = Vec::new();
        loop {
            self.game.legal(&cur, &mut legal)?;
            if is_terminal(self.game, &cur, &legal, self.sub) {
                break;
            }
            for &m in &legal.clone() {
                if self.out_of_budget() && best.is_some() {
                    break;
                }
                let mut s2 = cur.clone();
                self.game.apply(&mut s2, m)?;
                let r = self.run(level - 1, s2, rng)?;
                if best.as_ref().is_none_or(|b| r.value > b.value) {
                    let mut seq = played.clone();
                    seq.push(m);
                    seq.extend(r.seq);
                    best = Some(Found { value: r.value, seq, state: r.state });
                }
            }
            let b = best.as_ref().expect("at least one move was searched");
            if self.out_of_budget() || played.len() >= b.seq.len() {
                break;
            }
            let m = b.seq[played.len()];
            self.game.apply(&mut cur, m)?;
            played.push(m);
        }
        match best {
            Some(b) => Ok(b),
            None => Ok(Found { value: self.eval.value(&cur, 0), seq: played, state: cur }),
        }
    }
}
