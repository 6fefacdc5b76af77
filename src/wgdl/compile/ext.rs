//! Compiler passes for the extensions of two-sided games: parameters (with overrides), players
//! and turns, outcomes, the hex map and its occupants, grids, move filters, policies, and the
//! built-in function calls (`max`, `hex.walk`, `sumOf`, `board.line`, `board[x, y]`, the tile-grid
//! reads and `do` operations).
//!
//! Each pass resolves names once, like the core passes in the parent module, and reports every
//! problem as a diagnostic at the WGDL text that caused it.

use super::{Compiler, CtxKey, NO_CTX, NO_VAR};
use crate::wgdl::ast::{self, DeclKind, ExprKind, Pick};
use crate::wgdl::diag::{DiagKind, Span};
use crate::wgdl::hex::HexMap;
use crate::wgdl::program::*;
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;

/// How to compile: where a game's auxiliary files (hex maps) are, and parameter overrides.
#[derive(Clone, Debug, Default)]
pub struct CompileOptions {
    /// The directory that `hexmap "…"` paths are relative to (the game file's directory).
    pub base_dir: Option<PathBuf>,
    /// `description.attribute` = value, replacing the file's value of a declared parameter.
    pub overrides: Vec<(String, f64)>,
    /// `grouped` or `alternating`, replacing the file's `turnOrder`.
    pub turn_order: Option<String>,
    /// Named overlays (`style`/`variant` line tags) to switch on; every other tagged line is
    /// left out (games/README.md §9.16).
    pub overlays: Vec<String>,
}

#[derive(Default)]
pub(super) struct Ext {
    pub opts: CompileOptions,
    pub players: Vec<String>,
    /// The turn class and its side attribute's slot, known before actions compile.
    pub turn_decl: Option<(ClassId, u32)>,
    pub turn: Option<TurnInfo>,
    pub outcomes: Vec<OutcomeInfo>,
    pub hex: Option<Arc<HexMap>>,
    pub occupants: Option<Occupants>,
    pub grids: Vec<GridInfo>,
    pub grid_ix: HashMap<String, u16>,
    pub grid_slots: u32,
    pub grid_decl_spans: Vec<Span>,
    pub params: Vec<ParamInfo>,
    /// The (object description, constant index) of each parameter that is a class constant.
    pub param_consts: std::collections::HashSet<(GodId, usize)>,
    pub policies: Vec<PolicyInfo>,
    pub aggs: Vec<AggInfo>,
    pub constraints: Vec<(ExprId, String)>,
    /// `chance fair`.
    pub chance_fair: bool,
    /// `view` lines, resolved (`views.rs`).
    pub views: Views,
}

impl Compiler<'_> {
    fn invalid(&mut self, span: Span, what: impl Into<String>, expected: impl Into<String>) {
        self.error(span, DiagKind::Invalid { what: what.into(), expected: expected.into() });
    }

    fn first_line_of(&self, span: Span) -> usize {
        super::line_of(&self.source, span)
    }

    /// An instance attribute of type long, by name (for sides and positions).
    fn long_attr(&mut self, class: ClassId, id: &ast::Ident, what: &str) -> Option<u32> {
        match self.find_attr(class, &id.name) {
            Some((false, idx, Ty::Long)) => Some(idx as u32),
            Some(_) => {
                self.invalid(id.span, format!("`{}` as {what}", id.name), "an instance attribute of type long");
                None
            }
            None => {
                self.no_such_attr(class, id);
                None
            }
        }
    }

    /// `parameter desc.attr min max`: checks the declaration, then applies overrides to the
    /// description's value (before any expression is compiled, so inlined constants see them).
    pub(super) fn collect_parameters(&mut self) {
        let mut seen: HashMap<String, Span> = HashMap::new();
        let mut slots: Vec<(GodId, bool, usize)> = Vec::new();
        for d in self.decls() {
            let DeclKind::Parameter { god, attr, min, max } = &d.kind else { continue };
            let Some(&g) = self.god_ix.get(&god.name) else {
                let known = self.known(&self.god_ix);
                self.error(god.span, DiagKind::UnknownName { what: "object description", name: god.name.clone(), expected: known });
                continue;
            };
            let class = self.gods[g as usize].class;
            let Some((is_const, idx, ty)) = self.find_attr(class, &attr.name) else {
                self.no_such_attr(class, attr);
                continue;
            };
            let name = format!("{}.{}", god.name, attr.name);
            if let Some(first) = seen.insert(name.clone(), d.span) {
                let first_line = self.first_line_of(first);
                self.error(d.span, DiagKind::Duplicate { what: "parameter", name, first_line });
                continue;
            }
            let integer = match ty {
                Ty::Long => true,
                Ty::Double => false,
                t => {
                    let found = self.ty_name(t);
                    self.error(attr.span, DiagKind::TypeMismatch { expected: "a long or double attribute for a parameter".into(), found });
                    continue;
                }
            };
            // A DNA value is a double: a long parameter's range stays within the whole numbers a
            // double holds exactly, so a value written out reads back as the same long.
            const EXACT: f64 = 9_007_199_254_740_992.0;
            if integer && (min.abs() > EXACT || max.abs() > EXACT) {
                self.invalid(
                    d.span,
                    format!("parameter `{name}` has the range {min} to {max}"),
                    "a range within ±9007199254740992 (2^53, the whole numbers a DNA value holds exactly)",
                );
                continue;
            }
            if min > max || (integer && (min.fract() != 0.0 || max.fract() != 0.0)) {
                let want = if integer { "whole numbers min ≤ max (the attribute is a long)" } else { "min ≤ max" };
                self.invalid(d.span, format!("parameter `{name}` has the range {min} to {max}"), want);
                continue;
            }
            let raw = if is_const { self.gods[g as usize].consts[idx] } else { self.gods[g as usize].init[idx] };
            let default = if integer { raw as f64 } else { f64::from_bits(raw as u64) };
            if default < *min || default > *max {
                self.invalid(
                    d.span,
                    format!("the value of `{name}` in the file, {default}, is outside the parameter's range {min} to {max}"),
                    "a range that holds the file's value",
                );
                continue;
            }
            if is_const {
                self.x.param_consts.insert((g, idx));
            }
            self.x.params.push(ParamInfo {
                name,
                god: g,
                is_const,
                idx: idx as u32,
                integer,
                min: *min,
                max: *max,
                value: default,
                default,
            });
            slots.push((g, is_const, idx));
        }
        for (name, v) in self.x.opts.overrides.clone() {
            let Some(i) = self.x.params.iter().position(|p| p.name == name) else {
                let known: Vec<&str> = self.x.params.iter().map(|p| p.name.as_str()).collect();
                let known = if known.is_empty() { "none: the game declares no parameters".to_string() } else { known.join(", ") };
                self.error(Span::default(), DiagKind::UnknownName { what: "parameter (override)", name, expected: known });
                continue;
            };
            let p = &self.x.params[i];
            if v < p.min || v > p.max || (p.integer && v.fract() != 0.0) || !v.is_finite() {
                let want = if p.integer { "a whole number in the parameter's range" } else { "a value in the parameter's range" };
                let what = format!("override {name} = {v} is outside {} to {}", p.min, p.max);
                self.invalid(Span::default(), what, want);
                continue;
            }
            let (g, is_const, idx) = slots[i];
            let raw = if p.integer { v as i64 } else { v.to_bits() as i64 };
            if is_const {
                self.gods[g as usize].consts[idx] = raw;
            } else {
                self.gods[g as usize].init[idx] = raw;
            }
            self.x.params[i].value = v;
        }
    }

    /// Players, turns, turn order, the hex map and its occupants' attributes, grids.
    pub(super) fn collect_ext_decls(&mut self) {
        let mut once: HashMap<&'static str, Span> = HashMap::new();
        let mut first = |me: &mut Self, key: &'static str, span: Span| -> bool {
            if let Some(f) = once.insert(key, span) {
                let first_line = me.first_line_of(f);
                me.error(span, DiagKind::Duplicate { what: "declaration", name: key.into(), first_line });
                return false;
            }
            true
        };
        let mut alternating = false;
        let mut turn_span = None;
        for d in self.decls() {
            match &d.kind {
                DeclKind::Players { names } => {
                    if !first(self, "players", d.span) {
                        continue;
                    }
                    if names.len() < 2 || names.len() > 4 {
                        self.invalid(d.span, format!("{} players", names.len()), "2 to 4 player names");
                        continue;
                    }
                    for (i, n) in names.iter().enumerate() {
                        if names[..i].iter().any(|m| m.name == n.name) {
                            let first_line = self.first_line_of(d.span);
                            self.error(n.span, DiagKind::Duplicate { what: "player", name: n.name.clone(), first_line });
                        }
                    }
                    self.x.players = names.iter().map(|n| n.name.clone()).collect();
                }
                DeclKind::Turn { class, side, .. } => {
                    if !first(self, "turn", d.span) {
                        continue;
                    }
                    turn_span = Some(d.span);
                    let Some(c) = self.resolve_class(class, "class") else { continue };
                    let Some(s) = self.long_attr(c, side, "a side") else { continue };
                    self.x.turn_decl = Some((c, s));
                }
                DeclKind::Chance { mode } => {
                    if !first(self, "chance", d.span) {
                        continue;
                    }
                    match mode.name.as_str() {
                        "oracle" => self.x.chance_fair = false,
                        "fair" => self.x.chance_fair = true,
                        _ => self.error(
                            mode.span,
                            DiagKind::UnknownName {
                                what: "chance mode",
                                name: mode.name.clone(),
                                expected: "`oracle` (searches see the real future draws) or `fair` (they draw from their own stream)"
                                    .into(),
                            },
                        ),
                    }
                }
                DeclKind::TurnOrder { mode } => {
                    if !first(self, "turnOrder", d.span) {
                        continue;
                    }
                    match mode.name.as_str() {
                        "grouped" => alternating = false,
                        "alternating" => alternating = true,
                        _ => self.error(
                            mode.span,
                            DiagKind::UnknownName {
                                what: "turn order",
                                name: mode.name.clone(),
                                expected: "`grouped` or `alternating`".into(),
                            },
                        ),
                    }
                }
                DeclKind::HexMap { path, path_span } => {
                    if !first(self, "hexmap", d.span) {
                        continue;
                    }
                    let full = match &self.x.opts.base_dir {
                        Some(b) => b.join(path),
                        None => PathBuf::from(path),
                    };
                    match crate::input::read_text(&full) {
                        Err(e) => {
                            let what = match e {
                                crate::input::InputError::Io { path, err } => format!("cannot read hex map {path}: {err}"),
                                e => format!("hex map {e}"),
                            };
                            self.invalid(*path_span, what, "a readable map file")
                        }
                        Ok(text) => match HexMap::parse(&text) {
                            Ok(m) => self.x.hex = Some(Arc::new(m)),
                            Err(e) => self.invalid(*path_span, format!("hex map {}:{}:{}: bad map", full.display(), e.line, e.col), e.msg),
                        },
                    }
                }
                DeclKind::Grid { name, width, height } => {
                    if let Some(&g) = self.x.grid_ix.get(&name.name) {
                        let first_line = self.first_line_of(self.x.grid_decl_spans[g as usize]);
                        self.error(name.span, DiagKind::Duplicate { what: "grid", name: name.name.clone(), first_line });
                        continue;
                    }
                    let cells = *width as u64 * *height as u64;
                    if cells > 1_000_000 || self.x.grid_slots as u64 + cells > 1_000_000 {
                        self.invalid(d.span, format!("grid `{}` of {cells} cells", name.name), "at most 1 000 000 grid cells in all");
                        continue;
                    }
                    self.x.grid_ix.insert(name.name.clone(), self.x.grids.len() as u16);
                    self.x.grids.push(GridInfo { name: name.name.clone(), base: self.x.grid_slots, width: *width, height: *height });
                    self.x.grid_decl_spans.push(name.span);
                    self.x.grid_slots += cells as u32;
                }
                _ => {}
            }
        }
        if let Some(o) = &self.x.opts.turn_order {
            alternating = o == "alternating";
        }
        if let Some(span) = turn_span
            && self.x.players.is_empty()
        {
            self.invalid(span, "turns without players", "a `players <name> <name> …` line naming the sides");
        }
        if let Some((class, side)) = self.x.turn_decl {
            self.x.turn = Some(TurnInfo { class, side, cond: None, alternating, side_written: true });
        }
    }

    /// `policyOnly`, `choose`, `lastResort`, `unless`: per-action move filters.
    pub(super) fn collect_filters(&mut self) {
        let mut seen: HashMap<(&'static str, ActionId), Span> = HashMap::new();
        for d in self.decls() {
            let (key, action) = match &d.kind {
                DeclKind::PolicyOnly { action } => ("policyOnly", action),
                DeclKind::Choose { action, .. } => ("choose", action),
                DeclKind::LastResort { action, .. } => ("lastResort", action),
                DeclKind::Unless { action, .. } => ("unless", action),
                _ => continue,
            };
            let Some(a) = self.lookup_action(action) else { continue };
            if self.actions[a as usize].kind != ActionKind::Player {
                self.invalid(action.span, format!("`{key}` on `{}`, which is not a player action", action.name), "a player action");
                continue;
            }
            if key != "unless"
                && let Some(f) = seen.insert((key, a), d.span)
            {
                let first_line = self.first_line_of(f);
                self.error(d.span, DiagKind::Duplicate { what: "move filter", name: format!("{key} {}", action.name), first_line });
                continue;
            }
            match &d.kind {
                DeclKind::PolicyOnly { .. } => self.actions[a as usize].policy_only = true,
                DeclKind::LastResort { n, .. } => self.actions[a as usize].last_resort = Some(*n),
                DeclKind::Unless { other, .. } => {
                    let Some(o) = self.lookup_action(other) else { continue };
                    self.actions[a as usize].unless.push(o);
                }
                DeclKind::Choose { n, key, .. } => {
                    let cx = self.ctx_of(a);
                    if let Some(e) = self.top_expr(key, cx, Some(Ty::Long), "a `choose` key") {
                        self.actions[a as usize].choose = Some((*n, e));
                    }
                }
                _ => unreachable!("filtered above"),
            }
        }
    }

    /// Expressions of the extensions that need the actions: turn and occupant conditions,
    /// outcomes, policies.
    pub(super) fn compile_ext(&mut self) {
        for d in self.decls() {
            match &d.kind {
                DeclKind::Turn { cond: Some(c), .. } => {
                    let Some((class, _)) = self.x.turn_decl else { continue };
                    let cx = CtxKey { this: Some(class), bind: BindKind::None, var: NO_VAR };
                    let e = self.top_expr(c, cx, Some(Ty::Bool), "a turn's `while` condition");
                    if let Some(t) = &mut self.x.turn {
                        t.cond = e;
                    }
                }
                DeclKind::HexOccupants { class, pos, side, cond } => {
                    if self.x.occupants.is_some() {
                        self.invalid(d.span, "a second `hexOccupants` line", "one `hexOccupants` line");
                        continue;
                    }
                    if self.x.hex.is_none() {
                        self.invalid(d.span, "`hexOccupants` without a hex map", "a `hexmap \"<file>\"` line");
                        continue;
                    }
                    let Some(c) = self.resolve_class(class, "class") else { continue };
                    let Some(p) = self.long_attr(c, pos, "a hex position") else { continue };
                    let Some(s) = self.long_attr(c, side, "a side") else { continue };
                    let cx = CtxKey { this: Some(c), bind: BindKind::None, var: NO_VAR };
                    let cond = match cond {
                        Some(e) => match self.top_expr(e, cx, Some(Ty::Bool), "an occupant's `while` condition") {
                            Some(e) => Some(e),
                            None => continue,
                        },
                        None => None,
                    };
                    self.x.occupants = Some(Occupants { class: c, pos: p, side: s, cond });
                }
                DeclKind::Outcome { player, expr } => {
                    let winner = match player {
                        None => None,
                        Some(p) => match self.x.players.iter().position(|n| *n == p.name) {
                            Some(k) => Some(k as u8),
                            None => {
                                let expected = if self.x.players.is_empty() {
                                    "a `players` line naming the sides".to_string()
                                } else {
                                    format!("one of the players: {}", self.x.players.join(", "))
                                };
                                self.error(p.span, DiagKind::UnknownName { what: "player", name: p.name.clone(), expected });
                                continue;
                            }
                        },
                    };
                    let stuck = self.stuck_line(expr);
                    if let Some(e) = self.top_expr(expr, NO_CTX, Some(Ty::Bool), "an outcome condition") {
                        let text = self.source.slice(expr.span).to_string();
                        let o = OutcomeInfo { winner, expr: e, text, reads: 0 };
                        if stuck { self.board.stuck_outcomes.push(o) } else { self.x.outcomes.push(o) }
                    }
                    self.board.stuck_ok = false;
                }
                DeclKind::Constraint { expr } => {
                    if let Some(e) = self.top_expr(expr, NO_CTX, Some(Ty::Bool), "a constraint") {
                        let text = self.source.slice(expr.span).to_string();
                        self.x.constraints.push((e, text));
                    }
                }
                DeclKind::Policy { name, action, pick, cond } => {
                    let Some(a) = self.lookup_action(action) else { continue };
                    if self.actions[a as usize].kind != ActionKind::Player {
                        self.invalid(action.span, format!("policy tier `{}` is not a player action", action.name), "a player action");
                        continue;
                    }
                    let cx = self.ctx_of(a);
                    let num = |me: &mut Self, e: &ast::Expr| -> Option<(ExprId, bool)> {
                        let (id, t) = me.top_expr_any(e, cx)?;
                        match t {
                            Ty::Long => Some((id, false)),
                            Ty::Double => Some((id, true)),
                            t => {
                                let found = me.ty_name(t);
                                me.error(e.span, DiagKind::TypeMismatch { expected: "a number (long or double)".into(), found });
                                None
                            }
                        }
                    };
                    let pick = match pick {
                        Pick::First => PickCode::First,
                        Pick::Random => PickCode::Random,
                        Pick::Weight(e) => match num(self, e) {
                            Some((e, dbl)) => PickCode::Weight(e, dbl),
                            None => continue,
                        },
                        Pick::Max(e) => match num(self, e) {
                            Some((e, dbl)) => PickCode::Max(e, dbl),
                            None => continue,
                        },
                    };
                    let cond = match cond {
                        Some(c) => match self.top_expr(c, cx, Some(Ty::Bool), "a policy tier's `if` condition") {
                            Some(e) => Some(e),
                            None => continue,
                        },
                        None => None,
                    };
                    let tier = Tier { action: a, pick, cond };
                    match self.x.policies.iter_mut().find(|p| p.name == name.name) {
                        Some(p) => p.tiers.push(tier),
                        None => self.x.policies.push(PolicyInfo { name: name.name.clone(), tiers: vec![tier] }),
                    }
                }
                _ => {}
            }
        }
        if self.x.turn.is_some() && self.x.outcomes.is_empty() {
            let span = self.decls().find(|d| matches!(d.kind, DeclKind::Turn { .. })).map(|d| d.span).unwrap_or_default();
            self.warn(
                span,
                DiagKind::Invalid {
                    what: "a game with turns but no `winner`/`draw` line".into(),
                    expected: "outcomes, or the game never ends by itself".into(),
                },
            );
        }
    }

    // ------------------------------------------------------------------ expressions

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

    /// A built-in function call.
    pub(super) fn call(&mut self, name: &[ast::Ident], args: &[ast::Expr], span: Span, cx: CtxKey) -> Option<Ty> {
        const KNOWN: &str = "max, min, abs, sumOf, countOf, hex.distance, hex.walk, hex.sees, hex.wall, hex.free, hex.start, \
hex.hidden, hex.approach, hex.stepToward, hex.cells, <grid>.line, <grid>.runs, <grid>.sumRuns, <grid>.swaps, <grid>.hasSwap, <grid>.canSwap, <grid>.group, \
<grid>.groupLead, <grid>.groups, <grid>.groupDistinct";
        let full: Vec<&str> = name.iter().map(|i| i.name.as_str()).collect();
        let full = full.join(".");
        let arity = |me: &mut Self, want: usize| -> Option<()> {
            if args.len() == want {
                return Some(());
            }
            let at = args.get(want).map_or(span, |a| a.span);
            me.error(at, DiagKind::WrongArity { what: full.clone(), expected: format!("{want} argument(s)"), found: args.len() });
            None
        };
        match full.as_str() {
            "max" | "min" => {
                arity(self, 2)?;
                let t1 = self.expr(&args[0], cx)?;
                self.want_number(t1, args[0].span)?;
                let t2 = self.expr(&args[1], cx)?;
                self.want_number(t2, args[1].span)?;
                let double = t1 == Ty::Double || t2 == Ty::Double;
                if double && t1 == Ty::Long {
                    self.emit(Op::L2DUnder, span);
                }
                if double && t2 == Ty::Long {
                    self.emit(Op::L2D, span);
                }
                let b = match (full.as_str(), double) {
                    ("max", false) => Builtin::MaxL,
                    ("max", true) => Builtin::MaxD,
                    ("min", false) => Builtin::MinL,
                    _ => Builtin::MinD,
                };
                self.emit(Op::Call(b), span);
                Some(if double { Ty::Double } else { Ty::Long })
            }
            "abs" => {
                arity(self, 1)?;
                let t = self.expr(&args[0], cx)?;
                self.want_number(t, args[0].span)?;
                self.emit(Op::Call(if t == Ty::Double { Builtin::AbsD } else { Builtin::AbsL }), span);
                Some(t)
            }
            "sumOf" | "countOf" => {
                arity(self, 2)?;
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
            _ if name.len() == 2 && name[0].name == "hex" => {
                use Builtin::*;
                let (b, ret) = match name[1].name.as_str() {
                    "distance" => (HexDistance, Ty::Long),
                    "walk" => (HexWalk, Ty::Long),
                    "sees" => (HexSees, Ty::Bool),
                    "wall" => (HexWall, Ty::Bool),
                    "free" => (HexFree, Ty::Bool),
                    "start" => (HexStart, Ty::Long),
                    "hidden" => (HexHidden, Ty::Bool),
                    "approach" => (HexApproach, Ty::Long),
                    "stepToward" => (HexStepToward, Ty::Long),
                    "cells" => (HexCells, Ty::Long),
                    _ => {
                        self.error(name[1].span, DiagKind::UnknownName { what: "function", name: full.clone(), expected: KNOWN.into() });
                        return None;
                    }
                };
                if self.x.hex.is_none() {
                    self.invalid(span, format!("`{full}` without a hex map"), "a `hexmap \"<file>\"` line");
                    return None;
                }
                if matches!(b, HexFree | HexHidden | HexApproach | HexStepToward) && !self.has_occupants_decl() {
                    self.invalid(span, format!("`{full}` needs to know who stands where"), "a `hexOccupants <Class> <pos> <side>` line");
                    return None;
                }
                arity(self, b.arity())?;
                for a in args {
                    let t = self.expr(a, cx)?;
                    self.want_long(t, a.span)?;
                }
                self.emit(Op::Call(b), span);
                Some(ret)
            }
            _ if name.len() == 2
                && matches!(
                    name[1].name.as_str(),
                    "runs" | "swaps" | "hasSwap" | "canSwap" | "sumRuns" | "group" | "groupLead" | "groups" | "groupDistinct"
                )
                && self.x.grid_ix.contains_key(&name[0].name) =>
            {
                let g = self.x.grid_ix[&name[0].name];
                let op = name[1].name.as_str();
                if op == "sumRuns" {
                    return self.sum_runs(g, args, span, cx, &full);
                }
                arity(
                    self,
                    match op {
                        "canSwap" | "group" | "groups" | "groupDistinct" => 2,
                        "groupLead" => 3,
                        _ => 1,
                    },
                )?;
                for a in args {
                    let t = self.expr(a, cx)?;
                    self.want_long(t, a.span)?;
                }
                let (code, ty) = match op {
                    "runs" => (Op::GridRuns(g), Ty::Long),
                    "swaps" => (Op::GridSwaps(g), Ty::Long),
                    "hasSwap" => (Op::GridHasSwap(g), Ty::Bool),
                    "canSwap" => (Op::GridCanSwap(g), Ty::Bool),
                    "group" => (Op::GridGroup(g), Ty::Long),
                    "groupLead" => (Op::GridGroupLead(g), Ty::Bool),
                    "groups" => (Op::GridGroups(g), Ty::Long),
                    _ => (Op::GridGroupDistinct(g), Ty::Long),
                };
                self.emit(code, span);
                Some(ty)
            }
            _ if name.len() == 2 && self.x.grid_ix.contains_key(&name[0].name) && TileOp::ALL.iter().any(|t| t.name == name[1].name) => {
                self.invalid(
                    span,
                    format!("`{full}` in an expression: it changes the grid"),
                    format!(
                        "a consequence `do {full}(…)`; expressions may read a grid with line, runs, sumRuns, swaps, hasSwap, canSwap, group, \
groupLead, groups and groupDistinct"
                    ),
                );
                None
            }
            _ if name.len() == 2 && name[1].name == "line" && self.x.grid_ix.contains_key(&name[0].name) => {
                arity(self, 4)?;
                for a in args {
                    let t = self.expr(a, cx)?;
                    self.want_long(t, a.span)?;
                }
                self.emit(Op::GridLine(self.x.grid_ix[&name[0].name]), span);
                Some(Ty::Long)
            }
            _ => {
                self.error(
                    name[0].span.to(name[name.len() - 1].span),
                    DiagKind::UnknownName { what: "function", name: full.clone(), expected: KNOWN.into() },
                );
                None
            }
        }
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
    fn aggregate_code(&mut self, e: &ast::Expr, inner_cx: CtxKey, class: ClassId, count: bool, span: Span) -> Option<(u16, Ty)> {
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
        self.x.aggs.push(AggInfo { class, expr: inner, count, double, infallible: false });
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
        for a in args {
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
