//! Ask/tell: the balance loop of [`run`] in a thread of its own, its
//! evaluations handed out instead of played — so that a user (the Python package's
//! `playforge.Balance`) can plug in an evaluation of their own, or hand the built-in one back
//! ([`AskTell::evaluate`]) and get, exactly, the command line's run. The loop is the same code
//! as `playforge balance`: the same optimizer steps, confirmations, checkpoints and outputs;
//! only where an evaluation comes from differs.

use super::config::BalanceConfig;
use super::dna::Codec;
use super::fitness::{Eval, Evaluator};
use super::jobs::BalanceContext;
use super::optim::{EvalRequest, Games};
use super::run::{Outcome, RunOptions, run};
use crate::exec::Executor;
use crate::exec::asktell::AskTell as Questions;
use anyhow::{Result, anyhow};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// A balance run driven by ask and tell.
pub struct AskTell {
    questions: Questions<EvalRequest, Vec<Eval>, Outcome>,
    codec: Codec,
    ev: Evaluator,
    jobs: BalanceContext,
    exec: Executor,
    seed: u64,
}

impl AskTell {
    /// Starts the run of `cfg` (or resumes it from its checkpoint) up to its first question.
    pub fn start(cfg: BalanceConfig, cfg_path: &Path, cfg_text: &str, resume: bool, exec: Executor) -> Result<AskTell> {
        let codec = Codec::new(&cfg, cfg_path, cfg_text)?;
        let ev = Evaluator::new(&cfg, &codec.probe).map_err(|e| anyhow!("{}: {e}", cfg_path.display()))?;
        let jobs = BalanceContext::new(&cfg, cfg_path, cfg_text, &codec)?;
        let (path, text, run_cfg, run_exec) = (cfg_path.to_path_buf(), cfg_text.to_string(), cfg.clone(), exec.clone());
        let questions = Questions::start("balance-ask-tell", move |asker| {
            let hook = move |req: &EvalRequest| asker.ask(req.clone());
            let opts = RunOptions { resume, exec: run_exec, hook: Some(Arc::new(hook)), ..RunOptions::default() };
            run(&run_cfg, &path, &text, &opts, &|_, _, _, _| {})
        })?;
        let seed = cfg.balance.seed;
        Ok(AskTell { questions, codec, ev, jobs, exec, seed })
    }

    /// The next candidates to evaluate, or `None` when the run is over (its outcome is then
    /// [`AskTell::outcome`]). Asking again before telling is an error.
    pub fn ask(&mut self) -> Result<Option<EvalRequest>> {
        self.questions.ask()
    }

    /// The evaluations of the last request's candidates, in order.
    pub fn tell(&mut self, evals: Vec<Eval>) -> Result<()> {
        self.questions.tell(evals)
    }

    /// The built-in evaluation of a request: the games `playforge balance` plays for it.
    pub fn evaluate(&self, req: &EvalRequest) -> Result<Vec<Eval>> {
        Games { codec: &self.codec, ev: &self.ev, exec: &self.exec, jobs: &self.jobs, seed: self.seed }.evaluate_request(req)
    }

    /// The run's outcome, once [`AskTell::ask`] returned `None`.
    pub fn outcome(&self) -> Option<&Outcome> {
        self.questions.outcome()
    }

    /// The run's folder (its checkpoint, written after every iteration, is `checkpoint.json`).
    pub fn dir(&self) -> PathBuf {
        super::run::out_dir(&self.ev.cfg)
    }
}
