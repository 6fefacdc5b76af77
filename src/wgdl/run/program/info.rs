//! The records a compiled program's tables hold ([`super::Program`]'s fields): actions with
//! their bindings and what move generation precomputes for them (row scans, actor gates, walk
//! orders, cell tests), classes and their attributes, descriptions, groups, turns, outcomes and
//! goals, hex occupants, grids, parameters, policies, aggregates, `view` hints, the game value
//! store's layout, and the limits of a run.

use super::*;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BindKind {
    None,
    Instance(ClassId),
    God(ClassId),
    /// A whole number in [lo, hi] (forEveryNumber).
    Number(u32, u32),
    /// A walkable cell of the hex map (forEveryHex).
    Hex,
    /// A move of step table k (`forEveryStep`, `forEveryJump`: [`crate::wgdl::board::StepTable`]),
    /// of the range the owner's side binds.
    Step(u16),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ActionKind {
    Player,
    Rule,
    OnCreate,
    /// `round:` hooks, run at the end of every round.
    OnRound,
}

#[derive(Clone, Debug)]
pub struct ActionInfo {
    /// Its index in [`Program::actions`].
    pub id: ActionId,
    pub name: String,
    pub span: Span,
    pub kind: ActionKind,
    /// Owner class (player and on-create actions).
    pub class: Option<ClassId>,
    pub bind: BindKind,
    pub conditions: Vec<ExprId>,
    pub consequences: Vec<ConsId>,
    pub group: u16,
    /// Seconds the action takes (player actions); `None` = the game's default duration.
    pub duration: Option<(ExprId, bool)>,
    /// Move filters (extension): offered to policies only; per owner only the n lowest keys;
    /// only when at most n other moves are legal; only when no move of these actions is.
    pub policy_only: bool,
    pub choose: Option<(u32, ExprId)>,
    pub last_resort: Option<u32>,
    pub unless: Vec<ActionId>,
    /// How many leading conditions do not read the binding: legal-move generation checks them
    /// once per owner instead of once per binding (set when the program is finished).
    pub owner_conds: usize,
    /// How many leading conditions read neither the owner nor the binding (`global.energy > 0`):
    /// move generation checks them once per action, not once per owner.
    pub global_conds: usize,
    /// Rules: the parts of the state the conditions read (`wgdl::deps`), set when the
    /// program is finished.
    pub reads: crate::wgdl::parts::Parts,
    /// The condition right after them is `<grid>.canSwap(<number>, min)` on a `forEveryNumber`
    /// binding: legal-move generation tests it natively (grid, min) instead of interpreting it.
    pub swap_filter: Option<(u16, i64)>,
    /// The only condition after them compares a grid cell in the bound number's column of a
    /// constant row with a literal (`height[col, 0] < 6` on `forEveryNumber col`), every cell
    /// it can read on the grid: move generation reads the row in one pass instead.
    pub row_scan: Option<RowScan>,
    /// The leading conditions after the owner's that compare a cell of the bound move with
    /// values fixed for the owner (`board[to] == 0`): the lister tests them natively
    /// (`run/cells.rs`).
    pub cell_tests: Option<crate::wgdl::cells::CellTests>,
    /// `choose n by hex.walk(X, h)` on a `forEveryHex h` binding, X not reading `h`: move
    /// generation visits cells by walk from X and stops after n moves (or when the bound
    /// condition fails) instead of testing every cell and sorting.
    pub walk_order: Option<WalkOrder>,
    /// The first condition is `this == game.actor` or `this.<attr> == game.actor`: move
    /// generation compares the owner (or its attribute) with the actor directly.
    pub actor_gate: Option<ActorGate>,
    /// `byChance` (extension): the moves are chance outcomes, weighted by this long expression
    /// (`None` inside: all alike). A state where such a move is legal is a chance node.
    pub chance: Option<Option<ExprId>>,
}

/// [`ActionInfo::row_scan`]: the row's cells, compared with a literal.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RowScan {
    /// The slot of the row's cell in column 0.
    pub row: usize,
    /// `Eq`, `Ne`, `LtL`, `LeL`, `GtL` or `GeL`.
    pub op: Op,
    pub c: i64,
}

impl RowScan {
    /// Calls `hit`, in order, with each number (from `lo` on: `cells[0]` is `lo`'s cell) whose
    /// cell meets the condition; the comparison is chosen once, outside the loop.
    #[inline(always)]
    pub fn each_holding(&self, cells: &[i64], lo: u32, mut hit: impl FnMut(u32)) {
        #[inline(always)]
        fn scan(cells: &[i64], lo: u32, hit: &mut impl FnMut(u32), holds: impl Fn(i64) -> bool) {
            for (n, &v) in (lo..).zip(cells) {
                if holds(v) {
                    hit(n);
                }
            }
        }
        let c = self.c;
        match self.op {
            Op::Eq => scan(cells, lo, &mut hit, |v| v == c),
            Op::Ne => scan(cells, lo, &mut hit, |v| v != c),
            Op::LtL => scan(cells, lo, &mut hit, |v| v < c),
            Op::LeL => scan(cells, lo, &mut hit, |v| v <= c),
            Op::GtL => scan(cells, lo, &mut hit, |v| v > c),
            _ => scan(cells, lo, &mut hit, |v| v >= c),
        }
    }
}

/// How [`ActionInfo::actor_gate`] compares an owner with `game.actor`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ActorGate {
    /// `this == game.actor`.
    This,
    /// `this.<attribute at this offset> == game.actor`.
    Attr(u32),
}

/// How a `choose … by hex.walk(X, h)` action's cells are enumerated (see
/// [`ActionInfo::walk_order`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WalkOrder {
    /// X, the cell walks are measured from (its own expression).
    pub from: ExprId,
    /// The index of a condition `hex.walk(X, h) <= E` (or `<`), E not reading `h`: walks only
    /// grow along the order, so once it fails it fails for every later cell.
    pub bound: Option<usize>,
    /// How each condition from the owner conditions on is tested for a cell.
    pub conds: Vec<CellCond>,
    /// Every condition is `Free`, `Hidden` or the walk bound, and their operands cannot fail
    /// (loads, comparisons, `this`'s attributes): the cells are tested against one bit set.
    pub bits: bool,
}

/// How walk-ordered move generation tests one condition for a cell `h`: the shapes it knows
/// are read from the occupancy bit sets and the map's tables (their operands that do not read
/// `h` evaluated once per owner, when first needed); anything else is evaluated.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CellCond {
    /// `hex.free(h)`.
    Free,
    /// `hex.hidden(h, X)`; X (its own expression) does not read `h`.
    Hidden(ExprId),
    /// `hex.walk(<the walk order's X>, h) <= E` (`strict`: `<`); E does not read `h`.
    WalkBound {
        limit: ExprId,
        strict: bool,
    },
    Eval(ExprId),
}

#[derive(Clone, Debug)]
pub struct AttrInfo {
    pub name: String,
    pub ty: Ty,
    pub span: Span,
}

#[derive(Clone, Debug)]
pub struct ClassInfo {
    pub name: String,
    pub parent: Option<ClassId>,
    /// Instance attributes, inherited ones first (so an offset is valid in every subclass).
    pub attrs: Vec<AttrInfo>,
    /// Class constants, inherited ones first.
    pub consts: Vec<AttrInfo>,
    /// Player actions an object of this class owns, inherited ones first.
    pub actions: Vec<ActionId>,
    /// `create:` hooks to run, ancestors' first.
    pub create_hooks: Vec<ActionId>,
    /// Descriptions of this class or a subclass, in declaration order.
    pub gods: Vec<GodId>,
    /// Every action of [`ClassInfo::actions`] opens with this actor gate (and has no
    /// owner-free conditions before it): an object that fails it has no move.
    pub actor_gate: Option<ActorGate>,
    pub span: Span,
}

#[derive(Clone, Debug)]
pub struct GodInfo {
    pub name: String,
    pub name_sym: i64,
    pub class: ClassId,
    pub init: Vec<i64>,
    pub consts: Vec<i64>,
    pub span: Span,
}

#[derive(Clone, Debug)]
pub struct Group {
    pub name: String,
    pub weight: f64,
}

/// Who takes turns (extension): objects of `class`, their side in attribute slot `side`.
#[derive(Clone, Debug)]
pub struct TurnInfo {
    pub class: ClassId,
    pub side: u32,
    /// Only objects for which this holds take their turn (`while`).
    pub cond: Option<ExprId>,
    /// R0 B0 R1 B1 … instead of R0 R1 B0 B1.
    pub alternating: bool,
    /// Some consequence may write the side attribute (through an object of the turn class, a
    /// subclass or a superclass).
    pub side_written: bool,
}

/// A `winner`/`draw` line.
#[derive(Clone, Debug)]
pub struct OutcomeInfo {
    /// The winning side, `None` for a draw.
    pub winner: Option<u8>,
    pub expr: ExprId,
    pub text: String,
    /// The parts of the state `expr` reads (`wgdl::deps`), set when the program is finished.
    pub reads: crate::wgdl::parts::Parts,
}

/// Objects standing on hex cells (`hexOccupants`).
#[derive(Clone, Debug)]
pub struct Occupants {
    pub class: ClassId,
    pub pos: u32,
    pub side: u32,
    pub cond: Option<ExprId>,
}

#[derive(Clone, Debug)]
pub struct GridInfo {
    pub name: String,
    /// Absolute slot of cell (0, 0); cell (x, y) is at `base + y * width + x`.
    pub base: u32,
    pub width: u32,
    pub height: u32,
}

/// The `view` lines, resolved: how the state view (`crate::view`) draws classes and grids.
/// Play never reads them.
#[derive(Clone, Debug, Default)]
pub struct Views {
    /// One per class, a subclass holding its ancestors' hints where it has none of its own.
    pub classes: Vec<ClassView>,
    /// One per grid.
    pub grids: Vec<GridView>,
}

#[derive(Clone, Debug, Default)]
pub struct ClassView {
    pub label: Option<AttrRef>,
    /// (attribute, full value), drawn in order.
    pub bars: Vec<(AttrRef, BarFull)>,
    pub glyph: Option<String>,
    pub colour: Option<String>,
    pub hide: bool,
}

#[derive(Clone, Debug, Default)]
pub struct GridView {
    /// The glyph of tile value k (k from 0).
    pub glyphs: Vec<String>,
    /// The colour of tile value k (k from 0).
    pub colours: Vec<String>,
    pub hide: bool,
    /// Drawn as hexagons, each row half a cell right of the row below (`view <grid> hex`).
    pub hex: bool,
}

/// An attribute of an object: an instance slot (offset from its base) or a class constant
/// (an index into its description's `consts`); with its type.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum AttrRef {
    Inst(u32, Ty),
    Const(u32, Ty),
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum BarFull {
    Number(f64),
    Attr(AttrRef),
}

/// A declared parameter: an attribute value of one description, with its range.
#[derive(Clone, Debug)]
pub struct ParamInfo {
    /// `description.attribute`.
    pub name: String,
    /// Where the value lives: the description, a class constant or an instance attribute's
    /// default, and its index.
    pub god: GodId,
    pub is_const: bool,
    pub idx: u32,
    pub integer: bool,
    pub min: f64,
    pub max: f64,
    /// The value in this program (the file's, or an override).
    pub value: f64,
    /// The file's value.
    pub default: f64,
}

/// How a policy tier picks.
#[derive(Clone, Copy, Debug)]
pub enum PickCode {
    First,
    Random,
    Weight(ExprId, bool),
    Max(ExprId, bool),
}

#[derive(Clone, Debug)]
pub struct Tier {
    pub action: ActionId,
    pub pick: PickCode,
    pub cond: Option<ExprId>,
}

/// A policy: ordered tiers; the first tier with a move decides.
#[derive(Clone, Debug)]
pub struct PolicyInfo {
    pub name: String,
    pub tiers: Vec<Tier>,
}

/// `sumOf(Class, expr)` / `countOf(Class, cond)`, and `<grid>.sumRuns(min, k, expr)` (whose
/// `class` is unused: its inner expression binds the run length as a number).
#[derive(Clone, Copy, Debug)]
pub struct AggInfo {
    pub class: ClassId,
    pub expr: ExprId,
    pub count: bool,
    /// The inner expression cannot fail (loads, comparisons, `!`, `&&`, `||`, double
    /// arithmetic): a `countOf` compared with zero may stop at the first object that counts.
    pub infallible: bool,
    pub double: bool,
    /// Over the cells of this grid instead of a class's objects (`board.any(c, …)`,
    /// `board.countCells(c, …)`): the inner expression's number is each cell's.
    pub cells: Option<u16>,
}

#[derive(Clone, Debug)]
pub struct GoalInfo {
    pub k: u32,
    pub expr: ExprId,
    pub text: String,
    /// The parts of the state `expr` reads (`wgdl::deps`), set when the program is finished.
    pub reads: crate::wgdl::parts::Parts,
}

/// The game value store's shape, fixed at compile time: a trie of named nodes.
#[derive(Clone, Debug, Default)]
pub struct StoreLayout {
    /// Full dotted path of each node (node 0 is the root, "").
    pub paths: Vec<String>,
    pub parent: Vec<u32>,
    /// For nodes that dynamic segments can descend from: index into `dyn_children`.
    pub dyn_base: Vec<u32>,
    /// `dyn_children[dyn_base[node] + sym]` = child node for that symbol.
    pub dyn_children: Vec<u32>,
}

#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// Rule firings allowed after one move (and after one timer) before it counts as runaway.
    pub rule_firings: u32,
    pub objects: u32,
    pub timers: u32,
    /// Player moves in one game before it counts as endless.
    pub steps: u32,
    /// Nested `create:` hooks creating objects.
    pub create_depth: u32,
    /// Turns (of all sides) in one game before it counts as endless (`limit turns`).
    pub turns: u32,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits { rule_firings: 10_000, objects: 100_000, timers: 100_000, steps: 100_000, create_depth: 64, turns: u32::MAX }
    }
}
