//! Compiler passes for the extensions of two-sided games: parameters (with overrides), players
//! and turns, outcomes, the hex map and its occupants, grids, move filters and policies. The
//! built-in function calls in expressions are compiled in `calls.rs`.
//!
//! Each pass resolves names once, like the core passes in the parent module, and reports every
//! problem as a diagnostic at the WGDL text that caused it.

use super::{CompileOptions, Compiler, CtxKey, NO_CTX, NO_VAR};
use crate::wgdl::ast::{self, DeclKind, Pick};
use crate::wgdl::diag::{DiagKind, Span};
use crate::wgdl::hex::HexMap;
use crate::wgdl::program::*;
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;

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
    pub(super) fn invalid(&mut self, span: Span, what: impl Into<String>, expected: impl Into<String>) {
        self.error(span, DiagKind::Invalid { what: what.into(), expected: expected.into() });
    }

    pub(super) fn first_line_of(&self, span: Span) -> usize {
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
                    let (Some(width), Some(height)) = (self.grid_dim(width), self.grid_dim(height)) else { continue };
                    let (width, height) = (&width, &height);
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
                DeclKind::Unless { others, .. } => {
                    for other in others {
                        if let Some(o) = self.lookup_action(other) {
                            self.actions[a as usize].unless.push(o);
                        }
                    }
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
        if self.x.turn.is_some() && self.x.outcomes.is_empty() && self.board.stuck_outcomes.is_empty() {
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
}
