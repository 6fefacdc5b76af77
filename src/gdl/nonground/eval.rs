//! The non-ground evaluator's joins: a rule body matched against facts in three layers — the
//! static facts (computed once), the facts of a state (its `true` terms and what follows
//! without moves) and the facts of a joint move (`does` and what depends on it) — each
//! relation living in exactly one layer.
//!
//! A [`Plan`] fixes a rule's join order once (the literal expected to match fewest facts next,
//! by the relations' sizes and their keys' spread in a sample model), each literal probing
//! the index of its shape ([`super::facts`]); `distinct` and `not` are tested as soon as
//! their variables are bound (negation refers to strata already complete). A recursive
//! stratum runs semi-naively: after a first round of full joins, each round joins every rule
//! once per literal of the stratum, that literal restricted to the facts the last round added.
//! Bindings are slices of the facts themselves, so a join allocates only the facts it derives.

use super::super::fx::FxHashMap;
use super::super::parse::{Atom, Literal, Rule, Sym, Term};
use super::facts::{Facts, Part, Registry, ShapeId, probe_key, shape_of, skip};

/// Which layer a relation's facts live in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Layer {
    Static,
    State,
    Moves,
}

/// The three layers a join reads.
#[derive(Clone, Copy)]
pub struct View<'a> {
    pub stat: &'a Facts,
    pub state: &'a Facts,
    pub moves: &'a Facts,
}

impl<'a> View<'a> {
    pub fn layer(&self, l: Layer) -> &'a Facts {
        match l {
            Layer::Static => self.stat,
            Layer::State => self.state,
            Layer::Moves => self.moves,
        }
    }
}

/// A test run once its variables are bound.
#[derive(Clone, Debug)]
enum Check {
    Distinct(Term, Term),
    Not(Atom, Layer),
}

#[derive(Clone, Debug)]
struct Step {
    atom: Atom,
    layer: Layer,
    /// The index probed, with its shape's places.
    shape: Option<(ShapeId, Vec<Part>)>,
    checks: Vec<Check>,
}

/// A rule's join (see the module doc).
#[derive(Clone, Debug)]
pub struct Plan {
    pub head: Atom,
    /// The head nests a variable in a function term, so its terms may be deeper or larger
    /// than the facts it is made of (and are measured against the limits).
    grows: bool,
    vars: usize,
    first: Vec<Check>,
    steps: Vec<Step>,
    /// The first step is restricted to the facts new since the last round.
    delta: bool,
}

fn term_vars(t: &Term, out: &mut Vec<u32>) {
    super::super::parse::term_vars(t, out)
}

fn atom_vars(a: &Atom) -> Vec<u32> {
    let mut v = Vec::new();
    a.args.iter().for_each(|t| term_vars(t, &mut v));
    v
}

impl Plan {
    /// The plan of `rule` with its positive literal `delta` (a position among them) first;
    /// `layer` places each relation, `sample` gives the sizes the order is chosen by, `reg`
    /// registers the shapes probed.
    pub fn new(rule: &Rule, delta: Option<usize>, layer: &dyn Fn(Sym) -> Layer, sample: View, reg: &mut Registry) -> Plan {
        let mut rest: Vec<&Atom> = rule.body.iter().filter_map(|l| if let Literal::Pos(a) = l { Some(a) } else { None }).collect();
        let mut order: Vec<&Atom> = Vec::with_capacity(rest.len());
        let mut seen: Vec<u32> = Vec::new();
        if let Some(f) = delta {
            let a = rest.remove(f);
            seen.extend(atom_vars(a));
            order.push(a);
        }
        while !rest.is_empty() {
            let mut best = (f64::INFINITY, usize::MAX, 0);
            for (k, a) in rest.iter().enumerate() {
                let shape = shape_of(&a.args, &seen);
                let unbound = atom_vars(a).iter().filter(|x| !seen.contains(x)).count();
                let c = (sample.layer(layer(a.pred)).cost(a.pred, &shape), unbound, k);
                if c.0 < best.0 || (c.0 == best.0 && c.1 < best.1) {
                    best = c;
                }
            }
            let a = rest.remove(best.2);
            seen.extend(atom_vars(a));
            order.push(a);
        }
        let mut tests: Vec<(Check, Vec<u32>)> = Vec::new();
        for l in &rule.body {
            match l {
                Literal::Distinct(x, y, _) => {
                    let mut v = Vec::new();
                    term_vars(x, &mut v);
                    term_vars(y, &mut v);
                    tests.push((Check::Distinct(x.clone(), y.clone()), v));
                }
                Literal::Not(a) => tests.push((Check::Not(a.clone(), layer(a.pred)), atom_vars(a))),
                _ => {}
            }
        }
        let ready = |tests: &mut Vec<(Check, Vec<u32>)>, bound: &[u32]| -> Vec<Check> {
            let mut out = Vec::new();
            tests.retain(|(c, v)| {
                let now = v.iter().all(|x| bound.contains(x));
                if now {
                    out.push(c.clone());
                }
                !now
            });
            out
        };
        let mut bound = Vec::new();
        let first = ready(&mut tests, &bound);
        let mut steps = Vec::with_capacity(order.len());
        for a in order {
            let shape = shape_of(&a.args, &bound);
            let shape = (!shape.is_empty()).then(|| (reg.register(a.pred, shape.clone()), shape));
            bound.extend(atom_vars(a));
            steps.push(Step { atom: a.clone(), layer: layer(a.pred), shape, checks: ready(&mut tests, &bound) });
        }
        // Safe rules bind every test's variables; a test left over runs at the end.
        if let Some(last) = steps.last_mut() {
            last.checks.extend(tests.into_iter().map(|(c, _)| c));
        }
        let grows = rule.head.args.iter().any(|t| {
            matches!(t, Term::Fn(..)) && {
                let mut v = Vec::new();
                term_vars(t, &mut v);
                !v.is_empty()
            }
        });
        Plan { head: rule.head.clone(), grows, vars: rule.vars.len(), first, steps, delta: delta.is_some() }
    }
}

/// Matches `pat` against the flat term at `f[i..]`, binding variables to slices of `f`; the
/// end of the term, or `None`.
fn unify<'f>(pat: &Term, f: &'f [u32], i: usize, binds: &mut [Option<&'f [u32]>], trail: &mut Vec<u32>) -> Option<usize> {
    match pat {
        Term::Const(s) => (f[i] == *s && f[i + 1] == 0).then_some(i + 2),
        Term::Var(v) => {
            let end = skip(f, i);
            match binds[*v as usize] {
                Some(b) => (b == &f[i..end]).then_some(end),
                None => {
                    binds[*v as usize] = Some(&f[i..end]);
                    trail.push(*v);
                    Some(end)
                }
            }
        }
        Term::Fn(g, args) => {
            if f[i] != *g || f[i + 1] as usize != args.len() + 1 {
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

/// Appends the flat form of `t` under `binds` (every variable bound) to `out`.
pub fn flatten(t: &Term, binds: &[Option<&[u32]>], out: &mut Vec<u32>) {
    match t {
        Term::Const(s) => out.extend([*s, 0]),
        Term::Var(v) => out.extend_from_slice(binds[*v as usize].expect("safe rules bind every variable")),
        Term::Fn(g, args) => {
            out.extend([*g, args.len() as u32 + 1]);
            args.iter().for_each(|a| flatten(a, binds, out));
        }
    }
}

fn same(x: &Term, y: &Term, binds: &[Option<&[u32]>], buf: &mut Vec<u32>) -> bool {
    buf.clear();
    flatten(x, binds, buf);
    let split = buf.len();
    flatten(y, binds, buf);
    buf[..split] == buf[split..]
}

fn passes(checks: &[Check], view: View, binds: &[Option<&[u32]>], buf: &mut Vec<u32>) -> bool {
    checks.iter().all(|c| match c {
        Check::Distinct(x, y) => !same(x, y, binds, buf),
        Check::Not(a, l) => {
            buf.clear();
            a.args.iter().for_each(|t| flatten(t, binds, buf));
            !view.layer(*l).contains(a.pred, buf)
        }
    })
}

/// The facts a round derives: heads flattened one after another, with their relation.
#[derive(Default)]
pub struct Derived {
    pub flat: Vec<u32>,
    pub heads: Vec<(Sym, u32, u32)>,
    /// Most heads a round may derive (0: no limit); past it the joins stop and `over` is set.
    pub cap: usize,
    /// Most words `flat` may hold (0: no limit); past it the joins stop and `over` is set.
    pub words: usize,
    pub over: bool,
    /// A head past the term limits stopped the joins: its relation, depth and size.
    pub deep: Option<(Sym, u32, u32)>,
}

/// The depth of function terms and the size in symbols of the flat term at `f[i..]`, and its
/// end; without recursion (a deep term must not take the stack), stopping early once past
/// the limits (then the figures are where it stopped).
pub fn flat_shape(f: &[u32], i: usize) -> (u32, u32, usize) {
    use super::super::ground::{MAX_TERM_DEPTH, MAX_TERM_SIZE};
    // Children still to read, per open function term.
    let mut open: Vec<u32> = Vec::new();
    let (mut depth, mut size, mut at) = (0u32, 0u32, i);
    loop {
        let n = f[at + 1];
        at += 2;
        size += 1;
        // A function term (tag ≥ 1, `(f)` included) is one level below those open.
        if n >= 1 {
            depth = depth.max(open.len() as u32 + 1);
        }
        if n > 1 {
            open.push(n - 1);
        } else {
            while let Some(left) = open.last_mut() {
                *left -= 1;
                if *left > 0 {
                    break;
                }
                open.pop();
            }
        }
        if open.is_empty() || depth > MAX_TERM_DEPTH || size > MAX_TERM_SIZE {
            return (depth, size, at);
        }
    }
}

/// Per relation, the positions of the facts new since the last round.
pub type Window = FxHashMap<Sym, (u32, u32)>;

/// Joins `p` over `view` (its delta step over the facts in `window`), pushing every head.
pub fn join(p: &Plan, view: View, window: &Window, out: &mut Derived) {
    let mut binds: Vec<Option<&[u32]>> = vec![None; p.vars];
    let mut buf = Vec::new();
    if !passes(&p.first, view, &binds, &mut buf) {
        return;
    }
    step(p, 0, view, window, &mut binds, &mut buf, out);
}

fn step<'f>(
    p: &Plan,
    k: usize,
    view: View<'f>,
    window: &Window,
    binds: &mut Vec<Option<&'f [u32]>>,
    buf: &mut Vec<u32>,
    out: &mut Derived,
) {
    if out.over {
        return;
    }
    if k == p.steps.len() {
        let start = out.flat.len() as u32;
        p.head.args.iter().for_each(|t| flatten(t, binds, &mut out.flat));
        if p.grows {
            let mut at = start as usize;
            while at < out.flat.len() {
                let (depth, size, end) = flat_shape(&out.flat, at);
                if super::super::ground::too_big((depth, size)) {
                    out.deep = Some((p.head.pred, depth, size));
                    out.over = true;
                    return;
                }
                at = end;
            }
        }
        out.heads.push((p.head.pred, start, out.flat.len() as u32));
        if (out.cap != 0 && out.heads.len() > out.cap) || (out.words != 0 && out.flat.len() > out.words) {
            out.over = true;
        }
        return;
    }
    let s = &p.steps[k];
    let Some(rel) = view.layer(s.layer).rel(s.atom.pred) else { return };
    let (lo, hi) = match (p.delta && k == 0).then(|| window.get(&s.atom.pred)) {
        Some(Some(&(lo, hi))) => (lo, hi),
        Some(None) => return,
        None => (0, rel.list.len() as u32),
    };
    let mut trail = Vec::new();
    let mut visit = |i: u32, binds: &mut Vec<Option<&'f [u32]>>, buf: &mut Vec<u32>, out: &mut Derived| {
        let f: &'f [u32] = &rel.list[i as usize];
        trail.clear();
        let mut at = 0;
        let ok = s.atom.args.iter().all(|t| match unify(t, f, at, binds, &mut trail) {
            Some(e) => {
                at = e;
                true
            }
            None => false,
        });
        if ok && passes(&s.checks, view, binds, buf) {
            step(p, k + 1, view, window, binds, buf, out);
        }
        for &v in &trail {
            binds[v as usize] = None;
        }
    };
    match &s.shape {
        Some((id, parts)) => {
            let key = probe_key(&s.atom.args, binds, parts);
            let Some(list) = rel.lookup(*id, key) else { unreachable!("every registered shape is indexed") };
            let from = list.partition_point(|&i| i < lo);
            let to = list.partition_point(|&i| i < hi);
            for &i in &list[from..to] {
                visit(i, binds, buf, out);
            }
        }
        None => {
            for i in lo..hi {
                visit(i, binds, buf, out);
            }
        }
    }
}
