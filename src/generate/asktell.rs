//! Ask/tell over the generate loop ([`crate::drive::asktell`]): [`run`] in a thread of its
//! own, its evaluations handed out instead of played (the Python package's
//! `playforge.Generate`). Told the built-in evaluation it is exactly the command line's run;
//! [`AskTell::evaluate`] also evaluates any batch of genes a user makes up, which is how another
//! optimizer (pyribs's schedulers, say) drives playforge's evaluation: the same games, the same
//! measures, the same quality and descriptors.

use super::config::GenerateConfig;
use super::jobs::{GenerateContext, Setup};
use super::quality::Eval;
use super::run::{EvalRequest, Games, Outcome, RunOptions, out_dir, run};
use crate::exec::Executor;
use anyhow::Result;
use std::path::Path;

/// The games `playforge generate` plays for a request.
pub struct BuiltIn {
    setup: Setup,
    ctx: GenerateContext,
    exec: Executor,
    seed: u64,
}

impl crate::drive::asktell::BuiltIn for BuiltIn {
    type Request = EvalRequest;
    type Eval = Eval;
    type Outcome = Outcome;

    fn evaluate(&self, req: &EvalRequest) -> Result<Vec<Eval>> {
        Games { setup: &self.setup, exec: &self.exec, ctx: &self.ctx, seed: self.seed, hook: None }.evaluate_request(req)
    }
}

/// A generate run driven by ask and tell.
pub type AskTell = crate::drive::asktell::AskTell<BuiltIn>;

impl AskTell {
    /// Starts the run of `cfg` (or resumes it from its checkpoint) up to its first question.
    pub fn start(cfg: GenerateConfig, cfg_path: &Path, cfg_text: &str, resume: bool, exec: Executor) -> Result<AskTell> {
        let setup = Setup::new(&cfg, cfg_path, cfg_text)?;
        let ctx = GenerateContext::new(&cfg, cfg_path, cfg_text, &setup.codec)?;
        let built_in = BuiltIn { setup, ctx, exec: exec.clone(), seed: cfg.generate.seed };
        let (path, text, dir) = (cfg_path.to_path_buf(), cfg_text.to_string(), out_dir(&cfg));
        let opts = RunOptions { resume, exec, ..RunOptions::default() };
        AskTell::spawn("generate-ask-tell", built_in, &dir, opts, move |opts| run(&cfg, &path, &text, opts, &|_, _, _| {}))
    }

    /// The genes' names, in the order of a candidate's `genes`.
    pub fn gene_names(&self) -> Vec<String> {
        self.built_in().gene_names()
    }
}

impl BuiltIn {
    /// The genes' names, in the order of a candidate's `genes`.
    pub fn gene_names(&self) -> Vec<String> {
        self.setup.codec.genes.iter().map(|g| g.name.clone()).collect()
    }
}
