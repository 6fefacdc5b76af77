//! The candidate fan-out of balance and generate, written once: each candidate's games (per AI
//! pair or table, `games` each, on the streams (seed, iteration, who, k · games + g)) cut into
//! jobs for the executor, played, and handed back in candidate order.
//!
//! Games per job: one for the local executor (as fine-grained as it can be); elsewhere as many
//! of a candidate's games as leave about 16 jobs per CPU (fewer, larger jobs left threads idle
//! at the end of each batch: with 4 per CPU the shipped balance run took 3.15 s under
//! `--ray roundtrip`, with 16 2.61 s, locally 2.4 s), at most 32. A job carries its candidate's
//! genes, so that it crosses the wire a few times, not once per game.

use crate::exec::{Executor, JobKind};
use crate::rng::derive;
use anyhow::Result;
use serde::{Deserialize, Serialize};

/// Games of one candidate: its genes (balance: the full DNA; generate: the search vector) and,
/// per game, what it is played at (an AI pair, a table) and its stream.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct GameJob {
    /// On the wire as the floats' bits: exact, and much quicker to read than decimal floats.
    #[serde(with = "crate::exec::bits")]
    pub x: Vec<f64>,
    /// (pair or table, seed) of each game.
    pub games: Vec<(usize, u64)>,
}

/// Candidates whose games are played together: those of one iteration with `games` games per
/// pair or table, each `(genes, stream tag who, what it is played with)`.
pub struct Group<'a, P> {
    pub iteration: u64,
    pub games: usize,
    pub cands: Vec<(&'a [f64], u64, P)>,
}

/// Plays every group's candidates' games (`kinds` pairs or tables each) as jobs of kind `K` on
/// `exec` (`ctx` what a job sent elsewhere carries; `play` plays one game here) and returns
/// each candidate's outcomes, pair by pair or table by table, group by group.
pub fn play<K, P, O>(
    exec: &Executor,
    ctx: &K::Context,
    seed: u64,
    kinds: usize,
    groups: &[Group<P>],
    play: impl Fn(&P, usize, u64) -> Result<O> + Sync,
) -> Result<Vec<Vec<Vec<O>>>>
where
    K: JobKind<Job = GameJob, Output = Vec<O>>,
    K::Context: Clone,
    P: Sync,
    O: Send,
{
    let total: usize = groups.iter().map(|g| g.cands.len() * kinds * g.games).sum();
    let chunk = match exec {
        Executor::Local => 1,
        _ => (total / (16 * exec.cpus())).clamp(1, 32),
    };
    let mut jobs = Vec::new();
    // The candidate of each job: (group, index in it).
    let mut of = Vec::new();
    for (gi, group) in groups.iter().enumerate() {
        for (ci, (x, who, _)) in group.cands.iter().enumerate() {
            let games: Vec<(usize, u64)> = (0..kinds)
                .flat_map(|k| (0..group.games).map(move |g| (k, g)))
                .map(|(k, g)| (k, derive(seed, group.iteration, *who, (k * group.games + g) as u64)))
                .collect();
            for piece in games.chunks(chunk) {
                jobs.push(GameJob { x: x.to_vec(), games: piece.to_vec() });
                of.push((gi, ci));
            }
        }
    }
    let outcomes = exec.map::<K>(
        || Ok(ctx.clone()),
        &jobs,
        |i, j| {
            let (gi, ci) = of[i];
            let p = &groups[gi].cands[ci].2;
            j.games.iter().map(|&(k, seed)| play(p, k, seed)).collect()
        },
    )?;
    let mut out: Vec<Vec<Vec<O>>> = groups.iter().map(|g| g.cands.iter().map(|_| Vec::new()).collect()).collect();
    for ((gi, ci), o) in of.into_iter().zip(outcomes) {
        out[gi][ci].extend(o);
    }
    Ok(out)
}
