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
//! This file holds the tree ([`Formula`], [`Var`], [`Fun`], [`Stats`]) and its evaluation;
//! `text.rs` prints and parses it, `compiled.rs` compiles it for selection.
//!
//! **Depth.** Every walk over a formula (evaluation, printing, compiling, GP's simplifier,
//! dropping the tree) recurses, so [`Formula::parse`] accepts at most [`MAX_DEPTH`] levels, of
//! the tree and of the brackets, functions and signs open at once: no text can overflow the
//! stack, and [`Compiled::eval`]'s fixed stack (one slot per level) always suffices. GP's trees
//! are far below it (their height limit is 17, a depth of 18), so whatever GP writes parses back.

mod compiled;
mod text;

pub use compiled::{AtParent, Compiled, FOp};
pub use text::FormulaError;

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
    fn protected_operators_never_give_nan() {
        let f = Formula::parse("sqrt(mean - 5) / (visits - visits) + ln(0 - parent)").unwrap();
        assert!(f.eval(&stats()).is_finite());
    }
}
