//! Ask/tell over the persona loop: [`run_chosen`] in a thread of its own, with an executor
//! that hands each batch of games out instead of playing it. A user (the Python package's
//! `playforge.Personas`) gets the games to play — the agent (random, or MCTS with its selection
//! formula as exact text and its reward), the chance seed and the agent's stream — and tells
//! each game's result; [`AskTell::evaluate`] is the built-in play, which told back gives the
//! command line's run, file for file.

use super::jobs::{GameJob, PersonaGame};
use super::play::GameResult;
use super::run::{PersonaOutcome, Setup, run_chosen};
use crate::exec::{Executor, JobKind, Remote};
use anyhow::{Result, anyhow};
use rayon::prelude::*;
use std::path::Path;
use std::sync::atomic::AtomicU64;
use std::sync::mpsc::{Receiver, SyncSender, sync_channel};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

type Reply = SyncSender<Result<Vec<GameResult>, String>>;

/// The executor of an ask/tell run: each batch becomes a question.
struct Questions(Mutex<SyncSender<(Vec<GameJob>, Reply)>>);

impl Remote for Questions {
    fn run(&self, kind: &str, _context: &str, jobs: Vec<String>) -> Result<Vec<String>> {
        if kind != PersonaGame::NAME {
            return Err(anyhow!("ask/tell over personas got `{kind}` jobs; expected {}", PersonaGame::NAME));
        }
        let jobs: Vec<GameJob> = jobs.iter().map(|j| serde_json::from_str(j)).collect::<Result<_, _>>()?;
        let (reply, answer) = sync_channel(1);
        self.0.lock().unwrap_or_else(|p| p.into_inner()).send((jobs, reply)).map_err(|_| anyhow!("the ask/tell driver is gone"))?;
        let results = answer.recv().map_err(|_| anyhow!("the ask/tell driver stopped before telling"))?.map_err(|e| anyhow!(e))?;
        results.iter().map(|r| Ok(serde_json::to_string(r)?)).collect()
    }
    fn describe(&self) -> String {
        "ask/tell".into()
    }
    fn cpus(&self) -> usize {
        1
    }
}

/// A persona run driven by ask and tell.
pub struct AskTell {
    requests: Receiver<(Vec<GameJob>, Reply)>,
    pending: Option<(Reply, usize)>,
    thread: Option<JoinHandle<Result<Vec<(usize, PersonaOutcome)>>>>,
    outcomes: Option<Vec<(usize, PersonaOutcome)>>,
    /// The built-in play's own setup (the run's is in its thread).
    player: Setup,
}

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
        let (ask, requests) = sync_channel(0);
        setup.exec = Executor::Remote(Arc::new(Questions(Mutex::new(ask))));
        let thread = std::thread::Builder::new().name("personas-ask-tell".into()).spawn(move || {
            let done = AtomicU64::new(0);
            run_chosen(&setup, &chosen, resume, &done, &|_| {})
        })?;
        Ok(AskTell { requests, pending: None, thread: Some(thread), outcomes: None, player })
    }

    /// The next games to play, or `None` when the run is over.
    pub fn ask(&mut self) -> Result<Option<Vec<GameJob>>> {
        if self.pending.is_some() {
            return Err(anyhow!("ask() again before tell(); expected the results of the last games"));
        }
        match self.requests.recv() {
            Ok((jobs, reply)) => {
                self.pending = Some((reply, jobs.len()));
                Ok(Some(jobs))
            }
            Err(_) => {
                if let Some(t) = self.thread.take() {
                    self.outcomes = Some(t.join().map_err(|_| anyhow!("the persona loop panicked"))??);
                }
                Ok(None)
            }
        }
    }

    /// The results of the last games asked, in order.
    pub fn tell(&mut self, results: Vec<GameResult>) -> Result<()> {
        let (reply, n) = self.pending.take().ok_or_else(|| anyhow!("tell() without a request; expected ask() first"))?;
        if results.len() != n {
            let e = format!("{} results told for {n} games; expected one per game", results.len());
            let _ = reply.send(Err(e.clone()));
            return Err(anyhow!(e));
        }
        reply.send(Ok(results)).map_err(|_| anyhow!("the persona loop is gone"))
    }

    /// The built-in play of games (what `playforge personas` plays), on this process's threads.
    pub fn evaluate(&self, jobs: &[GameJob]) -> Result<Vec<GameResult>> {
        let player = &self.player;
        jobs.par_iter().map(|j| PersonaGame::run(player, j)).collect()
    }

    /// Each persona's outcome (config index, outcome), once [`AskTell::ask`] returned `None`.
    pub fn outcomes(&self) -> Option<&[(usize, PersonaOutcome)]> {
        self.outcomes.as_deref()
    }

    /// The run's folder.
    pub fn dir(&self) -> &Path {
        &self.player.out_dir
    }
}

impl Drop for AskTell {
    fn drop(&mut self) {
        if let Some((reply, _)) = self.pending.take() {
            let _ = reply.send(Err("the ask/tell driver was dropped".into()));
        }
    }
}
