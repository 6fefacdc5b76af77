//! Sequential confirmation (`confirm = "sequential"`, a second algorithm beside the fixed one):
//! a candidate the search would keep gets more games only while a question about it is open,
//! in doubling batches up to `confirm_games` per table, and every game it played counts.
//!
//! Its pool starts with the games it was screened on; the looks are at those games, twice as
//! many, four times, … and `confirm_games` (the cap). At a look before the cap, each question
//! is settled by a one-sided interval of z standard errors, z the 1 − α/K quantile of Student's t
//! with n − 1 degrees of freedom at n games per table (K looks; by
//! Bonferroni, each question's chance of a wrong acceptance over all looks is at most α; the
//! futility side, dropping a candidate, is tested at [`FUTILITY`] in place of α):
//! - the requirements ([`Scorer::settle_requirements`]): a game that did not end fails at once;
//!   a requirement whose interval lies beyond a bound fails (a `certain` one, beyond what could
//!   still pass at the cap); all intervals inside their bands pass;
//! - the challenge: against the elite of the cell its descriptors fall in (or the best so far),
//!   F − F_incumbent with the standard error of both (delta rule, [`Scorer::f_se`]) above zero by
//!   z of it passes, below fails; an empty cell passes.
//!
//! A candidate fails as soon as one question fails and is accepted as soon as both pass, so a
//! candidate clear by far enters on its screening games. At the cap the verdict is the fixed
//! confirmation's on the pooled games: feasible as the strict scorer says, and F above the
//! incumbent's.

use super::play::GameRecord;
use super::quality::{Eval, Pool, Scorer, Settled};
use anyhow::Result;

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

/// A candidate under confirmation: its genes, its pool, its evaluation on the pool, its verdict
/// (`Doubt` while open).
pub struct Trial {
    pub x: Vec<f64>,
    pub pool: Pool,
    pub eval: Eval,
    pub verdict: Settled,
}

/// Confirms `cands` (genes, screening games table by table) sequentially. `incumbent(e)`: F and
/// its standard error of what a candidate evaluated `e` must beat (None: nothing to beat);
/// `play(look, who, batch)`: the games (table by table) of the candidates `who` (indices into
/// `cands`) at that look, `batch` games per table each. Returns each candidate's trial and the
/// games played per table over all candidates.
pub fn confirm(
    scorer: &Scorer,
    cands: Vec<(Vec<f64>, Vec<Vec<GameRecord>>)>,
    cap: u64,
    alpha: f64,
    incumbent: &dyn Fn(&Eval) -> Option<(f64, f64)>,
    play: &mut dyn FnMut(usize, &[usize], u64) -> Result<Vec<Vec<Vec<GameRecord>>>>,
) -> Result<(Vec<Trial>, u64)> {
    let mut trials: Vec<Trial> = cands
        .into_iter()
        .map(|(x, games)| {
            let pool = Pool::of(&games);
            let eval = scorer.score_pool(&pool);
            Trial { x, pool, eval, verdict: Settled::Doubt }
        })
        .collect();
    let first = trials.iter().map(|t| t.pool.games()).min().unwrap_or(0);
    let sizes = looks(first, cap);
    let mut played = 0;
    for (j, &size) in sizes.iter().enumerate() {
        let last = j + 1 == sizes.len();
        let zs = (z(alpha, sizes.len(), size), z_at(FUTILITY, sizes.len(), size));
        for t in trials.iter_mut().filter(|t| t.verdict == Settled::Doubt) {
            t.verdict = if last { final_verdict(t, incumbent) } else { settle(scorer, t, zs, cap, incumbent) };
        }
        if last {
            break;
        }
        let open: Vec<usize> = (0..trials.len()).filter(|&i| trials[i].verdict == Settled::Doubt).collect();
        if open.is_empty() {
            break;
        }
        let batch = sizes[j + 1] - size;
        let games = play(j + 1, &open, batch)?;
        for (&i, g) in open.iter().zip(&games) {
            let t = &mut trials[i];
            t.pool.add(g);
            t.eval = scorer.score_pool(&t.pool);
            played += batch * g.len() as u64;
        }
    }
    Ok((trials, played))
}

/// The fixed confirmation's verdict on the pooled games.
fn final_verdict(t: &Trial, incumbent: &dyn Fn(&Eval) -> Option<(f64, f64)>) -> Settled {
    let better = incumbent(&t.eval).is_none_or(|(f, _)| t.eval.f > f);
    if t.eval.feasible && better { Settled::Pass } else { Settled::Fail }
}

/// A look before the cap.
fn settle(scorer: &Scorer, t: &Trial, (z, z_fail): (f64, f64), cap: u64, incumbent: &dyn Fn(&Eval) -> Option<(f64, f64)>) -> Settled {
    let req = scorer.settle_requirements(&t.eval, &t.pool.counts(), z, z_fail, cap);
    if req == Settled::Fail {
        return Settled::Fail;
    }
    let challenge = match incumbent(&t.eval) {
        None => Settled::Pass,
        // F is at most 1: an incumbent at 1 cannot be beaten.
        Some((f, _)) if f >= 1.0 => Settled::Fail,
        Some((f, se)) => {
            let d = t.eval.f - f;
            let s = (scorer.f_se(&t.eval.targets).powi(2) + se * se).sqrt();
            if d - z * s > 0.0 {
                Settled::Pass
            } else if d + z_fail * s <= 0.0 {
                Settled::Fail
            } else {
                Settled::Doubt
            }
        }
    };
    match (req, challenge) {
        (_, Settled::Fail) => Settled::Fail,
        (Settled::Pass, Settled::Pass) => Settled::Pass,
        _ => Settled::Doubt,
    }
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
