//! A formula compiled for selection ([`Compiled`]): its postfix code ([`FOp`]), the parts that
//! read only the parent's visits hoisted out and computed once per node ([`AtParent`]), the rest
//! run per child by closures with their leaves inline, and UCB1 by a path of its own — each
//! value bit-identical to [`Formula::eval`].

use super::*;
use std::fmt;

impl Formula {
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
}
