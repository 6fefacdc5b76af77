//! Ask/tell over the balance loop ([`crate::drive::asktell`]): [`run`] in a thread of its own,
//! its evaluations handed out instead of played (the Python package's `playforge.Balance`).
//! Told the built-in evaluation ([`Games`]), it is exactly the command line's run.

use super::config::BalanceConfig;
use super::dna::Codec;
use super::fitness::{Eval, Evaluator};
use super::jobs::BalanceContext;
use super::optim::{EvalRequest, Games};
use super::run::{Outcome, RunOptions, out_dir, run};
use crate::exec::Executor;
use anyhow::{Result, anyhow};
use std::path::Path;

/// The games `playforge balance` plays for a request.
pub struct BuiltIn {
    codec: Codec,
    ev: Evaluator,
    jobs: BalanceContext,
    exec: Executor,
    seed: u64,
}

impl crate::drive::asktell::BuiltIn for BuiltIn {
    type Request = EvalRequest;
    type Eval = Eval;
    type Outcome = Outcome;

    fn evaluate(&self, req: &EvalRequest) -> Result<Vec<Eval>> {
        Games { codec: &self.codec, ev: &self.ev, exec: &self.exec, jobs: &self.jobs, seed: self.seed }.evaluate_request(req)
    }
}

/// A balance run driven by ask and tell.
pub type AskTell = crate::drive::asktell::AskTell<BuiltIn>;

impl AskTell {
    /// Starts the run of `cfg` (or resumes it from its checkpoint) up to its first question.
    pub fn start(cfg: BalanceConfig, cfg_path: &Path, cfg_text: &str, resume: bool, exec: Executor) -> Result<AskTell> {
        let codec = Codec::new(&cfg, cfg_path, cfg_text)?;
        let ev = Evaluator::new(&cfg, codec.probe()).map_err(|e| anyhow!("{}: {e}", cfg_path.display()))?;
        let jobs = BalanceContext::new(&cfg, cfg_path, cfg_text, &codec)?;
        let built_in = BuiltIn { codec, ev, jobs, exec: exec.clone(), seed: cfg.balance.seed };
        let (path, text, dir) = (cfg_path.to_path_buf(), cfg_text.to_string(), out_dir(&cfg));
        let opts = RunOptions { resume, exec, ..RunOptions::default() };
        AskTell::spawn("balance-ask-tell", built_in, &dir, opts, move |opts| run(&cfg, &path, &text, opts, &|_, _, _, _| {}))
    }
}
