//! Bytecode → tree: a compiled expression's stack code decompiled once into a small tree whose
//! leaves ([`Leaf`]) are values that need no computation and cannot fail, so lowering can read
//! them inline.

use super::*;

/// A value that needs no computation and cannot fail: read it inline.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(in crate::wgdl) enum Leaf {
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
    /// Cell k of the bound move of a step table.
    StepCell(u16, u8),
}

impl Leaf {
    #[inline(always)]
    pub(super) fn get(self, e: &Env) -> i64 {
        let st = e.st;
        match self {
            Leaf::Const(v) => v,
            Leaf::Slot(s) => st.slots[s as usize],
            Leaf::This(o) => st.slots[(e.this_base + o) as usize],
            Leaf::Bound(o) => st.slots[(e.bound_base + o) as usize],
            Leaf::ThisConst(i) => e.p.gods[e.this_god() as usize].consts[i as usize],
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
            Leaf::StepCell(t, k) => e.p.board.tables[t as usize].moves[e.bound as usize][k as usize] as i64,
        }
    }
}

/// One value-producing piece of code; `at` is the index of the op that reports errors.
#[derive(Clone, Debug)]
pub(in crate::wgdl) enum T {
    Leaf(Leaf),
    /// One operand (`Field`, `FieldConst`, `NameOf`, `NegL`, `NegD`, `L2D`, `Not`, `Load`,
    /// `GridSumRuns`).
    Un(Op, Box<T>, usize),
    /// Two operands: arithmetic, comparisons, `Xor`, `GridCell`.
    Bin(Op, Box<T>, Box<T>, usize),
    And(Box<T>, Box<T>),
    Or(Box<T>, Box<T>),
    /// A built-in (src/wgdl/run/builtins.rs) on grid `.1` of its arguments.
    Call(Builtin, u16, Vec<T>, usize),
    /// An aggregate over objects (its inner code is its own expression).
    Agg(u16),
}

/// Whether `t` reads nothing but literals and class constants (of `this` or of a named
/// object) through operators with no other input: its value is fixed per god of `this` and
/// per parameter values.
pub(super) fn consts_only(t: &T) -> bool {
    match t {
        T::Leaf(l) => matches!(l, Leaf::Const(_) | Leaf::ThisConst(_) | Leaf::NamedConst(..)),
        T::Un(op, a, _) => matches!(op, Op::NegL | Op::NegD | Op::L2D | Op::Not) && consts_only(a),
        T::Bin(op, a, b, _) => {
            matches!(
                op,
                Op::AddL
                    | Op::SubL
                    | Op::MulL
                    | Op::DivL
                    | Op::AddD
                    | Op::SubD
                    | Op::MulD
                    | Op::DivD
                    | Op::Eq
                    | Op::Ne
                    | Op::LtL
                    | Op::LeL
                    | Op::GtL
                    | Op::GeL
                    | Op::EqD
                    | Op::NeD
                    | Op::LtD
                    | Op::LeD
                    | Op::GtD
                    | Op::GeD
                    | Op::Xor
            ) && consts_only(a)
                && consts_only(b)
        }
        T::And(a, b) | T::Or(a, b) => consts_only(a) && consts_only(b),
        T::Call(..) | T::Agg(_) => false,
    }
}

/// `t` with the checked reads of `this`'s attributes (`this_live`) and of the bound object's
/// (`bound_live`) made plain slot reads: where that object is known to be live, the check
/// cannot fail and the value is the slot's.
pub(super) fn assume_live(t: T, this_live: bool, bound_live: bool) -> T {
    if !this_live && !bound_live {
        return t;
    }
    let go = |t: T| assume_live(t, this_live, bound_live);
    let many = |v: Vec<T>| v.into_iter().map(go).collect::<Vec<_>>();
    match t {
        T::Un(Op::Field(i), a, at) => match *a {
            T::Leaf(Leaf::ThisObj) if this_live => T::Leaf(Leaf::This(i)),
            T::Leaf(Leaf::BoundObj) if bound_live => T::Leaf(Leaf::Bound(i)),
            a => T::Un(Op::Field(i), Box::new(go(a)), at),
        },
        T::Un(op, a, at) => T::Un(op, Box::new(go(*a)), at),
        T::Bin(op, a, b, at) => T::Bin(op, Box::new(go(*a)), Box::new(go(*b)), at),
        T::And(a, b) => T::And(Box::new(go(*a)), Box::new(go(*b))),
        T::Or(a, b) => T::Or(Box::new(go(*a)), Box::new(go(*b))),
        T::Call(b, g, v, at) => T::Call(b, g, many(v), at),
        t @ (T::Leaf(_) | T::Agg(_)) => t,
    }
}

/// Decompiles postfix code `code` (starting at absolute index `base`) onto `stack`.
pub(super) fn decompile(code: &[Op], base: usize, stack: &mut Vec<T>) {
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
            Op::StepCell(t, k) => Some(Leaf::StepCell(t, k)),
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
            | Op::GridIndex(_)
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
            Op::Call(b, g, n) => {
                let args = stack.split_off(stack.len() - n as usize);
                stack.push(T::Call(b, g, args, at));
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
