//! The operands a closure reads inline ([`Operand`]): a leaf, a grid cell with leaf
//! coordinates, an attribute or class constant through a short object path ([`Obj`]), a grid
//! line (along a unit direction: a counter made for it, [`line_fn`]), a hex or other built-in
//! of [`Simple`] operands, or a closure; and how each is read. `lower.rs` makes them from trees,
//! `spec.rs` turns them into readers of one kind.

use super::tree::*;
use super::*;
use crate::wgdl::run::builtins::{MAX_ARGS, RunFn};

/// An object reached from a leaf by at most two attribute hops (`this`, `this.owner`,
/// `mage`): each hop checks that the object is live.
#[derive(Clone, Copy)]
pub(super) enum Obj {
    Leaf(Leaf),
    Hop(Leaf, u32, usize),
}

impl Obj {
    #[inline(always)]
    pub(super) fn get(self, e: &Env) -> Result<i64, RuntimeError> {
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
pub(super) enum Operand {
    Leaf(Leaf),
    /// `<grid>[x, y]`: checked against the grid, then read.
    Cell(u16, Leaf, Leaf, usize),
    /// `obj.attr`, `obj.constant`.
    Field(Obj, u32, usize),
    FieldConst(Obj, u32, usize),
    /// `<grid>.line(x, y, dx, dy)` with leaf arguments.
    Line(u16, [Leaf; 4]),
    /// The same along a constant unit direction: [`Program::grid_line_unit`] made for it.
    LineUnit(u16, Leaf, Leaf, LineFn, (i64, i64)),
    /// `hex.distance`, `hex.walk` or `hex.sees` of two simple operands, computed inline.
    Hex2(Builtin, Simple, Simple, usize),
    /// A built-in function (its run function, its grid) of up to [`MAX_ARGS`] simple operands.
    Call(RunFn, u16, Box<[Simple]>, usize),
    Fx(Fx),
}

/// A grid line counter made for one unit direction.
pub(super) type LineFn = fn(&Program, &State, u16, i64, i64) -> i64;

/// `$body` with consts `$dx`, `$dy` set to direction `$d` when it is one of the eight unit
/// directions (each of dx, dy −1, 0 or 1, not both 0), else `$other`: the one list of them,
/// for code made per direction.
macro_rules! unit_direction {
    ($d:expr, |$dx:ident, $dy:ident| $body:expr, $other:expr) => {
        crate::wgdl::run::fast::operand::unit_direction!(@ $d, $dx, $dy, $body, $other,
            (1, 0) (-1, 0) (0, 1) (0, -1) (1, 1) (-1, -1) (1, -1) (-1, 1))
    };
    (@ $d:expr, $dx:ident, $dy:ident, $body:expr, $other:expr, $(($x:literal, $y:literal))*) => {
        match $d {
            $(($x, $y) => {
                const $dx: i64 = $x;
                const $dy: i64 = $y;
                $body
            })*
            _ => $other,
        }
    };
}
pub(super) use unit_direction;

/// The counter for direction (dx, dy), when both are -1, 0 or 1 and not both 0.
pub(in crate::wgdl) fn line_fn(dx: i64, dy: i64) -> Option<LineFn> {
    unit_direction!((dx, dy), |DX, DY| Some(Program::grid_line_unit::<DX, DY> as LineFn), None)
}

/// The operands a built-in's arguments can be inline.
#[derive(Clone, Copy)]
pub(super) enum Simple {
    Leaf(Leaf),
    Field(Obj, u32, usize),
}

impl Simple {
    #[inline(always)]
    pub(super) fn get(self, e: &Env) -> Result<i64, RuntimeError> {
        match self {
            Simple::Leaf(l) => Ok(l.get(e)),
            Simple::Field(obj, o, at) => e.p.field(e.st, obj.get(e)?, o, at),
        }
    }
}

impl Operand {
    #[inline(always)]
    pub(super) fn get(&self, e: &Env) -> Result<i64, RuntimeError> {
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
            Operand::LineUnit(g, x, y, f, _) => Ok(f(e.p, e.st, *g, x.get(e), y.get(e))),
            Operand::Hex2(b, x, y, at) => {
                // The arguments first, then their cells, as `Program::builtin` checks them.
                let (x, y) = (x.get(e)?, y.get(e)?);
                let h = e.p.hex.as_deref().expect("the compiler requires a hexmap for hex built-ins");
                let (x, y) = (e.p.cell(x, *at)?, e.p.cell(y, *at)?);
                Ok(match *b {
                    Builtin::HEX_DISTANCE => h.distance(x, y),
                    Builtin::HEX_WALK => h.walk(x, y),
                    _ => h.sees(x, y) as i64,
                })
            }
            Operand::Call(run, g, args, at) => {
                let mut v = [0i64; MAX_ARGS];
                for (slot, x) in v.iter_mut().zip(args.iter()) {
                    *slot = x.get(e)?;
                }
                run(e, *g, &v[..args.len()], *at)
            }
            Operand::Fx(f) => f(e),
        }
    }
}
