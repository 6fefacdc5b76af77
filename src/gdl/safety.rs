//! Pass 2b: rules that GDL calls unsafe but the community's rulesheets write, read as the
//! reference prover (ggp-base's `ProverStateMachine`, top-down) reads them, and rewritten so
//! that both of playforge's reasoners, which work bottom-up, evaluate them the same way. Every
//! rewrite leaves a warning at the rule; what no reading can save stays an error.
//!
//! A variable is **bound** when a positive body literal mentions it. The others:
//! * the role of a `legal` or `goal` head (`(<= (legal ?r noop) (not (true (control ?r))))`):
//!   a game manager asks these per role, so `(role ?r)` is added to the body;
//! * a variable only in one `not` (`(not (does ?p (mark ?x ?y)))`): the prover asks whether any
//!   value makes the atom hold, so the atom is projected onto its bound variables by a new
//!   relation, and the rule negates that;
//! * a variable only in one `distinct`: the prover compares it unbound, so the `distinct` holds
//!   unless both sides are the same term (then the rule never holds);
//! * a head variable of any other relation
//!   (`(<= (distinctCell ?x ?y ?m ?n) (distinct ?y ?n))`): the prover binds it from the rule
//!   that asks. Such a relation is **caller-bound**: each of its uses adds a *demand* rule
//!   (`need p`, the magic-set transformation for the all-bound pattern) that derives the
//!   argument tuples the use can ask for from the user's other positive literals, and each
//!   of its rules starts with the demand literal. Its rules are then safe and compute exactly
//!   the answers its users can see.
//!
//! Errors remain for a variable in two or more `not`/`distinct` literals and in no positive one,
//! for an open head variable of `init`, `next`, `legal`'s action, `goal`'s value, `terminal` (the
//! game asks these with every argument open), and for a use of a caller-bound relation that
//! leaves one of its arguments unbound.
//!
//! The new relations' names contain a space (`need distinctcell`, `not 3 true`), which no symbol
//! of a description can, so they never clash with the description's own.

use super::parse::{Atom, Keywords, Literal, Rule, Sym, Symbols, Term, term_vars};
use super::{GdlError, GdlErrorKind, GdlWarning, GdlWarningKind};
use std::collections::HashSet;

fn atom_vars(a: &Atom) -> Vec<u32> {
    let mut v = Vec::new();
    a.args.iter().for_each(|t| term_vars(t, &mut v));
    v
}

fn bound_vars(body: &[Literal]) -> Vec<u32> {
    let mut v = Vec::new();
    for l in body {
        if let Literal::Pos(a) = l {
            v.extend(atom_vars(a));
        }
    }
    v
}

fn dedup(v: Vec<u32>) -> Vec<u32> {
    let mut out = Vec::new();
    for x in v {
        if !out.contains(&x) {
            out.push(x);
        }
    }
    out
}

/// The variables of a non-positive literal that are neither bound nor in `head`.
fn free_in(l: &Literal, bound: &[u32], head: &[u32]) -> Vec<u32> {
    let mut v = Vec::new();
    match l {
        Literal::Not(a) => v = atom_vars(a),
        Literal::Distinct(x, y, _) => {
            term_vars(x, &mut v);
            term_vars(y, &mut v);
        }
        _ => {}
    }
    dedup(v.into_iter().filter(|x| !bound.contains(x) && !head.contains(x)).collect())
}

/// Rewrites the rules whose unsafe variables a caller binds (see the module doc); pushes a
/// warning per rewrite and an error per rule no reading saves (that rule is dropped).
pub(super) fn repair(rules: &mut Vec<Rule>, syms: &mut Symbols, kw: &Keywords, warnings: &mut Vec<GdlWarning>, errors: &mut Vec<GdlError>) {
    let keyword = |p: Sym| -> Option<&'static str> {
        [
            (kw.init, "init"),
            (kw.next, "next"),
            (kw.legal, "legal"),
            (kw.goal, "goal"),
            (kw.terminal, "terminal"),
            (kw.role, "role"),
            (kw.true_, "true"),
            (kw.does, "does"),
        ]
        .iter()
        .find(|(s, _)| *s == p)
        .map(|&(_, n)| n)
    };
    let mut caller_bound: Vec<Sym> = Vec::new();
    let mut extra: Vec<Rule> = Vec::new();
    let mut projections = 0usize;
    let mut kept = Vec::with_capacity(rules.len());
    'rules: for mut r in std::mem::take(rules) {
        let mut bound = bound_vars(&r.body);
        // The role a manager asks `legal` and `goal` for.
        if (r.head.pred == kw.legal || r.head.pred == kw.goal)
            && let Some(Term::Var(v)) = r.head.args.first()
            && !bound.contains(v)
        {
            let v = *v;
            let name = if r.head.pred == kw.legal { "legal" } else { "goal" };
            r.body.insert(0, Literal::Pos(Atom { pred: kw.role, args: vec![Term::Var(v)], span: r.head.span }));
            bound.push(v);
            warnings.push(GdlWarning { span: r.head.span, kind: GdlWarningKind::RoleFromQuery { var: r.vars[v as usize].clone(), name } });
        }
        let head = dedup(atom_vars(&r.head));
        // Variables free in more than one `not`/`distinct`: no reading is safe.
        let frees: Vec<Vec<u32>> = r.body.iter().map(|l| free_in(l, &bound, &head)).collect();
        let mut seen = Vec::new();
        for (l, f) in r.body.iter().zip(&frees) {
            for &v in f {
                if seen.contains(&v) {
                    errors.push(GdlError::new(l.span(), GdlErrorKind::FreeTwice { var: r.vars[v as usize].clone() }));
                    continue 'rules;
                }
                seen.push(v);
            }
        }
        // Free in one `not`: projected. Free in one `distinct`: decided now.
        let mut body = Vec::with_capacity(r.body.len());
        for (l, f) in std::mem::take(&mut r.body).into_iter().zip(frees) {
            if f.is_empty() {
                body.push(l);
                continue;
            }
            match l {
                Literal::Not(a) => {
                    projections += 1;
                    let args: Vec<Term> = dedup(atom_vars(&a)).into_iter().filter(|v| !f.contains(v)).map(Term::Var).collect();
                    let pred = syms.intern(&format!("not {projections} {}", syms.name(a.pred)));
                    let span = a.span;
                    warnings.push(GdlWarning { span, kind: GdlWarningKind::FreeInNot { var: r.vars[f[0] as usize].clone() } });
                    extra.push(Rule {
                        head: Atom { pred, args: args.clone(), span },
                        body: vec![Literal::Pos(a)],
                        vars: r.vars.clone(),
                        span,
                    });
                    body.push(Literal::Not(Atom { pred, args, span }));
                }
                Literal::Distinct(x, y, span) => {
                    if x == y {
                        warnings.push(GdlWarning { span, kind: GdlWarningKind::NeverDistinct });
                        continue 'rules;
                    }
                    warnings.push(GdlWarning { span, kind: GdlWarningKind::FreeInDistinct { var: r.vars[f[0] as usize].clone() } });
                }
                other => body.push(other),
            }
        }
        r.body = body;
        // Open head variables: bound by the callers, or an error for what the game asks open.
        let open: Vec<u32> = head.iter().copied().filter(|v| !bound.contains(v)).collect();
        if let Some(&v) = open.first() {
            if let Some(name) = keyword(r.head.pred) {
                errors.push(GdlError::new(r.head.span, GdlErrorKind::OpenKeyword { var: r.vars[v as usize].clone(), name }));
                continue 'rules;
            }
            let vars = open.iter().map(|&v| format!("`?{}`", r.vars[v as usize])).collect::<Vec<_>>().join(", ");
            warnings.push(GdlWarning {
                span: r.head.span,
                kind: GdlWarningKind::CallerBound { name: syms.name(r.head.pred).to_string(), vars },
            });
            if !caller_bound.contains(&r.head.pred) {
                caller_bound.push(r.head.pred);
            }
        }
        kept.push(r);
    }
    kept.extend(extra);
    if !caller_bound.is_empty() {
        demand(&mut kept, syms, &caller_bound, errors);
    }
    *rules = kept;
}

/// The demand transformation for the caller-bound relations `cb` (see the module doc). A
/// relation's demand holds the arguments at the positions every use binds (by its other
/// positive literals, leaving out uses of caller-bound relations); those must bind each rule's
/// open variables.
fn demand(rules: &mut Vec<Rule>, syms: &mut Symbols, cb: &[Sym], errors: &mut Vec<GdlError>) {
    let index = |p: Sym| cb.iter().position(|&c| c == p);
    // The uses: (rule, literal, positions bound there).
    let mut uses: Vec<(usize, usize, Vec<bool>)> = Vec::new();
    for (k, r) in rules.iter().enumerate() {
        for (i, l) in r.body.iter().enumerate() {
            let (Literal::Pos(a) | Literal::Not(a)) = l else { continue };
            if index(a.pred).is_none() {
                continue;
            }
            let have = bound_vars(&others(&r.body, i, &index));
            let bound = a
                .args
                .iter()
                .map(|t| {
                    let mut v = Vec::new();
                    term_vars(t, &mut v);
                    v.iter().all(|x| have.contains(x))
                })
                .collect();
            uses.push((k, i, bound));
        }
    }
    // Each relation's pattern: the positions every use binds.
    let mut pattern: Vec<Option<Vec<bool>>> = vec![None; cb.len()];
    for (k, i, bound) in &uses {
        let (Literal::Pos(a) | Literal::Not(a)) = &rules[*k].body[*i] else { unreachable!() };
        let p = &mut pattern[index(a.pred).expect("a use")];
        *p = Some(match p.take() {
            None => bound.clone(),
            Some(old) => old.iter().zip(bound).map(|(x, y)| *x && *y).collect(),
        });
    }
    // Each rule's open variables must lie at the pattern's positions.
    let mut broken = HashSet::new();
    for r in rules.iter() {
        let Some(c) = index(r.head.pred) else { continue };
        let Some(pat) = &pattern[c] else { continue };
        let mut have = bound_vars(&r.body);
        for (t, &b) in r.head.args.iter().zip(pat) {
            if b {
                term_vars(t, &mut have);
            }
        }
        if let Some(v) = atom_vars(&r.head).into_iter().find(|v| !have.contains(v)) {
            // Name the first use that leaves it open.
            let pos = r.head.args.iter().position(|t| {
                let mut vs = Vec::new();
                term_vars(t, &mut vs);
                vs.contains(&v)
            });
            let at = uses.iter().find(|(_, _, bound)| pos.is_some_and(|p| bound.get(p) == Some(&false)));
            let span = at.map_or(r.head.span, |(k2, i2, _)| rules[*k2].body[*i2].span());
            errors.push(GdlError::new(
                span,
                GdlErrorKind::OpenCall { var: r.vars[v as usize].clone(), name: syms.name(r.head.pred).to_string() },
            ));
            broken.insert(c);
        }
    }
    if !broken.is_empty() {
        return;
    }
    let need: Vec<Sym> = cb.iter().map(|&p| syms.intern(&format!("need {}", syms.name(p)))).collect();
    let at_pattern = |args: &[Term], c: usize| -> Vec<Term> {
        match &pattern[c] {
            Some(pat) => args.iter().zip(pat).filter(|(_, b)| **b).map(|(t, _)| t.clone()).collect(),
            None => args.to_vec(),
        }
    };
    // Every use derives what it asks from the user's other positive literals.
    let mut demands = Vec::new();
    for (k, i, _) in &uses {
        let r = &rules[*k];
        let (Literal::Pos(a) | Literal::Not(a)) = &r.body[*i] else { unreachable!() };
        let c = index(a.pred).expect("a use");
        let head = Atom { pred: need[c], args: at_pattern(&a.args, c), span: a.span };
        demands.push(Rule { head, body: others(&r.body, *i, &index), vars: r.vars.clone(), span: a.span });
    }
    // Every rule of a caller-bound relation asks for its demand first.
    for r in rules.iter_mut() {
        if let Some(c) = index(r.head.pred) {
            let args = at_pattern(&r.head.args, c);
            r.body.insert(0, Literal::Pos(Atom { pred: need[c], args, span: r.head.span }));
        }
    }
    rules.extend(demands);
}

/// The positive literals of `body` but the `skip`-th and the uses of caller-bound relations.
fn others(body: &[Literal], skip: usize, index: &impl Fn(Sym) -> Option<usize>) -> Vec<Literal> {
    body.iter()
        .enumerate()
        .filter(|&(j, o)| j != skip && matches!(o, Literal::Pos(b) if index(b.pred).is_none()))
        .map(|(_, o)| o.clone())
        .collect()
}
