//! Tree → closures: each node lowered to one closure, with the common shapes (a slot against a
//! constant, two inline operands, a grid cell, a conjunction chain) specialised into a single
//! closure whose operands ([`Operand`]) are read inline.

use super::operand::*;
use super::spec::{Get, by_kind, by_kind_wide, closure};
use super::tree::*;
use super::*;
use crate::wgdl::run::builtins::MAX_ARGS;

macro_rules! fx {
    (|$e:ident| $body:expr) => {
        crate::wgdl::run::fast::fx_of(move |$e: &Env| -> Result<i64, RuntimeError> { $body })
    };
}

#[inline(always)]
pub(super) fn d(v: i64) -> f64 {
    f64::from_bits(v as u64)
}

#[inline(always)]
pub(super) fn bits(v: f64) -> i64 {
    v.to_bits() as i64
}

/// A two-operand closure for an operator that cannot fail, with its operands read inline.
pub(super) fn bin(a: T, b: T, f: impl Fn(i64, i64) -> i64 + Copy + Send + Sync + 'static) -> Fx {
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

/// [`bin`] for the long comparisons, the operators of most conditions: the closure is built for
/// its operands' kinds ([`super::spec`]) — a constant right operand inline, the other read
/// without a kind test; two operands likewise, a closure per pair of kinds. Kept to these six
/// operators (and checked arithmetic), as every operator × kind pair is a closure to compile.
pub(super) fn compare(a: T, b: T, f: impl Fn(i64, i64) -> i64 + Copy + Send + Sync + 'static) -> Fx {
    match (operand(a), operand(b)) {
        (x, Operand::Leaf(Leaf::Const(c))) => by_kind_wide!(x, |gx| fx!(|e| Ok(f(gx.get(e)?, c)))),
        (x, y) => by_kind!(x, |gx| by_kind!(y, |gy| fx!(|e| {
            let a = gx.get(e)?;
            Ok(f(a, gy.get(e)?))
        }))),
    }
}

/// A long `+`, `-` or `*`: built for its operands' kinds as [`compare`], with overflow an error
/// at the operator's span.
pub(super) fn bin_checked(op: Op, a: T, b: T, at: usize) -> Fx {
    let err = move |e: &Env, k: RtKind| rt(k, e.p.spans[at]);
    match (operand(a), operand(b)) {
        (x, Operand::Leaf(Leaf::Const(c))) => by_kind_wide!(x, |gx| fx!(|e| checked_long(op, gx.get(e)?, c).map_err(|k| err(e, k)))),
        (x, y) => by_kind!(x, |gx| by_kind!(y, |gy| fx!(|e| {
            let a = gx.get(e)?;
            checked_long(op, a, gy.get(e)?).map_err(|k| err(e, k))
        }))),
    }
}

pub(in crate::wgdl) fn lower(t: T) -> Fx {
    match t {
        T::Leaf(l) => closure(Operand::Leaf(l)),
        T::Un(Op::Field(_) | Op::FieldConst(_), ref a, _) if obj(a).is_some() => closure(operand(t)),
        // `max`/`min` of two operands: a two-operand closure, not the built-in dispatch.
        T::Call(b @ (Builtin::MAX_L | Builtin::MIN_L | Builtin::MAX_D | Builtin::MIN_D), _, args, _) if args.len() == 2 => {
            let [x, y]: [T; 2] = args.try_into().expect("two operands");
            match b {
                Builtin::MAX_L => bin(x, y, |x, y| x.max(y)),
                Builtin::MIN_L => bin(x, y, |x, y| x.min(y)),
                Builtin::MAX_D => bin(x, y, |x, y| bits(d(x).max(d(y)))),
                _ => bin(x, y, |x, y| bits(d(x).min(d(y)))),
            }
        }
        // `<grid>.line` as a closure of its own (inline, with leaf arguments, where it is an
        // operand: `Operand::Line`, `Operand::LineUnit`).
        T::Call(Builtin::GRID_LINE, g, args, _) => {
            let args: Vec<Operand> = args.into_iter().map(operand).collect();
            let [x, y, dx, dy]: [Operand; 4] = args.try_into().ok().expect("four operands");
            fx!(|e| {
                let v = [x.get(e)?, y.get(e)?, dx.get(e)?, dy.get(e)?];
                Ok(e.p.grid_line(e.st, g, &v))
            })
        }
        T::Call(_, _, ref args, _) if args.iter().all(|a| simple(a).is_some()) => closure(operand(t)),
        // Any other built-in: its arguments, then its run function (the table's).
        T::Call(b, g, args, at) => {
            let (n, run) = (args.len(), b.run());
            let args: Vec<Operand> = args.into_iter().map(operand).collect();
            fx!(|e| {
                let mut v = [0i64; MAX_ARGS];
                for (slot, x) in v.iter_mut().zip(&args) {
                    *slot = x.get(e)?;
                }
                run(e, g, &v[..n], at)
            })
        }
        // A cell read, a leaf or a closure.
        T::Un(Op::Load, a, at) => closure(operand(T::Un(Op::Load, a, at))),
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
                    by_kind!(a, |ga| by_kind!(b, |gb| fx!(|e| {
                        let x = ga.get(e)?;
                        if x == 0 { Ok(x) } else { gb.get(e) }
                    })))
                } else {
                    by_kind!(a, |ga| by_kind!(b, |gb| fx!(|e| {
                        let x = ga.get(e)?;
                        if x != 0 { Ok(x) } else { gb.get(e) }
                    })))
                };
            }
            // Longer chains: each operand a closure built for its kind, called in turn.
            let ops: Vec<Fx> = ops.into_iter().map(closure).collect();
            if and {
                fx!(|e| {
                    let mut x = 0;
                    for o in &ops {
                        x = o(e)?;
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
                        x = o(e)?;
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
        T::Agg(a) => fx!(|e| e.p.aggregate(e.st, a, Ctx { this: e.this, bound: e.bound })),
    }
}

pub(super) fn lower_un(op: Op, a: T, at: usize) -> Fx {
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
        Op::GridIndex(g) => {
            let a = lower(a);
            fx!(|e| e.p.grid_number(g, a(e)?, at))
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

pub(super) fn un(a: T, f: impl Fn(i64) -> i64 + Copy + Send + Sync + 'static) -> Fx {
    match a {
        T::Leaf(l) => fx!(|e| Ok(f(l.get(e)))),
        a => {
            let a = lower(a);
            fx!(|e| Ok(f(a(e)?)))
        }
    }
}

pub(super) fn lower_bin(op: Op, a: T, b: T, at: usize) -> Fx {
    use crate::wgdl::run::aggregates::ZeroTest;
    // An aggregate compared with 0 or 1: a `countOf` may stop at the first object that counts.
    if let (T::Agg(k), T::Leaf(Leaf::Const(c))) = (&a, &b) {
        let test = match (op, *c) {
            (Op::Eq, 0) => Some(ZeroTest::Zero),
            (Op::Ne, 0) => Some(ZeroTest::NonZero),
            (Op::GtL, 0) | (Op::GeL, 1) => Some(ZeroTest::Positive),
            (Op::LeL, 0) | (Op::LtL, 1) => Some(ZeroTest::NotPositive),
            _ => None,
        };
        if let Some(test) = test {
            let k = *k;
            return fx!(|e| Ok(e.p.aggregate_test(e.st, k, Ctx { this: e.this, bound: e.bound }, test)? as i64));
        }
    }
    match op {
        Op::AddL | Op::SubL | Op::MulL => bin_checked(op, a, b, at),
        Op::AddD => bin(a, b, |x, y| bits(d(x) + d(y))),
        Op::SubD => bin(a, b, |x, y| bits(d(x) - d(y))),
        Op::MulD => bin(a, b, |x, y| bits(d(x) * d(y))),
        Op::Eq => compare(a, b, |x, y| (x == y) as i64),
        Op::Ne => compare(a, b, |x, y| (x != y) as i64),
        Op::LtL => compare(a, b, |x, y| (x < y) as i64),
        Op::LeL => compare(a, b, |x, y| (x <= y) as i64),
        Op::GtL => compare(a, b, |x, y| (x > y) as i64),
        Op::GeL => compare(a, b, |x, y| (x >= y) as i64),
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
        Op::ModL => {
            let (a, b) = (lower(a), lower(b));
            fx!(|e| {
                let x = a(e)?;
                let y = b(e)?;
                if y == 0 {
                    return Err(rt(RtKind::DivisionByZero, e.p.spans[at]));
                }
                checked_long(Op::ModL, x, y).map_err(|k| rt(k, e.p.spans[at]))
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
        _ => unreachable!("not a two-operand op: {op:?}"),
    }
}

/// `t` as an object path, if it is one.
pub(super) fn obj(t: &T) -> Option<Obj> {
    match t {
        T::Leaf(l) => Some(Obj::Leaf(*l)),
        T::Un(Op::Field(o), a, at) => match **a {
            T::Leaf(l) => Some(Obj::Hop(l, *o, *at)),
            _ => None,
        },
        _ => None,
    }
}

pub(super) fn simple(t: &T) -> Option<Simple> {
    match t {
        T::Leaf(l) => Some(Simple::Leaf(*l)),
        T::Un(Op::Field(o), a, at) => obj(a).map(|ob| Simple::Field(ob, *o, *at)),
        _ => None,
    }
}

pub(super) fn operand(t: T) -> Operand {
    match t {
        T::Leaf(l) => Operand::Leaf(l),
        T::Un(Op::Field(o), a, at) if obj(&a).is_some() => Operand::Field(obj(&a).expect("checked"), o, at),
        T::Un(Op::FieldConst(i), a, at) if obj(&a).is_some() => Operand::FieldConst(obj(&a).expect("checked"), i, at),
        T::Call(b @ (Builtin::HEX_DISTANCE | Builtin::HEX_WALK | Builtin::HEX_SEES), _, ref args, at)
            if let [x, y] = args.as_slice()
                && let (Some(x), Some(y)) = (simple(x), simple(y)) =>
        {
            Operand::Hex2(b, x, y, at)
        }
        t if matches!(&t, T::Call(Builtin::MAX_L | Builtin::MIN_L | Builtin::MAX_D | Builtin::MIN_D, _, args, _) if args.len() == 2) => {
            Operand::Fx(lower(t))
        }
        T::Call(Builtin::GRID_LINE, g, args, at) => {
            if let [T::Leaf(x), T::Leaf(y), T::Leaf(dx), T::Leaf(dy)] = args.as_slice() {
                match (dx, dy) {
                    (Leaf::Const(dx), Leaf::Const(dy)) if let Some(f) = line_fn(*dx, *dy) => Operand::LineUnit(g, *x, *y, f, (*dx, *dy)),
                    _ => Operand::Line(g, [*x, *y, *dx, *dy]),
                }
            } else {
                Operand::Fx(lower(T::Call(Builtin::GRID_LINE, g, args, at)))
            }
        }
        T::Call(b, g, args, at) if args.iter().all(|a| simple(a).is_some()) => {
            Operand::Call(b.run(), g, args.iter().map(|a| simple(a).expect("checked")).collect(), at)
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
pub(super) fn chain(t: T, and: bool, out: &mut Vec<Operand>) {
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
