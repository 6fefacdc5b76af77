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

pub use crate::drive::looks::{FUTILITY, looks, tag, z, z_at};

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
