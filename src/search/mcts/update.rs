//! Phase 3 (tree only): the new node or children are added (unless the state is a known
//! duplicate), the result is backpropagated, exhausted subtrees are marked, add-best-path keeps the
//! best playout's moves, and a tree is rerooted at a played move.

use super::*;

impl<G: Game + Goals> Tree<G> {
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
    pub(super) fn mark_exhausted(&mut self, mut n: u32) {
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
    pub(super) fn add_path(
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
