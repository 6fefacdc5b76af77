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
use anyhow::{Result, anyhow};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::mpsc::{Receiver, SyncSender, sync_channel};
use std::thread::JoinHandle;

type Reply = SyncSender<Result<Vec<Eval>, String>>;

/// A balance run driven by ask and tell.
pub struct AskTell {
    requests: Receiver<(EvalRequest, Reply)>,
    pending: Option<Reply>,
    thread: Option<JoinHandle<Result<Outcome>>>,
    outcome: Option<Outcome>,
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
        let (ask, requests) = sync_channel::<(EvalRequest, Reply)>(0);
        let hook = move |req: &EvalRequest| -> Result<Vec<Eval>> {
            let (reply, answer) = sync_channel(1);
            ask.send((req.clone(), reply)).map_err(|_| anyhow!("the ask/tell driver is gone"))?;
            answer.recv().map_err(|_| anyhow!("the ask/tell driver stopped before telling"))?.map_err(|e| anyhow!(e))
        };
        let opts = RunOptions { resume, exec: exec.clone(), hook: Some(Arc::new(hook)), ..RunOptions::default() };
        let (path, text, run_cfg) = (cfg_path.to_path_buf(), cfg_text.to_string(), cfg.clone());
        let thread = std::thread::Builder::new()
            .name("balance-ask-tell".into())
            .spawn(move || run(&run_cfg, &path, &text, &opts, &|_, _, _, _| {}))?;
        let seed = cfg.balance.seed;
        Ok(AskTell { requests, pending: None, thread: Some(thread), outcome: None, codec, ev, jobs, exec, seed })
    }

    /// The next candidates to evaluate, or `None` when the run is over (its outcome is then
    /// [`AskTell::outcome`]). Asking again before telling is an error.
    pub fn ask(&mut self) -> Result<Option<EvalRequest>> {
        if self.pending.is_some() {
            return Err(anyhow!("ask() again before tell(); expected the evaluations of the last request"));
        }
        match self.requests.recv() {
            Ok((req, reply)) => {
                self.pending = Some(reply);
                Ok(Some(req))
            }
            // The loop ended: its outcome, or its error.
            Err(_) => {
                if let Some(t) = self.thread.take() {
                    let outcome = t.join().map_err(|_| anyhow!("the balance loop panicked"))??;
                    self.outcome = Some(outcome);
                }
                Ok(None)
            }
        }
    }

    /// The evaluations of the last request's candidates, in order.
    pub fn tell(&mut self, evals: Vec<Eval>) -> Result<()> {
        let reply = self.pending.take().ok_or_else(|| anyhow!("tell() without a request; expected ask() first"))?;
        reply.send(Ok(evals)).map_err(|_| anyhow!("the balance loop is gone"))
    }

    /// The built-in evaluation of a request: the games `playforge balance` plays for it.
    pub fn evaluate(&self, req: &EvalRequest) -> Result<Vec<Eval>> {
        Games { codec: &self.codec, ev: &self.ev, exec: &self.exec, jobs: &self.jobs, seed: self.seed }.evaluate_request(req)
    }

    /// The run's outcome, once [`AskTell::ask`] returned `None`.
    pub fn outcome(&self) -> Option<&Outcome> {
        self.outcome.as_ref()
    }

    /// The run's folder (its checkpoint, written after every iteration, is `checkpoint.json`).
    pub fn dir(&self) -> PathBuf {
        super::run::out_dir(&self.ev.cfg)
    }
}

impl Drop for AskTell {
    fn drop(&mut self) {
        // A run left mid-question: refuse the answer, so that its thread ends (with an error).
        if let Some(reply) = self.pending.take() {
            let _ = reply.send(Err("the ask/tell driver was dropped".into()));
        }
    }
}
