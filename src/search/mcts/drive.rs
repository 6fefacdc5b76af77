//! The loops around the three phases: a number of iterations on one tree, a whole search, a
//! search that reports its rollouts, a move decision, and the move finally played
//! ([`FinalChoice`]).

use super::*;

/// Runs MCTS iterations on `tree` until `iterations` have been run in all (or the tree is
/// done): the loop of [`decision_tree`], for callers that keep their own tree and buffers (no
/// allocation per iteration once they have grown; [`Tree::reserve`] makes room up front).
#[allow(clippy::too_many_arguments)]
pub fn run_iterations<G: Game + Goals, E: Evaluator<G::State>>(
    tree: &mut Tree<G>,
    game: &G,
    root: &G::State,
    f: &Compiled,
    cfg: &MctsConfig,
    eval: &E,
    iterations: u64,
    rng: &mut Rng,
    scratch: &mut Scratch<G>,
    sel: &mut Selected<G::Move>,
) -> Result<(), G::Error> {
    // Two-sided games have no goals to split at: the sub-game is the whole game.
    let sub = SubGame { goal_target: usize::MAX };
    while tree.iterations < iterations && !tree.done() {
        tree.select(f, cfg, rng, iterations as f64, sel);
        let sim = simulate_from(game, root, tree.start_state(sel), sel, cfg, eval, sub, f64::INFINITY, None, rng, scratch)?;
        tree.update(game, sel, sim, scratch, cfg, root, sub)?;
    }
    Ok(())
}

/// One single-threaded MCTS run from `root` until the budget is spent.
pub fn search<G: Game + Goals, E: Evaluator<G::State>>(
    game: &G,
    root: &G::State,
    sub: SubGame,
    cfg: &MctsConfig,
    eval: &E,
    budget: Budget,
    rng: &mut Rng,
) -> Result<SearchResult<G::State, G::Move>, G::Error> {
    search_observed(game, root, sub, cfg, eval, budget, rng, |_| true)
}

/// What [`search_observed`] reports after each iteration.
#[derive(Clone, Copy, Debug)]
pub struct Rollout {
    /// Iterations so far, this one included.
    pub iteration: u64,
    /// The value this iteration's playout reached (`None`: aborted as a duplicate).
    pub value: Option<f64>,
    /// The best value of any iteration so far.
    pub best: f64,
}

/// [`search`], calling `observe` after every iteration (the Monster Carlo thesis's per-rollout
/// bookkeeping: best score seen so far, progress). `observe` returning `false` stops the search
/// after that iteration, as an exhausted root (CUT_OFF) or a spent budget does.
#[allow(clippy::too_many_arguments)]
pub fn search_observed<G: Game + Goals, E: Evaluator<G::State>>(
    game: &G,
    root: &G::State,
    sub: SubGame,
    cfg: &MctsConfig,
    eval: &E,
    budget: Budget,
    rng: &mut Rng,
    mut observe: impl FnMut(Rollout) -> bool,
) -> Result<SearchResult<G::State, G::Move>, G::Error> {
    let t0 = Instant::now();
    let f = cfg.formula.compile();
    let mut tree = Tree::new(game, root, sub, cfg)?;
    let mut scratch = Scratch::new(root);
    let mut sel = Selected::new();
    let estimate = match budget {
        Budget::Iterations(n) => n as f64,
        Budget::Millis(_) => 0.0,
    };
    let spent = |tree: &Tree<G>| match budget {
        Budget::Iterations(n) => tree.iterations >= n,
        Budget::Millis(ms) => t0.elapsed() >= Duration::from_millis(ms),
    };
    while !spent(&tree) && !tree.done() {
        // For time budgets, estimate the final node count from the speed so far.
        let est = if let Budget::Millis(ms) = budget {
            let el = t0.elapsed().as_secs_f64().max(1e-3);
            tree.iterations as f64 / el * (ms as f64 / 1000.0)
        } else {
            estimate
        };
        tree.select(&f, cfg, rng, est, &mut sel);
        let depth = tree.nodes[sel.leaf as usize].depth as usize + 1;
        let seen = if cfg.duplicate_detection { tree.seen.get(depth) } else { None };
        let mut sim = simulate_from(game, root, tree.start_state(&sel), &sel, cfg, eval, sub, tree.best_value, seen, rng, &mut scratch)?;
        // Duplicate aborts: each counts as an iteration; the next one would select this same
        // leaf again, so retry here without descending and replaying.
        let mut go_on;
        loop {
            let duplicate = sim.duplicate;
            let value = (!duplicate).then_some(sim.final_value);
            tree.update(game, &sel, sim, &scratch, cfg, root, sub)?;
            go_on = observe(Rollout { iteration: tree.iterations, value, best: tree.best_value });
            if !duplicate || spent(&tree) || !cfg.retry_duplicates || !go_on {
                break;
            }
            let Some(mv) = tree.retry_expand(sel.leaf, cfg, rng, est) else { break };
            sel.expand = Some(mv);
            let seen = tree.seen.get(depth);
            sim = simulate_at_leaf(game, &sel, cfg, eval, sub, tree.best_value, seen, rng, &mut scratch)?;
        }
        if !go_on {
            break;
        }
    }
    if tree.best_value == f64::NEG_INFINITY {
        tree.best_value = eval.value(root, 0);
    }
    Ok(SearchResult {
        value: tree.best_value,
        path: tree.best_path,
        state: tree.best_state,
        iterations: tree.iterations,
        aborted: tree.aborted,
        forfeited: tree.forfeited,
        nodes: tree.nodes.len(),
        elapsed: t0.elapsed(),
    })
}

/// Runs `iterations` MCTS iterations from `root`; returns the root child with the best mean
/// reward (for the side to move at the root) and that mean. For two-sided games: one decision
/// of a move-by-move player (HexMage's UCT, with a search per move instead of per turn).
/// The same as [`decide_with`] and [`FinalChoice::BestMean`].
pub fn decide<G: Game + Goals, E: Evaluator<G::State>>(
    game: &G,
    root: &G::State,
    cfg: &MctsConfig,
    eval: &E,
    iterations: u64,
    rng: &mut Rng,
) -> Result<(G::Move, f64), G::Error> {
    decide_with(game, root, cfg, eval, iterations, rng, FinalChoice::BestMean)
}

/// Runs `iterations` MCTS iterations from `root` ([`decision_tree`]) and returns the root child
/// `choice` picks, with that child's mean reward (0 if it was never visited). Every setting of
/// `cfg` applies, among them `max_playout_moves` (rollout length) and `full_expansion`. With no
/// root children (no iterations), the first legal move and 0.
pub fn decide_with<G: Game + Goals, E: Evaluator<G::State>>(
    game: &G,
    root: &G::State,
    cfg: &MctsConfig,
    eval: &E,
    iterations: u64,
    rng: &mut Rng,
    choice: FinalChoice,
) -> Result<(G::Move, f64), G::Error> {
    let f = cfg.formula.compile();
    let tree = decision_tree_with(game, root, &f, cfg, eval, iterations, rng)?;
    match tree.final_choice(&f, choice) {
        Some(b) => Ok(b),
        None => {
            let mut legal = Vec::new();
            game.legal(root, &mut legal)?;
            Ok((legal[0], 0.0))
        }
    }
}

/// The tree [`decide_with`] chooses from: `iterations` iterations from `root` over the whole
/// game (no sub-goals), with no best-so-far bookkeeping (no forfeiting).
pub fn decision_tree<G: Game + Goals, E: Evaluator<G::State>>(
    game: &G,
    root: &G::State,
    cfg: &MctsConfig,
    eval: &E,
    iterations: u64,
    rng: &mut Rng,
) -> Result<Tree<G>, G::Error> {
    decision_tree_with(game, root, &cfg.formula.compile(), cfg, eval, iterations, rng)
}

pub(super) fn decision_tree_with<G: Game + Goals, E: Evaluator<G::State>>(
    game: &G,
    root: &G::State,
    f: &Compiled,
    cfg: &MctsConfig,
    eval: &E,
    iterations: u64,
    rng: &mut Rng,
) -> Result<Tree<G>, G::Error> {
    let sub = SubGame { goal_target: usize::MAX };
    let mut tree = Tree::new(game, root, sub, cfg)?;
    // Room for the nodes of standard expansion (one per iteration) and, guessing each with the
    // root's number of moves, their move lists: growing there copies them all (untouched
    // capacity costs no memory).
    let nodes = (iterations as usize).saturating_add(1).min(1 << 20);
    tree.reserve(nodes, nodes.saturating_mul(tree.nodes[0].moves.max(1) as usize).min(1 << 23));
    let mut scratch = Scratch::new(root);
    let mut sel = Selected::new();
    run_iterations(&mut tree, game, root, f, cfg, eval, iterations, rng, &mut scratch, &mut sel)?;
    Ok(tree)
}

impl<G: Game + Goals> Tree<G> {
    /// The root child `choice` picks (with `f` for [`FinalChoice::Formula`]) and its mean
    /// reward (0 if unvisited); `None` when the root has no children.
    pub fn final_choice(&self, f: &Compiled, choice: FinalChoice) -> Option<(G::Move, f64)> {
        let mean = |c: u32| {
            let n = &self.nodes[c as usize];
            if n.visits == 0 { 0.0 } else { n.sum / n.visits as f64 }
        };
        let mut pick: Option<(u32, f64)> = None;
        for c in self.children(0) {
            let key = match choice {
                FinalChoice::BestMean => mean(c),
                FinalChoice::MostVisited => self.nodes[c as usize].visits as f64,
                FinalChoice::Formula if self.nodes[c as usize].visits == 0 => continue,
                FinalChoice::Formula => f.eval(&self.stats(c)),
            };
            if pick.is_none_or(|(_, b)| key > b) {
                pick = Some((c, key));
            }
        }
        let c = pick.map(|p| p.0).or_else(|| self.children(0).next())?;
        Some((self.nodes[c as usize].mv.expect("children have moves"), mean(c)))
    }
}
