//! The grid runner: a command that is a grid of independent jobs (playtest's replicates,
//! experiment's runs, tournament's games) hands the jobs not yet done to [`run`], which runs them
//! on the executor and gives each result to the caller's `keep` as it arrives — the caller's
//! files are the checkpoint. In this process every job is kept the moment it ends; elsewhere
//! (`--ray`) a wave of two jobs per CPU at a time, so that a driver stopped mid-run keeps all
//! but the wave in flight. Between jobs and between waves a stop ([`super::stop`]) ends the run.

use crate::exec::{Executor, JobKind};
use anyhow::Result;
use rayon::prelude::*;

/// How jobs run in this process.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Local {
    /// On rayon's threads, all at once.
    Parallel,
    /// `n` at a time on a pool of their own (1: one after another; wall-clock budgets need the
    /// machine to themselves).
    Threads(usize),
}

/// Runs `todo` (job `i` of the grid is `todo[i]`): in this process by `local(i, job)`, elsewhere through the kind's worker with the context
/// `ctx()` makes. Every result is handed to `keep(i, output)` as soon as it is known. Returns
/// whether a stop ended the run early.
pub fn run<K: JobKind>(
    exec: &Executor,
    how: Local,
    ctx: impl Fn() -> Result<K::Context>,
    todo: &[K::Job],
    local: impl Fn(usize, &K::Job) -> Result<K::Output> + Sync + Send,
    keep: impl Fn(usize, K::Output) -> Result<()> + Sync + Send,
) -> Result<bool> {
    let one = |i: usize, j: &K::Job| -> Result<()> {
        if super::stop::requested() {
            return Ok(());
        }
        keep(i, local(i, j)?)
    };
    match exec {
        Executor::Local => match how {
            Local::Parallel => todo.par_iter().enumerate().try_for_each(|(i, j)| one(i, j))?,
            Local::Threads(1) => todo.iter().enumerate().try_for_each(|(i, j)| one(i, j))?,
            Local::Threads(n) => {
                let pool = rayon::ThreadPoolBuilder::new().num_threads(n).build()?;
                pool.install(|| todo.par_iter().enumerate().try_for_each(|(i, j)| one(i, j)))?
            }
        },
        _ => {
            let wave = 2 * exec.cpus();
            for (w, chunk) in todo.chunks(wave.max(1)).enumerate() {
                if super::stop::requested() {
                    break;
                }
                let outs = exec.map::<K>(&ctx, chunk, |i, j| local(w * wave + i, j))?;
                for (i, out) in outs.into_iter().enumerate() {
                    keep(w * wave + i, out)?;
                }
            }
        }
    }
    Ok(super::stop::requested())
}
