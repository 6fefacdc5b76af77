//! Ask/tell over a search command: its loop (the command's own `run`, the same code as the
//! command line's) in a thread of its own whose evaluation hook asks instead of playing — so
//! that a user (the Python package's `playforge.Balance`, `playforge.Generate`) can plug in an
//! evaluation of their own, or hand the built-in one back ([`AskTell::evaluate`]) and get,
//! exactly, the command line's run: the same steps, confirmations, checkpoints and outputs.
//! A driver supplies its built-in evaluation ([`BuiltIn`]) and how to start its run.

use super::RunOptions;
use crate::exec::asktell::AskTell as Questions;
use anyhow::Result;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// A driver's built-in evaluation of a request: the games its command plays for it.
pub trait BuiltIn: Send + 'static {
    /// A batch of candidates to evaluate.
    type Request: Clone + Send + 'static;
    /// One candidate's evaluation.
    type Eval: Send + 'static;
    /// What the run returns at its end.
    type Outcome: Send + 'static;
    fn evaluate(&self, req: &Self::Request) -> Result<Vec<Self::Eval>>;
}

/// The hook a run asks through.
pub type Hook<B> = dyn Fn(&<B as BuiltIn>::Request) -> Result<Vec<<B as BuiltIn>::Eval>> + Send + Sync;

/// A run driven by ask and tell.
pub struct AskTell<B: BuiltIn> {
    questions: Questions<B::Request, Vec<B::Eval>, B::Outcome>,
    built_in: B,
    dir: PathBuf,
}

impl<B: BuiltIn> AskTell<B> {
    /// Starts `run` (given its options: `resume`, the executor, the asking hook) in a thread
    /// named `name`, up to its first question. `dir` is the run's folder.
    pub fn spawn(
        name: &str,
        built_in: B,
        dir: &Path,
        opts: RunOptions<Hook<B>>,
        run: impl FnOnce(&RunOptions<Hook<B>>) -> Result<B::Outcome> + Send + 'static,
    ) -> Result<AskTell<B>> {
        let questions = Questions::start(name, move |asker| {
            let hook = move |req: &B::Request| asker.ask(req.clone());
            let opts = RunOptions { hook: Some(Arc::new(hook) as Arc<Hook<B>>), ..opts };
            run(&opts)
        })?;
        Ok(AskTell { questions, built_in, dir: dir.to_path_buf() })
    }

    /// The next candidates to evaluate, or `None` when the run is over (its outcome is then
    /// [`AskTell::outcome`]). Asking again before telling is an error.
    pub fn ask(&mut self) -> Result<Option<B::Request>> {
        self.questions.ask()
    }

    /// The evaluations of the last request's candidates, in order.
    pub fn tell(&mut self, evals: Vec<B::Eval>) -> Result<()> {
        self.questions.tell(evals)
    }

    /// The built-in evaluation of a request: the games the command line plays for it.
    pub fn evaluate(&self, req: &B::Request) -> Result<Vec<B::Eval>> {
        self.built_in.evaluate(req)
    }

    /// The built-in evaluation's own state (a driver's extra questions: the genes' names).
    pub fn built_in(&self) -> &B {
        &self.built_in
    }

    /// The run's outcome, once [`AskTell::ask`] returned `None`.
    pub fn outcome(&self) -> Option<&B::Outcome> {
        self.questions.outcome()
    }

    /// The run's folder (its checkpoint, written after every step, is `checkpoint.json`).
    pub fn dir(&self) -> PathBuf {
        self.dir.clone()
    }
}
