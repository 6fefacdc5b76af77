//! The syntax tree of a WGDL file, exactly as written: one [`Decl`] per line, every node with its
//! [`Span`]. Names are still strings here; the compiler (`compile/`) turns them into indices once.
//!
//! The tree keeps the thesis's shape (a flat list of keyword-first declarations) rather than
//! grouping lines by class, because order is free in WGDL and the checker must be able to point at
//! each line on its own. [`Expr`]'s `Display` prints a fully bracketed form that parses back to the
//! same tree (tested in the parser).

use crate::wgdl::diag::Span;
use std::fmt;

#[derive(Clone, Debug, PartialEq)]
pub struct Ident {
    pub name: String,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub struct File {
    pub decls: Vec<Decl>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Decl {
    pub kind: DeclKind,
    /// The whole line.
    pub span: Span,
    /// `style <name>:` / `variant <name>:` (extension): the line belongs to a named overlay and
    /// counts only when that overlay is selected (`variant not <name>:` — only when it is not).
    pub overlay: Option<Overlay>,
}

/// Which kind of named overlay a tagged line belongs to (games/README.md §9.16).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OverlayKind {
    /// A play style: restrictions on what a player does (move filters, mostly).
    Style,
    /// A design variant: a change to the rules or parameters.
    Variant,
}

impl OverlayKind {
    pub fn word(self) -> &'static str {
        match self {
            OverlayKind::Style => "style",
            OverlayKind::Variant => "variant",
        }
    }
}

/// The tag of a line: `variant monochrome:` or `variant not monochrome:`.
#[derive(Clone, Debug, PartialEq)]
pub struct Overlay {
    pub kind: OverlayKind,
    pub name: Ident,
    /// `not`: the line counts only when the overlay is *not* selected.
    pub negated: bool,
}

impl Decl {
    /// Every expression written on the line, in source order. The match is exhaustive (no `_`
    /// arm), so a new declaration kind must say here which expressions it holds — the lints
    /// (`front/lint.rs`) walk every expression through this and cannot forget a kind.
    pub fn exprs(&self) -> Vec<&Expr> {
        let mut out = Vec::new();
        match &self.kind {
            DeclKind::Attribute { value, .. } => out.push(value),
            DeclKind::Condition { expr, .. }
            | DeclKind::Goal { expr, .. }
            | DeclKind::Duration { expr, .. }
            | DeclKind::Session { expr, .. }
            | DeclKind::Outcome { expr, .. }
            | DeclKind::Constraint { expr } => out.push(expr),
            DeclKind::Consequence { body, .. } => match body {
                ConsBody::Direct(e) | ConsBody::Create(e) | ConsBody::Delete(e) | ConsBody::Do(e) => out.push(e),
                ConsBody::CreateAndAssign(a, b) => out.extend([a, b]),
                ConsBody::Conditional(e, _) | ConsBody::Timed(e, _) => out.push(e),
                ConsBody::GameIncrease { path, by } => out.extend(path.iter().chain(by)),
                ConsBody::EndSession | ConsBody::EndTurn | ConsBody::Error => {}
            },
            DeclKind::Turn { cond, .. } | DeclKind::HexOccupants { cond, .. } | DeclKind::Notation { cond, .. } => out.extend(cond),
            DeclKind::ByChance { weight, .. } => out.extend(weight),
            DeclKind::Policy { pick, cond, .. } => {
                match pick {
                    Pick::Weight(e) | Pick::Max(e) => out.push(e),
                    Pick::First | Pick::Random => {}
                }
                out.extend(cond);
            }
            DeclKind::Choose { key, .. } => out.push(key),
            DeclKind::Class { .. }
            | DeclKind::Object { .. }
            | DeclKind::Action { .. }
            | DeclKind::HasConsequence { .. }
            | DeclKind::Initial { .. }
            | DeclKind::GameValue { .. }
            | DeclKind::ActionGroup { .. }
            | DeclKind::IsInGroup { .. }
            | DeclKind::Limit { .. }
            | DeclKind::Players { .. }
            | DeclKind::TurnOrder { .. }
            | DeclKind::HexMap { .. }
            | DeclKind::Chance { .. }
            | DeclKind::Grid { .. }
            | DeclKind::Parameter { .. }
            | DeclKind::PolicyOnly { .. }
            | DeclKind::LastResort { .. }
            | DeclKind::Unless { .. }
            | DeclKind::View { .. }
            | DeclKind::Pieces { .. }
            | DeclKind::Start { .. }
            | DeclKind::Forward { .. } => {}
        }
        out
    }
}

/// A declared type: `long | double | boolean | string | object:<Class>`.
#[derive(Clone, Debug, PartialEq)]
pub enum TypeExpr {
    Long,
    Double,
    Boolean,
    String,
    Object(Ident),
}

#[derive(Clone, Debug, PartialEq)]
pub enum Binding {
    ForEveryInstance,
    ForEveryGod,
    /// `forEveryNumber <var> <lo> <hi>` (extension): one move per whole number in [lo, hi].
    ForEveryNumber(i64, i64),
    /// `forEveryHex <var>` (extension): one move per walkable cell of the hex map.
    ForEveryHex,
    /// `forEveryCell <var> <grid>` (extension): one move per cell of a grid.
    ForEveryCell(Ident),
    /// `forEveryStep <from> <to> <grid> <directions>` and `forEveryJump <from> <over> <to> <grid>
    /// <directions>` (extension): one move per cell and direction of the set whose step (or two
    /// steps) stays on the grid; the binding's name is `from`.
    ForEveryStep {
        over: Option<Ident>,
        to: Ident,
        grid: Ident,
        dirs: Ident,
    },
}

#[derive(Clone, Debug, PartialEq)]
pub enum ActionKind {
    /// `action name`: a rule, fired automatically after every move.
    Rule,
    /// `action Class name [forEvery… Class]`: a player action.
    Player { class: Ident, binding: Option<(Binding, Ident)> },
    /// `action create:Class name`: runs when an object of Class is created.
    OnCreate { class: Ident },
    /// `action round:Class name [forEveryInstance B]` (extension): runs at the end of every
    /// round for each live object of Class (× each live B).
    OnRound { class: Ident, binding: Option<(Binding, Ident)> },
}

#[derive(Clone, Debug, PartialEq)]
pub enum ConsBody {
    Direct(Expr),
    Create(Expr),
    /// `createAndAssign <GOD-or-class> <attribute path>`.
    CreateAndAssign(Expr, Expr),
    /// `conditional <condition> <target> [<target> …]`: the targets run in order if it holds.
    Conditional(Expr, Vec<Ident>),
    Timed(Expr, Ident),
    /// `game increase seg, seg, … [by expr]`.
    GameIncrease {
        path: Vec<Expr>,
        by: Option<Expr>,
    },
    /// `delete <object expression>` (extension).
    Delete(Expr),
    /// `endSession` (extension): the current session ends now.
    EndSession,
    /// `endTurn` (extension): the acting object's turn ends after this move.
    EndTurn,
    /// `do <grid>.<operation>(args)` (extension): a tile-grid operation.
    Do(Expr),
    /// A body that did not parse (already reported); the consequence's name stays declared.
    Error,
}

#[derive(Clone, Debug, PartialEq)]
pub enum DeclKind {
    Class {
        name: Ident,
        parent: Option<Ident>,
    },
    Object {
        name: Ident,
        class: Ident,
    },
    /// The three attribute forms. `constant` is the `attribute class C …` form; `ty` is absent in
    /// the per-object form `attribute obj name value`.
    Attribute {
        constant: bool,
        target: Ident,
        name: Ident,
        ty: Option<(TypeExpr, Span)>,
        value: Expr,
    },
    Action {
        name: Ident,
        kind: ActionKind,
    },
    Condition {
        action: Ident,
        expr: Expr,
    },
    Consequence {
        name: Ident,
        body: ConsBody,
    },
    /// `hasConsequence <action> <consequence> [<consequence> …]`: attached in the order written.
    HasConsequence {
        action: Ident,
        consequences: Vec<Ident>,
    },
    Initial {
        object: Ident,
    },
    Goal {
        k: u32,
        k_span: Span,
        expr: Expr,
    },
    /// `game name seg . seg …`: a name for a game value store path.
    GameValue {
        name: Ident,
        path: Vec<Ident>,
    },
    ActionGroup {
        name: Ident,
        weight: f64,
    },
    IsInGroup {
        group: Ident,
        action: Ident,
    },
    /// `duration [action] expr` (extension): seconds a player action takes.
    Duration {
        action: Option<Ident>,
        expr: Expr,
    },
    /// `session length|pause expr` (extension): the player profile.
    Session {
        key: Ident,
        expr: Expr,
    },
    /// `limit ruleFirings|objects|timers|steps|turns n` (extension).
    Limit {
        key: Ident,
        value: u64,
    },
    /// `players <name> <name> …` (extension): the sides, in order (side 0, 1, …).
    Players {
        names: Vec<Ident>,
    },
    /// `turn <Class> <sideAttribute> [while <condition>]` (extension): objects of Class take turns.
    Turn {
        class: Ident,
        side: Ident,
        cond: Option<Expr>,
    },
    /// `turnOrder grouped|alternating` (extension).
    TurnOrder {
        mode: Ident,
    },
    /// `winner <player> <condition>` / `draw <condition>` (extension); `player` is `None` for a draw.
    Outcome {
        player: Option<Ident>,
        expr: Expr,
    },
    /// `hexmap "<file>"` (extension): the hex map, relative to the game file.
    HexMap {
        path: String,
        path_span: Span,
    },
    /// `hexOccupants <Class> <posAttribute> <sideAttribute> [while <condition>]` (extension).
    HexOccupants {
        class: Ident,
        pos: Ident,
        side: Ident,
        cond: Option<Expr>,
    },
    /// `chance oracle|fair` (extension): whether searches see the real future of the game's
    /// random stream.
    Chance {
        mode: Ident,
    },
    /// `grid <name> <width> <height>` (extension): a board of long cells, all 0 at the start.
    Grid {
        name: Ident,
        width: Dim,
        height: Dim,
    },
    /// `parameter <description>.<attribute> <min> <max>` (extension): a tunable value.
    Parameter {
        god: Ident,
        attr: Ident,
        min: f64,
        max: f64,
    },
    /// `policy <name> <action> <pick> [if <condition>]` (extension): one tier of a policy.
    Policy {
        name: Ident,
        action: Ident,
        pick: Pick,
        cond: Option<Expr>,
    },
    /// `constraint <condition>` (extension): parameter values must satisfy it in the start state.
    Constraint {
        expr: Expr,
    },
    /// `policyOnly <action>`: the action is never offered to a search, only to policies.
    PolicyOnly {
        action: Ident,
    },
    /// `choose <action> <n> by <expr>`: per owner, only the n bindings with the lowest key.
    Choose {
        action: Ident,
        n: u32,
        key: Expr,
    },
    /// `lastResort <action> <n>`: legal only when at most n other moves are.
    LastResort {
        action: Ident,
        n: u32,
    },
    /// `unless <action> <other> [<other> …]`: legal only when no move of any `other` is.
    Unless {
        action: Ident,
        others: Vec<Ident>,
    },
    /// `view <class or grid> <hint>` (extension): how the state view draws it; no effect on play.
    View {
        target: Ident,
        hint: ViewHint,
    },
    /// `pieces <grid> "<chars>"` (extension): the character of cell value 0, 1, 2, … — read by
    /// `start` rows, shown by views and `run --board`.
    Pieces {
        grid: Ident,
        chars: String,
        span: Span,
    },
    /// `start <grid> "<row>"` (extension): the next row of the start position, top row first,
    /// one `pieces` character per column (spaces ignored).
    Start {
        grid: Ident,
        row: String,
        span: Span,
    },
    /// `forward <player> <direction>` (extension): the way a side's pieces face; the direction
    /// sets `forward`, `forwardDiagonal`, `forwards`, `backward`, … turn with it.
    Forward {
        player: Ident,
        dir: Ident,
    },
    /// `byChance <action> [weight <expr>]` (extension): the action's moves are chance's, drawn
    /// with probability proportional to the weight (a long; 1 when absent).
    ByChance {
        action: Ident,
        weight: Option<Expr>,
    },
    /// `notation <action> <item> … [if <condition>]` (extension): how a move is written (its
    /// bound cells by name, numbers, quoted text); the first line whose condition holds.
    Notation {
        action: Ident,
        items: Vec<NoteItem>,
        cond: Option<Expr>,
    },
}

/// A grid's width or height: a number, or a declared parameter's value (`size.n`), which makes
/// the parameter shape the program (changing it compiles the game again).
#[derive(Clone, Debug, PartialEq)]
pub enum Dim {
    Number(u32),
    Param(Ident, Ident),
}

/// One piece of a `notation` line.
#[derive(Clone, Debug, PartialEq)]
pub enum NoteItem {
    /// Quoted text, written as it is.
    Text(String),
    /// A binding's name: a cell by its name (`a1` is x = 0, y = 0), a number in decimal.
    Var(Ident),
}

/// What a `view` line asks of the picture (`view::scene` reads the compiled form).
#[derive(Clone, Debug, PartialEq)]
pub enum ViewHint {
    /// `label <attr>`: an object's name on the board and in the panel.
    Label(Ident),
    /// `bar <attr> <max>`: an attribute drawn as a bar out of a number or another attribute.
    Bar { attr: Ident, max: BarMax },
    /// `glyph "<text>"`: what a piece shows on the board (default: its side's initial).
    Glyph(String, Span),
    /// `colour "<css colour>"` (or `color`): a class's pieces, or a grid's tiles by value
    /// (space-separated, value 0 first).
    Colour(String, Span),
    /// `glyphs "<chars>"`: a grid's tile for value k is the k-th character.
    Glyphs(String, Span),
    /// `hide`: a class's objects left out of the panel, or a grid left off the boards.
    Hide,
    /// `hex`: a grid drawn as a rhombus of hexagons, each row half a cell right of the row below
    /// (the geometry of the `hex` direction set).
    Hex,
}

#[derive(Clone, Debug, PartialEq)]
pub enum BarMax {
    Number(f64),
    Attr(Ident),
}

/// How a policy tier picks among its moves.
#[derive(Clone, Debug, PartialEq)]
pub enum Pick {
    /// The first in legal-move order.
    First,
    /// Uniformly at random.
    Random,
    /// At random with probability proportional to the expression (≤ 0 counts as 0).
    Weight(Expr),
    /// The move with the largest value (the first of equals).
    Max(Expr),
}

#[derive(Clone, Debug, PartialEq)]
pub struct Expr {
    pub kind: ExprKind,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Lit {
    Long(i64),
    Double(f64),
    Bool(bool),
    Str(String),
    Null,
}

#[derive(Clone, Debug, PartialEq)]
pub enum ExprKind {
    Lit(Lit),
    /// `object:name`.
    ObjRef(Ident),
    /// `a.b.c` — the root is `this`, an object name or a class name.
    Path(Vec<Ident>),
    /// `game.a[.b…]`.
    GameValue(Vec<Ident>),
    Unary(UnOp, Box<Expr>),
    Binary(BinOp, Box<Expr>, Box<Expr>),
    /// `f(a, b)`, `hex.walk(a, b)`, `board.line(x, y, dx, dy)` (extension): a built-in function.
    Call(Vec<Ident>, Vec<Expr>),
    /// `board[x, y]` (extension): a grid cell; `board[c]`: the cell numbered c (`y * width + x`).
    Index(Ident, Box<Expr>, Option<Box<Expr>>),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UnOp {
    Neg,
    Not,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BinOp {
    Assign,
    Eq,
    Ne,
    And,
    Or,
    Xor,
    Gt,
    Ge,
    Lt,
    Le,
    Add,
    Sub,
    Mul,
    Div,
    /// `%` (extension): the remainder of a long division, its sign the dividend's.
    Mod,
}

impl BinOp {
    /// The thesis's precedence, lowest first (section 4.3): `= == != && || xor > >= < <= + - * /`,
    /// then `%` (extension). Every operator has a level of its own.
    pub fn level(self) -> u8 {
        self as u8
    }
    pub fn symbol(self) -> &'static str {
        match self {
            BinOp::Assign => "=",
            BinOp::Eq => "==",
            BinOp::Ne => "!=",
            BinOp::And => "&&",
            BinOp::Or => "||",
            BinOp::Xor => "xor",
            BinOp::Gt => ">",
            BinOp::Ge => ">=",
            BinOp::Lt => "<",
            BinOp::Le => "<=",
            BinOp::Add => "+",
            BinOp::Sub => "-",
            BinOp::Mul => "*",
            BinOp::Div => "/",
            BinOp::Mod => "%",
        }
    }
}

impl fmt::Display for Expr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.kind {
            ExprKind::Lit(Lit::Long(v)) => write!(f, "long {v}"),
            ExprKind::Lit(Lit::Double(v)) => write!(f, "double {v:?}"),
            ExprKind::Lit(Lit::Bool(v)) => write!(f, "boolean {v}"),
            ExprKind::Lit(Lit::Str(s)) => write!(f, "string \"{s}\""),
            ExprKind::Lit(Lit::Null) => write!(f, "null"),
            ExprKind::ObjRef(i) => write!(f, "object:{}", i.name),
            ExprKind::Path(p) => {
                let names: Vec<&str> = p.iter().map(|i| i.name.as_str()).collect();
                write!(f, "{}", names.join("."))
            }
            ExprKind::GameValue(p) => {
                let names: Vec<&str> = p.iter().map(|i| i.name.as_str()).collect();
                write!(f, "game.{}", names.join("."))
            }
            ExprKind::Unary(UnOp::Neg, e) => write!(f, "-({e})"),
            ExprKind::Unary(UnOp::Not, e) => write!(f, "!({e})"),
            ExprKind::Binary(op, l, r) => write!(f, "({l} {} {r})", op.symbol()),
            ExprKind::Call(name, args) => {
                let names: Vec<&str> = name.iter().map(|i| i.name.as_str()).collect();
                let args: Vec<String> = args.iter().map(|a| a.to_string()).collect();
                write!(f, "{}({})", names.join("."), args.join(", "))
            }
            ExprKind::Index(g, x, Some(y)) => write!(f, "{}[{x}, {y}]", g.name),
            ExprKind::Index(g, c, None) => write!(f, "{}[{c}]", g.name),
        }
    }
}
