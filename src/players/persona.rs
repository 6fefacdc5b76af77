//! Playing one game as a persona, a vanilla MCTS or a random player, through the one shared
//! interpreter and the one MCTS: the measured game ([`Measured`]: any game plus a running mean
//! of a measure along the moves), the reward the search maximizes ([`Reward`]: beat the goal,
//! or the measure scaled), and [`play_game`].
//!
//! The measure lives in the searched state, so a rollout's "mean legal moves" covers the real
//! moves made so far, the tree's moves and the rollout's, as the paper's metric does.

use crate::game::Goals;
use crate::game::{Game, WgdlGame};
use crate::rng::Rng;
use crate::search::formula::Formula;
use crate::search::mcts::{Evaluator, FinalChoice, MctsConfig, decide_with};
use crate::wgdl::probe::ValueRef;
use crate::wgdl::{Action, RuntimeError, State, Status};
use rand::RngExt;
use std::cell::Cell;

/// What a persona measures in a state.
#[derive(Clone, Copy, Debug)]
pub enum Measure {
    /// A game value (`game.score`, `me.made`).
    Value(ValueRef),
    /// The number of legal moves.
    LegalMoves,
}

/// A WGDL game whose states also carry the running sum of a measure, taken before each move.
#[derive(Clone, Debug)]
pub struct Measured {
    pub game: WgdlGame,
    pub measure: Measure,
    /// Averaged over the moves (`mean`) rather than read at the end (`final`).
    pub mean: bool,
}

/// A state of a [`Measured`] game.
#[derive(Debug)]
pub struct MState {
    pub st: State,
    /// Σ of the measure before each move, and the number of moves.
    pub sum: f64,
    pub n: u32,
    /// The number of legal moves in `st` when [`Game::legal`] has listed them since the last
    /// move ([`NO_HINT`] otherwise): searches list the moves right before they play one, so the
    /// `legal_moves` measure need not list them twice.
    legal_hint: Cell<u32>,
}

const NO_HINT: u32 = u32::MAX;

impl MState {
    /// A state of the measured game: `st` with the measure's running sum over `n` moves.
    pub fn new(st: State, sum: f64, n: u32) -> MState {
        MState { st, sum, n, legal_hint: Cell::new(NO_HINT) }
    }
}

impl Clone for MState {
    fn clone(&self) -> MState {
        MState { st: self.st.clone(), sum: self.sum, n: self.n, legal_hint: self.legal_hint.clone() }
    }
    /// Reuses the buffers of `self.st` (searches copy states into scratch space).
    fn clone_from(&mut self, src: &MState) {
        self.st.clone_from(&src.st);
        self.sum = src.sum;
        self.n = src.n;
        self.legal_hint.set(src.legal_hint.get());
    }
}

thread_local! {
    static LEGAL: std::cell::RefCell<Vec<Action>> = const { std::cell::RefCell::new(Vec::new()) };
}

impl Measured {
    /// The measure in `st` now.
    pub fn now(&self, st: &State) -> Result<f64, RuntimeError> {
        Ok(match self.measure {
            Measure::Value(v) => self.game.program.read(st, v),
            Measure::LegalMoves => LEGAL.with(|l| {
                let mut l = l.borrow_mut();
                self.game.legal(st, &mut l).map(|_| l.len() as f64)
            })?,
        })
    }

    /// The persona's value of a (final) state: the mean over its moves, or the value now.
    pub fn value(&self, s: &MState) -> f64 {
        if self.mean && s.n > 0 { s.sum / s.n as f64 } else { self.now(&s.st).unwrap_or(0.0) }
    }

    /// The same game on chance seed `seed`.
    pub fn seeded(&self, seed: u64) -> Measured {
        Measured { game: self.game.clone().with_seed(seed), ..self.clone() }
    }
}

impl Game for Measured {
    type State = MState;
    type Move = Action;
    type Error = RuntimeError;

    fn initial(&self) -> Result<MState, RuntimeError> {
        Ok(MState { st: self.game.initial()?, sum: 0.0, n: 0, legal_hint: Cell::new(NO_HINT) })
    }
    fn legal(&self, s: &MState, out: &mut Vec<Action>) -> Result<(), RuntimeError> {
        self.game.legal(&s.st, out)?;
        s.legal_hint.set(out.len() as u32);
        Ok(())
    }
    fn apply(&self, s: &mut MState, mv: Action) -> Result<(), RuntimeError> {
        if self.mean {
            s.sum += match (self.measure, s.legal_hint.get()) {
                (Measure::LegalMoves, n) if n != NO_HINT => n as f64,
                _ => self.now(&s.st)?,
            };
            s.n += 1;
        }
        s.legal_hint.set(NO_HINT);
        self.game.apply(&mut s.st, mv)
    }
    fn status(&self, s: &MState, legal: &[Action]) -> Status {
        self.game.status(&s.st, legal)
    }
    fn to_move(&self, s: &MState) -> usize {
        self.game.to_move(&s.st)
    }
    fn hash(&self, s: &MState) -> u64 {
        self.game.hash(&s.st) ^ crate::rng::mix(s.sum.to_bits() ^ ((s.n as u64) << 40))
    }
    fn group(&self, mv: Action) -> usize {
        self.game.group(mv)
    }
    fn group_weights(&self) -> Vec<f64> {
        self.game.group_weights()
    }
    fn playout_move(&self, s: &MState, rng: &mut Rng) -> Result<Option<Action>, RuntimeError> {
        self.game.playout_move(&s.st, rng)
    }
    fn hidden_chance(&self) -> bool {
        self.game.hidden_chance()
    }
    fn reseed(&self, s: &mut MState, seed: u64) {
        self.game.reseed(&mut s.st, seed)
    }
}

impl Goals for Measured {
    fn goals_reached(&self, s: &MState) -> usize {
        self.game.goals_reached(&s.st)
    }
    fn n_goals(&self) -> usize {
        self.game.n_goals()
    }
}

/// What a search maximizes at the end of a rollout.
#[derive(Clone, Copy, Debug, serde::Serialize, serde::Deserialize)]
pub enum Reward {
    /// 1 when the measure beats the goal (above it for `max`, below for `min`), else 0: the
    /// paper's "win".
    Binary { goal: f64, maximize: bool },
    /// The measure mapped linearly from [lo, hi] onto [0, 1] (clamped), turned over for `min`.
    Continuous { lo: f64, hi: f64, maximize: bool },
}

/// [`Reward`] as an MCTS evaluator of a [`Measured`] game.
pub struct RewardEval<'a> {
    pub game: &'a Measured,
    pub reward: Reward,
}

impl Evaluator<MState> for RewardEval<'_> {
    fn value(&self, s: &MState, _player: usize) -> f64 {
        let v = self.game.value(s);
        match self.reward {
            Reward::Binary { goal, maximize } => ((maximize && v > goal) || (!maximize && v < goal)) as u8 as f64,
            Reward::Continuous { lo, hi, maximize } => {
                let x = ((v - lo) / (hi - lo)).clamp(0.0, 1.0);
                if maximize { x } else { 1.0 - x }
            }
        }
    }
}

/// Who plays.
#[derive(Clone, Debug)]
pub enum Agent {
    Random,
    /// MCTS with this selection formula (the persona's, or UCB1 for vanilla) and reward.
    Mcts {
        formula: Formula,
        reward: Reward,
    },
}

/// How the MCTS agents search (the paper: 250 iterations, full expansion, rollouts of
/// `20 − moves made`, the formula picks the move).
#[derive(Clone, Copy, Debug)]
pub struct Search {
    pub iterations: u64,
    /// Rollout length = horizon − moves made; 0 = to the end of the game.
    pub rollout_horizon: u32,
    pub final_choice: FinalChoice,
}

/// One finished game.
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct GameResult {
    /// The persona's measure (mean over the moves or final).
    pub measure: f64,
    /// The score game value at the end.
    pub score: f64,
    /// Mean number of legal moves before each move.
    pub legal_moves: f64,
    pub moves: u32,
}

/// Plays the game on chance seed `seed` to its end with `agent`; `rng` drives the agent only.
pub fn play_game(
    base: &Measured,
    seed: u64,
    score: ValueRef,
    agent: &Agent,
    search: &Search,
    rng: &mut Rng,
) -> Result<GameResult, RuntimeError> {
    play_game_observed(base, seed, score, agent, search, rng, &mut |_| {})
}

/// The move an MCTS persona (`cfg`: its formula, full expansion) makes in `s` after `moves`
/// moves, as [`play_game`] plays it (the same draws from `rng`); `s` has more than one legal move.
pub fn persona_move(
    g: &Measured,
    s: &MState,
    cfg: &mut MctsConfig,
    reward: Reward,
    search: &Search,
    moves: u32,
    rng: &mut Rng,
) -> Result<Action, RuntimeError> {
    // `chance fair`: the search plays on a copy with a stream of its own.
    let hidden;
    let root = if g.hidden_chance() {
        let mut copy = s.clone();
        g.reseed(&mut copy, rng.random::<u64>());
        hidden = copy;
        &hidden
    } else {
        s
    };
    cfg.max_playout_moves = if search.rollout_horizon > 0 { search.rollout_horizon.saturating_sub(moves) } else { u32::MAX };
    let eval = RewardEval { game: g, reward };
    Ok(decide_with(g, root, cfg, &eval, search.iterations, rng, search.final_choice)?.0)
}

/// [`play_game`], showing `seen` the start and the state after every move (the same game: the
/// observer draws nothing).
pub fn play_game_observed(
    base: &Measured,
    seed: u64,
    score: ValueRef,
    agent: &Agent,
    search: &Search,
    rng: &mut Rng,
    seen: &mut dyn FnMut(&crate::wgdl::State),
) -> Result<GameResult, RuntimeError> {
    let g = base.seeded(seed);
    let mut s = g.initial()?;
    seen(&s.st);
    let mut legal = Vec::new();
    let mut legal_sum = 0usize;
    let mut moves = 0u32;
    // The search settings of an MCTS player (none for the random player).
    let mut mcts = match agent {
        Agent::Mcts { formula, reward } => {
            Some((MctsConfig { formula: formula.clone(), full_expansion: true, ..MctsConfig::default() }, *reward))
        }
        Agent::Random => None,
    };
    loop {
        g.legal(&s, &mut legal)?;
        if g.status(&s, &legal) != Status::Running {
            break;
        }
        legal_sum += legal.len();
        let mv = match &mut mcts {
            None => legal[rng.random_range(0..legal.len())],
            Some(_) if legal.len() == 1 => legal[0],
            Some((cfg, reward)) => persona_move(&g, &s, cfg, *reward, search, moves, rng)?,
        };
        g.apply(&mut s, mv)?;
        seen(&s.st);
        moves += 1;
    }
    Ok(GameResult {
        measure: g.value(&s),
        score: g.game.program.read(&s.st, score),
        legal_moves: if moves > 0 { legal_sum as f64 / moves as f64 } else { 0.0 },
        moves,
    })
}
