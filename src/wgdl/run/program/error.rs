//! Run-time errors: what went wrong ([`RtKind`]), where ([`RuntimeError`] carries the span of the
//! expression or consequence), and the checked long arithmetic that reports overflow.

use super::*;

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
    #[error("every chance move of `{action}` weighs 0 here; expected some outcome with a positive weight")]
    NoChance { action: String },
    #[error("{limit} chance moves in a row (`{action}`); expected a chance move to lead to a player's choice")]
    RunawayChance { action: String, limit: u32 },
    #[error("`canMove` asked inside `canMove` more than {limit} deep; expected the actions it names not to ask `canMove` of themselves")]
    CanMoveTooDeep { limit: u32 },
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
        crate::wgdl::diag::render(&program.source, self.span, "runtime error", &self.kind.to_string())
    }
}

#[cold]
pub(in crate::wgdl) fn rt(kind: RtKind, span: Span) -> RuntimeError {
    RuntimeError(Box::new(RuntimeErrorData { kind, span }))
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
        Op::ModL => (a.checked_rem(b), "%"),
        _ => unreachable!("not a long operator: {op:?}"),
    };
    r.ok_or(RtKind::Overflow { a, op: sym, b })
}
