//! Ask/tell over a search command: its loop (the command's own `run`, the same code as the
//! command line's) in a thread of its own whose evaluation hook asks instead of playing — so
//! that a user (the Python package's `playforge.Balance`, `playforge.Generate`) can plug in an
//! evaluation of their own, or hand the built-in one back ([`AskTell::evaluate`]) and get,
//! exactly, the command line's run: the same steps, confirmations, checkpoints and outputs.
//! A driver supplies its built-in evaluation ([`BuiltIn`]) and how to start its run: with an
//! evaluation hook in its [`RunOptions`] (balance, generate: [`AskTell::spawn`]) or, where its
//! questions are batches of jobs, with the asker as its executor (personas:
//! [`AskTell::spawn_asker`]).

use super::RunOptions;
use crate::exec::asktell::{AskTell as Questions, Asker};
use anyhow::{Result, anyhow};
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
    /// How many evaluations a request wants, where the driver checks a told answer's length
    /// here (personas: one result per game); `None` leaves the check to the run.
    fn size(&self, _req: &Self::Request) -> Option<usize> {
        None
    }
    /// A driver's `what` for a told answer of the wrong length (`"{n} results told for {m} games"`).
    fn unit(&self) -> (&'static str, &'static str) {
        ("evaluations", "candidates")
    }
}

/// The hook a run asks through.
pub type Hook<B> = dyn Fn(&<B as BuiltIn>::Request) -> Result<Vec<<B as BuiltIn>::Eval>> + Send + Sync;

/// A run driven by ask and tell.
pub struct AskTell<B: BuiltIn> {
    questions: Questions<B::Request, Vec<B::Eval>, B::Outcome>,
    built_in: B,
    dir: PathBuf,
    /// The evaluations the last request wants, where [`BuiltIn::size`] says.
    asked: Option<usize>,
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
        AskTell::spawn_asker(name, built_in, dir, move |asker| {
            let hook = move |req: &B::Request| asker.ask(req.clone());
            let opts = RunOptions { hook: Some(Arc::new(hook) as Arc<Hook<B>>), ..opts };
            run(&opts)
        })
    }

    /// Starts `run` in a thread named `name`, handing it the asker (a run that asks through its
    /// executor: each batch of jobs one question). `dir` is the run's folder.
    pub fn spawn_asker(
        name: &str,
        built_in: B,
        dir: &Path,
        run: impl FnOnce(Asker<B::Request, Vec<B::Eval>>) -> Result<B::Outcome> + Send + 'static,
    ) -> Result<AskTell<B>> {
        let questions = Questions::start(name, run)?;
        Ok(AskTell { questions, built_in, dir: dir.to_path_buf(), asked: None })
    }

    /// The next candidates to evaluate, or `None` when the run is over (its outcome is then
    /// [`AskTell::outcome`]). Asking again before telling is an error.
    pub fn ask(&mut self) -> Result<Option<B::Request>> {
        let req = self.questions.ask()?;
        self.asked = req.as_ref().and_then(|r| self.built_in.size(r));
        Ok(req)
    }

    /// The evaluations of the last request's candidates, in order.
    pub fn tell(&mut self, evals: Vec<B::Eval>) -> Result<()> {
        if let Some(n) = self.asked
            && evals.len() != n
        {
            let (evals_word, asked_word) = self.built_in.unit();
            let e =
                format!("{} {evals_word} told for {n} {asked_word}; expected one per {}", evals.len(), asked_word.trim_end_matches('s'));
            self.questions.refuse(e.clone());
            return Err(anyhow!(e));
        }
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
