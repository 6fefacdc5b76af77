//! The bytecode: expression ranges ([`ExprId`]), the instructions ([`Op`]), the built-ins they
//! call ([`Builtin`], a row of the table in `run/builtins.rs`), the places an assignment writes
//! ([`Place`]) and the compiled consequences ([`Cons`], [`ConsInfo`]) with their tile-grid operations.

use super::*;

/// One bytecode instruction. Loads push, operators pop their operands and push the result.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Op {
    Const(i64),
    /// An absolute slot: an attribute of an initial object named by its description.
    Slot(u32),
    /// `this.<attr>` / bound instance `.<attr>` by offset.
    This(u32),
    Bound(u32),
    /// Class constants of `this` / of the bound object.
    ThisConst(u32),
    BoundConst(u32),
    /// A forEveryGOD binding: the description's default instance value / constant.
    GodInit(u32),
    GodConst(u32),
    /// A named object's class constant that is a declared parameter: read from its description
    /// at run time (not folded into the code), so that [`Program::with_parameters`] can change it.
    NamedConst(GodId, u32),
    /// Push the object index of `this` / of the bound instance.
    ThisObj,
    BoundObj,
    /// Pop an object, push its attribute (error on `null` or a deleted object).
    Field(u32),
    FieldConst(u32),
    /// Pop an object, push its description's name (a symbol).
    NameOf,
    /// The bound description's name.
    GodName,
    /// A game value store counter, and the sum over the subtree below a node.
    StoreOwn(u32),
    StoreSum(u32),
    Time,
    SessionTime,
    Sessions,
    Moves,
    AddL,
    SubL,
    MulL,
    DivL,
    AddD,
    SubD,
    MulD,
    DivD,
    NegL,
    NegD,
    /// Convert the top of the stack / the value under it from long to double.
    L2D,
    L2DUnder,
    Eq,
    Ne,
    LtL,
    LeL,
    GtL,
    GeL,
    EqD,
    NeD,
    LtD,
    LeD,
    GtD,
    GeD,
    Not,
    Xor,
    /// Short-circuit: if the top is false (true), jump forward keeping it; else pop it.
    AndJump(u32),
    OrJump(u32),
    /// A built-in function (src/wgdl/run/builtins.rs), on grid `.1` (0 when not on a grid), of
    /// `.2` arguments: pops them, pushes the result.
    Call(Builtin, u16, u8),
    /// Jump over the next n ops (an aggregate's inner expression, evaluated on its own).
    Skip(u32),
    /// Pops y and x, pushes the absolute slot of grid cell (x, y) (error when off the grid).
    GridCell(u16),
    /// Pops a slot index, pushes the slot's value.
    Load,
    /// An aggregate over the live objects of a class (`sumOf`, `countOf`).
    Agg(u16),
    /// Pops min, pushes the sum of aggregate `.1`'s expression over the runs of ≥ min of grid `.0`.
    GridSumRuns(u16, u16),
    /// `game.actor` (the object whose turn it is, or `null`), `game.round`, `game.turns`, `game.toMove`.
    Actor,
    Round,
    Turns,
    ToMove,
    /// Pops b and a, pushes `a % b` (extension; error when b is 0).
    ModL,
    /// Pops a cell number c, pushes the absolute slot of cell c of the grid (error when off it).
    GridIndex(u16),
    /// Pushes cell k (0 from, 1 over, 2 to) of the bound move of step table `.0`.
    StepCell(u16, u8),
}

/// A built-in function: its row in the one table `BUILTINS` (src/wgdl/run/builtins.rs, which
/// also holds its methods and named constants).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Builtin(pub u8);

/// Where a direct consequence writes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Place {
    Slot(u32),
    This(u32),
    Bound(u32),
    /// The object computed by an expression, at an offset.
    Field(ExprId, u32),
    /// The absolute slot computed by an expression (a grid cell).
    Dyn(ExprId),
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum GodSel {
    Fixed(GodId),
    Bound,
}

/// A store path segment after the first computed one: the child is looked up by symbol.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Segment {
    Sym(i64),
    /// A string-valued expression picks the child.
    Dynamic(ExprId),
}

#[derive(Clone, Debug, PartialEq)]
pub enum Cons {
    /// Value conversion long→double is compiled into the expression.
    Assign {
        place: Place,
        value: ExprId,
    },
    /// `conditional <cond> <t1> <t2> …`: the condition once; if it holds, the targets in order
    /// (each sees the effects of the ones before).
    Conditional {
        cond: ExprId,
        then: Vec<ConsId>,
    },
    Timed {
        delay: ExprId,
        delay_is_double: bool,
        then: ConsId,
    },
    Create {
        god: GodSel,
        assign: Option<Place>,
    },
    /// Increment the counter at `node`, or below it along `rest` when parts are computed.
    GameIncrease {
        node: u32,
        rest: Vec<Segment>,
        by: Option<ExprId>,
    },
    Delete {
        obj: ExprId,
    },
    EndSession,
    EndTurn,
    /// `do <grid>.<op>(args)`: a tile-grid operation (src/wgdl/run/tiles/mod.rs).
    Tile {
        grid: u16,
        op: TileOp,
        args: Vec<ExprId>,
    },
}

/// The tile-grid operations of a `do` consequence.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TileOp {
    /// `swap(s)`: exchange the two cells of swap number s.
    Swap,
    /// `clearRuns(min)`: empty (0) every cell of a run of ≥ min.
    ClearRuns,
    /// `fall()`: in every column the tiles drop to the bottom, keeping their order.
    Fall,
    /// `refill(n [, w1, …, wk])`: every empty cell, column by column, bottom to top, gets 1 + a
    /// draw of n, uniform or weighted by w1 … wk.
    Refill,
    /// `deal(n, min [, seed [, w1, …, wk]])`: every cell, in index order, gets 1 + a draw of n
    /// (from the stream of `seed` when it is not 0, weighted by w1 … wk when given), redrawn
    /// while it would complete a run of min with the cells to its left or below it.
    Deal,
    /// `clearGroup(c, tol)`: empty every cell of the connected group of cell c (nothing if c is
    /// empty).
    ClearGroup,
    /// `flip(c, v, dirs)`: every cell that placing v on cell c brackets along the directions
    /// becomes v (Othello's flips; games/README.md §10).
    Flip,
}

/// One tile-grid operation as the compiler knows it: its name, its required parameters as the
/// help text names them (their count is the fewest arguments), and the optional ones after them.
pub struct TileOpSpec {
    pub name: &'static str,
    pub op: TileOp,
    pub params: &'static [&'static str],
    /// The optional parameters as the help text names them (empty: none).
    pub optional: &'static str,
    /// The most arguments the operation takes.
    pub most: usize,
}

impl TileOp {
    /// The most colour weights `refill` and `deal` take (games/README.md §9.12).
    pub const MAX_WEIGHTS: usize = 16;
    /// The most arguments any operation takes (`deal`: n, min, seed and the weights).
    pub const MAX_ARGS: usize = 3 + TileOp::MAX_WEIGHTS;

    /// Every operation, in the order the help text lists them.
    pub const ALL: [TileOpSpec; 7] = [
        TileOpSpec { name: "swap", op: TileOp::Swap, params: &["s"], optional: "", most: 1 },
        TileOpSpec { name: "clearRuns", op: TileOp::ClearRuns, params: &["min"], optional: "", most: 1 },
        TileOpSpec { name: "fall", op: TileOp::Fall, params: &[], optional: "", most: 0 },
        TileOpSpec { name: "refill", op: TileOp::Refill, params: &["n"], optional: "w1, …, wk", most: 1 + TileOp::MAX_WEIGHTS },
        TileOpSpec { name: "deal", op: TileOp::Deal, params: &["n", "min"], optional: "seed[, w1, …, wk]", most: TileOp::MAX_ARGS },
        TileOpSpec { name: "clearGroup", op: TileOp::ClearGroup, params: &["c", "tol"], optional: "", most: 2 },
        TileOpSpec { name: "flip", op: TileOp::Flip, params: &["c", "v", "dirs"], optional: "", most: 3 },
    ];
}

#[derive(Clone, Debug)]
pub struct ConsInfo {
    pub name: String,
    pub span: Span,
    pub code: Cons,
    /// The binding of the action it was compiled for: says whether a timer's `bound` is an
    /// object (forEveryInstance) or a description (forEveryGOD).
    pub bind: BindKind,
}

impl ConsInfo {
    /// The context binds an object (so a timer's `bound` is an object index).
    pub fn bind_instance(&self) -> bool {
        matches!(self.bind, BindKind::Instance(_))
    }
}
