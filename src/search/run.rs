//! Running searches the thesis's way: "search once, keep the best terminal state and its path",
//! with the game split into chained sub-games (one run per subgoal, each from the best state of
//! the previous one, the budget split equally), consecutive split runs, root parallelism
//! (independent trees on rayon, the best kept) and tree parallelism (workers sharing one tree
//! under a global lock around selection and update; playouts run concurrently). Also
//! move-by-move play with tree reuse, for games with opponents.
//!
//! Determinism: every tree's random stream is derived from (seed, stage, tree, worker), so an
//! iteration budget gives the same result on any number of threads — except with tree
//! parallelism, where the interleaving of workers is up to the OS (documented, not hidden).

use super::formula::Formula;
use super::mcts::{self, Budget, Evaluator, MctsConfig, Scratch, SearchResult, SubGame, Tree};
use super::nmcs::Nmcs;
use crate::game::Game;
use crate::game::Goals;
use crate::rng;
use rayon::prelude::*;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Algorithm {
    Mcts,
    /// Nested Monte Carlo search at this level.
    Nmcs(u32),
}

#[derive(Clone, Debug)]
pub struct PlanConfig {
    pub algorithm: Algorithm,
    pub mcts: MctsConfig,
    /// Total budget; split equally over the sub-games (and split runs).
    pub budget: Budget,
    /// Number of chained sub-games; the game's goals are divided evenly among them (1 = one
    /// search to the last goal; `usize::MAX` = one per goal).
    pub subgoals: usize,
    /// Consecutive independent runs per sub-game, each with a share of its budget.
    pub split_runs: usize,
    /// Independent trees per run (root parallelism).
    pub root_parallel: usize,
    /// Workers sharing each tree (tree parallelism).
    pub tree_parallel: usize,
    pub seed: u64,
}

impl Default for PlanConfig {
    fn default() -> PlanConfig {
        PlanConfig {
            algorithm: Algorithm::Mcts,
            mcts: MctsConfig::default(),
            budget: Budget::Iterations(1000),
            subgoals: usize::MAX,
            split_runs: 1,
            root_parallel: 1,
            tree_parallel: 1,
            seed: 1,
        }
    }
}

/// Statistics of one sub-game's search.
#[derive(Clone, Debug, serde::Serialize)]
pub struct StageStats {
    pub goal_target: usize,
    pub value: f64,
    pub iterations: u64,
    pub aborted: u64,
    pub forfeited: u64,
    pub nodes: usize,
    pub moves: usize,
    pub seconds: f64,
}

#[derive(Clone, Debug)]
pub struct Plan<S, M> {
    pub value: f64,
    pub path: Vec<M>,
    pub state: S,
    pub stages: Vec<StageStats>,
    pub elapsed: Duration,
}

impl<S, M> Plan<S, M> {
    pub fn iterations(&self) -> u64 {
        self.stages.iter().map(|s| s.iterations).sum()
    }
}

/// A game the parallel searches can share across threads: [`Goals`] plus the `Send`/`Sync`
/// bounds root and tree parallelism need. Every such game is one (blanket impl).
pub trait SearchGame: Game<State: Send + Sync, Move: Send + Sync, Error: Send> + Goals + Sync {}

impl<G> SearchGame for G where G: Game<State: Send + Sync, Move: Send + Sync, Error: Send> + Goals + Sync {}

/// The goal indices at which the sub-games end: `k` runs spread evenly over `n_goals` goals.
pub fn stage_targets(n_goals: usize, k: usize) -> Vec<usize> {
    if n_goals == 0 {
        return vec![usize::MAX];
    }
    let k = k.clamp(1, n_goals);
    (1..=k).map(|i| i * n_goals / k).collect()
}

/// Searches the whole game from its start state.
pub fn plan<G, E>(game: &G, eval: &E, cfg: &PlanConfig) -> Result<Plan<G::State, G::Move>, G::Error>
where
    G: SearchGame,
    E: Evaluator<G::State>,
{
    let start = game.initial()?;
    plan_from(game, &start, eval, cfg)
}

pub fn plan_from<G, E>(game: &G, start: &G::State, eval: &E, cfg: &PlanConfig) -> Result<Plan<G::State, G::Move>, G::Error>
where
    G: SearchGame,
    E: Evaluator<G::State>,
{
    let t0 = Instant::now();
    let targets: Vec<usize> = stage_targets(game.n_goals(), cfg.subgoals).into_iter().filter(|&t| t > game.goals_reached(start)).collect();
    let targets = if targets.is_empty() { vec![game.n_goals().max(1)] } else { targets };
    let share = cfg.budget.split(targets.len());
    let mut state = start.clone();
    let mut path = Vec::new();
    let mut stages = Vec::new();
    let mut value = eval.value(&state, 0);
    for (stage, &target) in targets.iter().enumerate() {
        let sub = SubGame { goal_target: target };
        let r = stage_search(game, &state, eval, cfg, sub, share, stage as u64)?;
        stages.push(StageStats {
            goal_target: target,
            value: r.value,
            iterations: r.iterations,
            aborted: r.aborted,
            forfeited: r.forfeited,
            nodes: r.nodes,
            moves: r.path.len(),
            seconds: r.elapsed.as_secs_f64(),
        });
        value = r.value;
        path.extend(r.path);
        state = r.state;
    }
    Ok(Plan { value, path, state, stages, elapsed: t0.elapsed() })
}

/// One sub-game: split runs × root-parallel trees × tree-parallel workers; the best is kept.
fn stage_search<G, E>(
    game: &G,
    root: &G::State,
    eval: &E,
    cfg: &PlanConfig,
    sub: SubGame,
    budget: Budget,
    stage: u64,
) -> Result<SearchResult<G::State, G::Move>, G::Error>
where
    G: SearchGame,
    E: Evaluator<G::State>,
{
    let runs = cfg.split_runs.max(1);
    let run_budget = budget.split(runs);
    let mut best: Option<SearchResult<G::State, G::Move>> = None;
    let mut total = (0u64, 0u64, 0u64, 0usize, Duration::ZERO);
    for run in 0..runs {
        let trees = cfg.root_parallel.max(1);
        let results: Vec<Result<SearchResult<G::State, G::Move>, G::Error>> = (0..trees)
            .into_par_iter()
            .map(|t| {
                let seed = rng::derive(cfg.seed, stage, (run * trees + t) as u64, 0);
                one_tree(game, root, eval, cfg, sub, run_budget, seed)
            })
            .collect();
        for r in results {
            let r = r?;
            total.0 += r.iterations;
            total.1 += r.aborted;
            total.2 += r.forfeited;
            total.3 += r.nodes;
            total.4 = total.4.max(r.elapsed);
            if best.as_ref().is_none_or(|b| r.value > b.value) {
                best = Some(r);
            }
        }
    }
    let mut b = best.expect("at least one run");
    (b.iterations, b.aborted, b.forfeited, b.nodes) = (total.0, total.1, total.2, total.3);
    Ok(b)
}

fn one_tree<G, E>(
    game: &G,
    root: &G::State,
    eval: &E,
    cfg: &PlanConfig,
    sub: SubGame,
    budget: Budget,
    seed: u64,
) -> Result<SearchResult<G::State, G::Move>, G::Error>
where
    G: SearchGame,
    E: Evaluator<G::State>,
{
    match cfg.algorithm {
        Algorithm::Nmcs(level) => {
            let t0 = Instant::now();
            let mut rng = rng::stream(seed, 0, 0, 0);
            let mut n = Nmcs { game, eval, cfg: &cfg.mcts, sub, budget, start: t0, playouts: 0 };
            let mut best: Option<super::nmcs::Found<G::State, G::Move>> = None;
            // Restart until the budget is spent, keeping the best (the thesis ran NMCS inside its
            // combined algorithm for the whole budget).
            loop {
                let r = n.run(level, root.clone(), &mut rng)?;
                if best.as_ref().is_none_or(|b| r.value > b.value) {
                    best = Some(r);
                }
                if n.out_of_budget() {
                    break;
                }
            }
            let b = best.expect("one NMCS run");
            Ok(SearchResult {
                value: b.value,
                path: b.seq,
                state: b.state,
                iterations: n.playouts,
                aborted: 0,
                forfeited: 0,
                nodes: 0,
                elapsed: t0.elapsed(),
            })
        }
        Algorithm::Mcts if cfg.tree_parallel > 1 => tree_parallel(game, root, eval, &cfg.mcts, sub, budget, seed, cfg.tree_parallel),
        Algorithm::Mcts => {
            let mut rng = rng::stream(seed, 0, 0, 0);
            mcts::search(game, root, sub, &cfg.mcts, eval, budget, &mut rng)
        }
    }
}

/// Tree parallelism: `workers` threads share one tree behind a global mutex held during
/// selection and update; replay, expansion and playout run unlocked.
#[allow(clippy::too_many_arguments)]
fn tree_parallel<G, E>(
    game: &G,
    root: &G::State,
    eval: &E,
    cfg: &MctsConfig,
    sub: SubGame,
    budget: Budget,
    seed: u64,
    workers: usize,
) -> Result<SearchResult<G::State, G::Move>, G::Error>
where
    G: SearchGame,
    E: Evaluator<G::State>,
{
    let t0 = Instant::now();
    let f = cfg.formula.compile();
    // Workers replay from the root (kept states would be read outside the lock).
    let cfg = &MctsConfig { state_cache: 0, ..cfg.clone() };
    let tree = Mutex::new(Tree::new(game, root, sub, cfg)?);
    let started = AtomicU64::new(0);
    let est = match budget {
        Budget::Iterations(n) => n as f64,
        Budget::Millis(_) => 0.0,
    };
    let errors: Vec<G::Error> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..workers)
            .map(|w| {
                let (tree, started, f) = (&tree, &started, &f);
                s.spawn(move || -> Result<(), G::Error> {
                    let mut rng = rng::stream(seed, 1, w as u64, 0);
                    let mut scratch = Scratch::new(root);
                    let mut sel = mcts::Selected::new();
                    loop {
                        let go = match budget {
                            Budget::Iterations(n) => started.fetch_add(1, Ordering::Relaxed) < n,
                            Budget::Millis(ms) => t0.elapsed() < Duration::from_millis(ms),
                        } && !tree.lock().expect("no worker panics while holding the tree").done();
                        if !go {
                            return Ok(());
                        }
                        let best = {
                            let mut t = tree.lock().expect("no worker panics while holding the tree");
                            t.select(f, cfg, &mut rng, est, &mut sel);
                            t.best_value
                        };
                        // Duplicate detection is re-checked under the lock in `update`.
                        let sim = mcts::simulate(game, root, &sel, cfg, eval, sub, best, None, &mut rng, &mut scratch)?;
                        let mut t = tree.lock().expect("no worker panics while holding the tree");
                        t.update(game, &sel, sim, &scratch, cfg, root, sub)?;
                    }
                })
            })
            .collect();
        handles.into_iter().filter_map(|h| h.join().expect("search worker panicked").err()).collect()
    });
    if let Some(e) = errors.into_iter().next() {
        return Err(e);
    }
    let mut t = tree.into_inner().expect("workers are done");
    if t.best_value == f64::NEG_INFINITY {
        t.best_value = eval.value(root, 0);
    }
    Ok(SearchResult {
        value: t.best_value,
        path: t.best_path,
        state: t.best_state,
        iterations: t.iterations,
        aborted: t.aborted,
        forfeited: t.forfeited,
        nodes: t.nodes.len(),
        elapsed: t0.elapsed(),
    })
}

/// Move-by-move play with tree reuse: search `per_move` from the current state, play the most
/// visited root move, keep that move's subtree as the next root. For games with opponents each
/// node's statistics are from the point of view of the side that moved into it.
pub fn play_move_by_move<G, E>(
    game: &G,
    eval: &E,
    cfg: &MctsConfig,
    per_move: Budget,
    max_moves: usize,
    seed: u64,
) -> Result<(Vec<G::Move>, G::State), G::Error>
where
    G: Game + Goals,
    E: Evaluator<G::State>,
{
    let mut state = game.initial()?;
    let sub = SubGame { goal_target: usize::MAX };
    let f = cfg.formula.compile();
    let mut tree = Tree::new(game, &state, sub, cfg)?;
    let mut scratch = Scratch::new(&state);
    let mut sel = mcts::Selected::new();
    let mut played = Vec::new();
    let mut legal = Vec::new();
    for step in 0..max_moves {
        game.legal(&state, &mut legal)?;
        if mcts::is_terminal(game, &state, &legal, sub) {
            break;
        }
        let mut rng = rng::stream(seed, step as u64, 0, 0);
        let t0 = Instant::now();
        let start_iters = tree.iterations;
        loop {
            match per_move {
                Budget::Iterations(n) if tree.iterations - start_iters >= n => break,
                Budget::Millis(ms) if t0.elapsed() >= Duration::from_millis(ms) => break,
                _ if tree.done() => break,
                _ => {}
            }
            tree.select(&f, cfg, &mut rng, 0.0, &mut sel);
            let sim = mcts::simulate_from(
                game,
                &state,
                tree.start_state(&sel),
                &sel,
                cfg,
                eval,
                sub,
                f64::INFINITY,
                None,
                &mut rng,
                &mut scratch,
            )?;
            tree.update(game, &sel, sim, &scratch, cfg, &state, sub)?;
        }
        let Some(best) = tree.children(0).max_by_key(|&c| tree.nodes[c as usize].visits) else { break };
        let mv = tree.nodes[best as usize].mv.expect("child has a move");
        game.apply(&mut state, mv)?;
        played.push(mv);
        tree = tree.reroot(best, game, &state, sub, cfg)?;
    }
    Ok((played, state))
}

/// The names [`named_formula`] knows.
pub const FORMULA_NAMES: &str = "ucb1, ucb_tuned1, ucb_tuned2, sp_mcts, ucb_for_sp";

/// A shipped selection formula by name (with its parameters), else `text` read as a formula.
pub fn formula_by_name_or_text(text: &str, c: f64, d: f64, w: f64) -> Result<Formula, crate::search::formula::FormulaError> {
    match named_formula(text, c, d, w) {
        Some(f) => Ok(f),
        None => Formula::parse(text),
    }
}

/// Names of the shipped selection formulas, with their parameters.
pub fn named_formula(name: &str, c: f64, d: f64, w: f64) -> Option<Formula> {
    Some(match name {
        "ucb1" => Formula::ucb1(c, d),
        "ucb_tuned1" => Formula::ucb_tuned1(c, d),
        "ucb_tuned2" => Formula::ucb_tuned2(c, d),
        "sp_mcts" => Formula::sp_mcts(c, d),
        "ucb_for_sp" => Formula::ucb_for_sp(c, d, w),
        _ => return None,
    })
}
