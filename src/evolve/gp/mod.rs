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

mod equivalence;
mod simplify;
mod trees;

pub use equivalence::*;
pub use simplify::*;
pub use trees::*;

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

/// The largest `max_height` accepted (DEAP's recommended static limit). A tree of height h is
/// h + 1 deep, below [`crate::search::formula::MAX_DEPTH`], so every tree GP writes parses back.
pub const HEIGHT_LIMIT: usize = 17;
const _: () = assert!(HEIGHT_LIMIT < crate::search::formula::MAX_DEPTH, "GP's trees must stay below the parse limit");
const _: () =
    assert!((1 << (HEIGHT_LIMIT + 1)) - 1 <= crate::search::formula::MAX_NODES, "GP's trees must stay within the parse's term limit");

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
mod tests;
