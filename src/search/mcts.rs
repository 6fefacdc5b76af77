//! Monte Carlo Tree Search over any [`Game`], with the thesis's enhancements as switches.
//!
//! Nodes store no game state (the thesis's default: memory is the bottleneck); an iteration
//! selects a path by the [`Formula`] without touching the game, replays the path's moves from
//! the root state, expands one untried move, plays out with the action-group policy until the
//! sub-game ends, and backpropagates. The three phases — select (tree only), simulate (state
//! only), update (tree only) — are separate functions so that tree parallelism can hold its
//! global lock only around the first and the last, as the thesis did.
//!
//! Enhancements, each off by default and free when off (see [`MctsConfig`]): duplicate-state
//! detection per depth (an iteration that reaches a known state is aborted but counted);
//! add-best-path; forfeiting hopeless playouts; non-tree (global) selection with a switch-over;
//! progressive widening; a node limit per level; consecutive split runs; root and tree
//! parallelism (in [`super::run`]).
//!
//! Full expansion ([`MctsConfig::full_expansion`], the match-3 persona paper's MCTS) is the other
//! way to grow the tree: a leaf gets all its children at once and one of them, drawn uniformly,
//! is played out. Selection then takes a node's unvisited children first (in child order) and
//! the formula only among visited ones. The paper leaves unvisited siblings unaddressed; "visit
//! each once first" is the spec digest's assumption (match3-personas-and-player2.md, A.3). The
//! move finally played by a move-by-move player is chosen by [`FinalChoice`]: best mean, most
//! visits, or the selection formula itself (the paper: "the evolved formula picks the best
//! immediate child").

use super::formula::{Compiled, Formula, Stats};
use crate::game::{Game, pick_grouped};
use crate::rng::Rng;
use crate::wgdl::Status;
use rand::RngExt;
use std::collections::HashSet;
use std::time::{Duration, Instant};

/// How long a search runs.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Budget {
    /// A number of iterations: the same seed gives the same result.
    Iterations(u64),
    /// Wall-clock milliseconds.
    Millis(u64),
}

impl Budget {
    /// The budget divided into `parts` equal shares (at least one iteration / millisecond each).
    pub fn split(self, parts: usize) -> Budget {
        let parts = parts.max(1) as u64;
        match self {
            Budget::Iterations(n) => Budget::Iterations((n / parts).max(1)),
            Budget::Millis(n) => Budget::Millis((n / parts).max(1)),
        }
    }
}

/// Settings of one MCTS run. Defaults are the thesis's (enhancements off unless the thesis
/// used them by default).
#[derive(Clone, Debug)]
pub struct MctsConfig {
    pub formula: Formula,
    /// Action-group weights for playouts; `None` = uniform random playouts.
    pub group_weights: Option<Vec<f64>>,
    /// Abort an iteration whose new node's state already exists at the same depth.
    pub duplicate_detection: bool,
    /// On a new best playout, add every state along it to the tree.
    pub add_best_path: bool,
    /// Stop a playout, scored 0, once `bound × factor < best so far`.
    pub forfeit: Option<f64>,
    /// Global (non-tree) selection until the tree has this many nodes, then the tree policy.
    pub non_tree_until: Option<usize>,
    /// Progressive widening: the initial cap on children per node, raised by one whenever no
    /// node can be expanded under the current cap.
    pub widening: Option<usize>,
    /// Node limit per level: L = estimated nodes / best game length × this factor.
    pub node_limit_factor: Option<f64>,
    /// Moves in one playout before it is cut (and scored as it stands).
    pub max_playout_moves: u32,
    /// CUT_OFF (Monster Carlo): a subtree whose every line has been expanded to its end is
    /// marked exhausted and skipped by selection; the search stops when the root is exhausted.
    /// Sound for deterministic single-player games, where an exhausted subtree's best is exact.
    pub cut_off: bool,
    /// After a duplicate abort, retry the next untried move at the same leaf instead of
    /// descending again. An exact shortcut — the next iteration would select the same leaf,
    /// since an abort changes no statistic and selection draws no random numbers — so it is on
    /// by default; `false` exists to test that claim.
    pub retry_duplicates: bool,
    /// Full expansion (the match-3 persona paper): a selected non-terminal leaf gets one child
    /// per legal move at once (one state step each), one new child drawn uniformly is played
    /// out, and its result is backpropagated from that child. Selection takes the first
    /// unvisited child of a node before any formula comparison and stops at a node without
    /// children. Costs one `apply` + `legal` per sibling per expansion, and memory for every
    /// sibling's move list. Off by default. Ignored under it: `duplicate_detection`,
    /// `add_best_path`, `widening`, `node_limit_factor` and `non_tree_until`. `cut_off` works
    /// (a fully expanded node is exhausted once all its children are). Tree parallelism runs
    /// but is not the paper's algorithm: a worker that reaches a leaf another worker is still
    /// expanding plays out from that leaf without expanding it.
    pub full_expansion: bool,
}

/// How [`decide_with`] picks the move to play among the root's children.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FinalChoice {
    /// The highest mean reward (unvisited children count as mean 0); ties go to the first child.
    #[default]
    BestMean,
    /// The most visits; ties go to the first child.
    MostVisited,
    /// The highest value of the selection formula, with the same statistics as selection,
    /// among the visited children (the first child if none was visited); ties go to the first.
    Formula,
}

impl Default for MctsConfig {
    fn default() -> MctsConfig {
        MctsConfig {
            formula: Formula::ucb1(1.0, 2.0),
            group_weights: None,
            duplicate_detection: false,
            add_best_path: false,
            forfeit: None,
            non_tree_until: None,
            widening: None,
            node_limit_factor: None,
            max_playout_moves: 100_000,
            cut_off: false,
            retry_duplicates: true,
            full_expansion: false,
        }
    }
}

/// Scores a state for the search: the thesis's result formula, or a game's reward.
pub trait Evaluator<S>: Sync {
    /// The value of `state` in [0, 1] (higher is better) for `player`.
    fn value(&self, state: &S, player: usize) -> f64;
    /// An optimistic bound on any value reachable from `state`, if one is known (forfeiting).
    fn bound(&self, _state: &S) -> Option<f64> {
        None
    }
}

/// Which states end the sub-game being searched.
#[derive(Clone, Copy, Debug)]
pub struct SubGame {
    /// The search's terminal: the game's goal index reaches this (or the game ends).
    pub goal_target: usize,
}

/// Games whose progress through ordered goals the search can see (WGDL goals).
pub trait Goals: Game {
    fn goals_reached(&self, state: &Self::State) -> usize;
    fn n_goals(&self) -> usize;
}

#[derive(Clone, Debug)]
pub struct Node<M> {
    pub mv: Option<M>,
    pub parent: u32,
    pub children: Vec<u32>,
    pub untried: Vec<M>,
    pub visits: u32,
    pub sum: f64,
    pub sumsq: f64,
    pub best: f64,
    /// Legal moves in this node's state.
    pub moves: u32,
    pub depth: u32,
    pub terminal: bool,
    /// Side that made the move into this node.
    pub mover: u8,
    /// CUT_OFF: every line below has been expanded to its end.
    pub exhausted: bool,
}

/// The outcome of a search: the best terminal (sub-game) state seen and how to get there.
#[derive(Clone, Debug)]
pub struct SearchResult<S, M> {
    pub value: f64,
    pub path: Vec<M>,
    pub state: S,
    pub iterations: u64,
    pub aborted: u64,
    pub forfeited: u64,
    pub nodes: usize,
    pub elapsed: Duration,
}

/// One search tree and the best result it has seen.
pub struct Tree<G: Game> {
    pub nodes: Vec<Node<G::Move>>,
    per_depth: Vec<u32>,
    seen: Vec<HashSet<u64>>,
    cap: usize,
    pub best_value: f64,
    pub best_path: Vec<G::Move>,
    pub best_state: G::State,
    pub iterations: u64,
    pub aborted: u64,
    pub forfeited: u64,
}

/// What phase 1 hands to phase 2: the path to replay and the node to grow from.
pub struct Selected<M> {
    pub leaf: u32,
    pub path_moves: Vec<M>,
    pub path_nodes: Vec<u32>,
    /// The untried move taken for expansion (already removed from the leaf's list).
    pub expand: Option<M>,
    /// Full expansion: every move of the leaf (its whole untried list, moved out), in the
    /// order the children will have; empty otherwise.
    pub expand_all: Vec<M>,
    /// Full expansion: the index in `expand_all` of the child to play out.
    pub rollout: usize,
}

/// One child made by full expansion, for phase 3 to add.
pub struct NewChild<M> {
    pub mv: M,
    /// The child's legal moves (empty when it is terminal).
    pub untried: Vec<M>,
    pub terminal: bool,
    /// Side that made the move into the child.
    pub mover: u8,
}

/// What phase 2 hands to phase 3.
pub struct Simulated<S, M> {
    pub new_child: Option<(M, Vec<M>, u64, bool, u8)>,
    /// Full expansion: the leaf's children in `Selected::expand_all` order (empty otherwise).
    pub new_children: Vec<NewChild<M>>,
    pub values: [f64; 4],
    pub duplicate: bool,
    pub forfeited: bool,
    /// The playout's moves after the expanded node, and its final state, when it beat the best.
    pub playout: Vec<M>,
    pub final_state: Option<S>,
    pub final_value: f64,
}

/// Scratch buffers reused across iterations (nothing allocated per move).
pub struct Scratch<G: Game> {
    pub state: G::State,
    /// The selected leaf's state, kept so that duplicate retries need no replay.
    pub leaf: G::State,
    pub legal: Vec<G::Move>,
    pub playout: Vec<G::Move>,
}

impl<G: Game> Scratch<G> {
    pub fn new(root: &G::State) -> Scratch<G> {
        Scratch { state: root.clone(), leaf: root.clone(), legal: Vec::with_capacity(256), playout: Vec::with_capacity(256) }
    }
}

impl<G: Game + Goals> Tree<G> {
    /// A tree rooted at `root`.
    pub fn new(game: &G, root: &G::State, sub: SubGame, cfg: &MctsConfig) -> Result<Tree<G>, G::Error> {
        let mut legal = Vec::new();
        game.legal(root, &mut legal)?;
        let terminal = is_terminal(game, root, &legal, sub);
        let n_legal = legal.len() as u32;
        let mut seen = Vec::new();
        if cfg.duplicate_detection {
            seen.push(HashSet::from([game.hash(root)]));
        }
        Ok(Tree {
            nodes: vec![Node {
                mv: None,
                parent: u32::MAX,
                children: Vec::new(),
                untried: if terminal { Vec::new() } else { legal },
                visits: 0,
                sum: 0.0,
                sumsq: 0.0,
                best: 0.0,
                moves: n_legal,
                depth: 0,
                terminal,
                mover: 0,
                exhausted: false,
            }],
            per_depth: vec![1],
            seen,
            cap: cfg.widening.unwrap_or(usize::MAX),
            best_value: f64::NEG_INFINITY,
            best_path: Vec::new(),
            best_state: root.clone(),
            iterations: 0,
            aborted: 0,
            forfeited: 0,
        })
    }

    fn can_expand(&self, n: u32, level_cap: u32) -> bool {
        let node = &self.nodes[n as usize];
        !node.untried.is_empty()
            && node.children.len() < self.cap
            && self.per_depth.get(node.depth as usize + 1).is_none_or(|&c| c < level_cap)
    }

    fn stats(&self, child: u32) -> Stats {
        let c = &self.nodes[child as usize];
        let p = &self.nodes[c.parent as usize];
        let v = c.visits.max(1) as f64;
        Stats {
            mean: c.sum / v,
            wins: c.sum,
            visits: v,
            parent: p.visits.max(1) as f64,
            sumsq: c.sumsq,
            best: c.best,
            moves: c.moves as f64,
        }
    }

    fn level_cap(&self, cfg: &MctsConfig, estimated_nodes: f64) -> u32 {
        match cfg.node_limit_factor {
            Some(x) => {
                let len = self.best_path.len().max(1) as f64;
                ((estimated_nodes / len) * x).max(1.0) as u32
            }
            None => u32::MAX,
        }
    }

    /// Phase 1 (tree only): choose where to grow.
    pub fn select(&mut self, f: &Compiled, cfg: &MctsConfig, rng: &mut Rng, estimated_nodes: f64) -> Selected<G::Move> {
        if cfg.full_expansion {
            return self.select_full(f, rng);
        }
        let level_cap = self.level_cap(cfg, estimated_nodes);
        let global = cfg.non_tree_until.is_some_and(|n| self.nodes.len() < n);
        let mut leaf = 0u32;
        if global {
            // Non-tree policy: the expandable node with the highest formula value.
            let mut best = f64::NEG_INFINITY;
            let mut found = false;
            for i in 0..self.nodes.len() as u32 {
                if self.can_expand(i, level_cap) {
                    let v = if i == 0 { f64::INFINITY } else { f.eval(&self.stats(i)) };
                    if v > best {
                        best = v;
                        leaf = i;
                        found = true;
                    }
                }
            }
            if !found {
                leaf = self.descend(0, f, level_cap);
            }
        } else {
            leaf = self.descend(0, f, level_cap);
        }
        if cfg.widening.is_some() && !self.can_expand(leaf, level_cap) && !self.nodes[leaf as usize].untried.is_empty() {
            // Nothing expandable under this cap along the way: widen if nothing is anywhere.
            if !(0..self.nodes.len() as u32).any(|i| self.can_expand(i, level_cap)) {
                self.cap = self.cap.saturating_add(1);
            }
        }
        let (path_nodes, path_moves) = self.path_to(leaf);
        let expand = if self.can_expand(leaf, level_cap) {
            let node = &mut self.nodes[leaf as usize];
            let k = rng.random_range(0..node.untried.len());
            Some(node.untried.swap_remove(k))
        } else {
            None
        };
        Selected { leaf, path_moves, path_nodes, expand, expand_all: Vec::new(), rollout: 0 }
    }

    /// Phase 1 under full expansion: descend to a node without children; if it is not terminal,
    /// all its moves are to become children and one of them, drawn uniformly, is played out.
    fn select_full(&mut self, f: &Compiled, rng: &mut Rng) -> Selected<G::Move> {
        let leaf = self.descend_full(f);
        let (path_nodes, path_moves) = self.path_to(leaf);
        let node = &mut self.nodes[leaf as usize];
        let (expand_all, rollout) = if node.terminal || node.untried.is_empty() {
            (Vec::new(), 0)
        } else {
            let all = std::mem::take(&mut node.untried);
            let k = rng.random_range(0..all.len());
            (all, k)
        };
        Selected { leaf, path_moves, path_nodes, expand: None, expand_all, rollout }
    }

    /// The nodes below the root down to `leaf`, and their moves.
    fn path_to(&self, leaf: u32) -> (Vec<u32>, Vec<G::Move>) {
        let mut path_nodes = Vec::new();
        let mut n = leaf;
        while n != 0 {
            path_nodes.push(n);
            n = self.nodes[n as usize].parent;
        }
        path_nodes.reverse();
        let path_moves = path_nodes.iter().map(|&n| self.nodes[n as usize].mv.expect("non-root nodes have a move")).collect();
        (path_nodes, path_moves)
    }

    /// Full-expansion descent: at a node with children, its first unvisited child (in child
    /// order), else the child with the highest formula value (ties: the first); exhausted
    /// children are skipped. Stops at a node without children (or whose children are all
    /// exhausted).
    fn descend_full(&self, f: &Compiled) -> u32 {
        let mut n = 0u32;
        loop {
            let node = &self.nodes[n as usize];
            let live = || node.children.iter().copied().filter(|&c| !self.nodes[c as usize].exhausted);
            let pick = match live().find(|&c| self.nodes[c as usize].visits == 0) {
                Some(c) => Some(c),
                None => {
                    let mut best = f64::NEG_INFINITY;
                    let mut pick = None;
                    for c in live() {
                        let v = f.eval(&self.stats(c));
                        if v > best || pick.is_none() {
                            best = v;
                            pick = Some(c);
                        }
                    }
                    pick
                }
            };
            match pick {
                Some(c) => n = c,
                None => return n,
            }
        }
    }

    fn descend(&self, mut n: u32, f: &Compiled, level_cap: u32) -> u32 {
        loop {
            let node = &self.nodes[n as usize];
            if node.terminal || self.can_expand(n, level_cap) || node.children.is_empty() {
                return n;
            }
            let mut best = f64::NEG_INFINITY;
            let mut pick = u32::MAX;
            for &c in &node.children {
                if self.nodes[c as usize].exhausted {
                    continue;
                }
                let v = f.eval(&self.stats(c));
                if v > best || pick == u32::MAX {
                    best = v;
                    pick = c;
                }
            }
            if pick == u32::MAX {
                return n;
            }
            n = pick;
        }
    }

    /// Phase 3 (tree only): add the new node (unless it was a duplicate), backpropagate, and
    /// keep the best result.
    pub fn update(
        &mut self,
        game: &G,
        sel: &Selected<G::Move>,
        sim: Simulated<G::State, G::Move>,
        cfg: &MctsConfig,
        root: &G::State,
        sub: SubGame,
    ) -> Result<(), G::Error> {
        self.iterations += 1;
        if sim.forfeited {
            self.forfeited += 1;
        }
        if sim.duplicate {
            self.aborted += 1;
            if cfg.cut_off {
                self.mark_exhausted(sel.leaf);
            }
            return Ok(());
        }
        let mut tail = sel.leaf;
        let mut expanded = None;
        // Full expansion: every child in order; the played-out one is where backpropagation starts.
        for (i, c) in sim.new_children.into_iter().enumerate() {
            let id = self.push(sel.leaf, c.mv, c.untried, c.terminal, c.mover);
            if i == sel.rollout {
                tail = id;
                expanded = Some(c.mv);
            }
        }
        if let Some((mv, untried, hash, terminal, mover)) = sim.new_child {
            let depth = self.nodes[sel.leaf as usize].depth + 1;
            if cfg.duplicate_detection {
                if self.seen.len() <= depth as usize {
                    self.seen.resize_with(depth as usize + 1, HashSet::new);
                }
                if !self.seen[depth as usize].insert(hash) {
                    // Another worker added the same state meanwhile.
                    self.aborted += 1;
                    if cfg.cut_off {
                        self.mark_exhausted(sel.leaf);
                    }
                    return Ok(());
                }
            }
            tail = self.push(sel.leaf, mv, untried, terminal, mover);
            expanded = Some(mv);
        }
        // Only a new best needs the path as a list (no allocation on other iterations).
        if sim.final_value > self.best_value
            && let Some(state) = sim.final_state
        {
            let mut path_moves = sel.path_moves.clone();
            path_moves.extend(expanded);
            self.best_value = sim.final_value;
            self.best_path.clone_from(&path_moves);
            self.best_path.extend_from_slice(&sim.playout);
            self.best_state = state;
            if cfg.add_best_path && !cfg.full_expansion && !sim.playout.is_empty() {
                tail = self.add_path(game, root, &path_moves, tail, &sim.playout, cfg, sub)?;
            }
        }
        if cfg.cut_off {
            self.mark_exhausted(tail);
        }
        // Backpropagate from the deepest node to the root.
        let mut n = tail;
        loop {
            let node = &mut self.nodes[n as usize];
            let v = sim.values[node.mover as usize & 3];
            node.visits += 1;
            node.sum += v;
            node.sumsq += v * v;
            if v > node.best {
                node.best = v;
            }
            if n == 0 {
                break;
            }
            n = node.parent;
        }
        Ok(())
    }

    /// After a duplicate abort at `leaf`: the next untried move there, exactly as the next
    /// iteration's selection would choose it (an abort changes no statistics and selection is
    /// deterministic), or `None` when the leaf can no longer be expanded.
    pub fn retry_expand(&mut self, leaf: u32, cfg: &MctsConfig, rng: &mut Rng, estimated_nodes: f64) -> Option<G::Move> {
        let level_cap = self.level_cap(cfg, estimated_nodes);
        if self.nodes[leaf as usize].exhausted || !self.can_expand(leaf, level_cap) {
            return None;
        }
        let node = &mut self.nodes[leaf as usize];
        let k = rng.random_range(0..node.untried.len());
        Some(node.untried.swap_remove(k))
    }

    /// True when the search has nothing left to learn (CUT_OFF: the root is exhausted).
    pub fn done(&self) -> bool {
        self.nodes[0].exhausted
    }

    /// Marks `n` and its ancestors exhausted while every line below them is finished.
    fn mark_exhausted(&mut self, mut n: u32) {
        loop {
            let node = &self.nodes[n as usize];
            let done = node.terminal || (node.untried.is_empty() && node.children.iter().all(|&c| self.nodes[c as usize].exhausted));
            if !done {
                return;
            }
            self.nodes[n as usize].exhausted = true;
            if n == 0 {
                return;
            }
            n = self.nodes[n as usize].parent;
        }
    }

    fn push(&mut self, parent: u32, mv: G::Move, untried: Vec<G::Move>, terminal: bool, mover: u8) -> u32 {
        let depth = self.nodes[parent as usize].depth + 1;
        let id = self.nodes.len() as u32;
        let moves = untried.len() as u32;
        self.nodes.push(Node {
            mv: Some(mv),
            parent,
            children: Vec::new(),
            untried,
            visits: 0,
            sum: 0.0,
            sumsq: 0.0,
            best: 0.0,
            moves,
            depth,
            terminal,
            mover,
            exhausted: false,
        });
        self.nodes[parent as usize].children.push(id);
        if self.per_depth.len() <= depth as usize {
            self.per_depth.resize(depth as usize + 1, 0);
        }
        self.per_depth[depth as usize] += 1;
        id
    }

    /// Add-best-path: every state along the winning playout becomes a node.
    fn add_path(
        &mut self,
        game: &G,
        root: &G::State,
        prefix: &[G::Move],
        from: u32,
        playout: &[G::Move],
        cfg: &MctsConfig,
        sub: SubGame,
    ) -> Result<u32, G::Error> {
        let mut st = root.clone();
        for &m in prefix {
            game.apply(&mut st, m)?;
        }
        let mut legal = Vec::new();
        let mut at = from;
        for &m in playout {
            let mover = game.to_move(&st) as u8;
            // The move may already be a child (or be reserved as untried).
            if let Some(&c) = self.nodes[at as usize].children.iter().find(|&&c| self.nodes[c as usize].mv == Some(m)) {
                game.apply(&mut st, m)?;
                at = c;
                continue;
            }
            let node = &mut self.nodes[at as usize];
            if let Some(k) = node.untried.iter().position(|&u| u == m) {
                node.untried.swap_remove(k);
            }
            game.apply(&mut st, m)?;
            game.legal(&st, &mut legal)?;
            let terminal = is_terminal(game, &st, &legal, sub);
            if cfg.duplicate_detection {
                let depth = self.nodes[at as usize].depth as usize + 1;
                if self.seen.len() <= depth {
                    self.seen.resize_with(depth + 1, HashSet::new);
                }
                self.seen[depth].insert(game.hash(&st));
            }
            let untried = if terminal { Vec::new() } else { legal.clone() };
            at = self.push(at, m, untried, terminal, mover);
        }
        Ok(at)
    }
}

impl<G: Game + Goals> Tree<G> {
    /// The subtree under `child` as a new tree (indices renumbered breadth-first). Duplicate
    /// detection starts afresh below the new root.
    pub fn reroot(self, child: u32, game: &G, state: &G::State, sub: SubGame, cfg: &MctsConfig) -> Result<Tree<G>, G::Error> {
        let mut fresh = Tree::new(game, state, sub, cfg)?;
        let mut map = vec![u32::MAX; self.nodes.len()];
        let mut queue = std::collections::VecDeque::from([child]);
        let mut nodes = Vec::new();
        let base = self.nodes[child as usize].depth;
        while let Some(n) = queue.pop_front() {
            map[n as usize] = nodes.len() as u32;
            let mut node = self.nodes[n as usize].clone();
            node.depth -= base;
            queue.extend(node.children.iter().copied());
            nodes.push(node);
        }
        for node in nodes.iter_mut() {
            node.parent = if node.parent == u32::MAX { u32::MAX } else { map[node.parent as usize] };
            for c in node.children.iter_mut() {
                *c = map[*c as usize];
            }
        }
        nodes[0].mv = None;
        nodes[0].parent = u32::MAX;
        fresh.per_depth = vec![0; nodes.iter().map(|n| n.depth as usize).max().unwrap_or(0) + 1];
        for n in &nodes {
            fresh.per_depth[n.depth as usize] += 1;
        }
        fresh.nodes = nodes;
        fresh.iterations = self.iterations;
        Ok(fresh)
    }
}

/// True when `state` ends the sub-game.
pub fn is_terminal<G: Game + Goals>(game: &G, state: &G::State, legal: &[G::Move], sub: SubGame) -> bool {
    game.status(state, legal) != Status::Running || game.goals_reached(state) >= sub.goal_target
}

/// Phase 2 (state only): replay the path, expand, play out, evaluate.
#[allow(clippy::too_many_arguments)]
pub fn simulate<G: Game + Goals, E: Evaluator<G::State>>(
    game: &G,
    root: &G::State,
    sel: &Selected<G::Move>,
    leaf_terminal: bool,
    cfg: &MctsConfig,
    eval: &E,
    sub: SubGame,
    best_so_far: f64,
    seen_at_depth: Option<&HashSet<u64>>,
    rng: &mut Rng,
    scratch: &mut Scratch<G>,
) -> Result<Simulated<G::State, G::Move>, G::Error> {
    scratch.leaf.clone_from(root);
    for &m in &sel.path_moves {
        game.apply(&mut scratch.leaf, m)?;
    }
    simulate_at_leaf(game, sel, leaf_terminal, cfg, eval, sub, best_so_far, seen_at_depth, rng, scratch)
}

/// Phase 2 from the leaf state already in `scratch.leaf` (after [`simulate`] replayed it).
#[allow(clippy::too_many_arguments)]
pub fn simulate_at_leaf<G: Game + Goals, E: Evaluator<G::State>>(
    game: &G,
    sel: &Selected<G::Move>,
    leaf_terminal: bool,
    cfg: &MctsConfig,
    eval: &E,
    sub: SubGame,
    best_so_far: f64,
    seen_at_depth: Option<&HashSet<u64>>,
    rng: &mut Rng,
    scratch: &mut Scratch<G>,
) -> Result<Simulated<G::State, G::Move>, G::Error> {
    let st = &mut scratch.state;
    st.clone_from(&scratch.leaf);
    let mut new_child = None;
    if let Some(m) = sel.expand {
        let mover = game.to_move(st) as u8;
        game.apply(st, m)?;
        let hash = if cfg.duplicate_detection { game.hash(st) } else { 0 };
        if let Some(seen) = seen_at_depth
            && seen.contains(&hash)
        {
            return Ok(Simulated {
                new_child: None,
                new_children: Vec::new(),
                values: [0.0; 4],
                duplicate: true,
                forfeited: false,
                playout: Vec::new(),
                final_state: None,
                final_value: 0.0,
            });
        }
        game.legal(st, &mut scratch.legal)?;
        let terminal = is_terminal(game, st, &scratch.legal, sub);
        let untried = if terminal { Vec::new() } else { scratch.legal.clone() };
        new_child = Some((m, untried, hash, terminal, mover));
    }
    let mut new_children = Vec::new();
    if !sel.expand_all.is_empty() {
        // Full expansion: one step per child from the leaf; the child to play out goes last so
        // that its state is the one left in `st`.
        new_children.reserve_exact(sel.expand_all.len());
        let mover = game.to_move(&scratch.leaf) as u8;
        for (i, &m) in sel.expand_all.iter().enumerate() {
            if i != sel.rollout {
                st.clone_from(&scratch.leaf);
                game.apply(st, m)?;
                new_children.push(new_child_at(game, st, m, mover, sub, &mut scratch.legal)?);
            }
        }
        let m = sel.expand_all[sel.rollout];
        st.clone_from(&scratch.leaf);
        game.apply(st, m)?;
        let rolled = new_child_at(game, st, m, mover, sub, &mut scratch.legal)?;
        new_children.insert(sel.rollout, rolled);
    }
    // Playout.
    scratch.playout.clear();
    let mut forfeited = false;
    if !(leaf_terminal && sel.expand.is_none() && sel.expand_all.is_empty()) {
        let mut n = 0u32;
        loop {
            game.legal(st, &mut scratch.legal)?;
            if is_terminal(game, st, &scratch.legal, sub) || n >= cfg.max_playout_moves {
                break;
            }
            if let Some(factor) = cfg.forfeit
                && best_so_far > 0.0
                && let Some(b) = eval.bound(st)
                && b * factor < best_so_far
            {
                forfeited = true;
                break;
            }
            let m = match game.playout_move(st, rng)? {
                Some(m) => m,
                None => match &cfg.group_weights {
                    Some(w) => pick_grouped(game, &scratch.legal, w, rng),
                    None => scratch.legal[rng.random_range(0..scratch.legal.len())],
                },
            };
            game.apply(st, m)?;
            scratch.playout.push(m);
            n += 1;
        }
    }
    let mut values = [0.0; 4];
    let final_value = if forfeited { 0.0 } else { eval.value(st, 0) };
    if !forfeited {
        for (p, v) in values.iter_mut().enumerate() {
            *v = if p == 0 { final_value } else { eval.value(st, p) };
        }
    }
    let better = !forfeited && final_value > best_so_far;
    Ok(Simulated {
        new_child,
        new_children,
        values,
        duplicate: false,
        forfeited,
        playout: if better { scratch.playout.clone() } else { Vec::new() },
        final_state: if better { Some(st.clone()) } else { None },
        final_value,
    })
}

/// The child reached by `mv` from the state in `st` (already applied), as full expansion keeps it.
fn new_child_at<G: Game + Goals>(
    game: &G,
    st: &G::State,
    mv: G::Move,
    mover: u8,
    sub: SubGame,
    legal: &mut Vec<G::Move>,
) -> Result<NewChild<G::Move>, G::Error> {
    game.legal(st, legal)?;
    let terminal = is_terminal(game, st, legal, sub);
    Ok(NewChild { mv, untried: if terminal { Vec::new() } else { legal.clone() }, terminal, mover })
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
        let mut sel = tree.select(&f, cfg, rng, est);
        let leaf_terminal = tree.nodes[sel.leaf as usize].terminal;
        let depth = tree.nodes[sel.leaf as usize].depth as usize + 1;
        let seen = if cfg.duplicate_detection { tree.seen.get(depth) } else { None };
        let mut sim = simulate(game, root, &sel, leaf_terminal, cfg, eval, sub, tree.best_value, seen, rng, &mut scratch)?;
        // Duplicate aborts: each counts as an iteration; the next one would select this same
        // leaf again, so retry here without descending and replaying.
        let mut go_on;
        loop {
            let duplicate = sim.duplicate;
            let value = (!duplicate).then_some(sim.final_value);
            tree.update(game, &sel, sim, cfg, root, sub)?;
            go_on = observe(Rollout { iteration: tree.iterations, value, best: tree.best_value });
            if !duplicate || spent(&tree) || !cfg.retry_duplicates || !go_on {
                break;
            }
            let Some(mv) = tree.retry_expand(sel.leaf, cfg, rng, est) else { break };
            sel.expand = Some(mv);
            let seen = tree.seen.get(depth);
            sim = simulate_at_leaf(game, &sel, leaf_terminal, cfg, eval, sub, tree.best_value, seen, rng, &mut scratch)?;
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
    let tree = decision_tree(game, root, cfg, eval, iterations, rng)?;
    match tree.final_choice(&cfg.formula.compile(), choice) {
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
    // Two-sided games have no goals to split at: the sub-game is the whole game.
    let sub = SubGame { goal_target: usize::MAX };
    let f = cfg.formula.compile();
    let mut tree = Tree::new(game, root, sub, cfg)?;
    let mut scratch = Scratch::new(root);
    while tree.iterations < iterations && !tree.done() {
        let sel = tree.select(&f, cfg, rng, iterations as f64);
        let leaf_terminal = tree.nodes[sel.leaf as usize].terminal;
        let sim = simulate(game, root, &sel, leaf_terminal, cfg, eval, sub, f64::INFINITY, None, rng, &mut scratch)?;
        tree.update(game, &sel, sim, cfg, root, sub)?;
    }
    Ok(tree)
}

impl<G: Game + Goals> Tree<G> {
    /// The root child `choice` picks (with `f` for [`FinalChoice::Formula`]) and its mean
    /// reward (0 if unvisited); `None` when the root has no children.
    pub fn final_choice(&self, f: &Compiled, choice: FinalChoice) -> Option<(G::Move, f64)> {
        let children = &self.nodes[0].children;
        let mean = |c: u32| {
            let n = &self.nodes[c as usize];
            if n.visits == 0 { 0.0 } else { n.sum / n.visits as f64 }
        };
        let mut pick: Option<(u32, f64)> = None;
        for &c in children {
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
        let c = pick.map(|p| p.0).or_else(|| children.first().copied())?;
        Some((self.nodes[c as usize].mv.expect("children have moves"), mean(c)))
    }
}
