//! Game processes lent to the threads that play one episode at a time (`generate` on an
//! external game: each fitness game is an episode, played on the thread that asked for it).
//! A thread takes an idle process from the shelf, or starts one; plays; puts it back. An
//! episode whose process crashed, hung or talked garbage is played again on a fresh process,
//! up to `retries` times, as the [pool](super::pool) does; the shelf never holds more
//! processes than threads that played at once. An episode depends on its seeds, settings and
//! prefix only, so which process plays it changes nothing.

use super::pool::start;
use super::process::{Fault, FaultKind, Launch, Worker};
use super::protocol::{Episode, Outcome};
use super::tree::Episodes;
use std::collections::VecDeque;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

/// Idle game processes of one launch.
pub struct Shelf {
    launch: Launch,
    retries: u32,
    idle: Mutex<Vec<Worker>>,
    /// Processes started again after a fault.
    pub restarts: AtomicU64,
}

impl Shelf {
    pub fn new(launch: Launch, retries: u32) -> Shelf {
        Shelf { launch, retries, idle: Mutex::new(Vec::new()), restarts: AtomicU64::new(0) }
    }

    /// Plays `episode` on an idle process (or a new one): its outcome, or the fault that ended
    /// it after its retries.
    pub fn play(&self, episode: &Episode) -> Result<Outcome, Fault> {
        let mut tries = 0;
        loop {
            let taken = self.idle.lock().unwrap_or_else(|e| e.into_inner()).pop();
            let mut worker = match taken {
                Some(w) => w,
                None => start(&self.launch).map_err(|f| Fault { kind: FaultKind::Refused, message: f.message })?,
            };
            match worker.play(episode) {
                Ok(o) => {
                    self.idle.lock().unwrap_or_else(|e| e.into_inner()).push(worker);
                    return Ok(o);
                }
                // The worker is dropped (its process killed); a fresh one plays it again.
                Err(f) if f.kind.retry() && tries < self.retries => {
                    tries += 1;
                    self.restarts.fetch_add(1, Ordering::Relaxed);
                }
                Err(f) => {
                    let message = if tries > 0 { format!("{} (after {tries} retries)", f.message) } else { f.message };
                    return Err(Fault { kind: f.kind, message });
                }
            }
        }
    }

    /// The shelf as a source of episodes for one search on this thread (one rollout in flight).
    pub fn episodes(&self) -> OnShelf<'_> {
        OnShelf { shelf: self, done: VecDeque::new() }
    }
}

impl Drop for Shelf {
    /// Asks every idle process to stop.
    fn drop(&mut self) {
        for w in self.idle.get_mut().unwrap_or_else(|e| e.into_inner()).drain(..) {
            w.stop();
        }
    }
}

/// Episodes played as they start, on the shelf's processes.
pub struct OnShelf<'a> {
    shelf: &'a Shelf,
    done: VecDeque<Result<Outcome, Fault>>,
}

impl Episodes for OnShelf<'_> {
    fn start(&mut self, episode: Episode) -> anyhow::Result<()> {
        self.done.push_back(self.shelf.play(&episode));
        Ok(())
    }

    fn finish(&mut self) -> anyhow::Result<Result<Outcome, Fault>> {
        self.done.pop_front().ok_or_else(|| anyhow::anyhow!("no episode in flight"))
    }
}
