//! Pass (extension, games/README.md §10): board lines. `pieces`, `start` and `forward` after the
//! grids and players are known ([`Compiler::collect_board_decls`]); the bindings
//! `forEveryCell`, `forEveryStep` and `forEveryJump` as the actions are collected
//! ([`Compiler::board_binding`]: a step table per binding); `notation` lines once the
//! actions' contexts exist ([`Compiler::compile_notations`]).

use super::*;
use crate::wgdl::board::{self, NoteLine, NotePart, StepTable};

/// The most moves all `forEveryStep`/`forEveryJump` tables of a game hold together (each move is
/// 12 bytes: 48 MB at most), counted before a table is built.
pub const MAX_STEP_MOVES: u64 = 4_000_000;

/// What the board lines collect.
#[derive(Default)]
pub(super) struct BoardCx {
    /// Per grid: its `pieces` characters (value k is the k-th) and where they were declared.
    pub pieces: HashMap<u16, (Vec<char>, Span)>,
    /// Per grid: its start rows in file order (top row first) and the span of each.
    pub starts: HashMap<u16, Vec<(String, Span)>>,
    /// Per side: the direction its pieces face (`forward` lines).
    pub forward: Vec<Option<(i32, i32)>>,
    pub tables: Vec<StepTable>,
    /// Per step table: the symbols of its from, over and to names ([`NO_VAR`] for no `over`).
    pub table_vars: Vec<[i64; 3]>,
    /// Per action: its notation lines (none: the default `name(owner, binding)`).
    pub notations: Vec<Vec<NoteLine>>,
    /// Per grid with start rows: its cells' start values.
    pub start_values: Vec<(u16, Vec<i64>)>,
    /// The `forEveryCell` actions and their grids.
    pub cell_vars: HashMap<ActionId, u16>,
    /// The outcome lines that begin with `game.stuck`.
    pub stuck_outcomes: Vec<OutcomeInfo>,
    /// `game.stuck` may be read: compiling such a line.
    pub stuck_ok: bool,
    /// The direction sets named in expressions, per side ([`crate::wgdl::board::Boards::dirsets`]).
    pub dirsets: Vec<Vec<Vec<(i32, i32)>>>,
    /// Their names, for reuse.
    pub dirset_ix: HashMap<String, u32>,
    /// The parameters that size a grid (indices into the parameters).
    pub structural: Vec<usize>,
    /// The action lists of `canMove` calls.
    pub can_move: Vec<Vec<ActionId>>,
}

impl Compiler<'_> {
    /// `pieces`, `start` and `forward` lines; the start rows become the grids' start values.
    pub(super) fn collect_board_decls(&mut self) {
        self.board.forward = vec![None; self.x.players.len()];
        for d in self.decls() {
            match &d.kind {
                DeclKind::Pieces { grid, chars, span } => {
                    let Some(g) = self.grid_named(grid) else { continue };
                    if let Some((_, first)) = self.board.pieces.get(&g) {
                        let first_line = line_of(&self.source, *first);
                        self.error(*span, DiagKind::Duplicate { what: "pieces line for grid", name: grid.name.clone(), first_line });
                        continue;
                    }
                    let cs: Vec<char> = chars.chars().collect();
                    let mut seen = std::collections::HashSet::new();
                    if cs.is_empty() || cs.iter().any(|c| c.is_whitespace() || c.is_control() || !seen.insert(*c)) {
                        self.error(
                            *span,
                            DiagKind::Invalid {
                                what: format!("pieces \"{}\"", clip_text(chars)),
                                expected: "one distinct, visible character per cell value from 0, such as \".bw\"".into(),
                            },
                        );
                        continue;
                    }
                    self.board.pieces.insert(g, (cs, *span));
                }
                DeclKind::Start { grid, row, span } => {
                    let Some(g) = self.grid_named(grid) else { continue };
                    self.board.starts.entry(g).or_default().push((row.clone(), *span));
                }
                DeclKind::Forward { player, dir } => {
                    let Some(side) = self.x.players.iter().position(|p| *p == player.name) else {
                        let known = self.x.players.join(", ");
                        self.error(
                            player.span,
                            DiagKind::UnknownName {
                                what: "player",
                                name: player.name.clone(),
                                expected: format!(
                                    "a player declared by `players` ({})",
                                    if known.is_empty() { "none declared" } else { &known }
                                ),
                            },
                        );
                        continue;
                    };
                    let Some(&(_, dx, dy)) = board::COMPASS.iter().find(|(n, _, _)| *n == dir.name) else {
                        self.error(
                            dir.span,
                            DiagKind::UnknownName {
                                what: "direction",
                                name: dir.name.clone(),
                                expected: "north, northEast, east, southEast, south, southWest, west or northWest".into(),
                            },
                        );
                        continue;
                    };
                    if dx != 0 && dy != 0 {
                        self.error(
                            dir.span,
                            DiagKind::Invalid {
                                what: format!("facing {}", dir.name),
                                expected: "north, east, south or west (a side faces along a row or column)".into(),
                            },
                        );
                        continue;
                    }
                    self.board.forward[side] = Some((dx, dy));
                }
                _ => {}
            }
        }
        self.start_rows();
    }

    /// Each grid's `start` rows: as many as it has rows, as wide as it is (spaces ignored),
    /// every character one of its `pieces`.
    fn start_rows(&mut self) {
        let mut grids: Vec<u16> = self.board.starts.keys().copied().collect();
        grids.sort_unstable();
        for g in grids {
            let rows = self.board.starts.remove(&g).unwrap_or_default();
            let (w, h) = (self.x.grids[g as usize].width, self.x.grids[g as usize].height);
            let name = self.x.grids[g as usize].name.clone();
            let Some((pieces, _)) = self.board.pieces.get(&g).cloned() else {
                self.error(
                    rows[0].1,
                    DiagKind::Invalid {
                        what: format!("a start row of grid `{name}` without its pieces"),
                        expected: format!("a `pieces {name} \"…\"` line saying which character is which value"),
                    },
                );
                continue;
            };
            if rows.len() != h as usize {
                let span = rows.get(h as usize).map_or(rows[rows.len() - 1].1, |r| r.1);
                self.error(
                    span,
                    DiagKind::Invalid {
                        what: format!("{} start rows for grid `{name}`", rows.len()),
                        expected: format!("{h} rows, one per row of the grid, the top row first"),
                    },
                );
                continue;
            }
            let mut cells = vec![0i64; (w * h) as usize];
            let mut ok = true;
            for (i, (row, span)) in rows.iter().enumerate() {
                let y = h as usize - 1 - i;
                let cs: Vec<char> = row.chars().filter(|c| *c != ' ').collect();
                if cs.len() != w as usize {
                    self.error(
                        *span,
                        DiagKind::Invalid {
                            what: format!("a start row of {} cells", cs.len()),
                            expected: format!("{w} cells (grid `{name}` is {w} wide; spaces are ignored)"),
                        },
                    );
                    ok = false;
                    continue;
                }
                for (x, c) in cs.iter().enumerate() {
                    match pieces.iter().position(|p| p == c) {
                        Some(v) => cells[y * w as usize + x] = v as i64,
                        None => {
                            let have: String = pieces.iter().collect();
                            self.error(
                                *span,
                                DiagKind::Invalid {
                                    what: format!("`{c}` in a start row"),
                                    expected: format!("one of the pieces of grid `{name}`: \"{have}\""),
                                },
                            );
                            ok = false;
                            break;
                        }
                    }
                }
            }
            if ok {
                self.board.start_values.push((g, cells));
            }
        }
    }

    /// A board binding of an action owned by `owner` (resolved): its [`BindKind`] and the
    /// symbol of its first name.
    pub(super) fn board_binding(&mut self, owner: Option<ClassId>, b: &Binding, var: &ast::Ident) -> Option<(BindKind, i64)> {
        match b {
            Binding::ForEveryCell(grid) => {
                let g = self.grid_named(grid)?;
                let gi = &self.x.grids[g as usize];
                let cells = gi.width * gi.height;
                Some((BindKind::Number(0, cells - 1), self.intern(&var.name)))
            }
            Binding::ForEveryStep { over, to, grid, dirs } => {
                let g = self.grid_named(grid)?;
                let per_side = self.direction_set(dirs, owner)?;
                let (w, h) = (self.x.grids[g as usize].width, self.x.grids[g as usize].height);
                // Every table is built in full when the game compiles: their moves are bounded.
                let per = (w as u64 * h as u64) * per_side.iter().map(|d| d.len() as u64).sum::<u64>();
                let made: u64 = self.board.tables.iter().map(|t| t.moves.len() as u64).sum();
                if made + per > MAX_STEP_MOVES {
                    self.error(
                        var.span,
                        DiagKind::Invalid {
                            what: format!("step bindings of more than {MAX_STEP_MOVES} moves in all"),
                            expected: "fewer step or jump bindings, smaller grids or fewer directions".into(),
                        },
                    );
                    return None;
                }
                let table = StepTable::build(g, w, h, &per_side, over.is_some());
                if self.board.tables.len() >= u16::MAX as usize {
                    self.error(var.span, DiagKind::Invalid { what: "too many step bindings".into(), expected: "at most 65 535".into() });
                    return None;
                }
                let t = self.board.tables.len() as u16;
                self.board.tables.push(table);
                let vars = [self.intern(&var.name), over.as_ref().map_or(NO_VAR, |o| self.intern(&o.name)), self.intern(&to.name)];
                self.board.table_vars.push(vars);
                Some((BindKind::Step(t), vars[0]))
            }
            _ => None,
        }
    }

    /// A grid's width or height: the number, or the declared parameter's value (whole, ≥ 1 at
    /// every value of its range), which is then recorded as shaping the program.
    pub(super) fn grid_dim(&mut self, d: &ast::Dim) -> Option<u32> {
        let (god, attr) = match d {
            ast::Dim::Number(n) => return Some(*n),
            ast::Dim::Param(g, a) => (g, a),
        };
        let name = format!("{}.{}", god.name, attr.name);
        let Some(k) = self.x.params.iter().position(|p| p.name == name) else {
            let known: Vec<&str> = self.x.params.iter().map(|p| p.name.as_str()).collect();
            let expected = if known.is_empty() {
                "a declared parameter (none declared): `parameter <description>.<attribute> <min> <max>`".to_string()
            } else {
                format!("a declared parameter ({})", known.join(", "))
            };
            self.error(god.span.to(attr.span), DiagKind::UnknownName { what: "parameter", name, expected });
            return None;
        };
        let p = &self.x.params[k];
        if !p.integer || p.min < 1.0 || p.max > 1000.0 {
            let (lo, hi) = (p.min, p.max);
            self.error(
                god.span.to(attr.span),
                DiagKind::Invalid {
                    what: format!("`{name}` (from {lo} to {hi}) as a grid size"),
                    expected: "a whole-number parameter from 1 to at most 1000".into(),
                },
            );
            return None;
        }
        if !self.board.structural.contains(&k) {
            self.board.structural.push(k);
        }
        Some(p.value as u32)
    }

    /// Whether outcome condition `e` is `game.stuck` or begins with it (`game.stuck && …`): then
    /// it is a stuck line, and `game.stuck` may be read while it compiles.
    pub(super) fn stuck_line(&mut self, e: &ast::Expr) -> bool {
        let mut first = e;
        while let ExprKind::Binary(BinOp::And, l, _) = &first.kind {
            first = l;
        }
        let is = matches!(&first.kind, ExprKind::GameValue(p) if p.len() == 1 && p[0].name == "stuck");
        self.board.stuck_ok = is;
        is
    }

    /// `board.any(c, <condition>)` and `board.countCells(c, <condition>)`: whether some cell,
    /// and how many, meet the condition, with the name `c` bound to each cell's number.
    pub(super) fn cells_aggregate(&mut self, g: u16, args: &[ast::Expr], span: Span, cx: CtxKey, full: &str) -> Option<Ty> {
        let shape = format!("2 arguments: `{full}(<name for the cell>, <condition>)`, e.g. `board.any(c, board[c] == 0)`");
        if args.len() != 2 {
            let at = args.get(2).map_or(span, |a| a.span);
            self.error(at, DiagKind::WrongArity { what: full.into(), expected: shape, found: args.len() });
            return None;
        }
        let var = match &args[0].kind {
            ExprKind::Path(p) if p.len() == 1 && p[0].name != "this" && p[0].name != "game" => self.intern(&p[0].name),
            _ => {
                self.error(
                    args[0].span,
                    DiagKind::Invalid {
                        what: format!("the first argument of `{full}`"),
                        expected: "a plain name for the cell, e.g. `c`".into(),
                    },
                );
                return None;
            }
        };
        let gi = &self.x.grids[g as usize];
        let inner_cx = CtxKey { this: cx.this, bind: BindKind::Number(0, gi.width * gi.height - 1), var };
        let (a, _) = self.aggregate_code(&args[1], inner_cx, 0, true, span)?;
        self.x.aggs[a as usize].cells = Some(g);
        self.emit(Op::Agg(a), span);
        if full.ends_with(".any") {
            self.emit(Op::Const(0), span);
            self.emit(Op::GtL, span);
            return Some(Ty::Bool);
        }
        Some(Ty::Long)
    }

    /// `canMove(<action>, …)`: whether one of the named actions has a move for `this` now.
    pub(super) fn can_move_call(&mut self, args: &[ast::Expr], span: Span) -> Option<Ty> {
        if args.is_empty() {
            self.error(
                span,
                DiagKind::WrongArity {
                    what: "canMove".into(),
                    expected: "one or more action names, e.g. `canMove(jump, kingJump)`".into(),
                    found: 0,
                },
            );
            return None;
        }
        let mut list = Vec::new();
        for a in args {
            let ExprKind::Path(p) = &a.kind else {
                self.error(a.span, DiagKind::Invalid { what: "an expression here".into(), expected: "an action's name".into() });
                return None;
            };
            if p.len() != 1 {
                self.error(a.span, DiagKind::Invalid { what: "a path here".into(), expected: "an action's name".into() });
                return None;
            }
            list.push(self.lookup_action(&p[0])?);
        }
        let k = match self.board.can_move.iter().position(|l| *l == list) {
            Some(k) => k,
            None => {
                self.board.can_move.push(list);
                self.board.can_move.len() - 1
            }
        };
        let b = Builtin::find(crate::wgdl::run::builtins::On::Free, "canMove").expect("canMove is a row of the table");
        self.emit(Op::Call(b, k as u16, 0), span);
        Some(Ty::Bool)
    }

    /// A cell of grid `g` as a place: `board[x, y]`, or `board[c]` by its cell number. Pushes
    /// the cell's absolute slot.
    pub(super) fn grid_place(&mut self, g: &ast::Ident, x: &ast::Expr, y: Option<&ast::Expr>, cx: CtxKey) -> Option<()> {
        if let Some(y) = y {
            return self.grid_cell(g, x, y, cx);
        }
        let gi = self.grid_named(g)?;
        let t = self.expr(x, cx)?;
        if t != Ty::Long {
            let found = self.ty_name(t);
            self.error(x.span, DiagKind::TypeMismatch { expected: "a cell number (long)".into(), found });
            return None;
        }
        self.emit(Op::GridIndex(gi), g.span);
        Some(())
    }

    /// The index of direction set `dirs` among those expressions name (made on first use).
    pub(super) fn dirset_index(&mut self, dirs: &ast::Ident) -> Option<u32> {
        if let Some(&k) = self.board.dirset_ix.get(&dirs.name) {
            return Some(k);
        }
        let per_side = self.direction_set(dirs, None)?;
        let k = self.board.dirsets.len() as u32;
        self.board.dirsets.push(per_side);
        self.board.dirset_ix.insert(dirs.name.clone(), k);
        Some(k)
    }

    /// The directions of a set, per side (one list for every side when it does not turn).
    fn direction_set(&mut self, dirs: &ast::Ident, owner: Option<ClassId>) -> Option<Vec<Vec<(i32, i32)>>> {
        if let Some(d) = board::absolute(&dirs.name) {
            return Some(vec![d]);
        }
        if !board::RELATIVE_SETS.contains(&dirs.name.as_str()) {
            self.error(
                dirs.span,
                DiagKind::UnknownName { what: "direction set", name: dirs.name.clone(), expected: board::SET_NAMES.into() },
            );
            return None;
        }
        let _ = owner;
        let mut per_side = Vec::new();
        for side in 0..self.board.forward.len() {
            match self.board.forward[side] {
                Some(f) => per_side.push(board::relative(&dirs.name, f).unwrap_or_default()),
                None => {
                    let player = self.x.players[side].clone();
                    self.error(
                        dirs.span,
                        DiagKind::Invalid {
                            what: format!("`{}` without a `forward` line for {player}", dirs.name),
                            expected: format!("`forward {player} <north, east, south or west>`: the way {player}'s pieces face"),
                        },
                    );
                    return None;
                }
            }
        }
        if per_side.is_empty() {
            self.error(
                dirs.span,
                DiagKind::Invalid {
                    what: format!("`{}` without players", dirs.name),
                    expected: "`players …` and a `forward` line for each".into(),
                },
            );
            return None;
        }
        Some(per_side)
    }

    /// `byChance` lines: the action's moves become chance outcomes (with their weight).
    pub(super) fn compile_chance(&mut self) {
        for d in self.decls() {
            let DeclKind::ByChance { action, weight } = &d.kind else { continue };
            let Some(a) = self.lookup_action(action) else { continue };
            if self.actions[a as usize].kind != ActionKind::Player {
                self.error(
                    action.span,
                    DiagKind::Invalid {
                        what: format!("`byChance {}`, which is not a player action", action.name),
                        expected: "an action of a class (`action <Class> <name> …`)".into(),
                    },
                );
                continue;
            }
            if self.actions[a as usize].chance.is_some() {
                self.error(
                    action.span,
                    DiagKind::Duplicate {
                        what: "byChance line for action",
                        name: action.name.clone(),
                        first_line: line_of(&self.source, d.span),
                    },
                );
                continue;
            }
            let w = match weight {
                Some(w) => {
                    let cx = self.ctx_of(a);
                    match self.top_expr(w, cx, Some(Ty::Long), "a chance weight") {
                        Some(e) => Some(e),
                        None => continue,
                    }
                }
                None => None,
            };
            self.actions[a as usize].chance = Some(w);
        }
    }

    /// `notation` lines, each compiled in its action's context: its names resolved to the
    /// binding's parts, its condition to code.
    pub(super) fn compile_notations(&mut self) {
        self.board.notations = vec![Vec::new(); self.actions.len()];
        for d in self.decls() {
            let DeclKind::Notation { action, items, cond } = &d.kind else { continue };
            let Some(a) = self.lookup_action(action) else { continue };
            let bind = self.actions[a as usize].bind;
            let var = self.action_var.get(a as usize).copied().unwrap_or(NO_VAR);
            let mut parts = Vec::new();
            for item in items {
                let part = match item {
                    ast::NoteItem::Text(t) => NotePart::Text(t.clone()),
                    ast::NoteItem::Var(v) => match self.note_part(bind, var, a, v) {
                        Some(p) => p,
                        None => continue,
                    },
                };
                parts.push(part);
            }
            let cond = match cond {
                Some(c) => {
                    let cx = self.ctx_of(a);
                    match self.top_expr(c, cx, Some(Ty::Bool), "a notation's condition") {
                        Some(e) => Some(e),
                        None => continue,
                    }
                }
                None => None,
            };
            self.board.notations[a as usize].push(NoteLine { parts, cond });
        }
    }

    /// What a name on a notation line of action `a` prints.
    fn note_part(&mut self, bind: BindKind, var: i64, a: ActionId, v: &ast::Ident) -> Option<NotePart> {
        let sym = self.sym_ix.get(&v.name).copied();
        match bind {
            BindKind::Step(t) => {
                let vars = self.board.table_vars[t as usize];
                if let Some(k) = vars.iter().position(|&s| Some(s) == sym && s != NO_VAR) {
                    let g = self.board.tables[t as usize].grid;
                    return Some(NotePart::Step { table: t, k: k as u8, width: self.x.grids[g as usize].width });
                }
            }
            BindKind::Number(..) | BindKind::Hex if var != NO_VAR && Some(var) == sym => {
                return Some(match self.board.cell_vars.get(&a) {
                    Some(&g) => NotePart::Cell(self.x.grids[g as usize].width),
                    None => NotePart::Number,
                });
            }
            _ => {}
        }
        let name = self.actions[a as usize].name.clone();
        self.error(
            v.span,
            DiagKind::UnknownName {
                what: "binding",
                name: v.name.clone(),
                expected: format!("a name the action `{name}` binds, or quoted text"),
            },
        );
        None
    }
}

/// A text shortened for a message.
fn clip_text(s: &str) -> String {
    crate::input::window(s, 0, 40)
}
