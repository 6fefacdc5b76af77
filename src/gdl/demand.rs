//! Pass 2c (on request): relations computed only where they are asked. Bottom-up evaluation
//! computes every relation in full, which a top-down prover never does: a rulesheet may
//! define a static relation with billions of instances (`(exactlyFirst ?z ?x1 … ?x9)` over
//! nine digits; `isList` over every list of 25 elements) or a dynamic one with millions per
//! state (chess's `threatened_with_capture` over every square, king square and ignored
//! square), and only ever ask it with most arguments bound. When loading finds such a
//! relation too large ([`super::nonground`] stops at its budget and names it), this pass
//! restricts it to its **demand**, as the magic-set transformation does for one binding
//! pattern: the positions every use binds become a `need p` relation, derived at each use
//! from the user's other positive literals, and every rule of `p` starts with it. Answers do
//! not change; only what is computed does.
//!
//! A use binds a position when other positive literals of its rule bind all of that
//! argument's variables: any literal of a relation computed in full, a restricted one only
//! when written before the use (as the prover reads a body, left to right, so that two
//! restricted literals never wait on each other), and the rule's own demand when its head is
//! restricted too. A relation that some use leaves entirely unbound pulls the using rule's
//! head into the restriction (sudoku's `exactlyOne`, which asks `exactlyFirst`), unless that
//! head is a keyword. A restriction whose demand would close a cycle through negation is
//! dropped, and the relation is computed in full.

use super::fx::{FxHashMap, FxHashSet};
use super::parse::{Atom, Keywords, Literal, Rule, Sym, Symbols, Term, term_vars};

fn atom_vars(a: &Atom) -> Vec<u32> {
    let mut v = Vec::new();
    a.args.iter().for_each(|t| term_vars(t, &mut v));
    v
}

fn arg_vars(t: &Term) -> Vec<u32> {
    let mut v = Vec::new();
    term_vars(t, &mut v);
    v
}

/// The relations whose strongly connected component of the dependency graph holds a negative
/// edge (empty when `rules` are stratified), and the relations that depend on them.
fn unstratified(rules: &[Rule]) -> Vec<Sym> {
    let mut preds: Vec<Sym> = Vec::new();
    let mut index: FxHashMap<Sym, usize> = FxHashMap::default();
    let mut id = |p: Sym, preds: &mut Vec<Sym>| {
        *index.entry(p).or_insert_with(|| {
            preds.push(p);
            preds.len() - 1
        })
    };
    let mut edges: Vec<Vec<(usize, bool, crate::wgdl::diag::Span)>> = Vec::new();
    for r in rules {
        let h = id(r.head.pred, &mut preds);
        for l in &r.body {
            if let Literal::Pos(a) | Literal::Not(a) = l {
                let t = id(a.pred, &mut preds);
                edges.resize(preds.len(), Vec::new());
                edges[h].push((t, matches!(l, Literal::Not(_)), a.span));
            }
        }
        edges.resize(preds.len(), Vec::new());
    }
    let sccs = super::scc::tarjan(&edges);
    let mut scc_of = vec![0; preds.len()];
    for (k, c) in sccs.iter().enumerate() {
        for &p in c {
            scc_of[p] = k;
        }
    }
    let mut bad = FxHashSet::default();
    for (p, es) in edges.iter().enumerate() {
        for &(q, neg, _) in es {
            if neg && scc_of[p] == scc_of[q] {
                bad.extend(sccs[scc_of[p]].iter().map(|&x| preds[x]));
            }
        }
    }
    bad.into_iter().collect()
}

/// Whether the literal at body position `j` may bind the use at position `i` (see the module
/// doc).
fn binds_use(l: &Literal, j: usize, i: usize, restricted: &FxHashMap<Sym, Vec<bool>>, moves: &FxHashSet<Sym>) -> bool {
    matches!(l, Literal::Pos(b) if j != i && !moves.contains(&b.pred) && (j < i || !restricted.contains_key(&b.pred)))
}

/// The relations that depend on `does` (and `does` itself): a demand never rests on them, so
/// that what a state asks never waits on a joint move (chess's `next` asks `rook_threatens`
/// with the square its move leaves, which `legal` asks too).
fn on_moves(rules: &[Rule], does: Sym) -> FxHashSet<Sym> {
    let mut out: FxHashSet<Sym> = std::iter::once(does).collect();
    loop {
        let before = out.len();
        for r in rules {
            if !out.contains(&r.head.pred) && r.body.iter().any(|l| matches!(l, Literal::Pos(a) | Literal::Not(a) if out.contains(&a.pred)))
            {
                out.insert(r.head.pred);
            }
        }
        if out.len() == before {
            return out;
        }
    }
}

/// The positions of use `a` (in `r`, at body position `i`) its rule binds (see the module
/// doc), given the patterns chosen so far.
fn bound_at(r: &Rule, i: usize, a: &Atom, restricted: &FxHashMap<Sym, Vec<bool>>, moves: &FxHashSet<Sym>) -> Vec<bool> {
    let mut have = Vec::new();
    for (j, l) in r.body.iter().enumerate() {
        if let Literal::Pos(b) = l
            && binds_use(l, j, i, restricted, moves)
        {
            have.extend(atom_vars(b));
        }
    }
    if let Some(pat) = restricted.get(&r.head.pred) {
        for (t, &on) in r.head.args.iter().zip(pat) {
            if on {
                term_vars(t, &mut have);
            }
        }
    }
    a.args.iter().map(|t| arg_vars(t).iter().all(|v| have.contains(v))).collect()
}

/// Restricts the relations `wanted` (and those their uses pull in) to their demand; the
/// relations restricted.
pub(super) fn restrict(rules: &mut Vec<Rule>, syms: &mut Symbols, kw: &Keywords, wanted: &[Sym]) -> Vec<Sym> {
    let keywords = [kw.role, kw.init, kw.true_, kw.next, kw.legal, kw.does, kw.goal, kw.terminal];
    let eligible = |p: Sym, syms: &Symbols| !keywords.contains(&p) && !syms.name(p).contains(' ');
    let arity: FxHashMap<Sym, usize> = rules.iter().map(|r| (r.head.pred, r.head.args.len())).collect();
    let mut dropped: FxHashSet<Sym> = FxHashSet::default();
    let moves = on_moves(rules, kw.does);
    for _round in 0..8 {
        // The relations to restrict and their patterns, grown until every one has a use-bound
        // position or is dropped.
        let mut set: Vec<Sym> =
            wanted.iter().copied().filter(|&p| eligible(p, syms) && arity.contains_key(&p) && !dropped.contains(&p)).collect();
        let mut restricted: FxHashMap<Sym, Vec<bool>> = FxHashMap::default();
        for _ in 0..64 {
            restricted = set.iter().map(|&p| (p, vec![true; arity[&p]])).collect();
            // Patterns to their fixpoint (a use's binding can rest on its head's pattern).
            loop {
                let mut changed = false;
                for r in rules.iter() {
                    for (i, l) in r.body.iter().enumerate() {
                        let (Literal::Pos(a) | Literal::Not(a)) = l else { continue };
                        let Some(pat) = restricted.get(&a.pred) else { continue };
                        let b = bound_at(r, i, a, &restricted, &moves);
                        let new: Vec<bool> = pat.iter().zip(&b).map(|(x, y)| *x && *y).collect();
                        if &new != pat {
                            restricted.insert(a.pred, new);
                            changed = true;
                        }
                    }
                }
                if !changed {
                    break;
                }
            }
            // A relation some use leaves unbound pulls in the heads of the rules that use it
            // (their demand may bind it), or is dropped when there is none to pull in.
            let mut changed = false;
            for p in set.clone() {
                if restricted[&p].iter().any(|&b| b) {
                    continue;
                }
                // The heads of the rules that use it; for a head restricted already, the heads
                // of the rules that use that one (its own pattern may be what leaves it open).
                let users = |q: Sym| -> Vec<Sym> {
                    rules
                        .iter()
                        .filter(|r| r.body.iter().any(|l| matches!(l, Literal::Pos(a) | Literal::Not(a) if a.pred == q)))
                        .map(|r| r.head.pred)
                        .collect()
                };
                let mut new: Vec<Sym> = Vec::new();
                let mut frontier = vec![p];
                let mut seen = vec![p];
                for _depth in 0..4 {
                    let mut next = Vec::new();
                    for q in frontier {
                        for h in users(q) {
                            if seen.contains(&h) {
                                continue;
                            }
                            seen.push(h);
                            if set.contains(&h) {
                                next.push(h);
                            } else if !new.contains(&h) {
                                new.push(h);
                            }
                        }
                    }
                    if !new.is_empty() || next.is_empty() {
                        break;
                    }
                    frontier = next;
                }
                if new.is_empty() || new.iter().any(|&h| !eligible(h, syms) || dropped.contains(&h)) {
                    set.retain(|&q| q != p);
                    dropped.insert(p);
                } else {
                    for h in new {
                        if !set.contains(&h) {
                            set.push(h);
                        }
                    }
                }
                changed = true;
            }
            if !changed {
                break;
            }
        }
        restricted.retain(|_, pat| pat.iter().any(|&b| b));
        if restricted.is_empty() {
            return Vec::new();
        }
        let mut out = rules.clone();
        transform(&mut out, syms, &restricted, &moves);
        // A demand that closes a cycle through negation: drop the relations in it.
        let bad: Vec<Sym> = unstratified(&out).into_iter().filter(|p| restricted.contains_key(p)).collect();
        if bad.is_empty() {
            *rules = out;
            let mut done: Vec<Sym> = restricted.into_keys().collect();
            done.sort_unstable();
            return done;
        }
        dropped.extend(bad);
    }
    Vec::new()
}

/// Rewrites `rules` so that each relation of `restricted` is computed at its pattern's
/// positions only where some use asks.
fn transform(rules: &mut Vec<Rule>, syms: &mut Symbols, restricted: &FxHashMap<Sym, Vec<bool>>, moves: &FxHashSet<Sym>) {
    let need: FxHashMap<Sym, Sym> = restricted.keys().map(|&p| (p, syms.intern(&format!("need {}", syms.name(p))))).collect();
    let at_pattern =
        |args: &[Term], pat: &[bool]| -> Vec<Term> { args.iter().zip(pat).filter(|(_, b)| **b).map(|(t, _)| t.clone()).collect() };
    let mut demands = Vec::new();
    for r in rules.iter() {
        for (i, l) in r.body.iter().enumerate() {
            let (Literal::Pos(a) | Literal::Not(a)) = l else { continue };
            let Some(pat) = restricted.get(&a.pred) else { continue };
            let p = a.pred;
            let mut body: Vec<Literal> = Vec::new();
            if let Some(hp) = restricted.get(&r.head.pred) {
                body.push(Literal::Pos(Atom { pred: need[&r.head.pred], args: at_pattern(&r.head.args, hp), span: r.head.span }));
            }
            for (j, o) in r.body.iter().enumerate() {
                if binds_use(o, j, i, restricted, moves) {
                    body.push(o.clone());
                }
            }
            let head = Atom { pred: need[&p], args: at_pattern(&a.args, pat), span: a.span };
            demands.push(Rule { head, body, vars: r.vars.clone(), span: a.span });
        }
    }
    for r in rules.iter_mut() {
        if let Some(pat) = restricted.get(&r.head.pred) {
            r.body.insert(0, Literal::Pos(Atom { pred: need[&r.head.pred], args: at_pattern(&r.head.args, pat), span: r.head.span }));
        }
    }
    rules.extend(demands);
}

/// `wanted` and every relation that asks one of them, directly or through others, up to the
/// keywords (and not past a relation that depends on `does`): the candidates whose demand
/// may bind what `wanted`'s own callers leave open.
pub(super) fn with_callers(rules: &[Rule], kw: &Keywords, syms: &Symbols, wanted: &[Sym]) -> Vec<Sym> {
    let keywords = [kw.role, kw.init, kw.true_, kw.next, kw.legal, kw.does, kw.goal, kw.terminal];
    let moves = on_moves(rules, kw.does);
    let mut out: Vec<Sym> = wanted.to_vec();
    let mut frontier: Vec<Sym> = wanted.to_vec();
    while let Some(q) = frontier.pop() {
        for r in rules {
            let h = r.head.pred;
            if keywords.contains(&h) || moves.contains(&h) || syms.name(h).contains(' ') || out.contains(&h) {
                continue;
            }
            if r.body.iter().any(|l| matches!(l, Literal::Pos(a) | Literal::Not(a) if a.pred == q)) {
                out.push(h);
                frontier.push(h);
            }
        }
    }
    out
}
