//! Equivalence by numeric fingerprint: a simplified tree evaluated on [`SAMPLES`] fixed node
//! statistics, two trees equal when every value agrees within [`REL_TOL`], and the [`Dedup`] set a
//! generation is filled through.

use super::*;

/// Sample points per fingerprint.
pub const SAMPLES: usize = 40;

/// Relative tolerance of [`equivalent`].
pub const REL_TOL: f64 = 1e-9;

/// Node statistics typical of MCTS with rewards in [0, 1]: visits 1..=250, wins 0..=visits,
/// parent visits from the child's up to 250·40, moves 0..=40; mean = wins / visits, sumsq
/// between wins²/visits and wins, best between mean and 1 (0 without wins). Eight edge points
/// (no wins, one visit, a full parent, no moves), then 32 pseudo-random ones from a fixed
/// SplitMix64 sequence, so the points never change with the `rand` version.
pub(super) fn sample_points() -> [Stats; SAMPLES] {
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

pub(super) static POINTS: LazyLock<[Stats; SAMPLES]> = LazyLock::new(sample_points);

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

pub(super) fn same_value(a: f64, b: f64) -> bool {
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
