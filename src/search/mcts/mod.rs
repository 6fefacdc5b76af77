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
use crate::game::Status;
use crate::game::{Game, pick_grouped};
use crate::rng::Rng;
use rand::RngExt;
use std::collections::HashSet;

mod drive;
mod select;
mod simulate;
mod update;

pub use drive::*;
pub use simulate::*;

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
}
