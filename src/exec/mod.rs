//! The executor seam: every fan-out of games hands a batch of *jobs* to an [`Executor`] and gets
//! the results back in job order. A job kind ([`JobKind`]) is plain data on both sides (serde): a
//! *context* sent once per batch (a resolved config, the game's path and content hash), the jobs
//! (a parameter vector, a pair of players, a seed), and their outputs.
//!
//! - [`Executor::Local`] is the rayon fan-out the commands always had: each job runs in this
//!   process on the objects the driver already built, nothing is serialized.
//! - [`Executor::RoundTrip`] runs the worker's path in this process: context and jobs written to
//!   JSON, read back by [`run_kind`] (which builds the worker state from the context alone, as a
//!   remote worker does), outputs written and read back. Tests hold it to the local results byte
//!   for byte, which is the proof that a job carries everything its result depends on.
//! - [`Executor::Remote`] hands the JSON to another executor, today the Ray executor of the
//!   Python package (`--ray ADDRESS`), whose workers call `crate::jobs::run_batch` (the kinds by
//!   name, above the drivers that define them) through the extension.
//!
//! A worker builds the state of a context once and keeps it ([`worker`]): the game is compiled
//! once per worker process, keyed by the context's hash, not once per job.

pub mod asktell;

use anyhow::{Result, anyhow};
use rayon::prelude::*;
use serde::Serialize;
use serde::de::DeserializeOwned;
use std::any::Any;
use std::sync::{Arc, Mutex, OnceLock};

/// A kind of job: what a worker needs (built once per context), and how one job runs on it.
pub trait JobKind: 'static {
    /// The kind's name on the wire (`balance.game`, …).
    const NAME: &'static str;
    /// What every job of a batch shares; sent once per batch.
    type Context: Serialize + DeserializeOwned;
    /// What a worker builds from a context (a compiled game, an evaluator).
    type Worker: Send + Sync + 'static;
    type Job: Serialize + DeserializeOwned + Sync;
    type Output: Serialize + DeserializeOwned + Send;
    fn worker(ctx: &Self::Context) -> Result<Self::Worker>;
    fn run(w: &Self::Worker, job: &Self::Job) -> Result<Self::Output>;
}

/// An executor outside this process: runs a batch of serialized jobs of the named kind and
/// returns their serialized outputs in job order.
pub trait Remote: Send + Sync {
    fn run(&self, kind: &str, context: &str, jobs: Vec<String>) -> Result<Vec<String>>;
    /// A line for the run's summary: the executor, its CPUs, the jobs each node ran.
    fn describe(&self) -> String;
    /// The CPUs the executor runs jobs on (for batching).
    fn cpus(&self) -> usize;
}

/// Where jobs run.
#[derive(Clone, Default)]
pub enum Executor {
    /// This process, on rayon's threads.
    #[default]
    Local,
    /// This process, through the serialized worker path (a test of the seam).
    RoundTrip,
    Remote(Arc<dyn Remote>),
}

impl std::fmt::Debug for Executor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Executor::Local => "Local",
            Executor::RoundTrip => "RoundTrip",
            Executor::Remote(_) => "Remote",
        })
    }
}

impl Executor {
    /// Runs `jobs` and returns their outputs in job order. Locally `local(index, job)` runs each
    /// job on the driver's own objects; elsewhere the kind's [`JobKind::run`] does, on a worker
    /// built from the context `ctx()` makes (only then). The two must give the same outputs
    /// (tested through [`Executor::RoundTrip`]).
    pub fn map<K: JobKind>(
        &self,
        ctx: impl FnOnce() -> Result<K::Context>,
        jobs: &[K::Job],
        local: impl Fn(usize, &K::Job) -> Result<K::Output> + Sync + Send,
    ) -> Result<Vec<K::Output>> {
        if jobs.is_empty() {
            return Ok(Vec::new());
        }
        let remote = match self {
            Executor::Local => return jobs.par_iter().enumerate().map(|(i, j)| local(i, j)).collect(),
            Executor::RoundTrip => None,
            Executor::Remote(r) => Some(r),
        };
        let context = serde_json::to_string(&ctx()?)?;
        let wire: Vec<String> = jobs.par_iter().map(serde_json::to_string).collect::<Result<_, _>>()?;
        let outputs = match remote {
            None => run_kind::<K>(&context, &wire, 0)?,
            Some(r) => r.run(K::NAME, &context, wire)?,
        };
        if outputs.len() != jobs.len() {
            return Err(anyhow!("the executor returned {} results for {} {} jobs", outputs.len(), jobs.len(), K::NAME));
        }
        outputs.par_iter().map(|o| serde_json::from_str(o).map_err(|e| anyhow!("a {} result from the executor: {e}", K::NAME))).collect()
    }

    /// The CPUs jobs run on at once.
    pub fn cpus(&self) -> usize {
        match self {
            Executor::Local | Executor::RoundTrip => rayon::current_num_threads(),
            Executor::Remote(r) => r.cpus().max(1),
        }
    }

    /// What the run's summary says of the executor.
    pub fn describe(&self) -> String {
        match self {
            Executor::Local => format!("local ({} threads)", rayon::current_num_threads()),
            Executor::RoundTrip => "local, serialized jobs (round trip)".into(),
            Executor::Remote(r) => r.describe(),
        }
    }
}

/// Makes a remote executor from a `--ray ADDRESS`; set by the Python package before it runs
/// the command line, so that `playforge … --ray` works from the wheel's console script.
pub type Connect = dyn Fn(&str) -> Result<Arc<dyn Remote>> + Send + Sync;

fn connector() -> &'static Mutex<Option<Arc<Connect>>> {
    static CONNECT: OnceLock<Mutex<Option<Arc<Connect>>>> = OnceLock::new();
    CONNECT.get_or_init(|| Mutex::new(None))
}

/// Installs the `--ray` connector (the Python package does, before it runs the command line).
pub fn set_connector(c: Arc<Connect>) {
    *connector().lock().unwrap_or_else(|p| p.into_inner()) = Some(c);
}

/// Whether a `--ray` connector is installed (this process runs inside the Python package).
pub fn can_connect() -> bool {
    connector().lock().unwrap_or_else(|p| p.into_inner()).is_some()
}

/// The executor of a `--ray ADDRESS` (`local`: a private local Ray instance; `auto`: the running
/// cluster; `ray://host:port` or `host:port`: that cluster's address).
pub fn connect(address: &str) -> Result<Executor> {
    let c = connector().lock().unwrap_or_else(|p| p.into_inner()).clone();
    match c {
        Some(c) => Ok(Executor::Remote(c(address)?)),
        None => Err(anyhow!(
            "--ray {address}: this playforge runs without its Python package, which the Ray executor needs; expected it installed (`bash python/setup.sh`, then `.venv/bin/playforge …` or `python -m playforge …`)"
        )),
    }
}

/// Runs a serialized batch of kind `K` on this process's worker for `context` (built on first
/// use), on `threads` threads: 0 = rayon's global pool (in-process), 1 = one after another, n = a
/// pool of n threads kept by this process (a remote task that holds n CPUs). Outputs are
/// serialized, in job order. By name, for a remote worker: `crate::jobs::run_batch`.
pub fn run_kind<K: JobKind>(context: &str, jobs: &[String], threads: usize) -> Result<Vec<String>> {
    let w = worker::<K>(context)?;
    let one = |j: &String| -> Result<String> {
        let job: K::Job = serde_json::from_str(j).map_err(|e| anyhow!("a {} job: {e}", K::NAME))?;
        Ok(serde_json::to_string(&K::run(&w, &job)?)?)
    };
    match threads {
        0 => jobs.par_iter().map(one).collect(),
        1 => jobs.iter().map(one).collect(),
        n => pool(n)?.install(|| jobs.par_iter().map(one).collect()),
    }
}

/// This process's pool of `n` threads (made once per size).
fn pool(n: usize) -> Result<Arc<rayon::ThreadPool>> {
    static POOLS: OnceLock<Mutex<Vec<(usize, Arc<rayon::ThreadPool>)>>> = OnceLock::new();
    let mut pools = POOLS.get_or_init(|| Mutex::new(Vec::new())).lock().unwrap_or_else(|p| p.into_inner());
    if let Some((_, p)) = pools.iter().find(|(k, _)| *k == n) {
        return Ok(p.clone());
    }
    let p = Arc::new(rayon::ThreadPoolBuilder::new().num_threads(n).build()?);
    pools.push((n, p.clone()));
    Ok(p)
}

/// Worker states kept per process, newest last: (kind, hash of the context text, state).
type Cache = Vec<(&'static str, u64, Arc<dyn Any + Send + Sync>)>;
const CACHED: usize = 8;

fn cache() -> &'static Mutex<Cache> {
    static CACHE: OnceLock<Mutex<Cache>> = OnceLock::new();
    CACHE.get_or_init(|| Mutex::new(Vec::new()))
}

/// The worker state of a serialized context: from the cache, or built and cached (the oldest
/// of `CACHED` dropped).
pub fn worker<K: JobKind>(context: &str) -> Result<Arc<K::Worker>> {
    let h = fnv(context.as_bytes());
    {
        let c = cache().lock().unwrap_or_else(|p| p.into_inner());
        if let Some(w) = c.iter().find(|(k, ch, _)| *k == K::NAME && *ch == h).and_then(|(_, _, w)| w.clone().downcast::<K::Worker>().ok())
        {
            return Ok(w);
        }
    }
    let ctx: K::Context = serde_json::from_str(context).map_err(|e| anyhow!("a {} context: {e}", K::NAME))?;
    let w = Arc::new(K::worker(&ctx)?);
    let mut c = cache().lock().unwrap_or_else(|p| p.into_inner());
    if c.len() >= CACHED {
        c.remove(0);
    }
    c.push((K::NAME, h, w.clone()));
    Ok(w)
}

/// How many worker states this process has built and keeps (tests: one per context).
pub fn cached_workers() -> usize {
    cache().lock().unwrap_or_else(|p| p.into_inner()).len()
}

/// The last few candidates a worker built, by their exact vector: consecutive jobs of a batch
/// mostly share one, which is then built once.
pub struct BuiltCache<T> {
    cap: usize,
    built: std::sync::Mutex<Vec<(Vec<f64>, T)>>,
}

impl<T: Clone> BuiltCache<T> {
    pub fn new(cap: usize) -> BuiltCache<T> {
        BuiltCache { cap: cap.max(1), built: std::sync::Mutex::new(Vec::new()) }
    }

    /// The candidate built from `x`: the kept one, or `build()`'s (then kept, the oldest dropped).
    pub fn get(&self, x: &[f64], build: impl FnOnce() -> Result<T>) -> Result<T> {
        let same = |d: &[f64]| d.len() == x.len() && d.iter().zip(x).all(|(a, b)| a.to_bits() == b.to_bits());
        if let Some((_, p)) = self.built.lock().unwrap_or_else(|p| p.into_inner()).iter().find(|(d, _)| same(d)) {
            return Ok(p.clone());
        }
        let p = build()?;
        let mut built = self.built.lock().unwrap_or_else(|p| p.into_inner());
        if built.len() >= self.cap {
            built.remove(0);
        }
        built.push((x.to_vec(), p.clone()));
        Ok(p)
    }
}

/// Refuses a worker whose game at `path` hashes to `found`, not `expected` (what the driver
/// compiled): jobs name their game by path, and a node with another version of it must not
/// play them.
pub fn same_game(path: &std::path::Path, found: u64, expected: u64) -> Result<()> {
    if found != expected {
        return Err(anyhow!(
            "{}: this worker reads another version of the game than the driver (hash {found:016x}, expected {expected:016x}); expected the same files on every node",
            path.display()
        ));
    }
    Ok(())
}

/// FNV-1a, 64 bits: the cache key of a context and the content hash of a file.
pub fn fnv(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        h = (h ^ b as u64).wrapping_mul(0x0100_0000_01b3);
    }
    h
}

/// `Vec<f64>` on the wire as the integers of its bits (`#[serde(with = "crate::exec::bits")]`):
/// exact, and much quicker to read than decimal floats.
pub mod bits {
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(v: &[f64], s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(v.iter().map(|x| x.to_bits()))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<f64>, D::Error> {
        Ok(Vec::<u64>::deserialize(d)?.into_iter().map(f64::from_bits).collect())
    }
}
