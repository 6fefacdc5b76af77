//! Every job kind by name: the worker's entry point. A remote executor's task (the Ray workers
//! of the Python package) receives a kind's name, a serialized context and serialized jobs;
//! [`run_batch`] finds the kind among those the drivers define (each beside the worker it runs) and runs them through
//! [`exec::run_kind`]. This table sits above the drivers so that [`exec`], which every driver
//! uses, names none of them.

use crate::exec::{self, JobKind};
use anyhow::{Result, anyhow};

use crate::balance::jobs::BalanceGame;
use crate::balance::landscape::LandscapeSample;
use crate::balance::verify::VerifyGame;
use crate::experiment::repeat::ExperimentRun;
use crate::experiment::tournament::TournamentGame;
use crate::generate::jobs::GenerateGame;
use crate::persona::jobs::PersonaGame;
use crate::playtest::jobs::PlaytestReplicate;

/// Writes [`KINDS`] and [`run_batch`] from one list, so that a kind cannot be in one and not
/// the other.
macro_rules! job_kinds {
    ($($kind:ty),* $(,)?) => {
        /// The job kinds [`run_batch`] knows.
        pub const KINDS: &[&str] = &[$(<$kind>::NAME),*];

        /// Runs a serialized batch of the named kind on this process's worker for `context`
        /// (built on first use), on `threads` threads: 0 = rayon's global pool (in-process), 1 =
        /// one after another, n = a pool of n threads kept by this process (a remote task that
        /// holds n CPUs). Outputs are serialized, in job order.
        pub fn run_batch(kind: &str, context: &str, jobs: &[String], threads: usize) -> Result<Vec<String>> {
            $(
                if kind == <$kind>::NAME {
                    return exec::run_kind::<$kind>(context, jobs, threads);
                }
            )*
            Err(anyhow!("unknown job kind `{kind}`; expected one of: {}", KINDS.join(", ")))
        }
    };
}

job_kinds!(BalanceGame, LandscapeSample, VerifyGame, PersonaGame, PlaytestReplicate, TournamentGame, ExperimentRun, GenerateGame);
