//! Expressions → bytecode: type checking and coercion, binary and unary operators, attribute
//! paths resolved to slots (`this.x`, bound objects, named objects, game values), and the places
//! an assignment writes to. Each expression becomes one [`ExprId`] range of [`Op`]s.

use super::*;

impl Compiler<'_> {
    pub(super) fn begin(&mut self) -> usize {
        self.depth = 0;
        self.code.len()
    }

    pub(super) fn end(&mut self, start: usize) -> Option<ExprId> {
        if self.max_depth > 32 {
            self.max_depth = 0;
            let span = self.spans[start];
            self.error(
                span,
                DiagKind::Invalid {
                    what: "an expression nested too deeply".into(),
                    expected: "at most 32 pending values; split it with brackets or attributes".into(),
                },
            );
            return None;
        }
        Some(ExprId { start: start as u32, len: (self.code.len() - start) as u32 })
    }

    pub(super) fn emit(&mut self, op: Op, span: Span) {
        let delta: isize = match op {
            Op::Const(_)
            | Op::Slot(_)
            | Op::This(_)
            | Op::Bound(_)
            | Op::ThisConst(_)
            | Op::BoundConst(_)
            | Op::GodInit(_)
            | Op::GodConst(_)
            | Op::NamedConst(..)
            | Op::ThisObj
            | Op::BoundObj
            | Op::GodName
            | Op::StoreOwn(_)
            | Op::StoreSum(_)
            | Op::Time
            | Op::SessionTime
            | Op::Sessions
            | Op::Moves
            | Op::Agg(_)
            | Op::Actor
            | Op::Round
            | Op::Turns
            | Op::ToMove => 1,
            Op::Field(_)
            | Op::FieldConst(_)
            | Op::NameOf
            | Op::NegL
            | Op::NegD
            | Op::L2D
            | Op::L2DUnder
            | Op::Not
            | Op::Load
            | Op::Skip(_) => 0,
            Op::Call(_, _, n) => 1 - n as isize,
            _ => -1,
        };
        self.depth = (self.depth as isize + delta).max(0) as usize;
        self.max_depth = self.max_depth.max(self.depth);
        if let Op::Slot(_) = op {
            self.slot_fixups.push(self.code.len());
        }
        self.code.push(op);
        self.spans.push(span);
    }

    pub(super) fn top_expr(&mut self, e: &ast::Expr, cx: CtxKey, want: Option<Ty>, what: &str) -> Option<ExprId> {
        let start = self.begin();
        let t = self.expr(e, cx)?;
        if let Some(w) = want
            && t != w
        {
            let found = self.ty_name(t);
            let expected = format!("{} for {what}", self.ty_name(w));
            self.error(e.span, DiagKind::TypeMismatch { expected, found });
            return None;
        }
        self.end(start)
    }

    pub(super) fn top_expr_any(&mut self, e: &ast::Expr, cx: CtxKey) -> Option<(ExprId, Ty)> {
        let start = self.begin();
        let t = self.expr(e, cx)?;
        Some((self.end(start)?, t))
    }

    pub(super) fn coerce(&mut self, found: Ty, want: Ty, span: Span) -> Option<()> {
        match (found, want) {
            (a, b) if a == b => Some(()),
            (Ty::Long, Ty::Double) => {
                self.emit(Op::L2D, span);
                Some(())
            }
            (Ty::Null, Ty::Obj(_)) => Some(()),
            (Ty::Obj(a), Ty::Obj(b)) if self.class_is_sub(a, b) => Some(()),
            _ => {
                let (expected, found) = (self.ty_name(want), self.ty_name(found));
                self.error(span, DiagKind::TypeMismatch { expected, found });
                None
            }
        }
    }

    pub(super) fn expr(&mut self, e: &ast::Expr, cx: CtxKey) -> Option<Ty> {
        match &e.kind {
            ExprKind::Lit(l) => {
                let (v, t) = match l {
                    Lit::Long(v) => (*v, Ty::Long),
                    Lit::Double(v) => (v.to_bits() as i64, Ty::Double),
                    Lit::Bool(b) => (*b as i64, Ty::Bool),
                    Lit::Str(s) => (self.intern(s), Ty::Str),
                    Lit::Null => (NULL, Ty::Null),
                };
                self.emit(Op::Const(v), e.span);
                Some(t)
            }
            ExprKind::ObjRef(_) => {
                // Reuse the literal resolver for `object:name`.
                let any = Ty::Obj(0);
                let ty = match &e.kind {
                    ExprKind::ObjRef(n) => self.god_ix.get(&n.name).map(|&g| Ty::Obj(self.god_decl[g as usize].1)).unwrap_or(any),
                    _ => any,
                };
                let v = self.literal(e, ty)?;
                self.emit(Op::Const(v), e.span);
                Some(ty)
            }
            ExprKind::GameValue(segs) => self.game_value(segs, e.span),
            ExprKind::Path(p) => self.path(p, cx),
            ExprKind::Unary(op, inner) => {
                let t = self.expr(inner, cx)?;
                match (op, t) {
                    (UnOp::Neg, Ty::Long) => self.emit(Op::NegL, e.span),
                    (UnOp::Neg, Ty::Double) => self.emit(Op::NegD, e.span),
                    (UnOp::Not, Ty::Bool) => self.emit(Op::Not, e.span),
                    _ => {
                        let expected = if *op == UnOp::Neg { "a number after `-`" } else { "a boolean after `!`/`not`" };
                        let found = self.ty_name(t);
                        self.error(inner.span, DiagKind::TypeMismatch { expected: expected.into(), found });
                        return None;
                    }
                }
                Some(t)
            }
            ExprKind::Binary(op, l, r) => self.binary(*op, l, r, e.span, cx),
            ExprKind::Call(name, args) => self.call(name, args, e.span, cx),
            ExprKind::Index(g, x, y) => {
                self.grid_place(g, x, y.as_deref(), cx)?;
                self.emit(Op::Load, e.span);
                Some(Ty::Long)
            }
        }
    }

    pub(super) fn binary(&mut self, op: BinOp, l: &ast::Expr, r: &ast::Expr, span: Span, cx: CtxKey) -> Option<Ty> {
        let opspan = Span { lo: l.span.hi, hi: r.span.lo };
        match op {
            BinOp::Assign => {
                self.error(
                    opspan,
                    DiagKind::Invalid {
                        what: "`=` inside an expression".into(),
                        expected: "`==` to compare; assignment only as the whole of a direct consequence".into(),
                    },
                );
                None
            }
            BinOp::And | BinOp::Or => {
                let lt = self.expr(l, cx)?;
                self.want_bool(lt, l.span)?;
                let jump_at = self.code.len();
                self.emit(if op == BinOp::And { Op::AndJump(0) } else { Op::OrJump(0) }, span);
                let rt = self.expr(r, cx)?;
                self.want_bool(rt, r.span)?;
                let off = (self.code.len() - jump_at) as u32;
                self.code[jump_at] = if op == BinOp::And { Op::AndJump(off) } else { Op::OrJump(off) };
                Some(Ty::Bool)
            }
            BinOp::Xor => {
                let lt = self.expr(l, cx)?;
                self.want_bool(lt, l.span)?;
                let rt = self.expr(r, cx)?;
                self.want_bool(rt, r.span)?;
                self.emit(Op::Xor, span);
                Some(Ty::Bool)
            }
            BinOp::Mod => {
                for (e, t) in [(l, self.expr(l, cx)?), (r, self.expr(r, cx)?)] {
                    if t != Ty::Long {
                        let found = self.ty_name(t);
                        self.error(
                            e.span,
                            DiagKind::TypeMismatch { expected: "a long (`%` is the remainder of whole numbers)".into(), found },
                        );
                        return None;
                    }
                }
                self.emit(Op::ModL, span);
                Some(Ty::Long)
            }
            _ => {
                let lt = self.expr(l, cx)?;
                let rt = self.expr(r, cx)?;
                let numeric = |t: Ty| matches!(t, Ty::Long | Ty::Double);
                if numeric(lt) && numeric(rt) {
                    let dbl = lt == Ty::Double || rt == Ty::Double;
                    if dbl && lt == Ty::Long {
                        self.emit(Op::L2DUnder, span);
                    }
                    if dbl && rt == Ty::Long {
                        self.emit(Op::L2D, span);
                    }
                    let (o, t) = match (op, dbl) {
                        (BinOp::Add, false) => (Op::AddL, Ty::Long),
                        (BinOp::Sub, false) => (Op::SubL, Ty::Long),
                        (BinOp::Mul, false) => (Op::MulL, Ty::Long),
                        (BinOp::Div, false) => (Op::DivL, Ty::Long),
                        (BinOp::Add, true) => (Op::AddD, Ty::Double),
                        (BinOp::Sub, true) => (Op::SubD, Ty::Double),
                        (BinOp::Mul, true) => (Op::MulD, Ty::Double),
                        (BinOp::Div, true) => (Op::DivD, Ty::Double),
                        (BinOp::Eq, false) => (Op::Eq, Ty::Bool),
                        (BinOp::Ne, false) => (Op::Ne, Ty::Bool),
                        (BinOp::Lt, false) => (Op::LtL, Ty::Bool),
                        (BinOp::Le, false) => (Op::LeL, Ty::Bool),
                        (BinOp::Gt, false) => (Op::GtL, Ty::Bool),
                        (BinOp::Ge, false) => (Op::GeL, Ty::Bool),
                        (BinOp::Eq, true) => (Op::EqD, Ty::Bool),
                        (BinOp::Ne, true) => (Op::NeD, Ty::Bool),
                        (BinOp::Lt, true) => (Op::LtD, Ty::Bool),
                        (BinOp::Le, true) => (Op::LeD, Ty::Bool),
                        (BinOp::Gt, true) => (Op::GtD, Ty::Bool),
                        (BinOp::Ge, true) => (Op::GeD, Ty::Bool),
                        _ => unreachable!("logical operators handled above"),
                    };
                    // Operator errors point at the operator's span, for the runtime division check.
                    self.emit(o, if matches!(o, Op::DivL | Op::DivD) { span } else { opspan });
                    return Some(t);
                }
                if matches!(op, BinOp::Eq | BinOp::Ne) {
                    let same = match (lt, rt) {
                        (a, b) if a == b => true,
                        (Ty::Obj(_), Ty::Null) | (Ty::Null, Ty::Obj(_)) => true,
                        (Ty::Obj(a), Ty::Obj(b)) => self.class_is_sub(a, b) || self.class_is_sub(b, a),
                        _ => false,
                    };
                    if same {
                        self.emit(if op == BinOp::Eq { Op::Eq } else { Op::Ne }, opspan);
                        return Some(Ty::Bool);
                    }
                    let (a, b) = (self.ty_name(lt), self.ty_name(rt));
                    self.error(
                        span,
                        DiagKind::TypeMismatch {
                            expected: format!("both sides of `{}` of one type ({a} on the left)", op.symbol()),
                            found: b,
                        },
                    );
                    return None;
                }
                let bad = if numeric(lt) { (rt, r.span) } else { (lt, l.span) };
                let found = self.ty_name(bad.0);
                self.error(bad.1, DiagKind::TypeMismatch { expected: format!("a number (long or double) for `{}`", op.symbol()), found });
                None
            }
        }
    }

    pub(super) fn want_bool(&mut self, t: Ty, span: Span) -> Option<()> {
        if t == Ty::Bool {
            Some(())
        } else {
            let found = self.ty_name(t);
            self.error(span, DiagKind::TypeMismatch { expected: "boolean for a logical operator".into(), found });
            None
        }
    }

    pub(super) fn game_value(&mut self, segs: &[ast::Ident], span: Span) -> Option<Ty> {
        if segs.len() == 1 {
            let op = match segs[0].name.as_str() {
                "time" => Some(Op::Time),
                "sessionTime" => Some(Op::SessionTime),
                "sessionsFinished" => Some(Op::Sessions),
                "moves" => Some(Op::Moves),
                "round" | "turns" | "toMove" | "actor" if self.x.turn_decl.is_none() => {
                    self.error(
                        span,
                        DiagKind::Invalid {
                            what: format!("`game.{}` in a game without turns", segs[0].name),
                            expected: "a `turn <Class> <side>` line".into(),
                        },
                    );
                    return None;
                }
                "stuck" if self.board.stuck_ok => {
                    // Only ever evaluated when the side to move has no legal move.
                    self.emit(Op::Const(1), span);
                    return Some(Ty::Bool);
                }
                "stuck" => {
                    self.error(
                        span,
                        DiagKind::Invalid {
                            what: "`game.stuck` here".into(),
                            expected: "`game.stuck` first in a `winner` or `draw` line: `winner <player> game.stuck && …` (it holds when the side to move has no legal move)".into(),
                        },
                    );
                    return None;
                }
                "round" => Some(Op::Round),
                "turns" => Some(Op::Turns),
                "toMove" => Some(Op::ToMove),
                "actor" => {
                    self.emit(Op::Actor, span);
                    return Some(Ty::Obj(self.x.turn_decl.expect("checked above").0));
                }
                _ => None,
            };
            if let Some(op) = op {
                self.emit(op, span);
                return Some(Ty::Long);
            }
        }
        let mut path: Vec<String> = match self.game_defs.get(&segs[0].name) {
            Some((p, _)) => p.clone(),
            None => vec![segs[0].name.clone()],
        };
        path.extend(segs[1..].iter().map(|s| s.name.clone()));
        let sum = path.last().map(|s| s.as_str()) == Some("sum");
        if sum {
            path.pop();
            if path.is_empty() {
                self.error(
                    span,
                    DiagKind::Invalid { what: "`game.sum`".into(), expected: "a path before `sum`, e.g. `game.building.built.sum`".into() },
                );
                return None;
            }
        }
        let req = self.store_req(path) as u32;
        self.store_reqs[req as usize].read = Some((span, sum));
        self.emit(if sum { Op::StoreSum(req) } else { Op::StoreOwn(req) }, span);
        Some(Ty::Long)
    }

    pub(super) fn path_base(&mut self, root: &ast::Ident, cx: CtxKey) -> Option<Base> {
        let name = root.name.as_str();
        if let BindKind::Step(t) = cx.bind
            && let Some(k) = self.board.table_vars[t as usize].iter().position(|&v| v != NO_VAR && self.syms[v as usize] == name)
        {
            return Some(Base::Num(Op::StepCell(t, k as u8)));
        }
        if cx.var != NO_VAR && self.syms[cx.var as usize] == name {
            return Some(Base::Num(Op::BoundObj));
        }
        if name == "this" {
            return match cx.this {
                Some(c) => Some(Base::This(c)),
                None => {
                    self.error(
                        root.span,
                        DiagKind::Invalid {
                            what: "`this` in a rule or goal, which belongs to no object".into(),
                            expected: "an object name such as `global`".into(),
                        },
                    );
                    None
                }
            };
        }
        match cx.bind {
            BindKind::Instance(c) if self.classes[c as usize].name == name => return Some(Base::BoundObj(c)),
            BindKind::God(c) if self.classes[c as usize].name == name => return Some(Base::BoundGod(c)),
            _ => {}
        }
        if let Some(&g) = self.god_ix.get(name) {
            return match self.named.get(&g) {
                Some(&id) => Some(Base::Named(id, self.gods[g as usize].class)),
                None => {
                    self.error(
                        root.span,
                        DiagKind::Invalid {
                            what: format!("`{name}` has no `initial` instance to refer to"),
                            expected: format!("`initial {name}`, or `this`/a bound class"),
                        },
                    );
                    None
                }
            };
        }
        let expected = if self.class_ix.contains_key(name) {
            format!(
                "`this`, an object name or the bound class; class `{name}` is not bound by `forEveryGOD`/`forEveryInstance` in this action"
            )
        } else {
            format!("`this`, an object name ({}) or the bound class", self.known(&self.god_ix))
        };
        self.error(root.span, DiagKind::UnknownName { what: "object", name: name.to_string(), expected });
        None
    }

    pub(super) fn no_such_attr(&mut self, class: ClassId, id: &ast::Ident) {
        let ci = &self.out_classes[class as usize];
        let known: Vec<String> = ci.attrs.iter().chain(&ci.consts).map(|a| a.name.clone()).collect();
        self.error(
            id.span,
            DiagKind::UnknownAttribute {
                class: ci.name.clone(),
                attr: id.name.clone(),
                known: if known.is_empty() { "none declared".into() } else { known.join(", ") },
            },
        );
    }

    /// Reads an attribute path; pushes its value.
    pub(super) fn path(&mut self, p: &[ast::Ident], cx: CtxKey) -> Option<Ty> {
        let base = self.path_base(&p[0], cx)?;
        let span0 = p[0].span;
        if let Base::Num(op) = base {
            if p.len() > 1 {
                self.error(
                    p[1].span,
                    DiagKind::Invalid {
                        what: format!("`.{}` after the bound number `{}`", p[1].name, p[0].name),
                        expected: "the number alone".into(),
                    },
                );
                return None;
            }
            self.emit(op, span0);
            return Some(Ty::Long);
        }
        // Just an object.
        if p.len() == 1 {
            return match base {
                Base::Num(_) => unreachable!("handled above"),
                Base::This(c) => {
                    self.emit(Op::ThisObj, span0);
                    Some(Ty::Obj(c))
                }
                Base::BoundObj(c) => {
                    self.emit(Op::BoundObj, span0);
                    Some(Ty::Obj(c))
                }
                Base::Named(id, c) => {
                    self.emit(Op::Const(id as i64), span0);
                    Some(Ty::Obj(c))
                }
                Base::BoundGod(_) => {
                    self.error(
                        span0,
                        DiagKind::Invalid {
                            what: format!("`{}` is an object description here (forEveryGOD), not an object", p[0].name),
                            expected: format!("one of its attributes, e.g. `{}.<attribute>`", p[0].name),
                        },
                    );
                    None
                }
            };
        }
        let class = match base {
            Base::This(c) | Base::BoundObj(c) | Base::BoundGod(c) | Base::Named(_, c) => c,
            Base::Num(_) => unreachable!("handled above"),
        };
        let first = &p[1];
        let span = span0.to(first.span);
        let mut ty = match self.find_attr(class, &first.name) {
            Some((is_const, idx, ty)) => {
                if self.has_delete && !is_const && !matches!(base, Base::BoundGod(_)) {
                    // Checked: the object may have been deleted.
                    let obj = match base {
                        Base::This(_) => Op::ThisObj,
                        Base::BoundObj(_) => Op::BoundObj,
                        Base::Named(id, _) => Op::Const(id as i64),
                        Base::BoundGod(_) | Base::Num(_) => unreachable!("excluded above"),
                    };
                    self.emit(obj, span0);
                    self.emit(Op::Field(idx as u32), span);
                    ty
                } else {
                    let op = match (base, is_const) {
                        (Base::This(_), false) => Op::This(idx as u32),
                        (Base::This(_), true) => Op::ThisConst(idx as u32),
                        (Base::BoundObj(_), false) => Op::Bound(idx as u32),
                        (Base::BoundObj(_), true) => Op::BoundConst(idx as u32),
                        (Base::BoundGod(_), false) => Op::GodInit(idx as u32),
                        (Base::BoundGod(_), true) => Op::GodConst(idx as u32),
                        (Base::Named(id, _), false) => Op::Slot(self.initial_base[id as usize] + idx as u32),
                        (Base::Named(id, _), true) => {
                            let g = self.initial[id as usize];
                            if self.x.param_consts.contains(&(g, idx)) {
                                Op::NamedConst(g, idx as u32)
                            } else {
                                Op::Const(self.gods[g as usize].consts[idx])
                            }
                        }
                        (Base::Num(_), _) => unreachable!("handled above"),
                    };
                    self.emit(op, span);
                    ty
                }
            }
            None if first.name == "name" => {
                match base {
                    Base::This(_) => {
                        self.emit(Op::ThisObj, span0);
                        self.emit(Op::NameOf, span);
                    }
                    Base::BoundObj(_) => {
                        self.emit(Op::BoundObj, span0);
                        self.emit(Op::NameOf, span);
                    }
                    Base::BoundGod(_) => self.emit(Op::GodName, span),
                    Base::Named(id, _) => {
                        let s = self.gods[self.initial[id as usize] as usize].name_sym;
                        self.emit(Op::Const(s), span);
                    }
                    Base::Num(_) => unreachable!("handled above"),
                }
                Ty::Str
            }
            None => {
                self.no_such_attr(class, first);
                return None;
            }
        };
        let mut span = span;
        for seg in &p[2..] {
            let Ty::Obj(c) = ty else {
                let found = self.ty_name(ty);
                self.error(seg.span, DiagKind::TypeMismatch { expected: format!("an object before `.{}`", seg.name), found });
                return None;
            };
            span = span.to(seg.span);
            ty = match self.find_attr(c, &seg.name) {
                Some((false, idx, t)) => {
                    self.emit(Op::Field(idx as u32), span);
                    t
                }
                Some((true, idx, t)) => {
                    self.emit(Op::FieldConst(idx as u32), span);
                    t
                }
                None if seg.name == "name" => {
                    self.emit(Op::NameOf, span);
                    Ty::Str
                }
                None => {
                    self.no_such_attr(c, seg);
                    return None;
                }
            };
        }
        Some(ty)
    }

    /// An assignment target: an instance attribute of an object.
    pub(super) fn place(&mut self, e: &ast::Expr, cx: CtxKey) -> Option<(Place, Ty)> {
        if let ExprKind::Index(g, x, y) = &e.kind {
            let start = self.begin();
            self.grid_place(g, x, y.as_deref(), cx)?;
            let id = self.end(start)?;
            return Some((Place::Dyn(id), Ty::Long));
        }
        let ExprKind::Path(p) = &e.kind else {
            self.error(
                e.span,
                DiagKind::Unexpected {
                    found: format!("`{}`", self.source.slice(e.span)),
                    expected: "an attribute to assign to, such as `global.coins`".into(),
                },
            );
            return None;
        };
        if p.len() < 2 {
            self.error(
                e.span,
                DiagKind::Unexpected {
                    found: format!("`{}`", p[0].name),
                    expected: "an attribute to assign to, such as `this.isFree`".into(),
                },
            );
            return None;
        }
        let last = &p[p.len() - 1];
        let (class, place_of): (ClassId, Box<dyn Fn(u32) -> Place>) = if p.len() == 2 {
            let base = self.path_base(&p[0], cx)?;
            if let Base::Num(_) = base {
                self.error(
                    p[1].span,
                    DiagKind::Invalid {
                        what: format!("`.{}` after the bound number `{}`", p[1].name, p[0].name),
                        expected: "an object attribute to assign to".into(),
                    },
                );
                return None;
            }
            if let Base::BoundGod(_) = base {
                self.error(
                    p[0].span,
                    DiagKind::Invalid {
                        what: format!("assigning to the description `{}` (forEveryGOD binds descriptions, which are constant)", p[0].name),
                        expected: "an attribute of `this`, a named object or a bound instance".into(),
                    },
                );
                return None;
            }
            if self.has_delete {
                // Checked writes: the object may have been deleted.
                let (op, c) = match base {
                    Base::This(c) => (Op::ThisObj, c),
                    Base::BoundObj(c) => (Op::BoundObj, c),
                    Base::Named(id, c) => (Op::Const(id as i64), c),
                    Base::BoundGod(_) | Base::Num(_) => unreachable!("rejected above"),
                };
                let start = self.begin();
                self.emit(op, p[0].span);
                let id = self.end(start)?;
                (c, Box::new(move |o| Place::Field(id, o)))
            } else {
                match base {
                    Base::This(c) => (c, Box::new(Place::This)),
                    Base::BoundObj(c) => (c, Box::new(Place::Bound)),
                    Base::Named(id, c) => {
                        let slot = self.initial_base[id as usize];
                        (c, Box::new(move |o| Place::Slot(slot + o)))
                    }
                    Base::BoundGod(_) | Base::Num(_) => unreachable!("rejected above"),
                }
            }
        } else {
            let start = self.begin();
            let t = self.path(&p[..p.len() - 1], cx)?;
            let Ty::Obj(c) = t else {
                let found = self.ty_name(t);
                self.error(last.span, DiagKind::TypeMismatch { expected: format!("an object before `.{}`", last.name), found });
                return None;
            };
            let id = self.end(start)?;
            (c, Box::new(move |o| Place::Field(id, o)))
        };
        match self.find_attr(class, &last.name) {
            Some((false, idx, ty)) => {
                self.assigned.insert(last.name.clone());
                self.written.push((class, idx as u32));
                Some((place_of(idx as u32), ty))
            }
            Some((true, _, _)) => {
                self.error(
                    last.span,
                    DiagKind::AssignToConstant { class: self.classes[class as usize].name.clone(), attr: last.name.clone() },
                );
                None
            }
            None => {
                self.no_such_attr(class, last);
                None
            }
        }
    }
}
