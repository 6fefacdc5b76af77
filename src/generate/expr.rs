//! Measure expressions (`maxs - mins`, `area / damage`, `2 * vanilla + 1`): numbers and measure
//! names joined by `+ - * /` and parentheses, resolved once against the config's measure names,
//! and the uncertainty of their value. Each measure is a mean over games with a standard error;
//! an expression's standard error comes from the first-order (delta method) propagation with
//! numeric partial derivatives, treating the measures as independent (they come from different
//! games, or the same games of different quantities; the independence is an approximation there,
//! documented in docs/decisions.md).
//!
//! An expression is walked recursively (evaluated, searched for measures, dropped), so the
//! parser accepts at most [`MAX_DEPTH`] levels: no config can overflow the stack.

/// The deepest expression [`Expr::parse`] accepts: 64 levels of the tree (a number or a measure
/// is one level, each operator or sign above it one more, so a chain of 64 operators is 65
/// deep and refused) and 64 brackets and signs open at once. A designer's expression has a
/// handful; 64 levels cost a few kilobytes of stack in any walk.
pub const MAX_DEPTH: usize = 64;

/// The most characters of an expression an error quotes (a window around the position).
const SHOWN: usize = 120;

/// An expression that does not parse: what was wrong, and the byte offset in the expression
/// where it was found (`None` when it is not one place, such as an empty expression).
#[derive(Clone, Debug, PartialEq)]
pub struct ExprError {
    pub at: Option<usize>,
    pub message: String,
}

impl std::fmt::Display for ExprError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for ExprError {}

fn fail<T>(at: usize, message: String) -> Result<T, ExprError> {
    Err(ExprError { at: Some(at), message })
}

/// At most 120 characters of `text` around byte offset `at`, with `…` where it was cut
/// (for an error that quotes an expression of any length).
pub fn window(text: &str, at: usize) -> String {
    let at = text.get(..at.min(text.len())).map_or(0, |s| s.chars().count());
    crate::input::window(text, at, SHOWN)
}

/// A parsed expression over measures by index.
#[derive(Clone, Debug, PartialEq)]
pub enum Expr {
    Num(f64),
    Measure(usize),
    Neg(Box<Expr>),
    Bin(Box<Expr>, char, Box<Expr>),
}

/// A measure's estimate: the mean over games and its standard error.
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Estimate {
    pub mean: f64,
    pub se: f64,
}

impl Estimate {
    /// The 95% confidence interval (mean ± 1.96 · se).
    pub fn ci(&self) -> (f64, f64) {
        (self.mean - 1.96 * self.se, self.mean + 1.96 * self.se)
    }

    /// The estimate of a sample of per-game numbers.
    pub fn of(xs: &[f64]) -> Estimate {
        let n = xs.len();
        if n == 0 {
            return Estimate { mean: 0.0, se: 0.0 };
        }
        let mean = xs.iter().sum::<f64>() / n as f64;
        let se = if n > 1 { (xs.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / (n - 1) as f64 / n as f64).sqrt() } else { 0.0 };
        Estimate { mean, se }
    }
}

impl Expr {
    /// Parses `text` with measures named by `names`; the error says where and what was expected,
    /// and an expression nested deeper than [`MAX_DEPTH`] levels is an error where it goes deeper.
    pub fn parse(text: &str, names: &[&str]) -> Result<Expr, ExprError> {
        let toks = lex(text)?;
        let mut p = Parser { toks, at: 0, names, open: 0 };
        let (e, _) = p.sum()?;
        if p.at < p.toks.len() {
            let (t, pos) = &p.toks[p.at];
            return fail(*pos, format!("unexpected `{}` at position {}; expected an operator or the end", window(t, 0), pos + 1));
        }
        Ok(e)
    }

    /// The value for measure values `m`.
    pub fn eval(&self, m: &[f64]) -> f64 {
        match self {
            Expr::Num(x) => *x,
            Expr::Measure(i) => m[*i],
            Expr::Neg(a) => -a.eval(m),
            Expr::Bin(a, op, b) => {
                let (x, y) = (a.eval(m), b.eval(m));
                match op {
                    '+' => x + y,
                    '-' => x - y,
                    '*' => x * y,
                    _ => {
                        if y == 0.0 {
                            0.0
                        } else {
                            x / y
                        }
                    }
                }
            }
        }
    }

    fn uses(&self, out: &mut Vec<usize>) {
        match self {
            Expr::Num(_) => {}
            Expr::Measure(i) => {
                if !out.contains(i) {
                    out.push(*i)
                }
            }
            Expr::Neg(a) => a.uses(out),
            Expr::Bin(a, _, b) => {
                a.uses(out);
                b.uses(out);
            }
        }
    }

    /// The value and its standard error for measure estimates `m` (a division by 0 counts as 0).
    pub fn estimate(&self, m: &[Estimate]) -> Estimate {
        let means: Vec<f64> = m.iter().map(|e| e.mean).collect();
        let mean = self.eval(&means);
        let mut used = Vec::new();
        self.uses(&mut used);
        let mut var = 0.0;
        for i in used {
            if m[i].se == 0.0 {
                continue;
            }
            // Central difference with a step of one standard error: exact for linear expressions.
            let h = m[i].se;
            let mut up = means.clone();
            up[i] += h;
            let mut down = means.clone();
            down[i] -= h;
            let d = (self.eval(&up) - self.eval(&down)) / (2.0 * h);
            var += d * d * m[i].se * m[i].se;
        }
        Estimate { mean, se: var.sqrt() }
    }
}

fn lex(text: &str) -> Result<Vec<(String, usize)>, ExprError> {
    let mut out = Vec::new();
    let b = text.as_bytes();
    let mut i = 0;
    let mut open = 0usize;
    while i < b.len() {
        let c = b[i] as char;
        if c.is_whitespace() {
            i += 1;
        } else if "+-*/()".contains(c) {
            out.push((c.to_string(), i));
            i += 1;
            // The parser fails at the latest on the `(` that opens level MAX_DEPTH + 1 and reads
            // no token past it: the rest of a deeply nested text is not worth keeping.
            open = match c {
                '(' => open + 1,
                ')' => open.saturating_sub(1),
                _ => open,
            };
            if open > MAX_DEPTH {
                break;
            }
        } else if c.is_ascii_digit() || c == '.' {
            let s = i;
            while i < b.len() && ((b[i] as char).is_ascii_digit() || b[i] == b'.' || b[i] == b'_') {
                i += 1;
            }
            if i < b.len() && (b[i] == b'e' || b[i] == b'E') {
                i += 1;
                if i < b.len() && (b[i] == b'-' || b[i] == b'+') {
                    i += 1;
                }
                while i < b.len() && (b[i] as char).is_ascii_digit() {
                    i += 1;
                }
            }
            out.push((text[s..i].to_string(), s));
        } else if c.is_ascii_alphabetic() || c == '_' {
            let s = i;
            while i < b.len() && ((b[i] as char).is_ascii_alphanumeric() || b[i] == b'_') {
                i += 1;
            }
            out.push((text[s..i].to_string(), s));
        } else {
            let c = text[i..].chars().next().unwrap_or(c);
            return fail(i, format!("`{c}` at position {}; expected numbers, measure names, + - * / and parentheses", i + 1));
        }
    }
    if out.is_empty() {
        return Err(ExprError {
            at: None,
            message: "an empty expression; expected measure names and numbers such as `maxs - mins`".into(),
        });
    }
    Ok(out)
}

struct Parser<'a> {
    toks: Vec<(String, usize)>,
    at: usize,
    names: &'a [&'a str],
    /// Brackets and signs open at this point; see [`MAX_DEPTH`].
    open: usize,
}

/// A parsed part and its depth, kept as the parser goes.
type Part = (Expr, usize);

/// What an expression too deep is told, at byte offset `pos`.
fn too_deep<T>(pos: usize) -> Result<T, ExprError> {
    fail(
        pos,
        format!(
            "nested deeper than {MAX_DEPTH} levels at position {}; expected at most {MAX_DEPTH} levels of operators, brackets and signs",
            pos + 1
        ),
    )
}

impl Parser<'_> {
    fn peek(&self) -> Option<&str> {
        self.toks.get(self.at).map(|t| t.0.as_str())
    }

    /// The byte offset of token `k` (the end of the text past the last token).
    fn pos(&self, k: usize) -> usize {
        self.toks.get(k).or(self.toks.last()).map_or(0, |t| t.1)
    }

    /// `a op b` made at token `k`, unless it is deeper than [`MAX_DEPTH`].
    fn bin(&self, a: Part, op: char, b: Part, k: usize) -> Result<Part, ExprError> {
        let depth = 1 + a.1.max(b.1);
        if depth > MAX_DEPTH {
            return too_deep(self.pos(k));
        }
        Ok((Expr::Bin(Box::new(a.0), op, Box::new(b.0)), depth))
    }

    /// Opens one more bracket or sign, at token `k`.
    fn enter(&mut self, k: usize) -> Result<(), ExprError> {
        if self.open >= MAX_DEPTH {
            return too_deep(self.pos(k));
        }
        self.open += 1;
        Ok(())
    }

    fn sum(&mut self) -> Result<Part, ExprError> {
        let mut e = self.product()?;
        while let Some(op @ ("+" | "-")) = self.peek() {
            let op = op.chars().next().expect("an operator");
            let k = self.at;
            self.at += 1;
            let r = self.product()?;
            e = self.bin(e, op, r, k)?;
        }
        Ok(e)
    }

    fn product(&mut self) -> Result<Part, ExprError> {
        let mut e = self.unary()?;
        while let Some(op @ ("*" | "/")) = self.peek() {
            let op = op.chars().next().expect("an operator");
            let k = self.at;
            self.at += 1;
            let r = self.unary()?;
            e = self.bin(e, op, r, k)?;
        }
        Ok(e)
    }

    fn unary(&mut self) -> Result<Part, ExprError> {
        if self.peek() == Some("-") {
            let k = self.at;
            self.enter(k)?;
            self.at += 1;
            let (a, d) = self.unary()?;
            self.open -= 1;
            if d + 1 > MAX_DEPTH {
                return too_deep(self.pos(k));
            }
            return Ok((Expr::Neg(Box::new(a)), d + 1));
        }
        let Some((t, pos)) = self.toks.get(self.at).cloned() else {
            return Err(ExprError {
                at: Some(self.pos(self.at)),
                message: "the expression ends early; expected a number, a measure or `(`".into(),
            });
        };
        if t == "(" {
            self.enter(self.at)?;
            self.at += 1;
            let e = self.sum()?;
            if self.peek() != Some(")") {
                return fail(pos, format!("`(` at position {} is not closed; expected `)`", pos + 1));
            }
            self.at += 1;
            self.open -= 1;
            return Ok(e);
        }
        self.at += 1;
        let shown = window(&t, 0);
        if t.starts_with(|c: char| c.is_ascii_digit() || c == '.') {
            return match t.replace('_', "").parse::<f64>() {
                Ok(v) if v.is_finite() => Ok((Expr::Num(v), 1)),
                Ok(_) => fail(pos, format!("`{shown}` at position {} is past the doubles; expected a number below 1.8e308", pos + 1)),
                Err(_) => fail(pos, format!("`{shown}` at position {} is not a number", pos + 1)),
            };
        }
        if t.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_') {
            return match self.names.iter().position(|n| *n == t) {
                Some(i) => Ok((Expr::Measure(i), 1)),
                None => {
                    fail(pos, format!("`{shown}` at position {} is not a [[measure]]; expected one of: {}", pos + 1, self.names.join(", ")))
                }
            };
        }
        fail(pos, format!("`{shown}` at position {}; expected a number, a measure or `(`", pos + 1))
    }
}

/// A comparison of a `when` condition.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub enum Cmp {
    Ge,
    Gt,
    Le,
    Lt,
    Eq,
    Ne,
}

impl Cmp {
    pub fn holds(self, a: f64, b: f64) -> bool {
        match self {
            Cmp::Ge => a >= b,
            Cmp::Gt => a > b,
            Cmp::Le => a <= b,
            Cmp::Lt => a < b,
            Cmp::Eq => a == b,
            Cmp::Ne => a != b,
        }
    }
}

/// A `when` condition, `<game value> <op> <number>` (`global.level >= 5`), as (path, op, number).
pub fn parse_when(text: &str) -> Result<(String, Cmp, f64), String> {
    let ops = [(">=", Cmp::Ge), ("<=", Cmp::Le), ("==", Cmp::Eq), ("!=", Cmp::Ne), (">", Cmp::Gt), ("<", Cmp::Lt)];
    let Some((i, tok, op)) =
        ops.iter().filter_map(|&(t, op)| text.find(t).map(|i| (i, t, op))).min_by_key(|&(i, t, _)| (i, usize::MAX - t.len()))
    else {
        return Err("no comparison; expected `<game value> <op> <number>` with op one of >=, >, <=, <, ==, != (`global.level >= 5`)".into());
    };
    let path = text[..i].trim();
    let num = text[i + tok.len()..].trim();
    if !path.contains('.') || path.contains(char::is_whitespace) {
        return Err(format!("`{path}` before `{tok}`; expected a game value such as `global.level` or `game.sessionsFinished`"));
    }
    let at: f64 = num.parse().ok().filter(|v: &f64| v.is_finite()).ok_or_else(|| format!("`{num}` after `{tok}`; expected a number"))?;
    Ok((path.to_string(), op, at))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn expressions_parse_evaluate_and_carry_their_error() {
        let names = ["maxs", "mins", "vanilla"];
        let e = Expr::parse("maxs - mins", &names).unwrap();
        assert_eq!(e.eval(&[6000.0, 1500.0, 0.0]), 4500.0);
        let est = e.estimate(&[Estimate { mean: 6000.0, se: 30.0 }, Estimate { mean: 1500.0, se: 40.0 }, Estimate::default()]);
        assert!((est.se - 50.0).abs() < 1e-9, "{est:?}");
        let e = Expr::parse("2 * (vanilla - mins) / -(maxs)", &names).unwrap();
        assert!((e.eval(&[4.0, 1.0, 3.0]) + 1.0).abs() < 1e-12);
        let err = |t: &str| Expr::parse(t, &names).unwrap_err().to_string();
        assert!(err("maxs - other").contains("not a [[measure]]"));
        assert!(err("(maxs").contains("not closed"));
        assert!(err("maxs mins").contains("unexpected"));
        assert!(Expr::parse("", &names).is_err());
        assert!(err("maxs % 2").contains("`%`"));
        assert_eq!(Expr::parse("maxs % 2", &names).unwrap_err().at, Some(5));
        assert!(err("maxs * 1e999").contains("past the doubles"));
        assert_eq!(Expr::parse("1 / 0", &names).unwrap().eval(&[]), 0.0);
    }

    #[test]
    fn estimates_of_samples() {
        let e = Estimate::of(&[1.0, 2.0, 3.0, 4.0]);
        assert_eq!(e.mean, 2.5);
        assert!((e.se - (1.6666666666666667f64 / 4.0).sqrt()).abs() < 1e-12);
        let (lo, hi) = e.ci();
        assert!(lo < 2.5 && hi > 2.5);
    }
}
