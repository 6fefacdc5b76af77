//! The optimizers, on one interface: each [`Optimizer::step`] is one iteration that asks the
//! [`Ctx`] to evaluate candidates (the context plays the games, in parallel, and counts them
//! against the budget) and returns the evaluation of its current point.
//!
//! - `es`: HexMage's evolution strategy — λ neighbours of the current point by the chained
//!   multiplicative mutation, the fitness-weighted mean of all of them becomes the new point
//!   (re-evaluated), restart below a threshold.
//! - `sa`: simulated annealing, the baseline HexMage abandoned — Metropolis acceptance at a
//!   temperature falling linearly from T₀ to 0 over the budget; with `neighbours > 1` the
//!   candidate is the fitness-weighted mean of that many neighbours (HexMage's code).
//! - `cma`: separable CMA-ES (Ros & Hansen 2008: diagonal covariance, rank-μ and rank-one
//!   updates, cumulative step-size adaptation). Rank-based, so only the order of a generation's
//!   F matters, and the generation shares its game seeds (common random numbers), which together
//!   with the harness's confirmation re-evaluations make it the noise-aware choice.
//!
//! All state is plain data (serde), so a checkpoint restores an optimizer exactly; all
//! randomness comes from streams of (seed, iteration, …).

use super::config::{BalanceConfig, EsConfig};
use super::dna::Codec;
use super::fitness::{Eval, Evaluator, GameOutcome};
use super::jobs::{BalanceContext, BalanceGame};
use crate::drive::fanout;
use crate::evolve::cma::SepCma;
use crate::exec::Executor;
use crate::rng::{Rng, stream};
use crate::wgdl::Program;
use anyhow::Result;
use rand::RngExt;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// A candidate: a search vector and its compiled encounter.
pub type Cand = (Vec<f64>, Arc<Program>);

/// Stream tags (the `individual` slot of a stream) for randomness that is not a candidate's.
const OPTIMIZER: u64 = 1 << 40;
const CRN: u64 = 1 << 41;
pub const CONFIRM: u64 = 1 << 42;

/// A batch of candidates to evaluate, as an ask/tell user gets it
/// ([`crate::balance::asktell`]): the iteration, whether it is the confirmation of the
/// iteration's best, and each candidate.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct EvalRequest {
    pub iteration: u64,
    pub confirm: bool,
    pub candidates: Vec<Candidate>,
}

/// One candidate: its full DNA, the parameter values it makes, and the stream tag of its games.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Candidate {
    pub dna: Vec<f64>,
    pub values: Vec<(String, f64)>,
    pub who: u64,
}

/// An evaluation other than the built-in one: the candidates' evaluations, in order.
pub type EvalHook = dyn Fn(&EvalRequest) -> Result<Vec<Eval>> + Send + Sync;

/// A candidate to play: its full DNA, its program when built, the stream tag of its games.
pub type CandGames = (Vec<f64>, Option<Arc<Program>>, u64);

/// Candidates of one iteration, `games` games per AI pair each.
pub struct Group<'a> {
    pub iteration: u64,
    pub cands: &'a [CandGames],
    pub games: usize,
}

/// A confirmation that rides along with an iteration's first batch of games (the loop's
/// [`crate::balance::run`]): one round trip to the executor instead of two.
#[derive(Clone)]
pub struct Ride {
    pub iteration: u64,
    pub cand: CandGames,
    pub games: usize,
}

impl Ride {
    pub fn group(&self) -> Group<'_> {
        Group { iteration: self.iteration, cands: std::slice::from_ref(&self.cand), games: self.games }
    }
}

/// What the built-in evaluation needs: the codec, the evaluator, where the games run.
pub struct Games<'a> {
    pub codec: &'a Codec,
    pub ev: &'a Evaluator,
    pub exec: &'a Executor,
    pub jobs: &'a BalanceContext,
    pub seed: u64,
}

impl Games<'_> {
    /// Plays and scores candidates (full DNA, its program when built, stream tag): `games` games
    /// per AI pair each, the games of candidate `who` in iteration `it` on the streams
    /// (seed, it, who, game).
    pub fn evaluate(&self, it: u64, cands: &[CandGames], games: usize) -> Result<Vec<Eval>> {
        Ok(self.evaluate_groups(&[Group { iteration: it, cands, games }])?.remove(0))
    }

    /// [`Games::evaluate`] of several groups in one batch of jobs (one round trip to the
    /// executor): the same games and the same evaluations as one call per group.
    pub fn evaluate_groups(&self, groups: &[Group]) -> Result<Vec<Vec<Eval>>> {
        let outcomes = self.outcomes(groups)?;
        Ok(groups
            .iter()
            .zip(outcomes)
            .map(|(group, os)| {
                group.cands.iter().zip(os).map(|((dna, _, _), o)| self.ev.score(&o, self.codec.team_distance(dna))).collect()
            })
            .collect())
    }

    /// The games of [`Games::evaluate_groups`], unscored: per group, per candidate, each AI
    /// pair's games in turn.
    pub fn outcomes(&self, groups: &[Group]) -> Result<Vec<Vec<Vec<GameOutcome>>>> {
        let mut fan = Vec::with_capacity(groups.len());
        for group in groups {
            let mut cands = Vec::with_capacity(group.cands.len());
            for (dna, p, who) in group.cands {
                let program = match p {
                    Some(p) => p.clone(),
                    None => self
                        .codec
                        .build(dna)?
                        .ok_or_else(|| anyhow::anyhow!("a candidate breaks a constraint; expected a valid encounter"))?,
                };
                cands.push((dna.as_slice(), *who, program));
            }
            fan.push(fanout::Group { iteration: group.iteration, games: group.games, cands });
        }
        fanout::play::<BalanceGame, _, _>(self.exec, self.jobs, self.seed, self.ev.n_pairs(), &fan, |program, pair, seed| {
            self.ev.play(program, pair, seed, None)
        })
    }

    /// [`Games::evaluate`] of a request as the loop made it (what an ask/tell user gets when
    /// they want the built-in evaluation).
    pub fn evaluate_request(&self, req: &EvalRequest) -> Result<Vec<Eval>> {
        let e = &self.ev.cfg.evaluation;
        let games = if req.confirm { e.confirm_games } else { e.games } as usize;
        let cands: Vec<_> = req.candidates.iter().map(|c| (c.dna.clone(), None, c.who)).collect();
        self.evaluate(req.iteration, &cands, games)
    }

    /// The request of candidates (full DNA, stream tag).
    pub fn request(&self, iteration: u64, confirm: bool, cands: &[(Vec<f64>, u64)]) -> EvalRequest {
        let candidates =
            cands.iter().map(|(dna, who)| Candidate { dna: dna.clone(), values: self.codec.overrides(dna), who: *who }).collect();
        EvalRequest { iteration, confirm, candidates }
    }
}

/// What an optimizer may do in an iteration.
pub struct Ctx<'a> {
    pub codec: &'a Codec,
    pub ev: &'a Evaluator,
    /// Where the games run, and what a job sent elsewhere carries.
    pub exec: &'a Executor,
    pub jobs: &'a BalanceContext,
    /// An evaluation of the user's (ask/tell) instead of the built-in games.
    pub hook: Option<&'a EvalHook>,
    pub seed: u64,
    pub iteration: u64,
    /// Games played so far in the whole run, and the budget in games.
    pub games_played: u64,
    pub budget_games: u64,
    /// This iteration's evaluated candidates (search vector, evaluation).
    pub evals: Vec<(Vec<f64>, Eval)>,
    /// A confirmation of an earlier iteration to play with this iteration's first batch (the
    /// built-in evaluation only), and its evaluation once played.
    pub ride: Option<Ride>,
    pub ridden: Option<Eval>,
}

impl Ctx<'_> {
    /// The optimizer's own stream for this iteration.
    pub fn rng(&self) -> Rng {
        stream(self.seed, self.iteration, OPTIMIZER, 0)
    }

    /// The share of the budget used so far, in [0, 1].
    pub fn progress(&self) -> f64 {
        (self.games_played as f64 / self.budget_games.max(1) as f64).min(1.0)
    }

    pub fn build(&self, x: &[f64]) -> Result<Option<Arc<Program>>> {
        self.codec.build(&self.codec.full(x))
    }

    pub fn random(&self, rng: &mut Rng) -> Result<Cand> {
        self.codec.random(rng)
    }

    /// `n` mutants of `x`, each from its own stream (so they can be made in parallel).
    pub fn neighbours(&self, x: &[f64], n: usize, salt: u64) -> Result<Vec<Cand>> {
        (0..n)
            .into_par_iter()
            .map(|i| mutate(self.codec, &self.ev.cfg.es, x, &mut stream(self.seed, self.iteration, i as u64, 1 + salt)))
            .collect()
    }

    /// Plays and scores candidates; with common random numbers every candidate of the iteration
    /// gets the same game seeds.
    pub fn evaluate(&mut self, cands: &[Cand]) -> Result<Vec<Eval>> {
        let e = &self.ev.cfg.evaluation;
        let first = self.evals.len();
        let who = |c: usize| if e.common_random_numbers { CRN } else { (first + c) as u64 };
        let games = Games { codec: self.codec, ev: self.ev, exec: self.exec, jobs: self.jobs, seed: self.seed };
        let evals = match self.hook {
            None => {
                let full: Vec<_> = cands.iter().enumerate().map(|(c, (x, p))| (self.codec.full(x), Some(p.clone()), who(c))).collect();
                let mine = Group { iteration: self.iteration, cands: &full, games: e.games as usize };
                match self.ride.take() {
                    None => games.evaluate_groups(&[mine])?.remove(0),
                    Some(ride) => {
                        let mut both = games.evaluate_groups(&[ride.group(), mine])?;
                        self.ridden = Some(both[0].remove(0));
                        both.remove(1)
                    }
                }
            }
            Some(hook) => {
                let full: Vec<_> = cands.iter().enumerate().map(|(c, (x, _))| (self.codec.full(x), who(c))).collect();
                let evals = hook(&games.request(self.iteration, false, &full))?;
                if evals.len() != cands.len() {
                    anyhow::bail!("{} evaluations told for {} candidates; expected one per candidate", evals.len(), cands.len());
                }
                evals
            }
        };
        self.games_played += (cands.len() * self.ev.n_pairs() * e.games as usize) as u64;
        for (c, ev) in cands.iter().zip(&evals) {
            self.evals.push((c.0.clone(), ev.clone()));
        }
        Ok(evals)
    }
}

/// HexMage's mutation: a random gene times a factor around 1 (`code`: 1 ± δ; `uniform`:
/// U[1 − δ, 1 + δ]), clamped to [clamp_min, 1], then another gene with probability `chain`;
/// redone when the encounter is invalid.
pub fn mutate(codec: &Codec, es: &EsConfig, x: &[f64], rng: &mut Rng) -> Result<Cand> {
    for _ in 0..100 {
        let mut y = x.to_vec();
        loop {
            let k = rng.random_range(0..y.len());
            let factor = if es.mutation == "uniform" {
                rng.random_range(1.0 - es.delta..=1.0 + es.delta)
            } else if rng.random_bool(0.5) {
                1.0 + es.delta
            } else {
                1.0 - es.delta
            };
            y[k] = (y[k] * factor).clamp(es.clamp_min, 1.0);
            if !rng.random_bool(es.chain) {
                break;
            }
        }
        if let Some(p) = codec.build(&codec.full(&y))? {
            return Ok((y, p));
        }
    }
    // Every mutant broke a constraint: stay put (the point itself is valid).
    let p = codec.build(&codec.full(x))?.ok_or_else(|| anyhow::anyhow!("the current point is not a valid encounter"))?;
    Ok((x.to_vec(), p))
}

/// The fitness-weighted mean of candidates (the plain mean when every F is 0).
fn weighted_mean(cands: &[Cand], evals: &[Eval]) -> Vec<f64> {
    let total: f64 = evals.iter().map(|e| e.f).sum();
    let n = cands[0].0.len();
    let mut m = vec![0.0; n];
    for ((x, _), e) in cands.iter().zip(evals) {
        let w = if total > 0.0 { e.f / total } else { 1.0 / cands.len() as f64 };
        for j in 0..n {
            m[j] += w * x[j];
        }
    }
    m
}

/// The mean of neighbours as a candidate, or the best neighbour when the mean is invalid.
fn recombine(ctx: &Ctx, cands: &[Cand], evals: &[Eval]) -> Result<Cand> {
    let m = weighted_mean(cands, evals);
    if let Some(p) = ctx.build(&m)? {
        return Ok((m, p));
    }
    let best = (0..cands.len()).max_by(|&a, &b| evals[a].f.total_cmp(&evals[b].f)).expect("at least one neighbour");
    Ok(cands[best].clone())
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub enum Optimizer {
    Es {
        current: Option<Vec<f64>>,
    },
    /// The current point and its evaluation.
    Sa {
        current: Option<(Vec<f64>, Eval)>,
    },
    Cma(Box<Cma>),
}

impl Optimizer {
    pub fn new(cfg: &BalanceConfig, n: usize) -> Optimizer {
        match cfg.balance.optimizer.as_str() {
            "sa" => Optimizer::Sa { current: None },
            "cma" => Optimizer::Cma(Box::new(Cma::new(n, cfg.cma.lambda, cfg.cma.sigma0))),
            _ => Optimizer::Es { current: None },
        }
    }

    /// One iteration; returns the evaluation of the point the optimizer now stands on.
    pub fn step(&mut self, ctx: &mut Ctx) -> Result<Eval> {
        let cfg = &ctx.ev.cfg;
        let mut rng = ctx.rng();
        match self {
            Optimizer::Es { current } => {
                let x = match current.take() {
                    Some(x) => x,
                    None => ctx.random(&mut rng)?.0,
                };
                let cands = ctx.neighbours(&x, cfg.es.lambda, 0)?;
                let evals = ctx.evaluate(&cands)?;
                let mean = recombine(ctx, &cands, &evals)?;
                let e = ctx.evaluate(std::slice::from_ref(&mean))?.remove(0);
                *current = if e.f < cfg.es.restart_below { Some(ctx.random(&mut rng)?.0) } else { Some(mean.0) };
                Ok(e)
            }
            Optimizer::Sa { current } => {
                let (x, ex) = match current.take() {
                    Some(c) => c,
                    None => {
                        let c = ctx.random(&mut rng)?;
                        let e = ctx.evaluate(std::slice::from_ref(&c))?.remove(0);
                        (c.0, e)
                    }
                };
                let fx = ex.f;
                let k = cfg.sa.neighbours;
                let cand = if k == 1 {
                    ctx.neighbours(&x, 1, 0)?.remove(0)
                } else {
                    let cands = ctx.neighbours(&x, k, 0)?;
                    let evals = ctx.evaluate(&cands)?;
                    recombine(ctx, &cands, &evals)?
                };
                let e = ctx.evaluate(std::slice::from_ref(&cand))?.remove(0);
                let t = cfg.sa.t0 * (1.0 - ctx.progress());
                let delta = e.f - fx;
                let accept = delta > 0.0 || (t > 0.0 && rng.random::<f64>() < (-delta.abs() / t).exp());
                let (nx, ne) = if accept { (cand.0, e) } else { (x, ex) };
                let now = if ne.f < cfg.sa.restart_below {
                    let c = ctx.random(&mut rng)?;
                    let e2 = ctx.evaluate(std::slice::from_ref(&c))?.remove(0);
                    (c.0, e2)
                } else {
                    (nx, ne)
                };
                let report = now.1.clone();
                *current = Some(now);
                Ok(report)
            }
            Optimizer::Cma(c) => Optimizer::cma_step(c, ctx, &mut rng),
        }
    }
}

/// The balance optimizer's separable CMA-ES: the shared state ([`SepCma`]) maximizing F over
/// the search vector.
pub type Cma = SepCma;

impl Optimizer {
    /// One CMA-ES generation: λ valid samples (each from its own stream, in parallel), their
    /// games, the update from their ranking by F (samples that had to be drawn at random rank last).
    fn cma_step(c: &mut Cma, ctx: &mut Ctx, rng: &mut Rng) -> Result<Eval> {
        if c.mean.is_none() || c.sigma < ctx.ev.cfg.cma.sigma_min {
            let m = ctx.random(rng)?.0;
            c.restart(m);
        }
        let lambda = c.lambda;
        let mu = c.mu();
        let (seed, it) = (ctx.seed, ctx.iteration);
        let codec = ctx.codec;
        let state: &Cma = c;
        let sampled: Vec<(Cand, bool)> = (0..lambda)
            .into_par_iter()
            .map(|i| -> Result<(Cand, bool)> {
                let mut r = stream(seed, it, i as u64, 7);
                for _ in 0..30 {
                    let x = state.sample(&mut r);
                    if let Some(p) = codec.build(&codec.full(&x))? {
                        return Ok(((x, p), true));
                    }
                }
                // No valid sample near the mean: play a random point, but keep it out of the
                // update (it is ranked last), so it cannot drag the mean or blow up the variance.
                Ok((codec.random(&mut r)?, false))
            })
            .collect::<Result<_>>()?;
        let from_dist: Vec<bool> = sampled.iter().map(|s| s.1).collect();
        let cands: Vec<Cand> = sampled.into_iter().map(|s| s.0).collect();
        let evals = ctx.evaluate(&cands)?;
        let mut order: Vec<usize> = (0..lambda).collect();
        order.sort_by(|&a, &b| from_dist[b].cmp(&from_dist[a]).then(evals[b].f.total_cmp(&evals[a].f)).then(a.cmp(&b)));
        let ranked: Vec<&[f64]> = order.iter().take(mu).map(|&i| cands[i].0.as_slice()).collect();
        c.tell(&ranked);
        Ok(evals[order[0]].clone())
    }
}
