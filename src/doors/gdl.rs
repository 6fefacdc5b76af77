//! A GDL game behind a door: roles are players, a role's ground actions (numbered once, when
//! the description is grounded) are its actions, so the index is stable and the same number
//! may mean different moves for different roles (`action_to_string(player, action)` tells).
//! `num_distinct_actions` is the largest role's count. The observation is one 0/1 per base
//! proposition, in grounding order; the text is the true facts, one per line, sorted.
//!
//! A description too large to ground is refused: the non-ground evaluator numbers actions as it
//! meets them, which no framework's fixed action set allows. Whether a game has simultaneous
//! moves is read off random play unless the caller says (a node where two roles have a choice
//! makes it simultaneous); a node where one role has a choice is a sequential node for it, the
//! others playing their only action, as OpenSpiel's simultaneous games allow.

use super::{DoorError, DoorState, Info, Inner, OpenOptions, Utility};
use crate::game::Game;
use crate::gdl::{GdlGame, GdlState, JointMove, game::joint_part};
use crate::status::Status;
use rand::RngExt;
use std::path::Path;

/// `max_game_length` of a GDL game: descriptions bound their length by their own rules, which
/// the door cannot read; this is what it declares.
pub const MAX_GAME_LENGTH: usize = 10_000;

/// Random games played to tell whether a game has simultaneous moves, and their length cap.
const PROBE_GAMES: u64 = 64;
const PROBE_MOVES: usize = 400;

pub struct GdlDoor {
    pub game: GdlGame,
    pub info: Info,
}

impl GdlDoor {
    pub fn open(path: &Path, opts: &OpenOptions) -> anyhow::Result<GdlDoor> {
        if opts.reward.is_some() {
            anyhow::bail!("{}: a reward value is for WGDL games; a GDL game's returns are its goals", path.display());
        }
        let (gdl, _) = crate::gdl::load_reported(path, crate::gdl::ground::GroundLimits::default())?;
        let game = match gdl {
            crate::gdl::Gdl::Ground(g) => g,
            crate::gdl::Gdl::NonGround(_) => anyhow::bail!(
                "{}: too large to ground within the default limits; the doors need every role's actions numbered up front, which only a grounded description has",
                path.display()
            ),
        };
        let roles = game.roles();
        let simultaneous = match opts.simultaneous {
            Some(s) => s,
            None => probe_simultaneous(&game),
        };
        let info = Info {
            language: "gdl",
            players: (0..roles).map(|r| game.role_name(r)).collect(),
            num_distinct_actions: (0..roles).map(|r| game.n_actions(r)).max().unwrap_or(0),
            observation_len: game.n_base(),
            simultaneous,
            stochastic: false,
            max_chance_outcomes: 0,
            rewards: false,
            utility: Utility::GeneralSum,
            min_utility: 0.0,
            max_utility: 1.0,
            max_game_length: MAX_GAME_LENGTH,
        };
        Ok(GdlDoor { game, info })
    }

    pub(super) fn initial(&self) -> GdlState {
        self.game.initial().unwrap_or_else(|e| match e {})
    }

    pub(super) fn goals(&self, st: &GdlState) -> Vec<f64> {
        self.game.goal_values(st).iter().map(|&g| g as f64 / 100.0).collect()
    }

    pub(super) fn refresh(&self, s: &mut DoorState) -> Result<(), DoorError> {
        let Inner::Gdl(st) = &s.inner else { unreachable!("a WGDL state in a GDL door") };
        let per_role = self.game.legal_actions(st);
        for (dst, src) in s.role_legal.iter_mut().zip(&per_role) {
            dst.clear();
            dst.extend(src.iter().map(|&a| a as i64));
        }
        for l in &mut s.legal {
            l.clear();
        }
        if self.game.is_terminal(st) || per_role.iter().any(Vec::is_empty) {
            s.status = crate::gdl::game::end_status(&self.game.goal_values(st));
            s.player = super::TERMINAL;
            return Ok(());
        }
        s.status = Status::Running;
        let choosers = per_role.iter().filter(|a| a.len() > 1).count();
        if choosers > 1 {
            if !self.info.simultaneous {
                return Err(DoorError::Runtime(format!(
                    "after {} moves, {choosers} roles have a choice at once; this game was opened as sequential (open it with simultaneous=True)",
                    s.history.len()
                )));
            }
            s.player = super::SIMULTANEOUS;
            s.legal.clone_from(&s.role_legal);
        } else {
            let mover = self.game.to_move(st);
            s.player = mover as i64;
            s.legal[mover].clone_from(&s.role_legal[mover]);
        }
        Ok(())
    }

    /// One role's move at a sequential node; the others play their only action.
    pub(super) fn apply(&self, s: &mut DoorState, action: i64) -> Result<(), DoorError> {
        if s.player < 0 {
            return Err(DoorError::Illegal(format!(
                "action {action}: a simultaneous node; expected apply_actions with one action per role"
            )));
        }
        let mover = s.player as usize;
        let joint: Vec<i64> = (0..s.role_legal.len()).map(|r| if r == mover { action } else { -1 }).collect();
        self.apply_joint(s, &joint).map(|_| ())
    }

    /// One action per role (−1: the role's only legal action); returns the actions played.
    pub(super) fn apply_joint(&self, s: &mut DoorState, actions: &[i64]) -> Result<Vec<i64>, DoorError> {
        let roles = s.role_legal.len();
        if actions.len() != roles {
            return Err(DoorError::Illegal(format!("{} actions; expected one per role ({roles})", actions.len())));
        }
        let mut mv: JointMove = 0;
        let mut played = Vec::with_capacity(roles);
        for (r, &a) in actions.iter().enumerate() {
            let legal = &s.role_legal[r];
            let a = match (a, legal.as_slice()) {
                (-1, [only]) => *only,
                _ if legal.binary_search(&a).is_ok() => a,
                _ => {
                    let names: Vec<String> = legal.iter().map(|&i| format!("{i} {}", self.game.action_name(r, i as usize))).collect();
                    return Err(DoorError::Illegal(format!(
                        "action {a} is not legal for {} here; expected one of: {}",
                        self.game.role_name(r),
                        names.join(", ")
                    )));
                }
            };
            mv |= joint_part(a as usize, r);
            played.push(a);
        }
        let Inner::Gdl(st) = &mut s.inner else { unreachable!() };
        self.game.apply(st, mv).unwrap_or_else(|e| match e {});
        Ok(played)
    }

    pub(super) fn action_name(&self, player: usize, action: i64) -> String {
        if player < self.game.roles() && (action as usize) < self.game.n_actions(player) {
            self.game.action_name(player, action as usize)
        } else {
            format!("action {action} (role {player} has {})", self.game.n_actions(player))
        }
    }

    pub(super) fn observation(&self, st: &GdlState, out: &mut Vec<f64>) {
        out.extend((0..self.game.n_base()).map(|i| (st.bits[i / 64] >> (i % 64) & 1) as f64));
    }

    pub(super) fn text(&self, st: &GdlState) -> String {
        self.game.show_state(st).join("\n")
    }
}

/// Whether some node of random play gives two roles a choice at once.
fn probe_simultaneous(game: &GdlGame) -> bool {
    let mut legal = Vec::new();
    for k in 0..PROBE_GAMES {
        let mut rng = crate::rng::stream(0, 0, 0, k);
        let mut st = game.initial().unwrap_or_else(|e| match e {});
        for _ in 0..PROBE_MOVES {
            let per_role = game.legal_actions(&st);
            if per_role.iter().filter(|a| a.len() > 1).count() > 1 {
                return true;
            }
            game.legal(&st, &mut legal).unwrap_or_else(|e| match e {});
            if legal.is_empty() || game.is_terminal(&st) {
                break;
            }
            let mv = legal[rng.random_range(0..legal.len())];
            game.apply(&mut st, mv).unwrap_or_else(|e| match e {});
        }
    }
    false
}
