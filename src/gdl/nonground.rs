//! A non-ground evaluator: the checked rules run bottom-up, stratum by stratum, directly over a
//! state's facts, with no grounding. Terms are flat sequences of (symbol, arity) pairs, so no
//! term table grows while playing and a query needs nothing but the rules and the facts. Each
//! rule body is joined in the order the grounder uses (most bound variables first), facts
//! indexed by relation; negation is failure against the strata already finished.
//!
//! It is the reference the grounded evaluator is held to (`tests/gdl.rs` replays random games
//! through both, state by state), and the way to play a description too large to ground.

use super::check::{Checked, Keywords};
use super::parse::{Atom, Literal, Rule, Sym, Symbols, Term};
use std::collections::{HashMap, HashSet};

/// A ground term, flattened: `(symbol, arity)` pairs in prefix order.
pub type Flat = Box<[u32]>;

/// Facts by relation: each the flattened arguments, one after another.
#[derive(Clone, Debug, Default)]
pub struct Facts {
    by_pred: HashMap<Sym, (HashSet<Flat>, Vec<Flat>)>,
}

impl Facts {
    pub fn insert(&mut self, pred: Sym, args: Flat) -> bool {
        let e = self.by_pred.entry(pred).or_default();
        if e.0.insert(args.clone()) {
            e.1.push(args);
            true
        } else {
            false
        }
    }

    pub fn contains(&self, pred: Sym, args: &[u32]) -> bool {
        self.by_pred.get(&pred).is_some_and(|e| e.0.contains(args))
    }

    pub fn of(&self, pred: Sym) -> &[Flat] {
        self.by_pred.get(&pred).map_or(&[], |e| &e.1)
    }
}

/// The length of the flat term starting at `i`.
fn skip(f: &[u32], i: usize) -> usize {
    let mut end = i + 2;
    for _ in 0..f[i + 1] {
        end = skip(f, end);
    }
    end
}

/// Matches `pat` against the flat term at `f[i..]`, binding variables to slices (as ranges
/// copied into `binds`); the end of the term, or `None`.
fn unify(pat: &Term, f: &[u32], i: usize, binds: &mut [Option<Flat>], trail: &mut Vec<u32>) -> Option<usize> {
    match pat {
        Term::Const(s) => (f[i] == *s && f[i + 1] == 0).then_some(i + 2),
        Term::Var(v) => {
            let end = skip(f, i);
            match &binds[*v as usize] {
                Some(b) => (**b == f[i..end]).then_some(end),
                None => {
                    binds[*v as usize] = Some(f[i..end].into());
                    trail.push(*v);
                    Some(end)
                }
            }
        }
        Term::Fn(g, args) => {
            if f[i] != *g || f[i + 1] as usize != args.len() {
                return None;
            }
            let mut at = i + 2;
            for a in args {
                at = unify(a, f, at, binds, trail)?;
            }
            Some(at)
        }
    }
}

fn flatten(t: &Term, binds: &[Option<Flat>], out: &mut Vec<u32>) {
    match t {
        Term::Const(s) => out.extend([*s, 0]),
        Term::Var(v) => out.extend_from_slice(binds[*v as usize].as_ref().expect("safe rules bind every variable")),
        Term::Fn(g, args) => {
            out.extend([*g, args.len() as u32]);
            args.iter().for_each(|a| flatten(a, binds, out));
        }
    }
}

fn flatten_args(args: &[Term], binds: &[Option<Flat>]) -> Flat {
    let mut out = Vec::new();
    args.iter().for_each(|a| flatten(a, binds, &mut out));
    out.into()
}

/// A flat term as KIF text (from `f[i..]`); the end.
pub fn show(f: &[u32], i: usize, syms: &Symbols, out: &mut String) -> usize {
    let (s, n) = (f[i], f[i + 1]);
    if n == 0 {
        out.push_str(syms.name(s));
        return i + 2;
    }
    out.push('(');
    out.push_str(syms.name(s));
    let mut at = i + 2;
    for _ in 0..n {
        out.push(' ');
        at = show(f, at, syms, out);
    }
    out.push(')');
    at
}

/// A rule with its positive literals in join order.
struct Planned {
    rule: Rule,
    pos: Vec<Atom>,
}

/// The rules by stratum, and the static facts.
pub struct NonGround {
    strata: Vec<(Vec<Planned>, bool)>,
    statics: Facts,
    pub kw: Keywords,
    pub syms: Symbols,
    pub roles: Vec<Sym>,
}

fn join(p: &Planned, k: usize, facts: &Facts, binds: &mut Vec<Option<Flat>>, out: &mut Vec<Flat>) {
    if k == p.pos.len() {
        for l in &p.rule.body {
            match l {
                Literal::Not(a) if facts.contains(a.pred, &flatten_args(&a.args, binds)) => return,
                Literal::Distinct(x, y, _)
                    if flatten_args(std::slice::from_ref(x), binds) == flatten_args(std::slice::from_ref(y), binds) =>
                {
                    return;
                }
                _ => {}
            }
        }
        out.push(flatten_args(&p.rule.head.args, binds));
        return;
    }
    let lit = &p.pos[k];
    let mut trail = Vec::new();
    for f in facts.of(lit.pred) {
        trail.clear();
        let mut at = 0;
        let ok = lit.args.iter().all(|t| match unify(t, f, at, binds, &mut trail) {
            Some(e) => {
                at = e;
                true
            }
            None => false,
        });
        if ok {
            join(p, k + 1, facts, binds, out);
        }
        for &v in &trail {
            binds[v as usize] = None;
        }
    }
}

impl NonGround {
    pub fn new(c: &Checked, syms: &Symbols) -> NonGround {
        let mut syms = syms.clone();
        let kw = Keywords::new(&mut syms);
        let mut strata: Vec<(Vec<Planned>, bool)> = c.recursive.iter().map(|&r| (Vec::new(), r)).collect();
        for r in &c.rules {
            let order = super::ground::join_order(r);
            strata[c.scc_of[&r.head.pred]].0.push(Planned { rule: r.clone(), pos: order });
        }
        let mut ng = NonGround { strata, statics: Facts::default(), kw, syms, roles: c.roles.clone() };
        // The static relations: every stratum evaluated once with no inputs; the dynamic ones
        // are dropped again below (they are recomputed per state).
        let mut facts = Facts::default();
        ng.run(&mut facts, |_| true);
        let dynamic: HashSet<Sym> = c.dynamic.clone();
        facts.by_pred.retain(|p, _| !dynamic.contains(p));
        ng.statics = facts;
        // Only the dynamic strata run per state.
        for (s, stratum) in ng.strata.iter_mut().enumerate() {
            if !c.sccs[s].iter().any(|p| dynamic.contains(p)) {
                stratum.0.clear();
            }
        }
        ng
    }

    /// Runs every stratum (whose rules pass `keep`) to its fixpoint over `facts`.
    fn run(&self, facts: &mut Facts, keep: impl Fn(&Rule) -> bool) {
        for (rules, recursive) in &self.strata {
            loop {
                let mut changed = false;
                for p in rules.iter().filter(|p| keep(&p.rule)) {
                    let mut binds = vec![None; p.rule.vars.len()];
                    let mut out = Vec::new();
                    join(p, 0, facts, &mut binds, &mut out);
                    for args in out {
                        changed |= facts.insert(p.rule.head.pred, args);
                    }
                }
                if !*recursive || !changed {
                    break;
                }
            }
        }
    }

    /// The model of a state (its `true` terms) and a joint move (`does` role/action terms).
    pub fn model(&self, truths: &[Flat], does: &[(Flat, Flat)]) -> Facts {
        let mut facts = self.statics.clone();
        for t in truths {
            facts.insert(self.kw.true_, t.clone());
        }
        for (r, a) in does {
            let mut args = r.to_vec();
            args.extend_from_slice(a);
            facts.insert(self.kw.does, args.into());
        }
        self.run(&mut facts, |_| true);
        facts
    }

    /// The initial state's `true` terms.
    pub fn initial(&self) -> Vec<Flat> {
        self.statics.of(self.kw.init).to_vec()
    }

    /// The `true` terms after `does` in the state `truths`.
    pub fn next(&self, truths: &[Flat], does: &[(Flat, Flat)]) -> Vec<Flat> {
        self.model(truths, does).of(self.kw.next).to_vec()
    }

    /// Role `r`'s name as a flat term.
    pub fn role(&self, r: usize) -> Flat {
        vec![self.roles[r], 0].into()
    }

    /// The facts of relation `pred` whose first argument is `first`: their remaining argument.
    pub fn second_args(&self, facts: &Facts, pred: Sym, first: &[u32]) -> Vec<Flat> {
        facts.of(pred).iter().filter(|f| f.starts_with(first)).map(|f| f[first.len()..].into()).collect()
    }

    /// A flat term as text.
    pub fn text(&self, f: &[u32]) -> String {
        let mut s = String::new();
        show(f, 0, &self.syms, &mut s);
        s
    }
}

/// A description played through the non-ground evaluator (no grounding): the way to play a
/// game too large to ground. States are their `true` terms, sorted; a move is a joint move of
/// action numbers ([`super::JointMove`], 16 bits per role) into per-role action tables that
/// grow as actions are first seen legal (shared by every thread).
pub struct NonGroundGame {
    ng: std::sync::Arc<NonGround>,
    actions: Vec<std::sync::RwLock<Vec<Flat>>>,
    noop: Flat,
}

/// A state of a [`NonGroundGame`]: its `true` terms, sorted.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct NgState {
    pub truths: Vec<Flat>,
}

impl NonGroundGame {
    pub fn new(ng: NonGround) -> NonGroundGame {
        let actions = (0..ng.roles.len()).map(|_| std::sync::RwLock::new(Vec::new())).collect();
        let noop = ng.syms.get("noop").map_or_else(|| Flat::from([]), |s| vec![s, 0].into());
        NonGroundGame { ng: std::sync::Arc::new(ng), actions, noop }
    }

    pub fn roles(&self) -> usize {
        self.ng.roles.len()
    }

    /// The number of role `r`'s action `a`, added to its table when new.
    fn action_number(&self, r: usize, a: &Flat) -> u64 {
        if let Some(i) = self.actions[r].read().expect("action table").iter().position(|x| x == a) {
            return i as u64;
        }
        let mut t = self.actions[r].write().expect("action table");
        match t.iter().position(|x| x == a) {
            Some(i) => i as u64,
            None => {
                assert!(t.len() < super::game::MAX_ACTIONS, "more than {} actions for one role", super::game::MAX_ACTIONS);
                t.push(a.clone());
                (t.len() - 1) as u64
            }
        }
    }

    fn action(&self, r: usize, i: u64) -> Flat {
        self.actions[r].read().expect("action table")[i as usize].clone()
    }

    /// Role `r`'s action in a joint move, as text.
    pub fn action_text(&self, mv: super::JointMove, r: usize) -> String {
        self.ng.text(&self.action(r, mv >> (16 * r) & 0xFFFF))
    }

    /// Role `r`'s name.
    pub fn role_name(&self, r: usize) -> String {
        self.ng.text(&self.ng.role(r))
    }

    /// Role `r`'s action number `i` (numbers are given as actions are first seen legal).
    pub fn action_name(&self, r: usize, i: usize) -> String {
        self.ng.text(&self.action(r, i as u64))
    }

    /// The number of role `r`'s action written `text` (KIF, any case and spacing), among the
    /// actions seen legal so far.
    pub fn action_index(&self, r: usize, text: &str) -> Option<usize> {
        let want = super::game::normalize_kif(text);
        let n = self.actions.get(r)?.read().expect("action table").len();
        (0..n).find(|&i| super::game::normalize_kif(&self.action_name(r, i)) == want)
    }

    /// Each role's legal action numbers in `st`.
    pub fn legal_actions(&self, st: &NgState) -> Vec<Vec<usize>> {
        let facts = self.ng.model(&st.truths, &[]);
        self.legal_per_role(&facts)
            .iter()
            .enumerate()
            .map(|(r, acts)| acts.iter().map(|a| self.action_number(r, a) as usize).collect())
            .collect()
    }

    /// Each role's legal actions in `st` (as flat terms).
    fn legal_per_role(&self, facts: &Facts) -> Vec<Vec<Flat>> {
        (0..self.roles()).map(|r| self.ng.second_args(facts, self.ng.kw.legal, &self.ng.role(r))).collect()
    }

    /// Each role's goal in `st` (the largest that holds; 0 when none).
    pub fn goal_values(&self, st: &NgState) -> Vec<u8> {
        let facts = self.ng.model(&st.truths, &[]);
        (0..self.roles())
            .map(|r| {
                self.ng
                    .second_args(&facts, self.ng.kw.goal, &self.ng.role(r))
                    .iter()
                    .filter_map(|v| self.ng.text(v).parse::<u8>().ok())
                    .max()
                    .unwrap_or(0)
            })
            .collect()
    }

    /// The state's `true` terms as text, sorted.
    pub fn show_state(&self, st: &NgState) -> Vec<String> {
        let mut v: Vec<String> = st.truths.iter().map(|t| self.ng.text(t)).collect();
        v.sort();
        v
    }
}

impl crate::game::Game for NonGroundGame {
    type State = NgState;
    type Move = super::JointMove;
    type Error = std::convert::Infallible;

    fn initial(&self) -> Result<NgState, Self::Error> {
        let mut truths = self.ng.initial();
        truths.sort();
        Ok(NgState { truths })
    }

    fn legal(&self, st: &NgState, out: &mut Vec<super::JointMove>) -> Result<(), Self::Error> {
        out.clear();
        let facts = self.ng.model(&st.truths, &[]);
        if facts.contains(self.ng.kw.terminal, &[]) {
            return Ok(());
        }
        out.push(0);
        for (r, acts) in self.legal_per_role(&facts).iter().enumerate() {
            let before = out.len();
            for i in 0..before {
                for a in acts {
                    out.push(out[i] | self.action_number(r, a) << (16 * r));
                }
            }
            out.drain(..before);
        }
        Ok(())
    }

    fn apply(&self, st: &mut NgState, mv: super::JointMove) -> Result<(), Self::Error> {
        let does: Vec<(Flat, Flat)> = (0..self.roles()).map(|r| (self.ng.role(r), self.action(r, mv >> (16 * r) & 0xFFFF))).collect();
        let mut next = self.ng.next(&st.truths, &does);
        next.sort();
        st.truths = next;
        Ok(())
    }

    fn status(&self, st: &NgState, legal: &[super::JointMove]) -> crate::game::Status {
        if !legal.is_empty() && !self.ng.model(&st.truths, &[]).contains(self.ng.kw.terminal, &[]) {
            return crate::game::Status::Running;
        }
        super::game::end_status(&self.goal_values(st))
    }

    /// As [`super::GdlGame`] ([`super::game::mover`]).
    fn to_move(&self, st: &NgState) -> usize {
        let per_role = self.legal_per_role(&self.ng.model(&st.truths, &[]));
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
        let facts = self.ng.model(&st.truths, &[]);
        self.ng.second_args(&facts, self.ng.kw.legal, &self.ng.role(role)).len()
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
