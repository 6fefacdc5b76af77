//! Pass 3: consequences, compiled once per context they are attached in (owner class and
//! binding): assignments, increments of game-value store paths, creation and deletion, timed and
//! conditional links (bounded by `MAX_CHAIN`), and the object selections of `seed`/`every`.

use super::*;

impl Compiler<'_> {
    pub(super) fn consequence(&mut self, ci: usize, cx: CtxKey, use_span: Span) -> Option<ConsId> {
        if let Some(&id) = self.cons_memo.get(&(ci, cx)) {
            // Re-entered while compiling: a cycle. `cons_stack` holds (consequence, edge to the
            // next is timed). Through a timed edge it is a repeating timer, which is fine; through
            // conditional edges only it would recurse forever.
            if let Some(pos) = self.cons_stack.iter().position(|(i, _)| *i == ci)
                && self.cons_stack[pos..].iter().all(|(_, timed)| !timed)
            {
                let mut names: Vec<String> = self.cons_stack[pos..].iter().map(|(i, _)| self.cons_name(*i)).collect();
                names.push(self.cons_name(ci));
                self.error(use_span, DiagKind::ConsequenceCycle { name: self.cons_name(ci), cycle: names.join(" → ") });
                return None;
            }
            return Some(id);
        }
        let decl = &self.file.decls[ci];
        let DeclKind::Consequence { name, body } = &decl.kind else { unreachable!("cons_ix points at consequences") };
        let id = self.conses.len() as ConsId;
        self.conses.push(ConsInfo { name: name.name.clone(), span: decl.span, code: Cons::EndSession, bind: cx.bind });
        self.cons_depth.push(1);
        self.cons_memo.insert((ci, cx), id);
        let code = self.consequence_body(ci, body, cx, decl.span)?;
        if let Cons::Conditional { then, .. } = &code {
            let depth = 1 + then.iter().map(|&t| self.cons_depth[t as usize]).max().unwrap_or(0);
            self.cons_depth[id as usize] = depth;
            if depth > MAX_CHAIN {
                self.chain_too_deep(use_span);
                return None;
            }
        }
        self.conses[id as usize].code = code;
        Some(id)
    }

    pub(super) fn chain_too_deep(&mut self, span: Span) {
        self.error(
            span,
            DiagKind::Invalid {
                what: format!("consequences chain more than {MAX_CHAIN} deep (conditional/timed targets)"),
                expected: format!("at most {MAX_CHAIN} consequences applying one another in a row"),
            },
        );
    }

    pub(super) fn cons_name(&self, ci: usize) -> String {
        match &self.file.decls[ci].kind {
            DeclKind::Consequence { name, .. } => name.name.clone(),
            _ => "?".into(),
        }
    }

    pub(super) fn target(&mut self, ci: usize, id: &ast::Ident, cx: CtxKey, timed: bool) -> Option<ConsId> {
        let Some(&ti) = self.cons_ix.get(&id.name) else {
            let known = self.known(&self.cons_ix);
            self.error(
                id.span,
                DiagKind::UnknownName { what: "consequence", name: id.name.clone(), expected: format!("a declared consequence ({known})") },
            );
            return None;
        };
        if self.cons_stack.len() >= MAX_CHAIN {
            self.chain_too_deep(id.span);
            return None;
        }
        self.cons_stack.push((ci, timed));
        let r = self.consequence(ti, cx, id.span);
        self.cons_stack.pop();
        r
    }

    pub(super) fn consequence_body(&mut self, ci: usize, body: &ConsBody, cx: CtxKey, span: Span) -> Option<Cons> {
        Some(match body {
            ConsBody::Direct(e) => {
                let ExprKind::Binary(BinOp::Assign, lhs, rhs) = &e.kind else {
                    self.error(
                        e.span,
                        DiagKind::Invalid {
                            what: "a direct consequence that assigns nothing".into(),
                            expected: "an assignment `<attribute> = <expression>`".into(),
                        },
                    );
                    return None;
                };
                let (place, ty) = self.place(lhs, cx)?;
                let start = self.begin();
                let vt = self.expr(rhs, cx)?;
                self.coerce(vt, ty, rhs.span)?;
                let value = self.end(start)?;
                Cons::Assign { place, value }
            }
            ConsBody::Conditional(c, targets) => {
                let cond = self.top_expr(c, cx, Some(Ty::Bool), "the condition of a conditional consequence")?;
                // Every target is compiled (and reported) before giving up on one that fails.
                let then: Vec<Option<ConsId>> = targets.iter().map(|t| self.target(ci, t, cx, false)).collect();
                Cons::Conditional { cond, then: then.into_iter().collect::<Option<Vec<_>>>()? }
            }
            ConsBody::Timed(d, t) => {
                let (delay, delay_is_double) = self.duration_expr(d, cx)?;
                let then = self.target(ci, t, cx, true)?;
                Cons::Timed { delay, delay_is_double, then }
            }
            ConsBody::Create(what) => Cons::Create { god: self.god_sel(what, cx)?, assign: None },
            ConsBody::CreateAndAssign(what, place) => {
                let god = self.god_sel(what, cx)?;
                let (p, ty) = self.place(place, cx)?;
                let made = match god {
                    GodSel::Fixed(g) => self.gods[g as usize].class,
                    GodSel::Bound => match cx.bind {
                        BindKind::God(c) => c,
                        _ => unreachable!("god_sel checked the binding"),
                    },
                };
                match ty {
                    Ty::Obj(want) if self.class_is_sub(made, want) => {}
                    _ => {
                        let (expected, found) = (self.ty_name(ty), self.ty_name(Ty::Obj(made)));
                        self.error(
                            place.span,
                            DiagKind::TypeMismatch {
                                expected: format!("an attribute of type object:{}", found.trim_start_matches("object:")),
                                found: expected,
                            },
                        );
                        return None;
                    }
                }
                Cons::Create { god, assign: Some(p) }
            }
            ConsBody::GameIncrease { path, by } => {
                let mut fixed: Vec<String> = Vec::new();
                let mut rest: Vec<Option<String>> = Vec::new();
                let mut dynamic: Vec<Segment> = Vec::new();
                for seg in path {
                    match self.store_segment(seg, cx)? {
                        Ok(name) if rest.is_empty() => fixed.extend(name),
                        Ok(name) => {
                            for n in name {
                                let s = self.intern(&n);
                                rest.push(Some(n));
                                dynamic.push(Segment::Sym(s));
                            }
                        }
                        Err(e) => {
                            rest.push(None);
                            dynamic.push(Segment::Dynamic(e));
                        }
                    }
                }
                if fixed.len() == 1 && rest.is_empty() && BUILTINS.contains(&fixed[0].as_str()) {
                    self.error(
                        span,
                        DiagKind::Invalid {
                            what: format!("`game increase {}` on a built-in game value", fixed[0]),
                            expected: format!("a counter name other than {}", BUILTINS.join(", ")),
                        },
                    );
                    return None;
                }
                if fixed.last().map(|s| s.as_str()) == Some("sum") && rest.is_empty() {
                    self.error(
                        span,
                        DiagKind::Invalid {
                            what: "`game increase` on a `sum`".into(),
                            expected: "a counter path; `sum` is computed from the counters below it".into(),
                        },
                    );
                    return None;
                }
                let by = match by {
                    Some(b) => Some(self.top_expr(b, cx, Some(Ty::Long), "the amount after `by`")?),
                    None => None,
                };
                let req = self.store_req(fixed);
                if !rest.is_empty() {
                    self.dyn_incs.push((self.cons_memo[&(ci, cx)], req, rest));
                }
                Cons::GameIncrease { node: req as u32, rest: dynamic, by }
            }
            ConsBody::Delete(e) => {
                let start = self.begin();
                let t = self.expr(e, cx)?;
                if !matches!(t, Ty::Obj(_)) {
                    let found = self.ty_name(t);
                    self.error(e.span, DiagKind::TypeMismatch { expected: "an object (e.g. `this` or `this.fruit`)".into(), found });
                    return None;
                }
                Cons::Delete { obj: self.end(start)? }
            }
            ConsBody::EndSession => Cons::EndSession,
            ConsBody::EndTurn => {
                if self.x.turn_decl.is_none() {
                    self.error(
                        span,
                        DiagKind::Invalid {
                            what: "`endTurn` in a game without turns".into(),
                            expected: "a `turn <Class> <side>` line".into(),
                        },
                    );
                    return None;
                }
                Cons::EndTurn
            }
            ConsBody::Do(e) => return self.tile_do(e, cx),
            // The parser reported it.
            ConsBody::Error => return None,
        })
    }

    /// One `game increase` segment: fixed names (`String built`, `building`, `a.b.c` with an
    /// unknown root), or a string expression computed at run time (`this.name`).
    pub(super) fn store_segment(&mut self, e: &ast::Expr, cx: CtxKey) -> Option<Result<Vec<String>, ExprId>> {
        match &e.kind {
            ExprKind::Lit(Lit::Str(s)) => return Some(Ok(vec![s.clone()])),
            ExprKind::Lit(Lit::Long(_)) => return Some(Ok(vec![self.source.slice(e.span).to_string()])),
            ExprKind::Path(p) if p.len() == 1 && p[0].name != "this" => return Some(Ok(vec![p[0].name.clone()])),
            ExprKind::Path(p) if !self.is_path_root(&p[0].name, cx) => return Some(Ok(p.iter().map(|i| i.name.clone()).collect())),
            _ => {}
        }
        let start = self.begin();
        let t = self.expr(e, cx)?;
        if t != Ty::Str {
            let found = self.ty_name(t);
            self.error(e.span, DiagKind::TypeMismatch { expected: "a string (a game value store path segment)".into(), found });
            return None;
        }
        Some(Err(self.end(start)?))
    }

    pub(super) fn is_path_root(&self, name: &str, cx: CtxKey) -> bool {
        name == "this"
            || self.god_ix.contains_key(name)
            || match cx.bind {
                BindKind::God(c) | BindKind::Instance(c) => self.classes[c as usize].name == name,
                BindKind::None | BindKind::Number(..) | BindKind::Hex => false,
                BindKind::Step(t) => self.board.table_vars[t as usize].iter().any(|&v| v != NO_VAR && self.syms[v as usize] == name),
            }
            || (cx.var != NO_VAR && self.syms[cx.var as usize] == name)
    }

    pub(super) fn store_req(&mut self, segs: Vec<String>) -> usize {
        self.store_reqs.push(StoreReq { segs, read: None });
        self.store_reqs.len() - 1
    }

    pub(super) fn god_sel(&mut self, e: &ast::Expr, cx: CtxKey) -> Option<GodSel> {
        let name = match &e.kind {
            ExprKind::Path(p) if p.len() == 1 => &p[0],
            _ => {
                self.error(
                    e.span,
                    DiagKind::Unexpected {
                        found: format!("`{}`", self.source.slice(e.span)),
                        expected: "an object description name, or the class bound by `forEveryGOD`".into(),
                    },
                );
                return None;
            }
        };
        if let Some(&g) = self.god_ix.get(&name.name) {
            return Some(GodSel::Fixed(g));
        }
        if let BindKind::God(c) = cx.bind
            && self.classes[c as usize].name == name.name
        {
            return Some(GodSel::Bound);
        }
        let expected = if self.class_ix.contains_key(&name.name) {
            format!("an object description; `{}` is a class, usable here only inside an action with `forEveryGOD {}`", name.name, name.name)
        } else {
            format!("a declared object description ({})", self.known(&self.god_ix))
        };
        self.error(name.span, DiagKind::UnknownName { what: "object description", name: name.name.clone(), expected });
        None
    }
}
