//! The looks of a sequential test, shared by the confirmations that play only while in doubt
//! (generate's races, balance's confirmation):
//! the pool sizes of the looks (doubling up to a cap), the one-sided quantiles of each look
//! (Student's t with n − 1 degrees of freedom at a level split over the looks, by Bonferroni),
//! and the stream tag of a look's games.

/// The stream tag of a confirmation game: the look (from 1) and the candidate's index.
pub fn tag(base: u64, look: usize, i: usize) -> u64 {
    base | ((look as u64) << 32) | i as u64
}

/// The pool sizes of the looks: `first`, doubling, up to `cap` (at least one look).
pub fn looks(first: u64, cap: u64) -> Vec<u64> {
    let mut v = vec![first.min(cap).max(1)];
    while *v.last().expect("one look") < cap {
        let next = (v.last().expect("one look") * 2).min(cap);
        v.push(next);
    }
    v
}

/// The chance, over all looks, of dropping a candidate whose question would have passed (the
/// futility side of each test): a dropped candidate costs the search a find, an accepted one
/// that should not have been costs the map its honesty, so this side is looser than α.
pub const FUTILITY: f64 = 0.2;

/// The quantile of a one-sided test at level `level`/K (K looks) on `n` games per table:
/// Student's t with n − 1 degrees of freedom (a standard error from a few games is itself
/// uncertain: at 4 games the normal's z would accept far more often than α says); infinite
/// below 2 games, where nothing can be settled by an interval.
pub fn z_at(level: f64, looks: usize, n: u64) -> f64 {
    use statrs::distribution::{ContinuousCDF, StudentsT};
    if n < 2 {
        return f64::INFINITY;
    }
    let t = StudentsT::new(0.0, 1.0, (n - 1) as f64).expect("n − 1 ≥ 1 degrees of freedom");
    t.inverse_cdf(1.0 - level / looks.max(1) as f64)
}

/// The acceptance side: level α/K, at least 1.96 (so that a pass satisfies a `certain`
/// requirement's 95% interval).
pub fn z(alpha: f64, looks: usize, n: u64) -> f64 {
    z_at(alpha, looks, n).max(1.96)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn looks_double_up_to_the_cap_and_z_grows_with_them() {
        assert_eq!(looks(8, 400), vec![8, 16, 32, 64, 128, 256, 400]);
        assert_eq!(looks(4, 12), vec![4, 8, 12]);
        assert_eq!(looks(20, 12), vec![12]);
        assert!((z(0.05, 1, 1000) - 1.96).abs() < 1e-9);
        // Many games: the normal's 2.45 for 0.05 / 7; few: Student's t, far wider.
        assert!((z(0.05, 7, 100_000) - 2.45).abs() < 0.01, "{}", z(0.05, 7, 100_000));
        assert!(z(0.05, 7, 8) > 3.0 && z(0.05, 3, 4) > 3.5, "{} {}", z(0.05, 7, 8), z(0.05, 3, 4));
        assert!(z_at(0.2, 3, 1).is_infinite());
        assert_eq!(tag(1 << 42, 3, 5), (1 << 42) + (3 << 32) + 5);
    }
}
