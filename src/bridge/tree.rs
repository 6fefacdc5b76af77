//! Monster Carlo's search (Keehl 2018, §3): UCT over a tree keyed by nothing but the choices
//! made. A rollout descends the tree by UCB1 on raw scores, stops at the first node with an
//! untried option, sends that path as an episode's prefix, and the game plays on by its default
//! policy; the trace that comes back adds one node (the first of the trace not yet in the tree;
//! under "save best path", every node of a trace that set a new best) and its score is backed up
//! along it. `CUT_OFF` marks a subtree exhausted once every option under it has been played to
//! its end, skips it, and stops the search when the root is exhausted: the best score is then the
//! exact maximum over every way to play the game under its seed.
//!
//! N workers share one tree as in the thesis (new prefixes handed out while rollouts are in
//! flight, no virtual loss), in a fixed schedule: rollout `i` is chosen after the outcomes of
//! rollouts `0 ..= i - N` have been added, in order, and never others. So a search is a function
//! of (seed, N) alone: how long each episode took, and on how many processes, changes nothing.

use super::process::{Fault, FaultKind};
use super::protocol::{Episode, Outcome};
use crate::rng::{self, Rng};
use anyhow::{Result, bail};
use rand::RngExt;
use std::collections::VecDeque;

/// Something that plays episodes: game processes ([`super::pool::Pool`]) or a WGDL game in
/// this process ([`super::local::WgdlEpisodes`]).
pub trait Episodes {
    /// Starts an episode; its result comes back from [`Episodes::finish`] after those of every
    /// episode started before it. An `Err` stops the run (no game process can be started).
    fn start(&mut self, episode: Episode) -> Result<()>;
    /// The result of the oldest episode started and not finished: its outcome, or the fault
    /// that ended it after its retries (recorded as a failed rollout).
    fn finish(&mut self) -> Result<Result<Outcome, Fault>>;
}

/// The search's settings (the thesis's `mc.run` arguments).
#[derive(Clone, Debug, PartialEq)]
pub struct TreeConfig {
    /// c in x̄ + c·√(ln N / n), on the scale of the raw score.
    pub uct: f64,
    pub cut_off: bool,
    pub save_best_path: bool,
    /// Rollouts in flight at once (the thesis's `num_workers`): part of the algorithm, since
    /// selections made while outcomes are outstanding see older statistics.
    pub workers: usize,
    /// The measure searched (`None`: the outcome's score).
    pub measure: Option<String>,
    /// A selection formula replacing UCB1 (a persona's), over each child's raw-score
    /// statistics: `mean`, `wins` (the sum), `visits`, `parent` (the node's visits), `sumsq`,
    /// `best`, `moves` (the child's options).
    pub formula: Option<crate::search::formula::Formula>,
    /// The searched value mapped onto [0, 1] before the tree sees it (a persona's continuous
    /// reward: clamped, upward or downward); `None`: the raw value, searched upward.
    pub reward: Option<Scale>,
}

/// `(v − lo) / (hi − lo)` clamped to [0, 1], or one minus it when minimizing.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Scale {
    pub lo: f64,
    pub hi: f64,
    pub maximize: bool,
}

impl Scale {
    pub fn apply(&self, v: f64) -> f64 {
        let x = ((v - self.lo) / (self.hi - self.lo)).clamp(0.0, 1.0);
        if self.maximize { x } else { 1.0 - x }
    }
}

/// A rollout that ended without an outcome.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Failure {
    /// The rollout (from 1).
    pub rollout: u64,
    pub prefix: Vec<u64>,
    pub reason: String,
}

/// What a search found.
#[derive(Clone, Debug, Default)]
pub struct Found {
    /// The highest score seen, on the `reward` scale where one is set (−∞ when no rollout scored).
    pub best: f64,
    /// The best rollout's outcome (its choices and measures).
    pub best_outcome: Option<Outcome>,
    /// (rollout, new best) at every rollout that raised the best (rollouts count from 1).
    pub improvements: Vec<(u64, f64)>,
    pub rollouts: u64,
    /// CUT_OFF exhausted the tree: `best` is the exact maximum.
    pub exhausted: bool,
    pub nodes: usize,
    pub failures: Vec<Failure>,
    /// Decisions in every outcome (for throughput figures).
    pub decisions: u64,
    /// `observe` stopped the search before its budget (an interrupted run).
    pub stopped: bool,
}

const NONE: u32 = u32::MAX;

struct Node {
    /// Options here (0: the game ended here).
    n: u32,
    /// Child per option (`NONE`: not in the tree yet).
    children: Vec<u32>,
    visits: u64,
    total: f64,
    sumsq: f64,
    best: f64,
    exhausted: bool,
}

/// The prefix tree.
pub struct Tree {
    nodes: Vec<Node>,
    cfg: TreeConfig,
}

/// Failures in a row that stop a run: the game fails every episode.
pub const MAX_FAILURES_IN_A_ROW: usize = 20;

impl Tree {
    pub fn new(cfg: TreeConfig) -> Tree {
        Tree { nodes: Vec::new(), cfg }
    }

    pub fn nodes(&self) -> usize {
        self.nodes.len()
    }

    /// Whether CUT_OFF has exhausted the whole tree.
    pub fn exhausted(&self) -> bool {
        self.cfg.cut_off && self.nodes.first().is_some_and(|r| r.exhausted)
    }

    /// The most promising prefix: UCT down the tree to the first node with an untried option,
    /// plus one untried option drawn uniformly (an empty prefix before the first outcome).
    pub fn select(&self, rng: &mut Rng) -> Vec<u64> {
        let mut path = Vec::new();
        let Some(mut node) = self.nodes.first() else { return path };
        loop {
            if node.n == 0 {
                return path;
            }
            let untried = node.children.iter().filter(|&&c| c == NONE).count();
            if untried > 0 {
                let k = rng.random_range(0..untried);
                let choice = node.children.iter().enumerate().filter(|&(_, &c)| c == NONE).nth(k).map(|(i, _)| i).unwrap_or(0);
                path.push(choice as u64);
                return path;
            }
            let ln = (node.visits.max(1) as f64).ln();
            // A formula's NaN (0/0, ln of a negative) never wins; all NaN: the first child.
            let mut best: Option<(usize, f64)> = None;
            for (i, &c) in node.children.iter().enumerate() {
                let child = &self.nodes[c as usize];
                if self.cfg.cut_off && child.exhausted {
                    continue;
                }
                let v = child.visits.max(1) as f64;
                let u = match &self.cfg.formula {
                    None => child.total / v + self.cfg.uct * (ln / v).sqrt(),
                    Some(f) => f.eval(&crate::search::formula::Stats {
                        mean: child.total / v,
                        wins: child.total,
                        visits: v,
                        parent: node.visits as f64,
                        sumsq: child.sumsq,
                        best: child.best,
                        moves: child.n as f64,
                    }),
                };
                if !u.is_nan() && best.is_none_or(|(_, b)| u > b) {
                    best = Some((i, u));
                }
            }
            // Every child exhausted (outcomes still in flight will mark this node): replay
            // the first.
            let i = best.map(|(i, _)| i).unwrap_or(0);
            path.push(i as u64);
            node = &self.nodes[node.children[i] as usize];
        }
    }

    /// Adds an outcome scored `score`: the first node of its trace not yet in the tree (every
    /// one when `whole`), its score backed up along the trace, exhaustion propagated. An `Err`
    /// is the game's nondeterminism: a node's number of options differs from an earlier
    /// episode's after the same choices.
    pub fn add(&mut self, outcome: &Outcome, score: f64, whole: bool) -> Result<(), String> {
        let trace = &outcome.trace;
        let n_at = |d: usize| if d < trace.len() { trace[d][1] as u32 } else { 0 };
        let new_node = |n: u32| Node {
            n,
            children: vec![NONE; n as usize],
            visits: 0,
            total: 0.0,
            sumsq: 0.0,
            best: f64::NEG_INFINITY,
            exhausted: false,
        };
        if self.nodes.is_empty() {
            self.nodes.push(new_node(n_at(0)));
        }
        // The path of nodes in the tree, creating the first missing one (or all).
        let mut path = vec![0u32];
        let mut created = false;
        for d in 0..=trace.len() {
            let id = path[d] as usize;
            if self.nodes[id].n != n_at(d) {
                let prefix: Vec<u64> = trace[..d].iter().map(|t| t[0]).collect();
                return Err(format!(
                    "after the choices {prefix:?} the game offered {} options; an earlier episode saw {} (is the game a function of its seed and choices?)",
                    n_at(d),
                    self.nodes[id].n
                ));
            }
            if d == trace.len() {
                break;
            }
            let choice = trace[d][0] as usize;
            let child = self.nodes[id].children[choice];
            if child != NONE {
                path.push(child);
                continue;
            }
            if created && !whole {
                break;
            }
            let c = self.nodes.len() as u32;
            self.nodes.push(new_node(n_at(d + 1)));
            self.nodes[id].children[choice] = c;
            path.push(c);
            created = true;
        }
        for &id in path.iter().rev() {
            let node = &mut self.nodes[id as usize];
            node.visits += 1;
            node.total += score;
            node.sumsq += score * score;
            node.best = node.best.max(score);
        }
        for &id in path.iter().rev() {
            let node = &self.nodes[id as usize];
            let done = node.n == 0 || node.children.iter().all(|&c| c != NONE && self.nodes[c as usize].exhausted);
            if !done {
                break;
            }
            self.nodes[id as usize].exhausted = true;
        }
        Ok(())
    }
}

/// The random streams of one search: where its untried options are drawn (`select`), and each
/// episode's policy seed.
pub struct Streams {
    pub seed: u64,
    pub replicate: u64,
    pub stream: u64,
}

impl Streams {
    pub fn select(&self) -> Rng {
        rng::stream(self.seed, 1, self.replicate, self.stream)
    }
    pub fn policy_seed(&self, rollout: u64) -> u64 {
        rng::derive(self.seed, 2 + rollout, self.replicate, self.stream)
    }
}

/// Runs `rollouts` rollouts (fewer when CUT_OFF exhausts the tree) of the game under
/// `game_seed` and `settings`. `observe(rollouts done, best so far)` after each; returning false
/// stops the search (`stopped`). A run whose last [`MAX_FAILURES_IN_A_ROW`] rollouts all failed
/// stops with the last reason.
pub fn search(
    source: &mut impl Episodes,
    cfg: &TreeConfig,
    game_seed: u64,
    settings: &serde_json::Value,
    rollouts: u64,
    streams: &Streams,
    mut observe: impl FnMut(u64, f64) -> bool,
) -> Result<Found> {
    let mut tree = Tree::new(cfg.clone());
    let mut rng = streams.select();
    let mut found = Found { best: f64::NEG_INFINITY, ..Found::default() };
    let mut in_flight: VecDeque<Vec<u64>> = VecDeque::new();
    let mut started = 0u64;
    let mut in_a_row = 0usize;
    let window = cfg.workers.max(1);
    loop {
        while started < rollouts && in_flight.len() < window && !tree.exhausted() {
            let prefix = tree.select(&mut rng);
            source.start(Episode {
                id: started,
                seed: game_seed,
                policy_seed: streams.policy_seed(started),
                settings: settings.clone(),
                prefix: prefix.clone(),
            })?;
            in_flight.push_back(prefix);
            started += 1;
        }
        let Some(prefix) = in_flight.pop_front() else { break };
        found.rollouts += 1;
        let rollout = found.rollouts;
        let scored = match source.finish()? {
            Ok(outcome) => match &cfg.measure {
                None => Ok((cfg.reward.map_or(outcome.score, |r| r.apply(outcome.score)), outcome)),
                Some(m) => match outcome.measures.get(m) {
                    Some(&v) => Ok((cfg.reward.map_or(v, |r| r.apply(v)), outcome)),
                    None => Err(format!("the outcome has no measure `{m}`; it has {:?}", outcome.measures.keys().collect::<Vec<_>>())),
                },
            },
            Err(f) if f.kind == FaultKind::Refused => bail!("{f}"),
            Err(f) => Err(f.message),
        };
        if let Ok((_, o)) = &scored {
            found.decisions += o.trace.len() as u64;
        }
        let added = scored.and_then(|(score, outcome)| {
            let whole = cfg.save_best_path && score > found.best;
            tree.add(&outcome, score, whole)?;
            Ok((score, outcome))
        });
        match added {
            Ok((score, outcome)) => {
                in_a_row = 0;
                if score > found.best {
                    found.best = score;
                    found.improvements.push((rollout, score));
                    found.best_outcome = Some(outcome);
                }
            }
            Err(reason) => {
                in_a_row += 1;
                if in_a_row >= MAX_FAILURES_IN_A_ROW {
                    bail!("the last {in_a_row} rollouts all failed; the last: {reason}");
                }
                found.failures.push(Failure { rollout, prefix, reason });
            }
        }
        if !observe(rollout, found.best) {
            found.stopped = true;
            break;
        }
    }
    found.exhausted = tree.exhausted();
    found.nodes = tree.nodes();
    Ok(found)
}
