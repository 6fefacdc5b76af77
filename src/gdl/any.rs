//! What the commands load: a GDL game on the reasoner its size allows. Grounding is tried
//! first ([`GdlGame`], a bit set per state); a description whose grounding passes the limits
//! ([`super::ground::GroundLimits`]) is played through the non-ground evaluator instead
//! ([`NonGroundGame`], slower, no size limit). Both sit behind one type, [`Gdl`], with one
//! state type, [`GdlAnyState`], so that a match, the GGP player and `check` need not know which.

use super::nonground::{NgState, NonGroundGame};
use super::{GdlGame, GdlState, JointMove};
use crate::game::Features;
use crate::game::Game;
use crate::game::Goals;
use crate::game::Status;

/// A GDL game, grounded or not.
pub enum Gdl {
    Ground(GdlGame),
    NonGround(NonGroundGame),
}

/// A state of a [`Gdl`] game (of the same kind as the game).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum GdlAnyState {
    Ground(GdlState),
    NonGround(NgState),
}

/// Calls `$e` on the game and its state of the same kind. A state of the other kind cannot
/// come from this game (every state starts from [`Game::initial`]).
macro_rules! both {
    ($g:expr, $st:expr, |$game:ident, $s:ident| $e:expr) => {
        match ($g, $st) {
            (Gdl::Ground($game), GdlAnyState::Ground($s)) => $e,
            (Gdl::NonGround($game), GdlAnyState::NonGround($s)) => $e,
            _ => unreachable!("a state of the other reasoner"),
        }
    };
}

macro_rules! each {
    ($g:expr, |$game:ident| $e:expr) => {
        match $g {
            Gdl::Ground($game) => $e,
            Gdl::NonGround($game) => $e,
        }
    };
}

impl Gdl {
    /// Which reasoner plays it, for messages: `grounded (…)` or `non-ground`.
    pub fn reasoner_name(&self) -> String {
        match self {
            Gdl::Ground(g) => {
                let (atoms, rules) = g.size();
                format!("grounded, {atoms} atoms, {rules} dynamic rules, {:?} reasoner", g.reasoner())
            }
            Gdl::NonGround(_) => "non-ground evaluator (grounding passed its limits)".into(),
        }
    }

    pub fn roles(&self) -> usize {
        each!(self, |g| g.roles())
    }

    pub fn role_name(&self, r: usize) -> String {
        each!(self, |g| g.role_name(r))
    }

    pub fn action_name(&self, r: usize, i: usize) -> String {
        each!(self, |g| g.action_name(r, i))
    }

    pub fn action_index(&self, r: usize, text: &str) -> Option<usize> {
        each!(self, |g| g.action_index(r, text))
    }

    /// Role `r`'s action in a joint move.
    pub fn action_of(mv: JointMove, r: usize) -> usize {
        GdlGame::action_of(mv, r)
    }

    /// A joint move as text: `(mark 1 1) noop`.
    pub fn show_move(&self, mv: JointMove) -> String {
        (0..self.roles()).map(|r| self.action_name(r, Self::action_of(mv, r))).collect::<Vec<_>>().join(" ")
    }

    pub fn legal_actions(&self, st: &GdlAnyState) -> Vec<Vec<usize>> {
        both!(self, st, |g, s| g.legal_actions(s))
    }

    pub fn goal_values(&self, st: &GdlAnyState) -> Vec<u8> {
        both!(self, st, |g, s| g.goal_values(s))
    }

    pub fn show_state(&self, st: &GdlAnyState) -> Vec<String> {
        both!(self, st, |g, s| g.show_state(s))
    }

    /// The state's picture (`crate::view::facts_scene`): its facts, a grid where a relation
    /// makes one, its status (the goal values once it is over) and the roles with a choice.
    pub fn scene(&self, st: &GdlAnyState, title: &str, moves: u32) -> crate::view::Scene {
        let mut legal = Vec::new();
        let status = match self.legal(st, &mut legal) {
            Err(e) => format!("error: {e}"),
            Ok(()) => match self.status(st, &legal) {
                Status::Running => "Running".to_string(),
                s => {
                    let goals = self.goal_values(st);
                    let shown: Vec<String> =
                        (0..self.roles()).map(|r| format!("{} {}", self.role_name(r), goals.get(r).copied().unwrap_or(0))).collect();
                    format!("{s:?} (goals: {})", shown.join(", "))
                }
            },
        };
        let choosing: Vec<String> = if status == "Running" {
            let per_role = self.legal_actions(st);
            (0..self.roles()).filter(|&r| per_role.get(r).is_some_and(|a| a.len() > 1)).map(|r| self.role_name(r)).collect()
        } else {
            Vec::new()
        };
        let info = crate::view::FactsInfo { status, to_move: (!choosing.is_empty()).then(|| choosing.join(", ")), moves };
        crate::view::facts_scene(title, &self.show_state(st), &info)
    }
}

/// The grounded reasoner cannot fail; the non-ground one fails when a state's evaluation
/// passes its budget ([`super::nonground::Overflow`]).
impl Game for Gdl {
    type State = GdlAnyState;
    type Move = JointMove;
    type Error = super::nonground::Overflow;

    fn initial(&self) -> Result<GdlAnyState, Self::Error> {
        Ok(match self {
            Gdl::Ground(g) => GdlAnyState::Ground(g.initial().unwrap_or_else(|e| match e {})),
            Gdl::NonGround(g) => GdlAnyState::NonGround(g.initial()?),
        })
    }
    fn legal(&self, st: &GdlAnyState, out: &mut Vec<JointMove>) -> Result<(), Self::Error> {
        match (self, st) {
            (Gdl::Ground(g), GdlAnyState::Ground(s)) => g.legal(s, out).map_err(|e| match e {}),
            (Gdl::NonGround(g), GdlAnyState::NonGround(s)) => g.legal(s, out),
            _ => unreachable!("a state of the other reasoner"),
        }
    }
    fn apply(&self, st: &mut GdlAnyState, mv: JointMove) -> Result<(), Self::Error> {
        match (self, st) {
            (Gdl::Ground(g), GdlAnyState::Ground(s)) => g.apply(s, mv).map_err(|e| match e {}),
            (Gdl::NonGround(g), GdlAnyState::NonGround(s)) => g.apply(s, mv),
            _ => unreachable!("a state of the other reasoner"),
        }
    }
    fn status(&self, st: &GdlAnyState, legal: &[JointMove]) -> Status {
        both!(self, st, |g, s| g.status(s, legal))
    }
    fn to_move(&self, st: &GdlAnyState) -> usize {
        both!(self, st, |g, s| g.to_move(s))
    }
    fn hash(&self, st: &GdlAnyState) -> u64 {
        both!(self, st, |g, s| g.hash(s))
    }
}

impl Goals for Gdl {
    fn goals_reached(&self, _st: &GdlAnyState) -> usize {
        0
    }
    fn n_goals(&self) -> usize {
        1
    }
}

impl Features for Gdl {
    fn mobility(&self, st: &GdlAnyState, role: usize) -> usize {
        both!(self, st, |g, s| g.mobility(s, role))
    }
    fn novelty(&self, st: &GdlAnyState, initial: &GdlAnyState) -> f64 {
        match (self, st, initial) {
            (Gdl::Ground(g), GdlAnyState::Ground(s), GdlAnyState::Ground(i)) => g.novelty(s, i),
            (Gdl::NonGround(g), GdlAnyState::NonGround(s), GdlAnyState::NonGround(i)) => g.novelty(s, i),
            _ => unreachable!("a state of the other reasoner"),
        }
    }
    fn goal(&self, st: &GdlAnyState, role: usize) -> f64 {
        both!(self, st, |g, s| g.goal(s, role))
    }
    fn own_action(&self, mv: JointMove, role: usize) -> Option<usize> {
        Some(GdlGame::action_of(mv, role))
    }
}
