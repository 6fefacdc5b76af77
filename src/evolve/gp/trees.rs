//! Random trees and variation: terminals and constants, full / grow / ramped half-and-half
//! generation, the initial population, uniform subtree mutation, constant mutation and one-point
//! subtree crossover, all bounded by [`HEIGHT_LIMIT`].

use super::*;

/// DEAP height: a lone terminal has height 0 (= `f.depth() - 1`).
pub fn height(f: &Formula) -> usize {
    f.depth() - 1
}

pub(super) fn random_const(cfg: &GpConfig, rng: &mut Rng) -> f64 {
    let (lo, hi) = cfg.const_range;
    lo + (hi - lo) * rng.random::<f64>()
}

/// A variable of `cfg.terminals` or an ephemeral constant, each equally likely (DEAP counts
/// the ephemeral as one more terminal).
pub(super) fn random_terminal(cfg: &GpConfig, rng: &mut Rng) -> Formula {
    let k = rng.random_range(0..=cfg.terminals.len());
    match cfg.terminals.get(k) {
        Some(v) => Formula::Var(*v),
        None => Formula::Const(random_const(cfg, rng)),
    }
}

/// DEAP's `generate`: below `min_h` always an operator; at `height` always a terminal; in
/// between, "full" takes an operator and "grow" a terminal with probability
/// terminals / (terminals + functions).
pub(super) fn generate(cfg: &GpConfig, rng: &mut Rng, min_h: usize, height: usize, full: bool, depth: usize) -> Formula {
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
pub(super) fn ramped(cfg: &GpConfig, rng: &mut Rng, k: usize) -> Formula {
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
pub(super) fn node_mut(f: &mut Formula, idx: usize) -> &mut Formula {
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

pub(super) fn consts_mut<'a>(f: &'a mut Formula, out: &mut Vec<&'a mut f64>) {
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
