//! The non-ground evaluator's facts: ground terms as flat sequences, kept per relation in
//! insertion order with a set for duplicates and the hash indexes the rules' joins probe.
//!
//! A ground term is flattened into `(symbol, tag)` pairs in prefix order, the tag 0 for a
//! constant and the argument count plus one for a function term (so that `(f)` differs from
//! `f`): no term table grows while playing, and a fact is comparable and hashable as a slice.
//!
//! An index of a relation is keyed by a **shape**: the places ([`Part`]) of a literal's
//! arguments that are known when the join reaches it — its function symbols, constants, and
//! variables bound before. A fact's key is a hash of what it has at those places; a literal's
//! probe is the hash of what the pattern and its bindings put there. Equal keys are candidates
//! only: the join unifies each one, so a hash collision costs a failed unification, never a
//! wrong answer.

use super::super::fx::{Fx, FxHashMap, FxHashSet};
use super::super::parse::{Sym, Term};
use std::hash::Hasher;

/// A ground term, flattened (see the module doc).
pub type Flat = Box<[u32]>;

/// The end of the flat term starting at `i`.
pub fn skip(f: &[u32], i: usize) -> usize {
    let mut end = i + 2;
    for _ in 0..f[i + 1].saturating_sub(1) {
        end = skip(f, end);
    }
    end
}

/// A flat term as KIF text (from `f[i..]`); the end.
pub fn show(f: &[u32], i: usize, name: &dyn Fn(Sym) -> String, out: &mut String) -> usize {
    let (s, n) = (f[i], f[i + 1]);
    if n == 0 {
        out.push_str(&name(s));
        return i + 2;
    }
    out.push('(');
    out.push_str(&name(s));
    let mut at = i + 2;
    for _ in 0..n - 1 {
        out.push(' ');
        at = show(f, at, name, out);
    }
    out.push(')');
    at
}

/// A place in a literal's arguments: the argument, then the child at each level.
pub type Path = Box<[u8]>;

/// One known place of a shape: the function symbol there, or the whole term there.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Part {
    Functor(Path),
    Value(Path),
}

/// A shape's number in its evaluator's registry.
pub type ShapeId = u32;

/// Where the subterm at `path` starts in a fact (its arguments flattened one after another),
/// if the fact has one there.
fn at(f: &[u32], path: &[u8]) -> Option<usize> {
    let mut i = 0;
    for _ in 0..path[0] {
        if i >= f.len() {
            return None;
        }
        i = skip(f, i);
    }
    for &c in &path[1..] {
        if i >= f.len() || (f[i + 1] as usize) < c as usize + 2 {
            return None;
        }
        let mut j = i + 2;
        for _ in 0..c {
            j = skip(f, j);
        }
        i = j;
    }
    (i < f.len()).then_some(i)
}

/// The key of fact `f` for `shape`, or `None` when it lacks one of the shape's places (then
/// no literal of that shape can match it).
pub fn fact_key(f: &[u32], shape: &[Part]) -> Option<u64> {
    let mut h = Fx::default();
    for p in shape {
        match p {
            Part::Functor(path) => {
                let i = at(f, path)?;
                h.write_u32(f[i]);
                h.write_u32(f[i + 1]);
            }
            Part::Value(path) => {
                let i = at(f, path)?;
                let end = skip(f, i);
                h.write_usize(end - i);
                f[i..end].iter().for_each(|&x| h.write_u32(x));
            }
        }
    }
    Some(h.finish())
}

/// The subterm of a pattern at `path` (which the shape made from the pattern has).
fn pattern_at<'t>(args: &'t [Term], path: &[u8]) -> &'t Term {
    let mut t = &args[path[0] as usize];
    for &c in &path[1..] {
        match t {
            Term::Fn(_, a) => t = &a[c as usize],
            _ => unreachable!("a shape's paths lie in its pattern"),
        }
    }
    t
}

/// The probe of a pattern under `binds` for `shape` (made from that pattern with those
/// variables bound): equal to [`fact_key`] of every fact that can match.
pub fn probe_key(args: &[Term], binds: &[Option<&[u32]>], shape: &[Part]) -> u64 {
    let mut h = Fx::default();
    for p in shape {
        match p {
            Part::Functor(path) => match pattern_at(args, path) {
                Term::Fn(f, a) => {
                    h.write_u32(*f);
                    h.write_u32(a.len() as u32 + 1);
                }
                _ => unreachable!("a functor part names a function term"),
            },
            Part::Value(path) => match pattern_at(args, path) {
                Term::Const(s) => {
                    h.write_usize(2);
                    h.write_u32(*s);
                    h.write_u32(0);
                }
                Term::Var(v) => {
                    let b = binds[*v as usize].expect("a value part names a bound variable");
                    h.write_usize(b.len());
                    b.iter().for_each(|&x| h.write_u32(x));
                }
                Term::Fn(..) => unreachable!("a value part names a constant or a variable"),
            },
        }
    }
    h.finish()
}

/// The shape of a pattern when the variables `bound` are known: its function symbols and
/// constants, and those variables.
pub fn shape_of(args: &[Term], bound: &[u32]) -> Vec<Part> {
    fn walk(t: &Term, path: &mut Vec<u8>, bound: &[u32], out: &mut Vec<Part>) {
        match t {
            Term::Const(_) => out.push(Part::Value(path.as_slice().into())),
            Term::Var(v) => {
                if bound.contains(v) {
                    out.push(Part::Value(path.as_slice().into()))
                }
            }
            Term::Fn(_, a) => {
                out.push(Part::Functor(path.as_slice().into()));
                for (i, x) in a.iter().enumerate() {
                    path.push(i as u8);
                    walk(x, path, bound, out);
                    path.pop();
                }
            }
        }
    }
    let mut out = Vec::new();
    for (i, t) in args.iter().enumerate() {
        walk(t, &mut vec![i as u8], bound, &mut out);
    }
    out
}

/// The shapes every relation is indexed by.
#[derive(Clone, Debug, Default)]
pub struct Registry {
    pub shapes: Vec<Vec<Part>>,
    pub of: FxHashMap<Sym, Vec<ShapeId>>,
    /// The relation of each shape, in the order registered (what [`Facts::reindex`] reads
    /// from where it last stopped).
    log: Vec<Sym>,
}

impl Registry {
    /// The number of `pred`'s index of `shape` (registered when new).
    pub fn register(&mut self, pred: Sym, shape: Vec<Part>) -> ShapeId {
        if let Some(&i) = self.of.get(&pred).and_then(|ids| ids.iter().find(|&&i| self.shapes[i as usize] == shape)) {
            return i;
        }
        self.shapes.push(shape);
        self.log.push(pred);
        let id = (self.shapes.len() - 1) as ShapeId;
        self.of.entry(pred).or_default().push(id);
        id
    }
}

/// One relation's facts.
#[derive(Clone, Debug, Default)]
pub struct Rel {
    pub list: Vec<Flat>,
    /// The words of `list`'s facts.
    pub words: usize,
    set: FxHashSet<Flat>,
    /// Per shape: key → the facts (positions in `list`, ascending).
    index: Vec<(ShapeId, FxHashMap<u64, Vec<u32>>)>,
}

impl Rel {
    /// The facts whose key for `shape` is `key` (positions, ascending); `None` when the
    /// relation has no index of that shape.
    pub fn lookup(&self, shape: ShapeId, key: u64) -> Option<&[u32]> {
        let (_, m) = self.index.iter().find(|(s, _)| *s == shape)?;
        Some(m.get(&key).map_or(&[], Vec::as_slice))
    }

    /// Builds the index of `shape` over the facts so far (later facts are filed as added).
    fn ensure(&mut self, id: ShapeId, shape: &[Part]) {
        if self.index.iter().any(|(s, _)| *s == id) {
            return;
        }
        let mut m: FxHashMap<u64, Vec<u32>> = FxHashMap::default();
        for (k, f) in self.list.iter().enumerate() {
            if let Some(key) = fact_key(f, shape) {
                m.entry(key).or_default().push(k as u32);
            }
        }
        self.index.push((id, m));
    }
}

/// A set of facts by relation, each relation indexed by its registered shapes.
#[derive(Clone, Debug, Default)]
pub struct Facts {
    pub rels: FxHashMap<Sym, Rel>,
    /// How many of the registry's shapes [`Facts::reindex`] has seen.
    seen: usize,
}

impl Facts {
    /// Adds a fact; whether it was new.
    pub fn insert(&mut self, pred: Sym, f: &[u32], reg: &Registry) -> bool {
        let rel = self.rels.entry(pred).or_insert_with(|| {
            let mut r = Rel::default();
            for &id in reg.of.get(&pred).map_or(&[][..], Vec::as_slice) {
                r.ensure(id, &reg.shapes[id as usize]);
            }
            r
        });
        if rel.set.contains(f) {
            return false;
        }
        let k = rel.list.len() as u32;
        let flat: Flat = f.into();
        for (id, m) in &mut rel.index {
            if let Some(key) = fact_key(&flat, &reg.shapes[*id as usize]) {
                m.entry(key).or_default().push(k);
            }
        }
        rel.words += flat.len();
        rel.set.insert(flat.clone());
        rel.list.push(flat);
        true
    }

    /// Indexes every relation by the shapes registered for it since its facts were added.
    /// Only the shapes registered since the last call are looked at (a relation created
    /// since was indexed by every shape then registered), so that loading many strata stays
    /// linear.
    pub fn reindex(&mut self, reg: &Registry) {
        for (id, p) in reg.log.iter().enumerate().skip(self.seen) {
            if let Some(rel) = self.rels.get_mut(p) {
                rel.ensure(id as ShapeId, &reg.shapes[id]);
            }
        }
        self.seen = reg.log.len();
    }

    pub fn contains(&self, pred: Sym, args: &[u32]) -> bool {
        self.rels.get(&pred).is_some_and(|r| r.set.contains(args))
    }

    pub fn of(&self, pred: Sym) -> &[Flat] {
        self.rels.get(&pred).map_or(&[], |r| &r.list)
    }

    pub fn rel(&self, pred: Sym) -> Option<&Rel> {
        self.rels.get(&pred)
    }

    /// The facts `pred` is expected to have per key of `shape`: from an even sample.
    pub fn cost(&self, pred: Sym, shape: &[Part]) -> f64 {
        let all = self.of(pred);
        let n = all.len() as f64;
        if shape.is_empty() || all.is_empty() {
            return n;
        }
        const SAMPLE: usize = 256;
        let stride = all.len().div_ceil(SAMPLE);
        let mut keys = Vec::new();
        let mut sampled = 0usize;
        for f in all.iter().step_by(stride) {
            sampled += 1;
            if let Some(k) = fact_key(f, shape) {
                keys.push(k);
            }
        }
        if keys.is_empty() {
            return 0.0;
        }
        let with_key = n * keys.len() as f64 / sampled as f64;
        keys.sort_unstable();
        keys.dedup();
        let distinct = if keys.len() * 2 > sampled { with_key * keys.len() as f64 / sampled as f64 } else { keys.len() as f64 };
        with_key / distinct.max(1.0)
    }
}
