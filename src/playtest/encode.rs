//! Action encodings (Monster Carlo §2.3): how a game's legal moves are offered to the search.
//!
//! **Flat**: one choice among all legal moves (the game as it is). **Factored**: a hierarchy of
//! two choices — first the *kind* of move (the WGDL action: "land or collect"), then a move of
//! that kind ("which column"). The kind level is offered only when moves of more than one kind
//! are legal, as in the thesis's "land vs. collect, offered only when a monster is alive"; with a
//! single kind the moves are offered directly. The encoding is an adapter over any game, so the
//! one MCTS searches either tree without knowing which it is.
//!
//! Playout weights (the thesis's softmax over integer preferences) are per kind: a playout picks
//! a kind with probability ∝ exp(w) among the kinds that have a legal move, then a move of that
//! kind uniformly ([`crate::game::pick_grouped`] with the adapter's kinds as groups). Under the
//! factored encoding that is exactly the thesis's `Select(n, weights)` at the kind level.

use crate::game::Goals;
use crate::game::{Game, WgdlGame};
use crate::wgdl::{Action, ActionKind, Status};

/// A move of an [`Encoded`] game.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EMove<M> {
    /// Choose kind `k` (factored encoding's first level); `M` is the first legal move of that
    /// kind, kept so that the game's status can be asked with a non-empty move list.
    Kind(u16, M),
    /// A move of the game.
    Move(M),
}

/// A state of an [`Encoded`] game: the game's state and the kind chosen, if a kind has been
/// chosen and its move not yet made.
#[derive(Debug)]
pub struct EState<S> {
    pub st: S,
    pub pending: Option<u16>,
}

impl<S: Clone> Clone for EState<S> {
    fn clone(&self) -> EState<S> {
        EState { st: self.st.clone(), pending: self.pending }
    }
    fn clone_from(&mut self, src: &EState<S>) {
        self.st.clone_from(&src.st);
        self.pending = src.pending;
    }
}

/// `game` under the flat or the factored encoding.
#[derive(Clone, Debug)]
pub struct Encoded<G> {
    pub game: G,
    pub factored: bool,
    /// Kind of each action definition (index: `Action::def`): the player actions numbered in
    /// declaration order; rules and hooks, which are never moves, get `u16::MAX`.
    kind_of: Vec<u16>,
    n_kinds: usize,
}

thread_local! {
    static INNER: std::cell::RefCell<Vec<Action>> = const { std::cell::RefCell::new(Vec::new()) };
}

impl Encoded<WgdlGame> {
    pub fn new(game: WgdlGame, factored: bool) -> Encoded<WgdlGame> {
        let mut n = 0u16;
        let kind_of = game
            .program
            .actions
            .iter()
            .map(|a| {
                if a.kind == ActionKind::Player {
                    n += 1;
                    n - 1
                } else {
                    u16::MAX
                }
            })
            .collect();
        Encoded { game, factored, kind_of, n_kinds: n as usize }
    }

    /// The kind of one of the game's moves (see [`Encoded::kind_names`]).
    pub fn kind(&self, m: Action) -> usize {
        self.kind_of[m.def as usize] as usize
    }

    /// The kinds' names (their actions' names), index = kind.
    pub fn kind_names(&self) -> Vec<String> {
        self.game.program.actions.iter().zip(&self.kind_of).filter(|(_, k)| **k != u16::MAX).map(|(a, _)| a.name.clone()).collect()
    }

    /// The game's own moves along a trace of encoded moves (kind choices dropped).
    pub fn moves(trace: &[EMove<Action>]) -> Vec<Action> {
        trace
            .iter()
            .filter_map(|m| match m {
                EMove::Move(a) => Some(*a),
                EMove::Kind(..) => None,
            })
            .collect()
    }
}

impl Game for Encoded<WgdlGame> {
    type State = EState<crate::wgdl::State>;
    type Move = EMove<Action>;
    type Error = crate::wgdl::RuntimeError;

    fn initial(&self) -> Result<Self::State, Self::Error> {
        Ok(EState { st: self.game.initial()?, pending: None })
    }
    fn legal(&self, s: &Self::State, out: &mut Vec<Self::Move>) -> Result<(), Self::Error> {
        out.clear();
        INNER.with(|b| {
            let mut inner = b.borrow_mut();
            self.game.legal(&s.st, &mut inner)?;
            match s.pending {
                Some(k) => out.extend(inner.iter().filter(|&&m| self.kind(m) == k as usize).map(|&m| EMove::Move(m))),
                None if self.factored => {
                    for &m in inner.iter() {
                        let k = self.kind(m) as u16;
                        if !out.iter().any(|e| matches!(e, EMove::Kind(j, _) if *j == k)) {
                            out.push(EMove::Kind(k, m));
                        }
                    }
                    if out.len() == 1 {
                        out.clear();
                        out.extend(inner.iter().map(|&m| EMove::Move(m)));
                    }
                }
                None => out.extend(inner.iter().map(|&m| EMove::Move(m))),
            }
            Ok(())
        })
    }
    fn apply(&self, s: &mut Self::State, mv: Self::Move) -> Result<(), Self::Error> {
        match mv {
            EMove::Kind(k, _) => s.pending = Some(k),
            EMove::Move(m) => {
                s.pending = None;
                self.game.apply(&mut s.st, m)?;
            }
        }
        Ok(())
    }
    fn status(&self, s: &Self::State, legal: &[Self::Move]) -> Status {
        match legal.first() {
            None => self.game.status(&s.st, &[]),
            Some(EMove::Kind(_, m) | EMove::Move(m)) => self.game.status(&s.st, std::slice::from_ref(m)),
        }
    }
    fn to_move(&self, s: &Self::State) -> usize {
        self.game.to_move(&s.st)
    }
    fn hash(&self, s: &Self::State) -> u64 {
        self.game.hash(&s.st) ^ crate::rng::mix(s.pending.map_or(0, |k| k as u64 + 1))
    }
    /// The move's kind: the playout weights are per kind.
    fn group(&self, mv: Self::Move) -> usize {
        match mv {
            EMove::Kind(k, _) => k as usize,
            EMove::Move(m) => self.kind(m),
        }
    }
    fn group_weights(&self) -> Vec<f64> {
        vec![1.0; self.n_kinds]
    }
    fn playout_move(&self, s: &Self::State, rng: &mut crate::rng::Rng) -> Result<Option<Self::Move>, Self::Error> {
        // A policy-played game: the policy picks the game's move directly (its kind level, if
        // any, is implied; `apply` accepts a move without a pending kind).
        Ok(self.game.playout_move(&s.st, rng)?.map(EMove::Move))
    }
    fn hidden_chance(&self) -> bool {
        self.game.hidden_chance()
    }
    fn reseed(&self, s: &mut Self::State, seed: u64) {
        self.game.reseed(&mut s.st, seed)
    }
}

impl Goals for Encoded<WgdlGame> {
    fn goals_reached(&self, s: &Self::State) -> usize {
        self.game.goals_reached(&s.st)
    }
    fn n_goals(&self) -> usize {
        self.game.n_goals()
    }
}
