//! The `Game` contract: everything a searcher may know about a game. Searchers (MCTS, NMCS,
//! random play) are written against this trait only and never see WGDL. The contract's
//! extensions live here too — [`Goals`] (ordered goals, for MCTS sub-games) and [`Features`]
//! (Player2's mobility, novelty and goal values) — so that games depend on this module and
//! searchers on it, never a game on a searcher.
//!
//! The WGDL implementation, [`WgdlGame`], wraps a compiled [`Program`]; hand-written native games
//! under `tests/` and `benches/` implement the same trait so that trajectories and speed can be
//! compared move for move.

pub use crate::status::Status;
use crate::wgdl::program::{Action, Program, RuntimeError, State};
use std::sync::Arc;

/// Games whose progress through ordered goals the search can see (WGDL goals).
pub trait Goals: Game {
    fn goals_reached(&self, state: &Self::State) -> usize;
    fn n_goals(&self) -> usize;
}

/// What Player2's heuristic and values read besides the [`Game`] contract (GDL goals, mobility, novelty).
pub trait Features: Game {
    /// How many legal moves `role` has in `state` (1 when it can only wait).
    fn mobility(&self, state: &Self::State, role: usize) -> usize;
    /// How much `state` differs from `initial`, in [0, 1].
    fn novelty(&self, state: &Self::State, initial: &Self::State) -> f64;
    /// `role`'s goal in a terminal state, 0–100.
    fn goal(&self, state: &Self::State, role: usize) -> f64;
    /// The action `role` contributes to `mv`, where a move is a joint move of choices made at
    /// once (GDL); `None`, the default, where a move is one role's choice.
    fn own_action(&self, _mv: Self::Move, _role: usize) -> Option<usize> {
        None
    }
}

/// A game as searchers see it. States are values (`Clone` is cheap); moves are `Copy`.
pub trait Game {
    type State: Clone;
    type Move: Copy + Eq + std::fmt::Debug;
    type Error: std::error::Error;

    fn initial(&self) -> Result<Self::State, Self::Error>;
    /// Fills `out` (cleared first) with the legal moves.
    fn legal(&self, state: &Self::State, out: &mut Vec<Self::Move>) -> Result<(), Self::Error>;
    fn apply(&self, state: &mut Self::State, mv: Self::Move) -> Result<(), Self::Error>;
    /// Whether the game is over, given the legal moves just generated.
    fn status(&self, state: &Self::State, legal: &[Self::Move]) -> Status;
    /// Side to move (0 in single-player games).
    fn to_move(&self, state: &Self::State) -> usize;
    /// A hash of the state for duplicate detection.
    fn hash(&self, state: &Self::State) -> u64;
    /// Action group of a move (for group-weighted playouts) and the groups' weights; by
    /// default one group, so playouts are uniform over the legal moves.
    fn group(&self, _mv: Self::Move) -> usize {
        0
    }
    fn group_weights(&self) -> Vec<f64> {
        vec![1.0]
    }
    /// The game's own playout policy's move here, if it has one (`None`: searchers play
    /// random or group-weighted playouts).
    fn playout_move(&self, _state: &Self::State, _rng: &mut crate::rng::Rng) -> Result<Option<Self::Move>, Self::Error> {
        Ok(None)
    }
    /// Whether the game wants its chance hidden from searches (WGDL `chance fair`): a searcher
    /// then [`reseed`](Game::reseed)s its copy of the root state, so that its simulations draw
    /// from an independent stream instead of seeing the real future.
    fn hidden_chance(&self) -> bool {
        false
    }
    /// Replaces the state's random stream by one starting at `seed` (no-op for games without
    /// chance).
    fn reseed(&self, _state: &mut Self::State, _seed: u64) {}
}

/// A WGDL program as a [`Game`].
#[derive(Clone, Debug)]
pub struct WgdlGame {
    pub program: Arc<Program>,
    /// A WGDL `policy` that plays the playouts (index into `program.policies`).
    pub playout_policy: Option<usize>,
    /// Where the game's chance stream starts ([`Program::initial_state_seeded`]).
    pub seed: u64,
}

impl WgdlGame {
    pub fn new(program: Arc<Program>) -> WgdlGame {
        WgdlGame { program, playout_policy: None, seed: 0 }
    }

    /// The same game with its chance stream starting at `seed`.
    pub fn with_seed(mut self, seed: u64) -> WgdlGame {
        self.seed = seed;
        self
    }

    /// The same game with playouts played by the named policy.
    pub fn with_playout_policy(mut self, name: &str) -> Option<WgdlGame> {
        self.playout_policy = Some(self.program.policy_index(name)?);
        Some(self)
    }
}

impl WgdlGame {
    /// Plays chance's pending moves (a game with `byChance` only).
    #[inline]
    fn settle_chance(&self, state: &mut State) -> Result<(), RuntimeError> {
        if !self.program.has_chance {
            return Ok(());
        }
        CHANCE_BUF.with(|b| match b.try_borrow_mut() {
            Ok(mut buf) => self.program.resolve_chance(state, &mut buf),
            Err(_) => self.program.resolve_chance(state, &mut Vec::new()),
        })
    }
}

thread_local! {
    /// Scratch move list for chance's moves (no allocation per move).
    static CHANCE_BUF: std::cell::RefCell<Vec<Action>> = const { std::cell::RefCell::new(Vec::new()) };
    /// Scratch move list for policy playouts (no allocation per playout move).
    static POLICY_BUF: std::cell::RefCell<Vec<Action>> = const { std::cell::RefCell::new(Vec::new()) };
}

impl Game for WgdlGame {
    type State = State;
    type Move = Action;
    type Error = RuntimeError;

    fn initial(&self) -> Result<State, RuntimeError> {
        let mut st = self.program.initial_state_seeded(self.seed)?;
        self.settle_chance(&mut st)?;
        Ok(st)
    }
    fn legal(&self, state: &State, out: &mut Vec<Action>) -> Result<(), RuntimeError> {
        self.program.legal_actions(state, out)
    }
    /// The move, then chance's moves (`byChance`) drawn from the state's stream until a player
    /// chooses again: searchers never stand at a chance node.
    fn apply(&self, state: &mut State, mv: Action) -> Result<(), RuntimeError> {
        self.program.apply(state, mv)?;
        self.settle_chance(state)
    }
    fn status(&self, state: &State, legal: &[Action]) -> Status {
        self.program.status(state, legal)
    }
    fn to_move(&self, state: &State) -> usize {
        state.to_move as usize
    }
    fn hash(&self, state: &State) -> u64 {
        state.fingerprint()
    }
    #[inline]
    fn group(&self, mv: Action) -> usize {
        self.program.action_groups[mv.def as usize] as usize
    }
    fn group_weights(&self) -> Vec<f64> {
        self.program.groups.iter().map(|g| g.weight).collect()
    }
    fn playout_move(&self, state: &State, rng: &mut crate::rng::Rng) -> Result<Option<Action>, RuntimeError> {
        match self.playout_policy {
            None => Ok(None),
            Some(p) => POLICY_BUF.with(|b| self.program.policy_move(state, p, rng, &mut b.borrow_mut())),
        }
    }
    fn hidden_chance(&self) -> bool {
        self.program.chance_fair
    }
    fn reseed(&self, state: &mut State, seed: u64) {
        state.rng = crate::rng::mix(seed);
    }
}

impl Goals for WgdlGame {
    fn goals_reached(&self, state: &State) -> usize {
        state.goal as usize
    }
    fn n_goals(&self) -> usize {
        self.program.goals.len()
    }
}

/// The thesis's action-group playout choice: draw a group by weight among the groups that have a
/// legal move (weights renormalized over the non-empty groups), then a move uniformly inside it.
/// With one group this is uniform random play. Allocates nothing: it counts in a fixed array.
pub fn pick_grouped<G: Game>(game: &G, legal: &[G::Move], weights: &[f64], rng: &mut crate::rng::Rng) -> G::Move {
    use rand::RngExt;
    // Games have a handful of groups; more than this many fall back to uniform choice.
    const MAX_GROUPS: usize = 16;
    if weights.len() > MAX_GROUPS || weights.len() <= 1 {
        return legal[rng.random_range(0..legal.len())];
    }
    let mut present = [0usize; MAX_GROUPS];
    if weights.len() <= 8 && legal.len() < 256 {
        // Eight 8-bit counters in one register: no store-to-load chain through memory.
        let mut packed = 0u64;
        for &m in legal {
            packed += 1u64 << (8 * game.group(m));
        }
        for (g, n) in present.iter_mut().take(8).enumerate() {
            *n = (packed >> (8 * g)) as usize & 0xff;
        }
    } else {
        for &m in legal {
            present[game.group(m)] += 1;
        }
    }
    let total: f64 = weights.iter().zip(&present).filter(|(_, n)| **n > 0).map(|(w, _)| w).sum();
    if total <= 0.0 {
        return legal[rng.random_range(0..legal.len())];
    }
    let mut x = rng.random::<f64>() * total;
    let mut group = present[..weights.len()].iter().rposition(|&n| n > 0).unwrap_or(0);
    for (g, (w, n)) in weights.iter().zip(&present).enumerate() {
        if *n == 0 {
            continue;
        }
        if x < *w {
            group = g;
            break;
        }
        x -= w;
    }
    let k = rng.random_range(0..present[group]);
    *legal.iter().filter(|&&m| game.group(m) == group).nth(k).expect("k < count of the group")
}

/// Player2's view of a WGDL game: mobility is the moves of the side to move (1 for a side
/// waiting its turn), novelty the share of state slots that differ from the initial state, the
/// goal 100 / 50 / 0 for a win / a draw or limit / a loss.
impl Features for WgdlGame {
    fn mobility(&self, st: &Self::State, role: usize) -> usize {
        if self.to_move(st) != role {
            return 1;
        }
        let mut legal = Vec::new();
        self.legal(st, &mut legal).map_or(0, |_| legal.len())
    }
    fn novelty(&self, st: &Self::State, initial: &Self::State) -> f64 {
        let n = st.slots.len().max(initial.slots.len());
        if n == 0 {
            return 0.0;
        }
        let same = st.slots.iter().zip(&initial.slots).filter(|(a, b)| a == b).count();
        (n - same) as f64 / n as f64
    }
    fn goal(&self, st: &Self::State, role: usize) -> f64 {
        match self.status(st, &[]) {
            crate::wgdl::Status::Won(k) if k as usize == role => 100.0,
            crate::wgdl::Status::Won(_) => 0.0,
            _ => 50.0,
        }
    }
}
