//! Players for two-sided games: the random agent (uniform over the legal moves a search sees),
//! a WGDL policy (the rule-based AI is one), and MCTS deciding one move at a time — HexMage's
//! UCT with a policy playout, reward 1 for a win of the side to move at the root, the child with
//! the best mean chosen, and a fallback policy when even that looks hopeless.
//!
//! MCTS itself ([`decide_with`]) sees only the `Game` contract; the policies are WGDL's.

use crate::game::WgdlGame;
use crate::rng::Rng;
use crate::search::mcts::{Evaluator, FinalChoice, MctsConfig, decide_with};
use crate::wgdl::{Action, RuntimeError, State};
use rand::RngExt;

/// Who plays a side.
#[derive(Clone, Debug)]
pub enum Agent {
    /// Uniform over the legal (search-visible) moves.
    Random,
    /// A WGDL policy by index.
    Policy(usize),
    /// MCTS with `iterations` per decision and the settings of `cfg` (HexMage's: UCB1 with
    /// constant √2), playouts by the game's playout policy (or random), the root child `choice`
    /// picks, and below a best mean of `fallback.1` the fallback policy.
    Mcts { iterations: u64, cfg: Box<MctsConfig>, choice: FinalChoice, fallback: Option<(usize, f64)> },
}

/// Reward 1 for the side that won, 0 otherwise (loss, draw, cut-off), as in HexMage.
pub struct WinEval;

impl Evaluator<State> for WinEval {
    fn value(&self, st: &State, player: usize) -> f64 {
        if st.outcome as usize == player + 2 { 1.0 } else { 0.0 }
    }
}

/// The move `agent` plays in `st` (which must have a legal move).
pub fn choose(game: &WgdlGame, agent: &Agent, st: &State, legal: &[Action], rng: &mut Rng) -> Result<Action, RuntimeError> {
    match agent {
        Agent::Random => Ok(legal[rng.random_range(0..legal.len())]),
        Agent::Policy(p) => {
            let mut buf = Vec::new();
            Ok(game.program.policy_move(st, *p, rng, &mut buf)?.unwrap_or(legal[0]))
        }
        Agent::Mcts { iterations, cfg, choice, fallback } => {
            if legal.len() == 1 {
                return Ok(legal[0]);
            }
            let (mv, mean) = decide_with(game, st, cfg, &WinEval, *iterations, rng, *choice)?;
            if let Some((p, below)) = fallback
                && mean < *below
            {
                let mut buf = Vec::new();
                if let Some(m) = game.program.policy_move(st, *p, rng, &mut buf)?
                    && legal.contains(&m)
                {
                    return Ok(m);
                }
            }
            Ok(mv)
        }
    }
}
