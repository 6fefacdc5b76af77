//! Pass 2: the rules made plain and held to GDL's restrictions. `(or …)` is expanded into one
//! rule per alternative, and `(not (distinct a b))` is solved away (the rule's variables unified
//! so that `a` and `b` are one term; a rule where they cannot be never holds). `base` and
//! `input`, which no player needs, are dropped unless a rule reads them (a warning when they
//! are not in their standard shape). The keywords must have their arities and places (`true`
//! and `does` are never defined, `role` only by ground facts, `init` independent of the state,
//! `legal`, `goal` and `terminal` independent of `does`); every relation and every function has
//! one arity; and the three restrictions of GDL hold — safety (every variable of the head, of a
//! `not` or of a `distinct` also occurs in a positive body literal; [`super::safety`] first
//! rewrites the rules the reference prover reads top-down, with a warning each), stratified
//! negation (no relation depends on itself through `not`) and the recursion restriction. Every
//! error names the literal at fault.
//!
//! The result gives each relation its stratum: the strongly connected components of the
//! dependency graph, dependencies first, each marked recursive or not.

use super::parse::{Atom, Keywords, Literal, Rule, Sym, Symbols, Term, term_vars};
use super::scc::tarjan;
use super::{GdlError, GdlErrorKind, GdlWarning, GdlWarningKind};
use crate::wgdl::diag::{SourceFile, Span};
use std::collections::HashMap;

/// Most rules `or` expansion may make of one rule.
const MAX_EXPANSION: usize = 4096;

/// Checked rules and the relations' strata.
#[derive(Clone, Debug)]
pub struct Checked {
    /// `or`-free rules.
    pub rules: Vec<Rule>,
    /// Each relation's arity.
    pub arity: HashMap<Sym, usize>,
    /// Strongly connected components of the dependency graph, dependencies first.
    pub sccs: Vec<Vec<Sym>>,
    /// Per component: it depends on itself (a recursive relation).
    pub recursive: Vec<bool>,
    /// The component of each relation.
    pub scc_of: HashMap<Sym, usize>,
    /// Relations that depend on `true` or `does` (the rest are static).
    pub dynamic: std::collections::HashSet<Sym>,
    /// Relations that depend on `does`.
    pub on_does: std::collections::HashSet<Sym>,
    pub roles: Vec<Sym>,
    /// What was read as the reference prover reads it, though GDL does not allow it.
    pub warnings: Vec<GdlWarning>,
    /// The relations computed only where their uses ask ([`super::demand`]).
    pub restricted: Vec<Sym>,
}

fn atom_vars(a: &Atom) -> Vec<u32> {
    let mut v = Vec::new();
    a.args.iter().for_each(|t| term_vars(t, &mut v));
    v
}

/// The alternatives of a body with `or`s: the product of each literal's alternatives.
fn expand(body: &[Literal], span: Span) -> Result<Vec<Vec<Literal>>, GdlError> {
    let mut out: Vec<Vec<Literal>> = vec![Vec::new()];
    for lit in body {
        let alts = alternatives(lit);
        if out.len() * alts.len() > MAX_EXPANSION {
            return Err(GdlError::new(
                span,
                GdlErrorKind::Limit {
                    what: "`or` expands this rule into too many rules".into(),
                    expected: format!("at most {MAX_EXPANSION}"),
                },
            ));
        }
        out = out.iter().flat_map(|pre| alts.iter().map(move |alt| pre.iter().cloned().chain(alt.iter().cloned()).collect())).collect();
    }
    Ok(out)
}

/// A term with the variable bindings of `subst` applied (to their end).
fn resolve(t: &Term, subst: &[Option<Term>]) -> Term {
    match t {
        Term::Var(v) => match &subst[*v as usize] {
            Some(b) => resolve(b, subst),
            None => t.clone(),
        },
        Term::Const(_) => t.clone(),
        Term::Fn(f, args) => Term::Fn(*f, args.iter().map(|a| resolve(a, subst)).collect()),
    }
}

fn occurs(v: u32, t: &Term, subst: &[Option<Term>]) -> bool {
    match resolve(t, subst) {
        Term::Var(w) => w == v,
        Term::Const(_) => false,
        Term::Fn(_, args) => args.iter().any(|a| occurs(v, a, subst)),
    }
}

/// Unifies two terms of one rule, binding its variables in `subst`.
fn unify(a: &Term, b: &Term, subst: &mut Vec<Option<Term>>) -> bool {
    match (resolve(a, subst), resolve(b, subst)) {
        (Term::Var(x), Term::Var(y)) if x == y => true,
        (Term::Var(x), t) | (t, Term::Var(x)) => {
            if occurs(x, &t, subst) {
                return false;
            }
            subst[x as usize] = Some(t);
            true
        }
        (Term::Const(x), Term::Const(y)) => x == y,
        (Term::Fn(f, xs), Term::Fn(g, ys)) => f == g && xs.len() == ys.len() && xs.iter().zip(&ys).all(|(x, y)| unify(x, y, subst)),
        _ => false,
    }
}

/// The rule with its `(not (distinct a b))` literals solved: its variables unified so that each
/// `a` and `b` are one term, the literals gone; `None` when some pair cannot be unified (the
/// rule never holds).
fn equate(mut r: Rule) -> Option<Rule> {
    if !r.body.iter().any(|l| matches!(l, Literal::Equal(..))) {
        return Some(r);
    }
    let mut subst = vec![None; r.vars.len()];
    for l in &r.body {
        if let Literal::Equal(a, b, _) = l
            && !unify(a, b, &mut subst)
        {
            return None;
        }
    }
    let atom = |a: &Atom| Atom { pred: a.pred, args: a.args.iter().map(|t| resolve(t, &subst)).collect(), span: a.span };
    r.head = atom(&r.head);
    r.body = r
        .body
        .iter()
        .filter_map(|l| match l {
            Literal::Pos(a) => Some(Literal::Pos(atom(a))),
            Literal::Not(a) => Some(Literal::Not(atom(a))),
            Literal::Distinct(x, y, s) => Some(Literal::Distinct(resolve(x, &subst), resolve(y, &subst), *s)),
            Literal::Equal(..) => None,
            Literal::Or(..) => unreachable!("`or` is expanded first"),
        })
        .collect();
    Some(r)
}

/// Drops the rules of `base` and `input` when no rule reads them (no player needs them), with a
/// warning when one is not in its standard shape (`(base x)`, `(input role action)`).
fn drop_optional(rules: &mut Vec<Rule>, syms: &Symbols, warnings: &mut Vec<GdlWarning>) {
    for (name, arity, standard) in [("base", 1, "(base x)"), ("input", 2, "(input role action)")] {
        let Some(p) = syms.get(name) else { continue };
        let read = rules.iter().any(|r| r.body.iter().any(|l| matches!(l, Literal::Pos(a) | Literal::Not(a) if a.pred == p)));
        if read {
            continue;
        }
        if let Some(odd) = rules.iter().find(|r| r.head.pred == p && r.head.args.len() != arity) {
            warnings.push(GdlWarning { span: odd.head.span, kind: GdlWarningKind::NonStandardOptional { name, standard } });
        }
        rules.retain(|r| r.head.pred != p);
    }
}

/// The function symbols of a term with their arities and places, into `out`.
fn functions(t: &Term, span: Span, out: &mut Vec<(Sym, usize, Span)>) {
    if let Term::Fn(f, args) = t {
        out.push((*f, args.len(), span));
        args.iter().for_each(|a| functions(a, span, out));
    }
}

/// The ways a literal can hold: one for a plain literal; one per alternative for `or` (whose
/// alternatives may be `or`s themselves).
fn alternatives(lit: &Literal) -> Vec<Vec<Literal>> {
    match lit {
        Literal::Or(alts, _) => alts.iter().flat_map(alternatives).collect(),
        l => vec![vec![l.clone()]],
    }
}

pub fn check(rules: Vec<Rule>, syms: &mut Symbols, file: &SourceFile) -> Result<Checked, Vec<GdlError>> {
    check_with(rules, syms, file, &[])
}

/// As [`check`], with the relations `on_demand` restricted to what their uses ask
/// ([`super::demand`]).
pub fn check_with(rules: Vec<Rule>, syms: &mut Symbols, file: &SourceFile, on_demand: &[Sym]) -> Result<Checked, Vec<GdlError>> {
    let kw = Keywords::new(syms);
    let mut errors = Vec::new();
    let mut warnings: Vec<GdlWarning> = syms
        .twins
        .iter()
        .map(|(first, second, span)| GdlWarning {
            span: *span,
            kind: GdlWarningKind::CaseTwins { first: first.clone(), second: second.clone() },
        })
        .collect();
    // `or` expanded, equalities solved.
    let mut plain = Vec::new();
    for r in rules {
        match expand(&r.body, r.span) {
            Ok(bodies) => plain.extend(bodies.into_iter().filter_map(|body| equate(Rule { body, ..r.clone() }))),
            Err(e) => errors.push(e),
        }
    }
    drop_optional(&mut plain, syms, &mut warnings);
    // Functions: one arity each.
    let mut fn_arity: HashMap<Sym, (usize, Span)> = HashMap::new();
    for r in &plain {
        let mut fs = Vec::new();
        let atoms = std::iter::once(&r.head).chain(r.body.iter().filter_map(|l| match l {
            Literal::Pos(a) | Literal::Not(a) => Some(a),
            _ => None,
        }));
        for a in atoms {
            a.args.iter().for_each(|t| functions(t, a.span, &mut fs));
        }
        for l in &r.body {
            if let Literal::Distinct(x, y, s) = l {
                functions(x, *s, &mut fs);
                functions(y, *s, &mut fs);
            }
        }
        for (f, n, span) in fs {
            match fn_arity.get(&f) {
                Some(&(m, first)) if m != n => errors.push(GdlError::new(
                    span,
                    GdlErrorKind::MixedFunctionArity {
                        name: syms.name(f).to_string(),
                        found: n,
                        first: m,
                        first_line: file.line_col(first.lo).0,
                    },
                )),
                Some(_) => {}
                None => {
                    fn_arity.insert(f, (n, span));
                }
            }
        }
    }
    // Arities: the keywords' own, every other relation's first use.
    let mut arity: HashMap<Sym, (usize, Span)> = HashMap::new();
    let mut use_atom = |a: &Atom, errors: &mut Vec<GdlError>| {
        if let Some((k, name)) = kw.arity(a.pred)
            && a.args.len() != k
        {
            errors.push(GdlError::new(a.span, GdlErrorKind::Arity { what: name, expected: k, found: a.args.len() }));
            return;
        }
        match arity.get(&a.pred) {
            Some(&(n, first)) if n != a.args.len() => errors.push(GdlError::new(
                a.span,
                GdlErrorKind::MixedArity {
                    name: syms.name(a.pred).to_string(),
                    found: a.args.len(),
                    first: n,
                    first_line: file.line_col(first.lo).0,
                },
            )),
            Some(_) => {}
            None => {
                arity.insert(a.pred, (a.args.len(), a.span));
            }
        }
    };
    for r in &plain {
        use_atom(&r.head, &mut errors);
        for l in &r.body {
            if let Literal::Pos(a) | Literal::Not(a) = l {
                use_atom(a, &mut errors);
            }
        }
    }
    // GDL's recursion restriction holds of the description as written (the rewrites below
    // add rules of their own, whose recursion the restriction does not cover).
    if errors.is_empty() {
        errors.extend(recursion_restriction(&plain, syms));
    }
    // Whom the `legal` rules name, before the repairs drop an unsafe one (which is an error of
    // its own: the role is then not also reported as having no `legal` rule).
    let legal_firsts: Vec<Option<Term>> = plain.iter().filter(|r| r.head.pred == kw.legal).map(|r| r.head.args.first().cloned()).collect();
    if errors.is_empty() {
        super::safety::repair(&mut plain, syms, &kw, &mut warnings, &mut errors);
    }
    let restricted =
        if errors.is_empty() && !on_demand.is_empty() { super::demand::restrict(&mut plain, syms, &kw, on_demand) } else { Vec::new() };
    // The relations the rewrites made, with their arities.
    for r in &plain {
        arity.entry(r.head.pred).or_insert((r.head.args.len(), r.head.span));
    }
    let mut roles = Vec::new();
    let mut role_set = std::collections::HashSet::new();
    let mut role_spans = Vec::new();
    for r in &plain {
        let h = &r.head;
        if h.pred == kw.true_ || h.pred == kw.does {
            errors.push(GdlError::new(h.span, GdlErrorKind::DefinedKeyword { name: syms.name(h.pred).to_string() }));
        }
        if h.pred == kw.role {
            match (&h.args[..], r.body.is_empty()) {
                ([Term::Const(c)], true) => {
                    if role_set.insert(*c) {
                        roles.push(*c);
                        role_spans.push(h.span);
                    }
                }
                _ => errors.push(GdlError::new(
                    h.span,
                    GdlErrorKind::Expected {
                        found: "a `role` rule".into(),
                        expected: "`role` only in facts `(role name)` with a constant name",
                    },
                )),
            }
        }
        // Safety.
        let mut bound = Vec::new();
        for l in &r.body {
            if let Literal::Pos(a) = l {
                bound.extend(atom_vars(a));
            }
        }
        let mut need: Vec<(u32, Span)> = atom_vars(&r.head).into_iter().map(|v| (v, h.span)).collect();
        for l in &r.body {
            match l {
                Literal::Not(a) => need.extend(atom_vars(a).into_iter().map(|v| (v, a.span))),
                Literal::Distinct(x, y, s) => {
                    let mut v = Vec::new();
                    term_vars(x, &mut v);
                    term_vars(y, &mut v);
                    need.extend(v.into_iter().map(|v| (v, *s)));
                }
                _ => {}
            }
        }
        let mut reported = Vec::new();
        for (v, s) in need {
            if !bound.contains(&v) && !reported.contains(&v) {
                reported.push(v);
                errors.push(GdlError::new(s, GdlErrorKind::Unsafe { var: r.vars[v as usize].clone() }));
            }
        }
    }
    if roles.is_empty() && errors.is_empty() {
        errors.push(GdlError::new(Span::new(0, 0), GdlErrorKind::NoRoles));
    }
    // A role that no `legal` rule can name never has a legal move.
    let any_role = legal_firsts.iter().any(|f| matches!(f, Some(Term::Var(_))));
    let named_roles: std::collections::HashSet<Sym> =
        legal_firsts.iter().filter_map(|f| if let Some(Term::Const(c)) = f { Some(*c) } else { None }).collect();
    for (&role, &span) in roles.iter().zip(&role_spans) {
        let named = any_role || named_roles.contains(&role);
        if !named {
            errors.push(GdlError::new(span, GdlErrorKind::NoLegal { role: syms.name(role).to_string() }));
        }
    }
    // The dependency graph: relation → relations of its bodies (negated or not).
    let mut preds: Vec<Sym> = arity.keys().copied().collect();
    preds.sort_unstable();
    let index: HashMap<Sym, usize> = preds.iter().enumerate().map(|(i, &p)| (p, i)).collect();
    let mut edges: Vec<Vec<(usize, bool, Span)>> = vec![Vec::new(); preds.len()];
    for r in &plain {
        let Some(&h) = index.get(&r.head.pred) else { continue };
        for l in &r.body {
            // A relation without an arity had a wrong one (a keyword's), already an error.
            match l {
                Literal::Pos(a) | Literal::Not(a) => {
                    if let Some(&t) = index.get(&a.pred) {
                        edges[h].push((t, matches!(l, Literal::Not(_)), a.span));
                    }
                }
                _ => {}
            }
        }
    }
    let (sccs, scc_index, recursive) = components(&edges);
    // Stratified negation.
    for (p, es) in edges.iter().enumerate() {
        for &(q, neg, span) in es {
            if neg && scc_index[p] == scc_index[q] {
                let cycle = sccs[scc_index[p]].iter().map(|&x| syms.name(preds[x]).to_string()).collect::<Vec<_>>().join(", ");
                errors.push(GdlError::new(span, GdlErrorKind::Unstratified { name: syms.name(preds[p]).to_string(), cycle }));
            }
        }
    }
    // What each relation depends on, transitively: the relations that reach `true` and
    // `does`, found once backwards from them (a search forwards from every relation would be
    // quadratic in the relations).
    let mut users: Vec<Vec<usize>> = vec![Vec::new(); preds.len()];
    for (p, es) in edges.iter().enumerate() {
        for &(q, _, _) in es {
            users[q].push(p);
        }
    }
    let reaching = |to: Sym| -> Vec<bool> {
        let mut seen = vec![false; preds.len()];
        let mut stack: Vec<usize> = index.get(&to).into_iter().copied().collect();
        while let Some(q) = stack.pop() {
            for &p in &users[q] {
                if !seen[p] {
                    seen[p] = true;
                    stack.push(p);
                }
            }
        }
        seen
    };
    let (to_true, to_does) = (reaching(kw.true_), reaching(kw.does));
    let reach = |from: usize| -> Vec<bool> {
        let mut seen = vec![false; preds.len()];
        let mut stack = vec![from];
        while let Some(p) = stack.pop() {
            for &(q, _, _) in &edges[p] {
                if !seen[q] {
                    seen[q] = true;
                    stack.push(q);
                }
            }
        }
        seen
    };
    let mut dynamic = std::collections::HashSet::new();
    let mut on_does = std::collections::HashSet::new();
    for (i, &p) in preds.iter().enumerate() {
        if to_true[i] || to_does[i] || p == kw.true_ || p == kw.does {
            dynamic.insert(p);
        }
        if to_does[i] || p == kw.does {
            on_does.insert(p);
        }
        let first_use = arity[&p].1;
        if p == kw.init {
            let r = reach(i);
            let dep = |k: Sym| index.get(&k).is_some_and(|&j| r[j]);
            for bad in [kw.true_, kw.does, kw.legal, kw.next, kw.goal, kw.terminal] {
                if dep(bad) {
                    errors.push(GdlError::new(
                        first_use,
                        GdlErrorKind::BadDependency {
                            name: "init".into(),
                            on: syms.name(bad).into(),
                            rule: "`init` independent of the state and the moves",
                        },
                    ));
                }
            }
        }
        if (p == kw.legal || p == kw.goal || p == kw.terminal) && to_does[i] {
            errors.push(GdlError::new(
                first_use,
                GdlErrorKind::BadDependency {
                    name: syms.name(p).into(),
                    on: "does".into(),
                    rule: "`legal`, `goal` and `terminal` independent of the moves being made",
                },
            ));
        }
    }
    if !errors.is_empty() {
        errors.sort_by_key(|e| e.span.lo);
        errors.dedup();
        return Err(errors);
    }
    let sccs_syms: Vec<Vec<Sym>> = sccs.iter().map(|c| c.iter().map(|&i| preds[i]).collect()).collect();
    let scc_of = preds.iter().enumerate().map(|(i, &p)| (p, scc_index[i])).collect();
    Ok(Checked {
        rules: plain,
        arity: arity.into_iter().map(|(k, (n, _))| (k, n)).collect(),
        sccs: sccs_syms,
        recursive,
        scc_of,
        dynamic,
        on_does,
        roles,
        warnings,
        restricted,
    })
}

/// GDL's recursion restriction: in a rule whose head is in a recursive component, every
/// argument of a body literal of that component is ground, a head variable, or bound by a
/// positive literal outside the component.
fn recursion_restriction(rules: &[Rule], syms: &Symbols) -> Vec<GdlError> {
    let mut index: HashMap<Sym, usize> = HashMap::new();
    for r in rules {
        for a in std::iter::once(&r.head).chain(r.body.iter().filter_map(|l| match l {
            Literal::Pos(a) | Literal::Not(a) => Some(a),
            _ => None,
        })) {
            let n = index.len();
            index.entry(a.pred).or_insert(n);
        }
    }
    let mut edges: Vec<Vec<(usize, bool, Span)>> = vec![Vec::new(); index.len()];
    for r in rules {
        for l in &r.body {
            if let Literal::Pos(a) | Literal::Not(a) = l {
                edges[index[&r.head.pred]].push((index[&a.pred], false, a.span));
            }
        }
    }
    let (_, scc_index, recursive) = components(&edges);
    let scc_of = |p: Sym| scc_index[index[&p]];
    let mut errors = Vec::new();
    for r in rules {
        let h = scc_of(r.head.pred);
        if !recursive[h] {
            continue;
        }
        let head_vars = atom_vars(&r.head);
        let mut outside = Vec::new();
        for l in &r.body {
            if let Literal::Pos(a) = l
                && scc_of(a.pred) != h
            {
                outside.extend(atom_vars(a));
            }
        }
        for l in &r.body {
            if let Literal::Pos(a) = l
                && scc_of(a.pred) == h
            {
                let ok = a.args.iter().all(|t| {
                    let mut v = Vec::new();
                    term_vars(t, &mut v);
                    v.iter().all(|x| head_vars.contains(x) || outside.contains(x))
                });
                if !ok {
                    errors.push(GdlError::new(a.span, GdlErrorKind::RecursionRestriction { name: syms.name(a.pred).to_string() }));
                }
            }
        }
    }
    errors
}

/// The strongly connected components of a dependency graph (dependencies first), each node's
/// component, and whether each component is recursive (a cycle, or a node depending on itself).
fn components(edges: &[Vec<(usize, bool, Span)>]) -> (Vec<Vec<usize>>, Vec<usize>, Vec<bool>) {
    let sccs = tarjan(edges);
    let mut scc_index = vec![0; edges.len()];
    for (k, c) in sccs.iter().enumerate() {
        for &p in c {
            scc_index[p] = k;
        }
    }
    let recursive = sccs.iter().map(|c| c.len() > 1 || edges[c[0]].iter().any(|&(t, _, _)| t == c[0])).collect();
    (sccs, scc_index, recursive)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn errs(text: &str) -> Vec<GdlErrorKind> {
        let mut syms = Symbols::default();
        let rules = super::super::parse::parse(text, &mut syms).unwrap();
        match check(rules, &mut syms, &SourceFile::new("t.kif", text)) {
            Ok(_) => Vec::new(),
            Err(e) => e.into_iter().map(|e| e.kind).collect(),
        }
    }

    #[test]
    fn each_restriction_is_an_error() {
        // A keyword's variable bound nowhere, and a relation's variable that a use leaves open.
        assert!(
            errs("(role a) (q 1) (<= (legal a ?x) (q ?y))")
                .iter()
                .any(|k| matches!(k, GdlErrorKind::OpenKeyword { var, .. } if var == "x"))
        );
        assert!(
            errs("(role a) (q 1) (<= (p ?x) (q ?y)) (<= (legal a 1) (p ?z))")
                .iter()
                .any(|k| matches!(k, GdlErrorKind::OpenCall { var, name } if var == "x" && name == "p"))
        );
        // A variable free in two negations is unsafe (one negation is a projection, see safety.rs).
        assert!(
            errs("(role a) (q 1) (<= (legal a ?x) (q ?x) (not (r ?y)) (not (s ?y)))")
                .iter()
                .any(|k| matches!(k, GdlErrorKind::Unsafe { var } | GdlErrorKind::FreeTwice { var } if var == "y"))
        );
        assert!(errs("(role a) (q 1) (<= (p ?x) (q ?x) (not (p ?x)))").iter().any(|k| matches!(k, GdlErrorKind::Unstratified { .. })));
        assert!(
            errs("(role a) (q 1) (<= (p ?x) (q ?x) (p ?y) (distinct ?x ?y))")
                .iter()
                .any(|k| matches!(k, GdlErrorKind::RecursionRestriction { .. }))
        );
        assert!(errs("(role a) (<= (true x) (role a))").iter().any(|k| matches!(k, GdlErrorKind::DefinedKeyword { .. })));
        assert!(errs("(role a) (<= (legal a x) (does a x))").iter().any(|k| matches!(k, GdlErrorKind::BadDependency { .. })));
        assert!(errs("(role a) (<= (init x) (true y))").iter().any(|k| matches!(k, GdlErrorKind::BadDependency { .. })));
        assert!(errs("(role a) (p 1) (p 1 2)").iter().any(|k| matches!(k, GdlErrorKind::MixedArity { .. })));
        assert!(errs("(role a) (legal a)").iter().any(|k| matches!(k, GdlErrorKind::Arity { what: "legal", .. })));
        assert!(errs("(p 1)").iter().any(|k| matches!(k, GdlErrorKind::NoRoles)));
        assert!(errs("(role a) (role b) (legal a x)").iter().any(|k| matches!(k, GdlErrorKind::NoLegal { role } if role == "b")));
        // Recursion through a non-recursive binder is fine, and so is `or`.
        assert_eq!(
            errs(
                "(role a) (<= (legal a x) (e 1 2)) (e 1 2) (e 2 3) (<= (r ?x ?y) (e ?x ?y)) (<= (r ?x ?z) (e ?x ?y) (r ?y ?z)) (<= (s ?x) (or (e ?x 2) (e 2 ?x)))"
            ),
            vec![]
        );
    }

    /// A relation `legal` asks and `next` asks with the square its move leaves (chess's
    /// `threatened` and `rook_threatens`): restricted with its callee, its demand rests on the
    /// state's literals only, so `legal` never comes to depend on `does`.
    #[test]
    fn a_demand_never_rests_on_does() {
        let text = "(role a) (role b) (sq 1) (sq 2) (sq 3) (init (at 1)) (init (control a))
            (<= (legal ?r (go ?x ?y)) (true (control ?r)) (true (at ?x)) (sq ?y) (not (threat ?r ?y ?x)))
            (<= (legal b noop) (true (control a)))
            (<= (threat ?r ?y ?ig) (role ?r) (sq ?y) (sq ?ig) (clear ?y ?ig))
            (<= (clear ?y ?ig) (sq ?y) (sq ?ig) (distinct ?y ?ig) (true (at ?y)))
            (<= (next (seen ?y)) (does ?r (go ?x ?y)) (true (control ?r)) (true (at ?x)) (sq ?y) (threat ?r ?y ?x))
            (<= (next (at ?y)) (does ?r (go ?x ?y)))
            (<= terminal (true (seen 3)))
            (<= (goal ?r 0) (role ?r))";
        let mut syms = Symbols::default();
        let rules = super::super::parse::parse(text, &mut syms).unwrap();
        // The callers of `clear`, up to the keywords: `threat` (`legal` and `next` stop it).
        let kw = Keywords::new(&mut syms);
        let callers = super::super::demand::with_callers(&rules, &kw, &syms, &[syms.get("clear").unwrap()]);
        assert_eq!(callers.iter().map(|&p| syms.name(p)).collect::<Vec<_>>(), ["clear", "threat"]);
        let wanted = [syms.get("threat").unwrap(), syms.get("clear").unwrap()];
        let c = check_with(rules, &mut syms, &SourceFile::new("t.kif", text), &wanted).expect("checks with both restricted");
        let mut names: Vec<&str> = c.restricted.iter().map(|&p| syms.name(p)).collect();
        names.sort();
        assert_eq!(names, ["clear", "threat"]);
        let legal = syms.get("legal").unwrap();
        assert!(!c.on_does.contains(&legal), "`legal` must not depend on `does`");
    }
}
