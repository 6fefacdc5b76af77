//! Pass 4: a grounded description as a [`Game`]. A state is the set of base propositions that
//! hold (a bit per possible `true` atom). A move is a **joint move**: one action per role,
//! packed 16 bits per role ([`JointMove`]); the legal moves are the product of every role's
//! legal actions, role order first. In a turn-taking game every role but one has a single
//! action (its `noop`), so the joint moves are the mover's choices.
//!
//! Decisions (the GDL papers leave them to the player; see `games/gdl/README.md`):
//! * **Who moves** ([`Game::to_move`]): the first role, in `role` order, with more than one
//!   legal action; when none has a choice (a forced move), the first role whose one action is
//!   not `noop` (the community's name for passing in turn-taking games); else role 0.
//! * **Status**: terminal when `terminal` holds or some role has no legal action. At the end,
//!   a role whose goal is strictly above every other's has won ([`Status::Won`]); otherwise it
//!   is a draw; a single-role game ends [`Status::Finished`].
//! * **Goals**: a role's goal is the largest value `v` (a number 0–100) with `(goal role v)`
//!   true; 0 when none holds. [`GoalEval`] scores a state by it, divided by 100.
//!
//! Evaluating a state's rules is the costly part. Two reasoners do it with the same results
//! ([`Reasoner`]): by default the differential net of [`super::propnet`], kept per thread and
//! updated by the inputs that changed since the state it last held; for descriptions with a
//! recursive stratum, the full evaluator, whose last model is kept per thread so that `legal`,
//! `status` and `to_move` on the same state evaluate once.

use super::ground::{AtomId, GId, GTerm, Grounded};
use super::parse::Symbols;
use super::propnet::{Net, NetState};
use super::{GdlError, GdlErrorKind};
use crate::game::Game;
use crate::game::Goals;
use crate::game::Status;
use crate::search::mcts::Evaluator;
use crate::wgdl::diag::Span;
use std::cell::RefCell;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

/// One action per role, 16 bits each (role 0 in the low bits): each role's index into its
/// action list ([`GdlGame::action_name`]).
pub type JointMove = u128;

/// Most roles a joint move can hold (the corpus's largest games have six).
pub const MAX_ROLES: usize = 8;

/// Role `r`'s part of a joint move in which it plays its action number `action`.
#[inline]
pub fn joint_part(action: usize, r: usize) -> JointMove {
    (action as JointMove) << (16 * r)
}
/// Most actions one role may have.
pub const MAX_ACTIONS: usize = u16::MAX as usize;

/// A state: the base propositions that hold, a bit each.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct GdlState {
    pub bits: Vec<u64>,
}

/// One possible action of a role.
#[derive(Clone, Debug)]
struct ActionInfo {
    term: GId,
    /// `(legal role a)`, if it can ever hold.
    legal: Option<AtomId>,
    /// `(does role a)`.
    does: AtomId,
}

/// A GDL game: roles, base propositions, actions, goals, all over one grounded description.
#[derive(Clone, Debug)]
pub struct GdlGame {
    g: Arc<Grounded>,
    syms: Arc<Symbols>,
    /// Tells games apart in the per-thread model cache.
    id: u64,
    /// The base propositions: `(true x)` atoms.
    base: Vec<AtomId>,
    /// `(next x)` atom and the base proposition it sets.
    next_to_base: Vec<(AtomId, u32)>,
    actions: Vec<Vec<ActionInfo>>,
    /// Per role: (goal atom, value).
    goals: Vec<Vec<(AtomId, u8)>>,
    terminal: Option<AtomId>,
    initial: GdlState,
    /// Per role: the number of its `noop` action, if it has one.
    noop: Vec<Option<usize>>,
    /// The differential net, when the description has one and it is chosen.
    net: Option<Arc<Net>>,
}

/// How a [`GdlGame`] evaluates its rules; both give the same models.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reasoner {
    /// Every dynamic rule, stratum by stratum, for each new state.
    Full,
    /// The differential net ([`super::propnet`]): only the rules whose inputs changed. Not
    /// available for descriptions with a recursive stratum, which keep `Full`.
    Differential,
}

/// The status of a finished game with these goals (see the module doc): one role finishes
/// alone; a role strictly above every other has won; otherwise a draw.
pub fn end_status(goals: &[u8]) -> Status {
    if goals.len() == 1 {
        return Status::Finished;
    }
    let best = *goals.iter().max().unwrap_or(&0);
    let mut top = goals.iter().enumerate().filter(|&(_, &v)| v == best);
    match (top.next(), top.next()) {
        (Some((r, _)), None) => Status::Won(r as u8),
        _ => Status::Draw,
    }
}

/// The role to move (see the module doc): the first with more than one legal action, else the
/// first whose one action is not its `noop`, else 0. `legal(r)` lists role r's legal actions.
pub fn mover<I: Iterator<Item = usize>>(roles: usize, legal: impl Fn(usize) -> I, noop: impl Fn(usize) -> Option<usize>) -> usize {
    (0..roles)
        .find(|&r| legal(r).nth(1).is_some())
        .or_else(|| (0..roles).find(|&r| legal(r).next().is_some_and(|i| Some(i) != noop(r))))
        .unwrap_or(0)
}

/// KIF text in one spelling: one space between tokens.
pub(super) fn normalize_kif(t: &str) -> String {
    t.replace('(', " ( ").replace(')', " ) ").split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The first of `n` names (by `name`) that is `text` as KIF: spelled the same, else the same
/// but for case (managers such as the Dresden server send upper case).
pub(super) fn find_kif(n: usize, name: impl Fn(usize) -> String, text: &str) -> Option<usize> {
    let want = normalize_kif(text);
    let names: Vec<String> = (0..n).map(|i| normalize_kif(&name(i))).collect();
    names.iter().position(|x| *x == want).or_else(|| names.iter().position(|x| x.eq_ignore_ascii_case(&want)))
}

static NEXT_ID: AtomicU64 = AtomicU64::new(1);

thread_local! {
    /// The last model evaluated on this thread: (game id, state bits, model without `does`).
    static LAST: RefCell<(u64, Vec<u64>, Vec<u64>)> = const { RefCell::new((0, Vec::new(), Vec::new())) };
    /// Scratch for `apply`'s model.
    static SCRATCH: RefCell<Vec<u64>> = const { RefCell::new(Vec::new()) };
    /// The differential nets of the games this thread played last (a few, most recent last).
    static NETS: RefCell<Vec<NetSlot>> = const { RefCell::new(Vec::new()) };
}

/// Games whose nets one thread keeps at once.
const NET_SLOTS: usize = 4;

/// One thread's net of one game: the base bits and `does` atoms it holds as inputs.
struct NetSlot {
    id: u64,
    base: Vec<u64>,
    does: [Option<AtomId>; MAX_ROLES],
    s: NetState,
}

#[inline]
fn bit(m: &[u64], a: AtomId) -> bool {
    m[a as usize / 64] >> (a % 64) & 1 == 1
}

#[inline]
fn set(m: &mut [u64], a: AtomId) {
    m[a as usize / 64] |= 1 << (a % 64);
}

impl GdlGame {
    pub(super) fn new(g: Grounded, syms: Symbols) -> Result<GdlGame, Vec<GdlError>> {
        let err = |what: String, expected: String| vec![GdlError::new(Span::new(0, 0), GdlErrorKind::Limit { what, expected })];
        let kw = g.kw;
        if g.roles.len() > MAX_ROLES {
            return Err(err(format!("{} roles", g.roles.len()), format!("at most {MAX_ROLES} roles")));
        }
        let base: Vec<AtomId> = g.atoms.of(kw.true_).to_vec();
        let base_index = |x: GId| base.iter().position(|&b| g.atoms.list[b as usize].1[0] == x);
        let next_to_base: Vec<(AtomId, u32)> = g
            .atoms
            .of(kw.next)
            .iter()
            .map(|&n| (n, base_index(g.atoms.list[n as usize].1[0]).expect("true ⊇ next in the relaxed model") as u32))
            .collect();
        let mut actions = vec![Vec::new(); g.roles.len()];
        for &d in g.atoms.of(kw.does) {
            let args = &g.atoms.list[d as usize].1;
            let Some(r) = g.roles.iter().position(|&r| r == args[0]) else { continue };
            actions[r].push(ActionInfo { term: args[1], legal: g.atoms.get(kw.legal, &args[..]), does: d });
        }
        for (r, a) in actions.iter().enumerate() {
            if a.len() > MAX_ACTIONS {
                return Err(err(
                    format!("role {} has {} possible actions", g.terms.show(g.roles[r], &syms), a.len()),
                    format!("at most {MAX_ACTIONS}"),
                ));
            }
        }
        let mut goals = vec![Vec::new(); g.roles.len()];
        for &a in g.atoms.of(kw.goal) {
            let args = &g.atoms.list[a as usize].1;
            let Some(r) = g.roles.iter().position(|&r| r == args[0]) else { continue };
            let value = match &g.terms.nodes[args[1] as usize] {
                GTerm::Const(s) => syms.name(*s).parse::<u8>().ok().filter(|&v| v <= 100),
                _ => None,
            };
            match value {
                Some(v) => goals[r].push((a, v)),
                None => return Err(err(format!("goal value {}", g.terms.show(args[1], &syms)), "a number from 0 to 100".into())),
            }
        }
        let terminal = g.atoms.get(kw.terminal, &[]);
        let mut initial = GdlState { bits: vec![0; base.len().div_ceil(64).max(1)] };
        for (i, &b) in base.iter().enumerate() {
            let x = g.atoms.list[b as usize].1[0];
            if g.atoms.get(kw.init, &[x]).is_some_and(|a| bit(&g.statics, a)) {
                initial.bits[i / 64] |= 1 << (i % 64);
            }
        }
        let noop_sym = syms.get("noop");
        let noop = actions
            .iter()
            .map(|acts| acts.iter().position(|a| noop_sym.is_some_and(|n| g.terms.nodes[a.term as usize] == GTerm::Const(n))))
            .collect();
        let net = Net::new(&g, &next_to_base, initial.bits.len()).map(Arc::new);
        Ok(GdlGame {
            noop,
            net,
            g: Arc::new(g),
            syms: Arc::new(syms),
            id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
            base,
            next_to_base,
            actions,
            goals,
            terminal,
            initial,
        })
    }

    pub fn roles(&self) -> usize {
        self.g.roles.len()
    }

    /// The same game evaluated by `r` (the differential net only where the description has
    /// one; see [`GdlGame::reasoner`]).
    pub fn with_reasoner(mut self, r: Reasoner) -> GdlGame {
        self.net = match r {
            Reasoner::Full => None,
            Reasoner::Differential => self.net.or_else(|| Net::new(&self.g, &self.next_to_base, self.initial.bits.len()).map(Arc::new)),
        };
        self.id = NEXT_ID.fetch_add(1, Ordering::Relaxed);
        self
    }

    /// The reasoner in use.
    pub fn reasoner(&self) -> Reasoner {
        if self.net.is_some() { Reasoner::Differential } else { Reasoner::Full }
    }

    pub fn role_name(&self, r: usize) -> String {
        self.g.terms.show(self.g.roles[r], &self.syms)
    }

    /// How many ground actions role `r` has (its action numbers are 0 … n−1).
    pub fn n_actions(&self, r: usize) -> usize {
        self.actions.get(r).map_or(0, Vec::len)
    }

    /// How many base propositions a state has (a bit each in [`GdlState::bits`]).
    pub fn n_base(&self) -> usize {
        self.base.len()
    }

    /// Role `r`'s `noop` action, if it has one.
    pub fn noop(&self, r: usize) -> Option<usize> {
        self.noop.get(r).copied().flatten()
    }

    /// Role `r`'s action number `i` as KIF text.
    pub fn action_name(&self, r: usize, i: usize) -> String {
        self.g.terms.show(self.actions[r][i].term, &self.syms)
    }

    /// The number of role `r`'s action written `text` (KIF, any case and spacing).
    pub fn action_index(&self, r: usize, text: &str) -> Option<usize> {
        find_kif(self.actions.get(r)?.len(), |i| self.action_name(r, i), text)
    }

    /// Role `r`'s action in a joint move.
    pub fn action_of(mv: JointMove, r: usize) -> usize {
        (mv >> (16 * r)) as usize & 0xFFFF
    }

    /// A joint move as text: `(mark 1 1) noop`.
    pub fn show_move(&self, mv: JointMove) -> String {
        (0..self.roles()).map(|r| self.action_name(r, Self::action_of(mv, r))).collect::<Vec<_>>().join(" ")
    }

    /// The base propositions that hold, as KIF text (sorted).
    pub fn show_state(&self, st: &GdlState) -> Vec<String> {
        let mut v: Vec<String> = (0..self.base.len())
            .filter(|&i| st.bits[i / 64] >> (i % 64) & 1 == 1)
            .map(|i| self.g.terms.show(self.g.atoms.list[self.base[i] as usize].1[0], &self.syms))
            .collect();
        v.sort();
        v
    }

    /// Numbers of ground atoms and dynamic ground rules (for `check`-style summaries).
    pub fn size(&self) -> (usize, usize) {
        (self.g.atoms.list.len(), self.g.groups.iter().map(|g| g.heads.len()).sum())
    }

    /// Puts the state's base propositions into a model holding the static atoms.
    fn load(&self, st: &GdlState, m: &mut Vec<u64>) {
        m.clear();
        m.extend_from_slice(&self.g.statics);
        for (i, &b) in self.base.iter().enumerate() {
            if st.bits[i / 64] >> (i % 64) & 1 == 1 {
                set(m, b);
            }
        }
    }

    /// Runs `f` on this thread's net of this game (made, settled with no input holding, the
    /// first time).
    fn net_slot<R>(&self, net: &Net, f: impl FnOnce(&mut NetSlot) -> R) -> R {
        NETS.with(|c| {
            let mut slots = c.borrow_mut();
            let k = match slots.iter().position(|s| s.id == self.id) {
                Some(k) => k,
                None => {
                    if slots.len() >= NET_SLOTS {
                        slots.remove(0);
                    }
                    let base = vec![0; self.initial.bits.len()];
                    slots.push(NetSlot { id: self.id, base, does: [None; MAX_ROLES], s: net.fresh() });
                    slots.len() - 1
                }
            };
            f(&mut slots[k])
        })
    }

    /// Brings a net to the state `bits` and, with `mv`, to that joint move's `does` atoms:
    /// only the inputs that differ from what it holds are set.
    fn sync(&self, net: &Net, slot: &mut NetSlot, bits: &[u64], mv: Option<JointMove>) {
        for (w, (&now, held)) in bits.iter().zip(slot.base.iter_mut()).enumerate() {
            let mut x = now ^ *held;
            while x != 0 {
                let i = w * 64 + x.trailing_zeros() as usize;
                x &= x - 1;
                net.set_input(&mut slot.s, self.base[i], now >> (i % 64) & 1 == 1);
            }
            *held = now;
        }
        if let Some(mv) = mv {
            let mut want = [None; MAX_ROLES];
            for (r, acts) in self.actions.iter().enumerate() {
                want[r] = Some(acts[Self::action_of(mv, r)].does);
            }
            for &old in slot.does.iter().flatten() {
                if !want.contains(&Some(old)) {
                    net.set_input(&mut slot.s, old, false);
                }
            }
            for &new in want.iter().flatten() {
                net.set_input(&mut slot.s, new, true);
            }
            slot.does = want;
        }
        net.settle(&mut slot.s);
    }

    /// Runs `f` on the state's model without `does` (its `does`-dependent atoms may be
    /// stale; `legal`, `goal` and `terminal` never read them): from the differential net, or
    /// from the per-thread cache of the full evaluator when `st` was the last state evaluated.
    fn with_model<R>(&self, st: &GdlState, f: impl FnOnce(&[u64]) -> R) -> R {
        if let Some(net) = &self.net {
            return self.net_slot(net, |slot| {
                self.sync(net, slot, &st.bits, None);
                f(&slot.s.model)
            });
        }
        LAST.with(|c| {
            let mut c = c.borrow_mut();
            let (id, bits, model) = &mut *c;
            if *id != self.id || *bits != st.bits {
                self.load(st, model);
                self.g.eval(model, false);
                *id = self.id;
                bits.clone_from(&st.bits);
            }
            f(model)
        })
    }

    /// Each role's goal in `st` (0–100).
    pub fn goal_values(&self, st: &GdlState) -> Vec<u8> {
        self.with_model(st, |m| {
            self.goals.iter().map(|gs| gs.iter().filter(|&&(a, _)| bit(m, a)).map(|&(_, v)| v).max().unwrap_or(0)).collect()
        })
    }

    /// Whether `terminal` holds in `st`.
    pub fn is_terminal(&self, st: &GdlState) -> bool {
        self.terminal.is_some_and(|t| self.with_model(st, |m| bit(m, t)))
    }

    /// Each role's legal action numbers in `st`.
    pub fn legal_actions(&self, st: &GdlState) -> Vec<Vec<usize>> {
        self.with_model(st, |m| {
            self.actions.iter().map(|acts| (0..acts.len()).filter(|&i| acts[i].legal.is_some_and(|l| bit(m, l))).collect()).collect()
        })
    }
}

impl Game for GdlGame {
    type State = GdlState;
    type Move = JointMove;
    type Error = std::convert::Infallible;

    fn initial(&self) -> Result<GdlState, Self::Error> {
        Ok(self.initial.clone())
    }

    fn legal(&self, st: &GdlState, out: &mut Vec<JointMove>) -> Result<(), Self::Error> {
        out.clear();
        self.with_model(st, |m| {
            if self.terminal.is_some_and(|t| bit(m, t)) {
                return;
            }
            out.push(0);
            for (r, acts) in self.actions.iter().enumerate() {
                let before = out.len();
                for i in 0..before {
                    let partial = out[i];
                    for (k, a) in acts.iter().enumerate() {
                        if a.legal.is_some_and(|l| bit(m, l)) {
                            out.push(partial | joint_part(k, r));
                        }
                    }
                }
                out.drain(..before);
                if out.is_empty() {
                    return;
                }
            }
        });
        Ok(())
    }

    fn apply(&self, st: &mut GdlState, mv: JointMove) -> Result<(), Self::Error> {
        if let Some(net) = &self.net {
            self.net_slot(net, |slot| {
                self.sync(net, slot, &st.bits, Some(mv));
                st.bits.copy_from_slice(&slot.s.next);
            });
            return Ok(());
        }
        SCRATCH.with(|s| {
            let mut m = s.borrow_mut();
            self.with_model(st, |model| {
                m.clear();
                m.extend_from_slice(model);
            });
            for (r, acts) in self.actions.iter().enumerate() {
                set(&mut m, acts[Self::action_of(mv, r)].does);
            }
            self.g.eval_does(&mut m);
            // The next state, written over this one (no allocation per move).
            st.bits.fill(0);
            for &(n, b) in &self.next_to_base {
                if bit(&m, n) {
                    st.bits[b as usize / 64] |= 1 << (b % 64);
                }
            }
        });
        Ok(())
    }

    fn status(&self, st: &GdlState, legal: &[JointMove]) -> Status {
        if !legal.is_empty() && !self.is_terminal(st) {
            return Status::Running;
        }
        end_status(&self.goal_values(st))
    }

    fn to_move(&self, st: &GdlState) -> usize {
        self.with_model(st, |m| {
            let legal = |r: usize| (0..self.actions[r].len()).filter(move |&i| self.actions[r][i].legal.is_some_and(|l| bit(m, l)));
            mover(self.actions.len(), legal, |r| self.noop[r])
        })
    }

    fn hash(&self, st: &GdlState) -> u64 {
        st.bits.iter().fold(0x9E37_79B9_7F4A_7C15u64, |h, &w| crate::rng::mix(h ^ w))
    }
}

impl Goals for GdlGame {
    /// GDL has no ordered sub-goals: the search runs to the game's end.
    fn goals_reached(&self, _st: &GdlState) -> usize {
        0
    }
    fn n_goals(&self) -> usize {
        1
    }
}

/// Scores a state by a role's GDL goal, divided by 100 (in [0, 1]): for any game with
/// [`Features`](crate::game::Features) goals (grounded, non-ground, either).
pub struct GoalEval<'a, G = GdlGame> {
    pub game: &'a G,
}

impl<G: crate::game::Features + Sync> Evaluator<G::State> for GoalEval<'_, G> {
    fn value(&self, st: &G::State, player: usize) -> f64 {
        self.game.goal(st, player) / 100.0
    }
}

/// Player2's view: mobility is the role's legal actions, novelty the share of base
/// propositions that differ from the initial state, the goal the GDL goal.
impl crate::game::Features for GdlGame {
    fn mobility(&self, st: &Self::State, role: usize) -> usize {
        self.legal_actions(st).get(role).map_or(0, Vec::len)
    }
    fn novelty(&self, st: &Self::State, initial: &Self::State) -> f64 {
        let (mut diff, mut union) = (0u32, 0u32);
        for (a, b) in st.bits.iter().zip(&initial.bits) {
            diff += (a ^ b).count_ones();
            union += (a | b).count_ones();
        }
        if union == 0 { 0.0 } else { diff as f64 / union as f64 }
    }
    fn goal(&self, st: &Self::State, role: usize) -> f64 {
        self.goal_values(st).get(role).map_or(0.0, |&v| v as f64)
    }
    fn own_action(&self, mv: JointMove, role: usize) -> Option<usize> {
        Some(Self::action_of(mv, role))
    }
}
