//! Operands specialised by kind when a closure is built. An [`Operand`] read at run time
//! matches on its kind every time (and a [`Leaf`] on its own kind inside that). The closures of
//! the long comparisons, checked `+ − ×`, two-operand `&&`/`||`, leaves, fields and the members
//! of longer chains are instead built for the kinds of the operands they were given, so that the
//! common shapes — `this.x == 0`, `mage.hp > 0`, `height[col, 0] < 6`,
//! `this.owner.ap >= this.cost`, `board.line(col, this.row, 1, 0) >= 4` — read their operands
//! with no kind test (an operand of another kind, such as `hex.distance(…)`, is read through
//! its match as before). The values, the order of evaluation and the errors are those of
//! [`Operand::get`]: each kind below reads exactly what that match arm reads.

use super::operand::*;
use super::tree::*;
use super::*;

/// An operand whose kind is known when the closure is built.
pub(super) trait Get: Send + Sync + 'static {
    fn get(&self, e: &Env) -> Result<i64, RuntimeError>;
}

/// `this.x` ([`Leaf::This`]).
pub(super) struct ThisSlot(pub(super) u32);
/// A bound object's attribute ([`Leaf::Bound`]).
pub(super) struct BoundSlot(pub(super) u32);
/// An absolute slot ([`Leaf::Slot`]).
pub(super) struct AbsSlot(pub(super) u32);
/// Any other leaf, read through its match.
pub(super) struct AnyLeaf(pub(super) Leaf);
/// `<grid>[x, y]` with leaf coordinates ([`Operand::Cell`]).
pub(super) struct Cell(pub(super) u16, pub(super) Leaf, pub(super) Leaf, pub(super) usize);
/// `obj.attr` through an object path ([`Operand::Field`]).
pub(super) struct Field(pub(super) Obj, pub(super) u32, pub(super) usize);
/// `this.ref.attr`: the object in `this`'s slot, then its attribute (`this.owner.ap`).
pub(super) struct FieldOfThis(pub(super) u32, pub(super) u32, pub(super) usize);
/// `bound.ref.attr`: the same through the bound object's slot.
pub(super) struct FieldOfBound(pub(super) u32, pub(super) u32, pub(super) usize);
/// `<grid>[n, k]`: the cell at the bound number's column and a constant row (`height[col, 0]`).
pub(super) struct CellAtBound(pub(super) u16, pub(super) i64, pub(super) usize);
/// `<grid>.line(x, y, dx, dy)` along a constant unit direction ([`Operand::LineUnit`]).
pub(super) struct LineAt(pub(super) u16, pub(super) Leaf, pub(super) Leaf, pub(super) LineFn);
/// `<grid>.line(n, this.row, DX, DY)` from the bound number's column and a row in `this`, the
/// direction in its type, so that the count is made inline in the closure that reads it
/// (`board.line(col, this.row, 1, 0) >= 4`), not through a function pointer.
pub(super) struct LineAtBoundThis<const DX: i64, const DY: i64>(pub(super) u16, pub(super) u32);
/// Any other operand, read through its match.
pub(super) struct Other(pub(super) Operand);

impl Get for ThisSlot {
    #[inline(always)]
    fn get(&self, e: &Env) -> Result<i64, RuntimeError> {
        Ok(e.st.slots[(e.this_base + self.0) as usize])
    }
}
impl Get for BoundSlot {
    #[inline(always)]
    fn get(&self, e: &Env) -> Result<i64, RuntimeError> {
        Ok(e.st.slots[(e.bound_base + self.0) as usize])
    }
}
impl Get for AbsSlot {
    #[inline(always)]
    fn get(&self, e: &Env) -> Result<i64, RuntimeError> {
        Ok(e.st.slots[self.0 as usize])
    }
}
impl Get for AnyLeaf {
    #[inline(always)]
    fn get(&self, e: &Env) -> Result<i64, RuntimeError> {
        Ok(self.0.get(e))
    }
}
impl Get for Cell {
    #[inline(always)]
    fn get(&self, e: &Env) -> Result<i64, RuntimeError> {
        e.p.grid_read(e.st, self.0, self.1.get(e), self.2.get(e), self.3)
    }
}
impl Get for Field {
    #[inline(always)]
    fn get(&self, e: &Env) -> Result<i64, RuntimeError> {
        e.p.field(e.st, self.0.get(e)?, self.1, self.2)
    }
}
impl Get for FieldOfThis {
    #[inline(always)]
    fn get(&self, e: &Env) -> Result<i64, RuntimeError> {
        e.p.field(e.st, e.st.slots[(e.this_base + self.0) as usize], self.1, self.2)
    }
}
impl Get for FieldOfBound {
    #[inline(always)]
    fn get(&self, e: &Env) -> Result<i64, RuntimeError> {
        e.p.field(e.st, e.st.slots[(e.bound_base + self.0) as usize], self.1, self.2)
    }
}
impl Get for CellAtBound {
    #[inline(always)]
    fn get(&self, e: &Env) -> Result<i64, RuntimeError> {
        e.p.grid_read(e.st, self.0, e.bound as i64, self.1, self.2)
    }
}
impl Get for LineAt {
    #[inline(always)]
    fn get(&self, e: &Env) -> Result<i64, RuntimeError> {
        Ok((self.3)(e.p, e.st, self.0, self.1.get(e), self.2.get(e)))
    }
}
impl<const DX: i64, const DY: i64> Get for LineAtBoundThis<DX, DY> {
    #[inline(always)]
    fn get(&self, e: &Env) -> Result<i64, RuntimeError> {
        Ok(e.p.grid_line_unit::<DX, DY>(e.st, self.0, e.bound as i64, e.st.slots[(e.this_base + self.1) as usize]))
    }
}
impl Get for Other {
    #[inline(always)]
    fn get(&self, e: &Env) -> Result<i64, RuntimeError> {
        self.0.get(e)
    }
}

/// An operand as a closure built for its kind.
pub(super) fn closure(x: Operand) -> Fx {
    match x {
        Operand::Fx(f) => f,
        x => by_kind!(x, |g| fx_of(move |e: &Env| g.get(e))),
    }
}

/// Binds `$g` to operand `$x` as the [`Get`] of its kind and evaluates `$body` (a closure
/// built for that kind).
macro_rules! by_kind {
    ($x:expr, |$g:ident| $body:expr) => {
        match $x {
            crate::wgdl::run::fast::operand::Operand::Leaf(crate::wgdl::run::fast::tree::Leaf::This(o)) => {
                let $g = crate::wgdl::run::fast::spec::ThisSlot(o);
                $body
            }
            crate::wgdl::run::fast::operand::Operand::Leaf(crate::wgdl::run::fast::tree::Leaf::Bound(o)) => {
                let $g = crate::wgdl::run::fast::spec::BoundSlot(o);
                $body
            }
            crate::wgdl::run::fast::operand::Operand::Leaf(crate::wgdl::run::fast::tree::Leaf::Slot(s)) => {
                let $g = crate::wgdl::run::fast::spec::AbsSlot(s);
                $body
            }
            crate::wgdl::run::fast::operand::Operand::Leaf(l) => {
                let $g = crate::wgdl::run::fast::spec::AnyLeaf(l);
                $body
            }
            crate::wgdl::run::fast::operand::Operand::Cell(g, x, y, at) => {
                let $g = crate::wgdl::run::fast::spec::Cell(g, x, y, at);
                $body
            }
            crate::wgdl::run::fast::operand::Operand::Field(
                crate::wgdl::run::fast::operand::Obj::Leaf(crate::wgdl::run::fast::tree::Leaf::This(r)),
                i,
                at,
            ) => {
                let $g = crate::wgdl::run::fast::spec::FieldOfThis(r, i, at);
                $body
            }
            crate::wgdl::run::fast::operand::Operand::Field(
                crate::wgdl::run::fast::operand::Obj::Leaf(crate::wgdl::run::fast::tree::Leaf::Bound(r)),
                i,
                at,
            ) => {
                let $g = crate::wgdl::run::fast::spec::FieldOfBound(r, i, at);
                $body
            }
            crate::wgdl::run::fast::operand::Operand::Field(o, i, at) => {
                let $g = crate::wgdl::run::fast::spec::Field(o, i, at);
                $body
            }
            x => {
                let $g = crate::wgdl::run::fast::spec::Other(x);
                $body
            }
        }
    };
}
pub(super) use by_kind;

/// [`by_kind!`] with the kinds that are worth a closure of their own only against a constant
/// (one closure per operator, not per pair): grid cells at a bound number, grid lines.
macro_rules! by_kind_wide {
    ($x:expr, |$g:ident| $body:expr) => {
        match $x {
            crate::wgdl::run::fast::operand::Operand::Cell(
                g,
                crate::wgdl::run::fast::tree::Leaf::BoundObj,
                crate::wgdl::run::fast::tree::Leaf::Const(k),
                at,
            ) => {
                let $g = crate::wgdl::run::fast::spec::CellAtBound(g, k, at);
                $body
            }
            crate::wgdl::run::fast::operand::Operand::LineUnit(
                g,
                crate::wgdl::run::fast::tree::Leaf::BoundObj,
                crate::wgdl::run::fast::tree::Leaf::This(o),
                _,
                d,
            ) => {
                use crate::wgdl::run::fast::spec::LineAtBoundThis as L;
                // `line_fn` makes a `LineUnit` for the unit directions only.
                crate::wgdl::run::fast::operand::unit_direction!(
                    d,
                    |DX, DY| {
                        let $g = L::<DX, DY>(g, o);
                        $body
                    },
                    unreachable!("a grid line along {d:?} is not a unit direction")
                )
            }
            crate::wgdl::run::fast::operand::Operand::LineUnit(g, x, y, f, _) => {
                let $g = crate::wgdl::run::fast::spec::LineAt(g, x, y, f);
                $body
            }
            x => crate::wgdl::run::fast::spec::by_kind!(x, |$g| $body),
        }
    };
}
pub(super) use by_kind_wide;
