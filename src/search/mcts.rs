//! Monte Carlo Tree Search over any [`Game`], with the thesis's enhancements as switches.
//!
//! Nodes store no game state (the thesis's default: memory is the bottleneck) except a bounded
//! number kept at much-visited nodes ([`MctsConfig::state_cache`]); an iteration selects a path
//! by the [`Formula`] without touching the game, replays the path's moves from the root state
//! (or from the deepest kept state on it), expands one untried move, plays out with the
//! action-group policy until the sub-game ends, and backpropagates. The three phases — select
//! (tree only), simulate (state only), update (tree only) — are separate functions so that tree
//! parallelism can hold its global lock only around the first and the last, as the thesis did.
//! Nodes live in one vector and their untried moves in one move arena, so an iteration
//! allocates nothing once the tree has room.
//!
//! Enhancements, each off by default and free when off (see [`MctsConfig`]): duplicate-state
//! detection per depth (an iteration that reaches a known state is aborted but counted);
//! add-best-path; forfeiting hopeless playouts; non-tree (global) selection with a switch-over;
//! progressive widening; a node limit per level; consecutive split runs; root and tree
//! parallelism (in [`super::run`]).
//!
//! Full expansion ([`MctsConfig::full_expansion`], the match-3 persona paper's MCTS) is the other
//! way to grow the tree: a leaf gets all its children at once and one of them, drawn uniformly,
//! is played out. The children are made lazily: a child's state, legal moves and terminal flag
//! are computed when it is first visited (the one played out at once, the others when selection
//! reaches them), which gives the statistics, the random draws and the moves of the eager
//! version (each child applied and its moves listed at expansion, kept selectable as
//! [`MctsConfig::eager_expansion`] to test that claim) at a fraction of the cost. Selection
//! then takes a node's unvisited children first (in child order) and the formula only among
//! visited ones. The paper leaves unvisited siblings unaddressed; "visit
//! each once first" is the spec digest's assumption (match3-personas-and-player2.md, A.3). The
//! move finally played by a move-by-move player is chosen by [`FinalChoice`]: best mean, most
//! visits, or the selection formula itself (the paper: "the evolved formula picks the best
//! immediate child").

use super::formula::{Compiled, Formula, Stats};
/// The goal contract lives with the [`Game`] contract; named here too for older paths.
pub use crate::game::Goals;
use crate::game::{Game, pick_grouped};
use crate::rng::Rng;
use crate::wgdl::Status;
use rand::RngExt;
use std::collections::HashSet;

/// "No node" in the child lists.
const NIL: u32 = u32::MAX;
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
    /// Full expansion computed eagerly: every new child's state and legal moves at expansion
    /// (the paper's code), instead of when the child is first visited. Same results, more work;
    /// it exists so that tests can hold the lazy version to it.
    pub eager_expansion: bool,
    /// States kept at tree nodes so that an iteration replays its path from the deepest kept
    /// one instead of from the root: up to this many (0: none). A node's state is kept once it
    /// has been visited [`STATE_CACHE_VISITS`] times. Speed only: a replay from a kept state
    /// reaches the same leaf state. Tree parallelism keeps none.
    pub state_cache: usize,
}

/// Visits after which a node's state is kept ([`MctsConfig::state_cache`]).
pub const STATE_CACHE_VISITS: u32 = 4;

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
            eager_expansion: false,
            state_cache: 8192,
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

/// A tree node. Its children are a range of the tree's child-index arena, in creation order, and
/// its untried moves a range of the tree's move arena (so a node costs no allocation of its own).
/// Children listed side by side, not linked from one to the next, let selection load all of a
/// node's children at once instead of one cache miss after another.
#[derive(Clone, Debug)]
pub struct Node<M> {
    pub mv: Option<M>,
    pub parent: u32,
    /// The children are `Tree::kids[kids_at .. kids_at + n_children]`, in a block with room for
    /// `kids_cap` (the node's legal moves, when known at its first child).
    kids_at: u32,
    kids_cap: u32,
    n_children: u32,
    /// The untried moves are `Tree::arena[untried_at .. untried_at + n_untried]`.
    untried_at: u32,
    n_untried: u32,
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
    /// Its legal moves, `moves` and `terminal` are known. A child made by lazy full expansion
    /// learns them when it is first visited.
    pub known: bool,
    /// The slot in the tree's state cache holding this node's state, or NIL.
    state: u32,
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
    /// Every node's untried moves, each node's a range.
    arena: Vec<G::Move>,
    /// Every node's children (node indices), each node's a block.
    kids: Vec<u32>,
    per_depth: Vec<u32>,
    seen: Vec<HashSet<u64>>,
    cap: usize,
    pub best_value: f64,
    pub best_path: Vec<G::Move>,
    pub best_state: G::State,
    pub iterations: u64,
    pub aborted: u64,
    pub forfeited: u64,
    /// Kept node states (see [`MctsConfig::state_cache`]); the slots in use, of at most `cap`.
    states: Vec<G::State>,
    states_used: usize,
    states_cap: usize,
}

/// What phase 1 hands to phase 2: the path to replay and the node to grow from. Reused from one
/// iteration to the next ([`Selected::new`] once, then [`Tree::select`] fills it).
pub struct Selected<M> {
    pub leaf: u32,
    pub path_moves: Vec<M>,
    pub path_nodes: Vec<u32>,
    /// The untried move taken for expansion (already removed from the leaf's list).
    pub expand: Option<M>,
    /// The leaf is terminal (as far as the tree knows: an unknown leaf is found out in phase 2).
    pub leaf_terminal: bool,
    /// Full expansion: the leaf's moves are known, and `expand_all` holds them (taken from its
    /// untried list, in order; empty when there is nothing to expand). When they are not known,
    /// phase 2 lists them.
    pub leaf_known: bool,
    pub expand_all: Vec<M>,
    /// Replay from the kept state of `path_nodes[start - 1]` (`start` moves already made), or
    /// from the root (0).
    pub start: usize,
    /// Keep the state after `path_moves[..save]` (that of `path_nodes[save - 1]`), if > 0.
    pub save: usize,
}

impl<M> Selected<M> {
    pub fn new() -> Selected<M> {
        Selected {
            leaf: 0,
            path_moves: Vec::new(),
            path_nodes: Vec::new(),
            expand: None,
            leaf_terminal: false,
            leaf_known: true,
            expand_all: Vec::new(),
            start: 0,
            save: 0,
        }
    }
}

impl<M> Default for Selected<M> {
    fn default() -> Selected<M> {
        Selected::new()
    }
}

/// A child made by standard expansion, for phase 3 to add (its legal moves are in
/// [`Scratch::child_moves`]).
#[derive(Clone, Copy, Debug)]
pub struct NewChild<M> {
    pub mv: M,
    pub hash: u64,
    pub terminal: bool,
    /// Side that made the move into the child.
    pub mover: u8,
}

/// A full expansion, for phase 3 to add: the leaf's moves (in [`Selected::expand_all`], or in
/// [`Scratch::leaf_moves`] when phase 2 listed them) all become children, and child `rollout`
/// was played out (its legal moves are in [`Scratch::child_moves`]).
#[derive(Clone, Copy, Debug)]
pub struct FullExpansion {
    pub rollout: usize,
    pub mover: u8,
    /// The played-out child is terminal.
    pub terminal: bool,
}

/// What phase 2 hands to phase 3.
pub struct Simulated<S, M> {
    pub new_child: Option<NewChild<M>>,
    pub full: Option<FullExpansion>,
    /// Full expansion at a leaf whose moves were unknown: phase 2 listed them (in
    /// [`Scratch::leaf_moves`]) and found whether it is terminal.
    pub leaf_learned: Option<bool>,
    pub values: [f64; 4],
    pub duplicate: bool,
    pub forfeited: bool,
    /// The playout's moves after the expanded node, and its final state, when it beat the best.
    pub playout: Vec<M>,
    pub final_state: Option<S>,
    pub final_value: f64,
}

/// Scratch buffers reused across iterations (nothing allocated per move or per iteration).
pub struct Scratch<G: Game> {
    pub state: G::State,
    /// The selected leaf's state, kept so that duplicate retries need no replay.
    pub leaf: G::State,
    pub legal: Vec<G::Move>,
    pub playout: Vec<G::Move>,
    /// The new (or played-out) child's legal moves.
    pub child_moves: Vec<G::Move>,
    /// The leaf's legal moves, when phase 2 had to list them.
    pub leaf_moves: Vec<G::Move>,
    /// Eager expansion: every other child's (terminal, start, length) in `eager_moves`.
    eager: Vec<(bool, u32, u32)>,
    eager_moves: Vec<G::Move>,
    /// The state to keep at `Selected::save`, for phase 3.
    saved: G::State,
}

impl<G: Game> Scratch<G> {
    pub fn new(root: &G::State) -> Scratch<G> {
        Scratch {
            state: root.clone(),
            leaf: root.clone(),
            legal: Vec::with_capacity(256),
            playout: Vec::with_capacity(256),
            child_moves: Vec::with_capacity(256),
            leaf_moves: Vec::with_capacity(256),
            eager: Vec::new(),
            eager_moves: Vec::new(),
            saved: root.clone(),
        }
    }
}

/// The children of a node, in creation order.
pub type Children<'a> = std::iter::Copied<std::slice::Iter<'a, u32>>;

impl<G: Game> Tree<G> {
    /// The children of `n`, in creation order.
    #[inline]
    pub fn children(&self, n: u32) -> Children<'_> {
        let node = &self.nodes[n as usize];
        self.kids[node.kids_at as usize..(node.kids_at + node.n_children) as usize].iter().copied()
    }

    /// How many children `n` has.
    pub fn n_children(&self, n: u32) -> usize {
        self.nodes[n as usize].n_children as usize
    }

    /// The moves of `n` not yet expanded.
    pub fn untried(&self, n: u32) -> &[G::Move] {
        let node = &self.nodes[n as usize];
        &self.arena[node.untried_at as usize..(node.untried_at + node.n_untried) as usize]
    }

    /// Room for `nodes` more nodes and `moves` more untried moves without reallocating (and
    /// for as many levels as nodes, up to 4096).
    pub fn reserve(&mut self, nodes: usize, moves: usize) {
        self.nodes.reserve(nodes);
        self.arena.reserve(moves);
        // Children's blocks take at most each node's moves, as the untried lists do.
        self.kids.reserve(moves);
        self.per_depth.reserve(nodes.min(4096));
    }

    /// Makes every slot of the state cache now (clones of `st`), so that keeping states later
    /// allocates nothing.
    pub fn reserve_states(&mut self, st: &G::State) {
        while self.states.len() < self.states_cap {
            self.states.push(st.clone());
        }
    }

    /// Removes untried move `k` of `n` (the last one takes its place, as `Vec::swap_remove`).
    fn take_untried(&mut self, n: u32, k: usize) -> G::Move {
        let node = &mut self.nodes[n as usize];
        debug_assert!(k < node.n_untried as usize);
        let at = node.untried_at as usize;
        let last = at + node.n_untried as usize - 1;
        node.n_untried -= 1;
        self.arena.swap(at + k, last);
        self.arena[last]
    }

    /// Adds a child of `parent`; `untried` are its moves (empty for a terminal or unknown node).
    fn push(&mut self, parent: u32, mv: G::Move, untried: &[G::Move], terminal: bool, mover: u8, known: bool) -> u32 {
        let depth = self.nodes[parent as usize].depth + 1;
        let id = self.nodes.len() as u32;
        let moves = untried.len() as u32;
        let untried_at = self.arena.len() as u32;
        self.arena.extend_from_slice(untried);
        self.nodes.push(Node {
            mv: Some(mv),
            parent,
            kids_at: 0,
            kids_cap: 0,
            n_children: 0,
            untried_at,
            n_untried: moves,
            visits: 0,
            sum: 0.0,
            sumsq: 0.0,
            best: 0.0,
            moves,
            depth,
            terminal,
            mover,
            exhausted: false,
            known,
            state: NIL,
        });
        let p = &mut self.nodes[parent as usize];
        if p.n_children == p.kids_cap {
            // A block with room for every legal move (children never outnumber them), or, when
            // that is unknown or used up, twice the old room; the old block is left behind.
            let cap = p.moves.max(2 * p.kids_cap).max(p.n_children + 1);
            let at = self.kids.len();
            self.kids.extend_from_within(p.kids_at as usize..(p.kids_at + p.n_children) as usize);
            self.kids.resize(at + cap as usize, NIL);
            p.kids_at = at as u32;
            p.kids_cap = cap;
        }
        self.kids[(p.kids_at + p.n_children) as usize] = id;
        p.n_children += 1;
        if self.per_depth.len() <= depth as usize {
            self.per_depth.resize(depth as usize + 1, 0);
        }
        self.per_depth[depth as usize] += 1;
        id
    }

    /// The child of `n` reached by `m`, if there is one.
    fn child_by_move(&self, n: u32, m: G::Move) -> Option<u32> {
        self.children(n).find(|&c| self.nodes[c as usize].mv == Some(m))
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
        let untried = if terminal { 0 } else { n_legal };
        if terminal {
            legal.clear();
        }
        Ok(Tree {
            nodes: vec![Node {
                mv: None,
                parent: u32::MAX,
                kids_at: 0,
                kids_cap: 0,
                n_children: 0,
                untried_at: 0,
                n_untried: untried,
                visits: 0,
                sum: 0.0,
                sumsq: 0.0,
                best: 0.0,
                moves: n_legal,
                depth: 0,
                terminal,
                mover: 0,
                exhausted: false,
                known: true,
                state: NIL,
            }],
            arena: legal,
            kids: Vec::new(),
            per_depth: vec![1],
            seen,
            cap: cfg.widening.unwrap_or(usize::MAX),
            best_value: f64::NEG_INFINITY,
            best_path: Vec::new(),
            best_state: root.clone(),
            iterations: 0,
            aborted: 0,
            forfeited: 0,
            states: Vec::new(),
            states_used: 0,
            states_cap: cfg.state_cache,
        })
    }

    fn can_expand(&self, n: u32, level_cap: u32) -> bool {
        let node = &self.nodes[n as usize];
        node.n_untried > 0
            && (node.n_children as usize) < self.cap
            && self.per_depth.get(node.depth as usize + 1).is_none_or(|&c| c < level_cap)
    }

    /// The statistics of `child` as the formula reads them, its parent having `parent` visits
    /// (at least 1).
    #[inline]
    fn stats_under(&self, child: u32, parent: f64) -> Stats {
        let c = &self.nodes[child as usize];
        let v = c.visits.max(1) as f64;
        Stats { mean: c.sum / v, wins: c.sum, visits: v, parent, sumsq: c.sumsq, best: c.best, moves: c.moves as f64 }
    }

    fn stats(&self, child: u32) -> Stats {
        let p = &self.nodes[self.nodes[child as usize].parent as usize];
        self.stats_under(child, p.visits.max(1) as f64)
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

    /// Phase 1 (tree only): choose where to grow; fills `sel`.
    pub fn select(&mut self, f: &Compiled, cfg: &MctsConfig, rng: &mut Rng, estimated_nodes: f64, sel: &mut Selected<G::Move>) {
        if cfg.full_expansion {
            return self.select_full(f, sel);
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
        if cfg.widening.is_some() && !self.can_expand(leaf, level_cap) && self.nodes[leaf as usize].n_untried > 0 {
            // Nothing expandable under this cap along the way: widen if nothing is anywhere.
            if !(0..self.nodes.len() as u32).any(|i| self.can_expand(i, level_cap)) {
                self.cap = self.cap.saturating_add(1);
            }
        }
        self.path_to(leaf, sel);
        sel.expand = if self.can_expand(leaf, level_cap) {
            let k = rng.random_range(0..self.nodes[leaf as usize].n_untried as usize);
            Some(self.take_untried(leaf, k))
        } else {
            None
        };
        sel.leaf_terminal = self.nodes[leaf as usize].terminal;
        sel.leaf_known = true;
        sel.expand_all.clear();
    }

    /// Phase 1 under full expansion: descend to a node without children; if its moves are known
    /// and it is not terminal, they are all taken to become children. (The child to play out is
    /// drawn in phase 2, once the moves are known in any case.)
    fn select_full(&mut self, f: &Compiled, sel: &mut Selected<G::Move>) {
        let leaf = self.descend_full(f);
        self.path_to(leaf, sel);
        sel.expand = None;
        sel.expand_all.clear();
        let node = &self.nodes[leaf as usize];
        sel.leaf_known = node.known;
        sel.leaf_terminal = node.terminal;
        if node.known && !node.terminal && node.n_untried > 0 {
            let (at, n) = (node.untried_at as usize, node.n_untried as usize);
            sel.expand_all.extend_from_slice(&self.arena[at..at + n]);
            self.nodes[leaf as usize].n_untried = 0;
        }
    }

    /// The nodes below the root down to `leaf`, and their moves, into `sel`.
    fn path_to(&self, leaf: u32, sel: &mut Selected<G::Move>) {
        sel.leaf = leaf;
        sel.path_nodes.clear();
        sel.path_moves.clear();
        let mut n = leaf;
        while n != 0 {
            sel.path_nodes.push(n);
            n = self.nodes[n as usize].parent;
        }
        sel.path_nodes.reverse();
        sel.path_moves.extend(sel.path_nodes.iter().map(|&n| self.nodes[n as usize].mv.expect("non-root nodes have a move")));
        // The deepest kept state on the path, and the deepest node after it worth keeping.
        sel.start = 0;
        sel.save = 0;
        if self.states_cap > 0 {
            for (k, &n) in sel.path_nodes.iter().enumerate().rev() {
                let node = &self.nodes[n as usize];
                if node.state != NIL {
                    sel.start = k + 1;
                    break;
                }
                if sel.save == 0 && node.visits >= STATE_CACHE_VISITS && self.states_used < self.states_cap {
                    sel.save = k + 1;
                }
            }
        }
    }

    /// The kept state replay starts from (`None`: the root).
    pub fn start_state(&self, sel: &Selected<G::Move>) -> Option<&G::State> {
        (sel.start > 0).then(|| &self.states[self.nodes[sel.path_nodes[sel.start - 1] as usize].state as usize])
    }

    /// Keeps `st` as node `n`'s state (no-op when the cache is full).
    fn keep_state(&mut self, n: u32, st: &G::State) {
        if self.nodes[n as usize].state != NIL || self.states_used >= self.states_cap {
            return;
        }
        if self.states_used < self.states.len() {
            self.states[self.states_used].clone_from(st);
        } else {
            self.states.push(st.clone());
        }
        self.nodes[n as usize].state = self.states_used as u32;
        self.states_used += 1;
    }

    /// Full-expansion descent: at a node with children, its first unvisited child (in child
    /// order), else the child with the highest formula value (ties: the first); exhausted
    /// children are skipped. Stops at a node without children (or whose children are all
    /// exhausted).
    fn descend_full(&self, f: &Compiled) -> u32 {
        let mut n = 0u32;
        loop {
            let mut unvisited = None;
            let mut any = false;
            for c in self.children(n) {
                let cn = &self.nodes[c as usize];
                if cn.exhausted {
                    continue;
                }
                any = true;
                if cn.visits == 0 {
                    unvisited = Some(c);
                    break;
                }
            }
            let pick = match unvisited {
                Some(c) => Some(c),
                None if !any => None,
                None => self.best_child(n, f),
            };
            match pick {
                Some(c) => n = c,
                None => return n,
            }
        }
    }

    /// The live (not exhausted) child of `n` with the highest formula value (ties: the first).
    #[inline]
    fn best_child(&self, n: u32, f: &Compiled) -> Option<u32> {
        let parent = self.nodes[n as usize].visits.max(1) as f64;
        let at = f.at_parent(parent);
        let mut best = f64::NEG_INFINITY;
        let mut pick = None;
        for c in self.children(n) {
            if self.nodes[c as usize].exhausted {
                continue;
            }
            let v = f.eval_child(&at, &self.stats_under(c, parent));
            if v > best || pick.is_none() {
                best = v;
                pick = Some(c);
            }
        }
        pick
    }

    fn descend(&self, mut n: u32, f: &Compiled, level_cap: u32) -> u32 {
        loop {
            let node = &self.nodes[n as usize];
            if node.terminal || self.can_expand(n, level_cap) || node.n_children == 0 {
                return n;
            }
            match self.best_child(n, f) {
                Some(c) => n = c,
                None => return n,
            }
        }
    }

    /// Phase 3 (tree only): add the new node(s) (unless a duplicate), backpropagate, and keep
    /// the best result. `scratch` is the one phase 2 filled.
    #[allow(clippy::too_many_arguments)]
    pub fn update(
        &mut self,
        game: &G,
        sel: &Selected<G::Move>,
        sim: Simulated<G::State, G::Move>,
        scratch: &Scratch<G>,
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
        if sel.save > 0 {
            self.keep_state(sel.path_nodes[sel.save - 1], &scratch.saved);
        }
        let mut tail = sel.leaf;
        let mut expanded = None;
        let mut full = sim.full;
        if let Some(terminal) = sim.leaf_learned {
            if self.nodes[sel.leaf as usize].known {
                // Tree parallelism: another worker learned and expanded this leaf meanwhile
                // (the same moves, in the same order). This iteration adds no children twice;
                // it counts through the child that worker made for the move played out, which
                // stays on the path (the best path must replay to its value).
                if let Some(f) = full.take() {
                    let m = scratch.leaf_moves[f.rollout];
                    expanded = Some(m);
                    if let Some(c) = self.child_by_move(sel.leaf, m) {
                        tail = c;
                    }
                }
            } else {
                let node = &mut self.nodes[sel.leaf as usize];
                // The leaf was made by a lazy expansion: now it is known (and its moves, if
                // any, become its children just below, so none is left untried).
                node.known = true;
                node.terminal = terminal;
                node.moves = if terminal { 0 } else { scratch.leaf_moves.len() as u32 };
                node.untried_at = self.arena.len() as u32;
                node.n_untried = 0;
            }
        }
        if let Some(full) = full {
            // Every move of the leaf becomes a child, in order; the played-out one is known.
            let moves: &[G::Move] = if sel.leaf_known { &sel.expand_all } else { &scratch.leaf_moves };
            for (i, &m) in moves.iter().enumerate() {
                let id = if i == full.rollout {
                    let untried: &[G::Move] = if full.terminal { &[] } else { &scratch.child_moves };
                    let id = self.push(sel.leaf, m, untried, full.terminal, full.mover, true);
                    tail = id;
                    expanded = Some(m);
                    id
                } else if cfg.eager_expansion {
                    let k = if i < full.rollout { i } else { i - 1 };
                    let (terminal, at, len) = scratch.eager[k];
                    let untried = &scratch.eager_moves[at as usize..(at + len) as usize];
                    self.push(sel.leaf, m, untried, terminal, full.mover, true)
                } else {
                    self.push(sel.leaf, m, &[], false, full.mover, false)
                };
                debug_assert_eq!(self.nodes[id as usize].mv, Some(m));
            }
        }
        if let Some(nc) = sim.new_child {
            let depth = self.nodes[sel.leaf as usize].depth + 1;
            if cfg.duplicate_detection {
                if self.seen.len() <= depth as usize {
                    self.seen.resize_with(depth as usize + 1, HashSet::new);
                }
                if !self.seen[depth as usize].insert(nc.hash) {
                    // Another worker added the same state meanwhile.
                    self.aborted += 1;
                    if cfg.cut_off {
                        self.mark_exhausted(sel.leaf);
                    }
                    return Ok(());
                }
            }
            let untried: &[G::Move] = if nc.terminal { &[] } else { &scratch.child_moves };
            tail = self.push(sel.leaf, nc.mv, untried, nc.terminal, nc.mover, true);
            expanded = Some(nc.mv);
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
        let k = rng.random_range(0..self.nodes[leaf as usize].n_untried as usize);
        Some(self.take_untried(leaf, k))
    }

    /// True when the search has nothing left to learn (CUT_OFF: the root is exhausted).
    pub fn done(&self) -> bool {
        self.nodes[0].exhausted
    }

    /// Marks `n` and its ancestors exhausted while every line below them is finished.
    fn mark_exhausted(&mut self, mut n: u32) {
        loop {
            let node = &self.nodes[n as usize];
            let done = node.known && (node.terminal || (node.n_untried == 0 && self.children(n).all(|c| self.nodes[c as usize].exhausted)));
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
            if let Some(c) = self.child_by_move(at, m) {
                game.apply(&mut st, m)?;
                at = c;
                continue;
            }
            if let Some(k) = self.untried(at).iter().position(|&u| u == m) {
                self.take_untried(at, k);
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
            let untried: &[G::Move] = if terminal { &[] } else { &legal };
            at = self.push(at, m, untried, terminal, mover, true);
        }
        Ok(at)
    }

    /// The subtree under `child` as a new tree (indices renumbered breadth-first). Duplicate
    /// detection starts afresh below the new root.
    pub fn reroot(self, child: u32, game: &G, state: &G::State, sub: SubGame, cfg: &MctsConfig) -> Result<Tree<G>, G::Error> {
        let mut fresh = Tree::new(game, state, sub, cfg)?;
        let mut order = vec![child];
        let mut map = vec![NIL; self.nodes.len()];
        let mut head = 0;
        while head < order.len() {
            let n = order[head];
            head += 1;
            map[n as usize] = (head - 1) as u32;
            order.extend(self.children(n));
        }
        let base = self.nodes[child as usize].depth;
        let mut nodes = Vec::with_capacity(order.len());
        let mut arena = Vec::new();
        let mut kids = Vec::with_capacity(order.len());
        for &n in &order {
            let mut node = self.nodes[n as usize].clone();
            node.depth -= base;
            node.parent = if n == child { u32::MAX } else { map[node.parent as usize] };
            let at = kids.len();
            kids.extend(self.children(n).map(|c| map[c as usize]));
            node.kids_at = at as u32;
            node.kids_cap = node.n_children;
            let (at, len) = (node.untried_at as usize, node.n_untried as usize);
            node.untried_at = arena.len() as u32;
            arena.extend_from_slice(&self.arena[at..at + len]);
            nodes.push(node);
        }
        nodes[0].mv = None;
        fresh.per_depth = vec![0; nodes.iter().map(|n| n.depth as usize).max().unwrap_or(0) + 1];
        for n in &nodes {
            fresh.per_depth[n.depth as usize] += 1;
        }
        for n in nodes.iter_mut() {
            // Kept states are not carried over.
            n.state = NIL;
        }
        fresh.nodes = nodes;
        fresh.arena = arena;
        fresh.kids = kids;
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
    cfg: &MctsConfig,
    eval: &E,
    sub: SubGame,
    best_so_far: f64,
    seen_at_depth: Option<&HashSet<u64>>,
    rng: &mut Rng,
    scratch: &mut Scratch<G>,
) -> Result<Simulated<G::State, G::Move>, G::Error> {
    simulate_from(game, root, None, sel, cfg, eval, sub, best_so_far, seen_at_depth, rng, scratch)
}

/// [`simulate`] replaying from a kept state (`start`: the tree's [`Tree::start_state`]).
#[allow(clippy::too_many_arguments)]
pub fn simulate_from<G: Game + Goals, E: Evaluator<G::State>>(
    game: &G,
    root: &G::State,
    start: Option<&G::State>,
    sel: &Selected<G::Move>,
    cfg: &MctsConfig,
    eval: &E,
    sub: SubGame,
    best_so_far: f64,
    seen_at_depth: Option<&HashSet<u64>>,
    rng: &mut Rng,
    scratch: &mut Scratch<G>,
) -> Result<Simulated<G::State, G::Move>, G::Error> {
    replay(game, root, sel, start, scratch)?;
    simulate_at_leaf(game, sel, cfg, eval, sub, best_so_far, seen_at_depth, rng, scratch)
}

/// The leaf's state into `scratch.leaf`: from the kept state of `path_nodes[start − 1]` when
/// there is one (else from the root), the rest of the path replayed; the state at `save` kept
/// in `scratch.saved`.
fn replay<G: Game>(
    game: &G,
    root: &G::State,
    sel: &Selected<G::Move>,
    start: Option<&G::State>,
    scratch: &mut Scratch<G>,
) -> Result<(), G::Error> {
    let from = match start {
        Some(st) => {
            scratch.leaf.clone_from(st);
            sel.start
        }
        None => {
            scratch.leaf.clone_from(root);
            0
        }
    };
    for (k, &m) in sel.path_moves.iter().enumerate().skip(from) {
        game.apply(&mut scratch.leaf, m)?;
        if k + 1 == sel.save {
            scratch.saved.clone_from(&scratch.leaf);
        }
    }
    Ok(())
}

/// Phase 2 from the leaf state already in `scratch.leaf` (after [`simulate`] replayed it).
#[allow(clippy::too_many_arguments)]
pub fn simulate_at_leaf<G: Game + Goals, E: Evaluator<G::State>>(
    game: &G,
    sel: &Selected<G::Move>,
    cfg: &MctsConfig,
    eval: &E,
    sub: SubGame,
    best_so_far: f64,
    seen_at_depth: Option<&HashSet<u64>>,
    rng: &mut Rng,
    scratch: &mut Scratch<G>,
) -> Result<Simulated<G::State, G::Move>, G::Error> {
    let mut sim = Simulated {
        new_child: None,
        full: None,
        leaf_learned: None,
        values: [0.0; 4],
        duplicate: false,
        forfeited: false,
        playout: Vec::new(),
        final_state: None,
        final_value: 0.0,
    };
    let mut leaf_terminal = sel.leaf_terminal;
    let Scratch { state: st, leaf, legal, playout, child_moves, leaf_moves, eager, eager_moves, .. } = scratch;
    st.clone_from(leaf);
    if let Some(m) = sel.expand {
        let mover = game.to_move(st) as u8;
        game.apply(st, m)?;
        let hash = if cfg.duplicate_detection { game.hash(st) } else { 0 };
        if let Some(seen) = seen_at_depth
            && seen.contains(&hash)
        {
            sim.duplicate = true;
            return Ok(sim);
        }
        game.legal(st, child_moves)?;
        let terminal = is_terminal(game, st, child_moves, sub);
        sim.new_child = Some(NewChild { mv: m, hash, terminal, mover });
    }
    if cfg.full_expansion {
        if !sel.leaf_known {
            // A child of an earlier expansion, visited for the first time: learn its moves.
            game.legal(leaf, leaf_moves)?;
            leaf_terminal = is_terminal(game, leaf, leaf_moves, sub);
            if leaf_terminal {
                leaf_moves.clear();
            }
            sim.leaf_learned = Some(leaf_terminal);
        }
        let moves: &[G::Move] = if sel.leaf_known { &sel.expand_all } else { leaf_moves };
        if !moves.is_empty() {
            let k = rng.random_range(0..moves.len());
            let mover = game.to_move(leaf) as u8;
            if cfg.eager_expansion {
                eager.clear();
                eager_moves.clear();
                for (i, &m) in moves.iter().enumerate() {
                    if i != k {
                        st.clone_from(leaf);
                        game.apply(st, m)?;
                        game.legal(st, legal)?;
                        let terminal = is_terminal(game, st, legal, sub);
                        let at = eager_moves.len() as u32;
                        if !terminal {
                            eager_moves.extend_from_slice(legal);
                        }
                        eager.push((terminal, at, eager_moves.len() as u32 - at));
                    }
                }
            }
            st.clone_from(leaf);
            game.apply(st, moves[k])?;
            game.legal(st, child_moves)?;
            let terminal = is_terminal(game, st, child_moves, sub);
            sim.full = Some(FullExpansion { rollout: k, mover, terminal });
        }
    }
    // Playout.
    playout.clear();
    let mut forfeited = false;
    if !(leaf_terminal && sel.expand.is_none() && sim.full.is_none()) {
        let mut n = 0u32;
        // The expanded child's moves are already listed.
        let mut listed = sel.expand.is_some() || sim.full.is_some();
        loop {
            let legal: &Vec<G::Move> = if listed {
                listed = false;
                child_moves
            } else {
                game.legal(st, legal)?;
                legal
            };
            if is_terminal(game, st, legal, sub) || n >= cfg.max_playout_moves {
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
                    Some(w) => pick_grouped(game, legal, w, rng),
                    None => legal[rng.random_range(0..legal.len())],
                },
            };
            game.apply(st, m)?;
            playout.push(m);
            n += 1;
        }
    }
    let final_value = if forfeited { 0.0 } else { eval.value(st, 0) };
    if !forfeited {
        for (p, v) in sim.values.iter_mut().enumerate() {
            *v = if p == 0 { final_value } else { eval.value(st, p) };
        }
    }
    let better = !forfeited && final_value > best_so_far;
    sim.forfeited = forfeited;
    sim.final_value = final_value;
    if better {
        sim.playout = playout.clone();
        sim.final_state = Some(st.clone());
    }
    Ok(sim)
}

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

fn decision_tree_with<G: Game + Goals, E: Evaluator<G::State>>(
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
