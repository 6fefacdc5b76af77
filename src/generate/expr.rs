//! Measure expressions (`maxs - mins`, `area / damage`, `2 * vanilla + 1`): numbers and measure
//! names joined by `+ - * /` and parentheses, resolved once against the config's measure names,
//! and the uncertainty of their value. Each measure is a mean over games with a standard error;
//! an expression's standard error comes from the first-order (delta method) propagation with
//! numeric partial derivatives, treating the measures as independent (they come from different
//! games, or the same games of different quantities; the independence is an approximation there,
//! documented in docs/decisions.md).

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
    /// Parses `text` with measures named by `names`; the error says where and what was expected.
    pub fn parse(text: &str, names: &[&str]) -> Result<Expr, String> {
        let toks = lex(text)?;
        let mut p = Parser { toks, at: 0, names };
        let e = p.sum()?;
        if p.at < p.toks.len() {
            return Err(format!("unexpected `{}` at position {}; expected an operator or the end", p.toks[p.at].0, p.toks[p.at].1 + 1));
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

fn lex(text: &str) -> Result<Vec<(String, usize)>, String> {
    let mut out = Vec::new();
    let b = text.as_bytes();
    let mut i = 0;
    while i < b.len() {
        let c = b[i] as char;
        if c.is_whitespace() {
            i += 1;
        } else if "+-*/()".contains(c) {
            out.push((c.to_string(), i));
            i += 1;
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
            return Err(format!("`{c}` at position {}; expected numbers, measure names, + - * / and parentheses", i + 1));
        }
    }
    if out.is_empty() {
        return Err("an empty expression; expected measure names and numbers such as `maxs - mins`".into());
    }
    Ok(out)
}

struct Parser<'a> {
    toks: Vec<(String, usize)>,
    at: usize,
    names: &'a [&'a str],
}

impl Parser<'_> {
    fn peek(&self) -> Option<&str> {
        self.toks.get(self.at).map(|t| t.0.as_str())
    }

    fn sum(&mut self) -> Result<Expr, String> {
        let mut e = self.product()?;
        while let Some(op @ ("+" | "-")) = self.peek() {
            let op = op.chars().next().expect("an operator");
            self.at += 1;
            e = Expr::Bin(Box::new(e), op, Box::new(self.product()?));
        }
        Ok(e)
    }

    fn product(&mut self) -> Result<Expr, String> {
        let mut e = self.unary()?;
        while let Some(op @ ("*" | "/")) = self.peek() {
            let op = op.chars().next().expect("an operator");
            self.at += 1;
            e = Expr::Bin(Box::new(e), op, Box::new(self.unary()?));
        }
        Ok(e)
    }

    fn unary(&mut self) -> Result<Expr, String> {
        if self.peek() == Some("-") {
            self.at += 1;
            return Ok(Expr::Neg(Box::new(self.unary()?)));
        }
        let Some((t, pos)) = self.toks.get(self.at).cloned() else {
            return Err("the expression ends early; expected a number, a measure or `(`".into());
        };
        self.at += 1;
        if t == "(" {
            let e = self.sum()?;
            if self.peek() != Some(")") {
                return Err(format!("`(` at position {} is not closed; expected `)`", pos + 1));
            }
            self.at += 1;
            return Ok(e);
        }
        if t.starts_with(|c: char| c.is_ascii_digit() || c == '.') {
            return t.replace('_', "").parse::<f64>().map(Expr::Num).map_err(|_| format!("`{t}` at position {} is not a number", pos + 1));
        }
        if t.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_') {
            return self
                .names
                .iter()
                .position(|n| *n == t)
                .map(Expr::Measure)
                .ok_or_else(|| format!("`{t}` at position {} is not a [[measure]]; expected one of: {}", pos + 1, self.names.join(", ")));
        }
        Err(format!("`{t}` at position {}; expected a number, a measure or `(`", pos + 1))
    }
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
        assert!(Expr::parse("maxs - other", &names).unwrap_err().contains("not a [[measure]]"));
        assert!(Expr::parse("(maxs", &names).unwrap_err().contains("not closed"));
        assert!(Expr::parse("maxs mins", &names).unwrap_err().contains("unexpected"));
        assert!(Expr::parse("", &names).is_err());
        assert!(Expr::parse("maxs % 2", &names).unwrap_err().contains("`%`"));
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
