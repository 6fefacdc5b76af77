//! Selection formulas: the value MCTS maximizes when it picks a child, as an expression tree over
//! node statistics. The tree is a run-time value — the persona issue evolves it by genetic
//! programming — so it prints as infix text and parses back ([`Formula::parse`], `Display`).
//!
//! Variables: `mean` (x_j, mean reward of the child), `wins` (Σr of the child: with 0/1 rewards,
//! its wins), `visits` (n_j), `parent` (n, the parent's visits), `sumsq` (Σr² of the child),
//! `best` (best reward seen below the child), `moves` (legal moves in the child's state). Operators `+ - * /` and functions `sqrt ln max min`; `/`, `sqrt`
//! and `ln` are protected (÷0 → 1, √ of a negative → √|x|, ln of x ≤ 0 → 0) so every tree
//! evaluates to a number. The usual precedence applies here (this is not WGDL).
//!
//! For speed a formula is flattened once into postfix [`Compiled`] code, evaluated on a fixed
//! stack without allocation.
//!
//! **Depth.** Every walk over a formula (evaluation, printing, compiling, GP's simplifier,
//! dropping the tree) recurses, so [`Formula::parse`] accepts at most [`MAX_DEPTH`] levels, of
//! the tree and of the brackets, functions and signs open at once: no text can overflow the
//! stack, and [`Compiled::eval`]'s fixed stack (one slot per level) always suffices. GP's trees
//! are far below it (their height limit is 17, a depth of 18), so whatever GP writes parses back.

use std::fmt;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Var {
    Mean,
    Wins,
    Visits,
    Parent,
    SumSq,
    Best,
    Moves,
}

impl Var {
    pub const ALL: [Var; 7] = [Var::Mean, Var::Wins, Var::Visits, Var::Parent, Var::SumSq, Var::Best, Var::Moves];
    pub fn name(self) -> &'static str {
        match self {
            Var::Mean => "mean",
            Var::Wins => "wins",
            Var::Visits => "visits",
            Var::Parent => "parent",
            Var::SumSq => "sumsq",
            Var::Best => "best",
            Var::Moves => "moves",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Fun {
    Add,
    Sub,
    Mul,
    Div,
    Max,
    Min,
    Sqrt,
    Ln,
}

impl Fun {
    pub fn arity(self) -> usize {
        match self {
            Fun::Sqrt | Fun::Ln => 1,
            _ => 2,
        }
    }
}

/// The deepest formula [`Formula::parse`] accepts: 64 levels of the tree (a lone variable or
/// number is one level, each operator or function above it one more, so a chain `a + b + … `
/// of 64 operators is 65 deep and refused) and 64 brackets, functions and signs open at once.
/// A hand-written formula has a handful and GP's at most 18; 64 levels cost a few kilobytes of
/// stack in any walk, and [`Compiled::eval`] keeps one value per level.
pub const MAX_DEPTH: usize = 64;

/// The most terms (numbers, variables, operators, functions) one formula may have: what a
/// binary tree of GP's height limit can hold. Every selection step of MCTS evaluates the whole
/// formula, so a 16 MiB formula file (two million terms) would make a persona crawl.
pub const MAX_NODES: usize = 1 << 18;

/// The most characters of a formula an error quotes (a window around the column).
const SHOWN: usize = 120;

/// A selection formula.
#[derive(Clone, Debug, PartialEq)]
pub enum Formula {
    Const(f64),
    Var(Var),
    Call(Fun, Vec<Formula>),
}

/// The statistics a formula reads, for one child.
#[derive(Clone, Copy, Debug, Default)]
pub struct Stats {
    pub mean: f64,
    pub wins: f64,
    pub visits: f64,
    pub parent: f64,
    pub sumsq: f64,
    pub best: f64,
    pub moves: f64,
}

impl Stats {
    fn get(&self, v: Var) -> f64 {
        match v {
            Var::Mean => self.mean,
            Var::Wins => self.wins,
            Var::Visits => self.visits,
            Var::Parent => self.parent,
            Var::SumSq => self.sumsq,
            Var::Best => self.best,
            Var::Moves => self.moves,
        }
    }
}

pub fn apply(f: Fun, a: f64, b: f64) -> f64 {
    match f {
        Fun::Add => a + b,
        Fun::Sub => a - b,
        Fun::Mul => a * b,
        Fun::Div => {
            if b.abs() < 1e-12 {
                1.0
            } else {
                a / b
            }
        }
        Fun::Max => a.max(b),
        Fun::Min => a.min(b),
        Fun::Sqrt => a.abs().sqrt(),
        Fun::Ln => {
            if a <= 0.0 {
                0.0
            } else {
                a.ln()
            }
        }
    }
}

impl Formula {
    fn c(v: f64) -> Formula {
        Formula::Const(v)
    }
    fn v(v: Var) -> Formula {
        Formula::Var(v)
    }
    fn call(f: Fun, args: Vec<Formula>) -> Formula {
        Formula::Call(f, args)
    }
    fn add(a: Formula, b: Formula) -> Formula {
        Self::call(Fun::Add, vec![a, b])
    }
    fn mul(a: Formula, b: Formula) -> Formula {
        Self::call(Fun::Mul, vec![a, b])
    }
    fn div(a: Formula, b: Formula) -> Formula {
        Self::call(Fun::Div, vec![a, b])
    }
    fn sqrt(a: Formula) -> Formula {
        Self::call(Fun::Sqrt, vec![a])
    }
    fn ln_parent() -> Formula {
        Self::call(Fun::Ln, vec![Self::v(Var::Parent)])
    }

    /// UCB1: x_j + C·√(D·ln n / n_j).
    pub fn ucb1(c: f64, d: f64) -> Formula {
        Self::add(
            Self::v(Var::Mean),
            Self::mul(Self::c(c), Self::sqrt(Self::div(Self::mul(Self::c(d), Self::ln_parent()), Self::v(Var::Visits)))),
        )
    }

    /// V_j = max(D, x_j(1 − x_j)) as the thesis defines it for UCB-Tuned.
    fn tuned_variance(d: f64) -> Formula {
        let m = Self::v(Var::Mean);
        Self::call(Fun::Max, vec![Self::c(d), Self::mul(m.clone(), Self::call(Fun::Sub, vec![Self::c(1.0), m]))])
    }

    /// UCB-Tuned 1: x_j + C·√(V_j·ln n / n_j).
    pub fn ucb_tuned1(c: f64, d: f64) -> Formula {
        Self::add(
            Self::v(Var::Mean),
            Self::mul(Self::c(c), Self::sqrt(Self::div(Self::mul(Self::tuned_variance(d), Self::ln_parent()), Self::v(Var::Visits)))),
        )
    }

    /// UCB-Tuned 2: UCB-Tuned 1 + ln n / n_j.
    pub fn ucb_tuned2(c: f64, d: f64) -> Formula {
        Self::add(Self::ucb_tuned1(c, d), Self::div(Self::ln_parent(), Self::v(Var::Visits)))
    }

    /// SP-MCTS (Schadd et al.): x_j + C·√(ln n / n_j) + √((Σr² − n_j·x_j² + D) / n_j).
    pub fn sp_mcts(c: f64, d: f64) -> Formula {
        let m = Self::v(Var::Mean);
        let n = Self::v(Var::Visits);
        let var = Self::call(Fun::Sub, vec![Self::v(Var::SumSq), Self::mul(n.clone(), Self::mul(m.clone(), m.clone()))]);
        Self::add(
            Self::add(m, Self::mul(Self::c(c), Self::sqrt(Self::div(Self::ln_parent(), n.clone())))),
            Self::sqrt(Self::div(Self::add(var, Self::c(d)), n)),
        )
    }

    /// UCB for SP (the thesis's): y_j + C·√(V_j·ln n / n_j), y_j = (1 − w)·x_j + w·b_j.
    pub fn ucb_for_sp(c: f64, d: f64, w: f64) -> Formula {
        let y = Self::add(Self::mul(Self::c(1.0 - w), Self::v(Var::Mean)), Self::mul(Self::c(w), Self::v(Var::Best)));
        Self::add(
            y,
            Self::mul(Self::c(c), Self::sqrt(Self::div(Self::mul(Self::tuned_variance(d), Self::ln_parent()), Self::v(Var::Visits)))),
        )
    }

    pub fn eval(&self, s: &Stats) -> f64 {
        match self {
            Formula::Const(c) => *c,
            Formula::Var(v) => s.get(*v),
            Formula::Call(f, args) => {
                let a = args[0].eval(s);
                let b = if args.len() > 1 { args[1].eval(s) } else { 0.0 };
                apply(*f, a, b)
            }
        }
    }

    pub fn size(&self) -> usize {
        match self {
            Formula::Call(_, a) => 1 + a.iter().map(|x| x.size()).sum::<usize>(),
            _ => 1,
        }
    }

    pub fn depth(&self) -> usize {
        match self {
            Formula::Call(_, a) => 1 + a.iter().map(|x| x.depth()).max().unwrap_or(0),
            _ => 1,
        }
    }

    pub fn compile(&self) -> Compiled {
        let mut code = Vec::new();
        self.emit(&mut code);
        Compiled::new(self, code)
    }

    fn emit(&self, out: &mut Vec<FOp>) {
        match self {
            Formula::Const(c) => out.push(FOp::Const(*c)),
            Formula::Var(v) => out.push(FOp::Var(*v)),
            Formula::Call(f, args) => {
                for a in args {
                    a.emit(out);
                }
                out.push(FOp::Call(*f));
            }
        }
    }

    /// Parses infix text such as `mean + 0.7 * sqrt(2 * ln(parent) / visits)`; a formula
    /// nested deeper than [`MAX_DEPTH`] levels is an error at the column where it goes deeper.
    pub fn parse(text: &str) -> Result<Formula, FormulaError> {
        let toks = tokenize(text)?;
        let mut p = FParser { toks: &toks, pos: 0, text, open: 0 };
        let (f, _) = p.sum()?;
        if p.pos != toks.len() {
            return Err(p.error("an operator or the end of the formula"));
        }
        if f.size() > MAX_NODES {
            return Err(FormulaError {
                text: text.to_string(),
                col: 1,
                expected: format!("at most {MAX_NODES} terms (the most GP's trees can have)"),
            });
        }
        Ok(f)
    }
}

/// A formula that does not parse: where (the 1-based column, in characters) and what was
/// expected there. It shows a window of a long formula, never the whole.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("formula `{}`, column {col}: expected {expected}", crate::input::window(text, *col, SHOWN))]
pub struct FormulaError {
    pub text: String,
    pub col: usize,
    pub expected: String,
}

#[derive(Clone, Debug, PartialEq)]
enum FTok {
    Num(f64),
    Name(String),
    Op(char),
}

fn tokenize(text: &str) -> Result<Vec<(FTok, usize)>, FormulaError> {
    let b: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    let mut open = 0usize;
    while i < b.len() {
        let c = b[i];
        if c.is_whitespace() {
            i += 1;
        } else if c.is_ascii_digit() || c == '.' {
            let s = i;
            while i < b.len()
                && (b[i].is_ascii_digit() || b[i] == '.' || b[i] == 'e' || ((b[i] == '-' || b[i] == '+') && i > s && b[i - 1] == 'e'))
            {
                i += 1;
            }
            let t: String = b[s..i].iter().collect();
            // A number past the doubles (`1e999`) would print as `inf`, which does not parse back.
            let v = t.parse::<f64>().ok().filter(|v| v.is_finite()).ok_or_else(|| FormulaError {
                text: text.into(),
                col: s + 1,
                expected: "a number (finite: below 1.8e308)".into(),
            })?;
            out.push((FTok::Num(v), s));
        } else if c.is_ascii_alphabetic() || c == '_' {
            let s = i;
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == '_') {
                i += 1;
            }
            out.push((FTok::Name(b[s..i].iter().collect()), s));
        } else if "+-*/(),".contains(c) {
            out.push((FTok::Op(c), i));
            i += 1;
            // The parser fails at the latest on the `(` that opens level MAX_DEPTH + 1 (every
            // open bracket is an open level), and reads no token past the one it fails on: the
            // rest of a deeply nested text is not worth keeping in memory.
            open = match c {
                '(' => open + 1,
                ')' => open.saturating_sub(1),
                _ => open,
            };
            if open > MAX_DEPTH {
                break;
            }
        } else {
            return Err(FormulaError { text: text.into(), col: i + 1, expected: "a number, a variable, an operator or a bracket".into() });
        }
    }
    Ok(out)
}

struct FParser<'a> {
    toks: &'a [(FTok, usize)],
    pos: usize,
    text: &'a str,
    /// Brackets, functions and signs open at this point; see [`MAX_DEPTH`].
    open: usize,
}

/// A parsed part and its depth ([`Formula::depth`]), kept as the parser goes so that checking
/// it costs nothing.
type Part = (Formula, usize);

/// What a formula too deep is told.
fn too_deep() -> String {
    format!(
        "at most {MAX_DEPTH} levels of operators, functions, brackets and signs; the formula is nested deeper than {MAX_DEPTH} levels here"
    )
}

impl FParser<'_> {
    fn error(&self, expected: &str) -> FormulaError {
        let col = self.toks.get(self.pos).map_or(self.text.chars().count(), |t| t.1) + 1;
        FormulaError { text: self.text.into(), col, expected: expected.into() }
    }
    fn op(&mut self, c: char) -> bool {
        if matches!(self.toks.get(self.pos), Some((FTok::Op(x), _)) if *x == c) {
            self.pos += 1;
            true
        } else {
            false
        }
    }
    /// The node `f(args)` made at token `at`, unless it is deeper than [`MAX_DEPTH`].
    fn node(&self, f: Fun, args: Vec<Part>, at: usize) -> Result<Part, FormulaError> {
        let depth = 1 + args.iter().map(|a| a.1).max().unwrap_or(0);
        if depth > MAX_DEPTH {
            return Err(self.error_at(at, &too_deep()));
        }
        Ok((Formula::Call(f, args.into_iter().map(|a| a.0).collect()), depth))
    }
    fn error_at(&self, at: usize, expected: &str) -> FormulaError {
        let mut e = self.error(expected);
        if let Some(t) = self.toks.get(at) {
            e.col = t.1 + 1;
        }
        e
    }
    /// Opens one more bracket, function or sign, at token `at`.
    fn enter(&mut self, at: usize) -> Result<(), FormulaError> {
        if self.open >= MAX_DEPTH {
            return Err(self.error_at(at, &too_deep()));
        }
        self.open += 1;
        Ok(())
    }
    fn sum(&mut self) -> Result<Part, FormulaError> {
        let mut l = self.product()?;
        loop {
            let at = self.pos;
            let f = if self.op('+') {
                Fun::Add
            } else if self.op('-') {
                Fun::Sub
            } else {
                return Ok(l);
            };
            let r = self.product()?;
            l = self.node(f, vec![l, r], at)?;
        }
    }
    fn product(&mut self) -> Result<Part, FormulaError> {
        let mut l = self.unary()?;
        loop {
            let at = self.pos;
            let f = if self.op('*') {
                Fun::Mul
            } else if self.op('/') {
                Fun::Div
            } else {
                return Ok(l);
            };
            let r = self.unary()?;
            l = self.node(f, vec![l, r], at)?;
        }
    }
    fn unary(&mut self) -> Result<Part, FormulaError> {
        // A sign before a number is part of the number (`(-3)` is how a negative constant
        // prints), so it opens no level: whatever prints at most MAX_DEPTH deep parses back.
        if let (Some((FTok::Op('-'), _)), Some((FTok::Num(v), _))) = (self.toks.get(self.pos), self.toks.get(self.pos + 1)) {
            self.pos += 2;
            return Ok((Formula::Const(-v), 1));
        }
        if matches!(self.toks.get(self.pos), Some((FTok::Op('-'), _))) {
            self.enter(self.pos)?;
            let at = self.pos;
            self.pos += 1;
            let x = self.unary()?;
            self.open -= 1;
            return match x {
                (Formula::Const(c), d) => Ok((Formula::Const(-c), d)),
                x => self.node(Fun::Sub, vec![(Formula::Const(0.0), 1), x], at),
            };
        }
        self.atom()
    }
    fn atom(&mut self) -> Result<Part, FormulaError> {
        match self.toks.get(self.pos).cloned() {
            Some((FTok::Num(v), _)) => {
                self.pos += 1;
                Ok((Formula::Const(v), 1))
            }
            Some((FTok::Op('('), _)) => {
                self.enter(self.pos)?;
                self.pos += 1;
                let f = self.sum()?;
                if !self.op(')') {
                    return Err(self.error("`)`"));
                }
                self.open -= 1;
                Ok(f)
            }
            Some((FTok::Name(n), _)) => {
                let at = self.pos;
                self.pos += 1;
                if let Some(v) = Var::ALL.iter().find(|v| v.name() == n) {
                    return Ok((Formula::Var(*v), 1));
                }
                let f = match n.as_str() {
                    "sqrt" => Fun::Sqrt,
                    "ln" => Fun::Ln,
                    "max" => Fun::Max,
                    "min" => Fun::Min,
                    _ => {
                        self.pos -= 1;
                        return Err(
                            self.error("a variable (mean, wins, visits, parent, sumsq, best, moves) or a function (sqrt, ln, max, min)")
                        );
                    }
                };
                if !self.op('(') {
                    return Err(self.error("`(` after the function name"));
                }
                self.enter(at)?;
                let mut args = vec![self.sum()?];
                while self.op(',') {
                    args.push(self.sum()?);
                }
                if args.len() != f.arity() {
                    return Err(self.error(&format!("{} argument(s) for {n}", f.arity())));
                }
                if !self.op(')') {
                    return Err(self.error("`)`"));
                }
                self.open -= 1;
                self.node(f, args, at)
            }
            _ => Err(self.error("a number, a variable, a function or `(`")),
        }
    }
}

impl fmt::Display for Formula {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fn prec(x: &Formula) -> u8 {
            match x {
                Formula::Call(Fun::Add | Fun::Sub, _) => 1,
                Formula::Call(Fun::Mul | Fun::Div, _) => 2,
                _ => 3,
            }
        }
        fn wrap(f: &mut fmt::Formatter<'_>, x: &Formula, need: u8) -> fmt::Result {
            if prec(x) < need { write!(f, "({x})") } else { write!(f, "{x}") }
        }
        match self {
            Formula::Const(c) => {
                if *c < 0.0 {
                    write!(f, "({c})")
                } else {
                    write!(f, "{c}")
                }
            }
            Formula::Var(v) => f.write_str(v.name()),
            Formula::Call(op @ (Fun::Add | Fun::Sub | Fun::Mul | Fun::Div), a) => {
                let (p, s) = match op {
                    Fun::Add => (1, " + "),
                    Fun::Sub => (1, " - "),
                    Fun::Mul => (2, " * "),
                    _ => (2, " / "),
                };
                wrap(f, &a[0], p)?;
                f.write_str(s)?;
                // The right operand is bracketed at equal precedence, so that the printed text
                // parses back to the same tree (`a * (b * c)` stays right-nested).
                wrap(f, &a[1], p + 1)
            }
            Formula::Call(fun, a) => {
                let name = match fun {
                    Fun::Sqrt => "sqrt",
                    Fun::Ln => "ln",
                    Fun::Max => "max",
                    _ => "min",
                };
                write!(f, "{name}(")?;
                for (i, x) in a.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{x}")?;
                }
                f.write_str(")")
            }
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum FOp {
    Const(f64),
    Var(Var),
    Call(Fun),
}

/// A value of the children's formula: read inline (a statistic, a constant, or a part of the
/// formula that depends on the parent alone, computed once per node).
#[derive(Clone, Copy, Debug)]
enum FLeaf {
    Const(f64),
    Var(Var),
    /// Index into the node's hoisted values.
    Hoisted(usize),
}

impl FLeaf {
    #[inline(always)]
    fn get(self, s: &Stats, h: &[f64]) -> f64 {
        match self {
            FLeaf::Const(c) => c,
            FLeaf::Var(v) => s.get(v),
            FLeaf::Hoisted(i) => h[i],
        }
    }
}

type ChildFn = Box<dyn Fn(&Stats, &[f64]) -> f64 + Send + Sync>;

/// The most hoisted values a formula keeps per node (the rest are evaluated per child).
const MAX_HOISTED: usize = 8;

/// A formula compiled for selection: the parts that read only the parent's visits (such as
/// `ln(parent)`) are computed once per node ([`Compiled::at_parent`]), the rest per child by
/// closures with their leaves inline ([`Compiled::eval_child`]); UCB1 has a hand-written path.
/// Every value is computed by the same operations in the same order as [`Formula::eval`], so
/// the results are identical to the bit.
pub struct Compiled {
    code: Vec<FOp>,
    hoisted: Vec<Formula>,
    child: ChildFn,
    /// `(c, d)` when the formula is exactly [`Formula::ucb1`]`(c, d)`.
    ucb1: Option<(f64, f64)>,
    /// The most values `code` keeps on the stack at once (at most the formula's depth).
    need: usize,
}

/// The values of a [`Compiled`] formula that depend on the parent alone.
#[derive(Clone, Copy, Debug)]
pub struct AtParent {
    values: [f64; MAX_HOISTED],
}

impl Clone for Compiled {
    fn clone(&self) -> Compiled {
        Formula::from_postfix(&self.code).compile()
    }
}

impl fmt::Debug for Compiled {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Compiled").field("code", &self.code).field("hoisted", &self.hoisted.len()).finish()
    }
}

impl PartialEq for Compiled {
    fn eq(&self, other: &Compiled) -> bool {
        self.code == other.code
    }
}

impl Formula {
    /// Rebuilds a formula from its postfix code.
    fn from_postfix(code: &[FOp]) -> Formula {
        let mut stack: Vec<Formula> = Vec::new();
        for op in code {
            match *op {
                FOp::Const(c) => stack.push(Formula::Const(c)),
                FOp::Var(v) => stack.push(Formula::Var(v)),
                FOp::Call(f) => {
                    let args = stack.split_off(stack.len() - f.arity());
                    stack.push(Formula::Call(f, args));
                }
            }
        }
        stack.pop().expect("a formula leaves one value")
    }

    /// Whether the formula reads only `parent` and constants, and reads `parent`.
    fn parent_only(&self) -> (bool, bool) {
        match self {
            Formula::Const(_) => (true, false),
            Formula::Var(Var::Parent) => (true, true),
            Formula::Var(_) => (false, false),
            Formula::Call(_, a) => a.iter().map(|x| x.parent_only()).fold((true, false), |(o, p), (xo, xp)| (o && xo, p || xp)),
        }
    }

    /// The child closure of this formula; parent-only parts go to `hoisted`.
    fn lower_child(&self, hoisted: &mut Vec<Formula>) -> Result<FLeaf, ChildFn> {
        let (only, reads) = self.parent_only();
        if only && reads && !matches!(self, Formula::Var(_)) && hoisted.len() < MAX_HOISTED {
            hoisted.push(self.clone());
            return Ok(FLeaf::Hoisted(hoisted.len() - 1));
        }
        match self {
            Formula::Const(c) => Ok(FLeaf::Const(*c)),
            Formula::Var(v) => Ok(FLeaf::Var(*v)),
            Formula::Call(f, args) => {
                let f = *f;
                let a = args[0].lower_child(hoisted);
                if f.arity() == 1 {
                    return Err(match a {
                        Ok(x) => Box::new(move |s, h| apply(f, x.get(s, h), 0.0)),
                        Err(x) => Box::new(move |s, h| apply(f, x(s, h), 0.0)),
                    });
                }
                let b = args[1].lower_child(hoisted);
                Err(match (a, b) {
                    (Ok(x), Ok(y)) => Box::new(move |s, h| apply(f, x.get(s, h), y.get(s, h))),
                    (Ok(x), Err(y)) => Box::new(move |s, h| apply(f, x.get(s, h), y(s, h))),
                    (Err(x), Ok(y)) => Box::new(move |s, h| apply(f, x(s, h), y.get(s, h))),
                    (Err(x), Err(y)) => Box::new(move |s, h| {
                        let a = x(s, h);
                        apply(f, a, y(s, h))
                    }),
                })
            }
        }
    }

    /// `(c, d)` when this is exactly `Formula::ucb1(c, d)`.
    fn as_ucb1(&self) -> Option<(f64, f64)> {
        use Formula::{Call, Const, Var as V};
        let Call(Fun::Add, a) = self else { return None };
        let [V(Var::Mean), Call(Fun::Mul, m)] = a.as_slice() else { return None };
        let [Const(c), Call(Fun::Sqrt, s)] = m.as_slice() else { return None };
        let [Call(Fun::Div, q)] = s.as_slice() else { return None };
        let [Call(Fun::Mul, n), V(Var::Visits)] = q.as_slice() else { return None };
        let [Const(d), Call(Fun::Ln, l)] = n.as_slice() else { return None };
        let [V(Var::Parent)] = l.as_slice() else { return None };
        Some((*c, *d))
    }
}

impl Compiled {
    fn new(f: &Formula, code: Vec<FOp>) -> Compiled {
        let mut hoisted = Vec::new();
        let child = match f.lower_child(&mut hoisted) {
            Ok(leaf) => Box::new(move |s: &Stats, h: &[f64]| leaf.get(s, h)) as ChildFn,
            Err(c) => c,
        };
        let (mut sp, mut need) = (0usize, 0usize);
        for op in &code {
            match op {
                FOp::Const(_) | FOp::Var(_) => sp += 1,
                FOp::Call(f) => sp = sp + 1 - f.arity(),
            }
            need = need.max(sp);
        }
        Compiled { code, hoisted, child, ucb1: f.as_ucb1(), need }
    }

    /// The formula's value for one child (the reference path: no hoisting).
    #[inline]
    pub fn eval(&self, s: &Stats) -> f64 {
        // A formula of depth d keeps at most d values on the stack: every formula that parses
        // (MAX_DEPTH) and every GP tree fits the fixed stack; a deeper one built in code (such
        // as a long sum GP's simplifier made) gets one of its size.
        if self.need <= MAX_DEPTH { self.run(s, &mut [0f64; MAX_DEPTH]) } else { self.run(s, &mut vec![0f64; self.need]) }
    }

    #[inline]
    fn run(&self, s: &Stats, stack: &mut [f64]) -> f64 {
        let mut sp = 0;
        for op in &self.code {
            match *op {
                FOp::Const(c) => {
                    stack[sp] = c;
                    sp += 1;
                }
                FOp::Var(v) => {
                    stack[sp] = s.get(v);
                    sp += 1;
                }
                FOp::Call(f) => {
                    if f.arity() == 1 {
                        stack[sp - 1] = apply(f, stack[sp - 1], 0.0);
                    } else {
                        sp -= 1;
                        stack[sp - 1] = apply(f, stack[sp - 1], stack[sp]);
                    }
                }
            }
        }
        stack[0]
    }

    /// The parts of the formula that read only the parent's visits, for a node with `parent`
    /// visits (the value the children's [`Stats::parent`] holds).
    #[inline]
    pub fn at_parent(&self, parent: f64) -> AtParent {
        let mut values = [0.0; MAX_HOISTED];
        if let Some((_, d)) = self.ucb1 {
            values[0] = d * apply(Fun::Ln, parent, 0.0);
        } else {
            let s = Stats { parent, ..Stats::default() };
            for (v, f) in values.iter_mut().zip(&self.hoisted) {
                *v = f.eval(&s);
            }
        }
        AtParent { values }
    }

    /// The formula's value for a child whose parent's values are `at` (equal to the bit to
    /// [`Compiled::eval`] with the same statistics).
    #[inline]
    pub fn eval_child(&self, at: &AtParent, s: &Stats) -> f64 {
        match self.ucb1 {
            Some((c, _)) => s.mean + c * apply(Fun::Sqrt, apply(Fun::Div, at.values[0], s.visits), 0.0),
            None => (self.child)(s, &at.values),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stats() -> Stats {
        Stats { mean: 0.4, wins: 4.0, visits: 10.0, parent: 100.0, sumsq: 2.0, best: 0.9, moves: 21.0 }
    }

    #[test]
    fn ucb1_matches_its_definition() {
        let s = stats();
        let want = 0.4 + 0.7 * (2.0 * 100f64.ln() / 10.0).sqrt();
        assert!((Formula::ucb1(0.7, 2.0).eval(&s) - want).abs() < 1e-12);
        assert!((Formula::ucb1(0.7, 2.0).compile().eval(&s) - want).abs() < 1e-12);
    }

    #[test]
    fn printed_formulas_parse_back() {
        for f in [
            Formula::ucb1(0.7, 2.0),
            Formula::ucb_tuned1(1.0, 0.02),
            Formula::ucb_tuned2(1.0, 0.02),
            Formula::sp_mcts(0.5, 10000.0),
            Formula::ucb_for_sp(1.0, 0.02, 0.2),
        ] {
            let text = f.to_string();
            let back = Formula::parse(&text).unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(back, f, "{text}");
            assert_eq!(back.eval(&stats()), f.eval(&stats()));
        }
        assert!(Formula::parse("a - (b - c)").is_err(), "`a`, `b`, `c` are not variables");
        let f = Formula::parse("mean - (visits - parent) / (best / moves)").unwrap();
        assert_eq!(Formula::parse(&f.to_string()).unwrap(), f);
    }

    /// The per-node path (hoisted parent parts, closures, UCB1's own path) gives the bits of the
    /// reference evaluation on every shipped formula and a few evolved-looking ones.
    #[test]
    fn hoisted_evaluation_is_bit_identical() {
        let texts = [
            "mean",
            "0 - visits",
            "sqrt(moves) * sqrt(sqrt(moves) / sqrt(wins / visits * ((wins + parent) / sqrt(wins))))",
            "ln(parent) / visits + parent * 2 - sqrt(parent + 1) * mean",
            "max(ln(parent), wins) / min(parent, 3) + best * sumsq",
            "3.108 / (visits + parent - visits / moves) - (wins + moves * (moves - parent))",
        ];
        let mut all: Vec<Formula> = texts.iter().map(|t| Formula::parse(t).unwrap()).collect();
        all.extend([
            Formula::ucb1(0.7, 2.0),
            Formula::ucb1(std::f64::consts::SQRT_2, 1.0),
            Formula::ucb_tuned1(1.0, 0.02),
            Formula::ucb_tuned2(1.0, 0.02),
            Formula::sp_mcts(0.5, 10000.0),
            Formula::ucb_for_sp(1.0, 0.02, 0.2),
        ]);
        assert!(all[6].compile().ucb1.is_some() && all[8].compile().ucb1.is_none());
        for f in &all {
            let c = f.compile();
            for parent in [0.0, 1.0, 2.0, 7.0, 250.0, 1e6] {
                let at = c.at_parent(parent);
                for (visits, mean) in [(1.0, 0.0), (1.0, 1.0), (3.0, 0.25), (40.0, 0.7), (1e5, 0.5)] {
                    let s = Stats { mean, wins: mean * visits, visits, parent, sumsq: mean * visits * 0.9, best: 0.8, moves: 6.0 };
                    assert_eq!(c.eval_child(&at, &s).to_bits(), c.eval(&s).to_bits(), "{f} at parent {parent}, visits {visits}");
                    assert_eq!(c.eval(&s).to_bits(), f.eval(&s).to_bits(), "{f}");
                }
            }
        }
    }

    #[test]
    fn protected_operators_never_give_nan() {
        let f = Formula::parse("sqrt(mean - 5) / (visits - visits) + ln(0 - parent)").unwrap();
        assert!(f.eval(&stats()).is_finite());
    }

    #[test]
    fn parse_errors_point_at_the_column() {
        let e = Formula::parse("mean + foo").unwrap_err();
        assert_eq!(e.col, 8);
        let e = Formula::parse("mean * 1e999").unwrap_err();
        assert_eq!((e.col, e.expected.as_str()), (8, "a number (finite: below 1.8e308)"));
    }
}
