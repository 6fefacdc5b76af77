//! Finding cell tests (`run/cells.rs`): the leading conditions after the owner's of a
//! `forEveryCell`, `forEveryStep` or `forEveryJump` action that compare one cell of the bound
//! move with literals or the owner's attributes — `board[to] == 0`, `board[from] != this.piece`,
//! `(board[over] == this.foeMan) || (board[over] == this.foeKing)`. Read from the finished
//! bytecode, so the patterns are the compiler's own output for those forms; anything else ends
//! the run of tests and is interpreted as before.

use crate::wgdl::board::StepTable;
use crate::wgdl::cells::{CellTest, CellTests, MAX_CELL_TESTS, Val};
use crate::wgdl::program::{ActionInfo, BindKind, GridInfo, Op};

/// The cell tests of `info` (its conditions' code in `code`), if its first condition after the
/// owner's is one.
pub(super) fn cell_tests(code: &[Op], info: &ActionInfo, grids: &[GridInfo], tables: &[StepTable]) -> Option<CellTests> {
    // The grid the binding's cells are on, and how many cells a bound number can name.
    let (grid, table) = match info.bind {
        BindKind::Step(t) => (tables.get(t as usize)?.grid, Some(t)),
        BindKind::Number(lo, hi) if lo <= hi => {
            // The first grid whose cells every bound number names (checked per test below).
            (u16::MAX, None)
        }
        _ => return None,
    };
    let mut out = CellTests::default();
    let mut on: Option<u16> = (grid != u16::MAX).then_some(grid);
    for e in &info.conditions[info.owner_conds.min(info.conditions.len())..] {
        if out.n as usize == MAX_CELL_TESTS {
            break;
        }
        let ops = &code[e.start as usize..(e.start + e.len) as usize];
        let Some((test, g)) = test_of(ops, table) else { break };
        if *on.get_or_insert(g) != g {
            break;
        }
        // A bound number must name a cell of the grid (else the condition reports it).
        if let BindKind::Number(_, hi) = info.bind {
            let gi = grids.get(g as usize)?;
            if hi as u64 >= gi.width as u64 * gi.height as u64 {
                break;
            }
        }
        out.tests[out.n as usize] = test;
        out.n += 1;
    }
    let g = on?;
    out.base = grids.get(g as usize)?.base;
    (out.n > 0).then_some(out)
}

/// One condition's code as a test: a comparison, or `||` of two equalities on one cell.
fn test_of(ops: &[Op], table: Option<u16>) -> Option<(CellTest, u16)> {
    if let Some(r) = compare(ops, table) {
        return Some(r);
    }
    // `A || B`: A's code, OrJump(len B + 1), B's code.
    let j = ops.iter().position(|op| matches!(op, Op::OrJump(_)))?;
    let (Op::OrJump(off), a, b) = (ops[j], &ops[..j], &ops[j + 1..]) else { return None };
    let ((ta, ga), (tb, gb)) = (compare(a, table)?, compare(b, table)?);
    (off as usize == b.len() + 1 && ga == gb && ta.at == tb.at && !ta.ne && !tb.ne)
        .then_some((CellTest { at: ta.at, ne: false, vals: [ta.vals[0], tb.vals[0]] }, ga))
}

/// `cell == v`, `cell != v`, `v == cell` or `v != cell`.
fn compare(ops: &[Op], table: Option<u16>) -> Option<(CellTest, u16)> {
    let (&last, body) = ops.split_last()?;
    let ne = match last {
        Op::Eq => false,
        Op::Ne => true,
        _ => return None,
    };
    let (at, g, v) = match body {
        [c @ .., v] => match (cell(c, table), val(*v)) {
            (Some((at, g)), Some(v)) => (at, g, v),
            _ => {
                let (v, c) = body.split_first()?;
                let (at, g) = cell(c, table)?;
                (at, g, val(*v)?)
            }
        },
        [] => return None,
    };
    Some((CellTest { at, ne, vals: [v, v] }, g))
}

/// `<grid>[<the bound cell>]` or `<grid>[from|over|to]` of the binding's table: (which, grid).
fn cell(ops: &[Op], table: Option<u16>) -> Option<(u8, u16)> {
    match (ops, table) {
        ([Op::BoundObj, Op::GridIndex(g), Op::Load], None) => Some((0, *g)),
        ([Op::StepCell(t, k), Op::GridIndex(g), Op::Load], Some(own)) if *t == own && *k < 3 => Some((*k, *g)),
        _ => None,
    }
}

/// A value fixed for the owner.
fn val(op: Op) -> Option<Val> {
    match op {
        Op::Const(c) => Some(Val::Const(c)),
        Op::This(o) => Some(Val::This(o)),
        Op::ThisConst(i) => Some(Val::ThisConst(i)),
        _ => None,
    }
}
