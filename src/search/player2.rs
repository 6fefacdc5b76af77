//! Player2 (seed 004): iterative-deepening depth-first search that maximises its own role's
//! goal, made **non-uniform** by a heuristic, with a transposition cache that degrades
//! gracefully and a clock it always answers within.
//!
//! * **Heuristic** h = mean(mobility, novelty) on the goal scale 0–100: mobility is the role's
//!   own legal moves, as a share of the most it has been seen to have; novelty is how much the
//!   state differs from the initial one ([`Features::novelty`]).
//! * **Non-uniform deepening**: at every node the children are searched in order of h, highest
//!   first; with nominal limit L and extension E, the child ranked i gets the limit
//!   max(L, min(parent's limit, L + E − i)) — the best child searches E plies deeper than L,
//!   each later sibling one less, down to L. The extension does not compound down a path (a
//!   path's limit never passes L + E).
//! * **Values**: a terminal state is worth its goal for Player2's role (exact); a state at the
//!   limit is worth h (an estimate). Where Player2 chooses (`to_move` is its role) a node takes
//!   its best child; where another role chooses it takes the worst (**paranoid**: the others are
//!   assumed to play against Player2 — the paper leaves multi-player play open). Where the roles
//!   move at once (joint moves, [`Features::own_action`]), the moves sharing Player2's own
//!   action form one choice worth its worst move, and the node takes the best choice: Player2
//!   assumes the others answer its action as if they saw it. A node is exact when every choice
//!   is, or when one is known to reach 100 (a choice is exact when all its moves are, or one is a
//!   known 0).
//! * **Risk** (the 30-point rule): at the root, a child whose value is only an estimate is taken
//!   over the best exactly-known child when it is at least `risk_margin` points higher — or when
//!   the best known child is a certain loss (goal 0), a case the report's rule gets wrong.
//! * **Cache**: a transposition table by state hash holding value, exactness and the depth
//!   searched below; at `cache_entries` the oldest quarter is evicted (graceful degradation).
//! * **Clocks**: [`Session`] runs the search on a worker thread; the stop flag is checked at
//!   every node and every new level (cooperative), and the caller answers at the deadline with
//!   the best move found so far — or the first legal move — whatever the worker is doing (the
//!   watchdog). The start clock pre-searches the initial state into the cache.

/// The contract lives with [`Game`](crate::game::Game); named here too for older paths.
pub use crate::game::Features;
use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Player2's choices among `moves` (in order): moves that share its own action form one
/// choice, among which the others choose. Without joint moves, each move is a choice where
/// Player2 is to move (`mine`) and all of them one choice elsewhere. Returns each move's
/// choice number and the number of choices.
fn choices<G: Features>(game: &G, me: usize, mine: bool, moves: impl Iterator<Item = G::Move>) -> (Vec<usize>, usize) {
    let mut keys: Vec<usize> = Vec::new();
    let of = moves
        .enumerate()
        .map(|(i, m)| {
            let key = game.own_action(m, me).unwrap_or(if mine { i } else { 0 });
            keys.iter().position(|&k| k == key).unwrap_or_else(|| {
                keys.push(key);
                keys.len() - 1
            })
        })
        .collect();
    (of, keys.len())
}

/// Each choice's value (the worst of its moves: paranoid), from the moves' values: exact when
/// every move's value is, or when one is an exact 0 (nothing below it); the representative move
/// is the choice's first.
fn per_choice<M: Copy>(children: &[RootChild<M>], of: &[usize], n: usize) -> Vec<RootChild<M>> {
    let zero = |x: &RootChild<M>| x.exact && x.value <= 0.0;
    let mut out: Vec<Option<RootChild<M>>> = vec![None; n];
    for (c, &q) in children.iter().zip(of) {
        let merged = match &out[q] {
            None => c.clone(),
            Some(g) => {
                let exact = (g.exact && c.exact) || zero(g) || zero(c);
                // Proved when its last move was, or as soon as one move is a known 0.
                let proven_at = match (zero(g), zero(c)) {
                    (true, true) => g.proven_at.min(c.proven_at),
                    (true, false) => g.proven_at,
                    (false, true) => c.proven_at,
                    (false, false) if exact => g.proven_at.max(c.proven_at),
                    _ => 0,
                };
                RootChild { mv: g.mv, value: g.value.min(c.value), exact, proven_at }
            }
        };
        out[q] = Some(merged);
    }
    out.into_iter().flatten().collect()
}

/// Player2's settings.
#[derive(Clone, Debug)]
pub struct Player2Config {
    /// Plies the best-ranked child searches beyond the nominal limit (E).
    pub extension: u32,
    /// The risk rule's margin, in goal points.
    pub risk_margin: f64,
    /// Entries the cache holds before the oldest quarter is evicted.
    pub cache_entries: usize,
    /// The deepest nominal limit tried.
    pub max_depth: u32,
}

impl Default for Player2Config {
    fn default() -> Self {
        Player2Config { extension: 2, risk_margin: 30.0, cache_entries: 1 << 20, max_depth: 200 }
    }
}

/// One cached state: its value, whether exact, and the plies searched below it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Entry {
    pub value: f64,
    pub exact: bool,
    pub depth: u32,
}

/// The transposition cache: entries by state hash, in insertion order for eviction.
#[derive(Debug, Default)]
pub struct Cache {
    map: HashMap<u64, Entry>,
    order: VecDeque<u64>,
    pub capacity: usize,
    pub evictions: u64,
}

impl Cache {
    pub fn new(capacity: usize) -> Cache {
        Cache { capacity: capacity.max(4), ..Cache::default() }
    }

    pub fn get(&self, h: u64) -> Option<Entry> {
        self.map.get(&h).copied()
    }

    pub fn len(&self) -> usize {
        self.map.len()
    }

    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }

    /// Stores an entry; a new key at capacity first evicts the oldest quarter.
    pub fn put(&mut self, h: u64, e: Entry) {
        if let Some(old) = self.map.get_mut(&h) {
            *old = e;
            return;
        }
        if self.map.len() >= self.capacity {
            for _ in 0..self.capacity / 4 {
                if let Some(k) = self.order.pop_front() {
                    self.map.remove(&k);
                }
            }
            self.evictions += 1;
        }
        self.map.insert(h, e);
        self.order.push_back(h);
    }
}

/// A root child after the latest search of it.
#[derive(Clone, Debug)]
pub struct RootChild<M> {
    pub mv: M,
    pub value: f64,
    pub exact: bool,
    /// The nominal limit at which its value became exact (0 while it is an estimate): of two
    /// certain losses, the one proved later holds out longer.
    pub proven_at: u32,
}

/// The result of one decision.
#[derive(Clone, Debug)]
pub struct Decision<M> {
    pub mv: M,
    /// The deepest nominal limit completed.
    pub depth: u32,
    pub nodes: u64,
    pub root: Vec<RootChild<M>>,
}

/// Player2's search over one game for one role.
pub struct Player2<'a, G: Features> {
    game: &'a G,
    cfg: Player2Config,
    me: usize,
    initial: G::State,
    max_mobility: usize,
    nodes: u64,
    stop: &'a AtomicBool,
    aborted: bool,
}

impl<'a, G: Features> Player2<'a, G> {
    pub fn new(game: &'a G, me: usize, cfg: Player2Config, stop: &'a AtomicBool) -> Result<Self, G::Error> {
        Ok(Player2 { initial: game.initial()?, game, cfg, me, max_mobility: 1, nodes: 0, stop, aborted: false })
    }

    /// h = mean(mobility, novelty), 0–100.
    fn heuristic(&mut self, st: &G::State) -> f64 {
        let m = self.game.mobility(st, self.me);
        self.max_mobility = self.max_mobility.max(m);
        let mobility = 100.0 * m as f64 / self.max_mobility as f64;
        let novelty = 100.0 * self.game.novelty(st, &self.initial);
        (mobility + novelty) / 2.0
    }

    /// Value and exactness of `st` searched to `limit` (ply `ply`, nominal limit `nominal`).
    fn search(&mut self, st: &G::State, ply: u32, limit: u32, nominal: u32, cache: &mut Cache) -> Result<(f64, bool), G::Error> {
        self.nodes += 1;
        if self.stop.load(Ordering::Relaxed) {
            self.aborted = true;
            return Ok((self.heuristic(st), false));
        }
        let mut legal = Vec::new();
        self.game.legal(st, &mut legal)?;
        if self.game.status(st, &legal) != crate::game::Status::Running {
            return Ok((self.game.goal(st, self.me), true));
        }
        let left = limit.saturating_sub(ply);
        let h = self.game.hash(st);
        if let Some(e) = cache.get(h)
            && (e.exact || e.depth >= left)
        {
            return Ok((e.value, e.exact));
        }
        if left == 0 {
            return Ok((self.heuristic(st), false));
        }
        let mine = self.game.to_move(st) == self.me;
        let mut kids: Vec<(f64, G::State)> = Vec::with_capacity(legal.len());
        for &m in &legal {
            let mut c = st.clone();
            self.game.apply(&mut c, m)?;
            let hc = self.heuristic(&c);
            kids.push((hc, c));
        }
        // Highest h first (stable: equal h keep the move order).
        let mut order: Vec<usize> = (0..kids.len()).collect();
        order.sort_by(|&a, &b| kids[b].0.total_cmp(&kids[a].0));
        // Player2 takes the best of its choices; within a choice the others take the worst.
        let (of, n) = choices(self.game, self.me, mine, legal.iter().copied());
        let mut worst = vec![f64::INFINITY; n];
        let mut exact_so_far = vec![true; n];
        let mut unseen = vec![0usize; n];
        for &q in &of {
            unseen[q] += 1;
        }
        // A choice whose worst is an exact 0 needs no more of its moves.
        let mut closed = vec![false; n];
        let mut cut = false;
        for (rank, &k) in order.iter().enumerate() {
            let q = of[k];
            if closed[q] {
                continue;
            }
            let child_limit = nominal.max(limit.min(nominal + self.cfg.extension.saturating_sub(rank as u32)));
            let (v, exact) = self.search(&kids[k].1, ply + 1, child_limit, nominal, cache)?;
            if self.aborted {
                return Ok((v, false));
            }
            worst[q] = worst[q].min(v);
            exact_so_far[q] &= exact;
            unseen[q] -= 1;
            if exact && v <= 0.0 {
                (closed[q], worst[q], exact_so_far[q]) = (true, 0.0, true);
            }
            // A choice known to reach 100 ends the node.
            if (unseen[q] == 0 || closed[q]) && exact_so_far[q] && worst[q] >= 100.0 {
                cut = true;
                break;
            }
        }
        let best = if cut { 100.0 } else { worst.iter().copied().fold(f64::NEG_INFINITY, f64::max) };
        let exact = cut || (0..n).all(|q| closed[q] || (unseen[q] == 0 && exact_so_far[q]));
        cache.put(h, Entry { value: best, exact, depth: left });
        Ok((best, exact))
    }

    /// Searches the root one nominal limit at a time until the stop flag, `max_depth` or an
    /// exact root, reporting each completed level's choice through `report`.
    pub fn decide(
        &mut self,
        root: &G::State,
        cache: &mut Cache,
        mut report: impl FnMut(&Decision<G::Move>),
    ) -> Result<Option<Decision<G::Move>>, G::Error> {
        let mut legal = Vec::new();
        self.game.legal(root, &mut legal)?;
        if legal.is_empty() {
            return Ok(None);
        }
        let mut kids: Vec<(f64, G::Move, G::State)> = Vec::new();
        for &m in &legal {
            let mut c = root.clone();
            self.game.apply(&mut c, m)?;
            kids.push((self.heuristic(&c), m, c));
        }
        let mut order: Vec<usize> = (0..kids.len()).collect();
        order.sort_by(|&a, &b| kids[b].0.total_cmp(&kids[a].0));
        let mut children: Vec<RootChild<G::Move>> =
            order.iter().map(|&k| RootChild { mv: kids[k].1, value: kids[k].0, exact: false, proven_at: 0 }).collect();
        // Player2's choices at the root (see `choices`), per child in rank order.
        let mine = self.game.to_move(root) == self.me;
        let (of, n) = choices(self.game, self.me, mine, children.iter().map(|c| c.mv));
        let mut decision = Decision { mv: children[0].mv, depth: 0, nodes: 0, root: children.clone() };
        for nominal in 1..=self.cfg.max_depth {
            if self.stop.load(Ordering::Relaxed) {
                break;
            }
            let limit = nominal + self.cfg.extension;
            for (rank, &k) in order.iter().enumerate() {
                if children[rank].exact {
                    continue;
                }
                let child_limit = nominal.max(limit.min(nominal + self.cfg.extension.saturating_sub(rank as u32)));
                let (v, exact) = self.search(&kids[k].2, 1, child_limit, nominal, cache)?;
                if self.aborted {
                    break;
                }
                children[rank] = RootChild { mv: kids[k].1, value: v, exact, proven_at: if exact { nominal } else { 0 } };
            }
            if self.aborted {
                break;
            }
            let per = per_choice(&children, &of, n);
            decision = Decision { mv: self.choose(&per), depth: nominal, nodes: self.nodes, root: children.clone() };
            report(&decision);
            if per.iter().all(|c| c.exact) || per.iter().any(|c| c.exact && c.value >= 100.0) {
                break;
            }
        }
        decision.nodes = self.nodes;
        Ok(Some(decision))
    }

    /// The root choice with the risk rule over Player2's choices (one per own action): the best
    /// exact one, unless an estimated one is at least `risk_margin` points better; the best
    /// estimate when nothing is exact.
    pub fn choose(&self, children: &[RootChild<G::Move>]) -> G::Move {
        choose(children, self.cfg.risk_margin)
    }
}

/// The risk rule over root children (see [`Player2::choose`]); ties keep the earlier child. Two
/// amendments to the report's rule: when the best exactly-known child is a certain loss (goal 0),
/// the best estimated child is taken whatever its margin — the literal rule would walk into a
/// known loss rather than try an unexplored move estimated below 30 (which happens: mobility
/// and novelty put most Connect Four positions near 20–30); and when every child is a certain
/// loss, the one proved last (at the deepest limit) is taken — it holds out longest, so an
/// opponent that is not perfect may still miss the win (the first child would often be a
/// loss on the next move).
pub fn choose<M: Copy>(children: &[RootChild<M>], margin: f64) -> M {
    let best = |exact: bool| {
        children
            .iter()
            .filter(|c| c.exact == exact)
            .fold(None::<&RootChild<M>>, |b, c| if b.is_none_or(|b| c.value > b.value) { Some(c) } else { b })
    };
    match (best(true), best(false)) {
        // A certain loss (0) is never preferred to an estimate, however low.
        (Some(k), Some(u)) if u.value >= k.value + margin || k.value <= 0.0 => u.mv,
        // Every child lost: the one proved last.
        (Some(k), None) if k.value <= 0.0 => children.iter().fold(k, |b, c| if c.proven_at > b.proven_at { c } else { b }).mv,
        (Some(k), _) => k.mv,
        (None, Some(u)) => u.mv,
        (None, None) => children[0].mv,
    }
}

/// Player2 under clocks: a cache kept from the start clock on, and every answer given by the
/// deadline (less `margin`) whatever the search is doing.
pub struct Session<G: Features> {
    game: Arc<G>,
    me: usize,
    cfg: Player2Config,
    cache: Arc<Mutex<Cache>>,
    /// Stop flag of the search still running, if any.
    running: Option<Arc<AtomicBool>>,
    pub margin: Duration,
}

impl<G> Session<G>
where
    G: Features + Send + Sync + 'static,
    G::State: Send + 'static,
    G::Move: Send + 'static,
{
    pub fn new(game: Arc<G>, me: usize, cfg: Player2Config) -> Session<G> {
        let cache = Arc::new(Mutex::new(Cache::new(cfg.cache_entries)));
        Session { game, me, cfg, cache, running: None, margin: Duration::from_millis(20) }
    }

    /// The start clock: pre-searches the initial state for `clock` (less the margin).
    pub fn start(&mut self, clock: Duration) -> Result<(), G::Error> {
        let root = self.game.initial()?;
        self.think(root, clock).map(|_| ())
    }

    /// The play clock: the move for `state`, given by `clock` (less the margin). `None` when
    /// the state has no legal move.
    pub fn play(&mut self, state: &G::State, clock: Duration) -> Result<Option<G::Move>, G::Error> {
        self.think(state.clone(), clock)
    }

    fn think(&mut self, root: G::State, clock: Duration) -> Result<Option<G::Move>, G::Error> {
        let deadline = Instant::now() + clock.saturating_sub(self.margin);
        if let Some(old) = self.running.take() {
            old.store(true, Ordering::Relaxed);
        }
        let mut legal = Vec::new();
        self.game.legal(&root, &mut legal)?;
        let Some(&first) = legal.first() else { return Ok(None) };
        let best = Arc::new(Mutex::new((first, false)));
        let stop = Arc::new(AtomicBool::new(false));
        self.running = Some(stop.clone());
        let (game, cache, cfg, me) = (self.game.clone(), self.cache.clone(), self.cfg.clone(), self.me);
        let (best_w, stop_w) = (best.clone(), stop.clone());
        std::thread::spawn(move || {
            // A worker that finds the cache busy (an old search not yet stopped) waits for it.
            let Ok(mut cache) = cache.lock() else { return };
            let Ok(mut p2) = Player2::new(&*game, me, cfg, &stop_w) else { return };
            let _ = p2.decide(&root, &mut cache, |d| {
                if let Ok(mut b) = best_w.lock() {
                    *b = (d.mv, false);
                }
            });
            if let Ok(mut b) = best_w.lock() {
                b.1 = true;
            }
        });
        // The watchdog: wait for the worker or the deadline, then answer.
        while Instant::now() < deadline {
            if best.lock().map(|b| b.1).unwrap_or(true) {
                break;
            }
            std::thread::sleep(Duration::from_millis(1).min(deadline.saturating_duration_since(Instant::now())));
        }
        stop.store(true, Ordering::Relaxed);
        let mv = best.lock().map(|b| b.0).unwrap_or(first);
        Ok(Some(mv))
    }

    /// Entries in the cache now (waits for a running search to stop).
    pub fn cache_len(&self) -> usize {
        if let Some(s) = &self.running {
            s.store(true, Ordering::Relaxed);
        }
        self.cache.lock().map(|c| c.len()).unwrap_or(0)
    }
}

impl<G: Features> Drop for Session<G> {
    fn drop(&mut self) {
        if let Some(s) = &self.running {
            s.store(true, Ordering::Relaxed);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_oldest_quarter_is_evicted_at_capacity() {
        let mut c = Cache::new(8);
        let e = Entry { value: 1.0, exact: false, depth: 1 };
        for k in 0..8 {
            c.put(k, e);
        }
        assert_eq!(c.len(), 8);
        c.put(100, e);
        assert_eq!(c.len(), 7);
        assert!(c.get(0).is_none() && c.get(1).is_none() && c.get(2).is_some() && c.get(100).is_some());
        assert_eq!(c.evictions, 1);
    }

    #[test]
    fn the_risk_rule_takes_an_estimate_only_30_points_above_the_best_exact() {
        let kid = |mv: u8, value: f64, exact: bool| RootChild { mv, value, exact, proven_at: u32::from(exact) };
        assert_eq!(choose(&[kid(0, 50.0, true), kid(1, 79.0, false)], 30.0), 0);
        assert_eq!(choose(&[kid(0, 50.0, true), kid(1, 80.0, false)], 30.0), 1);
        assert_eq!(choose(&[kid(0, 20.0, false), kid(1, 60.0, false)], 30.0), 1);
        assert_eq!(choose(&[kid(0, 0.0, true), kid(1, 100.0, true)], 30.0), 1);
        // A known loss is never taken over an estimate.
        assert_eq!(choose(&[kid(0, 0.0, true), kid(1, 12.0, false)], 30.0), 1);
        assert_eq!(choose(&[kid(0, 1.0, true), kid(1, 12.0, false)], 30.0), 0);
        // All lost: the loss proved at the deepest limit holds out longest.
        let lost = |mv: u8, at: u32| RootChild { mv, value: 0.0, exact: true, proven_at: at };
        assert_eq!(choose(&[lost(0, 2), lost(1, 6), lost(2, 4), lost(3, 6)], 30.0), 1);
    }
}
