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

/// Reward 1 for the side that won, 0 otherwise (loss, draw, cut-off), as in HexMage. A win
/// decided by a `game.stuck` line (the side to move has no move: checkers, Othello's end) is
/// read from the game's status, which needs the state's (empty) move list; other wins are
/// recorded in the state.
pub struct WinEval<'a>(pub &'a WgdlGame);

thread_local! {
    /// The move list of a state whose win a `game.stuck` line may decide (reused).
    static STUCK_BUF: std::cell::RefCell<Vec<Action>> = const { std::cell::RefCell::new(Vec::new()) };
}

impl Evaluator<State> for WinEval<'_> {
    fn value(&self, st: &State, player: usize) -> f64 {
        let won = match st.outcome {
            0 if !self.0.program.stuck_outcomes.is_empty() => STUCK_BUF.with(|b| {
                let mut legal = b.borrow_mut();
                match self.0.program.legal_actions(st, &mut legal) {
                    Ok(()) => match self.0.program.status(st, &legal) {
                        crate::wgdl::Status::Won(k) => Some(k as usize),
                        _ => None,
                    },
                    Err(_) => None,
                }
            }),
            o if o >= 2 => Some(o as usize - 2),
            _ => None,
        };
        if won == Some(player) { 1.0 } else { 0.0 }
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
            let (mv, mean) = decide_with(game, st, cfg, &WinEval(game), *iterations, rng, *choice)?;
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
