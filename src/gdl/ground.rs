//! Pass 3: grounding. The rules are instantiated over the **relaxed model** — every atom that
//! could ever hold: negation ignored, `true(x)` for every `init(x)` or `next(x)`, `does(r, a)`
//! for every `legal(r, a)` — computed bottom-up to its fixpoint, each body joined in an order
//! that binds variables early (the literal with most bound variables next). Each rule instance
//! whose `distinct`s hold becomes a ground rule over atom numbers.
//!
//! The static relations (those depending on neither `true` nor `does`) are then evaluated once,
//! exactly (stratum by stratum, negation as failure), and folded into the dynamic rules: a
//! literal on a static atom is dropped when it holds and drops its rule when it fails. What
//! stays are the dynamic ground rules in stratum order, a recursive stratum marked to be
//! iterated to its fixpoint. [`Grounded::eval`] runs them over a bit set of atoms.
//!
//! Grounding is bounded ([`GroundLimits`], by default [`MAX_ATOMS`] atoms and [`MAX_RULES`]
//! rule instances): past a limit it is an error naming the limit, on which [`super::load`] and
//! [`super::compile_any`] fall back to [`super::nonground::NonGroundGame`].

use super::check::{Checked, Keywords, term_vars};
use super::parse::{Atom, Literal, Rule, Sym, Symbols, Term};
use super::{GdlError, GdlErrorKind};
use crate::wgdl::diag::Span;
use std::collections::HashMap;

/// Most atoms the relaxed model may hold.
pub const MAX_ATOMS: usize = 2_000_000;
/// Most ground rules grounding may make.
pub const MAX_RULES: usize = 4_000_000;

/// A ground term's number.
pub type GId = u32;
/// A ground atom's number.
pub type AtomId = u32;

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum GTerm {
    Const(Sym),
    Fn(Sym, Box<[GId]>),
}

/// Ground terms, hash-consed: equal terms have equal numbers.
#[derive(Clone, Debug, Default)]
pub struct Terms {
    pub nodes: Vec<GTerm>,
    index: HashMap<GTerm, GId>,
}

impl Terms {
    pub fn intern(&mut self, t: GTerm) -> GId {
        if let Some(&g) = self.index.get(&t) {
            return g;
        }
        let g = self.nodes.len() as GId;
        self.nodes.push(t.clone());
        self.index.insert(t, g);
        g
    }

    pub fn get(&self, t: &GTerm) -> Option<GId> {
        self.index.get(t).copied()
    }

    /// The term as KIF text.
    pub fn show(&self, g: GId, syms: &Symbols) -> String {
        match &self.nodes[g as usize] {
            GTerm::Const(s) => syms.name(*s).to_string(),
            GTerm::Fn(f, args) => {
                let mut s = format!("({}", syms.name(*f));
                for &a in args.iter() {
                    s.push(' ');
                    s.push_str(&self.show(a, syms));
                }
                s.push(')');
                s
            }
        }
    }
}

/// Ground atoms: relation and argument terms, numbered.
#[derive(Clone, Debug, Default)]
pub struct Atoms {
    pub list: Vec<(Sym, Box<[GId]>)>,
    index: HashMap<(Sym, Box<[GId]>), AtomId>,
    pub by_pred: HashMap<Sym, Vec<AtomId>>,
}

impl Atoms {
    fn add(&mut self, pred: Sym, args: Box<[GId]>) -> (AtomId, bool) {
        if let Some(&a) = self.index.get(&(pred, args.clone())) {
            return (a, false);
        }
        let a = self.list.len() as AtomId;
        self.list.push((pred, args.clone()));
        self.index.insert((pred, args), a);
        self.by_pred.entry(pred).or_default().push(a);
        (a, true)
    }

    pub fn get(&self, pred: Sym, args: &[GId]) -> Option<AtomId> {
        self.index.get(&(pred, Box::from(args))).copied()
    }

    pub fn of(&self, pred: Sym) -> &[AtomId] {
        self.by_pred.get(&pred).map_or(&[], |v| v)
    }
}

/// One stratum's ground rules: `head :- pos…, not neg…`, the bodies as ranges of `lits`.
#[derive(Clone, Debug, Default)]
pub struct Group {
    pub heads: Vec<AtomId>,
    /// Per rule: (start, positive count, negative count) into `lits`.
    pub bodies: Vec<(u32, u16, u16)>,
    pub lits: Vec<AtomId>,
    /// The stratum is recursive: its rules run until nothing changes.
    pub recursive: bool,
    /// Its relations depend on `does`.
    pub on_does: bool,
}

impl Group {
    fn push(&mut self, head: AtomId, pos: &[AtomId], neg: &[AtomId]) {
        self.heads.push(head);
        self.bodies.push((self.lits.len() as u32, pos.len() as u16, neg.len() as u16));
        self.lits.extend_from_slice(pos);
        self.lits.extend_from_slice(neg);
    }

    /// One pass over the rules; whether a head became true.
    #[inline]
    fn pass(&self, m: &mut [u64]) -> bool {
        let mut changed = false;
        let bit = |m: &[u64], a: AtomId| m[a as usize / 64] >> (a % 64) & 1 == 1;
        for (k, &(at, np, nn)) in self.bodies.iter().enumerate() {
            let h = self.heads[k];
            if bit(m, h) {
                continue;
            }
            let lits = &self.lits[at as usize..at as usize + np as usize + nn as usize];
            let (pos, neg) = lits.split_at(np as usize);
            if pos.iter().all(|&a| bit(m, a)) && !neg.iter().any(|&a| bit(m, a)) {
                m[h as usize / 64] |= 1 << (h % 64);
                changed = true;
            }
        }
        changed
    }

    fn run(&self, m: &mut [u64]) {
        if self.recursive {
            while self.pass(m) {}
        } else {
            self.pass(m);
        }
    }
}

/// A grounded description.
#[derive(Clone, Debug)]
pub struct Grounded {
    pub terms: Terms,
    pub atoms: Atoms,
    /// The static atoms that hold (a bit per atom; dynamic atoms clear).
    pub statics: Vec<u64>,
    /// The dynamic strata, dependencies first.
    pub groups: Vec<Group>,
    pub roles: Vec<GId>,
    pub kw: Keywords,
}

impl Grounded {
    /// Words of a model bit set.
    pub fn words(&self) -> usize {
        self.atoms.list.len().div_ceil(64)
    }

    /// Evaluates the dynamic strata over `m` (the static atoms and the inputs — `true`, and
    /// `does` when `with_does` — set by the caller): without `does`, the strata that depend on
    /// it are skipped.
    pub fn eval(&self, m: &mut [u64], with_does: bool) {
        for g in &self.groups {
            if g.on_does && !with_does {
                continue;
            }
            g.run(m);
        }
    }

    /// Evaluates only the strata that depend on `does` (the others already ran on `m`).
    pub fn eval_does(&self, m: &mut [u64]) {
        for g in self.groups.iter().filter(|g| g.on_does) {
            g.run(m);
        }
    }
}

/// Variable bindings of one rule.
type Binds = Vec<Option<GId>>;

fn unify(pat: &Term, g: GId, terms: &Terms, binds: &mut Binds, trail: &mut Vec<u32>) -> bool {
    match pat {
        Term::Const(s) => matches!(&terms.nodes[g as usize], GTerm::Const(c) if c == s),
        Term::Var(v) => match binds[*v as usize] {
            Some(b) => b == g,
            None => {
                binds[*v as usize] = Some(g);
                trail.push(*v);
                true
            }
        },
        Term::Fn(f, args) => match &terms.nodes[g as usize] {
            GTerm::Fn(h, gargs) if h == f && gargs.len() == args.len() => {
                args.iter().zip(gargs.iter()).all(|(a, &ga)| unify(a, ga, terms, binds, trail))
            }
            _ => false,
        },
    }
}

/// The ground term of `pat` under `binds`, interned.
fn instantiate(pat: &Term, binds: &Binds, terms: &mut Terms) -> GId {
    match pat {
        Term::Const(s) => terms.intern(GTerm::Const(*s)),
        Term::Var(v) => binds[*v as usize].expect("safe rules bind every variable"),
        Term::Fn(f, args) => {
            let a: Box<[GId]> = args.iter().map(|t| instantiate(t, binds, terms)).collect();
            terms.intern(GTerm::Fn(*f, a))
        }
    }
}

/// The ground term of `pat` under `binds`, if it exists already.
fn lookup(pat: &Term, binds: &Binds, terms: &Terms) -> Option<GId> {
    match pat {
        Term::Const(s) => terms.get(&GTerm::Const(*s)),
        Term::Var(v) => binds[*v as usize],
        Term::Fn(f, args) => {
            let a: Option<Box<[GId]>> = args.iter().map(|t| lookup(t, binds, terms)).collect();
            terms.get(&GTerm::Fn(*f, a?))
        }
    }
}

/// A rule ready to join: its positive literals in join order, its negations and distincts.
struct Plan<'a> {
    rule: &'a Rule,
    pos: Vec<&'a Atom>,
    neg: Vec<&'a Atom>,
    distinct: Vec<(&'a Term, &'a Term)>,
}

fn plan(rule: &Rule) -> Plan<'_> {
    let mut rest: Vec<&Atom> = rule.body.iter().filter_map(|l| if let Literal::Pos(a) = l { Some(a) } else { None }).collect();
    let mut bound: Vec<u32> = Vec::new();
    let mut pos = Vec::new();
    while !rest.is_empty() {
        // The literal with most bound variables (then fewest unbound) next.
        let score = |a: &Atom| {
            let mut v = Vec::new();
            a.args.iter().for_each(|t| term_vars(t, &mut v));
            let b = v.iter().filter(|x| bound.contains(x)).count();
            (b, usize::MAX - (v.len() - b))
        };
        let (k, _) = rest.iter().enumerate().max_by_key(|(i, a)| (score(a), usize::MAX - i)).expect("non-empty");
        let a = rest.remove(k);
        a.args.iter().for_each(|t| term_vars(t, &mut bound));
        pos.push(a);
    }
    let neg = rule.body.iter().filter_map(|l| if let Literal::Not(a) = l { Some(a) } else { None }).collect();
    let distinct = rule.body.iter().filter_map(|l| if let Literal::Distinct(x, y, _) = l { Some((x, y)) } else { None }).collect();
    Plan { rule, pos, neg, distinct }
}

/// A rule's positive literals in the order bodies are joined: the literal with most bound
/// variables next (then fewest unbound; then as written).
pub fn join_order(rule: &Rule) -> Vec<Atom> {
    plan(rule).pos.into_iter().cloned().collect()
}

/// Calls `f` with every binding of the plan's positive literals to atoms of `atoms` (and the
/// atoms matched), whose distincts hold.
fn join(p: &Plan, atoms: &Atoms, terms: &Terms, binds: &mut Binds, matched: &mut Vec<AtomId>, f: &mut dyn FnMut(&Binds, &[AtomId])) {
    let k = matched.len();
    if k == p.pos.len() {
        let ok = p.distinct.iter().all(|(x, y)| match (lookup(x, binds, terms), lookup(y, binds, terms)) {
            (Some(a), Some(b)) => a != b,
            // A side that is no term yet differs from the other (which exists).
            _ => true,
        });
        if ok {
            f(binds, matched);
        }
        return;
    }
    let lit = p.pos[k];
    let mut trail = Vec::new();
    for &a in atoms.of(lit.pred) {
        let (_, args) = &atoms.list[a as usize];
        trail.clear();
        if lit.args.iter().zip(args.iter()).all(|(t, &g)| unify(t, g, terms, binds, &mut trail)) {
            matched.push(a);
            join(p, atoms, terms, binds, matched, f);
            matched.pop();
        }
        for &v in &trail {
            binds[v as usize] = None;
        }
    }
}

/// How large grounding may grow before it gives up.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GroundLimits {
    pub atoms: usize,
    pub rules: usize,
}

impl Default for GroundLimits {
    fn default() -> Self {
        GroundLimits { atoms: MAX_ATOMS, rules: MAX_RULES }
    }
}

/// Grounds a checked description within the default limits.
pub fn ground(c: &Checked, syms: &Symbols) -> Result<Grounded, Vec<GdlError>> {
    ground_within(c, syms, GroundLimits::default())
}

/// Grounds a checked description; past `lim`, a [`GdlErrorKind::Limit`] error.
pub fn ground_within(c: &Checked, syms: &Symbols, lim: GroundLimits) -> Result<Grounded, Vec<GdlError>> {
    let (max_atoms, max_rules) = (lim.atoms, lim.rules);
    let mut syms_local = syms.clone();
    let kw = Keywords::new(&mut syms_local);
    let limit = |what: String, max: usize| {
        vec![GdlError::new(
            Span::new(0, 0),
            GdlErrorKind::Limit { what, expected: format!("at most {max} (a smaller game, or fewer ground instances)") },
        )]
    };
    let plans: Vec<Plan> = c.rules.iter().map(plan).collect();
    let mut terms = Terms::default();
    let mut atoms = Atoms::default();
    // The relaxed model, to its fixpoint (rounds of every rule; `true` and `does` follow
    // `init`/`next` and `legal`).
    loop {
        let mut new = Vec::new();
        for p in &plans {
            let mut binds = vec![None; p.rule.vars.len()];
            let mut matched = Vec::new();
            join(p, &atoms, &terms, &mut binds, &mut matched, &mut |b, _| {
                new.push((p.rule.head.pred, p.rule.head.args.clone(), b.clone()))
            });
            if new.len() > max_atoms {
                return Err(limit(format!("the relaxed model passes {max_atoms} atoms"), max_atoms));
            }
        }
        let mut changed = false;
        for (pred, args, b) in new {
            let g: Box<[GId]> = args.iter().map(|t| instantiate(t, &b, &mut terms)).collect();
            changed |= atoms.add(pred, g).1;
        }
        let inputs: Vec<(Sym, Box<[GId]>)> = atoms
            .list
            .iter()
            .filter_map(|(p, a)| {
                if *p == kw.init || *p == kw.next {
                    Some((kw.true_, a.clone()))
                } else if *p == kw.legal {
                    Some((kw.does, a.clone()))
                } else {
                    None
                }
            })
            .collect();
        for (p, a) in inputs {
            changed |= atoms.add(p, a).1;
        }
        if atoms.list.len() > max_atoms {
            return Err(limit(format!("the relaxed model passes {max_atoms} atoms"), max_atoms));
        }
        if !changed {
            break;
        }
    }
    // Ground instances, by stratum.
    let n_sccs = c.sccs.len();
    let mut per_scc: Vec<Vec<(AtomId, Vec<AtomId>, Vec<AtomId>)>> = vec![Vec::new(); n_sccs];
    let mut count = 0usize;
    for p in &plans {
        let scc = c.scc_of[&p.rule.head.pred];
        let mut binds = vec![None; p.rule.vars.len()];
        let mut matched = Vec::new();
        let mut out = Vec::new();
        join(p, &atoms, &terms, &mut binds, &mut matched, &mut |b, m| {
            let head_args: Option<Box<[GId]>> = p.rule.head.args.iter().map(|t| lookup(t, b, &terms)).collect();
            let head = head_args.and_then(|a| atoms.get(p.rule.head.pred, &a)).expect("the relaxed model holds every head");
            // A negated atom outside the relaxed model never holds: its literal is dropped.
            let neg: Vec<AtomId> = p
                .neg
                .iter()
                .filter_map(|a| {
                    let args: Option<Box<[GId]>> = a.args.iter().map(|t| lookup(t, b, &terms)).collect();
                    args.and_then(|args| atoms.get(a.pred, &args))
                })
                .collect();
            out.push((head, m.to_vec(), neg));
        });
        count += out.len();
        if count > max_rules {
            return Err(limit(format!("grounding passes {max_rules} rule instances"), max_rules));
        }
        per_scc[scc].extend(out);
    }
    // The static atoms, exactly.
    let words = atoms.list.len().div_ceil(64);
    let mut statics = vec![0u64; words];
    let is_static = |a: AtomId| !c.dynamic.contains(&atoms.list[a as usize].0);
    let bit = |m: &[u64], a: AtomId| m[a as usize / 64] >> (a % 64) & 1 == 1;
    for (s, rules) in per_scc.iter().enumerate() {
        let preds = &c.sccs[s];
        if preds.iter().any(|p| c.dynamic.contains(p)) {
            continue;
        }
        let mut g = Group { recursive: c.recursive[s], ..Group::default() };
        for (h, pos, neg) in rules {
            g.push(*h, pos, neg);
        }
        g.run(&mut statics);
    }
    // The dynamic strata, with static literals folded in.
    let mut groups = Vec::new();
    for (s, rules) in per_scc.iter().enumerate() {
        let preds = &c.sccs[s];
        if !preds.iter().any(|p| c.dynamic.contains(p)) {
            continue;
        }
        let mut g = Group { recursive: c.recursive[s], on_does: preds.iter().any(|p| c.on_does.contains(p)), ..Group::default() };
        'rules: for (h, pos, neg) in rules {
            let mut p2 = Vec::with_capacity(pos.len());
            for &a in pos {
                if is_static(a) {
                    if !bit(&statics, a) {
                        continue 'rules;
                    }
                } else {
                    p2.push(a);
                }
            }
            let mut n2 = Vec::with_capacity(neg.len());
            for &a in neg {
                if is_static(a) {
                    if bit(&statics, a) {
                        continue 'rules;
                    }
                } else {
                    n2.push(a);
                }
            }
            g.push(*h, &p2, &n2);
        }
        if !g.heads.is_empty() {
            groups.push(g);
        }
    }
    let roles = c.roles.iter().map(|&r| terms.intern(GTerm::Const(r))).collect();
    Ok(Grounded { terms, atoms, statics, groups, roles, kw })
}
