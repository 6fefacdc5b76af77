//! Summary statistics and significance tests: mean, standard deviation, the 95% confidence
//! interval of a mean (Student's t), and Welch's unequal-variance t-test (statrs' t CDF).

use statrs::distribution::{ContinuousCDF, StudentsT};

#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct Summary {
    pub n: usize,
    pub mean: f64,
    pub sd: f64,
    /// Half-width of the 95% confidence interval of the mean.
    pub ci95: f64,
}

pub fn summary(xs: &[f64]) -> Summary {
    let n = xs.len();
    if n == 0 {
        return Summary { n, mean: f64::NAN, sd: f64::NAN, ci95: f64::NAN };
    }
    let mean = xs.iter().sum::<f64>() / n as f64;
    if n == 1 {
        return Summary { n, mean, sd: 0.0, ci95: 0.0 };
    }
    let var = xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
    let sd = var.sqrt();
    let t = StudentsT::new(0.0, 1.0, (n - 1) as f64).expect("n > 1").inverse_cdf(0.975);
    Summary { n, mean, sd, ci95: t * sd / (n as f64).sqrt() }
}

#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct Welch {
    pub t: f64,
    pub df: f64,
    /// Two-sided p-value.
    pub p_two_sided: f64,
    /// One-sided p-value for "a's mean > b's mean".
    pub p_greater: f64,
}

/// Welch's t-test of a against b.
pub fn welch(a: &[f64], b: &[f64]) -> Option<Welch> {
    let (sa, sb) = (summary(a), summary(b));
    if sa.n < 2 || sb.n < 2 {
        return None;
    }
    let (va, vb) = (sa.sd.powi(2) / sa.n as f64, sb.sd.powi(2) / sb.n as f64);
    let se = (va + vb).sqrt();
    if se == 0.0 {
        let equal = sa.mean == sb.mean;
        let p = if equal { 1.0 } else { 0.0 };
        return Some(Welch {
            t: if equal { 0.0 } else { f64::INFINITY.copysign(sa.mean - sb.mean) },
            df: f64::INFINITY,
            p_two_sided: p,
            p_greater: if sa.mean > sb.mean { 0.0 } else { 1.0 },
        });
    }
    let t = (sa.mean - sb.mean) / se;
    let df = (va + vb).powi(2) / (va.powi(2) / (sa.n - 1) as f64 + vb.powi(2) / (sb.n - 1) as f64);
    let dist = StudentsT::new(0.0, 1.0, df).ok()?;
    Some(Welch { t, df, p_two_sided: 2.0 * (1.0 - dist.cdf(t.abs())), p_greater: 1.0 - dist.cdf(t) })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summary_of_known_sample() {
        let s = summary(&[2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0]);
        assert!((s.mean - 5.0).abs() < 1e-12);
        assert!((s.sd - 2.138089935).abs() < 1e-6);
        // t(0.975, 7) = 2.364624
        assert!((s.ci95 - 2.364624 * 2.138089935 / 8f64.sqrt()).abs() < 1e-4);
    }

    #[test]
    fn welch_matches_a_reference_computation() {
        // Reference: scipy.stats.ttest_ind(a, b, equal_var=False) → t = -2.07401, p = 0.06428, df = 10.2092.
        let a = [19.8, 20.4, 19.6, 17.8, 18.5, 18.9, 18.3, 18.9, 19.5, 22.0];
        let b = [28.2, 26.6, 20.1, 23.3, 25.2, 22.1, 17.7, 27.6, 20.6, 13.7];
        let w = welch(&a, &b).unwrap();
        assert!((w.t + 2.07401).abs() < 1e-4, "{w:?}");
        assert!((w.df - 10.2092).abs() < 1e-3, "{w:?}");
        assert!((w.p_two_sided - 0.06428).abs() < 1e-4, "{w:?}");
        assert!(w.p_greater > 0.96);
    }
}
