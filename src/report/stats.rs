//! Summary statistics and significance tests: mean, standard deviation, the 95% confidence
//! interval of a mean (Student's t), Welch's unequal-variance t-test (statrs' t CDF), and the
//! Mann-Whitney U test (Monster Carlo's test between play styles and variants). They sit with the
//! reports, at the bottom layer, because charts and every run driver use them.

use statrs::distribution::{ContinuousCDF, Normal, StudentsT};

#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct Summary {
    pub n: usize,
    pub mean: f64,
    pub sd: f64,
    /// Half-width of the 95% confidence interval of the mean.
    pub ci95: f64,
}

/// Wilson score interval for k successes in n trials (95%).
pub fn wilson(k: u64, n: u64) -> (f64, f64) {
    if n == 0 {
        return (0.0, 1.0);
    }
    let (z, n, p) = (1.959_964, n as f64, k as f64 / n as f64);
    let centre = (p + z * z / (2.0 * n)) / (1.0 + z * z / n);
    let half = z * ((p * (1.0 - p) + z * z / (4.0 * n)) / n).sqrt() / (1.0 + z * z / n);
    (centre - half, centre + half)
}

/// The median of the values that are not NaN (NaN if there are none).
pub fn median(xs: &[f64]) -> f64 {
    let mut v: Vec<f64> = xs.iter().copied().filter(|x| !x.is_nan()).collect();
    v.sort_by(f64::total_cmp);
    match v.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => v[n / 2],
        n => (v[n / 2 - 1] + v[n / 2]) / 2.0,
    }
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

#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct MannWhitney {
    /// U of the first sample: the number of pairs (a, b) with a > b, ties counting ½.
    pub u: f64,
    /// The normal approximation's z (tie-corrected variance, continuity correction).
    pub z: f64,
    /// Two-sided p-value.
    pub p_two_sided: f64,
    /// One-sided p-value for "a tends to be greater than b".
    pub p_greater: f64,
    /// Whether the p-values are exact (small samples without ties) or from the normal
    /// approximation.
    pub exact: bool,
}

/// The Mann-Whitney U test of a against b. Exact p-values (the distribution of U by counting)
/// when there are no ties and n₁·n₂ ≤ 400; otherwise the normal approximation with the tie
/// correction and a continuity correction of ½ (scipy's `mannwhitneyu` with `method="exact"` /
/// `"asymptotic"`, `use_continuity=True`). `None` when a sample is empty or holds a NaN.
pub fn mann_whitney(a: &[f64], b: &[f64]) -> Option<MannWhitney> {
    let (n1, n2) = (a.len(), b.len());
    if n1 == 0 || n2 == 0 || a.iter().chain(b).any(|x| x.is_nan()) {
        return None;
    }
    // Midranks of the pooled sample.
    let mut all: Vec<(f64, bool)> = a.iter().map(|&x| (x, true)).chain(b.iter().map(|&x| (x, false))).collect();
    all.sort_by(|x, y| x.0.total_cmp(&y.0));
    let n = all.len();
    let (mut r1, mut ties, mut i) = (0.0, 0.0, 0);
    while i < n {
        let mut j = i;
        while j + 1 < n && all[j + 1].0 == all[i].0 {
            j += 1;
        }
        let rank = (i + j) as f64 / 2.0 + 1.0;
        let t = (j - i + 1) as f64;
        ties += t * t * t - t;
        r1 += rank * all[i..=j].iter().filter(|x| x.1).count() as f64;
        i = j + 1;
    }
    let (f1, f2) = (n1 as f64, n2 as f64);
    let u = r1 - f1 * (f1 + 1.0) / 2.0;
    let mu = f1 * f2 / 2.0;
    let var = f1 * f2 / 12.0 * ((f1 + f2 + 1.0) - ties / ((f1 + f2) * (f1 + f2 - 1.0)).max(1.0));
    let z = if var > 0.0 { (u - mu - 0.5 * (u - mu).signum()) / var.sqrt() } else { 0.0 };
    if ties == 0.0 && n1 * n2 <= 400 {
        // counts[k] = arrangements with U = k, by the recurrence on (n1, n2).
        let dist = u_distribution(n1, n2);
        let total: f64 = dist.iter().sum();
        let k = u.round() as usize;
        let le: f64 = dist[..=k].iter().sum::<f64>() / total;
        let ge: f64 = dist[k..].iter().sum::<f64>() / total;
        return Some(MannWhitney { u, z, p_two_sided: (2.0 * le.min(ge)).min(1.0), p_greater: ge, exact: true });
    }
    if var <= 0.0 {
        // Every value equal: no evidence either way.
        return Some(MannWhitney { u, z: 0.0, p_two_sided: 1.0, p_greater: 1.0, exact: false });
    }
    let normal = Normal::new(0.0, 1.0).expect("the standard normal");
    let zg = (u - mu - 0.5) / var.sqrt();
    Some(MannWhitney { u, z, p_two_sided: (2.0 * (1.0 - normal.cdf(z.abs()))).min(1.0), p_greater: 1.0 - normal.cdf(zg), exact: false })
}

/// The number of orderings of n1 + n2 distinct values giving U = k, for k = 0..=n1·n2.
fn u_distribution(n1: usize, n2: usize) -> Vec<f64> {
    // f[i][j] = distribution for samples of i and j; f(i, j, k) = f(i − 1, j, k − j) + f(i, j − 1, k).
    let mut f: Vec<Vec<Vec<f64>>> = vec![vec![Vec::new(); n2 + 1]; n1 + 1];
    for i in 0..=n1 {
        for j in 0..=n2 {
            let mut d = vec![0.0; i * j + 1];
            if i == 0 || j == 0 {
                d[0] = 1.0;
            } else {
                for (k, v) in d.iter_mut().enumerate() {
                    let from_a = if k >= j { f[i - 1][j].get(k - j).copied().unwrap_or(0.0) } else { 0.0 };
                    let from_b = f[i][j - 1].get(k).copied().unwrap_or(0.0);
                    *v = from_a + from_b;
                }
            }
            f[i][j] = d;
        }
    }
    std::mem::take(&mut f[n1][n2])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mann_whitney_matches_scipy() {
        // scipy.stats.mannwhitneyu(a, b, alternative="two-sided"): method="exact" → U = 23,
        // p = 0.043257; method="asymptotic" → p = 0.045074.
        let a = [19.8, 20.4, 19.6, 17.8, 18.5, 18.9, 18.3, 18.9, 19.5, 22.0];
        let b = [28.2, 26.6, 20.1, 23.3, 25.2, 22.1, 17.7, 27.6, 20.6, 13.7];
        // 18.9 appears twice in a: a tie, so the normal approximation is used.
        let m = mann_whitney(&a, &b).unwrap();
        assert_eq!(m.u, 23.0);
        assert!(!m.exact && (m.p_two_sided - 0.045074).abs() < 1e-5, "{m:?}");
        // Without the tie the exact distribution applies (scipy: U = 23, p = 0.043257).
        let a2 = [19.8, 20.4, 19.6, 17.8, 18.5, 18.9, 18.3, 18.95, 19.5, 22.0];
        let m = mann_whitney(&a2, &b).unwrap();
        assert!(m.exact && m.u == 23.0 && (m.p_two_sided - 0.043257).abs() < 1e-5, "{m:?}");
        // Many ties: scipy asymptotic two-sided p = 0.014622, greater p = 0.993455 (U = 58).
        let c = [1., 2., 2., 3., 3., 3., 4., 5., 5., 6., 7., 8., 8., 8., 9.];
        let d = [3., 4., 4., 5., 6., 6., 7., 7., 8., 9., 9., 10., 10., 11., 12., 12.];
        let m = mann_whitney(&c, &d).unwrap();
        assert_eq!(m.u, 58.0);
        assert!((m.p_two_sided - 0.014622).abs() < 1e-5 && (m.p_greater - 0.993455).abs() < 1e-5, "{m:?}");
        // Identical samples: no difference.
        assert_eq!(mann_whitney(&[1.0, 1.0], &[1.0, 1.0]).unwrap().p_two_sided, 1.0);
        assert!(mann_whitney(&[], &[1.0]).is_none());
    }

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
