//! The playtest fan-out as jobs for the [executor](crate::exec): one job is one replicate of one
//! condition (a whole search from the start), its output the [`Replicate`] record with its wall
//! time. The context is the resolved config (paths absolute) with the driver's config key and a
//! hash of the game's text: a worker builds the same conditions, stamps its records with the
//! driver's key, and refuses another version of the game.

use super::config::PlaytestConfig;
use super::run::{Replicate, Setup, run_replicate};
use crate::exec::{JobKind, fnv};
use anyhow::{Result, anyhow};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicU64;

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct PlaytestContext {
    /// The resolved config, its game and formula files absolute.
    pub config: PlaytestConfig,
    pub config_path: PathBuf,
    pub config_text: String,
    /// The driver's [`Setup::key`] (records carry it).
    pub key: String,
    /// FNV of the game's text as the driver read it.
    pub game_hash: u64,
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
        let text = crate::input::read_text(&config.playtest.game)?;
        Ok(PlaytestContext {
            config,
            config_path: std::path::absolute(config_path)?,
            config_text: config_text.to_string(),
            key: setup.key.clone(),
            game_hash: fnv(text.as_bytes()),
        })
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
        crate::exec::same_file(&ctx.config.playtest.game, ctx.game_hash)?;
        // The worker writes nothing: the output root is never used.
        let mut setup = Setup::new(ctx.config.clone(), &ctx.config_text, &ctx.config_path, Path::new(""))?;
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
