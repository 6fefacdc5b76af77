//! CMA-MAE's soft archive (Fontaine & Nikolaidis 2023; pyribs's `GridArchive` with a
//! `learning_rate` below 1): per cell a threshold that starts at `threshold_min` and moves toward
//! the qualities that pass it, so that an emitter keeps being rewarded in a cell for a while
//! after it first fills it, rather than only for a new cell or a better elite (CMA-ME). A
//! generation is ranked by each candidate's improvement over its cell's threshold (infeasible
//! candidates last, by how far they are from feasible); the candidates that pass a cell's
//! threshold t move it, k of them with mean quality f̄, to (1 − α)ᵏ t + (1 − (1 − α)ᵏ) f̄
//! (pyribs 0.12's batch rule). The map written out is the result map, as for CMA-ME.

use super::archive::Archive;
use super::quality::Eval;
use std::collections::BTreeMap;

/// The improvement of each candidate over its cell's threshold (feasible ones: `(true, f − t)`;
/// infeasible: `(false, −violation)`), as the ranking reads it.
pub fn improvements(map: &Archive, thresholds: &BTreeMap<usize, f64>, threshold_min: f64, evals: &[Eval]) -> Vec<(bool, f64)> {
    evals
        .iter()
        .map(|e| {
            if e.feasible {
                let t = thresholds.get(&cell(map, e)).copied().unwrap_or(threshold_min);
                (true, e.f - t)
            } else {
                (false, -e.violation)
            }
        })
        .collect()
}

fn cell(map: &Archive, e: &Eval) -> usize {
    map.cell(&e.descriptors.iter().map(|d| d.mean).collect::<Vec<_>>())
}

/// Moves the thresholds by the feasible candidates that passed them; returns how many passed.
pub fn update(map: &Archive, thresholds: &mut BTreeMap<usize, f64>, threshold_min: f64, alpha: f64, evals: &[Eval]) -> usize {
    let mut passed: BTreeMap<usize, Vec<f64>> = BTreeMap::new();
    for e in evals.iter().filter(|e| e.feasible) {
        let c = cell(map, e);
        if e.f > thresholds.get(&c).copied().unwrap_or(threshold_min) {
            passed.entry(c).or_default().push(e.f);
        }
    }
    let mut n = 0;
    for (c, fs) in passed {
        let t = thresholds.get(&c).copied().unwrap_or(threshold_min);
        let keep = (1.0 - alpha).powi(fs.len() as i32);
        let mean = fs.iter().sum::<f64>() / fs.len() as f64;
        thresholds.insert(c, keep * t + (1.0 - keep) * mean);
        n += fs.len();
    }
    n
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::generate::config::DescriptorConfig;
    use crate::generate::expr::Estimate;

    fn ev(f: f64, d: f64) -> Eval {
        Eval { f, feasible: true, descriptors: vec![Estimate { mean: d, se: 0.0 }], ..Eval::default() }
    }

    #[test]
    fn thresholds_follow_what_passes_them_at_the_learning_rate() {
        let map = Archive::new(&[DescriptorConfig { expr: "x".into(), min: 0.0, max: 1.0, bins: 2 }]);
        let mut t = BTreeMap::new();
        let evals = [ev(0.5, 0.1), ev(0.7, 0.2), ev(0.9, 0.8), ev(0.0, 0.9)];
        let imp = improvements(&map, &t, 0.0, &evals);
        assert_eq!(imp, vec![(true, 0.5), (true, 0.7), (true, 0.9), (true, 0.0)]);
        // Cell 0: two pass 0 with mean 0.6; cell 1: one passes with 0.9 (0.0 does not pass 0).
        assert_eq!(update(&map, &mut t, 0.0, 0.1, &evals), 3);
        assert!((t[&0] - (1.0 - 0.81) * 0.6).abs() < 1e-12 && (t[&1] - 0.1 * 0.9).abs() < 1e-12, "{t:?}");
        // A learning rate of 1 is CMA-ME's hard threshold: the cell's best.
        let mut hard = BTreeMap::new();
        update(&map, &mut hard, 0.0, 1.0, &evals);
        assert!((hard[&1] - 0.9).abs() < 1e-12);
        let mut bad = ev(0.3, 0.1);
        bad.feasible = false;
        bad.violation = 2.0;
        assert_eq!(improvements(&map, &t, 0.0, &[bad]), vec![(false, -2.0)]);
    }
}
