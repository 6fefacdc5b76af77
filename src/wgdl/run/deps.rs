//! What an expression reads and what the run time writes, as a bit set of state parts: the
//! basis of re-checking only what changed. After a move, a `winner`/`draw` line or the goal
//! being pursued is evaluated again only if the move wrote a part it reads; at the previous
//! check it was false, and nothing it reads has changed since.
//!
//! The parts are coarse on purpose (a false "changed" costs one evaluation, a missed change
//! would be a wrong result): an attribute by its slot offset within objects (`this.x`, read
//! through any object), a named object's attribute by its absolute slot (`global.coins`; every
//! write to an object's slot marks the slot, which is all that such a read looks at; a write to
//! a named slot marks its attribute too), a game value store node (an increase marks the node
//! and its ancestors), the grids, the set of live objects, the clock, the sessions, the move
//! count, and the turn (actor, round, turns); each family folds onto a few bits. A built-in
//! that looks at who stands where (`hex.free`, `hex.hidden`, `hex.approach`, `hex.stepToward`)
//! reads everything.
//!
//! Rules work the same way: a pass of [`Program::fire_rules`](crate::wgdl::program) that fires nothing
//! leaves every rule false, so until then only a rule that reads a part written since is
//! evaluated; the others are still false.
//!
//! Writes are marked where they happen ([`State::dirty`]): each consequence's static mask, object
//! creation and deletion, the clock, sessions, moves and turns. Code that writes a state's slots
//! directly (tests) must call [`State::touch`].

use crate::wgdl::parts::*;
use crate::wgdl::program::*;

impl State {
    /// Marks every part of the state as changed: call after writing `slots` (or any other field)
    /// directly, so that the next move re-checks every outcome and goal.
    pub fn touch(&mut self) {
        self.dirty = Dirty { checks: ALL, rules: ALL };
    }
}

impl Program {
    /// The parts of a state expression `e` reads.
    pub(in crate::wgdl) fn reads(&self, e: ExprId) -> Parts {
        let mut mask = 0;
        let code = &self.code[e.start as usize..(e.start + e.len) as usize];
        for (i, op) in code.iter().enumerate() {
            mask |= match *op {
                Op::This(o) | Op::Bound(o) => attr(o),
                // A named object's attribute (`global.coins` where objects can be deleted): its
                // slot.
                Op::Field(o)
                    if i > 0
                        && let Op::Const(id) = code[i - 1]
                        && let Some(base) = self.initial_base(id) =>
                {
                    slot(base + o as usize) | GONE
                }
                Op::Field(o) => attr(o) | GONE,
                Op::FieldConst(_) | Op::NameOf => GONE,
                // Every write to an object's slot marks the slot's bit (`slot`): an initial
                // object's attribute read by its absolute slot needs no more than that.
                Op::Slot(s) => match self.slot_part(s as usize) {
                    STORE | GRID | ALL => self.slot_part(s as usize),
                    _ => slot(s as usize),
                },
                Op::StoreOwn(n) | Op::StoreSum(n) => store(n),
                Op::Time => CLOCK,
                Op::SessionTime => CLOCK | SESSIONS,
                Op::Sessions => SESSIONS,
                Op::Moves => MOVES,
                Op::Actor | Op::Round | Op::Turns | Op::ToMove => TURN,
                Op::Load | Op::GridIndex(_) | Op::GridCell(_) => GRID,
                Op::Agg(a) => OBJECTS | self.reads(self.aggs[a as usize].expr),
                Op::GridSumRuns(_, a) => GRID | self.reads(self.aggs[a as usize].expr),
                // What the built-in reads besides its arguments (its row of the table).
                Op::Call(b, ..) => b.spec().reads,
                _ => 0,
            };
        }
        mask
    }

    /// The first slot of initial object `id` (objects are numbered from the initial ones, in
    /// file order), if there is such an object.
    fn initial_base(&self, id: i64) -> Option<usize> {
        if id < 0 || id as usize >= self.initial.len() {
            return None;
        }
        let store_slots = 2 * self.n_store_nodes() + self.grid_slots as usize;
        Some(store_slots + if id == 0 { 0 } else { self.initial_ends[id as usize - 1] })
    }

    /// The part of absolute slot `s` as the program lays slots out: the store, the grids, or
    /// an attribute of an initial object (its offset and its slot; objects made later lie beyond
    /// them, and their slots are never named by an absolute slot).
    pub(in crate::wgdl) fn slot_part(&self, s: usize) -> Parts {
        let store_slots = 2 * self.n_store_nodes();
        if s < store_slots {
            return STORE;
        }
        let base = store_slots + self.grid_slots as usize;
        if s < base {
            return GRID;
        }
        // The first initial object whose slots end past `s` holds it (a binary search).
        let rel = s - base;
        let k = self.initial_ends.partition_point(|&end| end <= rel);
        match self.initial_ends.get(k) {
            Some(_) => {
                let start = if k == 0 { 0 } else { self.initial_ends[k - 1] };
                attr((rel - start) as u32) | slot(s)
            }
            None => ALL,
        }
    }

    /// The parts consequence `c` writes that are known before it runs (what it runs in turn
    /// marks its own; the slot written through an object and the store nodes increased are
    /// marked when they are known).
    pub(in crate::wgdl) fn writes(&self, c: ConsId) -> Parts {
        let place = |p: &Place| match *p {
            Place::Slot(s) => self.slot_part(s as usize),
            Place::This(o) | Place::Bound(o) | Place::Field(_, o) => attr(o),
            Place::Dyn(_) => GRID,
        };
        match &self.conses[c as usize].code {
            Cons::Assign { place: p, .. } => place(p),
            Cons::Create { assign, .. } => BORN | assign.as_ref().map_or(0, place),
            Cons::GameIncrease { .. } => 0,
            Cons::Delete { .. } => GONE,
            Cons::Tile { .. } => GRID,
            Cons::Conditional { .. } | Cons::Timed { .. } | Cons::EndSession | Cons::EndTurn => 0,
        }
    }
}

impl Program {
    /// A goal or outcome line that holds in `st` but was not recorded — the goal being pursued,
    /// or any `winner`/`draw` line while no outcome is recorded — or a rule that holds although
    /// the next firing would skip it, as its text; `None` when the state is settled as a full
    /// check would leave it. For the test that holds re-checking only what changed to checking
    /// everything.
    pub fn missed_check(&self, st: &State) -> Result<Option<String>, RuntimeError> {
        let ctx = Ctx { this: NONE, bound: NONE };
        if let Some(g) = self.goals.get(st.goal as usize)
            && self.eval(st, g.expr, ctx)? != 0
        {
            return Ok(Some(format!("goal {}: {}", g.k, g.text)));
        }
        if st.outcome == 0 {
            for o in &self.outcomes {
                if self.eval(st, o.expr, ctx)? != 0 {
                    return Ok(Some(o.text.clone()));
                }
            }
        }
        // A rule the next firing would skip must be false.
        for &r in &self.rules {
            let a = &self.actions[r as usize];
            if a.reads & st.dirty.rules == 0 && self.conditions_hold(st, a, ctx)? {
                return Ok(Some(format!("rule `{}`", a.name)));
            }
        }
        Ok(None)
    }
}
