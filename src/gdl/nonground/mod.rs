//! A non-ground evaluator: the checked rules run bottom-up, stratum by stratum, directly over a
//! state's facts, with no grounding — the way to play a description too large to ground, and
//! the reference the grounded evaluator is held to (`tests/gdl.rs` replays random games
//! through both, state by state).
//!
//! Facts are flat terms ([`facts`]) in three layers: the static relations, evaluated once when
//! the description is loaded; a state's (its `true` terms and every dynamic relation that does
//! not depend on `does`), evaluated once per state and kept per thread for the next query of
//! the same state; and a joint move's (`does` and what depends on it), evaluated on top of its
//! state's for the next state. Each stratum runs its rules' joins ([`eval`]) to its fixpoint,
//! semi-naively when recursive; negation is failure against the strata already finished.

pub mod eval;
pub mod facts;

use super::check::Checked;
use super::fx::FxHashMap;
use super::parse::{Keywords, Rule, Sym, Symbols};
use eval::{Derived, Layer, Plan, View, Window};
pub use facts::{Facts, Flat};
use std::cell::RefCell;
use std::sync::atomic::{AtomicU64, Ordering};

/// The static layer, read by every stratum and written by the static ones.
enum Stat<'a> {
    Shared(&'a Facts),
    Own(&'a mut Facts),
}

/// Most facts one stratum may derive while a description is loaded (its static relations, and a
/// sample state): past it, the stratum's relations are named for [`super::demand`].
pub const LOAD_FACTS: usize = 1_000_000;
/// Most facts one stratum may derive in one state while playing.
pub const PLAY_FACTS: usize = 20_000_000;
/// Words (`u32`) of flat terms a stratum's facts, and a round's derivations, may hold per fact
/// of its cap (32: 1 M facts may hold 32 M words, 128 MB, at load; 20 M facts 2.5 GB while
/// playing): with [`super::ground::MAX_TERM_SIZE`], what bounds the memory of terms that are
/// few but large.
pub const WORDS_PER_FACT: usize = 32;

/// An evaluation that passed its budget: the relations of the stratum that did.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{}", self.describe())]
pub struct Overflow {
    pub relations: Vec<Sym>,
    pub facts: usize,
    /// A term past [`super::ground::MAX_TERM_DEPTH`] or [`super::ground::MAX_TERM_SIZE`]
    /// was derived: the relation whose rule derived it, the term's depth and size.
    pub deep: Option<(Sym, u32, u32)>,
}

impl Overflow {
    fn describe(&self) -> String {
        match self.deep {
            Some((_, depth, size)) => format!(
                "the non-ground evaluator derived a term {depth} deep of {size} symbols; expected terms at most {} deep and of at most {} symbols (a relation that nests terms without end is infinite)",
                super::ground::MAX_TERM_DEPTH,
                super::ground::MAX_TERM_SIZE
            ),
            None => format!(
                "the non-ground evaluator passed {} facts in one stratum of one state; expected at most {PLAY_FACTS} facts of {WORDS_PER_FACT} words on average (a description whose relations grow this large cannot be played here)",
                self.facts
            ),
        }
    }
}

/// Runs one stratum to its fixpoint, its facts into its layer (static or state), at most `cap`
/// of them.
fn run(reg: &facts::Registry, s: &Stratum, mut stat: Stat, state: &mut Facts, moves: &mut Facts, cap: usize) -> Result<(), Overflow> {
    let mut window = Window::default();
    let mut first = true;
    loop {
        let mut out = Derived { cap, words: cap.saturating_mul(WORDS_PER_FACT), ..Derived::default() };
        {
            let st: &Facts = match &stat {
                Stat::Shared(f) => f,
                Stat::Own(f) => f,
            };
            let view = View { stat: st, state, moves };
            for p in if first { &s.full } else { &s.delta } {
                eval::join(p, view, &window, &mut out);
            }
        }
        let target: &mut Facts = match (s.layer, &mut stat) {
            (Layer::Static, Stat::Own(f)) => f,
            (Layer::Static, Stat::Shared(_)) => unreachable!("static strata run when the description is loaded"),
            (Layer::State, _) => state,
            (Layer::Moves, _) => moves,
        };
        if !insert_round(reg, s, target, &out, &mut window, cap)? {
            return Ok(());
        }
        first = false;
    }
}

/// As [`run`] for a stratum of a joint move, over a state's facts that it only reads.
fn run_moves(reg: &facts::Registry, s: &Stratum, stat: &Facts, state: &Facts, moves: &mut Facts, cap: usize) -> Result<(), Overflow> {
    let mut window = Window::default();
    let mut first = true;
    loop {
        let mut out = Derived { cap, words: cap.saturating_mul(WORDS_PER_FACT), ..Derived::default() };
        {
            let view = View { stat, state, moves };
            for p in if first { &s.full } else { &s.delta } {
                eval::join(p, view, &window, &mut out);
            }
        }
        if !insert_round(reg, s, moves, &out, &mut window, cap)? {
            return Ok(());
        }
        first = false;
    }
}

/// Adds a round's facts to the stratum's layer; whether another round is due (the stratum
/// is recursive and gained facts, which `window` then holds); an overflow past `cap` facts.
fn insert_round(
    reg: &facts::Registry,
    s: &Stratum,
    target: &mut Facts,
    out: &Derived,
    window: &mut Window,
    cap: usize,
) -> Result<bool, Overflow> {
    let before: Vec<(Sym, u32)> = s.preds.iter().map(|&p| (p, target.of(p).len() as u32)).collect();
    let overflow = |target: &Facts| Overflow {
        relations: s.preds.clone(),
        facts: s.preds.iter().map(|&p| target.of(p).len()).sum::<usize>() + out.heads.len(),
        deep: out.deep,
    };
    if out.over {
        return Err(overflow(target));
    }
    for &(pred, lo, hi) in &out.heads {
        target.insert(pred, &out.flat[lo as usize..hi as usize], reg);
    }
    let total: usize = s.preds.iter().map(|&p| target.of(p).len()).sum();
    let words: usize = s.preds.iter().map(|&p| target.rel(p).map_or(0, |r| r.words)).sum();
    if total > cap || words > cap.saturating_mul(WORDS_PER_FACT) {
        return Err(Overflow { relations: s.preds.clone(), facts: total, deep: None });
    }
    if !s.recursive {
        return Ok(false);
    }
    window.clear();
    for (p, lo) in before {
        let hi = target.of(p).len() as u32;
        if hi > lo {
            window.insert(p, (lo, hi));
        }
    }
    Ok(!window.is_empty())
}

/// One stratum's rules as joins.
struct Stratum {
    /// Every rule in full.
    full: Vec<Plan>,
    /// Every rule once per positive literal of the stratum, that literal first (for the
    /// rounds after the first of a recursive stratum).
    delta: Vec<Plan>,
    recursive: bool,
    layer: Layer,
    preds: Vec<Sym>,
}

/// The rules by stratum, the static facts, and where each relation's facts live.
pub struct NonGround {
    strata: Vec<Stratum>,
    statics: Facts,
    reg: facts::Registry,
    layer_of: FxHashMap<Sym, Layer>,
    /// Tells descriptions apart in the per-thread cache.
    id: u64,
    pub kw: Keywords,
    pub syms: Symbols,
    pub roles: Vec<Sym>,
    /// The initial state evaluated once more when loading: how long it took, and the
    /// relations' sizes there, largest first.
    pub sample: (std::time::Duration, Vec<(Sym, usize)>),
}

static NEXT_ID: AtomicU64 = AtomicU64::new(1);

thread_local! {
    /// The last state evaluated on this thread: (description id, its `true` terms, its facts).
    static LAST: RefCell<(u64, Vec<Flat>, Facts)> = RefCell::new((0, Vec::new(), Facts::default()));
}

/// The facts of a state (and, for a next state, of a joint move) over a description's static
/// facts.
pub struct Model<'a> {
    ng: &'a NonGround,
    pub state: Facts,
    pub moves: Facts,
}

impl Model<'_> {
    fn layer(&self, pred: Sym) -> &Facts {
        match self.ng.layer(pred) {
            Layer::Static => &self.ng.statics,
            Layer::State => &self.state,
            Layer::Moves => &self.moves,
        }
    }

    pub fn contains(&self, pred: Sym, args: &[u32]) -> bool {
        self.layer(pred).contains(pred, args)
    }

    pub fn of(&self, pred: Sym) -> &[Flat] {
        self.layer(pred).of(pred)
    }
}

impl NonGround {
    /// The evaluator of a checked description (panics where [`NonGround::try_new`] overflows;
    /// for tests of small games).
    pub fn new(c: &Checked, syms: &Symbols) -> NonGround {
        Self::try_new(c, syms).unwrap_or_else(|o| panic!("the non-ground evaluator passed {} facts", o.facts))
    }

    /// The evaluator of a checked description: its static relations computed, its rules
    /// planned; an overflow when a stratum passes [`LOAD_FACTS`] facts (statically, or in the
    /// initial state).
    pub fn try_new(c: &Checked, syms: &Symbols) -> Result<NonGround, Overflow> {
        Self::try_new_within(c, syms, LOAD_FACTS)
    }

    /// As [`NonGround::try_new`], with at most `cap` facts a dynamic stratum in the sample
    /// state (the static strata keep [`LOAD_FACTS`]).
    pub fn try_new_within(c: &Checked, syms: &Symbols, cap: usize) -> Result<NonGround, Overflow> {
        let mut syms = syms.clone();
        let kw = Keywords::new(&mut syms);
        let layer_of: FxHashMap<Sym, Layer> = c
            .arity
            .keys()
            .map(|&p| {
                let l = if c.on_does.contains(&p) {
                    Layer::Moves
                } else if c.dynamic.contains(&p) {
                    Layer::State
                } else {
                    Layer::Static
                };
                (p, l)
            })
            .collect();
        let mut ng = NonGround {
            strata: Vec::new(),
            statics: Facts::default(),
            reg: facts::Registry::default(),
            layer_of,
            id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
            kw,
            syms,
            roles: c.roles.clone(),
            sample: Default::default(),
        };
        // The rules by stratum, once (a filter per stratum would be quadratic in the relations).
        let mut by_scc: Vec<Vec<&Rule>> = vec![Vec::new(); c.sccs.len()];
        for r in &c.rules {
            by_scc[c.scc_of[&r.head.pred]].push(r);
        }
        let rules_of = |s: usize| -> &[&Rule] { &by_scc[s] };
        // The static strata, evaluated now (each planned by the sizes of those below it).
        let empty = Facts::default();
        for (s, preds) in c.sccs.iter().enumerate() {
            if preds.iter().any(|p| c.dynamic.contains(p)) {
                continue;
            }
            let stratum = ng.plan(rules_of(s), preds, c.recursive[s], Layer::Static, &empty, &empty);
            ng.statics.reindex(&ng.reg);
            let (mut a, mut b) = (Facts::default(), Facts::default());
            run(&ng.reg, &stratum, Stat::Own(&mut ng.statics), &mut a, &mut b, LOAD_FACTS)?;
        }
        // The dynamic strata: planned once blind, then again by the sizes of a sample model
        // (the initial state and its first joint move).
        let dynamic: Vec<usize> = (0..c.sccs.len()).filter(|&s| c.sccs[s].iter().any(|p| c.dynamic.contains(p))).collect();
        let plan_all = |ng: &mut NonGround, state: &Facts, moves: &Facts| {
            let strata: Vec<Stratum> = dynamic
                .iter()
                .map(|&s| {
                    let layer = if c.sccs[s].iter().any(|p| c.on_does.contains(p)) { Layer::Moves } else { Layer::State };
                    ng.plan(rules_of(s), &c.sccs[s], c.recursive[s], layer, state, moves)
                })
                .collect();
            ng.strata = strata;
            ng.statics.reindex(&ng.reg);
        };
        // First plans: each stratum by the initial state's facts of the strata below it,
        // computed as it goes (a blind plan can be slower by orders of magnitude).
        let truths = ng.initial();
        let mut state = Facts::default();
        for t in &truths {
            state.insert(ng.kw.true_, t, &ng.reg);
        }
        let mut strata = Vec::with_capacity(dynamic.len());
        for &s in &dynamic {
            let layer = if c.sccs[s].iter().any(|p| c.on_does.contains(p)) { Layer::Moves } else { Layer::State };
            let stratum = ng.plan(rules_of(s), &c.sccs[s], c.recursive[s], layer, &state, &empty);
            ng.statics.reindex(&ng.reg);
            state.reindex(&ng.reg);
            if layer == Layer::State {
                let mut no_moves = Facts::default();
                run(&ng.reg, &stratum, Stat::Shared(&ng.statics), &mut state, &mut no_moves, cap)?;
            }
            strata.push(stratum);
        }
        ng.strata = strata;
        let does: Vec<(Flat, Flat)> = (0..ng.roles.len())
            .filter_map(|r| ng.second_args_in(&state, ng.kw.legal, &ng.role(r)).into_iter().next().map(|a| (ng.role(r), a)))
            .collect();
        let moves = if does.len() == ng.roles.len() { ng.move_facts_within(&state, &does, cap)? } else { Facts::default() };
        plan_all(&mut ng, &state, &moves);
        let t = std::time::Instant::now();
        let state = ng.state_facts_within(&truths, cap)?;
        let mut sizes: Vec<(Sym, usize)> = state.rels.iter().map(|(&p, r)| (p, r.list.len())).collect();
        sizes.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        ng.sample = (t.elapsed(), sizes);
        Ok(ng)
    }

    fn layer(&self, pred: Sym) -> Layer {
        self.layer_of.get(&pred).copied().unwrap_or(Layer::Static)
    }

    /// The joins of one stratum's rules, ordered by the sizes in the sample layers.
    fn plan(&mut self, rules: &[&Rule], preds: &[Sym], recursive: bool, layer: Layer, state: &Facts, moves: &Facts) -> Stratum {
        let layer_of = self.layer_of.clone();
        let place = |p: Sym| layer_of.get(&p).copied().unwrap_or(Layer::Static);
        let statics = std::mem::take(&mut self.statics);
        let sample = View { stat: &statics, state, moves };
        let full = rules.iter().map(|r| Plan::new(r, None, &place, sample, &mut self.reg)).collect();
        let mut delta = Vec::new();
        if recursive {
            for r in rules {
                let pos: Vec<Sym> =
                    r.body.iter().filter_map(|l| if let super::parse::Literal::Pos(a) = l { Some(a.pred) } else { None }).collect();
                for (i, p) in pos.iter().enumerate() {
                    if preds.contains(p) {
                        delta.push(Plan::new(r, Some(i), &place, sample, &mut self.reg));
                    }
                }
            }
        }
        self.statics = statics;
        Stratum { full, delta, recursive, layer, preds: preds.to_vec() }
    }

    /// The facts of the state whose `true` terms are `truths`: every dynamic relation that
    /// does not depend on `does` (an overflow past [`PLAY_FACTS`] facts in a stratum).
    pub fn state_facts(&self, truths: &[Flat]) -> Result<Facts, Overflow> {
        self.state_facts_within(truths, PLAY_FACTS)
    }

    fn state_facts_within(&self, truths: &[Flat], cap: usize) -> Result<Facts, Overflow> {
        let mut state = Facts::default();
        for t in truths {
            state.insert(self.kw.true_, t, &self.reg);
        }
        let mut moves = Facts::default();
        for s in self.strata.iter().filter(|s| s.layer == Layer::State) {
            run(&self.reg, s, Stat::Shared(&self.statics), &mut state, &mut moves, cap)?;
        }
        Ok(state)
    }

    /// The facts of joint move `does` (role, action) in a state with facts `state`.
    pub fn move_facts(&self, state: &Facts, does: &[(Flat, Flat)]) -> Result<Facts, Overflow> {
        self.move_facts_within(state, does, PLAY_FACTS)
    }

    fn move_facts_within(&self, state: &Facts, does: &[(Flat, Flat)], cap: usize) -> Result<Facts, Overflow> {
        let mut moves = Facts::default();
        for (r, a) in does {
            let mut args = r.to_vec();
            args.extend_from_slice(a);
            moves.insert(self.kw.does, &args, &self.reg);
        }
        for s in self.strata.iter().filter(|s| s.layer == Layer::Moves) {
            run_moves(&self.reg, s, &self.statics, state, &mut moves, cap)?;
        }
        Ok(moves)
    }

    /// The model of a state (its `true` terms) and a joint move (`does` role/action terms).
    pub fn model(&self, truths: &[Flat], does: &[(Flat, Flat)]) -> Result<Model<'_>, Overflow> {
        let state = self.state_facts(truths)?;
        let moves = if does.is_empty() { Facts::default() } else { self.move_facts(&state, does)? };
        Ok(Model { ng: self, state, moves })
    }

    /// Calls `f` with the facts of the state `truths`, from this thread's cache when it was the
    /// last state evaluated here.
    pub fn with_state<R>(&self, truths: &[Flat], f: impl FnOnce(&Facts) -> R) -> Result<R, Overflow> {
        LAST.with(|c| {
            let mut c = c.borrow_mut();
            if c.0 != self.id || c.1 != truths {
                let facts = self.state_facts(truths)?;
                *c = (self.id, truths.to_vec(), facts);
            }
            Ok(f(&c.2))
        })
    }

    /// The initial state's `true` terms.
    pub fn initial(&self) -> Vec<Flat> {
        self.statics.of(self.kw.init).to_vec()
    }

    /// The `true` terms after `does` in the state `truths`.
    pub fn next(&self, truths: &[Flat], does: &[(Flat, Flat)]) -> Result<Vec<Flat>, Overflow> {
        // `next` lives in one layer: the moves' when some rule of it reads `does`, else the
        // state's, or the static facts' (`(next done)`, a bare fact, holds after every move).
        match self.layer(self.kw.next) {
            Layer::Moves => {
                let moves = self.with_state(truths, |state| self.move_facts(state, does))??;
                Ok(moves.of(self.kw.next).to_vec())
            }
            Layer::State => self.with_state(truths, |state| state.of(self.kw.next).to_vec()),
            Layer::Static => Ok(self.statics.of(self.kw.next).to_vec()),
        }
    }

    /// Role `r`'s name as a flat term.
    pub fn role(&self, r: usize) -> Flat {
        vec![self.roles[r], 0].into()
    }

    /// The facts of relation `pred` whose first argument is `first`: their remaining argument.
    pub fn second_args(&self, m: &Model, pred: Sym, first: &[u32]) -> Vec<Flat> {
        m.of(pred).iter().filter(|f| f.starts_with(first)).map(|f| f[first.len()..].into()).collect()
    }

    /// As [`NonGround::second_args`], over a state's facts (or the static ones).
    pub fn second_args_in(&self, state: &Facts, pred: Sym, first: &[u32]) -> Vec<Flat> {
        let facts = if self.layer(pred) == Layer::Static { &self.statics } else { state };
        facts.of(pred).iter().filter(|f| f.starts_with(first)).map(|f| f[first.len()..].into()).collect()
    }

    /// Whether `pred(args)` holds in a state with facts `state`.
    pub fn holds_in(&self, state: &Facts, pred: Sym, args: &[u32]) -> bool {
        let facts = if self.layer(pred) == Layer::Static { &self.statics } else { state };
        facts.contains(pred, args)
    }

    /// A flat term as text.
    pub fn text(&self, f: &[u32]) -> String {
        let mut s = String::new();
        facts::show(f, 0, &|x| self.syms.name(x).to_string(), &mut s);
        s
    }
}

/// A description played through the non-ground evaluator (no grounding): the way to play a
/// game too large to ground. States are their `true` terms, sorted; a move is a joint move of
/// action numbers ([`super::JointMove`], 16 bits per role) into per-role action tables that
/// grow as actions are first seen legal (shared by every thread).
pub struct NonGroundGame {
    ng: std::sync::Arc<NonGround>,
    actions: Vec<std::sync::RwLock<ActionTable>>,
    noop: Flat,
}

/// One role's actions seen so far, numbered in the order they were first seen.
#[derive(Default)]
struct ActionTable {
    list: Vec<Flat>,
    index: FxHashMap<Flat, u32>,
}

/// A state of a [`NonGroundGame`]: its `true` terms, sorted.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct NgState {
    pub truths: Vec<Flat>,
}

impl NonGroundGame {
    pub fn new(ng: NonGround) -> NonGroundGame {
        let actions = (0..ng.roles.len()).map(|_| std::sync::RwLock::new(ActionTable::default())).collect();
        let noop = ng.syms.get("noop").map_or_else(|| Flat::from([]), |s| vec![s, 0].into());
        NonGroundGame { ng: std::sync::Arc::new(ng), actions, noop }
    }

    pub fn roles(&self) -> usize {
        self.ng.roles.len()
    }

    /// The number of role `r`'s action `a`, added to its table when new (a role has at most
    /// [`super::game::MAX_ACTIONS`]: past that, the last number is reused, and the game
    /// cannot tell those actions apart).
    fn action_number(&self, r: usize, a: &[u32]) -> super::JointMove {
        if let Some(&i) = self.actions[r].read().expect("action table").index.get(a) {
            return i as super::JointMove;
        }
        let mut t = self.actions[r].write().expect("action table");
        if let Some(&i) = t.index.get(a) {
            return i as super::JointMove;
        }
        if t.list.len() >= super::game::MAX_ACTIONS {
            return (super::game::MAX_ACTIONS - 1) as super::JointMove;
        }
        let i = t.list.len() as u32;
        t.list.push(a.into());
        t.index.insert(a.into(), i);
        i as super::JointMove
    }

    fn action(&self, r: usize, i: usize) -> Flat {
        self.actions[r].read().expect("action table").list[i].clone()
    }

    /// Role `r`'s action in a joint move, as text.
    pub fn action_text(&self, mv: super::JointMove, r: usize) -> String {
        self.ng.text(&self.action(r, super::GdlGame::action_of(mv, r)))
    }

    /// Role `r`'s name.
    pub fn role_name(&self, r: usize) -> String {
        self.ng.text(&self.ng.role(r))
    }

    /// Role `r`'s action number `i` (numbers are given as actions are first seen legal).
    pub fn action_name(&self, r: usize, i: usize) -> String {
        self.ng.text(&self.action(r, i))
    }

    /// The number of role `r`'s action written `text` (KIF, any spacing; the case of the
    /// description, else any), among the actions seen legal so far.
    pub fn action_index(&self, r: usize, text: &str) -> Option<usize> {
        let n = self.actions.get(r)?.read().expect("action table").list.len();
        super::game::find_kif(n, |i| self.action_name(r, i), text)
    }

    /// Each role's legal action numbers in `st` (none for a state whose evaluation
    /// overflows, which [`Game::legal`](crate::game::Game::legal) reports as an error).
    pub fn legal_actions(&self, st: &NgState) -> Vec<Vec<usize>> {
        self.ng
            .with_state(&st.truths, |facts| {
                self.legal_per_role(facts)
                    .iter()
                    .enumerate()
                    .map(|(r, acts)| acts.iter().map(|a| self.action_number(r, a) as usize).collect())
                    .collect()
            })
            .unwrap_or_else(|_| vec![Vec::new(); self.roles()])
    }

    /// Each role's legal actions in a state with facts `facts` (as flat terms).
    fn legal_per_role(&self, facts: &Facts) -> Vec<Vec<Flat>> {
        (0..self.roles()).map(|r| self.ng.second_args_in(facts, self.ng.kw.legal, &self.ng.role(r))).collect()
    }

    fn goals_in(&self, facts: &Facts) -> Vec<u8> {
        (0..self.roles())
            .map(|r| {
                self.ng
                    .second_args_in(facts, self.ng.kw.goal, &self.ng.role(r))
                    .iter()
                    .filter_map(|v| self.ng.text(v).parse::<u8>().ok())
                    .max()
                    .unwrap_or(0)
            })
            .collect()
    }

    /// Each role's goal in `st` (the largest that holds; 0 when none, and for a state whose
    /// evaluation overflows).
    pub fn goal_values(&self, st: &NgState) -> Vec<u8> {
        self.ng.with_state(&st.truths, |facts| self.goals_in(facts)).unwrap_or_else(|_| vec![0; self.roles()])
    }

    /// The state's `true` terms as text, sorted.
    pub fn show_state(&self, st: &NgState) -> Vec<String> {
        let mut v: Vec<String> = st.truths.iter().map(|t| self.ng.text(t)).collect();
        v.sort();
        v
    }
}

/// A state whose evaluation overflows is an error of [`Game::legal`](crate::game::Game::legal)
/// and [`Game::apply`](crate::game::Game::apply); the queries that cannot fail answer as if
/// the game went on (`status`) or role 0 moved (`to_move`), and every search asks `legal` of
/// a state first.
impl crate::game::Game for NonGroundGame {
    type State = NgState;
    type Move = super::JointMove;
    type Error = Overflow;

    fn initial(&self) -> Result<NgState, Self::Error> {
        let mut truths = self.ng.initial();
        truths.sort();
        Ok(NgState { truths })
    }

    fn legal(&self, st: &NgState, out: &mut Vec<super::JointMove>) -> Result<(), Self::Error> {
        out.clear();
        self.ng.with_state(&st.truths, |facts| {
            if self.ng.holds_in(facts, self.ng.kw.terminal, &[]) {
                return;
            }
            out.push(0);
            for (r, acts) in self.legal_per_role(facts).iter().enumerate() {
                let before = out.len();
                for i in 0..before {
                    for a in acts {
                        out.push(out[i] | self.action_number(r, a) << (16 * r));
                    }
                }
                out.drain(..before);
            }
        })
    }

    fn apply(&self, st: &mut NgState, mv: super::JointMove) -> Result<(), Self::Error> {
        let does: Vec<(Flat, Flat)> =
            (0..self.roles()).map(|r| (self.ng.role(r), self.action(r, super::GdlGame::action_of(mv, r)))).collect();
        let mut next = self.ng.next(&st.truths, &does)?;
        next.sort();
        st.truths = next;
        Ok(())
    }

    fn status(&self, st: &NgState, legal: &[super::JointMove]) -> crate::game::Status {
        self.ng
            .with_state(&st.truths, |facts| {
                if !legal.is_empty() && !self.ng.holds_in(facts, self.ng.kw.terminal, &[]) {
                    return crate::game::Status::Running;
                }
                super::game::end_status(&self.goals_in(facts))
            })
            .unwrap_or(crate::game::Status::Running)
    }

    /// As [`super::GdlGame`] ([`super::game::mover`]).
    fn to_move(&self, st: &NgState) -> usize {
        let Ok(per_role) = self.ng.with_state(&st.truths, |facts| self.legal_per_role(facts)) else { return 0 };
        let noop = |r: usize| per_role[r].iter().position(|a| *a == self.noop);
        super::game::mover(self.roles(), |r| 0..per_role[r].len(), noop)
    }

    fn hash(&self, st: &NgState) -> u64 {
        st.truths.iter().flat_map(|t| t.iter()).fold(0x9E37_79B9_7F4A_7C15u64, |h, &w| crate::rng::mix(h ^ w as u64))
    }
}

/// As for [`super::GdlGame`]: mobility is the role's legal actions, novelty the share of `true`
/// terms that differ from the initial state's, the goal the GDL goal.
impl crate::game::Features for NonGroundGame {
    fn mobility(&self, st: &NgState, role: usize) -> usize {
        self.ng.with_state(&st.truths, |facts| self.ng.second_args_in(facts, self.ng.kw.legal, &self.ng.role(role)).len()).unwrap_or(0)
    }
    fn novelty(&self, st: &NgState, initial: &NgState) -> f64 {
        // Both lists are sorted: count the terms in one only, and in either.
        let (a, b) = (&st.truths, &initial.truths);
        let (mut i, mut j, mut common) = (0, 0, 0usize);
        while i < a.len() && j < b.len() {
            match a[i].cmp(&b[j]) {
                std::cmp::Ordering::Less => i += 1,
                std::cmp::Ordering::Greater => j += 1,
                std::cmp::Ordering::Equal => {
                    common += 1;
                    i += 1;
                    j += 1;
                }
            }
        }
        let union = a.len() + b.len() - common;
        if union == 0 { 0.0 } else { (union - common) as f64 / union as f64 }
    }
    fn goal(&self, st: &NgState, role: usize) -> f64 {
        self.goal_values(st).get(role).map_or(0.0, |&v| v as f64)
    }
    fn own_action(&self, mv: super::JointMove, role: usize) -> Option<usize> {
        Some(super::GdlGame::action_of(mv, role))
    }
}

impl crate::game::Goals for NonGroundGame {
    fn goals_reached(&self, _st: &NgState) -> usize {
        0
    }
    fn n_goals(&self) -> usize {
        1
    }
}
