//! Phase 1 (tree only): selection. A path is chosen from the root by the compiled formula —
//! unvisited children first under full expansion, a node limit per level and progressive widening
//! when they are on — and the moves on it are listed for phase 2 to replay.

use super::*;

impl<G: Game + Goals> Tree<G> {
    pub(super) fn can_expand(&self, n: u32, level_cap: u32) -> bool {
        let node = &self.nodes[n as usize];
        node.n_untried > 0
            && (node.n_children as usize) < self.cap
            && self.per_depth.get(node.depth as usize + 1).is_none_or(|&c| c < level_cap)
    }

    /// The statistics of `child` as the formula reads them, its parent having `parent` visits
    /// (at least 1).
    #[inline]
    pub(super) fn stats_under(&self, child: u32, parent: f64) -> Stats {
        let c = &self.nodes[child as usize];
        let v = c.visits.max(1) as f64;
        Stats { mean: c.sum / v, wins: c.sum, visits: v, parent, sumsq: c.sumsq, best: c.best, moves: c.moves as f64 }
    }

    pub(super) fn stats(&self, child: u32) -> Stats {
        let p = &self.nodes[self.nodes[child as usize].parent as usize];
        self.stats_under(child, p.visits.max(1) as f64)
    }

    pub(super) fn level_cap(&self, cfg: &MctsConfig, estimated_nodes: f64) -> u32 {
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
    pub(super) fn select_full(&mut self, f: &Compiled, sel: &mut Selected<G::Move>) {
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
    pub(super) fn path_to(&self, leaf: u32, sel: &mut Selected<G::Move>) {
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
    pub(super) fn keep_state(&mut self, n: u32, st: &G::State) {
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
    pub(super) fn descend_full(&self, f: &Compiled) -> u32 {
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
    pub(super) fn best_child(&self, n: u32, f: &Compiled) -> Option<u32> {
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

    pub(super) fn descend(&self, mut n: u32, f: &Compiled, level_cap: u32) -> u32 {
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
}
