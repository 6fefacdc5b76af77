//! The compiled game ([`Program`]) and its run-time [`State`]: the last stage of the pipeline
//! (text → tokens → AST → checked model → **program → state**).
//!
//! Every name was resolved by the compiler: attributes are slot offsets, objects are indices,
//! strings are interned symbols, game value store paths are node indices. Expressions are a
//! small stack bytecode ([`Op`]) evaluated on a fixed-size stack — no string lookup, no hash map
//! and no allocation per evaluation. A state is a flat `Vec<i64>` of slots (game value store
//! first, then every object's attributes), a table of objects, a sorted timer queue and a few
//! counters, so cloning it is three `memcpy`s.
//!
//! Values are 64-bit: longs as themselves, doubles as their bits, booleans as 0/1, strings as
//! symbol indices, object references as object indices with [`NULL`] for `null`. The static type
//! of every slot and operation is known from the checker, so no value carries a tag.
//!
//! Room for what later issues add is already here: `to_move` (several players), `rng` (seeded
//! chance), `ObjRec::alive` (deletion), and fixed-size grids are just runs of slots.

use super::diag::{SourceFile, Span};
use super::turns::OccCache;
use std::sync::Arc;
use thiserror::Error;

/// The object reference `null`.
pub const NULL: i64 = -1;
/// "No object" in an evaluation context.
pub const NONE: u32 = u32::MAX;

pub type ClassId = u16;
pub type GodId = u16;
pub type ActionId = u16;
pub type ConsId = u32;

/// Whether class `a` is `b` or derives from it, given each class's pre-order interval.
#[inline]
pub(crate) fn within(spans: &[(u32, u32)], a: ClassId, b: ClassId) -> bool {
    let (x, (lo, hi)) = (spans[a as usize].0, spans[b as usize]);
    lo <= x && x <= hi
}

/// A range of [`Program::code`] that evaluates to one value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ExprId {
    pub start: u32,
    pub len: u32,
}

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
    /// A built-in function (extension): pops its arguments, pushes the result.
    Call(Builtin),
    /// Jump over the next n ops (an aggregate's inner expression, evaluated on its own).
    Skip(u32),
    /// Pops y and x, pushes the absolute slot of grid cell (x, y) (error when off the grid).
    GridCell(u16),
    /// Pops a slot index, pushes the slot's value.
    Load,
    /// Pops x, y, dx, dy: the length of the run of cells equal to (x, y) through it along ±(dx, dy).
    GridLine(u16),
    /// An aggregate over the live objects of a class (`sumOf`, `countOf`).
    Agg(u16),
    /// Tile grids (src/wgdl/tiles.rs): pops min, pushes the number of runs of ≥ min.
    GridRuns(u16),
    /// Pops min, pushes the number of swaps that would make a run of ≥ min.
    GridSwaps(u16),
    /// Pops min, pushes whether some swap would make a run of ≥ min.
    GridHasSwap(u16),
    /// Pops s and min, pushes whether swap number s would make a run of ≥ min.
    GridCanSwap(u16),
    /// Pops min, pushes the sum of aggregate `.1`'s expression over the runs of ≥ min of grid `.0`.
    GridSumRuns(u16, u16),
    /// Connected groups (src/wgdl/tiles.rs): pops c and tol, pushes the size of c's group.
    GridGroup(u16),
    /// Pops c, tol and min, pushes whether c leads (is the lowest cell of) a group of ≥ min.
    GridGroupLead(u16),
    /// Pops tol and min, pushes the number of groups of ≥ min cells.
    GridGroups(u16),
    /// Pops c and tol, pushes how many distinct tile values c's group holds.
    GridGroupDistinct(u16),
    /// `game.actor` (the object whose turn it is, or `null`), `game.round`, `game.turns`, `game.toMove`.
    Actor,
    Round,
    Turns,
    ToMove,
}

/// Built-in functions. Hex functions take and return cell numbers (see [`super::hex`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Builtin {
    MaxL,
    MinL,
    AbsL,
    MaxD,
    MinD,
    AbsD,
    HexDistance,
    HexWalk,
    HexSees,
    HexWall,
    HexFree,
    HexStart,
    HexHidden,
    HexApproach,
    HexStepToward,
    HexCells,
}

impl Builtin {
    pub fn arity(self) -> usize {
        use Builtin::*;
        match self {
            HexCells => 0,
            AbsL | AbsD | HexWall | HexFree => 1,
            MaxL | MinL | MaxD | MinD | HexDistance | HexWalk | HexSees | HexStart | HexHidden => 2,
            HexStepToward => 3,
            HexApproach => 4,
        }
    }
}

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
    Conditional {
        cond: ExprId,
        then: ConsId,
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
    /// `do <grid>.<op>(args)`: a tile-grid operation (src/wgdl/tiles.rs).
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
    /// `refill(n)`: every empty cell, column by column, bottom to top, gets 1 + a draw of n.
    Refill,
    /// `deal(n, min)`: every cell, in index order, gets 1 + a draw of n, redrawn while it would
    /// complete a run of min with the cells to its left or below it.
    Deal,
    /// `clearGroup(c, tol)`: empty every cell of the connected group of cell c (nothing if c is
    /// empty).
    ClearGroup,
}

impl TileOp {
    /// Name, operation, and its parameters as the help text names them (their count is the
    /// arity).
    pub const ALL: [(&'static str, TileOp, &'static [&'static str]); 6] = [
        ("swap", TileOp::Swap, &["s"]),
        ("clearRuns", TileOp::ClearRuns, &["min"]),
        ("fall", TileOp::Fall, &[]),
        ("refill", TileOp::Refill, &["n"]),
        ("deal", TileOp::Deal, &["n", "min"]),
        ("clearGroup", TileOp::ClearGroup, &["c", "tol"]),
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

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BindKind {
    None,
    Instance(ClassId),
    God(ClassId),
    /// A whole number in [lo, hi] (forEveryNumber).
    Number(u32, u32),
    /// A walkable cell of the hex map (forEveryHex).
    Hex,
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
    pub reads: super::deps::Parts,
    /// The condition right after them is `<grid>.canSwap(<number>, min)` on a `forEveryNumber`
    /// binding: legal-move generation tests it natively (grid, min) instead of interpreting it.
    pub swap_filter: Option<(u16, i64)>,
    /// `choose n by hex.walk(X, h)` on a `forEveryHex h` binding, X not reading `h`: move
    /// generation visits cells by walk from X and stops after n moves (or when the bound
    /// condition fails) instead of testing every cell and sorting.
    pub walk_order: Option<WalkOrder>,
    /// The first condition is `this == game.actor` or `this.<attr> == game.actor`: move
    /// generation compares the owner (or its attribute) with the actor directly.
    pub actor_gate: Option<ActorGate>,
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
}

/// A `winner`/`draw` line.
#[derive(Clone, Debug)]
pub struct OutcomeInfo {
    /// The winning side, `None` for a draw.
    pub winner: Option<u8>,
    pub expr: ExprId,
    pub text: String,
    /// The parts of the state `expr` reads (`wgdl::deps`), set when the program is finished.
    pub reads: super::deps::Parts,
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
    pub double: bool,
}

#[derive(Clone, Debug)]
pub struct GoalInfo {
    pub k: u32,
    pub expr: ExprId,
    pub text: String,
    /// The parts of the state `expr` reads (`wgdl::deps`), set when the program is finished.
    pub reads: super::deps::Parts,
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

/// Static value types.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Ty {
    Long,
    Double,
    Bool,
    Str,
    Obj(ClassId),
    Null,
}

/// A compiled game. Immutable and shared (`Arc`) by every state and thread.
#[derive(Clone, Debug)]
pub struct Program {
    pub source: Arc<SourceFile>,
    pub syms: Vec<String>,
    pub classes: Vec<ClassInfo>,
    pub gods: Vec<GodInfo>,
    pub actions: Vec<ActionInfo>,
    pub rules: Vec<ActionId>,
    pub conses: Vec<ConsInfo>,
    pub code: Vec<Op>,
    pub spans: Vec<Span>,
    pub initial: Vec<GodId>,
    pub goals: Vec<GoalInfo>,
    pub groups: Vec<Group>,
    pub store: StoreLayout,
    /// Named game values (`game missionsDone missions . done`): name and dotted store path.
    pub game_values: Vec<(String, String)>,
    pub limits: Limits,
    pub default_duration: Option<(ExprId, bool)>,
    /// Some rule reads the clock (`game.time`, `game.sessionTime`): rules fire again whenever
    /// the clock moves, not only after consequences.
    pub rules_read_time: bool,
    pub session_length: i64,
    pub session_pause: i64,
    /// Each class's subtree as an interval `(first, last)` of a pre-order numbering of the
    /// class tree (linear memory): class a is b or derives from b iff a's number is in b's
    /// interval (`within`).
    pub is_sub: Vec<(u32, u32)>,
    pub max_stack: usize,
    /// Extensions: sides, turns, outcomes, round hooks, hex map, grids, parameters, policies.
    pub players: Vec<String>,
    pub turn: Option<TurnInfo>,
    pub outcomes: Vec<OutcomeInfo>,
    pub round_hooks: Vec<ActionId>,
    pub hex: Option<Arc<super::hex::HexMap>>,
    pub occupants: Option<Occupants>,
    pub grids: Vec<GridInfo>,
    /// Slots between the store and the objects (grid cells).
    pub grid_slots: u32,
    pub params: Vec<ParamInfo>,
    pub policies: Vec<PolicyInfo>,
    pub aggs: Vec<AggInfo>,
    /// Some `unless` names a `policyOnly` action (so searches must still generate those).
    pub unless_sees_policy_only: bool,
    /// `constraint` lines: the compiled condition and its text.
    pub constraints: Vec<(ExprId, String)>,
    /// Some action has a move filter (`choose`, `lastResort`, `unless`) or is `policyOnly`.
    pub has_filters: bool,
    /// `chance fair`: a search must not see the real future of the game's stream; it plays on
    /// an independent stream (see [`crate::game::Game::hidden_chance`]). Default `chance oracle`.
    pub chance_fair: bool,
    /// Every named overlay the file declares (`style <name>:` / `variant <name>:` lines), in
    /// order of first appearance, whether selected or not; and the ones selected.
    pub overlays: Vec<(super::ast::OverlayKind, String)>,
    pub selected: Vec<String>,
    /// The closures that evaluate `code` (`wgdl::fast`), built on first use; one slot per
    /// code index (`fast.resize(code.len())` after appending code).
    pub fast: super::fast::FastCode,
    /// Each action's group (`actions[a].group`), compact for playout policies.
    pub action_groups: Vec<u16>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ObjRec {
    pub god: GodId,
    pub class: ClassId,
    pub alive: bool,
    pub base: u32,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Timer {
    pub due: i64,
    pub seq: u64,
    pub cons: ConsId,
    pub this: u32,
    pub bound: u32,
}

/// One player move: an action instance (action, owner object, binding).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Action {
    pub def: ActionId,
    pub this: u32,
    /// The bound object (forEveryInstance), description (forEveryGOD) or [`NONE`].
    pub bound: u32,
}

/// Why a game is over.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    Running,
    /// The last goal holds.
    Finished,
    /// No player action is legal (and the last goal does not hold).
    Stuck,
    /// `limit steps` moves were made without reaching the last goal.
    StepLimit,
    /// A `winner` line held: that side won.
    Won(u8),
    /// A `draw` line held.
    Draw,
    /// `limit turns` turns were played without a winner.
    TurnLimit,
}

#[derive(Debug, PartialEq, Eq, Hash)]
pub struct State {
    pub slots: Vec<i64>,
    pub objects: Vec<ObjRec>,
    /// Pending timed consequences, sorted so that the next one to fire is last.
    pub timers: Vec<Timer>,
    pub clock: i64,
    pub timer_seq: u64,
    pub moves: u32,
    /// Index of the goal being pursued; `goals.len()` once the last goal held.
    pub goal: u16,
    pub sessions: i64,
    /// Side to move (single-player games: always 0).
    pub to_move: u8,
    /// State of the game's own random stream (seeded chance; unused until a game draws).
    pub rng: u64,
    /// Set by an `endSession` consequence during the current move.
    pub end_session: bool,
    /// Turns (extension): the acting object ([`NONE`] without turns or when nobody can act),
    /// rounds and turns completed, and the outcome (0 none, 1 draw, 2 + k side k won).
    pub actor: u32,
    pub round: u32,
    pub turns: u32,
    pub outcome: u8,
    /// Set by an `endTurn` consequence during the current move.
    pub end_turn: bool,
    /// The parts of the state written since the last check of outcomes and goals
    /// (`wgdl::deps`); ignored by equality and hashing.
    pub dirty: super::deps::Dirty,
}

#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum RtKind {
    #[error("division by zero; expected a divisor other than 0")]
    DivisionByZero,
    #[error(
        "integer overflow: `{a} {op} {b}` passes the range of a long (±9 223 372 036 854 775 807); expected values that stay within it"
    )]
    Overflow { a: i64, op: &'static str, b: i64 },
    #[error("path goes through `null` (reading `{attr}`); expected the object reference to be set first")]
    NullPath { attr: String },
    #[error(
        "path goes through a deleted object (reading `{attr}`); expected a live object (clear references to an object when deleting it)"
    )]
    DeadObject { attr: String },
    #[error(
        "runaway rules: more than {limit} rule firings after one move, last `{rule}`; expected a rule whose consequences make its own condition false"
    )]
    RunawayRule { rule: String, limit: u32 },
    #[error("too many objects (limit {limit}); expected fewer `create` consequences (`limit objects N` raises it)")]
    TooManyObjects { limit: u32 },
    #[error(
        "too many pending timers (limit {limit}); expected fewer timed consequences — one may be scheduling itself (`limit timers N` raises it)"
    )]
    TooManyTimers { limit: u32 },
    #[error("`create:` hooks nest deeper than {limit}; expected hooks that end — a hook probably creates an object of its own class")]
    CreateTooDeep { limit: u32 },
    #[error(
        "runaway timers: more than {limit} timed consequences fired in one step, last `{consequence}`; expected timers that do not re-arm themselves with no delay"
    )]
    RunawayTimers { consequence: String, limit: u32 },
    #[error("runaway sessions: more than {limit} sessions ended in one step; expected a rule that does not end every new session")]
    RunawaySessions { limit: u32 },
    #[error("negative delay or duration {delay} s; expected a time ≥ 0")]
    NegativeDelay { delay: i64 },
    #[error("action `{action}` is not legal here; expected one of the legal actions")]
    IllegalAction { action: String },
    #[error("the object that `delete` names is `null` or already deleted; expected a live object")]
    DeleteNull,
    #[error("cell ({x}, {y}) is off grid `{grid}` ({w} × {h}); expected 0 ≤ x < {w} and 0 ≤ y < {h}")]
    OffGrid { grid: String, x: i64, y: i64, w: u32, h: u32 },
    #[error("hex cell {cell} is not on the map (cells 0 to {last}); expected a cell number, e.g. from `hex.start`")]
    OffMap { cell: i64, last: usize },
    #[error("side {side} has no start point {k} on the map ({have} there); expected a map with enough start points for every team")]
    NoStartPoint { side: i64, k: i64, have: usize },
    #[error("runaway turns: more than {limit} turns ended in one move; expected a `while` condition that some object meets")]
    RunawayTurns { limit: u32 },
    #[error(
        "swap number {s} is not on grid `{grid}`; expected 0 ≤ s ≤ {last} (2 × cell + 0 for the right neighbour, + 1 for the upper one)"
    )]
    BadSwap { grid: String, s: i64, last: i64 },
    #[error("swap number {s} of grid `{grid}` has its neighbour off the grid; expected a swap that `canSwap` allows")]
    SwapOffGrid { grid: String, s: i64 },
    #[error("{n} tile values to draw from; expected at least 1")]
    BadTileCount { n: i64 },
    #[error("cannot deal grid `{grid}` without runs of {min} from {colours} tile values; expected more values or a longer minimum run")]
    NoDeal { grid: String, colours: i64, min: i64 },
    #[error("cell {c} is not on grid `{grid}`; expected 0 ≤ c ≤ {last} (cell index y × width + x)")]
    BadCell { grid: String, c: i64, last: i64 },
}

/// An error while playing: what happened and the span of the WGDL text that caused it.
///
/// Boxed, so that `Result<i64, RuntimeError>` is two words returned in registers: every
/// expression evaluation returns one, and errors are rare (`rt` is `#[cold]`). The fields read
/// through `Deref` (`e.kind`, `e.span`).
#[derive(Clone, Debug, PartialEq, Eq, Error)]
#[error("{}", .0.kind)]
pub struct RuntimeError(Box<RuntimeErrorData>);

/// What a [`RuntimeError`] holds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RuntimeErrorData {
    pub kind: RtKind,
    pub span: Span,
}

impl std::ops::Deref for RuntimeError {
    type Target = RuntimeErrorData;
    fn deref(&self) -> &RuntimeErrorData {
        &self.0
    }
}

impl RuntimeError {
    /// Renders file:line:column, the line and a caret, like a compile diagnostic.
    pub fn render(&self, program: &Program) -> String {
        super::diag::render(&program.source, self.span, "runtime error", &self.kind.to_string())
    }
}

#[cold]
pub(super) fn rt(kind: RtKind, span: Span) -> RuntimeError {
    RuntimeError(Box::new(RuntimeErrorData { kind, span }))
}

/// Evaluation context: whose action is running.
#[derive(Clone, Copy, Debug)]
pub(super) struct Ctx {
    pub(super) this: u32,
    pub(super) bound: u32,
}

const STACK: usize = 32;

thread_local! {
    /// Move generation's scratch space, reused from one generation to the next.
    static CANDIDATES: std::cell::RefCell<Scratch> = std::cell::RefCell::new(Scratch::default());
}

/// Move generation's scratch space (see [`Program::candidates`]).
#[derive(Default)]
struct Scratch {
    /// Per action: whether its owner-free conditions hold (0 unknown, 1 false, 2 true).
    global: Vec<u8>,
    /// The live objects of class `bound_class` (index, first slot), listed once per generation
    /// for `forEveryInstance` bindings of that class.
    bound_class: Option<ClassId>,
    bound: Vec<(u32, u32)>,
}

impl Program {
    pub fn n_store_nodes(&self) -> usize {
        self.store.parent.len()
    }

    pub fn is_sub(&self, a: ClassId, b: ClassId) -> bool {
        within(&self.is_sub, a, b)
    }

    pub fn sym(&self, v: i64) -> &str {
        self.syms.get(v as usize).map_or("?", |s| s.as_str())
    }

    /// The start state: the store, then every `initial` object in file order (their `create:`
    /// hooks run), rules fired, goals checked.
    pub fn initial_state(&self) -> Result<State, RuntimeError> {
        self.initial_state_seeded(0)
    }

    /// The start state of the game with chance seed `seed`: its stream word starts at
    /// `mix(seed)`, so that neighbouring seeds give unrelated streams (games that draw, such as
    /// refills of a tile grid, differ per seed; other games do not).
    pub fn initial_state_seeded(&self, seed: u64) -> Result<State, RuntimeError> {
        let n = self.n_store_nodes();
        let mut st = State {
            slots: vec![0; 2 * n + self.grid_slots as usize],
            objects: Vec::new(),
            timers: Vec::new(),
            clock: 0,
            timer_seq: 0,
            moves: 0,
            goal: 0,
            sessions: 0,
            to_move: 0,
            rng: crate::rng::mix(seed),
            end_session: false,
            actor: NONE,
            round: 0,
            turns: 0,
            outcome: 0,
            end_turn: false,
            dirty: super::deps::Dirty { checks: super::deps::ALL, rules: super::deps::ALL },
        };
        // All initial objects exist before any create: hook runs, so hooks can use named objects.
        for &g in &self.initial {
            self.alloc(&mut st, g, self.gods[g as usize].span)?;
        }
        for id in 0..self.initial.len() as u32 {
            self.run_create_hooks(&mut st, id, 0)?;
        }
        self.fire_rules(&mut st)?;
        self.settle(&mut st)?;
        if self.turn.is_some() {
            st.end_turn = false;
            st.actor = self.next_actor(&st, None)?.unwrap_or(NONE);
            st.to_move = self.side_of(&st, st.actor);
        }
        self.advance_goals(&mut st)?;
        self.check_outcomes(&mut st)?;
        st.dirty.checks = 0;
        Ok(st)
    }

    /// Fresh objects are appended; their slot base is the current end of the slot vector.
    /// `span` is what an error points at: the `initial` description or the `create` consequence.
    fn alloc(&self, st: &mut State, god: GodId, span: Span) -> Result<u32, RuntimeError> {
        let g = &self.gods[god as usize];
        if st.objects.len() as u32 >= self.limits.objects {
            return Err(rt(RtKind::TooManyObjects { limit: self.limits.objects }, span));
        }
        let id = st.objects.len() as u32;
        st.dirty.mark(super::deps::BORN);
        st.objects.push(ObjRec { god, class: g.class, alive: true, base: st.slots.len() as u32 });
        st.slots.extend_from_slice(&g.init);
        Ok(id)
    }

    fn create(&self, st: &mut State, god: GodId, depth: u32, span: Span) -> Result<u32, RuntimeError> {
        if depth > self.limits.create_depth {
            return Err(rt(RtKind::CreateTooDeep { limit: self.limits.create_depth }, span));
        }
        let id = self.alloc(st, god, span)?;
        self.run_create_hooks(st, id, depth)?;
        Ok(id)
    }

    fn run_create_hooks(&self, st: &mut State, id: u32, depth: u32) -> Result<(), RuntimeError> {
        let class = st.objects[id as usize].class;
        let ctx = Ctx { this: id, bound: NONE };
        for &h in &self.classes[class as usize].create_hooks {
            let a = &self.actions[h as usize];
            if self.conditions_hold(st, a, ctx)? {
                self.run_consequences(st, h, ctx, depth + 1)?;
            }
        }
        Ok(())
    }

    pub(super) fn conditions_hold(&self, st: &State, a: &ActionInfo, ctx: Ctx) -> Result<bool, RuntimeError> {
        self.conditions_hold_from(st, a, ctx, 0, None)
    }

    /// Whether object `this` (or its attribute) is the actor, as `gate` compares them.
    #[inline]
    fn gate_open(&self, st: &State, gate: ActorGate, this: u32) -> bool {
        let actor = if st.actor == NONE { NULL } else { st.actor as i64 };
        let owner = match gate {
            ActorGate::This => this as i64,
            ActorGate::Attr(o) => st.slots[(st.objects[this as usize].base + o) as usize],
        };
        owner == actor
    }

    /// The leading conditions that do not read the binding, checked once for an owner (a live
    /// object): those that read no owner either once per action and move generation (their
    /// result kept in `global[a]`: 0 unknown, 1 false, 2 true), the first one directly when it
    /// compares the owner with the actor (unless `gated`: the owner's class gate was open).
    fn owner_ok(
        &self,
        st: &State,
        a: ActionId,
        this: u32,
        occ: Option<&OccCache>,
        global: &mut [u8],
        gated: bool,
    ) -> Result<bool, RuntimeError> {
        let info = &self.actions[a as usize];
        let mut first = 0;
        if info.global_conds > 0 {
            let known = global.get(a as usize).copied().unwrap_or(0);
            let ok = match known {
                0 => {
                    let env = super::fast::Env::with_occ(self, st, Ctx { this, bound: NONE }, occ);
                    let mut ok = true;
                    for &c in &info.conditions[..info.global_conds] {
                        if self.eval_env(&env, c)? == 0 {
                            ok = false;
                            break;
                        }
                    }
                    if let Some(g) = global.get_mut(a as usize) {
                        *g = 1 + ok as u8;
                    }
                    ok
                }
                k => k == 2,
            };
            if !ok {
                return Ok(false);
            }
            first = info.global_conds;
        } else if let Some(gate) = info.actor_gate {
            if !gated && !self.gate_open(st, gate, this) {
                return Ok(false);
            }
            first = 1;
        }
        if first == info.owner_conds {
            return Ok(true);
        }
        let env = super::fast::Env::with_occ(self, st, Ctx { this, bound: NONE }, occ);
        self.all_hold(&env, &self.cond_fxs(a)[first..info.owner_conds])
    }

    /// Whether every condition closure of `conds` holds in `env`.
    #[inline(always)]
    fn all_hold(&self, env: &super::fast::Env, conds: &[super::fast::Fx]) -> Result<bool, RuntimeError> {
        for f in conds {
            if f(env)? == 0 {
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// The conditions from the `from`-th on (one evaluation environment for all of them).
    #[inline]
    fn conditions_hold_from(
        &self,
        st: &State,
        a: &ActionInfo,
        ctx: Ctx,
        from: usize,
        occ: Option<&OccCache>,
    ) -> Result<bool, RuntimeError> {
        let conds = &a.conditions[from.min(a.conditions.len())..];
        if conds.is_empty() {
            return Ok(true);
        }
        let env = match a.bind {
            BindKind::Number(..) | BindKind::Hex | BindKind::God(_) => super::fast::Env::unbound_object(self, st, ctx, occ),
            _ => super::fast::Env::with_occ(self, st, ctx, occ),
        };
        let fxs = self.cond_fxs(a.id);
        self.all_hold(&env, &fxs[fxs.len() - conds.len()..])
    }

    /// Interprets one compiled expression's bytecode: the reference semantics that the closures
    /// of [`super::fast`] (what [`Program::eval`] runs) are tested against.
    pub(super) fn eval_bytecode(&self, st: &State, e: ExprId, ctx: Ctx) -> Result<i64, RuntimeError> {
        let code = &self.code[e.start as usize..(e.start + e.len) as usize];
        let mut stack = [0i64; STACK];
        let mut sp = 0usize;
        let mut pc = 0usize;
        macro_rules! push {
            ($v:expr) => {{
                stack[sp] = $v;
                sp += 1;
            }};
        }
        macro_rules! bin {
            (|$a:ident, $b:ident| $body:expr) => {{
                sp -= 1;
                let $b = stack[sp];
                let $a = stack[sp - 1];
                stack[sp - 1] = $body;
            }};
        }
        macro_rules! bind {
            (|$a:ident, $b:ident| $body:expr) => {{
                sp -= 1;
                let $b = f64::from_bits(stack[sp] as u64);
                let $a = f64::from_bits(stack[sp - 1] as u64);
                stack[sp - 1] = $body;
            }};
        }
        let d = |v: f64| v.to_bits() as i64;
        while pc < code.len() {
            match code[pc] {
                Op::Const(v) => push!(v),
                Op::Slot(s) => push!(st.slots[s as usize]),
                Op::This(o) => push!(st.slots[(st.objects[ctx.this as usize].base + o) as usize]),
                Op::Bound(o) => push!(st.slots[(st.objects[ctx.bound as usize].base + o) as usize]),
                Op::ThisConst(i) => push!(self.gods[st.objects[ctx.this as usize].god as usize].consts[i as usize]),
                Op::BoundConst(i) => push!(self.gods[st.objects[ctx.bound as usize].god as usize].consts[i as usize]),
                Op::GodInit(i) => push!(self.gods[ctx.bound as usize].init[i as usize]),
                Op::GodConst(i) => push!(self.gods[ctx.bound as usize].consts[i as usize]),
                Op::NamedConst(g, i) => push!(self.gods[g as usize].consts[i as usize]),
                Op::ThisObj => push!(ctx.this as i64),
                Op::BoundObj => push!(ctx.bound as i64),
                Op::Field(o) => {
                    let obj = self.deref(st, stack[sp - 1], e.start as usize + pc)?;
                    stack[sp - 1] = st.slots[(obj.base + o) as usize];
                }
                Op::FieldConst(i) => {
                    let obj = self.deref(st, stack[sp - 1], e.start as usize + pc)?;
                    stack[sp - 1] = self.gods[obj.god as usize].consts[i as usize];
                }
                Op::NameOf => {
                    let obj = self.deref(st, stack[sp - 1], e.start as usize + pc)?;
                    stack[sp - 1] = self.gods[obj.god as usize].name_sym;
                }
                Op::GodName => push!(self.gods[ctx.bound as usize].name_sym),
                Op::StoreOwn(n) => push!(st.slots[n as usize]),
                Op::StoreSum(n) => {
                    let nn = self.n_store_nodes();
                    push!(st.slots[nn + n as usize] - st.slots[n as usize])
                }
                Op::Time => push!(st.clock),
                Op::SessionTime => push!(self.session_time(st)),
                Op::Sessions => push!(st.sessions),
                Op::Moves => push!(st.moves as i64),
                Op::AddL | Op::SubL | Op::MulL | Op::DivL => {
                    let (a, b) = (stack[sp - 2], stack[sp - 1]);
                    let at = self.spans[e.start as usize + pc];
                    if matches!(code[pc], Op::DivL) && b == 0 {
                        return Err(rt(RtKind::DivisionByZero, at));
                    }
                    stack[sp - 2] = checked_long(code[pc], a, b).map_err(|k| rt(k, at))?;
                    sp -= 1;
                }
                Op::AddD => bind!(|a, b| d(a + b)),
                Op::SubD => bind!(|a, b| d(a - b)),
                Op::MulD => bind!(|a, b| d(a * b)),
                Op::DivD => {
                    if f64::from_bits(stack[sp - 1] as u64) == 0.0 {
                        return Err(rt(RtKind::DivisionByZero, self.spans[e.start as usize + pc]));
                    }
                    bind!(|a, b| d(a / b))
                }
                Op::NegL => {
                    let a = stack[sp - 1];
                    stack[sp - 1] =
                        a.checked_neg().ok_or_else(|| rt(RtKind::Overflow { a: 0, op: "-", b: a }, self.spans[e.start as usize + pc]))?;
                }
                Op::NegD => stack[sp - 1] = d(-f64::from_bits(stack[sp - 1] as u64)),
                Op::L2D => stack[sp - 1] = d(stack[sp - 1] as f64),
                Op::L2DUnder => stack[sp - 2] = d(stack[sp - 2] as f64),
                Op::Eq => bin!(|a, b| (a == b) as i64),
                Op::Ne => bin!(|a, b| (a != b) as i64),
                Op::LtL => bin!(|a, b| (a < b) as i64),
                Op::LeL => bin!(|a, b| (a <= b) as i64),
                Op::GtL => bin!(|a, b| (a > b) as i64),
                Op::GeL => bin!(|a, b| (a >= b) as i64),
                Op::EqD => bind!(|a, b| (a == b) as i64),
                Op::NeD => bind!(|a, b| (a != b) as i64),
                Op::LtD => bind!(|a, b| (a < b) as i64),
                Op::LeD => bind!(|a, b| (a <= b) as i64),
                Op::GtD => bind!(|a, b| (a > b) as i64),
                Op::GeD => bind!(|a, b| (a >= b) as i64),
                Op::Not => stack[sp - 1] = (stack[sp - 1] == 0) as i64,
                Op::Xor => bin!(|a, b| ((a != 0) != (b != 0)) as i64),
                Op::AndJump(off) => {
                    if stack[sp - 1] == 0 {
                        pc += off as usize;
                        continue;
                    }
                    sp -= 1;
                }
                Op::OrJump(off) => {
                    if stack[sp - 1] != 0 {
                        pc += off as usize;
                        continue;
                    }
                    sp -= 1;
                }
                Op::Skip(n) => {
                    pc += n as usize + 1;
                    continue;
                }
                Op::Call(b) => {
                    let n = b.arity();
                    let v = self.builtin(&super::fast::Env::new(self, st, ctx), b, &stack[sp - n..sp], e.start as usize + pc)?;
                    sp -= n;
                    push!(v)
                }
                Op::GridCell(g) => {
                    let gi = &self.grids[g as usize];
                    let (x, y) = (stack[sp - 2], stack[sp - 1]);
                    if x < 0 || y < 0 || x >= gi.width as i64 || y >= gi.height as i64 {
                        return Err(self.off_grid(g, x, y, e.start as usize + pc));
                    }
                    sp -= 1;
                    stack[sp - 1] = gi.base as i64 + y * gi.width as i64 + x;
                }
                Op::Load => stack[sp - 1] = st.slots[stack[sp - 1] as usize],
                Op::GridLine(g) => {
                    let v = self.grid_line(st, g, &stack[sp - 4..sp]);
                    sp -= 3;
                    stack[sp - 1] = v;
                }
                Op::Agg(a) => push!(self.aggregate(st, a, ctx)?),
                Op::GridRuns(g) => stack[sp - 1] = self.tile_runs(st, g, stack[sp - 1]),
                Op::GridSwaps(g) => stack[sp - 1] = self.tile_swaps(st, g, stack[sp - 1]),
                Op::GridHasSwap(g) => stack[sp - 1] = self.tile_has_swap(st, g, stack[sp - 1]) as i64,
                Op::GridCanSwap(g) => {
                    sp -= 1;
                    let span = self.spans[e.start as usize + pc];
                    stack[sp - 1] = self.tile_can_swap(st, g, stack[sp - 1], stack[sp], span)? as i64;
                }
                Op::GridSumRuns(g, a) => stack[sp - 1] = self.tile_sum_runs(st, g, stack[sp - 1], &self.aggs[a as usize], ctx.this)?,
                Op::GridGroup(g) => {
                    sp -= 1;
                    let span = self.spans[e.start as usize + pc];
                    stack[sp - 1] = self.tile_group(st, g, stack[sp - 1], stack[sp], span)?;
                }
                Op::GridGroupLead(g) => {
                    sp -= 2;
                    let span = self.spans[e.start as usize + pc];
                    stack[sp - 1] = self.tile_group_lead(st, g, stack[sp - 1], stack[sp], stack[sp + 1], span)? as i64;
                }
                Op::GridGroups(g) => {
                    sp -= 1;
                    stack[sp - 1] = self.tile_groups(st, g, stack[sp - 1], stack[sp]);
                }
                Op::GridGroupDistinct(g) => {
                    sp -= 1;
                    let span = self.spans[e.start as usize + pc];
                    stack[sp - 1] = self.tile_group_distinct(st, g, stack[sp - 1], stack[sp], span)?;
                }
                Op::Actor => push!(if st.actor == NONE { NULL } else { st.actor as i64 }),
                Op::Round => push!(st.round as i64),
                Op::Turns => push!(st.turns as i64),
                Op::ToMove => push!(st.to_move as i64),
            }
            pc += 1;
        }
        debug_assert_eq!(sp, 1);
        Ok(stack[0])
    }

    #[inline]
    pub(super) fn deref(&self, st: &State, v: i64, op_index: usize) -> Result<ObjRec, RuntimeError> {
        match st.objects.get(v as usize) {
            Some(o) if v >= 0 && o.alive => Ok(*o),
            _ => Err(self.deref_error(st, v, op_index)),
        }
    }

    /// Attribute `o` of object `v`, which must be live (else the error of the op at `op_index`).
    #[inline(always)]
    pub(super) fn field(&self, st: &State, v: i64, o: u32, op_index: usize) -> Result<i64, RuntimeError> {
        match st.objects.get(v as usize) {
            Some(ob) if v >= 0 && ob.alive => Ok(st.slots[(ob.base + o) as usize]),
            _ => Err(self.deref_error(st, v, op_index)),
        }
    }

    /// `game.sessionTime`: within the pause (the next session has not begun) it is 0.
    #[inline]
    pub(super) fn session_time(&self, st: &State) -> i64 {
        st.clock.saturating_sub(self.session_start(st.sessions)).max(0)
    }

    /// Grid `g`'s cell (x, y), or the off-grid error of the `GridCell` op at `op_index`.
    #[inline]
    pub(super) fn grid_read(&self, st: &State, g: u16, x: i64, y: i64, op_index: usize) -> Result<i64, RuntimeError> {
        let gi = &self.grids[g as usize];
        if x < 0 || y < 0 || x >= gi.width as i64 || y >= gi.height as i64 {
            return Err(self.off_grid(g, x, y, op_index));
        }
        Ok(st.slots[(gi.base as i64 + y * gi.width as i64 + x) as usize])
    }

    /// The slot of grid `g`'s cell (x, y), or the off-grid error of the `GridCell` op at
    /// `op_index`.
    #[inline]
    pub(super) fn grid_index(&self, g: u16, x: i64, y: i64, op_index: usize) -> Result<usize, RuntimeError> {
        let gi = &self.grids[g as usize];
        if x < 0 || y < 0 || x >= gi.width as i64 || y >= gi.height as i64 {
            return Err(self.off_grid(g, x, y, op_index));
        }
        Ok((gi.base as i64 + y * gi.width as i64 + x) as usize)
    }

    #[cold]
    pub(super) fn off_grid(&self, g: u16, x: i64, y: i64, op_index: usize) -> RuntimeError {
        let gi = &self.grids[g as usize];
        let (grid, w, h) = (gi.name.clone(), gi.width, gi.height);
        rt(RtKind::OffGrid { grid, x, y, w, h }, self.spans[op_index])
    }

    #[cold]
    pub(super) fn deref_error(&self, st: &State, v: i64, op_index: usize) -> RuntimeError {
        let span = self.spans[op_index];
        let attr = self.source.slice(span).to_string();
        if v >= 0 && (v as usize) < st.objects.len() { rt(RtKind::DeadObject { attr }, span) } else { rt(RtKind::NullPath { attr }, span) }
    }

    fn session_start(&self, k: i64) -> i64 {
        // Saturating, like all clock arithmetic: huge settings end time, they do not wrap it.
        k.saturating_mul(self.session_length.saturating_add(self.session_pause))
    }

    fn write(&self, st: &mut State, place: Place, ctx: Ctx, v: i64) -> Result<(), RuntimeError> {
        let idx = match place {
            Place::Slot(s) => s,
            Place::This(o) => st.objects[ctx.this as usize].base + o,
            Place::Bound(o) => st.objects[ctx.bound as usize].base + o,
            Place::Field(e, o) => {
                let obj = self.eval(st, e, ctx)?;
                self.deref(st, obj, (e.start + e.len - 1) as usize)?.base + o
            }
            Place::Dyn(e) => self.eval(st, e, ctx)? as u32,
        };
        if !matches!(place, Place::Dyn(_)) {
            st.dirty.mark(super::deps::slot(idx as usize));
        }
        st.slots[idx as usize] = v;
        Ok(())
    }

    /// Runs consequence `c` by its kind: the reference for the closures of
    /// [`Program::exec`](super::fast), and what they fall back to for the rarer kinds.
    pub(super) fn exec_generic(&self, st: &mut State, c: ConsId, ctx: Ctx, depth: u32) -> Result<(), RuntimeError> {
        let info = &self.conses[c as usize];
        match &info.code {
            Cons::Assign { place, value } => {
                // The value first, then where it goes (whose error wins when both fail), read
                // from one environment; then the write.
                let (idx, v) = {
                    let env = super::fast::Env::new(self, st, ctx);
                    let v = self.eval_env(&env, *value)?;
                    let idx = match *place {
                        Place::Slot(s) => s,
                        Place::This(o) => env.this_base() + o,
                        Place::Bound(o) => env.bound_base() + o,
                        Place::Field(e, o) => {
                            let obj = self.eval_env(&env, e)?;
                            self.deref(st, obj, (e.start + e.len - 1) as usize)?.base + o
                        }
                        Place::Dyn(e) => self.eval_env(&env, e)? as u32,
                    };
                    (idx, v)
                };
                if !matches!(place, Place::Dyn(_)) {
                    st.dirty.mark(super::deps::slot(idx as usize));
                }
                st.slots[idx as usize] = v;
                Ok(())
            }
            Cons::Conditional { cond, then } => {
                if self.eval(st, *cond, ctx)? != 0 {
                    self.exec(st, *then, ctx, depth)?;
                }
                Ok(())
            }
            Cons::Timed { delay, delay_is_double, then } => {
                let raw = self.eval(st, *delay, ctx)?;
                let delay = if *delay_is_double { f64::from_bits(raw as u64).floor() as i64 } else { raw };
                if delay < 0 {
                    return Err(rt(RtKind::NegativeDelay { delay }, info.span));
                }
                if st.timers.len() as u32 >= self.limits.timers {
                    return Err(rt(RtKind::TooManyTimers { limit: self.limits.timers }, info.span));
                }
                let t = Timer { due: st.clock.saturating_add(delay), seq: st.timer_seq, cons: *then, this: ctx.this, bound: ctx.bound };
                st.timer_seq += 1;
                // Keep the queue sorted descending by (due, seq): the next timer is last.
                let pos = st.timers.partition_point(|x| (x.due, x.seq) > (t.due, t.seq));
                st.timers.insert(pos, t);
                Ok(())
            }
            Cons::Create { god, assign } => {
                let g = match god {
                    GodSel::Fixed(g) => *g,
                    GodSel::Bound => ctx.bound as GodId,
                };
                let id = self.create(st, g, depth, info.span)?;
                if let Some(place) = assign {
                    self.write(st, *place, ctx, id as i64)?;
                }
                Ok(())
            }
            Cons::GameIncrease { node, rest, by } => {
                let mut node = *node;
                for seg in rest {
                    let sym = match seg {
                        Segment::Sym(s) => *s,
                        Segment::Dynamic(e) => self.eval(st, *e, ctx)?,
                    };
                    node = self.store.dyn_children[(self.store.dyn_base[node as usize] as i64 + sym) as usize];
                }
                let amount = match by {
                    Some(e) => self.eval(st, *e, ctx)?,
                    None => 1,
                };
                let n = self.n_store_nodes();
                st.slots[node as usize] = st.slots[node as usize].wrapping_add(amount);
                let mut a = node;
                let mut parts = super::deps::store(0);
                while a != 0 {
                    st.slots[n + a as usize] = st.slots[n + a as usize].wrapping_add(amount);
                    parts |= super::deps::store(a);
                    a = self.store.parent[a as usize];
                }
                st.dirty.mark(parts);
                Ok(())
            }
            Cons::Delete { obj } => {
                let v = self.eval(st, *obj, ctx)?;
                match st.objects.get_mut(v as usize) {
                    Some(o) if v >= 0 && o.alive => {
                        o.alive = false;
                        st.dirty.mark(super::deps::GONE);
                        // Timers owned by the deleted object, or bound to it by forEveryInstance,
                        // die with it. (A forEveryGOD `bound` is a description, not an object.)
                        let v = v as u32;
                        let bound_to_v = |t: &Timer| t.bound == v && matches!(self.conses[t.cons as usize].bind, BindKind::Instance(_));
                        st.timers.retain(|t| t.this != v && !bound_to_v(t));
                        Ok(())
                    }
                    _ => Err(rt(RtKind::DeleteNull, info.span)),
                }
            }
            Cons::EndSession => {
                st.end_session = true;
                Ok(())
            }
            Cons::EndTurn => {
                st.end_turn = true;
                Ok(())
            }
            Cons::Tile { grid, op, args } => {
                let mut vals = [0i64; 2];
                for (v, &a) in vals.iter_mut().zip(args) {
                    *v = self.eval(st, a, ctx)?;
                }
                self.tile_do(st, *grid, *op, &vals[..args.len()], info.span)
            }
        }
    }

    /// Fires rules to a fixpoint: passes over all rules in file order until one pass fires none,
    /// or until a rule asks to end the session.
    pub(super) fn fire_rules(&self, st: &mut State) -> Result<(), RuntimeError> {
        let ctx = Ctx { this: NONE, bound: NONE };
        let mut firings = 0u32;
        loop {
            let mut fired = false;
            for &r in &self.rules {
                let a = &self.actions[r as usize];
                // False when rules last stood still, and nothing it reads written since.
                if a.reads & st.dirty.rules == 0 {
                    continue;
                }
                if self.conditions_hold(st, a, ctx)? {
                    firings += 1;
                    if firings > self.limits.rule_firings {
                        return Err(rt(RtKind::RunawayRule { rule: a.name.clone(), limit: self.limits.rule_firings }, a.span));
                    }
                    let pending = std::mem::take(&mut st.end_session);
                    self.run_consequences(st, r, ctx, 0)?;
                    let requested = st.end_session;
                    st.end_session |= pending;
                    if requested {
                        // This rule ends the session: firing stops here, the session ends, and
                        // rules fire afresh in the new one (a rule could not otherwise make its
                        // own condition false before the session is over).
                        return Ok(());
                    }
                    fired = true;
                }
            }
            if !fired {
                // Every rule is false now.
                st.dirty.rules = 0;
                return Ok(());
            }
        }
    }

    /// Moves the clock towards `t`, firing due timers in (due time, scheduling order), rules to
    /// a fixpoint after each. Stops early — at that timer's time — when a consequence asks to end
    /// the session, and says so. Once the clock has moved, rules that read the clock fire again.
    fn advance_to(&self, st: &mut State, t: i64) -> Result<bool, RuntimeError> {
        self.advance(st, t, true)
    }

    /// [`Program::advance_to`]; `clock_rules` = false leaves the final firing of clock-reading
    /// rules to the caller (a session boundary fires rules once the new session has begun).
    fn advance(&self, st: &mut State, t: i64, clock_rules: bool) -> Result<bool, RuntimeError> {
        let mut fired = 0u32;
        while let Some(&timer) = st.timers.last() {
            if timer.due > t {
                break;
            }
            fired += 1;
            if fired > self.limits.timers {
                return Err(self.runaway_timer(timer.cons));
            }
            st.timers.pop();
            st.clock = st.clock.max(timer.due);
            st.dirty.mark(super::deps::CLOCK);
            // A timer scheduled by an object deleted later in the same action dies with it.
            let dead = |id: u32| st.objects.get(id as usize).is_some_and(|o| !o.alive);
            if dead(timer.this) || (self.conses[timer.cons as usize].bind_instance() && dead(timer.bound)) {
                continue;
            }
            self.exec(st, timer.cons, Ctx { this: timer.this, bound: timer.bound }, 0)?;
            self.fire_rules(st)?;
            if st.end_session {
                return Ok(true);
            }
        }
        if t > st.clock {
            st.clock = t;
            st.dirty.mark(super::deps::CLOCK);
            if clock_rules && self.rules_read_time {
                self.fire_rules(st)?;
                return Ok(st.end_session);
            }
        }
        Ok(false)
    }

    #[cold]
    fn runaway_timer(&self, c: ConsId) -> RuntimeError {
        let info = &self.conses[c as usize];
        rt(RtKind::RunawayTimers { consequence: info.name.clone(), limit: self.limits.timers }, info.span)
    }

    /// Ends the current session: the clock goes to the session's end, then through the pause
    /// (requests to end a session are void meanwhile); then rules fire for the new session.
    fn end_session(&self, st: &mut State) -> Result<(), RuntimeError> {
        st.end_session = false;
        if self.session_length > 0 {
            let end = self.session_start(st.sessions).saturating_add(self.session_length);
            while self.advance_to(st, end)? {
                st.end_session = false;
            }
            st.sessions += 1;
            st.dirty.mark(super::deps::SESSIONS);
            let next = self.session_start(st.sessions);
            while self.advance(st, next, false)? {
                st.end_session = false;
            }
        } else {
            st.sessions += 1;
            st.dirty.mark(super::deps::SESSIONS);
        }
        self.fire_rules(st)
    }

    /// Ends sessions while a consequence asks for it (a rule of the new session may ask again).
    fn settle(&self, st: &mut State) -> Result<(), RuntimeError> {
        let mut n = 0u32;
        while st.end_session {
            n += 1;
            if n > self.limits.rule_firings {
                return Err(rt(RtKind::RunawaySessions { limit: self.limits.rule_firings }, Span::default()));
            }
            self.end_session(st)?;
        }
        Ok(())
    }

    /// Lets `duration` seconds pass after a move: timers fire, the session may end.
    fn pass_time(&self, st: &mut State, duration: i64) -> Result<(), RuntimeError> {
        if st.end_session {
            self.settle(st)?;
            if self.session_length > 0 {
                // The session is over: the clock already went through the pause.
                return Ok(());
            }
        }
        let target = st.clock.saturating_add(duration);
        loop {
            if self.session_length > 0 {
                let end = self.session_start(st.sessions).saturating_add(self.session_length);
                if self.advance_to(st, target.min(end))? {
                    // A timer ended the session early; the rest of the move's time is not spent.
                    return self.settle(st);
                }
                if target >= end {
                    self.end_session(st)?;
                    return self.settle(st);
                }
                return Ok(());
            }
            if !self.advance_to(st, target)? {
                return Ok(());
            }
            self.settle(st)?;
        }
    }

    /// Moves past every goal that holds, in order. The goal being pursued was false at the last
    /// check: it is evaluated again only if something it reads has changed since.
    fn advance_goals(&self, st: &mut State) -> Result<(), RuntimeError> {
        let ctx = Ctx { this: NONE, bound: NONE };
        while (st.goal as usize) < self.goals.len() {
            let g = &self.goals[st.goal as usize];
            if g.reads & st.dirty.checks == 0 || self.eval(st, g.expr, ctx)? == 0 {
                break;
            }
            st.goal += 1;
            // The next goal has not been checked yet.
            st.dirty.checks = super::deps::ALL;
        }
        Ok(())
    }

    /// True when all the action's conditions hold (the action instance is legal).
    pub fn is_legal(&self, st: &State, a: Action) -> Result<bool, RuntimeError> {
        let Some(info) = self.actions.get(a.def as usize) else { return Ok(false) };
        if info.kind != ActionKind::Player || a.this as usize >= st.objects.len() || !st.objects[a.this as usize].alive {
            return Ok(false);
        }
        let class = st.objects[a.this as usize].class;
        if !self.is_sub(class, info.class.unwrap_or(0)) {
            return Ok(false);
        }
        match info.bind {
            BindKind::None => {
                if a.bound != NONE {
                    return Ok(false);
                }
            }
            BindKind::God(c) => {
                if a.bound as usize >= self.gods.len() || !self.is_sub(self.gods[a.bound as usize].class, c) {
                    return Ok(false);
                }
            }
            BindKind::Instance(c) => match st.objects.get(a.bound as usize) {
                Some(o) if o.alive && self.is_sub(o.class, c) => {}
                _ => return Ok(false),
            },
            BindKind::Number(lo, hi) => {
                if a.bound < lo || a.bound > hi {
                    return Ok(false);
                }
            }
            BindKind::Hex => match &self.hex {
                Some(h) if (a.bound as usize) < h.len() && !h.wall[a.bound as usize] => {}
                _ => return Ok(false),
            },
        }
        if !self.conditions_hold(st, info, Ctx { this: a.this, bound: a.bound })? {
            return Ok(false);
        }
        if self.has_filters {
            // Filters depend on the other legal moves: decide as the move list does.
            let mut all = Vec::new();
            self.legal_actions(st, &mut all)?;
            return Ok(all.contains(&a));
        }
        Ok(true)
    }

    /// Fills `out` with every legal action instance: objects in creation order, each object's
    /// actions in declaration order (inherited first), bindings in declaration/creation order.
    pub fn legal_actions(&self, st: &State, out: &mut Vec<Action>) -> Result<(), RuntimeError> {
        self.with_occ(st, |occ| {
            self.candidate_actions_inner(st, out, false, occ)?;
            if self.has_filters {
                self.filter_moves(st, out, false, occ)?;
            }
            Ok(())
        })
    }

    /// Every action instance whose conditions hold, before move filters, with the occupants
    /// listed in `occ`. `for_policy` = false skips `policyOnly` actions when no filter looks at
    /// them.
    pub(super) fn candidate_actions_inner(
        &self,
        st: &State,
        out: &mut Vec<Action>,
        for_policy: bool,
        occ: Option<&OccCache>,
    ) -> Result<(), RuntimeError> {
        out.clear();
        if st.outcome != 0 {
            return Ok(());
        }
        CANDIDATES.with(|g| match g.try_borrow_mut() {
            Ok(mut scratch) => {
                scratch.global.clear();
                scratch.global.resize(self.actions.len(), 0);
                scratch.bound_class = None;
                self.candidates(st, out, for_policy, occ, &mut scratch)
            }
            // Nested (not expected): with scratch space of its own.
            Err(_) => self.candidates(st, out, for_policy, occ, &mut Scratch::default()),
        })
    }

    fn candidates(
        &self,
        st: &State,
        out: &mut Vec<Action>,
        for_policy: bool,
        occ: Option<&OccCache>,
        scratch: &mut Scratch,
    ) -> Result<(), RuntimeError> {
        let global = &mut scratch.global[..];
        let skip_hidden = !for_policy && !self.unless_sees_policy_only;
        for (oid, obj) in st.objects.iter().enumerate() {
            let class = &self.classes[obj.class as usize];
            if !obj.alive || class.actor_gate.is_some_and(|g| !self.gate_open(st, g, oid as u32)) {
                continue;
            }
            // Every action's own gate is the class's, just found open.
            let gated = class.actor_gate.is_some();
            for &a in &class.actions {
                let info = &self.actions[a as usize];
                if skip_hidden && info.policy_only {
                    continue;
                }
                // `unless`: a move of a named action is listed already, so the filter would drop
                // every move of this one (conditions not evaluated, as `choose` leaves some).
                if !info.unless.is_empty() && out.iter().any(|m| info.unless.contains(&m.def)) {
                    continue;
                }
                let this = oid as u32;
                if info.global_conds > 0 {
                    match global.get(a as usize) {
                        // Known already this generation: the owner-free conditions fail.
                        Some(1) => continue,
                        // Only owner-free conditions, known to hold: a move for every owner.
                        Some(2) if info.global_conds == info.conditions.len() && info.bind == BindKind::None => {
                            out.push(Action { def: a, this, bound: NONE });
                            continue;
                        }
                        _ => {}
                    }
                }
                match info.bind {
                    BindKind::None => {
                        if self.owner_ok(st, a, this, occ, global, gated)?
                            && self.conditions_hold_from(st, info, Ctx { this, bound: NONE }, info.owner_conds, occ)?
                        {
                            out.push(Action { def: a, this, bound: NONE });
                        }
                    }
                    BindKind::God(_) | BindKind::Instance(_) | BindKind::Number(..) | BindKind::Hex
                        if !self.owner_ok(st, a, this, occ, global, gated)? => {}
                    // The bindings share one environment, rebound for each.
                    BindKind::God(c) => {
                        let conds = &self.cond_fxs(a)[info.owner_conds..];
                        let mut env = super::fast::Env::unbound_object(self, st, Ctx { this, bound: NONE }, occ);
                        for &g in &self.classes[c as usize].gods {
                            env.rebind(g as u32, 0);
                            if self.all_hold(&env, conds)? {
                                out.push(Action { def: a, this, bound: g as u32 });
                            }
                        }
                    }
                    BindKind::Instance(c) => {
                        if scratch.bound_class != Some(c) {
                            scratch.bound_class = Some(c);
                            scratch.bound.clear();
                            let live = st.objects.iter().enumerate().filter(|(_, b)| b.alive && self.is_sub(b.class, c));
                            scratch.bound.extend(live.map(|(i, b)| (i as u32, b.base)));
                        }
                        let conds = &self.cond_fxs(a)[info.owner_conds..];
                        let mut env = super::fast::Env::unbound_object(self, st, Ctx { this, bound: NONE }, occ);
                        for &(bound, base) in &scratch.bound {
                            env.rebind(bound, base);
                            if self.all_hold(&env, conds)? {
                                out.push(Action { def: a, this, bound });
                            }
                        }
                    }
                    BindKind::Number(lo, hi) => match info.swap_filter {
                        // The swap set of the board, once (from the cache when the rules just
                        // made it), then a bit per number.
                        Some((g, min)) => self.with_swap_set(st, g, min, |bits| -> Result<(), RuntimeError> {
                            // The filter is the last condition and every number is a swap: the
                            // moves are the set bits.
                            if info.conditions.len() == info.owner_conds + 1
                                && self.swap_in_range(g, lo as i64)
                                && self.swap_in_range(g, hi as i64)
                            {
                                for (w, &word) in bits.iter().enumerate() {
                                    let mut b = word;
                                    while b != 0 {
                                        let bound = (w * 64) as u32 + b.trailing_zeros();
                                        b &= b - 1;
                                        if (lo..=hi).contains(&bound) {
                                            out.push(Action { def: a, this, bound });
                                        }
                                    }
                                }
                                return Ok(());
                            }
                            for bound in lo..=hi {
                                let from = match self.swap_in_range(g, bound as i64) {
                                    true if bits[bound as usize / 64] >> (bound % 64) & 1 == 0 => continue,
                                    true => info.owner_conds + 1,
                                    // Out of range: the interpreted condition reports it.
                                    false => info.owner_conds,
                                };
                                if self.conditions_hold_from(st, info, Ctx { this, bound }, from, occ)? {
                                    out.push(Action { def: a, this, bound });
                                }
                            }
                            Ok(())
                        })?,
                        None => {
                            let conds = &self.cond_fxs(a)[info.owner_conds..];
                            let mut env = super::fast::Env::unbound_object(self, st, Ctx { this, bound: NONE }, occ);
                            for bound in lo..=hi {
                                env.rebind(bound, 0);
                                if self.all_hold(&env, conds)? {
                                    out.push(Action { def: a, this, bound });
                                }
                            }
                        }
                    },
                    BindKind::Hex if info.walk_order.is_some() && self.walk_ordered(st, info, a, this, out, occ)? => {}
                    BindKind::Hex => {
                        let Some(h) = &self.hex else { continue };
                        for bound in 0..h.len() as u32 {
                            if !h.wall[bound as usize] && self.conditions_hold_from(st, info, Ctx { this, bound }, info.owner_conds, occ)? {
                                out.push(Action { def: a, this, bound });
                            }
                        }
                    }
                }
            }
        }
        Ok(())
    }

    /// The moves of a `forEveryHex` action with a walk order (its owner conditions hold): cells
    /// by walk from X, the first n whose conditions hold, pushed in cell order — the moves
    /// `choose` would keep of all cells. Conditions of cells after those are not evaluated.
    /// Returns `false` (nothing done) without a hex map.
    fn walk_ordered(
        &self,
        st: &State,
        info: &ActionInfo,
        a: ActionId,
        this: u32,
        out: &mut Vec<Action>,
        occ: Option<&OccCache>,
    ) -> Result<bool, RuntimeError> {
        let (Some(h), Some(order), Some((n, key))) = (&self.hex, &info.walk_order, info.choose) else { return Ok(false) };
        let n = n as usize;
        let owner = super::fast::Env::with_occ(self, st, Ctx { this, bound: NONE }, occ);
        let from = self.eval_env(&owner, order.from)?;
        if from < 0 || from as usize >= h.len() {
            // What `hex.walk(X, h)` reports for every cell.
            let last = h.len().saturating_sub(1);
            return Err(rt(RtKind::OffMap { cell: from, last }, self.spans[(key.start + key.len - 1) as usize]));
        }
        let from = from as usize;
        // The operands that do not read the cell, evaluated when first needed.
        const CACHED: usize = 8;
        let mut cache: [Option<i64>; CACHED] = [None; CACHED];
        let mut once = |k: usize, e: ExprId| -> Result<i64, RuntimeError> {
            match cache.get(k).copied().flatten() {
                Some(v) => Ok(v),
                None => {
                    let v = self.eval_env(&owner, e)?;
                    if let Some(slot) = cache.get_mut(k) {
                        *slot = Some(v);
                    }
                    Ok(v)
                }
            }
        };
        let start = out.len();
        if n > 0 {
            'cells: for &c in h.by_walk(from) {
                let c = c as usize;
                for (k, cond) in order.conds.iter().enumerate() {
                    let holds = match *cond {
                        CellCond::Free => !h.wall[c] && !self.occupied(&owner, c)?,
                        CellCond::Hidden(x) => {
                            let me = once(k, x)?;
                            self.hidden(&owner, h, c, me)?
                        }
                        CellCond::WalkBound { limit, strict } => {
                            let (w, e) = (h.walk(from, c), once(k, limit)?);
                            if strict { w < e } else { w <= e }
                        }
                        CellCond::Eval(e) => {
                            let env = super::fast::Env::with_occ(self, st, Ctx { this, bound: c as u32 }, occ);
                            self.eval_env(&env, e)? != 0
                        }
                    };
                    if !holds {
                        if order.bound == Some(info.owner_conds + k) {
                            break 'cells;
                        }
                        continue 'cells;
                    }
                }
                out.push(Action { def: a, this, bound: c as u32 });
                if out.len() - start == n {
                    break;
                }
            }
        }
        out[start..].sort_unstable_by_key(|m| m.bound);
        Ok(true)
    }

    /// Applies a player move: its consequences in attachment order, rules to a fixpoint, then
    /// the action's duration on the game clock (timers fire, sessions end), then goals.
    /// The caller guarantees legality (see [`Program::apply_checked`]).
    pub fn apply(&self, st: &mut State, a: Action) -> Result<(), RuntimeError> {
        let info = &self.actions[a.def as usize];
        let ctx = Ctx { this: a.this, bound: a.bound };
        self.run_consequences(st, a.def, ctx, 0)?;
        self.fire_rules(st)?;
        if st.end_turn {
            self.end_turn(st)?;
        }
        let duration = match info.duration.or(self.default_duration) {
            Some((e, is_double)) => {
                let raw = self.eval(st, e, ctx)?;
                let d = if is_double { f64::from_bits(raw as u64).floor() as i64 } else { raw };
                if d < 0 {
                    return Err(rt(RtKind::NegativeDelay { delay: d }, self.spans[e.start as usize]));
                }
                d
            }
            None => 0,
        };
        self.pass_time(st, duration)?;
        st.moves += 1;
        st.dirty.mark(super::deps::MOVES);
        self.advance_goals(st)?;
        self.check_outcomes(st)?;
        st.dirty.checks = 0;
        Ok(())
    }

    /// [`Program::apply`] after checking that the move is legal.
    pub fn apply_checked(&self, st: &mut State, a: Action) -> Result<(), RuntimeError> {
        if !self.is_legal(st, a)? {
            let err = match self.actions.get(a.def as usize) {
                Some(info) => rt(RtKind::IllegalAction { action: self.action_name(st, a) }, info.span),
                None => {
                    rt(RtKind::IllegalAction { action: format!("#{} (there are {} actions)", a.def, self.actions.len()) }, Span::default())
                }
            };
            return Err(err);
        }
        self.apply(st, a)
    }

    pub fn status(&self, st: &State, legal: &[Action]) -> Status {
        if st.outcome == 1 {
            Status::Draw
        } else if st.outcome >= 2 {
            Status::Won(st.outcome - 2)
        } else if st.goal as usize >= self.goals.len() && !self.goals.is_empty() {
            Status::Finished
        } else if st.turns >= self.limits.turns {
            Status::TurnLimit
        } else if st.moves >= self.limits.steps {
            Status::StepLimit
        } else if legal.is_empty() {
            Status::Stuck
        } else {
            Status::Running
        }
    }

    /// An object's readable name: its description, numbered (`plot#2`) when there are several.
    pub fn object_label(&self, st: &State, id: u32) -> String {
        let Some(o) = st.objects.get(id as usize) else { return "?".into() };
        let g = &self.gods[o.god as usize];
        if st.objects.iter().filter(|x| x.god == o.god).count() > 1 {
            let nth = st.objects[..id as usize].iter().filter(|x| x.god == o.god).count() + 1;
            format!("{}#{nth}", g.name)
        } else {
            g.name.clone()
        }
    }

    /// `getCoins(coin20)`, `plantSeed(farm#3, wheat)`: a readable name for a move.
    pub fn action_name(&self, st: &State, a: Action) -> String {
        let info = &self.actions[a.def as usize];
        let obj = |id: u32| self.object_label(st, id);
        match info.bind {
            BindKind::None => format!("{}({})", info.name, obj(a.this)),
            BindKind::Instance(_) => format!("{}({}, {})", info.name, obj(a.this), obj(a.bound)),
            BindKind::God(_) => {
                let g = self.gods.get(a.bound as usize).map_or("?", |g| g.name.as_str());
                format!("{}({}, {g})", info.name, obj(a.this))
            }
            BindKind::Number(..) => format!("{}({}, {})", info.name, obj(a.this), a.bound),
            BindKind::Hex => match &self.hex {
                Some(h) if (a.bound as usize) < h.len() => {
                    format!("{}({}, {}:({},{}))", info.name, obj(a.this), a.bound, h.q[a.bound as usize], h.r[a.bound as usize])
                }
                _ => format!("{}({}, {})", info.name, obj(a.this), a.bound),
            },
        }
    }

    /// Renders a value of static type `ty`.
    pub fn show(&self, ty: Ty, v: i64) -> String {
        match ty {
            Ty::Long => v.to_string(),
            Ty::Double => format!("{}", f64::from_bits(v as u64)),
            Ty::Bool => (v != 0).to_string(),
            Ty::Str => self.sym(v).to_string(),
            Ty::Obj(_) | Ty::Null => {
                if v == NULL {
                    "null".into()
                } else {
                    format!("object#{v}")
                }
            }
        }
    }

    /// Every named value of a state, in a fixed order (the clock, the game's values, then each
    /// object's attributes): (name, type, value). `run` prints their differences; a state's text
    /// form lists them.
    pub fn named_values(&self, st: &State) -> Vec<(String, Ty, i64)> {
        let mut v = Vec::new();
        v.push(("game.time".to_string(), Ty::Long, st.clock));
        v.push(("game.sessionsFinished".to_string(), Ty::Long, st.sessions));
        for (i, path) in self.store.paths.iter().enumerate().skip(1) {
            v.push((format!("game.{path}"), Ty::Long, st.slots[i]));
        }
        for (id, o) in st.objects.iter().enumerate() {
            let name = self.object_label(st, id as u32);
            for (k, a) in self.classes[o.class as usize].attrs.iter().enumerate() {
                let val = if o.alive { st.slots[(o.base as usize) + k] } else { 0 };
                v.push((format!("{name}.{}", a.name), a.ty, val));
            }
        }
        v
    }

    /// A 64-bit hash of everything mutable in the state (FxHash-style mixing; no allocation).
    pub fn hash_state(&self, st: &State) -> u64 {
        st.fingerprint()
    }
}

impl Clone for State {
    fn clone(&self) -> State {
        State {
            slots: self.slots.clone(),
            objects: self.objects.clone(),
            timers: self.timers.clone(),
            clock: self.clock,
            timer_seq: self.timer_seq,
            moves: self.moves,
            goal: self.goal,
            sessions: self.sessions,
            to_move: self.to_move,
            rng: self.rng,
            end_session: self.end_session,
            actor: self.actor,
            round: self.round,
            turns: self.turns,
            outcome: self.outcome,
            end_turn: self.end_turn,
            dirty: self.dirty,
        }
    }

    /// Reuses this state's buffers: no allocation once they are large enough.
    fn clone_from(&mut self, src: &State) {
        self.slots.clone_from(&src.slots);
        self.objects.clone_from(&src.objects);
        self.timers.clone_from(&src.timers);
        self.clock = src.clock;
        self.timer_seq = src.timer_seq;
        self.moves = src.moves;
        self.goal = src.goal;
        self.sessions = src.sessions;
        self.to_move = src.to_move;
        self.rng = src.rng;
        self.end_session = src.end_session;
        self.actor = src.actor;
        self.round = src.round;
        self.turns = src.turns;
        self.outcome = src.outcome;
        self.end_turn = src.end_turn;
        self.dirty = src.dirty;
    }
}

impl State {
    /// A 64-bit hash of everything that makes two states different games from here on.
    pub fn fingerprint(&self) -> u64 {
        const K: u64 = 0x517c_c1b7_2722_0a95;
        let mut h: u64 = 0;
        let mut mix = |v: u64| h = (h.rotate_left(5) ^ v).wrapping_mul(K);
        for &s in &self.slots {
            mix(s as u64);
        }
        for o in &self.objects {
            mix(((o.god as u64) << 33) | ((o.alive as u64) << 32) | o.base as u64);
        }
        for t in &self.timers {
            mix(t.due as u64);
            mix(((t.cons as u64) << 32) ^ ((t.this as u64) << 16) ^ t.bound as u64);
        }
        mix(self.clock as u64);
        mix(self.sessions as u64);
        mix(((self.goal as u64) << 8) | self.to_move as u64);
        mix(self.rng);
        mix(((self.actor as u64) << 32) | ((self.outcome as u64) << 24) | self.round as u64);
        mix(self.turns as u64);
        h
    }
}

/// `a op b` for the long operators, checked: a result outside the range of a long is an
/// [`RtKind::Overflow`] (as division by zero is an error, so is overflow; the caller checks a
/// zero divisor first). `i64::MIN / -1` overflows too.
#[inline]
pub(crate) fn checked_long(op: Op, a: i64, b: i64) -> Result<i64, RtKind> {
    let (r, sym) = match op {
        Op::AddL => (a.checked_add(b), "+"),
        Op::SubL => (a.checked_sub(b), "-"),
        Op::MulL => (a.checked_mul(b), "*"),
        Op::DivL => (a.checked_div(b), "/"),
        _ => unreachable!("not a long operator: {op:?}"),
    };
    r.ok_or(RtKind::Overflow { a, op: sym, b })
}
