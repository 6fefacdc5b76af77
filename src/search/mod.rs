//! Searchers over the [`crate::game::Game`] contract: MCTS with a pluggable selection
//! [`formula::Formula`] and the thesis's enhancements, nested Monte Carlo search, Player2's
//! non-uniform iterative deepening under clocks ([`player2`]), and the
//! orchestration that chains sub-goals and runs searches in parallel ([`run`]).
//!
//! Invariant: nothing here names WGDL; games are seen only through `Game` (+ [`mcts::Goals`]).
//!
//! ```
//! use playforge::search::{formula::Formula, mcts::{Budget, MctsConfig}, run::{PlanConfig, plan}};
//! # use playforge::{game::WgdlGame, wgdl};
//! # let src = "class g\nattribute g n long 0\nobject o is g\ninitial o\naction g inc\ncondition inc o.n < long 3\nconsequence up direct o.n = o.n + long 1\nhasConsequence inc up\naction g stop\nconsequence s direct o.n = o.n + long 10\nhasConsequence stop s\ngoal 1 o.n >= long 3\n";
//! # let game = WgdlGame::new(wgdl::compile_str("x.wgdl", src).unwrap().program);
//! // Maximize a value in [0, 1] computed from the final state:
//! let eval = |s: &playforge::wgdl::State| (s.slots[s.slots.len() - 1] as f64 / 12.0).min(1.0);
//! let cfg = PlanConfig { budget: Budget::Iterations(200), ..PlanConfig::default() };
//! let best = plan(&game, &playforge::search::FnEval(eval), &cfg).unwrap();
//! assert!(best.value > 0.0);
//! ```

pub mod formula;
pub mod mcts;
pub mod nmcs;
pub mod player2;
pub mod run;

/// An [`mcts::Evaluator`] from a closure (single-player, no bound).
pub struct FnEval<F>(pub F);

impl<S, F: Fn(&S) -> f64 + Sync> mcts::Evaluator<S> for FnEval<F> {
    fn value(&self, s: &S, _player: usize) -> f64 {
        (self.0)(s)
    }
}
