//! Ask/tell plumbing: a command's loop in a thread of its own whose questions (batches to
//! evaluate) the caller answers. The loop holds an [`Asker`] and blocks in [`Asker::ask`]; the
//! caller's [`AskTell`] gets each question from [`AskTell::ask`] and answers it with
//! [`AskTell::tell`]; when the loop ends, `ask` returns `None` and the loop's result is kept.
//! `drive::asktell` puts every search command's loop on it (balance, generate, personas).

use anyhow::{Result, anyhow};
use std::sync::mpsc::{Receiver, SyncSender, sync_channel};
use std::thread::JoinHandle;

type Reply<A> = SyncSender<Result<A, String>>;

/// The loop's side: a question asked, its answer awaited.
pub struct Asker<Q, A>(SyncSender<(Q, Reply<A>)>);

impl<Q, A> Asker<Q, A> {
    pub fn ask(&self, question: Q) -> Result<A> {
        let (reply, answer) = sync_channel(1);
        self.0.send((question, reply)).map_err(|_| anyhow!("the ask/tell driver is gone"))?;
        answer.recv().map_err(|_| anyhow!("the ask/tell driver stopped before telling"))?.map_err(|e| anyhow!(e))
    }
}

/// The caller's side of a loop that asks `Q`, is told `A` and ends with `T`.
pub struct AskTell<Q, A, T> {
    requests: Receiver<(Q, Reply<A>)>,
    pending: Option<Reply<A>>,
    thread: Option<JoinHandle<Result<T>>>,
    outcome: Option<T>,
}

impl<Q: Send + 'static, A: Send + 'static, T: Send + 'static> AskTell<Q, A, T> {
    /// Runs `run` (the loop, given its asker) in a thread named `name`.
    pub fn start(name: &str, run: impl FnOnce(Asker<Q, A>) -> Result<T> + Send + 'static) -> Result<Self> {
        let (ask, requests) = sync_channel(0);
        let thread = std::thread::Builder::new().name(name.into()).spawn(move || run(Asker(ask)))?;
        Ok(AskTell { requests, pending: None, thread: Some(thread), outcome: None })
    }

    /// The loop's next question, or `None` once it ended (its result is then
    /// [`AskTell::outcome`]; its error is returned here). Asking again before telling is an error.
    pub fn ask(&mut self) -> Result<Option<Q>> {
        if self.pending.is_some() {
            return Err(anyhow!("ask() again before tell(); expected the answer to the last question"));
        }
        match self.requests.recv() {
            Ok((question, reply)) => {
                self.pending = Some(reply);
                Ok(Some(question))
            }
            Err(_) => {
                if let Some(t) = self.thread.take() {
                    self.outcome = Some(t.join().map_err(|_| anyhow!("the loop panicked"))??);
                }
                Ok(None)
            }
        }
    }

    /// The answer to the last question.
    pub fn tell(&mut self, answer: A) -> Result<()> {
        let reply = self.pending.take().ok_or_else(|| anyhow!("tell() without a question; expected ask() first"))?;
        reply.send(Ok(answer)).map_err(|_| anyhow!("the loop is gone"))
    }

    /// Refuses to answer the last question: the loop ends with `why` as its error.
    pub fn refuse(&mut self, why: String) {
        if let Some(reply) = self.pending.take() {
            let _ = reply.send(Err(why));
        }
    }

    /// The loop's result, once [`AskTell::ask`] returned `None`.
    pub fn outcome(&self) -> Option<&T> {
        self.outcome.as_ref()
    }
}

impl<Q, A, T> Drop for AskTell<Q, A, T> {
    fn drop(&mut self) {
        // A loop left waiting for an answer ends (with an error) instead of waiting for ever.
        if let Some(reply) = self.pending.take() {
            let _ = reply.send(Err("the ask/tell driver was dropped".into()));
        }
    }
}
