//! Run time of the two-sided extensions: turns and rounds, outcomes, built-in functions (hex
//! geometry, grids, aggregates), move filters and policies. Everything here is generic: a game
//! says in WGDL which class takes turns, which attribute is a side, which objects stand on hexes
//! and how a policy ranks its moves; this file only carries those declarations out.

use crate::rng::Rng;
use crate::wgdl::fast::Env;
use crate::wgdl::program::{
    Action, ActionKind, BindKind, Builtin, Cons, Ctx, GodSel, NONE, PickCode, Program, RtKind, RuntimeError, State, rt,
};
use rand::RngExt;

thread_local! {
    /// Scratch space of the move filters.
    static FILTER: std::cell::RefCell<FilterScratch> = const { std::cell::RefCell::new(FilterScratch { keys: Vec::new(), keep: Vec::new(), count: Vec::new() }) };
}

/// Per-thread scratch of [`Program::filter_moves`]: choose keys, which moves stay, moves per
/// action.
struct FilterScratch {
    keys: Vec<i64>,
    keep: Vec<bool>,
    count: Vec<u32>,
}

thread_local! {
    /// The occupancy cache's buffers, reused from one move generation to the next.
    static OCC: std::cell::RefCell<OccCache> = const { std::cell::RefCell::new(OccCache::new()) };
}

/// The occupants of the state being searched for moves (which cannot change meanwhile): their
/// (cell, side), the occupied cells as bits, and per side of the game the cells some occupant of
/// another side sees. Made once per move generation ([`Program::with_occ`]) and read through
/// [`crate::wgdl::fast::Env::occ`] instead of a scan of the objects per `hex.free` or `hex.hidden`.
pub(in crate::wgdl) struct OccCache {
    list: Vec<(i64, i64)>,
    occupied: Vec<u64>,
    /// `words` per side of the game (0 … players − 1), side after side: the cells some
    /// occupant of another side sees.
    seen_by_others: Vec<u64>,
    /// Scratch: per side the cells its own occupants see, then one row for occupants whose
    /// side is none of the game's (another side to everyone).
    seen_by: Vec<u64>,
    words: usize,
}

impl OccCache {
    const fn new() -> OccCache {
        OccCache { list: Vec::new(), occupied: Vec::new(), seen_by_others: Vec::new(), seen_by: Vec::new(), words: 0 }
    }

    /// The occupied cells as bits.
    pub(in crate::wgdl) fn occupied_bits(&self) -> &[u64] {
        &self.occupied
    }

    /// The cells that some occupant of a side other than `me` sees, as bits (`None` for a side
    /// that is not one of the game's).
    pub(in crate::wgdl) fn seen_by_others(&self, me: i64) -> Option<&[u64]> {
        if me < 0 {
            return None;
        }
        let at = me as usize * self.words;
        self.seen_by_others.get(at..at + self.words).filter(|_| at < self.seen_by_others.len())
    }

    /// One pass over the occupants: the occupied bits and each side's sight; then per side the
    /// sight of the others (a few words per pair of sides). The sight rows are scratch on the
    /// stack when they fit in 64 words (every shipped map and game), else the cache's own.
    fn fill(&mut self, p: &Program, st: &State) -> Result<(), RuntimeError> {
        let mut list = std::mem::take(&mut self.list);
        list.clear();
        p.for_each_occupant(st, |_, pos, side| {
            list.push((pos, side));
            true
        })?;
        self.list = list;
        let Some(h) = &p.hex else { return Ok(()) };
        let (n, words) = (h.len(), h.words());
        let sides = p.players.len().max(1);
        self.words = words;
        reset(&mut self.occupied, words);
        reset(&mut self.seen_by_others, sides * words);
        if words == 0 {
            return Ok(());
        }
        // Per side the cells its occupants see; row `sides`: occupants of none of the sides.
        let mut stack = [0u64; 64];
        let seen: &mut [u64] = match stack.get_mut(..(sides + 1) * words) {
            Some(rows) => rows,
            None => {
                reset(&mut self.seen_by, (sides + 1) * words);
                &mut self.seen_by
            }
        };
        for &(pos, side) in &self.list {
            if pos >= 0 && (pos as usize) < n {
                let pos = pos as usize;
                self.occupied[pos / 64] |= 1 << (pos % 64);
                let row = if (0..sides as i64).contains(&side) { side as usize } else { sides };
                for (s, r) in seen[row * words..(row + 1) * words].iter_mut().zip(h.sees_row(pos)) {
                    *s |= r;
                }
            }
        }
        for (me, others) in self.seen_by_others.chunks_exact_mut(words).enumerate() {
            for (other, row) in seen.chunks_exact(words).enumerate() {
                if other != me {
                    for (o, r) in others.iter_mut().zip(row) {
                        *o |= r;
                    }
                }
            }
        }
        Ok(())
    }
}

/// `v` as `n` zeros (its buffer kept).
#[inline]
fn reset(v: &mut Vec<u64>, n: usize) {
    if v.len() == n {
        v.fill(0);
    } else {
        v.clear();
        v.resize(n, 0);
    }
}

/// An action whose moves `choose` keeps some of (without a walk order: those are generated
/// already chosen).
pub(in crate::wgdl) const FILTER_CHOOSE: u8 = 1;
/// An action with `unless`.
pub(in crate::wgdl) const FILTER_UNLESS: u8 = 2;
/// A `policyOnly` action.
pub(in crate::wgdl) const FILTER_POLICY_ONLY: u8 = 4;
/// An action with `lastResort`.
pub(in crate::wgdl) const FILTER_LAST_RESORT: u8 = 8;

/// The move filters of an action, as `FILTER_*` bits.
pub(in crate::wgdl) fn filter_flags(a: &crate::wgdl::program::ActionInfo) -> u8 {
    let mut f = 0;
    if a.choose.is_some() && a.walk_order.is_none() {
        f |= FILTER_CHOOSE;
    }
    if !a.unless.is_empty() {
        f |= FILTER_UNLESS;
    }
    if a.policy_only {
        f |= FILTER_POLICY_ONLY;
    }
    if a.last_resort.is_some() {
        f |= FILTER_LAST_RESORT;
    }
    f
}

/// An aggregate compared with zero: `== 0`, `!= 0`, `> 0` (or `>= 1`), `<= 0` (or `< 1`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(in crate::wgdl) enum ZeroTest {
    Zero,
    NonZero,
    Positive,
    NotPositive,
}

#[inline]
fn bit(bits: &[u64], c: usize) -> bool {
    bits[c / 64] >> (c % 64) & 1 == 1
}

impl Program {
    /// The side (player index) of a turn-taking object; 0 without turns or actor.
    pub fn side_of(&self, st: &State, obj: u32) -> u8 {
        match (&self.turn, st.objects.get(obj as usize)) {
            (Some(t), Some(o)) => st.slots[(o.base + t.side) as usize] as u8,
            _ => 0,
        }
    }

    /// Turn-order key of an object: (side, rank) grouped, (rank, side) alternating, where rank
    /// counts earlier objects of the same side.
    fn turn_key(&self, st: &State, obj: u32) -> (i64, i64) {
        let t = self.turn.as_ref().expect("turns declared");
        let side_of = |o: usize| st.slots[(st.objects[o].base + t.side) as usize];
        let side = side_of(obj as usize);
        let rank = (0..obj as usize).filter(|&o| self.is_sub(st.objects[o].class, t.class) && side_of(o) == side).count() as i64;
        if t.alternating { (rank, side) } else { (side, rank) }
    }

    /// The initial objects of the turn class in creation order, when that is their turn order
    /// in every state of the game: no consequence writes the side attribute
    /// ([`TurnInfo::side_written`]) or creates an object that may be of the turn class, and the
    /// initial sides put the objects in creation order. `None` otherwise (and without turns).
    pub(in crate::wgdl) fn fixed_turn_order(&self) -> Option<Vec<u32>> {
        let t = self.turn.as_ref()?;
        if t.side_written {
            return None;
        }
        for cons in &self.conses {
            if let Cons::Create { god, .. } = cons.code {
                match god {
                    GodSel::Fixed(g) if !self.is_sub(self.gods[g as usize].class, t.class) => {}
                    _ => return None,
                }
            }
        }
        // The keys `next_actor` ranks by, from the initial values (a parameter may change them:
        // `with_parameters` asks again).
        let mut order = Vec::new();
        let mut keys: Vec<(i64, i64)> = Vec::new();
        let mut sides: Vec<i64> = Vec::new();
        for (id, &g) in self.initial.iter().enumerate() {
            let god = &self.gods[g as usize];
            if !self.is_sub(god.class, t.class) {
                continue;
            }
            let side = *god.init.get(t.side as usize)?;
            let rank = sides.iter().filter(|&&s| s == side).count() as i64;
            sides.push(side);
            let key = if t.alternating { (rank, side) } else { (side, rank) };
            if keys.last().is_some_and(|&k| k >= key) {
                return None;
            }
            keys.push(key);
            order.push(id as u32);
        }
        Some(order)
    }

    /// The next object to act after `after` in this round (`None`: from the round's start), if
    /// any: live objects of the turn class whose `while` condition holds.
    pub(in crate::wgdl) fn next_actor(&self, st: &State, after: Option<u32>) -> Result<Option<u32>, RuntimeError> {
        let t = self.turn.as_ref().expect("turns declared");
        if let Some(order) = &self.turn_order {
            // The order is creation order: the objects after `after`, in turn, as the ranking
            // below would visit (and evaluate `while` on) them.
            let from = match after.filter(|&a| a != NONE) {
                None => Some(0),
                Some(a) => order.binary_search(&a).ok().map(|i| i + 1),
            };
            if let Some(from) = from {
                for &i in &order[from..] {
                    if !st.objects[i as usize].alive {
                        continue;
                    }
                    if let Some(c) = t.cond
                        && self.eval(st, c, Ctx { this: i, bound: NONE })? == 0
                    {
                        continue;
                    }
                    return Ok(Some(i));
                }
                return Ok(None);
            }
        }
        let after_key = after.filter(|&a| a != NONE).map(|a| self.turn_key(st, a));
        let mut best: Option<((i64, i64), u32)> = None;
        // Ranks counted in one pass (sides 0..8; any other side is counted by `turn_key`).
        let mut ranks = [0i64; 8];
        for (i, o) in st.objects.iter().enumerate() {
            if !self.is_sub(o.class, t.class) {
                continue;
            }
            let side = st.slots[(o.base + t.side) as usize];
            let rank = match ranks.get_mut(side as usize) {
                Some(r) if side >= 0 => {
                    *r += 1;
                    *r - 1
                }
                // Not counted here: the key below comes from `turn_key`.
                _ => 0,
            };
            if !o.alive {
                continue;
            }
            let key =
                if (0..8).contains(&side) { if t.alternating { (rank, side) } else { (side, rank) } } else { self.turn_key(st, i as u32) };
            if after_key.is_some_and(|a| key <= a) || best.is_some_and(|(b, _)| key >= b) {
                continue;
            }
            if let Some(c) = t.cond
                && self.eval(st, c, Ctx { this: i as u32, bound: NONE })? == 0
            {
                continue;
            }
            best = Some((key, i as u32));
        }
        Ok(best.map(|(_, i)| i))
    }

    /// Ends the acting object's turn: the next object in order acts; after the last one the
    /// round ends (round hooks, then rules) and the first one acts again.
    pub(in crate::wgdl) fn end_turn(&self, st: &mut State) -> Result<(), RuntimeError> {
        st.end_turn = false;
        if self.turn.is_none() {
            return Ok(());
        }
        st.turns += 1;
        st.dirty.mark(crate::wgdl::deps::TURN);
        let next = if st.actor == NONE { None } else { self.next_actor(st, Some(st.actor))? };
        st.actor = match next {
            Some(n) => n,
            None => {
                st.round += 1;
                self.run_round_hooks(st)?;
                self.fire_rules(st)?;
                st.end_turn = false;
                self.next_actor(st, None)?.unwrap_or(NONE)
            }
        };
        st.to_move = self.side_of(st, st.actor);
        Ok(())
    }

    fn run_round_hooks(&self, st: &mut State) -> Result<(), RuntimeError> {
        for &h in &self.round_hooks {
            let a = &self.actions[h as usize];
            debug_assert_eq!(a.kind, ActionKind::OnRound);
            let class = a.class.expect("round hooks have a class");
            let n = st.objects.len();
            for this in 0..n {
                if !st.objects[this].alive || !self.is_sub(st.objects[this].class, class) {
                    continue;
                }
                let this = this as u32;
                match a.bind {
                    BindKind::Instance(bc) => {
                        for b in 0..n {
                            if !st.objects[this as usize].alive {
                                break;
                            }
                            if !st.objects[b].alive || !self.is_sub(st.objects[b].class, bc) {
                                continue;
                            }
                            let ctx = Ctx { this, bound: b as u32 };
                            if self.conditions_hold(st, a, ctx)? {
                                self.run_consequences(st, h, ctx, 0)?;
                            }
                        }
                    }
                    _ => {
                        let ctx = Ctx { this, bound: NONE };
                        if self.conditions_hold(st, a, ctx)? {
                            self.run_consequences(st, h, ctx, 0)?;
                        }
                    }
                }
            }
        }
        Ok(())
    }

    /// Records the first `winner`/`draw` line that holds (once decided, the outcome stays).
    pub(in crate::wgdl) fn check_outcomes(&self, st: &mut State) -> Result<(), RuntimeError> {
        if st.outcome != 0 {
            return Ok(());
        }
        // Every line was false at the last check: only those that read a changed part can hold.
        let mut won = None;
        {
            let env = Env::new(self, st, Ctx { this: NONE, bound: NONE });
            for o in &self.outcomes {
                if o.reads & st.dirty.checks != 0 && self.eval_env(&env, o.expr)? != 0 {
                    won = Some(o.winner.map_or(1, |k| k + 2));
                    break;
                }
            }
        }
        if let Some(w) = won {
            st.outcome = w;
        }
        Ok(())
    }

    // ------------------------------------------------------------------ built-in functions

    pub(in crate::wgdl) fn cell(&self, v: i64, op_index: usize) -> Result<usize, RuntimeError> {
        let n = self.hex.as_ref().map_or(0, |h| h.len());
        if v < 0 || v as usize >= n {
            return Err(rt(RtKind::OffMap { cell: v, last: n.saturating_sub(1) }, self.spans[op_index]));
        }
        Ok(v as usize)
    }

    /// Runs `f` with the occupants of `st` listed once (`None` for a game without occupants, or
    /// when a cache is already in use on this thread): for move generation, during which the
    /// state cannot change.
    pub(in crate::wgdl) fn with_occ<T>(
        &self,
        st: &State,
        f: impl FnOnce(Option<&OccCache>) -> Result<T, RuntimeError>,
    ) -> Result<T, RuntimeError> {
        if self.occupants.is_none() {
            return f(None);
        }
        OCC.with(|o| match o.try_borrow_mut() {
            Ok(mut cache) => {
                cache.fill(self, st)?;
                f(Some(&cache))
            }
            Err(_) => f(None),
        })
    }

    /// The objects that stand on the hex map and count (`hexOccupants … while`), in object
    /// order: what the state view draws at full strength.
    pub fn counting_occupants(&self, st: &State) -> Result<Vec<u32>, RuntimeError> {
        let mut v = Vec::new();
        self.for_each_occupant(st, |i, _, _| {
            v.push(i);
            true
        })?;
        Ok(v)
    }

    /// The live occupants that count (`hexOccupants … while`), as (object, cell, side).
    fn for_each_occupant(&self, st: &State, mut f: impl FnMut(u32, i64, i64) -> bool) -> Result<(), RuntimeError> {
        let Some(occ) = &self.occupants else { return Ok(()) };
        // One environment, rebound to each object in turn.
        let mut env = crate::wgdl::fast::Env::new(self, st, Ctx { this: NONE, bound: NONE });
        let cond = occ.cond.map(|c| self.evaluator(c));
        for (i, o) in st.objects.iter().enumerate() {
            if !o.alive || !self.is_sub(o.class, occ.class) {
                continue;
            }
            if let Some(cond) = &cond {
                env.rebind_this(i as u32, *o);
                if cond(&env)? == 0 {
                    continue;
                }
            }
            let pos = st.slots[(o.base + occ.pos) as usize];
            let side = st.slots[(o.base + occ.side) as usize];
            if !f(i as u32, pos, side) {
                break;
            }
        }
        Ok(())
    }

    /// Whether an occupant stands on `cell` (a cell of the map).
    #[inline]
    pub(in crate::wgdl) fn occupied(&self, env: &Env, cell: usize) -> Result<bool, RuntimeError> {
        if let Some(o) = env.occ {
            return Ok(bit(&o.occupied, cell));
        }
        let mut found = false;
        self.for_each_occupant(env.st, |_, pos, _| {
            found = pos == cell as i64;
            !found
        })?;
        Ok(found)
    }

    /// Whether no occupant of a side other than `me` sees `cell` (a cell of the map).
    #[inline]
    pub(in crate::wgdl) fn hidden(&self, env: &Env, h: &crate::wgdl::hex::HexMap, cell: usize, me: i64) -> Result<bool, RuntimeError> {
        if let Some(o) = env.occ {
            if let Some(bits) = o.seen_by_others(me) {
                return Ok(!bit(bits, cell));
            }
            return Ok(!o.list.iter().any(|&(pos, side)| side != me && pos >= 0 && (pos as usize) < h.len() && h.sees(pos as usize, cell)));
        }
        let mut hidden = true;
        self.for_each_occupant(env.st, |_, pos, side| {
            if side != me && pos >= 0 && (pos as usize) < h.len() && h.sees(pos as usize, cell) {
                hidden = false;
            }
            hidden
        })?;
        Ok(hidden)
    }

    pub(in crate::wgdl) fn builtin(&self, env: &Env, b: Builtin, args: &[i64], op_index: usize) -> Result<i64, RuntimeError> {
        let d = |v: i64| f64::from_bits(v as u64);
        let bits = |v: f64| v.to_bits() as i64;
        Ok(match b {
            Builtin::MaxL => args[0].max(args[1]),
            Builtin::MinL => args[0].min(args[1]),
            Builtin::AbsL => {
                args[0].checked_abs().ok_or_else(|| rt(RtKind::Overflow { a: 0, op: "-", b: args[0] }, self.spans[op_index]))?
            }
            Builtin::MaxD => bits(d(args[0]).max(d(args[1]))),
            Builtin::MinD => bits(d(args[0]).min(d(args[1]))),
            Builtin::AbsD => bits(d(args[0]).abs()),
            Builtin::HexCells => self.hex.as_ref().map_or(0, |h| h.len() as i64),
            _ => {
                let h = self.hex.as_ref().expect("the compiler requires a hexmap for hex built-ins");
                match b {
                    Builtin::HexDistance => h.distance(self.cell(args[0], op_index)?, self.cell(args[1], op_index)?),
                    Builtin::HexWalk => h.walk(self.cell(args[0], op_index)?, self.cell(args[1], op_index)?),
                    Builtin::HexSees => h.sees(self.cell(args[0], op_index)?, self.cell(args[1], op_index)?) as i64,
                    Builtin::HexWall => h.wall[self.cell(args[0], op_index)?] as i64,
                    Builtin::HexFree => {
                        let c = self.cell(args[0], op_index)?;
                        (!h.wall[c] && !self.occupied(env, c)?) as i64
                    }
                    Builtin::HexStart => {
                        let (side, k) = (args[0], args[1]);
                        let have = h.starts.get(side.max(0) as usize).map_or(0, |v| v.len());
                        if side < 0 || k < 0 || k as usize >= have {
                            return Err(rt(RtKind::NoStartPoint { side, k, have }, self.spans[op_index]));
                        }
                        h.starts[side as usize][k as usize] as i64
                    }
                    Builtin::HexHidden => {
                        let c = self.cell(args[0], op_index)?;
                        self.hidden(env, h, c, args[1])? as i64
                    }
                    Builtin::HexApproach => {
                        // The nearest free cell (by walk, then number) other than `from` within
                        // the budget from which the target is in range and in sight: cells in
                        // walk order, stopping at the first.
                        let from = self.cell(args[0], op_index)?;
                        let target = self.cell(args[1], op_index)?;
                        let found = h.approach(from, target, args[2], args[3], |c| Ok::<_, RuntimeError>(!self.occupied(env, c)?))?;
                        found.map_or(-1, |c| c as i64)
                    }
                    Builtin::HexStepToward => {
                        let from = self.cell(args[0], op_index)?;
                        let to = self.cell(args[1], op_index)?;
                        let mut err = None;
                        let found = h.step_toward(from, to, args[2], |c| match self.occupied(env, c) {
                            Ok(o) => !o,
                            Err(e) => {
                                err = Some(e);
                                true
                            }
                        });
                        if let Some(e) = err {
                            return Err(e);
                        }
                        found.map_or(-1, |c| c as i64)
                    }
                    _ => unreachable!("handled above"),
                }
            }
        })
    }

    pub(in crate::wgdl) fn grid_line(&self, st: &State, g: u16, args: &[i64]) -> i64 {
        let gi = &self.grids[g as usize];
        let (w, h) = (gi.width as i64, gi.height as i64);
        let (x, y, dx, dy) = (args[0], args[1], args[2], args[3]);
        if x < 0 || y < 0 || x >= w || y >= h {
            return 0;
        }
        if dx == 0 && dy == 0 {
            return 1;
        }
        let cells = &st.slots[gi.base as usize..(gi.base as i64 + w * h) as usize];
        let v = cells[(y * w + x) as usize];
        // Steps that stay on the grid from (x, y) along +(dx, dy) and along −(dx, dy).
        // (Unit steps, the usual ones, without a division.)
        let room = |p: i64, d: i64, size: i64| match d {
            0 => i64::MAX,
            1 => size - 1 - p,
            -1 => p,
            d if d > 0 => (size - 1 - p) / d,
            d => p / -d,
        };
        let ahead = room(x, dx, w).min(room(y, dy, h));
        let behind = room(x, -dx, w).min(room(y, -dy, h));
        let step = dy * w + dx;
        let at = y * w + x;
        let mut n = 1;
        let mut i = at;
        for _ in 0..ahead {
            i += step;
            if cells[i as usize] != v {
                break;
            }
            n += 1;
        }
        i = at;
        for _ in 0..behind {
            i -= step;
            if cells[i as usize] != v {
                break;
            }
            n += 1;
        }
        n
    }

    /// [`Program::grid_line`] along the constant unit direction (DX, DY) (not (0, 0)): the same
    /// count, with the direction's bounds checks and steps known when it is compiled.
    #[inline(always)]
    pub(in crate::wgdl) fn grid_line_unit<const DX: i64, const DY: i64>(&self, st: &State, g: u16, x: i64, y: i64) -> i64 {
        let gi = &self.grids[g as usize];
        let (w, h) = (gi.width as i64, gi.height as i64);
        if x < 0 || y < 0 || x >= w || y >= h {
            return 0;
        }
        let cells = &st.slots[gi.base as usize..(gi.base as i64 + w * h) as usize];
        let at = y * w + x;
        let v = cells[at as usize];
        // Steps to the edge along +(DX, DY) and −(DX, DY), then the cells one stride apart.
        let room = |d: i64, p: i64, len: i64| match d {
            0 => i64::MAX,
            1 => len - 1 - p,
            _ => p,
        };
        let ahead = room(DX, x, w).min(room(DY, y, h));
        let behind = room(-DX, x, w).min(room(-DY, y, h));
        let stride = DY * w + DX;
        let mut n = 1;
        for k in 1..=ahead {
            if cells[(at + k * stride) as usize] != v {
                break;
            }
            n += 1;
        }
        for k in 1..=behind {
            if cells[(at - k * stride) as usize] != v {
                break;
            }
            n += 1;
        }
        n
    }

    /// Aggregate `a` compared with zero (`test`): a `countOf` whose condition cannot fail stops
    /// at the first object that counts; any other aggregate is computed in full.
    pub(in crate::wgdl) fn aggregate_test(&self, st: &State, a: u16, ctx: Ctx, test: ZeroTest) -> Result<bool, RuntimeError> {
        let info = self.aggs[a as usize];
        if !(info.count && info.infallible) {
            let v = self.aggregate(st, a, ctx)?;
            return Ok(match test {
                ZeroTest::Zero => v == 0,
                ZeroTest::NonZero => v != 0,
                ZeroTest::Positive => v > 0,
                ZeroTest::NotPositive => v <= 0,
            });
        }
        let mut any = false;
        self.aggregate_scan(st, a, ctx, |v| {
            any = v != 0;
            !any
        })?;
        // A count is never negative: > 0 is != 0.
        Ok(match test {
            ZeroTest::NonZero | ZeroTest::Positive => any,
            ZeroTest::Zero | ZeroTest::NotPositive => !any,
        })
    }

    pub(in crate::wgdl) fn aggregate(&self, st: &State, a: u16, ctx: Ctx) -> Result<i64, RuntimeError> {
        let info = self.aggs[a as usize];
        let (mut n, mut sum_l, mut sum_d) = (0i64, 0i64, 0f64);
        self.aggregate_scan(st, a, ctx, |v| {
            if info.count {
                n += (v != 0) as i64;
            } else if info.double {
                sum_d += f64::from_bits(v as u64);
            } else {
                sum_l = sum_l.wrapping_add(v);
            }
            true
        })?;
        Ok(if info.count {
            n
        } else if info.double {
            sum_d.to_bits() as i64
        } else {
            sum_l
        })
    }

    /// Aggregate `a`'s expression for each live object of its class in creation order, handed
    /// to `f` until it returns `false`.
    fn aggregate_scan(&self, st: &State, a: u16, ctx: Ctx, mut f: impl FnMut(i64) -> bool) -> Result<(), RuntimeError> {
        let info = self.aggs[a as usize];
        // One environment, rebound to each object in turn.
        let mut env = crate::wgdl::fast::Env::new(self, st, Ctx { this: ctx.this, bound: NONE });
        let value = self.evaluator(info.expr);
        for (i, o) in st.objects.iter().enumerate() {
            if !o.alive || !self.is_sub(o.class, info.class) {
                continue;
            }
            env.rebind(i as u32, o.base);
            if !f(value(&env)?) {
                break;
            }
        }
        Ok(())
    }

    // ------------------------------------------------------------------ move filters, policies

    /// Applies `choose` and `unless`; for searches (not `for_policy`) also drops `policyOnly`
    /// moves and applies `lastResort`. Scratch space is per thread: nothing is allocated.
    pub(in crate::wgdl) fn filter_moves(
        &self,
        st: &State,
        out: &mut Vec<Action>,
        for_policy: bool,
        occ: Option<&OccCache>,
    ) -> Result<(), RuntimeError> {
        FILTER.with(|f| self.filter_moves_with(st, out, for_policy, occ, &mut f.borrow_mut()))
    }

    fn filter_moves_with(
        &self,
        st: &State,
        out: &mut Vec<Action>,
        for_policy: bool,
        occ: Option<&OccCache>,
        f: &mut FilterScratch,
    ) -> Result<(), RuntimeError> {
        // Which filters the listed moves have.
        let flags = out.iter().fold(0, |acc, m| acc | self.filter_flags[m.def as usize]);
        if flags == 0 {
            return Ok(());
        }
        // choose: per (action, owner), keep the n lowest keys (first of equals). Actions with a
        // walk order were generated that way already.
        let chosen = |m: &Action| self.actions[m.def as usize].choose.filter(|_| self.filter_flags[m.def as usize] & FILTER_CHOOSE != 0);
        if flags & FILTER_CHOOSE != 0 {
            f.keys.clear();
            for m in out.iter() {
                f.keys.push(match chosen(m) {
                    Some((_, e)) => self.eval_env(&Env::with_occ(self, st, Ctx { this: m.this, bound: m.bound }, occ), e)?,
                    None => 0,
                });
            }
            f.keep.clear();
            for (i, m) in out.iter().enumerate() {
                let Some((n, _)) = chosen(m) else {
                    f.keep.push(true);
                    continue;
                };
                let better =
                    out.iter().enumerate().filter(|(j, o)| o.def == m.def && o.this == m.this && (f.keys[*j], *j) < (f.keys[i], i)).count();
                f.keep.push(better < n as usize);
            }
            let mut k = 0;
            out.retain(|_| {
                k += 1;
                f.keep[k - 1]
            });
        }
        // Moves per action, for `unless` and `lastResort`.
        f.count.clear();
        f.count.resize(self.actions.len(), 0);
        for m in out.iter() {
            f.count[m.def as usize] += 1;
        }
        // unless: drop an action's moves while a move of another named action is legal.
        let blocked = |d: u16, count: &[u32]| self.actions[d as usize].unless.iter().any(|&o| count[o as usize] > 0);
        if flags & FILTER_UNLESS != 0 && out.iter().any(|m| blocked(m.def, &f.count)) {
            // Decided on the list before any is dropped.
            f.keep.clear();
            f.keep.extend(out.iter().map(|m| !blocked(m.def, &f.count)));
            let mut k = 0;
            out.retain(|_| {
                k += 1;
                f.keep[k - 1]
            });
            f.count.iter_mut().for_each(|c| *c = 0);
            for m in out.iter() {
                f.count[m.def as usize] += 1;
            }
        }
        if !for_policy {
            if flags & FILTER_POLICY_ONLY != 0 {
                out.retain(|m| self.filter_flags[m.def as usize] & FILTER_POLICY_ONLY == 0);
            }
            if flags & FILTER_LAST_RESORT != 0 && out.iter().any(|m| self.filter_flags[m.def as usize] & FILTER_LAST_RESORT != 0) {
                // Counted after `policyOnly` moves are gone.
                f.count.iter_mut().for_each(|c| *c = 0);
                for m in out.iter() {
                    f.count[m.def as usize] += 1;
                }
                let total = out.len() as u32;
                let count = &f.count;
                out.retain(|m| match self.actions[m.def as usize].last_resort {
                    Some(n) => total - count[m.def as usize] <= n,
                    None => true,
                });
            }
        }
        Ok(())
    }

    /// The move a policy picks here, or `None` when none of its tiers has a move. `buf` is
    /// scratch space.
    pub fn policy_move(&self, st: &State, policy: usize, rng: &mut Rng, buf: &mut Vec<Action>) -> Result<Option<Action>, RuntimeError> {
        self.with_occ(st, |occ| {
            self.candidate_actions_inner(st, buf, true, occ)?;
            self.filter_moves(st, buf, true, occ)
        })?;
        let pol = &self.policies[policy];
        for tier in &pol.tiers {
            let mut chosen: Option<Action> = None;
            let mut count = 0usize;
            let mut total = 0.0f64;
            let mut best = f64::NEG_INFINITY;
            for &m in buf.iter() {
                if m.def != tier.action {
                    continue;
                }
                let ctx = Ctx { this: m.this, bound: m.bound };
                if let Some(c) = tier.cond
                    && self.eval(st, c, ctx)? == 0
                {
                    continue;
                }
                let num = |e, double: bool| -> Result<f64, RuntimeError> {
                    let v = self.eval(st, e, ctx)?;
                    Ok(if double { f64::from_bits(v as u64) } else { v as f64 })
                };
                match tier.pick {
                    PickCode::First => {
                        chosen = Some(m);
                        break;
                    }
                    PickCode::Random => {
                        // Reservoir sampling: uniform over the tier's moves in one pass.
                        count += 1;
                        if rng.random_range(0..count) == 0 {
                            chosen = Some(m);
                        }
                    }
                    PickCode::Weight(e, double) => {
                        let w = num(e, double)?.max(0.0);
                        count += 1;
                        if w > 0.0 {
                            total += w;
                            if rng.random::<f64>() * total < w {
                                chosen = Some(m);
                            }
                        } else if total == 0.0 && chosen.is_none() {
                            chosen = Some(m);
                        }
                    }
                    PickCode::Max(e, double) => {
                        let v = num(e, double)?;
                        if v > best {
                            best = v;
                            chosen = Some(m);
                        }
                    }
                }
            }
            if chosen.is_some() {
                return Ok(chosen);
            }
        }
        Ok(None)
    }

    /// The `constraint` lines that do not hold in `st` (normally the start state), as text.
    pub fn violated_constraints(&self, st: &State) -> Result<Vec<String>, RuntimeError> {
        let mut out = Vec::new();
        for (e, text) in &self.constraints {
            if self.eval(st, *e, Ctx { this: NONE, bound: NONE })? == 0 {
                out.push(text.clone());
            }
        }
        Ok(out)
    }

    /// The policy's index by name.
    pub fn policy_index(&self, name: &str) -> Option<usize> {
        self.policies.iter().position(|p| p.name == name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{RngExt, SeedableRng};

    /// `hex.approach` with occupancy as bits (move generation) and without (consequences) gives
    /// the definition's cell: the first in walk order from `from`, within the budget, other
    /// than `from`, free, in range of the target and seeing it.
    #[test]
    fn hex_approach_finds_the_definitions_cell() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("games/hex_arena.wgdl");
        let p = crate::wgdl::load(&path).expect("the arena loads").program;
        let h = p.hex.clone().expect("a hex map");
        let occ_info = p.occupants.clone().expect("occupants");
        let open: Vec<usize> = (0..h.len()).filter(|&c| !h.wall[c]).collect();
        let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(7);
        for round in 0..4 {
            let mut st = p.initial_state().expect("starts");
            let mages: Vec<usize> = (0..st.objects.len()).filter(|&i| p.is_sub(st.objects[i].class, occ_info.class)).collect();
            for (k, &m) in mages.iter().enumerate() {
                let base = st.objects[m].base as usize;
                st.slots[base + occ_info.pos as usize] = open[rng.random_range(0..open.len())] as i64;
                // Round 0: everyone stands; later, some have fallen (not occupants).
                if round > 0 && k % 2 == round % 2 {
                    let hp = p.classes[st.objects[m].class as usize].attrs.iter().position(|a| a.name == "hp").expect("hp");
                    st.slots[base + hp] = 0;
                }
            }
            let mut cache = OccCache::new();
            cache.fill(&p, &st).expect("occupants listed");
            let ctx = Ctx { this: NONE, bound: NONE };
            let with = crate::wgdl::fast::Env::with_occ(&p, &st, ctx, Some(&cache));
            let without = crate::wgdl::fast::Env::new(&p, &st, ctx);
            let occupied: Vec<usize> = cache.list.iter().map(|&(pos, _)| pos as usize).collect();
            for &from in &open {
                for &target in open.iter().step_by(3) {
                    for budget in [-1, 0, 2, 5, 9, 14] {
                        for range in [-1, 0, 1, 3, 6, 12] {
                            let want = h
                                .by_walk(from)
                                .iter()
                                .map(|&c| c as usize)
                                .take_while(|&c| h.walk(from, c) <= budget)
                                .find(|&c| c != from && h.distance(c, target) <= range && h.sees(c, target) && !occupied.contains(&c))
                                .map_or(-1, |c| c as i64);
                            let args = [from as i64, target as i64, budget, range];
                            for env in [&with, &without] {
                                assert_eq!(p.builtin(env, Builtin::HexApproach, &args, 0), Ok(want), "approach{args:?}");
                            }
                        }
                    }
                }
            }
        }
    }

    /// The counters made for one unit direction give `grid_line`'s count at every cell and off
    /// the grid, on random boards of several shapes.
    #[test]
    fn unit_direction_lines_count_as_grid_line_does() {
        for (w, h) in [(7, 6), (1, 5), (4, 1), (3, 3), (9, 2)] {
            let src = format!("grid board {w} {h}\nclass c\nobject o is c\ninitial o\ngoal 1 false\n");
            let p = crate::wgdl::compile_str("lines.wgdl", &src).expect("compiles").program;
            let mut st = p.initial_state().expect("starts");
            let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(w * 100 + h);
            let base = p.grids[0].base as usize;
            for _ in 0..20 {
                for k in 0..(w * h) as usize {
                    st.slots[base + k] = rng.random_range(0..3);
                }
                for x in -1..=w as i64 {
                    for y in -1..=h as i64 {
                        for (dx, dy) in [(1, 0), (-1, 0), (0, 1), (0, -1), (1, 1), (-1, -1), (1, -1), (-1, 1)] {
                            let f = crate::wgdl::fast::line_fn(dx, dy).expect("a unit direction");
                            assert_eq!(
                                f(&p, &st, 0, x, y),
                                p.grid_line(&st, 0, &[x, y, dx, dy]),
                                "{w}x{h} at ({x}, {y}) along ({dx}, {dy})"
                            );
                        }
                    }
                }
            }
        }
    }
}
