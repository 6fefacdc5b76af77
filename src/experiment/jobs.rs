//! The tournament and experiment fan-outs as jobs for the [executor](crate::exec).
//!
//! - `tournament.game`: one game (an encounter, an AI pair, a side); its output the game's
//!   record and, for the first encounters, its replay. A worker samples the encounters it plays
//!   from the seed (the same draw as the driver's) and keeps the last few; the context is the
//!   config with the game's absolute path and a hash of its text.
//! - `experiment.run`: one play configuration (a condition on one seed, its game path absolute)
//!   played to its report; its output the run's row. The context is the experiment's metric.

use super::config::PlayConfig;
use super::repeat::{Run, run_one};
use super::tournament::{GameRecord, TournamentConfig, base_options, play_one, sample_encounter};
use crate::exec::{JobKind, fnv};
use crate::players::Replay;
use crate::wgdl::Program;
use anyhow::{Result, anyhow};
use serde::{Deserialize, Serialize};
use std::sync::{Arc, Mutex};

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct TournamentContext {
    /// The resolved config, its game path absolute.
    pub config: TournamentConfig,
    /// FNV of the game's text as the driver read it.
    pub game_hash: u64,
}

impl TournamentContext {
    pub fn new(cfg: &TournamentConfig) -> Result<TournamentContext> {
        let mut config = cfg.clone();
        config.tournament.game = std::path::absolute(&cfg.tournament.game)?;
        let text = crate::input::read_text(&config.tournament.game)?;
        Ok(TournamentContext { config, game_hash: fnv(text.as_bytes()) })
    }
}

/// One game: encounter `encounter`, AI pair `pair`, `side` 0 (the pair's first AI is red) or 1.
#[derive(Clone, Copy, Debug, Serialize, Deserialize)]
pub struct GameJob {
    pub encounter: u64,
    pub pair: usize,
    pub side: usize,
}

type Encounter = Arc<(Arc<Program>, Vec<(String, f64)>)>;

pub struct Worker {
    cfg: TournamentConfig,
    /// The encounters sampled last (a chunk's jobs come encounter by encounter).
    sampled: Mutex<Vec<(u64, Encounter)>>,
}

/// One tournament game (`tournament.game`).
pub struct TournamentGame;

impl JobKind for TournamentGame {
    const NAME: &'static str = "tournament.game";
    type Context = TournamentContext;
    type Worker = Worker;
    type Job = GameJob;
    type Output = (GameRecord, Option<Replay>);

    fn worker(ctx: &TournamentContext) -> Result<Worker> {
        crate::exec::same_file(&ctx.config.tournament.game, ctx.game_hash)?;
        Ok(Worker { cfg: ctx.config.clone(), sampled: Mutex::new(Vec::new()) })
    }

    fn run(w: &Worker, job: &GameJob) -> Result<(GameRecord, Option<Replay>)> {
        let found = w.sampled.lock().unwrap_or_else(|p| p.into_inner()).iter().find(|(k, _)| *k == job.encounter).map(|(_, e)| e.clone());
        let encounter = match found {
            Some(e) => e,
            None => {
                let t = &w.cfg.tournament;
                let e = Arc::new(sample_encounter(&t.game, &base_options(&w.cfg), t.seed, job.encounter)?);
                let mut sampled = w.sampled.lock().unwrap_or_else(|p| p.into_inner());
                if sampled.len() >= 8 {
                    sampled.remove(0);
                }
                sampled.push((job.encounter, e.clone()));
                e
            }
        };
        play_one(&w.cfg, &encounter, (job.encounter, job.pair, job.side))
    }
}

/// What every run of an experiment shares: the metric read off each report.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct RunContext {
    pub metric: String,
}

/// One condition on one seed.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct RunJob {
    pub name: String,
    /// The condition's resolved play config (its game path absolute).
    pub config: PlayConfig,
}

impl RunJob {
    pub fn new(name: &str, cfg: &PlayConfig) -> Result<RunJob, String> {
        let mut config = cfg.clone();
        config.experiment.game =
            std::path::absolute(&cfg.experiment.game).map_err(|e| format!("{}: {e}", cfg.experiment.game.display()))?;
        Ok(RunJob { name: name.to_string(), config })
    }
}

/// One experiment run (`experiment.run`).
pub struct ExperimentRun;

impl JobKind for ExperimentRun {
    const NAME: &'static str = "experiment.run";
    type Context = RunContext;
    type Worker = RunContext;
    type Job = RunJob;
    type Output = Run;

    fn worker(ctx: &RunContext) -> Result<RunContext> {
        Ok(ctx.clone())
    }

    fn run(ctx: &RunContext, job: &RunJob) -> Result<Run> {
        run_one(&ctx.metric, &job.name, &job.config).map_err(|e| anyhow!(e))
    }
}
