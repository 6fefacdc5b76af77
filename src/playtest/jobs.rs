//! The playtest fan-out as jobs for the [executor](crate::exec): one job is one replicate of one
//! condition (a whole search from the start), its output the [`Replicate`] record with its wall
//! time. The context is the run's (the resolved config, paths absolute; the game's hash) with
//! the driver's config key: a worker builds the same conditions from the game it reads once,
//! stamps its records with the driver's key, and refuses another version of the game.

use super::config::PlaytestConfig;
use super::encode::{EState, Encoded};
use super::selfplay;
use super::setup::{Condition, Play, Replicate, Setup};
use crate::drive::game::Context;
use crate::exec::JobKind;
use crate::game::Game;
use crate::rng;
use crate::search::mcts::{self, Budget, Evaluator, Rollout, SubGame};
use crate::wgdl::probe::ValueRef;
use crate::wgdl::{Program, State};
use anyhow::{Result, anyhow, bail};
use serde::{Deserialize, Serialize};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

/// What every replicate job shares: the run's [`Context`] (the resolved config, its game and
/// formula files absolute; the game's hash by the one rule) and the driver's [`Setup::key`],
/// which records carry.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct PlaytestContext {
    pub run: Context<PlaytestConfig>,
    pub key: String,
}

impl PlaytestContext {
    pub fn new(setup: &Setup, config_path: &Path, config_text: &str) -> Result<PlaytestContext> {
        let mut config = setup.cfg.clone();
        config.playtest.game = std::path::absolute(&config.playtest.game)?;
        for st in &mut config.styles {
            if let Some(f) = &st.formula_file {
                st.formula_file = Some(std::path::absolute(f)?);
            }
        }
        Ok(PlaytestContext { run: Context::of(config, config_path, config_text, setup.game_hash)?, key: setup.key.clone() })
    }
}

/// One replicate of one condition.
#[derive(Clone, Copy, Debug, Serialize, Deserialize)]
pub struct ReplicateJob {
    pub condition: usize,
    pub replicate: u64,
}

/// A finished replicate and its wall-clock seconds (which the record leaves out).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Done {
    pub rep: Replicate,
    pub seconds: f64,
}

/// One playtest replicate (`playtest.replicate`).
pub struct PlaytestReplicate;

impl JobKind for PlaytestReplicate {
    const NAME: &'static str = "playtest.replicate";
    type Context = PlaytestContext;
    type Worker = Setup;
    type Job = ReplicateJob;
    type Output = Option<Done>;

    fn worker(ctx: &PlaytestContext) -> Result<Setup> {
        let run = &ctx.run;
        // The worker writes nothing: the output root is never used.
        let mut setup = Setup::new(run.config.clone(), &run.config_text, &run.config_path, Path::new(""))?;
        crate::exec::same_game(&run.config.playtest.game, setup.game_hash, run.game_hash)?;
        setup.key = ctx.key.clone();
        Ok(setup)
    }

    fn run(setup: &Setup, job: &ReplicateJob) -> Result<Option<Done>> {
        let c =
            setup.conditions.get(job.condition).ok_or_else(|| anyhow!("a job for condition {}, which the config lacks", job.condition))?;
        let rep = run_replicate(setup, c, job.replicate, &AtomicU64::new(0))?;
        Ok(rep.map(|rep| Done { seconds: rep.seconds, rep }))
    }
}

/// The raw score as the search's reward.
struct RawScore<'a> {
    program: &'a Program,
    score: ValueRef,
}

impl Evaluator<EState<State>> for RawScore<'_> {
    fn value(&self, s: &EState<State>, _player: usize) -> f64 {
        self.program.read(&s.st, self.score)
    }
}

/// Runs one replicate of one condition. `None` when interrupted.
pub fn run_replicate(setup: &Setup, c: &Condition, r: u64, progress: &AtomicU64) -> Result<Option<Replicate>> {
    let (game, score, mcts) = match &c.play {
        Play::External { .. } => return super::external::run_replicate(setup, c, r, progress),
        Play::Wgdl { score: None, .. } => return selfplay::play_replicate(setup, c, r, progress),
        Play::Wgdl { game, score: Some(score), mcts } => (game, *score, mcts),
    };
    let t0 = Instant::now();
    let s = &setup.cfg.playtest;
    let game_seed = setup.game_seed(r);
    let mut game = game.clone();
    game.game.seed = game_seed;
    let root = game.initial().map_err(|e| anyhow!("{}: the start state: {e}", c.name))?;
    let eval = RawScore { program: &game.game.program, score };
    let mut rng = rng::stream(s.seed, 1, r, c.stream);
    let mut improvements = Vec::new();
    let mut last = f64::NEG_INFINITY;
    let mut pending = 0u64;
    let mut interrupted = false;
    let sub = SubGame { goal_target: usize::MAX };
    let res = mcts::search_observed(&game, &root, sub, mcts, &eval, Budget::Iterations(s.rollouts), &mut rng, |ro: Rollout| {
        if ro.best > last {
            last = ro.best;
            improvements.push((ro.iteration, ro.best));
        }
        pending += 1;
        if pending == 256 {
            progress.fetch_add(pending, Ordering::Relaxed);
            pending = 0;
            if crate::drive::stop::requested() {
                interrupted = true;
                return false;
            }
        }
        true
    })
    .map_err(|e| anyhow!("{} replicate {}: {e}", c.name, r + 1))?;
    progress.fetch_add(pending, Ordering::Relaxed);
    if interrupted {
        return Ok(None);
    }
    // The rollouts a CUT_OFF stop saved still count as done for the progress bar.
    progress.fetch_add(s.rollouts - res.iterations, Ordering::Relaxed);
    // Replay the best trace from the start: it must reach the same score (the thesis's replay
    // consistency check; a mismatch means the game is not a function of its seed and moves).
    let moves = Encoded::moves(&res.path);
    let mut st = game.game.initial().map_err(|e| anyhow!("{e}"))?;
    let mut trace = Vec::with_capacity(moves.len());
    for &m in &moves {
        trace.push(game.game.program.action_name(&st, m));
        game.game.apply(&mut st, m).map_err(|e| anyhow!("{} replicate {}: replaying the best trace: {e}", c.name, r + 1))?;
    }
    let replayed = game.game.program.read(&st, score);
    if (replayed - res.value).abs() > 1e-9 * res.value.abs().max(1.0) {
        bail!(
            "{} replicate {}: the best trace scores {replayed} when replayed but {} in the search; the game is not a function of its seed and moves",
            c.name,
            r + 1,
            res.value
        );
    }
    Ok(Some(Replicate {
        key: setup.key.clone(),
        condition: c.name.clone(),
        replicate: r,
        game_seed,
        best: res.value,
        improvements,
        rollouts: res.iterations,
        exhausted: res.iterations < s.rollouts,
        nodes: res.nodes,
        seconds: t0.elapsed().as_secs_f64(),
        trace,
        game: None,
        failures: Vec::new(),
    }))
}
