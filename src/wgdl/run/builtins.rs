//! The one table of built-in functions ([`BUILTINS`]): for each, its name as written in WGDL,
//! what it is called on, its parameters and result, what it reads of the state, and its run
//! function. The compiler (`compile/calls.rs`), the reference evaluator, the closures
//! (`fast/tree.rs`, `fast/lower.rs`), `deps.rs` and the compiled tier all read it.
//!
//! **Adding a built-in**: add one [`Spec`] row to [`BUILTINS`] and one run function below (a
//! plain `fn` of the [`RunFn`] shape: the environment, the grid, the argument values, the op
//! index for errors). Nothing else needs to change: the compiler finds the row by name, checks
//! the arguments' count and types and emits `Op::Call`; the evaluators call the run function;
//! `deps.rs` takes [`Spec::reads`]; the compiled tier leaves a call to the closures. Then test it
//! in `tests/closures.rs` and document it in `games/README.md` §9.4. A built-in that is hot may
//! later get a specialised lowering in `fast/lower.rs`, keyed off its [`Builtin`] constant (as
//! `max`, `hex.distance` and `board.line` have), which must give what the run function gives.

use crate::wgdl::parts::{ALL, GRID, Parts};
use crate::wgdl::program::Env;
use crate::wgdl::program::{RtKind, RuntimeError, rt};

/// A built-in function: its row in [`BUILTINS`] (defined with the bytecode that calls it,
/// `program/ops.rs`; its constants and methods are here).
pub use crate::wgdl::program::Builtin;

/// What a built-in is called on: nothing (`max(a, b)`), the hex map (`hex.walk(a, b)`) or a
/// declared grid (`board.runs(3)`, run with that grid's index).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(in crate::wgdl) enum On {
    Free,
    Hex,
    Grid,
}

/// The type of an argument.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(in crate::wgdl) enum Param {
    Long,
    /// A long or a double (the row's result is [`Ret::AsArgs`]).
    Number,
    /// A double: only in the double twin of a [`Ret::AsArgs`] row, whose long arguments the
    /// compiler has converted.
    Double,
    /// A direction set by name (`all`, `diagonal`, `forward`, …): the compiler passes its index
    /// in [`crate::wgdl::board::Boards::dirsets`] as a long.
    Dirs,
    /// A grid edge by name (`north`, `east`, `south`, `west`): passed as its index in
    /// [`crate::wgdl::board::EDGES`].
    Edge,
}

/// The type of a built-in's result.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(in crate::wgdl) enum Ret {
    Long,
    Double,
    Bool,
    /// As its arguments: a double when any of them is (then the long ones are converted and the
    /// row's double twin runs, the next row of the same name with [`Param::Double`] parameters),
    /// else a long. At most two parameters.
    AsArgs,
}

/// A built-in's run function: the environment (`e.p` the program, `e.st` the state), the grid's
/// index (0 when it is not called on a grid), the argument values (as many as the call has), and
/// the index of the op that reports errors.
pub(in crate::wgdl) type RunFn = fn(&Env, u16, &[i64], usize) -> Result<i64, RuntimeError>;

/// The most arguments a built-in takes (the evaluators keep them in an array of this size).
pub(in crate::wgdl) const MAX_ARGS: usize = 4;

/// One built-in function.
pub(in crate::wgdl) struct Spec {
    /// As written after its receiver: `max`, `distance` (`hex.distance`), `runs` (`board.runs`).
    pub name: &'static str,
    pub on: On,
    /// The parameters every call passes.
    pub params: &'static [Param],
    /// Trailing parameters a call may leave out, in order (none today).
    pub optional: &'static [Param],
    pub ret: Ret,
    /// What it reads of the state besides its arguments (`parts.rs`): the grids, or
    /// everything for what looks at who stands where.
    pub reads: Parts,
    /// Whether it needs a `hexOccupants` line (it asks who stands where).
    pub needs_occupants: bool,
    /// `None` for a special form that the compiler makes its own code for (`sumOf`, `countOf`,
    /// `sumRuns`: their arguments are a class or an expression evaluated per object or run).
    pub run: Option<RunFn>,
}

const fn row(name: &'static str, on: On, params: &'static [Param], ret: Ret, reads: Parts, run: RunFn) -> Spec {
    Spec { name, on, params, optional: &[], ret, reads, needs_occupants: false, run: Some(run) }
}

const fn special(name: &'static str, on: On) -> Spec {
    Spec { name, on, params: &[], optional: &[], ret: Ret::Long, reads: 0, needs_occupants: false, run: None }
}

/// `row` for a hex built-in that asks who stands where.
const fn occ(name: &'static str, params: &'static [Param], ret: Ret, run: RunFn) -> Spec {
    Spec { name, on: On::Hex, params, optional: &[], ret, reads: ALL, needs_occupants: true, run: Some(run) }
}

use crate::wgdl::board::play::{can_move, grid_cell_number, grid_count, grid_flips, grid_joins, grid_longest, grid_x, grid_y};
use Param::{Dirs, Double as D, Edge, Long as L, Number as N};

/// Every built-in function, in the order the compiler's "unknown function" message lists them.
pub(in crate::wgdl) const BUILTINS: &[Spec] = &[
    row("max", On::Free, &[N, N], Ret::AsArgs, 0, max_l),
    row("max", On::Free, &[D, D], Ret::Double, 0, max_d),
    row("min", On::Free, &[N, N], Ret::AsArgs, 0, min_l),
    row("min", On::Free, &[D, D], Ret::Double, 0, min_d),
    row("abs", On::Free, &[N], Ret::AsArgs, 0, abs_l),
    row("abs", On::Free, &[D], Ret::Double, 0, abs_d),
    special("sumOf", On::Free),
    special("countOf", On::Free),
    // Action names as arguments: the compiler passes their list's index as the grid.
    row("canMove", On::Free, &[], Ret::Bool, ALL, can_move),
    row("distance", On::Hex, &[L, L], Ret::Long, 0, hex_distance),
    row("walk", On::Hex, &[L, L], Ret::Long, 0, hex_walk),
    row("sees", On::Hex, &[L, L], Ret::Bool, 0, hex_sees),
    row("wall", On::Hex, &[L], Ret::Bool, 0, hex_wall),
    occ("free", &[L], Ret::Bool, hex_free),
    row("start", On::Hex, &[L, L], Ret::Long, 0, hex_start),
    occ("hidden", &[L, L], Ret::Bool, hex_hidden),
    occ("approach", &[L, L, L, L], Ret::Long, hex_approach),
    occ("stepToward", &[L, L, L], Ret::Long, hex_step_toward),
    row("cells", On::Hex, &[], Ret::Long, 0, hex_cells),
    row("line", On::Grid, &[L, L, L, L], Ret::Long, GRID, grid_line),
    row("runs", On::Grid, &[L], Ret::Long, GRID, grid_runs),
    special("sumRuns", On::Grid),
    row("swaps", On::Grid, &[L], Ret::Long, GRID, grid_swaps),
    row("hasSwap", On::Grid, &[L], Ret::Bool, GRID, grid_has_swap),
    row("canSwap", On::Grid, &[L, L], Ret::Bool, GRID, grid_can_swap),
    row("group", On::Grid, &[L, L], Ret::Long, GRID, grid_group),
    row("groupLead", On::Grid, &[L, L, L], Ret::Bool, GRID, grid_group_lead),
    row("groups", On::Grid, &[L, L], Ret::Long, GRID, grid_groups),
    row("groupDistinct", On::Grid, &[L, L], Ret::Long, GRID, grid_group_distinct),
    // Boards (run/board/play.rs).
    row("x", On::Grid, &[L], Ret::Long, 0, grid_x),
    row("y", On::Grid, &[L], Ret::Long, 0, grid_y),
    row("cell", On::Grid, &[L, L], Ret::Long, 0, grid_cell_number),
    row("count", On::Grid, &[L], Ret::Long, GRID, grid_count),
    row("flips", On::Grid, &[L, L, Dirs], Ret::Long, GRID, grid_flips),
    row("joins", On::Grid, &[L, Dirs, Edge, Edge], Ret::Bool, GRID, grid_joins),
    row("longest", On::Grid, &[L, Dirs], Ret::Long, GRID, grid_longest),
    special("any", On::Grid),
    special("countCells", On::Grid),
];

const fn same(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

/// The row of `name` on `on`: its first (`twin` false) or its double twin (a row whose first
/// parameter is [`Param::Double`]). Panics, when the constants below are made, if there is none.
const fn named(on: On, name: &str, twin: bool) -> Builtin {
    let mut i = 0;
    while i < BUILTINS.len() {
        let s = &BUILTINS[i];
        let is_twin = !s.params.is_empty() && matches!(s.params[0], Param::Double);
        if s.on as u8 == on as u8 && same(s.name, name) && is_twin == twin {
            return Builtin(i as u8);
        }
        i += 1;
    }
    panic!("no such built-in")
}

/// The built-ins that code elsewhere knows by name (specialised lowerings, analyses).
impl Builtin {
    pub(in crate::wgdl) const MAX_L: Builtin = named(On::Free, "max", false);
    pub(in crate::wgdl) const MAX_D: Builtin = named(On::Free, "max", true);
    pub(in crate::wgdl) const MIN_L: Builtin = named(On::Free, "min", false);
    pub(in crate::wgdl) const MIN_D: Builtin = named(On::Free, "min", true);
    pub(in crate::wgdl) const HEX_DISTANCE: Builtin = named(On::Hex, "distance", false);
    pub(in crate::wgdl) const HEX_WALK: Builtin = named(On::Hex, "walk", false);
    pub(in crate::wgdl) const HEX_SEES: Builtin = named(On::Hex, "sees", false);
    pub(in crate::wgdl) const HEX_FREE: Builtin = named(On::Hex, "free", false);
    pub(in crate::wgdl) const HEX_HIDDEN: Builtin = named(On::Hex, "hidden", false);
    pub(in crate::wgdl) const GRID_LINE: Builtin = named(On::Grid, "line", false);
    pub(in crate::wgdl) const GRID_CAN_SWAP: Builtin = named(On::Grid, "canSwap", false);
    pub(in crate::wgdl) const GRID_JOINS: Builtin = named(On::Grid, "joins", false);

    /// Its row of the table.
    #[inline]
    pub(in crate::wgdl) fn spec(self) -> &'static Spec {
        &BUILTINS[self.0 as usize]
    }

    /// Its run function (not for a special form, which has its own op).
    #[inline]
    pub(in crate::wgdl) fn run(self) -> RunFn {
        self.spec().run.expect("a special form is compiled to its own op")
    }

    /// The built-in `name` called on `on` (a double twin is never found by name).
    pub(in crate::wgdl) fn find(on: On, name: &str) -> Option<Builtin> {
        BUILTINS.iter().position(|s| s.on == on && s.name == name && s.params.first() != Some(&Param::Double)).map(|i| Builtin(i as u8))
    }

    /// The double twin of an [`Ret::AsArgs`] built-in: the next row of the same name.
    pub(in crate::wgdl) fn twin(self) -> Builtin {
        let s = self.spec();
        let t = Builtin(self.0 + 1);
        debug_assert!(t.spec().name == s.name && t.spec().params.first() == Some(&Param::Double));
        t
    }

    /// Every name the compiler knows as a function, in table order: `max`, `hex.walk`,
    /// `<grid>.runs`, …
    pub(in crate::wgdl) fn known() -> String {
        let mut names: Vec<String> = Vec::new();
        for s in BUILTINS {
            let n = match s.on {
                On::Free => s.name.to_string(),
                On::Hex => format!("hex.{}", s.name),
                On::Grid => format!("<grid>.{}", s.name),
            };
            if !names.contains(&n) {
                names.push(n);
            }
        }
        names.join(", ")
    }
}

// ------------------------------------------------------------------ run functions

#[inline(always)]
fn d(v: i64) -> f64 {
    f64::from_bits(v as u64)
}

#[inline(always)]
fn bits(v: f64) -> i64 {
    v.to_bits() as i64
}

fn max_l(_: &Env, _: u16, a: &[i64], _: usize) -> Result<i64, RuntimeError> {
    Ok(a[0].max(a[1]))
}

fn min_l(_: &Env, _: u16, a: &[i64], _: usize) -> Result<i64, RuntimeError> {
    Ok(a[0].min(a[1]))
}

fn abs_l(e: &Env, _: u16, a: &[i64], at: usize) -> Result<i64, RuntimeError> {
    a[0].checked_abs().ok_or_else(|| rt(RtKind::Overflow { a: 0, op: "-", b: a[0] }, e.p.spans[at]))
}

fn max_d(_: &Env, _: u16, a: &[i64], _: usize) -> Result<i64, RuntimeError> {
    Ok(bits(d(a[0]).max(d(a[1]))))
}

fn min_d(_: &Env, _: u16, a: &[i64], _: usize) -> Result<i64, RuntimeError> {
    Ok(bits(d(a[0]).min(d(a[1]))))
}

fn abs_d(_: &Env, _: u16, a: &[i64], _: usize) -> Result<i64, RuntimeError> {
    Ok(bits(d(a[0]).abs()))
}

/// The hex map (the compiler requires one for a hex built-in).
#[inline]
fn hex<'a>(e: &Env<'a>) -> &'a crate::wgdl::hex::HexMap {
    e.p.hex.as_deref().expect("the compiler requires a hexmap for hex built-ins")
}

/// Argument `k` as a cell of the map, or the off-map error.
#[inline]
fn cell(e: &Env, a: &[i64], k: usize, at: usize) -> Result<usize, RuntimeError> {
    e.p.cell(a[k], at)
}

fn hex_distance(e: &Env, _: u16, a: &[i64], at: usize) -> Result<i64, RuntimeError> {
    Ok(hex(e).distance(cell(e, a, 0, at)?, cell(e, a, 1, at)?))
}

fn hex_walk(e: &Env, _: u16, a: &[i64], at: usize) -> Result<i64, RuntimeError> {
    Ok(hex(e).walk(cell(e, a, 0, at)?, cell(e, a, 1, at)?))
}

fn hex_sees(e: &Env, _: u16, a: &[i64], at: usize) -> Result<i64, RuntimeError> {
    Ok(hex(e).sees(cell(e, a, 0, at)?, cell(e, a, 1, at)?) as i64)
}

fn hex_wall(e: &Env, _: u16, a: &[i64], at: usize) -> Result<i64, RuntimeError> {
    Ok(hex(e).wall[cell(e, a, 0, at)?] as i64)
}

fn hex_free(e: &Env, _: u16, a: &[i64], at: usize) -> Result<i64, RuntimeError> {
    let h = hex(e);
    let c = cell(e, a, 0, at)?;
    Ok((!h.wall[c] && !e.p.occupied(e, c)?) as i64)
}

fn hex_start(e: &Env, _: u16, a: &[i64], at: usize) -> Result<i64, RuntimeError> {
    let h = hex(e);
    let (side, k) = (a[0], a[1]);
    let have = h.starts.get(side.max(0) as usize).map_or(0, |v| v.len());
    if side < 0 || k < 0 || k as usize >= have {
        return Err(rt(RtKind::NoStartPoint { side, k, have }, e.p.spans[at]));
    }
    Ok(h.starts[side as usize][k as usize] as i64)
}

fn hex_hidden(e: &Env, _: u16, a: &[i64], at: usize) -> Result<i64, RuntimeError> {
    let h = hex(e);
    let c = cell(e, a, 0, at)?;
    Ok(e.p.hidden(e, h, c, a[1])? as i64)
}

/// The nearest free cell (by walk, then number) other than `from` within the budget from which
/// the target is in range and in sight: cells in walk order, stopping at the first.
fn hex_approach(e: &Env, _: u16, a: &[i64], at: usize) -> Result<i64, RuntimeError> {
    let h = hex(e);
    let from = cell(e, a, 0, at)?;
    let target = cell(e, a, 1, at)?;
    let found = h.approach(from, target, a[2], a[3], |c| Ok::<_, RuntimeError>(!e.p.occupied(e, c)?))?;
    Ok(found.map_or(-1, |c| c as i64))
}

fn hex_step_toward(e: &Env, _: u16, a: &[i64], at: usize) -> Result<i64, RuntimeError> {
    let h = hex(e);
    let from = cell(e, a, 0, at)?;
    let to = cell(e, a, 1, at)?;
    let mut err = None;
    let found = h.step_toward(from, to, a[2], |c| match e.p.occupied(e, c) {
        Ok(o) => !o,
        Err(x) => {
            err = Some(x);
            true
        }
    });
    if let Some(x) = err {
        return Err(x);
    }
    Ok(found.map_or(-1, |c| c as i64))
}

fn hex_cells(e: &Env, _: u16, _: &[i64], _: usize) -> Result<i64, RuntimeError> {
    Ok(e.p.hex.as_ref().map_or(0, |h| h.len() as i64))
}

fn grid_line(e: &Env, g: u16, a: &[i64], _: usize) -> Result<i64, RuntimeError> {
    Ok(e.p.grid_line(e.st, g, a))
}

fn grid_runs(e: &Env, g: u16, a: &[i64], _: usize) -> Result<i64, RuntimeError> {
    Ok(e.p.tile_runs(e.st, g, a[0]))
}

fn grid_swaps(e: &Env, g: u16, a: &[i64], _: usize) -> Result<i64, RuntimeError> {
    Ok(e.p.tile_swaps(e.st, g, a[0]))
}

fn grid_has_swap(e: &Env, g: u16, a: &[i64], _: usize) -> Result<i64, RuntimeError> {
    Ok(e.p.tile_has_swap(e.st, g, a[0]) as i64)
}

fn grid_can_swap(e: &Env, g: u16, a: &[i64], at: usize) -> Result<i64, RuntimeError> {
    Ok(e.p.tile_can_swap(e.st, g, a[0], a[1], e.p.spans[at])? as i64)
}

fn grid_group(e: &Env, g: u16, a: &[i64], at: usize) -> Result<i64, RuntimeError> {
    e.p.tile_group(e.st, g, a[0], a[1], e.p.spans[at])
}

fn grid_group_lead(e: &Env, g: u16, a: &[i64], at: usize) -> Result<i64, RuntimeError> {
    Ok(e.p.tile_group_lead(e.st, g, a[0], a[1], a[2], e.p.spans[at])? as i64)
}

fn grid_groups(e: &Env, g: u16, a: &[i64], _: usize) -> Result<i64, RuntimeError> {
    Ok(e.p.tile_groups(e.st, g, a[0], a[1]))
}

fn grid_group_distinct(e: &Env, g: u16, a: &[i64], at: usize) -> Result<i64, RuntimeError> {
    e.p.tile_group_distinct(e.st, g, a[0], a[1], e.p.spans[at])
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The table's own rules: names unique per receiver (but for double twins, right after
    /// their row), at most [`MAX_ARGS`] arguments, `AsArgs` rows of at most two numbers.
    #[test]
    fn the_table_is_well_formed() {
        assert!(BUILTINS.len() <= u8::MAX as usize);
        for (i, s) in BUILTINS.iter().enumerate() {
            assert!(s.params.len() + s.optional.len() <= MAX_ARGS, "{}", s.name);
            let twin = s.params.first() == Some(&Param::Double);
            if twin {
                let prev = &BUILTINS[i - 1];
                assert!(prev.name == s.name && prev.ret == Ret::AsArgs && prev.params.len() == s.params.len(), "{}", s.name);
                assert_eq!(s.ret, Ret::Double);
            } else {
                assert_eq!(Builtin::find(s.on, s.name), Some(Builtin(i as u8)), "{} found by name", s.name);
            }
            if s.ret == Ret::AsArgs {
                assert!(s.params.len() <= 2 && s.params.iter().all(|p| *p == Param::Number), "{}", s.name);
                assert_eq!(Builtin(i as u8).twin().spec().name, s.name);
            }
            assert!(s.run.is_some() || s.params.is_empty(), "a special form's arguments are the compiler's: {}", s.name);
        }
        assert_eq!(Builtin::GRID_LINE.spec().name, "line");
        assert_eq!(Builtin::MAX_D.spec().params, &[Param::Double, Param::Double]);
    }

    /// The list the compiler's "unknown function" message gives: the table's order (the board
    /// built-ins of issue 55 added where their rows are).
    #[test]
    fn the_known_names_read_as_before() {
        assert_eq!(
            Builtin::known(),
            "max, min, abs, sumOf, countOf, canMove, hex.distance, hex.walk, hex.sees, hex.wall, hex.free, hex.start, \
hex.hidden, hex.approach, hex.stepToward, hex.cells, <grid>.line, <grid>.runs, <grid>.sumRuns, <grid>.swaps, <grid>.hasSwap, <grid>.canSwap, <grid>.group, \
<grid>.groupLead, <grid>.groups, <grid>.groupDistinct, <grid>.x, <grid>.y, <grid>.cell, <grid>.count, <grid>.flips, <grid>.joins, \
<grid>.longest, <grid>.any, <grid>.countCells"
        );
    }
}
