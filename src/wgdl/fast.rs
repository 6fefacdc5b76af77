//! Closure compilation: the run-time form of the bytecode. Each compiled expression
//! ([`ExprId`], a range of [`Program::code`]) is decompiled once into a small tree and lowered to
//! a tree of closures that read the state directly — no operand stack, no dispatch loop, and the
//! common shapes (`this.x < 5`, `height[col, 0] < 6`, `a == b`) specialised into one closure with
//! its operands inline. [`Program::eval`] runs these; the bytecode stays the program's canonical
//! form (golden dumps, lints, analyses) and [`Program::eval_bytecode`] still interprets it, so
//! that a test can hold the two to the same answers on every expression of every shipped game.
//!
//! Closures are built lazily, the first time an expression is evaluated, and cached per start
//! index (`Program::fast`): any `ExprId`, however it was made, gets one. The cache assumes that
//! no two expressions start at the same index (a sub-expression that is evaluated on its own
//! gets its own copy of the code, as `WalkOrder::from` does), and that code at an index never
//! changes once it has been evaluated: code is only ever appended after compilation
//! ([`Program::with_profile`](super::probe)), and appended code gets fresh slots.
//!
//! Rejected: a peephole-fused bytecode. It removes some dispatches but keeps the stack traffic and
//! the per-evaluation set-up (a 32-slot stack, a large result); closures remove both, and a
//! specialised leaf costs a load, not a loop turn. Also rejected: comparisons read inline (an
//! operand matching on the operator and on both sides at run time) inside `&&`/`||` chains and
//! conditional consequences — measured 1.3–1.6 % more instructions than a closure of their own,
//! specialised for its operand shapes when it is built.

use super::program::*;
use super::turns::OccCache;
use std::sync::{Arc, OnceLock};

/// What an evaluation reads besides the state: the program, and whose action is running, with
/// the slot bases of `this` and of the bound object looked up once.
pub(super) struct Env<'a> {
    pub p: &'a Program,
    pub st: &'a State,
    pub this: u32,
    pub bound: u32,
    this_base: u32,
    bound_base: u32,
    /// The occupants, listed once, during move generation (`None`: hex built-ins scan).
    pub occ: Option<&'a OccCache>,
}

impl<'a> Env<'a> {
    /// The first slot of `this` / of the bound object (0 when there is none).
    #[inline]
    pub(super) fn this_base(&self) -> u32 {
        self.this_base
    }
    #[inline]
    pub(super) fn bound_base(&self) -> u32 {
        self.bound_base
    }

    #[inline]
    pub(super) fn new(p: &'a Program, st: &'a State, ctx: Ctx) -> Env<'a> {
        Env::with_occ(p, st, ctx, None)
    }

    /// The same environment for another binding (`bound_base`: its object's first slot, or 0).
    #[inline(always)]
    pub(super) fn rebind(&mut self, bound: u32, bound_base: u32) {
        self.bound = bound;
        self.bound_base = bound_base;
    }

    /// The same environment for another owner (`this_base`: its first slot).
    #[inline(always)]
    pub(super) fn rebind_this(&mut self, this: u32, this_base: u32) {
        self.this = this;
        self.this_base = this_base;
    }

    /// For a binding that is not an object (a number, a cell, a description): no bound base.
    #[inline]
    pub(super) fn unbound_object(p: &'a Program, st: &'a State, ctx: Ctx, occ: Option<&'a OccCache>) -> Env<'a> {
        let this_base = st.objects.get(ctx.this as usize).map_or(0, |o| o.base);
        Env { p, st, this: ctx.this, bound: ctx.bound, this_base, bound_base: 0, occ }
    }

    #[inline]
    pub(super) fn with_occ(p: &'a Program, st: &'a State, ctx: Ctx, occ: Option<&'a OccCache>) -> Env<'a> {
        let base = |i: u32| st.objects.get(i as usize).map_or(0, |o| o.base);
        Env { p, st, this: ctx.this, bound: ctx.bound, this_base: base(ctx.this), bound_base: base(ctx.bound), occ }
    }
}

/// A compiled expression.
pub(super) type Fx = Arc<dyn Fn(&Env) -> Result<i64, RuntimeError> + Send + Sync>;

/// The lazily built closures of a program, one slot per code index (only expression starts are
/// ever filled).
#[derive(Default)]
pub struct FastCode {
    slots: Vec<OnceLock<Fx>>,
    /// One per consequence ([`Program::conses`]).
    conses: Vec<OnceLock<Cx>>,
    /// One per action: its conditions' closures, in order (fetched once per move generation
    /// and owner instead of once per evaluation).
    conds: Vec<OnceLock<Box<[Fx]>>>,
    /// One per action: its consequences' closures, in attachment order.
    effects: Vec<OnceLock<Box<[Cx]>>>,
}

/// A compiled consequence: runs it on the state (`depth` counts nested `create:` hooks).
pub(super) type Cx = Arc<dyn Fn(&Program, &mut State, Ctx, u32) -> Result<(), RuntimeError> + Send + Sync>;

impl Clone for FastCode {
    fn clone(&self) -> FastCode {
        FastCode { slots: self.slots.clone(), conses: self.conses.clone(), conds: self.conds.clone(), effects: self.effects.clone() }
    }
}

impl std::fmt::Debug for FastCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let built = self.slots.iter().filter(|s| s.get().is_some()).count();
        write!(f, "FastCode {{ {built} of {} built }}", self.slots.len())
    }
}

impl FastCode {
    /// Room for code indices `0..n` (keeps closures already built below `n`).
    pub fn resize(&mut self, n: usize) {
        self.slots.resize_with(n, OnceLock::new);
    }
    /// Room for consequences `0..n`.
    pub fn resize_conses(&mut self, n: usize) {
        self.conses.resize_with(n, OnceLock::new);
    }
    /// Room for actions `0..n`.
    pub fn resize_actions(&mut self, n: usize) {
        self.conds.resize_with(n, OnceLock::new);
        self.effects.resize_with(n, OnceLock::new);
    }
}

impl Program {
    /// Evaluates one compiled expression (through its closure, built on first use).
    #[inline]
    pub(super) fn eval(&self, st: &State, e: ExprId, ctx: Ctx) -> Result<i64, RuntimeError> {
        let env = Env::new(self, st, ctx);
        self.eval_env(&env, e)
    }

    /// [`Program::eval`] with an environment already made (several conditions of one binding).
    #[inline]
    pub(super) fn eval_env(&self, env: &Env, e: ExprId) -> Result<i64, RuntimeError> {
        match self.fast.slots.get(e.start as usize) {
            Some(slot) => slot.get_or_init(|| self.lower_expr(e))(env),
            None => self.eval_bytecode(env.st, e, Ctx { this: env.this, bound: env.bound }),
        }
    }

    fn lower_expr(&self, e: ExprId) -> Fx {
        lower(self.tree(e))
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
    pub(super) fn cond_fxs(&self, a: ActionId) -> &[Fx] {
        match self.fast.conds.get(a as usize) {
            Some(slot) => slot.get_or_init(|| self.actions[a as usize].conditions.iter().map(|&c| self.fx(c)).collect()),
            None => &[],
        }
    }

    /// Runs action `a`'s consequences in attachment order (their closures fetched once).
    #[inline]
    pub(super) fn run_consequences(&self, st: &mut State, a: ActionId, ctx: Ctx, depth: u32) -> Result<(), RuntimeError> {
        let Some(slot) = self.fast.effects.get(a as usize) else {
            for &c in &self.actions[a as usize].consequences {
                self.exec(st, c, ctx, depth)?;
            }
            return Ok(());
        };
        let effects = slot.get_or_init(|| self.actions[a as usize].consequences.iter().map(|&c| self.cx(c)).collect());
        for f in effects.iter() {
            f(self, st, ctx, depth)?;
        }
        Ok(())
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
    pub(super) fn exec(&self, st: &mut State, c: ConsId, ctx: Ctx, depth: u32) -> Result<(), RuntimeError> {
        match self.fast.conses.get(c as usize) {
            Some(slot) => slot.get_or_init(|| self.lower_cons(c))(self, st, ctx, depth),
            None => {
                st.dirty.mark(self.writes(c));
                self.exec_generic(st, c, ctx, depth)
            }
        }
    }

    /// The closure of consequence `c`: assignments (to a slot, an attribute of `this`, of the
    /// bound object or through an object path, a grid cell) and conditionals with their
    /// operands inline; the other kinds run [`Program::exec_generic`].
    fn lower_cons(&self, c: ConsId) -> Cx {
        // What it writes is marked first (`super::deps`): an error leaves the state unusable.
        let w = self.writes(c);
        let generic = move || -> Cx {
            Arc::new(move |p: &Program, st: &mut State, ctx: Ctx, depth: u32| {
                st.dirty.mark(w);
                p.exec_generic(st, c, ctx, depth)
            })
        };
        match &self.conses[c as usize].code {
            Cons::Assign { place, value } => {
                let v = operand(self.tree(*value));
                match *place {
                    Place::Slot(s) => Arc::new(move |p, st, ctx, _| {
                        st.dirty.mark(w);
                        let x = v.get(&Env::new(p, st, ctx))?;
                        st.slots[s as usize] = x;
                        Ok(())
                    }),
                    Place::This(o) => Arc::new(move |p, st, ctx, _| {
                        let (x, base) = {
                            let env = Env::new(p, st, ctx);
                            (v.get(&env)?, env.this_base)
                        };
                        let idx = (base + o) as usize;
                        st.dirty.mark(w | super::deps::slot(idx));
                        st.slots[idx] = x;
                        Ok(())
                    }),
                    Place::Bound(o) => Arc::new(move |p, st, ctx, _| {
                        let (x, base) = {
                            let env = Env::new(p, st, ctx);
                            (v.get(&env)?, env.bound_base)
                        };
                        let idx = (base + o) as usize;
                        st.dirty.mark(w | super::deps::slot(idx));
                        st.slots[idx] = x;
                        Ok(())
                    }),
                    Place::Dyn(e) => match self.tree(e) {
                        // `<grid>[x, y] = …` with leaf coordinates.
                        T::Bin(Op::GridCell(g), x, y, at) if matches!((&*x, &*y), (T::Leaf(_), T::Leaf(_))) => {
                            let (T::Leaf(x), T::Leaf(y)) = (*x, *y) else { unreachable!("matched above") };
                            Arc::new(move |p, st, ctx, _| {
                                st.dirty.mark(w);
                                let (val, idx) = {
                                    let env = Env::new(p, st, ctx);
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
                    Place::Field(e, o) => match obj(&self.tree(e)) {
                        Some(target) => {
                            let at = (e.start + e.len - 1) as usize;
                            Arc::new(move |p, st, ctx, _| {
                                st.dirty.mark(w);
                                let (x, idx) = {
                                    let env = Env::new(p, st, ctx);
                                    let x = v.get(&env)?;
                                    let id = target.get(&env)?;
                                    (x, (p.deref(st, id, at)?.base + o) as usize)
                                };
                                st.dirty.mark(super::deps::slot(idx));
                                st.slots[idx] = x;
                                Ok(())
                            })
                        }
                        None => generic(),
                    },
                }
            }
            Cons::Conditional { cond, then } => {
                let (cond, then) = (operand(self.tree(*cond)), *then);
                Arc::new(move |p, st, ctx, depth| {
                    if cond.get(&Env::new(p, st, ctx))? != 0 {
                        p.exec(st, then, ctx, depth)?;
                    }
                    Ok(())
                })
            }
            _ => generic(),
        }
    }
}

// ------------------------------------------------------------------------------------- trees

/// A value that needs no computation and cannot fail: read it inline.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Leaf {
    Const(i64),
    Slot(u32),
    This(u32),
    Bound(u32),
    ThisConst(u32),
    BoundConst(u32),
    GodInit(u32),
    GodConst(u32),
    NamedConst(GodId, u32),
    ThisObj,
    BoundObj,
    GodName,
    StoreOwn(u32),
    StoreSum(u32),
    Time,
    SessionTime,
    Sessions,
    Moves,
    Actor,
    Round,
    Turns,
    ToMove,
}

impl Leaf {
    #[inline(always)]
    fn get(self, e: &Env) -> i64 {
        let st = e.st;
        match self {
            Leaf::Const(v) => v,
            Leaf::Slot(s) => st.slots[s as usize],
            Leaf::This(o) => st.slots[(e.this_base + o) as usize],
            Leaf::Bound(o) => st.slots[(e.bound_base + o) as usize],
            Leaf::ThisConst(i) => e.p.gods[st.objects[e.this as usize].god as usize].consts[i as usize],
            Leaf::BoundConst(i) => e.p.gods[st.objects[e.bound as usize].god as usize].consts[i as usize],
            Leaf::GodInit(i) => e.p.gods[e.bound as usize].init[i as usize],
            Leaf::GodConst(i) => e.p.gods[e.bound as usize].consts[i as usize],
            Leaf::NamedConst(g, i) => e.p.gods[g as usize].consts[i as usize],
            Leaf::ThisObj => e.this as i64,
            Leaf::BoundObj => e.bound as i64,
            Leaf::GodName => e.p.gods[e.bound as usize].name_sym,
            Leaf::StoreOwn(n) => st.slots[n as usize],
            Leaf::StoreSum(n) => st.slots[e.p.n_store_nodes() + n as usize] - st.slots[n as usize],
            Leaf::Time => st.clock,
            Leaf::SessionTime => e.p.session_time(st),
            Leaf::Sessions => st.sessions,
            Leaf::Moves => st.moves as i64,
            Leaf::Actor => {
                if st.actor == NONE {
                    NULL
                } else {
                    st.actor as i64
                }
            }
            Leaf::Round => st.round as i64,
            Leaf::Turns => st.turns as i64,
            Leaf::ToMove => st.to_move as i64,
        }
    }
}

/// One value-producing piece of code; `at` is the index of the op that reports errors.
enum T {
    Leaf(Leaf),
    /// One operand (`Field`, `FieldConst`, `NameOf`, `NegL`, `NegD`, `L2D`, `Not`, `Load`,
    /// `GridRuns`, `GridSwaps`, `GridHasSwap`, `GridSumRuns`).
    Un(Op, Box<T>, usize),
    /// Two operands: arithmetic, comparisons, `Xor`, and the two-argument grid reads.
    Bin(Op, Box<T>, Box<T>, usize),
    /// `GridGroupLead` (c, tol, min) and `GridLine` (x, y, dx, dy).
    Many(Op, Vec<T>, usize),
    And(Box<T>, Box<T>),
    Or(Box<T>, Box<T>),
    Call(Builtin, Vec<T>, usize),
    /// An aggregate over objects (its inner code is its own expression).
    Agg(u16),
}

/// Decompiles postfix code `code` (starting at absolute index `base`) onto `stack`.
fn decompile(code: &[Op], base: usize, stack: &mut Vec<T>) {
    let mut pc = 0;
    while pc < code.len() {
        let at = base + pc;
        let op = code[pc];
        let leaf = match op {
            Op::Const(v) => Some(Leaf::Const(v)),
            Op::Slot(s) => Some(Leaf::Slot(s)),
            Op::This(o) => Some(Leaf::This(o)),
            Op::Bound(o) => Some(Leaf::Bound(o)),
            Op::ThisConst(i) => Some(Leaf::ThisConst(i)),
            Op::BoundConst(i) => Some(Leaf::BoundConst(i)),
            Op::GodInit(i) => Some(Leaf::GodInit(i)),
            Op::GodConst(i) => Some(Leaf::GodConst(i)),
            Op::NamedConst(g, i) => Some(Leaf::NamedConst(g, i)),
            Op::ThisObj => Some(Leaf::ThisObj),
            Op::BoundObj => Some(Leaf::BoundObj),
            Op::GodName => Some(Leaf::GodName),
            Op::StoreOwn(n) => Some(Leaf::StoreOwn(n)),
            Op::StoreSum(n) => Some(Leaf::StoreSum(n)),
            Op::Time => Some(Leaf::Time),
            Op::SessionTime => Some(Leaf::SessionTime),
            Op::Sessions => Some(Leaf::Sessions),
            Op::Moves => Some(Leaf::Moves),
            Op::Actor => Some(Leaf::Actor),
            Op::Round => Some(Leaf::Round),
            Op::Turns => Some(Leaf::Turns),
            Op::ToMove => Some(Leaf::ToMove),
            _ => None,
        };
        if let Some(l) = leaf {
            stack.push(T::Leaf(l));
            pc += 1;
            continue;
        }
        let pop = |stack: &mut Vec<T>| Box::new(stack.pop().expect("well-formed code"));
        match op {
            Op::Field(_)
            | Op::FieldConst(_)
            | Op::NameOf
            | Op::NegL
            | Op::NegD
            | Op::L2D
            | Op::Not
            | Op::Load
            | Op::GridRuns(_)
            | Op::GridSwaps(_)
            | Op::GridHasSwap(_)
            | Op::GridSumRuns(..) => {
                let a = pop(stack);
                stack.push(T::Un(op, a, at));
            }
            Op::L2DUnder => {
                let b = stack.pop().expect("well-formed code");
                let a = pop(stack);
                stack.push(T::Un(Op::L2D, a, at));
                stack.push(b);
            }
            Op::AndJump(off) | Op::OrJump(off) => {
                let a = pop(stack);
                let inner = &code[pc + 1..pc + off as usize];
                let mut sub = Vec::new();
                decompile(inner, at + 1, &mut sub);
                let b = Box::new(sub.pop().expect("well-formed code"));
                stack.push(if matches!(op, Op::AndJump(_)) { T::And(a, b) } else { T::Or(a, b) });
                pc += off as usize;
                continue;
            }
            Op::Skip(n) => {
                pc += n as usize + 1;
                continue;
            }
            Op::Agg(a) => stack.push(T::Agg(a)),
            Op::Call(b) => {
                let n = b.arity();
                let args = stack.split_off(stack.len() - n);
                stack.push(T::Call(b, args, at));
            }
            Op::GridLine(_) | Op::GridGroupLead(_) => {
                let n = if matches!(op, Op::GridLine(_)) { 4 } else { 3 };
                let args = stack.split_off(stack.len() - n);
                stack.push(T::Many(op, args, at));
            }
            _ => {
                let b = pop(stack);
                let a = pop(stack);
                stack.push(T::Bin(op, a, b, at));
            }
        }
        pc += 1;
    }
}

// ------------------------------------------------------------------------------------- lowering

macro_rules! fx {
    (|$e:ident| $body:expr) => {
        Arc::new(move |$e: &Env| -> Result<i64, RuntimeError> { $body }) as Fx
    };
}

#[inline(always)]
fn d(v: i64) -> f64 {
    f64::from_bits(v as u64)
}

#[inline(always)]
fn bits(v: f64) -> i64 {
    v.to_bits() as i64
}

/// A two-operand closure for an operator that cannot fail, with its operands read inline.
fn bin(a: T, b: T, f: impl Fn(i64, i64) -> i64 + Copy + Send + Sync + 'static) -> Fx {
    match (operand(a), operand(b)) {
        (Operand::Leaf(x), Operand::Leaf(Leaf::Const(c))) => fx!(|e| Ok(f(x.get(e), c))),
        (Operand::Leaf(x), Operand::Leaf(y)) => fx!(|e| Ok(f(x.get(e), y.get(e)))),
        (x, Operand::Leaf(Leaf::Const(c))) => fx!(|e| Ok(f(x.get(e)?, c))),
        (x, y) => fx!(|e| {
            let a = x.get(e)?;
            Ok(f(a, y.get(e)?))
        }),
    }
}

/// A long `+`, `-` or `*`: as [`bin`], with overflow an error at the operator's span.
fn bin_checked(op: Op, a: T, b: T, at: usize) -> Fx {
    let err = move |e: &Env, k: RtKind| rt(k, e.p.spans[at]);
    match (operand(a), operand(b)) {
        (Operand::Leaf(x), Operand::Leaf(Leaf::Const(c))) => fx!(|e| checked_long(op, x.get(e), c).map_err(|k| err(e, k))),
        (Operand::Leaf(x), Operand::Leaf(y)) => fx!(|e| checked_long(op, x.get(e), y.get(e)).map_err(|k| err(e, k))),
        (x, Operand::Leaf(Leaf::Const(c))) => fx!(|e| checked_long(op, x.get(e)?, c).map_err(|k| err(e, k))),
        (x, y) => fx!(|e| {
            let a = x.get(e)?;
            checked_long(op, a, y.get(e)?).map_err(|k| err(e, k))
        }),
    }
}

fn lower(t: T) -> Fx {
    match t {
        T::Leaf(l) => fx!(|e| Ok(l.get(e))),
        T::Un(Op::Field(_) | Op::FieldConst(_), ref a, _) if obj(a).is_some() => {
            let x = operand(t);
            fx!(|e| x.get(e))
        }
        T::Call(_, ref args, _) if args.iter().all(|a| simple(a).is_some()) => {
            let x = operand(t);
            fx!(|e| x.get(e))
        }
        T::Call(b, args, at) => {
            let n = args.len();
            let args: Vec<Operand> = args.into_iter().map(operand).collect();
            fx!(|e| {
                let mut v = [0i64; 4];
                for (slot, x) in v.iter_mut().zip(&args) {
                    *slot = x.get(e)?;
                }
                e.p.builtin(e, b, &v[..n], at)
            })
        }
        T::Un(Op::Load, a, at) => match operand(T::Un(Op::Load, a, at)) {
            Operand::Cell(g, x, y, at) => fx!(|e| e.p.grid_read(e.st, g, x.get(e), y.get(e), at)),
            Operand::Leaf(l) => fx!(|e| Ok(l.get(e))),
            Operand::Fx(f) => f,
            _ => unreachable!("a load is a cell read or a closure"),
        },
        // Chains of `&&` / `||` (associative) as one closure: the first false (true) operand's
        // value, else the last one's.
        T::And(..) | T::Or(..) => {
            let and = matches!(t, T::And(..));
            let mut ops = Vec::new();
            chain(t, and, &mut ops);
            if ops.len() == 2 {
                let b = ops.pop().expect("two operands");
                let a = ops.pop().expect("two operands");
                return if and {
                    fx!(|e| {
                        let x = a.get(e)?;
                        if x == 0 { Ok(x) } else { b.get(e) }
                    })
                } else {
                    fx!(|e| {
                        let x = a.get(e)?;
                        if x != 0 { Ok(x) } else { b.get(e) }
                    })
                };
            }
            if and {
                fx!(|e| {
                    let mut x = 0;
                    for o in &ops {
                        x = o.get(e)?;
                        if x == 0 {
                            break;
                        }
                    }
                    Ok(x)
                })
            } else {
                fx!(|e| {
                    let mut x = 0;
                    for o in &ops {
                        x = o.get(e)?;
                        if x != 0 {
                            break;
                        }
                    }
                    Ok(x)
                })
            }
        }
        T::Un(op, a, at) => lower_un(op, *a, at),
        T::Bin(op, a, b, at) => lower_bin(op, *a, *b, at),
        T::Many(op, args, at) => {
            let args: Vec<Operand> = args.into_iter().map(operand).collect();
            match op {
                Op::GridLine(g) => {
                    let [x, y, dx, dy]: [Operand; 4] = args.try_into().ok().expect("four operands");
                    fx!(|e| {
                        let v = [x.get(e)?, y.get(e)?, dx.get(e)?, dy.get(e)?];
                        Ok(e.p.grid_line(e.st, g, &v))
                    })
                }
                Op::GridGroupLead(g) => fx!(|e| {
                    let (c, tol, min) = (args[0].get(e)?, args[1].get(e)?, args[2].get(e)?);
                    Ok(e.p.tile_group_lead(e.st, g, c, tol, min, e.p.spans[at])? as i64)
                }),
                _ => unreachable!("only GridLine and GridGroupLead take many operands"),
            }
        }
        T::Agg(a) => fx!(|e| e.p.aggregate(e.st, a, Ctx { this: e.this, bound: e.bound })),
    }
}

fn lower_un(op: Op, a: T, at: usize) -> Fx {
    // Reads through an object reference: the object must be live.
    let via_object = |a: T, read: fn(&Env, ObjRec) -> i64| -> Fx {
        let a = lower(a);
        fx!(|e| {
            let v = a(e)?;
            match e.st.objects.get(v as usize) {
                Some(o) if v >= 0 && o.alive => Ok(read(e, *o)),
                _ => Err(e.p.deref_error(e.st, v, at)),
            }
        })
    };
    match op {
        Op::Field(o) => {
            // `x.attr` on an object read from a leaf (`this`, the bound object, a named one).
            if let T::Leaf(l) = a {
                return fx!(|e| {
                    let v = l.get(e);
                    match e.st.objects.get(v as usize) {
                        Some(ob) if v >= 0 && ob.alive => Ok(e.st.slots[(ob.base + o) as usize]),
                        _ => Err(e.p.deref_error(e.st, v, at)),
                    }
                });
            }
            let a = lower(a);
            fx!(|e| {
                let v = a(e)?;
                match e.st.objects.get(v as usize) {
                    Some(ob) if v >= 0 && ob.alive => Ok(e.st.slots[(ob.base + o) as usize]),
                    _ => Err(e.p.deref_error(e.st, v, at)),
                }
            })
        }
        Op::FieldConst(i) => {
            let a = lower(a);
            fx!(|e| {
                let v = a(e)?;
                match e.st.objects.get(v as usize) {
                    Some(ob) if v >= 0 && ob.alive => Ok(e.p.gods[ob.god as usize].consts[i as usize]),
                    _ => Err(e.p.deref_error(e.st, v, at)),
                }
            })
        }
        Op::NameOf => via_object(a, |e, o| e.p.gods[o.god as usize].name_sym),
        Op::NegL => {
            let a = lower(a);
            fx!(|e| {
                let x = a(e)?;
                x.checked_neg().ok_or_else(|| rt(RtKind::Overflow { a: 0, op: "-", b: x }, e.p.spans[at]))
            })
        }
        Op::NegD => un(a, |x| bits(-d(x))),
        Op::L2D => un(a, |x| bits(x as f64)),
        Op::Not => un(a, |x| (x == 0) as i64),
        Op::Load => {
            let a = lower(a);
            fx!(|e| Ok(e.st.slots[a(e)? as usize]))
        }
        Op::GridRuns(g) => {
            let a = lower(a);
            fx!(|e| Ok(e.p.tile_runs(e.st, g, a(e)?)))
        }
        Op::GridSwaps(g) => {
            let a = lower(a);
            fx!(|e| Ok(e.p.tile_swaps(e.st, g, a(e)?)))
        }
        Op::GridHasSwap(g) => {
            let a = lower(a);
            fx!(|e| Ok(e.p.tile_has_swap(e.st, g, a(e)?) as i64))
        }
        Op::GridSumRuns(g, agg) => {
            let a = lower(a);
            fx!(|e| {
                let min = a(e)?;
                e.p.tile_sum_runs(e.st, g, min, &e.p.aggs[agg as usize], e.this)
            })
        }
        _ => unreachable!("not a one-operand op: {op:?}"),
    }
}

fn un(a: T, f: impl Fn(i64) -> i64 + Copy + Send + Sync + 'static) -> Fx {
    match a {
        T::Leaf(l) => fx!(|e| Ok(f(l.get(e)))),
        a => {
            let a = lower(a);
            fx!(|e| Ok(f(a(e)?)))
        }
    }
}

fn lower_bin(op: Op, a: T, b: T, at: usize) -> Fx {
    match op {
        Op::AddL | Op::SubL | Op::MulL => bin_checked(op, a, b, at),
        Op::AddD => bin(a, b, |x, y| bits(d(x) + d(y))),
        Op::SubD => bin(a, b, |x, y| bits(d(x) - d(y))),
        Op::MulD => bin(a, b, |x, y| bits(d(x) * d(y))),
        Op::Eq => bin(a, b, |x, y| (x == y) as i64),
        Op::Ne => bin(a, b, |x, y| (x != y) as i64),
        Op::LtL => bin(a, b, |x, y| (x < y) as i64),
        Op::LeL => bin(a, b, |x, y| (x <= y) as i64),
        Op::GtL => bin(a, b, |x, y| (x > y) as i64),
        Op::GeL => bin(a, b, |x, y| (x >= y) as i64),
        Op::EqD => bin(a, b, |x, y| (d(x) == d(y)) as i64),
        Op::NeD => bin(a, b, |x, y| (d(x) != d(y)) as i64),
        Op::LtD => bin(a, b, |x, y| (d(x) < d(y)) as i64),
        Op::LeD => bin(a, b, |x, y| (d(x) <= d(y)) as i64),
        Op::GtD => bin(a, b, |x, y| (d(x) > d(y)) as i64),
        Op::GeD => bin(a, b, |x, y| (d(x) >= d(y)) as i64),
        Op::Xor => bin(a, b, |x, y| ((x != 0) != (y != 0)) as i64),
        Op::DivL => {
            let (a, b) = (lower(a), lower(b));
            fx!(|e| {
                let x = a(e)?;
                let y = b(e)?;
                if y == 0 {
                    return Err(rt(RtKind::DivisionByZero, e.p.spans[at]));
                }
                checked_long(Op::DivL, x, y).map_err(|k| rt(k, e.p.spans[at]))
            })
        }
        Op::DivD => {
            let (a, b) = (lower(a), lower(b));
            fx!(|e| {
                let x = a(e)?;
                let y = b(e)?;
                if d(y) == 0.0 {
                    return Err(rt(RtKind::DivisionByZero, e.p.spans[at]));
                }
                Ok(bits(d(x) / d(y)))
            })
        }
        Op::GridCell(g) => {
            let (a, b) = (operand(a), operand(b));
            fx!(|e| {
                let x = a.get(e)?;
                let y = b.get(e)?;
                let gi = &e.p.grids[g as usize];
                if x < 0 || y < 0 || x >= gi.width as i64 || y >= gi.height as i64 {
                    return Err(e.p.off_grid(g, x, y, at));
                }
                Ok(gi.base as i64 + y * gi.width as i64 + x)
            })
        }
        Op::GridCanSwap(g) => {
            let (a, b) = (lower(a), lower(b));
            fx!(|e| {
                let s = a(e)?;
                let min = b(e)?;
                Ok(e.p.tile_can_swap(e.st, g, s, min, e.p.spans[at])? as i64)
            })
        }
        Op::GridGroup(g) => {
            let (a, b) = (lower(a), lower(b));
            fx!(|e| {
                let (c, tol) = (a(e)?, b(e)?);
                e.p.tile_group(e.st, g, c, tol, e.p.spans[at])
            })
        }
        Op::GridGroups(g) => {
            let (a, b) = (lower(a), lower(b));
            fx!(|e| {
                let (tol, min) = (a(e)?, b(e)?);
                Ok(e.p.tile_groups(e.st, g, tol, min))
            })
        }
        Op::GridGroupDistinct(g) => {
            let (a, b) = (lower(a), lower(b));
            fx!(|e| {
                let (c, tol) = (a(e)?, b(e)?);
                e.p.tile_group_distinct(e.st, g, c, tol, e.p.spans[at])
            })
        }
        _ => unreachable!("not a two-operand op: {op:?}"),
    }
}

/// An object reached from a leaf by at most two attribute hops (`this`, `this.owner`,
/// `mage`): each hop checks that the object is live.
#[derive(Clone, Copy)]
enum Obj {
    Leaf(Leaf),
    Hop(Leaf, u32, usize),
}

impl Obj {
    #[inline(always)]
    fn get(self, e: &Env) -> Result<i64, RuntimeError> {
        match self {
            Obj::Leaf(l) => Ok(l.get(e)),
            Obj::Hop(l, o, at) => e.p.field(e.st, l.get(e), o, at),
        }
    }
}

/// An operand read inline by the closure that uses it (no recursion, so it inlines): a leaf, a
/// grid cell read with leaf coordinates (`height[col, 0]`), an attribute or class constant
/// through an object path (`this.owner.ap`), a grid line or a built-in of such operands, or a
/// closure.
enum Operand {
    Leaf(Leaf),
    /// `<grid>[x, y]`: checked against the grid, then read.
    Cell(u16, Leaf, Leaf, usize),
    /// `obj.attr`, `obj.constant`.
    Field(Obj, u32, usize),
    FieldConst(Obj, u32, usize),
    /// `<grid>.line(x, y, dx, dy)` with leaf arguments.
    Line(u16, [Leaf; 4]),
    /// The same along a constant unit direction: [`Program::grid_line_unit`] made for it.
    LineUnit(u16, Leaf, Leaf, LineFn),
    /// `hex.distance`, `hex.walk` or `hex.sees` of two simple operands, computed inline.
    Hex2(Builtin, Simple, Simple, usize),
    /// A built-in function of up to four simple operands.
    Call(Builtin, Box<[Simple]>, usize),
    Fx(Fx),
}

/// A grid line counter made for one unit direction.
type LineFn = fn(&Program, &State, u16, i64, i64) -> i64;

/// The counter for direction (dx, dy), when both are -1, 0 or 1 and not both 0.
pub(super) fn line_fn(dx: i64, dy: i64) -> Option<LineFn> {
    Some(match (dx, dy) {
        (1, 0) => Program::grid_line_unit::<1, 0>,
        (-1, 0) => Program::grid_line_unit::<-1, 0>,
        (0, 1) => Program::grid_line_unit::<0, 1>,
        (0, -1) => Program::grid_line_unit::<0, -1>,
        (1, 1) => Program::grid_line_unit::<1, 1>,
        (-1, -1) => Program::grid_line_unit::<-1, -1>,
        (1, -1) => Program::grid_line_unit::<1, -1>,
        (-1, 1) => Program::grid_line_unit::<-1, 1>,
        _ => return None,
    })
}

/// The operands a built-in's arguments can be inline.
#[derive(Clone, Copy)]
enum Simple {
    Leaf(Leaf),
    Field(Obj, u32, usize),
}

impl Simple {
    #[inline(always)]
    fn get(self, e: &Env) -> Result<i64, RuntimeError> {
        match self {
            Simple::Leaf(l) => Ok(l.get(e)),
            Simple::Field(obj, o, at) => e.p.field(e.st, obj.get(e)?, o, at),
        }
    }
}

impl Operand {
    #[inline(always)]
    fn get(&self, e: &Env) -> Result<i64, RuntimeError> {
        match self {
            Operand::Leaf(l) => Ok(l.get(e)),
            Operand::Cell(g, x, y, at) => e.p.grid_read(e.st, *g, x.get(e), y.get(e), *at),
            Operand::Field(obj, o, at) => e.p.field(e.st, obj.get(e)?, *o, *at),
            Operand::FieldConst(obj, i, at) => {
                let v = obj.get(e)?;
                match e.st.objects.get(v as usize) {
                    Some(ob) if v >= 0 && ob.alive => Ok(e.p.gods[ob.god as usize].consts[*i as usize]),
                    _ => Err(e.p.deref_error(e.st, v, *at)),
                }
            }
            Operand::Line(g, a) => Ok(e.p.grid_line(e.st, *g, &[a[0].get(e), a[1].get(e), a[2].get(e), a[3].get(e)])),
            Operand::LineUnit(g, x, y, f) => Ok(f(e.p, e.st, *g, x.get(e), y.get(e))),
            Operand::Hex2(b, x, y, at) => {
                // The arguments first, then their cells, as `Program::builtin` checks them.
                let (x, y) = (x.get(e)?, y.get(e)?);
                let h = e.p.hex.as_deref().expect("the compiler requires a hexmap for hex built-ins");
                let (x, y) = (e.p.cell(x, *at)?, e.p.cell(y, *at)?);
                Ok(match b {
                    Builtin::HexDistance => h.distance(x, y),
                    Builtin::HexWalk => h.walk(x, y),
                    _ => h.sees(x, y) as i64,
                })
            }
            Operand::Call(b, args, at) => {
                let mut v = [0i64; 4];
                for (slot, x) in v.iter_mut().zip(args.iter()) {
                    *slot = x.get(e)?;
                }
                e.p.builtin(e, *b, &v[..args.len()], *at)
            }
            Operand::Fx(f) => f(e),
        }
    }
}

/// `t` as an object path, if it is one.
fn obj(t: &T) -> Option<Obj> {
    match t {
        T::Leaf(l) => Some(Obj::Leaf(*l)),
        T::Un(Op::Field(o), a, at) => match **a {
            T::Leaf(l) => Some(Obj::Hop(l, *o, *at)),
            _ => None,
        },
        _ => None,
    }
}

fn simple(t: &T) -> Option<Simple> {
    match t {
        T::Leaf(l) => Some(Simple::Leaf(*l)),
        T::Un(Op::Field(o), a, at) => obj(a).map(|ob| Simple::Field(ob, *o, *at)),
        _ => None,
    }
}

fn operand(t: T) -> Operand {
    match t {
        T::Leaf(l) => Operand::Leaf(l),
        T::Un(Op::Field(o), a, at) if obj(&a).is_some() => Operand::Field(obj(&a).expect("checked"), o, at),
        T::Un(Op::FieldConst(i), a, at) if obj(&a).is_some() => Operand::FieldConst(obj(&a).expect("checked"), i, at),
        T::Call(b @ (Builtin::HexDistance | Builtin::HexWalk | Builtin::HexSees), ref args, at)
            if let [x, y] = args.as_slice()
                && let (Some(x), Some(y)) = (simple(x), simple(y)) =>
        {
            Operand::Hex2(b, x, y, at)
        }
        T::Call(b, args, at) if args.iter().all(|a| simple(a).is_some()) => {
            Operand::Call(b, args.iter().map(|a| simple(a).expect("checked")).collect(), at)
        }
        T::Many(Op::GridLine(g), args, at) => {
            if let [T::Leaf(x), T::Leaf(y), T::Leaf(dx), T::Leaf(dy)] = args.as_slice() {
                match (dx, dy) {
                    (Leaf::Const(dx), Leaf::Const(dy)) if let Some(f) = line_fn(*dx, *dy) => Operand::LineUnit(g, *x, *y, f),
                    _ => Operand::Line(g, [*x, *y, *dx, *dy]),
                }
            } else {
                Operand::Fx(lower(T::Many(Op::GridLine(g), args, at)))
            }
        }
        T::Un(Op::Load, a, at) => match *a {
            T::Bin(Op::GridCell(g), x, y, cell_at) => match (*x, *y) {
                (T::Leaf(x), T::Leaf(y)) => Operand::Cell(g, x, y, cell_at),
                (x, y) => Operand::Fx(lower_un(Op::Load, T::Bin(Op::GridCell(g), Box::new(x), Box::new(y), cell_at), at)),
            },
            a => Operand::Fx(lower_un(Op::Load, a, at)),
        },
        t => Operand::Fx(lower(t)),
    }
}

/// The operands of a chain of `&&` (`and`) or `||`, flattened.
fn chain(t: T, and: bool, out: &mut Vec<Operand>) {
    match t {
        T::And(a, b) if and => {
            chain(*a, and, out);
            chain(*b, and, out);
        }
        T::Or(a, b) if !and => {
            chain(*a, and, out);
            chain(*b, and, out);
        }
        t => out.push(operand(t)),
    }
}

// ------------------------------------------------------------------------------------- checking

impl Program {
    /// Evaluates every expression that can run in `st` — each player action's conditions for
    /// every owner and binding (in order, up to the first that fails, as move generation does),
    /// the consequences and duration of every move whose conditions hold, choose keys, policy
    /// weights, turn and occupant conditions, rules, goals, outcomes and constraints — once
    /// through its closure and once through the bytecode, and lists every disagreement (value or
    /// error). For the differential test of the closure compiler; returns how many it compared.
    pub fn closure_mismatches(&self, st: &State) -> (usize, Vec<String>) {
        let n = std::cell::Cell::new(0usize);
        let bad = std::cell::RefCell::new(Vec::new());
        let check = |e: ExprId, this: u32, bound: u32| -> bool {
            n.set(n.get() + 1);
            let ctx = Ctx { this, bound };
            let (fast, slow) = (self.eval(st, e, ctx), self.eval_bytecode(st, e, ctx));
            if fast != slow {
                let text = self.source.slice(self.spans[e.start as usize]).to_string();
                bad.borrow_mut().push(format!(
                    "expression at `{text}` (code {}..{}), this {this}, bound {bound}: closure {fast:?}, bytecode {slow:?}",
                    e.start,
                    e.start + e.len
                ));
            }
            matches!(slow, Ok(v) if v != 0)
        };
        let none = NONE;
        let conses_of = |a: &ActionInfo| -> Vec<ExprId> {
            let mut out = Vec::new();
            let mut todo: Vec<ConsId> = a.consequences.clone();
            while let Some(c) = todo.pop() {
                match &self.conses[c as usize].code {
                    Cons::Assign { place, value } => {
                        out.push(*value);
                        if let Place::Field(e, _) | Place::Dyn(e) = place {
                            out.push(*e);
                        }
                    }
                    Cons::Conditional { cond, then } => {
                        out.push(*cond);
                        todo.push(*then);
                    }
                    Cons::Timed { delay, then, .. } => {
                        out.push(*delay);
                        todo.push(*then);
                    }
                    Cons::Create { assign: Some(Place::Field(e, _) | Place::Dyn(e)), .. } => out.push(*e),
                    Cons::GameIncrease { rest, by, .. } => {
                        out.extend(rest.iter().filter_map(|s| if let Segment::Dynamic(e) = s { Some(*e) } else { None }));
                        out.extend(by);
                    }
                    Cons::Delete { obj } => out.push(*obj),
                    Cons::Tile { args, .. } => out.extend(args),
                    Cons::Create { .. } | Cons::EndSession | Cons::EndTurn => {}
                }
            }
            out
        };
        for (ai, a) in self.actions.iter().enumerate() {
            let owners: Vec<u32> = match (a.kind, a.class) {
                (ActionKind::Rule, _) | (_, None) => vec![none],
                (_, Some(c)) => (0..st.objects.len() as u32)
                    .filter(|&o| st.objects[o as usize].alive && self.is_sub(st.objects[o as usize].class, c))
                    .collect(),
            };
            let bindings: Vec<u32> = match a.bind {
                BindKind::None => vec![none],
                BindKind::God(c) => self.classes[c as usize].gods.iter().map(|&g| g as u32).collect(),
                BindKind::Instance(c) => (0..st.objects.len() as u32)
                    .filter(|&o| st.objects[o as usize].alive && self.is_sub(st.objects[o as usize].class, c))
                    .collect(),
                BindKind::Number(lo, hi) => (lo..=hi.min(lo.saturating_add(200))).collect(),
                BindKind::Hex => self.hex.as_ref().map_or(Vec::new(), |h| (0..h.len() as u32).filter(|&c| !h.wall[c as usize]).collect()),
            };
            for &this in &owners {
                for &bound in &bindings {
                    let holds = a.conditions.iter().all(|&c| check(c, this, bound));
                    if let Some((_, k)) = a.choose {
                        check(k, this, bound);
                    }
                    if holds && a.kind == ActionKind::Player {
                        for e in conses_of(a) {
                            check(e, this, bound);
                        }
                        // Each consequence run through its closure and by its kind, on copies.
                        for &c in &a.consequences {
                            let ctx = Ctx { this, bound };
                            let (mut x, mut y) = (st.clone(), st.clone());
                            let (rx, ry) = (self.exec(&mut x, c, ctx, 0), self.exec_generic(&mut y, c, ctx, 0));
                            n.set(n.get() + 1);
                            if rx != ry || x != y {
                                bad.borrow_mut().push(format!(
                                    "consequence `{}`, this {this}, bound {bound}: closure {rx:?}, by kind {ry:?}",
                                    self.conses[c as usize].name
                                ));
                            }
                        }
                        if let Some((e, _)) = a.duration {
                            check(e, this, bound);
                        }
                        for p in &self.policies {
                            for t in p.tiers.iter().filter(|t| t.action as usize == ai) {
                                if let Some(c) = t.cond {
                                    check(c, this, bound);
                                }
                                if let PickCode::Weight(e, _) | PickCode::Max(e, _) = t.pick {
                                    check(e, this, bound);
                                }
                            }
                        }
                    }
                }
            }
        }
        for g in &self.goals {
            check(g.expr, none, none);
        }
        for o in &self.outcomes {
            check(o.expr, none, none);
        }
        for (e, _) in &self.constraints {
            check(*e, none, none);
        }
        for (i, o) in st.objects.iter().enumerate() {
            if let Some(t) = &self.turn
                && let Some(c) = t.cond
                && o.alive
                && self.is_sub(o.class, t.class)
            {
                check(c, i as u32, none);
            }
            if let Some(oc) = &self.occupants
                && let Some(c) = oc.cond
                && o.alive
                && self.is_sub(o.class, oc.class)
            {
                check(c, i as u32, none);
            }
        }
        (n.get(), bad.into_inner())
    }
}
