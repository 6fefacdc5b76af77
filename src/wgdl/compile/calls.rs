//! Compiling the built-in function calls of expressions (`max`, `hex.walk`, `sumOf`,
//! `board.line`, the tile-grid reads), grid cells (`board[x, y]`) and the tile-grid `do`
//! operations. Names resolve once; every problem is a diagnostic at the WGDL text that caused it.

use super::{Compiler, CtxKey, NO_VAR};
use crate::wgdl::ast::{self, DeclKind, ExprKind};
use crate::wgdl::diag::{DiagKind, Span};
use crate::wgdl::program::*;
use crate::wgdl::run::builtins::{BUILTINS, On, Param, Ret};

impl Compiler<'_> {
    /// `board[x, y]`: pushes the cell's absolute slot.
    /// A declared grid by name, or an error listing the grids.
    pub(super) fn grid_named(&mut self, g: &ast::Ident) -> Option<u16> {
        let found = self.x.grid_ix.get(&g.name).copied();
        if found.is_none() {
            let known = self.known(&self.x.grid_ix);
            self.error(
                g.span,
                DiagKind::UnknownName { what: "grid", name: g.name.clone(), expected: format!("a declared grid ({known})") },
            );
        }
        found
    }

    pub(super) fn grid_cell(&mut self, g: &ast::Ident, x: &ast::Expr, y: &ast::Expr, cx: CtxKey) -> Option<()> {
        let gi = self.grid_named(g)?;
        for e in [x, y] {
            let t = self.expr(e, cx)?;
            self.want_long(t, e.span)?;
        }
        self.emit(Op::GridCell(gi), g.span);
        Some(())
    }

    fn want_long(&mut self, t: Ty, span: Span) -> Option<()> {
        if t == Ty::Long {
            return Some(());
        }
        let found = self.ty_name(t);
        self.error(span, DiagKind::TypeMismatch { expected: "a long".into(), found });
        None
    }

    /// A built-in function call: `sumOf`/`countOf` and `<grid>.sumRuns` (special forms), else a
    /// row of the table of built-ins (src/wgdl/run/builtins.rs) found by its receiver and name.
    pub(super) fn call(&mut self, name: &[ast::Ident], args: &[ast::Expr], span: Span, cx: CtxKey) -> Option<Ty> {
        let full: Vec<&str> = name.iter().map(|i| i.name.as_str()).collect();
        let full = full.join(".");
        let grid = (name.len() == 2).then(|| self.x.grid_ix.get(&name[0].name).copied()).flatten();
        match full.as_str() {
            "sumOf" | "countOf" => {
                self.want_args(&full, args, span, 2, 2)?;
                let ExprKind::Path(p) = &args[0].kind else {
                    self.invalid(
                        args[0].span,
                        format!("`{full}` over something that is not a class"),
                        "a class name first, e.g. `sumOf(mage, mage.hp)`",
                    );
                    return None;
                };
                if p.len() != 1 {
                    self.invalid(args[0].span, format!("`{full}` over a path"), "a class name first, e.g. `sumOf(mage, mage.hp)`");
                    return None;
                }
                let class = self.resolve_class(&p[0], "class")?;
                let inner_cx = CtxKey { this: cx.this, bind: BindKind::Instance(class), var: NO_VAR };
                let (a, ty) = self.aggregate_code(&args[1], inner_cx, class, full == "countOf", span)?;
                self.emit(Op::Agg(a), span);
                Some(ty)
            }
            "canMove" => self.can_move_call(args, span),
            _ if name.len() == 1
                && let Some(b) = Builtin::find(On::Free, &name[0].name) =>
            {
                self.call_builtin(b, 0, &full, args, span, cx)
            }
            _ if name.len() == 2 && name[0].name == "hex" => {
                let Some(b) = Builtin::find(On::Hex, &name[1].name) else {
                    self.error(name[1].span, DiagKind::UnknownName { what: "function", name: full.clone(), expected: Builtin::known() });
                    return None;
                };
                if self.x.hex.is_none() {
                    self.invalid(span, format!("`{full}` without a hex map"), "a `hexmap \"<file>\"` line");
                    return None;
                }
                if b.spec().needs_occupants && !self.has_occupants_decl() {
                    self.invalid(span, format!("`{full}` needs to know who stands where"), "a `hexOccupants <Class> <pos> <side>` line");
                    return None;
                }
                self.call_builtin(b, 0, &full, args, span, cx)
            }
            _ if let Some(g) = grid
                && let Some(b) = Builtin::find(On::Grid, &name[1].name) =>
            {
                if b.spec().run.is_none() {
                    if matches!(b.spec().name, "any" | "countCells") {
                        return self.cells_aggregate(g, args, span, cx, &full);
                    }
                    return self.sum_runs(g, args, span, cx, &full);
                }
                self.call_builtin(b, g, &full, args, span, cx)
            }
            _ if grid.is_some() && TileOp::ALL.iter().any(|t| t.name == name[1].name) => {
                let reads: Vec<&str> = BUILTINS.iter().filter(|s| s.on == On::Grid).map(|s| s.name).collect();
                let (last, rest) = reads.split_last().expect("grids have reads");
                self.invalid(
                    span,
                    format!("`{full}` in an expression: it changes the grid"),
                    format!("a consequence `do {full}(…)`; expressions may read a grid with {} and {last}", rest.join(", ")),
                );
                None
            }
            _ => {
                self.error(
                    name[0].span.to(name[name.len() - 1].span),
                    DiagKind::UnknownName { what: "function", name: full.clone(), expected: Builtin::known() },
                );
                None
            }
        }
    }

    /// A call's argument count against `want` to `most`, or an error at the first argument too
    /// many (else at the call).
    fn want_args(&mut self, full: &str, args: &[ast::Expr], span: Span, want: usize, most: usize) -> Option<()> {
        if (want..=most).contains(&args.len()) {
            return Some(());
        }
        let at = args.get(most).map_or(span, |a| a.span);
        let expected = if want == most { format!("{want} argument(s)") } else { format!("{want} to {most} argument(s)") };
        self.error(at, DiagKind::WrongArity { what: full.into(), expected, found: args.len() });
        None
    }

    /// A call of built-in `b` (on grid `g`): its arguments checked against the table's
    /// parameters, compiled, converted as [`Ret::AsArgs`] says, then `Op::Call`.
    fn call_builtin(&mut self, b: Builtin, g: u16, full: &str, args: &[ast::Expr], span: Span, cx: CtxKey) -> Option<Ty> {
        let spec = b.spec();
        self.want_args(full, args, span, spec.params.len(), spec.params.len() + spec.optional.len())?;
        let mut double = false;
        let mut longs = [false; 2];
        for (k, (a, p)) in args.iter().zip(spec.params.iter().chain(spec.optional)).enumerate() {
            if matches!(p, Param::Dirs | Param::Edge) {
                self.name_arg(*p, a)?;
                continue;
            }
            let t = self.expr(a, cx)?;
            match p {
                Param::Long => self.want_long(t, a.span)?,
                Param::Number | Param::Double => self.want_number(t, a.span)?,
                Param::Dirs | Param::Edge => unreachable!("handled above"),
            }
            double |= t == Ty::Double;
            if let Some(l) = longs.get_mut(k) {
                *l = t == Ty::Long;
            }
        }
        let (b, ret) = match spec.ret {
            Ret::Long => (b, Ty::Long),
            Ret::Double => (b, Ty::Double),
            Ret::Bool => (b, Ty::Bool),
            // The long arguments made doubles (the table allows at most two), and the double twin.
            Ret::AsArgs if double => {
                if args.len() == 2 && longs[0] {
                    self.emit(Op::L2DUnder, span);
                }
                if args.len() == 2 && longs[1] {
                    self.emit(Op::L2D, span);
                }
                (b.twin(), Ty::Double)
            }
            Ret::AsArgs => (b, Ty::Long),
        };
        self.emit(Op::Call(b, g, args.len() as u8), span);
        Some(ret)
    }

    /// A direction set's or an edge's name as an argument: pushes its index.
    fn name_arg(&mut self, p: Param, a: &ast::Expr) -> Option<()> {
        let what = if p == Param::Dirs { crate::wgdl::board::SET_NAMES.to_string() } else { crate::wgdl::board::EDGES.join(", ") };
        let ExprKind::Path(path) = &a.kind else {
            self.invalid(a.span, "an expression here", format!("a name: {what}"));
            return None;
        };
        if path.len() != 1 {
            self.invalid(a.span, "a path here", format!("a name: {what}"));
            return None;
        }
        let k = if p == Param::Dirs {
            self.dirset_index(&path[0])? as i64
        } else {
            match crate::wgdl::board::EDGES.iter().position(|e| *e == path[0].name) {
                Some(k) => k as i64,
                None => {
                    self.error(path[0].span, DiagKind::UnknownName { what: "edge", name: path[0].name.clone(), expected: what });
                    return None;
                }
            }
        };
        self.emit(Op::Const(k), a.span);
        Some(())
    }

    /// `<grid>.sumRuns(min, k, expr)`: `expr` summed over the runs of ≥ min, with the number
    /// `k` bound to each run's length. Like `sumOf`, the inner expression is its own code.
    fn sum_runs(&mut self, g: u16, args: &[ast::Expr], span: Span, cx: CtxKey, full: &str) -> Option<Ty> {
        const SHAPE: &str = "3 arguments: `sumRuns(<min length>, <name for the length>, <number>)`, e.g. `board.sumRuns(3, k, k * 10)`";
        if args.len() != 3 {
            let at = args.get(3).map_or(span, |a| a.span);
            self.error(at, DiagKind::WrongArity { what: full.into(), expected: SHAPE.into(), found: args.len() });
            return None;
        }
        let t = self.expr(&args[0], cx)?;
        self.want_long(t, args[0].span)?;
        let var = match &args[1].kind {
            ExprKind::Path(p) if p.len() == 1 && p[0].name != "this" && p[0].name != "game" => self.intern(&p[0].name),
            _ => {
                self.invalid(args[1].span, "the second argument of `sumRuns`", "a plain name for the run length, e.g. `k`");
                return None;
            }
        };
        let inner_cx = CtxKey { this: cx.this, bind: BindKind::Number(1, u32::MAX), var };
        let (a, ty) = self.aggregate_code(&args[2], inner_cx, 0, false, span)?;
        self.emit(Op::GridSumRuns(g, a), span);
        Some(ty)
    }

    /// The inner expression of an aggregate (`sumOf`, `countOf`, `sumRuns`) as its own piece of
    /// code, which the outer code skips; registers it and returns its index and result type.
    pub(super) fn aggregate_code(&mut self, e: &ast::Expr, inner_cx: CtxKey, class: ClassId, count: bool, span: Span) -> Option<(u16, Ty)> {
        let (depth, max_depth) = (self.depth, self.max_depth);
        let skip_at = self.code.len();
        self.emit(Op::Skip(0), span);
        let start = self.begin();
        self.max_depth = 0;
        let t = self.expr(e, inner_cx);
        let inner = t.and_then(|_| self.end(start));
        self.depth = depth;
        self.max_depth = max_depth;
        let (t, inner) = (t?, inner?);
        self.code[skip_at] = Op::Skip(inner.len);
        let double = match (count, t) {
            (true, Ty::Bool) | (false, Ty::Long) => false,
            (false, Ty::Double) => true,
            (_, t) => {
                let found = self.ty_name(t);
                let expected = if count { "a condition (boolean) to count" } else { "a number to sum" };
                self.error(e.span, DiagKind::TypeMismatch { expected: expected.into(), found });
                return None;
            }
        };
        let a = self.x.aggs.len() as u16;
        self.x.aggs.push(AggInfo { class, expr: inner, count, double, infallible: false, cells: None });
        Some((a, if double { Ty::Double } else { Ty::Long }))
    }

    /// `do <grid>.<operation>(args)`: a tile-grid consequence. Every argument is a long; an
    /// operation with optional arguments (`refill`'s and `deal`'s weights) takes from its
    /// required count to [`TileOpSpec::most`].
    pub(super) fn tile_do(&mut self, e: &ast::Expr, cx: CtxKey) -> Option<Cons> {
        let known_ops = TileOp::ALL.iter().map(|t| format!("{}({})", t.name, t.params.join(", "))).collect::<Vec<_>>().join(", ");
        let ExprKind::Call(name, args) = &e.kind else {
            self.invalid(e.span, "`do` without a grid operation", format!("`do <grid>.<operation>(…)`, an operation of {known_ops}"));
            return None;
        };
        let full = name.iter().map(|i| i.name.as_str()).collect::<Vec<_>>().join(".");
        let g = self.grid_named(&name[0])?;
        let spec = (name.len() == 2).then(|| TileOp::ALL.iter().find(|t| t.name == name[1].name)).flatten();
        let Some(spec) = spec else {
            self.error(
                name[name.len() - 1].span,
                DiagKind::UnknownName { what: "grid operation", name: full, expected: format!("one of {known_ops}") },
            );
            return None;
        };
        let want = spec.params.len();
        if args.len() < want || args.len() > spec.most {
            let at = args.get(spec.most).map_or(e.span, |a| a.span);
            // Too few names the required count, as for an operation without optional arguments.
            let expected = if spec.optional.is_empty() || args.len() < want {
                format!("{want} argument(s)")
            } else {
                let (required, optional) = (spec.params.join(", "), spec.optional);
                format!(
                    "{want} to {} argument(s): `{}({required}[, {optional}])`, at most {} weights",
                    spec.most,
                    spec.name,
                    TileOp::MAX_WEIGHTS
                )
            };
            self.error(at, DiagKind::WrongArity { what: full, expected, found: args.len() });
            return None;
        }
        let mut codes = Vec::new();
        for (k, a) in args.iter().enumerate() {
            if spec.op == TileOp::Flip && k == 2 {
                let start = self.begin();
                self.name_arg(Param::Dirs, a)?;
                codes.push(self.end(start)?);
                continue;
            }
            codes.push(self.top_expr(a, cx, Some(Ty::Long), "a grid operation")?);
        }
        Some(Cons::Tile { grid: g, op: spec.op, args: codes })
    }

    fn has_occupants_decl(&self) -> bool {
        self.decls().any(|d| matches!(d.kind, DeclKind::HexOccupants { .. }))
    }

    fn want_number(&mut self, t: Ty, span: Span) -> Option<()> {
        if matches!(t, Ty::Long | Ty::Double) {
            return Some(());
        }
        let found = self.ty_name(t);
        self.error(span, DiagKind::TypeMismatch { expected: "a number (long or double)".into(), found });
        None
    }
}
