//! The run skeleton every search command shares, below the drivers (balance, generate,
//! persona, playtest, experiment) and above `exec`, `genes` and `wgdl`: each rule of a run is
//! written here once.
//!
//! - [`stop`]: the one Ctrl-C flag; a loop stops after the step in progress.
//! - [`RunOptions`]: fresh or resumed, an iteration cap, light outputs, the stale-checkpoint
//!   rule, the executor.
//! - [`resume`]: reading a run's checkpoint back under one rule — a checkpoint of another
//!   config or game (its key) is refused, or replaced by a fresh run where the caller asks.
//! - [`Search`] and [`run`]: the loop of an iterative search (balance, generate, personas): one
//!   step at a time (propose, evaluate, confirm, tell, then its history row and checkpoint)
//!   until the search says it is over, the iteration cap is reached or Ctrl-C; work in flight
//!   settled before it stops. Each driver keeps its own checkpoint record, so its files do not
//!   change.
//! - [`grid`]: the commands that are grids of independent jobs (playtest, experiment,
//!   tournament): the jobs not yet done, run, each result kept as it arrives.
//! - [`game`]: the context every job kind sends its workers ([`game::Context`]), a game read
//!   once ([`game::Source`]) and the one hash a checkpoint and a job name their game by
//!   ([`game::game_hash`]: its text and map).
//! - [`content`]: the content file (best encounter, best content, elites), written and read.
//! - [`fanout`]: a batch of candidates' games cut into jobs and played (balance, generate).
//! - [`history`]: history.csv and timing.csv.
//! - [`looks`]: the looks of a sequential test (pool sizes, quantiles, stream tags).
//! - [`asktell`]: a search command's run driven by ask and tell (the Python package's one run
//!   class: balance, generate, personas).
//! - [`Names`]: a list of names (optimizers, algorithms) the config, the CLI and Python read.
//!
//! A new search command is a [`Search`] implementation (or a [`grid`] of jobs) plus its job
//! kind ([`crate::exec::JobKind`], listed in `crate::jobs`).

pub mod asktell;
pub mod content;
pub mod fanout;
pub mod game;
pub mod grid;
pub mod history;
pub mod looks;

use crate::exec::Executor;
use anyhow::{Result, anyhow, bail};
use serde::de::DeserializeOwned;
use std::path::Path;
use std::sync::Arc;

/// The one stop flag: set by Ctrl-C (the CLI's handler), read by every loop, which saves and
/// stops after the step in progress.
pub mod stop {
    use std::sync::atomic::{AtomicBool, Ordering};

    static STOP: AtomicBool = AtomicBool::new(false);

    /// Whether a stop was asked for.
    pub fn requested() -> bool {
        STOP.load(Ordering::SeqCst)
    }

    /// Asks every loop to stop; returns whether a stop had been asked for already.
    pub fn request() -> bool {
        STOP.swap(true, Ordering::SeqCst)
    }
}

/// How to run, beyond the config: the options every search command shares. `H` is the
/// command's own evaluation an ask/tell user plugs in (none by default).
pub struct RunOptions<H: ?Sized = ()> {
    /// Continue from the run folder's checkpoint.
    pub resume: bool,
    /// Stop after this many steps (iterations, generations) in this call; the checkpoint stays
    /// resumable.
    pub max_iterations: Option<u64>,
    /// Skip the charts and replays (an optimizer comparison's many runs).
    pub light: bool,
    /// With `resume`: a checkpoint of another config or game is replaced by a fresh run instead
    /// of being an error (a comparison whose config changed).
    pub restart_stale: bool,
    /// Where the games run (this process by default; `--ray` elsewhere).
    pub exec: Executor,
    /// An evaluation of the user's instead of the built-in games (ask/tell).
    pub hook: Option<Arc<H>>,
}

impl<H: ?Sized> Default for RunOptions<H> {
    fn default() -> Self {
        RunOptions { resume: false, max_iterations: None, light: false, restart_stale: false, exec: Executor::Local, hook: None }
    }
}

impl<H: ?Sized> Clone for RunOptions<H> {
    fn clone(&self) -> Self {
        RunOptions {
            resume: self.resume,
            max_iterations: self.max_iterations,
            light: self.light,
            restart_stale: self.restart_stale,
            exec: self.exec.clone(),
            hook: self.hook.clone(),
        }
    }
}

impl<H: ?Sized> std::fmt::Debug for RunOptions<H> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RunOptions")
            .field("resume", &self.resume)
            .field("max_iterations", &self.max_iterations)
            .field("light", &self.light)
            .field("restart_stale", &self.restart_stale)
            .field("exec", &self.exec)
            .field("hook", &self.hook.is_some())
            .finish()
    }
}

/// A list of names a config key, a command-line flag and the Python API all accept (balance's
/// optimizers, generate's algorithms): defined once, read by all three.
#[derive(Clone, Copy, Debug)]
pub struct Names(pub &'static [&'static str]);

impl Names {
    /// Whether `name` is one of the list.
    pub fn has(&self, name: &str) -> bool {
        self.0.contains(&name)
    }

    /// The list as an error says what it expected: `"es", "sa" or "cma"`.
    pub fn expected(&self) -> String {
        let quoted: Vec<String> = self.0.iter().map(|n| format!("\"{n}\"")).collect();
        match quoted.split_last() {
            Some((last, [])) => last.clone(),
            Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
            None => String::new(),
        }
    }
}

impl std::fmt::Display for Names {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.expected())
    }
}

/// What a checkpoint read back must belong to ([`resume`]).
pub struct Expect<'a> {
    /// The checkpoint's file.
    pub path: &'a Path,
    /// The key a checkpoint of this run holds (its resolved config and game hash).
    pub key: &'a str,
    /// Keys older versions wrote for the same run, still accepted.
    pub legacy: &'a [String],
    /// What the run folder is the folder of, for the error of a `--resume` without a
    /// checkpoint ("config, optimizer and seed"); `None`: a missing checkpoint is a fresh run
    /// (personas run in pieces share one `--resume`).
    pub missing: Option<&'a str>,
}

/// The checkpoint to continue from, under the one rule of every search command: without
/// `resume` none; with it, the file's record when its key (`key_of`) is this run's or a legacy
/// one, checked by `validate`; a record of another config or game is an error naming what
/// differs, or (`restart_stale`) a fresh run.
pub fn resume<C: DeserializeOwned, H: ?Sized>(
    opts: &RunOptions<H>,
    expect: &Expect,
    key_of: impl Fn(&C) -> &str,
    validate: impl FnOnce(&C) -> Result<()>,
) -> Result<Option<C>> {
    if !opts.resume {
        return Ok(None);
    }
    if !expect.path.exists() {
        return match expect.missing {
            Some(what) if !opts.restart_stale => bail!(
                "--resume: no checkpoint in {}; expected the folder of an interrupted run of this {what} (run without --resume to start afresh)",
                expect.path.parent().unwrap_or(expect.path).display()
            ),
            _ => Ok(None),
        };
    }
    let Some(ck) = crate::input::read_checkpoint(expect.path, |_: &C| true, false)? else { return Ok(None) };
    let found = key_of(&ck);
    if found == expect.key || expect.legacy.iter().any(|k| k == found) {
        validate(&ck)?;
        Ok(Some(ck))
    } else if opts.restart_stale {
        Ok(None)
    } else {
        Err(anyhow!(crate::report::run_dir::stale_checkpoint(expect.path, found, expect.key)))
    }
}

/// Writes a checkpoint record atomically.
pub fn save<C: serde::Serialize>(path: &Path, ck: &C) -> Result<()> {
    crate::report::write_atomic(path, serde_json::to_string(ck)?.as_bytes())?;
    Ok(())
}

/// What a step of a search did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Flow {
    /// Go on: the loop asks [`Search::over`] again.
    Next,
    /// The run ended inside the step (a confirmation reached the target).
    End,
}

/// An iterative search as the loop [`run`] drives it. The state between steps is the
/// driver's own checkpoint record `Ck`; the step writes its history row and checkpoint
/// (through [`history`] and [`save`]).
pub trait Search {
    type Ck;
    /// Whether the run is over: its budget spent, its target reached, its steps done.
    fn over(&self, ck: &Self::Ck) -> bool;
    /// Steps begun so far (counted against [`RunOptions::max_iterations`]).
    fn begun(&self, ck: &Self::Ck) -> u64;
    /// One step: propose, evaluate, confirm, tell; its row and checkpoint written.
    fn step(&mut self, ck: &mut Self::Ck) -> Result<Flow>;
    /// Finishes work in flight before the loop stops (balance: a confirmation that waits to
    /// ride along with the next step's games); whether there was any.
    fn settle(&mut self, _ck: &mut Self::Ck) -> Result<bool> {
        Ok(false)
    }
}

/// How a loop ended.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Ended {
    /// Stopped by Ctrl-C ([`stop`]).
    pub interrupted: bool,
    /// Stopped at the iteration cap.
    pub capped: bool,
}

/// Runs `s` from `ck` until it is over, `max_steps` steps were begun in this call, or a stop
/// is asked for; work in flight is settled first (after a stop, the loop ends there).
pub fn run<S: Search>(s: &mut S, ck: &mut S::Ck, max_steps: Option<u64>) -> Result<Ended> {
    let begun0 = s.begun(ck);
    let mut ended = Ended::default();
    loop {
        let capped = max_steps.is_some_and(|m| s.begun(ck) - begun0 >= m);
        let halt = s.over(ck) || capped;
        if stop::requested() {
            ended.interrupted = true;
        }
        if halt || ended.interrupted {
            if s.settle(ck)? && !ended.interrupted {
                continue;
            }
            ended.capped = capped && !s.over(ck);
            break;
        }
        if s.step(ck)? == Flow::End {
            break;
        }
    }
    if stop::requested() {
        ended.interrupted = true;
    }
    Ok(ended)
}
