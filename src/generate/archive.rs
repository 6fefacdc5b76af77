//! The map of a quality-diversity run (MAP-Elites' archive, as pyribs's `GridArchive`): one or
//! two behaviour descriptors, each cut into equal bins between its bounds (values outside fall
//! into the edge bins), and per cell the confirmed elite — the feasible candidate of the highest
//! confirmed quality whose confirmed descriptors fall in it. QD-score is the sum of the elites'
//! qualities (F ≥ 0, so no offset is needed), coverage the share of cells filled.

use super::config::DescriptorConfig;
use super::quality::{Eval, Pool};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// A cell's elite: its search vector, its confirmed evaluation, when it came in; with a
/// sequential confirmation, the games its evaluation pools.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Elite {
    pub x: Vec<f64>,
    pub eval: Eval,
    pub iteration: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pool: Option<Pool>,
}

/// What a candidate would do to the archive (CMA-ME's improvement ranking reads it).
#[derive(Clone, Copy, Debug, PartialEq, PartialOrd)]
pub enum Status {
    Infeasible,
    NotAdded,
    Improves,
    New,
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Archive {
    /// (min, max, bins) of each descriptor.
    pub dims: Vec<(f64, f64, usize)>,
    /// Elites by cell index (the first descriptor's bin varies fastest).
    pub cells: BTreeMap<usize, Elite>,
}

impl Archive {
    pub fn new(descriptors: &[DescriptorConfig]) -> Archive {
        Archive { dims: descriptors.iter().map(|d| (d.min, d.max, d.bins)).collect(), cells: BTreeMap::new() }
    }

    pub fn n_cells(&self) -> usize {
        self.dims.iter().map(|d| d.2).product()
    }

    /// The bin of each descriptor value.
    pub fn bins(&self, desc: &[f64]) -> Vec<usize> {
        self.dims
            .iter()
            .zip(desc)
            .map(|(&(lo, hi, n), &v)| {
                let b = ((v - lo) / (hi - lo) * n as f64).floor();
                if b.is_nan() { 0 } else { b.clamp(0.0, (n - 1) as f64) as usize }
            })
            .collect()
    }

    /// The cell of descriptor values.
    pub fn cell(&self, desc: &[f64]) -> usize {
        let mut idx = 0;
        let mut stride = 1;
        for (b, d) in self.bins(desc).iter().zip(&self.dims) {
            idx += b * stride;
            stride *= d.2;
        }
        idx
    }

    /// The bins of a cell index.
    pub fn cell_bins(&self, mut cell: usize) -> Vec<usize> {
        self.dims
            .iter()
            .map(|d| {
                let b = cell % d.2;
                cell /= d.2;
                b
            })
            .collect()
    }

    fn desc(e: &Eval) -> Vec<f64> {
        e.descriptors.iter().map(|d| d.mean).collect()
    }

    /// What `e` would do, and by how much (new: F; improves: the gain; else the shortfall).
    pub fn status(&self, e: &Eval) -> (Status, f64) {
        if !e.feasible {
            return (Status::Infeasible, e.f);
        }
        match self.cells.get(&self.cell(&Self::desc(e))) {
            None => (Status::New, e.f),
            Some(el) if e.f > el.eval.f => (Status::Improves, e.f - el.eval.f),
            Some(el) => (Status::NotAdded, e.f - el.eval.f),
        }
    }

    /// Adds a confirmed candidate where it belongs if it is feasible and beats the cell's elite;
    /// says whether it did.
    pub fn insert(&mut self, x: &[f64], e: &Eval, iteration: u64) -> bool {
        self.place(Elite { x: x.to_vec(), eval: e.clone(), iteration, pool: None })
    }

    /// [`Archive::insert`] of an elite as it is (its pool kept).
    pub fn place(&mut self, elite: Elite) -> bool {
        match self.status(&elite.eval).0 {
            Status::New | Status::Improves => {
                let c = self.cell(&Self::desc(&elite.eval));
                self.cells.insert(c, elite);
                true
            }
            _ => false,
        }
    }

    /// The elite of the cell `e`'s descriptors fall in.
    pub fn incumbent(&self, e: &Eval) -> Option<&Elite> {
        self.cells.get(&self.cell(&Self::desc(e)))
    }

    pub fn qd_score(&self) -> f64 {
        self.cells.values().map(|e| e.eval.f).fold(0.0, |a, f| a + f)
    }

    pub fn coverage(&self) -> f64 {
        self.cells.len() as f64 / self.n_cells() as f64
    }

    pub fn best(&self) -> Option<&Elite> {
        self.cells.values().max_by(|a, b| a.eval.f.total_cmp(&b.eval.f))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::generate::expr::Estimate;

    fn ev(f: f64, d: [f64; 2], feasible: bool) -> Eval {
        Eval { f, feasible, descriptors: d.iter().map(|&m| Estimate { mean: m, se: 0.0 }).collect(), ..Eval::default() }
    }

    #[test]
    fn cells_bins_and_elites() {
        let d = |min, max, bins| DescriptorConfig { expr: "x".into(), min, max, bins };
        let mut a = Archive::new(&[d(0.0, 10.0, 5), d(0.0, 1.0, 4)]);
        assert_eq!(a.n_cells(), 20);
        assert_eq!(a.bins(&[-3.0, 2.0]), vec![0, 3]);
        assert_eq!(a.cell(&[9.99, 0.5]), 4 + 5 * 2);
        assert_eq!(a.cell_bins(14), vec![4, 2]);
        assert!(a.insert(&[0.1], &ev(0.5, [1.0, 0.1], true), 0));
        assert_eq!(a.status(&ev(0.4, [1.5, 0.2], true)).0, Status::NotAdded);
        assert_eq!(a.status(&ev(0.7, [1.5, 0.2], true)), (Status::Improves, 0.7 - 0.5));
        assert!(!a.insert(&[0.2], &ev(0.9, [1.5, 0.2], false), 1));
        assert!(a.insert(&[0.3], &ev(0.7, [1.5, 0.2], true), 1));
        assert!(a.insert(&[0.4], &ev(0.2, [7.0, 0.9], true), 2));
        assert!((a.qd_score() - 0.9).abs() < 1e-12);
        assert!((a.coverage() - 0.1).abs() < 1e-12);
        assert_eq!(a.best().unwrap().x, vec![0.3]);
    }
}
