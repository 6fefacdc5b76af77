//! Separable CMA-ES (Ros & Hansen 2008: diagonal covariance, rank-μ and rank-one updates,
//! cumulative step-size adaptation) as plain data with two steps, for every caller that searches
//! genes in [0, 1]: [`SepCma::sample`] draws one point around the mean (clamped to the unit
//! box) from the caller's stream, and [`SepCma::tell`] moves the distribution to the caller's
//! ranking of a generation. The caller decides what a point is worth and in which order: the
//! balance optimizer ranks by F, a CMA-ME emitter by what a point adds to an archive. No I/O, no
//! games; the state is serde, so a checkpoint restores it exactly.

use crate::rng::Rng;
use rand_distr::{Distribution, StandardNormal};
use serde::{Deserialize, Serialize};

/// The most samples per generation a state may ask for: the configs' own bound on `lambda`
/// (100 000). A checkpoint past it is refused before anything of that size is allocated.
pub const MAX_LAMBDA: usize = 100_000;

/// Separable CMA-ES state over points of the unit box.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct SepCma {
    pub mean: Option<Vec<f64>>,
    pub sigma: f64,
    pub sigma0: f64,
    pub diag: Vec<f64>,
    pub ps: Vec<f64>,
    pub pc: Vec<f64>,
    pub lambda: usize,
    pub generation: u64,
}

impl SepCma {
    /// A fresh state in `n` dimensions (λ defaults to 4 + ⌊3 ln n⌋); no mean until
    /// [`SepCma::restart`].
    pub fn new(n: usize, lambda: Option<usize>, sigma0: f64) -> SepCma {
        let lambda = lambda.unwrap_or(4 + (3.0 * (n as f64).ln()).floor() as usize);
        SepCma { mean: None, sigma: sigma0, sigma0, diag: vec![1.0; n], ps: vec![0.0; n], pc: vec![0.0; n], lambda, generation: 0 }
    }

    /// Checks a state read back (a checkpoint) against the state the config makes,
    /// `expected` (a fresh [`SepCma::new`]: its dimension, λ and initial step), so that nothing
    /// inconsistent reaches [`SepCma::sample`] or [`SepCma::tell`] (which index every vector by
    /// the dimension and allocate λ samples). `generations` bounds the generation count (the
    /// iterations run so far). The message names the field and what was expected.
    pub fn validate(&self, expected: &SepCma, generations: u64) -> Result<(), String> {
        let n = expected.diag.len();
        if self.lambda != expected.lambda || !(2..=MAX_LAMBDA).contains(&self.lambda) {
            return Err(format!("lambda = {}; expected {} (the config's samples per generation)", self.lambda, expected.lambda));
        }
        if self.sigma0.to_bits() != expected.sigma0.to_bits() {
            return Err(format!("sigma0 = {}; expected {} (the config's)", self.sigma0, expected.sigma0));
        }
        let most = expected.sigma0.max(1.0);
        if !(self.sigma.is_finite() && self.sigma > 0.0 && self.sigma <= most) {
            return Err(format!("sigma = {}; expected a step size in (0, {most}]", self.sigma));
        }
        if self.generation > generations {
            return Err(format!("generation = {}; expected at most {generations} (the iterations run)", self.generation));
        }
        let vectors: [(&str, &[f64], bool); 3] = [("diag", &self.diag, true), ("ps", &self.ps, false), ("pc", &self.pc, false)];
        for (name, v, positive) in vectors {
            if v.len() != n {
                return Err(format!("{name} has {} values; expected {n} (one per gene)", v.len()));
            }
            if let Some((j, x)) = v.iter().enumerate().find(|(_, x)| !x.is_finite() || (positive && **x <= 0.0)) {
                let what = if positive { "a finite variance > 0" } else { "a finite number" };
                return Err(format!("{name}[{j}] = {x}; expected {what}"));
            }
        }
        if let Some(m) = &self.mean {
            // The mean is a weighted sum of clamped samples whose weights add up to 1 within a
            // rounding error (1.0000000000000002 for λ = 10): a run's own mean may pass 1 by that.
            check_box("mean", m, n, 1e-9)?;
        }
        Ok(())
    }

    /// Starts over at `m` with the initial step size and an identity covariance.
    pub fn restart(&mut self, m: Vec<f64>) {
        let n = m.len();
        *self = SepCma { mean: Some(m), ..SepCma::new(n, Some(self.lambda), self.sigma0) };
    }

    /// Parents per generation (μ = ⌊λ / 2⌋).
    pub fn mu(&self) -> usize {
        self.lambda / 2
    }

    /// One point around the mean, each coordinate clamped to [0, 1].
    pub fn sample(&self, rng: &mut Rng) -> Vec<f64> {
        let m = self.mean.as_ref().expect("sample after restart");
        (0..m.len())
            .map(|j| {
                let z: f64 = StandardNormal.sample(rng);
                (m[j] + self.sigma * self.diag[j].sqrt() * z).clamp(0.0, 1.0)
            })
            .collect()
    }

    /// Moves the distribution to a generation's best points, best first (at least μ of them;
    /// more are ignored). The step size is capped at 1, the box's width.
    pub fn tell(&mut self, ranked: &[&[f64]]) {
        let m = self.mean.clone().expect("tell after restart");
        let n = m.len();
        let lambda = self.lambda;
        let mu = lambda / 2;
        assert!(ranked.len() >= mu, "tell needs the μ = {mu} best points, got {}", ranked.len());
        let raw: Vec<f64> = (0..mu).map(|i| ((lambda as f64 + 1.0) / 2.0).ln() - ((i + 1) as f64).ln()).collect();
        let wsum: f64 = raw.iter().sum();
        let w: Vec<f64> = raw.iter().map(|x| x / wsum).collect();
        let mueff = 1.0 / w.iter().map(|x| x * x).sum::<f64>();
        let nf = n as f64;
        let cs = (mueff + 2.0) / (nf + mueff + 5.0);
        let ds = 1.0 + 2.0 * (((mueff - 1.0) / (nf + 1.0)).sqrt() - 1.0).max(0.0) + cs;
        let cc = (4.0 + mueff / nf) / (nf + 4.0 + 2.0 * mueff / nf);
        let sep = (nf + 2.0) / 3.0;
        let c1 = (2.0 / ((nf + 1.3).powi(2) + mueff) * sep).min(1.0);
        let cmu = ((2.0 * (mueff - 2.0 + 1.0 / mueff) / ((nf + 2.0).powi(2) + mueff)) * sep).min(1.0 - c1);
        let chi = nf.sqrt() * (1.0 - 1.0 / (4.0 * nf) + 1.0 / (21.0 * nf * nf));
        let mut new_mean = vec![0.0; n];
        for (k, x) in ranked.iter().take(mu).enumerate() {
            for (m_j, x_j) in new_mean.iter_mut().zip(x.iter()) {
                *m_j += w[k] * x_j;
            }
        }
        let mut norm2 = 0.0;
        for j in 0..n {
            let step = (new_mean[j] - m[j]) / self.sigma;
            self.ps[j] = (1.0 - cs) * self.ps[j] + (cs * (2.0 - cs) * mueff).sqrt() * step / self.diag[j].sqrt();
            norm2 += self.ps[j] * self.ps[j];
        }
        let gen1 = (self.generation + 1) as f64;
        let hsig = norm2.sqrt() / (1.0 - (1.0 - cs).powf(2.0 * gen1)).sqrt() / chi < 1.4 + 2.0 / (nf + 1.0);
        for j in 0..n {
            let step = (new_mean[j] - m[j]) / self.sigma;
            self.pc[j] = (1.0 - cc) * self.pc[j] + if hsig { (cc * (2.0 - cc) * mueff).sqrt() * step } else { 0.0 };
            let rank_mu: f64 = ranked.iter().take(mu).enumerate().map(|(k, x)| w[k] * ((x[j] - m[j]) / self.sigma).powi(2)).sum();
            let corr = if hsig { 0.0 } else { c1 * cc * (2.0 - cc) * self.diag[j] };
            self.diag[j] = ((1.0 - c1 - cmu) * self.diag[j] + c1 * (self.pc[j] * self.pc[j] + corr) + cmu * rank_mu).max(1e-12);
        }
        self.sigma = (self.sigma * ((cs / ds) * (norm2.sqrt() / chi - 1.0)).exp()).min(1.0);
        self.mean = Some(new_mean);
        self.generation += 1;
    }
}

/// Checks that `x` is a point of the unit box in `n` dimensions (a checkpoint's genes);
/// `what` names it in the message.
pub fn check_unit(what: &str, x: &[f64], n: usize) -> Result<(), String> {
    check_box(what, x, n, 0.0)
}

/// As [`check_unit`], with `slack` allowed past either end of [0, 1].
fn check_box(what: &str, x: &[f64], n: usize, slack: f64) -> Result<(), String> {
    if x.len() != n {
        return Err(format!("{what} has {} values; expected {n} (one per gene)", x.len()));
    }
    match x.iter().enumerate().find(|(_, v)| !(-slack..=1.0 + slack).contains(*v)) {
        Some((j, v)) => Err(format!("{what}[{j}] = {v}; expected a gene in [0, 1]")),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::stream;

    /// A run's own state always validates: with every sample on the box's edge the mean is a
    /// weighted sum of ones, which rounds past 1 for some λ (1.0000000000000002 for λ = 10).
    #[test]
    fn a_mean_on_the_edge_validates() {
        for n in [4, 10, 16, 40] {
            let fresh = SepCma::new(n, None, 0.3);
            let mut c = fresh.clone();
            c.restart(vec![1.0; n]);
            let ones = vec![1.0; n];
            let ranked: Vec<&[f64]> = (0..c.lambda).map(|_| ones.as_slice()).collect();
            c.tell(&ranked);
            assert_eq!(c.validate(&fresh, 1), Ok(()), "n = {n}, λ = {}, mean {:?}", c.lambda, c.mean);
        }
    }

    /// On a smooth bowl inside the box the mean walks to the optimum and the step shrinks.
    #[test]
    fn sep_cma_finds_the_centre_of_a_bowl() {
        let target = [0.3, 0.7, 0.5, 0.2];
        let mut c = SepCma::new(4, None, 0.3);
        c.restart(vec![0.9, 0.1, 0.9, 0.9]);
        for g in 0..200 {
            let mut rng = stream(1, g, 0, 0);
            let mut xs: Vec<Vec<f64>> = (0..c.lambda).map(|_| c.sample(&mut rng)).collect();
            let loss = |x: &Vec<f64>| x.iter().zip(&target).map(|(a, b)| (a - b) * (a - b)).sum::<f64>();
            xs.sort_by(|a, b| loss(a).total_cmp(&loss(b)));
            let ranked: Vec<&[f64]> = xs.iter().map(Vec::as_slice).collect();
            c.tell(&ranked);
        }
        let m = c.mean.clone().unwrap();
        for (a, b) in m.iter().zip(&target) {
            assert!((a - b).abs() < 1e-3, "mean {m:?}");
        }
        assert!(c.sigma < 0.01, "sigma {}", c.sigma);
    }
}
