//! Closure compilation: the run-time form of the bytecode. Each compiled expression
//! ([`ExprId`], a range of [`Program::code`]) is decompiled once into a small tree and lowered to
//! a tree of closures that read the state directly — no operand stack, no dispatch loop, and the
//! common shapes (`this.x < 5`, `height[col, 0] < 6`, `a == b`) specialised into one closure with
//! its operands inline, made for the operands' kinds (`spec.rs`). [`Program::eval`] runs these;
//! the bytecode stays the program's canonical form (golden dumps, lints, analyses) and [`Program::eval_bytecode`] still interprets it, so
//! that a test can hold the two to the same answers on every expression of every shipped game.
//!
//! What the closures are, the environment they read and the program's cache of them are
//! defined beside the program (`program/closures.rs`), this room's code builds and runs them,
//! and `run/tier.rs` decides per expression between a closure and generated code.
//!
//! Closures are built lazily, the first time an expression is evaluated, and cached per start
//! index (`Program::fast`): any `ExprId`, however it was made, gets one. The cache assumes that
//! no two expressions start at the same index (a sub-expression that is evaluated on its own
//! gets its own copy of the code, as `WalkOrder::from` does), and that code at an index never
//! changes once it has been evaluated: code is only ever appended after compilation
//! ([`Program::with_profile`](crate::wgdl::probe)), and appended code gets fresh slots.
//!
//! Two facts known before running are used when lowering. Where `this` or the bound object is
//! surely live ([`Program::live_flags`] for conditions and the like, `live_cons_flags` for
//! consequences: up to the first one that may delete), `this.x` reads and writes its slot
//! without the liveness check the bytecode makes. And a conditional consequence that reads only
//! class constants of `this` is decided once per god of `this` (its *plan*); changing the
//! parameters (`with_parameters`) forgets the plans. `check.rs` holds both to the generic path.
//!
//! Rejected: a peephole-fused bytecode. It removes some dispatches but keeps the stack traffic and
//! the per-evaluation set-up (a 32-slot stack, a large result); closures remove both, and a
//! specialised leaf costs a load, not a loop turn. Also rejected: comparisons read inline (an
//! operand matching on the operator and on both sides at run time) inside `&&`/`||` chains and
//! conditional consequences — measured 1.3–1.6 % more instructions than a closure of their own,
//! specialised for its operand shapes when it is built.

use crate::wgdl::program::*;
use std::sync::OnceLock;

mod check;
mod lower;
mod operand;
mod spec;
mod tree;

pub(in crate::wgdl) use lower::lower;
use lower::*;
#[cfg(test)]
pub(in crate::wgdl) use operand::line_fn;
use spec::{Get, by_kind_wide};
use tree::*;
pub(in crate::wgdl) use tree::{Leaf, T};

impl Program {
    /// Evaluates one compiled expression (through its closure, built on first use).
    #[inline]
    pub(in crate::wgdl) fn eval(&self, st: &State, e: ExprId, ctx: Ctx) -> Result<i64, RuntimeError> {
        let env = Env::new(self, st, ctx);
        self.eval_env(&env, e)
    }

    /// [`Program::eval`] with an environment already made (several conditions of one binding).
    #[inline]
    pub(in crate::wgdl) fn eval_env(&self, env: &Env, e: ExprId) -> Result<i64, RuntimeError> {
        match self.fast.slots.get(e.start as usize) {
            Some(slot) => slot.get_or_init(|| self.lower_expr(e))(env),
            None => self.eval_bytecode(env.st, e, Ctx { this: env.this, bound: env.bound }),
        }
    }

    /// Expression `e` as a function of an environment, its closure fetched once: for loops that
    /// evaluate one expression for many objects.
    #[inline]
    pub(in crate::wgdl) fn evaluator(&self, e: ExprId) -> impl Fn(&Env) -> Result<i64, RuntimeError> + '_ {
        let f = self.fast.slots.get(e.start as usize).map(|slot| slot.get_or_init(|| self.lower_expr(e)));
        move |env: &Env| match f {
            Some(f) => f(env),
            None => self.eval_bytecode(env.st, e, Ctx { this: env.this, bound: env.bound }),
        }
    }

    /// Expression `e`'s tree as its closure is built from (live reads where the owner or the
    /// binding is surely live): what `run/tier.rs` lowers, and the compiled tier's lister
    /// generates conditions from.
    pub(in crate::wgdl) fn live_tree(&self, e: ExprId) -> T {
        let live = self.fast.live.get_or_init(|| self.live_flags()).get(e.start as usize).copied().unwrap_or(0);
        assume_live(self.tree(e), live & LIVE_THIS != 0, live & LIVE_BOUND != 0)
    }

    /// Which expressions run only with `this` or the bound object live, so that their checked
    /// reads of its attributes (`this.hp` in a game with `delete` compiles to `ThisObj, Field`,
    /// which fails on a deleted object) can read the slot directly: an action's conditions
    /// and `choose` key, its walk order's operands and its policy tiers (moves are listed, and
    /// hooks run, only for live owners and live bound instances), the turn and occupant
    /// conditions (evaluated for live objects), and a `countOf`/`sumOf` expression (its bound
    /// object is each live object counted; not one summed over grid runs, whose bound is a
    /// run's length). A consequence is not among them: an earlier one may delete `this`.
    fn live_flags(&self) -> Box<[u8]> {
        let mut live = vec![0u8; self.code.len()];
        let mut mark = |e: ExprId, f: u8| {
            if let Some(x) = live.get_mut(e.start as usize) {
                *x |= f;
            }
        };
        let of_action = |a: &ActionInfo| {
            (if a.class.is_some() { LIVE_THIS } else { 0 }) | (if matches!(a.bind, BindKind::Instance(_)) { LIVE_BOUND } else { 0 })
        };
        for a in &self.actions {
            let f = of_action(a);
            a.conditions.iter().for_each(|&c| mark(c, f));
            if let Some((_, k)) = a.choose {
                mark(k, f);
            }
            if let Some(w) = &a.walk_order {
                mark(w.from, f);
                for c in &w.conds {
                    match *c {
                        CellCond::Hidden(x) | CellCond::WalkBound { limit: x, .. } | CellCond::Eval(x) => mark(x, f),
                        CellCond::Free => {}
                    }
                }
            }
        }
        for t in self.policies.iter().flat_map(|p| &p.tiers) {
            let f = of_action(&self.actions[t.action as usize]);
            if let Some(c) = t.cond {
                mark(c, f);
            }
            if let PickCode::Weight(e, _) | PickCode::Max(e, _) = t.pick {
                mark(e, f);
            }
        }
        if let Some(c) = self.turn.as_ref().and_then(|t| t.cond) {
            mark(c, LIVE_THIS);
        }
        if let Some(c) = self.occupants.as_ref().and_then(|o| o.cond) {
            mark(c, LIVE_THIS);
        }
        let over_runs: Vec<u16> = self.code.iter().filter_map(|op| if let Op::GridSumRuns(_, a) = op { Some(*a) } else { None }).collect();
        for (i, agg) in self.aggs.iter().enumerate() {
            if !over_runs.contains(&(i as u16)) && agg.cells.is_none() {
                mark(agg.expr, LIVE_BOUND);
            }
        }
        live.into()
    }

    fn tree(&self, e: ExprId) -> T {
        let code = &self.code[e.start as usize..(e.start + e.len) as usize];
        let mut stack = Vec::new();
        decompile(code, e.start as usize, &mut stack);
        debug_assert_eq!(stack.len(), 1, "an expression leaves one value");
        stack.pop().expect("an expression leaves one value")
    }

    /// The closures of action `a`'s conditions, in order (built on first use).
    #[inline]
    pub(in crate::wgdl) fn cond_fxs(&self, a: ActionId) -> &[Fx] {
        match self.fast.conds.get(a as usize) {
            Some(slot) => slot.get_or_init(|| self.actions[a as usize].conditions.iter().map(|&c| self.fx(c)).collect()),
            None => &[],
        }
    }

    /// Runs action `a`'s consequences in attachment order (their closures fetched once).
    #[inline]
    pub(in crate::wgdl) fn run_consequences(&self, st: &mut State, a: ActionId, ctx: Ctx, depth: u32) -> Result<(), RuntimeError> {
        let Some(slot) = self.fast.effects.get(a as usize) else {
            for &c in &self.actions[a as usize].consequences {
                self.exec(st, c, ctx, depth)?;
            }
            return Ok(());
        };
        let effects = slot.get_or_init(|| self.actions[a as usize].consequences.iter().map(|&c| self.cx(c)).collect());
        let frame = Frame::new(st, ctx);
        let effects = match self.fast.plans.get(a as usize).and_then(|p| p.get_or_init(|| self.plans_for(a)).as_deref()) {
            Some(per_god) => match per_god.get(frame.this_god as usize) {
                Some(plan) => plan.get_or_init(|| self.plan(a, st, &frame)),
                None => effects,
            },
            None => effects,
        };
        for f in effects.iter() {
            f(self, st, &frame, depth)?;
        }
        Ok(())
    }

    /// Room for a plan per god when one of action `a`'s consequences is a conditional decided
    /// by `this`'s class constants alone (see [`Program::plan`]); `None` when there is none.
    fn plans_for(&self, a: ActionId) -> Option<Box<[OnceLock<Box<[Cx]>>]>> {
        let foldable = |c: ConsId| match &self.conses[c as usize].code {
            Cons::Conditional { cond, .. } => consts_only(&self.tree(*cond)),
            _ => false,
        };
        self.actions[a as usize]
            .consequences
            .iter()
            .any(|&c| foldable(c))
            .then(|| (0..self.gods.len().max(1)).map(|_| OnceLock::new()).collect())
    }

    /// Action `a`'s consequences for `this` of the god in `f`: a conditional whose condition
    /// reads only class constants of `this` and literals has the same value every time this god
    /// runs the action, so it is decided once — dropped when false, replaced by its consequence
    /// when true (the same closures run, in the same order, writing and marking the same; a
    /// false conditional writes and marks nothing). A condition that fails (overflow, division
    /// by zero) stays a conditional, to fail at run time as before.
    fn plan(&self, a: ActionId, st: &State, f: &Frame) -> Box<[Cx]> {
        let env = Env::of_frame(self, st, f);
        let mut out = Vec::new();
        for &c in &self.actions[a as usize].consequences {
            self.decide_into(c, &env, &mut out);
        }
        out.into()
    }

    fn decide_into(&self, c: ConsId, env: &Env, out: &mut Vec<Cx>) {
        if let Cons::Conditional { cond, then } = &self.conses[c as usize].code
            && consts_only(&self.tree(*cond))
            && let Ok(v) = self.eval_env(env, *cond)
        {
            if v != 0 {
                for &t in then {
                    self.decide_into(t, env, out);
                }
            }
            return;
        }
        out.push(self.cx(c));
    }

    /// The closure of consequence `c` (built on first use).
    fn cx(&self, c: ConsId) -> Cx {
        match self.fast.conses.get(c as usize) {
            Some(slot) => slot.get_or_init(|| self.lower_cons(c)).clone(),
            None => self.lower_cons(c),
        }
    }

    /// The closure of expression `e` (built on first use).
    fn fx(&self, e: ExprId) -> Fx {
        match self.fast.slots.get(e.start as usize) {
            Some(slot) => slot.get_or_init(|| self.lower_expr(e)).clone(),
            None => self.lower_expr(e),
        }
    }

    /// Runs consequence `c` (through its closure, built on first use).
    #[inline]
    pub(in crate::wgdl) fn exec(&self, st: &mut State, c: ConsId, ctx: Ctx, depth: u32) -> Result<(), RuntimeError> {
        self.exec_frame(st, c, &Frame::new(st, ctx), depth)
    }

    /// [`Program::exec`] with the bases looked up already.
    #[inline]
    fn exec_frame(&self, st: &mut State, c: ConsId, frame: &Frame, depth: u32) -> Result<(), RuntimeError> {
        let ctx = frame.ctx;
        match self.fast.conses.get(c as usize) {
            Some(slot) => slot.get_or_init(|| self.lower_cons(c))(self, st, frame, depth),
            None => {
                st.dirty.mark(self.writes(c));
                self.exec_generic(st, c, ctx, depth)
            }
        }
    }

    /// For each consequence, whether `this` (`LIVE_THIS`) or the bound object (`LIVE_BOUND`)
    /// is surely live whenever it runs. A move, a hook or a rule starts with both live (moves
    /// are applied as listed, hooks run for live objects), and they stay so until a consequence
    /// that may delete: a `delete`, a conditional one, or a `create` when some `create:` hook
    /// deletes. So a consequence gets its action's flags when nothing before it in the action's
    /// list may delete, in every list it is in (one run later by a timer gets none).
    fn live_cons_flags(&self) -> Box<[u8]> {
        // Whether running `c` may at once run a consequence that `hit` picks: `c` itself or,
        // through conditionals, any of their targets (a cycle runs nothing but the runaway
        // error; the compiler refuses one anyway). A timer's target runs later, not at once.
        let runs_now = |c: ConsId, hit: &dyn Fn(&Cons) -> bool| {
            let mut seen = vec![false; self.conses.len()];
            let mut todo = vec![c];
            while let Some(c) = todo.pop() {
                if std::mem::replace(&mut seen[c as usize], true) {
                    continue;
                }
                match &self.conses[c as usize].code {
                    Cons::Conditional { then, .. } => todo.extend(then),
                    code if hit(code) => return true,
                    _ => {}
                }
            }
            false
        };
        let hooks_delete = self
            .actions
            .iter()
            .filter(|a| a.kind == ActionKind::OnCreate)
            .flat_map(|a| &a.consequences)
            .any(|&c| runs_now(c, &|code| matches!(code, Cons::Delete { .. })));
        let may_delete = |c: ConsId| {
            runs_now(c, &|code| match code {
                Cons::Delete { .. } => true,
                Cons::Create { .. } => hooks_delete,
                _ => false,
            })
        };
        // 0xff: not met yet; every meeting keeps the flags it allows.
        let mut flags = vec![0xffu8; self.conses.len()];
        for a in &self.actions {
            let mut f =
                (if a.class.is_some() { LIVE_THIS } else { 0 }) | (if matches!(a.bind, BindKind::Instance(_)) { LIVE_BOUND } else { 0 });
            for &c in &a.consequences {
                let mut todo = vec![(c, f)];
                while let Some((c, f)) = todo.pop() {
                    // Flags only lose bits: a consequence is walked again only when it lost some.
                    let had = flags[c as usize];
                    flags[c as usize] &= f;
                    if flags[c as usize] == had {
                        continue;
                    }
                    match &self.conses[c as usize].code {
                        Cons::Conditional { then, .. } => {
                            // The targets run in order: one after a target that may delete
                            // gets no flags.
                            let mut f = f;
                            for &t in then {
                                todo.push((t, f));
                                if may_delete(t) {
                                    f = 0;
                                }
                            }
                        }
                        Cons::Timed { then, .. } => todo.push((*then, 0)),
                        _ => {}
                    }
                }
                if may_delete(c) {
                    f = 0;
                }
            }
        }
        flags.iter().map(|&f| if f == 0xff { 0 } else { f }).collect()
    }

    /// The closure of consequence `c`: assignments (to a slot, an attribute of `this`, of the
    /// bound object or through an object path, a grid cell) and conditionals with their
    /// operands inline; the other kinds run [`Program::exec_generic`].
    fn lower_cons(&self, c: ConsId) -> Cx {
        // What it writes is marked first (`crate::wgdl::deps`): an error leaves the state unusable.
        let w = self.writes(c);
        let live = self.fast.live_conses.get_or_init(|| self.live_cons_flags()).get(c as usize).copied().unwrap_or(0);
        let tree = |e: ExprId| assume_live(self.tree(e), live & LIVE_THIS != 0, live & LIVE_BOUND != 0);
        let generic = move || -> Cx {
            cx_of(move |p: &Program, st: &mut State, f: &Frame, depth: u32| {
                st.dirty.mark(w);
                p.exec_generic(st, c, f.ctx, depth)
            })
        };
        match &self.conses[c as usize].code {
            Cons::Assign { place, value } => {
                let v = operand(tree(*value));
                // A checked write to a live `this` or bound object writes its slot.
                let place = match *place {
                    Place::Field(e, o) => match tree(e) {
                        T::Leaf(Leaf::ThisObj) if live & LIVE_THIS != 0 => Place::This(o),
                        T::Leaf(Leaf::BoundObj) if live & LIVE_BOUND != 0 => Place::Bound(o),
                        _ => Place::Field(e, o),
                    },
                    p => p,
                };
                // Each closure is built for the value's kind ([`spec`]): read without a kind test.
                match place {
                    Place::Slot(s) => by_kind_wide!(v, |gv| cx_of(move |p: &Program, st: &mut State, f: &Frame, _: u32| {
                        st.dirty.mark(w);
                        let x = gv.get(&Env::of_frame(p, st, f))?;
                        st.slots[s as usize] = x;
                        Ok(())
                    })),
                    Place::This(o) => by_kind_wide!(v, |gv| cx_of(move |p: &Program, st: &mut State, f: &Frame, _: u32| {
                        let x = gv.get(&Env::of_frame(p, st, f))?;
                        let base = f.this_base;
                        let idx = (base + o) as usize;
                        st.dirty.mark(w | crate::wgdl::parts::slot(idx));
                        st.slots[idx] = x;
                        Ok(())
                    })),
                    Place::Bound(o) => by_kind_wide!(v, |gv| cx_of(move |p: &Program, st: &mut State, f: &Frame, _: u32| {
                        let x = gv.get(&Env::of_frame(p, st, f))?;
                        let base = f.bound_base;
                        let idx = (base + o) as usize;
                        st.dirty.mark(w | crate::wgdl::parts::slot(idx));
                        st.slots[idx] = x;
                        Ok(())
                    })),
                    Place::Dyn(e) => match self.tree(e) {
                        // `<grid>[x, y] = …` with leaf coordinates.
                        T::Bin(Op::GridCell(g), x, y, at) if matches!((&*x, &*y), (T::Leaf(_), T::Leaf(_))) => {
                            let (T::Leaf(x), T::Leaf(y)) = (*x, *y) else { unreachable!("matched above") };
                            cx_of(move |p: &Program, st: &mut State, f: &Frame, _: u32| {
                                st.dirty.mark(w);
                                let (val, idx) = {
                                    let env = Env::of_frame(p, st, f);
                                    let val = v.get(&env)?;
                                    (val, p.grid_index(g, x.get(&env), y.get(&env), at)?)
                                };
                                st.slots[idx] = val;
                                Ok(())
                            })
                        }
                        _ => generic(),
                    },
                    // `path.attr = …` through an object path (`this.owner.ap`): the value, then
                    // the object (its error second, as the generic order has it), then the write.
                    Place::Field(e, o) => match obj(&tree(e)) {
                        Some(target) => {
                            let at = (e.start + e.len - 1) as usize;
                            cx_of(move |p: &Program, st: &mut State, f: &Frame, _: u32| {
                                st.dirty.mark(w);
                                let (x, idx) = {
                                    let env = Env::of_frame(p, st, f);
                                    let x = v.get(&env)?;
                                    let id = target.get(&env)?;
                                    (x, (p.deref(st, id, at)?.base + o) as usize)
                                };
                                st.dirty.mark(crate::wgdl::parts::slot(idx));
                                st.slots[idx] = x;
                                Ok(())
                            })
                        }
                        None => generic(),
                    },
                }
            }
            // The flags alone (the generic path's entry costs more than they do).
            Cons::EndTurn => cx_of(|_: &Program, st: &mut State, _: &Frame, _: u32| {
                st.end_turn = true;
                Ok(())
            }),
            Cons::EndSession => cx_of(|_: &Program, st: &mut State, _: &Frame, _: u32| {
                st.end_session = true;
                Ok(())
            }),
            Cons::Conditional { cond, then } => {
                let cond = operand(tree(*cond));
                match then[..] {
                    [one] => cx_of(move |p: &Program, st: &mut State, f: &Frame, depth: u32| {
                        if cond.get(&Env::of_frame(p, st, f))? != 0 {
                            p.exec_frame(st, one, f, depth)?;
                        }
                        Ok(())
                    }),
                    _ => {
                        let then: Box<[ConsId]> = then.as_slice().into();
                        cx_of(move |p: &Program, st: &mut State, f: &Frame, depth: u32| {
                            if cond.get(&Env::of_frame(p, st, f))? != 0 {
                                for &t in then.iter() {
                                    p.exec_frame(st, t, f, depth)?;
                                }
                            }
                            Ok(())
                        })
                    }
                }
            }
            _ => generic(),
        }
    }
}
