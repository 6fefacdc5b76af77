//! Joins for grounding: a rule body matched against the ground atoms found so far, through
//! hash indexes, so that a literal whose arguments are partly known costs the atoms it can
//! match, not every atom of its relation.
//!
//! A rule's positive literals are joined in a fixed order ([`Plan`]): one chosen literal first
//! (the one restricted to the atoms new since the last round, in semi-naive evaluation), then
//! the literal with most bound variables next (then fewest unbound; then as written). The
//! order fixes, for each literal, which parts of its arguments are known when it is reached:
//! its function symbols and constants, and the variables bound before. Those parts, found by
//! their paths into the arguments, make the literal's index key; an index per relation and
//! key shape is registered when the plan is made and kept up to date as atoms are added.
//! `distinct` literals and negated static literals are tested as soon as their variables are
//! bound, which prunes the join early.

use super::super::fx::FxHashMap as HashMap;
use super::super::parse::{Atom, Literal, Rule, Sym, Term};
use super::{AtomId, Atoms, GId, GTerm, Terms};

/// A place in an atom's arguments: the argument, then the child at each level.
pub type Path = Box<[u8]>;

/// One part of an index key: the function symbol and arity at a path, or the term there.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Part {
    Functor(Path),
    Value(Path),
}

/// Where a key part's value comes from when a literal is probed.
#[derive(Clone, Debug)]
enum Source {
    /// A function symbol and arity (encoded).
    Functor(u64),
    /// A constant of the rule.
    Const(Sym),
    /// A variable bound before.
    Var(u32),
}

const FUNCTOR: u64 = 1 << 63;

fn functor(f: Sym, arity: usize) -> u64 {
    FUNCTOR | (f as u64) << 16 | arity as u64
}

/// The subterm of an atom's arguments at `path`, if the atom has one there.
fn at(terms: &Terms, args: &[GId], path: &[u8]) -> Option<GId> {
    let mut g = *args.get(path[0] as usize)?;
    for &i in &path[1..] {
        match &terms.nodes[g as usize] {
            GTerm::Fn(_, a) => g = *a.get(i as usize)?,
            GTerm::Const(_) => return None,
        }
    }
    Some(g)
}

/// The index key of an atom for a key shape, or `None` when the atom cannot have it (it lacks
/// a path, or has a constant where the shape has a function).
fn atom_key(terms: &Terms, args: &[GId], shape: &[Part], out: &mut Vec<u64>) -> bool {
    out.clear();
    for p in shape {
        match p {
            Part::Functor(path) => match at(terms, args, path).map(|g| &terms.nodes[g as usize]) {
                Some(GTerm::Fn(f, a)) => out.push(functor(*f, a.len())),
                _ => return false,
            },
            Part::Value(path) => match at(terms, args, path) {
                Some(g) => out.push(g as u64),
                None => return false,
            },
        }
    }
    true
}

/// The hash indexes of one grounding: per relation, the key shapes its plans probe.
#[derive(Default)]
pub struct Indexes {
    shapes: Vec<(Sym, Vec<Part>)>,
    maps: Vec<HashMap<Box<[u64]>, Vec<AtomId>>>,
    by_pred: HashMap<Sym, Vec<usize>>,
    key: Vec<u64>,
}

impl Indexes {
    /// The index of `pred` with key `shape`, if registered (looked up among `pred`'s only, so
    /// that planning many relations stays linear).
    fn find(&self, pred: Sym, shape: &[Part]) -> Option<usize> {
        self.by_pred.get(&pred)?.iter().copied().find(|&i| self.shapes[i].1 == shape)
    }

    /// The index of `pred` with key `shape` (registered when new, filled from `atoms`).
    fn register(&mut self, pred: Sym, shape: Vec<Part>, atoms: &Atoms, terms: &Terms) -> usize {
        if let Some(i) = self.find(pred, &shape) {
            return i;
        }
        let mut map: HashMap<Box<[u64]>, Vec<AtomId>> = HashMap::default();
        let mut key = Vec::new();
        for &a in atoms.of(pred) {
            if atom_key(terms, &atoms.list[a as usize].1, &shape, &mut key) {
                map.entry(key.as_slice().into()).or_default().push(a);
            }
        }
        self.shapes.push((pred, shape));
        self.maps.push(map);
        self.by_pred.entry(pred).or_default().push(self.maps.len() - 1);
        self.maps.len() - 1
    }

    /// The atoms a literal of `pred` whose known parts make the key `shape` is expected to
    /// match: the relation's atoms over the number of its distinct keys (from the index when
    /// there is one, else estimated from an even sample of the atoms).
    fn cost(&self, pred: Sym, shape: &[Part], atoms: &Atoms, terms: &Terms) -> f64 {
        let all = atoms.of(pred);
        let n = all.len() as f64;
        if shape.is_empty() || all.is_empty() {
            return n;
        }
        if let Some(i) = self.find(pred, shape) {
            let with_key: usize = self.maps[i].values().map(Vec::len).sum();
            return with_key as f64 / self.maps[i].len().max(1) as f64;
        }
        const SAMPLE: usize = 256;
        let stride = all.len().div_ceil(SAMPLE);
        let mut key = Vec::new();
        let mut keys: Vec<u64> = Vec::new();
        let mut sampled = 0usize;
        for &a in all.iter().step_by(stride) {
            sampled += 1;
            if atom_key(terms, &atoms.list[a as usize].1, shape, &mut key) {
                let mut h = super::super::fx::Fx::default();
                std::hash::Hash::hash(&key[..], &mut h);
                keys.push(std::hash::Hasher::finish(&h));
            }
        }
        if keys.is_empty() {
            return 0.0;
        }
        let with_key = n * keys.len() as f64 / sampled as f64;
        keys.sort_unstable();
        keys.dedup();
        // Every sampled key distinct: about as many keys as atoms; else the keys seen.
        let distinct = if keys.len() * 2 > sampled { with_key * keys.len() as f64 / sampled as f64 } else { keys.len() as f64 };
        with_key / distinct.max(1.0)
    }

    /// Files a new atom under every index of its relation.
    pub fn add(&mut self, a: AtomId, atoms: &Atoms, terms: &Terms) {
        let (pred, args) = &atoms.list[a as usize];
        let Some(ids) = self.by_pred.get(pred) else { return };
        for &i in ids {
            if atom_key(terms, args, &self.shapes[i].1, &mut self.key) {
                self.maps[i].entry(self.key.as_slice().into()).or_default().push(a);
            }
        }
    }
}

/// A test run once its variables are bound.
#[derive(Clone, Debug)]
pub enum Check<'a> {
    Distinct(&'a Term, &'a Term),
    /// A negated atom of a static relation (complete before this join): it must not hold.
    NotStatic(&'a Atom),
}

/// One literal of a plan: the atom, its index (`None`: every atom of its relation) and key.
#[derive(Debug)]
pub struct Step<'a> {
    pub atom: &'a Atom,
    index: Option<usize>,
    key: Vec<Source>,
    /// Tests whose last variable this step binds.
    checks: Vec<Check<'a>>,
}

/// A rule's join: its positive literals in order, and its tests.
#[derive(Debug)]
pub struct Plan<'a> {
    pub rule: &'a Rule,
    pub steps: Vec<Step<'a>>,
    /// Tests with no variable (run before the first step).
    first: Vec<Check<'a>>,
    /// The literal restricted to new atoms (the first step), if any.
    pub delta: Option<usize>,
}

fn term_vars(t: &Term, out: &mut Vec<u32>) {
    super::super::parse::term_vars(t, out)
}

/// The order of a rule's positive literals: `first` (a position among them) first, then the
/// literal with most bound variables (then fewest unbound; then as written).
pub fn order(rule: &Rule, first: Option<usize>) -> Vec<&Atom> {
    let mut rest: Vec<&Atom> = rule.body.iter().filter_map(|l| if let Literal::Pos(a) = l { Some(a) } else { None }).collect();
    let mut bound: Vec<u32> = Vec::new();
    let mut out = Vec::new();
    if let Some(f) = first {
        let a = rest.remove(f);
        a.args.iter().for_each(|t| term_vars(t, &mut bound));
        out.push(a);
    }
    while !rest.is_empty() {
        let score = |a: &Atom| {
            let mut v = Vec::new();
            a.args.iter().for_each(|t| term_vars(t, &mut v));
            let b = v.iter().filter(|x| bound.contains(x)).count();
            (b, usize::MAX - (v.len() - b))
        };
        let (k, _) = rest.iter().enumerate().max_by_key(|(i, a)| (score(a), usize::MAX - i)).expect("non-empty");
        let a = rest.remove(k);
        a.args.iter().for_each(|t| term_vars(t, &mut bound));
        out.push(a);
    }
    out
}

/// The key parts of `t` at `path`: functions, constants, and variables in `bound`.
fn parts(t: &Term, path: &mut Vec<u8>, bound: &[u32], shape: &mut Vec<Part>, key: &mut Vec<Source>) {
    match t {
        Term::Const(s) => {
            shape.push(Part::Value(path.as_slice().into()));
            key.push(Source::Const(*s));
        }
        Term::Var(v) => {
            if bound.contains(v) {
                shape.push(Part::Value(path.as_slice().into()));
                key.push(Source::Var(*v));
            }
        }
        Term::Fn(f, args) => {
            shape.push(Part::Functor(path.as_slice().into()));
            key.push(Source::Functor(functor(*f, args.len())));
            for (i, a) in args.iter().enumerate() {
                path.push(i as u8);
                parts(a, path, bound, shape, key);
                path.pop();
            }
        }
    }
}

/// Makes a rule's plan with the positive literal `delta` (a position among them) first,
/// registering the indexes it probes. `is_static` says which relations are complete (their
/// negations are tested during the join; other negations are left to the caller).
pub fn plan<'a>(
    rule: &'a Rule,
    delta: Option<usize>,
    is_static: &dyn Fn(Sym) -> bool,
    ix: &mut Indexes,
    atoms: &Atoms,
    terms: &Terms,
) -> Plan<'a> {
    // The order: the delta literal first, then the literal expected to match fewest atoms
    // (then with fewest unbound variables; then as written).
    let mut rest: Vec<&'a Atom> = rule.body.iter().filter_map(|l| if let Literal::Pos(a) = l { Some(a) } else { None }).collect();
    let mut order: Vec<&'a Atom> = Vec::with_capacity(rest.len());
    let mut seen: Vec<u32> = Vec::new();
    if let Some(f) = delta {
        let a = rest.remove(f);
        a.args.iter().for_each(|t| term_vars(t, &mut seen));
        order.push(a);
    }
    while !rest.is_empty() {
        let mut best = (f64::INFINITY, usize::MAX, 0);
        for (k, a) in rest.iter().enumerate() {
            let (mut shape, mut key) = (Vec::new(), Vec::new());
            for (i, t) in a.args.iter().enumerate() {
                parts(t, &mut vec![i as u8], &seen, &mut shape, &mut key);
            }
            let mut v = Vec::new();
            a.args.iter().for_each(|t| term_vars(t, &mut v));
            let unbound = v.iter().filter(|x| !seen.contains(x)).count();
            let c = (ix.cost(a.pred, &shape, atoms, terms), unbound, k);
            if c.0 < best.0 || (c.0 == best.0 && c.1 < best.1) {
                best = c;
            }
        }
        let a = rest.remove(best.2);
        a.args.iter().for_each(|t| term_vars(t, &mut seen));
        order.push(a);
    }
    let mut bound: Vec<u32> = Vec::new();
    let mut steps = Vec::with_capacity(order.len());
    // Tests and their variables, placed at the step that binds the last of them.
    let mut tests: Vec<(Check<'a>, Vec<u32>)> = Vec::new();
    for l in &rule.body {
        match l {
            Literal::Distinct(x, y, _) => {
                let mut v = Vec::new();
                term_vars(x, &mut v);
                term_vars(y, &mut v);
                tests.push((Check::Distinct(x, y), v));
            }
            Literal::Not(a) if is_static(a.pred) => {
                let mut v = Vec::new();
                a.args.iter().for_each(|t| term_vars(t, &mut v));
                tests.push((Check::NotStatic(a), v));
            }
            _ => {}
        }
    }
    let ready = |tests: &mut Vec<(Check<'a>, Vec<u32>)>, bound: &[u32]| -> Vec<Check<'a>> {
        let mut out = Vec::new();
        tests.retain(|(c, v)| {
            if v.iter().all(|x| bound.contains(x)) {
                out.push(c.clone());
                false
            } else {
                true
            }
        });
        out
    };
    let first = ready(&mut tests, &bound);
    for a in order {
        let (mut shape, mut key) = (Vec::new(), Vec::new());
        for (i, t) in a.args.iter().enumerate() {
            parts(t, &mut vec![i as u8], &bound, &mut shape, &mut key);
        }
        let index = (!shape.is_empty()).then(|| ix.register(a.pred, shape, atoms, terms));
        a.args.iter().for_each(|t| term_vars(t, &mut bound));
        steps.push(Step { atom: a, index, key, checks: ready(&mut tests, &bound) });
    }
    // A test whose variables no positive literal binds (unsafe rules are errors before this;
    // kept for safety): run at the end, where it sees what is bound.
    if let Some(last) = steps.last_mut() {
        last.checks.extend(tests.into_iter().map(|(c, _)| c));
    }
    Plan { rule, steps, first, delta: delta.map(|_| 0) }
}

/// Variable bindings of one rule.
pub type Binds = Vec<Option<GId>>;

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

/// Whether the ground term `g` is the term `t` under `binds` (every variable of `t` bound).
fn same_as(g: GId, t: &Term, binds: &Binds, terms: &Terms) -> bool {
    match t {
        Term::Var(v) => binds[*v as usize] == Some(g),
        Term::Const(s) => terms.nodes[g as usize] == GTerm::Const(*s),
        Term::Fn(f, args) => match &terms.nodes[g as usize] {
            GTerm::Fn(h, ga) => h == f && ga.len() == args.len() && ga.iter().zip(args).all(|(&x, a)| same_as(x, a, binds, terms)),
            GTerm::Const(_) => false,
        },
    }
}

/// Whether two terms of a rule are the same under `binds` (every variable bound).
fn same(x: &Term, y: &Term, binds: &Binds, terms: &Terms) -> bool {
    match (x, y) {
        (Term::Var(v), t) | (t, Term::Var(v)) => binds[*v as usize].is_some_and(|g| same_as(g, t, binds, terms)),
        (Term::Const(a), Term::Const(b)) => a == b,
        (Term::Fn(f, xs), Term::Fn(g, ys)) => f == g && xs.len() == ys.len() && xs.iter().zip(ys).all(|(a, b)| same(a, b, binds, terms)),
        _ => false,
    }
}

/// The ground term of `pat` under `binds`, if it exists already.
pub fn lookup(pat: &Term, binds: &Binds, terms: &Terms) -> Option<GId> {
    match pat {
        Term::Const(s) => terms.get(&GTerm::Const(*s)),
        Term::Var(v) => binds[*v as usize],
        Term::Fn(f, args) => {
            let a: Option<Box<[GId]>> = args.iter().map(|t| lookup(t, binds, terms)).collect();
            terms.get(&GTerm::Fn(*f, a?))
        }
    }
}

/// The ground atom of `a` under `binds`, if it exists already.
pub fn lookup_atom(a: &Atom, binds: &Binds, terms: &Terms, atoms: &Atoms) -> Option<AtomId> {
    let args: Option<Box<[GId]>> = a.args.iter().map(|t| lookup(t, binds, terms)).collect();
    atoms.get(a.pred, &args?)
}

fn passes(checks: &[Check], binds: &Binds, terms: &Terms, atoms: &Atoms) -> bool {
    checks.iter().all(|c| match c {
        Check::Distinct(x, y) => !same(x, y, binds, terms),
        Check::NotStatic(a) => lookup_atom(a, binds, terms, atoms).is_none(),
    })
}

/// What a join may look at: the atoms below `hi`, and for the delta step those from `lo`.
#[derive(Clone, Copy, Debug)]
pub struct Window {
    pub lo: AtomId,
    pub hi: AtomId,
}

/// Counts the work of a join and stops it when the caller's budget says so.
pub struct Budget<'b> {
    pub steps: u64,
    pub stop: &'b mut dyn FnMut() -> bool,
    pub stopped: bool,
}

impl Budget<'_> {
    #[inline]
    fn tick(&mut self) -> bool {
        self.steps += 1;
        if self.steps.is_multiple_of(4096) && !self.stopped && (self.stop)() {
            self.stopped = true;
        }
        self.stopped
    }
}

/// Calls `f` with every binding of the plan's positive literals to atoms in the window (the
/// delta step to atoms from `w.lo`), and the atoms matched, whose tests hold; stops (marking
/// the budget stopped) when `f` returns false or the budget runs out.
pub fn join(
    p: &Plan,
    atoms: &Atoms,
    terms: &Terms,
    ix: &Indexes,
    w: Window,
    budget: &mut Budget,
    f: &mut dyn FnMut(&Binds, &[AtomId]) -> bool,
) {
    let mut binds = vec![None; p.rule.vars.len()];
    if !passes(&p.first, &binds, terms, atoms) {
        return;
    }
    let mut matched = Vec::with_capacity(p.steps.len());
    let mut key = Vec::new();
    step(p, 0, atoms, terms, ix, w, budget, &mut binds, &mut matched, &mut key, f);
}

fn step(
    p: &Plan,
    k: usize,
    atoms: &Atoms,
    terms: &Terms,
    ix: &Indexes,
    w: Window,
    budget: &mut Budget,
    binds: &mut Binds,
    matched: &mut Vec<AtomId>,
    key: &mut Vec<u64>,
    f: &mut dyn FnMut(&Binds, &[AtomId]) -> bool,
) {
    if k == p.steps.len() {
        if !f(binds, matched) {
            budget.stopped = true;
        }
        return;
    }
    let s = &p.steps[k];
    let candidates: &[AtomId] = match s.index {
        Some(i) => {
            key.clear();
            for src in &s.key {
                key.push(match src {
                    Source::Functor(x) => *x,
                    Source::Var(v) => binds[*v as usize].expect("bound before") as u64,
                    Source::Const(c) => match terms.get(&GTerm::Const(*c)) {
                        Some(g) => g as u64,
                        None => return,
                    },
                });
            }
            match ix.maps[i].get(key.as_slice()) {
                Some(v) => v,
                None => return,
            }
        }
        None => atoms.of(s.atom.pred),
    };
    // Atoms are numbered as they are added, and every list is in that order.
    let lo = if p.delta == Some(k) { candidates.partition_point(|&a| a < w.lo) } else { 0 };
    let hi = candidates.partition_point(|&a| a < w.hi);
    let mut trail = Vec::new();
    for &a in &candidates[lo..hi] {
        if budget.tick() {
            return;
        }
        let args = &atoms.list[a as usize].1;
        trail.clear();
        if s.atom.args.iter().zip(args.iter()).all(|(t, &g)| unify(t, g, terms, binds, &mut trail))
            && passes(&s.checks, binds, terms, atoms)
        {
            matched.push(a);
            step(p, k + 1, atoms, terms, ix, w, budget, binds, matched, key, f);
            matched.pop();
            if budget.stopped {
                for &v in &trail {
                    binds[v as usize] = None;
                }
                return;
            }
        }
        for &v in &trail {
            binds[v as usize] = None;
        }
    }
}
