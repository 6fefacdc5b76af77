//! Game processes playing episodes in parallel for one search: one thread per process, each
//! owning its [`Worker`]. An episode whose process crashed, hung or talked garbage is retried on
//! a fresh process (up to `retries` times); one whose outcome broke it is not (it would break
//! again) and comes back as its fault. A process that cannot be started twice in a row stops
//! the run. Results come back in the order the episodes were started, whatever order the
//! processes finish them in, so that the search is the same on 1 or N processes.

use super::process::{Fault, FaultKind, Killer, Launch, Worker};
use super::protocol::{Episode, Hello, Outcome};
use super::tree::Episodes;
use anyhow::{Result, anyhow};
use std::collections::{BTreeMap, VecDeque};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, Sender, channel};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

type Done = (u64, Result<Outcome, Fault>);

/// N game processes.
pub struct Pool {
    jobs: Option<Sender<Episode>>,
    results: Receiver<Done>,
    waiting: BTreeMap<u64, Result<Outcome, Fault>>,
    order: VecDeque<u64>,
    threads: Vec<JoinHandle<()>>,
    killers: Arc<Mutex<Vec<Option<Killer>>>>,
    closed: Arc<AtomicBool>,
    /// Processes started again after a fault (each retry of an episode is one).
    pub restarts: Arc<AtomicU64>,
}

/// Starts the game, and once more if the first start timed out or died.
pub fn start(launch: &Launch) -> Result<Worker, Fault> {
    match Worker::start(launch) {
        Err(f) if f.kind != FaultKind::Refused => Worker::start(launch)
            .map_err(|g| Fault { kind: FaultKind::Refused, message: format!("{}; started again: {}", f.message, g.message) }),
        r => r,
    }
}

/// The game's hello: one process started, introduced and stopped.
pub fn probe(launch: &Launch) -> Result<Hello> {
    let w = start(launch).map_err(|f| anyhow!("{f}"))?;
    let hello = w.hello.clone();
    w.stop();
    Ok(hello)
}

impl Pool {
    /// `processes` threads, each starting its process on its first episode.
    pub fn new(launch: &Launch, processes: usize, retries: u32) -> Pool {
        let (jobs, inbox) = channel::<Episode>();
        let (outbox, results) = channel::<Done>();
        let inbox = Arc::new(Mutex::new(inbox));
        let killers = Arc::new(Mutex::new(vec![None; processes.max(1)]));
        let restarts = Arc::new(AtomicU64::new(0));
        let closed = Arc::new(AtomicBool::new(false));
        let threads = (0..processes.max(1))
            .map(|slot| {
                let shared = Shared {
                    inbox: inbox.clone(),
                    outbox: outbox.clone(),
                    killers: killers.clone(),
                    restarts: restarts.clone(),
                    closed: closed.clone(),
                };
                let launch = launch.clone();
                std::thread::spawn(move || serve(slot, &launch, retries, &shared))
            })
            .collect();
        Pool { jobs: Some(jobs), results, waiting: BTreeMap::new(), order: VecDeque::new(), threads, killers, closed, restarts }
    }
}

/// What a pool's threads share.
struct Shared {
    inbox: Arc<Mutex<Receiver<Episode>>>,
    outbox: Sender<Done>,
    killers: Arc<Mutex<Vec<Option<Killer>>>>,
    restarts: Arc<AtomicU64>,
    closed: Arc<AtomicBool>,
}

fn serve(slot: usize, launch: &Launch, retries: u32, sh: &Shared) {
    let mut worker: Option<Worker> = None;
    let set_killer = |k: Option<Killer>| sh.killers.lock().unwrap_or_else(|e| e.into_inner())[slot] = k;
    loop {
        let next = sh.inbox.lock().unwrap_or_else(|e| e.into_inner()).recv();
        let Ok(ep) = next else { break };
        if sh.closed.load(Ordering::Relaxed) {
            break;
        }
        let mut tries = 0;
        let result = loop {
            if worker.is_none() {
                match start(launch) {
                    Ok(w) => {
                        set_killer(Some(w.killer()));
                        // A pool dropped while this process started: no episode on it.
                        if sh.closed.load(Ordering::Relaxed) {
                            set_killer(None);
                            return;
                        }
                        worker = Some(w);
                    }
                    Err(f) => break Err(Fault { kind: FaultKind::Refused, message: f.message }),
                }
            }
            let Some(w) = worker.as_mut() else { continue };
            match w.play(&ep) {
                Ok(o) => break Ok(o),
                Err(f) => {
                    worker = None;
                    set_killer(None);
                    if sh.closed.load(Ordering::Relaxed) {
                        return;
                    }
                    if f.kind.retry() && tries < retries {
                        tries += 1;
                        sh.restarts.fetch_add(1, Ordering::Relaxed);
                        continue;
                    }
                    let message = if tries > 0 { format!("{} (after {tries} retries)", f.message) } else { f.message };
                    break Err(Fault { kind: f.kind, message });
                }
            }
        };
        if sh.outbox.send((ep.id, result)).is_err() {
            break;
        }
    }
    set_killer(None);
    if let Some(w) = worker {
        w.stop();
    }
}

impl Episodes for Pool {
    fn start(&mut self, episode: Episode) -> Result<()> {
        self.order.push_back(episode.id);
        let jobs = self.jobs.as_ref().ok_or_else(|| anyhow!("the pool is closed"))?;
        jobs.send(episode).map_err(|_| anyhow!("the game processes' threads have stopped"))
    }

    fn finish(&mut self) -> Result<Result<Outcome, Fault>> {
        let id = self.order.pop_front().ok_or_else(|| anyhow!("no episode in flight"))?;
        loop {
            if let Some(r) = self.waiting.remove(&id) {
                return Ok(r);
            }
            let (got, r) = self.results.recv().map_err(|_| anyhow!("the game processes' threads have stopped"))?;
            self.waiting.insert(got, r);
        }
    }
}

impl Drop for Pool {
    /// Stops the processes: the idle ones are asked to stop, the busy ones killed (a run that
    /// stops early does not wait for their episodes).
    fn drop(&mut self) {
        self.jobs = None;
        self.closed.store(true, Ordering::Relaxed);
        if !self.order.is_empty() {
            for k in self.killers.lock().unwrap_or_else(|e| e.into_inner()).iter().flatten() {
                k.kill();
            }
        }
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }
}
