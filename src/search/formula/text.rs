//! Formulas as infix text: printed by `Display` and parsed back by [`Formula::parse`] (the
//! usual precedence; at most [`MAX_DEPTH`] levels and [`MAX_NODES`] terms), with errors that
//! point at a column ([`FormulaError`]).

use super::*;
use std::fmt;

/// The most characters of a formula an error quotes (a window around the column).
const SHOWN: usize = 120;

impl Formula {
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

#[cfg(test)]
mod tests {
    use super::*;

    fn stats() -> Stats {
        Stats { mean: 0.4, wins: 4.0, visits: 10.0, parent: 100.0, sumsq: 2.0, best: 0.9, moves: 21.0 }
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

    #[test]
    fn parse_errors_point_at_the_column() {
        let e = Formula::parse("mean + foo").unwrap_err();
        assert_eq!(e.col, 8);
        let e = Formula::parse("mean * 1e999").unwrap_err();
        assert_eq!((e.col, e.expected.as_str()), (8, "a number (finite: below 1.8e308)"));
    }
}
