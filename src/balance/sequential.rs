//! Sequential confirmation of an iteration's best (`[evaluation] confirm = "sequential"`, a
//! second algorithm beside the fixed one, which stays the default): the candidate plays fresh
//! games per AI pair in doubling batches — `max(games, 8)`, twice that, … up to `confirm_games`
//! (the cap) — only while one of two questions is open, and every game counts in the budget:
//! - **the challenge**: is its F above the best so far's? F − F_best against z times the
//!   standard error of both (a bootstrap, [`super::fitness::Evaluator::f_se`]): above
//!   passes, below by the futility quantile fails (the candidate is dropped at once); no best
//!   yet passes;
//! - **the target**: does F clear `[balance] target`? F − z·se above it is *sure*; F + z_f·se
//!   below it settles "not reached".
//!
//! The candidate is dropped as soon as its challenge fails and accepted as the best as soon as
//! its challenge passes and the target question is settled either way. At the cap the verdict is
//! the fixed confirmation's (F above the best's), and it is sure when F − z·se clears the target.
//! z and z_f are generate's races' ([`crate::drive::looks`]): Student's t at n − 1 degrees of
//! freedom, α/K and [`FUTILITY`]/K over K looks, so that each question's chance of a wrong
//! acceptance over all looks is at most `confirm_alpha`. A penalized F (AllPlayed) stays
//! penalized with more games: it is settled at the look that finds it.
//!
//! The run's stop differs too: under the sequential confirmation the target counts as reached
//! only when the best is *sure* — reached with the confidence asked — not when its point estimate
//! passes (the fixed confirmation's rule, which keeps the luckiest of many confirmations: the
//! winner's curse, docs/results.md).

use super::fitness::{Eval, GameOutcome};
use super::optim::{CandGames, Games, Group};
use crate::drive::looks::{FUTILITY, looks, tag, z, z_at};
use anyhow::Result;

/// How a question stands at a look.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Answer {
    Yes,
    No,
    Open,
}

/// The confirmation of one candidate: its evaluation on all its games (F's standard error and
/// whether it is sure of the target filled in), whether it beats the best so far, and the games
/// it played over all pairs.
pub struct Confirmed {
    pub eval: Eval,
    pub better: bool,
    pub games: u64,
}

/// Confirms candidate `cand` of iteration `it` (its games on the streams of tag `base`, then
/// `base` with the look). `best`: the best so far's F and standard error.
pub fn confirm(built: &Games, it: u64, cand: &CandGames, base: u64, best: Option<(f64, f64)>, target: f64) -> Result<Confirmed> {
    let e = &built.ev.cfg.evaluation;
    let pairs = built.ev.n_pairs();
    let sizes = looks(e.games.max(8), e.confirm_games);
    let mut pool: Vec<Vec<GameOutcome>> = vec![Vec::new(); pairs];
    let mut played = 0u64;
    let distance = built.codec.team_distance(&cand.0);
    for (j, &size) in sizes.iter().enumerate() {
        let batch = size - pool[0].len() as u64;
        let who = if j == 0 { base } else { tag(base, j, 0) };
        let one = (cand.0.clone(), cand.1.clone(), who);
        let games = built.outcomes(&[Group { iteration: it, cands: std::slice::from_ref(&one), games: batch as usize }])?;
        let games = &games[0][0];
        for (p, chunk) in games.chunks(batch as usize).enumerate() {
            pool[p].extend_from_slice(chunk);
        }
        played += games.len() as u64;
        let all: Vec<GameOutcome> = pool.concat();
        let mut eval = built.ev.score(&all, distance);
        eval.f_se = built.ev.f_se(&all, distance);
        let last = j + 1 == sizes.len();
        let (za, zf) = (z(e.confirm_alpha, sizes.len(), size), z_at(FUTILITY, sizes.len(), size));
        eval.sure = eval.f - za * eval.f_se > target;
        let (challenge, reach) = questions(&eval, best, target, za, zf);
        let settled = built.ev.penalized(&eval) || challenge == Answer::No || (challenge == Answer::Yes && reach != Answer::Open);
        if settled || last {
            let better = best.is_none_or(|(f, _)| eval.f > f);
            return Ok(Confirmed { eval, better, games: played });
        }
    }
    unreachable!("the last look returns")
}

/// The challenge and the target question at one look (acceptance quantile `za`, futility `zf`).
fn questions(e: &Eval, best: Option<(f64, f64)>, target: f64, za: f64, zf: f64) -> (Answer, Answer) {
    let challenge = match best {
        None => Answer::Yes,
        Some((f, se)) => {
            let (d, s) = (e.f - f, (e.f_se * e.f_se + se * se).sqrt());
            if d - za * s > 0.0 {
                Answer::Yes
            } else if d + zf * s <= 0.0 {
                Answer::No
            } else {
                Answer::Open
            }
        }
    };
    let reach = if e.sure {
        Answer::Yes
    } else if e.f + zf * e.f_se < target {
        Answer::No
    } else {
        Answer::Open
    };
    (challenge, reach)
}
