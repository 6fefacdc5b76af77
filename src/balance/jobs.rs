//! The balance game as a job for the [executor](crate::exec). The context of it and of
//! `landscape.sample` is
//! the resolved config with the game's absolute path and content hash, so a worker anywhere
//! compiles the same game (and refuses another version of it).
//!
//! - `balance.game`: games of one candidate encounter (its full DNA), each by an AI pair on a
//!   seed; its output the [`GameOutcome`]s the fitness reads (balance iterations, confirmation).
//!
//! The other two balance kinds live beside their workers: `landscape.sample` in `landscape.rs`,
//! `verify.game` in `verify.rs`.

use super::config::BalanceConfig;
use super::dna::Codec;
use super::fitness::{Evaluator, GameOutcome};
use crate::exec::JobKind;
use crate::wgdl::Program;
use anyhow::{Result, anyhow};
use std::path::Path;
use std::sync::Arc;

/// What every job of the run shares: the resolved config, where it came from, the game's hash
/// ([`crate::drive::game::Context`]).
pub type BalanceContext = crate::drive::game::Context<BalanceConfig>;

impl BalanceContext {
    pub fn new(cfg: &BalanceConfig, cfg_path: &Path, cfg_text: &str, codec: &Codec) -> Result<BalanceContext> {
        let mut config = cfg.clone();
        config.balance.game = std::path::absolute(&cfg.balance.game)?;
        BalanceContext::of(config, cfg_path, cfg_text, codec.game_hash())
    }
}

pub use crate::drive::fanout::GameJob;

/// A worker's state: the codec and evaluator of the context, and the encounters it built last
/// (consecutive jobs of a batch mostly share one).
pub struct Worker {
    pub(super) codec: Codec,
    pub(super) ev: Evaluator,
    built: crate::exec::BuiltCache<Arc<Program>>,
}

/// One balance game (`balance.game`).
pub struct BalanceGame;

impl JobKind for BalanceGame {
    const NAME: &'static str = "balance.game";
    type Context = BalanceContext;
    type Worker = Worker;
    type Job = GameJob;
    type Output = Vec<GameOutcome>;

    fn worker(ctx: &BalanceContext) -> Result<Worker> {
        let codec = Codec::new(&ctx.config, &ctx.config_path, &ctx.config_text)?;
        crate::exec::same_game(&ctx.config.balance.game, codec.game_hash(), ctx.game_hash)?;
        let ev = Evaluator::new(&ctx.config, codec.probe()).map_err(|e| anyhow!("{}: {e}", ctx.config_path.display()))?;
        Ok(Worker { codec, ev, built: crate::exec::BuiltCache::new(4) })
    }

    fn run(w: &Worker, job: &GameJob) -> Result<Vec<GameOutcome>> {
        let program = w.encounter(&job.x)?;
        job.games.iter().map(|&(pair, seed)| w.ev.play(&program, pair, seed, None)).collect()
    }
}

impl Worker {
    fn encounter(&self, dna: &[f64]) -> Result<Arc<Program>> {
        self.built
            .get(dna, || self.codec.build(dna)?.ok_or_else(|| anyhow!("a job's encounter breaks a constraint; expected a valid candidate")))
    }
}
