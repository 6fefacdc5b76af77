//! The doors to the researchers' ecosystems: any WGDL game, and any GDL game that grounds, seen
//! the way OpenSpiel, PettingZoo and Gymnasium see a game. Players are numbered 0 … n−1; the
//! moves are a fixed set of distinct actions numbered 0 … A−1 by a **stable index** (a number
//! means the same move in every state: [`wgdl::WgdlDoor`] numbers an action definition × the
//! acting object × its binding, [`gdl::GdlDoor`] a role's ground action); legal lists are sorted
//! ascending; a state has returns and rewards per player, a text and a fixed-length
//! observation tensor. The Python package's `playforge.openspiel`, `playforge.pettingzoo` and
//! `playforge.gymnasium` are thin shells over this through `python/doors.rs`: every move is played
//! by the one interpreter (or the GDL reasoner), nothing of a game is written again in Python.
//! docs/doors.md documents the encodings; they are part of the interface.

pub mod gdl;
pub mod wgdl;

use crate::status::Status;
use std::path::Path;

/// How a game is opened.
#[derive(Clone, Debug)]
pub struct OpenOptions {
    /// WGDL: declared parameters set by name.
    pub params: Vec<(String, f64)>,
    /// WGDL: `grouped` or `alternating` in place of the file's `turnOrder`.
    pub turn_order: Option<String>,
    /// WGDL: overlays (`style`/`variant`) to switch on.
    pub overlays: Vec<String>,
    /// WGDL: how many objects of each description a `create` consequence can make beyond the
    /// start state's, i.e. the room the action index and the observation keep for them.
    pub objects: u32,
    /// WGDL, one-player games: a game value (`game.score`, `global.coins`) whose change after
    /// each move is the move's reward (OpenSpiel's reward model `REWARDS`).
    pub reward: Option<String>,
    /// GDL: whether the game has simultaneous moves; `None` decides by playing random games.
    pub simultaneous: Option<bool>,
}

impl Default for OpenOptions {
    fn default() -> OpenOptions {
        OpenOptions { params: Vec::new(), turn_order: None, overlays: Vec::new(), objects: 64, reward: None, simultaneous: None }
    }
}

/// How the players' returns relate (OpenSpiel's `GameType.Utility`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Utility {
    ZeroSum,
    GeneralSum,
}

/// What the frameworks declare about a game before any state exists.
#[derive(Clone, Debug)]
pub struct Info {
    /// `wgdl` or `gdl`.
    pub language: &'static str,
    pub players: Vec<String>,
    pub num_distinct_actions: usize,
    pub observation_len: usize,
    pub simultaneous: bool,
    /// The game draws from its own seeded stream (OpenSpiel's `SAMPLED_STOCHASTIC`).
    pub stochastic: bool,
    /// The most outcomes a chance node has (WGDL `byChance`; OpenSpiel's
    /// `EXPLICIT_STOCHASTIC`); 0 for a game without chance nodes.
    pub max_chance_outcomes: usize,
    /// A reward after every move (a chosen game value's change), not only at the end.
    pub rewards: bool,
    pub utility: Utility,
    pub min_utility: f64,
    pub max_utility: f64,
    /// Moves a game can last: WGDL's step limit; GDL: [`gdl::MAX_GAME_LENGTH`].
    pub max_game_length: usize,
}

/// A move that is not legal here (Python: `ValueError`) or a game's runtime error
/// (`RuntimeError`, with the WGDL span rendered).
#[derive(Debug, thiserror::Error)]
pub enum DoorError {
    #[error("{0}")]
    Illegal(String),
    #[error("{0}")]
    Runtime(String),
}

/// pyspiel's player id of a terminal state.
pub const TERMINAL: i64 = -4;
/// pyspiel's player id of a simultaneous node.
pub const SIMULTANEOUS: i64 = -2;
/// pyspiel's player id of a chance node.
pub const CHANCE: i64 = -1;

/// A game behind a door.
pub struct Door {
    pub kind: Kind,
    /// The start state, kept when it does not depend on the seed (a game that does not draw):
    /// a new game is then a copy.
    start: Option<DoorState>,
}

/// The language behind a door.
pub enum Kind {
    Wgdl(wgdl::WgdlDoor),
    Gdl(gdl::GdlDoor),
}

/// The state behind a door's state: the interpreter's or the reasoner's.
#[derive(Clone)]
pub enum Inner {
    Wgdl(crate::wgdl::State),
    Gdl(crate::gdl::GdlState),
}

/// A state with what the frameworks ask of it worked out once per move: each player's sorted
/// legal actions, the player to move, the status, the history of actions.
#[derive(Clone)]
pub struct DoorState {
    pub inner: Inner,
    /// Each player's legal actions, sorted (empty for players not to move).
    legal: Vec<Vec<i64>>,
    /// WGDL: the interpreter's moves behind the mover's legal actions, in the same order.
    /// GDL: each role's own legal action numbers (every role, whoever moves).
    wgdl_moves: Vec<crate::wgdl::Action>,
    /// Scratch space for sorting moves by number (empty between calls).
    pairs: Vec<(i64, crate::wgdl::Action)>,
    role_legal: Vec<Vec<i64>>,
    /// At a chance node ([`CHANCE`] to move): chance's actions, sorted, and each one's
    /// probability.
    chance: Vec<(i64, f64)>,
    chance_legal: Vec<i64>,
    status: Status,
    player: i64,
    history: Vec<i64>,
    /// Moves played (a joint move counts once).
    moves: usize,
    /// The reward value at the start, before the last move, and now.
    value: [f64; 3],
}

/// GDL descriptions by extension; everything else is WGDL.
pub fn is_gdl_path(path: &Path) -> bool {
    matches!(path.extension().and_then(|e| e.to_str()), Some("kif" | "gdl" | "kif2" | "lisp"))
}

impl Door {
    /// Opens a `.wgdl` game or a `.kif`/`.gdl` description.
    pub fn open(path: &Path, opts: &OpenOptions) -> anyhow::Result<Door> {
        let kind =
            if is_gdl_path(path) { Kind::Gdl(gdl::GdlDoor::open(path, opts)?) } else { Kind::Wgdl(wgdl::WgdlDoor::open(path, opts)?) };
        Door::new(kind).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))
    }

    /// A door over an opened game; its start state is worked out once here.
    pub fn new(kind: Kind) -> Result<Door, DoorError> {
        let mut door = Door { kind, start: None };
        let start = door.fresh(0)?;
        if !door.info().stochastic {
            door.start = Some(start);
        }
        Ok(door)
    }

    pub fn info(&self) -> &Info {
        match &self.kind {
            Kind::Wgdl(d) => &d.info,
            Kind::Gdl(d) => &d.info,
        }
    }

    /// The start state; `seed` starts a WGDL game's own chance stream.
    pub fn initial(&self, seed: u64) -> Result<DoorState, DoorError> {
        match &self.start {
            Some(s) => Ok(s.clone()),
            None => self.fresh(seed),
        }
    }

    fn fresh(&self, seed: u64) -> Result<DoorState, DoorError> {
        let inner = match &self.kind {
            Kind::Wgdl(d) => Inner::Wgdl(d.program.initial_state_seeded(seed).map_err(|e| DoorError::Runtime(e.render(&d.program)))?),
            Kind::Gdl(d) => Inner::Gdl(d.initial()),
        };
        let n = self.info().players.len();
        let mut s = DoorState {
            inner,
            legal: vec![Vec::new(); n],
            wgdl_moves: Vec::new(),
            pairs: Vec::new(),
            role_legal: vec![Vec::new(); n],
            chance: Vec::new(),
            chance_legal: Vec::new(),
            status: Status::Running,
            player: 0,
            history: Vec::new(),
            moves: 0,
            value: [0.0; 3],
        };
        self.refresh(&mut s)?;
        let v = self.reward_value(&s);
        s.value = [v; 3];
        Ok(s)
    }

    /// Works out the legal actions, status and player to move of a changed state.
    fn refresh(&self, s: &mut DoorState) -> Result<(), DoorError> {
        match &self.kind {
            Kind::Wgdl(d) => d.refresh(s),
            Kind::Gdl(d) => d.refresh(s),
        }
    }

    fn reward_value(&self, s: &DoorState) -> f64 {
        match (&self.kind, &s.inner) {
            (Kind::Wgdl(d), Inner::Wgdl(st)) => d.reward_value(st),
            _ => 0.0,
        }
    }

    /// Plays `action` for the player to move (at a GDL sequential node the other roles play
    /// their only legal action).
    pub fn apply(&self, s: &mut DoorState, action: i64) -> Result<(), DoorError> {
        if s.status != Status::Running {
            return Err(DoorError::Illegal(format!("action {action}: the game is over ({})", self.status_name(s))));
        }
        match &self.kind {
            Kind::Wgdl(d) => d.apply(s, action)?,
            Kind::Gdl(d) => d.apply(s, action)?,
        }
        s.history.push(action);
        self.after_move(s)
    }

    /// Plays one action per player at once (simultaneous GDL nodes; at any node, every role's
    /// action). pyspiel's `INVALID_ACTION` (−1) stands for a role's only legal action.
    pub fn apply_joint(&self, s: &mut DoorState, actions: &[i64]) -> Result<(), DoorError> {
        if s.status != Status::Running {
            return Err(DoorError::Illegal(format!("actions {actions:?}: the game is over ({})", self.status_name(s))));
        }
        match &self.kind {
            Kind::Wgdl(d) => {
                let p = s.player.max(0) as usize;
                let Some(&a) = actions.get(p) else {
                    return Err(DoorError::Illegal(format!("{} actions; expected one per player ({})", actions.len(), s.legal.len())));
                };
                d.apply(s, a)?;
                s.history.push(a);
            }
            Kind::Gdl(d) => {
                let played = d.apply_joint(s, actions)?;
                s.history.extend(played);
            }
        }
        self.after_move(s)
    }

    /// At a chance node: chance's actions with their probabilities (empty elsewhere).
    pub fn chance_outcomes(&self, s: &DoorState) -> Vec<(i64, f64)> {
        s.chance.clone()
    }

    /// Plays chance's moves, drawn from the game's own stream, until a player is to move (for
    /// frameworks without chance nodes: PettingZoo, Gymnasium).
    pub fn resolve_chance(&self, s: &mut DoorState) -> Result<(), DoorError> {
        while s.player == CHANCE {
            let a = match (&self.kind, &mut s.inner) {
                (Kind::Wgdl(d), Inner::Wgdl(st)) => {
                    let m = d.program.draw_chance(st, &s.wgdl_moves).map_err(|e| DoorError::Runtime(e.render(&d.program)))?;
                    let k = s.wgdl_moves.iter().position(|&x| x == m).unwrap_or(0);
                    s.chance_legal[k]
                }
                _ => return Ok(()),
            };
            self.apply(s, a)?;
        }
        Ok(())
    }

    fn after_move(&self, s: &mut DoorState) -> Result<(), DoorError> {
        s.moves += 1;
        self.refresh(s)?;
        if self.info().rewards {
            s.value[1] = s.value[2];
            s.value[2] = self.reward_value(s);
        }
        Ok(())
    }

    /// Each player's return so far: with a reward value, its change since the start; else
    /// WGDL +1 for the winner and −1 for the others (0 for all in a draw, at a limit and while
    /// the game runs), a one-player game 1 once its last goal holds; GDL each role's goal ÷ 100
    /// once the game is over.
    pub fn returns(&self, s: &DoorState) -> Vec<f64> {
        let n = self.info().players.len();
        if self.info().rewards {
            return vec![s.value[2] - s.value[0]; n];
        }
        match (&self.kind, &s.inner) {
            (Kind::Gdl(d), Inner::Gdl(st)) if s.status != Status::Running => d.goals(st),
            (Kind::Gdl(_), _) => vec![0.0; n],
            _ => match s.status {
                Status::Won(k) if n > 1 => (0..n).map(|i| if i == k as usize { 1.0 } else { -1.0 }).collect(),
                Status::Finished if n == 1 => vec![1.0],
                _ => vec![0.0; n],
            },
        }
    }

    /// Each player's reward for the last move: the reward value's change, or (terminal
    /// rewards) the returns once the game is over and 0 before.
    pub fn rewards(&self, s: &DoorState) -> Vec<f64> {
        let n = self.info().players.len();
        if self.info().rewards {
            return vec![s.value[2] - s.value[1]; n];
        }
        if s.status == Status::Running { vec![0.0; n] } else { self.returns(s) }
    }

    /// Appends the observation tensor (docs/doors.md) to `out` (cleared first).
    pub fn observation(&self, s: &DoorState, out: &mut Vec<f64>) -> Result<(), DoorError> {
        out.clear();
        match (&self.kind, &s.inner) {
            (Kind::Wgdl(d), Inner::Wgdl(st)) => d.observation(st, out),
            (Kind::Gdl(d), Inner::Gdl(st)) => {
                d.observation(st, out);
                Ok(())
            }
            _ => unreachable!("a state of the other language"),
        }
    }

    /// The state as text: WGDL's named values and grid rows, GDL's true facts, one per line.
    pub fn text(&self, s: &DoorState) -> String {
        match (&self.kind, &s.inner) {
            (Kind::Wgdl(d), Inner::Wgdl(st)) => d.program.state_text(st),
            (Kind::Gdl(d), Inner::Gdl(st)) => d.text(st),
            _ => unreachable!("a state of the other language"),
        }
    }

    /// Action `action` of `player` as text, e.g. `drop(red, 3)` or `(mark 1 1)`; an index the
    /// state cannot name (an object not yet created) is described by its parts.
    pub fn action_name(&self, s: &DoorState, player: usize, action: i64) -> Result<String, DoorError> {
        if action < 0 || action as usize >= self.info().num_distinct_actions {
            return Err(DoorError::Illegal(format!(
                "action {action}; expected 0 … {} (num_distinct_actions)",
                self.info().num_distinct_actions.saturating_sub(1)
            )));
        }
        Ok(match (&self.kind, &s.inner) {
            (Kind::Wgdl(d), Inner::Wgdl(st)) => d.action_name(st, action),
            (Kind::Gdl(d), _) => d.action_name(player, action),
            _ => unreachable!("a state of the other language"),
        })
    }

    /// Why the game is over or that it is not: `running`, `won:<player>`, `draw`, `finished`,
    /// `stuck`, `turn-limit`, `step-limit`.
    pub fn status_name(&self, s: &DoorState) -> String {
        match s.status {
            Status::Running => "running".into(),
            Status::Won(k) => format!("won:{}", self.info().players.get(k as usize).map_or("?", |s| s.as_str())),
            Status::Draw => "draw".into(),
            Status::Finished => "finished".into(),
            Status::Stuck => "stuck".into(),
            Status::TurnLimit => "turn-limit".into(),
            Status::StepLimit => "step-limit".into(),
        }
    }
}

impl DoorState {
    /// `player`'s legal actions, sorted; `None`: the player to move's (empty when the game is
    /// over or at a simultaneous node).
    pub fn legal(&self, player: Option<usize>) -> &[i64] {
        let p = match player {
            Some(p) => p,
            None if self.player == CHANCE => return &self.chance_legal,
            None if self.player >= 0 => self.player as usize,
            None => return &[],
        };
        self.legal.get(p).map_or(&[], |v| v.as_slice())
    }

    /// WGDL: the interpreter's moves behind `legal(None)`, in the same order.
    pub fn wgdl_moves(&self) -> &[crate::wgdl::Action] {
        &self.wgdl_moves
    }

    /// Every role's own legal actions whoever is to move (GDL); WGDL: as [`DoorState::legal`].
    pub fn role_legal(&self, player: usize) -> &[i64] {
        match self.inner {
            Inner::Gdl(_) => self.role_legal.get(player).map_or(&[], |v| v.as_slice()),
            Inner::Wgdl(_) => self.legal(Some(player)),
        }
    }

    /// The player to move, [`SIMULTANEOUS`] or [`TERMINAL`].
    pub fn current_player(&self) -> i64 {
        self.player
    }

    pub fn is_terminal(&self) -> bool {
        self.status != Status::Running
    }

    pub fn status(&self) -> Status {
        self.status
    }

    /// The game stopped at a limit (turns or steps) rather than ending by its rules: an RL
    /// episode's truncation.
    pub fn truncated(&self) -> bool {
        matches!(self.status, Status::TurnLimit | Status::StepLimit)
    }

    /// Moves played (a joint move counts once).
    pub fn moves(&self) -> usize {
        self.moves
    }

    /// The actions played so far (a joint move: one per player, player order).
    pub fn history(&self) -> &[i64] {
        &self.history
    }
}
