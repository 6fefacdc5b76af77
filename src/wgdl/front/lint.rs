//! Lints: warnings about a game that compiles but probably does not do what its author meant.
//! Runs after [`crate::wgdl::compile`] on the finished program and the AST.
//!
//! - goals and conditions that can never hold: constant after folding, or reading only values
//!   that no consequence ever changes and false in the start state;
//! - a game with nothing to play (no actions, no goals: an empty file, say) — an error, not a
//!   warning, as the only lint that stops the compile;
//! - precedence traps of the thesis's operator order written without brackets: `a * b / c`
//!   (means `a * (b / c)`), `a || b && c` (`(a || b) && c`), `a && b || c` (`a && (b || c)`) and
//!   `a == b && c` (`a == (b && c)`) and `x || y == 0` (`(x || y) == 0`); these run on the AST
//!   before compiling, on every expression of every line ([`ast::Decl::exprs`]).

use crate::wgdl::ast::{self, BinOp, DeclKind, ExprKind};
use crate::wgdl::diag::{DiagKind, Diagnostic, SourceFile};
use crate::wgdl::program::{Op, Program};

pub fn lint(file: &ast::File, program: &Program, diags: &mut Vec<Diagnostic>) {
    let assigned = assigned_attributes(file);
    let changes_time =
        program.default_duration.is_some() || program.session_length > 0 || program.actions.iter().any(|a| a.duration.is_some());
    // Goals: evaluate in the start state when nothing they read can change.
    let Ok(start) = program.initial_state() else { return };
    // The goals in k order, once (each goal's lint looks up its own).
    let mut goals: Vec<(u32, &ast::Expr)> = file
        .decls
        .iter()
        .filter_map(|d| match &d.kind {
            DeclKind::Goal { k, expr, .. } => Some((*k, expr)),
            _ => None,
        })
        .collect();
    goals.sort_by_key(|g| g.0);
    for (i, g) in program.goals.iter().enumerate() {
        let code = &program.code[g.expr.start as usize..(g.expr.start + g.expr.len) as usize];
        let fixed = code.iter().all(|op| match op {
            Op::Slot(_) => true,
            Op::StoreOwn(_) | Op::StoreSum(_) | Op::Moves | Op::Sessions => false,
            Op::Time | Op::SessionTime => !changes_time,
            _ => true,
        });
        let reads_only_fixed = fixed && reads_unassigned(&goals, i, &assigned);
        if reads_only_fixed && (start.goal as usize) <= i {
            // The first goal line with this k (goals are sorted stably by k).
            let at = goals.partition_point(|(k, _)| *k < g.k);
            let span = goals.get(at).filter(|(k, _)| *k == g.k).map(|(_, e)| e.span).unwrap_or_default();
            let why = if code.iter().any(|op| matches!(op, Op::Slot(_))) {
                "nothing it reads is ever changed by a consequence, and it is false at the start".to_string()
            } else {
                "it is a constant false".to_string()
            };
            diags.push(Diagnostic::warning(span, DiagKind::UnreachableGoal { k: g.k, why }));
        }
    }
    // Conditions that are constant false.
    for d in &file.decls {
        if let DeclKind::Condition { expr, .. } = &d.kind
            && let Some(false) = const_bool(expr)
        {
            diags.push(Diagnostic::warning(expr.span, DiagKind::NeverHolds { why: "it is a constant false".into() }));
        }
    }
    let acts = program.actions.iter().any(|a| a.kind != crate::wgdl::ActionKind::OnCreate);
    let ends = !program.outcomes.is_empty() || !program.stuck_outcomes.is_empty();
    if program.goals.is_empty() && !ends && !acts {
        // Nothing to play: no action moves the game and nothing ends it (an empty file, say).
        diags.push(Diagnostic::error(
            Default::default(),
            DiagKind::Invalid {
                what: "this game declares nothing to play: no actions and no goals".into(),
                expected: "at least one `action` (with `actionGroup` and `isInGroup`) or rule, and a `goal`".into(),
            },
        ));
    } else if program.goals.is_empty() && !ends {
        diags.push(Diagnostic::warning(
            Default::default(),
            DiagKind::Lint(format!(
                "no `goal`: the game never ends by itself; runs stop after `limit steps` ({} moves)",
                program.limits.steps
            )),
        ));
    }
}

fn assigned_attributes(file: &ast::File) -> std::collections::HashSet<String> {
    let mut out = std::collections::HashSet::new();
    for d in &file.decls {
        if let DeclKind::Consequence { body, .. } = &d.kind {
            match body {
                ast::ConsBody::Direct(e) => {
                    if let ExprKind::Binary(BinOp::Assign, l, _) = &e.kind
                        && let ExprKind::Path(p) = &l.kind
                        && let Some(last) = p.last()
                    {
                        out.insert(last.name.clone());
                    }
                }
                ast::ConsBody::CreateAndAssign(_, l) => {
                    if let ExprKind::Path(p) = &l.kind
                        && let Some(last) = p.last()
                    {
                        out.insert(last.name.clone());
                    }
                }
                _ => {}
            }
        }
    }
    out
}

/// True when every attribute the i-th goal (in k order) reads is never assigned.
fn reads_unassigned(goals: &[(u32, &ast::Expr)], i: usize, assigned: &std::collections::HashSet<String>) -> bool {
    let Some((_, e)) = goals.get(i) else { return false };
    let mut ok = true;
    walk(e, &mut |x| {
        if let ExprKind::Path(p) = &x.kind
            && p.iter().skip(1).any(|seg| assigned.contains(&seg.name))
        {
            ok = false;
        }
        if let ExprKind::GameValue(_) = &x.kind {
            ok = false;
        }
    });
    ok
}

fn walk(e: &ast::Expr, f: &mut dyn FnMut(&ast::Expr)) {
    f(e);
    match &e.kind {
        ExprKind::Unary(_, x) => walk(x, f),
        ExprKind::Binary(_, l, r) => {
            walk(l, f);
            walk(r, f);
        }
        ExprKind::Call(_, args) => args.iter().for_each(|a| walk(a, f)),
        ExprKind::Index(_, a, b) => {
            walk(a, f);
            if let Some(b) = b {
                walk(b, f);
            }
        }
        ExprKind::Lit(_) | ExprKind::ObjRef(_) | ExprKind::Path(_) | ExprKind::GameValue(_) => {}
    }
}

fn const_bool(e: &ast::Expr) -> Option<bool> {
    fn num(e: &ast::Expr) -> Option<f64> {
        match &e.kind {
            ExprKind::Lit(ast::Lit::Long(v)) => Some(*v as f64),
            ExprKind::Lit(ast::Lit::Double(v)) => Some(*v),
            ExprKind::Binary(op, l, r) => {
                let (a, b) = (num(l)?, num(r)?);
                match op {
                    BinOp::Add => Some(a + b),
                    BinOp::Sub => Some(a - b),
                    BinOp::Mul => Some(a * b),
                    BinOp::Div if b != 0.0 => Some(a / b),
                    _ => None,
                }
            }
            _ => None,
        }
    }
    match &e.kind {
        ExprKind::Lit(ast::Lit::Bool(b)) => Some(*b),
        ExprKind::Unary(ast::UnOp::Not, x) => const_bool(x).map(|b| !b),
        ExprKind::Binary(op, l, r) => match op {
            BinOp::And => Some(const_bool(l)? && const_bool(r)?),
            BinOp::Or => Some(const_bool(l)? || const_bool(r)?),
            BinOp::Xor => Some(const_bool(l)? != const_bool(r)?),
            BinOp::Eq | BinOp::Ne | BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge => {
                let (a, b) = (num(l)?, num(r)?);
                Some(match op {
                    BinOp::Eq => a == b,
                    BinOp::Ne => a != b,
                    BinOp::Lt => a < b,
                    BinOp::Le => a <= b,
                    BinOp::Gt => a > b,
                    _ => a >= b,
                })
            }
            _ => None,
        },
        _ => None,
    }
}

/// Warns where the thesis's operator order reads differently from the usual one. Runs on the
/// AST before compiling, so the warning stands beside any type error the trap causes.
pub fn precedence_traps(file: &ast::File, src: &SourceFile, diags: &mut Vec<Diagnostic>) {
    // Every expression of every line: [`ast::Decl::exprs`] lists them per declaration kind.
    for d in &file.decls {
        for expr in d.exprs() {
            precedence(expr, src, diags);
        }
    }
}

fn bracketed(src: &SourceFile, e: &ast::Expr) -> bool {
    src.slice(e.span).starts_with('(')
}

fn precedence(e: &ast::Expr, src: &SourceFile, diags: &mut Vec<Diagnostic>) {
    let logical = |x: &ast::Expr| matches!(x.kind, ExprKind::Binary(BinOp::And | BinOp::Or | BinOp::Xor, _, _));
    walk(e, &mut |x| {
        let ExprKind::Binary(op, l, r) = &x.kind else { return };
        let msg = match op {
            BinOp::Mul if matches!(r.kind, ExprKind::Binary(BinOp::Div, _, _)) && !bracketed(src, r) => {
                "WGDL gives `/` a higher precedence than `*`: this reads `a * (b / c)`"
            }
            BinOp::And if matches!(l.kind, ExprKind::Binary(BinOp::Or, _, _)) && !bracketed(src, l) => {
                "WGDL gives `||` a higher precedence than `&&`: this reads `(a || b) && c`"
            }
            BinOp::And if matches!(r.kind, ExprKind::Binary(BinOp::Or, _, _)) && !bracketed(src, r) => {
                "WGDL gives `||` a higher precedence than `&&`: this reads `a && (b || c)`"
            }
            BinOp::Eq | BinOp::Ne if logical(r) && !bracketed(src, r) => {
                "WGDL gives `==` and `!=` a lower precedence than `&&`, `||` and `xor`: `a == b && c` reads `a == (b && c)`"
            }
            BinOp::Eq | BinOp::Ne if logical(l) && !bracketed(src, l) => {
                "WGDL gives `==` and `!=` a lower precedence than `&&`, `||` and `xor`: `a || b == c` reads `(a || b) == c`"
            }
            _ => return,
        };
        diags.push(Diagnostic::warning(x.span, DiagKind::Lint(format!("{msg}; add brackets to say which you mean (thesis section 4.3)"))));
    });
}
