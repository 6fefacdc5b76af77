//! Pass 3: grounding, in three phases over one table of ground atoms.
//!
//! 1. **The static relations** (those depending on neither `true` nor `does`) are evaluated
//!    exactly, stratum by stratum (dependencies first, negation as failure against the strata
//!    below), each recursive stratum semi-naively to its fixpoint. Only the static atoms that
//!    hold enter the table.
//! 2. **The relaxed model** of the dynamic relations — every atom that could ever hold:
//!    negation of dynamic atoms ignored (a negated static atom is tested exactly),
//!    `true(x)` for every `init(x)` or `next(x)`, `does(r, a)` for every `legal(r, a)` — is
//!    computed semi-naively: each round joins every rule once per positive literal, that
//!    literal restricted to the atoms the last round added.
//! 3. **The ground rules**: each instance of a dynamic rule over the table becomes a ground
//!    rule over atom numbers, its static literals folded in (a static atom in the table holds:
//!    its positive literal is dropped, its negation drops the instance; a negated atom outside
//!    the table never holds and its literal is dropped). What stays are the dynamic ground rules
//!    in stratum order, a recursive stratum marked to be iterated to its fixpoint.
//!    [`Grounded::eval`] runs them over a bit set of atoms.
//!
//! Joins go through hash indexes ([`join`]). Grounding is bounded ([`GroundLimits`]: atoms,
//! ground rules and seconds): past a limit it is an error naming the limit, on which
//! [`super::compile_any`] falls back to [`super::nonground::NonGroundGame`] and says why.

pub mod join;

use super::check::Checked;
use super::fx::FxHashMap as HashMap;
use super::parse::{Keywords, Literal, Rule, Sym, Symbols, Term};
use super::{GdlError, GdlErrorKind};
use crate::wgdl::diag::Span;
use join::{Binds, Budget, Indexes, Plan, Window};
use std::time::{Duration, Instant};

/// Most atoms the relaxed model may hold.
pub const MAX_ATOMS: usize = 2_000_000;
/// Most ground rules grounding may make.
pub const MAX_RULES: usize = 4_000_000;
/// Longest grounding may take by default.
pub const MAX_TIME: Duration = Duration::from_millis(2500);

/// A ground term's number.
pub type GId = u32;
/// A ground atom's number.
pub type AtomId = u32;

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum GTerm {
    Const(Sym),
    Fn(Sym, Box<[GId]>),
}

/// Deepest a term derived by the rules may nest function terms (`(s (s 0))` is 2 deep): as
/// deep as a term can be written ([`super::parse`]'s 64 levels of parentheses). A relation
/// that derives deeper terms (`(<= (nat (s ?x)) (nat ?x))`) is infinite: grounding gives up
/// on it, and the non-ground evaluator refuses it, naming the relation.
pub const MAX_TERM_DEPTH: u32 = 64;
/// Most symbols a derived term may hold (`(f a (g b))` holds 4): a term that doubles each
/// round (`(<= (p (f ?x ?x)) (p ?x))`) passes it long before [`MAX_TERM_DEPTH`].
pub const MAX_TERM_SIZE: u32 = 1024;

/// Ground terms, hash-consed: equal terms have equal numbers.
#[derive(Clone, Debug, Default)]
pub struct Terms {
    pub nodes: Vec<GTerm>,
    index: HashMap<GTerm, GId>,
    /// Per term: its depth and its size in symbols (saturating).
    shape: Vec<(u32, u32)>,
}

impl Terms {
    pub fn intern(&mut self, t: GTerm) -> GId {
        if let Some(&g) = self.index.get(&t) {
            return g;
        }
        let g = self.nodes.len() as GId;
        let shape = match &t {
            GTerm::Const(_) => (0, 1),
            GTerm::Fn(_, args) => args.iter().fold((1, 1u32), |(d, n), &a| {
                let (ad, an) = self.shape[a as usize];
                (d.max(ad + 1), n.saturating_add(an))
            }),
        };
        self.shape.push(shape);
        self.nodes.push(t.clone());
        self.index.insert(t, g);
        g
    }

    /// The term's depth of function terms and its size in symbols.
    pub fn shape(&self, g: GId) -> (u32, u32) {
        self.shape[g as usize]
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
    /// Keyed by the relation, then the arguments.
    index: HashMap<Box<[u32]>, AtomId>,
    pub by_pred: HashMap<Sym, Vec<AtomId>>,
}

/// Most arguments a key is built for on the stack.
const SHORT_KEY: usize = 15;

/// Calls `f` with the key of `(pred, args)`: the relation, then the arguments.
fn with_key<R>(pred: Sym, args: &[GId], f: impl FnOnce(&[u32]) -> R) -> R {
    if args.len() <= SHORT_KEY {
        let mut buf = [0u32; SHORT_KEY + 1];
        buf[0] = pred;
        buf[1..=args.len()].copy_from_slice(args);
        f(&buf[..=args.len()])
    } else {
        let key: Vec<u32> = std::iter::once(pred).chain(args.iter().copied()).collect();
        f(&key)
    }
}

impl Atoms {
    pub(super) fn add(&mut self, pred: Sym, args: Box<[GId]>) -> (AtomId, bool) {
        if let Some(a) = self.get(pred, &args) {
            return (a, false);
        }
        let a = self.list.len() as AtomId;
        let key: Box<[u32]> = std::iter::once(pred).chain(args.iter().copied()).collect();
        self.list.push((pred, args));
        self.index.insert(key, a);
        self.by_pred.entry(pred).or_default().push(a);
        (a, true)
    }

    pub fn get(&self, pred: Sym, args: &[GId]) -> Option<AtomId> {
        with_key(pred, args, |k| self.index.get(k).copied())
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

/// A rule's positive literals in the order bodies are joined: the literal with most bound
/// variables next (then fewest unbound; then as written).
pub fn join_order(rule: &Rule) -> Vec<super::parse::Atom> {
    join::order(rule, None).into_iter().cloned().collect()
}

/// How large grounding may grow, and how long it may take, before it gives up.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GroundLimits {
    pub atoms: usize,
    pub rules: usize,
    pub time: Duration,
}

impl Default for GroundLimits {
    fn default() -> Self {
        GroundLimits { atoms: MAX_ATOMS, rules: MAX_RULES, time: MAX_TIME }
    }
}

/// Grounds a checked description within the default limits.
pub fn ground(c: &Checked, syms: &Symbols) -> Result<Grounded, Vec<GdlError>> {
    ground_within(c, syms, GroundLimits::default())
}

/// Whether a term of this (depth, size) passes [`MAX_TERM_DEPTH`] or [`MAX_TERM_SIZE`].
pub fn too_big((depth, size): (u32, u32)) -> bool {
    depth > MAX_TERM_DEPTH || size > MAX_TERM_SIZE
}

/// The state of one grounding: the table, its indexes, the limits.
struct Grounder<'s> {
    /// The symbols' names, for messages.
    names: &'s Symbols,
    terms: Terms,
    atoms: Atoms,
    ix: Indexes,
    lim: GroundLimits,
    deadline: Instant,
}

/// Why grounding stopped.
fn limit(what: String, expected: String) -> Vec<GdlError> {
    vec![GdlError::new(Span::new(0, 0), GdlErrorKind::Limit { what, expected })]
}

impl Grounder<'_> {
    fn over_time(&self) -> Result<(), Vec<GdlError>> {
        if Instant::now() > self.deadline {
            return Err(limit(
                format!("grounding took more than {:.1} s", self.lim.time.as_secs_f64()),
                "a game that grounds faster".into(),
            ));
        }
        Ok(())
    }

    fn over_atoms(&self) -> Result<(), Vec<GdlError>> {
        if self.atoms.list.len() > self.lim.atoms {
            return Err(limit(format!("the relaxed model passes {} atoms", self.lim.atoms), "fewer ground atoms".into()));
        }
        Ok(())
    }

    /// Adds the head of every derivation in `new` (rule, bindings); whether one was new. Stops
    /// at the deadline (a round may hold millions of derivations).
    fn add_all(&mut self, rules: &[&Rule], new: Vec<(usize, Binds)>) -> Result<bool, Vec<GdlError>> {
        let mut changed = false;
        for (k, (r, b)) in new.into_iter().enumerate() {
            if k % 4096 == 4095 {
                self.over_time()?;
            }
            let h = &rules[r].head;
            let args: Box<[GId]> = h.args.iter().map(|t| instantiate(t, &b, &mut self.terms)).collect();
            if let Some(&g) = args.iter().find(|&&g| too_big(self.terms.shape(g))) {
                let (depth, size) = self.terms.shape(g);
                return Err(limit(
                    format!("relation `{}` derives a term {depth} deep of {size} symbols", self.names.name(h.pred)),
                    format!("terms at most {MAX_TERM_DEPTH} deep and of at most {MAX_TERM_SIZE} symbols"),
                ));
            }
            let (a, fresh) = self.atoms.add(h.pred, args);
            if fresh {
                self.ix.add(a, &self.atoms, &self.terms);
                changed = true;
            }
        }
        Ok(changed)
    }

    /// The plans of `rules`: each in full, and each with one literal of a relation in
    /// `recursive` first (for the atoms new since the last round).
    fn plans<'a>(
        &mut self,
        rules: &[&'a Rule],
        recursive: &dyn Fn(Sym) -> bool,
        is_static: &dyn Fn(Sym) -> bool,
    ) -> (Vec<Plan<'a>>, Vec<(usize, Plan<'a>)>) {
        let full = rules.iter().map(|r| join::plan(r, None, is_static, &mut self.ix, &self.atoms, &self.terms)).collect();
        let mut deltas = Vec::new();
        for (k, r) in rules.iter().enumerate() {
            let pos: Vec<Sym> = r.body.iter().filter_map(|l| if let Literal::Pos(a) = l { Some(a.pred) } else { None }).collect();
            for (i, &p) in pos.iter().enumerate() {
                if recursive(p) {
                    deltas.push((k, join::plan(r, Some(i), is_static, &mut self.ix, &self.atoms, &self.terms)));
                }
            }
        }
        (full, deltas)
    }

    /// Runs `rules` semi-naively to their fixpoint: a first round of full joins, then rounds
    /// with one literal of a relation in `recursive` restricted to the last round's atoms.
    /// `inputs` derives more atoms from each round's new ones (`true` from `next`, …).
    fn fixpoint(
        &mut self,
        rules: &[&Rule],
        recursive: &dyn Fn(Sym) -> bool,
        is_static: &dyn Fn(Sym) -> bool,
        inputs: &dyn Fn(&Atoms, AtomId) -> Option<(Sym, Box<[GId]>)>,
    ) -> Result<(), Vec<GdlError>> {
        let (mut full, mut deltas) = self.plans(rules, recursive, is_static);
        let mut planned_at = self.atoms.list.len();
        // The inputs of atoms from before this call were added by earlier calls (or by the
        // caller): only this call's atoms are looked at, so that many strata stay linear.
        let start = self.atoms.list.len() as AtomId;
        let mut lo = 0 as AtomId;
        let mut first = true;
        loop {
            let hi = self.atoms.list.len() as AtomId;
            // Plans follow the relations' sizes: made again when the table has doubled.
            if hi as usize >= 2 * planned_at.max(64) {
                (full, deltas) = self.plans(rules, recursive, is_static);
                planned_at = hi as usize;
            }
            let w = Window { lo, hi };
            let mut new: Vec<(usize, Binds)> = Vec::new();
            let deadline = self.deadline;
            let mut stop = move || Instant::now() > deadline;
            let mut budget = Budget { steps: 0, stop: &mut stop, stopped: false };
            // Derivations are capped like atoms (most repeat an atom; a round that makes more
            // than the limit has made too many).
            let cap = self.lim.atoms;
            let mut push = |k: usize, b: &Binds| {
                new.push((k, b.clone()));
                new.len() <= cap
            };
            if first {
                for (k, p) in full.iter().enumerate() {
                    join::join(p, &self.atoms, &self.terms, &self.ix, w, &mut budget, &mut |b, _| push(k, b));
                }
            } else {
                for (k, p) in &deltas {
                    join::join(p, &self.atoms, &self.terms, &self.ix, w, &mut budget, &mut |b, _| push(*k, b));
                }
            }
            if new.len() > cap {
                return Err(limit(format!("the relaxed model passes {cap} atoms"), "fewer ground atoms".into()));
            }
            if budget.stopped {
                self.over_time()?;
            }
            let mut changed = self.add_all(rules, new)?;
            // Inputs of the atoms added (and of theirs).
            let mut at = if first { start } else { hi };
            while (at as usize) < self.atoms.list.len() {
                if let Some((p, args)) = inputs(&self.atoms, at) {
                    let (a, fresh) = self.atoms.add(p, args);
                    if fresh {
                        self.ix.add(a, &self.atoms, &self.terms);
                        changed = true;
                    }
                }
                at += 1;
            }
            self.over_atoms()?;
            self.over_time()?;
            first = false;
            lo = hi;
            if !changed || deltas.is_empty() {
                return Ok(());
            }
        }
    }
}

/// Grounds a checked description; past `lim`, a [`GdlErrorKind::Limit`] error.
pub fn ground_within(c: &Checked, syms: &Symbols, lim: GroundLimits) -> Result<Grounded, Vec<GdlError>> {
    let mut syms_local = syms.clone();
    let kw = Keywords::new(&mut syms_local);
    let mut g = Grounder {
        names: syms,
        terms: Terms::default(),
        atoms: Atoms::default(),
        ix: Indexes::default(),
        lim,
        deadline: Instant::now() + lim.time,
    };
    let is_static = |p: Sym| !c.dynamic.contains(&p);
    let no_inputs = |_: &Atoms, _: AtomId| None;
    // The rules by stratum, once (a filter per stratum would be quadratic in the relations).
    let mut by_scc: Vec<Vec<&Rule>> = vec![Vec::new(); c.sccs.len()];
    for r in &c.rules {
        by_scc[c.scc_of[&r.head.pred]].push(r);
    }
    // 1. The static strata, exactly.
    for (s, preds) in c.sccs.iter().enumerate() {
        if preds.iter().any(|p| c.dynamic.contains(p)) {
            continue;
        }
        let rules = std::mem::take(&mut by_scc[s]);
        if rules.is_empty() {
            continue;
        }
        let recursive = |p: Sym| c.recursive[s] && c.scc_of.get(&p) == Some(&s);
        g.fixpoint(&rules, &recursive, &is_static, &no_inputs)?;
    }
    let n_static = g.atoms.list.len();
    // 2. The relaxed model of the dynamic relations.
    let dynamic: Vec<&Rule> = c.rules.iter().filter(|r| c.dynamic.contains(&r.head.pred)).collect();
    let inputs = |atoms: &Atoms, a: AtomId| {
        let (p, args) = &atoms.list[a as usize];
        if *p == kw.init || *p == kw.next {
            Some((kw.true_, args.clone()))
        } else if *p == kw.legal {
            Some((kw.does, args.clone()))
        } else {
            None
        }
    };
    // `true` of the initial state (and `does` of static `legal` facts) before the first round.
    for a in 0..n_static as AtomId {
        if let Some((p, args)) = inputs(&g.atoms, a) {
            let (id, fresh) = g.atoms.add(p, args);
            if fresh {
                g.ix.add(id, &g.atoms, &g.terms);
            }
        }
    }
    let is_dynamic = |p: Sym| c.dynamic.contains(&p);
    g.fixpoint(&dynamic, &is_dynamic, &is_static, &inputs)?;
    // 3. The ground rules of the dynamic strata, static literals folded in.
    let mut groups_by_scc: Vec<Group> = c
        .sccs
        .iter()
        .enumerate()
        .map(|(s, preds)| Group { recursive: c.recursive[s], on_does: preds.iter().any(|p| c.on_does.contains(p)), ..Group::default() })
        .collect();
    let mut count = 0usize;
    let (mut pos, mut neg) = (Vec::new(), Vec::new());
    for r in &dynamic {
        let p = join::plan(r, None, &is_static, &mut g.ix, &g.atoms, &g.terms);
        let scc = c.scc_of[&r.head.pred];
        let group = &mut groups_by_scc[scc];
        let deadline = g.deadline;
        let mut stop = move || Instant::now() > deadline;
        let mut budget = Budget { steps: 0, stop: &mut stop, stopped: false };
        let w = Window { lo: 0, hi: g.atoms.list.len() as AtomId };
        let (atoms, terms) = (&g.atoms, &g.terms);
        join::join(&p, atoms, terms, &g.ix, w, &mut budget, &mut |b, m| {
            let head = join::lookup_atom(&r.head, b, terms, atoms).expect("the relaxed model holds every head");
            pos.clear();
            pos.extend(m.iter().copied().filter(|&a| is_dynamic(atoms.list[a as usize].0)));
            neg.clear();
            for l in &r.body {
                if let Literal::Not(a) = l
                    && is_dynamic(a.pred)
                    && let Some(id) = join::lookup_atom(a, b, terms, atoms)
                {
                    neg.push(id);
                }
            }
            group.push(head, &pos, &neg);
            count += 1;
            count <= lim.rules
        });
        if count > lim.rules {
            return Err(limit(format!("grounding passes {} rule instances", lim.rules), "fewer ground rules".into()));
        }
        if budget.stopped {
            g.over_time()?;
        }
    }
    g.over_time()?;
    // Every static atom in the table holds.
    let words = g.atoms.list.len().div_ceil(64);
    let mut statics = vec![0u64; words];
    for (a, (p, _)) in g.atoms.list.iter().enumerate() {
        if is_static(*p) {
            statics[a / 64] |= 1 << (a % 64);
        }
    }
    let groups = groups_by_scc.into_iter().filter(|gr| !gr.heads.is_empty()).collect();
    let roles = c.roles.iter().map(|&r| g.terms.intern(GTerm::Const(r))).collect();
    Ok(Grounded { terms: g.terms, atoms: g.atoms, statics, groups, roles, kw })
}
