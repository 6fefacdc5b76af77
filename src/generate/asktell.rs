//! Ask/tell: the generate loop of [`run`] in a thread of its own, its evaluations handed out
//! instead of played — so that a user (the Python package's `playforge.Generate`) can plug in an
//! evaluation of their own, or hand the built-in one back ([`AskTell::evaluate`]) and get,
//! exactly, the command line's run. [`AskTell::evaluate`] also evaluates any batch of genes a
//! user makes up, which is how another optimizer (pyribs's schedulers, say) drives playforge's
//! evaluation: the same games, the same measures, the same quality and descriptors.

use super::config::GenerateConfig;
use super::jobs::{GenerateContext, Setup};
use super::quality::Eval;
use super::run::{EvalRequest, Games, Outcome, RunOptions, out_dir, run};
use crate::exec::Executor;
use crate::exec::asktell::AskTell as Questions;
use anyhow::Result;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// A generate run driven by ask and tell.
pub struct AskTell {
    questions: Questions<EvalRequest, Vec<Eval>, Outcome>,
    setup: Setup,
    ctx: GenerateContext,
    exec: Executor,
    cfg: GenerateConfig,
}

impl AskTell {
    /// Starts the run of `cfg` (or resumes it from its checkpoint) up to its first question.
    pub fn start(cfg: GenerateConfig, cfg_path: &Path, cfg_text: &str, resume: bool, exec: Executor) -> Result<AskTell> {
        let setup = Setup::new(&cfg, cfg_path, cfg_text)?;
        let ctx = GenerateContext::new(&cfg, cfg_path, cfg_text, &setup.codec)?;
        let (path, text, run_cfg, run_exec) = (cfg_path.to_path_buf(), cfg_text.to_string(), cfg.clone(), exec.clone());
        let questions = Questions::start("generate-ask-tell", move |asker| {
            let hook = move |req: &EvalRequest| asker.ask(req.clone());
            let opts = RunOptions { resume, exec: run_exec, hook: Some(Arc::new(hook)), ..RunOptions::default() };
            run(&run_cfg, &path, &text, &opts, &|_, _, _| {})
        })?;
        Ok(AskTell { questions, setup, ctx, exec, cfg })
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

    /// The built-in evaluation of a request: the games `playforge generate` plays for it.
    pub fn evaluate(&self, req: &EvalRequest) -> Result<Vec<Eval>> {
        Games { setup: &self.setup, exec: &self.exec, ctx: &self.ctx, seed: self.cfg.generate.seed, hook: None }.evaluate_request(req)
    }

    /// The run's outcome, once [`AskTell::ask`] returned `None`.
    pub fn outcome(&self) -> Option<&Outcome> {
        self.questions.outcome()
    }

    /// The run's folder (its checkpoint, written after every iteration, is `checkpoint.json`).
    pub fn dir(&self) -> PathBuf {
        out_dir(&self.cfg)
    }

    /// The genes' names, in the order of a candidate's `genes`.
    pub fn gene_names(&self) -> Vec<String> {
        self.setup.codec.genes.iter().map(|g| g.name.clone()).collect()
    }
}
