//! Legal moves: an action's conditions and actor gates, the candidate objects and bindings of
//! each action (walk orders with early stop, `unless`, the live objects of a bound class listed once
//! per generation), and the list of legal [`Action`]s a searcher picks from.

use super::*;

/// How deep `canMove` may ask inside `canMove` (a condition of a named action asking again).
pub const MAX_CAN_MOVE_DEPTH: u32 = 8;

thread_local! {
    /// How deep [`Program::has_move`] is nested on this thread.
    static CAN_MOVE_DEPTH: std::cell::Cell<u32> = const { std::cell::Cell::new(0) };
    /// The move list [`Program::has_move`] fills, reused.
    static HAS_MOVE: std::cell::RefCell<(Vec<Action>, Scratch)> = std::cell::RefCell::new(Default::default());
}

impl Program {
    pub(in crate::wgdl) fn conditions_hold(&self, st: &State, a: &ActionInfo, ctx: Ctx) -> Result<bool, RuntimeError> {
        self.conditions_hold_from(st, a, ctx, 0, None)
    }

    /// Whether object `this` (or its attribute) is the actor, as `gate` compares them.
    #[inline]
    pub(super) fn gate_open(&self, st: &State, gate: ActorGate, this: u32) -> bool {
        let actor = if st.actor == NONE { NULL } else { st.actor as i64 };
        let owner = match gate {
            ActorGate::This => this as i64,
            ActorGate::Attr(o) => st.slots[(st.objects[this as usize].base + o) as usize],
        };
        owner == actor
    }

    /// The leading conditions that do not read the binding, checked once for an owner (a live
    /// object): those that read no owner either once per action and move generation (their
    /// result kept in `global[a]`: 0 unknown, 1 false, 2 true), the first one directly when it
    /// compares the owner with the actor (unless `gated`: the owner's class gate was open).
    pub(super) fn owner_ok(
        &self,
        st: &State,
        a: ActionId,
        this: u32,
        occ: Option<&OccCache>,
        global: &mut [u8],
        gated: bool,
    ) -> Result<bool, RuntimeError> {
        let info = &self.actions[a as usize];
        let mut first = 0;
        if info.global_conds > 0 {
            let known = global.get(a as usize).copied().unwrap_or(0);
            let ok = match known {
                0 => {
                    let env = crate::wgdl::program::Env::with_occ(self, st, Ctx { this, bound: NONE }, occ);
                    let mut ok = true;
                    for &c in &info.conditions[..info.global_conds] {
                        if self.eval_env(&env, c)? == 0 {
                            ok = false;
                            break;
                        }
                    }
                    if let Some(g) = global.get_mut(a as usize) {
                        *g = 1 + ok as u8;
                    }
                    ok
                }
                k => k == 2,
            };
            if !ok {
                return Ok(false);
            }
            first = info.global_conds;
        } else if let Some(gate) = info.actor_gate {
            if !gated && !self.gate_open(st, gate, this) {
                return Ok(false);
            }
            first = 1;
        }
        if first == info.owner_conds {
            return Ok(true);
        }
        let env = crate::wgdl::program::Env::with_occ(self, st, Ctx { this, bound: NONE }, occ);
        self.all_hold(&env, &self.cond_fxs(a)[first..info.owner_conds])
    }

    /// Whether every condition closure of `conds` holds in `env`.
    #[inline(always)]
    pub(super) fn all_hold(&self, env: &crate::wgdl::program::Env, conds: &[crate::wgdl::program::Fx]) -> Result<bool, RuntimeError> {
        for f in conds {
            if f(env)? == 0 {
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// The conditions from the `from`-th on (one evaluation environment for all of them).
    #[inline]
    pub(super) fn conditions_hold_from(
        &self,
        st: &State,
        a: &ActionInfo,
        ctx: Ctx,
        from: usize,
        occ: Option<&OccCache>,
    ) -> Result<bool, RuntimeError> {
        let conds = &a.conditions[from.min(a.conditions.len())..];
        if conds.is_empty() {
            return Ok(true);
        }
        let env = match a.bind {
            BindKind::Number(..) | BindKind::Hex | BindKind::God(_) | BindKind::Step(_) => {
                crate::wgdl::program::Env::unbound_object(self, st, ctx, occ)
            }
            _ => crate::wgdl::program::Env::with_occ(self, st, ctx, occ),
        };
        let fxs = self.cond_fxs(a.id);
        self.all_hold(&env, &fxs[fxs.len() - conds.len()..])
    }

    /// Whether one of `actions` has a move for owner `this` in `st` whose conditions hold (move
    /// filters not applied): `canMove(jump, kingJump)` (games/README.md §10). Nothing is
    /// allocated once warm.
    pub(in crate::wgdl) fn has_move(&self, st: &State, actions: &[ActionId], this: u32) -> Result<bool, RuntimeError> {
        let Some(obj) = st.objects.get(this as usize) else { return Ok(false) };
        // A condition of a named action that asks `canMove` again nests; a bounded depth turns a
        // cycle (`condition a canMove(a)`) into an error instead of a stack overflow.
        let depth = CAN_MOVE_DEPTH.with(|d| {
            d.set(d.get() + 1);
            d.get()
        });
        let r = if depth > MAX_CAN_MOVE_DEPTH {
            let span = actions.first().map(|&a| self.actions[a as usize].span).unwrap_or_default();
            Err(rt(RtKind::CanMoveTooDeep { limit: MAX_CAN_MOVE_DEPTH }, span))
        } else {
            self.has_move_at(st, actions, this, obj)
        };
        CAN_MOVE_DEPTH.with(|d| d.set(d.get() - 1));
        r
    }

    fn has_move_at(&self, st: &State, actions: &[ActionId], this: u32, obj: &ObjRec) -> Result<bool, RuntimeError> {
        let mut found = false;
        HAS_MOVE.with(|buf| -> Result<(), RuntimeError> {
            // Nested (a `canMove` inside a condition that `canMove` evaluates): space of its own.
            let mut owned = Default::default();
            let mut guard = buf.try_borrow_mut();
            let (out, scratch): &mut (Vec<Action>, Scratch) = match guard.as_mut() {
                Ok(v) => v,
                Err(_) => &mut owned,
            };
            scratch.global.clear();
            scratch.global.resize(self.actions.len(), 0);
            scratch.bound_class = None;
            for &a in actions {
                let info = &self.actions[a as usize];
                if !obj.alive || info.class.is_none_or(|c| !self.is_sub(obj.class, c)) {
                    continue;
                }
                out.clear();
                self.with_occ(st, |occ| self.candidates_of(st, out, false, occ, scratch, a, this, false))?;
                if !out.is_empty() {
                    found = true;
                    break;
                }
            }
            Ok(())
        })?;
        Ok(found)
    }

    /// True when all the action's conditions hold (the action instance is legal).
    pub fn is_legal(&self, st: &State, a: Action) -> Result<bool, RuntimeError> {
        let Some(info) = self.actions.get(a.def as usize) else { return Ok(false) };
        if info.kind != ActionKind::Player || a.this as usize >= st.objects.len() || !st.objects[a.this as usize].alive {
            return Ok(false);
        }
        let class = st.objects[a.this as usize].class;
        if !self.is_sub(class, info.class.unwrap_or(0)) {
            return Ok(false);
        }
        match info.bind {
            BindKind::None => {
                if a.bound != NONE {
                    return Ok(false);
                }
            }
            BindKind::God(c) => {
                if a.bound as usize >= self.gods.len() || !self.is_sub(self.gods[a.bound as usize].class, c) {
                    return Ok(false);
                }
            }
            BindKind::Instance(c) => match st.objects.get(a.bound as usize) {
                Some(o) if o.alive && self.is_sub(o.class, c) => {}
                _ => return Ok(false),
            },
            BindKind::Number(lo, hi) => {
                if a.bound < lo || a.bound > hi {
                    return Ok(false);
                }
            }
            BindKind::Hex => match &self.hex {
                Some(h) if (a.bound as usize) < h.len() && !h.wall[a.bound as usize] => {}
                _ => return Ok(false),
            },
            BindKind::Step(t) => {
                let (lo, hi) = self.board.tables[t as usize].range(self.side_of(st, a.this) as i64);
                if a.bound < lo || a.bound >= hi {
                    return Ok(false);
                }
            }
        }
        if !self.conditions_hold(st, info, Ctx { this: a.this, bound: a.bound })? {
            return Ok(false);
        }
        if self.has_filters {
            // Filters depend on the other legal moves: decide as the move list does.
            let mut all = Vec::new();
            self.legal_actions(st, &mut all)?;
            return Ok(all.contains(&a));
        }
        Ok(true)
    }

    /// Fills `out` with every legal action instance: objects in creation order, each object's
    /// actions in declaration order (inherited first), bindings in declaration/creation order.
    ///
    /// Where a `byChance` action has a move, only chance's moves are listed: the state is a
    /// chance node ([`Program::is_chance`]).
    pub fn legal_actions(&self, st: &State, out: &mut Vec<Action>) -> Result<(), RuntimeError> {
        self.with_occ(st, |occ| {
            self.candidate_actions_inner(st, out, false, occ)?;
            if self.has_filters {
                self.filter_moves(st, out, false, occ)?;
            }
            if self.has_chance && out.iter().any(|m| self.actions[m.def as usize].chance.is_some()) {
                out.retain(|m| self.actions[m.def as usize].chance.is_some());
            }
            Ok(())
        })
    }

    /// Every action instance whose conditions hold, before move filters, with the occupants
    /// listed in `occ`. `for_policy` = false skips `policyOnly` actions when no filter looks at
    /// them.
    pub(in crate::wgdl) fn candidate_actions_inner(
        &self,
        st: &State,
        out: &mut Vec<Action>,
        for_policy: bool,
        occ: Option<&OccCache>,
    ) -> Result<(), RuntimeError> {
        out.clear();
        if st.outcome != 0 {
            return Ok(());
        }
        CANDIDATES.with(|g| match g.try_borrow_mut() {
            Ok(mut scratch) => {
                scratch.global.clear();
                scratch.global.resize(self.actions.len(), 0);
                scratch.bound_class = None;
                // The compiled tier's lister, where it has one; where it gives up, the
                // interpreter lists afresh (and reports the error).
                #[cfg(feature = "compiled")]
                if let Some((lister, consts)) = self.fast.lister(self) {
                    let skip_hidden = !for_policy && !self.unless_sees_policy_only;
                    let scratch = &mut *scratch;
                    let mut slow = |a: ActionId, this: u32, out: &mut Vec<Action>| {
                        let gated = self.classes[st.objects[this as usize].class as usize].actor_gate.is_some();
                        self.candidates_of(st, out, skip_hidden, occ, scratch, a, this, gated)
                    };
                    if lister.run(self, st, consts, skip_hidden, out, &mut slow) {
                        return Ok(());
                    }
                    out.clear();
                    scratch.global.iter_mut().for_each(|g| *g = 0);
                    scratch.bound_class = None;
                }
                self.candidates(st, out, for_policy, occ, &mut scratch)
            }
            // Nested (not expected): with scratch space of its own.
            Err(_) => self.candidates(st, out, for_policy, occ, &mut Scratch::default()),
        })
    }

    pub(super) fn candidates(
        &self,
        st: &State,
        out: &mut Vec<Action>,
        for_policy: bool,
        occ: Option<&OccCache>,
        scratch: &mut Scratch,
    ) -> Result<(), RuntimeError> {
        let skip_hidden = !for_policy && !self.unless_sees_policy_only;
        for (oid, obj) in st.objects.iter().enumerate() {
            let class = &self.classes[obj.class as usize];
            if !obj.alive || class.actor_gate.is_some_and(|g| !self.gate_open(st, g, oid as u32)) {
                continue;
            }
            // Every action's own gate is the class's, just found open.
            let gated = class.actor_gate.is_some();
            for &a in &class.actions {
                self.candidates_of(st, out, skip_hidden, occ, scratch, a, oid as u32, gated)?;
            }
        }
        Ok(())
    }

    /// The moves of action `a` with owner `this` (a live object of a class that owns `a`, whose
    /// class gate, if any, is open), appended to `out`: one turn of [`Program::candidates`]'s
    /// loop, and what the compiled tier's lister calls for an action it does not inline.
    #[inline(always)]
    pub(super) fn candidates_of(
        &self,
        st: &State,
        out: &mut Vec<Action>,
        skip_hidden: bool,
        occ: Option<&OccCache>,
        scratch: &mut Scratch,
        a: ActionId,
        this: u32,
        gated: bool,
    ) -> Result<(), RuntimeError> {
        let global = &mut scratch.global[..];
        let info = &self.actions[a as usize];
        if skip_hidden && info.policy_only {
            return Ok(());
        }
        // `unless`: a move of a named action is listed already, so the filter would drop
        // every move of this one (conditions not evaluated, as `choose` leaves some).
        if !info.unless.is_empty() && out.iter().any(|m| info.unless.contains(&m.def)) {
            return Ok(());
        }
        if info.global_conds > 0 {
            match global.get(a as usize) {
                // Known already this generation: the owner-free conditions fail.
                Some(1) => return Ok(()),
                // Only owner-free conditions, known to hold: a move for every owner.
                Some(2) if info.global_conds == info.conditions.len() && info.bind == BindKind::None => {
                    out.push(Action { def: a, this, bound: NONE });
                    return Ok(());
                }
                _ => {}
            }
        }
        match info.bind {
            BindKind::None => {
                if self.owner_ok(st, a, this, occ, global, gated)?
                    && self.conditions_hold_from(st, info, Ctx { this, bound: NONE }, info.owner_conds, occ)?
                {
                    out.push(Action { def: a, this, bound: NONE });
                }
            }
            BindKind::God(_) | BindKind::Instance(_) | BindKind::Number(..) | BindKind::Hex | BindKind::Step(_)
                if !self.owner_ok(st, a, this, occ, global, gated)? => {}
            // The owner's side's moves of the table, in order.
            BindKind::Step(t) => {
                let table = &self.board.tables[t as usize];
                let side = self.side_of(st, this) as i64;
                let (lo, hi) = table.range(side);
                let mut env = crate::wgdl::program::Env::unbound_object(self, st, Ctx { this, bound: NONE }, occ);
                match &info.cell_tests {
                    // The cell tests natively, a from-cell's moves skipped when its test fails.
                    Some(ct) => {
                        let o = &st.objects[this as usize];
                        let r = ct.resolve(&st.slots, o, &self.gods[o.god as usize].consts);
                        let conds = &self.cond_fxs(a)[info.owner_conds + ct.n as usize..];
                        let starts = table.starts_of(side);
                        for c in r.passing_cells(&st.slots, 0, table.cells) {
                            for bound in starts[c as usize]..starts[c as usize + 1] {
                                if r.rest_hold(&st.slots, table.moves[bound as usize]) && {
                                    env.rebind(bound, 0);
                                    self.all_hold(&env, conds)?
                                } {
                                    out.push(Action { def: a, this, bound });
                                }
                            }
                        }
                    }
                    None => {
                        let conds = &self.cond_fxs(a)[info.owner_conds..];
                        for bound in lo..hi {
                            env.rebind(bound, 0);
                            if self.all_hold(&env, conds)? {
                                out.push(Action { def: a, this, bound });
                            }
                        }
                    }
                }
            }
            // The bindings share one environment, rebound for each.
            BindKind::God(c) => {
                let conds = &self.cond_fxs(a)[info.owner_conds..];
                let mut env = crate::wgdl::program::Env::unbound_object(self, st, Ctx { this, bound: NONE }, occ);
                for &g in &self.classes[c as usize].gods {
                    env.rebind(g as u32, 0);
                    if self.all_hold(&env, conds)? {
                        out.push(Action { def: a, this, bound: g as u32 });
                    }
                }
            }
            BindKind::Instance(c) => {
                if scratch.bound_class != Some(c) {
                    scratch.bound_class = Some(c);
                    scratch.bound.clear();
                    // A plain loop: `extend` over a filter pushes through the general path.
                    for (i, b) in st.objects.iter().enumerate() {
                        if b.alive && self.is_sub(b.class, c) {
                            scratch.bound.push((i as u32, b.base));
                        }
                    }
                }
                let conds = &self.cond_fxs(a)[info.owner_conds..];
                let mut env = crate::wgdl::program::Env::unbound_object(self, st, Ctx { this, bound: NONE }, occ);
                for &(bound, base) in &scratch.bound {
                    env.rebind(bound, base);
                    if self.all_hold(&env, conds)? {
                        out.push(Action { def: a, this, bound });
                    }
                }
            }
            BindKind::Number(lo, hi) => match info.swap_filter {
                // The swap set of the board, once (from the cache when the rules just
                // made it), then a bit per number.
                Some((g, min)) => self.with_swap_set(st, g, min, |bits| -> Result<(), RuntimeError> {
                    // The filter is the last condition and every number is a swap: the
                    // moves are the set bits.
                    if info.conditions.len() == info.owner_conds + 1 && self.swap_in_range(g, lo as i64) && self.swap_in_range(g, hi as i64)
                    {
                        for (w, &word) in bits.iter().enumerate() {
                            let mut b = word;
                            while b != 0 {
                                let bound = (w * 64) as u32 + b.trailing_zeros();
                                b &= b - 1;
                                if (lo..=hi).contains(&bound) {
                                    out.push(Action { def: a, this, bound });
                                }
                            }
                        }
                        return Ok(());
                    }
                    for bound in lo..=hi {
                        let from = match self.swap_in_range(g, bound as i64) {
                            true if bits[bound as usize / 64] >> (bound % 64) & 1 == 0 => continue,
                            true => info.owner_conds + 1,
                            // Out of range: the interpreted condition reports it.
                            false => info.owner_conds,
                        };
                        if self.conditions_hold_from(st, info, Ctx { this, bound }, from, occ)? {
                            out.push(Action { def: a, this, bound });
                        }
                    }
                    Ok(())
                })?,
                // One pass along a grid row (the cells the condition would read).
                None if let Some(scan) = info.row_scan => {
                    let cells = &st.slots[scan.row + lo as usize..=scan.row + hi as usize];
                    out.reserve(cells.len());
                    scan.each_holding(cells, lo, |bound| out.push(Action { def: a, this, bound }));
                }
                // Cell tests natively (`board[c] == 0`), then the other conditions.
                None if let Some(ct) = &info.cell_tests => {
                    let o = &st.objects[this as usize];
                    let r = ct.resolve(&st.slots, o, &self.gods[o.god as usize].consts);
                    let conds = &self.cond_fxs(a)[info.owner_conds + ct.n as usize..];
                    let mut env = crate::wgdl::program::Env::unbound_object(self, st, Ctx { this, bound: NONE }, occ);
                    // Nothing but the from test (`board[c] == 0`): every cell that passes is a move.
                    if r.only_from() && conds.is_empty() {
                        out.reserve((hi - lo + 1) as usize);
                        out.extend(r.passing_cells(&st.slots, lo, hi + 1).map(|bound| Action { def: a, this, bound }));
                        return Ok(());
                    }
                    for bound in r.passing_cells(&st.slots, lo, hi + 1) {
                        if r.rest_hold(&st.slots, [bound; 3]) && {
                            env.rebind(bound, 0);
                            self.all_hold(&env, conds)?
                        } {
                            out.push(Action { def: a, this, bound });
                        }
                    }
                }
                None => {
                    let conds = &self.cond_fxs(a)[info.owner_conds..];
                    let mut env = crate::wgdl::program::Env::unbound_object(self, st, Ctx { this, bound: NONE }, occ);
                    for bound in lo..=hi {
                        env.rebind(bound, 0);
                        if self.all_hold(&env, conds)? {
                            out.push(Action { def: a, this, bound });
                        }
                    }
                }
            },
            BindKind::Hex if info.walk_order.is_some() && self.walk_ordered(st, info, a, this, out, occ)? => {}
            BindKind::Hex => {
                let Some(h) = &self.hex else { return Ok(()) };
                for bound in 0..h.len() as u32 {
                    if !h.wall[bound as usize] && self.conditions_hold_from(st, info, Ctx { this, bound }, info.owner_conds, occ)? {
                        out.push(Action { def: a, this, bound });
                    }
                }
            }
        }
        Ok(())
    }

    /// The moves of a `forEveryHex` action with a walk order (its owner conditions hold): cells
    /// by walk from X, the first n whose conditions hold, pushed in cell order — the moves
    /// `choose` would keep of all cells. Conditions of cells after those are not evaluated.
    /// Returns `false` (nothing done) without a hex map.
    pub(super) fn walk_ordered(
        &self,
        st: &State,
        info: &ActionInfo,
        a: ActionId,
        this: u32,
        out: &mut Vec<Action>,
        occ: Option<&OccCache>,
    ) -> Result<bool, RuntimeError> {
        let (Some(h), Some(order), Some((n, key))) = (&self.hex, &info.walk_order, info.choose) else { return Ok(false) };
        let n = n as usize;
        let owner = crate::wgdl::program::Env::with_occ(self, st, Ctx { this, bound: NONE }, occ);
        let from = self.eval_env(&owner, order.from)?;
        if from < 0 || from as usize >= h.len() {
            // What `hex.walk(X, h)` reports for every cell.
            let last = h.len().saturating_sub(1);
            return Err(rt(RtKind::OffMap { cell: from, last }, self.spans[(key.start + key.len - 1) as usize]));
        }
        let from = from as usize;
        // The operands that do not read the cell, evaluated when first needed.
        const CACHED: usize = 8;
        let mut cache: [Option<i64>; CACHED] = [None; CACHED];
        let mut once = |k: usize, e: ExprId| -> Result<i64, RuntimeError> {
            match cache.get(k).copied().flatten() {
                Some(v) => Ok(v),
                None => {
                    let v = self.eval_env(&owner, e)?;
                    if let Some(slot) = cache.get_mut(k) {
                        *slot = Some(v);
                    }
                    Ok(v)
                }
            }
        };
        let start = out.len();
        if n > 0 && order.bits && self.walk_ordered_bits(&owner, h, order, from, a, this, n, out)? {
            out[start..].sort_unstable_by_key(|m| m.bound);
            return Ok(true);
        }
        if n > 0 {
            'cells: for &c in h.by_walk(from) {
                let c = c as usize;
                for (k, cond) in order.conds.iter().enumerate() {
                    let holds = match *cond {
                        CellCond::Free => !h.wall[c] && !self.occupied(&owner, c)?,
                        CellCond::Hidden(x) => {
                            let me = once(k, x)?;
                            self.hidden(&owner, h, c, me)?
                        }
                        CellCond::WalkBound { limit, strict } => {
                            let (w, e) = (h.walk(from, c), once(k, limit)?);
                            if strict { w < e } else { w <= e }
                        }
                        CellCond::Eval(e) => {
                            let env = crate::wgdl::program::Env::with_occ(self, st, Ctx { this, bound: c as u32 }, occ);
                            self.eval_env(&env, e)? != 0
                        }
                    };
                    if !holds {
                        if order.bound == Some(info.owner_conds + k) {
                            break 'cells;
                        }
                        continue 'cells;
                    }
                }
                out.push(Action { def: a, this, bound: c as u32 });
                if out.len() - start == n {
                    break;
                }
            }
        }
        out[start..].sort_unstable_by_key(|m| m.bound);
        Ok(true)
    }

    /// [`Program::walk_ordered`] when every condition is `Free`, `Hidden` or the walk bound with
    /// operands that cannot fail ([`WalkOrder::bits`]): the operands evaluated at once, the free
    /// and hidden tests made one bit set, then the cells in walk order up to the bound or the
    /// n-th move — the moves the general loop lists (it evaluates the same operands, in a
    /// different order, and none can fail). `false` (nothing listed) without the occupancy bit
    /// sets, for a side with none, or on a map of more than 512 cells.
    #[allow(clippy::too_many_arguments)]
    fn walk_ordered_bits(
        &self,
        owner: &crate::wgdl::program::Env,
        h: &crate::wgdl::hex::HexMap,
        order: &WalkOrder,
        from: usize,
        a: ActionId,
        this: u32,
        n: usize,
        out: &mut Vec<Action>,
    ) -> Result<bool, RuntimeError> {
        const WORDS: usize = 8;
        let Some(occ) = owner.occ else { return Ok(false) };
        let words = h.words();
        if words > WORDS {
            return Ok(false);
        }
        let mut ok = [u64::MAX; WORDS];
        let mut limit = None;
        for cond in &order.conds {
            match *cond {
                CellCond::Free => {
                    for (m, o) in ok.iter_mut().zip(occ.occupied_bits()) {
                        *m &= !o;
                    }
                }
                CellCond::Hidden(x) => {
                    let Some(seen) = occ.seen_by_others(self.eval_env(owner, x)?) else { return Ok(false) };
                    for (m, s) in ok.iter_mut().zip(seen) {
                        *m &= !s;
                    }
                }
                CellCond::WalkBound { limit: e, strict } => limit = Some((self.eval_env(owner, e)?, strict)),
                CellCond::Eval(_) => return Ok(false),
            }
        }
        let start = out.len();
        for &c in h.by_walk(from) {
            let c = c as usize;
            if let Some((e, strict)) = limit {
                let w = h.walk(from, c);
                if if strict { w >= e } else { w > e } {
                    break;
                }
            }
            if ok[c / 64] >> (c % 64) & 1 == 1 {
                out.push(Action { def: a, this, bound: c as u32 });
                if out.len() - start == n {
                    break;
                }
            }
        }
        Ok(true)
    }
}
