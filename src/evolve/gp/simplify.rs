//! The simplifier: constant folding, flattening of `+ −` and `×`, like terms collected and a
//! canonical operand order, keeping the protected semantics of `apply`; used for comparison and
//! display ([`pretty`]), never on the population itself.

use super::*;

/// The most terms a sum, or factors a product, is rebuilt from: a longer one is left as it was
/// (its children simplified), as a sum whose coefficients overflow is. A rebuilt sum is a chain
/// as deep as its terms are many, and every later walk (printing, evaluating, dropping) recurses
/// down it; at most 256 keeps any tree of depth ≤ 64 (what parses) within about 2 000 levels
/// after simplifying. A GP tree of the default height limit (8) has at most 256 leaves, so its
/// simplified form is never cut.
pub const MAX_TERMS: usize = 256;

pub(super) fn konst(v: f64) -> Formula {
    // -0 and +0 differ only through division by them, which is protected.
    Formula::Const(if v == 0.0 { 0.0 } else { v })
}

pub(super) fn call2(f: Fun, a: Formula, b: Formula) -> Formula {
    Formula::Call(f, vec![a, b])
}

pub(super) fn var_index(v: Var) -> usize {
    Var::ALL.iter().position(|x| *x == v).unwrap_or(0)
}

pub(super) fn fun_index(f: Fun) -> usize {
    FUNS.iter().position(|x| *x == f).unwrap_or(0)
}

/// A total order on trees (constants < variables < calls), for canonical operand order.
pub(super) fn cmp_formula(a: &Formula, b: &Formula) -> Ordering {
    match (a, b) {
        (Formula::Const(x), Formula::Const(y)) => x.total_cmp(y),
        (Formula::Const(_), _) => Ordering::Less,
        (_, Formula::Const(_)) => Ordering::Greater,
        (Formula::Var(x), Formula::Var(y)) => var_index(*x).cmp(&var_index(*y)),
        (Formula::Var(_), _) => Ordering::Less,
        (_, Formula::Var(_)) => Ordering::Greater,
        (Formula::Call(f, xs), Formula::Call(g, ys)) => fun_index(*f)
            .cmp(&fun_index(*g))
            .then_with(|| xs.iter().zip(ys).map(|(x, y)| cmp_formula(x, y)).find(|o| o.is_ne()).unwrap_or(Ordering::Equal))
            .then(xs.len().cmp(&ys.len())),
    }
}

/// A semantics-preserving simplifier, for display and canonical comparison. Bottom-up:
/// - constant subtrees fold with the protected semantics of [`apply`] (kept if the result is
///   not finite);
/// - `+` and `−` flatten into a sum of terms `c·t`; like terms merge (`x − x → 0`,
///   `x + x → 2 * x`), constants add up, `−1·(a + b)` distributes; terms are ordered
///   canonically, positive ones first, then `− …`, then the constant, so `x - 4` and
///   `-4 + x` give the same tree;
/// - `×` flattens, multiplies its constants into one leading coefficient (`x·1 → x`,
///   `x·0 → 0`) and orders its factors; `−1·(a + b)` becomes the negated sum;
/// - `x / x → 1`, `x / 1 → x`, `x / −1 → −x`, `x / c → 1` when |c| < 1e-12 (protected ÷);
/// - `sqrt(c·x) → sqrt(|c|·x)` for c < 0 (protected √ takes |x|);
/// - `max`/`min` of equal operands collapse, otherwise their operands are ordered.
///
/// Division is otherwise left alone: protected ÷ breaks `a / (b / c) = a·c / b` and moving
/// factors in or out of a quotient. Values change only by rounding where sums and products
/// are reassociated, and for the finite-only rules named in the module doc.
pub fn simplify(f: &Formula) -> Formula {
    match f {
        Formula::Const(c) => konst(*c),
        Formula::Var(_) => f.clone(),
        Formula::Call(op, args) => simplify_call(*op, args.iter().map(simplify).collect()),
    }
}

/// Simplifies a call whose arguments are already simplified.
pub(super) fn simplify_call(op: Fun, args: Vec<Formula>) -> Formula {
    if let [Formula::Const(a), rest @ ..] = args.as_slice()
        && rest.iter().all(|x| matches!(x, Formula::Const(_)))
    {
        let b = match rest {
            [Formula::Const(b)] => *b,
            _ => 0.0,
        };
        let v = apply(op, *a, b);
        if v.is_finite() {
            return konst(v);
        }
        return Formula::Call(op, args);
    }
    match op {
        Fun::Add | Fun::Sub => sum(Formula::Call(op, args)),
        Fun::Mul => product(Formula::Call(op, args)),
        Fun::Div => {
            let mut it = args.into_iter();
            let (a, b) = (it.next().unwrap_or(konst(0.0)), it.next().unwrap_or(konst(1.0)));
            divide(a, b)
        }
        Fun::Sqrt => {
            if let [Formula::Call(Fun::Mul, m)] = args.as_slice()
                && let [Formula::Const(c), rest] = m.as_slice()
                && *c < 0.0
            {
                return Formula::Call(Fun::Sqrt, vec![product(call2(Fun::Mul, konst(-c), rest.clone()))]);
            }
            Formula::Call(op, args)
        }
        Fun::Max | Fun::Min => {
            let mut it = args.into_iter();
            let (mut a, mut b) = (it.next().unwrap_or(konst(0.0)), it.next().unwrap_or(konst(0.0)));
            match cmp_formula(&a, &b) {
                Ordering::Equal => a,
                o => {
                    if o == Ordering::Greater {
                        std::mem::swap(&mut a, &mut b);
                    }
                    call2(op, a, b)
                }
            }
        }
        Fun::Ln => Formula::Call(op, args),
    }
}

/// Terms `(coefficient, rest)` of a sum of simplified trees, and its constant.
pub(super) fn collect_terms(f: &Formula, sign: f64, terms: &mut Vec<(f64, Formula)>, k: &mut f64) {
    match f {
        Formula::Const(c) => *k += sign * c,
        Formula::Call(Fun::Add, a) => {
            collect_terms(&a[0], sign, terms, k);
            collect_terms(&a[1], sign, terms, k);
        }
        Formula::Call(Fun::Sub, a) => {
            collect_terms(&a[0], sign, terms, k);
            collect_terms(&a[1], -sign, terms, k);
        }
        Formula::Call(Fun::Mul, a) => match (&a[0], &a[1]) {
            // −(a + b) = −a − b exactly: IEEE rounding is symmetric.
            (Formula::Const(c), rest @ Formula::Call(Fun::Add | Fun::Sub, _)) if *c == -1.0 => collect_terms(rest, -sign, terms, k),
            (Formula::Const(c), rest) => terms.push((sign * c, rest.clone())),
            _ => terms.push((sign, f.clone())),
        },
        _ => terms.push((sign, f.clone())),
    }
}

pub(super) fn term(c: f64, t: Formula) -> Formula {
    if c == 1.0 { t } else { call2(Fun::Mul, konst(c), t) }
}

/// The canonical sum of an `Add`/`Sub` node with simplified children.
pub(super) fn sum(node: Formula) -> Formula {
    let mut terms = Vec::new();
    let mut k = 0.0;
    collect_terms(&node, 1.0, &mut terms, &mut k);
    terms.sort_by(|a, b| cmp_formula(&a.1, &b.1));
    let mut merged: Vec<(f64, Formula)> = Vec::with_capacity(terms.len());
    for (c, t) in terms {
        if let Some(last) = merged.last_mut()
            && cmp_formula(&last.1, &t).is_eq()
        {
            last.0 += c;
        } else {
            merged.push((c, t));
        }
    }
    merged.retain(|(c, _)| *c != 0.0);
    if !k.is_finite() || merged.iter().any(|(c, _)| !c.is_finite()) || merged.len() > MAX_TERMS {
        return node;
    }
    let (pos, neg): (Vec<_>, Vec<_>) = merged.into_iter().partition(|(c, _)| *c > 0.0);
    let mut acc: Option<Formula> = None;
    for (c, t) in pos {
        let t = term(c, t);
        acc = Some(match acc {
            None => t,
            Some(a) => call2(Fun::Add, a, t),
        });
    }
    let mut k_used = false;
    if acc.is_none() && k > 0.0 {
        acc = Some(konst(k));
        k_used = true;
    }
    for (c, t) in neg {
        acc = Some(match acc {
            None => term(c, t),
            Some(a) => call2(Fun::Sub, a, term(-c, t)),
        });
    }
    match acc {
        None => konst(k),
        Some(a) if k_used || k == 0.0 => a,
        Some(a) if k > 0.0 => call2(Fun::Add, a, konst(k)),
        Some(a) => call2(Fun::Sub, a, konst(-k)),
    }
}

pub(super) fn collect_factors(f: &Formula, coef: &mut f64, out: &mut Vec<Formula>) {
    match f {
        Formula::Const(c) => *coef *= c,
        Formula::Call(Fun::Mul, a) => {
            collect_factors(&a[0], coef, out);
            collect_factors(&a[1], coef, out);
        }
        _ => out.push(f.clone()),
    }
}

/// The canonical product of a `Mul` node with simplified children: `c * (f1 * f2 * …)`.
pub(super) fn product(node: Formula) -> Formula {
    let mut coef = 1.0;
    let mut fs = Vec::new();
    collect_factors(&node, &mut coef, &mut fs);
    if !coef.is_finite() || fs.len() > MAX_TERMS {
        return node;
    }
    if coef == 0.0 || fs.is_empty() {
        return konst(coef);
    }
    fs.sort_by(cmp_formula);
    if coef == -1.0 && fs.len() == 1 && matches!(fs[0], Formula::Call(Fun::Add | Fun::Sub, _)) {
        return sum(call2(Fun::Sub, konst(0.0), fs.remove(0)));
    }
    let p = fs.into_iter().reduce(|a, b| call2(Fun::Mul, a, b)).unwrap_or(konst(1.0));
    term(coef, p)
}

pub(super) fn divide(a: Formula, b: Formula) -> Formula {
    if let Formula::Const(c) = b {
        if c.abs() < 1e-12 {
            return konst(1.0);
        }
        if c == 1.0 {
            return a;
        }
        if c == -1.0 {
            return product(call2(Fun::Mul, konst(-1.0), a));
        }
    }
    if cmp_formula(&a, &b).is_eq() {
        return konst(1.0);
    }
    call2(Fun::Div, a, b)
}

pub(super) fn round_constants(f: &Formula, digits: usize) -> Formula {
    match f {
        Formula::Const(c) if c.is_finite() && *c != 0.0 => {
            konst(format!("{:.*e}", digits.saturating_sub(1), c).parse::<f64>().unwrap_or(*c))
        }
        Formula::Call(op, args) => Formula::Call(*op, args.iter().map(|a| round_constants(a, digits)).collect()),
        _ => f.clone(),
    }
}

/// The simplified formula with constants rounded to 4 significant digits, for logs and
/// reports. Not for storage: `f.to_string()` is exact and parses back.
pub fn pretty(f: &Formula) -> String {
    round_constants(&simplify(f), 4).to_string()
}
