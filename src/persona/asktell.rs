//! Ask/tell over the persona loop ([`crate::drive::asktell`]): [`run_chosen`] in a thread of its
//! own, with an executor that hands each batch of games out instead of playing it. A user (the
//! Python package's `playforge.Personas`) gets the games to play — the agent (random, or MCTS
//! with its selection formula as exact text and its reward), the chance seed and the agent's
//! stream — and tells each game's result; [`BuiltIn`] is the built-in play, which told back
//! gives the command line's run, file for file.

use super::jobs::Setup;
use super::jobs::{GameJob, PersonaGame};
use super::play::GameResult;
use super::run::{PersonaOutcome, run_chosen};
use crate::exec::asktell::Asker;
use crate::exec::{Executor, JobKind, Remote};
use anyhow::{Result, anyhow};
use rayon::prelude::*;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::AtomicU64;

/// The executor of an ask/tell run: each batch becomes a question.
struct Batches(Asker<Vec<GameJob>, Vec<GameResult>>);

impl Remote for Batches {
    fn run(&self, kind: &str, _context: &str, jobs: Vec<String>) -> Result<Vec<String>> {
        if kind != PersonaGame::NAME {
            return Err(anyhow!("ask/tell over personas got `{kind}` jobs; expected {}", PersonaGame::NAME));
        }
        let jobs: Vec<GameJob> = jobs.iter().map(|j| serde_json::from_str(j)).collect::<Result<_, _>>()?;
        self.0.ask(jobs)?.iter().map(|r| Ok(serde_json::to_string(r)?)).collect()
    }
    fn describe(&self) -> String {
        "ask/tell".into()
    }
    fn cpus(&self) -> usize {
        1
    }
}

/// The games `playforge personas` plays, on this process's threads (its own setup: the run's
/// is in its thread).
pub struct BuiltIn {
    player: Setup,
}

impl crate::drive::asktell::BuiltIn for BuiltIn {
    type Request = Vec<GameJob>;
    type Eval = GameResult;
    type Outcome = Vec<(usize, PersonaOutcome)>;

    fn evaluate(&self, jobs: &Vec<GameJob>) -> Result<Vec<GameResult>> {
        let player = &self.player;
        jobs.par_iter().map(|j| PersonaGame::run(player, j)).collect()
    }

    fn size(&self, jobs: &Vec<GameJob>) -> Option<usize> {
        Some(jobs.len())
    }

    fn unit(&self) -> (&'static str, &'static str) {
        ("results", "games")
    }
}

/// A persona run driven by ask and tell.
pub type AskTell = crate::drive::asktell::AskTell<BuiltIn>;

impl AskTell {
    /// Starts the run of `config` (with the command line's overrides) for the `chosen`
    /// personas (indices; all when empty), or resumes it.
    pub fn start(
        config: &Path,
        seed: Option<u64>,
        generations: Option<u64>,
        out: Option<&Path>,
        chosen: Vec<usize>,
        resume: bool,
    ) -> Result<AskTell> {
        let mut setup = Setup::load(config, seed, generations, out)?;
        let player = Setup::load(config, seed, generations, out)?;
        let chosen = if chosen.is_empty() { (0..setup.cfg.list.len()).collect() } else { chosen };
        if let Some(&k) = chosen.iter().find(|&&k| k >= setup.cfg.list.len()) {
            return Err(anyhow!("persona {k}: the config has {}; expected an index below it", setup.cfg.list.len()));
        }
        let dir = player.out_dir.clone();
        AskTell::spawn_asker("personas-ask-tell", BuiltIn { player }, &dir, move |asker| {
            setup.exec = Executor::Remote(Arc::new(Batches(asker)));
            run_chosen(&setup, &chosen, resume, &AtomicU64::new(0), &|_| {})
        })
    }

    /// Each persona's outcome (config index, outcome), once [`AskTell::ask`] returned `None`.
    pub fn outcomes(&self) -> Option<&[(usize, PersonaOutcome)]> {
        self.outcome().map(Vec::as_slice)
    }
}
