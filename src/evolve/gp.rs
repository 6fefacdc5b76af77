//! Genetic programming over selection [`Formula`]s, DEAP-style, as Mugrai et al. (2019) evolve
//! the UCB formula of MCTS (../shared/spec/match3-personas-and-player2.md, A.4): random trees
//! (full, grow, ramped half-and-half), uniform subtree mutation, constant mutation, one-point
//! subtree crossover, and [`next_generation`] — 10 elites, 45 mutants, the rest crossover
//! children of a shuffled list of all parent pairs, with no two members equivalent. Playing the
//! formulas and computing fitness is the caller's job; this module does no I/O.
//!
//! **Heights.** Config numbers use DEAP's *height*: a lone terminal has height 0. The formula
//! module's [`Formula::depth`] counts a leaf as 1, so height h means `depth() = h + 1` ([`height`]). The
//! paper's "depth 2–6" is `init_min_height = 2`, `init_max_height = 6`, i.e. `depth()` 3–7.
//!
//! **Equivalence.** The paper rejects a tree when SymPy's `simplify(a − b) == 0`. There is no
//! SymPy here: a tree is [`simplify`]d (constant folding, flattening of `+ −` and `×`, like
//! terms, canonical operand order) and then evaluated on a fixed set of [`SAMPLES`] node
//! statistics ([`fingerprint`]); two trees are equivalent when every value agrees within a
//! relative 1e-9. This is an approximation: two formulas that differ only off the sample
//! points count as equal. Deduplication compares a candidate against every member
//! ([`Dedup`]): 100 × 40 comparisons of cached values per candidate is cheap, and a hash of
//! rounded values was rejected because values on either side of a rounding boundary would get
//! different keys and need a neighbour search anyway.
//!
//! **Exactness.** [`simplify`] keeps the protected semantics of [`apply`] and changes values
//! only by floating-point rounding where it reassociates sums and products. Rules that hold
//! only for finite operands (`x·0 → 0`, `x − x → 0`, `x / x → 1`) are applied: formulas over
//! finite statistics stay finite unless a product overflows, which the sample points and real
//! MCTS statistics do not reach in practice.
//!
//! **Rejected alternative.** Keeping the population in simplified form would make trees
//! smaller, but DEAP (and the paper) vary the raw trees, so variation operators see them raw and
//! simplification is only for comparison and display ([`pretty`]).

use crate::rng::Rng;
use crate::search::formula::{Formula, Fun, Stats, Var, apply};
use rand::RngExt;
use rand::seq::SliceRandom;
use serde::{Deserialize, Serialize};
use std::cmp::Ordering;
use std::sync::LazyLock;

/// The GP settings. Defaults are the paper's (A.4), with DEAP's conventions where it is silent.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct GpConfig {
    /// Individuals per generation (100).
    pub population: usize,
    /// Best individuals copied unchanged into the next generation (10).
    pub elites: usize,
    /// Mutants per generation (45); crossover children fill the rest.
    pub mutants: usize,
    /// Chance that a mutant first has one constant perturbed or replaced (0.5).
    pub const_mutation_prob: f64,
    /// Ephemeral random constants are uniform in `[lo, hi)` ([0, 10]).
    pub const_range: (f64, f64),
    /// Heights of initial trees, DEAP convention (a terminal has height 0): 2..=6.
    pub init_min_height: usize,
    pub init_max_height: usize,
    /// Height of the fresh subtree of uniform mutation, drawn in 0..=this ("full"; 2).
    pub mutation_max_height: usize,
    /// Static height limit on offspring (8): deeper children are discarded.
    pub max_height: usize,
    /// Variables a leaf may be: `wins`, `visits`, `parent`, `moves` (the paper's W, Nc, Np, M);
    /// also `mean`, `sumsq`, `best`.
    #[serde(with = "var_names")]
    pub terminals: Vec<Var>,
    /// Operators: `+`, `-`, `*`, `/`, `sqrt` (protected `/` and `sqrt`); also `ln`, `max`, `min`.
    #[serde(with = "fun_names")]
    pub functions: Vec<Fun>,
    /// Parents of mutants and crossover come from this top fraction by fitness (1.0 = all,
    /// the paper's uniform choice; < 1 is truncation selection).
    pub parent_pool: f64,
}

impl Default for GpConfig {
    fn default() -> Self {
        GpConfig {
            population: 100,
            elites: 10,
            mutants: 45,
            const_mutation_prob: 0.5,
            const_range: (0.0, 10.0),
            init_min_height: 2,
            init_max_height: 6,
            mutation_max_height: 2,
            max_height: 8,
            terminals: vec![Var::Wins, Var::Visits, Var::Parent, Var::Moves],
            functions: vec![Fun::Add, Fun::Sub, Fun::Mul, Fun::Div, Fun::Sqrt],
            parent_pool: 1.0,
        }
    }
}

/// The largest `max_height` accepted (DEAP's recommended static limit).
pub const HEIGHT_LIMIT: usize = 17;

impl GpConfig {
    /// Checks the settings; the message names the key at fault.
    pub fn validate(&self) -> Result<(), String> {
        if self.population < 2 {
            return Err(format!("population = {} must be at least 2", self.population));
        }
        if self.elites + self.mutants > self.population {
            return Err(format!("elites + mutants = {} + {} must not exceed population = {}", self.elites, self.mutants, self.population));
        }
        if !(0.0..=1.0).contains(&self.const_mutation_prob) {
            return Err(format!("const_mutation_prob = {} must be in [0, 1]", self.const_mutation_prob));
        }
        let (lo, hi) = self.const_range;
        if !(lo.is_finite() && hi.is_finite() && lo <= hi) {
            return Err(format!("const_range = [{lo}, {hi}] must be finite and ordered (lo <= hi)"));
        }
        if self.init_min_height > self.init_max_height {
            return Err(format!("init_min_height = {} must not exceed init_max_height = {}", self.init_min_height, self.init_max_height));
        }
        if self.max_height > HEIGHT_LIMIT {
            return Err(format!("max_height = {} must be at most {HEIGHT_LIMIT}", self.max_height));
        }
        if self.init_max_height > self.max_height {
            return Err(format!("init_max_height = {} must not exceed max_height = {}", self.init_max_height, self.max_height));
        }
        if self.mutation_max_height > self.max_height {
            return Err(format!("mutation_max_height = {} must not exceed max_height = {}", self.mutation_max_height, self.max_height));
        }
        if self.terminals.is_empty() {
            return Err("terminals must name at least one variable".into());
        }
        if self.functions.is_empty() {
            return Err("functions must name at least one operator".into());
        }
        if !(self.parent_pool > 0.0 && self.parent_pool <= 1.0) {
            return Err(format!("parent_pool = {} must be in (0, 1]", self.parent_pool));
        }
        Ok(())
    }
}

/// All functions, in the canonical order of [`simplify`].
const FUNS: [Fun; 8] = [Fun::Add, Fun::Sub, Fun::Mul, Fun::Div, Fun::Max, Fun::Min, Fun::Sqrt, Fun::Ln];

/// The config name of a function: `+ - * /`, `sqrt`, `ln`, `max`, `min`.
pub fn fun_name(f: Fun) -> &'static str {
    match f {
        Fun::Add => "+",
        Fun::Sub => "-",
        Fun::Mul => "*",
        Fun::Div => "/",
        Fun::Max => "max",
        Fun::Min => "min",
        Fun::Sqrt => "sqrt",
        Fun::Ln => "ln",
    }
}

pub fn fun_from_name(name: &str) -> Option<Fun> {
    FUNS.into_iter().find(|f| fun_name(*f) == name)
}

pub fn var_from_name(name: &str) -> Option<Var> {
    Var::ALL.into_iter().find(|v| v.name() == name)
}

mod var_names {
    use super::{Var, var_from_name};
    use serde::{Deserialize, Deserializer, Serializer, de::Error};

    pub fn serialize<S: Serializer>(v: &[Var], s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(v.iter().map(|x| x.name()))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<Var>, D::Error> {
        let names = Vec::<String>::deserialize(d)?;
        names
            .iter()
            .map(|n| {
                var_from_name(n).ok_or_else(|| {
                    let known: Vec<&str> = Var::ALL.iter().map(|v| v.name()).collect();
                    D::Error::custom(format!("unknown terminal `{n}`; expected one of {}", known.join(", ")))
                })
            })
            .collect()
    }
}

mod fun_names {
    use super::{FUNS, Fun, fun_from_name, fun_name};
    use serde::{Deserialize, Deserializer, Serializer, de::Error};

    pub fn serialize<S: Serializer>(v: &[Fun], s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(v.iter().map(|x| fun_name(*x)))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<Fun>, D::Error> {
        let names = Vec::<String>::deserialize(d)?;
        names
            .iter()
            .map(|n| {
                fun_from_name(n).ok_or_else(|| {
                    let known: Vec<&str> = FUNS.iter().map(|f| fun_name(*f)).collect();
                    D::Error::custom(format!("unknown function `{n}`; expected one of {}", known.join(", ")))
                })
            })
            .collect()
    }
}

// ---------------------------------------------------------------------------------------------
// Trees

/// DEAP height: a lone terminal has height 0 (= `f.depth() - 1`).
pub fn height(f: &Formula) -> usize {
    f.depth() - 1
}

fn random_const(cfg: &GpConfig, rng: &mut Rng) -> f64 {
    let (lo, hi) = cfg.const_range;
    lo + (hi - lo) * rng.random::<f64>()
}

/// A variable of `cfg.terminals` or an ephemeral constant, each equally likely (DEAP counts
/// the ephemeral as one more terminal).
fn random_terminal(cfg: &GpConfig, rng: &mut Rng) -> Formula {
    let k = rng.random_range(0..=cfg.terminals.len());
    match cfg.terminals.get(k) {
        Some(v) => Formula::Var(*v),
        None => Formula::Const(random_const(cfg, rng)),
    }
}

/// DEAP's `generate`: below `min_h` always an operator; at `height` always a terminal; in
/// between, "full" takes an operator and "grow" a terminal with probability
/// terminals / (terminals + functions).
fn generate(cfg: &GpConfig, rng: &mut Rng, min_h: usize, height: usize, full: bool, depth: usize) -> Formula {
    let terminals = cfg.terminals.len() + 1;
    let ratio = terminals as f64 / (terminals + cfg.functions.len()) as f64;
    let leaf = depth >= height || (!full && depth >= min_h && rng.random::<f64>() < ratio);
    if leaf || cfg.functions.is_empty() {
        return random_terminal(cfg, rng);
    }
    let f = cfg.functions[rng.random_range(0..cfg.functions.len())];
    Formula::Call(f, (0..f.arity()).map(|_| generate(cfg, rng, min_h, height, full, depth + 1)).collect())
}

/// A random tree of height drawn uniformly in `min_h..=max_h` (DEAP heights): with `full`
/// every leaf is at that height (`genFull`), otherwise leaves may stop from `min_h` on
/// (`genGrow`). `max_h < min_h` is read as `max_h = min_h`.
pub fn random_tree(cfg: &GpConfig, rng: &mut Rng, min_h: usize, max_h: usize, full: bool) -> Formula {
    let h = rng.random_range(min_h..=max_h.max(min_h));
    generate(cfg, rng, min_h, h, full, 0)
}

/// The `k`-th tree of ramped half-and-half over the initial heights: full and grow alternate,
/// and the height limit cycles through `init_min_height..=init_max_height`.
fn ramped(cfg: &GpConfig, rng: &mut Rng, k: usize) -> Formula {
    let (lo, hi) = (cfg.init_min_height, cfg.init_max_height.max(cfg.init_min_height));
    let h = lo + (k / 2) % (hi - lo + 1);
    generate(cfg, rng, lo, h, k.is_multiple_of(2), 0)
}

/// `population` pairwise non-equivalent trees by ramped half-and-half. Errors if the config is
/// invalid or if 1000 tries per member did not find enough distinct trees.
pub fn initial_population(cfg: &GpConfig, rng: &mut Rng) -> Result<Vec<Formula>, String> {
    cfg.validate()?;
    let cap = 1000 * cfg.population;
    let mut dedup = Dedup::new();
    let mut out = Vec::with_capacity(cfg.population);
    let mut k = 0;
    while out.len() < cfg.population {
        if k >= cap {
            return Err(format!(
                "found only {} distinct formulas in {cap} tries, {} wanted: widen terminals, functions or heights",
                out.len(),
                cfg.population
            ));
        }
        let t = ramped(cfg, rng, k);
        k += 1;
        if dedup.insert(&t) {
            out.push(t);
        }
    }
    Ok(out)
}

/// The node at preorder index `idx` (0 = the root).
fn node_mut(f: &mut Formula, idx: usize) -> &mut Formula {
    if idx == 0 {
        return f;
    }
    let mut i = idx - 1;
    if let Formula::Call(_, args) = f {
        for a in args.iter_mut() {
            let s = a.size();
            if i < s {
                return node_mut(a, i);
            }
            i -= s;
        }
    }
    panic!("node index {idx} out of range")
}

fn consts_mut<'a>(f: &'a mut Formula, out: &mut Vec<&'a mut f64>) {
    match f {
        Formula::Const(c) => out.push(c),
        Formula::Var(_) => {}
        Formula::Call(_, args) => args.iter_mut().for_each(|a| consts_mut(a, out)),
    }
}

/// Changes one constant chosen uniformly: half the time replaced by a fresh ephemeral,
/// otherwise moved by up to ±10% of `const_range`'s width (±0.1 if the range is a point).
/// Returns whether a constant changed (false when the tree has none).
pub fn mutate_constant(f: &mut Formula, cfg: &GpConfig, rng: &mut Rng) -> bool {
    let mut cs = Vec::new();
    consts_mut(f, &mut cs);
    if cs.is_empty() {
        return false;
    }
    let k = rng.random_range(0..cs.len());
    let old = *cs[k];
    let (lo, hi) = cfg.const_range;
    let step = if hi > lo { 0.1 * (hi - lo) } else { 0.1 };
    for _ in 0..16 {
        let new = if rng.random_bool(0.5) { random_const(cfg, rng) } else { old + step * (2.0 * rng.random::<f64>() - 1.0) };
        if new != old && new.is_finite() {
            *cs[k] = new;
            return true;
        }
    }
    false
}

/// DEAP `mutUniform`: a node chosen uniformly (the root included) is replaced by a fresh
/// "full" tree of height 0..=`mutation_max_height`.
pub fn mutate_uniform(f: &mut Formula, cfg: &GpConfig, rng: &mut Rng) {
    let idx = rng.random_range(0..f.size());
    let sub = random_tree(cfg, rng, 0, cfg.mutation_max_height, true);
    *node_mut(f, idx) = sub;
}

/// DEAP `cxOnePoint`: swaps a uniformly chosen non-root subtree of each parent. Parents of a
/// single node come back unchanged. The children's sizes add up to the parents'.
pub fn crossover(a: &Formula, b: &Formula, rng: &mut Rng) -> (Formula, Formula) {
    let (mut x, mut y) = (a.clone(), b.clone());
    let (sa, sb) = (a.size(), b.size());
    if sa < 2 || sb < 2 {
        return (x, y);
    }
    let i = rng.random_range(1..sa);
    let j = rng.random_range(1..sb);
    std::mem::swap(node_mut(&mut x, i), node_mut(&mut y, j));
    (x, y)
}

// ---------------------------------------------------------------------------------------------
// Simplification

fn konst(v: f64) -> Formula {
    // -0 and +0 differ only through division by them, which is protected.
    Formula::Const(if v == 0.0 { 0.0 } else { v })
}

fn call2(f: Fun, a: Formula, b: Formula) -> Formula {
    Formula::Call(f, vec![a, b])
}

fn var_index(v: Var) -> usize {
    Var::ALL.iter().position(|x| *x == v).unwrap_or(0)
}

fn fun_index(f: Fun) -> usize {
    FUNS.iter().position(|x| *x == f).unwrap_or(0)
}

/// A total order on trees (constants < variables < calls), for canonical operand order.
fn cmp_formula(a: &Formula, b: &Formula) -> Ordering {
    match (a, b) {
        (Formula::Const(x), Formula::Const(y)) => x.total_cmp(y),
        (Formula::Const(_), _) => Ordering::Less,
        (_, Formula::Const(_)) => Ordering::Greater,
        (Formula::Var(x), Formula::Var(y)) => var_index(*x).cmp(&var_index(*y)),
        (Formula::Var(_), _) => Ordering::Less,
        (_, Formula::Var(_)) => Ordering::Greater,
        (Formula::Call(f, xs), Formula::Call(g, ys)) => fun_index(*f)
            .cmp(&fun_index(*g))
            .then_with(|| xs.iter().zip(ys).map(|(x, y)| cmp_formula(x, y)).find(|o| o.is_ne()).unwrap_or(Ordering::Equal))
            .then(xs.len().cmp(&ys.len())),
    }
}

/// A semantics-preserving simplifier, for display and canonical comparison. Bottom-up:
/// - constant subtrees fold with the protected semantics of [`apply`] (kept if the result is
///   not finite);
/// - `+` and `−` flatten into a sum of terms `c·t`; like terms merge (`x − x → 0`,
///   `x + x → 2 * x`), constants add up, `−1·(a + b)` distributes; terms are ordered
///   canonically, positive ones first, then `− …`, then the constant, so `x - 4` and
///   `-4 + x` give the same tree;
/// - `×` flattens, multiplies its constants into one leading coefficient (`x·1 → x`,
///   `x·0 → 0`) and orders its factors; `−1·(a + b)` becomes the negated sum;
/// - `x / x → 1`, `x / 1 → x`, `x / −1 → −x`, `x / c → 1` when |c| < 1e-12 (protected ÷);
/// - `sqrt(c·x) → sqrt(|c|·x)` for c < 0 (protected √ takes |x|);
/// - `max`/`min` of equal operands collapse, otherwise their operands are ordered.
///
/// Division is otherwise left alone: protected ÷ breaks `a / (b / c) = a·c / b` and moving
/// factors in or out of a quotient. Values change only by rounding where sums and products
/// are reassociated, and for the finite-only rules named in the module doc.
pub fn simplify(f: &Formula) -> Formula {
    match f {
        Formula::Const(c) => konst(*c),
        Formula::Var(_) => f.clone(),
        Formula::Call(op, args) => simplify_call(*op, args.iter().map(simplify).collect()),
    }
}

/// Simplifies a call whose arguments are already simplified.
fn simplify_call(op: Fun, args: Vec<Formula>) -> Formula {
    if let [Formula::Const(a), rest @ ..] = args.as_slice()
        && rest.iter().all(|x| matches!(x, Formula::Const(_)))
    {
        let b = match rest {
            [Formula::Const(b)] => *b,
            _ => 0.0,
        };
        let v = apply(op, *a, b);
        if v.is_finite() {
            return konst(v);
        }
        return Formula::Call(op, args);
    }
    match op {
        Fun::Add | Fun::Sub => sum(Formula::Call(op, args)),
        Fun::Mul => product(Formula::Call(op, args)),
        Fun::Div => {
            let mut it = args.into_iter();
            let (a, b) = (it.next().unwrap_or(konst(0.0)), it.next().unwrap_or(konst(1.0)));
            divide(a, b)
        }
        Fun::Sqrt => {
            if let [Formula::Call(Fun::Mul, m)] = args.as_slice()
                && let [Formula::Const(c), rest] = m.as_slice()
                && *c < 0.0
            {
                return Formula::Call(Fun::Sqrt, vec![product(call2(Fun::Mul, konst(-c), rest.clone()))]);
            }
            Formula::Call(op, args)
        }
        Fun::Max | Fun::Min => {
            let mut it = args.into_iter();
            let (mut a, mut b) = (it.next().unwrap_or(konst(0.0)), it.next().unwrap_or(konst(0.0)));
            match cmp_formula(&a, &b) {
                Ordering::Equal => a,
                o => {
                    if o == Ordering::Greater {
                        std::mem::swap(&mut a, &mut b);
                    }
                    call2(op, a, b)
                }
            }
        }
        Fun::Ln => Formula::Call(op, args),
    }
}

/// Terms `(coefficient, rest)` of a sum of simplified trees, and its constant.
fn collect_terms(f: &Formula, sign: f64, terms: &mut Vec<(f64, Formula)>, k: &mut f64) {
    match f {
        Formula::Const(c) => *k += sign * c,
        Formula::Call(Fun::Add, a) => {
            collect_terms(&a[0], sign, terms, k);
            collect_terms(&a[1], sign, terms, k);
        }
        Formula::Call(Fun::Sub, a) => {
            collect_terms(&a[0], sign, terms, k);
            collect_terms(&a[1], -sign, terms, k);
        }
        Formula::Call(Fun::Mul, a) => match (&a[0], &a[1]) {
            // −(a + b) = −a − b exactly: IEEE rounding is symmetric.
            (Formula::Const(c), rest @ Formula::Call(Fun::Add | Fun::Sub, _)) if *c == -1.0 => collect_terms(rest, -sign, terms, k),
            (Formula::Const(c), rest) => terms.push((sign * c, rest.clone())),
            _ => terms.push((sign, f.clone())),
        },
        _ => terms.push((sign, f.clone())),
    }
}

fn term(c: f64, t: Formula) -> Formula {
    if c == 1.0 { t } else { call2(Fun::Mul, konst(c), t) }
}

/// The canonical sum of an `Add`/`Sub` node with simplified children.
fn sum(node: Formula) -> Formula {
    let mut terms = Vec::new();
    let mut k = 0.0;
    collect_terms(&node, 1.0, &mut terms, &mut k);
    terms.sort_by(|a, b| cmp_formula(&a.1, &b.1));
    let mut merged: Vec<(f64, Formula)> = Vec::with_capacity(terms.len());
    for (c, t) in terms {
        if let Some(last) = merged.last_mut()
            && cmp_formula(&last.1, &t).is_eq()
        {
            last.0 += c;
        } else {
            merged.push((c, t));
        }
    }
    merged.retain(|(c, _)| *c != 0.0);
    if !k.is_finite() || merged.iter().any(|(c, _)| !c.is_finite()) {
        return node;
    }
    let (pos, neg): (Vec<_>, Vec<_>) = merged.into_iter().partition(|(c, _)| *c > 0.0);
    let mut acc: Option<Formula> = None;
    for (c, t) in pos {
        let t = term(c, t);
        acc = Some(match acc {
            None => t,
            Some(a) => call2(Fun::Add, a, t),
        });
    }
    let mut k_used = false;
    if acc.is_none() && k > 0.0 {
        acc = Some(konst(k));
        k_used = true;
    }
    for (c, t) in neg {
        acc = Some(match acc {
            None => term(c, t),
            Some(a) => call2(Fun::Sub, a, term(-c, t)),
        });
    }
    match acc {
        None => konst(k),
        Some(a) if k_used || k == 0.0 => a,
        Some(a) if k > 0.0 => call2(Fun::Add, a, konst(k)),
        Some(a) => call2(Fun::Sub, a, konst(-k)),
    }
}

fn collect_factors(f: &Formula, coef: &mut f64, out: &mut Vec<Formula>) {
    match f {
        Formula::Const(c) => *coef *= c,
        Formula::Call(Fun::Mul, a) => {
            collect_factors(&a[0], coef, out);
            collect_factors(&a[1], coef, out);
        }
        _ => out.push(f.clone()),
    }
}

/// The canonical product of a `Mul` node with simplified children: `c * (f1 * f2 * …)`.
fn product(node: Formula) -> Formula {
    let mut coef = 1.0;
    let mut fs = Vec::new();
    collect_factors(&node, &mut coef, &mut fs);
    if !coef.is_finite() {
        return node;
    }
    if coef == 0.0 || fs.is_empty() {
        return konst(coef);
    }
    fs.sort_by(cmp_formula);
    if coef == -1.0 && fs.len() == 1 && matches!(fs[0], Formula::Call(Fun::Add | Fun::Sub, _)) {
        return sum(call2(Fun::Sub, konst(0.0), fs.remove(0)));
    }
    let p = fs.into_iter().reduce(|a, b| call2(Fun::Mul, a, b)).unwrap_or(konst(1.0));
    term(coef, p)
}

fn divide(a: Formula, b: Formula) -> Formula {
    if let Formula::Const(c) = b {
        if c.abs() < 1e-12 {
            return konst(1.0);
        }
        if c == 1.0 {
            return a;
        }
        if c == -1.0 {
            return product(call2(Fun::Mul, konst(-1.0), a));
        }
    }
    if cmp_formula(&a, &b).is_eq() {
        return konst(1.0);
    }
    call2(Fun::Div, a, b)
}

fn round_constants(f: &Formula, digits: usize) -> Formula {
    match f {
        Formula::Const(c) if c.is_finite() && *c != 0.0 => {
            konst(format!("{:.*e}", digits.saturating_sub(1), c).parse::<f64>().unwrap_or(*c))
        }
        Formula::Call(op, args) => Formula::Call(*op, args.iter().map(|a| round_constants(a, digits)).collect()),
        _ => f.clone(),
    }
}

/// The simplified formula with constants rounded to 4 significant digits, for logs and
/// reports. Not for storage: `f.to_string()` is exact and parses back.
pub fn pretty(f: &Formula) -> String {
    round_constants(&simplify(f), 4).to_string()
}

// ---------------------------------------------------------------------------------------------
// Equivalence

/// Sample points per fingerprint.
pub const SAMPLES: usize = 40;

/// Relative tolerance of [`equivalent`].
pub const REL_TOL: f64 = 1e-9;

/// Node statistics typical of MCTS with rewards in [0, 1]: visits 1..=250, wins 0..=visits,
/// parent visits from the child's up to 250·40, moves 0..=40; mean = wins / visits, sumsq
/// between wins²/visits and wins, best between mean and 1 (0 without wins). Eight edge points
/// (no wins, one visit, a full parent, no moves), then 32 pseudo-random ones from a fixed
/// SplitMix64 sequence, so the points never change with the `rand` version.
fn sample_points() -> [Stats; SAMPLES] {
    fn stats(w: f64, v: f64, p: f64, m: f64, frac: f64) -> Stats {
        let mean = w / v;
        let sumsq = w * w / v + frac * (w - w * w / v);
        let best = if w > 0.0 { mean + frac * (1.0 - mean) } else { 0.0 };
        Stats { mean, wins: w, visits: v, parent: p, sumsq, best, moves: m }
    }
    let edges = [
        (0.0, 1.0, 1.0, 0.0),
        (1.0, 1.0, 1.0, 1.0),
        (0.0, 1.0, 10000.0, 40.0),
        (1.0, 1.0, 2.0, 5.0),
        (250.0, 250.0, 250.0, 10.0),
        (0.0, 250.0, 10000.0, 3.0),
        (3.0, 7.0, 20.0, 12.0),
        (125.0, 250.0, 5000.0, 40.0),
    ];
    let mut out = [Stats::default(); SAMPLES];
    for (i, (w, v, p, m)) in edges.into_iter().enumerate() {
        out[i] = stats(w, v, p, m, 0.5);
    }
    let mut s = 0x5EED_F00Du64;
    let mut next = move || {
        s = crate::rng::mix(s);
        s
    };
    for o in out.iter_mut().skip(edges.len()) {
        let v = 1 + next() % 250;
        let w = next() % (v + 1);
        let p = v + next() % (250 * 40 - v + 1);
        let m = next() % 41;
        let frac = (next() >> 11) as f64 / (1u64 << 53) as f64;
        *o = stats(w as f64, v as f64, p as f64, m as f64, frac);
    }
    out
}

static POINTS: LazyLock<[Stats; SAMPLES]> = LazyLock::new(sample_points);

/// The values of a formula's simplified form on the fixed sample points.
#[derive(Clone, Debug, PartialEq)]
pub struct Fingerprint(pub [f64; SAMPLES]);

impl Fingerprint {
    /// Every value agrees within [`REL_TOL`] (non-finite values must match exactly: NaN with
    /// NaN, +∞ with +∞).
    pub fn matches(&self, other: &Fingerprint) -> bool {
        self.0.iter().zip(&other.0).all(|(a, b)| same_value(*a, *b))
    }
}

fn same_value(a: f64, b: f64) -> bool {
    if a.is_finite() && b.is_finite() {
        a == b || (a - b).abs() <= REL_TOL * a.abs().max(b.abs())
    } else if a.is_nan() || b.is_nan() {
        a.is_nan() && b.is_nan()
    } else {
        a == b
    }
}

pub fn fingerprint(f: &Formula) -> Fingerprint {
    let c = simplify(f).compile();
    Fingerprint(std::array::from_fn(|i| c.eval(&POINTS[i])))
}

/// Whether two formulas agree (after [`simplify`]) on every sample point.
pub fn equivalent(a: &Formula, b: &Formula) -> bool {
    fingerprint(a).matches(&fingerprint(b))
}

/// A set of formulas up to equivalence; each insert compares against every member's cached
/// fingerprint (linear, which is cheap at population sizes).
#[derive(Clone, Debug, Default)]
pub struct Dedup {
    seen: Vec<Fingerprint>,
}

impl Dedup {
    pub fn new() -> Self {
        Dedup::default()
    }

    pub fn contains(&self, f: &Formula) -> bool {
        let fp = fingerprint(f);
        self.seen.iter().any(|s| s.matches(&fp))
    }

    /// Adds `f` unless an equivalent formula is already in; returns whether it was added.
    pub fn insert(&mut self, f: &Formula) -> bool {
        let fp = fingerprint(f);
        if self.seen.iter().any(|s| s.matches(&fp)) {
            return false;
        }
        self.seen.push(fp);
        true
    }

    pub fn len(&self) -> usize {
        self.seen.len()
    }

    pub fn is_empty(&self) -> bool {
        self.seen.is_empty()
    }
}

// ---------------------------------------------------------------------------------------------
// Generations

/// Where a member of a generation came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Origin {
    Initial,
    Elite,
    Mutant,
    Crossover,
    /// A new random tree, used when mutation or crossover could not fill their slots.
    Fresh,
}

/// Indices by fitness, best (highest) first; NaN last; ties in index order.
pub fn rank(fitness: &[f64]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..fitness.len()).collect();
    order.sort_by(|&i, &j| {
        let (a, b) = (fitness[i], fitness[j]);
        match (a.is_nan(), b.is_nan()) {
            (false, false) => b.total_cmp(&a),
            (x, y) => x.cmp(&y),
        }
        .then(i.cmp(&j))
    });
    order
}

/// Fills `out` up to `target` with new ramped half-and-half trees not equivalent to any member.
/// After 1000 tries per missing member it accepts duplicates, so it always ends.
fn fill_fresh(out: &mut Vec<(Formula, Origin)>, dedup: &mut Dedup, target: usize, cfg: &GpConfig, rng: &mut Rng) {
    let cap = 1000 * target.saturating_sub(out.len());
    let mut k = 0;
    while out.len() < target {
        let t = ramped(cfg, rng, k);
        k += 1;
        if k > cap || dedup.insert(&t) {
            out.push((t, Origin::Fresh));
        }
    }
}

/// One generation step (the paper's loop, A.4), `cfg.population` members:
/// 1. the `elites` best of `pop` by `fitness` (higher is better), unchanged — an elite
///    equivalent to a better one is skipped for the next in rank;
/// 2. `mutants` mutants: parents are taken in turn from a shuffled parent pool (reshuffled when
///    used up); each has, with probability `const_mutation_prob`, a constant mutated, then a
///    uniform subtree mutation; a child deeper than `max_height` or equivalent to a member is
///    discarded and another made (at most 100 tries per slot, then fresh trees);
/// 3. crossover: every unordered pair of the parent pool, shuffled; each pair gives two
///    children, each kept unless too deep or equivalent to a member, until the population is
///    full; if the pairs run out, fresh random trees fill the rest.
///
/// The parent pool is the top `parent_pool` fraction by fitness (all by default). Deterministic
/// for a given `rng` state.
///
/// # Panics
/// If `pop` is empty, `fitness.len() != pop.len()`, or `cfg` fails [`GpConfig::validate`].
pub fn next_generation(pop: &[Formula], fitness: &[f64], cfg: &GpConfig, rng: &mut Rng) -> Vec<(Formula, Origin)> {
    assert!(!pop.is_empty(), "next_generation of an empty population");
    assert_eq!(pop.len(), fitness.len(), "one fitness value per individual");
    if let Err(e) = cfg.validate() {
        panic!("invalid GP config: {e}");
    }
    let target = cfg.population;
    let order = rank(fitness);
    let mut dedup = Dedup::new();
    let mut out: Vec<(Formula, Origin)> = Vec::with_capacity(target);

    // 1. Elites.
    for &i in &order {
        if out.len() >= cfg.elites.min(target) {
            break;
        }
        if dedup.insert(&pop[i]) {
            out.push((pop[i].clone(), Origin::Elite));
        }
    }

    let k = ((cfg.parent_pool * pop.len() as f64).ceil() as usize).clamp(1, pop.len());
    let pool = &order[..k];

    // 2. Mutants.
    let want = (out.len() + cfg.mutants).min(target);
    let mut parents = pool.to_vec();
    let mut cursor = parents.len();
    let cap = 100 * cfg.mutants;
    let mut tries = 0;
    while out.len() < want && tries < cap {
        tries += 1;
        if cursor == parents.len() {
            parents.shuffle(rng);
            cursor = 0;
        }
        let mut child = pop[parents[cursor]].clone();
        cursor += 1;
        if rng.random::<f64>() < cfg.const_mutation_prob {
            mutate_constant(&mut child, cfg, rng);
        }
        mutate_uniform(&mut child, cfg, rng);
        if height(&child) <= cfg.max_height && dedup.insert(&child) {
            out.push((child, Origin::Mutant));
        }
    }
    fill_fresh(&mut out, &mut dedup, want, cfg, rng);

    // 3. Crossover.
    let mut pairs = Vec::with_capacity(k * (k - 1) / 2);
    for (a, &i) in pool.iter().enumerate() {
        for &j in &pool[a + 1..] {
            pairs.push((i, j));
        }
    }
    pairs.shuffle(rng);
    for (i, j) in pairs {
        if out.len() >= target {
            break;
        }
        let (x, y) = crossover(&pop[i], &pop[j], rng);
        for c in [x, y] {
            if out.len() < target && height(&c) <= cfg.max_height && dedup.insert(&c) {
                out.push((c, Origin::Crossover));
            }
        }
    }
    fill_fresh(&mut out, &mut dedup, target, cfg, rng);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    fn rng(seed: u64) -> Rng {
        Rng::seed_from_u64(seed)
    }

    fn x() -> Formula {
        Formula::Var(Var::Moves)
    }

    fn c(v: f64) -> Formula {
        Formula::Const(v)
    }

    fn p(text: &str) -> Formula {
        Formula::parse(text).unwrap_or_else(|e| panic!("{e}"))
    }

    /// A config with every variable and function, to exercise all simplifier rules.
    fn wide() -> GpConfig {
        GpConfig { terminals: Var::ALL.to_vec(), functions: FUNS.to_vec(), ..GpConfig::default() }
    }

    /// Random statistics, including fractional ones off the sample grid.
    fn random_stats(r: &mut Rng) -> Stats {
        let v = r.random_range(1..=250) as f64;
        let w = r.random_range(0..=v as u64) as f64;
        let mean = w / v;
        Stats {
            mean,
            wins: w,
            visits: v,
            parent: r.random_range(v as u64..=10000) as f64,
            sumsq: w * r.random::<f64>(),
            best: mean + (1.0 - mean) * r.random::<f64>(),
            moves: r.random_range(0..=40) as f64,
        }
    }

    #[test]
    fn default_config_is_the_papers_and_valid() {
        let cfg = GpConfig::default();
        assert_eq!((cfg.population, cfg.elites, cfg.mutants), (100, 10, 45));
        assert!(cfg.validate().is_ok());
        let text = toml::to_string(&cfg).unwrap();
        assert!(text.contains(r#"terminals = ["wins", "visits", "parent", "moves"]"#), "{text}");
        assert_eq!(toml::from_str::<GpConfig>(&text).unwrap(), cfg);
        let partial: GpConfig = toml::from_str("population = 20\nelites = 2\nmutants = 9\nfunctions = [\"+\", \"max\"]").unwrap();
        assert_eq!(partial.functions, vec![Fun::Add, Fun::Max]);
        assert_eq!(partial.terminals, cfg.terminals);
    }

    #[test]
    fn config_errors_name_the_key() {
        let e = toml::from_str::<GpConfig>("terminals = [\"wins\", \"score\"]").unwrap_err().to_string();
        assert!(e.contains("unknown terminal `score`"), "{e}");
        let e = toml::from_str::<GpConfig>("functions = [\"pow\"]").unwrap_err().to_string();
        assert!(e.contains("unknown function `pow`"), "{e}");
        assert!(toml::from_str::<GpConfig>("populaton = 3").is_err());
        let bad = |cfg: GpConfig, key: &str| {
            let e = cfg.validate().unwrap_err();
            assert!(e.contains(key), "{e}");
        };
        bad(GpConfig { elites: 60, ..GpConfig::default() }, "elites + mutants");
        bad(GpConfig { population: 1, elites: 0, mutants: 0, ..GpConfig::default() }, "population");
        bad(GpConfig { const_range: (3.0, 1.0), ..GpConfig::default() }, "const_range");
        bad(GpConfig { init_min_height: 7, ..GpConfig::default() }, "init_min_height");
        bad(GpConfig { terminals: vec![], ..GpConfig::default() }, "terminals");
        bad(GpConfig { functions: vec![], ..GpConfig::default() }, "functions");
        bad(GpConfig { parent_pool: 0.0, ..GpConfig::default() }, "parent_pool");
        bad(GpConfig { max_height: 40, ..GpConfig::default() }, "max_height");
    }

    #[test]
    fn random_trees_respect_full_and_grow_heights() {
        let cfg = GpConfig::default();
        let mut r = rng(1);
        for _ in 0..200 {
            let f = random_tree(&cfg, &mut r, 2, 4, true);
            assert!((2..=4).contains(&height(&f)), "{f}");
            let g = random_tree(&cfg, &mut r, 2, 4, false);
            assert!((2..=4).contains(&height(&g)), "{g}");
        }
        // Full trees of binary operators only have 2^h leaves.
        let bin = GpConfig { functions: vec![Fun::Add, Fun::Mul], ..cfg };
        let f = random_tree(&bin, &mut r, 3, 3, true);
        assert_eq!(f.size(), 15, "{f}");
    }

    #[test]
    fn initial_population_is_unique_and_within_heights() {
        let cfg = GpConfig::default();
        let pop = initial_population(&cfg, &mut rng(7)).unwrap();
        assert_eq!(pop.len(), cfg.population);
        for (i, a) in pop.iter().enumerate() {
            let h = height(a);
            assert!((cfg.init_min_height..=cfg.init_max_height).contains(&h), "height {h}: {a}");
            assert!((3..=7).contains(&a.depth()), "depth {} (= height + 1): {a}", a.depth());
            for b in &pop[..i] {
                assert!(!equivalent(a, b), "{a}  ≡  {b}");
            }
        }
        // Both ramps are used: some trees are full, some grown shorter than their ramp.
        assert!(pop.iter().any(|f| height(f) == 6));
        assert!(pop.iter().any(|f| height(f) == 2));
    }

    #[test]
    fn initial_population_errors_instead_of_looping() {
        // One variable, `sqrt` only and no room for constants: very few distinct trees.
        let cfg = GpConfig {
            population: 50,
            elites: 0,
            mutants: 0,
            terminals: vec![Var::Wins],
            functions: vec![Fun::Sqrt],
            const_range: (1.0, 1.0),
            init_min_height: 1,
            init_max_height: 1,
            ..GpConfig::default()
        };
        let e = initial_population(&cfg, &mut rng(1)).unwrap_err();
        assert!(e.contains("distinct formulas"), "{e}");
    }

    #[test]
    fn x_minus_4_and_minus_4_plus_x_are_one_formula() {
        let a = call2(Fun::Sub, x(), c(4.0));
        let b = call2(Fun::Add, c(-4.0), x());
        assert_eq!(simplify(&a), simplify(&b));
        assert_eq!(simplify(&a).to_string(), "moves - 4");
        assert!(equivalent(&a, &b));
        assert!(!equivalent(&a, &call2(Fun::Add, c(4.0), x())));
    }

    #[test]
    fn simplifier_rules() {
        let s = |t: &str| simplify(&p(t)).to_string();
        assert_eq!(s("wins * 0 + visits"), "visits");
        assert_eq!(s("(wins + 0) * 1 - 0"), "wins");
        assert_eq!(s("(wins - parent) / (wins - parent)"), "1");
        assert_eq!(s("wins / 1"), "wins");
        assert_eq!(s("wins / (visits - visits)"), "1");
        assert_eq!(s("wins - wins + moves"), "moves");
        assert_eq!(s("sqrt(16) + 2 * 3"), "10");
        assert_eq!(s("0 - (0 - wins)"), "wins");
        assert_eq!(s("(parent + 2) + (3 + visits)"), "visits + parent + 5");
        assert_eq!(s("visits * (2 * wins) * 3"), "6 * (wins * visits)");
        assert_eq!(s("wins + wins"), "2 * wins");
        assert_eq!(s("0 - wins - visits"), "(-1) * wins - visits");
        assert_eq!(s("sqrt(0 - wins)"), "sqrt(wins)");
        assert_eq!(s("max(visits, wins) - min(wins, wins)"), "max(wins, visits) - wins");
        assert_eq!(s("2 - (visits - 5)"), "7 - visits");
        assert_eq!(simplify(&p("wins * visits")), simplify(&p("visits * wins")));
    }

    /// The constants of `f` rounded to integers in −5..=5, so that 0, ±1 and negative
    /// coefficients (the special cases of the simplifier) are frequent.
    fn integer_constants(f: &Formula) -> Formula {
        match f {
            Formula::Const(c) => Formula::Const(c.round() - 5.0),
            Formula::Call(op, args) => Formula::Call(*op, args.iter().map(integer_constants).collect()),
            _ => f.clone(),
        }
    }

    #[test]
    fn simplify_preserves_values_on_random_trees() {
        let mut r = rng(11);
        let points: Vec<Stats> = (0..60).map(|_| random_stats(&mut r)).collect();
        let mut checked = 0;
        for (n, cfg) in [GpConfig::default(), wide(), GpConfig::default(), wide()].into_iter().enumerate() {
            for i in 0..400 {
                let f = random_tree(&cfg, &mut r, 1, 6, i % 2 == 0);
                let f = if n >= 2 { integer_constants(&f) } else { f };
                let s = simplify(&f);
                assert!(s.size() <= f.size() + 2, "{f}  →  {s}");
                for st in points.iter().chain(POINTS.iter()) {
                    let (a, b) = (f.eval(st), s.eval(st));
                    if !a.is_finite() {
                        continue; // the finite-only rules (x·0, x − x, x / x) may differ here
                    }
                    assert!(same_value(a, b), "{f}  →  {s}: {a} vs {b} at {st:?}");
                    checked += 1;
                }
            }
        }
        assert!(checked > 1000 * 60);
        // The rules for −1 and negative coefficients, by hand.
        for t in ["wins / (3 - 4)", "0 - (wins + visits)", "(1 - 2) * (wins - parent)", "sqrt(0 - 3 * wins)", "sqrt((2 - 5) * visits)"] {
            let f = p(t);
            for st in points.iter() {
                assert!(same_value(f.eval(st), simplify(&f).eval(st)), "{t}  →  {}", simplify(&f));
            }
        }
    }

    #[test]
    fn simplify_is_idempotent() {
        let mut r = rng(12);
        let cfg = wide();
        for i in 0..500 {
            let f = random_tree(&cfg, &mut r, 1, 5, i % 2 == 0);
            let s = simplify(&f);
            assert_eq!(simplify(&s), s, "{f}");
        }
    }

    #[test]
    fn printed_random_trees_parse_back_equivalent() {
        let mut r = rng(13);
        for cfg in [GpConfig::default(), wide()] {
            for i in 0..300 {
                let f = random_tree(&cfg, &mut r, 0, 6, i % 2 == 0);
                let back = Formula::parse(&f.to_string()).unwrap_or_else(|e| panic!("{e}"));
                assert_eq!(fingerprint(&back), fingerprint(&f), "{f}");
                let pretty = pretty(&f);
                Formula::parse(&pretty).unwrap_or_else(|e| panic!("{pretty}: {e}"));
            }
        }
    }

    #[test]
    fn pretty_rounds_constants() {
        assert_eq!(pretty(&p("wins + 3.14159265 - 0")), "wins + 3.142");
        assert_eq!(pretty(&p("wins * 12345.678")), "12350 * wins");
    }

    #[test]
    fn crossover_preserves_total_size() {
        let cfg = GpConfig::default();
        let mut r = rng(3);
        for _ in 0..300 {
            let a = random_tree(&cfg, &mut r, 0, 5, false);
            let b = random_tree(&cfg, &mut r, 0, 5, false);
            let (x, y) = crossover(&a, &b, &mut r);
            assert_eq!(x.size() + y.size(), a.size() + b.size(), "{a} × {b}");
            if a.size() == 1 || b.size() == 1 {
                assert_eq!((&x, &y), (&a, &b));
            }
        }
        // Swapped subtrees show up in both children.
        let (x, y) = crossover(&p("wins + visits"), &p("parent * moves"), &mut r);
        let text = format!("{x} {y}");
        for v in ["wins", "visits", "parent", "moves"] {
            assert!(text.contains(v), "{text}");
        }
        assert!(x.to_string().contains('+') && y.to_string().contains('*'), "root kept: {x} / {y}");
    }

    #[test]
    fn mutate_constant_changes_a_constant_when_there_is_one() {
        let cfg = GpConfig::default();
        let mut r = rng(5);
        for _ in 0..200 {
            let mut f = p("wins + 2.5 * sqrt(parent / 7)");
            let before = f.clone();
            assert!(mutate_constant(&mut f, &cfg, &mut r));
            assert_ne!(f, before);
            assert_eq!(f.size(), before.size());
        }
        let mut g = p("wins + visits");
        assert!(!mutate_constant(&mut g, &cfg, &mut r));
        assert_eq!(g, p("wins + visits"));
    }

    #[test]
    fn mutate_uniform_stays_within_its_height() {
        let cfg = GpConfig::default();
        let mut r = rng(6);
        let mut changed = 0;
        for _ in 0..300 {
            let f = random_tree(&cfg, &mut r, 2, 4, false);
            let mut g = f.clone();
            mutate_uniform(&mut g, &cfg, &mut r);
            assert!(height(&g) <= height(&f) + cfg.mutation_max_height, "{f} → {g}");
            changed += usize::from(g != f);
        }
        assert!(changed > 250);
    }

    #[test]
    fn rank_puts_nan_last_and_keeps_ties_in_order() {
        assert_eq!(rank(&[1.0, f64::NAN, 3.0, 1.0, f64::NEG_INFINITY]), vec![2, 0, 3, 4, 1]);
    }

    #[test]
    fn next_generation_keeps_elites_counts_and_uniqueness() {
        let cfg = GpConfig::default();
        let mut r = rng(21);
        let pop = initial_population(&cfg, &mut r).unwrap();
        // Fitness: a fixed score per formula, with NaNs that must never be elites.
        let fitness: Vec<f64> = pop
            .iter()
            .enumerate()
            .map(|(i, f)| if i % 17 == 3 { f64::NAN } else { fingerprint(f).0[9].abs().min(1e6) - i as f64 })
            .collect();
        let next = next_generation(&pop, &fitness, &cfg, &mut r);
        assert_eq!(next.len(), cfg.population);
        let count = |o: Origin| next.iter().filter(|(_, x)| *x == o).count();
        assert_eq!(count(Origin::Elite), 10);
        assert_eq!(count(Origin::Mutant), 45);
        assert_eq!(count(Origin::Crossover), 45);
        assert_eq!(count(Origin::Fresh), 0);
        let top = &rank(&fitness)[..cfg.elites];
        for (k, &i) in top.iter().enumerate() {
            assert_eq!(next[k], (pop[i].clone(), Origin::Elite), "elite {k}");
            assert!(!fitness[i].is_nan());
        }
        for (i, (a, _)) in next.iter().enumerate() {
            assert!(height(a) <= cfg.max_height, "{a}");
            for (b, _) in &next[..i] {
                assert!(!equivalent(a, b), "{a}  ≡  {b}");
            }
        }
    }

    #[test]
    fn next_generation_is_deterministic() {
        let cfg = GpConfig { population: 30, elites: 3, mutants: 13, ..GpConfig::default() };
        let run = |seed| {
            let mut r = rng(seed);
            let mut pop = initial_population(&cfg, &mut r).unwrap();
            let mut log = String::new();
            for _ in 0..3 {
                let fitness: Vec<f64> = pop.iter().map(|f| -(f.size() as f64)).collect();
                let next = next_generation(&pop, &fitness, &cfg, &mut r);
                for (f, o) in &next {
                    log += &format!("{o:?} {f}\n");
                }
                pop = next.into_iter().map(|(f, _)| f).collect();
            }
            log
        };
        assert_eq!(run(4), run(4));
        assert_ne!(run(4), run(5));
    }

    #[test]
    fn tiny_parent_pools_fall_back_to_fresh_trees() {
        // One parent: no crossover pairs at all.
        let cfg = GpConfig { population: 12, elites: 2, mutants: 4, parent_pool: 0.05, ..GpConfig::default() };
        let mut r = rng(8);
        let pop = initial_population(&cfg, &mut r).unwrap();
        let fitness: Vec<f64> = (0..pop.len()).map(|i| i as f64).collect();
        let next = next_generation(&pop, &fitness, &cfg, &mut r);
        assert_eq!(next.len(), 12);
        assert_eq!(next[0].0, pop[11]);
        assert_eq!(next.iter().filter(|(_, o)| *o == Origin::Fresh).count(), 6);
        assert_eq!(next.iter().filter(|(_, o)| *o == Origin::Crossover).count(), 0);
        for (i, (a, _)) in next.iter().enumerate() {
            for (b, _) in &next[..i] {
                assert!(!equivalent(a, b), "{a}  ≡  {b}");
            }
        }
    }

    #[test]
    fn fingerprint_points_are_mcts_like() {
        for s in POINTS.iter() {
            assert!(s.visits >= 1.0 && s.visits <= 250.0);
            assert!(s.wins >= 0.0 && s.wins <= s.visits);
            assert!(s.parent >= s.visits && s.parent <= 10000.0);
            assert!(s.moves >= 0.0 && s.moves <= 40.0);
        }
        // `wins / visits` and `mean` agree everywhere; `wins` and `sumsq` do not.
        assert!(equivalent(&p("wins / visits"), &p("mean")));
        assert!(!equivalent(&p("wins"), &p("sumsq")));
        assert!(equivalent(&p("wins / 0"), &p("1")));
    }
}
