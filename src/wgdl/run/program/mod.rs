//! The compiled game ([`Program`]) and its run-time [`State`]: the last stage of the pipeline
//! (text → tokens → AST → checked model → **program → state**).
//!
//! Every name was resolved by the compiler: attributes are slot offsets, objects are indices,
//! strings are interned symbols, game value store paths are node indices. Expressions are a
//! small stack bytecode ([`Op`]) evaluated on a fixed-size stack — no string lookup, no hash map
//! and no allocation per evaluation. A state is a flat `Vec<i64>` of slots (game value store
//! first, then every object's attributes), a table of objects, a sorted timer queue and a few
//! counters, so cloning it is three `memcpy`s.
//!
//! Values are 64-bit: longs as themselves, doubles as their bits, booleans as 0/1, strings as
//! symbol indices, object references as object indices with [`NULL`] for `null`. The static type
//! of every slot and operation is known from the checker, so no value carries a tag.
//!
//! This file holds [`Program`], [`State`] and a state's life (start, apply, status); beside it
//! `ids.rs` (indices, [`Ty`], [`ObjRec`]), `info.rs` (the records of the program's tables),
//! `ops.rs` (the bytecode), `error.rs`, `closures.rs` (what expressions run as, and the cache
//! of them), `eval.rs` (the reference evaluator), `exec.rs` (consequences, rules, the clock),
//! `moves.rs` (legal moves) and `show.rs` (names and text).
//!
//! Room for what later issues add is already here: `to_move` (several players), `rng` (seeded
//! chance), `ObjRec::alive` (deletion), and fixed-size grids are just runs of slots.

use crate::wgdl::diag::{SourceFile, Span};
use crate::wgdl::run::occupancy::OccCache;
use std::sync::Arc;
use thiserror::Error;

pub(in crate::wgdl) mod closures;
mod error;
mod eval;
mod exec;
mod ids;
mod info;
mod moves;
mod ops;
mod show;

pub(in crate::wgdl) use closures::{Cx, Env, FastCode, Frame, Fx, LIVE_BOUND, LIVE_THIS, cx_of, fx_of};
pub use error::*;
pub use ids::{ActionId, ClassId, ConsId, ExprId, GodId, NONE, NULL, ObjRec, Ty};
pub use info::*;
pub use ops::*;

/// Whether class `a` is `b` or derives from it, given each class's pre-order interval.
#[inline]
pub(crate) fn within(spans: &[(u32, u32)], a: ClassId, b: ClassId) -> bool {
    let (x, (lo, hi)) = (spans[a as usize].0, spans[b as usize]);
    lo <= x && x <= hi
}

/// A compiled game. Immutable and shared (`Arc`) by every state and thread.
#[derive(Clone, Debug)]
pub struct Program {
    pub source: Arc<SourceFile>,
    pub syms: Vec<String>,
    pub classes: Vec<ClassInfo>,
    pub gods: Vec<GodInfo>,
    pub actions: Vec<ActionInfo>,
    pub rules: Vec<ActionId>,
    pub conses: Vec<ConsInfo>,
    pub code: Vec<Op>,
    pub spans: Vec<Span>,
    pub initial: Vec<GodId>,
    /// Where each initial object's slots end, counted from the first initial object's first
    /// slot (running sums of their lengths), so that a slot's object is found by a binary search.
    pub initial_ends: Vec<usize>,
    pub goals: Vec<GoalInfo>,
    pub groups: Vec<Group>,
    pub store: StoreLayout,
    /// Named game values (`game missionsDone missions . done`): name and dotted store path.
    pub game_values: Vec<(String, String)>,
    pub limits: Limits,
    pub default_duration: Option<(ExprId, bool)>,
    /// Some rule reads the clock (`game.time`, `game.sessionTime`): rules fire again whenever
    /// the clock moves, not only after consequences.
    pub rules_read_time: bool,
    pub session_length: i64,
    pub session_pause: i64,
    /// Each class's subtree as an interval `(first, last)` of a pre-order numbering of the
    /// class tree (linear memory): class a is b or derives from b iff a's number is in b's
    /// interval (`within`).
    pub is_sub: Vec<(u32, u32)>,
    pub max_stack: usize,
    /// Extensions: sides, turns, outcomes, round hooks, hex map, grids, parameters, policies.
    pub players: Vec<String>,
    pub turn: Option<TurnInfo>,
    /// The objects that take turns, in turn order, when that order is fixed by the program and
    /// is the objects' creation order: no consequence writes the side attribute or creates an
    /// object of the turn class (`Program::fixed_turn_order`). `next_actor` then walks this
    /// list instead of ranking every object.
    pub turn_order: Option<Vec<u32>>,
    pub outcomes: Vec<OutcomeInfo>,
    /// The `winner`/`draw` lines that read `game.stuck` (extension): tried in file order when
    /// the side to move has no legal move ([`Program::status`]), never after a move.
    pub stuck_outcomes: Vec<OutcomeInfo>,
    pub round_hooks: Vec<ActionId>,
    pub hex: Option<Arc<crate::wgdl::hex::HexMap>>,
    pub occupants: Option<Occupants>,
    pub grids: Vec<GridInfo>,
    /// `view` hints (never read by play).
    pub views: Views,
    /// Slots between the store and the objects (grid cells).
    pub grid_slots: u32,
    /// Some action is `byChance`: a state where one of its moves is legal is a chance node.
    pub has_chance: bool,
    /// Board lines (extension): step tables, notations, pieces, start rows.
    pub board: crate::wgdl::board::Boards,
    pub params: Vec<ParamInfo>,
    pub policies: Vec<PolicyInfo>,
    pub aggs: Vec<AggInfo>,
    /// Some `unless` names a `policyOnly` action (so searches must still generate those).
    pub unless_sees_policy_only: bool,
    /// `constraint` lines: the compiled condition and its text.
    pub constraints: Vec<(ExprId, String)>,
    /// Some action has a move filter (`choose`, `lastResort`, `unless`) or is `policyOnly`.
    pub has_filters: bool,
    /// `chance fair`: a search must not see the real future of the game's stream; it plays on
    /// an independent stream (see [`crate::game::Game::hidden_chance`]). Default `chance oracle`.
    pub chance_fair: bool,
    /// Every named overlay the file declares (`style <name>:` / `variant <name>:` lines), in
    /// order of first appearance, whether selected or not; and the ones selected.
    pub overlays: Vec<(crate::wgdl::ast::OverlayKind, String)>,
    pub selected: Vec<String>,
    /// The closures that evaluate `code` (`wgdl::fast`), built on first use; one slot per
    /// code index (`fast.resize(code.len())` after appending code).
    pub fast: FastCode,
    /// Each action's group (`actions[a].group`), compact for playout policies.
    pub action_groups: Vec<u16>,
    /// Each action's move filters as bits (`FILTER_CHOOSE` … in `wgdl::turns`), compact
    /// for the filter pass over a move list.
    pub filter_flags: Vec<u8>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Timer {
    pub due: i64,
    pub seq: u64,
    pub cons: ConsId,
    pub this: u32,
    pub bound: u32,
}

/// One player move: an action instance (action, owner object, binding).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Action {
    pub def: ActionId,
    pub this: u32,
    /// The bound object (forEveryInstance), description (forEveryGOD) or [`NONE`].
    pub bound: u32,
}

/// Why a game is over (shared with GDL games and the searchers, defined below them all).
pub use crate::status::Status;

#[derive(Debug, PartialEq, Eq, Hash)]
pub struct State {
    pub slots: Vec<i64>,
    pub objects: Vec<ObjRec>,
    /// Pending timed consequences, sorted so that the next one to fire is last.
    pub timers: Vec<Timer>,
    pub clock: i64,
    pub timer_seq: u64,
    pub moves: u32,
    /// Index of the goal being pursued; `goals.len()` once the last goal held.
    pub goal: u16,
    pub sessions: i64,
    /// Side to move (single-player games: always 0).
    pub to_move: u8,
    /// State of the game's own random stream (seeded chance; unused until a game draws).
    pub rng: u64,
    /// Set by an `endSession` consequence during the current move.
    pub end_session: bool,
    /// Turns (extension): the acting object ([`NONE`] without turns or when nobody can act),
    /// rounds and turns completed, and the outcome (0 none, 1 draw, 2 + k side k won).
    pub actor: u32,
    pub round: u32,
    pub turns: u32,
    pub outcome: u8,
    /// Set by an `endTurn` consequence during the current move.
    pub end_turn: bool,
    /// The parts of the state written since the last check of outcomes and goals
    /// (`wgdl::deps`); ignored by equality and hashing.
    pub dirty: crate::wgdl::parts::Dirty,
    /// The forests of the connections `board.joins` reads (`run/links.rs`), brought up to date
    /// after each move; ignored by the fingerprint (they follow from the cells).
    pub links: Vec<i64>,
}

/// Evaluation context: whose action is running.
#[derive(Clone, Copy, Debug)]
pub(in crate::wgdl) struct Ctx {
    pub(in crate::wgdl) this: u32,
    pub(in crate::wgdl) bound: u32,
}

const STACK: usize = 32;

thread_local! {
    /// Move generation's scratch space, reused from one generation to the next.
    static CANDIDATES: std::cell::RefCell<Scratch> = std::cell::RefCell::new(Scratch::default());
}

/// Move generation's scratch space (see [`Program::candidates`]).
#[derive(Default)]
struct Scratch {
    /// Per action: whether its owner-free conditions hold (0 unknown, 1 false, 2 true).
    global: Vec<u8>,
    /// The live objects of class `bound_class` (index, first slot), listed once per generation
    /// for `forEveryInstance` bindings of that class.
    bound_class: Option<ClassId>,
    bound: Vec<(u32, u32)>,
}

impl Program {
    pub fn n_store_nodes(&self) -> usize {
        self.store.parent.len()
    }

    pub fn is_sub(&self, a: ClassId, b: ClassId) -> bool {
        within(&self.is_sub, a, b)
    }

    pub fn sym(&self, v: i64) -> &str {
        self.syms.get(v as usize).map_or("?", |s| s.as_str())
    }

    /// The start state: the store, then every `initial` object in file order (their `create:`
    /// hooks run), rules fired, goals checked.
    pub fn initial_state(&self) -> Result<State, RuntimeError> {
        self.initial_state_seeded(0)
    }

    /// The start state of the game with chance seed `seed`: its stream word starts at
    /// `mix(seed)`, so that neighbouring seeds give unrelated streams (games that draw, such as
    /// refills of a tile grid, differ per seed; other games do not).
    pub fn initial_state_seeded(&self, seed: u64) -> Result<State, RuntimeError> {
        let n = self.n_store_nodes();
        let mut st = State {
            slots: vec![0; 2 * n + self.grid_slots as usize],
            objects: Vec::new(),
            timers: Vec::new(),
            clock: 0,
            timer_seq: 0,
            moves: 0,
            goal: 0,
            sessions: 0,
            to_move: 0,
            rng: crate::rng::mix(seed),
            end_session: false,
            actor: NONE,
            round: 0,
            turns: 0,
            outcome: 0,
            end_turn: false,
            dirty: crate::wgdl::parts::Dirty { checks: crate::wgdl::parts::ALL, rules: crate::wgdl::parts::ALL },
            links: vec![0; self.board.links.iter().map(|l| l.words()).sum()],
        };
        for (g, cells) in &self.board.start {
            let base = self.grids[*g as usize].base as usize;
            st.slots[base..base + cells.len()].copy_from_slice(cells);
        }
        // All initial objects exist before any create: hook runs, so hooks can use named objects.
        for &g in &self.initial {
            self.alloc(&mut st, g, self.gods[g as usize].span)?;
        }
        for id in 0..self.initial.len() as u32 {
            self.run_create_hooks(&mut st, id, 0)?;
        }
        self.fire_rules(&mut st)?;
        self.settle(&mut st)?;
        if self.turn.is_some() {
            st.end_turn = false;
            st.actor = self.next_actor(&st, None)?.unwrap_or(NONE);
            st.to_move = self.side_of(&st, st.actor);
        }
        self.advance_goals(&mut st)?;
        self.sync_links(&mut st);
        self.check_outcomes(&mut st)?;
        st.dirty.checks = 0;
        Ok(st)
    }

    /// Fresh objects are appended; their slot base is the current end of the slot vector.
    /// `span` is what an error points at: the `initial` description or the `create` consequence.
    fn alloc(&self, st: &mut State, god: GodId, span: Span) -> Result<u32, RuntimeError> {
        let g = &self.gods[god as usize];
        if st.objects.len() as u32 >= self.limits.objects {
            return Err(rt(RtKind::TooManyObjects { limit: self.limits.objects }, span));
        }
        let id = st.objects.len() as u32;
        st.dirty.mark(crate::wgdl::parts::BORN);
        st.objects.push(ObjRec { god, class: g.class, alive: true, base: st.slots.len() as u32 });
        st.slots.extend_from_slice(&g.init);
        Ok(id)
    }

    fn create(&self, st: &mut State, god: GodId, depth: u32, span: Span) -> Result<u32, RuntimeError> {
        if depth > self.limits.create_depth {
            return Err(rt(RtKind::CreateTooDeep { limit: self.limits.create_depth }, span));
        }
        let id = self.alloc(st, god, span)?;
        self.run_create_hooks(st, id, depth)?;
        Ok(id)
    }

    fn run_create_hooks(&self, st: &mut State, id: u32, depth: u32) -> Result<(), RuntimeError> {
        let class = st.objects[id as usize].class;
        let ctx = Ctx { this: id, bound: NONE };
        for &h in &self.classes[class as usize].create_hooks {
            let a = &self.actions[h as usize];
            if self.conditions_hold(st, a, ctx)? {
                self.run_consequences(st, h, ctx, depth + 1)?;
            }
        }
        Ok(())
    }

    /// Applies a player move: its consequences in attachment order, rules to a fixpoint, then
    /// the action's duration on the game clock (timers fire, sessions end), then goals.
    /// The caller guarantees legality (see [`Program::apply_checked`]).
    pub fn apply(&self, st: &mut State, a: Action) -> Result<(), RuntimeError> {
        let info = &self.actions[a.def as usize];
        let ctx = Ctx { this: a.this, bound: a.bound };
        self.run_consequences(st, a.def, ctx, 0)?;
        self.fire_rules(st)?;
        if st.end_turn {
            self.end_turn(st)?;
        }
        let duration = match info.duration.or(self.default_duration) {
            Some((e, is_double)) => {
                let raw = self.eval(st, e, ctx)?;
                let d = if is_double { f64::from_bits(raw as u64).floor() as i64 } else { raw };
                if d < 0 {
                    return Err(rt(RtKind::NegativeDelay { delay: d }, self.spans[e.start as usize]));
                }
                d
            }
            None => 0,
        };
        self.pass_time(st, duration)?;
        st.moves += 1;
        st.dirty.mark(crate::wgdl::parts::MOVES);
        self.advance_goals(st)?;
        if !self.board.links.is_empty() {
            self.sync_links(st);
        }
        self.check_outcomes(st)?;
        st.dirty.checks = 0;
        Ok(())
    }

    /// [`Program::apply`] after checking that the move is legal.
    pub fn apply_checked(&self, st: &mut State, a: Action) -> Result<(), RuntimeError> {
        if !self.is_legal(st, a)? {
            let err = match self.actions.get(a.def as usize) {
                Some(info) => rt(RtKind::IllegalAction { action: self.action_name(st, a) }, info.span),
                None => {
                    rt(RtKind::IllegalAction { action: format!("#{} (there are {} actions)", a.def, self.actions.len()) }, Span::default())
                }
            };
            return Err(err);
        }
        self.apply(st, a)
    }

    pub fn status(&self, st: &State, legal: &[Action]) -> Status {
        if st.outcome == 1 {
            Status::Draw
        } else if st.outcome >= 2 {
            Status::Won(st.outcome - 2)
        } else if st.goal as usize >= self.goals.len() && !self.goals.is_empty() {
            Status::Finished
        } else if st.turns >= self.limits.turns {
            Status::TurnLimit
        } else if st.moves >= self.limits.steps {
            Status::StepLimit
        } else if legal.is_empty() {
            let ctx = Ctx { this: NONE, bound: NONE };
            // A line that fails to evaluate does not hold (as a `notation` condition).
            match self.stuck_outcomes.iter().find(|o| self.eval(st, o.expr, ctx).is_ok_and(|v| v != 0)) {
                Some(o) => o.winner.map_or(Status::Draw, Status::Won),
                None => Status::Stuck,
            }
        } else {
            Status::Running
        }
    }

    /// A 64-bit hash of everything mutable in the state (FxHash-style mixing; no allocation).
    pub fn hash_state(&self, st: &State) -> u64 {
        st.fingerprint()
    }
}

impl Clone for State {
    fn clone(&self) -> State {
        State {
            slots: self.slots.clone(),
            objects: self.objects.clone(),
            timers: self.timers.clone(),
            clock: self.clock,
            timer_seq: self.timer_seq,
            moves: self.moves,
            goal: self.goal,
            sessions: self.sessions,
            to_move: self.to_move,
            rng: self.rng,
            end_session: self.end_session,
            actor: self.actor,
            round: self.round,
            turns: self.turns,
            outcome: self.outcome,
            end_turn: self.end_turn,
            dirty: self.dirty,
            links: self.links.clone(),
        }
    }

    /// Reuses this state's buffers: no allocation once they are large enough.
    fn clone_from(&mut self, src: &State) {
        self.slots.clone_from(&src.slots);
        self.objects.clone_from(&src.objects);
        self.timers.clone_from(&src.timers);
        self.clock = src.clock;
        self.timer_seq = src.timer_seq;
        self.moves = src.moves;
        self.goal = src.goal;
        self.sessions = src.sessions;
        self.to_move = src.to_move;
        self.rng = src.rng;
        self.end_session = src.end_session;
        self.actor = src.actor;
        self.round = src.round;
        self.turns = src.turns;
        self.outcome = src.outcome;
        self.end_turn = src.end_turn;
        self.dirty = src.dirty;
        self.links.clone_from(&src.links);
    }
}

impl State {
    /// A 64-bit hash of everything that makes two states different games from here on.
    pub fn fingerprint(&self) -> u64 {
        const K: u64 = 0x517c_c1b7_2722_0a95;
        let mut h: u64 = 0;
        let mut mix = |v: u64| h = (h.rotate_left(5) ^ v).wrapping_mul(K);
        for &s in &self.slots {
            mix(s as u64);
        }
        for o in &self.objects {
            mix(((o.god as u64) << 33) | ((o.alive as u64) << 32) | o.base as u64);
        }
        for t in &self.timers {
            mix(t.due as u64);
            mix(((t.cons as u64) << 32) ^ ((t.this as u64) << 16) ^ t.bound as u64);
        }
        mix(self.clock as u64);
        mix(self.sessions as u64);
        mix(((self.goal as u64) << 8) | self.to_move as u64);
        mix(self.rng);
        mix(((self.actor as u64) << 32) | ((self.outcome as u64) << 24) | self.round as u64);
        mix(self.turns as u64);
        h
    }
}
